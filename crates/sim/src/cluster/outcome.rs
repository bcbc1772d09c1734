//! What became of each job of a replay, one record per job as the engine settles it: the
//! per-job table a researcher joins back to the trace, streamed rather than kept, so that a
//! replay of millions of jobs lists every one of them in bounded memory.

use fairshare_core::model::{Pin, Task, Time};

/// How a job's replay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobState {
    /// It ran to its end (or to its walltime, when killed there) within the run.
    Finished,
    /// It started but was still running when the run ended (at its horizon).
    Unfinished,
    /// It waited from its submission until the run ended, never starting.
    NeverStarted,
    /// Its owner cancelled it while it waited, at the moment the log records: it was withdrawn
    /// from its queue then, never having started, and is left out of the run's waits.
    Cancelled,
    /// It is larger than the whole capacity, every machine or its queue's limit: it could
    /// never start, and is left out of every wait and slowdown.
    NeverFits,
    /// It arrived after the run's horizon, so it was never submitted.
    BeyondHorizon,
}

impl JobState {
    /// Its name in the per-job table.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Finished => "finished",
            JobState::Unfinished => "unfinished",
            JobState::NeverStarted => "never_started",
            JobState::Cancelled => "cancelled",
            JobState::NeverFits => "never_fits",
            JobState::BeyondHorizon => "beyond_horizon",
        }
    }
}

/// One job of the trace and what the replay did with it, in the trace's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct JobOutcome {
    /// Its id in the trace.
    pub id: u64,
    /// For a task that is part of a job (Google's): the job's id and the task's index in it.
    pub job_part: Option<(u64, u64)>,
    /// Its user's index.
    pub user: u32,
    /// Its queue's index in the trace, if it names one.
    pub queue: Option<u32>,
    /// Its partition's index in the trace, if it names one.
    pub partition: Option<u32>,
    /// Its QOS's index in the trace, if it names one.
    pub qos: Option<u32>,
    /// When it started and ended in the trace, when the trace records it (Slurm dumps, SWF):
    /// what the replay's start and end are compared with.
    pub recorded: Option<(Time, Time)>,
    /// When it was submitted.
    pub submit: Time,
    /// What it asked for, one amount per resource, in the trace's units.
    pub requested: Vec<f64>,
    /// The nodes it asked for, when the trace says.
    pub nodes: Option<u32>,
    /// The walltime it asked for, microseconds (`None`: no request, or a request of 0).
    pub walltime: Option<u64>,
    /// How long it runs once started, microseconds: its recorded runtime, cut at its walltime
    /// when it is killed there, on its node's speed once placed.
    pub runtime: u64,
    /// Whether it ran longer than its walltime request and is killed at it.
    pub killed_at_walltime: bool,
    /// When it started.
    pub start: Option<Time>,
    /// When it ended, when it did within the run.
    pub finish: Option<Time>,
    /// The nodes it held (indices in catalogue order; node 0 for a pool).
    pub machines: Vec<usize>,
    /// What it held of each resource, in the trace's units (empty when it never started).
    pub allocated: Vec<f64>,
    /// How its replay ended.
    pub state: JobState,
    /// When its wait ended: at its start, at its cancellation for a job cancelled while it
    /// waited, or at the run's end for a job that never started (its submission until one of
    /// them is known).
    pub waited_until: Time,
    /// What the log records of it that the replay does not model, when it records something:
    /// it was started as the log started it.
    pub pinned: Option<Pin>,
}

impl JobOutcome {
    /// The record of `task` as it arrives: nothing has happened to it yet.
    pub fn arrived(task: &Task, runtime: u64, killed_at_walltime: bool) -> JobOutcome {
        JobOutcome {
            id: task.id,
            job_part: task.job_part,
            user: task.user,
            queue: task.queue,
            partition: task.partition,
            qos: task.qos,
            recorded: task
                .start
                .map(|start| (start, start.plus_micros(task.runtime))),
            submit: task.submit,
            requested: task.demand.clone(),
            nodes: task.nodes,
            walltime: task.walltime.filter(|w| *w > 0),
            runtime,
            killed_at_walltime,
            start: None,
            finish: None,
            machines: Vec::new(),
            allocated: Vec::new(),
            state: JobState::NeverStarted,
            waited_until: task.submit,
            pinned: task.pinned,
        }
    }

    /// Seconds it waited: until its start, until its cancellation, or until the run ended for
    /// a job that never started; `None` for a job that never fits or was never submitted.
    pub fn wait_s(&self) -> Option<f64> {
        match self.state {
            JobState::NeverFits | JobState::BeyondHorizon => None,
            _ => Some(seconds_between(self.submit, self.waited_until)),
        }
    }

    /// Its bounded slowdown, `max(1, (wait + run) / max(run, 10 s))`, for a job that started
    /// (as the summary counts it: from its start, with the run it has there).
    pub fn bounded_slowdown(&self) -> Option<f64> {
        self.start?;
        Some(super::bounded_slowdown(self.wait_s()?, self.run_s()))
    }

    /// Seconds from its start to its finish, for a job that finished.
    pub fn execution_s(&self) -> Option<f64> {
        Some(seconds_between(self.start?, self.finish?))
    }

    /// Seconds from its submission to its finish, for a job that finished.
    pub fn turnaround_s(&self) -> Option<f64> {
        Some(seconds_between(self.submit, self.finish?))
    }

    /// Its run, seconds (see [`JobOutcome::runtime`]).
    pub fn run_s(&self) -> f64 {
        self.runtime as f64 / 1e6
    }
}

/// Seconds from `from` to `to` (0 when `to` is earlier).
fn seconds_between(from: Time, to: Time) -> f64 {
    to.as_micros().saturating_sub(from.as_micros()) as f64 / 1e6
}
