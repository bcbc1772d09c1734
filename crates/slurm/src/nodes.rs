//! The nodes of the cluster, from Slurm's JSON: what each offers (CPUs, memory, GPUs) and
//! where it serves (partitions, features).
//!
//! A policy that weighs jobs by the resources they hold needs the cluster's capacity, one
//! record per node in one call. Slurm 22.05's `sinfo --json` (openapi v0.0.38) gives it; from
//! 23.02 on, `sinfo --json` groups nodes as its text does (top key `sinfo`), and
//! `scontrol show nodes --json` gives the per-node records instead, under the same top key
//! and field names. [`nodes_command`] picks the one of the version. GPUs come from the node's
//! GRES string (`gpu:4`, `gpu:a100:4(S:0-1)`, several comma-separated).

use crate::json::{records, Record};
pub use fairshare_reconcile::machines::SchedulerNode;
pub use fairshare_trace::slurm_output::gpus;
use fairshare_trace::slurm_output::{Problem, ReadError};
use fairshare_trace::slurm_version::SlurmVersion;

/// The command whose output [`parse_nodes`] reads on Slurm before 23.02.
pub const SINFO_COMMAND: [&str; 2] = ["sinfo", "--json"];

/// The command whose output [`parse_nodes`] reads on Slurm 23.02 and later.
pub const SCONTROL_NODES_COMMAND: [&str; 4] = ["scontrol", "show", "nodes", "--json"];

/// The command that lists the nodes one record each on Slurm `version`: `sinfo --json` before
/// 23.02 (where `scontrol` has no `--json`), `scontrol show nodes --json` from 23.02 on (where
/// `sinfo --json` groups them). An unknown version is taken as 22.05's; [`parse_nodes`] names
/// the grouped form if that guess was wrong.
pub fn nodes_command(version: Option<&SlurmVersion>) -> &'static [&'static str] {
    match version.and_then(SlurmVersion::release) {
        Some(release) if release >= (23, 2) => &SCONTROL_NODES_COMMAND,
        _ => &SINFO_COMMAND,
    }
}

/// The fields of a node [`parse_nodes`] reads; the others are skipped unread.
const NODE_FIELDS: [&str; 6] = [
    "name",
    "cpus",
    "real_memory",
    "gres",
    "features",
    "partitions",
];

/// The nodes of `text`, the output of [`nodes_command`], in its order. The grouped `sinfo`
/// records of `sinfo --json` from Slurm 23.02 on are refused, named as such.
pub fn parse_nodes(text: &str) -> Result<Vec<SchedulerNode>, ReadError> {
    let nodes = records(text, "nodes", &NODE_FIELDS).map_err(|error| match error {
        ReadError::Field {
            problem: Problem::Missing,
            ..
        } if grouped(text) => ReadError::field_of(
            "top",
            "nodes",
            Problem::Invalid(
                "absent: this output groups the nodes (`sinfo`), as `sinfo --json` does from \
                 Slurm 23.02 on; there `scontrol show nodes --json` lists them"
                    .into(),
            ),
        ),
        error => error,
    })?;
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

/// Whether `text` is JSON whose top object has the grouped `sinfo` array.
fn grouped(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|top| top.get("sinfo").is_some_and(serde_json::Value::is_array))
}

/// The node `name` from its JSON record.
fn node(record: &Record, name: &str) -> Result<SchedulerNode, ReadError> {
    let gres = record.opt_str("gres")?.unwrap_or_default();
    let gres = if gres == "(null)" { "" } else { gres };
    let gpus = gpus(gres).map_err(|problem| record.error("gres", problem))?;
    Ok(SchedulerNode {
        name: name.to_string(),
        cpus: record.u32("cpus")?,
        memory_kb: record.u64("real_memory")?.saturating_mul(1024),
        gpus,
        features: record.strings("features")?,
        partitions: record.strings("partitions")?,
    })
}
