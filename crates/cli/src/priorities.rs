//! `fairshare priorities`: the operator's `sshare -l` on an accounting log — each account and
//! user with shares, decayed usage, fairshare factor and rank at a chosen moment.

use crate::output::{print, write_json};
use crate::trace::TraceArgs;
use anyhow::Result;
use fairshare_core::priority::fairshare::FairshareFunction;
use fairshare_core::usage::decay::Decay;
use fairshare_core::usage::metric::UsageMetric;
use fairshare_lab::input::{parse_decay, parse_moment};
use fairshare_lab::{Moment, PrioritiesRequest};
use fairshare_report::priorities_table;
use std::path::PathBuf;

/// Show each account's and user's fairshare standing at a moment of an accounting log: raw
/// and normalised shares, raw, normalised and effective usage, level fairshare, factor and
/// rank, as a tree.
///
/// Usage is what the log's own schedule ran: each job is charged its usage metric (by default
/// its processors) for as long as it ran before the moment, decayed from each instant to the
/// moment. This is how an administrator checks a fairshare function on their own cluster's
/// history before switching. The log may be a Slurm accounting dump (`TZ=UTC sacct --allusers
/// --parsable2 --format=JobID,User,Account,Submit,Start,End,Elapsed,Timelimit,AllocTRES,
/// Partition,State`): jobs still running are charged up to the moment it was taken, which is
/// then the default `--at`, and `--decay slurm:…` charges usage tick by tick as Slurm does, so
/// that the table is `sshare -l`'s, column by column.
///
/// Example: fairshare priorities ../shared/traces/swf/wagap-2013.swf --shares shares.toml
///   --at 40d --function fair-tree --decay half-life:7d
///
/// Example: fairshare priorities dump.sacct --shares shares.toml
///   --decay slurm:half-life=10m,period=1m,tick=2026-11-24T02:52:57
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    trace: TraceArgs,
    /// The share file (TOML: accounts with shares, users under accounts; see docs/batch.md),
    /// or the output of `sacctmgr -P -n show assoc
    /// format=Cluster,Account,User,Partition,Share,ParentName,Priority` as it is. Without it
    /// every user has one share under the root.
    #[arg(long, value_name = "FILE")]
    shares: Option<PathBuf>,
    /// The moment: a duration after the log's first event, kept or not (e.g. `40d`, `960h`,
    /// `30`), or a date (`2026-11-23T23:16:57`, UTC, or with an offset such as `+01:00`);
    /// default: the log's last event, kept or not — for a Slurm dump, the moment it was taken
    /// (the latest of its times and of each running job's start plus elapsed time).
    #[arg(long, value_parser = parse_moment, value_name = "DURATION|DATE")]
    at: Option<Moment>,
    /// The fairshare function: NAME[:KEY=N] (see --help).
    #[arg(long, value_parser = FairshareFunction::parse, default_value = "fair-tree",
          long_help = format!("The fairshare function, NAME[:KEY=N[;KEY=N]]:\n{}", FairshareFunction::help()))]
    function: FairshareFunction,
    /// The old name of --function, still taken with a note.
    #[arg(long, value_parser = FairshareFunction::parse, hide = true, conflicts_with = "function")]
    policy: Option<FairshareFunction>,
    /// How usage fades: `half-life:DURATION` (Slurm's default is 7d), `step:DURATION:FACTOR`
    /// (MetaCentrum: step:72h:0.5), `reset:DURATION`, or Slurm's own tick-by-tick accounting,
    /// `slurm:half-life=DURATION,period=DURATION,tick=DATE,reset=PERIOD` (PriorityDecayHalfLife,
    /// 0 for no decay; PriorityCalcPeriod; the time of any one decay tick, e.g. the
    /// modification time of StateSaveLocation/priority_last_decay_ran; and
    /// PriorityUsageResetPeriod: daily, weekly, monthly, quarterly, yearly or none, in UTC;
    /// defaults 7d, 5m, the epoch and none).
    #[arg(long, value_parser = parse_decay, default_value = "half-life:7d")]
    decay: Decay,
    /// What a job is charged per second it ran: `cpu` (CPU time), `maui-pe` (Maui's
    /// system-wide Processor Equivalent), `pe` (the cheapest PE over the machines that could
    /// run it), `pe-additive`, `dominant` (dominant share) or `tres:W+W+…` (Slurm's TRES
    /// billing, one weight per resource of the log, in its order and units) or `billing`
    /// (Slurm's billing of each job of a sacct dump: see --partitions, --qos, --max-tres).
    #[arg(long, default_value = "cpu", value_name = "METRIC")]
    usage: UsageMetric,
    /// The machines the PE metrics price jobs on (SWF `.machines`, Alibaba node list or TOML
    /// catalogue); default: the log's own machine, as `replay` finds it.
    #[arg(long, value_name = "FILE")]
    machines: Option<PathBuf>,
    /// The cluster whose associations `--shares` lists, when `sacctmgr`'s output lists
    /// several (a slurmdbd that serves several clusters): `scontrol show config`'s
    /// ClusterName.
    #[arg(long, value_name = "NAME")]
    cluster: Option<String>,
    /// Write the table as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    if args.policy.is_some() {
        eprintln!(
            "note: --policy is now --function (it names a fairshare function, not a policy as \
             replay's --policy does); --policy still works"
        );
    }
    let measured = args.trace.scan()?;
    let document = measured.standings(&PrioritiesRequest {
        shares: args.shares,
        at: args.at,
        function: args.policy.unwrap_or(args.function),
        decay: args.decay,
        usage: args.usage,
        machines: args.machines,
        cluster: args.cluster,
    })?;
    if let Some(path) = &args.json {
        write_json(path, &document)?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    print(&priorities_table(&document))
}
