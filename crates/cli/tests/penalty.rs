//! `fairshare penalty` end to end: the spec's worked example (docs/metacentrum.md §8.1) from a
//! `.machines` file, an unsatisfiable job, and bad input.

use serde_json::Value;
use std::process::Command;

fn fairshare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// Machine A: 80 processors and 512 GiB; B: 12 processors and 90 GiB (memory in KB).
fn machines(dir: &std::path::Path) -> String {
    let path = dir.join("cluster.machines");
    let gib = 1024 * 1024;
    std::fs::write(
        &path,
        format!("0 A 20 80 1 {}\n1 B 48 12 1 {}\n", 512 * gib, 90 * gib),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn the_cheapest_machine_prices_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let machines = machines(dir.path());
    let out = fairshare(&[
        "penalty",
        "--machines",
        &machines,
        "--cpus",
        "4",
        "--mem",
        "64GiB",
        "--walltime",
        "2h",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-3;
    assert!(
        close(&e["machines"][0]["pe_per_node"], 10.0),
        "{}",
        e["machines"][0]
    );
    assert!(
        close(&e["machines"][1]["pe_per_node"], 8.5333),
        "{}",
        e["machines"][1]
    );
    assert_eq!(e["machines"][1]["priced_nodes"], 1);
    assert_eq!(e["machines"][0]["priced_nodes"], 0);
    assert!(close(&e["pe"], 8.5333));
    assert!(close(&e["machines"][1]["penalty_if_run_here"], 61_440.0));
    let table = fairshare(&[
        "penalty",
        "--machines",
        &machines,
        "--cpus",
        "4",
        "--mem",
        "64GiB",
    ]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("PE (charged)          8.5333"), "{table}");
}

#[test]
fn an_unsatisfiable_job_is_explained_and_not_charged() {
    let dir = tempfile::tempdir().unwrap();
    let machines = machines(dir.path());
    let out = fairshare(&["penalty", "--machines", &machines, "--mem", "600GiB"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("unsatisfiable and is not charged") && said.contains("A: memory (KB): needs"),
        "{said}"
    );
    let gpus = fairshare(&["penalty", "--machines", &machines, "--gpus", "1"]);
    assert!(String::from_utf8_lossy(&gpus.stderr).contains("has no GPUs"));
    let bad = fairshare(&["penalty", "--machines", &machines, "--mem", "5 parsecs"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown unit"));
}

/// A TOML catalogue brings GPUs, scratch and SPEC (the spec's §8.4): one GPU on a
/// 32-processor, 4-GPU node costs 8 processors; two cost 16; the penalty takes the SPEC.
#[test]
fn a_catalogue_prices_gpus_and_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cluster.toml");
    std::fs::write(
        &path,
        "[[machine]]\nname = \"g\"\ncount = 2\ncpus = 32\nmemory = \"256GiB\"\ngpus = 4\nscratch = \"1TiB\"\nspec = 10\n",
    )
    .unwrap();
    let machines = path.to_str().unwrap();
    let explain = |extra: &[&str]| {
        let base = [
            "penalty",
            "--machines",
            machines,
            "--cpus",
            "8",
            "--mem",
            "32GiB",
            "--json",
            "-",
        ];
        let out = fairshare(&[&base[..], extra].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let one = explain(&["--gpus", "1"]);
    assert_eq!(one["pe"], 8.0);
    assert_eq!(
        one["machines"][0]["penalty_if_run_here"],
        8.0 * 3600.0 * 10.0
    );
    assert_eq!(explain(&["--gpus", "2"])["pe"], 16.0);
    assert_eq!(
        explain(&["--scratch", "512GiB"])["pe"],
        16.0,
        "half the scratch"
    );
    let too_much = fairshare(&["penalty", "--machines", machines, "--scratch", "2TiB"]);
    assert!(String::from_utf8_lossy(&too_much.stderr).contains("scratch (KB): needs"));
}

/// In additive mode the per-node column is the additive figure too, in the table and the JSON
/// (it showed max mode's 12 beside an additive charge of 156).
#[test]
fn additive_mode_shows_additive_figures_per_node() {
    let catalogue = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/catalogue.toml");
    let args = [
        "penalty",
        "--machines",
        catalogue,
        "--cpus",
        "2",
        "--mem",
        "64GiB",
        "--gpus",
        "1",
        "--mode",
        "additive",
    ];
    let json = fairshare(&[&args[..], &["--json", "-"]].concat());
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let charged = doc["pe"].as_f64().unwrap();
    assert_eq!(charged, 156.0);
    let per_node: Vec<f64> = doc["machines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["pe_per_node"].as_f64())
        .collect();
    assert!(
        !per_node.is_empty() && per_node.iter().all(|pe| *pe == charged),
        "{per_node:?}"
    );
    let table = fairshare(&args);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("156.0000") && !table.contains("12.0000"),
        "{table}"
    );
}
