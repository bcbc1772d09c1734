//! What a fairshare function is: its registry entry, the shape [`super::FairshareFunction`]
//! lists and every file of a function fills in.

use super::{Association, Standing};

/// The most parameters a fairshare function may take.
pub const MAX_PARAMS: usize = 2;

/// How a function turns standings into factors.
#[derive(Debug, Clone, Copy)]
pub enum Factor {
    /// Each association's factor from its own standing and the function's parameter values
    /// (in the order of its [`FunctionEntry::params`]); users are ranked by decreasing factor.
    Each(fn(&Standing, &[f64]) -> f64),
    /// Slurm's Fair Tree: users ranked by a depth-first walk over level fairshare, the factor
    /// the rank from the last.
    FairTree,
    /// Every association's factor from all the standings at once (the tree and the function's
    /// parameter values given), for a function whose user factors depend on one another;
    /// users are ranked by decreasing factor.
    Whole(fn(&mut [Standing], &[Association], &[f64])),
}

/// One numeric parameter of a fairshare function.
#[derive(Debug, Clone, Copy)]
pub struct FunctionParam {
    /// Its key, as written after the function's name.
    pub key: &'static str,
    /// What it means, in one line.
    pub about: &'static str,
    /// Its value when not given.
    pub default: f64,
    /// The smallest value accepted (values must be finite).
    pub min: f64,
}

/// What `sshare -l` shows under a function besides the columns every function has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    /// Slurm's `EffectvUsage`.
    pub effective_usage: bool,
    /// Fair Tree's `LevelFS`.
    pub level_fs: bool,
}

/// One registered fairshare function.
#[derive(Debug)]
pub struct FunctionEntry {
    /// Its name.
    pub name: &'static str,
    /// What it computes, in one line.
    pub about: &'static str,
    /// Its parameters (at most [`MAX_PARAMS`]).
    pub params: &'static [FunctionParam],
    /// How it computes factors.
    pub factor: Factor,
    /// The columns of its standings a table shows.
    pub columns: Columns,
    /// Whether, on a flat tree (every user a child of the root), it orders users exactly as
    /// their decayed usage over their shares does, so that policies differing only in it
    /// replay alike.
    pub orders_by_usage_over_shares: bool,
}
