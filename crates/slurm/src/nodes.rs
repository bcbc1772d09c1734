//! The nodes of the cluster, from `sinfo --json`: what each offers (CPUs, memory, GPUs) and
//! where it serves (partitions, features).
//!
//! A policy that weighs jobs by the resources they hold needs the cluster's capacity, and
//! `sinfo --json` (openapi v0.0.38 in Slurm 22.05) gives it per node in one call. GPUs come
//! from the node's GRES string (`gpu:4`, `gpu:a100:4(S:0-1)`, several comma-separated).

use crate::json::{records, Record};
pub use fairshare_reconcile::machines::Node;
pub use fairshare_trace::slurm_output::gpus;
use fairshare_trace::slurm_output::ReadError;

/// The command, with its arguments, whose output [`parse_nodes`] reads.
pub const SINFO_COMMAND: [&str; 2] = ["sinfo", "--json"];

/// The fields of a node [`parse_nodes`] reads; the others are skipped unread.
const NODE_FIELDS: [&str; 6] = [
    "name",
    "cpus",
    "real_memory",
    "gres",
    "features",
    "partitions",
];

/// The nodes of `sinfo --json`'s output `text`, in its order.
pub fn parse_nodes(text: &str) -> Result<Vec<Node>, ReadError> {
    let nodes = records(text, "nodes", &NODE_FIELDS)?;
    nodes
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let mut record = Record::new("node", index, value)?;
            let name = record.str("name")?;
            record.rename(name);
            node(&record, name)
        })
        .collect()
}

/// The node `name` from its JSON record.
fn node(record: &Record, name: &str) -> Result<Node, ReadError> {
    let gres = record.opt_str("gres")?.unwrap_or_default();
    let gres = if gres == "(null)" { "" } else { gres };
    let gpus = gpus(gres).map_err(|problem| record.error("gres", problem))?;
    Ok(Node {
        name: name.to_string(),
        cpus: record.u32("cpus")?,
        memory_kb: record.u64("real_memory")?.saturating_mul(1024),
        gpus,
        features: record.strings("features")?,
        partitions: record.strings("partitions")?,
    })
}
