//! Slurm's classic fairshare factor (`priority_multifactor.c`).

use super::entry::{Columns, Factor, FunctionEntry};
use super::exp2_ratio;

/// Slurm classic: `2^(−effective usage / normalised shares)`, effective usage taking in the
/// parent account's (children of the root use their own normalised usage).
pub const SLURM_CLASSIC: FunctionEntry = FunctionEntry {
    name: "slurm-classic",
    about: "Slurm classic: 2^(-effective usage / normalised shares)",
    params: &[],
    factor: Factor::Each(|s, _| exp2_ratio(s.effective_usage, s.normalized_shares)),
    columns: Columns {
        effective_usage: true,
        level_fs: false,
    },
    orders_by_usage_over_shares: true,
};
