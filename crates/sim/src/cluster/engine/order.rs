//! The order of each user's waiting jobs. By default a user's jobs wait in their queue's
//! priority, then oldest first. Under a scheduler that orders jobs by a job priority (Slurm's
//! multifactor with age, size, partition, QOS, association or TRES weights), each job also
//! has points of its own, recomputed for every waiting job each `PriorityCalcPeriod` as Slurm
//! recomputes them: a user's queue is kept by queue priority, then points, then age, and each
//! user's next job carries its points to the ranker, which adds the user's factor
//! ([`MultifactorRanker`]). A policy that reaches Slurm as the adapter's site factors puts a
//! factor on each job instead ([`super::adapter`]), one more term of its points.

use super::adapter::Adapter;
use super::{Engine, Pending};
use crate::cluster::ClusterConfig;
use fairshare_core::model::Time;
use fairshare_core::policy::PolicyKind;
use fairshare_core::priority::multifactor::{JobPriority, JobSize, Tres};
use fairshare_core::priority::PriorityKey;
use fairshare_core::rank::{MultifactorRanker, Ranker};
use std::cmp::Reverse;

/// Slurm's multifactor job priority as the engine keeps it.
#[derive(Debug, Clone, Copy)]
pub(super) struct JobOrder {
    priority: JobPriority,
    /// Where recomputations fall on the run's clock.
    offset_s: f64,
    /// The last recomputation, and when it ran in seconds.
    calculated: Option<i64>,
    at_s: f64,
    /// The cluster's nodes and processors, which the size factor is a share of.
    cluster: (f64, f64),
    /// The indices of the run's resources `cpu`, `mem` and `gpu`, whose TRES factors weigh in.
    tres_resources: [Option<usize>; 3],
}

impl JobOrder {
    /// The job order of `config`'s scheduler, if it orders jobs: by a job's own terms, or by
    /// the adapter's site factors.
    pub(super) fn of(config: &ClusterConfig) -> Option<JobOrder> {
        let priority = ordering_jobs(config)?;
        let cpus = config.capacity.total().first().copied().unwrap_or(0.0);
        let nodes = config.capacity.machines().unwrap_or(1) as f64;
        Some(JobOrder {
            priority,
            offset_s: refresh_offset(config),
            calculated: None,
            at_s: f64::NEG_INFINITY,
            cluster: priority.cluster.unwrap_or((nodes, cpus)),
            tres_resources: ["cpu", "mem", "gpu"]
                .map(|name| config.resources.iter().position(|r| r == name)),
        })
    }

    /// The weighted TRES term of a job asking normalised `demand` on at least `min_nodes`
    /// nodes of a partition of `extent` (its nodes' normalised capacity and count).
    pub(super) fn tres_points(
        &self,
        demand: &[f64],
        min_nodes: Option<u32>,
        (capacity, nodes): &(Vec<f64>, f64),
    ) -> f64 {
        if self.priority.tres_weights == Tres::default() {
            return 0.0;
        }
        let fraction = |resource: Option<usize>| {
            let r = resource?;
            let whole = capacity.get(r).filter(|c| **c > 0.0)?;
            Some(demand.get(r)? / whole)
        };
        let [cpu, mem, gpu] = self.tres_resources.map(|r| fraction(r).unwrap_or(0.0));
        // A job asks at most its partition's nodes (a pool counts as one node).
        let node = (f64::from(min_nodes.unwrap_or(1).max(1)) / nodes.max(1.0)).min(1.0);
        self.priority.tres_points(Tres {
            cpu,
            mem,
            node,
            gpu,
        })
    }

    /// The terms of a job's points that do not change while it waits: its weighted size
    /// (`cpus` processors on at least `min_nodes` nodes), its partition's, its QOS's and its
    /// association's weighted factors.
    pub(super) fn fixed_points(
        &self,
        cpus: f64,
        min_nodes: Option<u32>,
        (partition_factor, qos_factor, assoc_factor): (f64, f64, f64),
    ) -> f64 {
        let size = JobSize {
            min_nodes: f64::from(min_nodes.unwrap_or(1).max(1)),
            cpus,
            cluster_nodes: self.cluster.0,
            cluster_cpus: self.cluster.1,
        };
        self.priority.size_weight * self.priority.size_factor(size)
            + self.priority.partition_weight * partition_factor
            + self.priority.qos_weight * qos_factor
            + self.priority.assoc_weight * assoc_factor
    }

    /// A waiting job's points as of the last recomputation (a job submitted since has waited
    /// 0 s, as Slurm computes a job's priority at its submission), its site factor among them.
    fn points(&self, job: &Pending) -> f64 {
        self.points_of(job.fixed_points, job.submit) + job.site_factor as f64
    }

    /// The points of a job of fixed points `fixed_points` submitted at `submit`.
    pub(super) fn points_of(&self, fixed_points: f64, submit: Time) -> f64 {
        let waited_s = self.at_s - submit.as_secs_f64();
        fixed_points + self.priority.age_weight * self.priority.age_factor(waited_s)
    }
}

/// The job priority of `config`'s scheduler when it orders jobs: when a job's own terms weigh
/// in, or the policy reaches Slurm through the adapter's site factors, one on each job; none
/// when Slurm's own fairshare factor alone orders users, as the policy's order does.
fn ordering_jobs(config: &ClusterConfig) -> Option<JobPriority> {
    let priority = config.scheduler.job_priority()?;
    (priority.orders_jobs() || !slurms_own(config)).then_some(priority)
}

/// Whether `config`'s policy is Slurm's own fairshare factor (Fair Tree or classic over the
/// processors or the billing Slurm charges), which Slurm computes itself; any other reaches
/// Slurm as the adapter's site factor.
fn slurms_own(config: &ClusterConfig) -> bool {
    matches!(config.policy.kind, PolicyKind::Fairshare(settings)
        if settings.function.is_slurms()
            && ["cpu", "billing"].contains(&settings.metric.entry().name))
}

/// Where Slurm's recomputations fall: with Slurm's own fairshare, where the policy's
/// recomputations do (the same thread runs both); else on the multiples of the period.
fn refresh_offset(config: &ClusterConfig) -> f64 {
    match config.policy.kind {
        PolicyKind::Fairshare(settings) if slurms_own(config) => settings.refresh_offset_s,
        _ => 0.0,
    }
}

/// The ranker the engine serves users by, from `policy`, the ranker of `config`'s policy over
/// `resources` resources, and the model of the adapter when the policy reaches Slurm through
/// it. When the scheduler orders jobs, users are ordered by their next job's priority: with
/// Slurm's own fairshare, its factors weighted by `PriorityWeightFairshare` (the policy's
/// order itself when no job term weighs in); with any other policy, the site factors the
/// adapter gives each job, the policy itself kept by the adapter.
pub(super) fn rankers(
    config: &ClusterConfig,
    policy: Box<dyn Ranker>,
    resources: usize,
) -> (Box<dyn Ranker>, Option<Adapter>) {
    let Some(priority) = ordering_jobs(config) else {
        return (policy, None);
    };
    let users = config.users.len();
    if slurms_own(config) {
        let (weight, offset) = (priority.fairshare_weight, refresh_offset(config));
        let ranker = MultifactorRanker::new(policy, users, priority, weight, offset);
        return (Box::new(ranker), None);
    }
    let adapter = Adapter::new(policy, users, resources, &priority);
    (
        Box::new(MultifactorRanker::of_jobs(users, priority)),
        Some(adapter),
    )
}

impl Engine {
    /// A waiting job's own points (0 when jobs are not ordered by a job priority).
    pub(super) fn job_points(&self, job: &Pending) -> f64 {
        self.job_order.map_or(0.0, |order| order.points(job))
    }

    /// Where a job of queue priority `priority` and `points` goes in a user's queue: after
    /// every job of a higher queue priority, and of the same one with as many points or more.
    pub(super) fn queue_position(&self, user: usize, priority: i32, points: f64) -> usize {
        let before = |j: &Pending| {
            j.priority > priority || (j.priority == priority && self.job_points(j) >= points)
        };
        let queue = &self.queues[user];
        // Most jobs go last (always, when jobs are not ordered): no search for them.
        match queue.back().is_none_or(before) {
            true => queue.len(),
            false => queue.partition_point(before),
        }
    }

    /// At a recomputation of the job priorities (one began since the last event): every
    /// waiting job's age moves on, so each user's queue is put back in order and each
    /// user's next job is told to the ranker with its new points.
    pub(super) fn recompute_job_priorities(&mut self, now: Time) {
        let Some(order) = self.job_order.as_mut() else {
            return;
        };
        let calculation = order
            .priority
            .calculation(now.as_secs_f64(), order.offset_s);
        if order.calculated == Some(calculation) {
            return;
        }
        order.calculated = Some(calculation);
        order.at_s = order.priority.calculated_at(calculation, order.offset_s);
        if order.priority.age_weight == 0.0 {
            // Points are fixed terms alone, which do not change: nor does any order.
            return;
        }
        // Site factors differ between jobs of one age, as fixed terms do.
        match order.priority.reorders_waiting_jobs() || self.adapter.is_some() {
            true => self.reorder_queues(),
            false => self.rerank_waiting(),
        }
    }

    /// Every user's queue put back in order (queue priority, then points, then arrival), and
    /// each user's next job told to the ranker.
    pub(super) fn reorder_queues(&mut self) {
        for user in 0..self.queues.len() as u32 {
            self.reorder_queue(user);
        }
        self.rerank_waiting();
    }

    /// One user's queue put back in order (queue priority, then points, then arrival).
    pub(super) fn reorder_queue(&mut self, user: u32) {
        let Some(order) = self.job_order else {
            return;
        };
        let key = |job: &Pending| {
            let points = Reverse(PriorityKey(order.points(job)));
            (Reverse(job.priority), points, job.seq)
        };
        let queue = self.queues[user as usize].make_contiguous();
        // A queue still in order is left as it is (its jobs are large to move).
        if queue.iter().map(key).is_sorted() {
            return;
        }
        // Each job's points worked out once (seq numbers are unique: the order is total).
        queue.sort_by_cached_key(key);
    }

    /// Each waiting user's next job told to the ranker.
    fn rerank_waiting(&mut self) {
        for user in 0..self.queues.len() as u32 {
            if !self.queues[user as usize].is_empty() {
                self.rerank(user);
            }
        }
    }
}
