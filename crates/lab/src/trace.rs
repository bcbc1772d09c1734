//! A trace measured once and replayed under any policy: the replay's first pass and
//! keep-in-memory rule, the capacity (a pool from R, an explicit pool, machines from a file),
//! the stop rule and the run configuration, and the replay from memory or from disk.

use crate::kept::Kept;
use crate::load::{project, AsRecorded, Load, Recorded, RecordedPeak, RecordedRun, RecordedUse};
use crate::summary::{MachineView, NodeLane, Setting};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::choice::Choice;
use fairshare_core::model::{ReadStats, Task, Time};
use fairshare_core::policy::PolicySpec;
use fairshare_sim::cluster::{
    self, Capacity, ClusterConfig, JobOutcome, Overrun, Partition, PlacementEntry, PolicyResult,
    QueueLimit, SchedulerEntry, SchedulerSettings, SlurmParameters, Stop, Window, TOP_USERS,
};
use fairshare_trace::{Format, ReadOptions, TaskSource, TraceError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

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
    /// ([`ClusterConfig::opens`]): the jobs started before it are started as they were, and
    /// the results count from it. `None`: the run starts on an empty machine.
    pub opens: Option<Time>,
    /// The site's limits on groups of jobs, whatever the policy ([`ClusterConfig::limits`]).
    pub limits: Vec<cluster::Limit>,
    /// The spans the site took nodes from its jobs ([`ClusterConfig::outages`]).
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

/// Why a replay cannot be set up or run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LabError {
    /// The trace cannot be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A site bundle is missing a file or its manifest cannot be read.
    #[error(transparent)]
    Bundle(#[from] fairshare_trace::bundle::BundleError),
    /// A record that lenient reading would skip stopped a strict read.
    #[error("{0} (--lenient skips such records and counts them)")]
    Record(TraceError),
    /// The trace, a capacity or a machine list cannot be used, and why.
    #[error("{0}")]
    Unusable(String),
    /// A file of results could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A run stopped: the engine refused its input or reading failed.
    #[error("replaying under {policy}")]
    Run {
        /// The policy of the run.
        policy: String,
        /// What went wrong: the engine's own error, kept as the cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Fails with [`LabError::Unusable`] and this message.
macro_rules! unusable {
    ($($arg:tt)*) => { return Err(LabError::Unusable(format!($($arg)*))) };
}

/// Below this mean use of the processors at the peak of a log's own schedule, a machine sized
/// from that peak is warned about ([`MeasuredTrace::own_machine`]).
pub const SPARSE_PEAK: f64 = 0.4;

/// The warning for processors sized from the peak of a log's own schedule (`used`, processors
/// at index `cpu`) when that schedule kept them, on average, less than [`SPARSE_PEAK`] busy: a
/// peak far above the usual load is more often jobs recorded overlapping than the machine.
fn sparse_peak(used: &RecordedUse, cpu: usize) -> Option<String> {
    let (peak, mean) = (used.peak[cpu], used.mean[cpu]);
    (mean < SPARSE_PEAK * peak).then(|| format!(
        "the machine's {peak} processors are the most the log's own schedule ran at once, but that schedule kept them only {:.1} % busy on average (warned below {:.0} %): such a peak is more often jobs recorded overlapping than the machine, and on too large a machine every policy looks alike; give the site's machine with --capacity (e.g. cpu=N) or a .machines file beside the log",
        100.0 * mean / peak,
        100.0 * SPARSE_PEAK
    ))
}

/// A trace's own machine, where it came from in words, and what a reader should doubt of it.
#[derive(Debug, Clone)]
pub struct OwnMachine {
    /// The machine.
    pub capacity: Capacity,
    /// Where it came from, in words.
    pub source: String,
    /// A warning about it, when it was sized from the log's own schedule and looks too large.
    pub doubt: Option<String>,
}

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

    /// A pool of `fraction` × R, R being the trace's mean requested amount of each resource.
    pub fn pool_of_mean(&self, fraction: f64) -> Result<Capacity, LabError> {
        if !(fraction.is_finite() && fraction > 0.0) {
            unusable!("a capacity fraction must be a number > 0, found {fraction}");
        }
        let pool: Vec<f64> = self
            .load
            .mean_demand()
            .iter()
            .map(|r| r * fraction)
            .collect();
        if let Some(r) = pool.iter().position(|c| !(c.is_finite() && *c > 0.0)) {
            let name = &self.resources[r];
            unusable!(
                "the trace's mean request R of {name} is {}, so {fraction} × R gives no usable capacity; give one with --capacity",
                pool[r] / fraction
            );
        }
        Ok(Capacity::Pool(pool))
    }

    /// The machines listed in `path` (an SWF `.machines` file, an Alibaba node list, a Slurm
    /// site's nodes and partitions for a sacct dump, or a TOML catalogue for traces whose
    /// memory is in KB: SWF and sacct), over the resources of the
    /// replay.
    pub fn machines(&self, path: &std::path::Path) -> Result<Capacity, LabError> {
        let shown = path.display();
        let catalogue = if path.extension().is_some_and(|e| e == "toml") {
            if self.format != Format::SWF && self.format != Format::SACCT {
                unusable!(
                    "{shown}: a TOML catalogue gives memory in KB and the {} trace's units differ; use its own machine list",
                    self.format
                );
            }
            fairshare_trace::read_catalogue(path)?
        } else {
            fairshare_trace::read_machines(path, self.format)?
        };
        let total = catalogue.nodes();
        if total == 0 {
            unusable!("{shown}: lists no machines");
        }
        if total > MOST_MACHINES {
            unusable!("{shown}: {total} machines; at most {MOST_MACHINES} can be simulated");
        }
        // Machine lists give resources in the reader's order (CPU first); a trace read with
        // fewer resources (e.g. SWF without memory) uses the leading ones.
        let Some(catalogue) = catalogue.project(&self.keep) else {
            let listed = catalogue
                .types
                .iter()
                .map(|t| t.capacity.len())
                .min()
                .unwrap_or(0);
            unusable!(
                "{shown}: machines list {listed} resources, the trace {} ({})",
                self.resources.len(),
                self.resources.join(", ")
            );
        };
        for (r, name) in self.resources.iter().enumerate() {
            if catalogue
                .types
                .iter()
                .all(|t| t.count == 0 || t.capacity[r] <= 0.0)
            {
                unusable!("{shown}: no machine has any {name}, yet the trace's tasks request it");
            }
        }
        Ok(Capacity::Machines(catalogue))
    }

    /// A pool written as `name=amount,...`, naming every resource of the replay once
    /// (resources of the trace that no task requests may be named, and are left out).
    pub fn pool(&self, spec: &str) -> Result<Capacity, LabError> {
        let mut pool = vec![None; self.resources.len()];
        for part in spec.split(',') {
            let Some((name, amount)) = part.split_once('=') else {
                unusable!("--capacity: expected NAME=AMOUNT, found {part:?}");
            };
            let name = name.trim();
            let Ok(amount) = amount.trim().parse::<f64>() else {
                unusable!("--capacity: {name}: expected a number, found {amount:?}");
            };
            if self.input.resources_unused.iter().any(|u| u == name) && amount >= 0.0 {
                continue;
            }
            let Some(r) = self.resources.iter().position(|n| n == name) else {
                unusable!(
                    "--capacity: unknown resource {name:?}; the replay has {}",
                    self.resources.join(", ")
                );
            };
            if !(amount.is_finite() && amount > 0.0) {
                unusable!("--capacity: {name} must be a positive amount, found {amount}");
            }
            pool[r] = Some(amount);
        }
        match pool.iter().position(Option::is_none) {
            Some(r) => unusable!("--capacity: give an amount for {} too", self.resources[r]),
            None => Ok(Capacity::Pool(pool.into_iter().flatten().collect())),
        }
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

    /// When runs end, as the engine counts time.
    fn stop(&self, stop: StopRule) -> Stop {
        match stop {
            StopRule::Drain => Stop::Drain,
            StopRule::After(h) => Stop::Horizon(self.origin().plus_micros(h)),
            StopRule::LastEvent => Stop::Horizon(self.load.last_event().unwrap_or(self.origin())),
        }
    }

    /// The engine's configuration for one policy at one capacity.
    pub fn config(&self, replay: &Replay, policy: PolicySpec, capacity: Capacity) -> ClusterConfig {
        ClusterConfig {
            policy,
            capacity,
            resources: self.resources.clone(),
            users: self.users.clone(),
            scheduler: replay.scheduler.configured(&SchedulerSettings {
                rule: replay.rule,
                slurm: replay.slurm.clone(),
            }),
            placement: replay.placement.placement(),
            stop: self.stop(replay.stop),
            origin: self.origin(),
            sample_every: (self.span_from(replay.opens) / 200.0).max(1.0),
            top_users: replay.top_users,
            record_jobs: replay.jobs_during.map(|(from, to)| Window {
                from: self.origin().plus_micros(from),
                to: self.origin().plus_micros(to),
            }),
            queues: Vec::new(),
            shares: None,
            accounts: None,
            overrun: replay.overrun,
            partitions: (self.partitions.iter())
                .map(|name| {
                    let configured = replay.partitions.iter().find(|p| p.name == *name);
                    configured.cloned().unwrap_or_else(|| Partition {
                        // Slurm's default PriorityTier, where the site lists partitions.
                        tier: i32::from(!replay.partitions.is_empty()),
                        ..Partition::named(name)
                    })
                })
                .collect(),
            qos_factors: (self.qos.iter())
                .map(|name| replay.qos_factors.get(name).copied().unwrap_or(0.0))
                .collect(),
            assoc_factors: Vec::new(),
            opens: replay.opens,
            limits: replay.limits.clone(),
            outages: replay.outages.clone(),
        }
    }

    /// What every run of this trace shares, for the summaries; `fraction` is the pool's
    /// fraction of R, when it was given as one, and `source` says in words where the capacity
    /// came from.
    pub fn setting(
        &self,
        replay: &Replay,
        capacity: &Capacity,
        fraction: Option<f64>,
        source: &str,
    ) -> Setting {
        Setting {
            trace: self.trace.shown.clone(),
            format: self.format.to_string(),
            resources: self.resources.clone(),
            units: self.units.clone(),
            mean_demand: self.load.mean_demand(),
            capacity: capacity.total(),
            capacity_fraction: fraction,
            machines: capacity.machines(),
            users: self.users.len(),
            span_s: self.span_s(),
            horizon_s: match self.stop(replay.stop) {
                Stop::Drain => None,
                Stop::Horizon(h) => {
                    Some((h.as_micros().saturating_sub(self.origin().as_micros())) as f64 / 1e6)
                }
            },
            rule: replay.rule.to_string(),
            scheduler: replay.scheduler.name().into(),
            overrun: replay.overrun.name().into(),
            turn_seed: replay.slurm.turn_seed,
            loop_turns_shown: replay.slurm.loop_turns.as_ref().map(|turns| turns.shown()),
            controller_starts_shown: (replay.slurm.loop_turns.as_ref())
                .map(|_| replay.slurm.loop_starts.len()),
            backfill_cycles_shown: replay.slurm.bf_cycles.as_ref().map(|turns| turns.shown()),
            placement: replay.placement.name().into(),
            capacity_source: source.into(),
            capacity_doubt: None,
            shares: String::new(),
            queues: String::new(),
            recorded: self.recorded.clone(),
            machine_view: replay.jobs_during.map(|(from, to)| MachineView {
                origin: self.origin(),
                users: self.users.clone(),
                from_s: from as f64 / 1e6,
                to_s: to as f64 / 1e6,
                nodes: capacity
                    .named_nodes()
                    .into_iter()
                    .map(|(name, processors)| NodeLane { name, processors })
                    .collect(),
            }),
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

    /// The trace's own machine (SWF), where it was found, and what a reader should doubt of
    /// it: a `.machines` file beside the first trace file; else the processors the header
    /// declares (`MaxProcs`) and, for the other resources, the
    /// most the log's own schedule ran at once; else that most of every resource. `None` when
    /// the trace says nothing about its machine.
    pub fn own_machine(&self) -> Result<Option<OwnMachine>, LabError> {
        if self.format != Format::SWF {
            return Ok(None);
        }
        if let Some(path) = self.beside(".machines") {
            return Ok(Some(OwnMachine {
                capacity: self.machines(&path)?,
                source: format!("{}, found beside the log", path.display()),
                doubt: None,
            }));
        }
        let declared = self.input.declared_processors;
        let cpu = self.resources.iter().position(|r| r == "cpu");
        let used = self.recorded_use.as_ref();
        let used = used.filter(|u| u.peak.iter().all(|x| *x > 0.0));
        Ok(match (declared.zip(cpu), used) {
            (Some((procs, _)), _) if self.resources.len() == 1 => Some(OwnMachine {
                capacity: Capacity::Pool(vec![procs as f64]),
                source: format!("the log's header (MaxProcs: {procs})"),
                doubt: None,
            }),
            (Some((procs, cpu)), Some(used)) => {
                let mut capacity = used.peak.clone();
                capacity[cpu] = procs as f64;
                let derived: Vec<usize> = (0..capacity.len()).filter(|&r| r != cpu).collect();
                Some(OwnMachine {
                    capacity: Capacity::Pool(capacity),
                    source: format!(
                        "the log's header (MaxProcs: {procs}) for cpu; the most the log's own schedule ran at once for {}",
                        derived.iter().map(|&r| self.resources[r].as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    doubt: None,
                })
            }
            (None, Some(used)) => Some(OwnMachine {
                capacity: Capacity::Pool(used.peak.clone()),
                source: "no machine declared: the most of each resource the log's own schedule ran at once".into(),
                doubt: cpu.and_then(|cpu| sparse_peak(used, cpu)),
            }),
            _ => None,
        })
    }

    /// The site's queue limits, from `path` or else a `.queues` file beside the first trace
    /// file, by the trace's queue index, with where they came from and what did not match;
    /// `None` when there is no such file.
    pub fn queue_limits(&self, path: Option<&Path>) -> Result<Option<Queues>, LabError> {
        let Some(path) = path
            .map(Path::to_path_buf)
            .or_else(|| self.beside(".queues"))
        else {
            return Ok(None);
        };
        let rules = fairshare_trace::read_queues(&path)?;
        let rule = |name: &String| rules.iter().find(|r| r.name == *name);
        let limits = self
            .queues
            .iter()
            .map(|name| {
                rule(name).map_or_else(QueueLimit::default, |r| QueueLimit {
                    processors: r.processor_limit,
                    priority: r.priority,
                    cost: r.cost,
                })
            })
            .collect();
        let unlisted: Vec<String> = self
            .queues
            .iter()
            .filter(|q| rule(q).is_none())
            .cloned()
            .collect();
        let unused = rules.iter().filter(|r| !self.queues.contains(&r.name));
        Ok(Some(Queues {
            limits,
            source: path.display().to_string(),
            unlisted,
            unused: unused.map(|r| r.name.clone()).collect(),
        }))
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

    /// Whether the tasks were kept in memory after the first pass (at most [`KEEP_AT_MOST`]).
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
