//! The reader of `qstat -f -F json` (and `qstat -x -f -F json`, finished jobs too): OpenPBS's
//! jobs as the reconcile's queue and what ran.
//!
//! A job is charged to its `Account_Name` (`qsub -A`), a group of the fairshare tree. It waits
//! (`Q`) holding its `Priority`, the factor fairshare writes; one held (`H`), waiting for its
//! start time (`W`) or whose owner lowered its priority below 0 waits with no factor, and is
//! left alone.

use crate::read::{bad, kb, seconds, time, OutputError};
use fairshare_core::model::Time;
use fairshare_reconcile::controller::Jobs;
use fairshare_reconcile::job::{Allocation, QueueState, QueuedJob};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// OpenPBS's queued and running jobs.
pub const QSTAT: [&str; 4] = ["qstat", "-f", "-F", "json"];

/// OpenPBS's jobs, the finished ones too.
pub const QSTAT_X: [&str; 5] = ["qstat", "-x", "-f", "-F", "json"];

/// An OpenPBS job id, `101.pbs-head`: its sequence number, then the rest (an array's index,
/// the server), ordered by number first as OpenPBS numbers them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PbsId {
    /// The sequence number.
    pub number: u64,
    /// What follows it: `.pbs-head`, `[3].pbs-head`.
    pub rest: String,
}

impl PbsId {
    /// The id `text` names, if it starts with its sequence number.
    pub fn parse(text: &str) -> Option<PbsId> {
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let number = text[..digits].parse().ok()?;
        Some(PbsId {
            number,
            rest: text[digits..].to_string(),
        })
    }
}

impl fmt::Display for PbsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.number, self.rest)
    }
}

impl serde::Serialize for PbsId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// `qstat -f -F json`: the jobs by id.
#[derive(Deserialize)]
struct Qstat {
    #[serde(rename = "Jobs", default)]
    jobs: BTreeMap<String, Job>,
}

/// One job's attributes, those the reconcile reads.
#[derive(Deserialize)]
struct Job {
    #[serde(rename = "Job_Owner")]
    owner: String,
    job_state: String,
    queue: String,
    #[serde(rename = "Account_Name", default)]
    account: String,
    ctime: String,
    stime: Option<String>,
    obittime: Option<String>,
    #[serde(rename = "Priority", default)]
    priority: i64,
    #[serde(rename = "Resource_List")]
    resources: Resources,
}

/// What a job asked for.
#[derive(Deserialize)]
struct Resources {
    ncpus: f64,
    mem: Option<String>,
    #[serde(default)]
    ngpus: f64,
    nodect: Option<u32>,
    walltime: Option<String>,
}

/// How OpenPBS prints a time.
const TIME: &str = "a time such as `Mon Nov 30 08:00:00 2026`";

/// A job read, with its id and times.
struct ReadJob {
    id: PbsId,
    job: Job,
    submit: Time,
    start: Option<Time>,
    end: Option<Time>,
    demand: Vec<f64>,
}

/// Every job of `text`, its times and demand read.
fn read(text: &str) -> Result<Vec<ReadJob>, OutputError> {
    let qstat: Qstat = serde_json::from_str(text)?;
    (qstat.jobs.into_iter())
        .map(|(id, job)| read_job(&id, job))
        .collect()
}

/// The job `id`.
fn read_job(id: &str, job: Job) -> Result<ReadJob, OutputError> {
    let when = |field, text: &str| time(text).ok_or_else(|| bad(id, field, text, TIME));
    let submit = when("ctime", &job.ctime)?;
    let start = job.stime.as_deref().map(|t| when("stime", t)).transpose()?;
    let end = job
        .obittime
        .as_deref()
        .map(|t| when("obittime", t))
        .transpose()?;
    let mem = job.resources.mem.as_deref().unwrap_or("0kb");
    let mem = kb(mem).ok_or_else(|| bad(id, "Resource_List.mem", mem, "a size such as `8gb`"))?;
    let demand = vec![job.resources.ncpus, mem, job.resources.ngpus];
    let id = PbsId::parse(id).ok_or_else(|| bad(id, "id", id, "`<number>.<server>`"))?;
    Ok(ReadJob {
        id,
        job,
        submit,
        start,
        end,
        demand,
    })
}

impl ReadJob {
    /// The user, from `Job_Owner` (`ana@login1`).
    fn user(&self) -> String {
        self.job
            .owner
            .split('@')
            .next()
            .unwrap_or_default()
            .to_string()
    }

    /// The job as the queue holds it, if it is queued or running.
    fn queued(&self) -> Option<QueuedJob<PbsId>> {
        let state = match self.job.job_state.as_str() {
            "Q" | "H" | "W" => QueueState::Pending,
            "R" => QueueState::Running,
            _ => return None,
        };
        let ranked = self.job.job_state == "Q" && self.job.priority >= 0;
        let limit = self.job.resources.walltime.as_deref().and_then(seconds);
        Some(QueuedJob {
            id: self.id.clone(),
            user: self.user(),
            account: self.job.account.clone(),
            partition: self.job.queue.clone(),
            state,
            priority: self.job.priority.max(0) as u64,
            held: ranked.then_some(self.job.priority),
            submit: self.submit,
            start: self.start,
            demand: self.demand.clone(),
            nodes: self.job.resources.nodect.unwrap_or(1),
            limit,
        })
    }

    /// The job as it ran, if it runs or ran (`R`, exiting `E`, finished `F` or `X`), started
    /// before `to` and ran on past `from`: a requeued job back in the queue keeps its `stime`
    /// but runs no more.
    fn ran(&self, from: Time, to: Time) -> Option<Allocation<PbsId>> {
        if !["R", "E", "F", "X"].contains(&self.job.job_state.as_str()) {
            return None;
        }
        let start = self.start.filter(|s| *s < to)?;
        if self.end.is_some_and(|end| end < from) {
            return None;
        }
        Some(Allocation {
            id: self.id.clone(),
            user: self.user(),
            account: self.job.account.clone(),
            partition: self.job.queue.clone(),
            submit: self.submit,
            start,
            end: self.end,
            demand: self.demand.clone(),
            nodes: self.job.resources.nodect,
            qos: String::new(),
            billing: self.job.resources.ncpus,
        })
    }
}

/// The queued and running jobs of `qstat -f -F json`.
pub fn queue(text: &str) -> Result<Vec<QueuedJob<PbsId>>, OutputError> {
    Ok(read(text)?.iter().filter_map(ReadJob::queued).collect())
}

/// What `qstat -x -f -F json` lists as run or running from `from` to `to`, and the queue.
pub fn listed(text: &str, from: Time, to: Time) -> Result<Jobs<PbsId>, OutputError> {
    let jobs = read(text)?;
    let ran = jobs.iter().filter_map(|j| j.ran(from, to)).collect();
    let queue = jobs.iter().filter_map(ReadJob::queued).collect();
    Ok(Jobs {
        ran,
        skipped: Vec::new(),
        queue,
    })
}
