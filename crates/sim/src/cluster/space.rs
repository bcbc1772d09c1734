//! Where tasks run: one pool per resource (the SDRF evaluation's model, one node) or the nodes
//! of a machine catalogue, each task placed by the run's [`Placement`]. Amounts are normalised
//! by the total capacity, so shares mean the same thing in both.

use super::seams::{FirstFit, Node, Placement};
use fairshare_core::alloc::tasks::Room;
use fairshare_core::model::MachineCatalogue;
use std::sync::Arc;

/// The capacity a run is given, in raw units.
#[derive(Debug, Clone, PartialEq)]
pub enum Capacity {
    /// One pool per resource.
    Pool(Vec<f64>),
    /// The machines of a catalogue, each node a place of its own.
    Machines(MachineCatalogue),
}

/// The most machines a run places tasks on (one capacity vector each).
pub const MOST_MACHINES: u64 = 1_000_000;

impl Capacity {
    /// Every node's capacity vector and speed, in catalogue order (the pool is one node of
    /// speed 1).
    pub fn nodes(&self) -> Vec<(Vec<f64>, f64)> {
        match self {
            Capacity::Pool(total) => vec![(total.clone(), 1.0)],
            Capacity::Machines(catalogue) => catalogue
                .expand()
                .map(|t| {
                    (
                        catalogue.types[t].capacity.clone(),
                        catalogue.types[t].speed,
                    )
                })
                .collect(),
        }
    }

    /// The total of each resource, summed node by node in catalogue order.
    pub fn total(&self) -> Vec<f64> {
        let nodes = self.nodes();
        let mut total = vec![0.0; nodes.first().map_or(0, |(c, _)| c.len())];
        for (node, _) in &nodes {
            total.iter_mut().zip(node).for_each(|(t, c)| *t += c);
        }
        total
    }

    /// How many machines, or `None` for a pool.
    pub fn machines(&self) -> Option<usize> {
        match self {
            Capacity::Pool(_) => None,
            Capacity::Machines(catalogue) => Some(catalogue.expand().count()),
        }
    }
}

/// Free room during a run, normalised by the total capacity: the nodes (one for a pool) and
/// what is in use over all of them.
#[derive(Debug, Clone)]
pub(super) struct Space {
    total: Vec<f64>,
    used: Vec<f64>,
    nodes: Vec<Node>,
    placement: Arc<dyn Placement>,
}

impl Default for Space {
    fn default() -> Space {
        Space {
            total: Vec::new(),
            used: Vec::new(),
            nodes: Vec::new(),
            placement: Arc::new(FirstFit),
        }
    }
}

impl Space {
    pub(super) fn new(
        capacity: &Capacity,
        names: &[String],
        placement: Arc<dyn Placement>,
    ) -> Result<Space, super::SimError> {
        let resources = names.len();
        let bad = |what: String| Err(super::SimError::Capacity(what));
        if let Capacity::Machines(catalogue) = capacity {
            if catalogue.nodes() > MOST_MACHINES {
                return bad(format!(
                    "{} machines; at most {MOST_MACHINES} can be simulated",
                    catalogue.nodes()
                ));
            }
        }
        let nodes = capacity.nodes();
        if nodes.is_empty() {
            return bad("no machines".into());
        }
        let mut total = vec![0.0; resources];
        for (m, speed) in &nodes {
            if m.len() != resources || m.iter().any(|c| !(c.is_finite() && *c >= 0.0)) {
                return bad(format!(
                    "expected {resources} finite non-negative amounts, found {m:?}"
                ));
            }
            if !(speed.is_finite() && *speed > 0.0) {
                return bad(format!("a node's speed must be positive, found {speed}"));
            }
            total.iter_mut().zip(m).for_each(|(t, c)| *t += c);
        }
        if let Some(r) = total.iter().position(|t| !(t.is_finite() && *t > 0.0)) {
            return bad(format!(
                "{} has a total capacity of {}; expected a positive finite amount",
                names[r], total[r]
            ));
        }
        let nodes = nodes
            .into_iter()
            .map(|(m, speed)| Node {
                capacity: m.iter().zip(&total).map(|(c, t)| c / t).collect(),
                used: vec![0.0; resources],
                speed,
            })
            .collect();
        Ok(Space {
            used: vec![0.0; resources],
            total,
            nodes,
            placement,
        })
    }

    /// Raw amounts as fractions of the total capacity.
    pub(super) fn normalise(&self, demand: &[f64]) -> Result<Vec<f64>, String> {
        if demand.len() != self.total.len() || demand.iter().any(|d| !(d.is_finite() && *d >= 0.0))
        {
            return Err(format!(
                "expected {} finite non-negative amounts, found {demand:?}",
                self.total.len()
            ));
        }
        Ok(demand.iter().zip(&self.total).map(|(d, t)| d / t).collect())
    }

    /// Whether a task of this demand fits in an empty cluster.
    pub(super) fn could_ever_fit(&self, demand: &[f64]) -> bool {
        self.nodes.iter().any(|n| n.could_hold(demand))
    }

    /// Fraction of each resource in use.
    pub(super) fn used(&self) -> &[f64] {
        &self.used
    }

    /// Every node's speed, in node order.
    pub(super) fn speeds(&self) -> Vec<f64> {
        self.nodes.iter().map(|n| n.speed).collect()
    }

    /// Frees what a task held.
    pub(super) fn release(&mut self, place: usize, demand: &[f64]) {
        if let Some(node) = self.nodes.get_mut(place) {
            release(&mut node.used, demand);
        }
        release(&mut self.used, demand);
    }
}

/// Takes `demand` off `used`, never below zero.
fn release(used: &mut [f64], demand: &[f64]) {
    used.iter_mut()
        .zip(demand)
        .for_each(|(u, d)| *u = (*u - d).max(0.0));
}

/// Adds `demand` to `used`.
fn take(used: &mut [f64], demand: &[f64]) {
    used.iter_mut().zip(demand).for_each(|(u, d)| *u += d);
}

impl Room for Space {
    /// Places `demand` on the node the placement selects; a placement that names a node that
    /// does not exist has placed nothing.
    fn place(&mut self, demand: &[f64]) -> Option<usize> {
        let place = self.placement.select_node(demand, &self.nodes)?;
        take(&mut self.nodes.get_mut(place)?.used, demand);
        take(&mut self.used, demand);
        Some(place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use fairshare_core::alloc::tasks::fits;

    impl Space {
        fn new_first_fit(
            capacity: &Capacity,
            names: &[String],
        ) -> Result<Space, super::super::SimError> {
            Space::new(capacity, names, Arc::new(FirstFit))
        }
    }

    /// One machine per capacity vector.
    fn machines(nodes: Vec<Vec<f64>>) -> Capacity {
        let types = nodes
            .into_iter()
            .enumerate()
            .map(|(i, c)| fairshare_core::model::NodeType::new(format!("m{i}"), 1, c))
            .collect();
        Capacity::Machines(MachineCatalogue::new(types))
    }

    fn names() -> Vec<String> {
        vec!["cpu".into(), "mem".into()]
    }

    #[test]
    fn machines_place_first_fit_and_release() {
        let mut space =
            Space::new_first_fit(&machines(vec![vec![4.0, 4.0], vec![4.0, 4.0]]), &names())
                .unwrap();
        let task = space.normalise(&[2.5, 1.0]).unwrap();
        assert_eq!(space.place(&task), Some(0));
        assert_eq!(space.place(&task), Some(1));
        assert_eq!(
            space.place(&task),
            None,
            "pooled room remains but no machine has it"
        );
        assert!(fits(space.used(), &task));
        space.release(0, &task);
        assert_eq!(space.place(&task), Some(0));
        assert!(!space.could_ever_fit(&space.normalise(&[5.0, 1.0]).unwrap()));
    }

    /// A placement that names a node past the end.
    #[derive(Debug)]
    struct PastTheEnd;

    impl Placement for PastTheEnd {
        fn select_node(&self, _: &[f64], nodes: &[Node]) -> Option<usize> {
            Some(nodes.len())
        }
    }

    #[test]
    fn a_placement_naming_no_node_places_nothing() {
        let mut space = Space::new(
            &machines(vec![vec![4.0, 4.0]]),
            &names(),
            Arc::new(PastTheEnd),
        )
        .unwrap();
        let task = space.normalise(&[1.0, 1.0]).unwrap();
        assert_eq!(space.place(&task), None);
        assert_eq!(space.used(), &[0.0, 0.0]);
    }

    #[test]
    fn pool_checks_capacity() {
        let no_gpu = Space::new_first_fit(&Capacity::Pool(vec![1.0, 0.0]), &names()).err();
        let expected = "capacity: mem has a total capacity of 0; expected a positive finite amount";
        assert_eq!(no_gpu.unwrap().to_string(), expected);
        let huge = machines(vec![vec![1.0, f64::MAX], vec![1.0, f64::MAX]]);
        assert!(
            Space::new_first_fit(&huge, &names()).is_err(),
            "a sum that overflows"
        );
        assert!(Space::new_first_fit(&Capacity::Pool(vec![1.0]), &names()).is_err());
        let many = fairshare_core::model::NodeType::new("m", u32::MAX, vec![1.0, 1.0]);
        let catalogue = fairshare_core::model::MachineCatalogue::new(vec![many]);
        let refused = Space::new_first_fit(&Capacity::Machines(catalogue), &names()).err();
        assert!(refused.unwrap().to_string().contains("at most 1000000"));
        assert!(Space::new_first_fit(&machines(vec![]), &names()).is_err());
    }
}
