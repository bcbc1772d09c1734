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
//! needs few writes. The play of starts and the factors are `fairshare-core`'s
//! ([`fairshare_core::rank::play`], [`fairshare_core::rank::factors`]), where the replay's model
//! of the adapter calls them too: a replay writes what the adapter would.
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

pub use fairshare_core::rank::factors::stable_factors;

/// How fairshare's factor enters a job's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_named() {
        assert_eq!(Mapping::named("add"), Some(Mapping::Add));
        assert_eq!(Mapping::default(), Mapping::Replace);
        assert_eq!(Mapping::names(), "replace or add");
    }
}
