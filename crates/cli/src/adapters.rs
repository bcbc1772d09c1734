//! What the scheduler adapters' commands share, whichever scheduler they drive: the lock of a
//! command that writes, the `--json` documents, the end of a write that did not finish, the
//! log of a turn, and `watch`'s loop until a signal.

use anyhow::{bail, Context, Result};
use fairshare_core::error::Chain;
use fairshare_core::model::Time;
use fairshare_reconcile::lock::Lock;
use fairshare_reconcile::plan::Plan;
use fairshare_reconcile::watch::{
    stop_on_signals, system_now, watch as reconcile_every, Backoff, Passes, RealClock, Told,
    Watcher,
};
use fairshare_reconcile::writes::{Applied, Write};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// The lock at `path` of a command that writes (none for a dry run, which writes nothing).
pub(crate) fn lock(path: &Path, dry_run: bool) -> Result<Option<Lock>> {
    if dry_run {
        return Ok(None);
    }
    let since = fairshare_reconcile::controller::utc_seconds(system_now());
    Ok(Some(Lock::take(path, &since)?))
}

/// A duration as every option takes it: seconds (`60`) or with units (`5m`).
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    let seconds = fairshare_core::model::parse_seconds(text)?;
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// Fails with `undone` when `applied` did not make every write; a dry run (`None`) made none
/// and is done.
pub(crate) fn done(applied: Option<&Applied>, undone: &str) -> Result<()> {
    match applied {
        Some(a) if !a.complete() => bail!("{undone}"),
        _ => Ok(()),
    }
}

/// Prints `document` as JSON on standard output, or `text` when not `json`.
pub(crate) fn show(
    json: bool,
    document: &impl Serialize,
    text: impl FnOnce() -> String,
) -> Result<()> {
    match json {
        true => crate::output::write_json(Path::new("-"), document),
        false => crate::output::print(&text()),
    }
}

/// What `--json` prints: an adapter's pass and, for a sync, what its writes did.
#[derive(Serialize)]
pub(crate) struct Document<'a, P> {
    schema_version: u32,
    #[serde(flatten)]
    pass: &'a P,
    applied: Option<&'a Applied>,
}

impl<'a, P> Document<'a, P> {
    /// The document of `pass` and what its writes did.
    pub(crate) fn new(pass: &'a P, applied: Option<&'a Applied>) -> Document<'a, P> {
        Document {
            schema_version: fairshare_core::instance::SCHEMA_VERSION,
            pass,
            applied,
        }
    }
}

/// What `reset --json` prints: the writes and what they did.
#[derive(Serialize)]
pub(crate) struct Reset<'a> {
    schema_version: u32,
    writes: &'a [Write],
    applied: Option<&'a Applied>,
}

impl<'a> Reset<'a> {
    /// The document of a reset's `plan` and what its writes did.
    pub(crate) fn new(plan: &'a Plan, applied: Option<&'a Applied>) -> Reset<'a> {
        Reset {
            schema_version: fairshare_core::instance::SCHEMA_VERSION,
            writes: &plan.writes,
            applied,
        }
    }
}

/// Logs a pass's `line`, as a warning that the next pass retries when `applied` left writes
/// undone.
pub(crate) fn log_line(line: &str, applied: Option<&Applied>) {
    match applied {
        Some(a) if !a.complete() => tracing::warn!("{line}; the next pass retries"),
        _ => tracing::info!("{line}"),
    }
}

/// Logs a pass that failed, and when the next comes.
pub(crate) fn log_failure(error: &dyn std::error::Error, backoff: Duration) {
    let retry_in_s = backoff.as_secs_f64();
    tracing::warn!(error = %Chain(error), retry_in_s, "pass failed; nothing written, the next pass tries again");
}

/// `watch`'s loop: the passes of the adapter `adapter` builds (once the signals are caught)
/// every `interval`, writing unless `dry_run`, each told to `log`, until SIGTERM or SIGINT;
/// then `stopped` is logged. The caller holds the lock.
pub(crate) fn watch_until_stopped<A, L>(
    adapter: impl FnOnce() -> Result<A>,
    dry_run: bool,
    interval: Duration,
    log: L,
    stopped: &str,
) -> Result<()>
where
    A: Passes,
    L: FnMut(Told<'_, A::Pass, A::Error>),
{
    let stop = stop_on_signals().context("installing the signal handler")?;
    let now: fn() -> Time = system_now;
    let mut watcher = Watcher {
        adapter: adapter()?,
        dry_run,
        interval,
        now,
        log,
        told: Vec::new(),
    };
    reconcile_every(
        &mut watcher,
        Backoff::for_interval(interval),
        &stop,
        &mut RealClock,
    );
    tracing::info!("{stopped}");
    Ok(())
}
