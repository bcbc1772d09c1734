//! Dominant Resource Fairness (Ghodsi et al.): a client's share is its largest share of any
//! resource, and DRF equalises it.

/// The dominant share: the largest component of a share vector (0 for an empty vector).
pub fn dominant_share(shares: &[f64]) -> f64 {
    shares.iter().copied().fold(0.0, f64::max)
}
