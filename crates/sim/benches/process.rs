//! Throughput of the `process` engine: 100 processes cycling over 5 resources (three
//! time-sliced, two run-to-completion) for 10,000 simulated seconds under bottleneck-based
//! global priorities (with global accounting, and with one allocation per resource), and
//! under FIFO, randomised request lengths. Reports engine events per second, for the engine
//! alone (`engine`) and for the whole call that also derives the outputs (`simulate`).
//!
//! Run with `cargo bench -p fairshare-sim --bench process`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairshare_sim::process::{engine_events, simulate};
use fairshare_sim::scenario::Scenario;
use std::path::Path;
use std::time::Duration;

/// The scenario as TOML: process k has entitlement 1 + k mod 4 and visits the resources in an
/// order and with lengths that depend on k, so queues form on every resource.
fn scenario(policy: &str, accounting: &str) -> Scenario {
    let resources = ["CPU_CS", "DISK_CS", "NET_CS", "GPU", "TAPE"];
    let mut text = format!(
        "[simulation]\nduration = 10000.0\nseed = 7\npolicy = \"{policy}\"\naccounting = \"{accounting}\"\n"
    );
    for k in 0..100 {
        let mut program = String::from("loop 100000\n");
        for step in 0..3 {
            let r = resources[(k + step * (1 + k % 3)) % resources.len()];
            let mean = 0.05 + 0.01 * ((k * 7 + step * 13) % 20) as f64;
            program += &format!("{r} {mean:.3} {:.4} NORM\n", mean / 10.0);
        }
        text += &format!(
            "[[process]]\nname = \"p{k}\"\nentitlement = {}\nprogram = \"\"\"\n{program}\"\"\"\n",
            1 + k % 4
        );
    }
    Scenario::from_toml(&text, Path::new("bench.toml")).expect("the bench scenario parses")
}

fn process(c: &mut Criterion) {
    let mut group = c.benchmark_group("process_100x5_10000s");
    let cases = [
        ("bottleneck", "bottleneck", "global"),
        (
            "bottleneck-per-resource-accounting",
            "bottleneck",
            "per-resource",
        ),
        ("fifo", "fifo", "global"),
    ];
    for (name, policy, accounting) in cases {
        let scenario = scenario(policy, accounting);
        let events = engine_events(&scenario, 7).expect("the bench scenario is within the limits");
        eprintln!("{name}: {events} events per run");
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{name}/engine"), |b| {
            b.iter(|| engine_events(&scenario, 7))
        });
        group.bench_function(format!("{name}/simulate"), |b| {
            b.iter(|| simulate(&scenario, "bench"))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(20));
    targets = process
}
criterion_main!(benches);
