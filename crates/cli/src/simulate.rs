//! `fairshare simulate`: run a process-level scenario (the bottleneck paper's simulator).

use crate::output::Outputs;
use crate::policy_help;
use anyhow::{Context, Result};
use fairshare_core::policy::{Engine, PolicySpec};
use fairshare_sim::process::{simulate_with_progress, Progress};
use fairshare_sim::scenario::{check_runs, ProcessPolicy, Scenario, MAX_RUNS};
use fairshare_sim::stats::{timed, RunStats};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// Run a scenario of processes cycling over resources under bottleneck-based global priorities
/// (or per-resource lags, DRF, FIFO), and show who got what, when.
///
/// The scenario is a TOML file: `[simulation]` parameters, optional `[[resource]]` lanes, and
/// `[[process]]` entries with an entitlement and a program in the paper's syntax (`loop K`,
/// then `RESOURCE MEAN WIDTH DIST` lines). The paper's experiments are in examples/bottleneck/.
/// A scenario that would not finish is refused; the limits are in docs/bottleneck.md.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Override the scenario's ranking policy.
    #[arg(long, long_help = policy_help(Engine::Simulate, "Override the scenario's ranking policy"))]
    policy: Option<String>,
    /// Override the number of independent runs (seeds seed, seed + 1, …), at most 1000.
    #[arg(long)]
    runs: Option<u32>,
    /// Write the result as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report (Gantt chart, cumulative service) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write the wall-clock time and events per second as JSON to this file (the result
    /// itself holds no clock reading, so it is the same whenever the scenario and seed are).
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
    let mut scenario = Scenario::read(&args.scenario)?;
    if let Some(policy) = &args.policy {
        let spec = PolicySpec::parse_for(policy, Engine::Simulate).context("--policy")?;
        scenario.simulation.policy = ProcessPolicy::of(&spec)
            .context("--policy: the registry and the process engine disagree")?;
    }
    if let Some(runs) = args.runs {
        anyhow::ensure!(
            check_runs(runs).is_ok(),
            "--runs {runs}: expected a whole number from 1 to {MAX_RUNS}"
        );
        scenario.simulation.runs = runs;
    }
    let name = args.scenario.display().to_string();
    let bar = bar(scenario.simulation.runs);
    let (result, wall_s) =
        timed(|| simulate_with_progress(&scenario, &name, &mut |p| show(&bar, p)));
    bar.finish_and_clear();
    let result = result.with_context(|| format!("simulating {name}"))?;
    let stats = RunStats::new(&name, result.events, wall_s);
    outputs.write_stats(std::slice::from_ref(&stats))?;
    outputs.write(&result, fairshare_report::simulate_html, |r| {
        fairshare_report::simulate_table(r, Some(&stats))
    })
}

/// A bar over the runs (hidden when standard error is not a terminal).
fn bar(runs: u32) -> ProgressBar {
    let bar = ProgressBar::new(u64::from(runs));
    bar.set_style(
        ProgressStyle::with_template(
            "simulate [{bar:30}] {pos}/{len} runs, {msg}, {elapsed} elapsed",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
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
