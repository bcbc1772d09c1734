//! The reader of `pbsnodes -a -F json`: OpenPBS's vnodes as the reconcile's nodes.

use crate::read::{bad, kb, OutputError};
use fairshare_reconcile::machines::SchedulerNode;
use serde::Deserialize;
use std::collections::BTreeMap;

/// OpenPBS's vnodes.
pub const PBSNODES: [&str; 4] = ["pbsnodes", "-a", "-F", "json"];

/// `pbsnodes -a -F json`: the vnodes by name.
#[derive(Deserialize)]
struct Pbsnodes {
    nodes: BTreeMap<String, Vnode>,
}

/// One vnode, what the reconcile reads of it.
#[derive(Deserialize)]
struct Vnode {
    resources_available: Available,
}

/// What a vnode offers.
#[derive(Deserialize)]
struct Available {
    ncpus: u32,
    mem: String,
    #[serde(default)]
    ngpus: u64,
}

/// The nodes of `pbsnodes -a -F json`.
pub fn nodes(text: &str) -> Result<Vec<SchedulerNode>, OutputError> {
    let listed: Pbsnodes = serde_json::from_str(text)?;
    (listed.nodes.into_iter())
        .map(|(name, vnode)| {
            let offered = vnode.resources_available;
            let mem = kb(&offered.mem)
                .ok_or_else(|| bad(&name, "resources_available.mem", &offered.mem, "a size"))?;
            Ok(SchedulerNode {
                name,
                cpus: offered.ncpus,
                memory_kb: mem as u64,
                gpus: offered.ngpus,
                features: Vec::new(),
                partitions: Vec::new(),
            })
        })
        .collect()
}
