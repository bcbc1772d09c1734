//! Runtime heaviness: how much heavier than its entitlement each cloud user runs right now.
//!
//! Poullie, Mannhart and Stiller's fairness service (seed 003, `spec/heaviness.md`) does not
//! decide who starts next, as the other policies do: the workloads are already running, and the
//! service steers how the kernel divides each node between them. Every interval it measures
//! what each workload (VM, container, cgroup) consumed, compares it with what the workload was
//! endowed with (its share of its node, from its virtual size), charges the user for the size of
//! their workloads even when idle and credits them their unused quota, and turns the resulting
//! *heaviness* into proportional priorities — CPU weights, I/O weights, memory protection — so
//! heavy users yield to light ones.
//!
//! This module is that computation, pure like every policy here: the caller brings the
//! [`Cloud`] (nodes, users, workloads and what each used), [`heaviness`] returns each user's and
//! each workload's heaviness with its parts, and [`knobs`] maps a workload's heaviness to knob
//! values for cgroup v1, cgroup v2, libvirt or the paper's own ranges. The simulator, the daemon
//! and the node agent all call these two functions and nothing else.
//!
//! ```
//! use fairshare_core::heaviness::*;
//!
//! // spec §7.5: one host, CPU and disk, users d (two VMs) and e (one VM).
//! let cloud = Cloud {
//!     resources: vec![Resource::new("cpu", ResourceKind::Cpu), Resource::new("disk", ResourceKind::Disk)],
//!     nodes: vec![Host::new(vec![20.0, 1000.0])],
//!     users: vec![User::default(), User::default()],
//!     workloads: vec![
//!         Workload::new(0, 0, vec![2.0, 0.0]).using(vec![8.0, 100.0]),
//!         Workload::new(0, 0, vec![2.0, 0.0]).using(vec![8.0, 0.0]),
//!         Workload::new(1, 0, vec![2.0, 0.0]).using(vec![4.0, 600.0]),
//!     ],
//! };
//! let config = HeavinessConfig { overcommit: Overcommit::none(), ..HeavinessConfig::default() };
//! let h = heaviness(&cloud, &config)?;
//! assert!((h.users[0].heaviness - 0.2).abs() < 1e-6);
//! assert!((h.workloads[2].dynamic - 0.133333).abs() < 1e-6);
//! # Ok::<(), HeavinessError>(())
//! ```

mod cloud;
mod config;
mod endowment;
pub mod knobs;
mod metric;
#[cfg(test)]
mod tests;

pub use cloud::{Cloud, HeavinessError, Host, Resource, ResourceKind, User, Workload};
pub use config::{EndowmentMode, HeavinessConfig, Metric, Overcommit};
pub use endowment::{cloud_supply, user_endowments, workload_endowments};
pub use metric::{
    heaviness, jain_index, smooth, vm_heaviness, Heaviness, UserHeaviness, WorkloadHeaviness,
};
