//! `fairshare baa`: bottleneck-aware allocation over time. `experiment` is the BAA-T paper's
//! experiment — users sampled from a trace's task requests join one by one, each bringing 1/n
//! of the CPU and memory, and BAA-T, static BAA and DRF divide what is there (`spec/baa.md`
//! §8, docs/reproduce.md); `timeline` runs a small scenario of joins, departures and demand
//! caps and prints what each user received.

use crate::choice;
use crate::output::Outputs;
use anyhow::{Context, Result};
use fairshare_lab::baa::{demands, experiment, timeline, RequestPool};
use std::path::PathBuf;

/// What `fairshare baa` does.
#[derive(clap::Subcommand)]
pub enum Command {
    /// The BAA-T paper's experiment: users join one by one; BAA-T, BAA and DRF divide what they bring.
    Experiment(Box<ExperimentArgs>),
    /// Run a timeline of joins, departures and demand caps (TOML) and print what each user received.
    Timeline(TimelineArgs),
}

/// Runs a timeline (TOML: `policy`, `[capacity]`, `[[user]]` with `demand`, `join`, `leave`,
/// `cap`; see examples/baa/) epoch by epoch under `baa` or `baa-time`, and prints what each
/// user held of its bottleneck in each epoch and in all.
///
/// Example: fairshare baa timeline examples/baa/seed-shortfall.toml
#[derive(clap::Args)]
pub struct TimelineArgs {
    /// The timeline file.
    timeline: PathBuf,
    /// Write the results as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Experiment(args) => run_experiment(*args),
        Command::Timeline(args) => run_timeline(args),
    }
}

/// Runs a timeline.
fn run_timeline(args: TimelineArgs) -> Result<()> {
    let outputs = Outputs {
        json: args.json,
        report: None,
        stats: None,
    };
    outputs.check()?;
    let read = fairshare_trace::read_timeline(&args.timeline)?;
    let summary =
        timeline(&read).with_context(|| format!("{}: cannot run", args.timeline.display()))?;
    outputs.write(
        &summary,
        |_| String::new(),
        fairshare_report::timeline_table,
    )
}

/// Run the BAA-T paper's experiment: n users join one per epoch, each bringing 1/n of the CPU
/// and memory, and BAA-T, static BAA and DRF divide what the users present brought; prints
/// the utilisation after 10 and 100 joins, after the last and at the end, and writes the
/// paper's three figures with --report.
///
/// Example: fairshare baa experiment ../shared/traces/google-2011/task_events/*.csv.gz --report baa.html
#[derive(clap::Args)]
pub struct ExperimentArgs {
    /// Google 2011 task_events parts whose requests (CPU and memory, both > 0, as fractions
    /// of the largest machine) the users' demands are drawn from, with replacement; without
    /// any, demands are drawn from LogNormal(−3, 1).
    traces: Vec<PathBuf>,
    /// Which requests the users are drawn from: every SUBMIT event that asks for both, as the
    /// spec samples (resubmissions count again), or the completed tasks a replay would run.
    #[arg(long, value_parser = choice::<RequestPool>(), default_value = "submits")]
    pool: RequestPool,
    /// How many users join (at most 100,000).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    users: u32,
    /// The seed of the sampling.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Epochs that pass without joins after the last user joined (at most 100,000).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    tail: u32,
    /// Write the results as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write an HTML report with the paper's three figures to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

/// Runs the experiment.
fn run_experiment(args: ExperimentArgs) -> Result<()> {
    let outputs = Outputs {
        json: args.json.clone(),
        report: args.report.clone(),
        stats: None,
    };
    outputs.check()?;
    if args.traces.is_empty() {
        eprintln!("note: no trace given: demands drawn from LogNormal(-3, 1) for CPU and memory");
    }
    let (pool, files) = (args.pool, args.traces.len());
    let mut reading = || eprintln!("note: reading the {} of {files} file(s)", pool.in_words());
    let drawn = demands(
        &args.traces,
        pool,
        args.users as usize,
        args.seed,
        &mut reading,
    )?;
    let summary = experiment(&drawn.demands, drawn.source, args.seed, args.tail as usize)?;
    outputs.write(
        &summary,
        fairshare_report::baa_html,
        fairshare_report::baa_table,
    )
}
