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

/// A process waiting in a resource's queue, with its priority as last computed: exact until
/// `valid_before` (µs, exclusive; 0 = not computed) unless the bottlenecks or the entitlement
/// rates change, which moves the engine to a new epoch.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    /// When it entered the queue, µs: ties go to the earlier entry, then to the lower process
    /// index (docs/mechanisms.md, bottleneck §2.5).
    entered: u64,
    process: usize,
    priority: f64,
    valid_before: u64,
    /// The engine's [`Engine::epoch`] when it was computed: from another, it no longer holds.
    epoch: u64,
    /// When it was computed, µs, and the engine's [`Engine::bounds`] then: from another, how far
    /// it can have risen since is unknown.
    at: u64,
    bounds: u64,
    /// Until when (µs) its service in the window stays as it was then: no past service of it
    /// leaves the window before.
    served_until: u64,
}

/// The place in `queue` of the process served first among those whose priority is `exact`
/// (at least one): the highest priority, and among priorities equal up to rounding the one
/// queued first.
///
/// The others must be certainly below the highest exact one, by more than rounding
/// ([`clearly_below`]): then they are passed over where the scan of every priority would have
/// found them, for whenever one of them would have led the scan, only such processes led it
/// then, and the first process near the top beats any of them outright.
fn first_served(queue: &[Waiting], exact: impl Fn(&Waiting) -> bool) -> usize {
    let tolerance = |p: f64| 1e-12 * p.abs().max(1.0);
    let mut best = queue
        .iter()
        .position(&exact)
        .expect("one priority is exact");
    let mut bar = tolerance(queue[best].priority);
    for (k, w) in queue.iter().enumerate().skip(best + 1) {
        if !exact(w) {
            continue;
        }
        let leader = &queue[best];
        let wins = if (w.priority - leader.priority).abs() <= bar {
            (w.entered, w.process) < (leader.entered, leader.process)
        } else {
            w.priority > leader.priority
        };
        if wins {
            (best, bar) = (k, tolerance(w.priority));
        }
    }
    best
}

/// Whether a priority of at most `ceiling` is below `best` by far more than the tolerance of
/// equal priorities in [`first_served`], whatever the size of either.
fn clearly_below(ceiling: f64, best: f64) -> bool {
    ceiling < best - 1e-6 * ceiling.abs().max(best.abs()).max(1.0)
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

    fn end_grant(&mut self, j: usize) {
        let Some(i) = self.res[j].holder.take() else {
            return;
        };
        let since = std::mem::replace(&mut self.res[j].since, self.now);
        log_grant(&mut self.grants[j], since, self.now, i);
        self.consumption[i].stop(self.now).expect(FORWARD);
        self.busy[j].stop(self.now).expect(FORWARD);
        let p = &mut self.procs[i];
        p.remaining = p
            .remaining
            .saturating_sub(self.now.as_micros() - since.as_micros());
        if p.remaining > 0 {
            self.enqueue(i, j);
        } else {
            self.proceed(i);
        }
    }

    /// Issues the process's next request: a queue, an idle delay, or the end of its program.
    fn proceed(&mut self, i: usize) {
        let left = self.procs[i].state;
        if let State::Queued(j) | State::Serving(j) = left {
            self.leave_resource(i, j);
        }
        loop {
            let p = &mut self.procs[i];
            let Some((resource, length)) = p.program.next() else {
                p.state = State::Done;
                p.finish = Some(self.now);
                self.live -= 1;
                self.deactivate(i, None);
                return;
            };
            if length == 0 {
                // Completes at once; counted as an event, so that a program of countless empty
                // requests meets the limit on events too.
                self.handled += 1;
                if self.handled > MAX_EVENTS_PER_RUN {
                    return;
                }
                continue;
            }
            p.remaining = length;
            match resource {
                None => {
                    p.state = if p.arrived {
                        State::Idle
                    } else {
                        State::Waiting
                    };
                    let (arrived, at) = (p.arrived, self.now.plus_micros(length));
                    self.schedule(at, Event::IdleEnd(i));
                    if arrived {
                        self.start_grace(i, None);
                    }
                }
                Some(j) => {
                    p.arrived = true;
                    self.activate(i, None);
                    self.enqueue(i, j);
                }
            }
            return;
        }
    }

    fn enqueue(&mut self, i: usize, j: usize) {
        self.res[j].queue.push(Waiting {
            entered: self.now.as_micros(),
            process: i,
            priority: 0.0,
            valid_before: 0,
            epoch: 0,
            at: 0,
            bounds: 0,
            served_until: 0,
        });
        self.procs[i].state = State::Queued(j);
        self.activate(i, Some(j));
    }

    /// The process left resource `j` for good (for now): per-resource grace starts.
    fn leave_resource(&mut self, i: usize, j: usize) {
        if self.allocation.len() > 1 {
            self.start_grace(i, Some(j));
        }
    }

    fn slot(&self, resource: Option<usize>) -> Option<usize> {
        match (self.allocation.len(), resource) {
            (1, None) => Some(0),
            (1, Some(_)) | (_, None) => None,
            (_, Some(j)) => Some(j),
        }
    }

    fn activate(&mut self, i: usize, resource: Option<usize>) {
        if let Some(s) = self.slot(resource) {
            self.grace[i][s] += 1;
            self.set_active(i, s, true);
        }
    }

    fn deactivate(&mut self, i: usize, resource: Option<usize>) {
        let slots: Vec<usize> = match resource {
            None => (0..self.allocation.len()).collect(),
            Some(j) => vec![j],
        };
        for s in slots {
            self.grace[i][s] += 1;
            self.set_active(i, s, false);
        }
    }

    fn start_grace(&mut self, i: usize, resource: Option<usize>) {
        let Some(s) = self.slot(resource).or(resource) else {
            return;
        };
        self.grace[i][s] += 1;
        let at = self.now.plus_micros(micros(self.scenario.simulation.grace));
        self.schedule(at, Event::GraceEnd(i, resource, self.grace[i][s]));
    }

    fn end_grace(&mut self, i: usize, resource: Option<usize>, token: u64) {
        let Some(s) = self.slot(resource).or(resource) else {
            return;
        };
        if self.grace[i][s] == token {
            self.deactivate(i, Some(s).filter(|_| self.allocation.len() > 1));
        }
    }

    /// After the active sets changed: every changed slot's allocation rates become the
    /// renormalised entitlements (0 when inactive), and the shares are renormalised over the
    /// processes active anywhere.
    fn refresh_rates(&mut self) {
        if !self.dirty.contains(&true) {
            return;
        }
        self.forget_priorities();
        if std::mem::take(&mut self.regrouped) {
            self.renormalise_shares();
            self.bounds += 1;
        }
        for s in 0..self.dirty.len() {
            if std::mem::take(&mut self.dirty[s]) {
                self.allocation[s].settle(self.now).expect(FORWARD);
            }
        }
        if self.prunes() {
            self.recap();
        }
    }

    /// Whether a dispatch computes only the stale priorities that can still win (by their
    /// ceilings): with one allocation per resource and live priorities. With one slot a
    /// priority is a few readings, cheaper than its ceiling; a frozen one is a lookup.
    fn prunes(&self) -> bool {
        self.allocation.len() > 1 && self.frozen.is_none()
    }

    /// Keeps `cap` above every slot's rate per unit of entitlement, and within a factor 8 of
    /// the highest, raising `bounds` whenever it moves.
    fn recap(&mut self) {
        let highest = self
            .allocation
            .iter()
            .map(SharedWindow::unit_rate)
            .fold(0.0, f64::max);
        if highest > self.cap || highest * 8.0 < self.cap {
            self.cap = 2.0 * highest;
            self.bounds += 1;
        }
    }

    /// Each process's share: its entitlement over the total of the processes active anywhere
    /// (1 while none is).
    fn renormalise_shares(&mut self) {
        let active_total: f64 = (0..self.procs.len())
            .filter(|k| self.active_anywhere(*k))
            .map(|k| self.procs[k].entitlement)
            .sum();
        for (share, p) in self.shares.iter_mut().zip(&self.procs) {
            *share = if active_total > 0.0 {
                p.entitlement / active_total
            } else {
                1.0
            };
        }
    }

    /// Process `i` becomes active in slot `s` (`true`) or leaves it.
    fn set_active(&mut self, i: usize, s: usize, active: bool) {
        if self.allocation[s].is_active(i) != active {
            self.allocation[s]
                .set_active(self.now, i, active)
                .expect(FORWARD);
            let before = self.active_anywhere(i);
            if active {
                self.active_slots[i] += 1;
            } else {
                self.active_slots[i] -= 1;
            }
            self.regrouped |= before != self.active_anywhere(i);
            self.dirty[s] = true;
        }
    }

    /// Whether process `i` is active in any slot.
    fn active_anywhere(&self, i: usize) -> bool {
        self.active_slots[i] > 0
    }

    /// With a priority interval (docs/mechanisms.md, bottleneck §2.7), after the active set is updated: at a snapshot,
    /// the bottlenecks and every active process's priority are taken anew; between snapshots, a
    /// process that became active gets its priority now, on entry, and one that left the active
    /// set loses it.
    fn freeze(&mut self, snapshot: bool) {
        if snapshot {
            self.set_bottlenecks();
            self.forget_priorities();
            let every = micros(self.scenario.simulation.priority_interval).max(1);
            self.schedule(self.now.plus_micros(every), Event::Snapshot);
        }
        for i in 0..self.procs.len() {
            let active = self.active_anywhere(i);
            let held = self.frozen.as_ref().and_then(|f| f[i]);
            let priority = match (active, held) {
                (false, _) => None,
                (true, Some(p)) if !snapshot => Some(p),
                (true, _) => Some(self.current_priority(i, 0).0),
            };
            if let Some(frozen) = self.frozen.as_mut() {
                frozen[i] = priority;
            }
        }
    }

    /// Grants resource `j`, if free, to its best queued process (ties: first queued).
    fn dispatch(&mut self, j: usize) {
        if self.res[j].holder.is_some() || self.res[j].queue.is_empty() {
            return;
        }
        if !self.fresh {
            self.set_bottlenecks();
        }
        let mut queue = std::mem::take(&mut self.res[j].queue);
        if self.prunes() {
            self.compute_promising(&mut queue, j);
        } else {
            for w in queue.iter_mut() {
                if !self.holds(w) {
                    self.compute(w, j);
                }
            }
        }
        let i = queue
            .swap_remove(first_served(&queue, |w| self.holds(w)))
            .process;
        self.res[j].queue = queue;
        self.grant(i, j);
    }

    /// Whether `w`'s priority as computed holds now.
    fn holds(&self, w: &Waiting) -> bool {
        self.now.as_micros() < w.valid_before && w.epoch == self.epoch
    }

    /// Computes `w`'s priority at resource `j` now.
    fn compute(&mut self, w: &mut Waiting, j: usize) {
        (w.priority, w.valid_before) = self.priority(w.process, j);
        w.epoch = self.epoch;
    }

    /// Computes the stale priorities in `queue` that can still be the best: the one with the
    /// highest ceiling first (mostly the best, found in one pass rather than by sorting), then
    /// each other one whose ceiling is not clearly below the best priority known by then.
    fn compute_promising(&mut self, queue: &mut [Waiting], j: usize) {
        let accruing = match self.bottleneck.contains(&true) {
            true => 1.0,
            false => self.allocation.len() as f64,
        };
        // One pass: the best priority that holds, and the ceiling of each one that does not.
        let mut best = f64::NEG_INFINITY;
        let mut stale = std::mem::take(&mut self.stale);
        for (k, w) in queue.iter().enumerate() {
            if self.holds(w) {
                best = best.max(w.priority);
            } else {
                stale.push((self.ceiling(w, accruing), k));
            }
        }
        let highest = (0..stale.len()).reduce(|a, b| match stale[b].0 > stale[a].0 {
            true => b,
            false => a,
        });
        if let Some(h) = highest {
            stale.swap(0, h);
        }
        for &(ceiling, k) in &stale {
            if clearly_below(ceiling, best) {
                continue;
            }
            let w = &mut queue[k];
            self.compute(w, j);
            (w.at, w.bounds) = (self.now.as_micros(), self.bounds);
            w.served_until = self.consumption[w.process].steady_until().as_micros();
            best = best.max(w.priority);
        }
        stale.clear();
        self.stale = stale;
    }

    /// The highest priority a waiting process can have now, from the last one computed for
    /// it: a gap on a slot rises only as the process accrues entitlement there (at its
    /// entitlement times the slot's rate per unit, at most `cap`, while it is active; summed
    /// over `accruing` slots, every one when there is no bottleneck and one when there is) and
    /// as its past service leaves the window (at rate 1 at most, and not before
    /// `served_until`); a priority is its gap over the process's share. Unbounded when never
    /// computed, or when the shares, the bottlenecks or the cap changed since.
    fn ceiling(&self, w: &Waiting, accruing: f64) -> f64 {
        let share = self.shares[w.process];
        if w.valid_before == 0 || w.bounds != self.bounds || share <= 0.0 {
            return f64::INFINITY;
        }
        let now = self.now.as_micros();
        // A bound, not a reading: multiplied by 1e-6 rather than divided by 1e6.
        let elapsed = (now - w.at) as f64 * 1e-6;
        let leaving = now.saturating_sub(w.at.max(w.served_until)) as f64 * 1e-6;
        let rise = accruing * self.procs[w.process].entitlement * self.cap * elapsed + leaving;
        w.priority + rise / share
    }

    fn grant(&mut self, i: usize, j: usize) {
        let p = &mut self.procs[i];
        p.state = State::Serving(j);
        let length = if self.res[j].sliced {
            p.remaining
                .min(micros(self.scenario.simulation.quantum).max(1))
        } else {
            p.remaining
        };
        self.res[j].holder = Some(i);
        self.res[j].since = self.now;
        self.consumption[i].start(self.now, j).expect(FORWARD);
        self.busy[j].start(self.now, 0).expect(FORWARD);
        self.schedule(self.now.plus_micros(length), Event::GrantEnd(j));
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn waiting(k: usize, priority: f64, entered: u64) -> Waiting {
        Waiting {
            entered,
            process: k,
            priority,
            valid_before: 1,
            epoch: 0,
            at: 0,
            bounds: 0,
            served_until: 0,
        }
    }

    proptest! {
        /// Passing over priorities clearly below the highest picks the process the scan of
        /// every priority picks, ties within the tolerance included.
        #[test]
        fn passing_over_what_is_clearly_below_changes_nobody_served(
            entries in prop::collection::vec((0u8..6, 0u64..4, any::<bool>()), 1..24),
            scale in prop::sample::select(vec![1e-3, 1.0, 1e3, 1e9]),
        ) {
            // Few distinct levels, some a tolerance apart, so that ties are common.
            let queue: Vec<Waiting> = entries
                .iter()
                .enumerate()
                .map(|(k, &(level, entered, _))| {
                    let p = scale * (f64::from(level) - 2.0) * (1.0 + 1e-13 * k as f64);
                    waiting(k, p, entered)
                })
                .collect();
            let best = queue.iter().map(|w| w.priority).fold(f64::NEG_INFINITY, f64::max);
            let skipped: Vec<bool> = entries
                .iter()
                .zip(&queue)
                .map(|(&(_, _, skip), w)| skip && clearly_below(w.priority, best))
                .collect();
            let every = first_served(&queue, |_| true);
            let some = first_served(&queue, |w| !skipped[w.process]);
            prop_assert_eq!(every, some);
        }
    }
}
