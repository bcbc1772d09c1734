//! Usage, as the policy counts it: what ran on the cluster, from the scheduler's accounting
//! (Slurm's `sacct`), told to the policy's ranker in the order it happened.
//!
//! Every policy keeps its own memory of the past — SDRF its decaying commitments, the
//! production fairshare functions their decayed usage — and all of them learn it the same
//! way: a job started, holding so much of each resource and accruing so much usage per second;
//! a job ended. So the history is replayed through the registry's ranker with the same
//! bookkeeping a scheduler uses ([`Book`]), once from a window of the past when the adapter
//! starts, and then pass by pass from what started or ended since.
//!
//! A job is known by its scheduler's id, so a job the accounting lists again (it was running
//! at the last pass) is not charged twice. What the accounting reports late — a job that
//! started before the history's time but was not listed then — is charged from the history's
//! time, and counted.

use crate::clients::Clients;
use crate::job::{Allocation, JobId};
use crate::machines::Machines;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::rank::factors::{self, Run};
use fairshare_core::rank::play::{Expected, Waiting};
use fairshare_core::rank::{Book, Head, RankError, Ranker};
use fairshare_core::usage::metric::UsageMetric;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// How long an ended job is remembered, so that the accounting listing it again changes nothing.
const REMEMBER_ENDED: u64 = 3_600 * 1_000_000;

/// A start (`true`) or end of job `id` at a time; in time order, ends come first.
type Event<J> = (Time, bool, J);

/// A running job as the history charges it.
#[derive(Debug, Clone)]
struct Charged {
    client: u32,
    holding: Vec<f64>,
    /// Usage per second for policies that charge jobs.
    rate: Option<f64>,
    /// What the history counts per second for the table (the rate, or processors).
    counted: f64,
    start: Time,
}

/// What one step of the history took in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Step {
    /// Jobs that started.
    pub started: u64,
    /// Jobs that ended.
    pub ended: u64,
    /// Jobs that began before the history's time (running when the window opened, or listed
    /// late by the accounting): charged from the history's time.
    pub clamped: u64,
    /// Jobs that started and ended before the history's time without being listed then.
    pub missed: u64,
    /// Jobs of an association that is not a client (left out of the tree, or unknown).
    pub outside: u64,
    /// Running jobs the accounting no longer listed: ended at the history's time.
    pub unlisted: u64,
    /// Of the jobs clamped or missed, the running the policy's memory was not charged, in
    /// milliseconds (0 for a policy without a memory): what listing them late cost.
    pub uncharged_ms: u64,
}

/// The history of one policy on one cluster, up to a moment, its jobs known by ids of type `J`.
pub struct History<J = u64> {
    book: Book,
    /// What the policy charges jobs per second, for policies that charge them.
    metric: Option<UsageMetric>,
    /// Whether the policy remembers past usage ([`PolicySpec::has_memory`]).
    remembers: bool,
    running: BTreeMap<J, Charged>,
    ended: BTreeMap<J, Time>,
    now: Time,
    /// Per client, what it was counted over the history, undecayed.
    counted: Vec<f64>,
}

/// Why a history cannot be kept for a policy.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The policy does not rank clients, or cannot rank these.
    #[error("policy {policy}: {problem}")]
    Policy {
        /// The policy as written.
        policy: String,
        /// Why not.
        problem: String,
    },
    /// The ranker refused what it was told.
    #[error("ranking")]
    Rank(#[from] RankError),
}

impl<J: JobId> History<J> {
    /// An empty history of `policy` for `clients` on `machines`, starting at `from`.
    pub fn new(
        policy: &PolicySpec,
        clients: &Clients,
        machines: &Machines,
        from: Time,
    ) -> Result<History<J>, HistoryError> {
        let refuse = |problem: String| HistoryError::Policy {
            policy: policy.name.clone(),
            problem,
        };
        let metric = match policy.kind {
            PolicyKind::Fairshare(settings) => {
                settings
                    .metric
                    .check_resources(&machines.resources)
                    .map_err(|e| refuse(e.0))?;
                Some(settings.metric)
            }
            _ => None,
        };
        let m = machines.resources.len();
        let ranker = policy
            .ranker(m, &clients.shares(), Some(&clients.accounts))
            .ok_or_else(|| refuse("ranks processes, not users; it cannot order a queue".into()))?;
        let mut book = Book::new(ranker, clients.len(), m);
        book.advance(from)?;
        Ok(History {
            book,
            metric,
            remembers: policy.has_memory(),
            running: BTreeMap::new(),
            ended: BTreeMap::new(),
            now: from,
            counted: vec![0.0; clients.len()],
        })
    }

    /// The moment the history has reached.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The jobs the history holds as running.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// What `client` was counted over the history, undecayed: the policy's usage metric
    /// (per second of running) for policies that charge jobs, processor-seconds otherwise.
    pub fn counted(&self, client: u32) -> f64 {
        self.counted.get(client as usize).copied().unwrap_or(0.0)
    }

    /// What `client` holds now, as fractions of each resource.
    pub fn holdings(&self, client: u32) -> &[f64] {
        self.book.holdings(client)
    }

    /// The ranker, to ask a waiting client's priority.
    pub fn ranker(&self) -> &dyn Ranker {
        self.book.ranker()
    }

    /// Takes in `allocations` (what the accounting lists from about the history's time to `now`)
    /// and brings the history to `now`; a `now` before the history's time changes nothing.
    /// A running job the accounting no longer lists (its end recorded too late for this window, or
    /// purged) ends at the history's time.
    pub fn record(
        &mut self,
        allocations: &[Allocation<J>],
        clients: &Clients,
        machines: &Machines,
        now: Time,
    ) -> Result<Step, RankError> {
        let now = now.max(self.now);
        let mut step = Step::default();
        let (events, mut new) = self.events(allocations, clients, machines, now, &mut step);
        for (t, start, id) in events {
            self.book.advance(t)?;
            match (start, new.remove(&id)) {
                (true, Some(job)) => {
                    self.book.started(job.client, &job.holding, job.rate)?;
                    self.running.insert(id, job);
                    step.started += 1;
                }
                _ => self.end(id, t, &mut step)?,
            }
        }
        self.book.advance(now)?;
        self.now = now;
        let forget = Time(now.as_micros().saturating_sub(REMEMBER_ENDED));
        self.ended.retain(|_, end| *end >= forget);
        Ok(step)
    }

    /// The starts and ends `allocations` bring, in time order (at one instant ends before
    /// starts, as in the batch engine), with the jobs that start; `step` counts the rest.
    fn events(
        &mut self,
        allocations: &[Allocation<J>],
        clients: &Clients,
        machines: &Machines,
        now: Time,
        step: &mut Step,
    ) -> (Vec<Event<J>>, BTreeMap<J, Charged>) {
        let mut events: Vec<Event<J>> = Vec::new();
        let mut new = BTreeMap::new();
        let mut listed = BTreeSet::new();
        for a in allocations {
            let end = a.end.filter(|e| *e <= now);
            listed.insert(&a.id);
            if self.running.contains_key(&a.id) {
                events.extend(end.map(|e| (e.max(self.now), false, a.id.clone())));
                continue;
            }
            if self.ended.contains_key(&a.id) || new.contains_key(&a.id) || a.start > now {
                continue;
            }
            let Some(client) = clients.client(&a.account, &a.user) else {
                step.outside += 1;
                continue;
            };
            let uncharged = |to: Time| match self.remembers {
                true => to.as_micros().saturating_sub(a.start.as_micros()) / 1000,
                false => 0,
            };
            if end.is_some_and(|e| e <= self.now.max(a.start)) {
                // Ended before the history's time unseen, or ran no time at all.
                let missed = end.filter(|e| *e <= self.now);
                step.missed += u64::from(missed.is_some());
                step.uncharged_ms += missed.map_or(0, uncharged);
                self.ended.insert(a.id.clone(), end.unwrap_or(now));
                continue;
            }
            if a.start < self.now {
                step.clamped += 1;
                step.uncharged_ms += uncharged(self.now);
            }
            let start = a.start.max(self.now);
            events.push((start, true, a.id.clone()));
            events.extend(end.map(|e| (e, false, a.id.clone())));
            new.insert(a.id.clone(), self.charged(client, a, machines, start));
        }
        let unlisted = self.running.keys().filter(|id| !listed.contains(id));
        let unlisted: Vec<Event<J>> = unlisted.map(|id| (self.now, false, id.clone())).collect();
        step.unlisted += unlisted.len() as u64;
        events.extend(unlisted);
        events.sort_unstable();
        (events, new)
    }

    /// Ends the running job `id` at `t`, if it runs.
    fn end(&mut self, id: J, t: Time, step: &mut Step) -> Result<(), RankError> {
        let Some(job) = self.running.remove(&id) else {
            return Ok(());
        };
        let ran_s = (t.as_micros().saturating_sub(job.start.as_micros())) as f64 / 1e6;
        self.book
            .finished(job.client, &job.holding, job.rate, ran_s)?;
        self.counted[job.client as usize] += job.counted * ran_s;
        self.ended.insert(id, t);
        step.ended += 1;
        Ok(())
    }

    /// The clients with a pending job, first to last, each waiting with its head job:
    /// `heads` holds each waiting client's oldest pending job; every other client waits for
    /// nothing.
    pub fn order(&mut self, heads: &BTreeMap<u32, Head>) -> Result<Vec<u32>, RankError> {
        for client in 0..self.counted.len() as u32 {
            self.book.waits(client, heads.get(&client).copied())?;
        }
        Ok(self.book.order())
    }

    /// The factors of a pass at the history's time ([`factors::pass_factors`]): the policy's
    /// order of starts over `queues` (each client's in the order given), the running jobs
    /// expected to end at `ends` (by job id; a job without one never frees its holding in the
    /// play, one past its end frees it at once), its runs' factors kept from `held` (by client
    /// and place in its queue) where they still fall, under `settings` (ranked runs, weight).
    pub fn pass_factors(
        &self,
        queues: &BTreeMap<u32, Vec<Waiting<'_>>>,
        ends: &BTreeMap<J, Time>,
        held: impl Fn(u32, usize) -> Option<i64>,
        settings: (usize, u32),
    ) -> Result<Vec<Run>, RankError> {
        let running = (self.running.iter())
            .filter_map(|(id, job)| {
                Some(Expected {
                    end: (*ends.get(id)?).max(self.now),
                    client: job.client,
                    holding: job.holding.clone(),
                    rate: job.rate,
                    start: job.start,
                })
            })
            .collect();
        factors::pass_factors(&self.book, self.now, queues, running, held, settings)
    }

    /// The factor a job each client submits now gets ([`factors::submit_table`] at the
    /// history's time): `heads` holds each waiting client's oldest job, `waiting` its first
    /// and last runs' factors.
    pub fn submit_table(
        &self,
        heads: &BTreeMap<u32, Head>,
        waiting: &BTreeMap<u32, (i64, i64)>,
        weight: u32,
    ) -> Result<Vec<(u32, i64)>, RankError> {
        factors::submit_table(&self.book, self.now, heads, waiting, weight)
    }

    /// A pending job of `demand` on `nodes` nodes with a time limit of `limit_s` seconds as
    /// [`History::pass_factors`] plays it: its head, holding, rate (its processors standing for its
    /// billing, which a scheduler works out only once it runs) and limit.
    pub fn waiting(
        &self,
        head: Head,
        (demand, nodes, limit_s): (&[f64], Option<u32>, Option<u64>),
        machines: &Machines,
    ) -> Waiting<'static> {
        Waiting {
            head,
            holding: Cow::Owned(machines.holding(demand)),
            rate: self.rate(&machines.task(demand, nodes), machines),
            limit: limit_s.map(|s| s.saturating_mul(1_000_000)),
        }
    }

    /// What the policy charges `task` per second, for policies that charge jobs.
    fn rate(&self, task: &fairshare_core::model::Task, machines: &Machines) -> Option<f64> {
        let price = |metric: UsageMetric| metric.price(task, &machines.catalogue, &machines.totals);
        self.metric.map(|metric| price(metric).0)
    }

    /// The job `a` of `client`, started at `start`, as the history charges it.
    fn charged(&self, client: u32, a: &Allocation<J>, machines: &Machines, start: Time) -> Charged {
        let mut task = machines.task(&a.demand, a.nodes);
        task.billing = Some(a.billing);
        let rate = self.rate(&task, machines);
        Charged {
            client,
            holding: machines.holding(&a.demand),
            rate,
            counted: rate.unwrap_or_else(|| a.demand.first().copied().unwrap_or(0.0)),
            start,
        }
    }
}
