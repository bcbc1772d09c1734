//! The jobs a reconcile reads from any scheduler, in the scheduler's own ids and names but in
//! no scheduler's format: a job in the queue ([`QueuedJob`]) and a job that ran or runs,
//! charged to its client ([`Allocation`]).
//!
//! An adapter reads its scheduler's commands into these; everything after (the history, the
//! order of starts, the factors, the writes) works on them alone, so a second scheduler's
//! adapter writes only its readers and its writer.

use fairshare_core::model::Time;
use serde::Serialize;
use std::fmt::{Debug, Display};

/// A scheduler's job id, of the type its adapter chooses ([`crate::controller::SchedulerIo::Job`]):
/// Slurm's and Grid Engine's are numbers (`u64`, the job types' default), PBS's are text
/// (`123.server`). Ids are ordered: a job's id breaks ties between jobs submitted at one time.
pub trait JobId: Ord + Clone + Debug + Display + Serialize + 'static {}

impl<T: Ord + Clone + Debug + Display + Serialize + 'static> JobId for T {}

/// Where a job is in its life, as far as a reconcile cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueState {
    /// Waiting: its factor still orders it.
    Pending,
    /// Started: its factor no longer matters.
    Running,
    /// Anything else (completed, cancelled, suspended…), as the scheduler spells it.
    Other(String),
}

/// One job of the queue, with what a reconcile needs of it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedJob<J = u64> {
    /// The scheduler's job id.
    pub id: J,
    /// The user's name.
    pub user: String,
    /// The account it is charged to.
    pub account: String,
    /// The partition (or partitions, comma-separated) it was submitted to.
    pub partition: String,
    /// Pending, running or other.
    pub state: QueueState,
    /// The scheduler's priority for it, its factor included.
    pub priority: u64,
    /// The factor it holds now; `None`: the scheduler lets no factor order it (held, or
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
pub struct Allocation<J = u64> {
    /// The scheduler's job id.
    pub id: J,
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
