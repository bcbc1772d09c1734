//! A recorded run: every interval's shares, knobs and heaviness, per user and per workload, as
//! reports draw them and `--json` writes them.

use super::engine::{RuntimePolicy, Tick};
use super::RuntimeScenario;
use fairshare_core::heaviness::cloud_supply;
use fairshare_core::heaviness::knobs::KnobValues;
use serde::{Deserialize, Serialize};

/// One run of a runtime scenario under one policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeRun {
    /// The scenario.
    pub scenario: String,
    /// The policy: `off`, `heaviness`, `drf-heaviness` or `asset-heaviness`.
    pub policy: String,
    /// The heaviness function, when the service ran.
    pub metric: Option<String>,
    /// The knob profile.
    pub profile: String,
    /// μ, seconds.
    pub interval_s: f64,
    /// The number of intervals.
    pub ticks: u32,
    /// The resources.
    pub resources: Vec<String>,
    /// The nodes.
    pub nodes: Vec<String>,
    /// Per user.
    pub users: Vec<UserSeries>,
    /// Per workload.
    pub workloads: Vec<WorkloadSeries>,
}

/// A scenario run under its policy, with the run without the service beside it when the
/// scenario asks for a baseline: what `fairshare simulate` writes and reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Its JSON starts with `schema_version`: `crate::summary` implements serde through these derives.
#[serde(remote = "Self")]
pub struct RuntimeComparison {
    /// The run under the scenario's policy.
    pub service: RuntimeRun,
    /// The run with policy `off` (every weight equal), if made.
    pub baseline: Option<RuntimeRun>,
}

/// A user over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserSeries {
    /// The user.
    pub name: String,
    /// `share[r][k]`: the fraction of the cloud's supply of resource r the user's workloads got
    /// in interval k + 1 (CPU counted in reference CPUs).
    pub share: Vec<Vec<f64>>,
    /// `heaviness[k]`: h_u at the end of interval k + 1 (`None` without the service, or while
    /// the user runs nothing).
    pub heaviness: Vec<Option<f64>>,
}

/// A workload over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSeries {
    /// The workload.
    pub name: String,
    /// Its owner.
    pub owner: String,
    /// Its node.
    pub node: String,
    /// `share[r][k]`: the fraction of its node's supply of resource r it got in interval k + 1.
    pub share: Vec<Vec<f64>>,
    /// `knobs[k]`: the knob values it ran under in interval k + 1 (`None`: not set by the
    /// service, so it ran at the neutral priority's weights without memory protection).
    pub knobs: Vec<Option<KnobValues>>,
    /// `priority_input[k]`: its h_p at the end of interval k + 1.
    pub priority_input: Vec<Option<f64>>,
}

impl RuntimeRun {
    /// The position of a resource by name.
    pub fn resource(&self, name: &str) -> Option<usize> {
        self.resources.iter().position(|r| r == name)
    }

    /// The mean of `series` over intervals `from..=to` (1-based, inclusive); the window must
    /// lie in the series (`1 ≤ from ≤ to ≤ len`), as [`RuntimeRun::steady`]'s does.
    pub fn mean(series: &[f64], from: u32, to: u32) -> f64 {
        let window = &series[(from as usize - 1)..(to as usize)];
        window.iter().sum::<f64>() / window.len() as f64
    }

    /// The intervals counted as steady state: the last quarter of the run (rounded down, at
    /// least the last interval).
    pub fn steady(&self) -> (u32, u32) {
        (self.ticks + 1 - (self.ticks / 4).max(1), self.ticks)
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
