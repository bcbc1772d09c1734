//! The fairshare node agent: the fairness service of spec `heaviness.md` acting on one Linux
//! host. Every μ seconds it lists the workloads (the child cgroups of configured parents),
//! reads their CPU, memory and I/O counters, reports the interval's usage to the daemon (or,
//! standalone, computes the node's heaviness itself with the daemon's own cycle function), and
//! writes each workload's CPU weight, I/O weight and memory protection, so heavy users yield
//! to light ones. cgroup v1, v2 and hybrid hosts are all handled through one [`cgroup::Layout`].

pub mod agent;
pub mod cgroup;
pub mod config;
pub mod fake;
pub mod link;
pub mod meter;
pub mod owner;
pub mod run;

pub use agent::{Agent, CycleReport, ManagedCgroup, Measurement, Source, Supply, Write};
pub use config::AgentConfig;
