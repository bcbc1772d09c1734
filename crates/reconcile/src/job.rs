//! The jobs a reconcile reads from any scheduler, in the scheduler's own ids and names but in
//! no scheduler's format: a job in the queue ([`QueuedJob`]) and a job that ran or runs,
//! charged to its client ([`Allocation`]).
//!
//! An adapter reads its scheduler's commands into these; everything after (the history, the
//! order of starts, the factors, the writes) works on them alone, so a second scheduler's
//! adapter writes only its readers and its writer.

use fairshare_core::model::Time;

/// Where a job is in its life, as far as a reconcile cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// Waiting: its factor still orders it.
    Pending,
    /// Started: its factor no longer matters.
    Running,
    /// Anything else (completed, cancelled, suspended…), as the scheduler spells it.
    Other(String),
}

/// One job of the queue, with what a reconcile needs of it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedJob {
    /// The scheduler's job id.
    pub id: u64,
    /// The user's name.
    pub user: String,
    /// The account it is charged to.
    pub account: String,
    /// The partition (or partitions, comma-separated) it was submitted to.
    pub partition: String,
    /// Pending, running or other.
    pub state: JobState,
    /// The scheduler's priority for it, its factor included.
    pub priority: u64,
    /// The site factor it holds now; `None`: the scheduler lets no factor order it (held, or
    /// not yet eligible), so it is left alone.
    pub held: Option<i64>,
    /// When it was submitted.
    pub submit: Time,
    /// When it started; `None` while pending.
    pub start: Option<Time>,
    /// What it asks for, as `[processors, KB, GPUs]`.
    pub demand: Vec<f64>,
    /// The number of nodes it asked for.
    pub nodes: u32,
    /// Its time limit in seconds; `None` when it has none.
    pub limit: Option<u64>,
}

/// One job that started: what it was given, from when to when.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// The scheduler's job id.
    pub id: u64,
    /// The user's name.
    pub user: String,
    /// The account it is charged to.
    pub account: String,
    /// The partition it ran in (empty if the scheduler said none).
    pub partition: String,
    /// When it was submitted.
    pub submit: Time,
    /// When it started.
    pub start: Time,
    /// When it ended; `None` while it runs.
    pub end: Option<Time>,
    /// What it was allocated, `[processors, KB, GPUs]`.
    pub demand: Vec<f64>,
    /// The nodes it was allocated, if said.
    pub nodes: Option<u32>,
    /// Its quality of service (empty if the scheduler said none).
    pub qos: String,
    /// What the scheduler charges its client per second, in its own units (Slurm's billing
    /// units): what the `billing` usage metric charges.
    pub billing: f64,
}
