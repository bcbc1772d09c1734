//! `fairshare sweep`: the SDRF paper's grid of discount factors × capacity fractions, in
//! parallel, splittable into shards for a batch system, and `sweep merge` to join them.

use crate::output::Outputs;
use crate::workload::{ClusterArgs, TraceArgs};
use anyhow::{bail, Context, Result};
use fairshare_report::{sweep_html, sweep_table};
use fairshare_sim::cluster::Timeline;
use fairshare_sim::policy::PolicySpec;
use fairshare_sim::shard::read_shard;
use fairshare_sim::summary::{SweepCell, SweepSummary};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
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
    #[arg(long, default_value = "drf")]
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
        let outputs = Outputs { json, report };
        outputs.check()?;
        return outputs.write(&merge(&shards)?, sweep_html, sweep_table);
    }
    let outputs = Outputs {
        json: args.json.clone(),
        report: args.report.clone(),
    };
    outputs.check()?;
    let Some(trace) = &args.trace else {
        bail!("give the trace files to sweep over")
    };
    if let Some(f) = args
        .fractions
        .iter()
        .find(|f| !(f.is_finite() && **f > 0.0))
    {
        bail!("--fractions: every fraction must be positive, found {f}");
    }
    if args.cluster.machines.is_some() {
        bail!("a sweep varies a pool's capacity; --machines does not apply");
    }
    let baseline: PolicySpec = args.baseline.parse().context("--baseline")?;
    let grid = grid(&args.fractions, &args.nines, &baseline);
    let (shard, shards) = args.shard;
    let mine: Vec<_> = grid
        .into_iter()
        .enumerate()
        .filter(|(j, _)| j % shards == shard)
        .map(|(_, c)| c)
        .collect();
    let workload = trace.scan()?;
    let bar = ProgressBar::new(mine.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "sweep [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
        )?
        .progress_chars("=> "),
    );
    let cells = mine
        .par_iter()
        .map(|(fraction, epsilon, policy)| {
            let capacity = workload.capacity(&args.cluster, *fraction)?;
            let config = workload.config(&args.cluster, policy.clone(), capacity);
            let mut result = workload.run(&config, &ProgressBar::hidden())?;
            result.timeline = Timeline::default();
            bar.inc(1);
            Ok(SweepCell {
                fraction: *fraction,
                epsilon: *epsilon,
                result,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    bar.finish_and_clear();
    let capacity = workload.capacity(&args.cluster, 1.0)?;
    let summary = SweepSummary {
        input: workload.input.clone(),
        setting: workload.setting(&args.cluster, &capacity, None),
        shard_ids: vec![shard],
        shards,
        cells,
    };
    outputs.write(&summary, sweep_html, sweep_table)
}

/// Every cell of the grid, in a fixed order: by fraction, baseline first, then ε descending.
fn grid(
    fractions: &[f64],
    nines: &[u32],
    baseline: &PolicySpec,
) -> Vec<(f64, Option<f64>, PolicySpec)> {
    let mut ks = nines.to_vec();
    ks.sort_unstable();
    ks.dedup();
    fractions
        .iter()
        .flat_map(|f| {
            let sdrf = ks.iter().map(move |k| {
                (
                    *f,
                    Some(10f64.powi(-(*k as i32))),
                    PolicySpec::sdrf_with_nines(*k),
                )
            });
            std::iter::once((*f, None, baseline.clone())).chain(sdrf)
        })
        .collect()
}

/// Joins shard outputs of one sweep.
fn merge(paths: &[PathBuf]) -> Result<SweepSummary> {
    let mut merged: Option<SweepSummary> = None;
    for path in paths {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let part = read_shard(&text).with_context(|| path.display().to_string())?;
        merged = Some(match merged {
            None => part,
            Some(mut all) => {
                if all.setting != part.setting
                    || all.shards != part.shards
                    || all.input != part.input
                {
                    bail!(
                        "{}: comes from a different sweep (trace, input, setting or shard count differ)",
                        path.display()
                    );
                }
                if let Some(dup) = part.shard_ids.iter().find(|s| all.shard_ids.contains(s)) {
                    bail!("{}: shard {dup} is already in the merge", path.display());
                }
                all.shard_ids.extend(part.shard_ids);
                all.cells.extend(part.cells);
                all
            }
        });
    }
    let mut merged = merged.context("no shard outputs given")?;
    merged.shard_ids.sort_unstable();
    merged.cells.sort_by(|a, b| {
        let key = |c: &SweepCell| (c.fraction, c.epsilon.map_or(f64::INFINITY, |e| e));
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0).then(kb.1.total_cmp(&ka.1))
    });
    let missing: Vec<usize> = (0..merged.shards)
        .filter(|s| !merged.shard_ids.contains(s))
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "warning: shards {missing:?} of {} are missing; the grid is incomplete",
            merged.shards
        );
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_has_the_papers_48_cells_in_order() {
        let grid = grid(
            &[0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
            &[7, 1, 2, 3, 4, 5, 6],
            &"drf".parse().unwrap(),
        );
        assert_eq!(grid.len(), 48);
        assert_eq!(grid[0].2.name, "drf");
        assert_eq!(grid[1].2.name, "sdrf:delta=0.9");
        assert_eq!(grid[7].2.name, "sdrf:delta=0.9999999");
        assert_eq!(grid[8].0, 0.6);
    }

    #[test]
    fn shards_parse() {
        assert_eq!(parse_shard("2/8"), Ok((2, 8)));
        assert!(parse_shard("8/8").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
    }
}
