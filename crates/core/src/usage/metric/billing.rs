//! Slurm's billing: a job is charged what Slurm charges its association's fairshare usage,
//! per second of running — its billable TRES (the partition's `TRESBillingWeights` over what
//! it was allocated, summed, or with `PriorityFlags=MAX_TRES` the largest per-node TRES plus
//! the others) times its QOS's `UsageFactor`. The reader of the log works the figure out
//! ([`Task::billing`](crate::model::Task::billing)), since only it knows the partition, the
//! QOS and every TRES; a job whose log does not say is charged its processors, as Slurm
//! charges a job in a partition without weights.

use super::MetricEntry;

/// Slurm's billing units.
pub const BILLING: MetricEntry = MetricEntry {
    name: "billing",
    params: None,
    about: "Slurm's billing: the job's billable TRES times its QOS's UsageFactor, as the log's reader works it out (its processors where the log does not say)",
    rate: |_, task, _, _| {
        Ok(task
            .billing
            .unwrap_or_else(|| task.demand.first().copied().unwrap_or(0.0)))
    },
    needs_machines: false,
    uses_spec: false,
    on_a_pool: None,
};

#[cfg(test)]
mod tests {
    use crate::model::{MachineCatalogue, Task, Time};
    use crate::usage::metric::UsageMetric;

    #[test]
    fn a_task_is_charged_its_billing_or_else_its_processors() {
        let metric: UsageMetric = "billing".parse().unwrap();
        let catalogue = MachineCatalogue::new(Vec::new());
        let mut task = Task::new(1, 0, Time::ZERO, 60, vec![4.0, 1024.0]);
        assert_eq!(metric.rate(&task, &catalogue, &[]).unwrap(), 4.0);
        task.billing = Some(10.25);
        assert_eq!(metric.rate(&task, &catalogue, &[]).unwrap(), 10.25);
        assert_eq!(metric.to_string(), "billing");
    }
}
