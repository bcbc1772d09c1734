//! The reconcile itself, without any I/O: from the queue, the site factors Slurm holds and the
//! policy's order of clients, what every pending job should hold, why, and the writes that get
//! it there.
//!
//! Kept apart from reading and writing so that it can be tested on recorded outputs and
//! measured on ten thousand jobs, and so that `status`, `sync --dry-run` and `sync` show the
//! very same plan.

use crate::clients::Clients;
use crate::machines::Machines;
use crate::queue::{JobState, QueuedJob};
use crate::site::{factors, site_factor};
use crate::writes::{writes, Job, Write};
use fairshare_core::model::Time;
use fairshare_core::priority::dominant_share;
use fairshare_core::rank::Head;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a plan is made under.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanSettings {
    /// The site factor of the first-ranked association: factors in [0, 1] are multiplied by it.
    pub weight: u32,
    /// The partitions whose jobs are ranked; empty: all.
    pub partitions: Vec<String>,
    /// The most jobs one `scontrol update` call sets.
    pub per_call: usize,
}

/// One ranked association.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    /// Its place, 1 for the first.
    pub place: usize,
    /// The account.
    pub account: String,
    /// The user.
    pub user: String,
    /// Its factor in [0, 1]: `(n − i) / n` for the i-th of n.
    pub factor: f64,
    /// The site factor its pending jobs get.
    pub site_factor: i64,
    /// How many of its jobs are pending.
    pub pending: usize,
}

/// One pending job and what the plan does with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedJob {
    /// Slurm's job id.
    pub id: u64,
    /// Its user.
    pub user: String,
    /// Its account.
    pub account: String,
    /// Its partition.
    pub partition: String,
    /// Slurm's priority for it, as `squeue` showed it (its site factor included).
    pub priority: u64,
    /// The site factor Slurm holds for it, as `sprio` shows it.
    pub held: Option<i64>,
    /// The site factor fairshare wants for it; `None`: left alone (see `note`).
    pub wanted: Option<i64>,
    /// Why it is left alone, when it is.
    pub note: Option<String>,
}

/// A whole reconcile: the order, every pending job, and the writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The ranked associations, first to last.
    pub standings: Vec<Standing>,
    /// Every pending job of the partitions considered, by job id.
    pub jobs: Vec<PlannedJob>,
    /// The `scontrol` calls that bring the jobs to what is wanted.
    pub writes: Vec<Write>,
}

impl Plan {
    /// How many jobs the writes set.
    pub fn jobs_written(&self) -> usize {
        self.writes.iter().map(|w| w.jobs.len()).sum()
    }

    /// How many pending jobs are left alone.
    pub fn left_alone(&self) -> usize {
        self.jobs.iter().filter(|j| j.wanted.is_none()).count()
    }
}

/// Whether a job of `partition` (Slurm writes several comma-separated) is considered.
pub fn considered(partition: &str, partitions: &[String]) -> bool {
    partitions.is_empty()
        || partition
            .split(',')
            .any(|p| partitions.iter().any(|q| q == p))
}

/// The pending jobs of `jobs` in the partitions of `settings`.
pub fn pending<'a>(
    jobs: &'a [QueuedJob],
    settings: &'a PlanSettings,
) -> impl Iterator<Item = &'a QueuedJob> + 'a {
    jobs.iter()
        .filter(|j| j.state == JobState::Pending)
        .filter(|j| considered(&j.partition, &settings.partitions))
}

/// Each client's head: its oldest pending job that `sprio` lists in `held` (earliest submit,
/// then lowest id; held jobs and jobs not yet eligible do not wait for a factor), with the job's
/// dominant share of `machines` as its size.
pub fn heads(
    jobs: &[QueuedJob],
    held: &BTreeMap<u64, i64>,
    clients: &Clients,
    machines: &Machines,
    settings: &PlanSettings,
) -> BTreeMap<u32, Head> {
    let mut heads: BTreeMap<u32, Head> = BTreeMap::new();
    let listed = pending(jobs, settings).filter(|j| held.contains_key(&j.id));
    for job in listed {
        let Some(client) = clients.client(&job.account, &job.user) else {
            continue;
        };
        let head = Head::new(
            Time::from_micros(job.submit.saturating_mul(1_000_000)),
            job.id,
        )
        .with_size(dominant_share(&machines.holding(&job.demand())));
        let older = |h: &Head| (head.arrival, head.seq) < (h.arrival, h.seq);
        if heads.get(&client).is_none_or(older) {
            heads.insert(client, head);
        }
    }
    heads
}

/// The plan for `jobs`, Slurm holding `held` (job id → site factor, from `sprio`), the policy
/// ordering the clients as `order` (first to last).
pub fn plan(
    jobs: &[QueuedJob],
    held: &BTreeMap<u64, i64>,
    clients: &Clients,
    order: &[u32],
    settings: &PlanSettings,
) -> Plan {
    let labels: Vec<String> = order.iter().map(|c| c.to_string()).collect();
    let factor_of = factors(labels.iter().map(String::as_str));
    let mut standings: Vec<Standing> = order
        .iter()
        .zip(&labels)
        .enumerate()
        .map(|(i, (&client, label))| {
            let (account, user) = clients.names[client as usize].clone();
            let factor = factor_of[label.as_str()];
            Standing {
                place: i + 1,
                account,
                user,
                factor,
                site_factor: site_factor(factor, settings.weight),
                pending: 0,
            }
        })
        .collect();
    let place: BTreeMap<u32, usize> = order.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let jobs: Vec<PlannedJob> = pending(jobs, settings)
        .map(|job| {
            let held = held.get(&job.id).copied();
            let client = clients.client(&job.account, &job.user);
            let standing = client
                .and_then(|c| place.get(&c))
                .map(|&i| &mut standings[i]);
            let (wanted, note) = match (standing, held) {
                (_, None) => (
                    None,
                    Some("sprio does not list it (held, or not yet eligible)".into()),
                ),
                (Some(s), Some(_)) => {
                    s.pending += 1;
                    (Some(s.site_factor), None)
                }
                (None, Some(_)) => {
                    let why = clients.why_not(&job.account, &job.user);
                    (
                        None,
                        why.or(Some("the policy did not rank its association".into())),
                    )
                }
            };
            PlannedJob::of(job, held, wanted, note)
        })
        .collect();
    Plan::of(standings, jobs, settings.per_call)
}

impl PlannedJob {
    /// `job`, holding `held`, wanted at `wanted`, left alone for `note`.
    pub fn of(
        job: &QueuedJob,
        held: Option<i64>,
        wanted: Option<i64>,
        note: Option<String>,
    ) -> Self {
        PlannedJob {
            id: job.id,
            user: job.user.clone(),
            account: job.account.clone(),
            partition: job.partition.clone(),
            priority: job.priority,
            held,
            wanted,
            note,
        }
    }
}

impl Plan {
    /// The plan of `standings` and `jobs` (sorted here by id), with the writes that bring
    /// the jobs to what is wanted, at most `per_call` jobs per call.
    pub fn of(standings: Vec<Standing>, mut jobs: Vec<PlannedJob>, per_call: usize) -> Plan {
        jobs.sort_by_key(|j| j.id);
        let compared: Vec<Job> = (jobs.iter())
            .map(|j| Job {
                id: j.id,
                held: j.held.unwrap_or(0),
                wanted: j.wanted,
            })
            .collect();
        Plan {
            writes: writes(&compared, per_call),
            standings,
            jobs,
        }
    }
}
