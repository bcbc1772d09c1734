//! `fairshare gridengine` (or `fairshare ge`): a policy applied to a live Grid Engine queue
//! through each pending job's POSIX priority. The command reads its file, builds the adapter
//! and prints what the adapter saw and did; the work is in `fairshare-gridengine`, the tables
//! in `fairshare-report`.

use crate::adapters::{self, duration, Driven};
use anyhow::{Context, Result};
use fairshare_gridengine::adapter::{GridEngineError, GridEngineIo};
use fairshare_gridengine::command::Runner;
use fairshare_gridengine::config::GridEngineConfig;
use fairshare_reconcile::controller::Controller;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the configuration is looked for when `--config` is not given.
const DEFAULT_CONFIG: &str = "/etc/fairshare/gridengine.toml";

/// What `fairshare gridengine --help` says after the subcommands.
const AFTER_HELP: &str = "\
fairshare ranks the users who wait under a policy and gives every pending job a POSIX priority
(`qalter -p N`, 1 to 1024) that falls along the order in which the policy would start them.
With the scheduler's weight_priority 1, weight_urgency 0 and weight_ticket 0, Grid Engine then
starts jobs in fairshare's order. Jobs whose owner lowered their priority (below 0), jobs on
hold and jobs in error are left as they are.

  fairshare gridengine status                    what fairshare sees and would set
  fairshare gridengine sync --dry-run            what one reconcile would write
  fairshare gridengine sync --policy sdrf        rank by SDRF and write the priorities
  fairshare gridengine watch --interval 60s      the same every minute, until SIGTERM
  fairshare gridengine reset                     every priority fairshare wrote back to 0

The configuration (default /etc/fairshare/gridengine.toml; deploy/gridengine.toml is an
example) names the policy, weight, interval, window and the accounting file; docs/gridengine.md
says how to set a cluster up, what fairshare writes, and how to roll back.";

/// Arguments of `fairshare gridengine`.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

/// `fairshare gridengine`'s subcommands.
#[derive(clap::Subcommand)]
enum Command {
    /// What fairshare sees: the users with their usage and rank, every pending job with Grid
    /// Engine's priority and the POSIX priority it holds and would get.
    Status(Common),
    /// One reconcile: read the cluster, rank, write the priorities that differ.
    Sync(Writing),
    /// Reconcile every interval until SIGTERM or SIGINT, logging one line per pass.
    Watch(WatchArgs),
    /// Set every POSIX priority fairshare wrote (above 0) back to 0, Grid Engine's default.
    Reset(Writing),
}

/// What every subcommand takes.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Common {
    /// The TOML configuration (without it, /etc/fairshare/gridengine.toml if it exists, else
    /// the defaults: Fair Tree, weight 1024, Debian's accounting file).
    #[arg(long, env = "FAIRSHARE_GRIDENGINE_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The policy, over the file's (spelled as in `fairshare replay --policy`: sdrf, drf,
    /// fairshare:function=fair-tree, kueue-afs, …).
    #[arg(long)]
    policy: Option<String>,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `sync` and `reset`.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Writing {
    #[command(flatten)]
    common: Common,
    /// Write nothing: print the writes it would make.
    #[arg(long)]
    dry_run: bool,
}

/// Arguments of `fairshare gridengine watch`.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct WatchArgs {
    #[command(flatten)]
    writing: Writing,
    /// Time between two passes, in seconds or as `60s`, `5m`, over the file's interval_s.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    interval: Option<Duration>,
    /// Log filter (RUST_LOG syntax).
    #[arg(long, env = "FAIRSHARE_LOG", default_value = "info")]
    log: String,
    /// Log lines as JSON objects.
    #[arg(long, env = "FAIRSHARE_LOG_JSON")]
    log_json: bool,
}

/// Runs `fairshare gridengine`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Status(common) => adapters::status::<GridEngine>(&config(&common)?, common.json),
        Command::Sync(args) => {
            let config = config(&args.common)?;
            adapters::sync::<GridEngine>(&config, args.common.json, args.dry_run)
        }
        Command::Watch(args) => watch(&args),
        Command::Reset(args) => {
            let config = config(&args.common)?;
            adapters::reset::<GridEngine>(&config, args.common.json, args.dry_run)
        }
    }
}

/// The configuration of `--config` (or the default file, or the defaults), `--policy` over it.
fn config(common: &Common) -> Result<GridEngineConfig> {
    let mut config = match &common.config {
        Some(path) => GridEngineConfig::load(path)?,
        None if Path::new(DEFAULT_CONFIG).exists() => {
            GridEngineConfig::load(Path::new(DEFAULT_CONFIG))?
        }
        None => GridEngineConfig::default(),
    };
    if let Some(policy) = &common.policy {
        config.shared.policy = policy.clone();
        config.check().context("--policy")?;
    }
    Ok(config)
}

/// Grid Engine, as the adapters' verbs drive it.
struct GridEngine;

impl Driven for GridEngine {
    type Error = GridEngineError;
    type Io = GridEngineIo<Runner>;
    type Config = GridEngineConfig;
    const STOPPED: &'static str = "stopped; the priorities keep their last values (`fairshare gridengine reset` sets them back to 0)";
    const NOT_RESET: &'static str = "not every priority was set back (see above); run reset again";

    fn controller(config: &GridEngineConfig) -> Result<Controller<GridEngineIo<Runner>>> {
        Ok(fairshare_gridengine::adapter::adapter(
            config.shared.runner(),
            config,
        )?)
    }

    fn lock(config: &GridEngineConfig) -> &Path {
        &config.shared.lock
    }

    fn watching(config: &GridEngineConfig, dry_run: bool) {
        tracing::info!(
            policy = %config.shared.policy,
            weight = config.shared.weight,
            interval_s = config.shared.interval_s,
            window_s = config.shared.window_s,
            dry_run,
            "watching Grid Engine"
        );
    }
}

/// `watch`: the configuration's interval, or `--interval` over it, and the log as asked.
fn watch(args: &WatchArgs) -> Result<()> {
    let mut config = config(&args.writing.common)?;
    if let Some(interval) = args.interval {
        config.shared.interval_s = interval.as_secs_f64();
        config.check().context("--interval")?;
    }
    crate::serve::logging(&args.log, args.log_json)?;
    let interval = Duration::from_secs_f64(config.shared.interval_s);
    adapters::watch::<GridEngine>(&config, args.writing.dry_run, interval)
}
