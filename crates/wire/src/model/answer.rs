//! The API's response bodies: what the service answers about priorities, users, nodes and its
//! own health, apart from the request bodies and the checks that admit them.

use super::{Id, KnobsWritten, PerResource};
use fairshare_core::heaviness::knobs::KnobValues;
use serde::{Deserialize, Serialize};

/// `GET /v1/priorities`: the latest cycle's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Priorities {
    /// The cycle that computed it (0 before the first).
    pub cycle: u64,
    /// When, in milliseconds since the Unix epoch (0 before the first cycle).
    pub computed_at_ms: i64,
    /// The knob profile the values are for.
    pub profile: String,
    /// The resources, in the order of every vector of the explanation.
    pub resources: Vec<String>,
    /// Every active user (or, with `?node=`, those with a workload there), lightest first.
    pub users: Vec<UserPriority>,
    /// Every workload (or those on the node), by id.
    pub workloads: Vec<WorkloadPriority>,
}

/// A user's place in the ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserPriority {
    /// The user.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub user: Id,
    /// h_u: below 0 lighter than their share, above 0 heavier.
    pub heaviness: f64,
    /// 1 for the lightest active user.
    pub rank: u64,
}

/// A workload's priority and the knob values its node applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkloadPriority {
    /// The workload.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub workload: Id,
    /// Its owner.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub owner: Id,
    /// Its node.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub node: Id,
    /// h_v = static + dynamic part.
    pub heaviness: f64,
    /// h_p, what its priority is set from (its owner's h_u plus its own part).
    pub priority_input: f64,
    /// Whether a usage report has been counted for it (if not, it counts as using its endowment).
    pub measured: bool,
    /// The priority and the knob values of the daemon's profile.
    pub knobs: KnobValues,
    /// What its node's agent last reported to be in force in its knob files (absent until an
    /// agent reports it, or when it was reported from another node than the workload's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(inline, example = json!({"cpu.shares": 1597, "blkio.weight": 500})))]
    pub written: Option<KnobsWritten>,
}

/// `GET /v1/users/{id}`: why a user is as heavy as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Explanation {
    /// The user.
    pub user: String,
    /// The cycle explained (0 before the first).
    pub cycle: u64,
    /// Whether the user owned a workload in that cycle (inactive users take no part).
    pub active: bool,
    /// What the user's workloads used, per resource (reference units: per second, memory as a level).
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub usage: PerResource,
    /// The user's endowment (their share of the cloud), per resource.
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub endowment: PerResource,
    /// s(ε_u): the endowment, normalised.
    pub entitlement: f64,
    /// Σ s(ε(v)): the static heaviness of the user's workloads' sizes.
    pub static_part: f64,
    /// Σ d(v): the dynamic heaviness of their load.
    pub dynamic: f64,
    /// The unused quota credit s(ε_u) − Σ s(ε(v)).
    pub unused_quota: f64,
    /// h_u = static part + dynamic − entitlement.
    pub heaviness: f64,
    /// 1 for the lightest active user, 0 for an inactive one.
    pub rank: u64,
    /// The user's workloads with their priorities.
    pub workloads: Vec<WorkloadPriority>,
}

impl Explanation {
    /// A registered user cycle `cycle` did not count (registered since, or no node to share):
    /// no workload, no usage, no part in the ranking.
    pub fn uncounted(
        user: &str,
        cycle: u64,
        resources: impl Iterator<Item = String>,
    ) -> Explanation {
        let zero: PerResource = resources.map(|r| (r, 0.0)).collect();
        Explanation {
            user: user.to_string(),
            cycle,
            active: false,
            usage: zero.clone(),
            endowment: zero,
            entitlement: 0.0,
            static_part: 0.0,
            dynamic: 0.0,
            unused_quota: 0.0,
            heaviness: 0.0,
            rank: 0,
            workloads: Vec::new(),
        }
    }
}

/// `GET /v1/nodes`: one node with what the service knows of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeStatus {
    /// The node.
    pub node: String,
    /// Its supply per resource.
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub supply: PerResource,
    /// Its speed factor.
    pub speed: f64,
    /// How many workloads are registered on it.
    pub workloads: u64,
    /// The highest report number stored from it.
    pub last_seq: Option<u64>,
    /// When its latest report arrived, in milliseconds since the Unix epoch.
    pub last_report_ms: Option<i64>,
}

/// `GET /readyz` and `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    /// `ok`, or what is wrong.
    pub status: String,
    /// Whether this replica computes priorities now.
    pub leader: bool,
    /// The latest cycle.
    pub cycle: u64,
    /// Seconds since the latest cycle, when there was one.
    pub last_cycle_age_s: Option<f64>,
}
