//! The Standard Workload Format of the Parallel Workloads Archive, and its Alea extension.
//!
//! SWF is the common language of HPC workload logs, so it is how most real batch workloads reach
//! the simulator. A file is lines of 18 whitespace-separated fields (`;` starts a header or
//! comment line, `-1` means "missing"); the Alea/MetaCentrum extended variant adds three
//! columns: the node list `{n1,n2,…}`, the queue name and the PBS nodespec
//! (`1:ppn=64:x86_64:cl_zewura#excl`). Records must be in submit order, as the format requires.
//!
//! What a task is made of (fields counted from 1):
//!
//! | task | from |
//! |---|---|
//! | `id` | field 1, job number |
//! | `submit` | field 2, seconds (no offset applied); `-1` → skipped as "no submit time" |
//! | `start` | submit + field 3 (wait) when the wait is known (≥ 0) |
//! | `runtime` | field 4, seconds; `-1` → skipped as "no runtime" |
//! | `user` | field 12, as written (`-1` is a user of its own) |
//! | cpu | field 5 (allocated) or 8 (requested), see [`CpuField`]; `-1` → "no processor count", `0` → "zero request" |
//! | `walltime` | field 9, requested time, when recorded |
//! | `failed` | field 11, status: `0` (failed) |
//! | `cancelled` | field 11, status `5` with no run (field 4 `0` or `-1`): cancelled before it started, at submit + wait (field 3); `start` is then `None`, and a job without a recorded wait is skipped |
//! | `nodes`, `exclusive`, `properties` | the nodespec (field 21): node count, `#excl`, and the `:`-separated words that are neither counts nor `key=value` (`x86_64`, `cl_zewura`); `None`, `false` and none without one |
//! | mem | field 10 (requested) or 7 (used), see [`MemoryField`] and [`MemoryLayout`]; reported in KB; `-1` → "no memory" |
//!
//! The resources are `["cpu", "mem"]` in processors and KB, or `["cpu"]` alone when memory is
//! omitted. SWF headers do not say whether a log records memory, so with [`MemoryField::Auto`]
//! the reader first counts the job lines of the whole input that hold a requested or used memory
//! value (not `-1`): memory is a resource when at least half of them do (logs that record memory
//! record it on nearly every job). When some jobs record it and others do not, the decision and
//! its counts are reported in [`crate::ReadStats::notes`]. Fields not listed above are not checked.
//!
//! Any negative value is read as missing, like `-1`. Times must be at most 10¹⁰ s and amounts
//! at most 10¹⁵ (see [`fairshare_core::model::Time::LONGEST_INPUT_S`]); larger values are errors
//! naming the line and field, never clamped.
//!
//! The processor count is the *allocated* one by default, as the Parallel Workloads Archive's
//! guidelines ask of simulations, the requested one only where the allocated is missing; how
//! many jobs record two different counts is a note. A header's `MaxProcs` and `MaxNodes` are
//! kept in [`crate::ReadStats`] as the machine the log declares.
//!
//! The defaults ([`SwfOptions::default`], all `Auto`) read the shared logs as intended: the
//! extended wagap log gives allocated CPUs and requested memory in bytes per node × nodes;
//! METACENTRUM-2009-2 (requested fields all `-1`) gives allocated processors and used memory
//! (KB per processor × processors); KTH-SP2 (no memory at all) gives CPUs only.

use crate::input::{is_comment, is_number, At, Col, Line, Lines};
use crate::source::{Meta, Reader, Source, Task};
use crate::{Format, ReadOptions, TraceError};
use fairshare_core::choice::Choice;
use fairshare_core::model::NodeType;
use fairshare_core::model::Time;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Which field gives a job's processor count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CpuField {
    /// Field 8, requested processors.
    Requested,
    /// Field 5, allocated processors.
    Allocated,
    /// Per job: allocated when present, else requested.
    #[default]
    Auto,
}

/// Which field gives a job's memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemoryField {
    /// Field 10, requested memory.
    Requested,
    /// Field 7, used memory.
    Used,
    /// No memory: the resources are `["cpu"]`.
    Omit,
    /// Per job: requested when present, else used; a resource only if the first job has either.
    #[default]
    Auto,
}

impl Choice for CpuField {
    const ALL: &'static [CpuField] = &[CpuField::Auto, CpuField::Requested, CpuField::Allocated];

    fn name(self) -> &'static str {
        match self {
            CpuField::Auto => "auto",
            CpuField::Requested => "requested",
            CpuField::Allocated => "allocated",
        }
    }

    fn about(self) -> &'static str {
        match self {
            CpuField::Auto => "Allocated when present, else requested",
            CpuField::Requested => "Field 8, requested processors",
            CpuField::Allocated => "Field 5, allocated processors",
        }
    }
}

impl Choice for MemoryField {
    const ALL: &'static [MemoryField] = &[
        MemoryField::Auto,
        MemoryField::Requested,
        MemoryField::Used,
        MemoryField::Omit,
    ];

    fn name(self) -> &'static str {
        match self {
            MemoryField::Auto => "auto",
            MemoryField::Requested => "requested",
            MemoryField::Used => "used",
            MemoryField::Omit => "none",
        }
    }

    fn about(self) -> &'static str {
        match self {
            MemoryField::Auto => "Requested when present, else used",
            MemoryField::Requested => "Field 10, requested memory",
            MemoryField::Used => "Field 7, used memory",
            MemoryField::Omit => "No memory resource",
        }
    }
}

/// How the chosen memory field is measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemoryLayout {
    /// Standard SWF: KB per processor, multiplied by the processor count.
    KbPerProcessor,
    /// The Alea extension's field 10: bytes per node, multiplied by the nodes of the nodespec.
    BytesPerNode,
    /// Bytes per node for requested memory of a line with a nodespec (21 fields), else KB per
    /// processor.
    #[default]
    Auto,
}

/// Which SWF fields make a task's demand vector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwfOptions {
    /// Where the processor count comes from.
    pub cpus: CpuField,
    /// Where memory comes from, if anywhere.
    pub memory: MemoryField,
    /// How memory is measured.
    pub memory_layout: MemoryLayout,
}

const JOB: Col = Col::new(1, "job number");
const SUBMIT: Col = Col::new(2, "submit time");
const WAIT: Col = Col::new(3, "wait time");
const RUNTIME: Col = Col::new(4, "run time");
const ALLOCATED: Col = Col::new(5, "allocated processors");
const USED_MEMORY: Col = Col::new(7, "used memory");
const REQUESTED: Col = Col::new(8, "requested processors");
const REQUESTED_TIME: Col = Col::new(9, "requested time");
const REQUESTED_MEMORY: Col = Col::new(10, "requested memory");
const STATUS: Col = Col::new(11, "status");
const USER: Col = Col::new(12, "user id");
const QUEUE: Col = Col::new(15, "queue number");
const PARTITION: Col = Col::new(16, "partition number");
const QUEUE_NAME: Col = Col::new(20, "queue name");
const NODESPEC: Col = Col::new(21, "nodespec");

/// Why a job cancelled before it started is skipped when the log does not say when.
const CANCELLED_UNKNOWN: &str = "cancelled before it started, at an unrecorded moment";

/// The fields of one job line that a task needs; `None` where the log says `-1` (missing).
#[derive(Debug)]
struct Job {
    id: u64,
    submit: Option<Time>,
    wait: Option<Time>,
    runtime: Option<Time>,
    allocated: Option<f64>,
    used_memory: Option<f64>,
    requested: Option<f64>,
    requested_memory: Option<f64>,
    requested_time: Option<Time>,
    failed: bool,
    cancelled: bool,
    user: String,
    queue: Option<String>,
    partition: Option<String>,
    nodes: Option<f64>,
    spec: Option<Nodespec>,
}

impl Job {
    /// Whether the job was cancelled (status 5) before it ran: no runtime, or none recorded.
    fn cancelled_before_it_started(&self) -> bool {
        self.cancelled && self.runtime.is_none_or(|r| r == Time::ZERO)
    }
}

/// What a PBS nodespec asks of nodes besides their number.
#[derive(Debug, Clone, PartialEq)]
struct Nodespec {
    /// Whether the job takes its nodes whole (`#excl`).
    exclusive: bool,
    /// The node properties it requires.
    properties: Vec<String>,
}

/// The whitespace-separated fields of a job line, or `None` for a blank or comment line.
fn fields<'l>(line: &'l Line) -> Result<Option<Vec<&'l str>>, TraceError> {
    if is_comment(&line.text) {
        return Ok(None);
    }
    let fields: Vec<&str> = line.text.split_ascii_whitespace().collect();
    if fields.len() != 18 && fields.len() != 21 {
        return Err(line.at.count_error("18 or 21", fields.len()));
    }
    Ok(Some(fields))
}

/// Parses one line: `None` for a blank or comment line.
fn parse(line: &Line) -> Result<Option<Job>, TraceError> {
    let Some(fields) = fields(line)? else {
        return Ok(None);
    };
    let at = line.at;
    let get = |col: Col| fields.get(col.number - 1).copied().unwrap_or("");
    let seconds = |col: Col| at.unless_negative(col, get(col), |r| at.seconds(col, r));
    let amount = |col: Col| at.unless_negative(col, get(col), |r| at.amount(col, r));
    let status = at.unless_negative(STATUS, get(STATUS), |r| at.number(STATUS, r))?;
    Ok(Some(Job {
        id: at.integer(JOB, get(JOB))?,
        submit: seconds(SUBMIT)?,
        wait: seconds(WAIT)?,
        runtime: seconds(RUNTIME)?,
        allocated: amount(ALLOCATED)?,
        used_memory: amount(USED_MEMORY)?,
        requested: amount(REQUESTED)?,
        requested_memory: amount(REQUESTED_MEMORY)?,
        requested_time: seconds(REQUESTED_TIME)?,
        failed: status == Some(0.0),
        cancelled: status == Some(5.0),
        user: at.number(USER, get(USER)).map(|_| get(USER).to_owned())?,
        queue: fields
            .get(QUEUE_NAME.number - 1)
            .copied()
            .and_then(recorded)
            .or_else(|| recorded(get(QUEUE)))
            .map(str::to_owned),
        partition: recorded(get(PARTITION)).map(str::to_owned),
        nodes: fields
            .get(NODESPEC.number - 1)
            .map(|spec| nodes(spec).ok_or_else(|| at.error(NODESPEC, "a PBS nodespec", spec)))
            .transpose()?,
        spec: fields.get(NODESPEC.number - 1).map(|spec| nodespec(spec)),
    }))
}

/// A queue or partition field as a name, or `None` where the log says it is missing (a
/// negative number, as `-1`).
fn recorded(field: &str) -> Option<&str> {
    (!field.starts_with('-')).then_some(field)
}

/// The nodes a PBS nodespec asks for: over its `+`-separated chunks, the sum of each chunk's
/// leading count, or 1 when a chunk starts with a host name or property instead.
fn nodes(spec: &str) -> Option<f64> {
    spec.split('+')
        .map(|chunk| {
            let head = chunk.split([':', '#']).next().unwrap_or("");
            (!head.is_empty()).then(|| head.parse::<u32>().map_or(1.0, f64::from))
        })
        .sum()
}

/// The exclusivity and properties of a nodespec: `#excl` anywhere, and each chunk's words after
/// its count that are neither `key=value` settings nor numbers (host names count as
/// properties; a catalogue that does not know one does not enforce it).
fn nodespec(spec: &str) -> Nodespec {
    let mut properties: Vec<String> = Vec::new();
    for chunk in spec.split('+') {
        let words = chunk.split('#').next().unwrap_or("").split(':');
        for word in words.skip(1) {
            let word = word.trim_start_matches('^');
            let setting = word.contains('=') || word.parse::<f64>().is_ok() || word.is_empty();
            if !setting && !properties.iter().any(|p| p == word) {
                properties.push(word.to_owned());
            }
        }
    }
    Nodespec {
        exclusive: spec.split('#').skip(1).any(|flag| flag == "excl"),
        properties,
    }
}

/// Reads SWF job lines as tasks.
pub(crate) struct SwfReader {
    lines: Lines,
    last_submit: Time,
    options: SwfOptions,
    memory: bool,
    ids: HashSet<u64>,
}

/// The Standard Workload Format in the format registry ([`crate::Format`]): a `;` header
/// line, or whitespace-separated fields starting with a number; machines in a `.machines` file.
pub const FORMAT: Format = Format {
    name: "swf",
    about: "Standard Workload Format (18 fields, or the 21-field Alea extension), plain or gzip",
    detect: |line| {
        let mut fields = line.split_ascii_whitespace();
        let first = fields.next();
        if line.starts_with(';') {
            Some(Format::MARKER)
        } else {
            (fields.next().is_some() && is_number(first)).then_some(Format::RECORD)
        }
    },
    sample: "; Version: 2.2",
    open: |paths, options| Box::new(open(paths, options)),
    machines: Some(read_machines),
};

/// A source of the tasks of the SWF files `paths`, in the order given.
pub(crate) fn open(paths: &[PathBuf], options: &ReadOptions) -> Source<SwfReader> {
    let survey = survey(paths);
    let (memory, note) = match options.swf.memory {
        MemoryField::Omit => (false, None),
        MemoryField::Requested | MemoryField::Used => (true, None),
        MemoryField::Auto => {
            let (with, jobs) = (survey.with_memory, survey.jobs);
            let memory = 2 * with >= jobs && with > 0;
            let partial = with > 0 && with < jobs;
            (memory, partial.then(|| memory_note(memory, with, jobs)))
        }
    };
    let reader = SwfReader {
        lines: Lines::new(paths),
        last_submit: Time::ZERO,
        options: options.swf,
        memory,
        ids: HashSet::new(),
    };
    let mut meta = if memory {
        Meta::new(&["cpu", "mem"], &["processors", "KB"], options.lenient)
    } else {
        Meta::new(&["cpu"], &["processors"], options.lenient)
    };
    if let Some(note) = note {
        meta.note(note);
    }
    if survey.cpus_differ > 0 {
        meta.note(cpus_note(options.swf.cpus, survey.cpus_differ, survey.jobs));
    }
    if survey.cancelled_before_start > 0 {
        meta.note(format!("{} of {} jobs were cancelled before they started (status 5, no run): each waits in the replay, as it asked, from its submission until its cancellation (submit + wait), and is withdrawn then, counted as cancelled and left out of the waits, or ended then if the replay started it; one without a recorded wait is skipped as \"{CANCELLED_UNKNOWN}\"", survey.cancelled_before_start, survey.jobs));
    }
    meta.stats.declared_processors = survey.max_procs;
    meta.stats.declared_nodes = survey.max_nodes;
    Source::new(reader, meta)
}

/// What a first look over a whole log tells before it is read: how many job lines there are,
/// how many record memory (requested or used, not `-1`), how many record two different
/// processor counts, how many were cancelled before they started, and the machine its header
/// declares.
#[derive(Debug, Default)]
struct Survey {
    jobs: u64,
    with_memory: u64,
    cpus_differ: u64,
    cancelled_before_start: u64,
    max_procs: Option<u64>,
    max_nodes: Option<u64>,
}

/// Surveys the job lines and header of `paths`. A line that cannot be read is not counted;
/// the reading pass reports it.
fn survey(paths: &[PathBuf]) -> Survey {
    let mut lines = Lines::new(paths);
    let mut survey = Survey::default();
    while let Some(Ok(line)) = lines.next_line() {
        if let Some((key, value)) = header(&line.text) {
            match key {
                "MaxProcs" => survey.max_procs = Some(value),
                "MaxNodes" => survey.max_nodes = Some(value),
                _ => {}
            }
        }
        let Ok(Some(fields)) = fields(&line) else {
            continue;
        };
        survey.jobs += 1;
        let recorded = |col: Col| {
            fields[col.number - 1]
                .parse::<f64>()
                .ok()
                .filter(|x| *x >= 0.0)
        };
        let memory = recorded(REQUESTED_MEMORY).or(recorded(USED_MEMORY));
        survey.with_memory += u64::from(memory.is_some());
        if let (Some(a), Some(r)) = (recorded(ALLOCATED), recorded(REQUESTED)) {
            survey.cpus_differ += u64::from(a != r);
        }
        let cancelled = recorded(STATUS) == Some(5.0);
        survey.cancelled_before_start +=
            u64::from(cancelled && recorded(RUNTIME).is_none_or(|r| r == 0.0));
    }
    survey
}

/// A header line's `; Key: number`, as key and positive number.
fn header(text: &str) -> Option<(&str, u64)> {
    let (key, value) = text.strip_prefix(';')?.split_once(':')?;
    let value = value.trim().parse::<u64>().ok().filter(|v| *v > 0)?;
    Some((key.trim(), value))
}

/// How many jobs record two processor counts, and which one the replay uses.
fn cpus_note(choice: CpuField, differ: u64, jobs: u64) -> String {
    let used = match choice {
        CpuField::Requested => "the requested count (--swf-cpus requested)",
        CpuField::Allocated | CpuField::Auto => {
            "the allocated count (field 5; --swf-cpus requested uses field 8)"
        }
    };
    format!("{differ} of {jobs} jobs were allocated a processor count other than they requested; the replay uses {used}")
}

/// What the automatic memory rule decided for a log that records memory on some jobs only.
fn memory_note(memory: bool, with: u64, jobs: u64) -> String {
    let seen = format!("memory is recorded on {with} of {jobs} jobs");
    if memory {
        format!("{seen}, so it is a resource (jobs without it are skipped as \"no memory\"; --swf-memory none keeps them)")
    } else {
        format!("{seen}, fewer than half, so it is not a resource (--swf-memory requested or used makes it one)")
    }
}

impl SwfReader {
    /// The next job line, checked to be in submit order (a job without a submit time is
    /// skipped later and does not take part).
    fn read_job(&mut self) -> Option<Result<Job, TraceError>> {
        loop {
            let line = match self.lines.next_line()? {
                Ok(line) => line,
                Err(e) => return Some(Err(e)),
            };
            let job = match parse(&line) {
                Ok(None) => continue,
                Ok(Some(job)) => job,
                Err(e) => return Some(Err(e)),
            };
            if let Some(submit) = job.submit {
                if submit < self.last_submit {
                    return Some(Err(TraceError::OutOfOrder {
                        file: line.at.file.to_path_buf(),
                        line: line.at.line,
                        time: submit,
                        previous: self.last_submit,
                    }));
                }
                self.last_submit = submit;
            }
            return Some(Ok(job));
        }
    }

    /// The task of `job`, or the reason to skip it.
    fn task(&self, job: &Job) -> Result<Task, &'static str> {
        let submit = job.submit.ok_or("no submit time")?;
        if job.cancelled_before_it_started() {
            return self.withdrawn(job, submit);
        }
        let runtime = job.runtime.ok_or("no runtime")?;
        self.task_of(job, submit, runtime)
    }

    /// The task of `job`, submitted at `submit`, running for `runtime`, or the reason to skip
    /// it.
    fn task_of(&self, job: &Job, submit: Time, runtime: Time) -> Result<Task, &'static str> {
        let cpus = match self.options.cpus {
            CpuField::Requested => job.requested,
            CpuField::Allocated => job.allocated,
            CpuField::Auto => job.allocated.or(job.requested),
        };
        let cpus = cpus.ok_or("no processor count")?;
        if cpus == 0.0 {
            return Err("zero request");
        }
        let mut demand = vec![cpus];
        if self.memory {
            demand.push(self.memory_kb(job, cpus)?);
        }
        Ok(Task {
            id: job.id,
            user: 0,
            submit,
            start: job.wait.map(|wait| submit.plus_micros(wait.as_micros())),
            runtime: runtime.as_micros(),
            demand,
            walltime: job.requested_time.map(Time::as_micros),
            queue: None,
            partition: None,
            qos: None,
            nodes: job.nodes.map(|n| n as u32),
            exclusive: job.spec.as_ref().is_some_and(|s| s.exclusive),
            properties: job
                .spec
                .as_ref()
                .map_or_else(Vec::new, |s| s.properties.clone()),
            running: false,
            cancelled: None,
            failed: job.failed,
            billing: None,
            job_part: None,
            hosts: Vec::new(),
            pinned: None,
        })
    }

    /// The task of a job cancelled before it started: it waits, as it asked, from its
    /// submission until its cancellation (its wait), and is withdrawn then; without a recorded
    /// wait the moment is unknown and the job is skipped.
    fn withdrawn(&self, job: &Job, submit: Time) -> Result<Task, &'static str> {
        let wait = job.wait.ok_or(CANCELLED_UNKNOWN)?;
        let mut task = self.task_of(job, submit, Time::ZERO)?;
        task.start = None;
        task.cancelled = Some(submit.plus_micros(wait.as_micros()));
        Ok(task)
    }

    /// The memory of `job` running on `cpus` processors, in KB, or the reason to skip it.
    fn memory_kb(&self, job: &Job, cpus: f64) -> Result<f64, &'static str> {
        let requested = match self.options.memory {
            MemoryField::Requested => true,
            MemoryField::Used => false,
            MemoryField::Auto | MemoryField::Omit => job.requested_memory.is_some(),
        };
        let value = if requested {
            job.requested_memory
        } else {
            job.used_memory
        };
        let value = value.ok_or("no memory")?;
        let per_node = match self.options.memory_layout {
            MemoryLayout::KbPerProcessor => false,
            MemoryLayout::BytesPerNode => true,
            MemoryLayout::Auto => requested && job.nodes.is_some(),
        };
        if per_node {
            let nodes = job.nodes.ok_or("no node count")?;
            Ok(value / 1024.0 * nodes)
        } else {
            Ok(value * cpus)
        }
    }
}

impl Reader for SwfReader {
    fn next_task(&mut self, meta: &mut Meta) -> Option<Result<Task, TraceError>> {
        loop {
            let job = match self.read_job()? {
                Ok(job) => job,
                Err(e) => match meta.reject(e) {
                    Some(e) => return Some(Err(e)),
                    None => continue,
                },
            };
            meta.read();
            meta.found();
            if !self.ids.insert(job.id) {
                meta.duplicate();
            }
            match self.task(&job) {
                Ok(task) => {
                    let task = Task {
                        user: meta.user(&job.user),
                        queue: job.queue.as_deref().map(|q| meta.queue(q)),
                        partition: job.partition.as_deref().map(|p| meta.partition(p)),
                        ..task
                    };
                    return Some(Ok(task));
                }
                Err(reason) => meta.skip(reason, 1),
            }
        }
    }
}

const MACHINE_NAME: Col = Col::new(2, "name");
const MACHINE_NODES: Col = Col::new(3, "nodes");
const MACHINE_CPUS: Col = Col::new(4, "cpus per node");
const MACHINE_MEMORY: Col = Col::new(6, "memory per node (KB)");

/// Reads a `.machines` file beside an SWF log: lines `id name nodes cpus_per_node ? ram_kb`,
/// each one [`NodeType`] with capacity `[cpus, KB]` and the properties a nodespec may ask for:
/// its name, `cl_NAME` (MetaCentrum's cluster property) and `nodecpusN`.
pub(crate) fn read_machines(path: &Path) -> Result<Vec<NodeType>, TraceError> {
    let mut lines = Lines::new(&[path.to_path_buf()]);
    let mut machines = Vec::new();
    while let Some(line) = lines.next_line() {
        let line = line?;
        if is_comment(&line.text) {
            continue;
        }
        let fields: Vec<&str> = line.text.split_ascii_whitespace().collect();
        if fields.len() < 6 {
            return Err(line.at.count_error("6", fields.len()));
        }
        machines.push(machine(line.at, &fields)?);
    }
    Ok(machines)
}

/// One machine line's [`NodeType`].
fn machine(at: At, fields: &[&str]) -> Result<NodeType, TraceError> {
    let get = |col: Col| fields.get(col.number - 1).copied().unwrap_or("");
    let name = get(MACHINE_NAME);
    let cpus = at.amount(MACHINE_CPUS, get(MACHINE_CPUS))?;
    let mut node = NodeType::new(
        name,
        at.integer(MACHINE_NODES, get(MACHINE_NODES))?,
        vec![cpus, at.amount(MACHINE_MEMORY, get(MACHINE_MEMORY))?],
    );
    node.properties = vec![
        name.to_owned(),
        format!("cl_{name}"),
        format!("nodecpus{cpus}"),
    ];
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::{header, nodes, nodespec, Nodespec};

    #[test]
    fn nodespec_properties_and_exclusivity() {
        let spec = |exclusive, properties: &[&str]| Nodespec {
            exclusive,
            properties: properties.iter().map(|p| p.to_string()).collect(),
        };
        assert_eq!(
            nodespec("1:ppn=64:x86_64:cl_zewura#excl"),
            spec(true, &["x86_64", "cl_zewura"])
        );
        assert_eq!(nodespec("1:ppn=12"), spec(false, &[]));
        assert_eq!(
            nodespec("2:ppn=2:nfs4+1:ppn=1:nfs4:^zegox20.cerit-sc.cz:mem=3gb"),
            spec(false, &["nfs4", "zegox20.cerit-sc.cz"])
        );
        assert_eq!(nodespec("zewura19.cerit-sc.cz:ppn=12"), spec(false, &[]));
    }

    #[test]
    fn header_lines() {
        assert_eq!(header("; MaxProcs: 100"), Some(("MaxProcs", 100)));
        assert_eq!(header(";MaxNodes:128 "), Some(("MaxNodes", 128)));
        assert_eq!(header("; MaxNodes: -1"), None);
        assert_eq!(header("; Note: uses the EASY scheduler"), None);
        assert_eq!(header("1 2 3"), None);
    }

    #[test]
    fn nodespec_node_counts() {
        assert_eq!(nodes("1:ppn=64:x86_64:cl_zewura#excl"), Some(1.0));
        assert_eq!(nodes("8:ppn=8:x86_64:cl_zegox"), Some(8.0));
        assert_eq!(nodes("1:ppn=1+3:ppn=2"), Some(4.0));
        assert_eq!(nodes("zewura19.cerit-sc.cz:ppn=12:brno"), Some(1.0));
        assert_eq!(nodes("2#excl"), Some(2.0));
        assert_eq!(nodes("1:ppn=1+"), None);
        assert_eq!(nodes(""), None);
    }
}
