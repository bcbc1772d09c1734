//! The reconcile itself, without any I/O: from the queue, the factors the scheduler holds and the
//! order in which the policy would start the pending jobs, what every pending job should hold,
//! why, and the writes that get it there.
//!
//! Kept apart from reading and writing so that it can be tested on recorded outputs and
//! measured on ten thousand jobs, and so that `status`, `sync --dry-run` and `sync` show the
//! very same plan.
//!
//! Every policy fairshare ranks with orders the clients who wait; a scheduler wants a number
//! per job. The order of starts (the policy's progressive filling played out over the pending
//! jobs) falls into runs, each one client's jobs started one after another: under Fair Tree
//! one run per client, under SDRF or DRF clients taking turns. Each run gets one factor,
//! falling along the runs ([`stable_factors`](fairshare_core::rank::factors::stable_factors)), so that the scheduler's other factors (age,
//! size, QOS) keep the relative order of the jobs within a run, and the jobs of one client
//! keep theirs. A fresh queue gets Fair Tree's own factors: for `n` runs, the `i`-th (from 0)
//! gets `(n − i) / n` times a weight, rounded to a whole number — exactly Slurm's Fair Tree
//! factor when the order is Fair Tree's. Later passes keep the factors the scheduler already
//! holds wherever they still fall along the order, so a steady queue needs few writes. The
//! play of starts and the factors are `fairshare-core`'s ([`fairshare_core::rank::play`],
//! [`fairshare_core::rank::factors`]), where the replay's model of the adapter calls them too:
//! a replay writes what the adapter would.

use crate::clients::Clients;
use crate::job::{JobId, QueueState, QueuedJob};
use crate::machines::Machines;
use crate::writes::{writes, Job, Write};
use fairshare_core::priority::dominant_share;
use fairshare_core::rank::factors::Run;
use fairshare_core::rank::Head;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a plan is made under.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanSettings {
    /// The highest factor: the first run's on a fresh queue (factors in [0, 1] are
    /// multiplied by it).
    pub weight: u32,
    /// The partitions whose jobs are ranked; empty: all.
    pub partitions: Vec<String>,
    /// The most jobs one write (Slurm: one `scontrol update` call) sets.
    pub per_call: usize,
    /// How many runs at the head of the order of starts get factors of their own; after
    /// them each association's remaining jobs make one run.
    pub ranked_runs: usize,
    /// Whether the play of starts expects running jobs to end at their time limits.
    pub ends_at_limits: bool,
}

/// One ranked association: its place in the order and its factors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedClient {
    /// Its place, 1 for the first.
    pub place: usize,
    /// The account.
    pub account: String,
    /// The user.
    pub user: String,
    /// Its first job's factor over the weight, in [0, 1].
    pub fraction: f64,
    /// The factor of its first job (its later jobs may get lower ones, when the policy
    /// starts others' jobs between).
    pub factor: i64,
    /// The factor of its last job: what a job it submits now joins.
    pub last_factor: i64,
    /// How many of its jobs are pending.
    pub pending: usize,
}

/// One pending job and what the plan does with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedJob<J = u64> {
    /// The scheduler's job id.
    pub id: J,
    /// Its user.
    pub user: String,
    /// Its account.
    pub account: String,
    /// Its partition.
    pub partition: String,
    /// The scheduler's priority for it (its factor included; Slurm: as `squeue` shows it).
    pub priority: u64,
    /// The factor the scheduler holds for it (Slurm: as `sprio` shows it).
    pub held: Option<i64>,
    /// The factor fairshare wants for it; `None`: left alone (see `note`).
    pub wanted: Option<i64>,
    /// Why it is left alone, when it is.
    pub note: Option<String>,
}

/// A whole reconcile: the order, every pending job, and the writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan<J = u64> {
    /// The ranked associations, first to last.
    pub standings: Vec<RankedClient>,
    /// Every pending job of the partitions considered, by job id.
    pub jobs: Vec<PlannedJob<J>>,
    /// The writes that bring the jobs to what is wanted.
    pub writes: Vec<Write<J>>,
    /// How many runs the order of starts falls into, each with its own factor.
    pub runs: usize,
}

impl<J> Plan<J> {
    /// How many jobs the writes set.
    pub fn jobs_written(&self) -> usize {
        self.writes.iter().map(|w| w.jobs.len()).sum()
    }

    /// How many pending jobs are left alone.
    pub fn left_alone(&self) -> usize {
        self.jobs.iter().filter(|j| j.wanted.is_none()).count()
    }
}

/// Whether a job of `partition` (several may be written comma-separated) is considered.
pub fn considered(partition: &str, partitions: &[String]) -> bool {
    partitions.is_empty()
        || partition
            .split(',')
            .any(|p| partitions.iter().any(|q| q == p))
}

/// The pending jobs of `jobs` in the partitions of `settings`.
pub fn pending<'a: 's, 's, J>(
    jobs: &'a [QueuedJob<J>],
    settings: &'s PlanSettings,
) -> impl Iterator<Item = &'a QueuedJob<J>> + 's {
    jobs.iter()
        .filter(|j| j.state == QueueState::Pending)
        .filter(|j| considered(&j.partition, &settings.partitions))
}

/// Each client's pending jobs that hold a factor (held jobs and jobs not yet eligible do
/// not wait for one), oldest first (earliest submit, then lowest id): the order the
/// scheduler's other factors keep within one factor.
pub(crate) fn queues<'a, J: JobId>(
    jobs: &'a [QueuedJob<J>],
    clients: &Clients,
    settings: &PlanSettings,
) -> BTreeMap<u32, Vec<&'a QueuedJob<J>>> {
    let mut queues: BTreeMap<u32, Vec<&QueuedJob<J>>> = BTreeMap::new();
    let listed = pending(jobs, settings).filter(|j| j.held.is_some());
    for job in listed {
        if let Some(client) = clients.client(&job.account, &job.user) {
            queues.entry(client).or_default().push(job);
        }
    }
    for queue in queues.values_mut() {
        queue.sort_by(|a, b| (a.submit, &a.id).cmp(&(b.submit, &b.id)));
    }
    queues
}

/// The head a pending job waits as: its submit time, `seq` (its place in the order of the
/// jobs' ids, which breaks ties between equal submit times as the ids do), and its dominant
/// share of `machines` as its size.
pub(crate) fn head<J>(job: &QueuedJob<J>, seq: u64, machines: &Machines) -> Head {
    Head::new(job.submit, seq).with_size(dominant_share(&machines.holding(&job.demand)))
}

/// Each of `ids`' place in their order, from 0: the sequence numbers of [`head`].
pub(crate) fn sequence_numbers<'a, J: JobId>(
    ids: impl Iterator<Item = &'a J>,
) -> BTreeMap<&'a J, u64> {
    let mut ids: Vec<&J> = ids.collect();
    ids.sort_unstable();
    ids.into_iter().zip(0..).collect()
}

/// The plan for `jobs`, the policy's order of starts cut into `runs` over `queues` (each
/// client's jobs, by place): each run's factor on each of its jobs, the clients in the order
/// of their first runs, each placed there.
pub fn plan<J: JobId>(
    jobs: &[QueuedJob<J>],
    clients: &Clients,
    (queues, runs): (&BTreeMap<u32, Vec<&QueuedJob<J>>>, &[Run]),
    settings: &PlanSettings,
) -> Plan<J> {
    let mut wanted: BTreeMap<&J, i64> = BTreeMap::new();
    let mut standings: Vec<RankedClient> = Vec::new();
    let mut place: BTreeMap<u32, usize> = BTreeMap::new();
    for run in runs {
        let ran = &queues[&run.client][run.jobs.clone()];
        wanted.extend(ran.iter().map(|job| (&job.id, run.factor)));
        let i = *place.entry(run.client).or_insert_with(|| {
            let (account, user) = clients.names[run.client as usize].clone();
            standings.push(RankedClient {
                place: standings.len() + 1,
                account,
                user,
                fraction: run.factor as f64 / f64::from(settings.weight),
                factor: run.factor,
                last_factor: run.factor,
                pending: 0,
            });
            standings.len() - 1
        });
        standings[i].pending += ran.len();
        standings[i].last_factor = run.factor;
    }
    let jobs: Vec<PlannedJob<J>> = pending(jobs, settings)
        .map(|job| {
            let (wanted, note) = match (job.held, wanted.get(&job.id)) {
                (None, _) => (
                    None,
                    Some(
                        "the scheduler lets no factor order it now (held, not yet eligible, or lowered by its owner)"
                            .into(),
                    ),
                ),
                (Some(_), Some(&factor)) => (Some(factor), None),
                (Some(_), None) => {
                    let why = clients.why_not(&job.account, &job.user);
                    (
                        None,
                        why.or(Some("the policy did not rank its association".into())),
                    )
                }
            };
            PlannedJob::of(job, wanted, note)
        })
        .collect();
    let mut plan = Plan::of(standings, jobs, settings.per_call);
    plan.runs = runs.len();
    plan
}

/// The factor a job an association submits now should get: what `job_submit.lua` sets
/// at submission, until the next pass ranks the job with the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubmitFactor {
    /// The account.
    pub account: String,
    /// The user.
    pub user: String,
    /// The factor.
    pub factor: i64,
}

/// Each association's [`SubmitFactor`] of `table` (by client), by association.
pub fn submit_factors(table: &[(u32, i64)], clients: &Clients) -> Vec<SubmitFactor> {
    let mut factors: Vec<SubmitFactor> = (table.iter())
        .map(|&(client, factor)| {
            let (account, user) = &clients.names[client as usize];
            SubmitFactor {
                account: account.clone(),
                user: user.clone(),
                factor,
            }
        })
        .collect();
    factors.sort_by(|a, b| (&a.account, &a.user).cmp(&(&b.account, &b.user)));
    factors
}

impl<J: JobId> PlannedJob<J> {
    /// `job`, wanted at `wanted`, left alone for `note`.
    pub fn of(job: &QueuedJob<J>, wanted: Option<i64>, note: Option<String>) -> Self {
        PlannedJob {
            id: job.id.clone(),
            user: job.user.clone(),
            account: job.account.clone(),
            partition: job.partition.clone(),
            priority: job.priority,
            held: job.held,
            wanted,
            note,
        }
    }
}

impl<J: JobId> Plan<J> {
    /// The plan of `standings` and `jobs` (sorted here by id), with the writes that bring
    /// the jobs to what is wanted, at most `per_call` jobs per call.
    pub fn of(standings: Vec<RankedClient>, mut jobs: Vec<PlannedJob<J>>, per_call: usize) -> Self {
        jobs.sort_by(|a, b| a.id.cmp(&b.id));
        let compared: Vec<Job<J>> = (jobs.iter())
            .map(|j| Job {
                id: j.id.clone(),
                held: j.held.unwrap_or(0),
                wanted: j.wanted,
            })
            .collect();
        Plan {
            writes: writes(&compared, per_call),
            runs: standings.len(),
            standings,
            jobs,
        }
    }
}
