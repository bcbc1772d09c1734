//! The loop around a reconcile: reconcile, then wait as the reconciler asks ([`Action`]);
//! after a failure wait longer each time ([`Backoff`]); stop at once on SIGTERM or SIGINT.
//! [`Watcher`] is every adapter's reconciler: a pass, its writes unless dry, and what follows
//! them, each told to the log, a pass's notes only when they are news: a note about the
//! scheduler's configuration, which every pass repeats, is told at the first pass and again
//! only once it changes.
//!
//! Every adapter needs the same loop, and its timing is easy to get wrong in ways that hurt a
//! scheduler: retrying a failing controller every few seconds, or sleeping through a stop
//! request. Kept here, the loop is written once, and its waits are tested against a clock that
//! only records them ([`Clock`]).

use crate::writes::Applied;
use fairshare_core::model::Time;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to do after a reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reconcile again after this long, counted from the start of the last reconcile.
    Requeue(Duration),
    /// End the loop.
    Stop,
}

/// Something reconciled again and again.
pub trait Reconciler {
    /// Why a reconcile failed.
    type Error;

    /// One reconcile, and what to do next.
    fn reconcile(&mut self) -> Result<Action, Self::Error>;

    /// What to do after `error`: by default wait `backoff`, the loop's wait after as many
    /// failures in a row (an adapter logs the error here).
    fn error_policy(&mut self, error: Self::Error, backoff: Duration) -> Action {
        let _ = error;
        Action::Requeue(backoff)
    }
}

/// How long to wait after failures in a row: `first` after one, twice as long after each
/// further one, at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after one failure.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Backoff {
    /// The backoff of a loop that reconciles every `interval`: the first retry after the
    /// interval but at most 10 s (a controller restarting is soon back) and at least 1 s, then
    /// doubling up to ten minutes or the interval, whichever is longer.
    pub fn for_interval(interval: Duration) -> Backoff {
        Backoff {
            first: interval.clamp(Duration::from_secs(1), Duration::from_secs(10)),
            max: interval.max(Duration::from_secs(600)),
        }
    }

    /// The wait after `failures` failures in a row (at least one).
    pub fn after(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(31);
        (self.first.saturating_mul(1 << doublings)).min(self.max)
    }
}

/// Where the loop waits: real time, or a record of the waits in tests.
pub trait Clock {
    /// The time now.
    fn now(&self) -> Instant;
    /// Waits until `until`, or less if `stop` is set meanwhile.
    fn wait_until(&mut self, until: Instant, stop: &AtomicBool);
}

/// The machine's clock, checking for a stop every 100 ms.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn wait_until(&mut self, until: Instant, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }
}

/// How a loop went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watched {
    /// Reconciles made.
    pub reconciles: u64,
    /// Those that failed.
    pub failures: u64,
}

/// The longest wait the loop takes at once: a year, so that any `Requeue` is a time the
/// clock can hold.
const LONGEST_WAIT: Duration = Duration::from_secs(365 * 86_400);

/// Reconciles with `reconciler` until it asks to stop or `stop` is set, waiting between as it
/// asks: after a reconcile, counted from its start (so that passes keep their interval); after
/// a failure, as `backoff` says, counted from its end (a pass that failed by timing out has
/// already waited that long, and a struggling controller should not be asked again at once).
pub fn watch<R: Reconciler>(
    reconciler: &mut R,
    backoff: Backoff,
    stop: &AtomicBool,
    clock: &mut impl Clock,
) -> Watched {
    let mut watched = Watched::default();
    let mut in_a_row: u32 = 0;
    while !stop.load(Ordering::Relaxed) {
        let started = clock.now();
        watched.reconciles += 1;
        let (action, from) = match reconciler.reconcile() {
            Ok(action) => {
                in_a_row = 0;
                (action, started)
            }
            Err(error) => {
                in_a_row = in_a_row.saturating_add(1);
                watched.failures += 1;
                let action = reconciler.error_policy(error, backoff.after(in_a_row));
                (action, clock.now())
            }
        };
        match action {
            Action::Requeue(wait) => clock.wait_until(from + wait.min(LONGEST_WAIT), stop),
            Action::Stop => break,
        }
    }
    watched
}

/// An adapter as [`Watcher`] drives it: passes, their plans written, and what follows a write.
pub trait Passes {
    /// What one pass saw and planned.
    type Pass;
    /// The scheduler's job id.
    type Job;
    /// Why a pass failed.
    type Error;

    /// One pass at `now`.
    fn pass(&mut self, now: Time) -> Result<Self::Pass, Self::Error>;

    /// Writes what `pass` planned and reads it back.
    fn apply(&mut self, pass: &Self::Pass) -> Applied<Self::Job>;

    /// What follows a pass that wrote (Slurm's: the table `job_submit.lua` reads). Its
    /// failure is told to the log and stops nothing.
    fn after_writing(&mut self, pass: &Self::Pass) -> std::io::Result<()> {
        let _ = pass;
        Ok(())
    }

    /// What an administrator should know of `pass`.
    fn notes(pass: &Self::Pass) -> &[String];
}

/// What [`Watcher`] tells its log of the adapter `A`.
pub enum Told<'a, A: Passes> {
    /// A pass.
    Passed {
        /// The pass.
        pass: &'a A::Pass,
        /// What its writes did (`None`: a dry run, nothing written).
        applied: Option<&'a Applied<A::Job>>,
        /// Why what follows the writes failed, if it did.
        after: Option<&'a std::io::Error>,
        /// Its notes that the last pass did not have (all of them at the first pass).
        news: Vec<&'a str>,
    },
    /// A pass failed, nothing was written; the next comes after the backoff.
    Failed(&'a A::Error, Duration),
}

/// The reconciler of an adapter's loop: at each turn a pass at the time `now` gives, its
/// plan written and read back unless `dry_run`, and what follows the writes; each told to
/// `log`. After a pass, the next comes `interval` later.
pub struct Watcher<A: Passes, L: FnMut(Told<'_, A>)> {
    /// The adapter.
    pub adapter: A,
    /// Whether to write nothing.
    pub dry_run: bool,
    /// The time between passes.
    pub interval: Duration,
    /// The time of a pass (the machine's clock, or a test's).
    pub now: fn() -> Time,
    /// Where each turn is told.
    pub log: L,
    /// The notes of the last pass, told already.
    pub told: Vec<String>,
}

impl<A: Passes, L: FnMut(Told<'_, A>)> Reconciler for Watcher<A, L> {
    type Error = A::Error;

    fn reconcile(&mut self) -> Result<Action, A::Error> {
        let pass = self.adapter.pass((self.now)())?;
        let applied = (!self.dry_run).then(|| self.adapter.apply(&pass));
        let after = match self.dry_run {
            true => None,
            false => self.adapter.after_writing(&pass).err(),
        };
        let notes = A::notes(&pass);
        let news = (notes.iter())
            .filter(|note| !self.told.contains(note))
            .map(String::as_str)
            .collect();
        (self.log)(Told::Passed {
            pass: &pass,
            applied: applied.as_ref(),
            after: after.as_ref(),
            news,
        });
        self.told = notes.to_vec();
        Ok(Action::Requeue(self.interval))
    }

    fn error_policy(&mut self, error: A::Error, backoff: Duration) -> Action {
        (self.log)(Told::Failed(&error, backoff));
        Action::Requeue(backoff)
    }
}

/// The machine's clock as a [`Time`]: microseconds since the Unix epoch.
pub fn system_now() -> Time {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Time::from_micros(since.as_micros() as u64)
}

/// A flag set when the process gets SIGTERM or SIGINT, for [`watch`] to stop on.
pub fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    Ok(stop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An adapter whose passes make the notes given, one list a pass (`None`: the pass fails).
    struct Noting(Vec<Option<Vec<String>>>);

    impl Passes for Noting {
        type Pass = Vec<String>;
        type Job = u64;
        type Error = ();

        fn pass(&mut self, _: Time) -> Result<Vec<String>, ()> {
            self.0.remove(0).ok_or(())
        }

        fn apply(&mut self, _: &Vec<String>) -> Applied {
            Applied::default()
        }

        fn notes(pass: &Vec<String>) -> &[String] {
            pass
        }
    }

    #[test]
    fn a_note_is_told_when_it_first_comes_and_again_only_after_it_went() {
        let passes = [
            Some(vec!["memory", "weight"]),
            Some(vec!["memory", "weight"]),
            None,
            Some(vec!["memory", "weight"]),
            Some(vec!["memory"]),
            Some(vec!["memory", "weight"]),
        ];
        let passes = passes.map(|p| p.map(|n| n.into_iter().map(String::from).collect()));
        let mut heard: Vec<Vec<String>> = Vec::new();
        let mut watcher = Watcher {
            adapter: Noting(passes.to_vec()),
            dry_run: true,
            interval: Duration::from_secs(5),
            now: || Time::ZERO,
            log: |told: Told<'_, Noting>| {
                if let Told::Passed { news, .. } = told {
                    heard.push(news.iter().map(|n| n.to_string()).collect());
                }
            },
            told: Vec::new(),
        };
        for _ in passes {
            if let Err(e) = watcher.reconcile() {
                watcher.error_policy(e, Duration::from_secs(1));
            }
        }
        let expected: [&[&str]; 5] = [&["memory", "weight"], &[], &[], &[], &["weight"]];
        assert_eq!(heard, expected, "a failed pass between forgets nothing");
    }

    #[test]
    fn the_backoff_doubles_from_first_to_max() {
        let b = Backoff::for_interval(Duration::from_secs(60));
        let waits: Vec<u64> = (1..=9).map(|n| b.after(n).as_secs()).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 600, 600, 600]);
        assert_eq!(b.after(u32::MAX), Duration::from_secs(600));
        let short = Backoff::for_interval(Duration::from_secs(2));
        assert_eq!((short.after(1).as_secs(), short.max.as_secs()), (2, 600));
        let none = Backoff::for_interval(Duration::ZERO);
        assert_eq!(none.after(1), Duration::from_secs(1), "never a busy loop");
    }
}
