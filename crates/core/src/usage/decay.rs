//! Decay: how fast the past is forgotten, as one type.
//!
//! Every mechanism that remembers consumption forgets it under one of these models: a
//! continuous half-life (Slurm, HTCondor, Volcano, Kueue), steps (PBS, MetaCentrum's 72 h
//! halving; a factor of 0 resets usage at every period), or Slurm's own tick-by-tick
//! accounting ([`Decay::Slurm`], in closed form in the `slurm` module), so that a site can reproduce `sshare`
//! exactly. Each model answers two questions in closed form — how much of what was held at one
//! moment is left at a later one ([`Decay::factor`]), and how much a constant rate adds
//! ([`Decay::accrued`]) — which is all the [`Ledger`](super::ledger::Ledger) needs. SDRF's
//! commitments are an exponential moving average instead (its Eq. 6, [`exp_advance`]); the
//! live tree keeps them in its own closed form.

use super::reset::Reset;
use super::slurm::{self, SLURM_LN_2};
use crate::error::Invalid;
use crate::model::parse_seconds;
use serde::Serialize;

/// How accumulated usage fades.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Decay {
    /// `U(t) = U(t₀) · 2^(−(t − t₀) / half_life)`.
    Continuous {
        /// Seconds for usage to halve (> 0).
        half_life_s: f64,
    },
    /// `U ← U · factor` at every multiple of `period` seconds from time 0 (factor 0.5 every
    /// 72 h: MetaCentrum; 0 resets usage at every period).
    Step {
        /// Seconds between steps (> 0).
        period_s: f64,
        /// What usage is multiplied by at each step, from 0 to 1.
        factor: f64,
    },
    /// Slurm's own accounting (`priority/multifactor`): at every tick, `period_s` apart, all
    /// usage is multiplied by `d^period` with `d = 1 − 0.693 / half_life` per second (1 when
    /// the half-life is 0), then each running job adds `rate · Δ · d^Δ` for the `Δ` seconds it
    /// ran since the previous tick; a job that ends between ticks adds its last `Δ` that way
    /// when it ends (`AccountingStorageEnforce=limits`). Ticks fall at
    /// `offset_s + k · period_s`; with a `reset`, the first tick at or after each of its
    /// boundaries zeroes all usage before it charges.
    Slurm {
        /// `PriorityDecayHalfLife`, in seconds (> 0.693, or 0: no decay).
        half_life_s: f64,
        /// `PriorityCalcPeriod`, in seconds (> 0).
        period_s: f64,
        /// Where the ticks fall: one tick's time, or any time that many periods from one.
        offset_s: f64,
        /// `PriorityUsageResetPeriod`, when usage is zeroed at calendar boundaries.
        reset: Option<Reset>,
    },
}

impl Decay {
    /// What usage held at `from_s` is multiplied by when it is read at `to_s` (seconds on one
    /// clock, `from_s ≤ to_s`).
    pub fn factor(&self, from_s: f64, to_s: f64) -> f64 {
        let elapsed = (to_s - from_s).max(0.0);
        if !self.decays() {
            return 1.0;
        }
        match *self {
            Decay::Continuous { half_life_s } => (-elapsed / half_life_s).exp2(),
            Decay::Step { period_s, factor } => {
                let steps = (to_s / period_s).floor() - (from_s / period_s).floor();
                if steps <= 0.0 {
                    1.0
                } else {
                    factor.powf(steps)
                }
            }
            Decay::Slurm {
                half_life_s,
                period_s,
                offset_s,
                reset,
            } => slurm::Ticks::new(half_life_s, period_s, offset_s, reset).factor(from_s, to_s),
        }
    }
}

impl Decay {
    /// The usage a job adds by `at_s` while it runs from `start_s` to `end_s` at `rate` (for
    /// instance processors), charged as it runs and decayed from each moment to `at_s`: the
    /// integral of `rate · factor(t, at_s)` over the part of the run before `at_s`.
    pub fn accrued(&self, rate: f64, start_s: f64, end_s: f64, at_s: f64) -> f64 {
        let (a, b) = (start_s, end_s.min(at_s));
        if b <= a {
            return 0.0;
        }
        if !self.decays() {
            return rate * (b - a);
        }
        match *self {
            Decay::Continuous { half_life_s } => {
                // 2^(−(at−b)/h) − 2^(−(at−a)/h), written so that long half-lives keep precision.
                let k = std::f64::consts::LN_2 / half_life_s;
                let newest = (-(at_s - b) * k).exp();
                rate / k * newest * -(-(b - a) * k).exp_m1()
            }
            Decay::Step { period_s, factor } => {
                let period = |t: f64| (t / period_s).floor();
                let (first, last, now) = (period(a), period(b), period(at_s));
                let weight = |k: f64| factor.powf(now - k);
                if first == last {
                    return rate * (b - a) * weight(first);
                }
                let head = ((first + 1.0) * period_s - a) * weight(first);
                let tail = (b - last * period_s) * weight(last);
                // Whole periods first + 1 … last − 1: a geometric series.
                let whole = last - first - 1.0;
                let series = if factor == 1.0 {
                    whole
                } else {
                    (1.0 - factor.powf(whole)) / (1.0 - factor)
                };
                let middle = period_s * weight(last - 1.0) * series;
                rate * (head + middle + tail)
            }
            Decay::Slurm {
                half_life_s,
                period_s,
                offset_s,
                reset,
            } => slurm::Ticks::new(half_life_s, period_s, offset_s, reset)
                .accrued(rate, start_s, end_s, at_s),
        }
    }

    /// The moment whose usage the factors shown at `at_s` were computed from: under Slurm's
    /// accounting, its last tick at or before `at_s` (its decay thread computes them there,
    /// and `sshare` shows them until the next one); `at_s` itself for the other decays, which
    /// are read continuously.
    pub fn computed_at(&self, at_s: f64) -> f64 {
        match *self {
            Decay::Slurm {
                half_life_s,
                period_s,
                offset_s,
                reset,
            } if self.decays() => {
                slurm::Ticks::new(half_life_s, period_s, offset_s, reset).last_time(at_s)
            }
            _ => at_s,
        }
    }

    /// Whether the decay's period or half-life is a positive number (Slurm's half-life may also
    /// be 0, its ticks charging without decay); one that is not (which
    /// [`Decay::from_str`](std::str::FromStr) refuses) is taken as no decay at all.
    fn decays(&self) -> bool {
        let usable = |length: f64| length.is_finite() && length > 0.0;
        match *self {
            Decay::Continuous { half_life_s } => usable(half_life_s),
            Decay::Step { period_s, .. } => usable(period_s),
            Decay::Slurm {
                half_life_s,
                period_s,
                offset_s,
                ..
            } => {
                (half_life_s == 0.0 || usable(half_life_s - SLURM_LN_2))
                    && usable(period_s)
                    && offset_s.is_finite()
            }
        }
    }
}

impl std::str::FromStr for Decay {
    type Err = Invalid;

    /// `half-life:D`, `step:D:FACTOR`, `reset:D` or
    /// `slurm[:half-life=D,period=D,offset=D,reset=PERIOD]`, each D seconds or a duration with
    /// units ([`parse_seconds`]: `7d`, `10m`), PERIOD `daily` to `yearly` or `none`.
    fn from_str(s: &str) -> Result<Decay, Invalid> {
        if let Some(rest) = s.strip_prefix("slurm") {
            return parse_slurm(rest.strip_prefix(':').unwrap_or(rest)).map_err(Invalid);
        }
        let parts: Vec<&str> = s.split(':').collect();
        let number = |x: &str, what: &str| {
            parse_seconds(x).ok().filter(|v| *v > 0.0).ok_or_else(|| {
                format!("{what} must be a duration > 0 (seconds, or 7d, 10m…), found {x:?}")
            })
        };
        match parts.as_slice() {
            ["half-life", h] => Ok(Decay::Continuous {
                half_life_s: number(h, "a half-life")?,
            }),
            ["step", p, f] => {
                let factor: f64 = f
                    .parse()
                    .ok()
                    .filter(|v: &f64| (0.0..=1.0).contains(v))
                    .ok_or_else(|| format!("a step factor must be from 0 to 1, found {f:?}"))?;
                Ok(Decay::Step {
                    period_s: number(p, "a step period")?,
                    factor,
                })
            }
            ["reset", p] => Ok(Decay::Step {
                period_s: number(p, "a reset period")?,
                factor: 0.0,
            }),
            _ => Err(Invalid(format!(
                "expected half-life:D, step:D:FACTOR, reset:D or slurm:half-life=D,period=D,reset=PERIOD (D seconds, or 7d, 10m…), found {s:?}"
            ))),
        }
    }
}

/// `half-life=D,period=D,offset=D,reset=PERIOD`, each optional (Slurm's defaults: 7 days, 5
/// minutes, no reset; offset 0), D as [`parse_seconds`] reads it.
fn parse_slurm(text: &str) -> Result<Decay, String> {
    let (mut half_life_s, mut period_s, mut offset_s) = (604_800.0, 300.0, 0.0);
    let mut reset = None;
    for item in text.split(',').filter(|i| !i.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("slurm: expected key=SECONDS, found {item:?}"))?;
        if key == "reset" {
            reset = match value.to_ascii_lowercase().as_str() {
                "none" => None,
                _ => Some(value.parse().map_err(|e| format!("slurm: {e} or none"))?),
            };
            continue;
        }
        let number = parse_seconds(value).map_err(|e| format!("slurm: {key}: {e}"))?;
        match key {
            "half-life" if number > SLURM_LN_2 || number == 0.0 => half_life_s = number,
            "half-life" => {
                return Err(format!(
                    "slurm: half-life must be more than {SLURM_LN_2} s, or 0 for no decay, found {value:?}"
                ))
            }
            "period" if number > 0.0 => period_s = number,
            "period" => return Err(format!("slurm: period must be > 0, found {value:?}")),
            "offset" => offset_s = number,
            _ => {
                return Err(format!(
                    "slurm: expected half-life, period, offset or reset, found {key:?}"
                ))
            }
        }
    }
    Ok(Decay::Slurm {
        half_life_s,
        period_s,
        offset_s,
        reset,
    })
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
    use proptest::prelude::*;

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

    /// Spec §6: a 72 h half-life, continuous and stepwise.
    #[test]
    fn decays_match_their_closed_forms() {
        let h = 3600.0;
        let continuous = Decay::Continuous {
            half_life_s: 72.0 * h,
        };
        assert!(close(continuous.factor(0.0, 24.0 * h), 0.7937, 1e-4));
        assert!(close(continuous.factor(0.0, 72.0 * h), 0.5, 1e-4));
        assert!(close(continuous.factor(10.0 * h, 154.0 * h), 0.25, 1e-4));
        let step = Decay::Step {
            period_s: 72.0 * h,
            factor: 0.5,
        };
        assert_eq!(step.factor(0.0, 71.9 * h), 1.0);
        assert_eq!(step.factor(0.0, 72.0 * h), 0.5);
        assert_eq!(step.factor(70.0 * h, 74.0 * h), 0.5, "one boundary crossed");
        assert_eq!(step.factor(0.0, 216.0 * h), 0.125);
        let reset = Decay::Step {
            period_s: 24.0 * h,
            factor: 0.0,
        };
        assert_eq!(reset.factor(1.0 * h, 23.0 * h), 1.0);
        assert_eq!(reset.factor(1.0 * h, 25.0 * h), 0.0);
    }

    /// Step accrual in closed form: whole periods as a geometric series, and a tiny period
    /// costs no more than a large one.
    #[test]
    fn step_accrual_needs_no_loop() {
        let halving = Decay::Step {
            period_s: 10.0,
            factor: 0.5,
        };
        // [5, 35) read at 35: 5 s at ×1/8, 10 s at ×1/4, 10 s at ×1/2, 5 s at ×1.
        assert_eq!(
            halving.accrued(1.0, 5.0, 35.0, 35.0),
            5.0 / 8.0 + 2.5 + 5.0 + 5.0
        );
        let tiny = Decay::Step {
            period_s: 1e-6,
            factor: 0.5,
        };
        assert!(tiny.accrued(1.0, 0.0, 86_400.0, 86_400.0) < 1e-5);
        let none = Decay::Step {
            period_s: 0.0,
            factor: 0.5,
        };
        assert_eq!(
            none.accrued(2.0, 0.0, 10.0, 20.0),
            20.0,
            "no usable period: no decay"
        );
    }

    proptest! {
        /// A job's accrued usage equals summing its rate, decayed, over many small slices.
        #[test]
        fn accrual_is_the_integral_of_the_decayed_rate(
            start in 0u32..500, run in 1u32..300, after in 0u32..400,
            decay in prop::sample::select(vec![
                Decay::Continuous { half_life_s: 97.0 },
                Decay::Step { period_s: 60.0, factor: 0.5 },
                Decay::Step { period_s: 45.0, factor: 0.0 },
            ]),
        ) {
            let (start, end) = (f64::from(start), f64::from(start + run));
            let at = start + f64::from(after);
            let slices = 20_000;
            let dt = (end.min(at) - start).max(0.0) / f64::from(slices);
            let sum: f64 = (0..slices).map(|k| {
                let t = start + (f64::from(k) + 0.5) * dt;
                2.0 * decay.factor(t, at) * dt
            }).sum();
            let exact = decay.accrued(2.0, start, end, at);
            prop_assert!((exact - sum).abs() <= 1e-3 * sum.max(1.0) + 2.0 * 2.0 * dt, "{exact} vs {sum}");
        }
    }
}
