//! The capacity a run is given: pools or a machine catalogue, and what they total.

use super::*;

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

    /// The catalogue `metric` prices jobs on, and the metric to price them by there (on a
    /// pool, [`UsageMetric::on_a_pool`]).
    pub fn pricing(&self, metric: UsageMetric) -> (MachineCatalogue, UsageMetric) {
        match self {
            Capacity::Machines(_) => (self.catalogue(), metric),
            Capacity::Pool(_) => (self.catalogue(), metric.on_a_pool()),
        }
    }

    /// The machines as a catalogue: a pool is one node holding all of it.
    pub fn catalogue(&self) -> MachineCatalogue {
        match self {
            Capacity::Machines(catalogue) => catalogue.clone(),
            Capacity::Pool(total) => MachineCatalogue {
                types: vec![NodeType::new("pool", 1, total.clone())],
            },
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

    /// Every node's name (its type's, numbered from 1 within a type of several, so that a
    /// Slurm site's node keeps its host name; `pool` for a pool) and amount of the first
    /// resource, in catalogue order.
    pub fn named_nodes(&self) -> Vec<(String, f64)> {
        let first = |c: &[f64]| c.first().copied().unwrap_or(0.0);
        match self {
            Capacity::Pool(total) => vec![("pool".into(), first(total))],
            Capacity::Machines(catalogue) => catalogue
                .types
                .iter()
                .flat_map(|t| {
                    let name = move |k| match t.count {
                        1 => t.name.clone(),
                        _ => format!("{}-{k}", t.name),
                    };
                    (1..=t.count).map(move |k| (name(k), first(&t.capacity)))
                })
                .collect(),
        }
    }

    /// How many machines, or `None` for a pool.
    pub fn machines(&self) -> Option<usize> {
        match self {
            Capacity::Pool(_) => None,
            Capacity::Machines(catalogue) => Some(catalogue.expand().count()),
        }
    }
}
