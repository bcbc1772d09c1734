//! MetaCentrum's fairshare factor (reference T of `spec/metacentrum.md`).

use super::entry::{Columns, Factor, FunctionEntry};

/// MetaCentrum: normalised shares / raw usage, usage never below 1 (T starts every usage at
/// 1); larger goes first. The floor makes it differ from the others on a flat tree.
pub const METACENTRUM: FunctionEntry = FunctionEntry {
    name: "metacentrum",
    about: "MetaCentrum (PBS/TORQUE scheduler): normalised shares / usage",
    params: &[],
    factor: Factor::Each(|s, _| s.normalized_shares / s.raw_usage.max(1.0)),
    columns: Columns {
        effective_usage: false,
        level_fs: false,
    },
    orders_by_usage_over_shares: false,
};
