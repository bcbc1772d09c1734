//! The `cluster` engine: trace-driven task scheduling under any policy.
//!
//! Tasks arrive at their submit time into per-user FIFO queues and run for their recorded
//! runtime once placed. At every instant with an arrival or a finish the engine processes all
//! finishes, then all arrivals, then runs one pass of progressive filling (SDRF's Algorithm 1)
//! in the policy's order (docs/mechanisms.md, SDRF §8.3). Tasks are pulled from an iterator as they
//! come due, so a trace is never held in memory.

mod load;
mod recorder;
mod result;
mod seams;
mod space;
mod statistics;

pub use load::Load;
pub use recorder::MOST_SAMPLES;
pub use result::{PolicyResult, ShareSeries, Timeline, UserResult, SLOWDOWN_FLOOR_S, TOP_USERS};
pub use seams::{Discipline, Fill, FirstFit, Node, Placement};
pub use space::{Capacity, MOST_MACHINES};
pub use statistics::jain;
use std::sync::Arc;

use fairshare_core::alloc::tasks::TaskQueue;
pub use fairshare_core::model::Task;
use fairshare_core::model::Time;
use fairshare_core::policy::dominant_share;
use fairshare_core::policy::{Policy, PolicyKind, PolicySpec};
use fairshare_core::rank::{Head, RankError, Ranker, Share};
use recorder::Recorder;
use space::Space;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use thiserror::Error;

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// At this time; tasks arriving later are counted but not submitted.
    Horizon(Time),
    /// When every task has finished.
    Drain,
}

/// Everything a cluster run needs besides its arrivals.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The policy.
    pub policy: PolicySpec,
    /// A pool or machines.
    pub capacity: Capacity,
    /// Resource names, for the results.
    pub resources: Vec<String>,
    /// User names; their number is n, and every user's entitlement is 1/n.
    pub users: Vec<String>,
    /// What a scheduling pass may start.
    pub discipline: Arc<dyn Discipline>,
    /// Which node a task starts on.
    pub placement: Arc<dyn Placement>,
    /// When the run ends.
    pub stop: Stop,
    /// Time of the first event (timelines count from it).
    pub origin: Time,
    /// Seconds between timeline samples.
    pub sample_every: f64,
    /// How many users' dominant shares the timeline keeps.
    pub top_users: usize,
}

impl ClusterConfig {
    /// A run of `users` under `policy` on `capacity` over `resources`, with the SDRF paper's
    /// simulator: progressive filling with the head-of-line rule, first fit, until every task
    /// has finished, time counted from zero, a sample a second, the [`TOP_USERS`] heaviest
    /// users kept in the timeline.
    pub fn new(
        policy: PolicySpec,
        capacity: Capacity,
        resources: Vec<String>,
        users: Vec<String>,
    ) -> ClusterConfig {
        ClusterConfig {
            policy,
            capacity,
            resources,
            users,
            discipline: Arc::new(Fill::default()),
            placement: Arc::new(FirstFit),
            stop: Stop::Drain,
            origin: Time::ZERO,
            sample_every: 1.0,
            top_users: TOP_USERS,
        }
    }
}

/// A run that cannot proceed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    /// Arrivals must come in submit order.
    #[error("arrival at {got} after one at {previous}: arrivals must be in submit order")]
    OutOfOrder {
        /// The earlier arrival's time.
        previous: Time,
        /// The offending arrival's time.
        got: Time,
    },
    /// An arrival names a user beyond the configured ones or has the wrong demand length.
    #[error("arrival of user {user}: {problem}")]
    BadArrival {
        /// The user index.
        user: u32,
        /// What is wrong.
        problem: String,
    },
    /// The capacity is unusable.
    #[error("capacity: {0}")]
    Capacity(String),
    /// The ranker refused what the engine told it.
    #[error("ranking: {0}")]
    Rank(RankError),
    /// The policy cannot rank this engine's users.
    #[error("policy {policy}: {problem}")]
    Policy {
        /// The policy as written.
        policy: String,
        /// Why it cannot be used.
        problem: String,
    },
}

/// A task waiting in a user's queue.
#[derive(Debug, Clone)]
struct Pending {
    seq: u64,
    submit: Time,
    runtime: u64,
    demand: Vec<f64>,
}

/// A task running somewhere.
#[derive(Debug, Clone)]
struct Running {
    user: u32,
    place: usize,
    demand: Vec<f64>,
}

/// The engine's state between events.
struct Engine {
    queues: Vec<VecDeque<Pending>>,
    allocation: Vec<Vec<f64>>,
    running: Vec<Option<Running>>,
    free_slots: Vec<usize>,
    finishes: BinaryHeap<Reverse<(Time, u64, usize)>>,
    space: Space,
    /// Each node's speed (the space is lent out during a pass).
    speeds: Vec<f64>,
    ranking: Box<dyn Ranker>,
    recorder: Recorder,
    now: Time,
    seq: u64,
    /// The first refusal by the ranker, which ends the run.
    fault: Option<SimError>,
}

/// Replays `arrivals` (in submit order) under `config`.
pub fn run<E>(
    config: &ClusterConfig,
    arrivals: impl Iterator<Item = Result<Task, E>>,
    mut progress: impl FnMut(Time),
) -> Result<PolicyResult, RunError<E>> {
    let mut engine = Engine::new(config).map_err(RunError::Sim)?;
    let mut arrivals = arrivals.peekable();
    let mut last_submit = Time::ZERO;
    loop {
        let next_arrival = match arrivals.peek() {
            Some(Ok(a)) => Some(a.submit),
            Some(Err(_)) => {
                return Err(RunError::Input(
                    arrivals
                        .next()
                        .and_then(Result::err)
                        .expect("peeked an error"),
                ))
            }
            None => None,
        };
        let next_finish = engine.finishes.peek().map(|Reverse((t, _, _))| *t);
        let Some(t) = next_arrival.into_iter().chain(next_finish).min() else {
            break;
        };
        if let Stop::Horizon(h) = config.stop {
            if t > h {
                break;
            }
        }
        if t < engine.now {
            return Err(RunError::Sim(SimError::OutOfOrder {
                previous: engine.now,
                got: t,
            }));
        }
        engine.at(t).map_err(RunError::Sim)?;
        while engine
            .finishes
            .peek()
            .is_some_and(|Reverse((f, _, _))| *f == t)
        {
            engine.finish_one();
        }
        while let Some(Ok(a)) = arrivals.next_if(|a| matches!(a, Ok(a) if a.submit == t)) {
            if a.submit < last_submit {
                return Err(RunError::Sim(SimError::OutOfOrder {
                    previous: last_submit,
                    got: a.submit,
                }));
            }
            last_submit = a.submit;
            engine.arrive(a).map_err(RunError::Sim)?;
        }
        engine.pass(config.discipline.as_ref());
        if let Some(fault) = engine.fault.take() {
            return Err(RunError::Sim(fault));
        }
        progress(t);
    }
    let end = match config.stop {
        Stop::Horizon(h) => h.max(engine.now),
        Stop::Drain => engine.now,
    };
    for rest in arrivals {
        rest.map_err(RunError::Input)?;
        engine.recorder.beyond_horizon();
    }
    Ok(engine.conclude(config, end))
}

/// Why a run stopped early: the engine refused, or the input failed.
#[derive(Debug, Error)]
pub enum RunError<E> {
    /// The engine refused the input.
    #[error(transparent)]
    Sim(SimError),
    /// Reading the input failed.
    #[error("{0}")]
    Input(E),
}

/// The ranker of `policy` for `users` users with equal shares over `resources` resources.
///
/// Weighted DRF is refused: a replay has no weight source yet (accounts and shares come with
/// batch scheduling), and with equal weights it would silently be DRF.
fn ranker(
    policy: &PolicySpec,
    resources: usize,
    users: usize,
) -> Result<Box<dyn Ranker>, SimError> {
    let refuse = |problem: &str| SimError::Policy {
        policy: policy.name.clone(),
        problem: problem.into(),
    };
    if policy.kind == PolicyKind::Stateless(Policy::WeightedDrf) {
        return Err(refuse(
            "a replay has no user weights yet, so weighted DRF would be DRF; use drf",
        ));
    }
    policy
        .ranker(resources, &Share::equal(users))
        .ok_or_else(|| refuse("ranks processes, not users; the process engine (simulate) runs it"))
}

impl Engine {
    fn new(config: &ClusterConfig) -> Result<Engine, SimError> {
        let m = config.resources.len();
        let users = config.users.len();
        let space = Space::new(
            &config.capacity,
            &config.resources,
            Arc::clone(&config.placement),
        )?;
        Ok(Engine {
            queues: vec![VecDeque::new(); users],
            allocation: vec![vec![0.0; m]; users],
            running: Vec::new(),
            free_slots: Vec::new(),
            finishes: BinaryHeap::new(),
            speeds: space.speeds(),
            space,
            ranking: ranker(&config.policy, m, users)?,
            recorder: Recorder::new(users, &config.resources, config.origin, config.sample_every),
            now: config.origin,
            seq: 0,
            fault: None,
        })
    }

    fn at(&mut self, t: Time) -> Result<(), SimError> {
        self.ranking.advance(t).map_err(SimError::Rank)?;
        self.now = t;
        self.recorder.advance(t);
        Ok(())
    }

    fn head(&self, user: u32) -> Option<Head> {
        self.queues[user as usize]
            .front()
            .map(|p| Head::new(p.submit, p.seq).with_size(dominant_share(&p.demand)))
    }

    fn arrive(&mut self, a: Task) -> Result<(), SimError> {
        let u = a.user as usize;
        if u >= self.queues.len() {
            return Err(SimError::BadArrival {
                user: a.user,
                problem: "no such user".into(),
            });
        }
        self.recorder.event();
        self.recorder.submitted(a.user);
        let demand = self
            .space
            .normalise(&a.demand)
            .map_err(|problem| SimError::BadArrival {
                user: a.user,
                problem,
            })?;
        if !self.space.could_ever_fit(&demand) {
            self.recorder.never_fits(a.user);
            return Ok(());
        }
        self.seq += 1;
        let was_idle = self.queues[u].is_empty();
        self.queues[u].push_back(Pending {
            seq: self.seq,
            submit: a.submit,
            runtime: a.runtime,
            demand,
        });
        if was_idle {
            self.rerank(a.user);
        }
        Ok(())
    }

    fn finish_one(&mut self) {
        let Some(Reverse((_, _, slot))) = self.finishes.pop() else {
            return;
        };
        let Some(task) = self.running[slot].take() else {
            return;
        };
        self.free_slots.push(slot);
        self.recorder.event();
        self.recorder.completed(task.user);
        self.space.release(task.place, &task.demand);
        self.recorder.used(self.space.used());
        let u = task.user as usize;
        self.allocation[u]
            .iter_mut()
            .zip(&task.demand)
            .for_each(|(o, d)| *o = (*o - d).max(0.0));
        self.recorder
            .allocation(task.user, self.now, &self.allocation[u]);
        self.rerank(task.user);
    }

    /// Tells the ranker what `user` holds and waits for now. The engine's holdings are
    /// normalised from checked demands, so the ranker accepts them; should it not, the first
    /// refusal is kept and ends the run.
    fn rerank(&mut self, user: u32) {
        let head = self.head(user);
        let result = self
            .ranking
            .update(user, &self.allocation[user as usize], head);
        if let Err(e) = result {
            self.fault.get_or_insert(SimError::Rank(e));
        }
    }

    /// One pass of Algorithm 1; time stands still during it, so use is recorded after it.
    fn pass(&mut self, discipline: &dyn Discipline) {
        let mut space = std::mem::take(&mut self.space);
        discipline.pass(self, &mut space);
        self.space = space;
        self.ranking.restore();
        self.recorder.used(self.space.used());
    }

    fn conclude(self, config: &ClusterConfig, end: Time) -> PolicyResult {
        let waiting = self
            .queues
            .iter()
            .enumerate()
            .flat_map(|(u, q)| q.iter().map(move |p| (u as u32, p.submit)));
        let counters = self.ranking.livetree();
        let mut result = self
            .recorder
            .finish(end, waiting, &config.users, config.top_users);
        Recorder::with_livetree(&mut result, counters);
        result.policy = config.policy.name.clone();
        result
    }
}

impl TaskQueue for Engine {
    fn first(&mut self) -> Option<usize> {
        self.ranking.first().map(|u| u as usize)
    }

    fn head(&self, client: usize) -> &[f64] {
        self.queues[client]
            .front()
            .map_or(&[], |p| p.demand.as_slice())
    }

    fn start(&mut self, client: usize, place: usize) {
        let Some(task) = self.queues[client].pop_front() else {
            return;
        };
        let user = client as u32;
        let wait = (self.now.as_micros() - task.submit.as_micros()) as f64 / 1e6;
        self.recorder.started(user, wait, task.runtime as f64 / 1e6);
        self.allocation[client]
            .iter_mut()
            .zip(&task.demand)
            .for_each(|(o, d)| *o += d);
        self.recorder
            .allocation(user, self.now, &self.allocation[client]);
        let slot = self.free_slots.pop().unwrap_or(self.running.len());
        if slot == self.running.len() {
            self.running.push(None);
        }
        self.finishes.push(Reverse((
            self.now
                .plus_micros(on_node(task.runtime, self.speeds[place])),
            task.seq,
            slot,
        )));
        self.running[slot] = Some(Running {
            user,
            place,
            demand: task.demand,
        });
        self.rerank(user);
    }

    fn skip(&mut self, client: usize) {
        self.ranking.set_aside(client as u32);
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
