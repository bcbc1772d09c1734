//! Maui's Processor Equivalent: the job's largest fraction of any resource of the whole
//! system, times the system's processors ([`maui_pe`]).

use super::MetricEntry;
use crate::usage::penalty::maui_pe;

/// Maui's system-wide PE (seed Formula 1).
pub const MAUI_PE: MetricEntry = MetricEntry {
    name: "maui-pe",
    params: None,
    about: "Maui's system-wide Processor Equivalent: the largest fraction of any resource of the whole system, times its processors",
    rate: |_, task, _, totals| Ok(maui_pe(&task.demand, totals)),
    needs_machines: true,
    uses_spec: false,
    on_a_pool: None,
};
