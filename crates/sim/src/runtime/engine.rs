//! The interval loop: divide every node by the current knobs, let the service measure, compute
//! heaviness and set the knobs of the next interval.

use super::result::{RuntimeComparison, RuntimeRun, UserSeries, WorkloadSeries};
use super::RuntimeScenario;
use fairshare_core::alloc::weighted::{protected_max_min, weighted_max_min};
use fairshare_core::error::Invalid;
use fairshare_core::heaviness::knobs::{priority, KnobValues, PriorityMemory};
use fairshare_core::heaviness::{
    cloud_supply, heaviness, smooth, HeavinessConfig, HeavinessError, Metric, ResourceKind,
    UserHeaviness, Workload,
};
use fairshare_core::policy::{Engine, PolicyKind, PolicySpec};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// At most this many intervals in one run.
pub const MAX_TICKS: u32 = 10_000_000;
/// At most this many workload-intervals recorded by [`run`] (a run's document and report stay
/// within a few hundred megabytes); [`run_observed`] has no such limit.
pub const MAX_RECORDED: u64 = 2_000_000;

/// What the fairness service does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimePolicy {
    /// No service: every weight equal, no memory protection.
    Off,
    /// Heaviness with the scenario's metric (greediness unless `[heaviness] metric` says else).
    Heaviness,
    /// Heaviness with DRF as the heaviness function.
    DrfHeaviness,
    /// Heaviness with asset fairness as the heaviness function.
    AssetHeaviness,
}

impl RuntimePolicy {
    /// Every policy, as written in a scenario or on the command line.
    pub const ALL: [RuntimePolicy; 4] = [
        RuntimePolicy::Off,
        RuntimePolicy::Heaviness,
        RuntimePolicy::DrfHeaviness,
        RuntimePolicy::AssetHeaviness,
    ];

    /// The name as written.
    pub fn name(self) -> &'static str {
        match self {
            RuntimePolicy::Off => "off",
            RuntimePolicy::Heaviness => "heaviness",
            RuntimePolicy::DrfHeaviness => "drf-heaviness",
            RuntimePolicy::AssetHeaviness => "asset-heaviness",
        }
    }

    /// The metric the policy computes with, given the scenario's, or `None` when off.
    pub fn metric(self, configured: Metric) -> Option<Metric> {
        match self {
            RuntimePolicy::Off => None,
            RuntimePolicy::Heaviness => Some(configured),
            RuntimePolicy::DrfHeaviness => Some(Metric::Drf),
            RuntimePolicy::AssetHeaviness => Some(Metric::Asset),
        }
    }
}

impl fmt::Display for RuntimePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RuntimePolicy {
    type Err = Invalid;

    /// A runtime policy of the policy registry (its names, help and errors are the registry's).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let spec = PolicySpec::parse_for(s, Engine::Runtime).map_err(|e| e.to_string())?;
        let PolicyKind::Runtime(name) = spec.kind else {
            return Err(Invalid(format!(
                "{s}: the registry and the runtime engine disagree"
            )));
        };
        (RuntimePolicy::ALL.into_iter())
            .find(|p| p.name() == name)
            .ok_or_else(|| Invalid(format!("{s}: the registry and the runtime engine disagree")))
    }
}

/// One interval, as [`run_observed`] hands it over.
#[derive(Debug)]
pub struct Tick<'a> {
    /// The interval, from 1; it covers `[(index − 1)·μ, index·μ)`.
    pub index: u32,
    /// Whether each workload ran.
    pub active: &'a [bool],
    /// What each running workload wanted per resource.
    pub demand: &'a [Vec<f64>],
    /// What each running workload got per resource.
    pub allocation: &'a [Vec<f64>],
    /// The knob values each workload ran under (`None`: not set by the service; it ran at the
    /// neutral priority's weights without memory protection).
    pub knobs: &'a [Option<KnobValues>],
    /// Each user's heaviness as the service computed it at the end of the interval (`None`
    /// without the service).
    pub users: Option<&'a [UserHeaviness]>,
    /// Each running workload's priority input h_p at the end of the interval.
    pub priority_input: &'a [Option<f64>],
}

/// Runs the scenario under `policy` and records every interval.
pub fn run(
    scenario: &RuntimeScenario,
    policy: RuntimePolicy,
) -> Result<RuntimeRun, HeavinessError> {
    let recorded = u64::from(scenario.ticks()) * scenario.workloads.len() as u64;
    if recorded > MAX_RECORDED {
        return Err(HeavinessError::Config(format!(
            "{} intervals × {} workloads = {recorded} records, more than the {MAX_RECORDED} a \
             recorded run keeps; shorten the run or lengthen update_interval_s",
            scenario.ticks(),
            scenario.workloads.len()
        )));
    }
    let mut recorder = Recorder::new(scenario, policy);
    run_observed(scenario, policy, &mut |tick| recorder.record(tick))?;
    Ok(recorder.finish())
}

/// Runs the scenario under its policy and, when it asks for a baseline and the policy is not
/// already `off`, without the service too.
pub fn compare(scenario: &RuntimeScenario) -> Result<RuntimeComparison, HeavinessError> {
    let service = run(scenario, scenario.policy)?;
    let baseline = (scenario.baseline && scenario.policy != RuntimePolicy::Off)
        .then(|| run(scenario, RuntimePolicy::Off))
        .transpose()?;
    Ok(RuntimeComparison { service, baseline })
}

/// Runs the scenario under `policy`, handing every interval to `observe`.
pub fn run_observed(
    scenario: &RuntimeScenario,
    policy: RuntimePolicy,
    observe: &mut dyn FnMut(&Tick),
) -> Result<(), HeavinessError> {
    let ticks = scenario.ticks();
    if ticks > MAX_TICKS {
        return Err(HeavinessError::Config(format!(
            "{ticks} intervals, more than the {MAX_TICKS} a run may have"
        )));
    }
    let mut service = policy
        .metric(scenario.heaviness.metric)
        .map(|metric| Service::new(scenario, metric));
    let n = scenario.workloads.len();
    let mut knobs: Vec<Option<KnobValues>> = vec![None; n];
    for index in 1..=ticks {
        let t = f64::from(index - 1) * scenario.heaviness.update_interval_s;
        let active: Vec<bool> = scenario.workloads.iter().map(|w| w.runs_at(t)).collect();
        let demand: Vec<Vec<f64>> = scenario
            .workloads
            .iter()
            .zip(&active)
            .map(|(w, &on)| match (on, w.demand.at(t)) {
                (true, Some(d)) => d.to_vec(),
                _ => vec![0.0; scenario.resources.len()],
            })
            .collect();
        let allocation = divide(scenario, &active, &demand, &knobs);
        let (next, users, priority_input) = match service.as_mut() {
            Some(service) => {
                let outcome = service.round(&active, &allocation)?;
                (outcome.knobs, Some(outcome.users), outcome.priority_input)
            }
            None => (vec![None; n], None, vec![None; n]),
        };
        observe(&Tick {
            index,
            active: &active,
            demand: &demand,
            allocation: &allocation,
            knobs: &knobs,
            users: users.as_deref(),
            priority_input: &priority_input,
        });
        knobs = next;
    }
    Ok(())
}

/// Divides every resource of every node among the workloads running there.
fn divide(
    scenario: &RuntimeScenario,
    active: &[bool],
    demand: &[Vec<f64>],
    knobs: &[Option<KnobValues>],
) -> Vec<Vec<f64>> {
    let m = scenario.resources.len();
    let neutral = scenario.profile.values(0, None);
    let mut allocation = vec![vec![0.0; m]; scenario.workloads.len()];
    let mut on_node: Vec<Vec<usize>> = vec![Vec::new(); scenario.nodes.len()];
    for (i, w) in scenario.workloads.iter().enumerate() {
        if active[i] {
            on_node[w.node].push(i);
        }
    }
    for (node, here) in scenario.nodes.iter().zip(&on_node) {
        for (r, resource) in scenario.resources.iter().enumerate() {
            let wanted: Vec<f64> = here.iter().map(|&i| demand[i][r]).collect();
            let weights: Vec<f64> = here
                .iter()
                .map(|&i| knob_of(scenario, resource.kind, knobs[i].as_ref(), &neutral))
                .collect();
            let shares = if resource.kind == ResourceKind::Memory {
                protected_max_min(node.supply[r], &wanted, &weights)
            } else {
                weighted_max_min(node.supply[r], &wanted, &weights)
            };
            for (&i, share) in here.iter().zip(shares) {
                allocation[i][r] = share;
            }
        }
    }
    allocation
}

/// The weight (or, for memory, the protected bytes) a workload's knobs give on a resource. A
/// workload the service has not set yet (just started, or no service) runs at the `neutral`
/// knobs of priority 0 without memory protection: among equals, as the kernel's defaults are;
/// among workloads the service has set, neither favoured nor held back.
fn knob_of(
    scenario: &RuntimeScenario,
    kind: ResourceKind,
    knobs: Option<&KnobValues>,
    neutral: &KnobValues,
) -> f64 {
    let k = match knobs {
        Some(k) => k,
        None if kind == ResourceKind::Memory => return 0.0,
        None => neutral,
    };
    match kind {
        ResourceKind::Cpu => k.cpu as f64,
        ResourceKind::Disk => k.io as f64,
        ResourceKind::Network => k.network.map_or(1.0, |c| c as f64),
        ResourceKind::Memory => k
            .memory
            .map_or(0.0, |m| (m * scenario.profile.memory_unit) as f64),
        ResourceKind::Other => 1.0,
    }
}

/// The fairness service's state between rounds.
struct Service<'a> {
    scenario: &'a RuntimeScenario,
    config: HeavinessConfig,
    /// Per workload: `None` unseen; `Some(None)` seen once (no measured interval yet);
    /// `Some(Some(d))` its smoothed demand.
    smoothed: Vec<Option<Option<Vec<f64>>>>,
    memory: Vec<Option<PriorityMemory>>,
}

/// What one round of the service produced.
struct Outcome {
    knobs: Vec<Option<KnobValues>>,
    users: Vec<UserHeaviness>,
    priority_input: Vec<Option<f64>>,
}

impl<'a> Service<'a> {
    fn new(scenario: &'a RuntimeScenario, metric: Metric) -> Service<'a> {
        let n = scenario.workloads.len();
        Service {
            scenario,
            config: HeavinessConfig {
                metric,
                ..scenario.heaviness.clone()
            },
            smoothed: vec![None; n],
            memory: vec![None; n],
        }
    }

    /// Measures the interval, computes heaviness and the knobs of the next interval.
    fn round(
        &mut self,
        active: &[bool],
        allocation: &[Vec<f64>],
    ) -> Result<Outcome, HeavinessError> {
        let s = self.scenario;
        let running: Vec<usize> = (0..active.len()).filter(|&i| active[i]).collect();
        for i in (0..active.len()).filter(|&i| !active[i]) {
            self.smoothed[i] = None;
            self.memory[i] = None;
        }
        let decay = self.config.resource_decay_factor;
        let workloads: Vec<Workload> = running
            .iter()
            .map(|&i| {
                let spec = &s.workloads[i];
                let usage = self.smoothed[i]
                    .as_ref()
                    .map(|previous| smooth(previous.as_deref(), &allocation[i], decay));
                self.smoothed[i] = Some(usage.clone());
                Workload {
                    owner: spec.owner,
                    node: spec.node,
                    size: spec.size.clone(),
                    usage,
                }
            })
            .collect();
        let cloud = s.cloud(workloads);
        let h = heaviness(&cloud, &self.config)?;
        let memory_r = s
            .resources
            .iter()
            .position(|r| r.kind == ResourceKind::Memory);
        let mut knobs = vec![None; active.len()];
        let mut priority_input = vec![None; active.len()];
        for (&i, w) in running.iter().zip(&h.workloads) {
            let (p, memory) = priority(w.priority_input, self.memory[i], &s.priority);
            self.memory[i] = Some(memory);
            let bytes = memory_r
                .map(|r| s.workloads[i].size[r] as u64)
                .filter(|&b| b > 0);
            knobs[i] = Some(s.profile.values(p, bytes));
            priority_input[i] = Some(w.priority_input);
        }
        Ok(Outcome {
            knobs,
            users: h.users,
            priority_input,
        })
    }
}

/// Records the intervals of a run into a [`RuntimeRun`].
pub(super) struct Recorder<'a> {
    scenario: &'a RuntimeScenario,
    run: RuntimeRun,
    cloud: Vec<f64>,
}

impl<'a> Recorder<'a> {
    /// An empty record of `scenario` under `policy`.
    pub(super) fn new(scenario: &'a RuntimeScenario, policy: RuntimePolicy) -> Recorder<'a> {
        let m = scenario.resources.len();
        let ticks = scenario.ticks() as usize;
        let series = || vec![Vec::with_capacity(ticks); m];
        let cloud = cloud_supply(&scenario.cloud(Vec::new()));
        let run = RuntimeRun {
            scenario: scenario.name.clone(),
            policy: policy.name().to_string(),
            metric: policy
                .metric(scenario.heaviness.metric)
                .map(|m| m.name().to_string()),
            profile: scenario.profile.name.clone(),
            interval_s: scenario.heaviness.update_interval_s,
            ticks: scenario.ticks(),
            resources: scenario.resources.iter().map(|r| r.name.clone()).collect(),
            nodes: scenario.nodes.iter().map(|n| n.name.clone()).collect(),
            users: scenario
                .users
                .iter()
                .map(|u| UserSeries {
                    name: u.name.clone(),
                    share: series(),
                    heaviness: Vec::with_capacity(ticks),
                })
                .collect(),
            workloads: scenario
                .workloads
                .iter()
                .map(|w| WorkloadSeries {
                    name: w.name.clone(),
                    owner: scenario.users[w.owner].name.clone(),
                    node: scenario.nodes[w.node].name.clone(),
                    share: series(),
                    knobs: Vec::with_capacity(ticks),
                    priority_input: Vec::with_capacity(ticks),
                })
                .collect(),
        };
        Recorder {
            scenario,
            run,
            cloud,
        }
    }

    /// Records one interval.
    pub(super) fn record(&mut self, tick: &Tick) {
        let s = self.scenario;
        let m = s.resources.len();
        let mut user_sum = vec![vec![0.0; m]; s.users.len()];
        for (i, (spec, series)) in s.workloads.iter().zip(&mut self.run.workloads).enumerate() {
            let node = &s.nodes[spec.node];
            let sum = &mut user_sum[spec.owner];
            for (r, resource) in s.resources.iter().enumerate() {
                let got = tick.allocation[i][r];
                series.share[r].push(fraction(got, node.supply[r]));
                sum[r] += resource.kind.at_speed(got, node.speed);
            }
            series.knobs.push(tick.knobs[i]);
            series.priority_input.push(tick.priority_input[i]);
        }
        for (u, series) in self.run.users.iter_mut().enumerate() {
            for ((share, &got), &supply) in
                series.share.iter_mut().zip(&user_sum[u]).zip(&self.cloud)
            {
                share.push(fraction(got, supply));
            }
            let h = tick
                .users
                .and_then(|users| users[u].active.then_some(users[u].heaviness));
            series.heaviness.push(h);
        }
    }

    /// The finished record.
    pub(super) fn finish(self) -> RuntimeRun {
        self.run
    }
}

/// `part / whole`, 0 when the whole is 0.
fn fraction(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}
