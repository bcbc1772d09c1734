//! The measures of the bottleneck paper's figures, one definition each, shared by the tests
//! (`tests/bottleneck.rs`) and by the example that prints their statistics over all runs for
//! `docs/bottleneck.md` (`examples/figures.rs`), so the documented numbers are the asserted ones.

#![allow(dead_code)] // each user takes the measures it needs

use fairshare_sim::process::result::SimulationResult;
use fairshare_sim::process::{simulate, simulate_each};
use fairshare_sim::scenario::{ProcessPolicy, Scenario};
use std::path::PathBuf;

/// The folder of the shipped scenarios.
pub fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/bottleneck")
}

/// The shipped scenario whose file name starts with `prefix`, and its path.
pub fn scenario(prefix: &str) -> (Scenario, String) {
    let path = std::fs::read_dir(examples())
        .expect("examples/bottleneck exists")
        .map(|e| e.expect("a directory entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
                && p.extension().is_some_and(|e| e == "toml")
        })
        .unwrap_or_else(|| panic!("no scenario {prefix}*.toml"));
    let scenario = Scenario::read(&path).expect("the shipped scenario parses");
    (scenario, path.display().to_string())
}

/// The shipped scenario `prefix` summarised over its runs (the first in detail).
pub fn run(prefix: &str) -> SimulationResult {
    let (scenario, name) = scenario(prefix);
    simulate(&scenario, &name).expect("the shipped scenario runs")
}

/// Every run of the shipped scenario `prefix` in detail, under its own policy or `policy`.
pub fn each_run(prefix: &str, policy: Option<ProcessPolicy>) -> Vec<SimulationResult> {
    let (mut scenario, name) = scenario(prefix);
    if let Some(policy) = policy {
        scenario.simulation.policy = policy;
    }
    simulate_each(&scenario, &name).expect("the shipped scenario runs")
}

/// When `name` completed (infinity if it did not).
pub fn finish(r: &SimulationResult, name: &str) -> f64 {
    r.finish(name).unwrap_or(f64::INFINITY)
}

/// The first completion of any process.
pub fn first_completion(r: &SimulationResult) -> f64 {
    r.processes
        .iter()
        .filter_map(|p| p.finish_time)
        .fold(f64::INFINITY, f64::min)
}

/// The last completion over the first: 1 when every process progresses at the same rate.
pub fn completion_spread(r: &SimulationResult) -> f64 {
    let last = r
        .processes
        .iter()
        .filter_map(|p| p.finish_time)
        .fold(0.0, f64::max);
    last / first_completion(r)
}

/// Seconds `name` spent waiting in queues: from 0 to its completion, less its service (for a
/// process that starts at 0 and never suspends).
pub fn total_wait(r: &SimulationResult, name: &str) -> f64 {
    let served: f64 = r
        .timeline
        .iter()
        .filter(|s| &*s.process == name)
        .map(|s| s.end - s.start)
        .sum();
    finish(r, name) - served
}

/// After each time red comes back to the CPU (from `away`, or from a pause of more than 1 s),
/// how long it holds the CPU before blue gets a quantum, averaged over returns (`None` if red
/// never returns while blue still runs).
pub fn red_catch_up(r: &SimulationResult, away: Option<&str>) -> Option<f64> {
    let red: Vec<_> = r.timeline.iter().filter(|s| &*s.process == "red").collect();
    let blue: Vec<f64> = r
        .timeline
        .iter()
        .filter(|s| &*s.process == "blue" && &*s.resource == "CPU_CS")
        .map(|s| s.start)
        .collect();
    let waits: Vec<f64> = red
        .windows(2)
        .filter(|w| &*w[1].resource == "CPU_CS")
        .filter(|w| match away {
            Some(resource) => &*w[0].resource == resource,
            None => w[1].start - w[0].end > 1.0,
        })
        .filter_map(|w| {
            let back = w[1].start;
            blue.iter()
                .find(|start| **start >= back)
                .map(|start| start - back)
        })
        .collect();
    (!waits.is_empty()).then(|| waits.iter().sum::<f64>() / waits.len() as f64)
}

/// Fig. 10: `process`'s share of `resource` while all four processes run.
pub fn share_while_all_run(r: &SimulationResult, process: &str, resource: &str) -> f64 {
    r.share(process, resource, 0.0, first_completion(r))
}

/// Fig. 10b: purple's service over the mean service of the others, while all four run.
pub fn purple_over_others(r: &SimulationResult) -> f64 {
    let end = first_completion(r);
    let served = |name: &str| -> f64 {
        r.timeline
            .iter()
            .filter(|s| &*s.process == name)
            .map(|s| (s.end.min(end) - s.start).max(0.0))
            .sum()
    };
    let others: Vec<f64> = r
        .processes
        .iter()
        .filter(|p| p.name != "purple")
        .map(|p| served(&p.name))
        .collect();
    served("purple") / (others.iter().sum::<f64>() / others.len() as f64)
}

/// The fraction of `[from, to]` during which `resource` was a bottleneck.
pub fn bottleneck_fraction(r: &SimulationResult, resource: &str, from: f64, to: f64) -> f64 {
    r.bottleneck_time(resource, from, to) / (to - from)
}

/// Fig. 14: the fraction of the time from 3 s to the first completion during which `resource`
/// was a bottleneck.
pub fn bottleneck_until_first_completion(r: &SimulationResult, resource: &str) -> f64 {
    bottleneck_fraction(r, resource, 3.0, first_completion(r))
}

/// The busy fraction of `resource` over the first run.
pub fn busy_fraction(r: &SimulationResult, resource: &str) -> f64 {
    let busy = r
        .resources
        .iter()
        .find(|x| x.name == resource)
        .map_or(0.0, |x| x.busy_s);
    busy / r.end_s
}
