//! The `cluster` engine: trace-driven job scheduling under any policy, scheduler and
//! placement.
//!
//! Jobs arrive at their submit time into per-user FIFO queues and run for their recorded
//! runtime once placed. At every instant with an arrival or a finish the engine processes all
//! finishes, then all arrivals, then runs one scheduling pass: the policy orders the users by
//! their oldest waiting job, the [`Scheduler`] decides what starts (progressive filling as in
//! SDRF's Algorithm 1, docs/mechanisms.md §8.3, or EASY or conservative backfilling), and the
//! [`Placement`] chooses nodes. Jobs are pulled from an iterator as they come due, so a trace
//! is never held in memory.
//!
//! Backfilling plans with each job's requested walltime. A job that ran longer than it asked
//! for is killed at its request, as sites do ([`Overrun::Kill`], the default, counted in the
//! results), or replayed for its whole recorded runtime with its request raised to that
//! runtime ([`Overrun::Extend`]); a job without a request is planned with its runtime, a
//! perfect estimate. Either way no plan is ever overrun.

mod config;
mod engine;
mod limits;
mod meter;
mod outage;
mod outcome;
mod overrun;
mod placement;
mod profile;
mod recorder;
mod result;
mod scheduler;
mod space;
mod statistics;
mod waiting;

pub use config::{ClusterConfig, Partition, QueueLimit, Stop, Window};
pub use limits::{Cap, Limit, Scope};
pub use outage::Outage;
pub use outcome::{JobOutcome, JobState};
pub use overrun::Overrun;
pub use placement::{
    BestFit, FirstFit, JobPlacement, NodeLoad, Placement, PlacementEntry, SlurmNodes,
};
pub use recorder::MOST_SAMPLES;
pub use result::{
    AccountResult, JobRecord, Opened, PolicyResult, ShareSeries, Timeline, UserResult,
    SLOWDOWN_FLOOR_S, TOP_USERS,
};
pub use scheduler::{
    Arrival, AtEveryEvent, Conservative, Easy, EndRelease, Fill, Happened, LoopTurns, PassKind,
    Planning, Release, Reservations, Scheduler, SchedulerEntry, SchedulerSettings, SchedulingPass,
    Slurm, SlurmParameters, Standing, Timing,
};
pub use space::{Capacity, MOST_MACHINES};
pub use statistics::{bounded_slowdown, jain, mean, percentile, percentiles, quantiles, QUANTILES};

use engine::replay;
pub use fairshare_core::model::Task;
use fairshare_core::model::Time;
use fairshare_core::rank::RankError;
use thiserror::Error;

/// A run that cannot proceed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SimError {
    /// Arrivals must come in submit order.
    #[error("arrival at {got} after one at {previous}: arrivals must be in submit order")]
    OutOfOrder {
        /// The earlier arrival's time.
        previous: Time,
        /// The offending arrival's time.
        got: Time,
    },
    /// An arrival names a user beyond the configured ones or has the wrong demand length.
    #[error("arrival of user {user}: {problem}")]
    BadArrival {
        /// The user index.
        user: u32,
        /// What is wrong.
        problem: String,
    },
    /// The capacity is unusable.
    #[error("capacity: {0}")]
    Capacity(String),
    /// The ranker refused what the engine told it.
    #[error("ranking")]
    Rank(#[source] RankError),
    /// An outage names a node the run's machines do not have.
    #[error("outage {outage}: no node of the run is named {host}")]
    UnknownHost {
        /// The outage's name.
        outage: String,
        /// The host it names.
        host: String,
    },
    /// The policy cannot rank this engine's users.
    #[error("policy {policy}: {problem}")]
    Policy {
        /// The policy as written.
        policy: String,
        /// Why it cannot be used.
        problem: String,
    },
}

/// Replays `arrivals` (in submit order) under `config`.
pub fn run<E>(
    config: &ClusterConfig,
    arrivals: impl Iterator<Item = Result<Task, E>>,
    progress: impl FnMut(Time),
) -> Result<PolicyResult, RunError<E>> {
    replay(config, arrivals, progress, None)
}

/// Replays `arrivals` (in submit order) under `config`, telling `on_job` what became of every
/// job as soon as that is settled: at its finish, at its arrival when it can never fit, after
/// the horizon for the jobs beyond it, and at the end for those still running or waiting.
pub fn run_observed<E>(
    config: &ClusterConfig,
    arrivals: impl Iterator<Item = Result<Task, E>>,
    progress: impl FnMut(Time),
    on_job: &mut dyn FnMut(JobOutcome),
) -> Result<PolicyResult, RunError<E>> {
    replay(config, arrivals, progress, Some(on_job))
}

/// Why a run stopped early: the engine refused, or the input failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunError<E> {
    /// The engine refused the input.
    #[error(transparent)]
    Sim(SimError),
    /// Reading the input failed.
    #[error(transparent)]
    Input(E),
}
