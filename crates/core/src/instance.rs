//! One-shot allocation instances: the JSON file `fairshare allocate` reads, checked field by
//! field, and the answer it prints.
//!
//! An instance names its resources, so every error can name the user and the field at fault.
//! Parsing works on a string; reading the file is the caller's business.

use crate::alloc::baa::{self, time::BaaTime, BaaError};
use crate::alloc::divisible::{water_fill, DivisibleClient};
use crate::alloc::tasks::{fill_tasks, FillRule, TaskClient};
use crate::alloc::AllocError;
use crate::model::{relative_weights, ResourceSet};
use crate::policy::registry::BaaPolicy;
use crate::policy::{Engine, PolicyKind, PolicySpec};
use crate::priority::{dominant_share, Policy};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Version of the layout of every JSON document `fairshare` writes (`docs/json.md`): each
/// carries it first as `schema_version`, and a document read back must carry the same.
pub const SCHEMA_VERSION: u32 = 1;

/// Why an instance file cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum InstanceError {
    /// The text is not valid JSON for an instance (serde names the line, column and field).
    #[error(transparent)]
    Syntax(#[from] serde_json::Error),
    /// A field has a value that makes no sense.
    #[error("{field}: {problem}")]
    Field {
        /// Path of the field, e.g. `users[1].demand.gpu`.
        field: String,
        /// What is wrong and what was expected.
        problem: String,
    },
    /// The allocator refused the instance because of one user.
    #[error("user \"{id}\" (users[{index}]): {problem}")]
    User {
        /// The user's id.
        id: String,
        /// Its position in `users`.
        index: usize,
        /// What the allocator found wrong.
        problem: String,
    },
}

/// Whether demands are indivisible tasks or one divisible amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `demand` is one task's demand; tasks are placed by progressive filling.
    Tasks,
    /// `demand` is the whole demand; water-filling divides resources exactly.
    Divisible,
}

/// One user of an instance file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    /// The user's name.
    pub id: String,
    /// Entitlement; users share in proportion to it (default 1).
    #[serde(default = "one")]
    pub weight: f64,
    /// Demand per resource (one task's in task mode); unnamed resources need nothing.
    pub demand: IndexMap<String, f64>,
    /// Tasks queued (task mode; default: as many as fit).
    #[serde(default)]
    pub tasks: Option<u64>,
    /// Commitment per resource, a fraction of its capacity (default 0).
    #[serde(default)]
    pub commitment: IndexMap<String, f64>,
}

fn one() -> f64 {
    1.0
}

/// An instance file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSpec {
    /// Policy name (see [`crate::policy::registry`]).
    pub policy: String,
    /// Task or divisible mode.
    pub mode: Mode,
    /// Capacity per resource; its order is the order of every output.
    pub capacity: IndexMap<String, f64>,
    /// The users.
    pub users: Vec<UserSpec>,
}

/// A checked instance, with vectors in resource order.
#[derive(Debug, Clone)]
pub struct Instance {
    /// What divides the resources.
    pub allocator: Allocator,
    /// Task or divisible mode.
    pub mode: Mode,
    /// Resources and capacities.
    pub resources: ResourceSet,
    /// User names.
    pub ids: Vec<String>,
    /// Relative weights ρ.
    pub weights: Vec<f64>,
    /// Demands in capacity units.
    pub demands: Vec<Vec<f64>>,
    /// Queued tasks per user (task mode).
    pub tasks: Vec<Option<u64>>,
    /// Commitments, fractions of capacity.
    pub commitments: Vec<Vec<f64>>,
}

/// Why BAA refuses a user's demand.
const DEMAND_FOR_BAA: &str =
    "BAA needs a positive demand of every resource (the proportions its tasks run in)";

/// What divides an instance's resources.
#[derive(Debug, Clone, PartialEq)]
pub enum Allocator {
    /// A priority policy, in either mode.
    Priority(Policy),
    /// Bottleneck-aware allocation, in divisible mode (each user's demand the most it could
    /// use, in the proportions its tasks run in); written as `text`.
    Baa {
        /// Its settings.
        policy: BaaPolicy,
        /// The policy as the file writes it.
        text: String,
    },
}

impl std::fmt::Display for Allocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Allocator::Priority(policy) => policy.fmt(f),
            Allocator::Baa { text, .. } => f.write_str(text),
        }
    }
}

/// One user's share of the answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserOutcome {
    /// The user's name.
    pub id: String,
    /// Tasks placed (task mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u64>,
    /// Resources allocated, in capacity units, by resource name.
    pub allocation: IndexMap<String, f64>,
    /// Largest share of any resource.
    pub dominant_share: f64,
    /// True when one task is larger than the capacity, so it can never run (task mode only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub never_fits: bool,
}

/// The answer to an instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Layout version of this JSON document ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Policy used.
    pub policy: String,
    /// Mode used.
    pub mode: Mode,
    /// The fill rule (task mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<FillRule>,
    /// Per user, in file order.
    pub users: Vec<UserOutcome>,
    /// The water level x* (divisible mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
    /// Saturated resources (divisible mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottlenecks: Option<Vec<String>>,
    /// Fraction of each resource in use.
    pub utilization: IndexMap<String, f64>,
}

impl Instance {
    /// Parses and checks an instance from JSON text.
    pub fn from_json(text: &str) -> Result<Instance, InstanceError> {
        let spec: InstanceSpec = serde_json::from_str(text)?;
        Instance::from_spec(spec)
    }

    /// Checks an instance as written.
    pub fn from_spec(spec: InstanceSpec) -> Result<Instance, InstanceError> {
        let allocator = allocator(&spec)?;
        let resources = ResourceSet::new(spec.capacity.iter().map(|(k, v)| (k.clone(), *v)))
            .map_err(|e| field("capacity", e))?;
        if spec.users.is_empty() {
            return Err(field("users", "at least one user is needed"));
        }
        let mut instance = Instance {
            allocator,
            mode: spec.mode,
            weights: Vec::new(),
            ids: Vec::new(),
            demands: Vec::new(),
            tasks: Vec::new(),
            commitments: Vec::new(),
            resources,
        };
        for (i, user) in spec.users.iter().enumerate() {
            instance.add_user(i, user)?;
        }
        let raw: Vec<f64> = spec.users.iter().map(|u| u.weight).collect();
        instance.weights = relative_weights(&raw).map_err(|e| match e {
            crate::model::ModelError::BadWeight { client, value } => field(
                format!("users[{client}].weight"),
                format!("expected a positive number, found {value}"),
            ),
            other => field("users", other),
        })?;
        Ok(instance)
    }

    fn add_user(&mut self, i: usize, user: &UserSpec) -> Result<(), InstanceError> {
        if self.ids.contains(&user.id) {
            return Err(field(
                format!("users[{i}].id"),
                format!("{:?} is used twice", user.id),
            ));
        }
        let demand = self.vector(i, "demand", &user.demand)?;
        let commitment = self.vector(i, "commitment", &user.commitment)?;
        self.ids.push(user.id.clone());
        self.demands.push(demand);
        self.commitments.push(commitment);
        self.tasks.push(user.tasks);
        Ok(())
    }

    /// A named map as a vector in resource order; unknown names and bad numbers are errors.
    fn vector(
        &self,
        user: usize,
        name: &str,
        map: &IndexMap<String, f64>,
    ) -> Result<Vec<f64>, InstanceError> {
        let mut v = vec![0.0; self.resources.len()];
        for (resource, value) in map {
            let path = format!("users[{user}].{name}.{resource}");
            let Some(r) = self.resources.index_of(resource) else {
                let known = self.resources.names().join(", ");
                return Err(field(
                    path,
                    format!("unknown resource (capacity lists {known})"),
                ));
            };
            if !(value.is_finite() && *value >= 0.0) {
                return Err(field(
                    path,
                    format!("expected a non-negative number, found {value}"),
                ));
            }
            let capacity = self.resources.capacities()[r];
            if !(value / capacity).is_finite() {
                return Err(field(
                    path,
                    format!("{value} is too large a multiple of the capacity {capacity} to compute with"),
                ));
            }
            if name == "commitment" && *value > 1.0 {
                return Err(field(
                    path,
                    format!("expected a fraction of capacity in [0, 1], found {value}"),
                ));
            }
            v[r] = *value;
        }
        Ok(v)
    }

    /// The allocator's error, told with the user's id when it is about a user.
    fn user_error(&self, error: AllocError) -> InstanceError {
        let text = error.to_string();
        let index = error.client();
        let prefix = format!("client {index}: ");
        InstanceError::User {
            id: self.ids.get(index).cloned().unwrap_or_default(),
            index,
            problem: text.strip_prefix(&prefix).unwrap_or(&text).to_owned(),
        }
    }

    /// Solves the instance with the given fill rule (task mode).
    pub fn solve(&self, rule: FillRule) -> Result<Outcome, InstanceError> {
        let policy = match &self.allocator {
            Allocator::Priority(policy) => policy,
            Allocator::Baa { policy, .. } => return self.solve_baa(policy),
        };
        let (allocations, tasks, unfit, level, bottlenecks) = match self.mode {
            Mode::Tasks => {
                let fill = fill_tasks(policy, &self.resources, &self.task_clients(), rule)
                    .map_err(|e| self.user_error(e))?;
                let tasks = fill.tasks.into_iter().map(Some).collect();
                (fill.allocations, tasks, fill.unfit, None, None)
            }
            Mode::Divisible => {
                let fill = water_fill(policy, &self.resources, &self.divisible_clients())
                    .map_err(|e| self.user_error(e))?;
                let allocations = fill.allocations;
                let names = fill
                    .bottlenecks
                    .iter()
                    .map(|r| self.resources.names()[*r].clone())
                    .collect();
                (
                    allocations,
                    vec![None; self.ids.len()],
                    Vec::new(),
                    Some(fill.level),
                    Some(names),
                )
            }
        };
        Ok(self.outcome(allocations, tasks, &unfit, level, bottlenecks, rule))
    }

    fn outcome(
        &self,
        allocations: Vec<Vec<f64>>,
        tasks: Vec<Option<u64>>,
        unfit: &[usize],
        level: Option<f64>,
        bottlenecks: Option<Vec<String>>,
        rule: FillRule,
    ) -> Outcome {
        let names = self.resources.names();
        let mut used = vec![0.0; names.len()];
        let users = allocations
            .iter()
            .zip(tasks)
            .enumerate()
            .map(|(i, (alloc, tasks))| {
                let shares = self.resources.normalise(alloc).unwrap_or_default();
                used.iter_mut().zip(&shares).for_each(|(u, s)| *u += s);
                UserOutcome {
                    id: self.ids[i].clone(),
                    tasks,
                    allocation: names.iter().cloned().zip(alloc.iter().copied()).collect(),
                    dominant_share: dominant_share(&shares),
                    never_fits: unfit.contains(&i),
                }
            })
            .collect();
        Outcome {
            schema_version: SCHEMA_VERSION,
            policy: self.allocator.to_string(),
            mode: self.mode,
            rule: (self.mode == Mode::Tasks).then_some(rule),
            users,
            level,
            bottlenecks,
            utilization: names.iter().cloned().zip(used).collect(),
        }
    }

    /// BAA on the users' demands: static, or one epoch of BAA-T from no history.
    fn solve_baa(&self, policy: &BaaPolicy) -> Result<Outcome, InstanceError> {
        let capacity = self.resources.capacities().to_vec();
        let baa_error = |e: BaaError| match e {
            BaaError::Demand { user, .. } => InstanceError::User {
                id: self.ids[user].clone(),
                index: user,
                problem: DEMAND_FOR_BAA.into(),
            },
            other => field("policy", other),
        };
        let shares = match policy.time {
            None => {
                baa::allocate(
                    &self.demands,
                    &capacity,
                    policy.classification,
                    policy.solver,
                )
                .map_err(baa_error)?
                .allocations
            }
            Some(settings) => {
                let mut baa = BaaTime::new(capacity.len(), 1.0, settings).map_err(baa_error)?;
                for demand in &self.demands {
                    let share: Vec<f64> =
                        demand.iter().zip(&capacity).map(|(d, c)| d / c).collect();
                    let set = baa::bottleneck(demand, &capacity, policy.classification)
                        .map_err(baa_error)?;
                    let cap = share[set];
                    baa.join(share, set, cap).map_err(baa_error)?;
                }
                baa.epoch(1.0).map_err(baa_error)?.allocations
            }
        };
        let allocations = shares
            .iter()
            .map(|s| s.iter().zip(&capacity).map(|(x, c)| x * c).collect())
            .collect();
        let outcome = self.outcome(
            allocations,
            vec![None; self.ids.len()],
            &[],
            None,
            None,
            FillRule::default(),
        );
        let full = (outcome.utilization.iter())
            .filter(|(_, u)| **u >= 1.0 - 1e-9)
            .map(|(name, _)| name.clone())
            .collect();
        Ok(Outcome {
            bottlenecks: Some(full),
            ..outcome
        })
    }

    fn task_clients(&self) -> Vec<TaskClient> {
        (0..self.ids.len())
            .map(|i| TaskClient {
                demand: self.demands[i].clone(),
                tasks: self.tasks[i],
                weight: self.weights[i],
                commitment: self.commitments[i].clone(),
            })
            .collect()
    }

    fn divisible_clients(&self) -> Vec<DivisibleClient> {
        (0..self.ids.len())
            .map(|i| DivisibleClient {
                demand: self.demands[i].clone(),
                weight: self.weights[i],
                commitment: self.commitments[i].clone(),
            })
            .collect()
    }
}

/// The instance's allocator: BAA (divisible mode, equal weights, no commitments) or a priority
/// policy.
fn allocator(spec: &InstanceSpec) -> Result<Allocator, InstanceError> {
    let parsed = PolicySpec::parse_for(&spec.policy, Engine::Allocate);
    let Ok(PolicySpec {
        kind: PolicyKind::Baa(policy),
        name,
        ..
    }) = parsed
    else {
        let policy = spec.policy.parse().map_err(|e| field("policy", e))?;
        return Ok(Allocator::Priority(policy));
    };
    if spec.mode != Mode::Divisible {
        return Err(field(
            "mode",
            format!("{name} divides divisible demands: write \"mode\": \"divisible\""),
        ));
    }
    for (i, user) in spec.users.iter().enumerate() {
        if user.weight != 1.0 {
            return Err(field(
                format!("users[{i}].weight"),
                format!("{name} has no weights"),
            ));
        }
        if user.commitment.values().any(|c| *c != 0.0) {
            return Err(field(
                format!("users[{i}].commitment"),
                format!("{name} reads no commitments"),
            ));
        }
    }
    Ok(Allocator::Baa { policy, text: name })
}

fn field(path: impl Into<String>, problem: impl ToString) -> InstanceError {
    InstanceError::Field {
        field: path.into(),
        problem: problem.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTBOOK: &str = r#"{"policy": "drf", "mode": "tasks", "capacity": {"cpu": 9, "mem": 18},
        "users": [{"id": "A", "demand": {"cpu": 1, "mem": 4}},
                  {"id": "B", "demand": {"cpu": 3, "mem": 1}}]}"#;

    #[test]
    fn textbook_instance() {
        let out = Instance::from_json(TEXTBOOK)
            .unwrap()
            .solve(FillRule::HeadOfLine)
            .unwrap();
        assert_eq!(out.users[0].tasks, Some(3));
        assert_eq!(out.users[1].tasks, Some(2));
        assert_eq!(out.users[0].allocation["mem"], 12.0);
        assert!((out.users[0].dominant_share - 2.0 / 3.0).abs() < 1e-12);
        assert!((out.utilization["cpu"] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_answer_names_its_layout_first() {
        let out = Instance::from_json(TEXTBOOK)
            .unwrap()
            .solve(FillRule::HeadOfLine)
            .unwrap();
        let json = serde_json::to_string(&out).unwrap();
        assert!(json.starts_with("{\"schema_version\":1,"), "{json}");
    }

    #[test]
    fn divisible_instance_reports_the_level() {
        let text = TEXTBOOK
            .replace("\"tasks\"", "\"divisible\"")
            .replace("\"cpu\": 1,", "\"cpu\": 9,");
        let out = Instance::from_json(&text)
            .unwrap()
            .solve(FillRule::HeadOfLine)
            .unwrap();
        assert!(out.level.is_some());
        assert_eq!(out.users[0].tasks, None);
    }

    fn error_of(text: &str) -> String {
        Instance::from_json(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_field() {
        let unknown = TEXTBOOK.replace("\"mem\": 1}", "\"gpu\": 1}");
        assert!(
            error_of(&unknown).starts_with("users[1].demand.gpu: unknown resource"),
            "{}",
            error_of(&unknown)
        );
        let negative = TEXTBOOK.replace("\"cpu\": 3", "\"cpu\": -3");
        assert!(error_of(&negative).starts_with("users[1].demand.cpu: expected a non-negative"));
        let missing = TEXTBOOK.replace("\"mode\": \"tasks\",", "");
        assert!(
            error_of(&missing).contains("missing field `mode`"),
            "{}",
            error_of(&missing)
        );
        let policy = TEXTBOOK.replace("\"drf\"", "\"fair\"");
        assert!(error_of(&policy).starts_with("policy: unknown policy"));
        let capacity = TEXTBOOK.replace("\"cpu\": 9", "\"cpu\": 0");
        assert!(error_of(&capacity).starts_with("capacity:"));
        let weight = TEXTBOOK.replace("\"id\": \"B\",", "\"id\": \"B\", \"weight\": 0,");
        assert!(
            error_of(&weight).starts_with("users[1].weight"),
            "{}",
            error_of(&weight)
        );
        let twice = TEXTBOOK.replace("\"B\"", "\"A\"");
        assert!(error_of(&twice).starts_with("users[1].id"));
        assert!(error_of("{").contains("EOF"));
    }

    /// The issue's acceptance: the seed's four users of spec §4.1, demands far above the
    /// capacity, under static BAA and BAA-T with no history.
    #[test]
    fn baa_gives_the_seeds_users_what_the_spec_computes() {
        for policy in ["baa", "baa-time"] {
            let text = include_str!("../../../examples/allocate/baa-seed.json")
                .replace("\"baa\"", &format!("\"{policy}\""));
            let outcome = Instance::from_json(&text)
                .unwrap()
                .solve(FillRule::default())
                .unwrap();
            let expected = [[25.0, 100.0], [25.0, 37.5], [25.0, 10.714], [25.0, 2.778]];
            for (user, want) in outcome.users.iter().zip(expected) {
                let got = [user.allocation["cpu"], user.allocation["mem"]];
                assert!(
                    (got[0] - want[0]).abs() < 1e-3 && (got[1] - want[1]).abs() < 1e-3,
                    "{policy} {}: {got:?}",
                    user.id
                );
            }
            assert_eq!(outcome.bottlenecks, Some(vec!["cpu".to_string()]));
        }
        let tasks =
            include_str!("../../../examples/allocate/baa-seed.json").replace("divisible", "tasks");
        let error = Instance::from_json(&tasks).unwrap_err().to_string();
        assert!(error.contains("baa divides divisible demands"), "{error}");
    }

    /// Found by fuzzing: a subnormal capacity made every share infinite; such a capacity, and
    /// a demand too large a multiple of its capacity, are refused.
    #[test]
    fn capacities_and_demands_that_overflow_are_refused() {
        let tiny = r#"{"policy":"sdrf","mode":"divisible", "capacity":{"cpu":464454e-329},"users":[{"id":"","demand":{"cpu":5}}]}"#;
        let error = Instance::from_json(tiny).unwrap_err().to_string();
        assert!(error.contains("capacity"), "{error}");
        let huge = r#"{"policy":"drf","mode":"divisible", "capacity":{"cpu":1e-300},"users":[{"id":"a","demand":{"cpu":1e300}}]}"#;
        let error = Instance::from_json(huge).unwrap_err().to_string();
        assert!(error.contains("users[0].demand.cpu"), "{error}");
    }

    /// A user that needs less than its level: static BAA leaves the rest idle, BAA-T gives it
    /// to the set's other member, up to the catch-up cap (docs/baa.md).
    #[test]
    fn a_small_demand_leaves_idle_budget_or_shares_it() {
        let held = |policy: &str| {
            let text = format!(
                r#"{{"policy":"{policy}","mode":"divisible","capacity":{{"cpu":100}},"users":[{{"id":"a","demand":{{"cpu":10}}}},{{"id":"b","demand":{{"cpu":1000}}}}]}}"#
            );
            let outcome = Instance::from_json(&text)
                .unwrap()
                .solve(FillRule::default())
                .unwrap();
            outcome
                .users
                .iter()
                .map(|u| u.allocation["cpu"])
                .collect::<Vec<f64>>()
        };
        let close = |a: Vec<f64>, b: [f64; 2]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
        assert!(close(held("baa"), [10.0, 50.0]), "{:?}", held("baa"));
        assert!(
            close(held("baa-time"), [10.0, 90.0]),
            "{:?}",
            held("baa-time")
        );
    }
}
