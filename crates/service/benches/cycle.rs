//! The daemon's priority cycle at the scale: 10,000 users owning 100,000 workloads on
//! 2,000 nodes, every workload measured — from the registry by id through the core's metric to
//! the knob values served, as `fairshare serve` computes it (without the database round trip,
//! which docs/benchmarks.md measures separately), freeing each answer included. The budget is
//! 100 ms.

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_core::heaviness::knobs::{KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{HeavinessConfig, Resource, ResourceKind};
use fairshare_service::cycle::{
    compute, Id, Measured, Memory, NodeEntry, Registry, Settings, WorkloadEntry,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

/// The allocator the `fairshare` binary runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A seeded registry of `nodes` nodes (64 cores, 256 GiB, 1 GB/s disk and network), `users`
/// users and `workloads` workloads of 1–16 VCPUs, with one interval of usage each.
fn cloud(nodes: usize, users: usize, workloads: usize) -> (Settings, Registry, Measured) {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let gib = 1073741824.0;
    let settings = Settings {
        resources: vec![
            Resource::new("cpu", ResourceKind::Cpu),
            Resource::new("mem", ResourceKind::Memory),
            Resource::new("disk", ResourceKind::Disk),
            Resource::new("net", ResourceKind::Network),
        ],
        heaviness: HeavinessConfig::default(),
        priority: PriorityConfig::default(),
        profile: KnobProfile::cgroup_v2(),
    };
    let mut registry = Registry::default();
    let node_ids: Vec<Id> = (0..nodes).map(|n| format!("node-{n:05}").into()).collect();
    let user_ids: Vec<Id> = (0..users).map(|u| format!("user-{u:05}").into()).collect();
    for id in &node_ids {
        let speed = rng.gen_range(0.8..1.2);
        registry.nodes.insert(
            id.clone(),
            NodeEntry {
                supply: vec![64.0, 256.0 * gib, 1e9, 1e9],
                speed,
            },
        );
    }
    for id in &user_ids {
        registry.users.insert(id.clone(), None);
    }
    let mut measured = Measured::default();
    for w in 0..workloads {
        let vcpus = f64::from(rng.gen_range(1..=16));
        let id = format!("vm-{w:06}");
        let usage = [
            vcpus * rng.gen::<f64>(),
            vcpus * 4.0 * gib * rng.gen::<f64>(),
            2e7 * rng.gen::<f64>(),
            1e7 * rng.gen::<f64>(),
        ];
        measured.add(&id, &usage, 10.0);
        registry.workloads.insert(
            id.into(),
            WorkloadEntry {
                owner: user_ids[rng.gen_range(0..users)].clone(),
                node: node_ids[rng.gen_range(0..nodes)].clone(),
                size: vec![vcpus, vcpus * 4.0 * gib, 0.0, 0.0],
            },
        );
    }
    (settings, registry, measured)
}

fn bench(c: &mut Criterion) {
    let (settings, registry, measured) = cloud(2_000, 10_000, 100_000);
    let first = compute(&settings, &registry, &Memory::new(), &measured, 1, 0).unwrap();
    let mut group = c.benchmark_group("service_cycle");
    group.sample_size(20);
    group.bench_function("10k_users_100k_workloads", |b| {
        b.iter(|| {
            compute(
                &settings,
                &registry,
                black_box(&first.memory),
                &measured,
                2,
                0,
            )
            .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
