//! The process engine's tests.

use super::dispatch::{clearly_below, first_served};
use super::*;
use proptest::prelude::*;

fn waiting(k: usize, priority: f64, entered: u64) -> Waiting {
    Waiting {
        entered,
        process: k,
        priority,
        valid_before: 1,
        epoch: 0,
        at: 0,
        bounds: 0,
        served_until: 0,
    }
}

proptest! {
    /// Passing over priorities clearly below the highest picks the process the scan of
    /// every priority picks, ties within the tolerance included.
    #[test]
    fn passing_over_what_is_clearly_below_changes_nobody_served(
        entries in prop::collection::vec((0u8..6, 0u64..4, any::<bool>()), 1..24),
        scale in prop::sample::select(vec![1e-3, 1.0, 1e3, 1e9]),
    ) {
        // Few distinct levels, some a tolerance apart, so that ties are common.
        let queue: Vec<Waiting> = entries
            .iter()
            .enumerate()
            .map(|(k, &(level, entered, _))| {
                let p = scale * (f64::from(level) - 2.0) * (1.0 + 1e-13 * k as f64);
                waiting(k, p, entered)
            })
            .collect();
        let best = queue.iter().map(|w| w.priority).fold(f64::NEG_INFINITY, f64::max);
        let skipped: Vec<bool> = entries
            .iter()
            .zip(&queue)
            .map(|(&(_, _, skip), w)| skip && clearly_below(w.priority, best))
            .collect();
        let every = first_served(&queue, |_| true);
        let some = first_served(&queue, |w| !skipped[w.process]);
        prop_assert_eq!(every, some);
    }
}
