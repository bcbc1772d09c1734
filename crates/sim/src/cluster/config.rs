//! What a cluster run is configured with: the policy, the capacity, the users and their
//! shares, the scheduler and placement, when it stops, what it records and the site's queues.

use super::{Capacity, Fill, FirstFit, Limit, Outage, Overrun, Placement, Scheduler, TOP_USERS};
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_core::rank::{Accounts, Share};
use std::sync::Arc;

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// At this time; tasks arriving later are counted but not submitted.
    Horizon(Time),
    /// When every task has finished.
    Drain,
}

/// Everything a cluster run needs besides its arrivals.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The policy.
    pub policy: PolicySpec,
    /// A pool or machines.
    pub capacity: Capacity,
    /// Resource names, for the results.
    pub resources: Vec<String>,
    /// User names; their number is n.
    pub users: Vec<String>,
    /// Each user's weight and entitlement; `None`: equal shares, 1/n each.
    pub shares: Option<Vec<Share>>,
    /// The account tree with the users placed in it, which fairshare policies rank by;
    /// `None`: every user under the root, with its weight as its shares.
    pub accounts: Option<Accounts>,
    /// What a scheduling pass may start.
    pub scheduler: Arc<dyn Scheduler>,
    /// Which node a task starts on.
    pub placement: Arc<dyn Placement>,
    /// When the run ends.
    pub stop: Stop,
    /// Time of the first event (timelines count from it).
    pub origin: Time,
    /// Seconds between timeline samples.
    pub sample_every: f64,
    /// How many users' dominant shares the timeline keeps.
    pub top_users: usize,
    /// Which jobs the result lists (submit, start, end, nodes and first reservation): those
    /// running at some time in this window; `None`: none.
    pub record_jobs: Option<Window>,
    /// The site's queues, by the trace's queue index: how many processors each may hold and
    /// which go first. A job of a queue not listed (or of none) has no limit and priority 0.
    pub queues: Vec<QueueLimit>,
    /// What happens to a job that ran longer than its walltime request.
    pub overrun: Overrun,
    /// The trace's partitions, by the index its tasks carry: where machines declare a
    /// partition's [`partition_property`](fairshare_core::model::partition_property), its jobs
    /// run only on those machines, and a Slurm main scheduler blocks partition by partition.
    pub partitions: Vec<Partition>,
    /// The trace's QOS, by the index its tasks carry: each one's QOS factor in [0, 1], its
    /// `Priority` over the highest of the site's QOS (Slurm's normalised QOS priority),
    /// weighted by `PriorityWeightQOS` in a job's priority. A QOS not listed has factor 0.
    pub qos_factors: Vec<f64>,
    /// Each user's association factor in [0, 1], by user index: its association's `Priority`
    /// over the highest of the site's (Slurm's normalised association priority), weighted by
    /// `PriorityWeightAssoc` in its jobs' priorities. A user not listed has factor 0.
    pub assoc_factors: Vec<f64>,
    /// When the window of a log opens, for a replay of a window cut from a site's life: a job
    /// the log started before it starts exactly then, on the nodes the log names
    /// ([`Task::hosts`](fairshare_core::model::Task::hosts)), and is charged but left out of
    /// every count and wait; a job submitted before it and not started by then waits for it
    /// with its own submission (its age runs from there); the results count from it. `None`:
    /// every job is the run's to schedule.
    pub opens: Option<Time>,
    /// The site's limits on what groups of jobs may hold at once, whatever the policy.
    pub limits: Vec<Limit>,
    /// The spans during which the site took nodes from its jobs: drained, down, reserved.
    pub outages: Vec<Outage>,
}

/// A partition of the trace, as a Slurm site configures it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Partition {
    /// Its name, as the trace's jobs name it.
    pub name: String,
    /// Its `PriorityTier`: a pass considers the jobs of higher tiers first, each tier's in
    /// the policy's order (added to a job's queue priority).
    pub tier: i32,
    /// Its partition factor, in [0, 1]: its `PriorityJobFactor` over the highest of the
    /// site's partitions, weighted by `PriorityWeightPartition` in a job's priority.
    pub factor: f64,
    /// Whether each of its jobs holds its nodes whole (`OverSubscribe=EXCLUSIVE`).
    pub exclusive: bool,
}

impl Partition {
    /// Partition `name` with nothing configured: tier 0, factor 0.
    pub fn named(name: impl Into<String>) -> Partition {
        Partition {
            name: name.into(),
            ..Partition::default()
        }
    }
}

/// What a site allows one queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueLimit {
    /// The most processors (the first resource, in the trace's units) its running jobs may
    /// hold at once; `None`: no limit.
    pub processors: Option<f64>,
    /// Its priority: a pass considers the jobs of higher-priority queues first, each queue's
    /// in the policy's order.
    pub priority: i32,
    /// What a fairshare policy multiplies its jobs' charges by.
    pub cost: f64,
}

impl Default for QueueLimit {
    /// No limit, priority 0, cost 1.
    fn default() -> QueueLimit {
        QueueLimit {
            processors: None,
            priority: 0,
            cost: 1.0,
        }
    }
}

/// A span of simulated time, `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Its start.
    pub from: Time,
    /// Its end (excluded).
    pub to: Time,
}

impl Window {
    /// All of time.
    pub const ALL: Window = Window {
        from: Time::ZERO,
        to: Time(u64::MAX),
    };

    /// Whether something running over `[start, end)` runs during the window (a job that
    /// runs no time at all counts at its start).
    pub fn overlaps(&self, start: Time, end: Time) -> bool {
        start < self.to && (end > self.from || (start == end && start >= self.from))
    }
}

impl ClusterConfig {
    /// A run of `users` under `policy` on `capacity` over `resources`, with the SDRF paper's
    /// simulator: progressive filling with the head-of-line rule, first fit, until every task
    /// has finished, time counted from zero, a sample a second, the [`TOP_USERS`] heaviest
    /// users kept in the timeline.
    pub fn new(
        policy: PolicySpec,
        capacity: Capacity,
        resources: Vec<String>,
        users: Vec<String>,
    ) -> ClusterConfig {
        ClusterConfig {
            policy,
            capacity,
            resources,
            users,
            shares: None,
            accounts: None,
            scheduler: Arc::new(Fill::default()),
            placement: Arc::new(FirstFit),
            stop: Stop::Drain,
            origin: Time::ZERO,
            sample_every: 1.0,
            top_users: TOP_USERS,
            record_jobs: None,
            queues: Vec::new(),
            overrun: Overrun::Kill,
            partitions: Vec::new(),
            qos_factors: Vec::new(),
            assoc_factors: Vec::new(),
            opens: None,
            limits: Vec::new(),
            outages: Vec::new(),
        }
    }
}
