//! `fairshare simulate`: run a process-level scenario (the bottleneck paper's simulator).

use crate::output::Outputs;
use anyhow::{Context, Result};
use fairshare_sim::process::simulate;
use fairshare_trace::scenario::{ProcessPolicy, Scenario};
use std::path::PathBuf;

/// Run a scenario of processes cycling over resources under bottleneck-based global priorities
/// (or per-resource lags, DRF, FIFO), and show who got what, when.
///
/// The scenario is a TOML file: `[simulation]` parameters, optional `[[resource]]` lanes, and
/// `[[process]]` entries with an entitlement and a program in the paper's syntax (`loop K`,
/// then `RESOURCE MEAN WIDTH DIST` lines). The paper's experiments are in examples/bottleneck/.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Override the scenario's ranking policy: bottleneck, per-resource, drf or fifo.
    #[arg(long)]
    policy: Option<String>,
    /// Override the number of independent runs (seeds seed, seed + 1, …).
    #[arg(long)]
    runs: Option<u32>,
    /// Write the result as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report (Gantt chart, cumulative service) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let mut scenario = Scenario::read(&args.scenario)?;
    if let Some(policy) = &args.policy {
        scenario.simulation.policy = ProcessPolicy::ALL
            .into_iter()
            .find(|p| p.name() == policy)
            .with_context(|| {
                format!("--policy {policy:?}: expected bottleneck, per-resource, drf or fifo")
            })?;
    }
    if let Some(runs) = args.runs {
        anyhow::ensure!(runs >= 1, "--runs must be at least 1");
        scenario.simulation.runs = runs;
    }
    let result = simulate(&scenario, &args.scenario.display().to_string());
    Outputs {
        json: args.json,
        report: args.report,
    }
    .write(
        &result,
        fairshare_report::simulate_html,
        fairshare_report::simulate_table,
    )
}
