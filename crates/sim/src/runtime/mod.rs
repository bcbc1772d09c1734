//! The runtime engine: workloads already running on nodes, divided by the kernel according to
//! knobs the fairness service sets from heaviness (Poullie et al., `spec/heaviness.md` §10).
//!
//! Time advances in intervals of μ seconds. In interval k each resource of each node is
//! divided among the workloads running there by weighted max–min (water-filling, so nothing
//! is idle while someone wants more): CPU by the CPU weights, disk by the I/O weights, network
//! by the network classes, memory by its protection first and max–min after. At the end of
//! interval k the service sees what each workload got, smooths it, computes heaviness over the
//! whole cloud and sets the knobs that apply in interval k+1. Without the service (`off`) every
//! weight is equal, as a kernel's defaults are.
//!
//! A scenario is a TOML file (format in `docs/runtime.md` and [`RuntimeScenario::from_toml`]);
//! [`run`] records every interval for reports, [`run_observed`] hands each interval to the
//! caller instead, for experiments too large to keep.

mod engine;
mod read;
mod result;

pub use engine::{compare, run, run_observed, RuntimePolicy, Tick, MAX_RECORDED, MAX_TICKS};
pub use read::{read_series, MAX_NODES, MAX_WORKLOADS};
pub use result::{RuntimeComparison, RuntimeRun, UserSeries, WorkloadSeries};

use fairshare_core::heaviness::knobs::{KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{Cloud, HeavinessConfig, Host, Resource, User, Workload};
use serde::Serialize;

/// A loaded runtime scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeScenario {
    /// What it is called in reports (its file, usually).
    pub name: String,
    /// The policy of the service.
    pub policy: RuntimePolicy,
    /// The simulated time, seconds.
    pub duration_s: f64,
    /// Whether a run without the service is made beside, for comparison.
    pub baseline: bool,
    /// The knobs the service sets.
    pub profile: KnobProfile,
    /// The metric's settings (its `update_interval_s` is the interval μ).
    pub heaviness: HeavinessConfig,
    /// How heaviness becomes a priority.
    pub priority: PriorityConfig,
    /// The resources, in the order of every vector.
    pub resources: Vec<Resource>,
    /// The nodes.
    pub nodes: Vec<RuntimeNode>,
    /// The users.
    pub users: Vec<RuntimeUser>,
    /// The workloads.
    pub workloads: Vec<RuntimeWorkload>,
}

impl RuntimeScenario {
    /// The number of intervals simulated.
    pub fn ticks(&self) -> u32 {
        (self.duration_s / self.heaviness.update_interval_s).ceil() as u32
    }

    /// The cloud the service sees: the scenario's nodes and users with these workloads.
    pub fn cloud(&self, workloads: Vec<Workload>) -> Cloud {
        Cloud {
            resources: self.resources.clone(),
            nodes: self
                .nodes
                .iter()
                .map(|n| Host {
                    supply: n.supply.clone(),
                    speed: n.speed,
                })
                .collect(),
            users: self
                .users
                .iter()
                .map(|u| User {
                    quota: u.quota.clone(),
                })
                .collect(),
            workloads,
        }
    }
}

/// A node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeNode {
    /// Its name.
    pub name: String,
    /// Supply per resource: CPUs, bytes per second, bytes of memory.
    pub supply: Vec<f64>,
    /// Speed factor of its CPUs against the reference.
    pub speed: f64,
}

/// A user.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeUser {
    /// Its name.
    pub name: String,
    /// Quota per resource (virtual scale), or none for an equal split.
    pub quota: Option<Vec<f64>>,
}

/// A workload: who owns it, where it runs, its virtual size and its demand over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeWorkload {
    /// Its name.
    pub name: String,
    /// Position of its owner in [`RuntimeScenario::users`].
    pub owner: usize,
    /// Position of its node in [`RuntimeScenario::nodes`].
    pub node: usize,
    /// Virtual size per resource (VCPUs, memory bytes; others unused).
    pub size: Vec<f64>,
    /// What it would use if nothing held it back, over time.
    pub demand: Demand,
    /// When it starts, seconds.
    pub start_s: f64,
    /// When it stops, seconds, if it does.
    pub stop_s: Option<f64>,
}

impl RuntimeWorkload {
    /// Whether the workload runs in the interval starting at `t` seconds.
    pub fn runs_at(&self, t: f64) -> bool {
        self.start_s <= t && self.stop_s.is_none_or(|stop| t < stop)
    }
}

/// Demand as a step function of time: each step holds from its time until the next; nothing
/// before the first. A constant demand is one step at 0; a CSV time series is one step a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demand {
    /// (from when, seconds; demand per resource), by time.
    pub steps: Vec<(f64, Vec<f64>)>,
}

impl Demand {
    /// The demand during the interval starting at `t`.
    pub fn at(&self, t: f64) -> Option<&[f64]> {
        let after = self.steps.partition_point(|(from, _)| *from <= t);
        after.checked_sub(1).map(|i| self.steps[i].1.as_slice())
    }
}
