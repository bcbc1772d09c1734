//! The per-job table: one CSV row per job of the trace and policy, streamed as each replay
//! settles its jobs, so that listing every job of a million-job trace costs a file, not memory.
//!
//! Columns carry Batsim's names (`jobs.csv`) where they mean the same thing, so the tools
//! researchers already point at Batsim's output read it; fairshare's own columns follow. Times
//! are seconds in the trace's own clock, as `fairshare.read()` gives them, so rows join back to
//! the trace by `job_id` (and `task_index` for Google's). docs/python.md (`Result.jobs`)
//! defines each column, docs/json.md the file.

use crate::{LabError, ReplayPlan};
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_sim::cluster::{JobOutcome, JobState, PolicyResult};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// What turns a replay's job outcomes into rows: the names behind the engine's indices.
pub struct JobTable {
    resources: Vec<String>,
    users: Vec<String>,
    accounts: Option<Vec<String>>,
    queues: Vec<String>,
    partitions: Vec<String>,
    qos: Vec<String>,
    /// Each task's job as the trace names it, by task id (empty: the ids are the trace's).
    job_names: std::sync::Arc<[String]>,
    /// Node names by catalogue index; `None` for a pool.
    nodes: Option<Vec<String>>,
}

/// The columns after the allocated amounts: where the trace says where and when the job ran,
/// what it says and how far the replay's start is from it.
const TRAILING: [&str; 5] = [
    "partition",
    "qos",
    "recorded_starting_time",
    "recorded_finish_time",
    "starting_time_error",
];

/// The table's columns before the per-resource ones.
const LEADING: [&str; 9] = [
    "policy",
    "id",
    "job_id",
    "task_index",
    "user",
    "account",
    "queue",
    "submission_time",
    "requested_number_of_resources",
];

/// The columns after the requested amounts and before the allocated ones.
const MIDDLE: [&str; 14] = [
    "requested_nodes",
    "requested_time",
    "runtime",
    "success",
    "final_state",
    "killed_at_walltime",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "bounded_slowdown",
    "allocated_resources",
];

impl JobTable {
    /// The names of `plan`'s resources, users, accounts, queues and nodes.
    pub fn of(plan: &ReplayPlan<'_>) -> JobTable {
        let measured = plan.measured();
        let capacity = plan.capacity();
        let nodes = (capacity.machines().is_some())
            .then(|| capacity.named_nodes().into_iter().map(|(n, _)| n).collect());
        JobTable {
            resources: measured.resources.clone(),
            users: measured.users.clone(),
            accounts: plan.user_accounts(),
            queues: measured.queues.clone(),
            partitions: measured.partitions.clone(),
            qos: measured.qos.clone(),
            job_names: measured.job_names.clone(),
            nodes,
        }
    }

    /// The header row.
    pub fn header(&self) -> Vec<String> {
        let named = |prefix: &'static str| {
            let resources = self.resources.iter();
            resources.map(move |r| format!("{prefix}{r}"))
        };
        (LEADING.iter().map(|c| c.to_string()))
            .chain(named("requested_"))
            .chain(MIDDLE.iter().map(|c| c.to_string()))
            .chain(named("allocated_"))
            .chain(TRAILING.iter().map(|c| c.to_string()))
            .collect()
    }

    /// The trace's own id of `job`: its name in the trace when the reader kept one (a Slurm
    /// dump's `JobID`), its job's id when it is a part of one (Google's), else its id.
    fn job_id(&self, job: &JobOutcome) -> String {
        match (self.job_names.get(job.id as usize), job.job_part) {
            (Some(name), _) => name.clone(),
            (None, Some((id, _))) => id.to_string(),
            (None, None) => job.id.to_string(),
        }
    }

    /// The row of `job` replayed under `policy`, matching [`JobTable::header`].
    pub fn row(&self, policy: &str, job: &JobOutcome) -> Vec<String> {
        let user = job.user as usize;
        let name = |names: &[String], i: usize| names.get(i).cloned().unwrap_or_default();
        let started = job.start.is_some();
        let finished = job.state == JobState::Finished;
        let (execution, turnaround) = (job.execution_s(), job.turnaround_s());
        let stretch = turnaround.zip(execution).filter(|(_, e)| *e > 0.0);
        let mut row = vec![
            policy.to_owned(),
            job.id.to_string(),
            self.job_id(job),
            job.job_part
                .map_or(String::new(), |(_, index)| index.to_string()),
            name(&self.users, user),
            (self.accounts.as_ref()).map_or(String::new(), |a| name(a, user)),
            job.queue
                .map_or(String::new(), |q| name(&self.queues, q as usize)),
            seconds(job.submit),
            number(job.requested.first().copied()),
        ];
        row.extend(job.requested.iter().map(|r| number(Some(*r))));
        row.extend([
            job.nodes.map_or(String::new(), |n| n.to_string()),
            number(job.walltime.map(|w| w as f64 / 1e6)),
            number(Some(job.run_s())),
            u8::from(finished && !job.killed_at_walltime).to_string(),
            job.state.name().to_owned(),
            u8::from(job.killed_at_walltime).to_string(),
            number(job.start.map(|s| s.as_micros() as f64 / 1e6)),
            number(execution),
            number(job.finish.map(|f| f.as_micros() as f64 / 1e6)),
            number(job.wait_s()),
            number(turnaround),
            number(stretch.map(|(t, e)| t / e)),
            number(job.bounded_slowdown()),
            self.machines(job),
        ]);
        if started {
            row.extend(job.allocated.iter().map(|a| number(Some(*a))));
        } else {
            row.extend(self.resources.iter().map(|_| String::new()));
        }
        let error = job
            .start
            .zip(job.recorded)
            .map(|(s, (r, _))| (s.as_micros() as f64 - r.as_micros() as f64) / 1e6);
        row.extend([
            job.partition
                .map_or(String::new(), |p| name(&self.partitions, p as usize)),
            job.qos
                .map_or(String::new(), |q| name(&self.qos, q as usize)),
            number(job.recorded.map(|(s, _)| s.as_micros() as f64 / 1e6)),
            number(job.recorded.map(|(_, e)| e.as_micros() as f64 / 1e6)),
            number(error),
        ]);
        row
    }

    /// The nodes a job held, by name, separated by spaces (empty in a pool).
    fn machines(&self, job: &JobOutcome) -> String {
        let Some(nodes) = &self.nodes else {
            return String::new();
        };
        let names = job.machines.iter().filter_map(|m| nodes.get(*m));
        names.cloned().collect::<Vec<_>>().join(" ")
    }
}

impl ReplayPlan<'_> {
    /// Replays `policy` as [`ReplayPlan::run`] does, writing the row of every job of the trace
    /// to `rows` as the replay settles it (no header: see [`JobTable::header`]), and showing
    /// each job to `watch` too.
    pub fn run_listing(
        &self,
        policy: &PolicySpec,
        progress: &mut dyn FnMut(u64),
        rows: &mut dyn Write,
        watch: &mut dyn FnMut(&JobOutcome),
    ) -> Result<PolicyResult, LabError> {
        let table = JobTable::of(self);
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(rows);
        let mut failed = None;
        let mut on_job = |job: JobOutcome| {
            watch(&job);
            if failed.is_none() {
                failed = csv.write_record(table.row(&policy.name, &job)).err();
            }
        };
        let result = self.run_observed(policy, progress, &mut on_job)?;
        let failed = failed.map_or_else(|| csv.flush().err().map(csv::Error::from), Some);
        match failed {
            Some(e) => Err(LabError::Unusable(format!(
                "writing the per-job table: {e}"
            ))),
            None => Ok(result),
        }
    }
}

/// The per-job table while parallel runs write it: one file of rows per policy in a folder of
/// its own, joined under one header when every run is done (in the policies' order, so that
/// the table is the same whichever run finished first) into its file or standard output.
pub struct JobParts {
    folder: tempfile::TempDir,
    /// The table's file; `None`: standard output.
    table: Option<PathBuf>,
}

impl JobParts {
    /// The parts of the table at `path`, in a folder beside it (so joining them stays on one
    /// file system).
    pub fn beside(path: &Path) -> Result<JobParts, LabError> {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let folder = tempfile::Builder::new()
            .prefix(".fairshare-jobs-")
            .tempdir_in(parent.unwrap_or(Path::new(".")))
            .map_err(|source| written(path, source))?;
        let table = Some(path.to_path_buf());
        Ok(JobParts { folder, table })
    }

    /// The parts of a table written to standard output, in a folder of the system's
    /// temporary directory.
    pub fn to_stdout() -> Result<JobParts, LabError> {
        let at = std::env::temp_dir();
        let folder = tempfile::Builder::new()
            .prefix(".fairshare-jobs-")
            .tempdir_in(&at)
            .map_err(|source| written(&at, source))?;
        Ok(JobParts {
            folder,
            table: None,
        })
    }

    /// The part of the `i`th policy.
    fn part(&self, i: usize) -> PathBuf {
        self.folder.path().join(format!("{i}.csv"))
    }

    /// Replays `policy`, the `i`th, writing its rows to its part and showing each job to
    /// `watch`.
    pub fn run(
        &self,
        plan: &ReplayPlan,
        (i, policy): (usize, &PolicySpec),
        progress: &mut dyn FnMut(u64),
        watch: &mut dyn FnMut(&JobOutcome),
    ) -> Result<PolicyResult, LabError> {
        let path = self.part(i);
        let file = File::create(&path).map_err(|source| written(&path, source))?;
        plan.run_listing(policy, progress, &mut BufWriter::new(file), watch)
    }

    /// Writes the table of the runs of `policies` policies of `plan` to its file or standard
    /// output, and removes the parts. A reader of standard output that has gone away
    /// (`| head`) wants no more of it: that is no error.
    pub fn join(self, plan: &ReplayPlan, policies: usize) -> Result<(), LabError> {
        let parts: Vec<PathBuf> = (0..policies).map(|i| self.part(i)).collect();
        let table = JobTable::of(plan);
        match &self.table {
            Some(path) => {
                let file = File::create(path).map_err(|source| written(path, source))?;
                join(&table, &parts, &mut BufWriter::new(file))
                    .map_err(|source| written(path, source))
            }
            None => match join(&table, &parts, &mut std::io::stdout().lock()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(written(Path::new("standard output"), e))
                }
                _ => Ok(()),
            },
        }
    }
}

impl ReplayPlan<'_> {
    /// Replays `policy`, the `i`th, writing its rows to its part of `parts` when given.
    pub fn run_into(
        &self,
        parts: Option<&JobParts>,
        (i, policy): (usize, &PolicySpec),
        progress: &mut dyn FnMut(u64),
    ) -> Result<PolicyResult, LabError> {
        match parts {
            Some(parts) => parts.run(self, (i, policy), progress, &mut |_| {}),
            None => self.run(policy, progress),
        }
    }
}

/// The error of a table that could not be written to `path`.
fn written(path: &Path, source: std::io::Error) -> LabError {
    LabError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes the whole per-job table to `out`: `table`'s header, then each of `parts` as it is
/// (the rows of one policy each, as [`ReplayPlan::run_listing`] wrote them, in the order the
/// policies were given, so that the table is the same whichever run finished first).
pub fn join(table: &JobTable, parts: &[PathBuf], out: &mut dyn Write) -> std::io::Result<()> {
    let mut csv = csv::Writer::from_writer(&mut *out);
    csv.write_record(table.header())?;
    csv.flush()?;
    drop(csv);
    for part in parts {
        std::io::copy(&mut std::fs::File::open(part)?, out)?;
    }
    out.flush()
}

/// A time in the trace's clock, seconds.
fn seconds(t: Time) -> String {
    number(Some(t.as_micros() as f64 / 1e6))
}

/// A number as its shortest exact text, or an empty field.
fn number(value: Option<f64>) -> String {
    value.map_or(String::new(), |v| v.to_string())
}
