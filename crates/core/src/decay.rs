//! Decay models: how fast the past is forgotten.
//!
//! Every fair-share mechanism in fairshare remembers consumption under one of four models. This
//! module holds the models and the exact, numerically careful arithmetic they need; the
//! [`crate::ledger`] applies them per client and resource.

use serde::{Deserialize, Serialize};

/// How a ledger forgets past consumption.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Decay {
    /// Instantaneous: the ledger holds only the current rate (DRF).
    None,
    /// Exponential moving average with time constant `tau` seconds (SDRF commitments).
    Exponential {
        /// Time constant τ in seconds; `0` follows the rate instantly, `∞` never moves.
        tau: f64,
    },
    /// Total consumption (rate × seconds) over the last `window` seconds.
    SlidingWindow {
        /// Window length T in seconds.
        window: f64,
    },
    /// Total consumption, halved at every multiple of `period` seconds (PBS / MetaCentrum).
    StepwiseHalving {
        /// Halving period P in seconds.
        period: f64,
    },
}

/// Time constant τ = −Δt / ln δ of SDRF's discount factor δ = 1 − `epsilon`, with Δt = 1 s.
///
/// Parameterised by ε rather than δ to keep precision for δ = 1 − 10⁻⁷. ε = 1 (δ = 0) gives
/// τ = 0; ε = 0 (δ = 1) gives τ = ∞.
pub fn tau_from_epsilon(epsilon: f64) -> f64 {
    if epsilon >= 1.0 {
        0.0
    } else if epsilon <= 0.0 {
        f64::INFINITY
    } else {
        -1.0 / (-epsilon).ln_1p()
    }
}

/// Fraction of the distance to the target an exponential average covers in `dt` seconds:
/// `1 − e^(−dt/τ)`, computed with `expm1` so that tiny steps keep their precision.
pub fn exp_progress(dt: f64, tau: f64) -> f64 {
    if dt <= 0.0 || tau == f64::INFINITY {
        0.0
    } else if tau <= 0.0 {
        1.0
    } else {
        -(-dt / tau).exp_m1()
    }
}

/// Eq. 6 of SDRF: the value `c` relaxes towards the constant `target` for `dt` seconds.
///
/// `c(t0 + dt) = target + (c − target) · e^(−dt/τ)`, exact for a constant target.
pub fn exp_advance(c: f64, target: f64, dt: f64, tau: f64) -> f64 {
    c + (target - c) * exp_progress(dt, tau)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn tau_matches_the_spec_table() {
        assert!(close(tau_from_epsilon(1e-1), 9.4912, 1e-4));
        assert!(close(tau_from_epsilon(1e-2), 99.499, 1e-3));
        assert!(close(tau_from_epsilon(1e-6), 999_999.5, 1e-3));
        assert!(close(tau_from_epsilon(1e-7), 9_999_999.5, 1e-2));
        assert_eq!(tau_from_epsilon(1.0), 0.0);
        assert_eq!(tau_from_epsilon(0.0), f64::INFINITY);
    }

    #[test]
    fn one_step_equals_the_discrete_recursion() {
        // δ = 0.9, n = 4: the example of docs/mechanisms.md, SDRF §3.1, stepping one second at a time.
        let tau = tau_from_epsilon(0.1);
        let mut c = 0.0;
        let mut seen = vec![c];
        for excess in [0.2, 0.2, 0.2, 0.0] {
            c = exp_advance(c, excess, 1.0, tau);
            seen.push(c);
        }
        let expected = [0.0, 0.02, 0.038, 0.0542, 0.04878];
        for (got, want) in seen.iter().zip(expected) {
            assert!(close(*got, want, 1e-12), "{got} vs {want}");
        }
    }

    #[test]
    fn long_gap_matches_the_worked_example() {
        // δ = 1 − 10⁻⁶: one day at ō = 0.2, then seven days at ō = 0.
        let tau = tau_from_epsilon(1e-6);
        let after_day = exp_advance(0.0, 0.2, 86_400.0, tau);
        assert!(close(after_day, 0.0165546, 1e-7), "{after_day}");
        let after_week = exp_advance(after_day, 0.0, 604_800.0, tau);
        assert!(close(after_week, 0.0090418, 1e-7), "{after_week}");
    }

    #[test]
    fn both_ends_of_delta_are_special_cased() {
        assert_eq!(exp_advance(0.3, 0.7, 1e-9, 0.0), 0.7);
        assert_eq!(exp_advance(0.3, 0.7, 1e9, f64::INFINITY), 0.3);
        assert_eq!(exp_advance(0.3, 0.7, 0.0, 5.0), 0.3);
    }
}
