//! HTCondor's user priority: the negotiator serves users in increasing effective user priority,
//! the real user priority (decayed usage, never below 0.5) times the user's priority factor.

use super::entry::{Columns, Factor, FunctionEntry, FunctionParam};

/// HTCondor: a user's effective priority is `max(usage, floor) × priority factor`, lower
/// first; with the priority factor as the inverse of the normalised shares, the factor here is
/// `normalised shares / max(raw usage, floor)`, larger first. HTCondor's floor is 0.5: its
/// real user priority never goes below it, so users idle long enough tie.
pub const HTCONDOR: FunctionEntry = FunctionEntry {
    name: "htcondor",
    about: "HTCondor: normalised shares / max(usage, floor), its user priority with its floor",
    params: &[FunctionParam {
        key: "floor",
        about: "the least usage a user's priority counts (HTCondor's 0.5)",
        default: 0.5,
        min: 0.0,
    }],
    factor: Factor::Each(|s, values| s.normalized_shares / s.raw_usage.max(values[0])),
    columns: Columns {
        effective_usage: false,
        level_fs: false,
    },
    orders_by_usage_over_shares: false,
};
