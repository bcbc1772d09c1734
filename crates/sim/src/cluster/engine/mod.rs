//! The engine's state between events: the waiting and running jobs, the space they hold, the
//! ranker's book and what is recorded. What it does with that state is in one module each:
//! [`setup`] builds it from a configuration, [`jobs`] takes arrivals, starts and ends,
//! [`reservations`] keeps the planned starts, [`pass`] is the scheduler's view of a pass,
//! [`withdraw`] the cancellations, [`conclude`] the results, [`factors`] the factors a
//! scheduler's model gives waiting jobs, and [`run`] the loop of events that drives it all.
//! When passes run is the scheduler's [`Timing`]; the engine only tells it what happened.

mod conclude;
mod factors;
mod jobs;
mod order;
mod outages;
mod pass;
mod reservations;
mod run;
mod setup;
mod window;
mod withdraw;

pub(super) use run::replay;

use super::limits::Held;
use super::meter::Meter;
use super::recorder::Recorder;
use super::scheduler::{JobFactors, PassKind, PlansNodes, Reservations, Timing};
use super::space::{Placed, Request, Space};
use super::waiting::Smallest;
use super::{JobOutcome, JobRecord, Opened, Overrun, QueueLimit, SimError, Window};
use factors::FactorScope;
use fairshare_core::model::{Task, Time};
use fairshare_core::rank::{Book, Head};
use indexmap::IndexMap;
use order::JobOrder;
use outages::Outages;
use setup::PartitionRule;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet, VecDeque};

/// A job waiting in a user's queue.
#[derive(Debug, Clone)]
struct Pending {
    id: u64,
    seq: u64,
    submit: Time,
    runtime: u64,
    /// The walltime backfilling plans with: never below the runtime, unless the scheduler
    /// plans with time limits.
    walltime: u64,
    request: Request,
    /// Its dominant share, which some policies order by.
    size: f64,
    /// Its weighted job size and partition terms, when jobs are ordered by a job priority.
    fixed_points: f64,
    /// The factor the scheduler's job factors gave it (0 without them): one more term of its
    /// points.
    factor: i64,
    /// What it would hold, as fractions of each resource, for the job factors' passes
    /// (empty without them).
    holding: Vec<f64>,
    /// Whether the job factors rank and count it (by the trace's partition, which it keeps
    /// whether or not a node declares it).
    ranked: bool,
    /// Its queue (the trace's index), and the processors it counts against the queue's limit.
    queue: Option<u32>,
    processors: f64,
    /// Its queue's priority.
    priority: i32,
    /// Its partition (the trace's index), when machines declare it: it runs only there.
    partition: Option<u32>,
    /// What a fairshare policy charges it per second it runs, before SPEC.
    rate: f64,
    /// Its reservation: when, and where.
    reservation: Option<(Time, Placed)>,
    /// The first reservation it was given.
    first_reserved: Option<Time>,
    /// When its owner cancels it, as the log records: it is withdrawn then if it still
    /// waits, and ends then, at the latest, if it runs.
    cancelled: Option<Time>,
    /// What becomes of it, when the run is observed.
    outcome: Option<Box<JobOutcome>>,
    /// Whether it is left out of every count and wait: started as the log started it, or
    /// submitted before the window opened.
    pinned: bool,
    /// The site's limits it counts against, and its demand in the trace's units (both empty
    /// without limits).
    limits: Vec<u16>,
    raw: Vec<f64>,
    /// Whether a limit has held it.
    held_back: bool,
}

/// A job running somewhere.
#[derive(Debug, Clone)]
struct Running {
    user: u32,
    queue: Option<u32>,
    /// Whether the job factors rank and count it.
    ranked: bool,
    processors: f64,
    placed: Placed,
    /// When its walltime runs out (the availability profile holds it until then).
    planned_end: Time,
    /// Its place in arrival order, which tells it from a later job in the same slot.
    seq: u64,
    /// When it started, and what a fairshare policy charges it per second.
    started: Time,
    /// When it ends; its nodes are released later, as the scheduler's timing says.
    ends: Time,
    /// Whether its end runs a pass at once.
    passes_at_once: bool,
    rate: Option<f64>,
    record: Option<JobRecord>,
    /// What becomes of it, when the run is observed.
    outcome: Option<Box<JobOutcome>>,
    /// Whether it is left out of every count and wait (see [`Pending`]).
    pinned: bool,
    /// The site's limits it counts against, and its demand in the trace's units.
    limits: Vec<u16>,
    raw: Vec<f64>,
}

/// The engine's state between events.
struct Engine {
    queues: Vec<VecDeque<Pending>>,
    running: Vec<Option<Running>>,
    free_slots: Vec<usize>,
    finishes: BinaryHeap<Reverse<(Time, u64, usize)>>,
    space: Space,
    /// What each user holds and waits with, told to the policy's ranker: the bookkeeping the
    /// adapters' reconcile shares.
    book: Book,
    /// What jobs are charged, when the policy charges them.
    meter: Option<Meter>,
    recorder: Recorder,
    now: Time,
    seq: u64,
    /// The first refusal by the ranker, which ends the run.
    fault: Option<SimError>,
    /// How long the scheduler's reservations last.
    reservations: Reservations,
    /// Per user, the index of its candidate job in the current pass.
    cursor: Vec<usize>,
    /// Users whose candidate moved past their oldest job in the current pass.
    moved: Vec<u32>,
    /// Waiting jobs without a reservation.
    unreserved: u64,
    /// With reservations for the pass alone, the users a reservation was made for in it (a
    /// user may come more than once): only their queues hold any when they are dropped.
    reserving: Vec<u32>,
    /// The least any waiting job needs on one node, which says when nothing can start.
    smallest: Smallest,
    /// The nodes that jobs ending before their walltime since the last pass freed, each with
    /// the time until which it would have been held: only a reservation that can use such
    /// room can move up.
    freed: Vec<(usize, Time)>,
    /// Jobs that name a property no node declares (not enforced).
    unknown_properties: u64,
    /// By the trace's partition index, the partition as the run applies it.
    partitions: Vec<PartitionRule>,
    /// The tier of a job of no partition: the lowest of any partition (0 when there are none).
    lowest_tier: i32,
    /// By the trace's QOS index, the QOS factor.
    qos_factors: Vec<f64>,
    /// By user, the association factor.
    assoc_factors: Vec<f64>,
    /// Every node's capacity (normalised) and count: the TRES factors' whole for a job of no
    /// partition.
    cluster_extent: (Vec<f64>, f64),
    /// Reserved starts, at which a pass must run even if nothing arrives or ends then.
    wakeups: BinaryHeap<Reverse<Time>>,
    /// The cancellations to come, as (when, the job's sequence number, its user).
    withdrawals: BinaryHeap<Reverse<(Time, u64, u32)>>,
    /// The sequence numbers of the waiting jobs that are to be cancelled.
    cancellable: HashSet<u64>,
    record_jobs: Option<Window>,
    jobs: Vec<JobRecord>,
    /// The site's queues, and the processors each one's running jobs hold.
    queue_limits: Vec<QueueLimit>,
    queue_held: Vec<f64>,
    /// Whether queues differ in priority, so a pass goes through them tier by tier.
    tiered: bool,
    /// In a tiered pass, the priority whose jobs are being considered.
    tier: Option<i32>,
    /// What happens to a job that ran longer than its walltime request.
    overrun: Overrun,
    /// Whether the run is observed: every job's outcome is then kept until it is settled.
    observed: bool,
    /// The capacity's total of each resource, which allocations are fractions of.
    totals: Vec<f64>,
    /// Jobs settled since the observer last heard.
    settled: Vec<JobOutcome>,
    /// When the scheduler's passes run, and how ends and submissions reach it.
    timing: Box<dyn Timing>,
    /// The kind of the pass being run.
    kind: PassKind,
    /// Whether a reservation holds the rest of each node it is planned on.
    whole_nodes: bool,
    /// How a reservation's span is rounded, when the scheduler rounds it.
    plan_resolution: Option<reservations::Resolution>,
    /// The scheduler's own planner of reservations on whole nodes, when it has one
    /// ([`Scheduler::planner`](super::scheduler::Scheduler::planner)).
    planner: Option<Box<dyn PlansNodes>>,
    /// Whether a job arrived, started or ended since the last periodic pass (a periodic pass
    /// may wait for new work: [`Standing::changed`](super::scheduler::Standing)).
    news: bool,
    /// Whether jobs are planned with their time limits even when they run past them
    /// ([`Planning::with_limits`](super::scheduler::Planning::with_limits)).
    plans_with_limits: bool,
    /// The running jobs (slot, seq) planned to end before they do: each pass plans them to
    /// end the next second.
    overdue: Vec<(usize, u64)>,
    /// The job priority jobs are ordered by, when the scheduler orders jobs.
    job_order: Option<JobOrder>,
    /// The scheduler's job factors, when it has them: they keep the policy, and the main
    /// book orders users by their jobs' priorities.
    job_factors: Option<Box<dyn JobFactors>>,
    /// Which jobs the job factors rank and count, and what they hold as their fractions.
    factor_scope: FactorScope,
    /// When the log's window opens ([`ClusterConfig::opens`](super::ClusterConfig::opens)).
    opens: Option<Time>,
    /// The jobs the log started before the window opened, by their recorded start (then
    /// arrival), until they start.
    pins: BTreeMap<(Time, u64), Task>,
    /// How many jobs were started as the log started them, and how many of those away from
    /// the nodes it names.
    pinned: u64,
    pinned_elsewhere: u64,
    /// The machine as it stood when the window opened, once it has.
    opened: Option<Opened>,
    /// The site's limits, and what their scopes' running jobs hold.
    limits: Held,
    /// When a limit's cap changes: a pass runs when limits are updated.
    limit_changes: BinaryHeap<Reverse<Time>>,
    /// Jobs a limit held, by the first limit that held each.
    held_by_limits: IndexMap<String, u64>,
    /// The running jobs counted under a limit, by when they end (with their sequence and
    /// slot): a limit stops counting a job at its end, before its nodes are released.
    limit_ends: BinaryHeap<Reverse<(Time, u64, usize)>>,
    /// The site's outages: which nodes are closed, and when that changes.
    outages: Outages,
}

impl Engine {
    fn at(&mut self, t: Time) -> Result<(), SimError> {
        self.book.advance(t).map_err(SimError::Rank)?;
        if let Some(model) = &mut self.job_factors {
            model.book_mut().advance(t).map_err(SimError::Rank)?;
        }
        self.recompute_job_priorities(t);
        self.job_factors_pass(t)?;
        self.now = t;
        self.recorder.advance(t);
        Ok(())
    }

    /// The user's candidate job: its first (its oldest of the highest priority), or in a pass
    /// the one its cursor points at, if it belongs to the tier being considered.
    fn candidate(&self, user: u32) -> Option<&Pending> {
        let job = self.queues[user as usize].get(self.cursor[user as usize])?;
        self.tier.is_none_or(|t| job.priority == t).then_some(job)
    }

    /// The tier and factor of a job's partition; a job of none has factor 0 and the lowest
    /// tier of any partition.
    fn partition_setting(&self, partition: Option<u32>) -> (i32, f64) {
        let rule = partition.and_then(|p| self.partitions.get(p as usize));
        rule.map_or((self.lowest_tier, 0.0), |r| (r.tier, r.factor))
    }

    /// The queue rule of a job's queue (none: no limit, priority 0).
    fn queue_rule(&self, queue: Option<u32>) -> QueueLimit {
        let rule = queue.and_then(|q| self.queue_limits.get(q as usize));
        rule.copied().unwrap_or_default()
    }

    /// Whether a site's limit holds the job at `index` of `user`'s queue now: one would take
    /// its group past a cap. The first time one does, the job is counted under it.
    fn held_by_limit(&mut self, user: u32, index: usize) -> bool {
        self.release_ended_limits();
        let job = &self.queues[user as usize][index];
        if job.limits.is_empty() {
            return false;
        }
        let Some(limit) = (self.limits).holding_back(&job.limits, user, &job.raw, self.now) else {
            return false;
        };
        let job = &mut self.queues[user as usize][index];
        if !std::mem::replace(&mut job.held_back, true) {
            let name = self.limits.name(limit).to_owned();
            *self.held_by_limits.entry(name).or_default() += 1;
        }
        true
    }

    /// Stops counting under their limits the jobs that have ended by now: a limit lets a job's
    /// group and user go when the job completes or is killed, while its nodes are still
    /// being released ([`Limit`](crate::cluster::Limit)), so a pass run then already sees the
    /// room. Done before a limit is looked at, which only a pass does.
    fn release_ended_limits(&mut self) {
        while let Some(&Reverse((end, seq, slot))) = self.limit_ends.peek() {
            if end > self.now {
                break;
            }
            self.limit_ends.pop();
            if let Some(job) = self.running[slot].as_mut().filter(|job| job.seq == seq) {
                let limits = std::mem::take(&mut job.limits);
                self.limits.count(&limits, job.user, &job.raw, -1.0);
            }
        }
    }

    /// Whether a job's queue leaves room for it to start now.
    fn queue_allows(&self, job: &Pending) -> bool {
        let Some(q) = job.queue.map(|q| q as usize) else {
            return true;
        };
        let limit = self.queue_limits.get(q).and_then(|rule| rule.processors);
        limit.is_none_or(|limit| self.queue_held[q] + job.processors <= limit + 1e-9)
    }

    fn head(&self, user: u32) -> Option<Head> {
        self.candidate(user)
            .map(|p| (Head::new(p.submit, p.seq).with_size(p.size)).with_points(self.job_points(p)))
    }

    /// Has the planner forget what it found: a job started or ended, or a pass begins.
    fn forget_found(&mut self) {
        if let Some(planner) = &mut self.planner {
            planner.forget();
        }
    }

    /// Tells the ranker what `user` holds and waits for now. The engine's holdings are
    /// normalised from checked demands, so the ranker accepts them; should it not, the first
    /// refusal is kept and ends the run.
    fn rerank(&mut self, user: u32) {
        let head = self.head(user);
        let result = self.book.waits(user, head);
        if let Err(e) = result {
            self.fault.get_or_insert(SimError::Rank(e));
        }
    }
}

/// How long a task of `runtime` microseconds runs on a node of relative `speed` (exactly
/// `runtime` at speed 1).
fn on_node(runtime: u64, speed: f64) -> u64 {
    if speed == 1.0 {
        runtime
    } else {
        (runtime as f64 / speed).round() as u64
    }
}

/// Notes that `node` has room freed until `until`, once per node (the latest time kept).
fn free_until(freed: &mut Vec<(usize, Time)>, node: usize, until: Time) {
    match freed.iter_mut().find(|(n, _)| *n == node) {
        Some((_, t)) => *t = (*t).max(until),
        None => freed.push((node, until)),
    }
}
