//! `fairshare baa` end to end: the experiment on generated users, and on the Google 2011 task
//! requests when `../shared` is there.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn baa(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["baa", "experiment"])
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
    assert_eq!(out.status.code(), Some(2), "--users must be at least 1");
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("log.swf");
    std::fs::write(&swf, "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n").unwrap();
    let out = baa(&[swf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("draws from the Google 2011 task requests")
    );
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn google_task_requests() {
    let part = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/google-2011/task_events/part-00001-of-00500.csv.gz");
    let doc = summary(&[part.to_str().unwrap(), "--users", "200", "--tail", "0"]);
    assert!(doc["source"].as_str().unwrap().contains("SUBMIT events"));
    let tasks = summary(&[
        part.to_str().unwrap(),
        "--users",
        "200",
        "--tail",
        "0",
        "--pool",
        "tasks",
    ]);
    assert!(tasks["source"]
        .as_str()
        .unwrap()
        .contains("completed task requests of"));
    let baa = &doc["policies"][2];
    let last = |k: &str| baa[k].as_array().unwrap().last().unwrap().as_f64().unwrap();
    assert!(last("cpu").max(last("memory")) >= 1.0 - 1e-9);
    assert_eq!(baa["envious_epochs"], 0);
}

/// The JSON of `fairshare baa timeline FILE --json -`.
fn timeline(file: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["baa", "timeline"])
        .arg(file)
        .args(["--json", "-"])
        .output()
        .expect("fairshare runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The spec's §5.1 examples, shipped in examples/baa/: a shortfall repaid, and a late joiner
/// catching up from time 0.
#[test]
fn the_example_timelines_give_the_specs_numbers() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/baa");
    let held = |doc: &Value, epoch: usize| -> Vec<f64> {
        (doc["allocations"][epoch].as_array().unwrap().iter())
            .map(|u| u[0].as_f64().unwrap())
            .collect()
    };
    let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
    let doc = timeline(&examples.join("seed-shortfall.toml"));
    assert!(close(&held(&doc, 0), &[40.0, 60.0]) && close(&held(&doc, 1), &[60.0, 40.0]));
    assert!(close(&held(&doc, 2), &[50.0, 50.0]));
    // Static BAA keeps no memory: u1's shortfall is never repaid.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(examples.join("seed-shortfall.toml")).unwrap();
    let still = dir.path().join("static.toml");
    std::fs::write(&still, text.replace("baa-time:catch-up=1.2", "baa")).unwrap();
    let doc = timeline(&still);
    assert!(close(&held(&doc, 0), &[40.0, 50.0]) && close(&held(&doc, 1), &[50.0, 50.0]));
    let doc = timeline(&examples.join("late-joiner.toml"));
    let (a, b) = (50.0 / 3.0, 200.0 / 3.0);
    assert!(close(&held(&doc, 2), &[a, a, b]) && close(&held(&doc, 3), &[a, a, b]));
    let received: Vec<f64> = (doc["received"].as_array().unwrap().iter())
        .map(|r| r.as_f64().unwrap())
        .collect();
    assert!(close(&received, &[500.0 / 3.0; 3]), "{received:?}");
}

#[test]
fn a_timeline_under_another_policy_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.toml");
    std::fs::write(
        &file,
        "policy = \"drf\"\n[capacity]\ncpu = 1\n[[user]]\nid = \"a\"\ndemand = { cpu = 1 }\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["baa", "timeline"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a timeline runs baa or baa-time"));
}
