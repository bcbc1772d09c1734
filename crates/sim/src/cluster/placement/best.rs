//! Best fit: the node left fullest, to keep empty nodes for wide jobs.

use super::{NodeLoad, Placement, PlacementEntry};
use std::sync::Arc;

/// `--placement best`.
pub(super) const BEST: PlacementEntry = PlacementEntry {
    name: "best",
    about: "The node with room that is left fullest",
    build: || Arc::new(BestFit),
};

/// The node with room whose free amount left after the task is smallest (summed over
/// resources, in fractions of the cluster), the first such in catalogue order on ties: packs
/// small jobs onto busy nodes and keeps empty nodes for wide ones.
#[derive(Debug, Clone, Copy, Default)]
pub struct BestFit;

impl Placement for BestFit {
    fn select_node(&self, demand: &[f64], nodes: &[NodeLoad]) -> Option<usize> {
        let left = |n: &NodeLoad| -> f64 {
            let free = n.capacity.iter().zip(&n.used).zip(demand);
            free.map(|((c, u), d)| c - u - d).sum()
        };
        let fitting = nodes.iter().enumerate().filter(|(_, n)| n.has_room(demand));
        fitting
            .min_by(|(i, a), (j, b)| left(a).total_cmp(&left(b)).then(i.cmp(j)))
            .map(|(i, _)| i)
    }
}
