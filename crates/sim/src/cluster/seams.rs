//! The cluster engine's pluggable parts besides the policy: the **discipline** decides what
//! may start in a scheduling pass, the **placement** decides on which node.
//!
//! The engine ranks users through the policy's [`Ranker`](fairshare_core::rank::Ranker), then
//! hands the ranked queue and the free room to its [`Discipline`]; the room asks its
//! [`Placement`] for a node each time a task is to start. Today's implementations reproduce the
//! SDRF paper's simulator — progressive filling ([`Fill`]) and first fit ([`FirstFit`]).
//! Parallel-job placements can slot in beside them; backfilling with reservations will also
//! need the running tasks' expected ends, which a pass does not see yet.

use fairshare_core::alloc::tasks::{progressive_fill, Blocking, Room, TaskQueue, FIT_SLACK};
use std::fmt;

/// A node as a placement sees it: capacity and use as fractions of the cluster's total, and
/// its speed.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// What the node offers, as a fraction of the cluster's total of each resource.
    pub capacity: Vec<f64>,
    /// What running tasks use of it, in the same units.
    pub used: Vec<f64>,
    /// Relative speed: a task runs `runtime / speed` here.
    pub speed: f64,
}

impl Node {
    /// Whether a task of normalised `demand` fits beside what runs here now.
    pub fn has_room(&self, demand: &[f64]) -> bool {
        self.used
            .iter()
            .zip(demand)
            .zip(&self.capacity)
            .all(|((u, d), c)| u + d <= c + FIT_SLACK)
    }

    /// Whether a task of normalised `demand` fits on the node when it is empty.
    pub fn could_hold(&self, demand: &[f64]) -> bool {
        demand
            .iter()
            .zip(&self.capacity)
            .all(|(d, c)| *d <= c + FIT_SLACK)
    }
}

/// Chooses the node a task starts on.
pub trait Placement: fmt::Debug + Send + Sync {
    /// The node for a task of normalised `demand`, given every node's state; `None` when no
    /// node has room now.
    fn select_node(&self, demand: &[f64], nodes: &[Node]) -> Option<usize>;
}

/// The first node, in catalogue order, with room for the task.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstFit;

impl Placement for FirstFit {
    fn select_node(&self, demand: &[f64], nodes: &[Node]) -> Option<usize> {
        nodes.iter().position(|n| n.has_room(demand))
    }
}

/// Runs one scheduling pass: starts tasks from the ranked queue while it allows.
pub trait Discipline: fmt::Debug + Send + Sync {
    /// Starts what may start now, taking users from `queue` in rank order and room from
    /// `room`; returns how many tasks started.
    fn pass(&self, queue: &mut dyn TaskQueue, room: &mut dyn Room) -> u64;
}

/// Progressive filling (SDRF's Algorithm 1): serve the first user's next task while it fits;
/// when it does not, stop (head-of-line, the paper's rule) or skip that user for the pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill {
    /// What happens when the chosen user's task does not fit.
    pub blocking: Blocking,
}

impl Discipline for Fill {
    fn pass(&self, queue: &mut dyn TaskQueue, room: &mut dyn Room) -> u64 {
        progressive_fill(queue, room, self.blocking)
    }
}
