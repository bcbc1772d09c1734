//! The dominant share: the job's largest fraction of any resource of the whole system.

use super::MetricEntry;
use crate::usage::penalty::maui_pe;

/// The dominant share (Maui's PE over the system's processors).
pub const DOMINANT: MetricEntry = MetricEntry {
    name: "dominant",
    params: None,
    about: "dominant share: the largest fraction of any resource of the whole system",
    rate: |_, task, _, totals| {
        let processors = totals.first().copied().filter(|p| *p > 0.0);
        Ok(maui_pe(&task.demand, totals) / processors.unwrap_or(1.0))
    },
    needs_machines: true,
    uses_spec: false,
    on_a_pool: None,
};
