//! What the scheduler adapters' commands share, whichever scheduler they drive: the verbs
//! themselves (`status`, `sync` — one turn of `watch` —, `watch`, `reset`) over a scheduler
//! they drive ([`Driven`]), the lock of a command that writes, the `--json` documents, the end of a write
//! that did not finish, the log of a turn, and `watch`'s loop until a signal.

use anyhow::{bail, Context, Result};
use fairshare_core::error::Chain;
use fairshare_core::model::Time;
use fairshare_reconcile::controller::{Controller, SchedulerIo};
use fairshare_reconcile::history::HistoryError;
use fairshare_reconcile::lock::Lock;
use fairshare_reconcile::pass::Pass;
use fairshare_reconcile::plan::Plan;
use fairshare_reconcile::watch::{
    stop_on_signals, system_now, watch as reconcile_every, Backoff, Passes, RealClock, Reconciler,
    Told, Watcher,
};
use fairshare_reconcile::writes::{Applied, Write};
use fairshare_report::{adapter_status, adapter_sync, pass_line, writes_text};
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
pub(crate) fn done<J>(applied: Option<&Applied<J>>, undone: &str) -> Result<()> {
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
pub(crate) struct Document<'a, J> {
    schema_version: u32,
    #[serde(flatten)]
    pass: &'a Pass<J>,
    applied: Option<&'a Applied<J>>,
}

impl<'a, J> Document<'a, J> {
    /// The document of `pass` and what its writes did.
    pub(crate) fn new(pass: &'a Pass<J>, applied: Option<&'a Applied<J>>) -> Self {
        Document {
            schema_version: fairshare_reconcile::pass::PASS_SCHEMA_VERSION,
            pass,
            applied,
        }
    }
}

/// What `reset --json` prints: the writes and what they did.
#[derive(Serialize)]
pub(crate) struct Reset<'a, J> {
    schema_version: u32,
    writes: &'a [Write<J>],
    applied: Option<&'a Applied<J>>,
}

impl<'a, J> Reset<'a, J> {
    /// The document of a reset's `plan` and what its writes did.
    pub(crate) fn new(plan: &'a Plan<J>, applied: Option<&'a Applied<J>>) -> Self {
        Reset {
            schema_version: fairshare_reconcile::pass::PASS_SCHEMA_VERSION,
            writes: &plan.writes,
            applied,
        }
    }
}

/// Logs a pass's `line`, as a warning that the next pass retries when `applied` left writes
/// undone.
fn log_line<J>(line: &str, applied: Option<&Applied<J>>) {
    match applied {
        Some(a) if !a.complete() => tracing::warn!("{line}; the next pass retries"),
        _ => tracing::info!("{line}"),
    }
}

/// Logs a pass that failed, and when the next comes.
fn log_failure(error: &dyn std::error::Error, backoff: Duration) {
    let retry_in_s = backoff.as_secs_f64();
    tracing::warn!(error = %Chain(error), retry_in_s, "pass failed; nothing written, the next pass tries again");
}

/// `watch`'s loop: the passes of the adapter `adapter` builds (once the signals are caught)
/// every `interval`, writing unless `dry_run`, each told to `log`, until SIGTERM or SIGINT;
/// then `stopped` is logged. The caller holds the lock.
fn watch_until_stopped<A, L>(
    adapter: impl FnOnce() -> Result<A>,
    dry_run: bool,
    interval: Duration,
    log: L,
    stopped: &str,
) -> Result<()>
where
    A: Passes,
    L: FnMut(Told<'_, A>),
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

/// A scheduler the adapters' verbs (`status`, `sync`, `watch`, `reset`) drive, and what they
/// need of it: its configuration, its adapter on the real commands, its words and what it says when it stops.
pub(crate) trait Driven {
    /// Why the scheduler gave no usable answer.
    type Error: std::error::Error + Send + Sync + From<HistoryError> + 'static;
    /// Its readers and writer.
    type Io: SchedulerIo<Error = Self::Error>;
    /// Its configuration file, read.
    type Config;
    /// What `watch` logs when it stops.
    const STOPPED: &'static str;
    /// What `watch` warns of, and why a sync fails, when what follows the writes failed.
    const AFTER_WRITING: &'static str = "what follows the writes failed";
    /// What `reset` says when a write did not take.
    const NOT_RESET: &'static str;

    /// The adapter of `config`, on the scheduler's real commands.
    fn controller(config: &Self::Config) -> Result<Controller<Self::Io>>;

    /// The lock file of `config`.
    fn lock(config: &Self::Config) -> &Path;

    /// Logs what `watch` starts with.
    fn watching(config: &Self::Config, dry_run: bool);

    /// What `reset` does after its writes (Slurm's: removes the table `job_submit.lua` reads).
    fn after_reset(io: &Self::Io) -> Result<()> {
        let _ = io;
        Ok(())
    }
}

/// `status`: one pass, nothing written.
pub(crate) fn status<S: Driven>(config: &S::Config, json: bool) -> Result<()> {
    let pass = S::controller(config)?.pass(system_now())?;
    show(json, &Document::new(&pass, None), || {
        adapter_status(&pass, &S::Io::WORDS)
    })
}

/// `sync`: one turn of `watch`, its writes made (unless `dry_run`) and read back, then what
/// follows them.
pub(crate) fn sync<S: Driven>(config: &S::Config, json: bool, dry_run: bool) -> Result<()> {
    let _lock = lock(S::lock(config), dry_run)?;
    let mut turn = None;
    let mut watcher = Watcher {
        adapter: S::controller(config)?,
        dry_run,
        interval: Duration::ZERO,
        now: system_now,
        log: |told: Told<'_, Controller<S::Io>>| {
            if let Told::Passed {
                pass,
                applied,
                after,
                ..
            } = told
            {
                let after = after.map(|e| Chain(e).to_string());
                turn = Some((pass.clone(), applied.cloned(), after));
            }
        },
        told: Vec::new(),
    };
    watcher.reconcile()?;
    drop(watcher);
    let (pass, applied, after) = turn.expect("a turn that passed is told");
    if let Some(e) = after {
        return Err(anyhow::anyhow!(e)).context(S::AFTER_WRITING);
    }
    let document = Document::new(&pass, applied.as_ref());
    show(json, &document, || {
        adapter_sync(&pass, applied.as_ref(), &S::Io::WORDS)
    })?;
    done(
        applied.as_ref(),
        "the ranking is not fully applied (see above); run sync again",
    )
}

/// `reset`: every factor fairshare wrote back to 0, then what follows a reset.
pub(crate) fn reset<S: Driven>(config: &S::Config, json: bool, dry_run: bool) -> Result<()> {
    let _lock = lock(S::lock(config), dry_run)?;
    let mut adapter = S::controller(config)?;
    let plan = adapter.reset_plan()?;
    let applied = (!dry_run).then(|| adapter.apply(&plan));
    if !dry_run {
        S::after_reset(adapter.io())?;
    }
    show(json, &Reset::new(&plan, applied.as_ref()), || {
        writes_text(&plan, applied.as_ref(), &S::Io::WORDS)
    })?;
    done(applied.as_ref(), S::NOT_RESET)
}

/// `watch`: a pass every `interval` until SIGTERM or SIGINT; a pass that fails is logged and
/// the next one tries again.
pub(crate) fn watch<S: Driven>(
    config: &S::Config,
    dry_run: bool,
    interval: Duration,
) -> Result<()> {
    S::watching(config, dry_run);
    let _lock = lock(S::lock(config), dry_run)?;
    watch_until_stopped(
        || S::controller(config),
        dry_run,
        interval,
        log_turn::<S>,
        S::STOPPED,
    )
}

/// How much running left uncharged by jobs the accounting listed late is worth a warning: a
/// second, more than its whole-second times blur.
const LATE_WORTH_MS: u64 = 1_000;

/// What one turn of `watch` tells the log: why the history was rebuilt, jobs listed late, the
/// pass's new notes, the scheduler's own order where it differs, what did not follow the
/// writes, and the pass's line; or why the pass failed.
fn log_turn<S: Driven>(told: Told<'_, Controller<S::Io>>) {
    let (pass, applied, after, news) = match told {
        Told::Passed {
            pass,
            applied,
            after,
            news,
        } => (pass, applied, after, news),
        Told::Failed(error, backoff) => return log_failure(error, backoff),
    };
    let words = S::Io::WORDS;
    if let Some(why) = &pass.rebuilt {
        tracing::info!("{why}");
    }
    let step = &pass.step;
    // Listed late within the second whole-second times blur costs nothing worth a word.
    if pass.rebuilt.is_none() && step.uncharged_ms >= LATE_WORTH_MS {
        tracing::warn!(
            charged_from_last_pass = step.clamped,
            not_charged = step.missed,
            uncharged_s = step.uncharged_ms as f64 / 1e3,
            "{} listed jobs late: their running before this pass was not charged",
            words.accounting
        );
    }
    for note in news {
        tracing::warn!("{note}");
    }
    if let Some(check) = pass.check.as_ref().filter(|c| !c.agrees) {
        let (order, own) = (check.words.order, check.words.own);
        tracing::warn!(scheduler = ?check.scheduler, fairshare = ?check.fairshare, "{order} order differs from {own}");
    }
    if let Some(e) = after {
        tracing::warn!(error = %Chain(e), "{}", S::AFTER_WRITING);
    }
    log_line(&pass_line(pass, applied, &words), applied);
}
