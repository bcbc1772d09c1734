//! Accounting, the first step of every mechanism: what a client consumed, and how the past is
//! forgotten.
//!
//! - [`penalty`]: what one job is charged on a cluster of different machines — MetaCentrum's
//!   Processor Equivalent, and Maui's system-wide one.
//! - [`metric`]: the usage metrics a fairshare policy prices jobs with (CPU time, Maui's and
//!   MetaCentrum's Processor Equivalent, dominant share, Slurm's TRES billing), one file each,
//!   listed in [`metric::METRICS`].
//! - [`decay`]: the one type of every forgetting model (half-life, steps, Slurm's ticks, with
//!   its `slurm` module's closed forms), and the exponential average of SDRF's commitments.
//! - [`ledger`]: every client's decayed usage, in closed form; the rankers that keep usage keep
//!   it there.
//! - [`reset`]: Slurm's `PriorityUsageResetPeriod`, usage zeroed at calendar boundaries.
//! - [`window`]: the exact sliding windows of the bottleneck mechanism.

pub mod decay;
pub mod ledger;
pub mod metric;
pub mod penalty;
pub mod reset;
mod slurm;
pub mod window;
