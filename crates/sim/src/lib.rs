//! # fairshare-sim
//!
//! Discrete-event engines that replay workloads under fairshare's policies. The `cluster`
//! engine replays task traces on a pool or on machines (the SDRF paper's evaluation); the
//! `process` engine runs clients that cycle over resource queues under bottleneck-based global
//! priorities (the Zeldes–Feitelson simulator). Engines keep integer-microsecond time, take
//! their input as iterators, and never read a clock except to report their own wall time.
#![warn(missing_docs)]

pub mod cluster;
pub mod policy;
pub mod process;
pub mod scenario;
pub mod shard;
pub mod summary;
