//! `fairshare priorities` end to end on a log this test writes: two users with equal shares
//! who used 1,000 and 4,000 processor-seconds (the spec's §8.5), under PBS and MetaCentrum,
//! before and after a halving.

use serde_json::Value;
use std::process::Command;

fn fairshare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// The factors and ranks of users `1` and `2` (by name) under `args`.
fn users(args: &[&str]) -> Vec<(f64, u64)> {
    let out = fairshare(&[args, &["--json", "-"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    ["1", "2"]
        .iter()
        .map(|name| {
            let rows = doc["rows"].as_array().unwrap();
            let row = rows
                .iter()
                .find(|r| r["name"] == *name && r["user"] == true)
                .unwrap();
            (
                row["factor"].as_f64().unwrap(),
                row["rank"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_spec_example_under_pbs_and_metacentrum() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("usage.swf");
    // User 1 runs 1 processor for 1,000 s; user 2 runs 4 processors for 1,000 s; a last job at
    // 20,000 s marks the end.
    let line = |id: u32, submit: u32, run: u32, cpus: u32, user: u32| {
        format!("{id} {submit} 0 {run} {cpus} -1 -1 {cpus} {run} -1 1 {user} 1 1 1 1 -1 -1\n")
    };
    let text = line(1, 0, 1000, 1, 1) + &line(2, 0, 1000, 4, 2) + &line(3, 20_000, 1, 1, 3);
    std::fs::write(&log, text).unwrap();
    let path = log.to_str().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-3 * b.abs().max(1e-9);
    let pbs = users(&[
        "priorities",
        path,
        "--at",
        "2000",
        "--policy",
        "pbs",
        "--decay",
        "half-life:100000d",
    ]);
    // Three users with one share each: usage shares 0.2 and 0.8 of 5,000, shares 1/3.
    assert!(
        close(pbs[0].0, (-0.2f64 * 3.0).exp2()) && close(pbs[1].0, (-0.8f64 * 3.0).exp2()),
        "{pbs:?}"
    );
    assert_eq!(
        (pbs[0].1, pbs[1].1),
        (2, 3),
        "user 3, without usage, ranks first"
    );
    let t = |decay: &str| {
        users(&[
            "priorities",
            path,
            "--at",
            "15000",
            "--policy",
            "metacentrum",
            "--decay",
            decay,
        ])
    };
    let before = t("step:20000s:0.5");
    assert!(
        close(before[0].0, 1.0 / 3.0 / 1000.0) && close(before[1].0, 1.0 / 3.0 / 4000.0),
        "{before:?}"
    );
    let halved = t("step:10000s:0.5");
    assert!(
        close(halved[0].0, 2.0 * before[0].0) && close(halved[1].0, 2.0 * before[1].0),
        "{halved:?}"
    );
    let bad = fairshare(&["priorities", path, "--decay", "sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected half-life:SECONDS"));
}

/// The operator's case: a Slurm accounting dump and the site's share file. Physics (alice,
/// bob) and chemistry (carol) have one share each. By two hours alice used 8 processors for
/// 2 h (57,600 s), bob 2 for 1 h (7,200 s), carol 4 for 1 h (14,400 s); a step, a pending job
/// and a running one are not charged.
#[test]
fn a_sacct_dump_gives_the_expected_tree_and_fair_tree_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.txt");
    let rows = [
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State",
        "11|alice|physics|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|cpu=8,mem=16G,node=1|batch|COMPLETED",
        "11.batch||physics|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|cpu=8,mem=16G,node=1||COMPLETED",
        "12|bob|physics|2024-01-01T00:10:00|2024-01-01T00:20:00|2024-01-01T01:20:00|cpu=2,mem=4G,node=1|batch|COMPLETED",
        "13|carol|chemistry|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=4,mem=4G,node=1|batch|COMPLETED",
        "14|carol|chemistry|2024-01-01T00:30:00|Unknown|Unknown||batch|PENDING",
        "15|bob|physics|2024-01-01T01:30:00|2024-01-01T01:31:00|Unknown|cpu=64,node=1|batch|RUNNING",
    ];
    std::fs::write(&dump, rows.join("\n") + "\n").unwrap();
    let shares = dir.path().join("shares.toml");
    std::fs::write(
        &shares,
        "[accounts]\nphysics = { shares = 1 }\nchemistry = { shares = 1 }\n\n[users]\nalice = { account = \"physics\" }\nbob = { account = \"physics\" }\ncarol = { account = \"chemistry\" }\n",
    )
    .unwrap();
    let out = fairshare(&[
        "priorities",
        dump.to_str().unwrap(),
        "--shares",
        shares.to_str().unwrap(),
        "--at",
        "2h",
        "--policy",
        "fair-tree",
        "--decay",
        "half-life:100000d",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs_charged"], 3);
    let rows: Vec<(String, u64, Option<u64>, f64)> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["depth"].as_u64().unwrap(),
                r["rank"].as_u64(),
                r["raw_usage"].as_f64().unwrap(),
            )
        })
        .collect();
    let names: Vec<(&str, u64, Option<u64>)> = rows
        .iter()
        .map(|(n, d, r, _)| (n.as_str(), *d, *r))
        .collect();
    // The tree in the share file's order. Chemistry's level fairshare 0.5 / (14,400 / 79,200) = 2.75 beats physics' 0.611; in
    // physics bob's 0.5 / (7,200 / 64,800) = 4.5 beats alice's 0.5625.
    assert_eq!(
        names,
        [
            ("root", 0, None),
            ("chemistry", 1, None),
            ("carol", 2, Some(1)),
            ("physics", 1, None),
            ("alice", 2, Some(3)),
            ("bob", 2, Some(2)),
        ]
    );
    let usage: Vec<f64> = rows.iter().map(|r| r.3).collect();
    let expected = [79_200.0, 14_400.0, 14_400.0, 64_800.0, 57_600.0, 7_200.0];
    for (u, e) in usage.iter().zip(expected) {
        assert!((u - e).abs() < 1e-3 * e, "{usage:?}");
    }
}

/// `--usage pe` on a sacct dump priced on a TOML catalogue: one node type of 12 processors and
/// 120 GiB. Alice ran 1 processor with 60 GiB for an hour (half the node's memory: a PE of 6),
/// bob 1 processor with 1 GiB (a PE of 1). Under CPU time both used 3,600 processor-seconds.
#[test]
fn the_pe_charges_a_sacct_dump_on_a_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.txt");
    let rows = [
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State",
        "1|alice|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=1,mem=60G,node=1|p|COMPLETED",
        "2|bob|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=1,mem=1G,node=1|p|COMPLETED",
    ];
    std::fs::write(&dump, rows.join("\n") + "\n").unwrap();
    let catalogue = dir.path().join("cluster.toml");
    std::fs::write(
        &catalogue,
        "[[machine]]\nname = \"node\"\ncount = 4\ncpus = 12\nmemory = \"120GiB\"\n",
    )
    .unwrap();
    let usage = |metric: &str| {
        let out = fairshare(&[
            "priorities",
            dump.to_str().unwrap(),
            "--machines",
            catalogue.to_str().unwrap(),
            "--usage",
            metric,
            "--at",
            "1h",
            "--decay",
            "half-life:100000d",
            "--json",
            "-",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["usage"], metric);
        let raw = |name: &str| {
            let rows = doc["rows"].as_array().unwrap();
            let row = rows.iter().find(|r| r["name"] == name).unwrap();
            row["raw_usage"].as_f64().unwrap()
        };
        (raw("alice"), raw("bob"))
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-3 * b;
    let (alice, bob) = usage("pe");
    assert!(
        close(alice, 6.0 * 3600.0) && close(bob, 3600.0),
        "{alice} {bob}"
    );
    let (alice, bob) = usage("cpu");
    assert!(close(alice, 3600.0) && close(bob, 3600.0), "{alice} {bob}");
    // A dump says nothing about the machines: the PE needs them given.
    let out = fairshare(&["priorities", dump.to_str().unwrap(), "--usage", "pe"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("give --machines FILE"), "{said}");
}
