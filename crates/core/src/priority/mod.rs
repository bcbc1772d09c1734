//! Priorities: one number per client, from what it holds, what it owes and its weight.
//!
//! A priority is a pure function of a client's normalised allocation, its commitments (decayed
//! past over-use) and its relative weight ([`Policy`]), or, for the production fairshare
//! factors, of a share tree and its decayed usage ([`fairshare`]). Allocators, rankers, the
//! live tree and the simulators all rank clients through this one place, so a policy means
//! the same thing everywhere. [`bottleneck`] ranks processes by windowed service gaps instead;
//! its priorities are served highest first, as in its paper.

mod asset;
pub mod bottleneck;
mod drf;
pub mod fairshare;
pub mod multifactor;
mod sdrf;

use std::fmt;

pub use asset::asset_share;
pub use drf::dominant_share;
pub use sdrf::PriorityForm;

/// A priority with a total order (`f64::total_cmp`), so priorities can key ordered sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorityKey(pub f64);

impl Eq for PriorityKey {}

impl PartialOrd for PriorityKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PriorityKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// What a policy sees of one client. All vectors are fractions of each resource's capacity.
#[derive(Debug, Clone, Copy)]
pub struct ClientView<'a> {
    /// Relative weight ρ = n·w (1 for everyone when weights are equal).
    pub weight: f64,
    /// Resources the client holds now.
    pub allocation: &'a [f64],
    /// Commitments (decayed past over-use); empty or zeros for stateless policies.
    pub commitment: &'a [f64],
}

/// A fair-share allocation policy: how one client's priority follows from what it holds, what
/// it owes and its weight. Written and parsed through the [`registry`](crate::policy::registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Dominant Resource Fairness: equalise dominant shares, weights ignored.
    Drf,
    /// Weighted DRF: equalise dominant share divided by relative weight.
    WeightedDrf,
    /// Asset fairness: equalise the sum of shares over all resources (divided by weight).
    Asset,
    /// Stateful DRF: dominant share plus commitments, divided by weight.
    Sdrf(PriorityForm),
}

impl Policy {
    /// The priority of a client: lower is served first.
    pub fn priority(&self, client: &ClientView) -> f64 {
        match self {
            Policy::Drf => dominant_share(client.allocation),
            Policy::WeightedDrf => dominant_share(client.allocation) / client.weight,
            Policy::Asset => asset_share(client.allocation) / client.weight,
            Policy::Sdrf(form) => form.priority(client),
        }
    }

    /// Whether the policy honours client weights.
    pub fn uses_weights(&self) -> bool {
        !matches!(self, Policy::Drf)
    }

    /// Whether the policy reads commitments.
    pub fn uses_commitments(&self) -> bool {
        matches!(self, Policy::Sdrf(_))
    }

    /// The cost of one unit of dominant share for a client whose demand, scaled so its largest
    /// component is 1, is `unit_demand`: 1 for dominant-share policies, Σ_r for asset fairness.
    pub fn unit_cost(&self, unit_demand: &[f64]) -> f64 {
        match self {
            Policy::Asset => asset_share(unit_demand),
            _ => 1.0,
        }
    }

    /// The part of the commitment that raises a client's water level (Eq. 5: the dominant one).
    pub fn commitment_level(&self, commitment: &[f64]) -> f64 {
        if self.uses_commitments() {
            dominant_share(commitment)
        } else {
            0.0
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Drf => f.write_str("drf"),
            Policy::WeightedDrf => f.write_str("weighted-drf"),
            Policy::Asset => f.write_str("asset"),
            Policy::Sdrf(PriorityForm::SumOfMaxes) => f.write_str("sdrf"),
            Policy::Sdrf(PriorityForm::MaxOfSums) => f.write_str("sdrf:form=max-of-sums"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_by_hand() {
        let view = ClientView {
            weight: 2.0,
            allocation: &[0.2, 0.4],
            commitment: &[0.3, 0.1],
        };
        assert_eq!(Policy::Drf.priority(&view), 0.4);
        assert_eq!(Policy::WeightedDrf.priority(&view), 0.2);
        assert!((Policy::Asset.priority(&view) - 0.3).abs() < 1e-15);
        // SumOfMaxes: (0.4 + 0.3) / 2; MaxOfSums: max(0.5, 0.5) / 2.
        let sum_of_maxes = Policy::Sdrf(PriorityForm::SumOfMaxes).priority(&view);
        let max_of_sums = Policy::Sdrf(PriorityForm::MaxOfSums).priority(&view);
        assert!((sum_of_maxes - 0.35).abs() < 1e-15);
        assert!((max_of_sums - 0.25).abs() < 1e-15);
    }
}
