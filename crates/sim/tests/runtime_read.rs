//! Runtime scenario files: what is accepted, and every mistake reported at its line.

use fairshare_core::config::ConfigError;
use fairshare_sim::runtime::{RuntimePolicy, RuntimeScenario};
use std::path::Path;

const HEAD: &str = r#"[runtime]
duration_s = 60

[[resource]]
name = "cpu"
kind = "cpu"
[[resource]]
name = "mem"
kind = "memory"

[[node]]
name = "n"
supply = { cpu = 4, mem = 8e9 }
"#;

fn read(text: &str) -> Result<RuntimeScenario, ConfigError> {
    RuntimeScenario::from_toml(text, Path::new("s.toml"))
}

/// The error message for `HEAD` followed by `tail`.
fn error(tail: &str) -> String {
    read(&format!("{HEAD}{tail}")).unwrap_err().to_string()
}

#[test]
fn a_small_scenario_reads_with_defaults() {
    let s = read(&format!(
        "{HEAD}[[workload]]\nname = \"w\"\nowner = \"alice\"\nnode = \"n\"\nsize = {{ cpu = 2 }}\ndemand = {{ cpu = 1 }}\ncount = 3\n"
    ))
    .unwrap();
    assert_eq!(s.policy, RuntimePolicy::Heaviness);
    assert!(s.baseline);
    assert_eq!(s.profile.name, "paper");
    assert_eq!(s.ticks(), 6);
    let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["w-1", "w-2", "w-3"]);
    assert_eq!(s.users.len(), 1);
    assert_eq!(s.users[0].name, "alice");
    assert_eq!(s.workloads[0].demand.at(30.0), Some(&[1.0, 0.0][..]));
    assert!(RuntimeScenario::is_runtime(HEAD));
    assert!(!RuntimeScenario::is_runtime("[[process]]\nname = \"p\"\n"));
}

#[test]
fn mistakes_are_reported_at_their_line() {
    let workload =
        |body: &str| format!("[[workload]]\nname = \"w\"\nowner = \"a\"\nnode = \"n\"\n{body}\n");
    let cases = [
        (
            workload("demand = { gpu = 1 }"),
            "s.toml:18:",
            "unknown resource \"gpu\"",
        ),
        (
            workload("demand = { cpu = -1 }"),
            "s.toml:18:",
            "finite number ≥ 0",
        ),
        (workload("node2 = 1"), "s.toml:18:", "unknown field"),
        (workload(""), "s.toml:15:", "exactly one of demand"),
        (
            workload("demand = { cpu = 1 }\nseries = \"x.csv\""),
            "s.toml:15:",
            "exactly one of demand",
        ),
        (
            "[[workload]]\nname = \"w\"\nowner = \"a\"\nnode = \"m\"\ndemand = { cpu = 1 }\n"
                .to_string(),
            "s.toml:17:",
            "unknown node \"m\"",
        ),
        (
            workload("steps = [{ at_s = 5, demand = {} }, { at_s = 5, demand = {} }]"),
            "s.toml:18:",
            "does not come after",
        ),
        (
            workload("demand = {}\nstop_s = 0"),
            "s.toml:19:",
            "must come after start_s",
        ),
        (
            workload("demand = {}\ncount = 0"),
            "s.toml:19:",
            "count must be at least 1",
        ),
        (
            workload("demand = {}\nseries2 = 1"),
            "s.toml:19:",
            "unknown field",
        ),
        (
            "[[node]]\nname = \"n\"\nsupply = {}\n".to_string(),
            "s.toml:15:",
            "node \"n\" is declared twice",
        ),
        (
            "[[resource]]\nname = \"cpu\"\nkind = \"cpu\"\n".to_string(),
            "s.toml:15:",
            "resource \"cpu\" is declared twice",
        ),
        (
            "[[resource]]\nname = \"gpu\"\nkind = \"accelerator\"\n".to_string(),
            "s.toml:16:",
            "unknown variant",
        ),
        (
            "[[resource]]\nname = \"net\"\nkind = \"network\"\n".to_string(),
            "s.toml:1:",
            "no node supplies resource \"net\"",
        ),
    ];
    for (tail, at, what) in cases {
        let message = error(&tail);
        assert!(
            message.starts_with(at) && message.contains(what),
            "{tail}\n→ {message}"
        );
    }
}

#[test]
fn settings_are_checked() {
    let cases = [
        (
            "[runtime]\nduration_s = 0\n",
            "s.toml:2:14",
            "duration_s must be a number > 0",
        ),
        (
            "[runtime]\nduration_s = 10\npolicy = \"fast\"\n",
            "s.toml:3:10",
            "unknown policy \"fast\": expected off, heaviness, drf-heaviness or asset-heaviness",
        ),
        (
            "[runtime]\nduration_s = 10\nprofile = \"x\"\n",
            "s.toml:3:11",
            "unknown knob profile",
        ),
        (
            "[runtime]\nduration_s = 1e12\n[heaviness]\nupdate_interval_s = 1e-3\n",
            "s.toml:",
            "intervals",
        ),
        (
            "[runtime]\nduration_s = 10\n[heaviness]\nresource_decay_factor = 2\n",
            "s.toml:1:",
            "resource_decay_factor",
        ),
        (
            "[runtime]\nduration_s = 10\n[priority]\nnegative_heaviness_factor = -1\n",
            "s.toml:1:",
            "negative_heaviness_factor",
        ),
        (
            "duration_s = 10\n",
            "s.toml:1:1",
            "unknown field `duration_s`",
        ),
        ("", "s.toml", "missing field `runtime`"),
        (
            "[runtime]\nduration_s = 10\n",
            "s.toml:1:1",
            "no [[resource]]",
        ),
    ];
    for (text, at, what) in cases {
        let message = read(text).unwrap_err().to_string();
        assert!(
            message.starts_with(at) && message.contains(what),
            "{text}\n→ {message}"
        );
    }
}

#[test]
fn a_demand_series_is_read_from_a_csv_file_beside_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    let body = format!(
        "{HEAD}[[workload]]\nname = \"w\"\nowner = \"a\"\nnode = \"n\"\nseries = \"w.csv\"\n"
    );
    std::fs::write(&scenario, &body).unwrap();
    std::fs::write(dir.path().join("w.csv"), "time_s,cpu\n0,1\n30,2.5\n").unwrap();
    let s = RuntimeScenario::read(&scenario).unwrap();
    assert_eq!(s.workloads[0].demand.at(29.0), Some(&[1.0, 0.0][..]));
    assert_eq!(s.workloads[0].demand.at(30.0), Some(&[2.5, 0.0][..]));

    for (csv, at, what) in [
        ("t,cpu\n0,1\n", "w.csv:1", "must start with time_s"),
        (
            "time_s,gpu\n0,1\n",
            "w.csv:1",
            "\"gpu\" is not a declared resource",
        ),
        (
            "time_s,cpu\n0,1\n10,x\n",
            "w.csv:3",
            "expected a finite number ≥ 0, found \"x\"",
        ),
        ("time_s,cpu\n0,1\n0,2\n", "w.csv:3", "does not come after"),
        (
            "time_s,cpu\n0,1,2\n",
            "w.csv:2",
            "found record with 3 fields",
        ),
        ("time_s,cpu\n", "w.csv:1", "no rows"),
    ] {
        std::fs::write(dir.path().join("w.csv"), csv).unwrap();
        let message = RuntimeScenario::read(&scenario).unwrap_err().to_string();
        assert!(
            message.contains(at) && message.contains(what),
            "{csv}\n→ {message}"
        );
    }
    std::fs::remove_file(dir.path().join("w.csv")).unwrap();
    let message = RuntimeScenario::read(&scenario).unwrap_err().to_string();
    assert!(
        message.contains("s.toml:18:") && message.contains("w.csv"),
        "{message}"
    );
}

#[test]
fn the_examples_read() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/runtime");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            RuntimeScenario::read(&path).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// The runtime policies are the registry's: each is parsed from its registry entry, and the
/// registry lists exactly the engine's.
#[test]
fn the_runtime_policies_are_the_registry_s() {
    use fairshare_core::policy::{registry, Engine};
    let names = registry::names(Engine::Runtime);
    for policy in RuntimePolicy::ALL {
        assert_eq!(policy.name().parse::<RuntimePolicy>(), Ok(policy));
        assert!(names.contains(policy.name()), "{names}");
    }
    assert_eq!(names, "off, heaviness, drf-heaviness or asset-heaviness");
    assert!("sdrf"
        .parse::<RuntimePolicy>()
        .unwrap_err()
        .contains("runs only in"));
}
