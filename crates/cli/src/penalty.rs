//! `fairshare penalty`: what one job is charged on a cluster of different machines, machine by
//! machine — the operator's check of MetaCentrum's Processor Equivalent before trusting a
//! fairshare built on it.

use crate::choice;
use crate::output::{print, write_json};
use anyhow::Result;
use fairshare_core::usage::penalty::PeMode;
use fairshare_lab::input::parse_duration;
use fairshare_lab::penalty::{explain, PenaltyRequest};
use fairshare_report::penalty_table;
use fairshare_trace::parse_size;
use std::path::PathBuf;

/// Explain one job's charge: its Processor Equivalent (PE) on every machine of a cluster, the
/// cheapest marked, and the penalty a fairshare would add to its user's usage.
///
/// PE on a machine is the job's largest fraction of any resource of one node, times the node's
/// processors: a 1-processor, 150 GiB job costs about 24 processors on an 80-processor,
/// 505 GiB node. The job is charged its cheapest PE over the machines that could run it, so
/// where the scheduler puts it does not change its price; the penalty is that PE × walltime ×
/// the SPEC (relative speed) of the machine that runs it × the queue's cost.
///
/// Example: fairshare penalty --machines ../shared/traces/swf/wagap-2013.swf.machines
///   --cpus 4 --mem 64GiB --walltime 2h
#[derive(clap::Args)]
pub struct Args {
    /// The cluster's machines: a TOML catalogue (`.toml`: processors, memory, GPUs, scratch,
    /// SPEC, cost and properties; see docs/metacentrum.md), an SWF `.machines` file
    /// (processors, memory in KB) or an Alibaba node list (`.csv`: cores, memory in MiB, GPUs).
    #[arg(long, value_name = "FILE")]
    machines: PathBuf,
    /// Processors on each node.
    #[arg(long, default_value_t = 1.0)]
    cpus: f64,
    /// Memory on each node, e.g. `64GiB`, `512MiB`, `1.5TiB` (K, M, G and T are powers of
    /// 1024 with or without `i`, as PBS reads them; a bare number is bytes).
    #[arg(long, value_parser = parse_size, default_value = "0")]
    mem: f64,
    /// GPUs on each node (machine lists that have GPUs: a catalogue, the Alibaba node list).
    #[arg(long, default_value_t = 0.0)]
    gpus: f64,
    /// Scratch space on each node, a size as for --mem (a catalogue only).
    #[arg(long, value_parser = parse_size, default_value = "0")]
    scratch: f64,
    /// How many nodes, each with the amounts above.
    #[arg(long, default_value_t = 1)]
    nodes: u32,
    /// The job takes its nodes whole (PBS `#excl`): it pays every processor of them.
    #[arg(long)]
    exclusive: bool,
    /// Node properties the job requires, comma-separated (e.g. `cl_zewura`).
    #[arg(long, value_delimiter = ',')]
    properties: Vec<String>,
    /// Requested walltime, e.g. `2h`, `90m`, `3600`.
    #[arg(long, value_parser = parse_duration, default_value = "1h", allow_hyphen_values = true)]
    walltime: u64,
    /// The queue's price factor.
    #[arg(long, default_value_t = 1.0)]
    queue_cost: f64,
    /// The SPEC of the machine that runs the job; default: each machine's SPEC as a catalogue
    /// gives it (1 for every machine of an SWF `.machines` file or Alibaba node list).
    #[arg(long)]
    spec: Option<f64>,
    /// How GPUs and other resources a job need not ask for enter the PE.
    #[arg(long, value_parser = choice::<PeMode>(), default_value = "max")]
    mode: PeMode,
    /// Write the explanation as JSON to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let explanation = explain(&PenaltyRequest {
        machines: args.machines,
        cpus: args.cpus,
        memory_bytes: args.mem,
        gpus: args.gpus,
        scratch_bytes: args.scratch,
        nodes: args.nodes,
        exclusive: args.exclusive,
        properties: args.properties,
        walltime: args.walltime,
        queue_cost: args.queue_cost,
        spec: args.spec,
        mode: args.mode,
    })?;
    if let Some(path) = &args.json {
        write_json(path, &explanation)?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    print(&penalty_table(&explanation))
}
