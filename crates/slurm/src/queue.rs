//! The queue as a reconcile sees it: `squeue --json` for the jobs, `sprio` for their site factors.
//!
//! Slurm 22.05's `squeue --json` (openapi v0.0.38) gives each job's priority but not the site
//! factor inside it, and neither does `scontrol show job` nor any `squeue -O` field. `sprio`
//! does: its `%S` column is the site factor as set by `scontrol update SiteFactor=N`, signed,
//! for pending jobs only (the only ones whose priority still matters). So a reconcile runs both
//! commands and joins them by job id; a job `sprio` does not list holds no site factor worth
//! changing.

use crate::json::{records, Record};
use fairshare_core::model::Time;
pub use fairshare_reconcile::job::QueueState;
use fairshare_reconcile::job::QueuedJob;
use fairshare_trace::slurm_output::lines;
use fairshare_trace::slurm_output::{Problem, ReadError};
use std::collections::BTreeMap;

/// The command, with its arguments, whose output [`parse_queue`] reads.
pub const SQUEUE_COMMAND: [&str; 2] = ["squeue", "--json"];

/// The command, with its arguments, whose output [`parse_site_factors`] reads: no header, one
/// `id|site factor` line per pending job and partition.
pub const SPRIO_COMMAND: [&str; 4] = ["sprio", "--noheader", "--format", "%i|%S"];

/// The state Slurm names `raw`.
pub fn job_state(raw: &str) -> QueueState {
    match raw {
        "PENDING" => QueueState::Pending,
        "RUNNING" => QueueState::Running,
        _ => QueueState::Other(raw.to_string()),
    }
}

/// The memory a job asked for, in megabytes, as it asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// `--mem`: per node.
    PerNode(u64),
    /// `--mem-per-cpu`: per CPU.
    PerCpu(u64),
}

/// One job of `squeue --json`: the job as the reconcile takes it, and what Slurm says of its
/// request besides.
#[derive(Debug, Clone, PartialEq)]
pub struct SqueueJob {
    /// The job: ids, state, Slurm's priority (the site factor included), times (a pending
    /// job's start is `None`: Slurm's expected start is not a start), its demand (its TRES
    /// request, or its CPUs alone where Slurm gives no readable request), nodes and time limit
    /// (`None` when `UNLIMITED`, infinite, 0 or unsaid).
    pub job: QueuedJob,
    /// The CPUs it asked for.
    pub cpus: u32,
    /// The memory it asked for, if it asked (`None`: the partition's default).
    pub memory: Option<Memory>,
    /// The nodes it asked for by name (`--nodelist`), if any.
    pub required_nodes: Option<String>,
    /// Slurm's TRES request string, such as `cpu=2,mem=500M,node=1,billing=2`.
    pub tres: String,
}

impl std::ops::Deref for SqueueJob {
    type Target = QueuedJob;

    /// The job as the reconcile takes it.
    fn deref(&self) -> &QueuedJob {
        &self.job
    }
}

/// What a job asks for, as `[processors, KB, GPUs]`: its TRES request `tres`, or its `cpus`
/// alone where Slurm gives no readable request.
fn demand(tres: &str, cpus: u32) -> Vec<f64> {
    match fairshare_trace::sacct::alloc_tres(tres) {
        Ok((demand, _)) if demand[0] > 0.0 => demand,
        _ => vec![f64::from(cpus), 0.0, 0.0],
    }
}

/// The fields of a job [`parse_queue`] reads; the others are skipped unread.
const JOB_FIELDS: [&str; 15] = [
    "job_id",
    "job_state",
    "start_time",
    "user_name",
    "account",
    "partition",
    "priority",
    "submit_time",
    "cpus",
    "memory_per_node",
    "memory_per_cpu",
    "node_count",
    "required_nodes",
    "tres_req_str",
    "time_limit",
];

/// The jobs of `squeue --json`'s output `text`, in its order.
pub fn parse_queue(text: &str) -> Result<Vec<SqueueJob>, ReadError> {
    let jobs = records(text, "jobs", &JOB_FIELDS)?;
    jobs.iter()
        .enumerate()
        .map(|(index, value)| {
            let mut record = Record::new("job", index, value)?;
            let id = record.u64("job_id")?;
            record.rename(&format!("id {id}"));
            job(&record, id)
        })
        .collect()
}

/// The job `id` from its JSON record.
fn job(record: &Record, id: u64) -> Result<SqueueJob, ReadError> {
    let state = match record.strings("job_state")?.first() {
        Some(raw) => job_state(raw),
        None => return Err(record.error("job_state", Problem::Missing)),
    };
    let start = match state {
        QueueState::Pending => None,
        _ => record.opt_u64("start_time")?.filter(|t| *t > 0),
    };
    let user = record.str("user_name")?.to_string();
    let account = record.str("account")?.to_string();
    let partition = record.str("partition")?.to_string();
    let priority = record.u64("priority")?;
    let submit = record.u64("submit_time")?;
    let cpus = record.u32("cpus")?;
    let memory = memory(record)?;
    let nodes = record.u32("node_count")?;
    let required_nodes = record.opt_str("required_nodes")?.map(str::to_string);
    let tres = (record.opt_str("tres_req_str")?.unwrap_or_default()).to_string();
    let limit = (record.opt_u64("time_limit")?)
        .filter(|&minutes| minutes > 0 && minutes < INFINITE_MINUTES)
        .map(|minutes| minutes * 60);
    let job = QueuedJob {
        id,
        user,
        account,
        partition,
        state,
        priority,
        held: None,
        submit: Time::from_whole_secs(submit),
        start: start.map(Time::from_whole_secs),
        demand: demand(&tres, cpus),
        nodes,
        limit,
    };
    Ok(SqueueJob {
        job,
        cpus,
        memory,
        required_nodes,
        tres,
    })
}

/// Slurm's `INFINITE` time limit (in minutes, as `squeue --json` writes it) and above.
const INFINITE_MINUTES: u64 = 0xffff_fffe;

/// The memory the job asked for: `memory_per_node` or `memory_per_cpu`, whichever is set.
fn memory(record: &Record) -> Result<Option<Memory>, ReadError> {
    if let Some(mb) = record.opt_u64("memory_per_node")? {
        return Ok(Some(Memory::PerNode(mb)));
    }
    Ok(record.opt_u64("memory_per_cpu")?.map(Memory::PerCpu))
}

/// The site factor of each job in `sprio`'s output `text` (see [`SPRIO_COMMAND`]), by job id.
/// A job listed once per partition must have the same site factor on every line.
pub fn parse_site_factors(text: &str) -> Result<BTreeMap<u64, i64>, ReadError> {
    let mut factors = BTreeMap::new();
    for (record, line) in lines(text) {
        let (id, factor) = site_factor_line(line, &record)?;
        if factors
            .insert(id, factor)
            .is_some_and(|before| before != factor)
        {
            let problem = Problem::Invalid(format!("job {id} has two site factors"));
            return Err(ReadError::field_of(&record, "site factor", problem));
        }
    }
    Ok(factors)
}

/// The job id and site factor of one `id|site factor` line.
fn site_factor_line(line: &str, record: &str) -> Result<(u64, i64), ReadError> {
    let mut columns = line.split('|').map(str::trim);
    let id = columns.next().unwrap_or_default();
    let Some(factor) = columns.next() else {
        return Err(ReadError::field_of(record, "site factor", Problem::Missing));
    };
    if columns.next().is_some() {
        let problem = Problem::Invalid("more than two columns".into());
        return Err(ReadError::field_of(record, "site factor", problem));
    }
    let id = id
        .parse()
        .map_err(|_| ReadError::field_of(record, "job id", Problem::WrongType("a job id")))?;
    let factor = factor.parse().map_err(|_| {
        ReadError::field_of(record, "site factor", Problem::WrongType("an integer"))
    })?;
    Ok((id, factor))
}
