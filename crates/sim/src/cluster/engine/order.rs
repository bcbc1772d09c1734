//! The order of each user's waiting jobs. By default a user's jobs wait in their queue's
//! priority, then oldest first. Under a scheduler that orders jobs by a job priority (a
//! multifactor priority with age, size, partition, QOS, association or TRES weights), each
//! job also has points of its own, recomputed for every waiting job once a period: a user's
//! queue is kept by queue priority, then points, then age, and each user's next job carries
//! its points to the ranker, which adds the user's factor
//! ([`MultifactorRanker`](fairshare_core::rank::MultifactorRanker)). A scheduler's job factors
//! ([`super::factors`]) put a factor on each job, one more term of its points.

use super::{Engine, Pending};
use crate::cluster::ClusterConfig;
use fairshare_core::model::Time;
use fairshare_core::priority::multifactor::{JobPriority, JobSize, Tres};
use fairshare_core::priority::PriorityKey;
use std::cmp::Reverse;

/// A multifactor job priority as the engine keeps it.
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
    /// The job order of `config`'s run by `priority`, its recomputations `offset_s` seconds
    /// past each multiple of its period.
    pub(super) fn new(config: &ClusterConfig, priority: JobPriority, offset_s: f64) -> JobOrder {
        let cpus = config.capacity.total().first().copied().unwrap_or(0.0);
        let nodes = config.capacity.machines().unwrap_or(1) as f64;
        JobOrder {
            priority,
            offset_s,
            calculated: None,
            at_s: f64::NEG_INFINITY,
            cluster: priority.cluster.unwrap_or((nodes, cpus)),
            tres_resources: ["cpu", "mem", "gpu"]
                .map(|name| config.resources.iter().position(|r| r == name)),
        }
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
    /// 0 s: a job's priority is computed at its submission), its factor among them.
    fn points(&self, job: &Pending) -> f64 {
        self.points_of(job.fixed_points, job.submit) + job.factor as f64
    }

    /// The points of a job of fixed points `fixed_points` submitted at `submit`.
    pub(super) fn points_of(&self, fixed_points: f64, submit: Time) -> f64 {
        let waited_s = self.at_s - submit.as_secs_f64();
        fixed_points + self.priority.age_weight * self.priority.age_factor(waited_s)
    }
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
        // Job factors differ between jobs of one age, as fixed terms do.
        match order.priority.reorders_waiting_jobs() || self.job_factors.is_some() {
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
