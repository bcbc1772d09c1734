//! What every reader yields and reports, whatever the format.
//!
//! The simulator wants one shape — tasks in submit order with a demand vector, the names of the
//! resources and users, and an honest account of what was left out — and must not care which
//! trace it came from. This module is that shape, plus the bookkeeping ([`Meta`]) that makes the
//! account add up: every task found is either yielded or skipped under a named reason.

use crate::TraceError;
use fairshare_core::model::Time;
pub use fairshare_core::model::{ReadStats, Task};
use std::collections::{BTreeMap, HashMap};

/// A stream of tasks in non-decreasing submit order, with what describes them.
///
/// When the stream ends (`next` returns `None`), [`ReadStats::reconciles`] holds. After an
/// `Err` the stream ends too: in strict mode at the first bad record, in any mode on I/O errors.
pub trait TaskSource: Iterator<Item = Result<Task, TraceError>> {
    /// Resource names, in the order of every task's demand vector.
    fn resources(&self) -> &[String];
    /// The unit of each resource, in the same order.
    fn units(&self) -> &[String];
    /// User or tenant names; [`Task::user`] indexes this list, which grows as the stream goes on.
    fn users(&self) -> &[String];
    /// Queue names; [`Task::queue`] indexes this list (empty when the format has no queues).
    fn queues(&self) -> &[String];
    /// Partition names; [`Task::partition`] indexes this list (empty when the format has none).
    fn partitions(&self) -> &[String];
    /// QOS names; [`Task::qos`] indexes this list (empty when the format has none).
    fn qos(&self) -> &[String];
    /// What has been read, yielded and skipped so far.
    fn stats(&self) -> &ReadStats;
    /// Each task's job as the trace names it, by [`Task::id`], where the trace's own job ids
    /// are not numbers fairshare keeps as ids (a Slurm dump's `JobID`, `123_4` for an array's
    /// task); empty otherwise.
    fn job_names(&self) -> &[String];
}

/// What a source knows besides its tasks, and the counting every reader shares.
pub(crate) struct Meta {
    resources: Vec<String>,
    units: Vec<String>,
    users: Names,
    queues: Names,
    partitions: Names,
    qos: Names,
    lenient: bool,
    pub stats: ReadStats,
    /// Each task's job as the trace names it, by task id, when the reader keeps them.
    pub job_names: Vec<String>,
}

impl Meta {
    /// Metadata for `resources` in `units`.
    pub fn new(resources: &[&str], units: &[&str], lenient: bool) -> Meta {
        Meta {
            resources: resources.iter().map(|&r| r.to_owned()).collect(),
            units: units.iter().map(|&u| u.to_owned()).collect(),
            users: Names::default(),
            queues: Names::default(),
            partitions: Names::default(),
            qos: Names::default(),
            lenient,
            stats: ReadStats::default(),
            job_names: Vec::new(),
        }
    }

    /// The index of user `name`, adding it on first sight.
    pub fn user(&mut self, name: &str) -> u32 {
        self.users.index(name)
    }

    /// The index of queue `name`, adding it on first sight.
    pub fn queue(&mut self, name: &str) -> u32 {
        self.queues.index(name)
    }

    /// The index of partition `name`, adding it on first sight.
    pub fn partition(&mut self, name: &str) -> u32 {
        self.partitions.index(name)
    }

    /// The index of QOS `name`, adding it on first sight.
    pub fn qos(&mut self, name: &str) -> u32 {
        self.qos.index(name)
    }

    /// Widens the span of times the input gives to take in `t`.
    pub fn event(&mut self, t: Time) {
        let stats = &mut self.stats;
        stats.first_event = Some(stats.first_event.map_or(t, |f| f.min(t)));
        stats.last_event = Some(stats.last_event.map_or(t, |l| l.max(t)));
    }

    /// Counts one record read.
    pub fn read(&mut self) {
        self.stats.records_read += 1;
    }

    /// Counts one task found.
    pub fn found(&mut self) {
        self.stats.tasks_found += 1;
    }

    /// Counts `n` tasks skipped for `reason` (no entry when `n` is 0).
    pub fn skip(&mut self, reason: &str, n: u64) {
        if n > 0 {
            bump(&mut self.stats.tasks_skipped, reason, n);
        }
    }

    /// Counts one record ignored for `reason`.
    pub fn ignore(&mut self, reason: &str) {
        bump(&mut self.stats.records_ignored, reason, 1);
    }

    /// Counts one record whose id an earlier record already had.
    pub fn duplicate(&mut self) {
        self.stats.duplicate_ids += 1;
    }

    /// Records a decision about the whole input.
    pub fn note(&mut self, note: String) {
        self.stats.notes.push(note);
    }

    /// Notes that `n` tasks are held in memory now.
    pub fn holding(&mut self, n: usize) {
        self.stats.peak_held = self.stats.peak_held.max(n as u64);
    }

    /// Deals with an error: a bad record counts as read, and as a task found and skipped; in
    /// lenient mode it is then dropped (`None`), otherwise it is handed back to end the stream.
    pub fn reject(&mut self, error: TraceError) -> Option<TraceError> {
        let Some(reason) = error.skip_reason() else {
            return Some(error);
        };
        self.read();
        self.found();
        self.skip(&reason, 1);
        (!self.lenient).then_some(error)
    }
}

/// Names in order of first sight, each with its index.
#[derive(Default)]
pub(crate) struct Names {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl Names {
    /// The index of `name`, adding it on first sight.
    fn index(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), i);
        i
    }
}

/// Adds `n` to the count under `key`.
fn bump(counts: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    match counts.get_mut(key) {
        Some(count) => *count += n,
        None => {
            counts.insert(key.to_owned(), n);
        }
    }
}

/// A format's reader: hands out the next task, doing its own counting in `meta`.
pub(crate) trait Reader {
    /// The next task; `None` when the input is exhausted; `Err` only for errors that end the
    /// stream (the reader has already passed them through [`Meta::reject`]).
    fn next_task(&mut self, meta: &mut Meta) -> Option<Result<Task, TraceError>>;
}

/// The reader of formats that are snapshots rather than logs (the Alibaba pod list, sacct
/// dumps): every task is loaded first and yielded in submit order (ties in load order). An
/// error that stopped the loading comes first and ends the stream, since the tasks loaded
/// before it are not the ones that come before it in submit order.
pub(crate) struct Loaded {
    tasks: std::vec::IntoIter<Task>,
    error: Option<TraceError>,
}

impl Loaded {
    /// The source of `tasks`, sorted, or of `error` alone when there is one.
    pub fn source(
        mut tasks: Vec<Task>,
        error: Option<TraceError>,
        mut meta: Meta,
    ) -> Source<Loaded> {
        tasks.sort_by_key(|task| task.submit);
        meta.holding(tasks.len());
        let tasks = tasks.into_iter();
        Source::new(Loaded { tasks, error }, meta)
    }
}

impl Reader for Loaded {
    fn next_task(&mut self, _meta: &mut Meta) -> Option<Result<Task, TraceError>> {
        match self.error.take() {
            Some(e) => Some(Err(e)),
            None => self.tasks.next().map(Ok),
        }
    }
}

/// A [`TaskSource`] made of a format's reader and its metadata.
pub(crate) struct Source<R> {
    reader: R,
    meta: Meta,
    ended: bool,
}

impl<R: Reader> Source<R> {
    /// The source reading with `reader`, described by `meta`.
    pub fn new(reader: R, meta: Meta) -> Source<R> {
        Source {
            reader,
            meta,
            ended: false,
        }
    }
}

impl<R: Reader> Iterator for Source<R> {
    type Item = Result<Task, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        let item = self.reader.next_task(&mut self.meta);
        match item {
            Some(Ok(_)) => self.meta.stats.tasks_yielded += 1,
            _ => self.ended = true,
        }
        item
    }
}

impl<R: Reader> TaskSource for Source<R> {
    fn resources(&self) -> &[String] {
        &self.meta.resources
    }

    fn units(&self) -> &[String] {
        &self.meta.units
    }

    fn users(&self) -> &[String] {
        &self.meta.users.names
    }

    fn queues(&self) -> &[String] {
        &self.meta.queues.names
    }

    fn partitions(&self) -> &[String] {
        &self.meta.partitions.names
    }

    fn qos(&self) -> &[String] {
        &self.meta.qos.names
    }

    fn stats(&self) -> &ReadStats {
        &self.meta.stats
    }

    fn job_names(&self) -> &[String] {
        &self.meta.job_names
    }
}
