//! `fairshare simulate`: run a scenario — processes cycling over resource queues (the bottleneck
//! paper's simulator) or workloads running on nodes under the runtime fairness service (the
//! heaviness paper's), told apart by the file's tables.

use crate::output::Outputs;
use crate::policy_help;
use anyhow::Result;
use fairshare_core::policy::Engine;
use fairshare_lab::simulation::{LoadedScenario, Simulated};
use fairshare_sim::process::Progress;
use fairshare_sim::stats::{timed, RunStats};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// Run a scenario and show who got what, when: processes cycling over resources under
/// bottleneck-based global priorities, or workloads on a cloud's nodes under the runtime
/// fairness service.
///
/// A process scenario is a TOML file with `[simulation]` parameters, optional `[[resource]]`
/// lanes, and `[[process]]` entries with an entitlement and a program in the paper's syntax
/// (`loop K`, then `RESOURCE MEAN WIDTH DIST` lines); the paper's experiments are in
/// examples/bottleneck/ and the limits in docs/bottleneck.md.
///
/// A runtime scenario has a `[runtime]` table, `[[resource]]`s with a kind, `[[node]]`s with
/// their supply, and `[[workload]]`s with an owner, a node, a virtual size and a demand
/// (constant, stepped, or a CSV series). Every interval the nodes are divided by weighted
/// max–min under the knobs the service set from heaviness; the run is shown beside one
/// without the service (policy `off`). The paper's experiments are in examples/runtime/, the
/// format in docs/runtime.md.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Override the scenario's policy.
    #[arg(long, long_help = simulate_policy_help())]
    policy: Option<String>,
    /// Override the number of independent runs (seeds seed, seed + 1, …), at most 1000.
    #[arg(long)]
    runs: Option<u32>,
    /// Write the result as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report to this file (processes: Gantt chart and cumulative
    /// service; runtime: shares, heaviness and CPU weights over time).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write the wall-clock time and events (intervals, for a runtime scenario) per second as
    /// JSON to this file (the result itself holds no clock reading, so it is the same whenever
    /// the scenario and seed are).
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let outputs = Outputs {
        json: args.json,
        report: args.report,
        stats: args.stats,
    };
    outputs.check()?;
    let simulation = LoadedScenario::read(&args.scenario, args.policy.as_deref(), args.runs)?;
    let name = args.scenario.display().to_string();
    let bar = bar(simulation.runs());
    if bar.is_hidden() {
        eprintln!(
            "simulate: {} run(s) of {name} (progress is drawn where standard error is a terminal)",
            simulation.runs()
        );
    }
    let (result, wall_s) = timed(|| simulation.run(&name, &mut |p| show(&bar, p)));
    bar.finish_and_clear();
    let (result, events) = result?;
    let stats = RunStats::new(&name, events, wall_s);
    outputs.write_stats(std::slice::from_ref(&stats))?;
    match result {
        Simulated::Processes(result) => {
            outputs.write(&*result, fairshare_report::simulate_html, |r| {
                fairshare_report::simulate_table(r, Some(&stats))
            })
        }
        Simulated::Runtime(result) => outputs.write(
            &*result,
            fairshare_report::runtime_html,
            fairshare_report::runtime_table,
        ),
    }
}

/// The help of `--policy`: the process policies of the registry, then the runtime ones.
fn simulate_policy_help() -> String {
    format!(
        "{}\n\nFor a runtime scenario:\n{}",
        policy_help(Engine::Simulate, "Override the scenario's policy"),
        fairshare_core::policy::registry::help(Engine::Runtime)
    )
}

/// A bar over the runs (hidden when standard error is not a terminal), drawn at once and
/// ticking, so that a run slow to report its first progress still shows it is at work.
fn bar(runs: u32) -> ProgressBar {
    let bar = ProgressBar::new(u64::from(runs)).with_message("starting");
    bar.set_style(
        ProgressStyle::with_template(
            "simulate [{bar:30}] {pos}/{len} runs, {msg}, {elapsed} elapsed",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    bar
}

/// Shows where the simulation is: runs finished, and how far the current one has got.
fn show(bar: &ProgressBar, p: Progress) {
    bar.set_position(u64::from(p.finished));
    bar.set_message(format!(
        "{:.1} s simulated, {} events",
        p.simulated_s, p.events
    ));
}
