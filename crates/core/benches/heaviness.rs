//! One cycle of the fairness service at the daemon's scale: heaviness for 10,000 users owning
//! 100,000 workloads on 2,000 nodes, then every workload's priority and knobs (cgroup v2).
//! The budget is 100 ms per cycle (docs/benchmarks.md).

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_core::heaviness::knobs::{priority, KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{
    heaviness, Cloud, HeavinessConfig, Host, Resource, ResourceKind, User, Workload,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

/// A seeded cloud: `nodes` nodes of 64 cores, 256 GiB, 1 GB/s of disk and network each way,
/// `users` users, `workloads` workloads of 1–16 VCPUs using a random part of their size.
fn cloud(nodes: usize, users: usize, workloads: usize) -> Cloud {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let kinds = [
        ("cpu", ResourceKind::Cpu),
        ("mem", ResourceKind::Memory),
        ("disk_read", ResourceKind::Disk),
        ("disk_write", ResourceKind::Disk),
        ("net_rx", ResourceKind::Network),
        ("net_tx", ResourceKind::Network),
    ];
    let gib = 1073741824.0;
    Cloud {
        resources: kinds
            .iter()
            .map(|&(name, kind)| Resource {
                name: name.into(),
                kind,
            })
            .collect(),
        nodes: (0..nodes)
            .map(|_| Host {
                supply: vec![64.0, 256.0 * gib, 1e9, 1e9, 1e9, 1e9],
                speed: rng.gen_range(0.8..1.2),
            })
            .collect(),
        users: (0..users).map(|_| User { quota: None }).collect(),
        workloads: (0..workloads)
            .map(|_| {
                let vcpus = f64::from(rng.gen_range(1..=16));
                let mem = vcpus * 4.0 * gib;
                Workload {
                    owner: rng.gen_range(0..users),
                    node: rng.gen_range(0..nodes),
                    size: vec![vcpus, mem, 0.0, 0.0, 0.0, 0.0],
                    usage: Some(vec![
                        vcpus * rng.gen::<f64>(),
                        mem * rng.gen::<f64>(),
                        2e7 * rng.gen::<f64>(),
                        2e7 * rng.gen::<f64>(),
                        1e7 * rng.gen::<f64>(),
                        1e7 * rng.gen::<f64>(),
                    ]),
                }
            })
            .collect(),
    }
}

fn service_cycle(c: &mut Criterion) {
    let cloud = cloud(2_000, 10_000, 100_000);
    let config = HeavinessConfig::default();
    let (profile, settings) = (KnobProfile::cgroup_v2(), PriorityConfig::default());
    let mut group = c.benchmark_group("heaviness");
    group.sample_size(20);
    group.bench_function("10k users, 100k workloads: heaviness + knobs", |b| {
        b.iter(|| {
            let h = heaviness(black_box(&cloud), &config).expect("a valid cloud");
            let knobs: Vec<_> = h
                .workloads
                .iter()
                .zip(&cloud.workloads)
                .map(|(w, spec)| {
                    let (p, _) = priority(w.priority_input, None, &settings);
                    profile.values(p, Some(spec.size[1] as u64))
                })
                .collect();
            black_box(knobs)
        })
    });
    group.finish();
}

criterion_group!(benches, service_cycle);
criterion_main!(benches);
