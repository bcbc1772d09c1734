//! What a job asks for (a shape over nodes or processors anywhere) and where it was placed.

use super::*;

/// What a job asks of the nodes, in normalised units.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::cluster) struct Request {
    /// How its demand is divided over nodes.
    pub shape: Shape,
    /// Whether it takes its nodes whole.
    pub exclusive: bool,
    /// Which nodes its properties allow (`None`: all).
    pub eligible: Option<Arc<[bool]>>,
}

/// How a job's demand is divided over nodes.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::cluster) enum Shape {
    /// `nodes` distinct nodes, each giving `per_node`.
    Nodes {
        /// How many nodes.
        nodes: u32,
        /// The demand on each.
        per_node: Vec<f64>,
    },
    /// `units` processors on any nodes, each processor with `per_unit`.
    Spread {
        /// How many processors.
        units: u32,
        /// The demand of each.
        per_unit: Vec<f64>,
    },
}

impl Request {
    /// What it needs on one node at the least: one node's share, or one processor's.
    pub(in crate::cluster) fn piece(&self) -> &[f64] {
        match &self.shape {
            Shape::Nodes { per_node, .. } => per_node,
            Shape::Spread { per_unit, .. } => per_unit,
        }
    }

    /// This request as a key, equal for equal requests: its shape (amounts by their bits),
    /// whether it is exclusive, and which nodes it may use, by the set's address (the space
    /// hands out one set per list of properties and keeps it as long as it lives).
    pub(in crate::cluster) fn key(&self) -> Vec<u64> {
        let (tag, count, each) = match &self.shape {
            Shape::Nodes { nodes, per_node } => (0, *nodes, per_node),
            Shape::Spread { units, per_unit } => (1, *units, per_unit),
        };
        let eligible = self.eligible.as_ref().map_or(0, |e| e.as_ptr() as u64);
        let head = [tag, u64::from(count), u64::from(self.exclusive), eligible];
        head.into_iter()
            .chain(each.iter().map(|d| d.to_bits()))
            .collect()
    }
}

/// Where a job runs: each node it holds and what it holds there.
pub(in crate::cluster) type Placed = Vec<(usize, Vec<f64>)>;

/// The total of each resource over `placed`.
pub(in crate::cluster) fn held(placed: &Placed, resources: usize) -> Vec<f64> {
    let mut total = vec![0.0; resources];
    for (_, amount) in placed {
        total.iter_mut().zip(amount).for_each(|(t, a)| *t += a);
    }
    total
}
