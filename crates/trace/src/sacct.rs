//! Slurm accounting dumps: `sacct --allusers --parsable2 --format=JobID,User,Account,Submit,
//! Start,End,Elapsed,Timelimit,AllocTRES,Partition,State` — the history every Slurm site
//! already has, so an administrator can replay it or check a fairshare policy on it
//! (`fairshare priorities`).
//!
//! The file is `|`-separated with a header; columns are found by name, in any order.
//! `Elapsed`, `Timelimit`, `Partition`, `State`, `QOS`, `ReqNodes`, `ReqTRES`, `Eligible`,
//! `Constraints` and `Flags` are optional. `Flags` says which scheduler started each job: the
//! starts of the jobs `SchedBackfill` started are kept in the read's statistics
//! ([`ReadStats::backfill_starts`](fairshare_core::model::ReadStats::backfill_starts)), which
//! give the phase of the backfill's cycles to a replay of Slurm's schedulers.
//!
//! | task | from |
//! |---|---|
//! | `id` | the record's rank among the jobs of all files given (from 0) |
//! | `user` | `User` |
//! | `submit` | `Submit` (`YYYY-MM-DDTHH:MM:SS`, read as UTC); `Eligible` when the column is there and the job became eligible later (a begin time, a dependency, a hold: its wait counts from then) |
//! | `start` | `Start` |
//! | `runtime` | `End` − `Start`; for a job still running, the dump's moment − `Start` |
//! | `walltime` | `Timelimit` (`[D-]HH:MM:SS`; `UNLIMITED` and `Partition_Limit` are none) |
//! | cpu | `cpu=` of `AllocTRES`, processors (of `ReqTRES` for a job cancelled while it waited, which was allocated nothing; the same for memory and GPUs) |
//! | mem | `mem=` of `AllocTRES` (`16G`, `3900M`; a bare number is MiB, as Slurm writes it), KB |
//! | gpu | `gres/gpu=` of `AllocTRES`, GPUs |
//! | nodes | `ReqNodes` when the column is there (none for 1: the job may spread over as many nodes as its processors need), else `node=` of `AllocTRES` (the job is held to the nodes it was given) |
//! | partition | `Partition`, when the column is there (a job that never started names every partition it was submitted to, `a,b`: the first, with a note) |
//! | qos | `QOS`, when the column is there |
//! | properties | `Constraints`, when the column is there: the node features the job asked for, all of them (`fast`, `fast&ib`); a constraint that is not such a list (`a\|b`, `[a\|b]`, `a*2`, parentheses) cannot be held to a list of features, so it is left out, with a note counting such jobs |
//! | billing | Slurm's billing per second ([`crate::billing`]): the partition's weights (given in [`ReadOptions::billing`]) over `AllocTRES`, else its `billing=`, else its CPUs; times the `UsageFactor` of its `QOS`, when the column is there |
//!
//! How jobs are read, by what the dump says of them (its `State` is not needed for this):
//!
//! - **Ended** (`COMPLETED`, `FAILED`, `TIMEOUT`, `CANCELLED` after it started, `NODE_FAIL`,
//!   `OUT_OF_MEMORY`, `PREEMPTED`, …: a `Start`, an `End` and an allocation): replayed from its
//!   recorded start for `End` − `Start`.
//! - **Still running** (`RUNNING`: `End` is `Unknown`): replayed and charged from its start up
//!   to the moment the dump was taken, which is the latest of the dump's times and of each
//!   running job's `Start` + `Elapsed` (sacct computes `Elapsed` when it prints).
//! - **Cancelled while it waited** (`CANCELLED` with no `Start`, or, as Slurm 22.05 writes it,
//!   `Start` = `End` with nothing allocated), when the dump has `ReqTRES`: a task with no
//!   start and no runtime, asking what its `ReqTRES` asks (its nodes as above, from
//!   `ReqNodes`, else `node=` of `ReqTRES`), cancelled at its `End`
//!   ([`Task::cancelled`](fairshare_core::model::Task::cancelled)): a replay keeps it waiting
//!   until then. Without `ReqTRES`, skipped as below, with a note.
//! - **Never started** otherwise (`PENDING` when the dump was taken, or cancelled in a dump
//!   without `ReqTRES`): skipped as "never started", and counted there, so that `fairshare
//!   priorities` can say how many were charged nothing.
//!
//! Job steps (`123.batch`, `123.0`, `123.extern`) repeat their job's allocation and are
//! ignored. Every record's times, kept or not, count for the log's first event and its
//! moment ([`ReadStats::first_event`](fairshare_core::model::ReadStats::first_event),
//! [`last_event`](fairshare_core::model::ReadStats::last_event)). `sacct` prints local time and
//! the reader takes it as UTC: dump with `TZ=UTC sacct …` so that jobs spanning a
//! daylight-saving change keep their true length. The `Account` column is not read: accounts
//! come from a share file (`--shares`). sacct dumps record partitions, not queues, so a
//! `.queues` file does not apply to them. Like the Alibaba pod list, the dump is not in submit
//! order in general (`sacct` lists by job id), so it is loaded whole and sorted.

use crate::billing::Billing;
use crate::input::{columns, Col, HeadedCsv, Record};
use crate::slurmctld_log::{ControllerLog, Timed};
use crate::source::{Loaded, Meta, Source, Task};
pub use crate::tres::{alloc_tres, tres_amounts, Tres};
use crate::{Format, ReadOptions, TraceError};
pub use fairshare_core::model::{slurm_duration, BadDuration};
use fairshare_core::model::{Pin, Time};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

const COLUMNS: [&str; 6] = ["JobID", "User", "Submit", "Start", "End", "AllocTRES"];

/// Why a job that never started is skipped (jobs cancelled while they waited, and jobs still
/// pending): `fairshare priorities` counts them among the jobs charged nothing.
pub const NEVER_STARTED: &str = "never started";

/// Slurm accounting dumps in the format registry ([`crate::Format`]): a `|`-separated
/// header naming `JobID`; its machine list is the site's Slurm configuration (a `slurm.conf`
/// or the saved output of `scontrol show node` and `show partition`, [`crate::slurm_conf`]).
pub const FORMAT: Format = Format {
    name: "sacct",
    about:
        "Slurm accounting dump: sacct --parsable2 with JobID, User, Submit, Start, End, AllocTRES",
    detect: |line| {
        let header = line.split('|').any(|h| h.trim() == "JobID");
        header.then_some(Format::HEADER)
    },
    sample: "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State",
    open: |paths, options| Box::new(open(paths, options)),
    machines: Some(crate::slurm_conf::read_machines),
};

/// A source of the jobs of the sacct dumps `paths`, sorted by submit time.
pub(crate) fn open(paths: &[PathBuf], options: &ReadOptions) -> Source<Loaded> {
    let mut meta = Meta::new(
        &["cpu", "mem", "gpu"],
        &["processors", "KB", "GPUs"],
        options.lenient,
    );
    let mut dump = Dump::default();
    let error = paths
        .iter()
        .try_for_each(|path| read_jobs(path, &options.billing, &mut meta, &mut dump))
        .err();
    let job_ids = std::mem::take(&mut dump.job_ids);
    let mut tasks = dump.until_taken(&mut meta);
    if let Some(log) = &options.controller_log {
        timed_by(log, &mut tasks, &job_ids, &mut meta);
    }
    Loaded::source(tasks, error, meta)
}

/// Gives the jobs, whose Slurm job ids are `job_ids`, the sub-second moments of `slurmctld`'s
/// log, with a note of how many it timed.
fn timed_by(log: &ControllerLog, tasks: &mut [Task], job_ids: &[Option<u64>], meta: &mut Meta) {
    let mut timed = Timed::default();
    for (task, id) in tasks.iter_mut().zip(job_ids) {
        if let Some(id) = id {
            log.time(*id, task, &mut timed);
        }
    }
    meta.note(format!(
        "slurmctld's log timed to the millisecond {} of the dump's {} jobs' submissions, {} starts and {} ends (the rest keep the dump's whole seconds)",
        timed.submissions,
        tasks.len(),
        timed.starts,
        timed.ends
    ));
}

/// The jobs read so far, with the ones still running.
#[derive(Default)]
struct Dump {
    tasks: Vec<Task>,
    /// Each task's Slurm job id, where `JobID` is a plain number (not an array's or a
    /// heterogeneous job's component).
    job_ids: Vec<Option<u64>>,
    /// Indices into `tasks` of jobs still running when the dump was taken.
    running: Vec<usize>,
    /// The runs (`JobID` and `Start`) of the files read before the one being read: a run
    /// listed in two dumps (the history before a window and the window, both listing the jobs
    /// that ran across its start) is the first file's.
    listed: HashSet<(String, String)>,
    /// Every `JobID` read so far: a record of one already read is a later run of a job Slurm
    /// requeued (`sacct --duplicates` lists each run).
    runs: HashSet<String>,
}

impl Dump {
    /// The tasks, each running job's runtime set to last until the dump's moment.
    fn until_taken(mut self, meta: &mut Meta) -> Vec<Task> {
        let Some(moment) = meta.stats.last_event else {
            return self.tasks;
        };
        for &i in &self.running {
            let task = &mut self.tasks[i];
            let start = task.start.unwrap_or(task.submit);
            task.runtime = moment.as_micros().saturating_sub(start.as_micros());
            task.running = true;
        }
        if !self.running.is_empty() {
            let secs = std::time::Duration::from_micros(moment.as_micros());
            meta.note(format!(
                "{} jobs were still running when the dump was taken; each counts up to that moment, {}",
                self.running.len(),
                humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + secs)
            ));
        }
        self.tasks
    }
}

/// The optional columns, where the header has them.
#[derive(Clone, Copy)]
struct Optional {
    partition: Option<Col>,
    req_nodes: Option<Col>,
    qos: Option<Col>,
    elapsed: Option<Col>,
    limit: Option<Col>,
    eligible: Option<Col>,
    flags: Option<Col>,
    req_tres: Option<Col>,
    state: Option<Col>,
    constraints: Option<Col>,
    node_list: Option<Col>,
    reason: Option<Col>,
    reservation: Option<Col>,
    submit_line: Option<Col>,
}

/// The most hosts one job's `NodeList` may name.
const MOST_HOSTS: usize = 100_000;

/// Reads the dump `path` into `dump`; `Err` for an error that ends the stream.
fn read_jobs(
    path: &Path,
    billing: &Billing,
    meta: &mut Meta,
    dump: &mut Dump,
) -> Result<(), TraceError> {
    let mut file = HeadedCsv::open_with(path, b'|')?;
    let header = file.header()?;
    let find = |name: &'static str| {
        let i = header
            .iter()
            .position(|h| h.trim_ascii() == name.as_bytes());
        i.map(|i| Col::new(i + 1, name))
    };
    let optional = Optional {
        partition: find("Partition"),
        req_nodes: find("ReqNodes"),
        qos: find("QOS"),
        elapsed: find("Elapsed"),
        limit: find("Timelimit"),
        eligible: find("Eligible"),
        flags: find("Flags"),
        req_tres: find("ReqTRES"),
        state: find("State"),
        constraints: find("Constraints"),
        node_list: find("NodeList"),
        reason: find("Reason"),
        reservation: find("Reservation"),
        submit_line: find("SubmitLine"),
    };
    if optional.flags.is_some() {
        meta.stats.backfill_starts.get_or_insert_with(Vec::new);
    }
    if optional.req_nodes.is_none() {
        meta.note(format!(
            "{}: no ReqNodes column, so each job keeps the number of nodes it was given (add ReqNodes to sacct's --format to let jobs that asked for one node spread as Slurm may)",
            path.display()
        ));
    }
    if let [only] = header.iter().collect::<Vec<_>>().as_slice() {
        let text = String::from_utf8_lossy(only);
        if text.contains("JobID") {
            return Err(TraceError::NotParsable {
                file: path.to_path_buf(),
                header: text.trim().chars().take(80).collect(),
            });
        }
    }
    let cols = columns(path, header, COLUMNS)?;
    let (mut held, mut withdrawn, mut unread, mut several, mut unheld) = (0, 0, 0, 0, 0);
    let (mut here, mut again) = (HashSet::new(), 0);
    let mut limited: BTreeMap<String, u64> = BTreeMap::new();
    while let Some(record) = file.next_record()? {
        if record.raw(cols[0]).contains(&b'.') {
            meta.ignore("job step");
            continue;
        }
        let name = String::from_utf8_lossy(record.raw(cols[0]))
            .trim()
            .to_owned();
        let run = (
            name,
            String::from_utf8_lossy(record.raw(cols[3]))
                .trim()
                .to_owned(),
        );
        if dump.listed.contains(&run) {
            meta.ignore("listed in an earlier dump");
            again += 1;
            continue;
        }
        let rerun = !dump.runs.insert(run.0.clone());
        here.insert(run);
        if let Some(reason) = optional.reason.map(|col| record.raw(col)) {
            let reason = String::from_utf8_lossy(reason);
            if names_a_limit(reason.trim()) {
                *limited.entry(reason.trim().to_owned()).or_default() += 1;
            }
        }
        let job = match job(&record, &cols, optional, billing) {
            Ok(job) => job,
            Err(e) => match meta.reject(e) {
                Some(e) => return Err(e),
                None => continue,
            },
        };
        meta.read();
        meta.found();
        job.events().for_each(|t| meta.event(t));
        let id = meta.stats.tasks_found - 1;
        let name = String::from_utf8_lossy(record.raw(cols[0]));
        meta.job_names.push(name.trim().to_owned());
        match job.task(id) {
            Ok(task) => {
                held += u64::from(task.submit > job.submit);
                withdrawn += u64::from(task.cancelled.is_some());
                several += u64::from(job.several_partitions);
                unheld += u64::from(job.features.is_none());
                if job.end.is_none() {
                    dump.running.push(dump.tasks.len());
                }
                if let (true, Some(starts)) = (job.backfilled, &mut meta.stats.backfill_starts) {
                    starts.extend(task.start);
                }
                let job_id = std::str::from_utf8(record.raw(cols[0])).ok();
                dump.job_ids
                    .push(job_id.and_then(|id| id.trim().parse().ok()));
                dump.tasks.push(Task {
                    user: meta.user(job.user),
                    partition: job.partition.map(|p| meta.partition(p)),
                    qos: job.qos.map(|q| meta.qos(q)),
                    properties: job.features.unwrap_or_default(),
                    pinned: job.pinned.or(rerun.then_some(Pin::Requeued)),
                    ..task
                });
            }
            Err(reason) => {
                unread += u64::from(job.cancelled && reason == NEVER_STARTED);
                meta.skip(reason, 1);
            }
        }
    }
    let mut counted = |count: u64, what: &str| {
        if count > 0 {
            meta.note(format!("{}: {count} {what}", path.display()));
        }
    };
    counted(withdrawn, "jobs were cancelled while they waited: each waits in the replay, as its ReqTRES asked, until its cancellation (its End), and is withdrawn then, or ended then if the replay started it");
    counted(several, "jobs name several partitions (submitted to each, never started): each waits in the first it names, where Slurm would have started it in whichever could start it first");
    counted(unread, "jobs cancelled while they waited are left out, as the dump says nothing of what they asked for (add ReqTRES to sacct's --format to replay them waiting until their cancellation)");
    counted(unheld, "jobs ask for node features by a constraint other than a list of features all required (a|b, [a|b], a*2, parentheses): the replay does not hold them to any features, so each may run on any node of its partition");
    counted(held, "of its jobs became eligible after their submission (a begin time, a dependency or a hold): each is replayed, and its wait counted, from its Eligible time");
    counted(
        again,
        "jobs are listed in an earlier dump too, whose record is kept",
    );
    dump.listed.extend(here);
    Ok(())
}

/// One job record, parsed.
struct Job<'r> {
    user: &'r str,
    submit: Time,
    /// When it could first start, if the dump says.
    eligible: Option<Time>,
    start: Option<Time>,
    end: Option<Time>,
    /// Seconds it has run, as sacct computed them when it printed.
    elapsed: Option<u64>,
    /// The walltime it asked for, in seconds.
    limit: Option<u64>,
    demand: Vec<f64>,
    nodes: Option<u32>,
    /// What it asked for (`ReqTRES`, when the column is there and says): its demand, nodes
    /// and billing units per second.
    requested: Option<(Vec<f64>, Option<u32>, f64)>,
    /// Whether its `State` is `CANCELLED`.
    cancelled: bool,
    /// Whether it names several partitions (`Partition` `a,b`), of which it keeps the first.
    several_partitions: bool,
    partition: Option<&'r str>,
    qos: Option<&'r str>,
    /// Billing units per second.
    billing: f64,
    /// Whether the backfill scheduler started it (`SchedBackfill` among its `Flags`).
    backfilled: bool,
    /// The node features it asked for, all required (`Constraints`); `None` for a
    /// constraint that is not such a list.
    features: Option<Vec<String>>,
    /// The hosts it ran on (`NodeList`; empty when the dump does not say).
    hosts: Vec<String>,
    /// What the dump records of it that a replay does not model.
    pinned: Option<Pin>,
}

/// The job of one record.
fn job<'r>(
    record: &'r Record,
    cols: &[Col; 6],
    optional: Optional,
    billing: &Billing,
) -> Result<Job<'r>, TraceError> {
    let [_, user, submit, start, end, tres] = *cols;
    let at = record.at;
    let time = |col: Col| {
        let raw = at.text(col, record.raw(col))?.trim();
        if matches!(raw, "" | "Unknown" | "None") {
            return Ok(None);
        }
        let time = Time::from_utc(raw).ok_or_else(|| {
            at.error(
                col,
                "a time such as 2024-01-15T10:23:45, from 1970 to about 317 years later",
                raw,
            )
        })?;
        Ok(Some(time))
    };
    let duration = |col: Option<Col>| match col {
        None => Ok(None),
        Some(col) => {
            let raw = at.text(col, record.raw(col))?.trim();
            slurm_duration(raw).map_err(|_| {
                at.error(
                    col,
                    "a duration such as 1-02:03:04, 30:00 or UNLIMITED",
                    raw,
                )
            })
        }
    };
    let allocated = at.text(tres, record.raw(tres))?;
    let (demand, nodes) =
        alloc_tres(allocated).map_err(|expected| at.error(tres, expected, allocated))?;
    let text = |col: Col| at.text(col, record.raw(col)).map(str::trim);
    let optional_text = |col: Option<Col>| -> Result<Option<&str>, TraceError> {
        Ok(col.map(text).transpose()?.filter(|p| !p.is_empty()))
    };
    // A job that never started names every partition it was submitted to; one that ran, the
    // one it ran in.
    let partitions = optional_text(optional.partition)?;
    let partition = partitions.and_then(|p| p.split(',').next());
    // A job that asked for one node at least may be spread as its processors fit; one that
    // asked for several is held to that many. Without the column, to the nodes it was given.
    let asked_nodes = match optional_text(optional.req_nodes)? {
        None => None,
        Some(asked) => {
            let col = optional.req_nodes.expect("the column was read");
            let asked: u32 = (asked.parse().ok())
                .ok_or_else(|| at.error(col, "a whole number of nodes", asked))?;
            Some(Some(asked).filter(|n| *n > 1))
        }
    };
    let qos = optional_text(optional.qos)?;
    let flags = optional_text(optional.flags)?.unwrap_or_default();
    let charge = |col: Col, tres: &str| {
        let charge = billing.charge(partition, qos, tres);
        charge.map_err(|_| at.error(col, "TRES amounts that are numbers >= 0", tres))
    };
    let requested = match optional.req_tres.zip(optional_text(optional.req_tres)?) {
        None => None,
        Some((col, asked)) => {
            let (demand, nodes) =
                alloc_tres(asked).map_err(|expected| at.error(col, expected, asked))?;
            let nodes = nodes.filter(|n| *n > 1);
            Some((demand, asked_nodes.unwrap_or(nodes), charge(col, asked)?))
        }
    };
    let state = optional_text(optional.state)?.unwrap_or_default();
    Ok(Job {
        user: text(user)?,
        submit: time(submit)?.ok_or_else(|| at.error(submit, "a submit time", ""))?,
        eligible: optional.eligible.map(time).transpose()?.flatten(),
        start: time(start)?,
        end: time(end)?,
        elapsed: duration(optional.elapsed)?,
        limit: duration(optional.limit)?,
        demand,
        nodes: asked_nodes.unwrap_or(nodes),
        requested,
        cancelled: state.starts_with("CANCELLED"),
        several_partitions: partitions.is_some_and(|p| p.contains(',')),
        partition,
        qos,
        billing: charge(tres, allocated)?,
        backfilled: flags.split(',').any(|f| f == "SchedBackfill"),
        features: required_features(optional_text(optional.constraints)?.unwrap_or_default()),
        hosts: hosts(record, optional.node_list)?,
        pinned: pinned(
            optional_text(optional.reservation)?,
            &submit_line(record, optional.submit_line),
            state,
        ),
    })
}

/// A record's `SubmitLine`, with every field after it: the last column of a bundle's dump,
/// whose `|`s (a `--wrap` command's pipes) `sacct` does not escape.
fn submit_line(record: &Record, col: Option<Col>) -> String {
    let Some(col) = col else {
        return String::new();
    };
    let fields = record.fields.iter().skip(col.number - 1);
    let line: Vec<_> = fields.map(String::from_utf8_lossy).collect();
    line.join("|")
}

/// What a job's record says that a replay does not model: a `Reservation` it ran in, a
/// `--dependency` on its `SubmitLine`, a `State` of `REQUEUED` or `PREEMPTED`.
fn pinned(reservation: Option<&str>, submit_line: &str, state: &str) -> Option<Pin> {
    if reservation.is_some() {
        Some(Pin::Reservation)
    } else if asks_a_dependency(submit_line) {
        Some(Pin::Dependency)
    } else if state.starts_with("REQUEUED") || state.starts_with("PREEMPTED") {
        Some(Pin::Requeued)
    } else {
        None
    }
}

/// Whether a submission line asks for a dependency: `--dependency=afterok:12` (or a prefix
/// of it, as Slurm's option parser takes), `-d afterok:12`, `-dsingleton`.
fn asks_a_dependency(line: &str) -> bool {
    line.split_whitespace().any(|word| {
        let option = word.split('=').next().unwrap_or(word);
        (option.len() >= 5 && "--dependency".starts_with(option))
            || option == "-d"
            || ["-dafter", "-dsingleton", "-dexpand"]
                .iter()
                .any(|p| option.starts_with(p))
    })
}

/// Whether a job's `Reason` is a limit of an association or a QOS holding it
/// (`AssocMaxJobsLimit`, `AssocGrpCpuLimit`, `QOSMaxJobsPerUserLimit`, …).
fn names_a_limit(reason: &str) -> bool {
    (reason.starts_with("Assoc") || reason.starts_with("QOS")) && reason.ends_with("Limit")
}

/// The hosts of a record's `NodeList` (`n[01-04],gpu1`), none where the column is absent or
/// the job was given none (`None assigned`, `(null)`).
fn hosts(record: &Record, col: Option<Col>) -> Result<Vec<String>, TraceError> {
    let Some(col) = col else {
        return Ok(Vec::new());
    };
    let raw = record.at.text(col, record.raw(col))?.trim();
    if matches!(raw, "" | "None assigned" | "(null)" | "None") {
        return Ok(Vec::new());
    }
    crate::hostlist::expand_hosts(raw, MOST_HOSTS).map_err(|why| {
        record.at.error(
            col,
            "a Slurm host list such as n[01-04],gpu1",
            format!("{raw} ({why})"),
        )
    })
}

/// The features a Slurm constraint requires when it is a list of them all required (`fast`,
/// `fast&ib`; empty: none); `None` for any other constraint (`a|b`, `[a|b]`, `a*2`,
/// parentheses), which a list of required features cannot express.
fn required_features(constraint: &str) -> Option<Vec<String>> {
    let name = |f: &str| {
        !f.is_empty()
            && (f.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    };
    if constraint.is_empty() {
        return Some(Vec::new());
    }
    let features: Vec<&str> = constraint.split('&').map(str::trim).collect();
    features
        .iter()
        .all(|f| name(f))
        .then(|| features.into_iter().map(String::from).collect())
}

impl Job<'_> {
    /// Every time the record gives or implies: submit, start, end, and for a job still running
    /// its start plus its elapsed time (when the dump was taken).
    fn events(&self) -> impl Iterator<Item = Time> {
        let taken = match (self.start, self.end, self.elapsed) {
            (Some(start), None, Some(elapsed)) => Some(start.plus_micros(elapsed * 1_000_000)),
            _ => None,
        };
        [Some(self.submit), self.start, self.end, taken]
            .into_iter()
            .flatten()
    }

    /// The task of this job, or the reason to skip it. A job still running gets its runtime
    /// once the dump's moment is known.
    fn task(&self, id: u64) -> Result<Task, &'static str> {
        let nothing_allocated = self.demand.iter().all(|&x| x == 0.0);
        let Some(start) = self.start else {
            return self.withdrawn(id);
        };
        if nothing_allocated && self.end.is_none_or(|end| end <= start) {
            return self.withdrawn(id);
        }
        if nothing_allocated {
            return Err("nothing allocated");
        }
        let runtime = match self.end {
            Some(end) if end < start => return Err("ended before it started"),
            Some(end) => end.as_micros() - start.as_micros(),
            None => 0,
        };
        // A job held, dependent or given a begin time arrives when it became eligible.
        let eligible = self.eligible.filter(|e| *e > self.submit);
        let arrival = eligible.map_or(self.submit, |e| e.min(start));
        let mut task = Task::new(id, 0, arrival, runtime, self.demand.clone());
        task.start = Some(start);
        task.nodes = self.nodes;
        task.walltime = self.limit.map(|s| s * 1_000_000);
        task.billing = Some(self.billing);
        task.hosts = self.hosts.clone();
        Ok(task)
    }

    /// The task of a job that never started: one cancelled while it waited, as it asked
    /// (`ReqTRES`), withdrawn at its `End`; any other (still pending, or a dump without what
    /// it asked for) is skipped as never started.
    fn withdrawn(&self, id: u64) -> Result<Task, &'static str> {
        let (true, Some((demand, nodes, billing)), Some(end)) =
            (self.cancelled, &self.requested, self.end)
        else {
            return Err(NEVER_STARTED);
        };
        let eligible = self.eligible.filter(|e| *e > self.submit);
        let arrival = eligible.map_or(self.submit, |e| e.min(end));
        let mut task = Task::new(id, 0, arrival, 0, demand.clone());
        task.nodes = *nodes;
        task.walltime = self.limit.map(|s| s * 1_000_000);
        task.billing = Some(*billing);
        task.cancelled = Some(end.max(arrival));
        Ok(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constraint_is_read_when_every_feature_is_required() {
        let read = |c: &str| required_features(c);
        assert_eq!(read(""), Some(vec![]));
        assert_eq!(read("fast"), Some(vec!["fast".to_owned()]));
        assert_eq!(
            read("fast&ib"),
            Some(vec!["fast".to_owned(), "ib".to_owned()])
        );
        assert_eq!(read("cpu_gen:9.2"), Some(vec!["cpu_gen:9.2".to_owned()]));
        for other in ["a|b", "[a|b]", "a*2", "(a&b)|c", "a&", "&", "a b"] {
            assert_eq!(read(other), None, "{other}");
        }
    }
}
