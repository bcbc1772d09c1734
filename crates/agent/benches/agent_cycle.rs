//! One agent cycle over 200 workloads on a fake cgroup tree (v1 and v2): list, read every
//! counter, compute the node's heaviness (standalone) and write the knobs that changed (here
//! every cycle: the loads change every cycle). The CPU time on a real cgroup tree is measured
//! by `scripts/agent-overhead.sh`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use fairshare_agent::agent::Supply;
use fairshare_agent::cgroup::Layout;
use fairshare_agent::fake::{FakeTree, Shape};
use fairshare_agent::{Agent, AgentConfig};
use std::time::{Duration, Instant};

const WORKLOADS: usize = 200;

fn agent_on(tree: &FakeTree) -> Agent {
    let config: AgentConfig =
        toml::from_str("parents = [\"fairshare\"]\nowner = { regex = \"^u(?P<owner>[0-9]+)-\" }")
            .unwrap();
    let layout = Layout::detect(&tree.root).unwrap();
    let supply = Supply {
        cpu: 64.0,
        memory: 256e9,
        disk: 1e9,
        network: 1.25e9,
        speed: 1.0,
    };
    Agent::new(config, layout, "bench".into(), supply, None, false).unwrap()
}

fn bench(c: &mut Criterion) {
    for (name, shape) in [("v2", Shape::V2), ("v1", Shape::V1)] {
        // In memory, as cgroupfs is: on a disk file system every knob write is a journaled
        // truncation, and the bench would time the disk.
        let dir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let tree = FakeTree::new(dir.path(), shape).unwrap();
        for i in 0..WORKLOADS {
            tree.add(&format!("fairshare/u{}-w{i}", i % 20)).unwrap();
        }
        let mut agent = agent_on(&tree);
        let mut now = Instant::now();
        let mut step = 0u64;
        agent.cycle(now);
        c.bench_function(&format!("agent_cycle_{name}_{WORKLOADS}"), |b| {
            b.iter_batched(
                || {
                    step += 1;
                    for i in 0..WORKLOADS {
                        let busy = ((i as u64 * 7 + step) % 10) as f64 / 10.0;
                        tree.set(
                            &format!("fairshare/u{}-w{i}", i % 20),
                            step as f64 * busy,
                            step * 1000,
                            1 << 30,
                        )
                        .unwrap();
                    }
                    now += Duration::from_secs(10);
                    now
                },
                |now| agent.cycle(now),
                BatchSize::PerIteration,
            )
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
