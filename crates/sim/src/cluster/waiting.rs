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
    /// The least of each resource, kept up to date: passes ask for it far more often than
    /// jobs come and go.
    least: Option<Vec<f64>>,
}

impl Smallest {
    /// Counts a job that starts waiting.
    pub(super) fn add(&mut self, request: &Request) {
        let piece = request.piece();
        self.pieces.resize_with(piece.len(), BTreeMap::new);
        for (counts, amount) in self.pieces.iter_mut().zip(piece) {
            *counts.entry(amount.max(0.0).to_bits()).or_default() += 1;
        }
        self.find_least();
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
        self.find_least();
    }

    /// The least any waiting job needs of each resource on one node; `None` when none waits.
    pub(super) fn least(&self) -> Option<&[f64]> {
        self.least.as_deref()
    }

    /// Finds the least of each resource again, after a job came or went.
    fn find_least(&mut self) {
        let mut least = self.least.take().unwrap_or_default();
        least.clear();
        for counts in &self.pieces {
            let Some(bits) = counts.keys().next() else {
                return;
            };
            least.push(f64::from_bits(*bits));
        }
        self.least = (!least.is_empty()).then_some(least);
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
        assert_eq!(smallest.least(), Some(&[0.2, 0.1][..]));
        smallest.remove(&a);
        assert_eq!(smallest.least(), Some(&[0.2, 0.3][..]));
        smallest.remove(&b);
        assert_eq!(
            smallest.least(),
            Some(&[0.2, 0.3][..]),
            "one of b's is still waiting"
        );
        smallest.remove(&b);
        assert_eq!(smallest.least(), None);
    }
}
