//! First fit: the first node, in catalogue order, with room.

use super::{NodeLoad, Placement, PlacementEntry};
use std::sync::Arc;

/// `--placement first`.
pub(super) const FIRST: PlacementEntry = PlacementEntry {
    name: "first",
    about: "The first node, in catalogue order, with room",
    build: || Arc::new(FirstFit),
};

/// The first node, in catalogue order, with room for the task.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstFit;

impl Placement for FirstFit {
    fn select_node(&self, demand: &[f64], nodes: &[NodeLoad]) -> Option<usize> {
        nodes.iter().position(|n| n.has_room(demand))
    }
}
