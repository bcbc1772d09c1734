//! A cloud the heaviness paper did not run: nodes and VM sizes drawn from a real trace's node
//! and pod lists, users owning very different numbers of VMs, demand that comes and goes, and a
//! user arriving half-way; then every runtime policy measured by how far users are from what
//! they are entitled to, interval by interval.
//!
//! What is real and what is drawn: node capacities (cores, memory) and VM sizes (cores,
//! memory) are rows of the Alibaba GPU 2023 node and pod lists, sampled with a seed. Disk and
//! network are not in that trace, nor is demand over time; they are drawn as documented on
//! [`CloudSpec`]. Users have equal quotas, so each running user is entitled to an equal part
//! of the cloud's supply of each resource; what a user is *owed* in an interval is the smaller
//! of that entitlement and what their workloads wanted (the sharing-incentive guarantee). The
//! *shortfall* is what users were owed and did not get, summed over users, as a fraction of
//! the cloud's supply. A user wanting more than their part is owed only their part: taking
//! what others leave idle is not a debt. Node boundaries make even a perfect node-local
//! policy miss a little; the kernel's equal weights (`off`) are the yardstick.

use crate::LabError;
use fairshare_core::heaviness::knobs::{KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{HeavinessConfig, Resource, ResourceKind};
use fairshare_core::model::MachineCatalogue;
use fairshare_sim::runtime::{
    run_observed, Demand, RuntimeNode, RuntimePolicy, RuntimeScenario, RuntimeUser,
    RuntimeWorkload, Tick,
};
use fairshare_trace::{open, read_machines, Format, ReadOptions, TaskSource};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

fairshare_core::versioned_json!(CloudSummary);

/// Bytes in a MiB, the trace's memory unit.
const MIB: f64 = 1_048_576.0;

/// The shape of the experiment. Drawn, not from the trace: each VM alternates busy and quiet
/// phases of exponential length (mean `phase_s`), busy wanting all its VCPUs, quiet a tenth;
/// a third of the VMs (chosen at random) are disk-heavy, wanting `disk_heavy` B/s when busy,
/// the others a fiftieth of it; every VM uses 60 % of its memory and 1 MB/s each way on the
/// network. Owners are drawn with Zipf weights 1/k, so user 1 owns about 28 % of the VMs and
/// user 20 about 1.4 %; the last user's VMs all start at `arrival_s`. VMs go to the node with
/// the lowest VCPUs-per-core ratio so far, as a spreading placement does.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudSpec {
    /// Nodes drawn from the node list.
    pub nodes: usize,
    /// Users.
    pub users: usize,
    /// VMs drawn from the pod list.
    pub workloads: usize,
    /// The seed of every draw.
    pub seed: u64,
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// When the last user's VMs start, seconds.
    pub arrival_s: f64,
    /// Mean length of a busy or quiet phase, seconds.
    pub phase_s: f64,
    /// A node's disk bandwidth each way, bytes per second.
    pub disk: f64,
    /// A disk-heavy VM's demand when busy, bytes per second.
    pub disk_heavy: f64,
    /// A node's network bandwidth each way, bytes per second.
    pub network: f64,
    /// The knobs the service sets.
    pub profile: KnobProfile,
}

impl Default for CloudSpec {
    /// 50 nodes, 20 users, 500 VMs, 6 hours, the last user arriving after 3; 500 MB/s disks,
    /// 10 Gbit/s networks, disk-heavy VMs wanting 200 MB/s, phases of 30 minutes, cgroup v2
    /// knobs.
    fn default() -> Self {
        CloudSpec {
            nodes: 50,
            users: 20,
            workloads: 500,
            seed: 1,
            duration_s: 6.0 * 3600.0,
            arrival_s: 3.0 * 3600.0,
            phase_s: 1800.0,
            disk: 500e6,
            disk_heavy: 200e6,
            network: 1.25e9,
            profile: KnobProfile::cgroup_v2(),
        }
    }
}

/// The resources of the experiment, in the order of every vector.
pub const CLOUD_RESOURCES: [(&str, ResourceKind); 6] = [
    ("cpu", ResourceKind::Cpu),
    ("mem", ResourceKind::Memory),
    ("disk_read", ResourceKind::Disk),
    ("disk_write", ResourceKind::Disk),
    ("net_rx", ResourceKind::Network),
    ("net_tx", ResourceKind::Network),
];

/// Builds the scenario from the Alibaba pod list and node list.
pub fn build_cloud(
    pods: &Path,
    node_list: &Path,
    spec: &CloudSpec,
) -> Result<RuntimeScenario, LabError> {
    if spec.nodes == 0 || spec.users == 0 || spec.workloads == 0 {
        return Err(LabError::Unusable(
            "a cloud needs at least one node, one user and one workload".into(),
        ));
    }
    let positive = [
        spec.duration_s,
        spec.phase_s,
        spec.disk,
        spec.disk_heavy,
        spec.network,
    ];
    let arrival_ok = spec.arrival_s.is_finite() && spec.arrival_s >= 0.0;
    if !positive.iter().all(|v| v.is_finite() && *v > 0.0) || !arrival_ok {
        return Err(LabError::Unusable(format!(
            "duration, phase, disk and network must be positive and the arrival ≥ 0: {spec:?}"
        )));
    }
    if spec.arrival_s >= spec.duration_s {
        return Err(LabError::Unusable(format!(
            "the last user arrives at {} s, not before the run ends at {} s: nothing would be \
             measured after the arrival",
            spec.arrival_s, spec.duration_s
        )));
    }
    if spec.users > spec.workloads {
        return Err(LabError::Unusable(format!(
            "{} users cannot each own one of {} VMs: give at least as many VMs as users",
            spec.users, spec.workloads
        )));
    }
    for (path, what) in [(pods, "pod list"), (node_list, "node list")] {
        if !path.is_file() {
            return Err(LabError::Unusable(format!(
                "{}: no such file (the Alibaba GPU 2023 {what})",
                path.display()
            )));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let nodes = draw_nodes(&read_machines(node_list, Format::ALIBABA)?, spec, &mut rng)?;
    let sizes = draw_sizes(pods, spec, &mut rng)?;
    let users: Vec<RuntimeUser> = (1..=spec.users)
        .map(|u| RuntimeUser {
            name: format!("u{u:02}"),
            quota: None,
        })
        .collect();
    let owners = draw_owners(spec, &mut rng);
    let mut load = vec![0.0; nodes.len()];
    let workloads = sizes
        .into_iter()
        .zip(owners)
        .enumerate()
        .map(|(i, ((cpu, mem), owner))| {
            let node = least_loaded(&nodes, &load);
            load[node] += cpu;
            let arriving = owner + 1 == spec.users;
            let disk_heavy = rng.gen_bool(1.0 / 3.0);
            RuntimeWorkload {
                name: format!("vm{:03}", i + 1),
                owner,
                node,
                size: vec![cpu, mem, 0.0, 0.0, 0.0, 0.0],
                demand: phases(spec, cpu, mem, disk_heavy, &mut rng),
                start_s: if arriving { spec.arrival_s } else { 0.0 },
                stop_s: None,
            }
        })
        .collect();
    Ok(RuntimeScenario {
        name: format!(
            "{} nodes, {} users, {} VMs from the Alibaba GPU 2023 lists (seed {})",
            spec.nodes, spec.users, spec.workloads, spec.seed
        ),
        policy: RuntimePolicy::Heaviness,
        duration_s: spec.duration_s,
        baseline: true,
        profile: spec.profile.clone(),
        heaviness: HeavinessConfig::default(),
        priority: PriorityConfig::default(),
        resources: CLOUD_RESOURCES
            .iter()
            .map(|&(name, kind)| Resource {
                name: name.into(),
                kind,
            })
            .collect(),
        nodes,
        users,
        workloads,
    })
}

/// `spec.nodes` nodes drawn uniformly from the node list's nodes.
fn draw_nodes(
    catalogue: &MachineCatalogue,
    spec: &CloudSpec,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<RuntimeNode>, LabError> {
    let all: Vec<&fairshare_core::model::NodeType> = catalogue
        .types
        .iter()
        .flat_map(|t| std::iter::repeat_n(t, t.count as usize))
        .collect();
    if all.is_empty() {
        return Err(LabError::Unusable("the node list has no nodes".into()));
    }
    Ok((1..=spec.nodes)
        .map(|i| {
            let t = all[rng.gen_range(0..all.len())];
            RuntimeNode {
                name: format!("n{i:02}"),
                supply: vec![
                    t.capacity[0],
                    t.capacity[1] * MIB,
                    spec.disk,
                    spec.disk,
                    spec.network,
                    spec.network,
                ],
                speed: 1.0,
            }
        })
        .collect())
}

/// `spec.workloads` (cores, memory bytes) drawn uniformly from the pods asking for both.
fn draw_sizes(
    pods: &Path,
    spec: &CloudSpec,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(f64, f64)>, LabError> {
    let source = open(
        &[pods.to_path_buf()],
        Some(Format::ALIBABA),
        &ReadOptions::default(),
    )?;
    let (cpu, mem) = (column(&*source, "cpu")?, column(&*source, "mem")?);
    let mut sizes = Vec::new();
    for task in source {
        let task = task?;
        if task.demand[cpu] > 0.0 && task.demand[mem] > 0.0 {
            sizes.push((task.demand[cpu], task.demand[mem] * MIB));
        }
    }
    if sizes.is_empty() {
        return Err(LabError::Unusable(format!(
            "{}: no pod asks for both CPU and memory",
            pods.display()
        )));
    }
    Ok((0..spec.workloads)
        .map(|_| sizes[rng.gen_range(0..sizes.len())])
        .collect())
}

/// The position of resource `name` in the trace's vectors.
fn column(source: &dyn TaskSource, name: &str) -> Result<usize, LabError> {
    source
        .resources()
        .iter()
        .position(|r| r == name)
        .ok_or_else(|| LabError::Unusable(format!("the pod list has no {name} column")))
}

/// Each workload's owner, drawn with weights 1/k; every user owns at least one when there are
/// at least as many workloads as users.
fn draw_owners(spec: &CloudSpec, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let weights: Vec<f64> = (1..=spec.users).map(|k| 1.0 / k as f64).collect();
    let total: f64 = weights.iter().sum();
    let mut owners: Vec<usize> = (0..spec.users.min(spec.workloads)).collect();
    while owners.len() < spec.workloads {
        let mut x = rng.gen::<f64>() * total;
        let owner = weights
            .iter()
            .position(|w| {
                x -= w;
                x < 0.0
            })
            .unwrap_or(spec.users - 1);
        owners.push(owner);
    }
    owners.shuffle(rng);
    owners
}

/// The node with the fewest VCPUs per core so far (the first of equals).
fn least_loaded(nodes: &[RuntimeNode], load: &[f64]) -> usize {
    (0..nodes.len())
        .min_by(|&a, &b| (load[a] / nodes[a].supply[0]).total_cmp(&(load[b] / nodes[b].supply[0])))
        .expect("at least one node")
}

/// A VM's demand over the run: busy and quiet phases of exponential length.
fn phases(spec: &CloudSpec, cpu: f64, mem: f64, disk_heavy: bool, rng: &mut ChaCha8Rng) -> Demand {
    let length = Exp::new(1.0 / spec.phase_s).expect("a positive mean phase");
    let disk = if disk_heavy {
        spec.disk_heavy
    } else {
        spec.disk_heavy / 50.0
    };
    let mut busy = rng.gen_bool(0.5);
    let mut at = 0.0;
    let mut steps = Vec::new();
    while at < spec.duration_s {
        let scale = if busy { 1.0 } else { 0.1 };
        steps.push((
            at,
            vec![cpu * scale, 0.6 * mem, disk * scale, disk * scale, 1e6, 1e6],
        ));
        at += length.sample(rng).max(1.0);
        busy = !busy;
    }
    Demand { steps }
}

/// How one policy did over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyOutcome {
    /// The policy.
    pub policy: RuntimePolicy,
    /// Per interval: the CPU users were owed and did not get, as a fraction of the cloud's.
    pub cpu_shortfall: Vec<f64>,
    /// The same for disk writes.
    pub disk_shortfall: Vec<f64>,
    /// Per interval: the least fraction of what they were owed any user got on CPU.
    pub cpu_worst: Vec<f64>,
    /// Per interval from the arrival: the fraction of the CPU they were owed the arriving user
    /// got.
    pub arrival_ratio: Vec<f64>,
    /// Intervals after the arrival until the arriving user got at least 90 % of the CPU they
    /// were owed for six intervals in a row (a minute at μ = 10 s), if they did.
    pub convergence: Option<u32>,
}

/// Runs `scenario` under `policy` and measures it against the users' entitlements; the last
/// user is the one arriving at `arrival_s`, as [`build_cloud`] makes it.
pub fn measure(
    scenario: &RuntimeScenario,
    policy: RuntimePolicy,
    arrival_s: f64,
) -> Result<PolicyOutcome, LabError> {
    measure_observed(scenario, policy, arrival_s, &mut |_| {})
}

/// [`measure`], telling `progress` the simulated seconds after every interval.
pub fn measure_observed(
    scenario: &RuntimeScenario,
    policy: RuntimePolicy,
    arrival_s: f64,
    progress: &mut dyn FnMut(f64),
) -> Result<PolicyOutcome, LabError> {
    if scenario.users.is_empty() {
        return Err(LabError::Unusable(
            "a cloud without users has nothing to measure".into(),
        ));
    }
    let cpu = resource(scenario, "cpu")?;
    let disk = resource(scenario, "disk_write")?;
    let arriving = scenario.users.len() - 1;
    let arrival = (arrival_s / scenario.heaviness.update_interval_s).floor() as u32 + 1;
    let mut outcome = PolicyOutcome {
        policy,
        cpu_shortfall: Vec::new(),
        disk_shortfall: Vec::new(),
        cpu_worst: Vec::new(),
        arrival_ratio: Vec::new(),
        convergence: None,
    };
    let mut streak = 0;
    let interval_s = scenario.heaviness.update_interval_s;
    run_observed(scenario, policy, &mut |tick| {
        progress(f64::from(tick.index) * interval_s);
        let cpu = Owed::of(scenario, tick, cpu);
        outcome.cpu_shortfall.push(cpu.shortfall());
        outcome.cpu_worst.push(cpu.worst());
        outcome
            .disk_shortfall
            .push(Owed::of(scenario, tick, disk).shortfall());
        if tick.index >= arrival && cpu.owed[arriving] > 0.0 {
            let ratio = cpu.delivered[arriving] / cpu.owed[arriving];
            outcome.arrival_ratio.push(ratio);
            streak = if ratio >= 0.9 { streak + 1 } else { 0 };
            if streak == 6 && outcome.convergence.is_none() {
                outcome.convergence = Some(tick.index - arrival - 5);
            }
        }
    })
    .map_err(|e| LabError::Run {
        policy: policy.name().into(),
        source: Box::new(e),
    })?;
    Ok(outcome)
}

/// The position of resource `name`.
fn resource(scenario: &RuntimeScenario, name: &str) -> Result<usize, LabError> {
    scenario
        .resources
        .iter()
        .position(|r| r.name == name)
        .ok_or_else(|| LabError::Unusable(format!("the scenario has no resource {name}")))
}

/// What each user was owed of one resource in one interval, and what they got.
struct Owed {
    /// The cloud's supply.
    supply: f64,
    /// Per user: the smaller of their equal part and what they wanted.
    owed: Vec<f64>,
    /// Per user: what their workloads got.
    delivered: Vec<f64>,
}

impl Owed {
    /// Resource `r` in the interval `tick`.
    fn of(scenario: &RuntimeScenario, tick: &Tick, r: usize) -> Owed {
        let n = scenario.users.len();
        let (mut wanted, mut delivered) = (vec![0.0; n], vec![0.0; n]);
        let mut running = vec![false; n];
        for (i, w) in scenario.workloads.iter().enumerate() {
            if tick.active[i] {
                running[w.owner] = true;
                wanted[w.owner] += tick.demand[i][r];
                delivered[w.owner] += tick.allocation[i][r];
            }
        }
        let supply: f64 = scenario.nodes.iter().map(|node| node.supply[r]).sum();
        let part = supply / running.iter().filter(|&&on| on).count().max(1) as f64;
        let owed = wanted.iter().map(|&w| w.min(part)).collect();
        Owed {
            supply,
            owed,
            delivered,
        }
    }

    /// What users were owed and did not get, as a fraction of the supply.
    fn shortfall(&self) -> f64 {
        let missing: f64 = self
            .owed
            .iter()
            .zip(&self.delivered)
            .map(|(o, d)| (o - d).max(0.0))
            .sum();
        if self.supply > 0.0 {
            missing / self.supply
        } else {
            0.0
        }
    }

    /// The least fraction of what they were owed any owed user got (1 when nobody was owed).
    fn worst(&self) -> f64 {
        self.owed
            .iter()
            .zip(&self.delivered)
            .filter(|(o, _)| **o > 0.0)
            .map(|(o, d)| (d / o).min(1.0))
            .fold(1.0, f64::min)
    }
}

/// The experiment built once from the two lists, then run under each policy and gathered into
/// a [`CloudSummary`]: what `fairshare cloud` does.
#[derive(Debug, Clone)]
pub struct CloudExperiment {
    /// The pod list the VM sizes were drawn from.
    pub pods: PathBuf,
    /// The node list the nodes were drawn from.
    pub node_list: PathBuf,
    /// The shape it was built to.
    pub spec: CloudSpec,
    /// The cloud, as [`build_cloud`] drew it.
    pub scenario: RuntimeScenario,
}

impl CloudExperiment {
    /// Draws the cloud from the Alibaba pod list and node list.
    pub fn new(pods: &Path, node_list: &Path, spec: CloudSpec) -> Result<Self, LabError> {
        let scenario = build_cloud(pods, node_list, &spec)?;
        Ok(CloudExperiment {
            pods: pods.to_path_buf(),
            node_list: node_list.to_path_buf(),
            spec,
            scenario,
        })
    }

    /// Runs the cloud under `policy`, telling `progress` the simulated seconds as it goes.
    pub fn run(
        &self,
        policy: RuntimePolicy,
        progress: &mut dyn FnMut(f64),
    ) -> Result<PolicyOutcome, LabError> {
        measure_observed(&self.scenario, policy, self.spec.arrival_s, progress)
    }

    /// How many VMs the arriving (last) user owns.
    pub fn arriving_workloads(&self) -> usize {
        let last = self.scenario.users.len().saturating_sub(1);
        (self.scenario.workloads.iter())
            .filter(|w| w.owner == last)
            .count()
    }

    /// The document of the runs, in the order given.
    pub fn summary(&self, outcomes: Vec<PolicyOutcome>) -> CloudSummary {
        let s = &self.scenario;
        let interval_s = s.heaviness.update_interval_s;
        let before = ((self.spec.arrival_s / interval_s).floor() as usize).min(s.ticks() as usize);
        let supply = |r: usize| s.nodes.iter().map(|n| n.supply[r]).sum::<f64>();
        CloudSummary {
            pods: self.pods.display().to_string(),
            node_list: self.node_list.display().to_string(),
            scenario: s.name.clone(),
            nodes: self.spec.nodes,
            users: self.spec.users,
            workloads: self.spec.workloads,
            seed: self.spec.seed,
            duration_s: self.spec.duration_s,
            arrival_s: self.spec.arrival_s,
            phase_s: self.spec.phase_s,
            disk_bytes_per_s: self.spec.disk,
            disk_heavy_bytes_per_s: self.spec.disk_heavy,
            network_bytes_per_s: self.spec.network,
            profile: self.spec.profile.name.clone(),
            metric: s.heaviness.metric.name().to_string(),
            interval_s,
            intervals: s.ticks(),
            cores: supply(0),
            memory_bytes: supply(1),
            vcpus: s.workloads.iter().map(|w| w.size[0]).sum(),
            arriving_workloads: self.arriving_workloads(),
            policies: outcomes
                .into_iter()
                .map(|o| CloudPolicy::of(o, before))
                .collect(),
        }
    }
}

/// The output of `fairshare cloud` (its JSON starts with `schema_version`): the cloud drawn
/// from the Alibaba lists and, per policy, how far users were from what they were owed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct CloudSummary {
    /// The pod list the VM sizes were drawn from.
    pub pods: String,
    /// The node list the nodes were drawn from.
    pub node_list: String,
    /// The cloud in words.
    pub scenario: String,
    /// Nodes drawn.
    pub nodes: usize,
    /// Users.
    pub users: usize,
    /// VMs drawn.
    pub workloads: usize,
    /// The seed of every draw.
    pub seed: u64,
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// When the last user's VMs start, seconds.
    pub arrival_s: f64,
    /// Mean length of a busy or quiet phase, seconds.
    pub phase_s: f64,
    /// A node's disk bandwidth each way, bytes per second.
    pub disk_bytes_per_s: f64,
    /// A disk-heavy VM's demand when busy, bytes per second.
    pub disk_heavy_bytes_per_s: f64,
    /// A node's network bandwidth each way, bytes per second.
    pub network_bytes_per_s: f64,
    /// The knob profile the service set.
    pub profile: String,
    /// The heaviness metric of the `heaviness` policy.
    pub metric: String,
    /// The interval μ, seconds.
    pub interval_s: f64,
    /// Intervals simulated.
    pub intervals: u32,
    /// The nodes' cores, summed.
    pub cores: f64,
    /// The nodes' memory, summed, bytes.
    pub memory_bytes: f64,
    /// The VMs' VCPUs, summed.
    pub vcpus: f64,
    /// VMs of the arriving (last) user.
    pub arriving_workloads: usize,
    /// One entry per policy, in the order run.
    pub policies: Vec<CloudPolicy>,
}

/// How one policy did, as means over the run and interval by interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloudPolicy {
    /// The runtime policy.
    pub policy: String,
    /// The mean of `cpu_shortfall`.
    pub cpu_shortfall_mean: f64,
    /// Its mean over the intervals before the arrival (`null` when there are none).
    pub cpu_shortfall_before: Option<f64>,
    /// Its mean over the intervals from the arrival (`null` when there are none).
    pub cpu_shortfall_after: Option<f64>,
    /// The mean of `cpu_worst`.
    pub cpu_worst_mean: f64,
    /// The mean of `disk_shortfall`.
    pub disk_shortfall_mean: f64,
    /// The mean of `arrival_ratio` (`null` when the arriving user was never owed CPU).
    pub arrival_ratio_mean: Option<f64>,
    /// Intervals after the arrival until the arriving user got at least 90 % of the CPU they
    /// were owed for six intervals in a row (`null`: never).
    pub settles_after: Option<u32>,
    /// Per interval: the CPU users were owed and did not get, as a fraction of the cloud's.
    pub cpu_shortfall: Vec<f64>,
    /// The same for disk writes.
    pub disk_shortfall: Vec<f64>,
    /// Per interval: the least fraction of what they were owed any user got on CPU.
    pub cpu_worst: Vec<f64>,
    /// Per interval from the arrival: the fraction of the CPU they were owed the arriving user
    /// got.
    pub arrival_ratio: Vec<f64>,
}

impl CloudPolicy {
    /// The entry of `o`, whose first `before` intervals came before the arrival.
    fn of(o: PolicyOutcome, before: usize) -> CloudPolicy {
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let before = before.min(o.cpu_shortfall.len());
        CloudPolicy {
            policy: o.policy.name().to_string(),
            cpu_shortfall_mean: mean(&o.cpu_shortfall).unwrap_or(0.0),
            cpu_shortfall_before: mean(&o.cpu_shortfall[..before]),
            cpu_shortfall_after: mean(&o.cpu_shortfall[before..]),
            cpu_worst_mean: mean(&o.cpu_worst).unwrap_or(1.0),
            disk_shortfall_mean: mean(&o.disk_shortfall).unwrap_or(0.0),
            arrival_ratio_mean: mean(&o.arrival_ratio),
            settles_after: o.convergence,
            cpu_shortfall: o.cpu_shortfall,
            disk_shortfall: o.disk_shortfall,
            cpu_worst: o.cpu_worst,
            arrival_ratio: o.arrival_ratio,
        }
    }
}
