//! Replaying a measured trace: from the tasks kept in memory, or streamed from disk once more,
//! observed job by job when asked.

use super::{LabError, MeasuredTrace};
use crate::load::{project, RecordedRun};
use fairshare_core::model::{Task, Time};
use fairshare_sim::cluster::{self, ClusterConfig, JobOutcome, PolicyResult};
use fairshare_trace::TraceError;

impl MeasuredTrace {
    /// Replays the trace through the engine under `config`, from memory when it was kept,
    /// otherwise streamed from disk once more; `progress` hears the simulated seconds since
    /// the first arrival.
    pub fn run(
        &self,
        config: &ClusterConfig,
        progress: &mut dyn FnMut(u64),
    ) -> Result<PolicyResult, LabError> {
        self.replay(config, progress, None)
    }

    /// [`MeasuredTrace::run`], telling `on_job` what became of every job as the engine settles
    /// it (the engine then keeps every job's outcome until it is settled, which a run without
    /// an observer does not pay for).
    pub fn run_observed(
        &self,
        config: &ClusterConfig,
        progress: &mut dyn FnMut(u64),
        on_job: &mut dyn FnMut(JobOutcome),
    ) -> Result<PolicyResult, LabError> {
        self.replay(config, progress, Some(on_job))
    }

    /// The run behind [`MeasuredTrace::run`] and [`MeasuredTrace::run_observed`] (and the
    /// plan's), observed when `on_job` is given.
    pub(crate) fn replay(
        &self,
        config: &ClusterConfig,
        progress: &mut dyn FnMut(u64),
        on_job: Option<&mut dyn FnMut(JobOutcome)>,
    ) -> Result<PolicyResult, LabError> {
        let origin = self.origin().as_micros();
        // Once per simulated second at most: the engine tells every turn of its loop.
        let mut told = None;
        let progress = |t: Time| {
            let second = t.as_micros().saturating_sub(origin) / 1_000_000;
            if told != Some(second) {
                told = Some(second);
                progress(second);
            }
        };
        let tasks = self.tasks()?;
        let result = match on_job {
            Some(on_job) => cluster::run_observed(config, tasks, progress, on_job),
            None => cluster::run(config, tasks, progress),
        };
        result.map_err(|e| LabError::Run {
            policy: config.policy.to_string(),
            source: Box::new(e),
        })
    }

    /// How each task ran as the trace records it, over the replay's resources, when the tasks
    /// were kept in memory (`None` when they are streamed from disk).
    pub fn recorded_runs(&self) -> Option<impl Iterator<Item = RecordedRun<'_>>> {
        Some(self.kept.as_ref()?.runs(&self.keep))
    }

    /// Whether the tasks were kept in memory after the first pass (at most [`KEEP_AT_MOST`](super::KEEP_AT_MOST)).
    pub fn is_kept(&self) -> bool {
        self.kept.is_some()
    }

    /// The trace's tasks, over the replay's resources: from memory when they were kept,
    /// otherwise read from disk once more.
    pub fn tasks(
        &self,
    ) -> Result<Box<dyn Iterator<Item = Result<Task, TraceError>> + '_>, LabError> {
        Ok(match &self.kept {
            Some(kept) => Box::new(kept.tasks(&self.keep).map(Ok)),
            None => Box::new(self.trace.open()?.map(|task| {
                task.map(|t| Task {
                    demand: project(&t.demand, &self.keep),
                    ..t
                })
            })),
        })
    }
}
