//! `fairshare baa` end to end: the experiment on generated users, and on the Google 2011 task
//! requests when `../shared` is there.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn baa(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .arg("baa")
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// The JSON of `fairshare baa ARGS --json -`.
fn summary(args: &[&str]) -> Value {
    let out = baa(&[args, &["--json", "-"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn generated_users_join_one_by_one_and_the_answer_is_reproducible() {
    let doc = summary(&["--users", "40", "--tail", "3", "--seed", "5"]);
    assert_eq!(doc["users"], 40);
    assert_eq!(doc["joined"].as_array().unwrap().len(), 43);
    let policies: Vec<&str> = (doc["policies"].as_array().unwrap().iter())
        .map(|p| p["policy"].as_str().unwrap())
        .collect();
    assert_eq!(
        policies,
        ["baa-time", "baa-time:origin=global", "baa", "drf"]
    );
    for p in doc["policies"].as_array().unwrap() {
        for k in ["cpu", "memory"] {
            assert!(p[k]
                .as_array()
                .unwrap()
                .iter()
                .all(|u| u.as_f64().unwrap() <= 1.0 + 1e-9));
        }
    }
    assert_eq!(doc["policies"][2]["envious_epochs"], 0);
    assert_eq!(
        doc,
        summary(&["--users", "40", "--tail", "3", "--seed", "5"])
    );
    let out = baa(&["--users", "0"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn google_task_requests() {
    let part = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/google-2011/task_events/part-00001-of-00500.csv.gz");
    if !part.exists() {
        eprintln!("SKIPPED: {} not found", part.display());
        return;
    }
    let doc = summary(&[part.to_str().unwrap(), "--users", "200", "--tail", "0"]);
    assert!(doc["source"].as_str().unwrap().contains("task requests of"));
    let baa = &doc["policies"][2];
    let last = |k: &str| baa[k].as_array().unwrap().last().unwrap().as_f64().unwrap();
    assert!(last("cpu").max(last("memory")) >= 1.0 - 1e-9);
    assert_eq!(baa["envious_epochs"], 0);
}
