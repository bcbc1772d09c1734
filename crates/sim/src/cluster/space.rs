//! Where tasks run: one pool per resource (the SDRF evaluation's model) or a set of machines
//! (first fit). Amounts are normalised by the total capacity, so shares mean the same thing in
//! both.

use fairshare_core::alloc::tasks::{Pool, Room, FIT_SLACK};
use fairshare_core::model::MachineCatalogue;

/// The capacity a run is given, in raw units.
#[derive(Debug, Clone, PartialEq)]
pub enum Capacity {
    /// One pool per resource.
    Pool(Vec<f64>),
    /// The machines of a catalogue, each node a place of its own.
    Machines(MachineCatalogue),
}

impl Capacity {
    /// Every node's capacity vector, in catalogue order (the pool is one node).
    pub fn nodes(&self) -> Vec<Vec<f64>> {
        match self {
            Capacity::Pool(total) => vec![total.clone()],
            Capacity::Machines(catalogue) => catalogue
                .expand()
                .map(|t| catalogue.types[t].capacity.clone())
                .collect(),
        }
    }

    /// The total of each resource, summed node by node in catalogue order.
    pub fn total(&self) -> Vec<f64> {
        let nodes = self.nodes();
        let mut total = vec![0.0; nodes.first().map_or(0, Vec::len)];
        for node in &nodes {
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

/// Free room during a run, normalised by the total capacity.
#[derive(Debug, Clone, Default)]
pub(super) struct Space {
    total: Vec<f64>,
    pool: Pool,
    /// Per machine, its capacity and its use (empty for a pool).
    machines: Vec<(Vec<f64>, Vec<f64>)>,
}

impl Space {
    pub(super) fn new(capacity: &Capacity, names: &[String]) -> Result<Space, super::SimError> {
        let resources = names.len();
        let bad = |what: String| Err(super::SimError::Capacity(what));
        let machines = capacity.nodes();
        if machines.is_empty() {
            return bad("no machines".into());
        }
        let mut total = vec![0.0; resources];
        for m in &machines {
            if m.len() != resources || m.iter().any(|c| !(c.is_finite() && *c >= 0.0)) {
                return bad(format!(
                    "expected {resources} finite non-negative amounts, found {m:?}"
                ));
            }
            total.iter_mut().zip(m).for_each(|(t, c)| *t += c);
        }
        if let Some(r) = total.iter().position(|t| !(t.is_finite() && *t > 0.0)) {
            return bad(format!(
                "{} has a total capacity of {}; expected a positive finite amount",
                names[r], total[r]
            ));
        }
        let share = |m: &Vec<f64>| {
            m.iter()
                .zip(&total)
                .map(|(c, t)| c / t)
                .collect::<Vec<f64>>()
        };
        let machines = match capacity {
            Capacity::Pool(_) => Vec::new(),
            Capacity::Machines(_) => machines
                .iter()
                .map(|m| (share(m), vec![0.0; resources]))
                .collect(),
        };
        Ok(Space {
            pool: Pool {
                used: vec![0.0; resources],
            },
            total,
            machines,
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
        if self.machines.is_empty() {
            demand.iter().all(|d| *d <= 1.0 + FIT_SLACK)
        } else {
            self.machines
                .iter()
                .any(|(cap, _)| demand.iter().zip(cap).all(|(d, c)| *d <= c + FIT_SLACK))
        }
    }

    /// Fraction of each resource in use.
    pub(super) fn used(&self) -> &[f64] {
        &self.pool.used
    }

    /// Frees what a task held.
    pub(super) fn release(&mut self, place: usize, demand: &[f64]) {
        if let Some((_, used)) = self.machines.get_mut(place) {
            used.iter_mut()
                .zip(demand)
                .for_each(|(u, d)| *u = (*u - d).max(0.0));
        }
        self.pool
            .used
            .iter_mut()
            .zip(demand)
            .for_each(|(u, d)| *u = (*u - d).max(0.0));
    }
}

impl Room for Space {
    fn place(&mut self, demand: &[f64]) -> Option<usize> {
        if self.machines.is_empty() {
            return self.pool.place(demand);
        }
        let place = self.machines.iter().position(|(cap, used)| {
            used.iter()
                .zip(demand)
                .zip(cap)
                .all(|((u, d), c)| u + d <= c + FIT_SLACK)
        })?;
        let (_, used) = &mut self.machines[place];
        used.iter_mut().zip(demand).for_each(|(u, d)| *u += d);
        self.pool
            .used
            .iter_mut()
            .zip(demand)
            .for_each(|(u, d)| *u += d);
        Some(place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use fairshare_core::alloc::tasks::fits;

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
            Space::new(&machines(vec![vec![4.0, 4.0], vec![4.0, 4.0]]), &names()).unwrap();
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

    #[test]
    fn pool_checks_capacity() {
        let no_gpu = Space::new(&Capacity::Pool(vec![1.0, 0.0]), &names()).err();
        let expected = "capacity: mem has a total capacity of 0; expected a positive finite amount";
        assert_eq!(no_gpu.unwrap().to_string(), expected);
        let huge = machines(vec![vec![1.0, f64::MAX], vec![1.0, f64::MAX]]);
        assert!(Space::new(&huge, &names()).is_err(), "a sum that overflows");
        assert!(Space::new(&Capacity::Pool(vec![1.0]), &names()).is_err());
        assert!(Space::new(&machines(vec![]), &names()).is_err());
    }
}
