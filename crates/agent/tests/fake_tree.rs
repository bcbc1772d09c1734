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
fn standalone_priorities_follow_the_workloads_as_they_come_and_go() {
    let (_dir, tree) = three(Shape::V1);
    let mut a = agent(&tree, "", false);
    let t0 = Instant::now();
    let users = |report: &CycleReport| -> Vec<String> {
        let mut users: Vec<String> = report.users.iter().map(|(u, _)| u.clone()).collect();
        users.sort();
        users
    };
    a.cycle(t0);
    assert_eq!(users(&a.cycle(t0 + Duration::from_secs(10))), ["d", "e"]);
    tree.add("fs/user-f.1").unwrap();
    a.cycle(t0 + Duration::from_secs(20));
    let report = a.cycle(t0 + Duration::from_secs(30));
    assert_eq!(users(&report), ["d", "e", "f"], "a new owner is ranked");
    tree.remove("fs/user-e.1").unwrap();
    let report = a.cycle(t0 + Duration::from_secs(40));
    assert_eq!(users(&report), ["d", "f"], "a gone owner is not");
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
fn changed_limits_are_seen_every_rewrite_every_cycles() {
    let (_dir, tree) = three(Shape::V2);
    let mut a = agent(&tree, "rewrite_every = 3", false);
    let t0 = Instant::now();
    let cpu_size = |report: &CycleReport| {
        let e = report.workloads.iter().find(|w| w.owner == "e").unwrap();
        e.cpu_size
    };
    assert_eq!(cpu_size(&a.cycle(t0)), 1.0, "the default");
    std::fs::write(tree.root.join("fs/user-e.1/cpu.max"), "300000 100000\n").unwrap();
    for k in 1..3 {
        let report = a.cycle(t0 + Duration::from_secs(10 * k));
        assert_eq!(
            cpu_size(&report),
            1.0,
            "cycle {}: as read at the first",
            k + 1
        );
    }
    assert_eq!(cpu_size(&a.cycle(t0 + Duration::from_secs(30))), 3.0);
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

/// The kernel's default weights, which a cgroup nobody steers has.
fn kernel_default(shape: Shape, file: &str) -> u64 {
    match (shape, file) {
        (Shape::V2, _) => 100,
        (_, "cpu.shares") => 1024,
        _ => 500,
    }
}

#[test]
fn a_neutral_workload_weighs_what_the_kernel_gives_a_cgroup_nobody_steers() {
    for shape in SHAPES {
        let (_dir, tree) = three(shape);
        tree.add("fs/system.slice").unwrap();
        let mut a = agent(&tree, "", false);
        a.cycle(Instant::now());
        let io = if shape == Shape::V2 {
            "io.weight"
        } else {
            "blkio.weight"
        };
        for file in [cpu_knob(shape), io] {
            let neutral = tree.knob("fs/user-e.1", file).unwrap();
            assert_eq!(neutral, kernel_default(shape, file), "{shape:?} {file}");
            assert_eq!(
                tree.knob("fs/system.slice", file),
                Some(neutral),
                "{shape:?}: the unmanaged sibling weighs as much as a neutral workload"
            );
        }
    }
}

#[test]
fn weights_stay_near_the_kernel_default_under_load() {
    let (_dir, tree) = three(Shape::V1);
    let mut a = agent(&tree, "", false);
    let t0 = Instant::now();
    a.cycle(t0);
    for w in ["user-d.1", "user-d.2", "user-e.1"] {
        tree.set(&format!("fs/{w}"), 10.0, 0, 0).unwrap();
    }
    a.cycle(t0 + Duration::from_secs(10));
    let e = tree.knob("fs/user-e.1", "cpu.shares").unwrap();
    let d = tree.knob("fs/user-d.1", "cpu.shares").unwrap();
    // The highest priority gets twice the default, a heavier one less than the default: an
    // unmanaged sibling at 1024 keeps a share of the same order as theirs.
    assert!((1024..=2048).contains(&e) && d < 1024, "e {e}, d {d}");
}

#[test]
fn names_that_differ_never_share_a_workload_or_an_owner() {
    let dir = tempfile::tempdir().unwrap();
    let tree = FakeTree::new(dir.path(), Shape::V2).unwrap();
    let names = [
        "user-g.a b",
        "user-g.a_b",
        "user-ü.1",
        "user-é.1",
        "user-g.a:b",
    ];
    for n in names {
        tree.add(&format!("fs/{n}")).unwrap();
    }
    let mut a = agent(&tree, "", false);
    let report = a.cycle(Instant::now());
    let mut ids: Vec<&str> = report.workloads.iter().map(|w| w.id.as_str()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "n1:user-:C3:A9.1",
            "n1:user-:C3:BC.1",
            "n1:user-g.a:20b",
            "n1:user-g.a:3Ab",
            "n1:user-g.a_b"
        ]
    );
    let owners: std::collections::BTreeSet<&str> =
        report.workloads.iter().map(|w| w.owner.as_str()).collect();
    assert_eq!(owners.len(), 3, "g, ü and é: {owners:?}");
    assert!(ids.iter().all(|id| fairshare_wire::model::valid_id(id)));
    // Every one of them is steered: each got its knobs.
    for n in names {
        assert_eq!(
            tree.knob(&format!("fs/{n}"), "cpu.weight"),
            Some(100),
            "{n}"
        );
    }
}

#[test]
fn bfq_weights_are_written_where_the_plain_ones_are_absent() {
    // v1: BFQ loaded, no CFQ (no blkio.weight at the root; BFQ's file only in children).
    let (_dir, tree) = three(Shape::V1);
    let blkio = tree.root.join("blkio");
    std::fs::remove_file(blkio.join("blkio.weight")).unwrap();
    std::fs::write(blkio.join("blkio.bfq.io_service_bytes"), "Total 0\n").unwrap();
    for w in ["user-d.1", "user-d.2", "user-e.1"] {
        let d = blkio.join("fs").join(w);
        std::fs::remove_file(d.join("blkio.weight")).unwrap();
        std::fs::write(d.join("blkio.bfq.weight"), "100\n").unwrap();
    }
    let mut a = agent(&tree, "", false);
    let report = a.cycle(Instant::now());
    assert_eq!(report.refused, 0, "{report:?}");
    assert!(report.writes.iter().any(|w| w.file == "blkio.bfq.weight"));
    assert_eq!(tree.knob("fs/user-e.1", "blkio.bfq.weight"), Some(100));
    // v2: io.bfq.weight where a child has it and not io.weight.
    let (_dir2, tree) = three(Shape::V2);
    for w in ["user-d.1", "user-d.2", "user-e.1"] {
        let d = tree.root.join("fs").join(w);
        std::fs::remove_file(d.join("io.weight")).unwrap();
        std::fs::write(d.join("io.bfq.weight"), "default 100\n").unwrap();
    }
    let layout = Layout::detect(&tree.root).unwrap();
    assert!(
        layout.knobs.iter().any(|k| k.file == "io.bfq.weight"),
        "{:?}",
        layout.knobs
    );
}

#[test]
fn a_listing_that_fails_forgets_no_workload() {
    let (_dir, tree) = three(Shape::V1);
    let mut a = agent(&tree, "", false);
    let t0 = Instant::now();
    assert_eq!(a.cycle(t0).workloads.len(), 3);
    // The workloads' directory cannot be listed (here: it is made a file for a moment;
    // on a host, the agent out of file descriptors), but its cgroups are still there.
    let fs_dir = tree.root.join("cpu/fs");
    let aside = tree.root.join("cpu/fs.aside");
    std::fs::rename(&fs_dir, &aside).unwrap();
    std::fs::write(&fs_dir, "").unwrap();
    let report = a.cycle(t0 + Duration::from_secs(10));
    std::fs::remove_file(&fs_dir).unwrap();
    std::fs::rename(&aside, &fs_dir).unwrap();
    assert_eq!(report.workloads.len(), 3, "{report:?}");
    assert_eq!(a.cycle(t0 + Duration::from_secs(20)).workloads.len(), 3);
}

#[test]
fn a_changed_owner_mapping_names_the_owners_anew_from_the_next_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let tree = FakeTree::new(dir.path(), Shape::V1).unwrap();
    for w in ["vm-1", "vm-2"] {
        tree.add(&format!("fs/{w}")).unwrap();
    }
    let mapping = dir.path().join("owners.toml");
    std::fs::write(&mapping, "\"vm-1\" = \"alice\"\n").unwrap();
    let rule = format!(
        "owner = {{ mapping = {:?} }}",
        mapping.display().to_string()
    );
    let mut a = agent(&tree, &rule, false);
    let t0 = Instant::now();
    let owners = |report: &CycleReport| -> Vec<(String, String)> {
        let mut o: Vec<_> = report
            .workloads
            .iter()
            .map(|w| (w.id.clone(), w.owner.clone()))
            .collect();
        o.sort();
        o
    };
    for k in 0..2 {
        let report = a.cycle(t0 + Duration::from_secs(10 * k));
        assert_eq!(owners(&report), [("n1:vm-1".into(), "alice".into())]);
    }
    std::fs::write(&mapping, "\"vm-1\" = \"carol\"\n\"vm-2\" = \"bob\"\n").unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&mapping)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let report = a.cycle(t0 + Duration::from_secs(20));
    assert_eq!(
        owners(&report),
        [
            ("n1:vm-1".into(), "carol".into()),
            ("n1:vm-2".into(), "bob".into())
        ]
    );
}

#[test]
fn a_name_under_two_parents_is_one_workload_in_every_cycle() {
    let (_dir, tree) = three(Shape::V2);
    tree.add("other/user-d.1").unwrap();
    tree.add("other/user-f.1").unwrap();
    let config: AgentConfig = toml::from_str("parents = [\"fs\", \"other\"]").unwrap();
    let layout = Layout::detect(&tree.root).unwrap();
    let mut a = Agent::new(config, layout, "n1".into(), supply(), None, false).unwrap();
    let t0 = Instant::now();
    for k in 0..3 {
        let report = a.cycle(t0 + Duration::from_secs(10 * k));
        let mut found: Vec<&str> = report.workloads.iter().map(|w| w.cgroup.as_str()).collect();
        found.sort();
        assert_eq!(
            found,
            [
                "fs/user-d.1",
                "fs/user-d.2",
                "fs/user-e.1",
                "other/user-f.1"
            ],
            "cycle {k}"
        );
    }
}
