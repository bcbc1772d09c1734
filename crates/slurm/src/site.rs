//! From a policy's order of users to each user's site factor.
//!
//! Every policy fairshare ranks with orders the users who wait; Slurm wants a number per job.
//! The bridge is Fair Tree's own: in an order of `n` users, the `i`-th (from 0) gets the factor
//! `(n − i) / n` — 1 for the first, `1/n` for the last — which is exactly Slurm's Fair Tree
//! factor when the order is Fair Tree's. The site factor is that factor times a weight,
//! rounded to a whole number as Slurm stores it. All jobs of one user get their user's site
//! factor, so Slurm's other factors (age, size, QOS) keep their relative order.
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
use std::collections::BTreeMap;

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

/// Each user's factor in [0, 1] from an order of users, first to last: `(n − i) / n` for the
/// `i`-th of `n`. A user named twice keeps its first place.
pub fn factors<'a>(order: impl IntoIterator<Item = &'a str>) -> BTreeMap<&'a str, f64> {
    let mut first: Vec<&str> = Vec::new();
    for user in order {
        if !first.contains(&user) {
            first.push(user);
        }
    }
    let n = first.len() as f64;
    let place = |i: usize| (n - i as f64) / n;
    first
        .into_iter()
        .enumerate()
        .map(|(i, u)| (u, place(i)))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_gives_fair_trees_factors() {
        let got = factors(["bob", "alice", "dave", "carol", "alice"]);
        assert_eq!(got["bob"], 1.0);
        assert_eq!(got["alice"], 0.75);
        assert_eq!(got["dave"], 0.5);
        assert_eq!(got["carol"], 0.25, "the last of four");
        assert_eq!(got.len(), 4, "a user named twice keeps its first place");
        assert!(factors([]).is_empty());
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
