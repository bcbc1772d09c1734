//! `fairshare cloud` end to end: the runtime policies on a small cloud drawn from the Alibaba
//! GPU 2023 lists in `../shared/traces` (ignored, with the reason, where they are absent), and the
//! errors of bad input, which need no trace.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every runtime policy, in the order the command runs them by default.
const POLICIES: [&str; 4] = ["off", "heaviness", "drf-heaviness", "asset-heaviness"];

/// A short run: 10 nodes, 5 users, 80 VMs, 30 minutes (180 intervals), the arrival after 10.
const SHORT: [&str; 10] = [
    "--nodes",
    "10",
    "--users",
    "5",
    "--workloads",
    "80",
    "--duration",
    "30m",
    "--arrival",
    "10m",
];

/// The workspace's root, from which the command's default `../shared/traces/…` resolves.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `fairshare cloud ARGS`, run from the workspace's root.
fn cloud(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .current_dir(root())
        .arg("cloud")
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// Standard output of a run that must succeed.
fn ok(args: &[&str]) -> Vec<u8> {
    let out = cloud(args);
    assert!(
        out.status.success(),
        "fairshare cloud {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The numbers of `v`, however deep.
fn numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(n.as_f64().expect("a number")),
        Value::Array(a) => a.iter().for_each(|v| numbers(v, out)),
        Value::Object(o) => o.values().for_each(|v| numbers(v, out)),
        _ => {}
    }
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn every_runtime_policy_is_measured_the_same_way_from_the_same_seed() {
    let json = [&SHORT[..], &["--json", "-"]].concat();
    let first = ok(&json);
    assert_eq!(
        first,
        ok(&json),
        "the same seed twice gives the same document, byte for byte"
    );
    let doc: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(
        (doc["nodes"].as_u64(), doc["users"].as_u64()),
        (Some(10), Some(5))
    );
    assert_eq!(doc["workloads"], 80);
    assert_eq!(doc["intervals"], 180);
    assert!(doc["pods"]
        .as_str()
        .unwrap()
        .ends_with("openb_pod_list_default.csv"));
    assert!(doc["cores"].as_f64().unwrap() >= 10.0);
    let arriving = doc["arriving_workloads"].as_u64().unwrap();
    assert!(arriving >= 1, "the last user owns a VM");
    let policies = doc["policies"].as_array().unwrap();
    let names: Vec<&str> = policies
        .iter()
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, POLICIES);
    for p in policies {
        for series in ["cpu_shortfall", "disk_shortfall", "cpu_worst"] {
            assert_eq!(p[series].as_array().unwrap().len(), 180, "{series}");
        }
        assert!(!p["arrival_ratio"].as_array().unwrap().is_empty());
        for mean in [
            "cpu_shortfall_mean",
            "cpu_shortfall_before",
            "cpu_shortfall_after",
            "cpu_worst_mean",
            "disk_shortfall_mean",
            "arrival_ratio_mean",
        ] {
            let m = p[mean]
                .as_f64()
                .unwrap_or_else(|| panic!("{mean} is a number"));
            assert!((0.0..=1.0).contains(&m), "{mean} = {m}");
        }
    }
    let mut all = Vec::new();
    numbers(&doc, &mut all);
    assert!(all.len() > 4 * 3 * 180);
    assert!(all.iter().all(|x| x.is_finite()));
    let other = ok(&[&SHORT[..], &["--seed", "2", "--json", "-"]].concat());
    assert_ne!(first, other, "another seed draws another cloud");

    // The terminal table: the cloud, then a row per policy with its seven measures.
    let table = String::from_utf8(ok(&SHORT)).unwrap();
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("10 nodes, 5 users, 80 VMs"), "{table}");
    assert!(flat.contains("user u05"), "{table}");
    for name in POLICIES {
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name} in\n{table}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        // "settles after" is `never` or `N intervals`.
        assert!(matches!(cells.len(), 8 | 9), "{row}");
        assert!(
            cells[1..7].iter().all(|c| c.parse::<f64>().is_ok()),
            "{row}"
        );
    }
    assert!(flat.contains("Shortfall: what users were owed"));
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn the_report_and_the_charts_are_written_and_policies_can_be_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("cloud.html");
    let out = ok(&[
        &SHORT[..],
        &[
            "--policy",
            "heaviness",
            "--policy",
            "off",
            "--report",
            page.to_str().unwrap(),
            "--charts",
            dir.path().to_str().unwrap(),
        ],
    ]
    .concat());
    let table = String::from_utf8(out).unwrap();
    let rows: Vec<&str> = table
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| POLICIES.contains(w))
        .collect();
    assert_eq!(rows, ["heaviness", "off"], "{table}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 4);
    // Self-contained: nothing to run, nothing loaded (SVG's xmlns is a name, not a load).
    for loads in ["<script", " src=", "<link", "url("] {
        assert!(!html.contains(loads), "{loads}");
    }
    for chart in ["cpu", "disk", "worst", "arrival"] {
        let svg = std::fs::read_to_string(dir.path().join(format!("runtime-cloud-{chart}.svg")))
            .unwrap_or_else(|e| panic!("{chart}: {e}"));
        assert!(html.contains(&svg), "the {chart} chart is the page's");
    }
    let twice = cloud(&[&SHORT[..], &["--policy", "off", "--policy", "off"]].concat());
    assert_eq!(twice.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("--policy off is given twice"));
}

#[test]
fn bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-pods.csv");
    let out = cloud(&["--pods", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--pods {}: no such file", missing.display())),
        "{stderr}"
    );
    assert!(stderr.contains("pod list"), "{stderr}");

    let pods = dir.path().join("pods.csv");
    std::fs::write(&pods, "").unwrap();
    let nodes = dir.path().join("no-such-nodes.csv");
    let lists = [
        "--pods",
        pods.to_str().unwrap(),
        "--node-list",
        nodes.to_str().unwrap(),
    ];
    let out = cloud(&lists);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--node-list {}: no such file", nodes.display())),
        "{stderr}"
    );

    std::fs::write(&nodes, "").unwrap();
    let refused = |extra: &[&str], expected: &str| {
        let out = cloud(&[&lists[..], extra].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
    };
    refused(
        &["--duration", "1h", "--arrival", "2h"],
        "not before the run ends",
    );
    refused(
        &["--users", "9", "--workloads", "4"],
        "9 users cannot each own one of 4 VMs",
    );
    refused(&["--disk", "0"], "must be positive");
    for usage in [
        &["--policy", "fifo"][..],
        &["--profile", "nope"],
        &["--duration", "soon"],
        &["--nodes", "0"],
    ] {
        let out = cloud(&[&lists[..], usage].concat());
        assert_eq!(out.status.code(), Some(2), "{usage:?} is a usage error");
    }
}
