//! Schedulers (`--scheduler`, what the batch literature calls disciplines): what a scheduling
//! pass may start. The engine ranks users through the policy's
//! [`Ranker`](fairshare_core::rank::Ranker) and hands the [`Scheduler`] a [`SchedulingPass`]:
//! the waiting jobs in the policy's order, one candidate per user, and the means to start a candidate now,
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
mod serving;
mod slurm;
mod timing;

pub use conservative::Conservative;
pub use easy::Easy;
pub use fill::Fill;
pub(in crate::cluster) use serving::JobFactors;
pub use serving::Serving;
pub use slurm::{LoopTurns, Release, Slurm, SlurmParameters};
pub use timing::{Arrival, AtEveryEvent, EndRelease, Happened, PassKind, Standing, Timing};

use super::space::{Ending, Nodes, Placed, Request, Space};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::choice::Choice;
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_core::priority::multifactor::JobPriority;
use fairshare_core::rank::Ranker;
use std::fmt;
use std::sync::Arc;

/// One scheduling pass as a scheduler drives it: the waiting jobs in the policy's order, one
/// candidate per user (the user's oldest job not yet passed over in this pass).
pub trait SchedulingPass {
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
    /// [`SchedulingPass::reserve`], but only at a start within `window_s` seconds from now (Slurm's
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
    /// What kind of pass this is, as the scheduler's [`Timing`] ran it.
    fn kind(&self) -> PassKind;
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

/// How a scheduler plans its reservations ([`Scheduler::planning`]). By default a reservation
/// holds what its job asks, exactly from the earliest start at which the job fits, for the
/// longer of its limit and its run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Planning {
    /// Whether a reservation holds the rest of every node it is planned on, so that no later
    /// job starts there before the reserved one (Slurm's backfill plans nodes, not
    /// processors). A pool has no nodes: there a reservation always holds what its job asks.
    pub whole_nodes: bool,
    /// The granularity of a reservation's span, in seconds: its start and end are rounded
    /// down to a multiple of it (from the epoch) and it holds at least that long, as Slurm's
    /// backfill map does (`bf_resolution`). Only reservations that last one pass are rounded.
    pub resolution_s: Option<u64>,
    /// Whether a rounded span's end is rounded up rather than down (Slurm's backfill from
    /// 24.11 on, `_set_slot_time`).
    pub ends_rounded_up: bool,
    /// Whether a job is planned with its time limit even when it runs past it (Slurm's
    /// backfill plans a running job to end at its limit, and one past it to end the next
    /// second: `select/cons_tres`'s will-run test); otherwise with the longer of its limit
    /// and its run, which the replay knows.
    pub with_limits: bool,
}

/// A scheduler's own planner of reservations ([`Scheduler::planner`]), opaque outside the
/// simulator.
#[derive(Debug)]
pub struct Planner(pub(in crate::cluster) Box<dyn PlansNodes>);

/// What a planner of reservations on whole nodes is told and asked by the engine: the spans
/// the site holds across passes (reservations, nodes closed until further notice), the plans
/// of the pass, and where a job goes.
pub(in crate::cluster) trait PlansNodes: fmt::Debug + Send + Sync {
    /// Holds `placed`'s nodes over `[from, to)` in every pass, until [`PlansNodes::unstand`].
    fn stand(&mut self, placed: &Placed, from: Time, to: Time);
    /// Takes away what [`PlansNodes::stand`] held over `[from, to)` on `placed`'s nodes.
    fn unstand(&mut self, placed: &Placed, from: Time, to: Time);
    /// Enters a plan of the pass held over `[from, to)` on `placed`'s nodes.
    fn hold(&mut self, placed: &Placed, from: Time, to: Time);
    /// Takes away a plan of the pass held over `[from, to)` on `placed`'s nodes.
    fn release(&mut self, placed: &Placed, from: Time, to: Time);
    /// Takes every plan of the pass away: the pass ended.
    fn clear(&mut self);
    /// Forgets what it found while the running jobs stayed as they were: a job started or
    /// ended, or a pass begins.
    fn forget(&mut self);
    /// Where and from when `ask` is planned at `now` on `space`, `running` giving the running
    /// jobs' planned ends and where each runs, `held_span` what a plan starting at a time
    /// holds; `None`: no start is planned.
    fn plan<'a>(
        &mut self,
        space: &mut Space,
        now: Time,
        ask: Ask<'_>,
        running: RunningView<'_, 'a>,
        held_span: &dyn Fn(Time) -> (Time, Time),
    ) -> Option<(Time, Placed)>;
}

/// A job to plan: its request, its time limit, and the start it must come before, if any.
pub(in crate::cluster) struct Ask<'a> {
    /// What it asks for.
    pub request: &'a Request,
    /// Its time limit, in microseconds.
    pub walltime: u64,
    /// A start at or past this is not planned.
    pub before: Option<Time>,
}

/// The running jobs as a planner sees them: their planned ends (each with the job's slot),
/// worked out only when asked, and the nodes of the job in a slot.
pub(in crate::cluster) type RunningView<'r, 'a> = (
    &'r mut dyn FnMut() -> Vec<Ending>,
    &'r dyn Fn(usize) -> Nodes<'a>,
);

/// Runs one scheduling pass: starts jobs in the policy's order while it allows.
pub trait Scheduler: fmt::Debug + Send + Sync {
    /// Whether and how long the scheduler's reservations last; the engine keeps the
    /// availability profile only for schedulers that make them.
    fn reservations(&self) -> Reservations;
    /// How its reservations are planned.
    fn planning(&self) -> Planning {
        Planning::default()
    }
    /// Its own planner of reservations on `nodes` whole nodes, beside the availability
    /// profile (only reservations that hold whole nodes and last one pass plan by it); none
    /// by default: a reservation goes at the earliest start the profile leaves.
    fn planner(&self, _nodes: usize) -> Option<Planner> {
        None
    }
    /// When its passes run in a run that begins at `origin`, and how submissions and ends
    /// reach them: a pass at every event by default.
    fn timing(&self, _origin: Time) -> Box<dyn Timing> {
        Box::new(AtEveryEvent)
    }
    /// The job priority the scheduler has (Slurm's multifactor), for what a replay says of
    /// it; none by default. The engine orders jobs by what [`Scheduler::serving`] gives.
    fn job_priority(&self) -> Option<JobPriority> {
        None
    }
    /// How users are served under `policy`, whose ranker is `ranker` (for `users` users over
    /// `resources` resources): by the policy's order of users by default, each user's jobs
    /// oldest first.
    fn serving(
        &self,
        _policy: &PolicySpec,
        ranker: Box<dyn Ranker>,
        _shape: (usize, usize),
    ) -> Serving {
        Serving::by_users(ranker)
    }
    /// Starts what may start now.
    fn pass(&self, pass: &mut dyn SchedulingPass);
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
