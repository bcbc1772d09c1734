//! The `process` engine: clients cycling over resource queues, as in the bottleneck paper's
//! simulator (docs/mechanisms.md, bottleneck §3).
//!
//! Each process runs its program one request at a time. Every resource has its own queue, all
//! ordered by the same global priority; resources whose name ends in `_CS` are time-sliced in
//! quanta and put the client back at the tail after each quantum, the others serve a request to
//! completion; `idle` only delays. Allocation, consumption and busy time are kept in exact
//! sliding windows ([`fairshare_core::usage::window`]; no ticks), and a waiting process's
//! priority is reused for as long as its windows say their readings hold. With one allocation
//! per resource, a dispatch also leaves uncomputed the stale priorities that cannot have risen
//! to the best one since they were last computed (`Engine::ceiling`). At each instant the
//! engine ends grants, ends idle periods, updates the active set, then dispatches every free
//! resource in lane order (§3.2).
//!
//! A run stops with an error rather than run on without end: after
//! [`MAX_EVENTS_PER_RUN`] events, or when something falls due after [`MAX_TIME_S`].

mod curves;
mod priority;
mod program;
pub mod result;
mod summary;

mod active;
mod dispatch;
mod flow;

use dispatch::Waiting;
use program::{micros, Cursor};

use crate::scenario::{is_time_sliced, Accounting, Scenario, MAX_EVENTS_PER_RUN, MAX_TIME_S};
use fairshare_core::model::Time;
use fairshare_core::usage::window::{ServiceWindow, SharedWindow};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub use summary::{
    engine_events, simulate, simulate_each, simulate_with_progress, Progress, SimulateError,
};

/// What a process is doing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Delayed by a leading `idle` or `start`; not arrived yet.
    Waiting,
    /// Suspended by an `idle` request.
    Idle,
    /// In a resource's queue.
    Queued(usize),
    /// Being served by a resource.
    Serving(usize),
    /// Its program has ended.
    Done,
}

/// Something due at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A grant on this resource ends (request done or quantum over).
    GrantEnd(usize),
    /// This process's idle request ends.
    IdleEnd(usize),
    /// A grace period of this process ends (on this resource, in per-resource accounting).
    GraceEnd(usize, Option<usize>, u64),
    /// Priorities are recomputed (with a priority interval).
    Snapshot,
}

/// One process during a run.
struct Proc {
    entitlement: f64,
    program: Cursor,
    remaining: u64,
    state: State,
    arrived: bool,
    finish: Option<Time>,
}

/// One resource during a run.
struct Res {
    sliced: bool,
    queue: Vec<Waiting>,
    holder: Option<usize>,
    /// When it last became busy (the current grant's start) or idle.
    since: Time,
    /// When its bottleneck status was last computed.
    checked: Time,
}

/// The state of one run.
struct Engine<'a> {
    scenario: &'a Scenario,
    now: Time,
    procs: Vec<Proc>,
    res: Vec<Res>,
    events: BinaryHeap<Reverse<(Time, u64, Event)>>,
    seq: u64,
    /// Events due at the current instant (kept to reuse its memory).
    due: Vec<Event>,
    /// Processes whose program has not ended.
    live: usize,
    /// Per accounting slot (1, or 1 per resource): which processes are active in it, and each
    /// one's entitled service in the window.
    allocation: Vec<SharedWindow>,
    /// Per process: service from each resource in the window.
    consumption: Vec<ServiceWindow>,
    /// Per resource: its busy time in the window.
    busy: Vec<ServiceWindow>,
    /// Scratch for one priority: allocation and consumption in seconds, and the one resource
    /// a per-resource priority looks at.
    allocated: Vec<f64>,
    consumed: Vec<f64>,
    only: Vec<bool>,
    /// Per process and slot: the token of its running grace period.
    grace: Vec<Vec<u64>>,
    /// Per slot: its active set changed, so its allocation rates need recomputing.
    dirty: Vec<bool>,
    /// Raised whenever the bottlenecks or the entitlement rates change: priorities computed
    /// before no longer hold (one increment, not a pass over every queue).
    epoch: u64,
    /// Raised whenever the shares or the bottlenecks change, or a slot's rate per unit of
    /// entitlement leaves `(0, cap]`: how far a priority computed before can have risen since
    /// is then unknown.
    bounds: u64,
    /// Above every slot's rate per unit of entitlement since `bounds` was last raised: twice
    /// the highest when it was.
    cap: f64,
    /// Scratch for one dispatch: the stale priorities' ceilings and places in the queue.
    stale: Vec<(f64, usize)>,
    /// Per process: the slots it is active in (what the slots say, counted where the shares
    /// are renormalised: asking every slot there was a tenth of the engine's time).
    active_slots: Vec<usize>,
    /// Some process became active anywhere, or stopped being: the shares need renormalising.
    regrouped: bool,
    /// With a priority interval (docs/mechanisms.md, bottleneck §2.7): each active process's priority, taken at the last
    /// snapshot, or on entry for a process that became active since; `None` while inactive.
    frozen: Option<Vec<Option<f64>>>,
    /// The bottlenecks priorities are computed against: of the last snapshot with a priority
    /// interval, else of the current instant once `fresh`.
    bottleneck: Vec<bool>,
    fresh: bool,
    /// Per process: its entitlement renormalised over the processes active anywhere (1 while
    /// none is).
    shares: Vec<f64>,
    /// Per resource: its grants so far, in order.
    grants: Vec<Vec<Grant>>,
    handled: u64,
}

/// Everything one run produced.
pub(crate) struct Run {
    grants: Vec<Vec<Grant>>,
    finish: Vec<Option<Time>>,
    end: Time,
    events: u64,
}

/// Why a run was stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Stop {
    /// It reached [`MAX_EVENTS_PER_RUN`] at this instant.
    TooManyEvents(Time),
    /// At the first instant, something (of this process, if known) fell due at the second,
    /// after [`MAX_TIME_S`].
    TooLate(Time, Time, Option<usize>),
}

/// The engine's clock only moves forward, so its windows never refuse a reading.
const FORWARD: &str = "the engine's clock only moves forward";

/// Events between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

impl<'a> Engine<'a> {
    fn new(scenario: &'a Scenario, seed: u64) -> Engine<'a> {
        let sim = &scenario.simulation;
        let m = scenario.resources.len();
        let slots = if sim.accounting == Accounting::PerResource {
            m
        } else {
            1
        };
        let window = micros(sim.window);
        let total: f64 = scenario.processes.iter().map(|p| p.entitlement).sum();
        let procs: Vec<Proc> = scenario
            .processes
            .iter()
            .enumerate()
            .map(|(i, p)| Proc {
                entitlement: p.entitlement / total,
                program: Cursor::new(scenario, i, seed),
                remaining: 0,
                state: State::Waiting,
                arrived: false,
                finish: None,
            })
            .collect();
        let n = procs.len();
        let entitlements = procs.iter().map(|p| p.entitlement).collect();
        let shared = SharedWindow::new(entitlements, window)
            .expect("entitlements are checked positive when the scenario is read");
        let res = scenario
            .resources
            .iter()
            .map(|name| Res {
                sliced: is_time_sliced(name),
                queue: Vec::new(),
                holder: None,
                since: Time::ZERO,
                checked: Time::ZERO,
            })
            .collect();
        Engine {
            scenario,
            now: Time::ZERO,
            procs,
            res,
            events: BinaryHeap::new(),
            seq: 0,
            due: Vec::new(),
            live: n,
            allocation: vec![shared; slots],
            consumption: vec![ServiceWindow::new(m, window); n],
            busy: vec![ServiceWindow::new(1, window); m],
            allocated: vec![0.0; slots],
            consumed: vec![0.0; m],
            only: vec![false; m],
            grace: vec![vec![0; slots]; n],
            dirty: vec![false; slots],
            epoch: 0,
            bounds: 0,
            cap: 0.0,
            stale: Vec::new(),
            active_slots: vec![0; n],
            regrouped: false,
            frozen: None,
            bottleneck: vec![false; m],
            fresh: false,
            shares: vec![1.0; n],
            grants: vec![Vec::new(); m],
            handled: 0,
        }
    }

    fn schedule(&mut self, at: Time, event: Event) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, event)));
    }

    /// Runs to the end of every program (or the scenario's duration), telling `progress` the
    /// instant and the events handled every [`PROGRESS_EVERY`] events.
    fn run(mut self, progress: &mut dyn FnMut(Time, u64)) -> Result<Run, Stop> {
        let sim = &self.scenario.simulation;
        let stop = sim.duration.map(|d| Time(micros(d)));
        let latest = Time(micros(MAX_TIME_S));
        for (i, p) in self.scenario.processes.iter().enumerate() {
            self.schedule(Time(micros(p.start)), Event::IdleEnd(i));
        }
        if sim.priority_interval > 0.0 {
            self.frozen = Some(vec![None; self.procs.len()]);
            self.schedule(Time::ZERO, Event::Snapshot);
        }
        let mut report = PROGRESS_EVERY;
        while let Some(Reverse((t, _, event))) = self.events.peek().copied() {
            if stop.is_some_and(|s| t > s) || self.live == 0 {
                break;
            }
            if t > latest {
                return Err(Stop::TooLate(self.now, t, self.owner(event)));
            }
            self.now = t;
            self.instant();
            if self.handled > MAX_EVENTS_PER_RUN {
                return Err(Stop::TooManyEvents(self.now));
            }
            if self.handled >= report {
                progress(self.now, self.handled);
                report = self.handled + PROGRESS_EVERY;
            }
        }
        let end = match stop {
            Some(s) if self.live > 0 => s,
            _ => self.now,
        };
        Ok(self.close(end))
    }

    /// The process an event is about, if any.
    fn owner(&self, event: Event) -> Option<usize> {
        match event {
            Event::GrantEnd(j) => self.res[j].holder,
            Event::IdleEnd(i) | Event::GraceEnd(i, _, _) => Some(i),
            Event::Snapshot => None,
        }
    }

    /// Everything due now, in the order of docs/mechanisms.md, bottleneck §3, then one dispatch of every free resource.
    fn instant(&mut self) {
        let mut due = std::mem::take(&mut self.due);
        while let Some(Reverse((t, _, e))) = self.events.peek().copied() {
            if t != self.now {
                break;
            }
            self.events.pop();
            due.push(e);
        }
        self.handled += due.len() as u64;
        self.fresh &= self.frozen.is_some();
        // Grant ends by holder, then idle ends by process, then grace ends, then snapshots.
        let order = |e: &Event, res: &[Res]| match *e {
            Event::GrantEnd(j) => (0, res[j].holder.unwrap_or(usize::MAX)),
            Event::IdleEnd(i) => (1, i),
            Event::GraceEnd(i, _, _) => (2, i),
            Event::Snapshot => (3, 0),
        };
        due.sort_by_key(|e| (order(e, &self.res), *e));
        let mut snapshot = false;
        for event in due.drain(..) {
            match event {
                Event::GrantEnd(j) => self.end_grant(j),
                Event::IdleEnd(i) => self.proceed(i),
                Event::GraceEnd(i, slot, token) => self.end_grace(i, slot, token),
                Event::Snapshot => snapshot = true,
            }
        }
        self.due = due;
        self.refresh_rates();
        if self.frozen.is_some() {
            self.freeze(snapshot);
        }
        for j in 0..self.res.len() {
            self.dispatch(j);
        }
    }
    /// Ends the run at `end`: grants still open count up to it.
    fn close(mut self, end: Time) -> Run {
        for j in 0..self.res.len() {
            if let Some(i) = self.res[j].holder {
                log_grant(&mut self.grants[j], self.res[j].since, end, i);
            }
        }
        Run {
            finish: self.procs.iter().map(|p| p.finish).collect(),
            grants: self.grants,
            end,
            events: self.handled,
        }
    }
}

/// Service of one process by one resource: `[start, end)`, and the process.
type Grant = (Time, Time, usize);

/// Appends the grant of `[start, end)` to `process`, as one with the previous grant when that
/// went to the same process and ended at `start` (consecutive quanta).
fn log_grant(grants: &mut Vec<Grant>, start: Time, end: Time, process: usize) {
    if end <= start {
        return;
    }
    match grants.last_mut() {
        Some(last) if last.2 == process && last.1 == start => last.1 = end,
        _ => grants.push((start, end, process)),
    }
}

#[cfg(test)]
mod tests;
