//! The heterogeneous Processor Equivalent (the paper's, and MetaCentrum's additive one since
//! 2023): the cheapest PE over the machines that could run the job
//! ([`charge`]), times the SPEC of the machine it ran on.

use super::{maui_pe::MAUI_PE, MetricEntry};
use crate::model::{JobRequest, MachineCatalogue, Task};
use crate::usage::penalty::{charge, ChargeError, PeMode};

/// The heterogeneous PE in [`PeMode::Max`]: on a pool, Maui's system-wide PE (the two agree
/// on one machine, and a pool takes jobs of any number of nodes, which one machine's
/// catalogue could not price).
pub const PE: MetricEntry = MetricEntry {
    name: "pe",
    params: None,
    about: "the cheapest Processor Equivalent over the machines that could run the job, times the SPEC of the machine it ran on",
    rate: |_, task, catalogue, _| task_pe(task, catalogue, PeMode::Max),
    needs_machines: true,
    uses_spec: true,
    on_a_pool: Some(&MAUI_PE),
};

/// The heterogeneous PE in [`PeMode::Additive`].
pub const PE_ADDITIVE: MetricEntry = MetricEntry {
    name: "pe-additive",
    params: None,
    about: "MetaCentrum's additive Processor Equivalent: processors plus each other resource's worth in processors on the whole cluster, times the SPEC",
    rate: |_, task, catalogue, _| task_pe(task, catalogue, PeMode::Additive),
    needs_machines: true,
    uses_spec: true,
    on_a_pool: None,
};

/// A task's heterogeneous PE. A property no machine of the catalogue declares is not
/// required (the batch engine does not enforce it either: logs name properties, such as
/// `x86_64` or a site, that machine lists leave out). A task that names no nodes asks for
/// processors on any nodes, so one processor's part is priced on the cheapest machine and
/// paid for each processor (unless it takes its node whole).
fn task_pe(task: &Task, catalogue: &MachineCatalogue, mode: PeMode) -> Result<f64, ChargeError> {
    let mut job = JobRequest::of_task(task);
    let declared = |p: &String| catalogue.types.iter().any(|t| t.properties.contains(p));
    job.chunks[0].properties.retain(declared);
    let processors = task.demand.first().copied().unwrap_or(0.0);
    let whole = task.nodes.is_some() || task.exclusive || processors <= 1.0;
    if whole || mode == PeMode::Additive {
        return Ok(charge(&job, catalogue, mode)?.pe);
    }
    job.chunks[0]
        .per_node
        .iter_mut()
        .for_each(|d| *d /= processors);
    Ok(charge(&job, catalogue, mode)?.pe * processors)
}
