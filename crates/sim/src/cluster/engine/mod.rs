//! The engine's state and its events: arrivals, starts, finishes and the samples between them.
//! Its scheduling passes, as a scheduler drives them, are in [`pass`]; the loop of events
//! that drives it all, in [`run`].

mod order;
mod pass;
mod run;
mod will_run;
mod withdraw;

pub(super) use run::replay;

use super::*;
use fairshare_core::model::partition_property;
use order::{job_ranker, JobOrder};
use pass::WholeQueueTimer;
use std::borrow::Cow;
use std::collections::HashSet;
use std::slice;
use will_run::{NodePlans, Tested};

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
}

/// A job running somewhere.
#[derive(Debug, Clone)]
struct Running {
    user: u32,
    queue: Option<u32>,
    processors: f64,
    placed: Placed,
    /// When its walltime runs out (the availability profile holds it until then).
    planned_end: Time,
    /// Its place in arrival order, which tells it from a later job in the same slot.
    seq: u64,
    /// When it started, and what a fairshare policy charges it per second.
    started: Time,
    /// When it ends; its nodes are released later, as the scheduler's [`EndRelease`] says.
    ends: Time,
    /// Whether its end runs a pass at once ([`EndRelease::passes_at_once`]).
    passes_at_once: bool,
    rate: Option<f64>,
    record: Option<JobRecord>,
    /// What becomes of it, when the run is observed.
    outcome: Option<Box<JobOutcome>>,
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
    /// Microseconds past its walltime a job runs before it is killed (`None`: never).
    kill_grace: Option<u64>,
    /// How the end of a job reaches the scheduler: one that ended by itself, one killed.
    end_release: [EndRelease; 2],
    /// Whether the run is observed: every job's outcome is then kept until it is settled.
    observed: bool,
    /// The capacity's total of each resource, which allocations are fractions of.
    totals: Vec<f64>,
    /// Jobs settled since the observer last heard.
    settled: Vec<JobOutcome>,
    /// When the scheduler's periodic passes fall.
    period: Option<Cycles>,
    /// Whether a reservation holds the rest of each node it is planned on.
    whole_nodes: bool,
    /// Microseconds a reservation's span is rounded to, when the scheduler rounds it.
    plan_resolution: Option<u64>,
    /// Whether reservations are planned by Slurm's will-run test
    /// ([`Scheduler::plans_by_will_run`]), and the pass's plans node by node when they are.
    will_run: bool,
    node_plans: NodePlans,
    /// What the will-run tests of a pass found, kept while no job starts or ends.
    tested: Tested,
    /// Whether a job arrived, started or ended since the last periodic pass: only then is
    /// another due (Slurm's backfill waits for new work, `_more_work`).
    news: bool,
    /// The spacing of the passes events ask for ([`Scheduler::event_pass_spacing_s`]), in
    /// whole seconds, and where those passes stand.
    event_spacing_s: Option<u64>,
    asked: Asked,
    /// The passes down the whole queue at a fixed interval ([`Scheduler::whole_queue_passes`]).
    whole_queue: Option<WholeQueueTimer>,
    /// Whether the pass being run is one of them.
    whole_queue_now: bool,
    /// When the loop that runs those passes takes its turns, read from a log
    /// ([`Scheduler::loop_turns`]); `None`: on the whole seconds, after a second's events.
    turns: Option<LoopTurns>,
    /// Whether jobs are planned with their time limits even when they run past them
    /// ([`Scheduler::plans_with_limits`]).
    plans_with_limits: bool,
    /// The running jobs (slot, seq) planned to end before they do: each pass plans them to
    /// end the next second.
    overdue: Vec<(usize, u64)>,
    /// The job priority jobs are ordered by, when the scheduler orders jobs.
    job_order: Option<JobOrder>,
}

/// The ranker of `config`'s policy over `resources` resources, for its users with its shares
/// (`None`: equal) in its account tree.
///
/// Weighted DRF is refused without shares: with equal weights it would silently be DRF.
fn ranker(config: &ClusterConfig, resources: usize) -> Result<Box<dyn Ranker>, SimError> {
    let policy = &config.policy;
    let users = config.users.len();
    let refuse = |problem: &str| SimError::Policy {
        policy: policy.name.clone(),
        problem: problem.into(),
    };
    if policy.kind == PolicyKind::Stateless(Policy::WeightedDrf) && config.shares.is_none() {
        return Err(refuse(
            "without shares every weight is equal, so weighted DRF would be DRF; give --shares or use drf",
        ));
    }
    let equal = Share::equal(users);
    let shares = config.shares.as_deref().unwrap_or(&equal);
    if shares.len() != users {
        return Err(refuse(&format!(
            "{} shares for {users} users",
            shares.len()
        )));
    }
    if let PolicyKind::Fairshare(settings) = policy.kind {
        settings
            .metric
            .check_resources(&config.resources)
            .map_err(|problem| refuse(&problem))?;
    }
    if let Some(accounts) = config.accounts.as_ref().filter(|a| a.clients() != users) {
        return Err(refuse(&format!(
            "the account tree places {} users, the run has {users}",
            accounts.clients()
        )));
    }
    let ranker = policy.ranker(resources, shares, config.accounts.as_ref());
    let ranker = ranker.ok_or_else(|| {
        refuse("ranks processes, not users; the process engine (simulate) runs it")
    })?;
    Ok(job_ranker(config, ranker))
}

/// When a scheduler's periodic passes fall: on a grid, or at the cycles a log shows.
#[derive(Debug, Clone)]
enum Cycles {
    /// Every so often from an anchor.
    Grid(Period),
    /// At the cycles a log shows and the ones between them ([`Scheduler::cycle_turns`]).
    Shown(LoopTurns),
}

impl Cycles {
    /// Whether a pass falls at `t`.
    fn falls_on(&self, t: Time) -> bool {
        match self {
            Cycles::Grid(period) => period.falls_on(t),
            Cycles::Shown(turns) => turns.at_or_after(t) == t,
        }
    }

    /// The first pass after `t`.
    fn next_after(&self, t: Time) -> Time {
        match self {
            Cycles::Grid(period) => period.next_after(t),
            Cycles::Shown(turns) => turns.at_or_after(t.plus_micros(1)),
        }
    }
}

/// When a scheduler's periodic passes fall: every `every` microseconds from `anchor`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Period {
    every: u64,
    anchor: Time,
}

impl Period {
    /// Passes every `every_s` seconds, on the multiples of it counted from `origin`, or, given
    /// `phase_s`, at that many seconds past each multiple counted from the epoch; the first
    /// at or after `origin`.
    fn new(every_s: u64, phase_s: Option<u64>, origin: Time) -> Period {
        let every = every_s.max(1).saturating_mul(1_000_000);
        let anchor = match phase_s {
            None => origin,
            Some(phase_s) => {
                let phase = phase_s.saturating_mul(1_000_000) % every;
                Time(origin.0 + (phase + every - origin.0 % every) % every)
            }
        };
        Period { every, anchor }
    }

    /// Whether a pass falls at `t`.
    fn falls_on(self, t: Time) -> bool {
        t >= self.anchor && (t.0 - self.anchor.0).is_multiple_of(self.every)
    }

    /// The first pass after `t`.
    fn next_after(self, t: Time) -> Time {
        match t.0.checked_sub(self.anchor.0) {
            None => self.anchor,
            Some(since) => Time(self.anchor.0 + (since / self.every + 1) * self.every),
        }
    }
}

/// The passes events ask for, under a scheduler that spaces them.
#[derive(Debug, Clone, Copy, Default)]
struct Asked {
    /// Whether an event asked for a pass since the last one.
    pending: bool,
    /// When the last such pass ran.
    last: Option<Time>,
    /// The wake-up set for the next one.
    woken_at: Option<Time>,
}

/// A partition of the trace, as the run applies it.
#[derive(Debug, Clone)]
struct PartitionRule {
    /// The node property its jobs require (`partition:NAME`), when some node of the run
    /// declares a partition; none when no node declares any (jobs then run anywhere).
    property: Option<String>,
    /// Whether some node declares its property, so that its jobs are held to its nodes.
    declared: bool,
    /// Its `PriorityTier`.
    tier: i32,
    /// Its partition factor.
    factor: f64,
    /// Whether its jobs hold their nodes whole.
    exclusive: bool,
    /// Its nodes' capacity (normalised) and count, which a job's TRES factors are fractions
    /// of (every node's when its property is not enforced).
    extent: (Vec<f64>, f64),
}

/// By the trace's partition index, each partition of `config` as it applies on `space`.
fn partition_rules(config: &ClusterConfig, space: &mut Space) -> Vec<PartitionRule> {
    let mut rules: Vec<PartitionRule> = (config.partitions.iter())
        .map(|partition| {
            let property = partition_property(&partition.name);
            let declared = space.declares(&property);
            PartitionRule {
                extent: space.extent(Some(property.as_str()).filter(|_| declared)),
                declared,
                property: Some(property),
                tier: partition.tier,
                factor: partition.factor,
                exclusive: partition.exclusive,
            }
        })
        .collect();
    if !rules.iter().any(|rule| rule.declared) {
        rules.iter_mut().for_each(|rule| rule.property = None);
    }
    rules
}

/// Each user's entitlement: by `config`'s shares, else 1/n each.
fn entitlements(config: &ClusterConfig) -> Vec<f64> {
    let equal = Share::equal(config.users.len());
    let shares = config.shares.as_deref().unwrap_or(&equal);
    shares.iter().map(|s| s.entitlement).collect()
}

impl Engine {
    fn new(config: &ClusterConfig) -> Result<Engine, SimError> {
        let m = config.resources.len();
        let users = config.users.len();
        let reservations = config.scheduler.reservations();
        let mut space = Space::new(
            &config.capacity,
            &config.resources,
            Arc::clone(&config.placement),
            reservations != Reservations::None,
        )?;
        let partitions = partition_rules(config, &mut space);
        let cluster_extent = space.extent(None);
        let whole_nodes = config.scheduler.reserves_whole_nodes()
            && matches!(config.capacity, Capacity::Machines(_));
        let will_run = whole_nodes
            && config.scheduler.plans_by_will_run()
            && reservations == Reservations::ForThePass;
        let mut engine = Engine {
            queues: vec![VecDeque::new(); users],
            running: Vec::new(),
            free_slots: Vec::new(),
            finishes: BinaryHeap::new(),
            space,
            book: Book::new(ranker(config, m)?, users, m),
            meter: match config.policy.kind {
                PolicyKind::Fairshare(settings) => {
                    Some(Meter::new(settings.metric, &config.capacity, users))
                }
                _ => None,
            },
            recorder: Recorder::new(
                &entitlements(config),
                &config.resources,
                config.origin,
                config.sample_every,
            ),
            now: config.origin,
            seq: 0,
            fault: None,
            reservations,
            cursor: vec![0; users],
            moved: Vec::new(),
            unreserved: 0,
            smallest: Smallest::default(),
            freed: Vec::new(),
            unknown_properties: 0,
            lowest_tier: partitions.iter().map(|p| p.tier).min().unwrap_or(0),
            partitions,
            qos_factors: config.qos_factors.clone(),
            assoc_factors: config.assoc_factors.clone(),
            cluster_extent,
            wakeups: BinaryHeap::new(),
            withdrawals: BinaryHeap::new(),
            cancellable: HashSet::new(),
            record_jobs: config.record_jobs,
            jobs: Vec::new(),
            queue_held: vec![0.0; config.queues.len()],
            tiered: config.queues.iter().any(|q| q.priority != 0)
                || config
                    .partitions
                    .iter()
                    .any(|p| p.tier != config.partitions[0].tier),
            queue_limits: config.queues.clone(),
            tier: None,
            overrun: config.overrun,
            kill_grace: (config.scheduler.kill_grace_s()).map(|s| s.saturating_mul(1_000_000)),
            end_release: [false, true].map(|killed| config.scheduler.end_release(killed)),
            observed: false,
            totals: config.capacity.total(),
            settled: Vec::new(),
            period: config.scheduler.cycle().map(|cycle| {
                let grid =
                    || Cycles::Grid(Period::new(cycle.every_s, cycle.phase_s, config.origin));
                let shown = config.scheduler.cycle_turns().cloned();
                shown.map_or_else(grid, Cycles::Shown)
            }),
            // A pool has no nodes to plan: its reservations hold what their jobs ask.
            whole_nodes,
            will_run,
            tested: Tested::default(),
            node_plans: NodePlans::new(if will_run {
                config.capacity.nodes().len()
            } else {
                0
            }),
            plan_resolution: (config.scheduler.plan_resolution_s())
                .filter(|_| reservations == Reservations::ForThePass)
                .map(|s| s.max(1).saturating_mul(1_000_000)),
            news: false,
            event_spacing_s: config.scheduler.event_pass_spacing_s(),
            asked: Asked::default(),
            whole_queue: config
                .scheduler
                .whole_queue_passes()
                .map(WholeQueueTimer::new),
            whole_queue_now: false,
            turns: config.scheduler.loop_turns().cloned(),
            plans_with_limits: config.scheduler.plans_with_limits(),
            overdue: Vec::new(),
            job_order: JobOrder::of(config),
        };
        engine.start_whole_queue_timer();
        Ok(engine)
    }

    fn at(&mut self, t: Time) -> Result<(), SimError> {
        self.book.advance(t).map_err(SimError::Rank)?;
        self.recompute_job_priorities(t);
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

    fn arrive(&mut self, a: Task) -> Result<(), SimError> {
        self.news = true;
        let u = a.user as usize;
        if u >= self.queues.len() {
            return Err(SimError::BadArrival {
                user: a.user,
                problem: "no such user".into(),
            });
        }
        self.recorder.event();
        self.recorder.submitted(a.user);
        let bad = |problem| SimError::BadArrival {
            user: a.user,
            problem,
        };
        let demand = self.space.normalise(&a.demand).map_err(bad)?;
        let size = dominant_share(&demand);
        let cpus = a.demand.first().copied().unwrap_or(0.0);
        let partition_rule = a.partition.and_then(|p| self.partitions.get(p as usize));
        let extent = partition_rule.map_or(&self.cluster_extent, |r| &r.extent);
        let tres_points = (self.job_order).map_or(0.0, |o| o.tres_points(&demand, a.nodes, extent));
        let properties = match partition_rule.and_then(|r| r.property.as_ref()) {
            Some(property) if a.properties.is_empty() => Cow::Borrowed(slice::from_ref(property)),
            Some(property) => {
                Cow::Owned([a.properties.as_slice(), slice::from_ref(property)].concat())
            }
            None => Cow::Borrowed(a.properties.as_slice()),
        };
        let exclusive = a.exclusive || partition_rule.is_some_and(|r| r.exclusive);
        let (request, unknown) =
            (self.space).request(cpus, demand, a.nodes, exclusive, &properties);
        let partition = a
            .partition
            .filter(|_| partition_rule.is_some_and(|r| r.declared));
        self.unknown_properties += u64::from(unknown);
        let rule = self.queue_rule(a.queue);
        let within_queue = rule.processors.is_none_or(|limit| cpus <= limit + 1e-9);
        if !(within_queue && self.space.could_ever_fit(&request)) {
            self.recorder.never_fits(a.user);
            if self.observed {
                let outcome = JobOutcome::arrived(&a, a.runtime, false);
                self.settled.push(JobOutcome {
                    state: JobState::NeverFits,
                    ..outcome
                });
            }
            return Ok(());
        }
        let rate = self.meter.as_mut().map_or(0.0, |m| m.price(&a)) * rule.cost;
        // A request of 0 is no request (Slurm's --time=0, and logs that write 0 for unknown).
        let (runtime, walltime, killed) = match (a.walltime.filter(|w| *w > 0), self.overrun) {
            (Some(limit), Overrun::Kill)
                if self
                    .kill_grace
                    .is_some_and(|g| limit.saturating_add(g) < a.runtime) =>
            {
                self.recorder.killed_at_walltime();
                let killed_at = limit.saturating_add(self.kill_grace.unwrap_or(0));
                (killed_at, killed_at, true)
            }
            (limit, _) => (a.runtime, limit.unwrap_or(a.runtime).max(a.runtime), false),
        };
        // A job cancelled while it waited runs, if started, until its cancellation or its
        // limit; with no limit, the longest it could is from its submission to its cancellation.
        let (runtime, walltime) = match a.cancelled {
            Some(at) => {
                let until = at.as_micros().saturating_sub(a.submit.as_micros());
                let limit = a.walltime.filter(|w| *w > 0).unwrap_or(until);
                (limit, limit)
            }
            None => (runtime, walltime),
        };
        let walltime = match a.walltime.filter(|w| *w > 0) {
            Some(limit) if self.plans_with_limits => limit,
            _ => walltime,
        };
        let outcome = (self.observed).then(|| Box::new(JobOutcome::arrived(&a, runtime, killed)));
        self.recorder.queued(a.user);
        self.seq += 1;
        if let Some(at) = a.cancelled {
            self.withdrawals.push(Reverse((at, self.seq, a.user)));
            self.cancellable.insert(self.seq);
        }
        self.unreserved += 1;
        self.smallest.add(&request);
        let (tier, factor) = self.partition_setting(a.partition);
        let priority = rule.priority.saturating_add(tier);
        let qos_factor = a.qos.and_then(|q| self.qos_factors.get(q as usize));
        let assoc_factor = self.assoc_factors.get(u).copied().unwrap_or(0.0);
        let factors = (factor, qos_factor.copied().unwrap_or(0.0), assoc_factor);
        let fixed_points = (self.job_order).map_or(0.0, |o| {
            o.fixed_points(cpus, a.nodes, factors) + tres_points
        });
        let points = (self.job_order).map_or(0.0, |o| o.points_of(fixed_points, a.submit));
        let at = self.queue_position(u, priority, points);
        self.queues[u].insert(
            at,
            Pending {
                id: a.id,
                seq: self.seq,
                submit: a.submit,
                runtime,
                walltime,
                request,
                size,
                fixed_points,
                queue: a.queue,
                processors: cpus,
                priority,
                partition,
                rate,
                reservation: None,
                first_reserved: None,
                cancelled: a.cancelled,
                outcome,
            },
        );
        if at == 0 {
            self.rerank(a.user);
        }
        Ok(())
    }

    /// Ends the next job of the finish queue (its nodes released now, its run charged to its
    /// end); says whether its end runs a pass at once.
    fn finish_one(&mut self) -> bool {
        self.news = true;
        self.tested.forget();
        let Some(Reverse((_, _, slot))) = self.finishes.pop() else {
            return false;
        };
        let Some(job) = self.running[slot].take() else {
            return false;
        };
        self.free_slots.push(slot);
        self.recorder.event();
        self.recorder.completed(job.user);
        if let Some(held) = job.queue.and_then(|q| self.queue_held.get_mut(q as usize)) {
            *held = (*held - job.processors).max(0.0);
        }
        self.space.release(&job.placed);
        if job.planned_end > self.now {
            self.space
                .expect(&job.placed, self.now, job.planned_end, -1.0);
            for &(node, _) in &job.placed {
                free_until(&mut self.freed, node, job.planned_end);
            }
        }
        self.recorder.used(self.space.used());
        let holding = held(&job.placed, self.book.holdings(job.user).len());
        let ran_s = (job.ends.as_micros() - job.started.as_micros()) as f64 / 1e6;
        if let Err(e) = (self.book).give_back(job.user, &holding, job.rate, ran_s) {
            self.fault.get_or_insert(SimError::Rank(e));
        }
        self.recorder
            .allocation(job.user, self.now, self.book.holdings(job.user));
        self.jobs.extend(job.record);
        if let Some(mut outcome) = job.outcome {
            outcome.finish = Some(job.ends);
            outcome.state = JobState::Finished;
            self.settled.push(*outcome);
        }
        if let (Some(meter), Some(rate)) = (self.meter.as_mut(), job.rate) {
            meter.charge(job.user, rate, ran_s);
        }
        self.rerank(job.user);
        job.passes_at_once
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

    /// Plans each running job past its planned end to end the next second, as Slurm's
    /// will-run test does (`end_time <= now` gives `now + 1`); the jobs that ended are dropped.
    fn plan_overdue(&mut self) {
        let (now, running, space) = (self.now, &mut self.running, &mut self.space);
        let next = now.plus_micros(1_000_000);
        self.overdue
            .retain(|&(slot, seq)| match &mut running[slot] {
                Some(job) if job.seq == seq => {
                    if job.planned_end <= now {
                        space.expect(&job.placed, now, next, 1.0);
                        job.planned_end = next;
                    }
                    true
                }
                _ => false,
            });
    }

    /// One scheduling pass; time stands still during it, so use is recorded after it.
    fn pass(&mut self, scheduler: &dyn Scheduler) {
        self.plan_overdue();
        self.tested.forget();
        if self.reservations != Reservations::None {
            self.space.forget_before(self.now);
            let freed = std::mem::take(&mut self.freed);
            if self.reservations == Reservations::UntilStart && !freed.is_empty() {
                self.compress(freed);
            }
        }
        if self.tiered {
            if let Some(top) = self.next_tier(None) {
                self.enter_tier(top);
            }
        }
        scheduler.pass(self);
        self.space.unfence();
        if self.reservations == Reservations::ForThePass {
            self.drop_reservations();
        }
        self.tier = None;
        for user in std::mem::take(&mut self.moved) {
            self.cursor[user as usize] = 0;
            self.rerank(user);
        }
        self.book.ranker_mut().restore();
        self.recorder.used(self.space.used());
    }

    /// The scheduler's next periodic pass after now, while jobs wait and something changed
    /// since the last one.
    fn next_periodic(&self) -> Option<Time> {
        let period = self.period.as_ref()?;
        self.smallest.least().filter(|_| self.news)?;
        Some(period.next_after(self.now))
    }

    /// The highest priority of any waiting job, below `below` when given.
    fn next_tier(&self, below: Option<i32>) -> Option<i32> {
        let priorities = self.queues.iter().flatten().map(|j| j.priority);
        priorities.filter(|p| below.is_none_or(|b| *p < b)).max()
    }

    /// Starts considering the jobs of priority `tier`: every user's candidate becomes its
    /// oldest job of that priority, and users without one are set aside.
    fn enter_tier(&mut self, tier: i32) {
        self.book.ranker_mut().restore();
        self.tier = Some(tier);
        for user in 0..self.queues.len() as u32 {
            let u = user as usize;
            if self.queues[u].is_empty() {
                continue;
            }
            let first = self.queues[u].iter().position(|j| j.priority == tier);
            self.cursor[u] = first.unwrap_or(0);
            if self.cursor[u] != 0 {
                self.moved.push(user);
            }
            match first {
                Some(_) => self.rerank(user),
                None => self.set_aside(user),
            }
        }
    }

    /// Every waiting job with a reservation, as (user, index in its queue), by reserved start.
    fn reserved(&self) -> Vec<(u32, usize)> {
        let mut reserved: Vec<(Time, u64, u32, usize)> = Vec::new();
        for (u, queue) in self.queues.iter().enumerate() {
            for (i, job) in queue.iter().enumerate() {
                if let Some((t, _)) = &job.reservation {
                    reserved.push((*t, job.seq, u as u32, i));
                }
            }
        }
        reserved.sort_unstable();
        reserved.into_iter().map(|(_, _, u, i)| (u, i)).collect()
    }

    /// Takes a job's reservation out of the availability profile and off the job.
    fn unreserve(&mut self, user: u32, index: usize) -> Option<(Time, Placed)> {
        let job = &mut self.queues[user as usize][index];
        let (t, placed) = job.reservation.take()?;
        let walltime = job.walltime;
        let (from, to) = self.held_span(t, walltime);
        self.unreserved += 1;
        match self.reservations {
            Reservations::ForThePass => self.space.unplan(&placed, from, to),
            _ => self.space.expect(&placed, from, to, -1.0),
        }
        if self.will_run {
            self.node_plans.remove(&placed, from, to);
        }
        Some((t, placed))
    }

    /// What a reservation at `t` for `walltime` holds in the availability profile: from `t`
    /// for the walltime, or with a plan resolution (Slurm's `bf_resolution`), from `t` rounded
    /// down (but not before now) to the end rounded down, at least one resolution past the
    /// rounded start. A rounded span depends on now, so only reservations dropped in the pass
    /// that made them are rounded ([`Engine::new`] gives other schedulers no resolution).
    fn held_span(&self, t: Time, walltime: u64) -> (Time, Time) {
        let end = t.plus_micros(walltime);
        let Some(r) = self.plan_resolution else {
            return (t, end);
        };
        let down = |x: Time| Time(x.0 - x.0 % r);
        let start = down(t);
        (start.max(self.now), down(end).max(start.plus_micros(r)))
    }

    /// Drops every reservation (EASY's last only for the pass that made it): off the jobs,
    /// and out of the profile all at once.
    fn drop_reservations(&mut self) {
        for queue in &mut self.queues {
            for job in queue.iter_mut() {
                if job.reservation.take().is_some() {
                    self.unreserved += 1;
                }
            }
        }
        self.space.drop_plans();
        self.node_plans.clear();
    }

    /// Moves every reservation as early as it now fits, in the order of their starts, each
    /// against all the others, until none can move: jobs that ended before their walltime left
    /// room on the `freed` nodes, and since a job's own slot stays free while the others move,
    /// no reservation ever moves later. Before that room was freed no reservation could start
    /// earlier, so only starts at which a job could use freed room are tried; a reservation
    /// that moves frees its old slot, which earlier ones get to try in the next round.
    fn compress(&mut self, mut freed: Vec<(usize, Time)>) {
        while !freed.is_empty() {
            let mut moved = Vec::new();
            for (user, index) in self.reserved() {
                let job = &self.queues[user as usize][index];
                let stays = job.reservation.as_ref().is_none_or(|(t, placed)| {
                    let (request, walltime) = (&job.request, job.walltime);
                    !self
                        .space
                        .may_move(request, self.now, walltime, *t, &freed, placed)
                });
                if stays {
                    continue;
                }
                let Some(old) = self.unreserve(user, index) else {
                    continue;
                };
                let job = &self.queues[user as usize][index];
                let (request, walltime) = (job.request.clone(), job.walltime);
                let found =
                    self.space
                        .earliest(&request, self.now, walltime, Some(old.0), Some(&freed));
                let (kept, held_before) = match found {
                    Some(earlier) => {
                        let end = old.0.plus_micros(walltime);
                        for &(node, _) in &old.1 {
                            free_until(&mut freed, node, end);
                            free_until(&mut moved, node, end);
                        }
                        (earlier, false)
                    }
                    None => (old, true),
                };
                self.hold(user, index, kept, held_before);
            }
            freed = moved;
        }
        #[cfg(debug_assertions)]
        self.assert_compressed();
    }

    /// Checks, in debug builds (and so in every test), that compression left no reservation
    /// able to start earlier, by trying every earlier start in full.
    #[cfg(debug_assertions)]
    fn assert_compressed(&mut self) {
        for (user, index) in self.reserved() {
            let Some(old) = self.unreserve(user, index) else {
                continue;
            };
            let job = &self.queues[user as usize][index];
            let (request, walltime) = (job.request.clone(), job.walltime);
            let earlier = self
                .space
                .earliest_by_trying_every_start(&request, self.now, walltime, old.0);
            assert!(
                earlier.is_none(),
                "job {} could start at {:?}, before its reservation at {}",
                job.id,
                earlier.map(|e| e.0),
                old.0
            );
            self.hold(user, index, old, true);
        }
    }

    /// Gives a waiting job the reservation `(t, placed)` and enters it in the profile, with a
    /// wakeup at `t` unless it `held_before` a reservation starting then (whose wakeup, still
    /// ahead, is in the heap already: one per hold would grow the heap with every compression).
    fn hold(&mut self, user: u32, index: usize, (t, placed): (Time, Placed), held_before: bool) {
        let (from, to) = self.held_span(t, self.queues[user as usize][index].walltime);
        // The rest of each node from the planned start: before it, the jobs it waits for
        // still hold their part.
        let placed = match self.whole_nodes {
            true => self.space.rest_of_nodes(&placed, t.max(self.now), to),
            false => placed,
        };
        match self.reservations {
            Reservations::ForThePass => self.space.plan(&placed, from, to),
            _ => self.space.expect(&placed, from, to, 1.0),
        }
        if self.will_run {
            self.node_plans.add(&placed, from, to);
        }
        let job = &mut self.queues[user as usize][index];
        job.first_reserved.get_or_insert(t);
        job.reservation = Some((t, placed));
        if t > self.now && !held_before {
            self.wakeups.push(Reverse(t));
        }
        self.unreserved -= 1;
    }

    /// Starts the job at `index` of `user`'s queue on `placed` now.
    fn launch(&mut self, user: u32, index: usize, placed: Placed) {
        self.news = true;
        self.tested.forget();
        let Some(job) = self.queues[user as usize].remove(index) else {
            return;
        };
        self.unreserved -= 1;
        self.smallest.remove(&job.request);
        let speed = self.space.speed(&placed);
        let until_cancelled = (job.cancelled).map(|at| {
            self.started_before_cancellation(job.seq);
            at.as_micros().saturating_sub(self.now.as_micros())
        });
        let runtime = on_node(job.runtime, speed);
        let run = runtime.min(until_cancelled.unwrap_or(u64::MAX));
        // Ended by a signal: cancelled before its end, or run past its limit.
        let killed = run < runtime || run > on_node(job.walltime, speed);
        let release = self.end_release[usize::from(killed)];
        let wait = (self.now.as_micros() - job.submit.as_micros()) as f64 / 1e6;
        self.recorder.started(user, wait, run as f64 / 1e6);
        let holding = held(&placed, self.book.holdings(user).len());
        let rate = self.meter.as_ref().map(|m| m.rate_on(job.rate, &placed));
        if let Err(e) = self.book.take(user, &holding, rate) {
            self.fault.get_or_insert(SimError::Rank(e));
        }
        self.recorder
            .allocation(user, self.now, self.book.holdings(user));
        if let Some(held) = job.queue.and_then(|q| self.queue_held.get_mut(q as usize)) {
            *held += job.processors;
        }
        self.space.take(&placed);
        let end = self.now.plus_micros(run);
        let planned = self.now.plus_micros(on_node(job.walltime, speed));
        let planned_end = if self.plans_with_limits {
            planned
        } else {
            planned.max(end)
        };
        self.space.expect(&placed, self.now, planned_end, 1.0);
        let slot = self.free_slots.pop().unwrap_or(self.running.len());
        if slot == self.running.len() {
            self.running.push(None);
        }
        if planned_end < end {
            self.overdue.push((slot, job.seq));
        }
        let released = end.plus_micros(release.after_us);
        self.finishes.push(Reverse((released, job.seq, slot)));
        let recorded = self.record_jobs.filter(|w| w.overlaps(self.now, end));
        let record = recorded.map(|_| JobRecord {
            id: job.id,
            user,
            submit: job.submit,
            start: self.now,
            end,
            placed: placed.clone(),
            first_reserved: job.first_reserved,
        });
        let outcome = job.outcome.map(|mut outcome| {
            outcome.start = Some(self.now);
            outcome.waited_until = self.now;
            outcome.runtime = run;
            outcome.machines = placed.iter().map(|(node, _)| *node).collect();
            let totals = self.totals.iter();
            outcome.allocated = holding.iter().zip(totals).map(|(h, t)| h * t).collect();
            outcome
        });
        self.running[slot] = Some(Running {
            user,
            queue: job.queue,
            processors: job.processors,
            placed,
            planned_end,
            seq: job.seq,
            started: self.now,
            ends: end,
            passes_at_once: release.passes_at_once,
            rate,
            record,
            outcome,
        });
    }

    /// The run's results at `end`, and the outcomes of the jobs still running or waiting then
    /// (and of those settled since the observer last heard), when the run is observed.
    fn conclude(mut self, config: &ClusterConfig, end: Time) -> (PolicyResult, Vec<JobOutcome>) {
        let waiting = self
            .queues
            .iter()
            .enumerate()
            .flat_map(|(u, q)| q.iter().map(move |p| (u as u32, p.submit)));
        let counters = self.book.ranker().livetree();
        let mut result = self
            .recorder
            .finish(end, waiting, &config.users, config.top_users);
        Recorder::with_livetree(&mut result, counters);
        result.policy = config.policy.name.clone();
        result.tasks_with_unknown_properties = self.unknown_properties;
        if let Some(mut meter) = self.meter {
            for job in self.running.iter().flatten() {
                let ran_s = (end.as_micros().saturating_sub(job.started.as_micros())) as f64 / 1e6;
                meter.charge(job.user, job.rate.unwrap_or(0.0), ran_s);
            }
            let (charged, system_wide) = meter.totals();
            let index: std::collections::HashMap<&str, usize> = (config.users.iter())
                .enumerate()
                .map(|(u, name)| (name.as_str(), u))
                .collect();
            for user in &mut result.users {
                user.charged = index.get(user.id.as_str()).map(|&u| charged[u]);
            }
            result.tasks_priced_system_wide = system_wide;
        }
        let mut settled = std::mem::take(&mut self.settled);
        for job in self.running.iter_mut().flatten() {
            settled.extend(job.outcome.take().map(|o| JobOutcome {
                state: JobState::Unfinished,
                ..*o
            }));
        }
        for job in self.queues.iter_mut().flatten() {
            settled.extend(job.outcome.take().map(|o| JobOutcome {
                state: JobState::NeverStarted,
                waited_until: end,
                ..*o
            }));
        }
        let mut jobs = self.jobs;
        let still_running = self.running.into_iter().flatten();
        jobs.extend(still_running.filter_map(|r| r.record));
        jobs.sort_unstable_by_key(|j| (j.start, j.id));
        result.jobs = jobs;
        (result, settled)
    }
}

impl Engine {
    /// Re-ranks a user whose candidate at `index` just started, or sets the user aside when
    /// no job is left for it in this pass (or tier) but it still waits (it is re-ranked when
    /// the pass ends).
    fn after_start(&mut self, user: u32, index: usize) {
        let waits = self.queues[user as usize].len() > self.cursor[user as usize];
        if self.candidate(user).is_none() && (index > 0 || waits) {
            self.set_aside(user);
            if index == 0 {
                // Moved past its tier with its cursor where it was (a moved cursor is listed).
                self.moved.push(user);
            }
        } else {
            self.rerank(user);
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
