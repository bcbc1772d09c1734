//! Asset fairness: a client's share is the sum of its shares of every resource, as if each
//! resource's whole capacity were worth the same.

/// The asset share: the sum of a share vector.
pub fn asset_share(shares: &[f64]) -> f64 {
    shares.iter().sum()
}
