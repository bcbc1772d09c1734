//! The documents a replay or a sweep produces: what was read, what was simulated, and the
//! results per policy. They are what `--json` writes, what `sweep merge` joins and what the
//! report draws.
//!
//! Every document `fairshare` writes starts with `schema_version` ([`SCHEMA_VERSION`], the
//! layout `docs/json.md` describes), through the core's
//! [`versioned_json!`](fairshare_core::versioned_json). They live in the lab, which builds them
//! from the engine's results; the simulator's own documents (a process or runtime scenario's)
//! live beside its engines.

use crate::load::Recorded;
pub use fairshare_core::document::SCHEMA_VERSION;
use fairshare_core::model::Time;
use fairshare_sim::cluster::PolicyResult;
use serde::{Deserialize, Serialize};

fairshare_core::versioned_json!(ReplaySummary, SweepSummary);

pub use fairshare_core::model::ReadStats;

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
    /// The fill rule of the passes: `head-of-line` or `skip`.
    pub rule: String,
    /// The scheduler: `fill`, `easy` or `conservative`.
    #[serde(default = "fill")]
    pub scheduler: String,
    /// The placement: `first` or `best` fit.
    #[serde(default = "first")]
    pub placement: String,
    /// What happens to a job that ran longer than its walltime request: `kill` or `extend`.
    #[serde(default = "extend")]
    pub overrun: String,
    /// The seed the Slurm scheduler's background-loop turns within each second were drawn
    /// with (`--turn-seed`), when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_seed: Option<u64>,
    /// How many of the Slurm scheduler's background-loop turns `slurmctld`'s log showed
    /// (`--slurmctld-log`), when the loop's turns were read from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_turns_shown: Option<usize>,
    /// How many starts of the controller `slurmctld`'s log showed (`--slurmctld-log`), which
    /// time its background loop's passes down the whole queue, when the loop's turns were
    /// read from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_starts_shown: Option<usize>,
    /// How many of the Slurm scheduler's backfill cycles `slurmctld`'s log showed
    /// (`--slurmctld-log`), when the cycles were read from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill_cycles_shown: Option<usize>,
    /// Where the capacity came from, in words.
    #[serde(default)]
    pub capacity_source: String,
    /// What a reader should doubt of the capacity (a machine sized from a log's own schedule
    /// that the schedule used far less of), when anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_doubt: Option<String>,
    /// Where the users' shares came from, in words (empty: equal).
    #[serde(default)]
    pub shares: String,
    /// Where the queues' limits and priorities came from, in words (empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub queues: String,
    /// What the trace says of the jobs' walltimes and of its own schedule.
    #[serde(default)]
    pub recorded: Recorded,
    /// The window in which each policy's jobs were recorded, node by node, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_view: Option<MachineView>,
}

/// A window of the replay whose jobs each result lists, and the nodes they ran on: what the
/// page's view of the machines draws.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MachineView {
    /// The first event, on the trace's clock (the jobs' times count from it).
    pub origin: Time,
    /// Start of the window, seconds after the first event.
    pub from_s: f64,
    /// End of the window, seconds after the first event.
    pub to_s: f64,
    /// Every node, in catalogue order (the order of `JobRecord::placed`'s indices).
    pub nodes: Vec<NodeLane>,
    /// Every user's name, by the index `JobRecord::user` gives.
    pub users: Vec<String>,
}

/// One node of a [`MachineView`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NodeLane {
    /// Its name: its type's, numbered from 1 within a type of several (`pool` for a pool).
    pub name: String,
    /// Its processors (the replay's first resource).
    pub processors: f64,
}

/// The default scheduler of documents written before there was a choice.
fn fill() -> String {
    "fill".into()
}

/// The default placement of documents written before there was a choice.
fn first() -> String {
    "first".into()
}

/// The overrun rule of documents written before there was a choice: jobs ran in full.
fn extend() -> String {
    "extend".into()
}

/// The output of `fairshare replay` (its JSON starts with `schema_version`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ReplaySummary {
    /// What was read.
    #[serde(flatten)]
    pub input: ReadStats,
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

/// The output of `fairshare sweep`, one shard or merged (its JSON starts with
/// `schema_version`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SweepSummary {
    /// What was read.
    #[serde(flatten)]
    pub input: ReadStats,
    /// The shared setting (its capacity is that of fraction 1).
    pub setting: Setting,
    /// Shards joined in this file, e.g. `[0, 1, 2]` of `shards`.
    pub shard_ids: Vec<usize>,
    /// Total number of shards the grid was split into.
    pub shards: usize,
    /// The cells, ordered by fraction, then baseline first, then ε descending.
    pub cells: Vec<SweepCell>,
}

/// The BAA-T paper's experiment (`fairshare baa experiment`, `spec/baa.md` §8): users who each
/// bring 1/n of the resources join one by one, and after each join (then for some epochs
/// without joins) each policy's use of the resources and of the two bottleneck sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaaSummary {
    /// Layout version of this JSON document ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Where the users' demands came from, in words.
    pub source: String,
    /// The seed of the sampling.
    pub seed: u64,
    /// How many users join.
    pub users: usize,
    /// Per epoch, how many users have joined.
    pub joined: Vec<usize>,
    /// Per epoch, how many users are in the CPU set and in the memory set.
    pub cpu_set: Vec<usize>,
    /// See `cpu_set`.
    pub memory_set: Vec<usize>,
    /// One series per policy, in the order run.
    pub policies: Vec<BaaSeries>,
}

/// A BAA timeline run (`fairshare baa timeline`): each user's allocation epoch by epoch and
/// what it received of its bottleneck in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineSummary {
    /// Layout version of this JSON document ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The policy as the timeline writes it.
    pub policy: String,
    /// Resource names, in order.
    pub resources: Vec<String>,
    /// User names, in the timeline's order.
    pub users: Vec<String>,
    /// Each user's bottleneck resource.
    pub bottleneck: Vec<String>,
    /// Per epoch, per user, per resource: what it held (zero before it joined and after it
    /// left), in the timeline's units.
    pub allocations: Vec<Vec<Vec<f64>>>,
    /// Per user, what it received of its bottleneck over all epochs.
    pub received: Vec<f64>,
}

/// One policy's use over the epochs of a [`BaaSummary`], each a fraction of the capacity
/// present then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaaSeries {
    /// The policy.
    pub policy: String,
    /// CPU in use.
    pub cpu: Vec<f64>,
    /// Memory in use.
    pub memory: Vec<f64>,
    /// CPU held by the CPU set's users.
    pub cpu_set_cpu: Vec<f64>,
    /// Memory held by the CPU set's users.
    pub cpu_set_memory: Vec<f64>,
    /// CPU held by the memory set's users.
    pub memory_set_cpu: Vec<f64>,
    /// Memory held by the memory set's users.
    pub memory_set_memory: Vec<f64>,
    /// Epochs in which some CPU-set user held less CPU than some memory-set user, or some
    /// memory-set user less memory than some CPU-set user (envy across sets).
    pub envious_epochs: usize,
    /// BAA-T only, per epoch: the within-set spread of what members have received since their
    /// origin, `(max − min) / max`, the largest over the sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<f64>,
    /// BAA-T only, per epoch: how much of the water-filled allocation was kept when blending
    /// it back to fit the capacities (1: all of it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep() -> SweepSummary {
        SweepSummary {
            input: ReadStats {
                records_read: 3,
                ..ReadStats::default()
            },
            setting: Setting::default(),
            shard_ids: vec![0],
            shards: 1,
            cells: Vec::new(),
        }
    }

    #[test]
    fn every_document_starts_with_its_layout_version() {
        let replay = ReplaySummary {
            input: ReadStats::default(),
            setting: Setting::default(),
            policies: Vec::new(),
        };
        for json in [
            serde_json::to_string(&replay).unwrap(),
            serde_json::to_string(&sweep()).unwrap(),
        ] {
            assert!(json.starts_with("{\"schema_version\":1,"), "{json}");
        }
        let flattened = serde_json::to_value(sweep()).unwrap();
        assert_eq!(flattened["records_read"], 3, "input counts stay at the top");
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let json = serde_json::to_string(&sweep()).unwrap();
        assert_eq!(
            serde_json::from_str::<SweepSummary>(&json).unwrap(),
            sweep()
        );
    }

    #[test]
    fn another_or_no_layout_version_is_refused() {
        let mut json = serde_json::to_value(sweep()).unwrap();
        json["schema_version"] = 2.into();
        let error = serde_json::from_value::<SweepSummary>(json.clone()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "schema_version 2: this fairshare reads schema_version 1"
        );
        json.as_object_mut().unwrap().remove("schema_version");
        let error = serde_json::from_value::<SweepSummary>(json).unwrap_err();
        assert!(error.to_string().contains("schema_version"), "{error}");
    }
}
