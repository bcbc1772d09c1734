//! `fairshare sweep`: the SDRF paper's grid of discount factors × capacity fractions, in
//! parallel, splittable into shards for a batch system, and `sweep merge` to join them.

use crate::output::Outputs;
use crate::policy_help;
use crate::trace::{ClusterArgs, CountedRuns, TraceArgs};
use anyhow::{bail, Result};
use fairshare_core::policy::Engine;
use fairshare_lab::runs::run_all;
use fairshare_lab::summary::SweepSummary;
use fairshare_lab::sweep;
use fairshare_report::{sweep_html, sweep_table};
use fairshare_sim::stats::RunStats;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// Run the SDRF paper's grid: SDRF with δ = 1 − 10⁻ᵏ for each k, and the baseline, at each
/// capacity fraction of the trace's mean demand R.
///
/// Split the grid across machines with `--shard i/n` (cell j goes to shard j mod n), e.g. one
/// Slurm array task or Kubernetes indexed Job per shard, then join the outputs with
/// `fairshare sweep merge`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    merge: Option<Merge>,
    #[command(flatten)]
    trace: Option<TraceArgs>,
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Capacity fractions of R.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.5,0.6,0.7,0.8,0.9,1.0",
        allow_negative_numbers = true
    )]
    fractions: Vec<f64>,
    /// The k of δ = 1 − 10⁻ᵏ for each SDRF run.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5,6,7",
          value_parser = clap::value_parser!(u32).range(1..=15))]
    nines: Vec<u32>,
    /// The policy SDRF is compared with at each fraction.
    #[arg(
        long,
        default_value = "drf",
        long_help = policy_help(Engine::Replay, "The policy SDRF is compared with at each fraction")
    )]
    baseline: String,
    /// Run only shard i of n (0-based), e.g. `--shard 2/8`.
    #[arg(long, value_parser = parse_shard, default_value = "0/1")]
    shard: (usize, usize),
    /// Write the sweep as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report (Figures 4–6 of the SDRF paper) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write each cell's wall-clock time and events per second as JSON to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
enum Merge {
    /// Join the JSON outputs of the shards of one sweep.
    Merge {
        /// Shard outputs (`--json` files of `fairshare sweep --shard i/n`).
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Write the joined sweep as JSON to this file (`-` for standard output).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write the HTML report of the joined sweep to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
    },
}

fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse().ok()?, n.parse().ok()?)));
    match parsed {
        Some((i, n)) if n > 0 && i < n => Ok((i, n)),
        _ => Err(format!("expected i/n with 0 ≤ i < n, found {text:?}")),
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    if let Some(Merge::Merge {
        shards,
        json,
        report,
    }) = args.merge
    {
        let outputs = Outputs {
            json,
            report,
            stats: None,
        };
        outputs.check()?;
        return outputs.write(&merge(&shards)?, sweep_html, sweep_table);
    }
    let outputs = Outputs {
        json: args.json.clone(),
        report: args.report.clone(),
        stats: args.stats.clone(),
    };
    outputs.check()?;
    let Some(trace) = &args.trace else {
        bail!("give the trace files to sweep over")
    };
    if args.cluster.machines.is_some() {
        bail!("a sweep varies a pool's capacity; --machines does not apply");
    }
    let mine = sweep::plan(&args.fractions, &args.nines, &args.baseline, args.shard)?;
    let (shard, shards) = args.shard;
    let measured = trace.scan()?;
    let replay = args.cluster.replay(trace)?;
    let bar = ProgressBar::new(mine.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "sweep [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
        )?
        .progress_chars("=> "),
    );
    let counted = CountedRuns(bar);
    let ran = run_all(mine.len(), &counted, |i, _| {
        sweep::run_cell(&measured, &replay, &mine[i])
    })?;
    counted.0.finish_and_clear();
    let stats = (ran.iter().zip(&mine))
        .map(|((result, wall_s), cell)| {
            let run = format!("{} at {}", cell.policy, cell.fraction);
            RunStats::new(run, result.result.events, *wall_s)
        })
        .collect::<Vec<_>>();
    let cells: Vec<_> = ran.into_iter().map(|(cell, _)| cell).collect();
    outputs.write_stats(&stats)?;
    let summary = sweep::summary(&measured, &replay, shard, shards, cells)?;
    outputs.write(&summary, sweep_html, sweep_table)
}

/// Joins shard outputs of one sweep, warning about missing shards.
fn merge(paths: &[PathBuf]) -> Result<SweepSummary> {
    let merged = sweep::merge(paths)?;
    if !merged.missing.is_empty() {
        eprintln!(
            "warning: shards {:?} of {} are missing; the grid is incomplete",
            merged.missing, merged.summary.shards
        );
    }
    Ok(merged.summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse() {
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert!(parse_shard("8/8").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
    }
}
