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
