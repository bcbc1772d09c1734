//! The agent on fake cgroup trees in a temporary folder, shaped as v2, v1 and hybrid hosts:
//! detection, measurement, knob writes, resets, vanished workloads, refused knobs, dry runs.

use fairshare_agent::agent::Supply;
use fairshare_agent::cgroup::{Layout, Version};
use fairshare_agent::fake::{FakeTree, Shape};
use fairshare_agent::{Agent, AgentConfig, CycleReport};
use std::time::{Duration, Instant};

const SHAPES: [Shape; 3] = [Shape::V2, Shape::V1, Shape::Hybrid];

fn supply() -> Supply {
    Supply {
        cpu: 4.0,
        memory: 16e9,
        disk: 500e6,
        network: 1.25e9,
        speed: 1.0,
    }
}

fn agent(tree: &FakeTree, extra: &str, dry_run: bool) -> Agent {
    let config: AgentConfig = toml::from_str(&format!("parents = [\"fs\"]\n{extra}")).unwrap();
    config.check().unwrap();
    let layout = Layout::detect(&tree.root).unwrap();
    Agent::new(config, layout, "n1".into(), supply(), None, dry_run).unwrap()
}

/// Three workloads, two of user d and one of user e, all busy on CPU at first.
fn three(shape: Shape) -> (tempfile::TempDir, FakeTree) {
    let dir = tempfile::tempdir().unwrap();
    let tree = FakeTree::new(dir.path(), shape).unwrap();
    for w in ["user-d.1", "user-d.2", "user-e.1"] {
        tree.add(&format!("fs/{w}")).unwrap();
    }
    (dir, tree)
}

fn cpu_knob(shape: Shape) -> &'static str {
    if shape == Shape::V2 {
        "cpu.weight"
    } else {
        "cpu.shares"
    }
}

fn usage(report: &CycleReport, workload: &str, resource: &str) -> f64 {
    report
        .measured
        .iter()
        .find(|m| m.workload == workload)
        .unwrap_or_else(|| panic!("{workload} not measured: {report:?}"))
        .usage[resource]
}

#[test]
fn each_shape_is_told_apart_and_says_what_it_controls() {
    for shape in SHAPES {
        let (_dir, tree) = three(shape);
        let layout = Layout::detect(&tree.root).unwrap();
        let files: Vec<&str> = layout.knobs.iter().map(|k| k.file.as_str()).collect();
        match shape {
            Shape::V2 => {
                assert_eq!(layout.version, Version::V2);
                assert_eq!(files, ["cpu.weight", "io.weight", "memory.low"]);
                assert_eq!(layout.cpu_usage.as_ref().unwrap().file, "cpu.stat");
            }
            Shape::V1 | Shape::Hybrid => {
                assert_eq!(layout.version, Version::V1);
                assert_eq!(
                    files,
                    ["cpu.shares", "blkio.weight", "memory.soft_limit_in_bytes"]
                );
                assert_eq!(layout.cpu_usage.as_ref().unwrap().file, "cpuacct.usage");
                assert_eq!(layout.primary, tree.root.join("cpu"));
                let hybrid = layout.hybrid.as_ref().map(|(p, c)| (p.clone(), c.len()));
                let expected = (shape == Shape::Hybrid).then(|| (tree.root.join("unified"), 0));
                assert_eq!(hybrid, expected, "{shape:?}");
            }
        }
        let lines = agent(&tree, "", false).describe();
        assert!(
            lines[0].contains(if shape == Shape::Hybrid {
                "hybrid"
            } else {
                "cgroup v"
            }),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("controlling: ") && l.contains(cpu_knob(shape))),
            "{lines:?}"
        );
    }
}

#[test]
fn nothing_cgroup_like_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let err = Layout::detect(dir.path()).unwrap_err().to_string();
    assert!(err.contains("no cgroup hierarchy found"), "{err}");
}

#[test]
fn the_lighter_user_gets_the_higher_weight_on_every_shape() {
    for shape in SHAPES {
        let (_dir, tree) = three(shape);
        let mut a = agent(&tree, "", false);
        let t0 = Instant::now();
        let first = a.cycle(t0);
        assert!(first.measured.is_empty(), "no interval on the first cycle");
        // First cycle: neutral priority on every workload.
        let neutral = tree.knob("fs/user-e.1", cpu_knob(shape)).unwrap();
        assert_eq!(tree.knob("fs/user-d.1", cpu_knob(shape)), Some(neutral));
        // d's two workloads each use 1 CPU, e's one uses 1 CPU, over 10 s.
        for w in ["user-d.1", "user-d.2", "user-e.1"] {
            tree.set(&format!("fs/{w}"), 10.0, 4096, 1 << 28).unwrap();
        }
        let report = a.cycle(t0 + Duration::from_secs(10));
        assert_eq!(report.measured.len(), 3);
        assert!((usage(&report, "n1:user-e.1", "cpu") - 10.0).abs() < 1e-6);
        assert_eq!(usage(&report, "n1:user-e.1", "disk"), 4096.0);
        assert_eq!(usage(&report, "n1:user-e.1", "mem"), (1u64 << 28) as f64);
        let e = tree.knob("fs/user-e.1", cpu_knob(shape)).unwrap();
        let d = tree.knob("fs/user-d.1", cpu_knob(shape)).unwrap();
        assert!(
            e > neutral && neutral > d,
            "{shape:?}: e {e}, neutral {neutral}, d {d}"
        );
        let users: Vec<&str> = report.users.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(users, ["e", "d"], "lightest first");
        // Every value lies in its knob's range.
        let layout = Layout::detect(&tree.root).unwrap();
        for knob in &layout.knobs {
            for w in ["user-d.1", "user-d.2", "user-e.1"] {
                let v = tree.knob(&format!("fs/{w}"), &knob.file).unwrap();
                assert!(
                    v >= knob.range.lo && v <= knob.range.hi.min(1 << 30),
                    "{} = {v}",
                    knob.file
                );
            }
        }
    }
}

#[test]
fn a_recreated_cgroup_counts_from_zero() {
    let (_dir, tree) = three(Shape::V2);
    let mut a = agent(&tree, "", false);
    let t0 = Instant::now();
    tree.set("fs/user-e.1", 500.0, 0, 0).unwrap();
    a.cycle(t0);
    tree.remove("fs/user-e.1").unwrap();
    tree.add("fs/user-e.1").unwrap();
    tree.set("fs/user-e.1", 2.0, 0, 0).unwrap();
    let report = a.cycle(t0 + Duration::from_secs(10));
    assert!(
        (usage(&report, "n1:user-e.1", "cpu") - 2.0).abs() < 1e-9,
        "{report:?}"
    );
}

#[test]
fn a_workload_that_goes_away_is_skipped_and_its_knobs_forgotten() {
    let (_dir, tree) = three(Shape::V1);
    let mut a = agent(&tree, "", false);
    let t0 = Instant::now();
    a.cycle(t0);
    tree.remove("fs/user-d.2").unwrap();
    let report = a.cycle(t0 + Duration::from_secs(10));
    let ids: Vec<&str> = report.workloads.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids, ["n1:user-d.1", "n1:user-e.1"]);
    assert_eq!(report.refused, 0);
}

#[test]
fn a_refused_knob_is_counted_every_cycle_and_the_rest_still_written() {
    let (_dir, tree) = three(Shape::V2);
    // A directory where the file should be: every write to it fails.
    let weight = tree.root.join("fs/user-d.1/io.weight");
    std::fs::remove_file(&weight).unwrap();
    std::fs::create_dir(&weight).unwrap();
    let mut a = agent(&tree, "rewrite_every = 1", false);
    let t0 = Instant::now();
    for i in 0..3 {
        let report = a.cycle(t0 + Duration::from_secs(10 * i));
        assert_eq!(report.refused, 1, "cycle {i}");
        assert!(report
            .writes
            .iter()
            .any(|w| w.workload == "n1:user-d.1" && w.file == "cpu.weight"));
    }
}

#[test]
fn unchanged_values_are_written_again_only_every_rewrite_every_cycles() {
    let (_dir, tree) = three(Shape::V2);
    let mut a = agent(&tree, "rewrite_every = 3", false);
    let t0 = Instant::now();
    let writes: Vec<usize> = (0..4)
        .map(|i| a.cycle(t0 + Duration::from_secs(10 * i)).writes.len())
        .collect();
    // Idle workloads: neutral at first, then the same values; cycle 4 rewrites all.
    assert_eq!(writes[0], 9);
    assert_eq!(writes[3], 9);
    assert!(writes[1] <= 9 && writes[2] == 0, "{writes:?}");
}

#[test]
fn a_dry_run_writes_nothing_but_says_what_it_would() {
    let (_dir, tree) = three(Shape::Hybrid);
    let mut a = agent(&tree, "", true);
    let before = tree.knob("fs/user-e.1", "cpu.shares");
    let report = a.cycle(Instant::now());
    assert_eq!(report.writes.len(), 9);
    assert_eq!(tree.knob("fs/user-e.1", "cpu.shares"), before);
}

#[test]
fn cgroups_no_rule_claims_are_left_alone() {
    let (_dir, tree) = three(Shape::V2);
    tree.add("fs/system.slice").unwrap();
    let mut a = agent(&tree, "", false);
    let report = a.cycle(Instant::now());
    assert_eq!(report.workloads.len(), 3);
    assert_eq!(
        tree.knob("fs/system.slice", "cpu.weight"),
        Some(100),
        "untouched"
    );
}

#[test]
fn limits_give_the_virtual_size() {
    let (_dir, tree) = three(Shape::V2);
    std::fs::write(tree.root.join("fs/user-e.1/cpu.max"), "200000 100000\n").unwrap();
    std::fs::write(tree.root.join("fs/user-e.1/memory.max"), "2147483648\n").unwrap();
    let mut a = agent(&tree, "", false);
    let report = a.cycle(Instant::now());
    let e = report.workloads.iter().find(|w| w.owner == "e").unwrap();
    assert_eq!((e.cpu_size, e.memory_size), (2.0, 2147483648.0));
    let d = report.workloads.iter().find(|w| w.owner == "d").unwrap();
    assert_eq!(
        (d.cpu_size, d.memory_size),
        (1.0, 1073741824.0),
        "the defaults"
    );
    let mut no_limits = agent(&tree, "size = { from_limits = false }", false);
    let report = no_limits.cycle(Instant::now());
    assert!(report.workloads.iter().all(|w| w.cpu_size == 1.0));
}

#[test]
fn an_unreadable_counter_loses_nothing_and_counts_nothing_twice() {
    let (_dir, tree) = three(Shape::V2);
    let mut a = agent(&tree, "", false);
    let t0 = Instant::now();
    a.cycle(t0);
    tree.set("fs/user-e.1", 3.0, 0, 0).unwrap();
    std::fs::write(tree.root.join("fs/user-e.1/cpu.stat"), "garbage\n").unwrap();
    let second = a.cycle(t0 + Duration::from_secs(10));
    assert!(
        second.measured.iter().all(|m| m.workload != "n1:user-e.1"),
        "not measured while unreadable"
    );
    assert_eq!(
        second.workloads.len(),
        3,
        "still a workload: its knobs are still written"
    );
    tree.set("fs/user-e.1", 5.0, 0, 0).unwrap();
    let third = a.cycle(t0 + Duration::from_secs(20));
    assert!(
        (usage(&third, "n1:user-e.1", "cpu") - 5.0).abs() < 1e-9,
        "both intervals, once"
    );
}
