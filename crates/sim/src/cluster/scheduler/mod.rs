//! Schedulers (`--scheduler`, what the batch literature calls disciplines): what a scheduling
//! pass may start. The engine ranks users through the policy's
//! [`Ranker`](fairshare_core::rank::Ranker) and hands the [`Scheduler`] a [`Pass`]: the waiting
//! jobs in the policy's order, one candidate per user, and the means to start a candidate now,
//! reserve it a later start, pass over it to the user's next job, or set the user aside.
//! [`Fill`] is the SDRF paper's progressive filling; [`Easy`] and [`Conservative`] are the
//! backfilling of batch systems, which reserve starts from the running jobs' requested
//! walltimes and let later jobs jump ahead only where they delay no reservation; [`Slurm`] is
//! Slurm's main scheduler after every event and its backfill cycle every `bf_interval`.
//! A new scheduler is one file here with its type and its [`SchedulerEntry`], and one line in
//! [`SchedulerEntry::ALL`](Choice::ALL).

mod conservative;
mod easy;
mod fill;
mod slurm;
mod turns;

pub use conservative::Conservative;
pub use easy::Easy;
pub use fill::Fill;
pub use slurm::{Slurm, SlurmParameters};
pub use turns::LoopTurns;

use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::choice::Choice;
use fairshare_core::model::Time;
use fairshare_core::priority::multifactor::JobPriority;
use std::fmt;
use std::sync::Arc;

/// One scheduling pass as a scheduler drives it: the waiting jobs in the policy's order, one
/// candidate per user (the user's oldest job not yet passed over in this pass).
pub trait Pass {
    /// The user whose candidate comes first in the policy's order, if any is left.
    fn first(&mut self) -> Option<u32>;
    /// Starts the user's candidate now if it has room and delays no reservation; whether the
    /// pass may go on to the next choice: true when the candidate started, or when its queue
    /// is at its limit and it was passed over (a held-back job blocks nobody).
    fn start(&mut self, user: u32) -> bool;
    /// Gives the user's candidate a reservation at the earliest time it fits without delaying
    /// another; a candidate that holds one keeps it. Whether it holds one: not when its queue
    /// is at its limit (no time can be promised) or no time fits.
    fn reserve(&mut self, user: u32) -> bool;
    /// [`Pass::reserve`], but only at a start within `window_s` seconds from now (Slurm's
    /// `bf_window`): a candidate that fits no sooner holds no reservation.
    fn reserve_within(&mut self, user: u32, window_s: u64) -> bool;
    /// Leaves the user's candidate waiting: the user's next job is its candidate for the rest
    /// of the pass (none left: the user is set aside).
    fn pass_over(&mut self, user: u32);
    /// Takes the user out of the rest of the pass.
    fn set_aside(&mut self, user: u32);
    /// The partition of the user's candidate (the trace's index), when it runs only on that
    /// partition's nodes; `None` when it may run on any node.
    fn partition(&self, user: u32) -> Option<u32>;
    /// Keeps the rest of the pass off every node of the user's candidate's partition, free
    /// or not (Slurm's main scheduler, once a job of a partition cannot start, so that nodes
    /// the partition shares go to no other partition's job either); nothing when the
    /// candidate may run on any node.
    fn fence(&mut self, user: u32);
    /// Whether nothing more can start now, whatever the order (no node has any free room).
    fn full(&self) -> bool;
    /// How many waiting jobs hold no reservation.
    fn unreserved(&self) -> u64;
    /// Whether this pass runs at the scheduler's cycle ([`Scheduler::cycle`]) rather than
    /// only after arrivals or ends.
    fn periodic(&self) -> bool;
    /// Whether this pass goes down the whole queue ([`Scheduler::whole_queue_passes`])
    /// rather than the scheduler's usual depth.
    fn whole_queue(&self) -> bool;
}

/// How long a scheduler's reservations last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservations {
    /// None are made.
    None,
    /// Made in a pass and dropped when it ends (the next pass computes them again).
    ForThePass,
    /// Kept until the job starts, moved only earlier when jobs end before their walltime.
    UntilStart,
}

/// A scheduler's periodic passes: how far apart, and where they fall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    /// Seconds between two passes.
    pub every_s: u64,
    /// This many seconds past each multiple of `every_s`, counted from the epoch (Slurm's
    /// backfill timer runs from `slurmctld`'s start, not from the workload's); `None`: on the
    /// multiples counted from the run's start.
    pub phase_s: Option<u64>,
}

/// The passes down the whole queue ([`Scheduler::whole_queue_passes`]): one at the loop's
/// first turn `every_s` whole seconds after the last, the timer started afresh at each of
/// `timer_starts`, on the whole second it fell in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WholeQueuePasses<'a> {
    /// Seconds between two such passes.
    pub every_s: u64,
    /// When the timer started, in order; none run before the first.
    pub timer_starts: &'a [Time],
}

/// How a job's end reaches the scheduler ([`Scheduler::end_release`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndRelease {
    /// How long after the end its nodes stay taken, in microseconds.
    pub after_us: u64,
    /// Whether the end runs a pass at once, unspaced, once its nodes are free.
    pub passes_at_once: bool,
}

/// Runs one scheduling pass: starts jobs in the policy's order while it allows.
pub trait Scheduler: fmt::Debug + Send + Sync {
    /// Whether and how long the scheduler's reservations last; the engine keeps the
    /// availability profile only for schedulers that make them.
    fn reservations(&self) -> Reservations;
    /// The passes the scheduler wants whether or not anything arrives or ends, while jobs
    /// wait (Slurm's backfill cycle); none by default.
    fn cycle(&self) -> Option<Cycle> {
        None
    }
    /// Where a log shows when those passes ran (Slurm's backfill cycles, read from
    /// `slurmctld`'s log): they fall there and between, instead of on the [`Cycle`]'s grid.
    fn cycle_turns(&self) -> Option<&LoopTurns> {
        None
    }
    /// Whether a reservation holds the rest of every node it is planned on, so that no later
    /// job starts there before the reserved one (Slurm's backfill plans nodes, not
    /// processors); by default it holds only what the job asks. A pool has no nodes: there a
    /// reservation always holds what its job asks.
    fn reserves_whole_nodes(&self) -> bool {
        false
    }
    /// Whether a job is planned where Slurm's will-run test puts it, on the nodes the
    /// pass's other plans leave, from the end of the running jobs whose going leaves it room
    /// (Slurm's backfill, which plans on nodes); by default a reservation is the earliest
    /// start at which the job fits. Only schedulers whose reservations hold whole nodes plan
    /// so.
    fn plans_by_will_run(&self) -> bool {
        false
    }
    /// The granularity of a reservation's span, in seconds: its start and end are rounded
    /// down to a multiple of it (from the epoch) and it holds at least that long, as Slurm's
    /// backfill map does (`bf_resolution`); none by default: a reservation holds exactly from
    /// its start for its walltime. Only reservations that last one pass are rounded.
    fn plan_resolution_s(&self) -> Option<u64> {
        None
    }
    /// How long past its walltime a job runs before it is killed, under `--overrun kill`: no
    /// time by default; `None`: it is never killed (it runs its recorded time).
    fn kill_grace_s(&self) -> Option<u64> {
        Some(0)
    }
    /// The least time between two passes that arrivals and ends ask for, in seconds: an event
    /// asks for one, which runs at the first whole second after it once that long has passed
    /// since the last (Slurm's `batch_sched_delay`, 3 s: `slurmctld`'s background loop runs the
    /// main scheduler for new work at most that often); none by default: a pass at every
    /// event.
    fn event_pass_spacing_s(&self) -> Option<u64> {
        None
    }
    /// Whether a job is planned with its time limit even when it runs past it (Slurm's
    /// backfill plans a running job to end at its limit, and one past it to end the next
    /// second: `select/cons_tres`'s will-run test); by default with the longer of its limit
    /// and its run, which the replay knows.
    fn plans_with_limits(&self) -> bool {
        false
    }
    /// With spaced passes: the seed by which each second's submissions are drawn to have come
    /// before or after the background loop's turn in that second (see the engine's `run`);
    /// none by default: a submission is served at the next second, or by a pass already due
    /// in its own.
    fn drawn_turns(&self) -> Option<u64> {
        None
    }
    /// When the loop that spaces the passes events ask for takes its turns, when a log shows
    /// them (Slurm's background loop, read from `slurmctld`'s log); `None`: on the whole
    /// seconds.
    fn loop_turns(&self) -> Option<&LoopTurns> {
        None
    }
    /// The passes that go down the whole queue at a fixed interval, whatever was asked
    /// (Slurm's `sched_interval`), when their timer's starts are known; none by default.
    fn whole_queue_passes(&self) -> Option<WholeQueuePasses<'_>> {
        None
    }
    /// How a job's end reaches the scheduler: how long, in microseconds, its nodes stay
    /// taken after it (`killed`: it was killed at its limit or cancelled while it ran), and
    /// whether such an end runs a pass at once rather than asking for one. By default the
    /// nodes are free at the end, which asks for a pass like any event.
    fn end_release(&self, _killed: bool) -> EndRelease {
        EndRelease::default()
    }
    /// Whether a waiting job's cancellation sets off a pass, as an arrival or an end does (by
    /// default it does; Slurm's does not: cancelling a pending job queues none of its
    /// schedulers, so what the job held back starts at the next submission, end or cycle).
    fn passes_on_cancellation(&self) -> bool {
        true
    }
    /// The job priority the scheduler orders jobs by, when a job's own terms weigh in
    /// (Slurm's age, size and partition factors); none by default: the policy's order of users, each
    /// user's jobs oldest first.
    fn job_priority(&self) -> Option<JobPriority> {
        None
    }
    /// Starts what may start now.
    fn pass(&self, pass: &mut dyn Pass);
}

/// A scheduler fairshare knows, as `--scheduler` chooses it: its name, one line of help, and
/// how to build it. Each scheduler declares its own in its file;
/// [`SchedulerEntry::ALL`](Choice::ALL) lists them.
#[derive(Clone, Copy)]
pub struct SchedulerEntry {
    /// The name `--scheduler` takes.
    pub name: &'static str,
    /// One line of help.
    pub about: &'static str,
    /// Builds the scheduler from the settings that concern it.
    pub build: fn(&SchedulerSettings) -> Arc<dyn Scheduler>,
}

/// What the schedulers are set up with; each reads its own part.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchedulerSettings {
    /// What filling does when the chosen user's job does not fit (`--rule`).
    pub rule: FillRule,
    /// Slurm's scheduling parameters (`--slurm-conf`).
    pub slurm: SlurmParameters,
}

impl Choice for SchedulerEntry {
    const ALL: &'static [SchedulerEntry] = &[
        fill::FILL,
        easy::EASY,
        conservative::CONSERVATIVE,
        slurm::SLURM,
    ];

    fn name(self) -> &'static str {
        self.name
    }

    fn about(self) -> &'static str {
        self.about
    }
}

impl PartialEq for SchedulerEntry {
    fn eq(&self, other: &SchedulerEntry) -> bool {
        self.name == other.name
    }
}

impl Eq for SchedulerEntry {}

impl Default for SchedulerEntry {
    /// The first registered: progressive filling.
    fn default() -> SchedulerEntry {
        SchedulerEntry::ALL[0]
    }
}

impl fmt::Debug for SchedulerEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl SchedulerEntry {
    /// [`Fill`].
    pub const FILL: SchedulerEntry = fill::FILL;
    /// [`Easy`].
    pub const EASY: SchedulerEntry = easy::EASY;
    /// [`Conservative`].
    pub const CONSERVATIVE: SchedulerEntry = conservative::CONSERVATIVE;
    /// [`Slurm`], with Slurm's default parameters.
    pub const SLURM: SchedulerEntry = slurm::SLURM;

    /// The scheduler, filling by `rule` when it fills, with every other setting's default.
    pub fn scheduler(self, rule: FillRule) -> Arc<dyn Scheduler> {
        self.configured(&SchedulerSettings {
            rule,
            ..SchedulerSettings::default()
        })
    }

    /// The scheduler, set up by `settings`.
    pub fn configured(self, settings: &SchedulerSettings) -> Arc<dyn Scheduler> {
        (self.build)(settings)
    }
}
