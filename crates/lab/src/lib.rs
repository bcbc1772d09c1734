//! # fairshare-lab
//!
//! Experiments with fairshare's policies on real traces, as a library: what `fairshare replay`
//! and `fairshare sweep` do, for a notebook, a test or a service to call directly.
//!
//! A [`MeasuredTrace`] is a trace measured by one streaming pass (its users, its span, the mean
//! requested amount R of each resource) and kept in memory when small enough; it then gives
//! the capacity of a run (a pool of a fraction of R, an explicit pool, or a machine list), the
//! engine's configuration for a policy, and the replay itself. [`ReplayPlan`] is the whole of
//! `fairshare replay` as three calls (assemble the capacity, shares, accounts and queues once;
//! run each policy; gather the summary). [`sweep`] is the SDRF paper's grid of discount factors
//! × capacities, split in shards and merged.
//!
//! ```no_run
//! use fairshare_lab::{Replay, TraceSpec, MeasuredTrace};
//!
//! let trace = TraceSpec::new(vec!["wagap-2013.swf".into()]);
//! let measured = MeasuredTrace::scan(&trace, &mut |_| {})?;
//! let capacity = measured.pool_of_mean(0.5)?;
//! let settings = Replay::default();
//! let policy = "sdrf:delta=0.9999".parse()?;
//! let result = measured.run(&measured.config(&settings, policy, capacity), &mut |_| {})?;
//! println!("{} tasks completed", result.tasks_completed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod baa;
pub mod cloud;
pub mod draw;
mod error;
pub mod input;
pub mod jobs;
mod kept;
mod load;
pub mod penalty;
mod priorities;
mod replay;
pub mod runs;
pub mod shard;
pub mod shares;
pub mod simulation;
pub mod site_defaults;
pub mod site_limits;
pub mod site_nodes;
pub mod slurm_conf;
pub mod summary;
pub mod sweep;
mod trace;
pub mod trust;
pub mod whatif;

pub use error::LabError;
pub use load::{
    recorded_shares, AsRecorded, Load, Recorded, RecordedPeak, RecordedRun, RecordedShares,
};
pub use priorities::{
    utc_date, Moment, Priorities, PrioritiesDocument, PrioritiesRequest, PriorityRow,
};
pub use replay::{distinct, CapacitySource, ReplayPlan, ReplayRequest};
pub use shares::{account_results, Entitled, ShareSource};
pub use trace::{
    MeasuredTrace, Queues, Replay, StopRule, TraceSpec, KEEP_AT_MOST, MOST_MACHINES, PROGRESS_EVERY,
};
