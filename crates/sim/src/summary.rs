//! The documents a replay or a sweep produces: what was read, what was simulated, and the
//! results per policy. They are what `--json` writes, what `sweep merge` joins and what the
//! report draws.

use crate::cluster::PolicyResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the trace reader saw.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InputCounts {
    /// Lines or events read.
    pub records_read: u64,
    /// Tasks identified in the input (submitted + skipped).
    pub tasks_found: u64,
    /// Tasks not replayed, by reason.
    pub tasks_skipped: BTreeMap<String, u64>,
    /// Records whose job id or pod name an earlier record already had (replayed as tasks of
    /// their own).
    #[serde(default)]
    pub duplicate_ids: u64,
    /// Resources of the trace that no task requests, left out of the replay.
    #[serde(default)]
    pub resources_unused: Vec<String>,
    /// What the reader decided about the input as a whole, in words.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The setting every policy of a replay shares.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Setting {
    /// Trace files, in the order read.
    pub trace: Vec<String>,
    /// Trace format.
    pub format: String,
    /// Resource names.
    pub resources: Vec<String>,
    /// Units of each resource.
    pub units: Vec<String>,
    /// Mean requested amount of each resource over the trace's own timing (R of the SDRF paper).
    pub mean_demand: Vec<f64>,
    /// Capacity of each resource given to the simulator.
    pub capacity: Vec<f64>,
    /// Capacity as a fraction of `mean_demand`, when set that way.
    pub capacity_fraction: Option<f64>,
    /// Number of machines, when the trace's machines are used instead of a pool.
    pub machines: Option<usize>,
    /// Users in the trace (n; each is entitled to 1/n).
    pub users: usize,
    /// Seconds from the first to the last event of the trace.
    pub span_s: f64,
    /// Where the runs stop, seconds from the first event; `None` when they drain.
    pub horizon_s: Option<f64>,
    /// Blocking rule of the passes.
    pub rule: String,
}

/// The output of `fairshare replay`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// What was read.
    #[serde(flatten)]
    pub input: InputCounts,
    /// What was simulated.
    pub setting: Setting,
    /// One result per policy, in the order given.
    pub policies: Vec<PolicyResult>,
}

/// One cell of a sweep: a policy at a capacity fraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepCell {
    /// Capacity as a fraction of the trace's mean demand.
    pub fraction: f64,
    /// ε = 1 − δ for SDRF cells, `None` for the baseline.
    pub epsilon: Option<f64>,
    /// The result (its timeline left empty to keep sweeps small).
    pub result: PolicyResult,
}

/// The output of `fairshare sweep` (one shard or merged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// What was read.
    #[serde(flatten)]
    pub input: InputCounts,
    /// The shared setting (its capacity is that of fraction 1).
    pub setting: Setting,
    /// Shards joined in this file, e.g. `[0, 1, 2]` of `shards`.
    pub shard_ids: Vec<usize>,
    /// Total number of shards the grid was split into.
    pub shards: usize,
    /// The cells, ordered by fraction, then baseline first, then ε descending.
    pub cells: Vec<SweepCell>,
}
