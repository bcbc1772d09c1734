//! The agent under a low limit on open files (its own test binary: the limit is the whole
//! process's): every workload is still measured and steered when its counter and knob files would
//! exceed the limit, and none is dropped when the limit is reached outright.

use fairshare_agent::agent::Supply;
use fairshare_agent::cgroup::Layout;
use fairshare_agent::fake::{FakeTree, Shape};
use fairshare_agent::{Agent, AgentConfig};
use std::time::{Duration, Instant};

const WORKLOADS: usize = 150;
/// Below 3 × WORKLOADS counter files, and 6 × WORKLOADS counter and knob files.
const SOFT_LIMIT: u64 = 256;

#[test]
fn more_workloads_than_open_files_are_all_measured_and_steered() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = Some(SOFT_LIMIT);
    setrlimit(Resource::Nofile, limit).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tree = FakeTree::new(dir.path(), Shape::V1).unwrap();
    let names: Vec<String> = (0..WORKLOADS)
        .map(|i| format!("fs/user-u{}.w{i}", i % 10))
        .collect();
    for n in &names {
        tree.add(n).unwrap();
    }
    let config: AgentConfig = toml::from_str("parents = [\"fs\"]").unwrap();
    let layout = Layout::detect(&tree.root).unwrap();
    let supply = Supply {
        cpu: 64.0,
        memory: 256e9,
        disk: 500e6,
        network: 1.25e9,
        speed: 1.0,
    };
    let mut agent = Agent::new(config, layout, "n1".into(), supply, None, false).unwrap();
    let t0 = Instant::now();
    for cycle in 0..4u32 {
        for (i, n) in names.iter().enumerate() {
            let busy = f64::from(cycle) * (i % 7) as f64;
            tree.set(n, busy, 0, 0).unwrap();
        }
        let report = agent.cycle(t0 + Duration::from_secs(10 * u64::from(cycle)));
        assert_eq!(report.workloads.len(), WORKLOADS, "cycle {cycle}");
        assert_eq!(report.refused, 0, "cycle {cycle}: {report:?}");
        if cycle > 0 {
            assert_eq!(report.measured.len(), WORKLOADS, "cycle {cycle}");
        }
    }
    for n in &names {
        assert!(tree.knob(n, "cpu.shares").is_some(), "{n}");
    }
    // Every descriptor taken: the listing fails, and still no workload is forgotten.
    let mut hog = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        hog.push(f);
    }
    let starved = agent.cycle(t0 + Duration::from_secs(50));
    drop(hog);
    assert_eq!(starved.workloads.len(), WORKLOADS);
    let after = agent.cycle(t0 + Duration::from_secs(60));
    assert_eq!(after.workloads.len(), WORKLOADS);
    assert_eq!(after.refused, 0);
    assert_eq!(after.measured.len(), WORKLOADS, "measured again at once");
}
