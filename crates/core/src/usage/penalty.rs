//! What a job is charged on a cluster of different machines: MetaCentrum's Processor
//! Equivalent (Klusáček & Rudová; docs/mechanisms.md, `spec/metacentrum.md` §2–§4).
//!
//! A job that asks for one processor and 150 GiB blocks a whole 12-processor node's memory: it
//! should be charged as the processors it keeps others from using, not the one it asked for.
//! The Processor Equivalent (PE) on a machine is the job's largest fraction of any resource of
//! that machine, times the machine's processors. On a heterogeneous cluster that depends on
//! where the job runs, so the job is charged its **cheapest** PE over every machine that could
//! run it — a price fixed by what it asked for, not by where the scheduler put it. The penalty
//! multiplies that by the walltime, the speed (SPEC) of the machine that ran the job and its
//! queue's cost, and is what a fairshare policy accumulates as usage (the usage metrics that
//! price jobs with it, and with the others, are in [`super::metric`]).
//!
//! Resources are positions in a vector, as everywhere in the core: position 0 is processors;
//! a job and a catalogue must use the same positions and units. Everything here is a pure
//! function of the request and the catalogue.

use crate::model::{Chunk, JobRequest, MachineCatalogue, NodeType};
use serde::Serialize;
use thiserror::Error;

/// How resources a job does not always ask for (GPUs, scratch) enter its PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeMode {
    /// The seed's formula extended: the largest fraction of any resource the job asks for, on
    /// the machine, times its processors; a resource the job does not ask for adds nothing.
    #[default]
    Max,
    /// MetaCentrum since 2023: processors plus each other resource as the processors it is
    /// worth on the whole infrastructure (`round(amount / total · total processors)`), summed.
    Additive,
}

impl crate::choice::Choice for PeMode {
    const ALL: &'static [PeMode] = &[PeMode::Max, PeMode::Additive];

    fn name(self) -> &'static str {
        match self {
            PeMode::Max => "max",
            PeMode::Additive => "additive",
        }
    }

    fn about(self) -> &'static str {
        match self {
            PeMode::Max => "The largest fraction of any resource asked for, on each machine, times its processors (the paper's)",
            PeMode::Additive => "Processors plus each other resource's worth in processors on the whole cluster (MetaCentrum since 2023)",
        }
    }
}

/// Why a machine cannot run a job's part, even when empty.
#[derive(Debug, Clone, PartialEq, Serialize, Error)]
#[serde(tag = "reason", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Unsuitable {
    /// The machine has less of a resource than one node's part asks for.
    #[error("resource {resource}: needs {needs}, a node has {has}")]
    TooSmall {
        /// The resource's position.
        resource: usize,
        /// What one node's part asks for.
        needs: f64,
        /// What one node of the machine has.
        has: f64,
    },
    /// The machine lacks a property the job requires.
    #[error("no property {0}")]
    Property(String),
}

/// One machine type as a job's part sees it: whether it could run the part, and at what PE
/// per node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachinePe {
    /// The machine type's index in the catalogue.
    pub machine: usize,
    /// Its PE for one node's part of the job under the mode (additive: that part against the
    /// whole catalogue, the same on every machine that can run it), or why it cannot run it.
    pub pe: Result<f64, Unsuitable>,
}

/// A job's charge: its PE, and which machine types it was priced on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Charge {
    /// The PE: what the job's nodes cost on the cheapest machines that could run them.
    pub pe: f64,
    /// For each chunk, every machine type's verdict.
    pub machines: Vec<Vec<MachinePe>>,
    /// For each chunk, the machine types its nodes were priced on, with how many nodes each.
    pub priced_on: Vec<Vec<(usize, u32)>>,
}

impl Charge {
    /// The penalty (seed Formula 3): PE × walltime (seconds) × the SPEC of the machine that
    /// ran the job × the queue's cost.
    pub fn penalty(&self, walltime_s: f64, spec: f64, queue_cost: f64) -> f64 {
        self.pe * walltime_s * spec * queue_cost
    }
}

/// Why a job cannot be charged.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ChargeError {
    /// A chunk of the job finds too few suitable nodes, even empty, among those the earlier
    /// chunks did not take (chunks are priced in turn on the cheapest nodes left, as reference
    /// T prices them): the job is unsatisfiable and is reported, never charged.
    #[error("chunk {chunk} ({nodes} nodes) fits on only {suitable} nodes of the cluster")]
    Unsatisfiable {
        /// The chunk's position in the request.
        chunk: usize,
        /// How many nodes it asks for.
        nodes: u32,
        /// How many distinct nodes could run it (beyond those taken by earlier chunks).
        suitable: u64,
    },
    /// The request or the catalogue cannot be priced.
    #[error("{0}")]
    Invalid(String),
}

/// Whether a node of type `machine` could run one node's part of `chunk` when empty: it has
/// at least as much of every resource and every property the chunk requires.
pub fn suitability(chunk: &Chunk, machine: &NodeType) -> Result<(), Unsuitable> {
    for (resource, &needs) in chunk.per_node.iter().enumerate() {
        let has = machine.capacity.get(resource).copied().unwrap_or(0.0);
        if needs > 0.0 && needs > has {
            return Err(Unsuitable::TooSmall {
                resource,
                needs,
                has,
            });
        }
    }
    match chunk
        .properties
        .iter()
        .find(|p| !machine.properties.contains(p))
    {
        Some(missing) => Err(Unsuitable::Property(missing.clone())),
        None => Ok(()),
    }
}

/// The PE of one node's part of a chunk on a suitable node of type `machine` (seed Formula 2,
/// reference T's per-node cost): the largest fraction of any resource the part asks for,
/// times the node's processors and its cost; an exclusive job pays the whole node.
pub fn node_pe(chunk: &Chunk, machine: &NodeType, exclusive: bool) -> f64 {
    let processors = machine.capacity.first().copied().unwrap_or(0.0);
    if exclusive {
        return processors * machine.cost;
    }
    let largest = chunk
        .per_node
        .iter()
        .zip(&machine.capacity)
        .filter(|(needs, _)| **needs > 0.0)
        .map(|(needs, has)| needs / has)
        .fold(0.0, f64::max);
    largest * processors * machine.cost
}

/// Prices `job` on `catalogue` under `mode`: per chunk in turn, its nodes on the cheapest
/// suitable nodes the earlier chunks left (reference T), summed; under [`PeMode::Additive`],
/// the job's total against the whole catalogue's (exclusive or not, whatever the node cost),
/// once the nodes show it fits.
pub fn charge(
    job: &JobRequest,
    catalogue: &MachineCatalogue,
    mode: PeMode,
) -> Result<Charge, ChargeError> {
    check(job, catalogue)?;
    let mut left: Vec<u64> = catalogue.types.iter().map(|t| u64::from(t.count)).collect();
    let mut machines = Vec::new();
    let mut priced_on = Vec::new();
    let mut pe = 0.0;
    for (c, chunk) in job.chunks.iter().enumerate() {
        let verdicts: Vec<MachinePe> = catalogue
            .types
            .iter()
            .enumerate()
            .map(|(machine, t)| MachinePe {
                machine,
                pe: suitability(chunk, t).map(|()| node_pe(chunk, t, job.exclusive)),
            })
            .collect();
        let mut cheapest: Vec<(f64, usize)> = verdicts
            .iter()
            .filter_map(|v| v.pe.as_ref().ok().map(|pe| (*pe, v.machine)))
            .collect();
        cheapest.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut needed, mut nodes) = (chunk.nodes, Vec::new());
        for (cost, machine) in cheapest {
            let taken = u64::from(needed).min(left[machine]) as u32;
            if taken > 0 {
                left[machine] -= u64::from(taken);
                needed -= taken;
                nodes.push((machine, taken));
                pe += cost * f64::from(taken);
            }
        }
        if needed > 0 {
            return Err(ChargeError::Unsatisfiable {
                chunk: c,
                nodes: chunk.nodes,
                suitable: u64::from(chunk.nodes - needed),
            });
        }
        machines.push(verdicts);
        priced_on.push(nodes);
    }
    if mode == PeMode::Additive {
        let totals = totals(catalogue);
        pe = additive_pe(&job.total(), &totals);
        for (chunk, verdicts) in job.chunks.iter().zip(&mut machines) {
            let per_node = additive_pe(&chunk.per_node, &totals);
            for pe in verdicts.iter_mut().filter_map(|v| v.pe.as_mut().ok()) {
                *pe = per_node;
            }
        }
    }
    Ok(Charge {
        pe,
        machines,
        priced_on,
    })
}

/// Refuses what cannot be priced: no chunk, a chunk of no nodes, a negative or non-finite
/// amount or cost.
fn check(job: &JobRequest, catalogue: &MachineCatalogue) -> Result<(), ChargeError> {
    let invalid = |what: String| Err(ChargeError::Invalid(what));
    if job.chunks.is_empty() {
        return invalid("the job asks for no nodes".into());
    }
    for chunk in &job.chunks {
        if chunk.nodes == 0 {
            return invalid("a chunk asks for no nodes".into());
        }
        if let Some(a) = chunk
            .per_node
            .iter()
            .find(|a| !(a.is_finite() && **a >= 0.0))
        {
            return invalid(format!("a job amount must be a number >= 0, found {a}"));
        }
    }
    for t in &catalogue.types {
        let amounts_ok = t.capacity.iter().all(|a| a.is_finite() && *a >= 0.0);
        if !(amounts_ok && t.cost.is_finite() && t.cost >= 0.0) {
            return invalid(format!(
                "machine {}: amounts and cost must be numbers >= 0",
                t.name
            ));
        }
    }
    Ok(())
}

/// The whole catalogue's total of each resource.
pub fn totals(catalogue: &MachineCatalogue) -> Vec<f64> {
    let resources = catalogue.types.iter().map(|t| t.capacity.len()).max();
    let mut total = vec![0.0; resources.unwrap_or(0)];
    for t in &catalogue.types {
        for (sum, amount) in total.iter_mut().zip(&t.capacity) {
            *sum += f64::from(t.count) * amount;
        }
    }
    total
}

/// Maui's system-wide PE (seed Formula 1): the job's largest fraction of any resource of the
/// whole system, times the system's processors.
pub fn maui_pe(request: &[f64], totals: &[f64]) -> f64 {
    let processors = totals.first().copied().unwrap_or(0.0);
    let largest = request
        .iter()
        .zip(totals)
        .filter(|(r, t)| **r > 0.0 && **t > 0.0)
        .map(|(r, t)| r / t)
        .fold(0.0, f64::max);
    largest * processors
}

/// MetaCentrum's additive PE: the job's processors, plus each other resource as the whole
/// number of processors its share of the infrastructure is worth.
pub fn additive_pe(request: &[f64], totals: &[f64]) -> f64 {
    let processors = totals.first().copied().unwrap_or(0.0);
    let others = request
        .iter()
        .zip(totals)
        .skip(1)
        .filter(|(r, t)| **r > 0.0 && **t > 0.0)
        .map(|(r, t)| (r / t * processors).round());
    request.first().copied().unwrap_or(0.0) + others.sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: f64 = 1.0;

    fn chunk(nodes: u32, per_node: &[f64]) -> Chunk {
        Chunk {
            nodes,
            per_node: per_node.to_vec(),
            properties: Vec::new(),
        }
    }

    fn job(chunks: Vec<Chunk>, exclusive: bool) -> JobRequest {
        JobRequest {
            user: 0,
            chunks,
            exclusive,
            walltime: None,
            queue: None,
            partition: None,
            account: None,
        }
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// Spec §8.1: 4 CPUs and 64 GB on A (80 / 512 GB) or B (12 / 90 GB).
    #[test]
    fn the_cheapest_machine_sets_the_price() {
        let catalogue = MachineCatalogue::new(vec![
            NodeType::new("A", 20, vec![80.0, 512.0 * GB]),
            NodeType::new("B", 48, vec![12.0, 90.0 * GB]),
        ]);
        let c = charge(
            &job(vec![chunk(1, &[4.0, 64.0])], false),
            &catalogue,
            PeMode::Max,
        )
        .unwrap();
        let pe = |m: usize| c.machines[0][m].pe.clone().unwrap();
        assert!(close(pe(0), 10.0, 1e-12), "{}", pe(0));
        assert!(close(pe(1), 8.5333, 1e-4), "{}", pe(1));
        assert_eq!(c.priced_on, [vec![(1, 1)]], "priced on B");
        assert!(close(c.penalty(7200.0, 1.0, 1.0), 61_440.0, 1e-6));
        assert!(close(c.penalty(7200.0, 10.0, 1.0), 614_400.0, 1e-5));
    }

    /// Spec §8.1 and §8.2 with the exact wagap-2013 machines (KiB).
    #[test]
    fn wagap_machines_and_the_system_wide_pe() {
        let catalogue = MachineCatalogue::new(vec![
            NodeType::new("zewura", 20, vec![80.0, 529_426_432.0]),
            NodeType::new("zegox", 48, vec![12.0, 94_035_968.0]),
        ]);
        let request = [4.0, 67_108_864.0];
        let c = charge(
            &job(vec![chunk(1, &request)], false),
            &catalogue,
            PeMode::Max,
        )
        .unwrap();
        let pe = |m: usize| c.machines[0][m].pe.clone().unwrap();
        assert!(close(pe(0), 10.1406, 1e-4), "{}", pe(0));
        assert!(close(pe(1), 8.5638, 1e-4), "{}", pe(1));
        assert!(close(c.pe, 8.5638, 1e-4));
        let totals = totals(&catalogue);
        assert_eq!(totals, [2176.0, 15_102_255_104.0]);
        assert!(close(maui_pe(&request, &totals), 9.6693, 1e-4));
    }

    /// Spec §8.3: one CPU and 150 GiB fits zewura only, and costs about 24 CPUs.
    #[test]
    fn a_memory_heavy_job_fits_one_machine_and_pays_for_its_memory() {
        let catalogue = MachineCatalogue::new(vec![
            NodeType::new("zewura", 20, vec![80.0, 529_426_432.0]),
            NodeType::new("zegox", 48, vec![12.0, 94_035_968.0]),
        ]);
        let c = charge(
            &job(vec![chunk(1, &[1.0, 157_286_400.0])], false),
            &catalogue,
            PeMode::Max,
        )
        .unwrap();
        assert!(matches!(
            c.machines[0][1].pe,
            Err(Unsuitable::TooSmall { resource: 1, .. })
        ));
        assert!(close(c.pe, 23.767, 1e-3), "{}", c.pe);
        assert_eq!(c.priced_on, [vec![(0, 1)]]);
    }

    /// Spec §8.4: GPUs count only for jobs that ask for them; an exclusive job pays the node.
    #[test]
    fn gpus_count_only_when_asked_for() {
        let catalogue = MachineCatalogue::new(vec![NodeType::new("g", 2, vec![32.0, 256.0, 4.0])]);
        let pe = |request: &[f64], exclusive| {
            charge(
                &job(vec![chunk(1, request)], exclusive),
                &catalogue,
                PeMode::Max,
            )
            .unwrap()
            .pe
        };
        assert_eq!(pe(&[8.0, 32.0, 1.0], false), 8.0);
        assert_eq!(pe(&[8.0, 32.0, 2.0], false), 16.0);
        assert_eq!(pe(&[8.0, 32.0, 0.0], false), 8.0);
        assert_eq!(pe(&[8.0, 32.0], false), 8.0);
        assert_eq!(pe(&[8.0, 32.0, 1.0], true), 32.0);
        let cpu_only = MachineCatalogue::new(vec![NodeType::new("c", 2, vec![32.0, 256.0])]);
        let gpu_job = job(vec![chunk(1, &[8.0, 32.0, 1.0])], false);
        assert!(matches!(
            charge(&gpu_job, &cpu_only, PeMode::Max),
            Err(ChargeError::Unsatisfiable {
                chunk: 0,
                nodes: 1,
                suitable: 0
            })
        ));
    }

    /// A job whose nodes outnumber the suitable ones, or that names a property no machine has,
    /// is unsatisfiable and is not charged; nodes are never counted twice across chunks.
    #[test]
    fn unsatisfiable_jobs_are_refused() {
        let mut zewura = NodeType::new("zewura", 2, vec![80.0, 512.0]);
        zewura.properties = vec!["cl_zewura".into()];
        let catalogue =
            MachineCatalogue::new(vec![zewura, NodeType::new("zegox", 3, vec![12.0, 90.0])]);
        let three_big = job(vec![chunk(3, &[40.0, 10.0])], false);
        assert_eq!(
            charge(&three_big, &catalogue, PeMode::Max),
            Err(ChargeError::Unsatisfiable {
                chunk: 0,
                nodes: 3,
                suitable: 2
            })
        );
        let two_then_one = job(
            vec![chunk(2, &[40.0, 10.0]), chunk(1, &[20.0, 10.0])],
            false,
        );
        assert!(matches!(
            charge(&two_then_one, &catalogue, PeMode::Max),
            Err(ChargeError::Unsatisfiable { chunk: 1, .. })
        ));
        let mut tagged = chunk(1, &[1.0, 1.0]);
        tagged.properties = vec!["cl_zegox".into()];
        assert!(matches!(
            charge(&job(vec![tagged], false), &catalogue, PeMode::Max),
            Err(ChargeError::Unsatisfiable { .. })
        ));
    }

    /// A multi-node chunk takes the cheapest nodes first, then the next type (reference T).
    #[test]
    fn multi_node_chunks_take_the_cheapest_distinct_nodes() {
        let catalogue = MachineCatalogue::new(vec![
            NodeType::new("big", 4, vec![80.0, 512.0]),
            NodeType::new("small", 2, vec![12.0, 90.0]),
        ]);
        // 8 CPUs and 8 GB a node: 8/12·12 = 8 on small, 8/80·80 = 8 on big: equal, catalogue
        // order breaks the tie; 60 GB a node: small 60/90·12 = 8, big 60/512·80 = 9.375.
        let c = charge(
            &job(vec![chunk(3, &[8.0, 60.0])], false),
            &catalogue,
            PeMode::Max,
        )
        .unwrap();
        assert_eq!(c.priced_on, [vec![(1, 2), (0, 1)]]);
        assert!(close(c.pe, 8.0 + 8.0 + 9.375, 1e-12));
    }

    /// MetaCentrum's additive PE: processors plus the other resources in processors' worth,
    /// each rounded.
    #[test]
    fn additive_pe_sums_rounded_terms() {
        let catalogue = MachineCatalogue::new(vec![NodeType::new("g", 10, vec![32.0, 256.0, 4.0])]);
        // Totals 320 CPUs, 2560 GB, 40 GPUs: 8 + round(32/2560·320 = 4) + round(1/40·320 = 8).
        let c = charge(
            &job(vec![chunk(1, &[8.0, 32.0, 1.0])], false),
            &catalogue,
            PeMode::Additive,
        )
        .unwrap();
        assert_eq!(c.pe, 20.0);
        assert_eq!(
            additive_pe(&[1.0, 1.0], &[320.0, 2560.0]),
            1.0,
            "0.125 rounds to 0"
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Up to three machine types: count, processors, memory, GPUs (0: none), cost.
    fn catalogue() -> impl Strategy<Value = MachineCatalogue> {
        let machine = (
            1u32..4,
            1u32..65,
            1u32..513,
            0u32..5,
            prop::sample::select(vec![1.0, 1.5, 2.0]),
        );
        prop::collection::vec(machine, 1..4).prop_map(|types| {
            let types = types
                .into_iter()
                .enumerate()
                .map(|(i, (count, cpus, mem, gpus, cost))| {
                    let mut t = NodeType::new(
                        format!("m{i}"),
                        count,
                        vec![f64::from(cpus), f64::from(mem), f64::from(gpus)],
                    );
                    t.cost = cost;
                    t
                });
            MachineCatalogue::new(types.collect())
        })
    }

    fn one_chunk(nodes: u32, per_node: Vec<f64>) -> JobRequest {
        JobRequest {
            user: 0,
            chunks: vec![Chunk {
                nodes,
                per_node,
                properties: Vec::new(),
            }],
            exclusive: false,
            walltime: None,
            queue: None,
            partition: None,
            account: None,
        }
    }

    proptest! {
        /// A one-node job is never charged more than its PE on any machine that could run it,
        /// so not more than on the one that did.
        #[test]
        fn the_charge_never_exceeds_the_pe_where_the_job_ran(
            catalogue in catalogue(),
            request in (1u32..65, 0u32..513, 0u32..5),
        ) {
            let per_node = vec![f64::from(request.0), f64::from(request.1), f64::from(request.2)];
            let job = one_chunk(1, per_node);
            if let Ok(c) = charge(&job, &catalogue, PeMode::Max) {
                for verdict in &c.machines[0] {
                    if let Ok(pe) = verdict.pe {
                        prop_assert!(c.pe <= pe + 1e-12, "{} > {pe} on {}", c.pe, verdict.machine);
                    }
                }
            }
        }

        /// Asking for more of any resource (or more nodes) never lowers the charge.
        #[test]
        fn more_never_costs_less(
            catalogue in catalogue(),
            nodes in 1u32..4,
            request in (1u32..65, 0u32..513, 0u32..5),
            more in (0u32..8, 0u32..64, 0u32..2, 0u32..2),
        ) {
            let base = vec![f64::from(request.0), f64::from(request.1), f64::from(request.2)];
            let bigger = vec![
                f64::from(request.0 + more.0),
                f64::from(request.1 + more.1),
                f64::from(request.2 + more.2),
            ];
            let small = charge(&one_chunk(nodes, base), &catalogue, PeMode::Max);
            let large = charge(&one_chunk(nodes + more.3, bigger), &catalogue, PeMode::Max);
            if let (Ok(small), Ok(large)) = (&small, &large) {
                prop_assert!(large.pe >= small.pe - 1e-9, "{} < {}", large.pe, small.pe);
            }
            if small.is_err() {
                prop_assert!(large.is_err(), "a larger job fits where a smaller one does not");
            }
        }
    }
}
