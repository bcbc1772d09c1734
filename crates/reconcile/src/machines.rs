//! The cluster as a policy sees it: which resources it has and how much of each, and its
//! nodes grouped into types, from the scheduler's own node list.
//!
//! Rankers take holdings as fractions of the cluster, and MetaCentrum's Processor Equivalent
//! prices a job on the machines that could run it, so both come from the scheduler's node list
//! (Slurm's `sinfo --json`) rather than from a file written twice. Resources are processors, memory (KB, as the
//! accounting reader gives it) and GPUs; GPUs only where some node has one, since a resource
//! of size 0 has no fractions. Schedulers record no SPEC speed for their nodes, so every type has
//! SPEC 1: the `pe` metric is the Processor Equivalent, not multiplied by a speed.

use fairshare_core::model::{MachineCatalogue, NodeType, Task};
use fairshare_core::usage::penalty::totals;

/// One node as its scheduler lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerNode {
    /// Its name.
    pub name: String,
    /// Its CPUs.
    pub cpus: u32,
    /// Its memory, in KB (the unit of every job's demand).
    pub memory_kb: u64,
    /// Its GPUs.
    pub gpus: u64,
    /// Its features.
    pub features: Vec<String>,
    /// The partitions it belongs to.
    pub partitions: Vec<String>,
}

/// Why the nodes make no cluster.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MachinesError {
    /// The scheduler lists no node at all.
    #[error("the scheduler lists no node")]
    NoNode,
    /// No node serves the partitions asked for.
    #[error("no node serves the partitions {0}")]
    NoPartition(String),
    /// The nodes have no processors or no memory.
    #[error("the nodes offer no processors or no memory")]
    Empty,
}

/// The resources fairshare knows of, in the order accounting gives them.
const ALL: [&str; 3] = ["cpu", "mem", "gpu"];

/// The cluster's resources and machines.
#[derive(Debug, Clone, PartialEq)]
pub struct Machines {
    /// The resources kept (`cpu`, `mem`, and `gpu` where there are GPUs).
    pub resources: Vec<String>,
    /// Each kept resource's whole amount: processors, KB, GPUs.
    pub totals: Vec<f64>,
    /// The nodes, grouped into types of equal CPUs, memory, GPUs and features.
    pub catalogue: MachineCatalogue,
    /// Indices of the kept resources among processors, KB and GPUs.
    keep: Vec<usize>,
}

impl Machines {
    /// The machines of `nodes` that serve one of `partitions` (all of them when empty), or
    /// why there are none.
    pub fn of(nodes: &[SchedulerNode], partitions: &[String]) -> Result<Machines, MachinesError> {
        let serves = |n: &&SchedulerNode| {
            partitions.is_empty() || n.partitions.iter().any(|p| partitions.contains(p))
        };
        let chosen: Vec<&SchedulerNode> = nodes.iter().filter(serves).collect();
        if chosen.is_empty() {
            return Err(match partitions.is_empty() {
                true => MachinesError::NoNode,
                false => MachinesError::NoPartition(partitions.join(", ")),
            });
        }
        let gpus = chosen.iter().any(|n| n.gpus > 0);
        let keep: Vec<usize> = if gpus { vec![0, 1, 2] } else { vec![0, 1] };
        let mut catalogue = MachineCatalogue::default();
        for node in chosen {
            let capacity = [
                f64::from(node.cpus),
                node.memory_kb as f64,
                node.gpus as f64,
            ];
            let capacity: Vec<f64> = keep.iter().map(|&r| capacity[r]).collect();
            let mut features = node.features.clone();
            features.sort_unstable();
            let same = |t: &NodeType| t.capacity == capacity && t.properties == features;
            let at = match catalogue.types.iter().position(same) {
                Some(at) => at,
                None => {
                    let mut kind = NodeType::new(node.name.clone(), 0, capacity);
                    kind.properties = features;
                    catalogue.types.push(kind);
                    catalogue.types.len() - 1
                }
            };
            catalogue.types[at].count += 1;
        }
        let totals = totals(&catalogue);
        if totals.iter().any(|t| t.is_nan() || *t <= 0.0) {
            return Err(MachinesError::Empty);
        }
        Ok(Machines {
            resources: keep.iter().map(|&r| ALL[r].to_string()).collect(),
            totals,
            catalogue,
            keep,
        })
    }

    /// A demand of `[processors, KB, GPUs]` on the kept resources.
    pub fn demand(&self, demand: &[f64]) -> Vec<f64> {
        let amount = |r: usize| demand.get(r).copied().unwrap_or(0.0);
        self.keep.iter().map(|&r| amount(r)).collect()
    }

    /// A demand of `[processors, KB, GPUs]` as fractions of the cluster, each at most 1.
    pub fn holding(&self, demand: &[f64]) -> Vec<f64> {
        let kept = self.demand(demand);
        let fraction = kept.iter().zip(&self.totals).map(|(d, t)| (d / t).min(1.0));
        fraction.collect()
    }

    /// A job's demand as a task the usage metrics price, on `nodes` nodes.
    pub fn task(&self, demand: &[f64], nodes: Option<u32>) -> Task {
        let mut task = Task::new(0, 0, Default::default(), 0, self.demand(demand));
        task.nodes = nodes;
        task
    }
}
