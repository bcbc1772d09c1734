//! Bottleneck-based global priorities (Zeldes & Feitelson): a client's single, system-wide
//! priority is its smallest gap between what it was entitled to and what it consumed, taken over
//! the *bottleneck* resources only, and every resource queue serves by that one number
//! (docs/mechanisms.md, bottleneck §2). Allocation, consumption and busy time are windowed
//! integrals that the caller keeps (see [`crate::usage::window`]); this module only ranks.

use serde::{Deserialize, Serialize};

/// How a gap is turned into a priority (docs/mechanisms.md, bottleneck §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GapForm {
    /// The gap divided by the client's renormalised entitlement: reproduces the paper's
    /// reported proportional splits (the default).
    #[default]
    Normalised,
    /// The gap as printed in the paper.
    Absolute,
}

/// Whether a resource busy for `busy` of the last `window` seconds is a bottleneck: busy for
/// more than `threshold` of them.
pub fn is_bottleneck(busy: f64, window: f64, threshold: f64) -> bool {
    busy > threshold * window
}

/// The global priority of one client; **higher is served first** (the paper's sense).
///
/// `allocation[j]` is what the client was entitled to in the window — one value for global
/// accounting (used for every resource) or one per resource; `consumption[j]` what resource j
/// gave it in the window; `entitlement` its renormalised entitlement e'. With bottlenecks the
/// gap is the smallest over them; without, the asset-fairness fallback `A − Σ_j C_j`.
pub fn global_priority(
    allocation: &[f64],
    consumption: &[f64],
    bottleneck: &[bool],
    entitlement: f64,
    form: GapForm,
) -> f64 {
    let allocated = |j: usize| allocation.get(j).or(allocation.first()).copied();
    let mut smallest: Option<f64> = None;
    for (j, (c, b)) in consumption.iter().zip(bottleneck).enumerate() {
        if *b {
            let gap = allocated(j).unwrap_or(0.0) - c;
            smallest = Some(smallest.map_or(gap, |s| s.min(gap)));
        }
    }
    let gap = smallest.unwrap_or_else(|| {
        let entitled = if allocation.len() > 1 {
            allocation.iter().sum()
        } else {
            allocated(0).unwrap_or(0.0)
        };
        entitled - consumption.iter().sum::<f64>()
    });
    match form {
        GapForm::Normalised if entitlement > 0.0 => gap / entitlement,
        _ => gap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_priority_evaluation_by_hand() {
        // docs/mechanisms.md, bottleneck §2.8(b): X, Y, Z with e' = 0.5, 0.3, 0.2 at t = 10 s, window 3 s.
        let j = [3.0, 2.75].map(|busy| is_bottleneck(busy, 3.0, 0.9));
        assert_eq!(j, [true, true]);
        let clients = [
            (1.5, [1.8, 0.40], 0.5),
            (0.9, [0.6, 1.50], 0.3),
            (0.6, [0.6, 0.85], 0.2),
        ];
        let pri = |form| -> Vec<f64> {
            clients
                .iter()
                .map(|(a, c, e)| global_priority(&[*a], c, &j, *e, form))
                .collect()
        };
        let close = |got: Vec<f64>, want: [f64; 3]| {
            got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12)
        };
        assert!(close(pri(GapForm::Absolute), [-0.30, -0.60, -0.25]));
        assert!(close(pri(GapForm::Normalised), [-0.60, -2.00, -1.25]));
        // Without bottlenecks: the asset-fairness fallback, X −1.4, Y −4.0, Z −4.25.
        let none = [false, false];
        let fallback: Vec<f64> = clients
            .iter()
            .map(|(a, c, e)| global_priority(&[*a], c, &none, *e, GapForm::Normalised))
            .collect();
        assert!(close(fallback, [-1.4, -4.0, -4.25]));
    }

    #[test]
    fn the_bottleneck_rule_is_strict() {
        assert_eq!(
            [2.7, 2.71, 0.0].map(|busy| is_bottleneck(busy, 3.0, 0.9)),
            [false, true, false]
        );
    }
}
