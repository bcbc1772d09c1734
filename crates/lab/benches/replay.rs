//! Replaying the shared Google 2011 parts through the cluster engine, parsing included: one
//! DRF and one SDRF (δ = 1 − 10⁻⁶) run at capacity fraction 0.5, as `fairshare replay` does
//! after its first pass. Skips with a message when `../shared/traces` is absent.
//!
//! Run with `cargo bench -p fairshare-lab --bench replay`.

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_core::model::Time;
use fairshare_lab::Load;
use fairshare_sim::cluster::{run, Capacity, ClusterConfig, Fill, FirstFit, Stop};
use fairshare_trace::{open, Format, ReadOptions, TaskSource};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn google_parts() -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/google-2011/task_events");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    parts.sort();
    (!parts.is_empty()).then_some(parts)
}

fn source(parts: &[PathBuf]) -> Box<dyn TaskSource + Send> {
    open(parts, Some(Format::GOOGLE), &ReadOptions::default())
        .expect("the shared Google parts open")
}

/// The first pass: users, R and the last event.
fn scan(parts: &[PathBuf]) -> (Vec<String>, Load) {
    let mut tasks = source(parts);
    let mut load = Load::new(2);
    for task in tasks.by_ref() {
        let t = task.expect("the shared Google parts parse");
        load.add(t.submit, t.start.unwrap_or(t.submit), t.runtime, &t.demand);
    }
    (tasks.users().to_vec(), load)
}

fn replay(c: &mut Criterion) {
    let Some(parts) = google_parts() else {
        eprintln!("SKIPPED: ../shared/traces/google-2011/task_events not found");
        return;
    };
    let (users, load) = scan(&parts);
    let mut group = c.benchmark_group("replay_google_7_parts_fraction_0.5");
    for policy in ["drf", "sdrf:delta=0.999999"] {
        let config = ClusterConfig {
            policy: policy.parse().expect("a policy"),
            capacity: Capacity::Pool(load.mean_demand().iter().map(|r| r * 0.5).collect()),
            resources: vec!["cpu".into(), "mem".into()],
            users: users.clone(),
            scheduler: Arc::new(Fill::default()),
            placement: Arc::new(FirstFit),
            stop: Stop::Horizon(load.last_event().unwrap_or(Time::ZERO)),
            origin: load.first_submit().unwrap_or(Time::ZERO),
            sample_every: 175.0,
            top_users: 8,
            record_jobs: None,
            queues: Vec::new(),
            shares: None,
            accounts: None,
            overrun: fairshare_sim::cluster::Overrun::Kill,
            partitions: Vec::new(),
            qos_factors: Vec::new(),
            assoc_factors: Vec::new(),
            opens: None,
            limits: Vec::new(),
            outages: Vec::new(),
        };
        group.bench_function(policy, |b| {
            b.iter(|| {
                let arrivals = source(&parts);
                let result = run(&config, arrivals, |_| {}).expect("replay runs");
                assert!(result.tasks_submitted > 0);
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(15));
    targets = replay
}
criterion_main!(benches);
