//! CPU time: a job is charged its processors, whatever else it asks for.

use super::MetricEntry;

/// CPU time, the single-resource classic the paper calls unacceptable (the default).
pub const CPU: MetricEntry = MetricEntry {
    name: "cpu",
    params: None,
    about: "CPU time: the job's processors",
    rate: |_, task, _, _| Ok(task.demand.first().copied().unwrap_or(0.0)),
    needs_machines: false,
    uses_spec: false,
    on_a_pool: None,
};
