//! The machines of a cluster: node types, each with a count and what one node offers.
//!
//! Trace readers build a [`MachineCatalogue`] from `.machines` files and node lists; the
//! cluster engine places work on it, and the heterogeneous fairshare of later work prices jobs
//! against it. One type serves them all, so speed, cost and properties are read once.

use serde::Serialize;

/// The property that says a node belongs to a partition (`partition:gpu`, as [`partition_property`]
/// writes it): a job of that partition runs only on such nodes, when some node declares it.
pub const PARTITION_PROPERTY: &str = "partition:";

/// The node property of partition `name`.
pub fn partition_property(name: &str) -> String {
    format!("{PARTITION_PROPERTY}{name}")
}

/// One kind of node and how many the cluster has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeType {
    /// The type's name (a cluster name, a machine model, or a line number).
    pub name: String,
    /// How many nodes of this type.
    pub count: u32,
    /// What one node offers, one amount per resource, in the trace's units.
    pub capacity: Vec<f64>,
    /// Relative speed (1 = the reference machine): a task runs `runtime / speed` here.
    pub speed: f64,
    /// Relative cost of one node (1 unless a site says otherwise).
    pub cost: f64,
    /// SPEC speed per processor, which a penalty multiplies a job's walltime by (1 unless a
    /// catalogue says otherwise; MetaCentrum's scheduler defaults to 10).
    pub spec: f64,
    /// Properties jobs may require (architecture, cluster, …).
    pub properties: Vec<String>,
}

impl NodeType {
    /// `count` nodes named `name` offering `capacity`, at speed 1 and cost 1, without
    /// properties.
    pub fn new(name: impl Into<String>, count: u32, capacity: Vec<f64>) -> NodeType {
        NodeType {
            name: name.into(),
            count,
            capacity,
            speed: 1.0,
            cost: 1.0,
            spec: 1.0,
            properties: Vec::new(),
        }
    }
}

/// The node types of a cluster, in the order their source lists them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MachineCatalogue {
    /// The node types.
    pub types: Vec<NodeType>,
}

impl MachineCatalogue {
    /// A catalogue of these node types.
    pub fn new(types: Vec<NodeType>) -> MachineCatalogue {
        MachineCatalogue { types }
    }

    /// How many nodes in all.
    pub fn nodes(&self) -> u64 {
        self.types.iter().map(|t| u64::from(t.count)).sum()
    }

    /// Every node, expanded: its type's index, once per node, in catalogue order.
    pub fn expand(&self) -> impl Iterator<Item = usize> + '_ {
        self.types
            .iter()
            .enumerate()
            .flat_map(|(i, t)| std::iter::repeat_n(i, t.count as usize))
    }

    /// The catalogue over a subset of resources: each node type's capacity at `keep`'s
    /// indices, in that order; `None` when a type lists fewer resources than `keep` needs.
    pub fn project(&self, keep: &[usize]) -> Option<MachineCatalogue> {
        let types = self
            .types
            .iter()
            .map(|t| {
                let capacity = keep
                    .iter()
                    .map(|&r| t.capacity.get(r).copied())
                    .collect::<Option<Vec<f64>>>()?;
                Some(NodeType {
                    capacity,
                    ..t.clone()
                })
            })
            .collect::<Option<Vec<NodeType>>>()?;
        Some(MachineCatalogue { types })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_and_projects() {
        let catalogue = MachineCatalogue::new(vec![
            NodeType::new("zewura", 2, vec![80.0, 512.0]),
            NodeType::new("zegox", 1, vec![12.0, 90.0]),
        ]);
        assert_eq!(catalogue.nodes(), 3);
        assert_eq!(catalogue.expand().collect::<Vec<_>>(), vec![0, 0, 1]);
        let cpus = catalogue.project(&[0]).unwrap();
        assert_eq!(cpus.types[1].capacity, vec![12.0]);
        assert!(catalogue.project(&[2]).is_none());
    }
}
