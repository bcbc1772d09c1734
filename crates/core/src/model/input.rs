//! What a workload reader saw of its input: the honest account that travels with every result.
//!
//! Readers count as they read; a replay adds which resources it left out; the summaries carry
//! the same record into their JSON, so a reader's count and a report's row are one value.

use super::Time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a reader has read, yielded and left out.
///
/// Its JSON holds what a result document reports (records read, tasks found and skipped,
/// repeated ids, resources left out, notes); the reader's own bookkeeping (records ignored,
/// tasks yielded, the most tasks held at once) stays out of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStats {
    /// Records read: data lines, events or rows (comment lines are not records).
    pub records_read: u64,
    /// Records that carry no task of their own and were set aside, by reason.
    #[serde(skip)]
    pub records_ignored: BTreeMap<String, u64>,
    /// Tasks met in the input (a malformed record counts as one task, skipped).
    pub tasks_found: u64,
    /// Tasks handed to the caller.
    #[serde(skip)]
    pub tasks_yielded: u64,
    /// Tasks left out, by reason.
    pub tasks_skipped: BTreeMap<String, u64>,
    /// The most tasks held in memory at once (in flight or waiting to be yielded in order).
    #[serde(skip)]
    pub peak_held: u64,
    /// Records whose job id (SWF) or pod name (Alibaba) an earlier record already had; they are
    /// read as tasks of their own, and counted here so that a merged or repeated log shows.
    #[serde(default)]
    pub duplicate_ids: u64,
    /// Resources of the input that no task requests, left out of a replay.
    #[serde(default)]
    pub resources_unused: Vec<String>,
    /// What the reader decided about the input as a whole, in words (e.g. whether an SWF log's
    /// memory is a resource, and why), for the user to see.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Processors of the machine the log's header declares (SWF `MaxProcs`), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_processors: Option<u64>,
    /// Nodes of the machine the log's header declares (SWF `MaxNodes`), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_nodes: Option<u64>,
    /// The earliest time any record gives, yielded or skipped (readers that track it: Slurm
    /// accounting dumps).
    #[serde(skip)]
    pub first_event: Option<Time>,
    /// The latest time any record gives or implies, yielded or skipped: for a Slurm dump, the
    /// moment it was taken as far as it tells (a running job's start plus its elapsed time).
    #[serde(skip)]
    pub last_event: Option<Time>,
    /// When each job a Slurm dump says its backfill scheduler started (`Flags` with
    /// `SchedBackfill`) began, which tells the phase of the backfill's cycles; `None` when the
    /// input does not say which jobs the backfill started.
    #[serde(skip)]
    pub backfill_starts: Option<Vec<Time>>,
}

impl ReadStats {
    /// The number of tasks skipped for any reason.
    pub fn skipped(&self) -> u64 {
        self.tasks_skipped.values().sum()
    }

    /// Whether every task found was yielded or skipped (true once a stream has ended normally).
    pub fn reconciles(&self) -> bool {
        self.tasks_found == self.tasks_yielded + self.skipped()
    }
}
