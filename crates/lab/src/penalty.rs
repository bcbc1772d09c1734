//! Why one job costs what it costs on a cluster of different machines: its Processor
//! Equivalent (PE) on every machine type of a machine file, the machines it is priced on, and
//! the penalty a fairshare would add to its user's usage — MetaCentrum's pricing as an
//! operator checks it before trusting a fairshare built on it.
//!
//! The module exists so that `fairshare penalty` and any library caller get the same
//! explanation from one call, [`explain`]: it reads the machine file (a TOML catalogue,
//! an SWF `.machines` file or an Alibaba node list) through `fairshare-trace`, builds the job
//! in the file's units, prices it with the core's penalty, and returns an [`Explanation`], the
//! document `--json` writes. `fairshare-report` renders it as a table.

use crate::LabError;
use fairshare_core::model::{Chunk, JobRequest, MachineCatalogue};
use fairshare_core::usage::penalty::{self, Charge, PeMode, Unsuitable};
use fairshare_trace::{Format, CATALOGUE_RESOURCES};
use serde::Serialize;
use std::path::PathBuf;

/// One job asked of a machine file: what one node's part needs, how many nodes, for how long,
/// in which queue.
#[derive(Debug, Clone, PartialEq)]
pub struct PenaltyRequest {
    /// The machine file: `.toml` a catalogue, `.csv` an Alibaba node list, else SWF `.machines`.
    pub machines: PathBuf,
    /// Processors on each node.
    pub cpus: f64,
    /// Memory on each node, in bytes.
    pub memory_bytes: f64,
    /// GPUs on each node.
    pub gpus: f64,
    /// Scratch space on each node, in bytes.
    pub scratch_bytes: f64,
    /// How many nodes, each with the amounts above (at least 1).
    pub nodes: u32,
    /// Whether the job takes its nodes whole (PBS `#excl`) and pays every processor of them.
    pub exclusive: bool,
    /// Node properties the job requires.
    pub properties: Vec<String>,
    /// Requested walltime, in microseconds.
    pub walltime: u64,
    /// The queue's price factor.
    pub queue_cost: f64,
    /// The SPEC of the machine that runs the job; `None`: each machine's own.
    pub spec: Option<f64>,
    /// How GPUs and other resources a job need not ask for enter the PE.
    pub mode: PeMode,
}

/// One machine type's line of the explanation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineLine {
    /// The machine type's name.
    pub name: String,
    /// How many nodes of it the cluster has.
    pub count: u32,
    /// One node's capacity, per resource of [`Explanation::resources`].
    pub capacity: Vec<f64>,
    /// The SPEC the penalty takes on it (the request's, else the machine's).
    pub spec: f64,
    /// PE of one node's part here, or `None` when the machine cannot run it.
    pub pe_per_node: Option<f64>,
    /// Why it cannot, when it cannot.
    pub unsuitable: Option<String>,
    /// How many of the job's nodes are priced on this machine.
    pub priced_nodes: u32,
    /// The penalty if the job runs here (its PE × walltime × this SPEC × queue cost).
    pub penalty_if_run_here: Option<f64>,
}

/// The whole explanation of one job's charge, as `fairshare penalty --json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Layout version of this JSON document.
    pub schema_version: u32,
    /// The machine file, as given.
    pub machines_file: String,
    /// The resources of the machine file, with their units.
    pub resources: Vec<String>,
    /// What one node's part asks for, per resource, in those units.
    pub request_per_node: Vec<f64>,
    /// How many nodes.
    pub nodes: u32,
    /// Whether the job takes its nodes whole.
    pub exclusive: bool,
    /// How the PE was computed.
    pub mode: PeMode,
    /// Requested walltime, in seconds.
    pub walltime_s: f64,
    /// The queue's price factor.
    pub queue_cost: f64,
    /// Every machine type of the file, in its order.
    pub machines: Vec<MachineLine>,
    /// The PE charged: the cheapest over the machines that could run the job.
    pub pe: f64,
    /// Maui's system-wide PE of the job, for comparison.
    pub maui_pe: f64,
}

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The explanation of `request`'s charge on its machine file; fails on a request out of range,
/// a machine file that cannot be read or lists nothing, a resource the file cannot have, and a
/// job no set of machines of the file can run (the message says what each machine lacks).
pub fn explain(request: &PenaltyRequest) -> Result<Explanation, LabError> {
    check(request)?;
    let (catalogue, resources, per_node) = cluster_and_request(request)?;
    let shown = request.machines.display();
    let job = JobRequest {
        user: 0,
        chunks: vec![Chunk {
            nodes: request.nodes,
            per_node,
            properties: request.properties.clone(),
        }],
        exclusive: request.exclusive,
        walltime: Some(request.walltime),
        queue: None,
        partition: None,
        account: None,
    };
    let charge = match penalty::charge(&job, &catalogue, request.mode) {
        Ok(charge) => charge,
        Err(penalty::ChargeError::Unsatisfiable { suitable, .. }) => {
            let why: Vec<String> = catalogue
                .types
                .iter()
                .map(|t| match penalty::suitability(&job.chunks[0], t) {
                    Ok(()) => format!("{}: {} nodes", t.name, t.count),
                    Err(e) => format!("{}: {}", t.name, reason(&e, &resources)),
                })
                .collect();
            return Err(LabError::Unusable(format!(
                "{shown}: no {} distinct machines can run this job, so it is unsatisfiable and is not charged; {} suitable ({})",
                request.nodes,
                suitable,
                why.join("; ")
            )));
        }
        Err(e) => return Err(LabError::Unusable(format!("{shown}: {e}"))),
    };
    Ok(explanation(request, &catalogue, resources, &job, &charge))
}

/// Fails unless the request's amounts are in range (the messages name the command's options).
fn check(request: &PenaltyRequest) -> Result<(), LabError> {
    for (name, value) in [
        ("--cpus", request.cpus),
        ("--gpus", request.gpus),
        ("--queue-cost", request.queue_cost),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(LabError::Unusable(format!(
                "{name} must be a number >= 0, found {value}"
            )));
        }
    }
    if let Some(spec) = request.spec.filter(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(LabError::Unusable(format!(
            "--spec must be a number > 0, found {spec}"
        )));
    }
    if request.nodes == 0 {
        return Err(LabError::Unusable("--nodes must be at least 1".into()));
    }
    Ok(())
}

/// The machines of the file, its resources' names with units, and the request per node in
/// those units.
fn cluster_and_request(
    request: &PenaltyRequest,
) -> Result<(MachineCatalogue, Vec<String>, Vec<f64>), LabError> {
    let path = &request.machines;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let names = |n: &[&str]| n.iter().map(|r| r.to_string()).collect::<Vec<String>>();
    let r = request;
    let (catalogue, resources, per_node) = match extension {
        "toml" => (
            fairshare_trace::read_catalogue(path)?,
            names(&CATALOGUE_RESOURCES),
            vec![r.cpus, r.memory_bytes / KIB, r.gpus, r.scratch_bytes / KIB],
        ),
        "csv" => (
            fairshare_trace::read_machines(path, Format::ALIBABA)?,
            names(&["cpu", "memory (MiB)", "gpu"]),
            vec![r.cpus, r.memory_bytes / MIB, r.gpus],
        ),
        _ => (
            fairshare_trace::read_machines(path, Format::SWF)?,
            names(&["cpu", "memory (KB)"]),
            vec![r.cpus, r.memory_bytes / KIB],
        ),
    };
    if catalogue.nodes() == 0 {
        return Err(LabError::Unusable(format!(
            "{}: lists no machines",
            path.display()
        )));
    }
    let listed = per_node.len();
    if let Some(extra) = [(r.gpus, "GPUs", 2), (r.scratch_bytes, "scratch", 3)]
        .iter()
        .find(|(amount, _, at)| *amount > 0.0 && *at >= listed)
    {
        return Err(LabError::Unusable(format!(
            "{}: this kind of machine list has no {}, so no machine could run a job asking for it; a TOML catalogue can say",
            path.display(),
            extra.1
        )));
    }
    Ok((catalogue, resources, per_node))
}

/// The explanation of `charge`.
fn explanation(
    request: &PenaltyRequest,
    catalogue: &MachineCatalogue,
    resources: Vec<String>,
    job: &JobRequest,
    charge: &Charge,
) -> Explanation {
    let walltime_s = request.walltime as f64 / 1e6;
    let machines = catalogue
        .types
        .iter()
        .zip(&charge.machines[0])
        .enumerate()
        .map(|(i, (t, verdict))| {
            let spec = request.spec.unwrap_or(t.spec);
            let suitable = verdict.pe.is_ok();
            MachineLine {
                name: t.name.clone(),
                count: t.count,
                capacity: t.capacity.clone(),
                spec,
                pe_per_node: verdict.pe.as_ref().ok().copied(),
                unsuitable: verdict.pe.as_ref().err().map(|e| reason(e, &resources)),
                priced_nodes: charge.priced_on[0]
                    .iter()
                    .filter(|(m, _)| *m == i)
                    .map(|(_, nodes)| *nodes)
                    .sum(),
                penalty_if_run_here: suitable
                    .then(|| charge.penalty(walltime_s, spec, request.queue_cost)),
            }
        })
        .collect();
    Explanation {
        schema_version: fairshare_core::instance::SCHEMA_VERSION,
        machines_file: request.machines.display().to_string(),
        resources,
        request_per_node: job.chunks[0].per_node.clone(),
        nodes: request.nodes,
        exclusive: request.exclusive,
        mode: request.mode,
        walltime_s,
        queue_cost: request.queue_cost,
        machines,
        pe: charge.pe,
        maui_pe: penalty::maui_pe(&job.total(), &penalty::totals(catalogue)),
    }
}

/// Why a machine cannot run the job, in words.
fn reason(why: &Unsuitable, resources: &[String]) -> String {
    match why {
        Unsuitable::TooSmall {
            resource,
            needs,
            has,
        } => {
            let name = resources
                .get(*resource)
                .map_or("a resource", String::as_str);
            format!(
                "{name}: needs {}, has {}",
                one_decimal(*needs),
                one_decimal(*has)
            )
        }
        Unsuitable::Property(p) => format!("no property {p}"),
        other => other.to_string(),
    }
}

/// An amount with one decimal, `–` when it is not a number (as the report's tables write it:
/// this text is part of the document, so the library writes it).
fn one_decimal(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let s = format!("{v:.1}");
    match s.strip_prefix('-') {
        Some(magnitude) if magnitude.chars().all(|c| c == '0' || c == '.') => magnitude.into(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Machine A: 80 processors and 512 GiB; B: 12 processors and 90 GiB (memory in KB).
    fn cluster(dir: &std::path::Path) -> PathBuf {
        let path = dir.join("cluster.machines");
        let gib = 1024 * 1024;
        std::fs::write(
            &path,
            format!("0 A 20 80 1 {}\n1 B 48 12 1 {}\n", 512 * gib, 90 * gib),
        )
        .unwrap();
        path
    }

    fn request(machines: PathBuf) -> PenaltyRequest {
        PenaltyRequest {
            machines,
            cpus: 4.0,
            memory_bytes: 64.0 * KIB * MIB,
            gpus: 0.0,
            scratch_bytes: 0.0,
            nodes: 1,
            exclusive: false,
            properties: Vec::new(),
            walltime: 7_200_000_000,
            queue_cost: 1.0,
            spec: None,
            mode: PeMode::Max,
        }
    }

    /// The spec's worked example (docs/metacentrum.md §8.1): PE 10 on A, 8.53 on B, priced
    /// on B.
    #[test]
    fn the_cheapest_machine_prices_the_job() {
        let dir = tempfile::tempdir().unwrap();
        let e = explain(&request(cluster(dir.path()))).unwrap();
        assert_eq!(e.resources, ["cpu", "memory (KB)"]);
        assert_eq!(e.request_per_node, [4.0, 64.0 * MIB]);
        assert_eq!(e.machines[0].pe_per_node, Some(10.0));
        assert!((e.pe - 8.5333).abs() < 1e-4, "{}", e.pe);
        assert_eq!(
            (e.machines[0].priced_nodes, e.machines[1].priced_nodes),
            (0, 1)
        );
        assert!((e.machines[1].penalty_if_run_here.unwrap() - 61_440.0).abs() < 1e-6);
        assert_eq!(e.walltime_s, 7200.0);
    }

    #[test]
    fn an_unsatisfiable_job_is_refused_with_what_each_machine_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let mut big = request(cluster(dir.path()));
        big.memory_bytes = 600.0 * KIB * MIB;
        let message = explain(&big).unwrap_err().to_string();
        assert!(
            message.ends_with(
                "cluster.machines: no 1 distinct machines can run this job, so it is unsatisfiable and is not charged; 0 suitable (A: memory (KB): needs 629145600.0, has 536870912.0; B: memory (KB): needs 629145600.0, has 94371840.0)"
            ),
            "{message}"
        );
        let mut gpus = request(cluster(dir.path()));
        gpus.gpus = 1.0;
        assert!(explain(&gpus)
            .unwrap_err()
            .to_string()
            .contains("has no GPUs"));
        let mut none = request(cluster(dir.path()));
        none.nodes = 0;
        assert_eq!(
            explain(&none).unwrap_err().to_string(),
            "--nodes must be at least 1"
        );
    }

    #[test]
    fn amounts_have_one_decimal() {
        assert_eq!(one_decimal(16.0), "16.0");
        assert_eq!(one_decimal(-0.01), "0.0");
        assert_eq!(one_decimal(f64::INFINITY), "–");
    }
}
