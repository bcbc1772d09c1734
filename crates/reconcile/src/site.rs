//! From the order in which a policy would start the pending jobs to each job's site factor.
//!
//! Every policy fairshare ranks with orders the users who wait; Slurm wants a number per job.
//! The adapter plays the policy's progressive filling out over the pending jobs, and the order
//! of starts falls into runs, each one association's jobs started one after another: under
//! Fair Tree one run per association, under SDRF or DRF associations taking turns. Each run
//! gets one site factor, falling along the runs ([`stable_factors`]), so that Slurm's other
//! factors (age, size, QOS) keep the relative order of the jobs within a run, and the jobs of
//! one user keep theirs. A fresh queue gets Fair Tree's own factors: for `n` runs, the `i`-th
//! (from 0) gets `(n − i) / n` times a weight, rounded to a whole number as Slurm stores it —
//! exactly Slurm's Fair Tree factor when the order is Fair Tree's. Later passes keep the
//! factors Slurm already holds wherever they still fall along the order, so a steady queue
//! needs few writes.
//!
//! Two mappings say what the site factor does beside Slurm's own factors:
//! - [`Mapping::Replace`]: the site sets `PriorityWeightFairshare=0` and fairshare's factor
//!   takes the fairshare factor's place. With a weight well above the other factors' weights,
//!   the order of jobs is fairshare's.
//! - [`Mapping::Add`]: Slurm's fairshare factor stays; fairshare's is added beside it, as one
//!   more factor with its own weight.
//!
//! Both compute the same numbers; they differ in what the site configures and in what the
//! adapter checks before it writes.

use fairshare_core::choice::Choice;
use fairshare_core::rank::order_factor;

/// How fairshare's factor enters a job's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mapping {
    /// Fairshare's factor instead of Slurm's (`PriorityWeightFairshare=0`).
    #[default]
    Replace,
    /// Fairshare's factor beside Slurm's own.
    Add,
}

impl Choice for Mapping {
    const ALL: &'static [Mapping] = &[Mapping::Replace, Mapping::Add];

    fn name(self) -> &'static str {
        match self {
            Mapping::Replace => "replace",
            Mapping::Add => "add",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Mapping::Replace => "fairshare's factor replaces Slurm's fairshare factor (the site sets PriorityWeightFairshare=0), so the order is fairshare's",
            Mapping::Add => "fairshare's factor is added beside Slurm's own factors",
        }
    }
}

/// The site factor of a factor in [0, 1] under `weight`: `factor × weight`, rounded, the
/// factor clamped into [0, 1] first (a NaN counts as 0).
pub fn site_factor(factor: f64, weight: u32) -> i64 {
    let factor = if factor.is_nan() {
        0.0
    } else {
        factor.clamp(0.0, 1.0)
    };
    (factor * f64::from(weight)).round() as i64
}

/// The site factors of `n = held.len()` runs of jobs, first to last (a run is one
/// association's jobs that the policy starts one after another), changing as few as it can of
/// what Slurm already holds: `held[b]` is what the first job of run `b` holds.
///
/// Factors fall strictly along the runs, from at most `weight` down to at least 1 (0 is a job
/// fairshare does not rank). The runs whose held factors already fall along the order (a
/// longest such subsequence) keep them; the others get factors spread evenly in the gaps
/// between. Only when some gap has too few whole numbers left are all the runs given anew
/// `weight × (n − b) / n`, Fair Tree's factors. With `weight < n`, factors cannot all differ:
/// those are clamped to 1 and later runs tie.
pub fn stable_factors(held: &[Option<i64>], weight: u32) -> Vec<i64> {
    let top = i64::from(weight);
    let usable: Vec<Option<i64>> = (held.iter())
        .map(|h| h.filter(|v| (1..=top).contains(v)))
        .collect();
    let kept = falling_subsequence(&usable);
    let value = |b: usize| usable.get(b).copied().flatten().unwrap_or(0);
    let Some(&first) = kept.first() else {
        return evenly(held.len(), weight);
    };
    // Above the first kept run: from the weight down, the first new run at the weight.
    let (room, count) = (top - value(first), first as i64);
    if room < count {
        return evenly(held.len(), weight);
    }
    let mut factors: Vec<i64> = (0..count).map(|j| top - j * room / count.max(1)).collect();
    // Each kept run, then the runs below it spread down to the next kept one (or to 0).
    let ends = kept.iter().skip(1).copied().chain([held.len()]);
    for (&at, next) in kept.iter().zip(ends) {
        let (high, low, gap) = (value(at), value(next), (next - at - 1) as i64);
        if high - low - 1 < gap {
            return evenly(held.len(), weight);
        }
        factors.push(high);
        factors.extend((0..gap).map(|j| high - (j + 1) * (high - low) / (gap + 1)));
    }
    factors
}

/// `weight × (n − b) / n` ([`order_factor`]) for each of `n` runs, rounded, at least 1.
fn evenly(n: usize, weight: u32) -> Vec<i64> {
    (0..n)
        .map(|b| site_factor(order_factor(b, n), weight).max(1))
        .collect()
}

/// The indices of a longest subsequence of the `Some` values that falls strictly, in
/// O(n log n) (patience sorting).
fn falling_subsequence(values: &[Option<i64>]) -> Vec<usize> {
    // ends[k]: the index ending the best falling subsequence of length k + 1 found so far
    // (the one whose last value is highest); before[i]: the index before i in its subsequence.
    let mut ends: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = vec![None; values.len()];
    for (i, value) in values.iter().enumerate() {
        let Some(v) = *value else { continue };
        let length = ends.partition_point(|&e| values[e].is_some_and(|w| w > v));
        before[i] = length.checked_sub(1).map(|k| ends[k]);
        match ends.get_mut(length) {
            Some(end) => *end = i,
            None => ends.push(i),
        }
    }
    let mut chain = Vec::new();
    let mut at = ends.last().copied();
    while let Some(i) = at {
        chain.push(i);
        at = before[i];
    }
    chain.reverse();
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn held_factors_that_fall_along_the_order_are_kept() {
        // A fresh queue: Fair Tree's factors.
        assert_eq!(stable_factors(&[None, None, None], 1000), [1000, 667, 333]);
        // The second run started; a new run came last: the others keep theirs.
        let held = [Some(1000), Some(333), None];
        assert_eq!(stable_factors(&held, 1000), [1000, 333, 167]);
        // Two runs swapped: one keeps its factor, the other moves above it.
        let held = [Some(333), Some(667), Some(100)];
        assert_eq!(stable_factors(&held, 1000), [1000, 667, 100]);
        let held = [Some(900), Some(100), Some(500)];
        assert_eq!(stable_factors(&held, 1000), [900, 700, 500]);
        // No room left between 5 and 4: all anew.
        let held = [Some(5), None, Some(4)];
        assert_eq!(stable_factors(&held, 9), [9, 6, 3]);
        // Factors above the weight, and 0, are not kept.
        assert_eq!(stable_factors(&[Some(2000), Some(0)], 1000), [1000, 500]);
        // Fewer whole numbers than runs: later runs tie at 1.
        assert_eq!(stable_factors(&[None, None, None], 2), [2, 1, 1]);
        assert!(stable_factors(&[], 10).is_empty());
    }

    /// The length of a longest strictly falling subsequence, by trying every subset.
    fn longest_by_hand(values: &[Option<i64>]) -> usize {
        let n = values.len();
        (0u32..1 << n)
            .filter(|mask| {
                let chosen: Vec<i64> = (0..n)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| values[i])
                    .collect::<Option<Vec<i64>>>()
                    .unwrap_or_default();
                chosen.len() == mask.count_ones() as usize && chosen.windows(2).all(|w| w[0] > w[1])
            })
            .map(|mask| mask.count_ones() as usize)
            .max()
            .unwrap_or(0)
    }

    proptest! {
        #[test]
        fn factors_fall_and_keep_a_longest_falling_run_of_held_ones(
            held in prop::collection::vec(prop::option::of(0i64..60), 0..10),
            weight in 10u32..60,
        ) {
            let factors = stable_factors(&held, weight);
            prop_assert_eq!(factors.len(), held.len());
            prop_assert!(factors.windows(2).all(|w| w[0] > w[1]), "{:?}", factors);
            prop_assert!(factors.iter().all(|f| (1..=i64::from(weight)).contains(f)));
            let usable: Vec<Option<i64>> =
                held.iter().map(|h| h.filter(|v| (1..=i64::from(weight)).contains(v))).collect();
            let chain = falling_subsequence(&usable);
            prop_assert_eq!(chain.len(), longest_by_hand(&usable));
            let kept = factors.iter().zip(&held).filter(|(f, h)| Some(**f) == **h).count();
            // Either the longest falling run kept, or everything given anew.
            prop_assert!(kept >= chain.len() || factors == evenly(held.len(), weight));
        }
    }

    /// The replay's model of the adapter (`FactorSource::Order`: a factor per waiting user by
    /// its place) writes, into a fresh queue where each user's jobs are one run, what the
    /// adapter writes: the same factors, once weighted and rounded as Slurm stores them.
    #[test]
    fn a_fresh_queue_gets_the_factors_the_replay_gives_its_users() {
        use fairshare_core::model::Time;
        use fairshare_core::priority::multifactor::JobPriority;
        use fairshare_core::rank::{FactorSource, FifoRanker, Head, MultifactorRanker, Ranker};
        for users in 1..=7u32 {
            for weight in [3u32, 1000, 100_000] {
                let priority = JobPriority {
                    site_interval_s: 5.0,
                    ..JobPriority::default()
                };
                let inner = Box::new(FifoRanker::new(users as usize));
                let mut replay = MultifactorRanker::new(
                    inner,
                    users as usize,
                    priority,
                    f64::from(weight),
                    FactorSource::Order,
                    0.0,
                );
                replay.advance(Time::ZERO).unwrap();
                // Users wait in reverse order of their index: the order is not the indices'.
                for user in 0..users {
                    let arrival = Time::from_secs_f64(f64::from(users - user));
                    let head = Head::new(arrival, u64::from(user));
                    replay.update(user, &[0.0], Some(head)).unwrap();
                }
                replay.advance(Time::from_secs_f64(10.0)).unwrap();
                let order: Vec<u32> = replay.iter().collect();
                assert_eq!(order, (0..users).rev().collect::<Vec<_>>());
                let factors = replay.factors().unwrap();
                let replayed: Vec<i64> = (order.iter())
                    .map(|&u| site_factor(factors[u as usize], weight).max(1))
                    .collect();
                let fresh = stable_factors(&vec![None; users as usize], weight);
                assert_eq!(replayed, fresh, "{users} users, weight {weight}");
            }
        }
    }

    #[test]
    fn site_factors_are_weighted_rounded_and_clamped() {
        assert_eq!(site_factor(0.75, 10_000), 7_500);
        assert_eq!(site_factor(1.0 / 3.0, 1_000), 333);
        assert_eq!(site_factor(1.5, 100), 100);
        assert_eq!(site_factor(-0.2, 100), 0);
        assert_eq!(site_factor(f64::NAN, 100), 0);
        assert_eq!(site_factor(1.0, u32::MAX), i64::from(u32::MAX));
    }

    #[test]
    fn mappings_are_named() {
        assert_eq!(Mapping::named("add"), Some(Mapping::Add));
        assert_eq!(Mapping::default(), Mapping::Replace);
        assert_eq!(Mapping::names(), "replace or add");
    }
}
