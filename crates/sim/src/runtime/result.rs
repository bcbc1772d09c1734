//! A recorded run: every interval's shares, knobs and heaviness, per user and per workload, as
//! reports draw them and `--json` writes them.

use fairshare_core::heaviness::knobs::KnobValues;
use serde::{Deserialize, Serialize};

/// One run of a runtime scenario under one policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeRun {
    /// The scenario.
    pub scenario: String,
    /// The policy: `off`, `heaviness`, `drf-heaviness` or `asset-heaviness`.
    pub policy: String,
    /// The heaviness function, when the service ran.
    pub metric: Option<String>,
    /// The knob profile.
    pub profile: String,
    /// μ, seconds.
    pub interval_s: f64,
    /// The number of intervals.
    pub ticks: u32,
    /// The resources.
    pub resources: Vec<String>,
    /// The nodes.
    pub nodes: Vec<String>,
    /// Per user.
    pub users: Vec<UserSeries>,
    /// Per workload.
    pub workloads: Vec<WorkloadSeries>,
}

/// A scenario run under its policy, with the run without the service beside it when the
/// scenario asks for a baseline: what `fairshare simulate` writes and reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Its JSON starts with `schema_version`: `versioned_json!` below implements serde through these derives.
#[serde(remote = "Self")]
pub struct RuntimeComparison {
    /// The run under the scenario's policy.
    pub service: RuntimeRun,
    /// The run with policy `off` (every weight equal), if made.
    pub baseline: Option<RuntimeRun>,
}

fairshare_core::versioned_json!(RuntimeComparison);

/// A user over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserSeries {
    /// The user.
    pub name: String,
    /// `share[r][k]`: the fraction of the cloud's supply of resource r the user's workloads got
    /// in interval k + 1 (CPU counted in reference CPUs).
    pub share: Vec<Vec<f64>>,
    /// `heaviness[k]`: h_u at the end of interval k + 1 (`None` without the service, or while
    /// the user runs nothing).
    pub heaviness: Vec<Option<f64>>,
}

/// A workload over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSeries {
    /// The workload.
    pub name: String,
    /// Its owner.
    pub owner: String,
    /// Its node.
    pub node: String,
    /// `share[r][k]`: the fraction of its node's supply of resource r it got in interval k + 1.
    pub share: Vec<Vec<f64>>,
    /// `knobs[k]`: the knob values it ran under in interval k + 1 (`None`: not set by the
    /// service, so it ran at the neutral priority's weights without memory protection).
    pub knobs: Vec<Option<KnobValues>>,
    /// `priority_input[k]`: its h_p at the end of interval k + 1.
    pub priority_input: Vec<Option<f64>>,
}

impl RuntimeRun {
    /// The position of a resource by name.
    pub fn resource(&self, name: &str) -> Option<usize> {
        self.resources.iter().position(|r| r == name)
    }

    /// The mean of `series` over intervals `from..=to` (1-based, inclusive); the window must
    /// lie in the series (`1 ≤ from ≤ to ≤ len`), as [`RuntimeRun::steady`]'s does.
    pub fn mean(series: &[f64], from: u32, to: u32) -> f64 {
        let window = &series[(from as usize - 1)..(to as usize)];
        window.iter().sum::<f64>() / window.len() as f64
    }

    /// The intervals counted as steady state: the last quarter of the run (rounded down, at
    /// least the last interval).
    pub fn steady(&self) -> (u32, u32) {
        (self.ticks + 1 - (self.ticks / 4).max(1), self.ticks)
    }
}
