//! The larger runtime experiment for one simulated day: 50 nodes, 20 users, 500 VMs drawn
//! from the Alibaba GPU 2023 lists, 8,640 intervals of μ = 10 s, under the heaviness service
//! and without it, the shortfall measured every interval as docs/runtime.md reports it. The
//! budget is 5 s per day (docs/benchmarks.md). Skips with a message when `../shared/traces`
//! is absent.

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_lab::cloud::{build_cloud, measure, CloudSpec};
use fairshare_sim::runtime::RuntimePolicy;
use std::hint::black_box;
use std::path::Path;

fn one_day(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/alibaba-gpu-2023");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} not found", dir.display());
        return;
    }
    let spec = CloudSpec {
        duration_s: 86_400.0,
        arrival_s: 43_200.0,
        ..CloudSpec::default()
    };
    let scenario = build_cloud(
        &dir.join("openb_pod_list_default.csv"),
        &dir.join("openb_node_list_all_node.csv"),
        &spec,
    )
    .expect("the shared Alibaba lists build a cloud");
    let mut group = c.benchmark_group("runtime_cloud");
    group.sample_size(10);
    for policy in [RuntimePolicy::Off, RuntimePolicy::Heaviness] {
        group.bench_function(format!("one day, 500 VMs, {policy}"), |b| {
            b.iter(|| black_box(measure(&scenario, policy, spec.arrival_s).expect("runs")))
        });
    }
    group.finish();
}

criterion_group!(benches, one_day);
criterion_main!(benches);
