//! One priority cycle as a pure function: the registry, what each workload remembers and the
//! usage counted since the last cycle go in; every user's and workload's heaviness, priority
//! and knob values come out. The metric and the knob mapping are the core's; this module only
//! names things by their ids and keeps the memory between cycles.

use crate::model::{Explanation, Knobs, Priorities, UserPriority, WorkloadPriority};
use fairshare_core::heaviness::knobs::{priority, KnobProfile, PriorityConfig, PriorityMemory};
use fairshare_core::heaviness::{
    heaviness, smooth, Cloud, HeavinessConfig, HeavinessError, Node, Resource, ResourceKind, User,
    Workload,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What the cycle computes with, fixed for the daemon's life.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The resources, in the order of every vector.
    pub resources: Vec<Resource>,
    /// The metric.
    pub heaviness: HeavinessConfig,
    /// Heaviness to priority.
    pub priority: PriorityConfig,
    /// Priority to knob values.
    pub profile: KnobProfile,
}

/// A registered node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeEntry {
    /// Supply per resource.
    pub supply: Vec<f64>,
    /// Speed factor.
    pub speed: f64,
}

/// A registered workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadEntry {
    /// Its owner's id.
    pub owner: String,
    /// Its node's id.
    pub node: String,
    /// Virtual size per resource.
    pub size: Vec<f64>,
}

/// Everything registered, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    /// Nodes.
    pub nodes: BTreeMap<String, NodeEntry>,
    /// Users and their quotas.
    pub users: BTreeMap<String, Option<Vec<f64>>>,
    /// Workloads.
    pub workloads: BTreeMap<String, WorkloadEntry>,
}

/// What a workload remembers from one cycle to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadMemory {
    /// Its smoothed usage (§4.1); `None` until a report about it is counted.
    pub smoothed: Option<Vec<f64>>,
    /// Its priority's memory (§9.2); `None` before its first cycle.
    pub priority: Option<PriorityMemory>,
}

/// Every workload's memory, by id.
pub type Memory = BTreeMap<String, WorkloadMemory>;

/// The usage counted in one cycle: per workload, rates weighted by the seconds they cover.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    per_workload: HashMap<String, (Vec<f64>, f64)>,
}

impl Measured {
    /// Counts one sample of `rates` covering `seconds`.
    pub fn add(&mut self, workload: &str, rates: &[f64], seconds: f64) {
        let (sum, covered) = self
            .per_workload
            .entry(workload.to_string())
            .or_insert_with(|| (vec![0.0; rates.len()], 0.0));
        for (s, r) in sum.iter_mut().zip(rates) {
            *s += r * seconds;
        }
        *covered += seconds;
    }

    /// The workload's mean rate over what was counted, if anything was.
    pub fn mean(&self, workload: &str) -> Option<Vec<f64>> {
        let (sum, covered) = self.per_workload.get(workload)?;
        Some(sum.iter().map(|s| s / covered).collect())
    }
}

/// A user as a cycle left them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserRecord {
    /// Whether they owned a workload.
    pub active: bool,
    /// Their workloads' usage summed, per resource.
    pub usage: Vec<f64>,
    /// Their endowment, per resource.
    pub endowment: Vec<f64>,
    /// s(ε_u).
    pub entitlement: f64,
    /// Σ s(ε(v)).
    pub static_part: f64,
    /// Σ d(v).
    pub dynamic: f64,
    /// s(ε_u) − Σ s(ε(v)).
    pub unused_quota: f64,
    /// h_u.
    pub heaviness: f64,
    /// 1 for the lightest active user, 0 for an inactive one.
    pub rank: u64,
}

/// A cycle's answer, as stored and served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The cycle's number, from 1 (0: no cycle yet).
    pub cycle: u64,
    /// When it was computed, milliseconds since the Unix epoch.
    pub computed_at_ms: i64,
    /// The knob profile.
    pub profile: String,
    /// The resources' names.
    pub resources: Vec<String>,
    /// Every registered user.
    pub users: BTreeMap<String, UserRecord>,
    /// Every registered workload.
    pub workloads: BTreeMap<String, WorkloadPriority>,
}

/// The snapshot and memory a cycle produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// What the API serves.
    pub snapshot: Snapshot,
    /// What the next cycle starts from.
    pub memory: Memory,
}

/// Computes cycle `cycle` at `now_ms`.
pub fn compute(
    settings: &Settings,
    registry: &Registry,
    previous: &Memory,
    measured: &Measured,
    cycle: u64,
    now_ms: i64,
) -> Result<Outcome, HeavinessError> {
    let decay = settings.heaviness.resource_decay_factor;
    let mut memory = Memory::new();
    let cloud = cloud(settings, registry, |id| {
        let before = previous.get(id).and_then(|m| m.smoothed.as_deref());
        let smoothed = match measured.mean(id) {
            Some(raw) => Some(smooth(before, &raw, decay)),
            None => before.map(<[f64]>::to_vec),
        };
        memory.insert(
            id.to_string(),
            WorkloadMemory {
                smoothed: smoothed.clone(),
                priority: previous.get(id).and_then(|m| m.priority),
            },
        );
        smoothed
    });
    let h = if registry.nodes.is_empty() {
        None
    } else {
        Some(heaviness(&cloud, &settings.heaviness)?)
    };
    let mut snapshot = Snapshot {
        cycle,
        computed_at_ms: now_ms,
        profile: settings.profile.name.clone(),
        resources: settings.resources.iter().map(|r| r.name.clone()).collect(),
        ..Snapshot::default()
    };
    let Some(h) = h else {
        return Ok(Outcome { snapshot, memory });
    };
    for ((id, _), u) in registry.users.iter().zip(h.users) {
        snapshot.users.insert(id.clone(), user_record(u));
    }
    let memory_r = settings
        .resources
        .iter()
        .position(|r| r.kind == ResourceKind::Memory);
    for ((id, w), wh) in registry.workloads.iter().zip(&h.workloads) {
        let remembered = memory
            .get_mut(id)
            .expect("every workload has a memory entry");
        let (p, pm) = priority(wh.priority_input, remembered.priority, &settings.priority);
        remembered.priority = Some(pm);
        let bytes = memory_r.map(|r| w.size[r] as u64).filter(|&b| b > 0);
        snapshot.workloads.insert(
            id.clone(),
            WorkloadPriority {
                workload: id.clone(),
                owner: w.owner.clone(),
                node: w.node.clone(),
                heaviness: wh.heaviness,
                priority_input: wh.priority_input,
                measured: remembered.smoothed.is_some(),
                knobs: Knobs::from(settings.profile.values(p, bytes)),
            },
        );
    }
    Ok(Outcome { snapshot, memory })
}

/// The core's view of the registry; `usage` gives each workload's smoothed usage by id.
fn cloud(
    settings: &Settings,
    registry: &Registry,
    mut usage: impl FnMut(&str) -> Option<Vec<f64>>,
) -> Cloud {
    let node_index: HashMap<&str, usize> = registry
        .nodes
        .keys()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let user_index: HashMap<&str, usize> = registry
        .users
        .keys()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    Cloud {
        resources: settings.resources.clone(),
        nodes: registry
            .nodes
            .values()
            .map(|n| Node {
                supply: n.supply.clone(),
                speed: n.speed,
            })
            .collect(),
        users: registry
            .users
            .values()
            .map(|quota| User {
                quota: quota.clone(),
            })
            .collect(),
        workloads: registry
            .workloads
            .iter()
            .map(|(id, w)| Workload {
                owner: user_index[w.owner.as_str()],
                node: node_index[w.node.as_str()],
                size: w.size.clone(),
                usage: usage(id),
            })
            .collect(),
    }
}

fn user_record(u: fairshare_core::heaviness::UserHeaviness) -> UserRecord {
    UserRecord {
        active: u.active,
        usage: u.usage,
        endowment: u.endowment,
        entitlement: u.entitlement,
        static_part: u.static_part,
        dynamic: u.dynamic,
        unused_quota: u.unused_quota,
        heaviness: u.heaviness,
        rank: u.rank as u64,
    }
}

impl Snapshot {
    /// The ranking, for the whole cloud or one node.
    pub fn priorities(&self, node: Option<&str>) -> Priorities {
        let workloads: Vec<WorkloadPriority> = self
            .workloads
            .values()
            .filter(|w| node.is_none_or(|n| w.node == n))
            .cloned()
            .collect();
        let mut users: Vec<UserPriority> = self
            .users
            .iter()
            .filter(|(id, u)| match node {
                None => u.active,
                Some(_) => workloads.iter().any(|w| &w.owner == *id),
            })
            .map(|(id, u)| UserPriority {
                user: id.clone(),
                heaviness: u.heaviness,
                rank: u.rank,
            })
            .collect();
        users.sort_by(|a, b| a.rank.cmp(&b.rank).then_with(|| a.user.cmp(&b.user)));
        Priorities {
            cycle: self.cycle,
            computed_at_ms: self.computed_at_ms,
            profile: self.profile.clone(),
            resources: self.resources.clone(),
            users,
            workloads,
        }
    }

    /// Why a user is as heavy as they are; `None` for a user this cycle did not know.
    pub fn explain(&self, user: &str) -> Option<Explanation> {
        let u = self.users.get(user)?;
        let per_resource = |v: &[f64]| {
            self.resources
                .iter()
                .cloned()
                .zip(v.iter().copied())
                .collect()
        };
        Some(Explanation {
            user: user.to_string(),
            cycle: self.cycle,
            active: u.active,
            usage: per_resource(&u.usage),
            endowment: per_resource(&u.endowment),
            entitlement: u.entitlement,
            static_part: u.static_part,
            dynamic: u.dynamic,
            unused_quota: u.unused_quota,
            heaviness: u.heaviness,
            rank: u.rank,
            workloads: self
                .workloads
                .values()
                .filter(|w| w.owner == user)
                .cloned()
                .collect(),
        })
    }
}
