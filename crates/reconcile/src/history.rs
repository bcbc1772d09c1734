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
use crate::job::Allocation;
use crate::machines::Machines;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::rank::{Book, Head, RankError, Ranker};
use fairshare_core::usage::metric::UsageMetric;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// How long an ended job is remembered, so that the accounting listing it again changes nothing.
const REMEMBER_ENDED: u64 = 3_600 * 1_000_000;

/// A start (`true`) or end of job `id` at a time; in time order, ends come first.
type Event = (Time, bool, u64);

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

/// A pending job as the order of starts plays it.
#[derive(Debug, Clone)]
pub struct Waiting {
    /// Its head, as the ranker sees it while it waits first.
    pub head: Head,
    /// What it would hold, as fractions of each resource.
    pub holding: Vec<f64>,
    /// Its usage per second, for policies that charge jobs.
    pub rate: Option<f64>,
    /// Its time limit, microseconds: when the play expects it to end once started (`None`:
    /// it never frees what it holds, in the play).
    pub limit: Option<u64>,
}

/// A job the play of starts expects to end, freeing what it holds: a running job at its
/// start plus its time limit, or a job the play started.
#[derive(Debug, Clone)]
struct Freeing {
    end: Time,
    client: u32,
    holding: Vec<f64>,
    rate: Option<f64>,
    start: Time,
}

/// What is free as the play of starts goes on, and what will free it, soonest first.
struct Room {
    /// Each resource's free fraction (negative when the play had to overfill it).
    free: Vec<f64>,
    /// The jobs expected to end, soonest first (at one end, in the order they were added), as
    /// their index in `jobs`.
    ends: BinaryHeap<Reverse<(Time, usize)>>,
    /// Every job expected to end.
    jobs: Vec<Freeing>,
}

impl Room {
    /// Whether `holding` fits in what is free.
    fn fits(&self, holding: &[f64]) -> bool {
        const SLACK: f64 = 1e-9;
        self.free.iter().zip(holding).all(|(f, h)| f + SLACK >= *h)
    }

    /// A job expected to end.
    fn expect(&mut self, job: Freeing) {
        self.ends.push(Reverse((job.end, self.jobs.len())));
        self.jobs.push(job);
    }

    /// The jobs that end soonest (all those expected at that one instant: a wave that started
    /// together ends together), their holdings freed.
    fn free_next(&mut self) -> Vec<&Freeing> {
        let Some(&Reverse((end, _))) = self.ends.peek() else {
            return Vec::new();
        };
        let mut ended = Vec::new();
        while self.ends.peek().is_some_and(|Reverse((t, _))| *t == end) {
            let Some(Reverse((_, i))) = self.ends.pop() else {
                break;
            };
            let job = &self.jobs[i];
            (self.free.iter_mut().zip(&job.holding)).for_each(|(f, h)| *f += h);
            ended.push(i);
        }
        ended.into_iter().map(|i| &self.jobs[i]).collect()
    }

    /// A job the play starts at `t`, holding what it holds until its limit.
    fn take(&mut self, t: Time, client: u32, job: &Waiting) {
        (self.free.iter_mut().zip(&job.holding)).for_each(|(f, h)| *f -= h);
        if let Some(limit) = job.limit {
            self.expect(Freeing {
                end: Time::from_micros(t.as_micros().saturating_add(limit)),
                client,
                holding: job.holding.clone(),
                rate: job.rate,
                start: t,
            });
        }
    }
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

/// The history of one policy on one cluster, up to a moment.
pub struct History {
    book: Book,
    /// What the policy charges jobs per second, for policies that charge them.
    metric: Option<UsageMetric>,
    /// Whether the policy remembers past usage ([`PolicySpec::has_memory`]).
    remembers: bool,
    running: BTreeMap<u64, Charged>,
    ended: BTreeMap<u64, Time>,
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

impl History {
    /// An empty history of `policy` for `clients` on `machines`, starting at `from`.
    pub fn new(
        policy: &PolicySpec,
        clients: &Clients,
        machines: &Machines,
        from: Time,
    ) -> Result<History, HistoryError> {
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
        allocations: &[Allocation],
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
        allocations: &[Allocation],
        clients: &Clients,
        machines: &Machines,
        now: Time,
        step: &mut Step,
    ) -> (Vec<Event>, BTreeMap<u64, Charged>) {
        let mut events: Vec<Event> = Vec::new();
        let mut new = BTreeMap::new();
        let mut listed = BTreeSet::new();
        for a in allocations {
            let end = a.end.filter(|e| *e <= now);
            listed.insert(a.id);
            if self.running.contains_key(&a.id) {
                events.extend(end.map(|e| (e.max(self.now), false, a.id)));
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
                self.ended.insert(a.id, end.unwrap_or(now));
                continue;
            }
            if a.start < self.now {
                step.clamped += 1;
                step.uncharged_ms += uncharged(self.now);
            }
            let start = a.start.max(self.now);
            events.push((start, true, a.id));
            events.extend(end.map(|e| (e, false, a.id)));
            new.insert(a.id, self.charged(client, a, machines, start));
        }
        let unlisted = self.running.keys().filter(|id| !listed.contains(id));
        let unlisted: Vec<Event> = unlisted.map(|&id| (self.now, false, id)).collect();
        step.unlisted += unlisted.len() as u64;
        events.extend(unlisted);
        events.sort_unstable();
        (events, new)
    }

    /// Ends the running job `id` at `t`, if it runs.
    fn end(&mut self, id: u64, t: Time, step: &mut Step) -> Result<(), RankError> {
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

    /// The order in which the policy would start the jobs of `queues` (each client's in the
    /// order given), as the client of each start: its progressive filling played out on a
    /// copy of the ranker at the history's time, for the first `runs` runs (a run: one
    /// client's consecutive starts).
    ///
    /// With `ends` (and the queues' limits) given, the play keeps what is free (without them
    /// every job starts at once, the clients' holdings only growing): the first client's next
    /// job starts when it fits, as Slurm's main scheduler starts the highest-priority job when
    /// room frees; until then the jobs expected to end soonest end (a running job at its start
    /// plus its time limit, `ends` by job id, or a job the play started, at its limit; all
    /// those expected at one instant together), their clients' holdings fall, and the policy
    /// chooses again, so that whose job frees the room weighs in the choice. The expected ends
    /// only order the ends: the ranker's clock stays at the history's time, since time limits
    /// overstate run times many times over and a decay run on for the minutes they span would
    /// rank by a moment that never comes (the next pass ranks again). A job that fits nowhere
    /// with nothing left to end starts regardless. Each start adds its job's holding (and
    /// rate) before the next choice, as a scheduler's pass does; the policy's factors that are
    /// refreshed only with time (the production fairshare functions) keep every start of a
    /// client together, as Slurm's one factor per association does. After those runs, each
    /// client's remaining jobs follow together, the clients in the ranker's order at that
    /// point.
    pub fn starts(
        &self,
        queues: &BTreeMap<u32, Vec<Waiting>>,
        runs: usize,
        ends: &BTreeMap<u64, Time>,
    ) -> Result<Vec<u32>, RankError> {
        let mut book = self.book.clone();
        for client in 0..self.counted.len() as u32 {
            let head = queues.get(&client).and_then(|q| q.first()).map(|w| w.head);
            book.waits(client, head)?;
        }
        let mut room = self.room(ends);
        // When the play expects each start, for the ends of the jobs it starts; the ranker's
        // clock stays at the history's time.
        let mut expected = self.now;
        let mut taken: BTreeMap<u32, usize> = BTreeMap::new();
        let mut starts: Vec<u32> = Vec::with_capacity(queues.values().map(Vec::len).sum());
        let mut played = 0;
        while let Some(client) = book.ranker().first() {
            let queue = queues.get(&client).map_or(&[][..], Vec::as_slice);
            let next = taken.entry(client).or_insert(0);
            let Some(job) = queue.get(*next) else { break };
            if !room.fits(&job.holding) {
                let ended = room.free_next();
                if !ended.is_empty() {
                    for job in ended {
                        expected = expected.max(job.end);
                        let ran = self.now.as_micros().saturating_sub(job.start.as_micros());
                        book.finished(job.client, &job.holding, job.rate, ran as f64 / 1e6)?;
                    }
                    continue;
                }
            }
            if starts.last() != Some(&client) {
                if played == runs {
                    break;
                }
                played += 1;
            }
            *next += 1;
            starts.push(client);
            book.started(client, &job.holding, job.rate)?;
            room.take(expected, client, job);
            book.waits(client, queue.get(*next).map(|w| w.head))?;
        }
        for client in book.order() {
            let left =
                queues.get(&client).map_or(0, Vec::len) - taken.get(&client).copied().unwrap_or(0);
            starts.extend(std::iter::repeat_n(client, left));
        }
        Ok(starts)
    }

    /// What is free now (what the running jobs leave), and when they are expected to free the
    /// rest: `ends` by job id (a job without one never frees its holding in the play; one
    /// past its end frees it at once).
    fn room(&self, ends: &BTreeMap<u64, Time>) -> Room {
        let mut free = vec![1.0; self.book.holdings(0).len()];
        for client in 0..self.counted.len() as u32 {
            let held = self.book.holdings(client);
            free.iter_mut().zip(held).for_each(|(f, h)| *f -= h);
        }
        let mut room = Room {
            free,
            ends: BinaryHeap::new(),
            jobs: Vec::new(),
        };
        for (id, job) in &self.running {
            if let Some(&end) = ends.get(id) {
                room.expect(Freeing {
                    end: end.max(self.now),
                    client: job.client,
                    holding: job.holding.clone(),
                    rate: job.rate,
                    start: job.start,
                });
            }
        }
        room
    }

    /// Every client, first to last, as the policy would rank them now were each waiting:
    /// those in `heads` with their heads, the others with a job submitted at the history's
    /// time (where a new job of theirs would stand).
    pub fn order_of_all(&self, heads: &BTreeMap<u32, Head>) -> Result<Vec<u32>, RankError> {
        let mut book = self.book.clone();
        for client in 0..self.counted.len() as u32 {
            let new = Head::new(self.now, u64::MAX);
            book.waits(client, Some(heads.get(&client).copied().unwrap_or(new)))?;
        }
        Ok(book.order())
    }

    /// A pending job of `demand` on `nodes` nodes with a time limit of `limit_s` seconds as
    /// [`History::starts`] plays it: its head, holding, rate (its processors standing for its
    /// billing, which a scheduler works out only once it runs) and limit.
    pub fn waiting(
        &self,
        head: Head,
        (demand, nodes, limit_s): (&[f64], Option<u32>, Option<u64>),
        machines: &Machines,
    ) -> Waiting {
        Waiting {
            head,
            holding: machines.holding(demand),
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
    fn charged(&self, client: u32, a: &Allocation, machines: &Machines, start: Time) -> Charged {
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
