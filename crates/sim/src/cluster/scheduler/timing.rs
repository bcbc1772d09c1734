//! When a scheduler's passes run, apart from what a pass does. The engine keeps the events
//! (arrivals, ends, cancellations, the starts it reserved) and tells the scheduler's
//! [`Timing`] what happened at each instant; the timing says whether a pass runs and of which
//! kind, when it wants the engine woken though nothing happens, and how a job's end and a
//! submission reach it. By default ([`AtEveryEvent`]) a pass runs at every event; Slurm's
//! model spaces them by its controller's loops and adds its backfill's cycles.

use fairshare_core::model::Time;
use std::fmt;

/// What happened at one instant, as the engine tells a [`Timing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Happened {
    /// The instant.
    pub now: Time,
    /// Whether a job arrived, or ended asking for a pass.
    pub asked: bool,
    /// Whether a job ended asking for a pass at once ([`EndRelease::passes_at_once`]).
    pub at_once: bool,
    /// Whether a reserved start falls now.
    pub reserved_start: bool,
    /// Whether a waiting job was cancelled now.
    pub cancelled: bool,
    /// Whether a submission came before the loop's turn in this second
    /// ([`Arrival::InThisTurn`]), which may serve it now.
    pub in_this_turn: bool,
}

/// Where the queue stands, which decides whether a timing's own passes are due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Standing {
    /// Whether jobs wait.
    pub waiting: bool,
    /// Whether jobs run.
    pub running: bool,
    /// Whether a job arrived, started or ended since the last periodic pass.
    pub changed: bool,
}

/// The kind of a pass a [`Timing`] runs, which the scheduler reads from its
/// [`SchedulingPass`](super::SchedulingPass).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassKind {
    /// Whether it is one of the timing's periodic passes (Slurm's backfill cycle) rather than
    /// one that events asked for.
    pub periodic: bool,
    /// Whether it goes down the whole queue (Slurm's `sched_interval`) rather than the
    /// scheduler's usual depth.
    pub whole_queue: bool,
}

/// When a submission reaches the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// At its submit time.
    Now,
    /// At its submit time, before the loop's turn in its second, which may serve it then.
    InThisTurn,
    /// Later, at this time, unseen by any pass before it; one not after its submission
    /// arrives at once. Late arrivals come in the order of this time, then of submission.
    Late(Time),
}

/// How a job's end reaches the scheduler ([`Timing::end_release`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndRelease {
    /// How long after the end its nodes stay taken, in microseconds.
    pub after_us: u64,
    /// Whether the end runs a pass at once, unspaced, once its nodes are free.
    pub passes_at_once: bool,
}

/// When a scheduler's passes run, and how jobs' submissions and ends reach them. One is made
/// for each run ([`Scheduler::timing`](super::Scheduler::timing)) and keeps that run's state.
pub trait Timing: fmt::Debug + Send {
    /// How long past its walltime a job runs before it is killed, under `--overrun kill`, in
    /// microseconds: no time by default; `None`: it is never killed (it runs its recorded
    /// time).
    fn kill_grace_us(&self) -> Option<u64> {
        Some(0)
    }
    /// How a job's end at `end` reaches the scheduler (`killed`: it was killed at its limit
    /// or cancelled while it ran). By default the nodes are free at the end, which asks for a
    /// pass like any event.
    fn end_release(&self, _killed: bool, _end: Time) -> EndRelease {
        EndRelease::default()
    }
    /// When a submission at `submit` reaches the scheduler: at once by default.
    fn arrival(&self, _submit: Time) -> Arrival {
        Arrival::Now
    }
    /// The first instant after `now` at which the timing wants a pass whether or not
    /// anything happens then (a cycle, or a pass an event asked for and that waits for its
    /// turn); none by default.
    fn next_wakeup(&self, _now: Time, _standing: Standing) -> Option<Time> {
        None
    }
    /// Whether a pass runs at `happened.now`, and of which kind. Called once per instant at
    /// which anything happened or the timing asked to be woken.
    fn pass_at(&mut self, happened: &Happened) -> Option<PassKind>;
}

/// A pass at every event: an arrival, an end, a cancellation or a reserved start.
#[derive(Debug, Clone, Copy, Default)]
pub struct AtEveryEvent;

impl Timing for AtEveryEvent {
    fn pass_at(&mut self, happened: &Happened) -> Option<PassKind> {
        let asked = happened.asked || happened.cancelled || happened.reserved_start;
        (asked || happened.at_once).then_some(PassKind::default())
    }
}
