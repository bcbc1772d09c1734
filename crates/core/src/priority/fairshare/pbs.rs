//! PBS Pro's fairshare factor, as the fairshare simulator of `spec/metacentrum.md` computes it.

use super::entry::{Columns, Factor, FunctionEntry};
use super::exp2_ratio;

/// PBS Pro and the fairshare simulator: `2^(−usage share / normalised shares)`.
pub const PBS: FunctionEntry = FunctionEntry {
    name: "pbs",
    about: "PBS Pro: 2^(-usage share / normalised shares)",
    params: &[],
    factor: Factor::Each(|s, _| exp2_ratio(s.normalized_usage, s.normalized_shares)),
    columns: Columns {
        effective_usage: false,
        level_fs: false,
    },
    orders_by_usage_over_shares: true,
};
