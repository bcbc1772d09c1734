//! `fairshare cloud`: the runtime fairness service on a cloud the heaviness paper did not run —
//! nodes and VM sizes drawn from the Alibaba GPU 2023 node and pod lists, users owning very
//! different numbers of VMs, demand that comes and goes, one user arriving late — with every
//! runtime policy measured against what users are owed (`fairshare_lab::cloud`).

use crate::output::{check_writable, write_text, Outputs};
use crate::trace::SimBars;
use anyhow::{bail, Context, Result};
use fairshare_core::heaviness::knobs::{KnobProfile, PROFILES};
use fairshare_core::model::parse_seconds;
use fairshare_core::policy::{registry, Engine};
use fairshare_lab::cloud::{CloudExperiment, CloudSpec};
use fairshare_lab::runs::run_all;
use fairshare_sim::runtime::RuntimePolicy;
use indicatif::MultiProgress;
use std::path::PathBuf;

/// Run every runtime policy on a cloud drawn from the Alibaba GPU 2023 lists and measure what
/// users are owed and do not get.
///
/// Nodes (cores, memory) and VM sizes (VCPUs, memory) are rows of the trace's node and pod
/// lists, drawn with the seed; VMs go to the node with the fewest VCPUs per core so far. What
/// the trace lacks is drawn: disks and networks of the given bandwidth, users owning VMs with
/// Zipf weights 1/k, each VM alternating busy phases (all its VCPUs) and quiet ones (a tenth)
/// of exponential length, a third of them disk-heavy. The last user's VMs all start at
/// --arrival. Every 10 s each node is divided by weighted max–min under the knobs the service
/// set from the users' heaviness (policy `off`: the kernel's equal weights, the yardstick).
///
/// Each user is owed the smaller of an equal part of the cloud and what their VMs wanted; the
/// table gives per policy the shortfall (what users were owed and did not get, as a fraction
/// of the cloud), the worst-served user, and how the arriving user fared. docs/runtime.md
/// explains the experiment and its results; docs/json.md the JSON.
///
/// Example: fairshare cloud --duration 24h --seed 1 --report cloud.html
///   (from a checkout beside the shared traces; a quick look: --duration 1h --nodes 10
///   --users 5 --workloads 80)
#[derive(clap::Args)]
pub struct Args {
    /// The Alibaba GPU 2023 pod list the VM sizes are drawn from (pods asking for both CPU and
    /// memory).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "../shared/traces/alibaba-gpu-2023/openb_pod_list_default.csv"
    )]
    pods: PathBuf,
    /// The Alibaba GPU 2023 node list the nodes are drawn from.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "../shared/traces/alibaba-gpu-2023/openb_node_list_all_node.csv"
    )]
    node_list: PathBuf,
    /// Simulated time, e.g. `6h`, `1d`, `7200` (seconds); one interval every 10 s.
    #[arg(long, value_parser = parse_seconds, default_value = "6h")]
    duration: f64,
    /// When the last user's VMs start, a time after the start as for --duration; default:
    /// half of the duration.
    #[arg(long, value_parser = parse_seconds)]
    arrival: Option<f64>,
    /// The seed of every draw: nodes, VM sizes, owners, phases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Nodes drawn from the node list.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    nodes: u32,
    /// Users; the last one arrives late.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    users: u32,
    /// VMs drawn from the pod list (at least one per user).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    workloads: u32,
    /// Mean length of a VM's busy or quiet phase, as for --duration.
    #[arg(long, value_parser = parse_seconds, default_value = "30m")]
    phase: f64,
    /// A node's disk bandwidth each way, bytes per second.
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = 500e6)]
    disk: f64,
    /// A disk-heavy VM's disk demand when busy, bytes per second (the others want a fiftieth).
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = 200e6)]
    disk_heavy: f64,
    /// A node's network bandwidth each way, bytes per second.
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = 1.25e9)]
    network: f64,
    /// The knobs the service sets and their ranges.
    #[arg(long, value_parser = PROFILES, default_value = "cgroup-v2")]
    profile: String,
    /// A runtime policy to run (repeat for several); default: every one.
    #[arg(long = "policy", value_name = "POLICY", long_help = policy_help())]
    policies: Vec<RuntimePolicy>,
    /// Write the results as JSON to this file (`-` for standard output): the cloud, and per
    /// policy the means and every interval's measures.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a self-contained HTML report with the table and the charts to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write the report's charts as SVG files into this existing folder
    /// (runtime-cloud-cpu.svg, -disk, -worst, -arrival: the figures of docs/runtime.md).
    #[arg(long, value_name = "DIR")]
    charts: Option<PathBuf>,
}

/// The long help of `--policy`: the runtime policies of the registry.
fn policy_help() -> String {
    format!(
        "A runtime policy to run (repeat for several); default: every one:\n{}",
        registry::help(Engine::Runtime)
    )
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<()> {
    let policies = match args.policies.is_empty() {
        true => RuntimePolicy::ALL.to_vec(),
        false => args.policies.clone(),
    };
    if let Some(p) = (policies.iter()).find(|p| policies.iter().filter(|q| q == p).count() > 1) {
        bail!("--policy {p} is given twice");
    }
    let outputs = Outputs {
        json: args.json.clone(),
        report: args.report.clone(),
        stats: None,
    };
    outputs.check()?;
    if let Some(dir) = &args.charts {
        if !dir.is_dir() {
            bail!("--charts {}: not a folder", dir.display());
        }
        check_writable(&dir.join("runtime-cloud-cpu.svg"), "--charts")?;
    }
    let spec = CloudSpec {
        nodes: args.nodes as usize,
        users: args.users as usize,
        workloads: args.workloads as usize,
        seed: args.seed,
        duration_s: args.duration,
        arrival_s: args.arrival.unwrap_or(args.duration / 2.0),
        phase_s: args.phase,
        disk: args.disk,
        disk_heavy: args.disk_heavy,
        network: args.network,
        profile: KnobProfile::named(&args.profile).expect("clap keeps to PROFILES"),
    };
    for (flag, path, what) in [
        ("--pods", &args.pods, "pod list"),
        ("--node-list", &args.node_list, "node list"),
    ] {
        if !path.is_file() {
            bail!(
                "{flag} {}: no such file; it is the Alibaba GPU 2023 {what}, which the default \
                 reads from ../shared/traces/alibaba-gpu-2023 under the current folder",
                path.display()
            );
        }
    }
    let experiment = CloudExperiment::new(&args.pods, &args.node_list, spec)?;
    let bars = SimBars {
        multi: MultiProgress::new(),
        names: policies.iter().map(|p| p.name()).collect(),
        span_s: experiment.spec.duration_s,
    };
    let ran = run_all(policies.len(), &bars, |i, progress| {
        experiment.run(policies[i], &mut |s| progress(s as u64))
    });
    let ran = ran.context("running the cloud")?;
    let outcomes = ran.into_iter().map(|(outcome, _)| outcome).collect();
    let summary = experiment.summary(outcomes);
    if let Some(dir) = &args.charts {
        for chart in fairshare_report::cloud_charts(&summary) {
            write_text(&dir.join(chart.file), &chart.svg)?;
        }
    }
    outputs.write(
        &summary,
        fairshare_report::cloud_html,
        fairshare_report::cloud_table,
    )
}
