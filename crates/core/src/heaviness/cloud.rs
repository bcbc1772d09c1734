//! The cloud as the fairness service sees it in one interval: resources, nodes, users and the
//! workloads with what they used — and the checks that keep every later number finite.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What a resource is, which decides its virtual counterpart, its overcommit ratio, whether a
/// node's speed scales it and which knob steers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceKind {
    /// Processor time; workloads declare virtual CPUs; scaled by the node's speed factor.
    Cpu,
    /// Memory, a level rather than a rate; workloads declare virtual memory.
    Memory,
    /// Disk I/O (read, write or both); no virtual counterpart.
    Disk,
    /// Network I/O (receive, transmit or both); no virtual counterpart.
    Network,
    /// Anything else; no virtual counterpart, no knob.
    Other,
}

impl ResourceKind {
    /// Whether workloads declare a virtual size of this resource (VCPUs, VRAM) — spec §2.1.
    pub fn has_virtual(self) -> bool {
        matches!(self, ResourceKind::Cpu | ResourceKind::Memory)
    }

    /// `amount` of this resource on a node of this speed, in reference units: CPU scaled by the
    /// speed, everything else as it is.
    pub fn at_speed(self, amount: f64, speed: f64) -> f64 {
        if self == ResourceKind::Cpu {
            amount * speed
        } else {
            amount
        }
    }
}

/// One physical resource the service measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    /// Its name, as reports print it.
    pub name: String,
    /// What it is.
    pub kind: ResourceKind,
}

impl Resource {
    /// A resource of this name and kind.
    pub fn new(name: &str, kind: ResourceKind) -> Resource {
        Resource {
            name: name.to_string(),
            kind,
        }
    }
}

/// A node (compute host): its physical supply per resource and its CPU speed factor.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Physical supply per resource (actual scale): a rate for time-shared resources, the
    /// installed amount for memory.
    pub supply: Vec<f64>,
    /// How much one of its CPUs is worth against the reference (BogoMIPS or SPEC ratio).
    pub speed: f64,
}

impl Host {
    /// A node with this supply and speed 1.
    pub fn new(supply: Vec<f64>) -> Host {
        Host { supply, speed: 1.0 }
    }
}

/// A user: their quota (virtual scale), or none for an equal split of the cloud.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct User {
    /// Quota per resource; only resources with a virtual counterpart use it.
    pub quota: Option<Vec<f64>>,
}

/// A workload (VM, container, cgroup) in the interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Position of its owner in [`Cloud::users`].
    pub owner: usize,
    /// Position of its host in [`Cloud::nodes`].
    pub node: usize,
    /// Virtual size per resource (VCPUs, memory); read only for resources that have one.
    pub size: Vec<f64>,
    /// Smoothed use in the interval per resource, on the scale of the node's supply; `None`
    /// when the workload was first seen this interval (it then counts as using exactly its
    /// endowment, which makes its dynamic heaviness zero — spec §4.1's first-sighting rule).
    pub usage: Option<Vec<f64>>,
}

impl Workload {
    /// A workload of `owner` on `node` with this virtual size, not measured yet.
    pub fn new(owner: usize, node: usize, size: Vec<f64>) -> Workload {
        Workload {
            owner,
            node,
            size,
            usage: None,
        }
    }

    /// The same workload having used `usage`.
    pub fn using(self, usage: Vec<f64>) -> Workload {
        Workload {
            usage: Some(usage),
            ..self
        }
    }
}

/// Everything the metric needs for one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Cloud {
    /// The resources, in the order of every vector below.
    pub resources: Vec<Resource>,
    /// The nodes.
    pub nodes: Vec<Host>,
    /// The users; a user owning no workload takes no part (spec §7.1's |U|).
    pub users: Vec<User>,
    /// The workloads that ran in the interval.
    pub workloads: Vec<Workload>,
}

/// A cloud the metric cannot evaluate.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum HeavinessError {
    /// A vector has the wrong number of components.
    #[error("{what}: {field} has {found} components, expected {expected} (one per resource)")]
    WrongLength {
        /// Which node, user or workload.
        what: String,
        /// Which vector.
        field: &'static str,
        /// Components found.
        found: usize,
        /// Components expected.
        expected: usize,
    },
    /// A number is negative, NaN or infinite.
    #[error("{what}: {field} must be a finite number ≥ 0, found {value}")]
    BadValue {
        /// Which node, user or workload.
        what: String,
        /// Which field (with the resource).
        field: String,
        /// The value.
        value: f64,
    },
    /// A workload names an owner or host that does not exist.
    #[error("workload {workload}: {field} {index} does not exist ({count} known)")]
    UnknownIndex {
        /// Position of the workload.
        workload: usize,
        /// `owner` or `node`.
        field: &'static str,
        /// The index given.
        index: usize,
        /// How many exist.
        count: usize,
    },
    /// The cloud has none of a resource, so no share of it can be computed.
    #[error("resource {resource}: the cloud's supply is {supply}; every resource needs a positive supply")]
    NoSupply {
        /// The resource's name.
        resource: String,
        /// The cloud's total supply.
        supply: f64,
    },
    /// Quotas that cannot be combined: some users have one and some not, or they sum to zero.
    #[error("quotas: {0}")]
    Quotas(String),
    /// A configuration value out of its range.
    #[error("configuration: {0}")]
    Config(String),
}

impl Cloud {
    /// Checks everything the metric relies on; every error names what is wrong and where.
    pub fn check(&self) -> Result<(), HeavinessError> {
        let m = self.resources.len();
        for (i, node) in self.nodes.iter().enumerate() {
            let what = || format!("node {i}");
            vector(&what, "supply", &node.supply, m)?;
            if !(node.speed.is_finite() && node.speed >= 0.0) {
                return Err(bad(&what, "speed".into(), node.speed));
            }
        }
        for (i, user) in self.users.iter().enumerate() {
            if let Some(quota) = &user.quota {
                vector(&|| format!("user {i}"), "quota", quota, m)?;
            }
        }
        for (i, w) in self.workloads.iter().enumerate() {
            self.check_workload(i, w, m)?;
        }
        Ok(())
    }

    fn check_workload(&self, i: usize, w: &Workload, m: usize) -> Result<(), HeavinessError> {
        let index = |field, index, count| HeavinessError::UnknownIndex {
            workload: i,
            field,
            index,
            count,
        };
        if w.owner >= self.users.len() {
            return Err(index("owner", w.owner, self.users.len()));
        }
        if w.node >= self.nodes.len() {
            return Err(index("node", w.node, self.nodes.len()));
        }
        let what = || format!("workload {i}");
        vector(&what, "size", &w.size, m)?;
        match &w.usage {
            Some(usage) => vector(&what, "usage", usage, m),
            None => Ok(()),
        }
    }
}

/// Checks a vector's length and that every component is finite and ≥ 0; `what` names its
/// owner, and is called only to report an error.
fn vector(
    what: &dyn Fn() -> String,
    field: &'static str,
    v: &[f64],
    m: usize,
) -> Result<(), HeavinessError> {
    if v.len() != m {
        return Err(HeavinessError::WrongLength {
            what: what(),
            field,
            found: v.len(),
            expected: m,
        });
    }
    match v.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
        Some(r) => Err(bad(what, format!("{field}[{r}]"), v[r])),
        None => Ok(()),
    }
}

/// The error for a number that is not finite and ≥ 0.
fn bad(what: &dyn Fn() -> String, field: String, value: f64) -> HeavinessError {
    HeavinessError::BadValue {
        what: what(),
        field,
        value,
    }
}
