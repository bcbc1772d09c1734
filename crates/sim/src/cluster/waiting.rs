//! The smallest piece of any waiting job, per resource: what tells a pass, cheaply, that no
//! waiting job can start now, so that backfilling stops scanning a long queue on a full
//! machine.

use super::space::Request;
use std::collections::BTreeMap;

/// Per resource, the amounts the waiting jobs need on one node (a node's share of a
/// parallel job, one processor of a spread one), counted.
#[derive(Debug, Clone, Default)]
pub(super) struct Smallest {
    /// Per resource, amount (as ordered bits of a non-negative float) → how many jobs.
    pieces: Vec<BTreeMap<u64, u32>>,
}

impl Smallest {
    /// Counts a job that starts waiting.
    pub(super) fn add(&mut self, request: &Request) {
        let piece = request.piece();
        self.pieces.resize_with(piece.len(), BTreeMap::new);
        for (counts, amount) in self.pieces.iter_mut().zip(piece) {
            *counts.entry(amount.max(0.0).to_bits()).or_default() += 1;
        }
    }

    /// Forgets a job that stops waiting.
    pub(super) fn remove(&mut self, request: &Request) {
        for (counts, amount) in self.pieces.iter_mut().zip(request.piece()) {
            let key = amount.max(0.0).to_bits();
            if let Some(n) = counts.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(&key);
                }
            }
        }
    }

    /// The least any waiting job needs of each resource on one node; `None` when none waits.
    pub(super) fn least(&self) -> Option<Vec<f64>> {
        if self.pieces.is_empty() {
            return None;
        }
        self.pieces
            .iter()
            .map(|counts| counts.keys().next().map(|bits| f64::from_bits(*bits)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::space::Shape;

    fn spread(per_unit: Vec<f64>) -> Request {
        Request {
            shape: Shape::Spread { units: 4, per_unit },
            exclusive: false,
            eligible: None,
        }
    }

    #[test]
    fn the_least_follows_arrivals_and_starts() {
        let mut smallest = Smallest::default();
        assert_eq!(smallest.least(), None);
        let (a, b) = (spread(vec![0.5, 0.1]), spread(vec![0.2, 0.3]));
        smallest.add(&a);
        smallest.add(&b);
        smallest.add(&b);
        assert_eq!(smallest.least(), Some(vec![0.2, 0.1]));
        smallest.remove(&a);
        assert_eq!(smallest.least(), Some(vec![0.2, 0.3]));
        smallest.remove(&b);
        assert_eq!(
            smallest.least(),
            Some(vec![0.2, 0.3]),
            "one of b's is still waiting"
        );
        smallest.remove(&b);
        assert_eq!(smallest.least(), None);
    }
}
