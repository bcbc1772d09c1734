//! `fairshare priorities`: the operator's `sshare -l` on an accounting log — each account and
//! user with shares, decayed usage, fairshare factor and rank at a chosen moment.

use crate::choice;
use crate::output::{print, write_json};
use crate::workload::{parse_duration, TraceArgs};
use anyhow::{Context, Result};
use fairshare_core::fairshare::{FairshareFunction, UsageDecay};
use fairshare_core::penalty::UsageMetric;
use fairshare_lab::Priorities;
use fairshare_report::text::{fixed, table};
use fairshare_sim::cluster::Capacity;
use serde::Serialize;
use std::path::PathBuf;

/// Show each account's and user's fairshare standing at a moment of an accounting log: raw
/// and normalised shares, raw, normalised and effective usage, level fairshare, factor and
/// rank, as a tree.
///
/// Usage is what the log's own schedule ran: each job is charged its usage metric (by default
/// its processors) for as long as it ran before the moment, decayed from each instant to the
/// moment. This is how an administrator checks a fairshare function on their own cluster's
/// history before switching. The log may be a Slurm accounting dump (`sacct --allusers
/// --parsable2 --format=JobID,User,Account,Submit,Start,End,AllocTRES,Partition,State`).
///
/// Example: fairshare priorities ../shared/traces/swf/wagap-2013.swf --shares shares.toml
///   --at 40d --policy fair-tree --decay half-life:7d
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    trace: TraceArgs,
    /// The share file (TOML: accounts with shares, users under accounts; see docs/batch.md).
    /// Without it every user has one share under the root.
    #[arg(long, value_name = "FILE")]
    shares: Option<PathBuf>,
    /// The moment, as a duration after the log's first event (e.g. `40d`, `960h`); default:
    /// the log's last event.
    #[arg(long, value_parser = parse_duration)]
    at: Option<u64>,
    /// The fairshare function.
    #[arg(long, value_parser = choice::<FairshareFunction>(), default_value = "fair-tree")]
    policy: FairshareFunction,
    /// How usage fades: `half-life:DURATION` (Slurm's default is 7d), `step:DURATION:FACTOR`
    /// (MetaCentrum: step:72h:0.5) or `reset:DURATION`.
    #[arg(long, value_parser = parse_decay, default_value = "half-life:7d")]
    decay: UsageDecay,
    /// What a job is charged per second it ran: `cpu` (CPU time), `maui-pe` (Maui's
    /// system-wide Processor Equivalent), `pe` (the cheapest PE over the machines that could
    /// run it), `pe-additive`, `dominant` (dominant share) or `tres:W+W+…` (Slurm's TRES
    /// billing, one weight per resource of the log, in its order and units).
    #[arg(long, default_value = "cpu", value_name = "METRIC")]
    usage: UsageMetric,
    /// The machines the PE metrics price jobs on (SWF `.machines`, Alibaba node list or TOML
    /// catalogue); default: the log's own machine, as `replay` finds it.
    #[arg(long, value_name = "FILE")]
    machines: Option<PathBuf>,
    /// Write the table as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// What `--json` writes.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    trace: Vec<String>,
    policy: FairshareFunction,
    decay: UsageDecay,
    usage: String,
    #[serde(flatten)]
    priorities: &'a Priorities,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let workload = args.trace.scan()?;
    let tree = args
        .shares
        .as_ref()
        .map(|path| fairshare_trace::read_shares(path, &workload.users))
        .transpose()?;
    let at_s = match args.at {
        Some(at) => at as f64 / 1e6,
        None => workload.span_s(),
    };
    let capacity = machines(&args, &workload)?;
    let charged = (args.usage, capacity.as_ref());
    let priorities = workload
        .priorities(tree.as_ref(), at_s, args.decay, args.policy, charged)
        .context("computing the standings")?;
    if let Some(path) = &args.json {
        let document = Document {
            schema_version: fairshare_core::instance::SCHEMA_VERSION,
            trace: workload.trace.shown.clone(),
            policy: args.policy,
            decay: args.decay,
            usage: args.usage.to_string(),
            priorities: &priorities,
        };
        write_json(path, &document)?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    print(&text(&priorities, &args.usage))
}

/// The machines the usage metric prices jobs on: `--machines`, else the log's own (as
/// `replay` finds it); none for metrics that need none.
fn machines(args: &Args, workload: &fairshare_lab::Workload) -> Result<Option<Capacity>> {
    if let Some(path) = &args.machines {
        return Ok(Some(workload.machines(path)?));
    }
    if !args.usage.needs_machines() {
        return Ok(None);
    }
    match workload.own_machine()? {
        Some((capacity, _)) => Ok(Some(capacity)),
        None => anyhow::bail!(
            "--usage {} prices jobs on the cluster's machines, and the log says nothing about them: give --machines FILE",
            args.usage
        ),
    }
}

/// `half-life:7d`, `step:72h:0.5` or `reset:30d`, durations as `--horizon` reads them.
fn parse_decay(text: &str) -> Result<UsageDecay, String> {
    let mut parts: Vec<String> = text.split(':').map(String::from).collect();
    if let Some(duration) = parts.get_mut(1) {
        *duration = (parse_duration(duration)? as f64 / 1e6).to_string();
    }
    parts.join(":").parse()
}

/// A factor with four significant digits (MetaCentrum's are tiny: shares over usage).
fn factor(f: f64) -> String {
    if f != 0.0 && f.abs() < 0.001 {
        format!("{f:.3e}")
    } else {
        format!("{f:.4}")
    }
}

/// The standings as an indented tree.
fn text(p: &Priorities, usage: &UsageMetric) -> String {
    let headers: Vec<String> = [
        "account / user",
        "raw shares",
        "norm shares",
        "raw usage",
        "norm usage",
        "effective usage",
        "level FS",
        "fairshare",
        "rank",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = p
        .rows
        .iter()
        .map(|r| {
            let s = &r.standing;
            vec![
                format!("{}{}", "  ".repeat(r.depth), r.name),
                fixed(r.raw_shares, 0),
                fixed(s.normalized_shares, 4),
                fixed(s.raw_usage, 0),
                fixed(s.normalized_usage, 4),
                fixed(s.effective_usage, 4),
                if s.level_fs.is_finite() {
                    fixed(s.level_fs, 3)
                } else {
                    "inf".into()
                },
                if r.user {
                    factor(s.factor)
                } else {
                    String::new()
                },
                s.rank.map_or(String::new(), |k| k.to_string()),
            ]
        })
        .collect();
    format!(
        "at {} s after the first event: {} jobs charged ({usage} × seconds, decayed), {} without a recorded start{}\n\n{}",
        fixed(p.at_s, 0),
        p.jobs_charged,
        p.jobs_without_start,
        match p.jobs_priced_system_wide {
            0 => String::new(),
            n => format!(", {n} priced with Maui's system-wide PE (no machine could run them)"),
        },
        table(&headers, &rows)
    )
}
