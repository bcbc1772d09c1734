//! `fairshare slurm`: a policy applied to a live Slurm queue through site factors. The command
//! reads its file, builds the adapter and prints what the adapter saw and did; the work is in
//! `fairshare-slurm`, the tables in `fairshare-report`.

use crate::adapters::{self, duration, Driven};
use anyhow::{Context, Result};
use fairshare_reconcile::controller::Controller;
use fairshare_slurm::adapter::{SlurmError, SlurmIo};
use fairshare_slurm::command::Runner;
use fairshare_slurm::config::SlurmConfig;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the configuration is looked for when `--config` is not given.
const DEFAULT_CONFIG: &str = "/etc/fairshare/slurm.toml";

/// What `fairshare slurm --help` says after the subcommands.
const SLURM_AFTER_HELP: &str = "\
fairshare ranks the associations that wait under a policy and gives every pending job of the
i-th of n associations the site factor weight × (n − i) / n (`scontrol update JobId=…
SiteFactor=N`, which Slurm adds to the job's priority; `sprio` shows it as SITE). With
PriorityWeightFairshare=0 (mapping `replace`) the order of jobs is fairshare's.

  fairshare slurm status                         what fairshare sees and would set
  fairshare slurm sync --dry-run                 what one reconcile would write
  fairshare slurm sync --policy sdrf             rank by SDRF and write the site factors
  fairshare slurm watch --interval 60s           the same every minute, until SIGTERM
  fairshare slurm reset                          set every pending job's site factor back to 0
  fairshare slurm collect site/                  the site's history and settings, for a what-if
  fairshare slurm what-if site/ --policy sdrf    predict a policy on it, and how far to trust it

The configuration (default /etc/fairshare/slurm.toml; deploy/slurm.toml is an example) names
the policy, weight, mapping, interval, window and partitions; docs/slurm.md says how to set a
cluster up, what each mode does to sprio, and how to roll back.";

/// Arguments of `fairshare slurm`.
#[derive(clap::Args)]
#[command(after_help = SLURM_AFTER_HELP)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

/// `fairshare slurm`'s subcommands.
#[derive(clap::Subcommand)]
enum Command {
    /// What fairshare sees: the associations with their usage and rank, every pending job with
    /// Slurm's priority and the site factor it holds and would get.
    Status(Common),
    /// One reconcile: read the cluster, rank, write the site factors that differ.
    Sync(SyncArgs),
    /// Reconcile every interval until SIGTERM or SIGINT, logging one line per pass.
    Watch(WatchArgs),
    /// Set the site factor of every pending job (of the configured partitions) back to 0.
    Reset(ResetArgs),
    /// Draw a test workload from a real trace: a plan of submissions for a test cluster.
    Draw(crate::draw::DrawArgs),
    /// Write a site bundle: the verbatim outputs of the Slurm commands a replay of the site's
    /// history reads (sacct over a window, scontrol's configuration, nodes and partitions,
    /// sacctmgr's associations and QOS), with a manifest; --dry-run prints the shell commands
    /// that make the same bundle where fairshare is not installed.
    Collect(crate::collect::CollectArgs),
    /// Predict policies on a site bundle: the site's own fairshare replayed against what
    /// really happened (how far to trust the prediction, printed first), then each --policy as
    /// the adapter would apply it, everything taken from the bundle's files.
    WhatIf(crate::whatif::WhatIfArgs),
}

/// What every subcommand takes.
#[derive(clap::Args)]
#[command(after_help = SLURM_AFTER_HELP)]
pub struct Common {
    /// The TOML configuration (without it, /etc/fairshare/slurm.toml if it exists, else the
    /// defaults: Fair Tree, weight 100000, mapping replace).
    #[arg(long, env = "FAIRSHARE_SLURM_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The policy, over the file's (spelled as in `fairshare replay --policy`: sdrf, drf,
    /// fairshare:usage=pe, fairshare:function=fair-tree, kueue-afs, …).
    #[arg(long)]
    policy: Option<String>,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `fairshare slurm sync`.
#[derive(clap::Args)]
#[command(after_help = SLURM_AFTER_HELP)]
pub struct SyncArgs {
    #[command(flatten)]
    common: Common,
    /// Write nothing: print the writes a sync would make.
    #[arg(long)]
    dry_run: bool,
}

/// Arguments of `fairshare slurm watch`.
#[derive(clap::Args)]
#[command(after_help = SLURM_AFTER_HELP)]
pub struct WatchArgs {
    #[command(flatten)]
    common: Common,
    /// Time between two passes, in seconds or as `60s`, `5m`, over the file's interval_s.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    interval: Option<Duration>,
    /// Write nothing: log what each pass would write.
    #[arg(long)]
    dry_run: bool,
    /// Log filter (RUST_LOG syntax).
    #[arg(long, env = "FAIRSHARE_LOG", default_value = "info")]
    log: String,
    /// Log lines as JSON objects.
    #[arg(long, env = "FAIRSHARE_LOG_JSON")]
    log_json: bool,
}

/// Arguments of `fairshare slurm reset`.
#[derive(clap::Args)]
#[command(after_help = SLURM_AFTER_HELP)]
pub struct ResetArgs {
    #[command(flatten)]
    common: Common,
    /// Write nothing: print the jobs whose site factor would be cleared.
    #[arg(long)]
    dry_run: bool,
}

/// Runs `fairshare slurm`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Status(common) => adapters::status::<Slurm>(&config(&common)?, common.json),
        Command::Sync(args) => {
            adapters::sync::<Slurm>(&config(&args.common)?, args.common.json, args.dry_run)
        }
        Command::Watch(args) => watch(&args),
        Command::Reset(args) => {
            adapters::reset::<Slurm>(&config(&args.common)?, args.common.json, args.dry_run)
        }
        Command::Draw(args) => crate::draw::run(args),
        Command::Collect(args) => crate::collect::run(args),
        Command::WhatIf(args) => crate::whatif::run(args),
    }
}

/// The configuration of `--config` (or the default file, or the defaults), `--policy` over it.
fn config(common: &Common) -> Result<SlurmConfig> {
    let mut config = match &common.config {
        Some(path) => SlurmConfig::load(path)?,
        None if Path::new(DEFAULT_CONFIG).exists() => SlurmConfig::load(Path::new(DEFAULT_CONFIG))?,
        None => SlurmConfig::default(),
    };
    if let Some(policy) = &common.policy {
        config.shared.policy = policy.clone();
        config.check().context("--policy")?;
    }
    Ok(config)
}

/// Slurm, as the adapters' verbs drive it.
struct Slurm;

impl Driven for Slurm {
    type Error = SlurmError;
    type Io = SlurmIo<Runner>;
    type Config = SlurmConfig;
    const STOPPED: &'static str =
        "stopped; the site factors keep their last values (`fairshare slurm reset` clears them)";
    const AFTER_WRITING: &'static str = "the table job_submit.lua reads (submit_table) was not written; new jobs wait at site factor 0 until a pass writes it";
    const NOT_RESET: &'static str =
        "not every site factor was cleared (see above); run reset again";

    fn controller(config: &SlurmConfig) -> Result<Controller<SlurmIo<Runner>>> {
        Ok(fairshare_slurm::adapter::adapter(
            config.shared.runner(),
            config,
        )?)
    }

    fn lock(config: &SlurmConfig) -> &Path {
        &config.shared.lock
    }

    fn watching(config: &SlurmConfig, dry_run: bool) {
        tracing::info!(
            policy = %config.shared.policy,
            weight = config.shared.weight,
            mapping = %config.mapping,
            interval_s = config.shared.interval_s,
            window_s = config.shared.window_s,
            dry_run,
            "watching Slurm"
        );
    }

    fn after_reset(io: &SlurmIo<Runner>) -> Result<()> {
        (io.remove_submit_table()).context("removing the table job_submit.lua reads (submit_table)")
    }
}

/// `watch`: the configuration's interval, or `--interval` over it, and the log as asked.
fn watch(args: &WatchArgs) -> Result<()> {
    let mut config = config(&args.common)?;
    if let Some(interval) = args.interval {
        config.shared.interval_s = interval.as_secs_f64();
        config.check().context("--interval")?;
    }
    crate::serve::logging(&args.log, args.log_json)?;
    let interval = Duration::from_secs_f64(config.shared.interval_s);
    adapters::watch::<Slurm>(&config, args.dry_run, interval)
}
