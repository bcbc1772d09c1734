//! `fairshare slurm what-if`: a site bundle replayed under the site's own fairshare and the
//! policies asked for, how far to trust it printed first. The command reads its options and
//! shows progress; the what-if itself is `fairshare-lab`'s, its tables `fairshare-report`'s.

use crate::output::{check_writable, is_stdout, Outputs};
use crate::policy_help;
use crate::trace::{spinner, SimBars};
use anyhow::{Context, Result};
use fairshare_core::policy::{Engine, PolicySpec};
use fairshare_lab::jobs::JobParts;
use fairshare_lab::runs::run_all_listing;
use fairshare_lab::whatif::WhatIf;
use fairshare_lab::MeasuredTrace;
use fairshare_sim::stats::RunStats;
use indicatif::MultiProgress;
use std::path::PathBuf;

/// Arguments of `fairshare slurm what-if`.
#[derive(clap::Args)]
pub struct WhatIfArgs {
    /// The site bundle (`fairshare slurm collect DIR`, or the shell commands of its
    /// --dry-run).
    dir: PathBuf,
    /// A policy to predict, as the Slurm adapter would apply it beside the site's other
    /// priority terms (repeat for several); the site's own fairshare (`as-slurm`) is always
    /// replayed first, as the baseline.
    #[arg(long = "policy", long_help = policy_help(Engine::Replay, "A policy to predict, as the Slurm adapter would apply it beside the site's other priority terms (repeat for several); the site's own fairshare (`as-slurm`) is always replayed first, as the baseline"))]
    policies: Vec<String>,
    /// Write the what-if as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML page with plots to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write every job's outcome under every policy to this CSV file, `job_id` being Slurm's
    /// JobID (the columns of `fairshare replay --jobs`).
    #[arg(long, value_name = "FILE.csv")]
    jobs: Option<PathBuf>,
    /// Write each run's wall-clock time and events per second as JSON to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
}

/// Runs `fairshare slurm what-if`.
pub fn run(args: WhatIfArgs) -> Result<()> {
    let policies: Vec<PolicySpec> = (args.policies.iter())
        .map(|p| p.parse())
        .collect::<Result<_, _>>()
        .context("--policy")?;
    let whatif = WhatIf::open(&args.dir, policies)?;
    let outputs = Outputs {
        json: args.json.clone(),
        report: args.report.clone(),
        stats: args.stats.clone(),
    };
    outputs.check()?;
    if let Some(path) = &args.jobs {
        anyhow::ensure!(
            !is_stdout(path),
            "--jobs -: the per-job table is a file here; give its name"
        );
        check_writable(path, "--jobs")?;
    }
    let bar = spinner("reading the bundle's sacct.txt");
    let measured = MeasuredTrace::scan(&whatif.trace, &mut |n| bar.set_position(n));
    bar.finish_and_clear();
    let measured = measured?;
    let plan = whatif.plan(&measured)?;
    let parts = args.jobs.as_deref().map(JobParts::beside).transpose()?;
    let bars = SimBars {
        multi: MultiProgress::new(),
        names: whatif.policies.iter().map(|p| p.name.as_str()).collect(),
        span_s: measured.span_s(),
    };
    let count = whatif.policies.len();
    let ran = run_all_listing(&plan, count, &bars, None, parts, |i, parts, progress| {
        whatif.run(&plan, i, parts, progress)
    })?;
    let stats = (ran.iter().zip(&whatif.policies))
        .map(|(((result, _), wall_s), policy)| RunStats::new(&policy.name, result.events, *wall_s))
        .collect::<Vec<_>>();
    let runs: Vec<_> = ran.into_iter().map(|(run, _)| run).collect();
    let summary = whatif.summary(&plan, runs)?;
    outputs.write_stats(&stats)?;
    outputs.write(&summary, fairshare_report::whatif_html, |s| {
        fairshare_report::whatif_table(s, &stats)
    })
}
