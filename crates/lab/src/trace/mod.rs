//! A trace measured once and replayed under any policy. This module measures it (the
//! replay's first pass and keep-in-memory rule, its span and notes); [`capacity`] sizes the
//! machine (a pool from R, an explicit pool, machines from a file, the trace's own);
//! [`configure`] makes a run's configuration (the stop rule, the settings, the queues'
//! limits); [`run`] replays it from memory or from disk.

use crate::error::LabError;
use crate::kept::Kept;
use crate::load::{project, AsRecorded, Load, Recorded, RecordedPeak, RecordedUse};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::model::{ReadStats, Time};
use fairshare_sim::cluster::{
    self, Overrun, Partition, PlacementEntry, QueueLimit, SchedulerEntry, SlurmParameters, Stop,
    TOP_USERS,
};
use fairshare_trace::{Format, ReadOptions, TaskSource, TraceError};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where the tasks come from: files, their format and how to read them.
#[derive(Debug, Clone)]
pub struct TraceSpec {
    /// Trace files, read in the order given.
    pub paths: Vec<PathBuf>,
    /// The files as the user named them, for the summaries (e.g. `-` for standard input saved
    /// to a file).
    pub shown: Vec<String>,
    /// The format; detected from the first file when `None`.
    pub format: Option<Format>,
    /// Strictness and SWF field choices.
    pub options: ReadOptions,
}

impl TraceSpec {
    /// The trace in `paths`, format detected, read strictly with the default field choices.
    pub fn new(paths: Vec<PathBuf>) -> TraceSpec {
        TraceSpec {
            shown: paths.iter().map(|p| p.display().to_string()).collect(),
            paths,
            format: None,
            options: ReadOptions::default(),
        }
    }

    /// Opens the trace for one streaming pass.
    pub fn open(&self) -> Result<Box<dyn TaskSource + Send>, LabError> {
        Ok(fairshare_trace::open(
            &self.paths,
            self.format,
            &self.options,
        )?)
    }
}

/// When the runs of a replay end, measured from the trace's first arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopRule {
    /// At the trace's last event, as the SDRF paper counts completions.
    #[default]
    LastEvent,
    /// This many microseconds after the first arrival.
    After(u64),
    /// When every task has finished (the SDRF paper's waiting times).
    Drain,
}

/// How every run of a replay is set up, whatever its policy and capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// When runs end.
    pub stop: StopRule,
    /// What a pass does when the chosen user's task does not fit (under [`SchedulerEntry::FILL`]).
    pub rule: FillRule,
    /// The scheduler: what may start in a pass.
    pub scheduler: SchedulerEntry,
    /// Slurm's scheduling parameters, under [`SchedulerEntry::SLURM`].
    pub slurm: SlurmParameters,
    /// The site's partitions by name, with their tiers and partition factors (a Slurm
    /// configuration's); a partition of the trace not listed has factor 0 and tier 1, Slurm's
    /// default (tier 0 when none is listed).
    pub partitions: Vec<Partition>,
    /// Each QOS's factor by name (a Slurm site's, [`crate::slurm_conf::SlurmSetup`]); a QOS of
    /// the trace not listed has factor 0.
    pub qos_factors: BTreeMap<String, f64>,
    /// Which nodes a job starts on.
    pub placement: PlacementEntry,
    /// How many users' dominant shares the timelines keep.
    pub top_users: usize,
    /// Results list the jobs running during this span, `(from, to)` in microseconds after
    /// the first arrival (for the page's view of the machines); `None`: no job list.
    pub jobs_during: Option<(u64, u64)>,
    /// What happens to a job that ran longer than its walltime request.
    pub overrun: Overrun,
    /// The Slurm cluster whose associations a `sacctmgr` share file is read for, when it
    /// lists several (a configuration's `ClusterName`).
    pub cluster: Option<String>,
    /// When the log's window opens, for a window cut from a site's life
    /// ([`ClusterConfig::opens`](fairshare_sim::cluster::ClusterConfig::opens)): the jobs started before it are started as they were, and
    /// the results count from it. `None`: the run starts on an empty machine.
    pub opens: Option<Time>,
    /// The site's limits on groups of jobs, whatever the policy ([`ClusterConfig::limits`](fairshare_sim::cluster::ClusterConfig::limits)).
    pub limits: Vec<cluster::Limit>,
    /// The spans the site took nodes from its jobs ([`ClusterConfig::outages`](fairshare_sim::cluster::ClusterConfig::outages)).
    pub outages: Vec<cluster::Outage>,
}

impl Default for Replay {
    /// Until the last event, progressive filling with the head-of-line rule, first fit, the
    /// [`TOP_USERS`] heaviest users in the timelines, no job list, overruns killed.
    fn default() -> Replay {
        Replay {
            stop: StopRule::LastEvent,
            rule: FillRule::HeadOfLine,
            scheduler: SchedulerEntry::FILL,
            slurm: SlurmParameters::default(),
            partitions: Vec::new(),
            qos_factors: BTreeMap::new(),
            placement: PlacementEntry::FIRST,
            top_users: TOP_USERS,
            jobs_during: None,
            overrun: Overrun::Kill,
            cluster: None,
            opens: None,
            limits: Vec::new(),
            outages: Vec::new(),
        }
    }
}

/// A site's queue limits matched to a trace's queues.
#[derive(Debug, Clone, PartialEq)]
pub struct Queues {
    /// By the trace's queue index.
    pub limits: Vec<QueueLimit>,
    /// The file they came from.
    pub source: String,
    /// The trace's queues the file does not list (no limit, priority 0).
    pub unlisted: Vec<String>,
    /// Queues the file lists that no job of the trace names.
    pub unused: Vec<String>,
}

impl Queues {
    /// Where the limits came from and what did not match, in words.
    pub fn in_words(&self) -> String {
        let mut words = self.source.clone();
        if !self.unlisted.is_empty() {
            words += &format!(
                "; not listed, so unlimited at priority 0: {}",
                self.unlisted.join(", ")
            );
        }
        if !self.unused.is_empty() {
            words += &format!("; named by no job: {}", self.unused.join(", "));
        }
        words
    }
}

/// Fails with [`LabError::Unusable`] and this message.
macro_rules! unusable {
    ($($arg:tt)*) => { return Err(LabError::Unusable(format!($($arg)*))) };
}

mod capacity;
mod configure;
mod run;

/// A trace measured by a first pass.
pub struct MeasuredTrace {
    /// How to open it again.
    pub trace: TraceSpec,
    /// Resource names of the replay: the trace's resources that some task requests.
    pub resources: Vec<String>,
    /// Units of each resource.
    pub units: Vec<String>,
    /// User names, in order of first appearance.
    pub users: Vec<String>,
    /// What the reader saw, and the resources the replay leaves out.
    pub input: ReadStats,
    /// R, first arrival and last event.
    pub load: Load,
    /// The trace's own schedule and walltimes.
    pub recorded: Recorded,
    /// The most of each resource the trace's own schedule ran at once, and the mean.
    pub recorded_use: Option<RecordedUse>,
    /// The trace's queue names, by the index its tasks carry.
    pub queues: Vec<String>,
    /// The trace's partition names, by the index its tasks carry.
    pub partitions: Vec<String>,
    /// The trace's QOS names, by the index its tasks carry.
    pub qos: Vec<String>,
    /// Each task's job as the trace names it, by task id (a Slurm dump's `JobID`); empty when
    /// the ids are the trace's own.
    pub job_names: std::sync::Arc<[String]>,
    /// The format as detected.
    pub format: Format,
    /// The trace's resources that tasks request (indices into the reader's resources).
    keep: Vec<usize>,
    /// The tasks themselves, when the trace is small enough to keep (see [`KEEP_AT_MOST`]),
    /// over all of the reader's resources.
    kept: Option<Kept>,
}

/// The most machines a run places tasks on (one capacity vector each): the engine's limit.
pub const MOST_MACHINES: u64 = fairshare_sim::cluster::MOST_MACHINES;

/// How many tasks the first pass reads between two calls of its `progress`: a call per task
/// cost a progress bar's clock reading per task, a hundredth of a Google replay.
pub const PROGRESS_EVERY: u64 = 1024;

/// Traces of at most this many tasks are kept in memory after the first pass (≈ 128 MB with two
/// resources, 64 bytes a task), so each run replays them without parsing again; larger traces
/// are streamed from disk each time.
pub const KEEP_AT_MOST: usize = 2_000_000;

impl MeasuredTrace {
    /// The first pass: reads the whole trace once to learn its users, span and mean demand,
    /// calling `progress` with the number of tasks read so far (every [`PROGRESS_EVERY`] tasks
    /// and at the end).
    pub fn scan(
        trace: &TraceSpec,
        progress: &mut dyn FnMut(u64),
    ) -> Result<MeasuredTrace, LabError> {
        MeasuredTrace::scan_keeping(trace, KEEP_AT_MOST, progress)
    }

    /// [`MeasuredTrace::scan`], keeping the tasks in memory only when there are at most
    /// `keep_at_most` of them (0: always read them from disk again).
    pub fn scan_keeping(
        trace: &TraceSpec,
        keep_at_most: usize,
        progress: &mut dyn FnMut(u64),
    ) -> Result<MeasuredTrace, LabError> {
        // The format is detected once, here: every later pass opens the files with it.
        let first = trace.paths.first().ok_or(TraceError::NoInput)?;
        let format = match trace.format {
            Some(f) => f,
            None => Format::detect(first)?,
        };
        let trace = &TraceSpec {
            format: Some(format),
            ..trace.clone()
        };
        let mut source = trace.open()?;
        let mut load = Load::new(source.resources().len());
        let mut recorded = AsRecorded::default();
        let mut peak = RecordedPeak::default();
        let swf = format == Format::SWF;
        let mut kept = Some(Kept::new(source.resources().len()));
        let mut read = 0;
        for task in source.by_ref() {
            let task = task.map_err(|e| explain(trace, e))?;
            load.add(
                task.submit,
                task.start.unwrap_or(task.submit),
                task.runtime,
                &task.demand,
            );
            recorded.add(&task);
            if let (true, Some(start)) = (swf, task.start) {
                peak.add(start, task.runtime, &task.demand);
            }
            load.add_to_user(task.user, task.runtime, &task.demand);
            kept = kept
                .filter(|k| k.len() < keep_at_most)
                .and_then(|mut k| k.push(task).map(|()| k));
            read += 1;
            if read % PROGRESS_EVERY == 0 {
                progress(read);
            }
        }
        progress(read);
        let names = trace.shown.join(", ");
        let stats = source.stats();
        if stats.tasks_yielded == 0 {
            unusable!(
                "{names}: no task to replay: {} found, {}",
                stats.tasks_found,
                skipped_in_words(&stats.tasks_skipped)
            );
        }
        let keep = load.requested();
        let resources = source.resources();
        if keep.is_empty() {
            unusable!("{names}: no task requests any resource");
        }
        let input = ReadStats {
            resources_unused: (0..resources.len())
                .filter(|r| !keep.contains(r))
                .map(|r| resources[r].clone())
                .collect(),
            ..stats.clone()
        };
        if let Some(kept) = &mut kept {
            kept.shrink_to_fit();
        }
        Ok(MeasuredTrace {
            resources: project(resources, &keep),
            units: project(source.units(), &keep),
            users: source.users().to_vec(),
            input,
            load: load.project(&keep),
            recorded: recorded.finish(),
            recorded_use: peak.finish().map(|used| used.project(&keep)),
            queues: source.queues().to_vec(),
            partitions: source.partitions().to_vec(),
            qos: source.qos().to_vec(),
            job_names: source.job_names().into(),
            format,
            keep,
            kept,
            trace: trace.clone(),
        })
    }

    /// What a person should read before the results: the reader's notes, the resources left
    /// out and the records that repeat an id.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self.input.notes.clone();
        if !self.input.resources_unused.is_empty() {
            notes.push(format!(
                "no task requests {}, so the replay leaves it out",
                self.input.resources_unused.join(" or ")
            ));
        }
        if self.input.duplicate_ids > 0 {
            notes.push(format!(
                "{} records repeat the id of an earlier record; each is replayed as a task of its own",
                self.input.duplicate_ids
            ));
        }
        notes
    }

    /// When simulations start.
    pub fn origin(&self) -> Time {
        self.load.first_submit().unwrap_or(Time::ZERO)
    }

    /// The log's first event, kept or not: the earliest time any record gives where the reader
    /// tracks it (Slurm dumps), else the first arrival.
    pub fn first_event(&self) -> Time {
        let origin = self.origin();
        self.input.first_event.map_or(origin, |f| f.min(origin))
    }

    /// The log's last event, kept or not: for a Slurm dump, the moment it was taken as far as
    /// it tells (a running job's start plus its elapsed time).
    pub fn last_event(&self) -> Time {
        let last = self.load.last_event().unwrap_or(self.origin());
        self.input.last_event.map_or(last, |l| l.max(last))
    }

    /// Seconds from the first arrival to the last event.
    pub fn span_s(&self) -> f64 {
        let last = self
            .load
            .last_event()
            .unwrap_or(self.origin())
            .max(self.origin());
        (last.as_micros() - self.origin().as_micros()) as f64 / 1e6
    }

    /// Seconds from `opens` (the first arrival when `None`, or when it is earlier) to the
    /// last event.
    pub fn span_from(&self, opens: Option<Time>) -> f64 {
        let skipped = opens.map_or(0, |o| {
            o.as_micros().saturating_sub(self.origin().as_micros())
        });
        (self.span_s() - skipped as f64 / 1e6).max(0.0)
    }

    /// What the trace records of its own schedule for the tasks a replay that ends by `stop`
    /// submits and scores: all of them, or those submitted by its horizon and, in a window
    /// cut from a site's life, from its opening on (read once more, from memory or disk, only
    /// when either leaves some out), so that the "as recorded" row speaks of the same jobs as
    /// the runs beside it.
    pub fn recorded_until(
        &self,
        stop: StopRule,
        opens: Option<Time>,
    ) -> Result<Recorded, LabError> {
        let horizon = match self.stop(stop) {
            Stop::Horizon(h) if self.load.last_submit().is_some_and(|last| last > h) => Some(h),
            _ => None,
        };
        let opens = opens.filter(|o| self.load.first_submit().is_some_and(|first| first < *o));
        if horizon.is_none() && opens.is_none() {
            return Ok(self.recorded.clone());
        }
        let mut recorded = AsRecorded::default();
        for task in self.tasks()? {
            let task = task.map_err(|e| explain(&self.trace, e))?;
            if horizon.is_some_and(|h| task.submit > h) {
                break;
            }
            if opens.is_none_or(|o| task.submit >= o) {
                recorded.add(&task);
            }
        }
        Ok(recorded.finish())
    }

    /// A day (or the whole trace, when shorter) around the middle of the trace's span, as
    /// microseconds `(start, end)` after the first event: the default window of a report's view
    /// of the machines.
    pub fn middle_day(&self) -> (u64, u64) {
        const DAY: u64 = 86_400_000_000;
        let span = (self.span_s() * 1e6) as u64;
        let length = DAY.min(span).max(1);
        let start = (span / 2).saturating_sub(length / 2);
        (start, start + length)
    }

    /// When runs end, as the engine counts time.
    fn stop(&self, stop: StopRule) -> Stop {
        match stop {
            StopRule::Drain => Stop::Drain,
            StopRule::After(h) => Stop::Horizon(self.origin().plus_micros(h)),
            StopRule::LastEvent => Stop::Horizon(self.load.last_event().unwrap_or(self.origin())),
        }
    }

    /// The file beside the first trace file named like it with `suffix` added
    /// (`log.swf.machines`), if there is one.
    fn beside(&self, suffix: &str) -> Option<PathBuf> {
        let first = self.trace.paths.first()?;
        let mut name = first.as_os_str().to_owned();
        name.push(suffix);
        Some(PathBuf::from(name)).filter(|p| p.is_file())
    }
}

/// A reader's error, with the way past it when lenient reading would skip the record.
fn explain(trace: &TraceSpec, error: TraceError) -> LabError {
    match error.skip_reason() {
        Some(_) if !trace.options.lenient => LabError::Record(error),
        _ => error.into(),
    }
}

/// Skip counts as words: `12 skipped (no runtime: 10, zero request: 2)`.
fn skipped_in_words(skipped: &std::collections::BTreeMap<String, u64>) -> String {
    if skipped.is_empty() {
        return "none skipped".into();
    }
    let total: u64 = skipped.values().sum();
    let reasons: Vec<String> = skipped.iter().map(|(r, n)| format!("{r}: {n}")).collect();
    format!("{total} skipped ({})", reasons.join(", "))
}
