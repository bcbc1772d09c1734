//! # fairshare-sim
//!
//! Discrete-event engines that replay workloads under fairshare's policies. The `cluster`
//! engine replays task traces on a pool or on machines (the SDRF paper's evaluation); the
//! `process` engine runs clients that cycle over resource queues under bottleneck-based global
//! priorities (the Zeldes–Feitelson simulator). Engines keep integer-microsecond time, take
//! their input as iterators, and never read a clock: [`stats`] times a call for its caller, apart
//! from the results, so the same input gives the same documents byte for byte.
#![warn(missing_docs)]

pub mod cluster;
pub mod process;
pub mod runtime;
pub mod scenario;
pub mod stats;
