//! `fairshare slurm collect`: a site bundle made on a host where Slurm's commands work. The
//! command reads its options and shows progress; the bundle's files and commands are
//! `fairshare-slurm`'s.

use anyhow::{bail, Context, Result};
use fairshare_core::model::Time;
use fairshare_lab::input::parse_duration;
use fairshare_slurm::bundle::{
    cluster_name, controller_log_file, default_history, history_since, moment, state_save_location,
    Bundle, CollectWindow, HALF_LIVES_OF_HISTORY,
};
use fairshare_slurm::command::Commands;
use fairshare_slurm::command::Runner;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the adapter's configuration is, when the site runs it (copied into the bundle).
const ADAPTER_CONFIG: &str = "/etc/fairshare/slurm.toml";

/// Arguments of `fairshare slurm collect`.
#[derive(clap::Args)]
pub struct CollectArgs {
    /// The folder the bundle is written to (made if need be).
    dir: PathBuf,
    /// The start of the accounting window, in UTC: `2026-10-01`, `2026-10-01T00:00:00`,
    /// `now-30days`, `now-12hours`. It is written into the bundle as the moment it stood for
    /// when `collect` ran, which the what-if opens its window at.
    #[arg(long, default_value = "now-30days")]
    since: String,
    /// The end of the window, in the same forms.
    #[arg(long, default_value = "now")]
    until: String,
    /// How much accounting before the window to collect (history.txt): the what-if charges
    /// it, as Slurm's fairshare remembered it when the window opened, without scoring it.
    /// Default: four PriorityDecayHalfLife (`scontrol show config`); 0 for none.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    history: Option<u64>,
    /// The cluster whose associations are listed; default: `scontrol show config`'s
    /// ClusterName.
    #[arg(long)]
    cluster: Option<String>,
    /// The folder of Slurm's commands; default: found on PATH.
    #[arg(long, value_name = "DIR")]
    bin: Option<PathBuf>,
    /// How long one command may take (a month of a large site's `sacct` takes minutes).
    #[arg(long, value_parser = parse_duration, default_value = "30m")]
    timeout: u64,
    /// Leave out `slurmctld`'s log. By default the log (scontrol show config's
    /// SlurmctldLogFile) is copied, gzip'd, when it can be read here: the what-if then times
    /// every job, and the controller's passes, to the millisecond, where a dump alone gives
    /// whole seconds (on one test workload, 21 points of contested order).
    #[arg(long)]
    no_log: bool,
    /// The adapter's configuration, when the site runs `fairshare slurm watch`: copied into
    /// the bundle as adapter.toml, so that the what-if's baseline is what the site ran. By
    /// default /etc/fairshare/slurm.toml, where it exists.
    #[arg(long, value_name = "FILE")]
    adapter_config: Option<PathBuf>,
    /// Print the shell commands that make the same bundle, and run nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs `fairshare slurm collect`.
pub fn run(args: CollectArgs) -> Result<()> {
    let runner = Runner {
        bin: args.bin.clone(),
        timeout: Duration::from_micros(args.timeout),
    };
    let now = Time::from_micros(
        std::time::UNIX_EPOCH
            .elapsed()
            .context("the machine's clock is before 1970")?
            .as_micros() as u64,
    );
    let since = moment(&args.since, now)
        .map_err(anyhow::Error::msg)
        .context("--since")?;
    let until = moment(&args.until, now)
        .map_err(anyhow::Error::msg)
        .context("--until")?;
    if args.dry_run {
        let cluster = args.cluster.as_deref().unwrap_or("$CLUSTER");
        let history = match args.history {
            Some(back) => history_since(&since, back),
            None => Some("$HISTORY_SINCE".to_owned()),
        };
        let window = CollectWindow {
            since,
            until,
            history_since: history.clone(),
        };
        let mut bundle = Bundle::new(cluster, window);
        if !args.no_log {
            bundle = bundle.with_log("$LOG".into());
        }
        print!("{}", bundle.script("$STATE"));
        println!(
            "# CLUSTER: scontrol show config's ClusterName; STATE: its StateSaveLocation{}{}",
            if args.no_log {
                ""
            } else {
                "; LOG: its SlurmctldLogFile (copied where it can be read)"
            },
            match history.as_deref() {
                Some("$HISTORY_SINCE") => format!("; HISTORY_SINCE: {HALF_LIVES_OF_HISTORY} times its PriorityDecayHalfLife before the window's start (or give --history)"),
                _ => String::new(),
            }
        );
        return Ok(());
    }
    let config = Commands::run(&runner, &["scontrol", "show", "config"])
        .context("reading Slurm's configuration")?;
    let cluster = match args.cluster.clone().or_else(|| cluster_name(&config)) {
        Some(cluster) => cluster,
        None => bail!("scontrol show config names no ClusterName; give --cluster"),
    };
    let state = state_save_location(&config).map(PathBuf::from);
    let back = args.history.or_else(|| default_history(&config));
    let window = CollectWindow {
        history_since: back.and_then(|back| history_since(&since, back)),
        since,
        until,
    };
    let mut bundle = Bundle::new(&cluster, window);
    let log = (!args.no_log).then(|| readable_log(&config));
    if let Some(Ok(path)) = &log {
        bundle = bundle.with_log(path.clone());
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} collecting {msg} ({elapsed})").expect("valid"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let manifest = bundle.collect(&runner, &args.dir, state.as_deref(), &mut |file| {
        bar.set_message(file.to_owned());
        if bar.is_hidden() {
            eprintln!("collecting {file}");
        }
    });
    bar.finish_and_clear();
    let manifest = manifest.with_context(|| format!("collecting into {}", args.dir.display()))?;
    copy_adapter_config(&args.dir, args.adapter_config.as_deref())?;
    eprintln!(
        "bundle of cluster {} ({}, {} to {}) in {}",
        manifest.cluster,
        manifest.slurm_version,
        manifest.since,
        manifest.until,
        args.dir.display(),
    );
    match &manifest.history_since {
        Some(from) => eprintln!("history before the window: from {from} (history.txt)"),
        None if back.is_none() => eprintln!("note: PriorityDecayHalfLife is 0 or unset, so Slurm never forgets usage and no span of history is enough by default: give --history to collect some (the what-if then starts with no usage)"),
        None => {}
    }
    if !manifest.last_decay {
        eprintln!("note: StateSaveLocation is not readable here, so the last decay's time is left out (run on the controller's host to keep it)");
    }
    if let Some(Err(why)) = log {
        eprintln!("note: {why}, so the bundle holds no slurmctld.log.gz and the what-if knows every start only to the second (run on the controller's host to keep it)");
    }
    Ok(())
}

/// The controller's log when it can be read here, or why it is left out.
fn readable_log(config: &str) -> Result<PathBuf, String> {
    let Some(log) = controller_log_file(config) else {
        return Err(
            "scontrol show config names no SlurmctldLogFile (slurmctld logs to syslog)".into(),
        );
    };
    match std::fs::File::open(&log) {
        Ok(_) => Ok(log.into()),
        Err(e) => Err(format!(
            "the controller's log {log} cannot be read here ({e})"
        )),
    }
}

/// Copies the adapter's configuration into the bundle: `given`, which must exist, or the
/// default one when the site runs the adapter here.
fn copy_adapter_config(dir: &Path, given: Option<&Path>) -> Result<()> {
    let from = given.unwrap_or(Path::new(ADAPTER_CONFIG));
    if given.is_some() || from.exists() {
        let to = dir.join("adapter.toml");
        std::fs::copy(from, &to)
            .with_context(|| format!("copying the adapter's configuration {}", from.display()))?;
    }
    Ok(())
}
