//! One priority cycle as a pure function: the registry, what each workload remembers and the
//! usage counted since the last cycle go in; every user's and workload's heaviness, priority
//! and knob values come out. The metric and the knob mapping are the core's; this module only
//! names things by their ids and keeps the memory between cycles.

pub use crate::model::Id;
use crate::model::{Explanation, Priorities, UserPriority, WorkloadPriority};
use fairshare_core::heaviness::knobs::{priority, KnobProfile, PriorityConfig, PriorityMemory};
use fairshare_core::heaviness::{
    heaviness, smooth, Cloud, HeavinessConfig, HeavinessError, Host, Resource, ResourceKind, User,
    UserHeaviness, Workload,
};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    pub owner: Id,
    /// Its node's id.
    pub node: Id,
    /// Virtual size per resource.
    pub size: Vec<f64>,
}

/// Everything registered, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registry {
    /// Nodes.
    pub nodes: BTreeMap<Id, NodeEntry>,
    /// Users and their quotas.
    pub users: BTreeMap<Id, Option<Vec<f64>>>,
    /// Workloads.
    pub workloads: BTreeMap<Id, WorkloadEntry>,
}

/// What a workload remembers from one cycle to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadMemory {
    /// Its smoothed usage (§4.1); `None` until a report about it is counted.
    pub smoothed: Option<Vec<f64>>,
    /// Its priority's memory (§9.2); `None` before its first cycle.
    pub priority: Option<PriorityMemory>,
}

/// Every workload's memory, sorted by id.
pub type Memory = Vec<(Id, WorkloadMemory)>;

/// The usage counted in one cycle: per workload, rates weighted by the seconds they cover.
/// Kept by hash (a cycle may count millions of samples) and walked sorted by id, so that a
/// cycle walks it beside the registry instead of looking every workload up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    per_workload: FxHashMap<String, (Vec<f64>, f64)>,
}

impl Measured {
    /// Counts one sample of `rates` covering `seconds`.
    pub fn add(&mut self, workload: &str, rates: &[f64], seconds: f64) {
        let (sum, covered) = match self.per_workload.get_mut(workload) {
            Some(counted) => counted,
            None => {
                let empty = (vec![0.0; rates.len()], 0.0);
                self.per_workload
                    .entry(workload.to_string())
                    .or_insert(empty)
            }
        };
        for (s, r) in sum.iter_mut().zip(rates) {
            *s += r * seconds;
        }
        *covered += seconds;
    }

    /// Each counted workload's summed rates and the seconds they cover, sorted by id.
    fn sorted(&self) -> impl Iterator<Item = (&str, &(Vec<f64>, f64))> {
        let mut sorted: Vec<_> = self
            .per_workload
            .iter()
            .map(|(id, m)| (id.as_str(), m))
            .collect();
        sorted.sort_unstable_by_key(|(id, _)| *id);
        sorted.into_iter()
    }
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
    pub users: BTreeMap<Id, UserHeaviness>,
    /// Every registered workload, sorted by id.
    pub workloads: Vec<WorkloadPriority>,
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
    let ids = || registry.workloads.keys().map(|id| &**id);
    let remembered = aligned(ids(), previous.iter().map(|(id, m)| (&**id, m)));
    let counted = aligned(ids(), measured.sorted());
    let decay = settings.heaviness.resource_decay_factor;
    let mut raw = Vec::new();
    let usage = remembered.iter().zip(counted).map(|(before, counted)| {
        let before = before.and_then(|m| m.smoothed.as_deref());
        let Some((sum, covered)) = counted else {
            return before.map(<[f64]>::to_vec);
        };
        raw.clear();
        raw.extend(sum.iter().map(|s| s / covered));
        Some(smooth(before, &raw, decay))
    });
    let mut cloud = cloud(settings, registry, usage);
    let mut snapshot = Snapshot {
        cycle,
        computed_at_ms: now_ms,
        profile: settings.profile.name.clone(),
        resources: settings.resources.iter().map(|r| r.name.clone()).collect(),
        ..Snapshot::default()
    };
    if registry.nodes.is_empty() {
        // No node means no workload (each names a registered node) and no supply to share.
        return Ok(Outcome {
            snapshot,
            memory: Memory::new(),
        });
    }
    let h = heaviness(&cloud, &settings.heaviness)?;
    snapshot.users = registry.users.keys().cloned().zip(h.users).collect();
    let memory_r = settings
        .resources
        .iter()
        .position(|r| r.kind == ResourceKind::Memory);
    let mut memory = Vec::with_capacity(registry.workloads.len());
    let mut workloads = Vec::with_capacity(registry.workloads.len());
    for (i, ((id, w), wh)) in registry.workloads.iter().zip(&h.workloads).enumerate() {
        let before = remembered[i].and_then(|m| m.priority);
        let (p, pm) = priority(wh.priority_input, before, &settings.priority);
        let smoothed = cloud.workloads[i].usage.take();
        let bytes = memory_r.map(|r| w.size[r] as u64).filter(|&b| b > 0);
        workloads.push(WorkloadPriority {
            workload: id.clone(),
            owner: w.owner.clone(),
            node: w.node.clone(),
            heaviness: wh.heaviness,
            priority_input: wh.priority_input,
            measured: smoothed.is_some(),
            knobs: settings.profile.values(p, bytes),
            written: None,
        });
        memory.push((
            id.clone(),
            WorkloadMemory {
                smoothed,
                priority: Some(pm),
            },
        ));
    }
    snapshot.workloads = workloads;
    Ok(Outcome { snapshot, memory })
}

/// For each id of `ids` (sorted), its value in `sorted` (sorted by the same ids), found by
/// walking both together: no lookup, no random access per workload.
fn aligned<'a, 'b, V: 'b>(
    ids: impl Iterator<Item = &'a str>,
    sorted: impl Iterator<Item = (&'b str, &'b V)>,
) -> Vec<Option<&'b V>> {
    let mut sorted = sorted.peekable();
    ids.map(|id| {
        while sorted.next_if(|(other, _)| *other < id).is_some() {}
        sorted.next_if(|(other, _)| *other == id).map(|(_, v)| v)
    })
    .collect()
}

/// The core's view of the registry, with each workload's smoothed usage in registry order.
fn cloud(
    settings: &Settings,
    registry: &Registry,
    usage: impl Iterator<Item = Option<Vec<f64>>>,
) -> Cloud {
    let node_index: FxHashMap<&str, usize> = registry
        .nodes
        .keys()
        .enumerate()
        .map(|(i, id)| (&**id, i))
        .collect();
    let user_index: FxHashMap<&str, usize> = registry
        .users
        .keys()
        .enumerate()
        .map(|(i, id)| (&**id, i))
        .collect();
    Cloud {
        resources: settings.resources.clone(),
        nodes: registry
            .nodes
            .values()
            .map(|n| Host {
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
            .values()
            .zip(usage)
            .map(|(w, usage)| Workload {
                owner: user_index[&*w.owner],
                node: node_index[&*w.node],
                size: w.size.clone(),
                usage,
            })
            .collect(),
    }
}

impl Snapshot {
    /// The ranking, for the whole cloud or one node.
    pub fn priorities(&self, node: Option<&str>) -> Priorities {
        let workloads: Vec<WorkloadPriority> = self
            .workloads
            .iter()
            .filter(|w| node.is_none_or(|n| &*w.node == n))
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
                rank: u.rank as u64,
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
            rank: u.rank as u64,
            workloads: self
                .workloads
                .iter()
                .filter(|w| &*w.owner == user)
                .cloned()
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The sorted walk finds exactly what a lookup per id finds.
        #[test]
        fn aligned_agrees_with_a_lookup_per_id(
            ids in proptest::collection::btree_set("[a-e]{1,3}", 0..30),
            values in proptest::collection::btree_map("[a-e]{1,3}", 0u32..100, 0..30),
        ) {
            let walked = aligned(ids.iter().map(String::as_str), values.iter().map(|(k, v)| (k.as_str(), v)));
            let looked_up: Vec<Option<&u32>> = ids.iter().map(|id| values.get(id)).collect();
            prop_assert_eq!(walked, looked_up);
        }

        /// Counting a report twice changes no mean; counting two intervals weighs each by its length.
        #[test]
        fn measured_means_weigh_intervals(a in 0.0f64..100.0, b in 0.0f64..100.0, s in 0.1f64..100.0, t in 0.1f64..100.0) {
            let mut m = Measured::default();
            m.add("w", &[a], s);
            m.add("w", &[b], t);
            let counted = aligned(["w"].into_iter(), m.sorted());
            let (sum, covered) = counted[0].unwrap();
            prop_assert!((sum[0] / covered - (a * s + b * t) / (s + t)).abs() < 1e-9);
        }
    }

    fn settings() -> Settings {
        Settings {
            resources: vec![
                Resource::new("cpu", ResourceKind::Cpu),
                Resource::new("mem", ResourceKind::Memory),
            ],
            heaviness: HeavinessConfig::default(),
            priority: PriorityConfig::default(),
            profile: KnobProfile::cgroup_v2(),
        }
    }

    fn registry() -> Registry {
        let mut r = Registry::default();
        r.nodes.insert(
            "n1".into(),
            NodeEntry {
                supply: vec![4.0, 16.0],
                speed: 1.0,
            },
        );
        for u in ["d", "e"] {
            r.users.insert(u.into(), None);
        }
        for (w, owner) in [("d1", "d"), ("d2", "d"), ("e1", "e")] {
            let entry = WorkloadEntry {
                owner: owner.into(),
                node: "n1".into(),
                size: vec![1.0, 4.0],
            };
            r.workloads.insert(w.into(), entry);
        }
        r
    }

    #[test]
    fn an_unmeasured_workload_keeps_its_smoothed_usage_and_a_new_one_counts_as_its_endowment() {
        let (settings, registry) = (settings(), registry());
        let mut measured = Measured::default();
        measured.add("d1", &[1.0, 2.0], 10.0);
        let first = compute(&settings, &registry, &Memory::new(), &measured, 1, 0).unwrap();
        let memory =
            |o: &Outcome, id: &str| o.memory.iter().find(|(k, _)| &**k == id).unwrap().1.clone();
        assert_eq!(memory(&first, "d1").smoothed, Some(vec![1.0, 2.0]));
        assert_eq!(memory(&first, "e1").smoothed, None);
        assert!(
            !first
                .snapshot
                .workloads
                .iter()
                .find(|w| &*w.workload == "e1")
                .unwrap()
                .measured
        );
        let mut later = Measured::default();
        later.add("e1", &[0.5, 1.0], 10.0);
        let second = compute(&settings, &registry, &first.memory, &later, 2, 0).unwrap();
        assert_eq!(
            memory(&second, "d1").smoothed,
            Some(vec![1.0, 2.0]),
            "kept, not decayed"
        );
        assert_eq!(
            memory(&second, "e1").smoothed,
            Some(vec![0.5, 1.0]),
            "first measurement as is"
        );
        let mut third = Measured::default();
        third.add("e1", &[1.5, 1.0], 10.0);
        let third = compute(&settings, &registry, &second.memory, &third, 3, 0).unwrap();
        assert_eq!(
            memory(&third, "e1").smoothed,
            Some(vec![1.0, 1.0]),
            "δ = 0.5 smoothing"
        );
        let p = third.snapshot.priorities(None);
        assert_eq!(p.users.len(), 2);
        assert_eq!(p.workloads.len(), 3);
        assert!(third.snapshot.explain("nobody").is_none());
    }

    #[test]
    fn an_empty_cloud_has_an_empty_answer() {
        let settings = settings();
        let outcome = compute(
            &settings,
            &Registry::default(),
            &Memory::new(),
            &Measured::default(),
            1,
            5,
        )
        .unwrap();
        assert_eq!(outcome.snapshot.cycle, 1);
        assert!(outcome.snapshot.workloads.is_empty() && outcome.memory.is_empty());
    }
}
