//! `fairshare simulate` on runtime scenarios: the paper's examples end to end (table, JSON,
//! report), the same bytes twice, and mistakes refused with their place.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fairshare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/runtime/{name}.toml"))
}

#[test]
fn e1_runs_with_its_baseline_and_writes_the_same_bytes_twice() {
    let dir = tempfile::TempDir::new().unwrap();
    let e1 = example("e1");
    let (json, report) = (dir.path().join("e1.json"), dir.path().join("e1.html"));
    let output = fairshare(&[
        "simulate",
        e1.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(table.contains("policy     heaviness"), "{table}");
    let row = table.lines().find(|l| l.starts_with("v_e1")).unwrap();
    assert!(row.contains("49.7 %") && row.contains("33.3 %"), "{row}");
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(document["schema_version"], 1);
    assert_eq!(document["service"]["policy"], "heaviness");
    assert_eq!(document["baseline"]["policy"], "off");
    assert_eq!(document["service"]["ticks"], 90);
    let page = std::fs::read_to_string(&report).unwrap();
    assert!(page.contains("<svg") && page.contains("v_e1"));

    let again = fairshare(&["simulate", e1.to_str().unwrap(), "--json", "-"]);
    assert_eq!(again.stdout, std::fs::read(&json).unwrap());
}

#[test]
fn policy_is_overridden_and_checked() {
    let e2 = example("e2");
    let output = fairshare(&[
        "simulate",
        e2.to_str().unwrap(),
        "--policy",
        "drf-heaviness",
        "--json",
        "-",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["service"]["metric"], "drf");
    let output = fairshare(&["simulate", e2.to_str().unwrap(), "--policy", "drf"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("policy \"drf\" runs only in allocate, replay and sweep or simulate")
            && stderr.contains("expected off, heaviness, drf-heaviness or asset-heaviness"),
        "{stderr}"
    );
    let output = fairshare(&["simulate", e2.to_str().unwrap(), "--runs", "3"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("runs once"));
}

#[test]
fn a_mistake_is_refused_at_its_line() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "[runtime]\nduration_s = 60\n[[resource]]\nname = \"cpu\"\nkind = \"cpu\"\n[[node]]\nname = \"n\"\nsupply = { cpu = 2, gpu = 1 }\n",
    )
    .unwrap();
    let output = fairshare(&["simulate", path.to_str().unwrap(), "--json", "-"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("s.toml:8:") && message.contains("unknown resource \"gpu\""),
        "{message}"
    );
}
