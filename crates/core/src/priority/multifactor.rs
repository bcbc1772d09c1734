//! Slurm's multifactor job priority (`priority/multifactor`, Slurm 22.05's
//! `set_priority_factors`): a job's priority is a weighted sum of factors in [0, 1], stored as
//! a whole number, recomputed for every pending job each `PriorityCalcPeriod` and computed
//! once when a job is submitted. A fairshare policy orders users; Slurm orders jobs, and a
//! user's factor is only one term of their jobs' priorities. This module holds the terms a
//! replay can compute from a job and the cluster alone: the policy's factor (Slurm's
//! fairshare factor, or the site factor a policy writes in its place), age up to
//! `PriorityMaxAge`, job size (`PriorityFavorSmall`), the job's partition's factor, its
//! QOS's factor, its association's factor and its TRES (CPUs, memory, nodes, GPUs) over its
//! partition's.

/// The weights and periods of Slurm's multifactor job priority that the model computes, with
/// Slurm 22.05's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobPriority {
    /// `PriorityWeightFairshare`: the weight of Slurm's fairshare factor.
    pub fairshare_weight: f64,
    /// The weight of the site factor a policy other than Slurm's own fairshare writes
    /// (the Slurm adapter's `weight`, 100,000 by default).
    pub site_weight: f64,
    /// How often, in seconds, the Slurm adapter writes that policy's site factors (its
    /// `interval_s`, 60 by default): the policy's order is read anew at each multiple of it.
    pub site_interval_s: f64,
    /// How far past each multiple of `site_interval_s` (since the epoch) the adapter's passes
    /// fall, in seconds: the phase of the watcher's own start (0 by default).
    pub site_offset_s: f64,
    /// How many runs at the head of the adapter's order of starts get site factors of their
    /// own (its `ranked_runs`; 1,000 by default, the adapters' own default,
    /// [`crate::rank::factors::RANKED_RUNS`]).
    pub site_ranked_runs: usize,
    /// Whether the adapter's play of starts expects running jobs to end at their time limits
    /// (its `ends_at_limits`, off by default).
    pub site_ends_at_limits: bool,
    /// Whether a job submitted between the adapter's passes gets its user's factor from the
    /// adapter's submit table (its `submit_table`, read by `job_submit.lua`; on by default);
    /// without one a job waits with no site factor until the adapter's next pass.
    pub site_submit_table: bool,
    /// `PriorityWeightAge`.
    pub age_weight: f64,
    /// `PriorityMaxAge`, in seconds: the wait at which the age factor reaches 1 (7 days).
    pub max_age_s: f64,
    /// `PriorityWeightJobSize`.
    pub size_weight: f64,
    /// `PriorityFavorSmall`: whether smaller jobs get the larger size factor.
    pub favor_small: bool,
    /// `PriorityWeightPartition`: the weight of the job's partition's factor (its
    /// `PriorityJobFactor` over the highest of the site's partitions).
    pub partition_weight: f64,
    /// `PriorityWeightQOS`: the weight of the job's QOS factor (its QOS's `Priority` over the
    /// highest of the site's QOS).
    pub qos_weight: f64,
    /// `PriorityWeightAssoc`: the weight of the job's association's factor (its `Priority`
    /// over the highest of the site's associations).
    pub assoc_weight: f64,
    /// `PriorityWeightTRES`, for the TRES a replay knows.
    pub tres_weights: Tres,
    /// `PriorityCalcPeriod`, in seconds: how often every pending job's priority is
    /// recomputed (5 minutes).
    pub calc_period_s: f64,
    /// The cluster's nodes and processors as Slurm counts them for the size factor (every
    /// node of every partition); `None`: those the replay runs on.
    pub cluster: Option<(f64, f64)>,
}

impl Default for JobPriority {
    fn default() -> JobPriority {
        JobPriority {
            fairshare_weight: 0.0,
            site_weight: 100_000.0,
            site_interval_s: 60.0,
            site_offset_s: 0.0,
            site_ranked_runs: 1_000,
            site_ends_at_limits: false,
            site_submit_table: true,
            age_weight: 0.0,
            max_age_s: 7.0 * 86_400.0,
            size_weight: 0.0,
            favor_small: false,
            partition_weight: 0.0,
            qos_weight: 0.0,
            assoc_weight: 0.0,
            tres_weights: Tres::default(),
            calc_period_s: 300.0,
            cluster: None,
        }
    }
}

/// One number for each TRES a replay knows: CPUs, memory, nodes and GPUs (`gres/gpu`), as the
/// weights of `PriorityWeightTRES` or as a job's fractions of its partition's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tres {
    /// CPUs (`cpu`).
    pub cpu: f64,
    /// Memory (`mem`).
    pub mem: f64,
    /// Nodes (`node`).
    pub node: f64,
    /// GPUs (`gres/gpu`).
    pub gpu: f64,
}

/// What the size factor of a job is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobSize {
    /// The nodes it asks for at least (1 when it names none).
    pub min_nodes: f64,
    /// The processors it asks for.
    pub cpus: f64,
    /// The cluster's nodes.
    pub cluster_nodes: f64,
    /// The cluster's processors.
    pub cluster_cpus: f64,
}

impl JobPriority {
    /// Whether a job's own terms weigh in at all: otherwise the policy's factor alone orders
    /// the jobs, user by user, oldest first.
    pub fn orders_jobs(&self) -> bool {
        self.age_weight != 0.0 || self.fixed_terms_differ()
    }

    /// Whether the terms fixed at a job's submission (size, partition, QOS, association, TRES)
    /// weigh in, so that jobs of one age may differ in points.
    fn fixed_terms_differ(&self) -> bool {
        self.size_weight != 0.0
            || self.partition_weight != 0.0
            || self.qos_weight != 0.0
            || self.assoc_weight != 0.0
            || self.tres_weights != Tres::default()
    }

    /// The TRES term of a job that asks for `fractions` of its partition's TRES (Slurm's
    /// `_get_tres_factors`: each TRES over the partition's total, times its weight, summed).
    pub fn tres_points(&self, fractions: Tres) -> f64 {
        let (w, f) = (self.tres_weights, fractions);
        w.cpu * f.cpu + w.mem * f.mem + w.node * f.node + w.gpu * f.gpu
    }

    /// Whether a job's points change while it waits and also differ between jobs of one
    /// age, so that a user's jobs may change places at a recomputation.
    pub fn reorders_waiting_jobs(&self) -> bool {
        self.age_weight != 0.0 && self.fixed_terms_differ()
    }

    /// The age factor after waiting `waited_s` seconds: `waited / PriorityMaxAge`, at most 1.
    pub fn age_factor(&self, waited_s: f64) -> f64 {
        let waited = waited_s.max(0.0);
        if waited < self.max_age_s {
            waited / self.max_age_s
        } else {
            1.0
        }
    }

    /// The job size factor, without `SMALL_RELATIVE_TO_TIME`: the mean of the job's share of
    /// the nodes and of the processors, or of what it leaves free when small jobs are
    /// favoured; in [0, 1].
    pub fn size_factor(&self, size: JobSize) -> f64 {
        let nodes = size.min_nodes / size.cluster_nodes.max(1.0);
        let cpus = size.cpus / size.cluster_cpus.max(1.0);
        let factor = if size.cpus <= 0.0 {
            if self.favor_small {
                1.0 - nodes
            } else {
                nodes
            }
        } else if self.favor_small {
            (2.0 - nodes - cpus) / 2.0
        } else {
            (nodes + cpus) / 2.0
        };
        factor.clamp(0.0, 1.0)
    }

    /// A job's own points at one computation of its priority: its size term and its age
    /// term after waiting `waited_s` seconds.
    pub fn job_points(&self, size: JobSize, waited_s: f64) -> f64 {
        self.size_weight * self.size_factor(size) + self.age_weight * self.age_factor(waited_s)
    }

    /// A job's priority as Slurm stores it: the policy's weighted factor and the job's own
    /// points, summed and truncated to a whole number.
    pub fn priority(&self, policy_points: f64, job_points: f64) -> f64 {
        (policy_points + job_points).max(0.0).floor()
    }

    /// Which recomputation a moment falls in: the number of whole periods since `offset_s`
    /// on the run's clock (the decay thread's phase).
    pub fn calculation(&self, t_s: f64, offset_s: f64) -> i64 {
        ((t_s - offset_s) / self.calc_period_s.max(1.0)).floor() as i64
    }

    /// When recomputation `index` ran, in seconds on the run's clock.
    pub fn calculated_at(&self, index: i64, offset_s: f64) -> f64 {
        index as f64 * self.calc_period_s.max(1.0) + offset_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modelled_adapter_ranks_as_many_runs_as_the_adapters_by_default() {
        let ranked = JobPriority::default().site_ranked_runs;
        assert_eq!(ranked, crate::rank::factors::RANKED_RUNS);
    }

    fn size(min_nodes: f64, cpus: f64) -> JobSize {
        JobSize {
            min_nodes,
            cpus,
            cluster_nodes: 16.0,
            cluster_cpus: 128.0,
        }
    }

    #[test]
    fn factors_follow_slurms_formulas() {
        let large = JobPriority {
            age_weight: 1000.0,
            max_age_s: 600.0,
            size_weight: 2000.0,
            ..JobPriority::default()
        };
        assert_eq!(large.age_factor(150.0), 0.25);
        assert_eq!(large.age_factor(600.0), 1.0);
        assert_eq!(large.age_factor(-5.0), 0.0);
        // One node of 16 and 8 CPUs of 128: (1/16 + 8/128) / 2.
        assert_eq!(large.size_factor(size(1.0, 8.0)), 0.0625);
        assert_eq!(large.size_factor(size(16.0, 128.0)), 1.0);
        let small = JobPriority {
            favor_small: true,
            ..large
        };
        assert_eq!(small.size_factor(size(1.0, 8.0)), 0.9375);
        // 2000 × 0.0625 + 1000 × 0.25.
        assert_eq!(large.job_points(size(1.0, 8.0), 150.0), 375.0);
        assert_eq!(large.priority(50_000.4, 375.3), 50_375.0);
        assert!(large.orders_jobs() && !JobPriority::default().orders_jobs());
    }

    #[test]
    fn recomputations_fall_a_period_apart_from_the_offset() {
        let p = JobPriority {
            calc_period_s: 60.0,
            ..JobPriority::default()
        };
        assert_eq!(p.calculation(59.9, 0.0), 0);
        assert_eq!(p.calculation(60.0, 0.0), 1);
        assert_eq!(p.calculation(60.0, 17.0), 0);
        assert_eq!(p.calculation(77.0, 17.0), 1);
        assert_eq!(p.calculated_at(1, 17.0), 77.0);
    }
}
