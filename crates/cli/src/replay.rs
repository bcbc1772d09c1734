//! `fairshare replay`: one trace, several policies side by side.

use crate::output::{check_writable, is_stdout, Outputs};
use crate::policy_help;
use crate::trace::{ClusterArgs, SimBars, TraceArgs};
use anyhow::{Context, Result};
use fairshare_core::policy::{Engine, PolicySpec};
use fairshare_lab::input::parse_window;
use fairshare_lab::jobs::JobParts;
use fairshare_lab::runs::run_all_listing;
use fairshare_lab::{CapacitySource, Replay, ReplayPlan, ReplayRequest, ShareSource};
use fairshare_sim::stats::RunStats;
use indicatif::MultiProgress;
use std::path::{Path, PathBuf};

/// Replay a workload trace under one or more policies and compare who waited, who finished
/// and how full the cluster was.
///
/// The trace is read once, streaming, to measure it (users, span, the mean requested amount R
/// of each resource); then every policy replays it through the cluster engine, from memory for
/// traces of up to two million tasks and streamed from disk again for larger ones. Policies
/// run in parallel where cores allow.
///
/// Example: fairshare replay ../shared/traces/google-2011/task_events/*.csv.gz
///   --policy drf --policy sdrf:delta=0.999999 --capacity-fraction 0.5 --report report.html
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    trace: TraceArgs,
    #[command(flatten)]
    cluster: ClusterArgs,
    /// A policy to replay under (repeat for several).
    #[arg(
        long = "policy",
        default_values = ["drf", "sdrf:delta=0.999999"],
        long_help = policy_help(Engine::Replay, "A policy to replay under (repeat for several)")
    )]
    policies: Vec<String>,
    /// Pool capacity as a fraction of the trace's mean requested amount R (the SDRF paper uses
    /// 0.5 to 1.0). Without it, --capacity or --machines, the trace's own machine is used: a
    /// `.machines` file beside an SWF log, else its header's MaxProcs; a trace that says
    /// nothing about its machine (Google, Alibaba) gets 1.0 × R.
    #[arg(long, conflicts_with = "machines", allow_negative_numbers = true)]
    capacity_fraction: Option<f64>,
    /// An explicit pool instead, in the trace's units, e.g. `cpu=120,mem=80` (every resource
    /// of the trace must be named).
    #[arg(long, value_name = "NAME=AMOUNT,...", conflicts_with_all = ["machines", "capacity_fraction"])]
    capacity: Option<String>,
    /// Where users' entitlements come from: `equal` (1/n each, the SDRF paper's figures), a
    /// share file (TOML: accounts with shares, nested, users under accounts; see
    /// docs/batch.md; or `sacctmgr -P -n show assoc
    /// format=Cluster,Account,User,Partition,Share,ParentName,Priority`'s output as it is; its
    /// `Priority` is the association factor of `--scheduler slurm`), or
    /// `usage:FACTOR` (each user's own mean usage × FACTOR, the SDRF
    /// authors' "reserved share" mode). Weighted DRF and SDRF read them; a share file also
    /// gives results per account.
    #[arg(long, value_name = "equal|FILE|usage:FACTOR", default_value = "equal")]
    shares: ShareSource,
    /// The site's queues: one line per queue with its name (as the log writes it), the most
    /// processors its running jobs may hold at once (-1: no limit) and its priority (higher
    /// queues are served first); see docs/batch.md. Default: a `.queues` file beside the log,
    /// if there is one.
    #[arg(long, value_name = "FILE")]
    queues: Option<PathBuf>,
    /// Write the summary as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report with plots to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// The window of the report's view of the machines (each node's processors and the jobs
    /// that held them), as START+LENGTH after the first event, e.g. `40d+12h`; its jobs are
    /// also listed in the JSON. Default with --report: the day in the middle of the trace.
    #[arg(long, value_name = "START+LENGTH", value_parser = parse_window, allow_hyphen_values = true)]
    gantt: Option<(u64, u64)>,
    /// Write each run's wall-clock time and events per second as JSON to this file (the
    /// summary itself holds no clock reading, so it is the same whenever the input is).
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Write every job's outcome under every policy to this CSV file: one row per job of the
    /// trace and policy (Batsim's `jobs.csv` columns, plus user, account, queue, requested and
    /// allocated resources, killed at the walltime and the final state: finished, unfinished,
    /// never_started, never_fits or beyond_horizon), times in seconds of the trace's own
    /// clock. Rows are written as the replays run, so memory stays bounded; see docs/json.md.
    /// `-` writes it to standard output, which then carries nothing else.
    #[arg(long, value_name = "FILE.csv")]
    jobs: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(mut args: Args) -> Result<()> {
    if let Some(f) = args
        .capacity_fraction
        .filter(|f| !(f.is_finite() && *f > 0.0))
    {
        anyhow::bail!("--capacity-fraction must be a positive number, found {f}");
    }
    let policies: Vec<PolicySpec> = args
        .policies
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_, _>>()
        .context("--policy")?;
    fairshare_lab::distinct(&policies).context("--policy")?;
    let defaults = args.cluster.site_defaults(&args.trace, policies)?;
    for note in &defaults.notes {
        eprintln!("note: {note}");
    }
    if let Some((files, note)) = defaults.billing {
        eprintln!("note: {note}");
        args.trace.bill_by(files);
    }
    let policies = defaults.policies;
    let site = args.cluster.site(&args.trace)?;
    let given = args.capacity.is_some() || args.capacity_fraction.is_some();
    let given = given || args.cluster.machines.is_some() || !args.trace.is_slurm_dump();
    let site_machines = (site.as_ref().filter(|_| !given))
        .and_then(|(setup, path)| {
            let spelled = (
                "--slurm-conf",
                "--machines, --capacity or --capacity-fraction",
            );
            setup.site_machines(path, spelled)
        })
        .map(|(machines, note)| {
            eprintln!("note: {note}");
            machines
        });
    let outputs = Outputs {
        json: args.json.clone(),
        report: args.report.clone(),
        stats: args.stats.clone(),
    };
    outputs.check()?;
    let jobs_to_stdout = args.jobs.as_deref().is_some_and(is_stdout);
    if let Some(path) = &args.jobs {
        if jobs_to_stdout && args.json.as_deref().is_some_and(is_stdout) {
            anyhow::bail!("--jobs - and --json -: standard output carries one of them; give the other a file name");
        }
        check_writable(path, "--jobs")?;
    }
    let measured = args.trace.scan()?;
    let request = ReplayRequest {
        capacity: capacity_source(&args, site_machines),
        shares: args.shares.clone(),
        queues: args.queues.clone(),
        replay: Replay {
            jobs_during: (args.gantt)
                .or_else(|| args.report.as_ref().map(|_| measured.middle_day())),
            ..args.cluster.replay(&args.trace)?
        },
    };
    let plan = ReplayPlan::new(&measured, request, &mut |note| eprintln!("note: {note}"))?;
    for note in plan.alike(&policies) {
        eprintln!("note: {note}");
    }
    let parts_of = |path: &Path| match jobs_to_stdout {
        true => JobParts::to_stdout(),
        false => JobParts::beside(path),
    };
    let parts = args.jobs.as_deref().map(parts_of).transpose()?;
    let bars = SimBars {
        multi: MultiProgress::new(),
        names: policies.iter().map(|p| p.name.as_str()).collect(),
        span_s: measured.span_s(),
    };
    let ran = run_all_listing(
        &plan,
        policies.len(),
        &bars,
        None,
        parts,
        |i, parts, progress| plan.run_into(parts, (i, &policies[i]), progress),
    )?;
    let stats = (ran.iter().zip(&policies))
        .map(|((result, wall_s), policy)| RunStats::new(&policy.name, result.events, *wall_s))
        .collect::<Vec<_>>();
    let results: Vec<_> = ran.into_iter().map(|(result, _)| result).collect();
    let summary = plan.summary(results)?;
    let stdout_taken = jobs_to_stdout || args.json.as_deref().is_some_and(is_stdout);
    if stdout_taken {
        for warning in fairshare_report::replay_warnings(&summary) {
            eprintln!("warning: {warning}");
        }
    }
    outputs.write_stats(&stats)?;
    if jobs_to_stdout {
        return outputs.write_files(&summary, fairshare_report::replay_html);
    }
    outputs.write(&summary, fairshare_report::replay_html, |s| {
        fairshare_report::replay_table(s, &stats)
    })
}

/// Where the capacity comes from, by the options given, else the machines of the site's
/// Slurm configuration when it defines some.
fn capacity_source(args: &Args, site_machines: Option<PathBuf>) -> CapacitySource {
    match (
        &args.capacity,
        &args.cluster.machines,
        args.capacity_fraction,
    ) {
        (Some(spec), ..) => CapacitySource::Pool(spec.clone()),
        (None, Some(path), _) => CapacitySource::Machines(path.clone()),
        (None, None, Some(f)) => CapacitySource::FractionOfMean(f),
        (None, None, None) => {
            site_machines.map_or(CapacitySource::Own, CapacitySource::SiteMachines)
        }
    }
}
