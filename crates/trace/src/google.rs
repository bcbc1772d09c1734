//! The Google cluster trace 2011 (clusterdata-2011-2): the `task_events` table.
//!
//! This is the workload of the SDRF paper's evaluation, so it is read exactly as that paper's
//! code filtered it (docs/mechanisms.md, SDRF §8.1). The table is a log of events, not of tasks: a task's
//! life is rebuilt by a state machine, keyed by (job id, task index), over the events in time
//! order. Parts (`part-00000-of-00500.csv.gz`, …) are read in the order given, as one stream.
//!
//! Fields (CSV without header, counted from 1): 1 time (µs), 2 missing info, 3 job id, 4 task
//! index, 5 machine id, 6 event type (0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL, 4 FINISH, 5 KILL,
//! 6 LOST, 7/8 UPDATE), 7 user (hashed), 8 scheduling class, 9 priority, 10 CPU request,
//! 11 memory request, 12 disk request, 13 different-machine constraint. Fields 5, 8, 9, 12 and
//! 13 are not used and not checked. The requests (fields 10 and 11) are checked on every event,
//! though only SCHEDULE's are used: a value that is not a number ≥ 0 is a malformed record.
//!
//! The filter, step by step:
//!
//! 1. An event whose missing-info field is non-empty is dropped (ignored: "missing info"), and
//!    so is an event at time 2⁶³ − 1, which the trace uses for "after the end of the trace
//!    window" (ignored: "after the trace window"); its task then has no known end. Other times
//!    must be at most 10¹⁶ µs (about 317 years).
//! 2. SUBMIT at time 0 — the task was there before the trace began — is not followed: the task
//!    is skipped as "submitted before the trace", and its later events are ignored ("untracked
//!    task"). SUBMIT at any other time makes the task *pending* with that submit time and user.
//!    A SUBMIT of a task already pending or running starts it afresh (the old one is skipped as
//!    "resubmitted"; the shared parts have none).
//! 3. SCHEDULE of a pending task makes it *running*, with the start time and the CPU and memory
//!    requests of this event (an empty request reads as 0; UPDATE events are ignored).
//! 4. EVICT, KILL or LOST forget the task: skipped as "cancelled by the system" (a later SUBMIT
//!    may bring it back as a new task).
//! 5. FAIL of a pending task forgets it ("failed before it started"). FAIL or FINISH of a running
//!    task completes it: it is yielded if both requests are > 0, else skipped as "zero request".
//!    Runtime = this event's time − the SCHEDULE's time.
//! 6. Tasks still pending or running after the last event of the last part have no known end:
//!    skipped as "no known end".
//!
//! Events that fit no transition (a SCHEDULE of a running task, a FINISH of a pending one) are
//! ignored as "no transition". Event times must not decrease.
//!
//! A task's `id` is its SUBMIT's rank among all SUBMIT events read (from 0), so re-submissions
//! are distinct tasks; users are the hashed user strings of every task followed (so a user whose
//! tasks were all skipped later is still listed); demands are `[cpu, mem]`, both as
//! fractions of the largest machine.
//!
//! Order and memory: completed tasks come out in submit order (ties in SUBMIT order) through a
//! reorder buffer. A completed task is held until no unresolved (pending or running) task was
//! submitted before it. Since event times never decrease, SUBMIT order is submit order, so the
//! buffer is a queue with a 4-byte slot per SUBMIT rank from the oldest task still in flight on,
//! each completed task held in a 64-byte entry. One long-running task submitted early holds
//! back everything completed after it: on a whole month that can be most of the trace, in the
//! worst case until the end of the stream. [`crate::ReadStats::peak_held`] reports the most
//! tasks held at once.

use crate::input::{is_number, Col, CsvFiles, Record};
use crate::source::{Meta, Reader, Source, Task};
use crate::{Format, ReadOptions, TraceError};
use fairshare_core::model::Time;
use rustc_hash::FxHashMap;
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

const FIELDS: usize = 13;
const TIME: Col = Col::new(1, "time");
const MISSING: Col = Col::new(2, "missing info");
const JOB: Col = Col::new(3, "job id");
const INDEX: Col = Col::new(4, "task index");
const EVENT: Col = Col::new(6, "event type");
const USER: Col = Col::new(7, "user");
const CPU: Col = Col::new(10, "cpu request");
const MEMORY: Col = Col::new(11, "memory request");

const UNTRACKED: &str = "untracked task";
const NO_TRANSITION: &str = "no transition";

/// What an event does to its task.
enum Kind<'a> {
    Submit(&'a str),
    Schedule { cpu: f64, mem: f64 },
    Cancel,
    Fail,
    Finish,
    Update,
}

/// A task's identity in the trace: (job id, task index).
type Key = (u64, u64);

/// A task's place in the output: (submit time, SUBMIT rank).
type Order = (Time, u64);

/// What became of the task of one SUBMIT, in the reorder buffer: [`Slot::UNRESOLVED`],
/// [`Slot::GONE`], or completed, as the index of its [`Completed`] entry. Four bytes, since the
/// buffer may span most of the trace's SUBMITs.
#[derive(Clone, Copy, PartialEq)]
struct Slot(u32);

impl Slot {
    /// Pending or running.
    const UNRESOLVED: Slot = Slot(u32::MAX);
    /// Skipped (or after the last event, with no known end).
    const GONE: Slot = Slot(u32::MAX - 1);
}

/// The completed tasks in the reorder buffer, each with its submit time, in entries that are
/// reused once given out.
#[derive(Default)]
struct Completed {
    entries: Vec<(Time, Done)>,
    free: Vec<u32>,
}

impl Completed {
    /// Holds a task, and the slot that names it.
    fn hold(&mut self, submit: Time, done: Done) -> Slot {
        match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = (submit, done);
                Slot(i)
            }
            // Below the two marks: memory runs out long before 4 × 10⁹ tasks of 48 bytes.
            None => {
                self.entries.push((submit, done));
                Slot(self.entries.len() as u32 - 1)
            }
        }
    }

    /// Gives out the task `slot` names.
    fn take(&mut self, slot: Slot) -> (Time, Done) {
        self.free.push(slot.0);
        self.entries[slot.0 as usize]
    }

    /// How many tasks are held.
    fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }
}

/// What a running task was given when scheduled.
#[derive(Clone, Copy)]
struct Running {
    start: Time,
    cpu: f64,
    mem: f64,
}

/// A completed task waiting in the reorder buffer, in a third of a [`Task`]'s space: the
/// reorder buffer may hold a large part of the trace (module docs).
#[derive(Clone, Copy)]
struct Done {
    /// Index into the stream's users.
    user: u32,
    /// Its job's id and its index within it.
    key: Key,
    runtime: u64,
    run: Running,
}

impl Done {
    /// The task, given its place in the output.
    fn task(self, (submit, id): Order) -> Task {
        let demand = vec![self.run.cpu, self.run.mem];
        let mut task = Task::new(id, self.user, submit, self.runtime, demand);
        task.start = Some(self.run.start);
        task.job_part = Some(self.key);
        task
    }
}

/// A task pending (`running` is `None`) or running.
struct InFlight {
    order: Order,
    /// Index into the users seen in SUBMIT events.
    user: u32,
    running: Option<Running>,
}

/// The state machine over task events, and the reorder buffer behind it.
#[derive(Default)]
struct Tasks {
    /// Keyed with a fast hash: the keys are the trace's own numbers, and the map is only
    /// looked up, counted and cleared, never walked, so its order cannot reach the output.
    in_flight: FxHashMap<Key, InFlight>,
    /// The reorder buffer: a slot per SUBMIT rank, from the first not yet given out on.
    slots: VecDeque<Slot>,
    completed: Completed,
    /// SUBMITs read so far: the rank of the next one.
    submissions: u64,
    last_time: Time,
    exhausted: bool,
    /// Every user seen in a SUBMIT, by name; only users with a task that is kept become users of
    /// the stream (docs/mechanisms.md, SDRF §8.2: n counts the users of the filtered trace).
    seen: FxHashMap<String, u32>,
    seen_names: Vec<String>,
}

/// Reads `task_events` parts as tasks.
pub(crate) struct GoogleReader {
    events: CsvFiles,
    tasks: Tasks,
}

/// The Google 2011 `task_events` table in the format registry ([`crate::Format`]): one
/// comma-separated field list (no whitespace between fields) starting with a number; no
/// machine list.
pub const FORMAT: Format = Format {
    name: "google",
    about: "Google cluster trace 2011 task_events parts",
    detect: |line| {
        let one_word = line.split_ascii_whitespace().nth(1).is_none();
        (one_word && is_number(line.split(',').next())).then_some(Format::RECORD)
    },
    sample: "0,2,3418309,0,4155527081,0,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,9,,,,",
    open: |paths, options| Box::new(open(paths, options)),
    machines: None,
};

/// A source of the tasks of the `task_events` parts `paths`, read in the order given.
pub(crate) fn open(paths: &[PathBuf], options: &ReadOptions) -> Source<GoogleReader> {
    let unit = "fraction of largest machine";
    let meta = Meta::new(&["cpu", "mem"], &[unit, unit], options.lenient);
    let reader = GoogleReader {
        events: CsvFiles::new(paths),
        tasks: Tasks::default(),
    };
    Source::new(reader, meta)
}

impl Reader for GoogleReader {
    fn next_task(&mut self, meta: &mut Meta) -> Option<Result<Task, TraceError>> {
        loop {
            if let Some(task) = self.tasks.pop_ready() {
                return Some(Ok(task));
            }
            if self.tasks.exhausted {
                return None;
            }
            let applied = match self.events.next_record() {
                None => {
                    self.tasks.close(meta);
                    continue;
                }
                Some(Ok(record)) => self.tasks.apply(&record, meta),
                Some(Err(e)) => Err(e),
            };
            if let Some(e) = applied.err().and_then(|e| meta.reject(e)) {
                return Some(Err(e));
            }
            meta.holding(self.tasks.in_flight.len() + self.tasks.completed.len());
        }
    }
}

/// The requests of the SUBMIT events of a trace: the pool the BAA-T paper's experiment draws
/// its users from (`spec/baa.md` §8).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubmitPool {
    /// `[cpu, mem]` of every SUBMIT event that asks for both (> 0), in file order;
    /// resubmissions count again.
    pub requests: Vec<[f64; 2]>,
    /// How many distinct tasks (job id, task index) those events belong to.
    pub tasks: usize,
}

/// The CPU and memory requests of every SUBMIT event of the parts `paths` that asks for both,
/// whatever happened to its task afterwards. A malformed record is an error naming file, line
/// and field.
pub fn submit_requests(paths: &[PathBuf]) -> Result<SubmitPool, TraceError> {
    let mut events = CsvFiles::new(paths);
    let mut pool = SubmitPool::default();
    let mut tasks = HashSet::new();
    while let Some(record) = events.next_record() {
        let record = record?;
        let at = record.at;
        if record.fields.len() != FIELDS {
            return Err(at.count_error("13", record.fields.len()));
        }
        if at.integer::<u8>(EVENT, record.raw(EVENT))? != 0 {
            continue;
        }
        let (cpu, mem) = (request(&record, CPU)?, request(&record, MEMORY)?);
        if cpu > 0.0 && mem > 0.0 {
            pool.requests.push([cpu, mem]);
            tasks.insert((
                at.integer::<u64>(JOB, record.raw(JOB))?,
                at.integer::<u64>(INDEX, record.raw(INDEX))?,
            ));
        }
    }
    pool.tasks = tasks.len();
    Ok(pool)
}

/// A request field: a number ≥ 0, or 0 when empty.
fn request(record: &Record, col: Col) -> Result<f64, TraceError> {
    let at = record.at;
    Ok(at
        .optional(record.raw(col), |r| at.amount(col, r))?
        .unwrap_or(0.0))
}

/// The time the trace gives events that happened after its window (2⁶³ − 1 µs).
const AFTER_THE_WINDOW: &[u8] = b"9223372036854775807";

/// The event of `record`, or the reason it is ignored (missing info, after the window).
type Parsed<'r> = Result<(Time, Key, Kind<'r>), &'static str>;

/// The event of `record`, or the reason to ignore it.
fn parse<'r>(record: &'r Record) -> Result<Parsed<'r>, TraceError> {
    let at = record.at;
    if record.fields.len() != FIELDS {
        return Err(at.count_error("13", record.fields.len()));
    }
    if !record.raw(MISSING).is_empty() {
        return Ok(Err("missing info"));
    }
    if record.raw(TIME) == AFTER_THE_WINDOW {
        return Ok(Err("after the trace window"));
    }
    let time = at.micros(TIME, record.raw(TIME))?;
    let key = (
        at.integer(JOB, record.raw(JOB))?,
        at.integer(INDEX, record.raw(INDEX))?,
    );
    // Only SCHEDULE's requests are used, but every event's are checked: a field that is not a
    // request is a malformed record whatever its event.
    let event = at.integer::<u8>(EVENT, record.raw(EVENT));
    let (cpu, mem) = match event {
        Ok(1) => (request(record, CPU)?, request(record, MEMORY)?),
        _ => {
            for col in [CPU, MEMORY] {
                at.optional(record.raw(col), |r| at.check_amount(col, r))?;
            }
            (0.0, 0.0)
        }
    };
    let kind = match event {
        Ok(0) => Kind::Submit(at.text(USER, record.raw(USER))?),
        Ok(1) => Kind::Schedule { cpu, mem },
        Ok(2 | 5 | 6) => Kind::Cancel,
        Ok(3) => Kind::Fail,
        Ok(4) => Kind::Finish,
        Ok(7 | 8) => Kind::Update,
        _ => return Err(at.error(EVENT, "an event type from 0 to 8", record.raw(EVENT))),
    };
    Ok(Ok((time, key, kind)))
}

impl Tasks {
    /// Applies the event of `record`.
    fn apply(&mut self, record: &Record, meta: &mut Meta) -> Result<(), TraceError> {
        let (time, key, kind) = match parse(record)? {
            Ok(event) => event,
            Err(reason) => {
                meta.read();
                meta.ignore(reason);
                return Ok(());
            }
        };
        if time < self.last_time {
            return Err(TraceError::OutOfOrder {
                file: record.at.file.to_path_buf(),
                line: record.at.line,
                time,
                previous: self.last_time,
            });
        }
        self.last_time = time;
        meta.read();
        match kind {
            Kind::Submit(user) => self.submit(key, time, user, meta),
            Kind::Schedule { cpu, mem } => self.schedule(
                key,
                Running {
                    start: time,
                    cpu,
                    mem,
                },
                meta,
            ),
            Kind::Cancel => match self.forget(key) {
                Some(_) => meta.skip("cancelled by the system", 1),
                None => meta.ignore(UNTRACKED),
            },
            Kind::Fail => self.end(key, time, true, meta),
            Kind::Finish => self.end(key, time, false, meta),
            Kind::Update => meta.ignore("update"),
        }
        Ok(())
    }

    /// The index of a user among all users seen in SUBMIT events.
    fn seen_user(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.seen.get(name) {
            return i;
        }
        let i = self.seen_names.len() as u32;
        self.seen.insert(name.to_owned(), i);
        self.seen_names.push(name.to_owned());
        i
    }

    /// SUBMIT: a new pending task, unless it was there before the trace.
    fn submit(&mut self, key: Key, time: Time, user: &str, meta: &mut Meta) {
        meta.found();
        let order = (time, self.submissions);
        if time == Time::ZERO {
            self.push(Slot::GONE);
            meta.skip("submitted before the trace", 1);
            return;
        }
        if self.forget(key).is_some() {
            meta.skip("resubmitted", 1);
        }
        let user = self.seen_user(user);
        let running = None;
        self.in_flight.insert(
            key,
            InFlight {
                order,
                user,
                running,
            },
        );
        self.push(Slot::UNRESOLVED);
    }

    /// The slot of the next SUBMIT rank (the slots cover the ranks up to `submissions`).
    fn push(&mut self, slot: Slot) {
        self.slots.push_back(slot);
        self.submissions += 1;
    }

    /// SCHEDULE: a pending task starts running.
    fn schedule(&mut self, key: Key, running: Running, meta: &mut Meta) {
        match self.in_flight.get_mut(&key) {
            Some(task) if task.running.is_none() => task.running = Some(running),
            Some(_) => meta.ignore(NO_TRANSITION),
            None => meta.ignore(UNTRACKED),
        }
    }

    /// FAIL (`failed`) or FINISH at `time`.
    fn end(&mut self, key: Key, time: Time, failed: bool, meta: &mut Meta) {
        let Some(running) = self.in_flight.get(&key).map(|t| t.running.is_some()) else {
            meta.ignore(UNTRACKED);
            return;
        };
        if !running && !failed {
            meta.ignore(NO_TRANSITION);
            return;
        }
        let Some(task) = self.forget(key) else { return };
        match task.running {
            None => meta.skip("failed before it started", 1),
            Some(run) if run.cpu > 0.0 && run.mem > 0.0 => {
                let user = meta.user(&self.seen_names[task.user as usize]);
                let runtime = time.as_micros().saturating_sub(run.start.as_micros());
                let done = Done {
                    user,
                    key,
                    runtime,
                    run,
                };
                *self.slot(task.order) = self.completed.hold(task.order.0, done);
            }
            Some(_) => meta.skip("zero request", 1),
        }
    }

    /// Removes a pending or running task.
    fn forget(&mut self, key: Key) -> Option<InFlight> {
        let task = self.in_flight.remove(&key)?;
        *self.slot(task.order) = Slot::GONE;
        Some(task)
    }

    /// The slot of the task submitted at `order`, whose task is unresolved (so still held:
    /// the slots before it cannot be given out).
    fn slot(&mut self, (_, rank): Order) -> &mut Slot {
        let first = self.first_rank();
        &mut self.slots[(rank - first) as usize]
    }

    /// The SUBMIT rank of the first slot (the slots cover the ranks up to `submissions`).
    fn first_rank(&self) -> u64 {
        self.submissions - self.slots.len() as u64
    }

    /// After the last event: what is still in flight has no known end.
    fn close(&mut self, meta: &mut Meta) {
        meta.skip("no known end", self.in_flight.len() as u64);
        // Not `clear`: the map's room goes back while the runs use the tasks read.
        self.in_flight = FxHashMap::default();
        self.exhausted = true;
    }

    /// The earliest completed task, if no unresolved task was submitted before it (after the
    /// last event, none is unresolved any more).
    fn pop_ready(&mut self) -> Option<Task> {
        loop {
            let Some(&slot) = self.slots.front() else {
                if self.exhausted {
                    // All given out: the buffer's room goes back too.
                    (self.slots, self.completed) = Default::default();
                }
                return None;
            };
            if slot == Slot::UNRESOLVED && !self.exhausted {
                return None;
            }
            let rank = self.first_rank();
            self.slots.pop_front();
            if slot != Slot::UNRESOLVED && slot != Slot::GONE {
                let (submit, done) = self.completed.take(slot);
                return Some(done.task((submit, rank)));
            }
        }
    }
}
