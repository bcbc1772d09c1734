//! `fairshare penalty`: what one job is charged on a cluster of different machines, machine by
//! machine — the operator's check of MetaCentrum's Processor Equivalent before trusting a
//! fairshare built on it.

use crate::choice;
use crate::output::{print, write_json};
use crate::workload::parse_duration;
use anyhow::{bail, Context, Result};
use fairshare_core::choice::Choice;
use fairshare_core::model::{Chunk, JobRequest, MachineCatalogue};
use fairshare_core::usage::penalty::{self, Charge, PeMode, Unsuitable};
use fairshare_report::text::{fixed, table};
use fairshare_trace::{parse_size, Format, CATALOGUE_RESOURCES};
use serde::Serialize;
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
    #[arg(long, value_parser = parse_duration, default_value = "1h")]
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

/// One machine type's line of the explanation.
#[derive(Serialize)]
struct MachineLine {
    name: String,
    count: u32,
    capacity: Vec<f64>,
    spec: f64,
    /// PE of one node's part here, or `None` when the machine cannot run it.
    pe_per_node: Option<f64>,
    /// Why it cannot, when it cannot.
    unsuitable: Option<String>,
    /// How many of the job's nodes are priced on this machine.
    priced_nodes: u32,
    /// The penalty if the job runs here (its PE × walltime × this SPEC × queue cost).
    penalty_if_run_here: Option<f64>,
}

/// The whole explanation, as `--json` writes it.
#[derive(Serialize)]
struct Explanation {
    schema_version: u32,
    machines_file: String,
    resources: Vec<String>,
    request_per_node: Vec<f64>,
    nodes: u32,
    exclusive: bool,
    mode: PeMode,
    walltime_s: f64,
    queue_cost: f64,
    machines: Vec<MachineLine>,
    pe: f64,
    maui_pe: f64,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    for (name, value) in [
        ("--cpus", args.cpus),
        ("--gpus", args.gpus),
        ("--queue-cost", args.queue_cost),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            bail!("{name} must be a number >= 0, found {value}");
        }
    }
    if let Some(spec) = args.spec.filter(|s| !(s.is_finite() && *s > 0.0)) {
        bail!("--spec must be a number > 0, found {spec}");
    }
    if args.nodes == 0 {
        bail!("--nodes must be at least 1");
    }
    let (catalogue, resources, per_node) = cluster_and_request(&args)?;
    let job = JobRequest {
        user: 0,
        chunks: vec![Chunk {
            nodes: args.nodes,
            per_node: per_node.clone(),
            properties: args.properties.clone(),
        }],
        exclusive: args.exclusive,
        walltime: Some(args.walltime),
        queue: None,
        partition: None,
        account: None,
    };
    let charge = match penalty::charge(&job, &catalogue, args.mode) {
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
            bail!(
                "{}: no {} distinct machines can run this job, so it is unsatisfiable and is not charged; {} suitable ({})",
                args.machines.display(),
                args.nodes,
                suitable,
                why.join("; ")
            );
        }
        Err(e) => return Err(e).context(args.machines.display().to_string()),
    };
    let explanation = explain(&args, &catalogue, resources, &job, &charge);
    if let Some(path) = &args.json {
        write_json(path, &explanation)?;
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    print(&text(&explanation))
}

/// The machines of the file and the request per node in their units.
fn cluster_and_request(args: &Args) -> Result<(MachineCatalogue, Vec<String>, Vec<f64>)> {
    let path = &args.machines;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let names = |n: &[&str]| n.iter().map(|r| r.to_string()).collect::<Vec<String>>();
    let (catalogue, resources, per_node) = match extension {
        "toml" => (
            fairshare_trace::read_catalogue(path)?,
            names(&CATALOGUE_RESOURCES),
            vec![args.cpus, args.mem / KIB, args.gpus, args.scratch / KIB],
        ),
        "csv" => (
            fairshare_trace::read_machines(path, Format::ALIBABA)?,
            names(&["cpu", "memory (MiB)", "gpu"]),
            vec![args.cpus, args.mem / MIB, args.gpus],
        ),
        _ => (
            fairshare_trace::read_machines(path, Format::SWF)?,
            names(&["cpu", "memory (KB)"]),
            vec![args.cpus, args.mem / KIB],
        ),
    };
    if catalogue.nodes() == 0 {
        bail!("{}: lists no machines", path.display());
    }
    let listed = per_node.len();
    if let Some(extra) = [(args.gpus, "GPUs", 2), (args.scratch, "scratch", 3)]
        .iter()
        .find(|(amount, _, at)| *amount > 0.0 && *at >= listed)
    {
        bail!(
            "{}: this kind of machine list has no {}, so no machine could run a job asking for it; a TOML catalogue can say",
            path.display(),
            extra.1
        );
    }
    Ok((catalogue, resources, per_node))
}

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The explanation of `charge`.
fn explain(
    args: &Args,
    catalogue: &MachineCatalogue,
    resources: Vec<String>,
    job: &JobRequest,
    charge: &Charge,
) -> Explanation {
    let walltime_s = args.walltime as f64 / 1e6;
    let machines = catalogue
        .types
        .iter()
        .zip(&charge.machines[0])
        .enumerate()
        .map(|(i, (t, verdict))| {
            let spec = args.spec.unwrap_or(t.spec);
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
                    .then(|| charge.penalty(walltime_s, spec, args.queue_cost)),
            }
        })
        .collect();
    Explanation {
        schema_version: fairshare_core::instance::SCHEMA_VERSION,
        machines_file: args.machines.display().to_string(),
        resources,
        request_per_node: job.chunks[0].per_node.clone(),
        nodes: args.nodes,
        exclusive: args.exclusive,
        mode: args.mode,
        walltime_s,
        queue_cost: args.queue_cost,
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
            format!("{name}: needs {}, has {}", fixed(*needs, 1), fixed(*has, 1))
        }
        Unsuitable::Property(p) => format!("no property {p}"),
    }
}

/// The explanation as a terminal table.
fn text(e: &Explanation) -> String {
    let mut headers: Vec<String> = ["machine", "nodes"].map(String::from).to_vec();
    headers.extend(e.resources.iter().cloned());
    headers.extend(["SPEC", "PE per node", "priced", "penalty if run here"].map(String::from));
    let rows: Vec<Vec<String>> = e
        .machines
        .iter()
        .map(|m| {
            let mut row = vec![m.name.clone(), m.count.to_string()];
            row.extend(m.capacity.iter().map(|c| fixed(*c, 0)));
            row.push(fixed(m.spec, 2));
            row.push(match (&m.pe_per_node, &m.unsuitable) {
                (Some(pe), _) => fixed(*pe, 4),
                (None, Some(why)) => format!("unsuitable ({why})"),
                (None, None) => "–".into(),
            });
            row.push(if m.priced_nodes > 0 {
                format!("* {}", m.priced_nodes)
            } else {
                String::new()
            });
            row.push(m.penalty_if_run_here.map_or("–".into(), |p| fixed(p, 1)));
            row
        })
        .collect();
    let request: Vec<String> = e
        .resources
        .iter()
        .zip(&e.request_per_node)
        .map(|(r, a)| format!("{r} {}", fixed(*a, 1)))
        .collect();
    format!(
        "job: {} node(s) of {}{}, walltime {} s, queue cost {}, PE mode {}\n\n{}\n* the machines the job is priced on (the cheapest that could run it){}\n\nPE (charged)          {}\nMaui PE (system-wide) {}\npenalty = PE × walltime × SPEC of the machine that runs it × queue cost\n",
        e.nodes,
        request.join(", "),
        if e.exclusive { ", exclusive" } else { "" },
        fixed(e.walltime_s, 0),
        fixed(e.queue_cost, 2),
        e.mode.name(),
        table(&headers, &rows),
        match e.mode {
            PeMode::Additive => "; in additive mode they only show that it fits: its PE counts its total against the whole cluster's",
            PeMode::Max => "",
        },
        fixed(e.pe, 4),
        fixed(e.maui_pe, 4),
    )
}
