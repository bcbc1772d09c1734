//! Placement: on which node a task, or one node's part of a parallel job, starts. The
//! engine's space asks the [`Placement`] node by node, from every node's capacity, use and
//! speed. A new placement is one file here with its type and its [`PlacementEntry`], and one
//! line in [`PlacementEntry::ALL`](Choice::ALL).

mod best;
mod first;
mod slurm;

pub use best::BestFit;
pub use first::FirstFit;
pub use slurm::SlurmNodes;

use fairshare_core::alloc::tasks::FIT_SLACK;
use fairshare_core::choice::Choice;
use std::fmt;
use std::sync::Arc;

/// A node as a placement sees it: capacity and use as fractions of the cluster's total, and
/// its speed.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLoad {
    /// What the node offers, as a fraction of the cluster's total of each resource.
    pub capacity: Vec<f64>,
    /// What running tasks use of it, in the same units.
    pub used: Vec<f64>,
    /// Relative speed: a task runs `runtime / speed` here.
    pub speed: f64,
    /// Whether the job being placed may not use this node (its properties do not match, the
    /// job already holds it, or the job wants it whole and it is not empty).
    pub closed: bool,
}

impl NodeLoad {
    /// Whether a task of normalised `demand` fits beside what runs here now.
    pub fn has_room(&self, demand: &[f64]) -> bool {
        !self.closed
            && self
                .used
                .iter()
                .zip(demand)
                .zip(&self.capacity)
                .all(|((u, d), c)| u + d <= c + FIT_SLACK)
    }

    /// Whether nothing runs here.
    pub fn is_empty(&self) -> bool {
        self.used.iter().all(|u| *u <= FIT_SLACK)
    }

    /// How many parts of `each` this node takes for a job: none without room for one; with
    /// room, as many as fit beside what runs now when the job spreads over processors
    /// (`spread`), else one (a job held to a number of nodes takes one part of each).
    pub fn parts_it_holds(&self, each: &[f64], spread: bool) -> u32 {
        match (self.has_room(each), spread) {
            (false, _) => 0,
            (true, true) => self.units_that_fit(each),
            (true, false) => 1,
        }
    }

    /// How many units of `each` fit here beside what runs now (at least one: ask only of a
    /// node with room for one).
    fn units_that_fit(&self, each: &[f64]) -> u32 {
        let free = self.capacity.iter().zip(&self.used).zip(each);
        let fits = free
            .filter(|(_, d)| **d > 0.0)
            .map(|((c, u), d)| ((c - u + FIT_SLACK) / d).floor())
            .fold(f64::from(u32::MAX), f64::min);
        (fits.max(1.0)) as u32
    }
}

/// Where a whole job goes, for a placement that chooses a job's nodes together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobPlacement {
    /// Part by part, each through [`Placement::select_node`].
    PartByPart,
    /// On these nodes, each with how many of the job's parts it takes.
    On(Vec<(usize, u32)>),
    /// Nowhere: the job does not fit now.
    NoRoom,
}

/// Chooses the node a task, or one node's part of a parallel job, starts on.
pub trait Placement: fmt::Debug + Send + Sync {
    /// A node with room ([`NodeLoad::has_room`]) for normalised `demand`, given every node's state;
    /// `None` when no node has room.
    fn select_node(&self, demand: &[f64], nodes: &[NodeLoad]) -> Option<usize>;

    /// Where a job of `parts` parts of normalised `each` goes, for a placement that chooses a
    /// job's nodes together; `spread`: a node may take several parts (a job spread over
    /// processors), else one each (a job held to `parts` nodes). By default, part by part.
    fn place(
        &self,
        _each: &[f64],
        _parts: u32,
        _spread: bool,
        _nodes: &[NodeLoad],
    ) -> JobPlacement {
        JobPlacement::PartByPart
    }
}

/// A placement fairshare knows, as `--placement` chooses it: its name, one line of help, and
/// how to build it. Each placement declares its own in its file;
/// [`PlacementEntry::ALL`](Choice::ALL) lists them.
#[derive(Clone, Copy)]
pub struct PlacementEntry {
    /// The name `--placement` takes.
    pub name: &'static str,
    /// One line of help.
    pub about: &'static str,
    /// Builds the placement.
    pub build: fn() -> Arc<dyn Placement>,
}

impl Choice for PlacementEntry {
    const ALL: &'static [PlacementEntry] = &[first::FIRST, best::BEST, slurm::SLURM];

    fn name(self) -> &'static str {
        self.name
    }

    fn about(self) -> &'static str {
        self.about
    }
}

impl PartialEq for PlacementEntry {
    fn eq(&self, other: &PlacementEntry) -> bool {
        self.name == other.name
    }
}

impl Eq for PlacementEntry {}

impl Default for PlacementEntry {
    /// The first registered: first fit.
    fn default() -> PlacementEntry {
        PlacementEntry::ALL[0]
    }
}

impl fmt::Debug for PlacementEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl PlacementEntry {
    /// [`FirstFit`].
    pub const FIRST: PlacementEntry = first::FIRST;
    /// [`BestFit`].
    pub const BEST: PlacementEntry = best::BEST;
    /// [`SlurmNodes`].
    pub const SLURM: PlacementEntry = slurm::SLURM;

    /// The placement.
    pub fn placement(self) -> Arc<dyn Placement> {
        (self.build)()
    }
}
