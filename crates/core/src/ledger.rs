//! Ledgers: what a client consumed of each resource, remembered under a decay model.
//!
//! A ledger is told the client's consumption *rate* per resource whenever it changes (a task
//! starts or ends) and answers, for any later time, the remembered amount. Time always comes in
//! as an argument and may only move forward.

use crate::decay::{exp_advance, Decay};
use std::collections::VecDeque;
use thiserror::Error;

/// A ledger was misused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LedgerError {
    /// Time moved backwards.
    #[error("time went backwards: ledger is at {now} s, asked for {asked} s")]
    TimeWentBackwards {
        /// The ledger's current time.
        now: f64,
        /// The earlier time asked for.
        asked: f64,
    },
    /// A decay parameter is out of range.
    #[error("decay parameter {name} must be {expected}, found {value}")]
    BadParameter {
        /// Parameter name.
        name: &'static str,
        /// What was expected.
        expected: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A resource index beyond the resources a window was made for.
    #[error("resource {resource} does not exist: the window has {resources} resources")]
    NoSuchResource {
        /// The index asked for.
        resource: usize,
        /// How many resources there are.
        resources: usize,
    },
    /// An output slice of the wrong length.
    #[error("expected room for {expected} resources, found {found}")]
    WrongLength {
        /// Number of resources.
        expected: usize,
        /// Length given.
        found: usize,
    },
    /// A rate vector has the wrong length or a bad value.
    #[error("rate vector must have {expected} finite non-negative components, found {found:?}")]
    BadRate {
        /// Number of resources.
        expected: usize,
        /// What was given.
        found: Vec<f64>,
    },
}

/// The consumption record of one client on every resource.
#[derive(Debug, Clone)]
pub struct Ledger {
    decay: Decay,
    now: f64,
    rate: Vec<f64>,
    value: Vec<f64>,
    /// Sliding window only: `(start, rate)` of every segment that may still be in the window.
    segments: VecDeque<(f64, Vec<f64>)>,
}

impl Ledger {
    /// An empty ledger for `resources` resources, starting at time `start`.
    pub fn new(decay: Decay, resources: usize, start: f64) -> Result<Self, LedgerError> {
        check_decay(&decay)?;
        let zeros = vec![0.0; resources];
        let mut segments = VecDeque::new();
        if matches!(decay, Decay::SlidingWindow { .. }) {
            segments.push_back((start, zeros.clone()));
        }
        Ok(Ledger {
            decay,
            now: start,
            rate: zeros.clone(),
            value: zeros,
            segments,
        })
    }

    /// The ledger's current time.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// The current consumption rate.
    pub fn rate(&self) -> &[f64] {
        &self.rate
    }

    /// From time `t` on, the client consumes `rate` (per second, per resource).
    pub fn set_rate(&mut self, t: f64, rate: &[f64]) -> Result<(), LedgerError> {
        if rate.len() != self.rate.len() || rate.iter().any(|r| !(r.is_finite() && *r >= 0.0)) {
            return Err(LedgerError::BadRate {
                expected: self.rate.len(),
                found: rate.to_vec(),
            });
        }
        self.advance(t)?;
        self.rate.copy_from_slice(rate);
        if let Decay::SlidingWindow { .. } = self.decay {
            self.segments.push_back((t, rate.to_vec()));
        }
        Ok(())
    }

    /// Moves the ledger to time `t`.
    pub fn advance(&mut self, t: f64) -> Result<(), LedgerError> {
        if t < self.now {
            return Err(LedgerError::TimeWentBackwards {
                now: self.now,
                asked: t,
            });
        }
        let dt = t - self.now;
        match self.decay {
            Decay::None => self.value.copy_from_slice(&self.rate),
            Decay::Exponential { tau } => {
                for (v, r) in self.value.iter_mut().zip(&self.rate) {
                    *v = exp_advance(*v, *r, dt, tau);
                }
            }
            Decay::SlidingWindow { window } => self.slide(t, window),
            Decay::StepwiseHalving { period } => self.halve(t, period),
        }
        self.now = t;
        Ok(())
    }

    /// The remembered amount per resource at time `t` (the ledger moves to `t`).
    ///
    /// None: the current rate. Exponential: the rate's moving average. Sliding window: rate ×
    /// seconds over the window. Stepwise halving: rate × seconds, halved every period.
    pub fn value(&mut self, t: f64) -> Result<&[f64], LedgerError> {
        self.advance(t)?;
        Ok(&self.value)
    }

    /// Adds what came in since the last call and takes off what left the window, touching
    /// only the segments that left: amortised O(1) per call however often it is read.
    fn slide(&mut self, t: f64, window: f64) {
        self.accumulate(t - self.now, 1.0);
        let (gone_from, gone_to) = (self.now - window, t - window);
        let n = self.segments.len();
        for k in 0..n {
            let start = self.segments[k].0;
            if start >= gone_to {
                break;
            }
            let end = if k + 1 < n { self.segments[k + 1].0 } else { t };
            let seconds = end.min(gone_to) - start.max(gone_from);
            if seconds > 0.0 {
                for (v, r) in self.value.iter_mut().zip(&self.segments[k].1) {
                    *v = (*v - r * seconds).max(0.0);
                }
            }
        }
        while self.segments.len() > 1 && self.segments[1].0 <= gone_to {
            self.segments.pop_front();
        }
    }

    fn halve(&mut self, t: f64, period: f64) {
        let epoch = |time: f64| (time / period).floor();
        let (from, to) = (epoch(self.now), epoch(t));
        if to <= from {
            self.accumulate(t - self.now, 1.0);
            return;
        }
        // To the first boundary, then whole periods in closed form, then the remainder.
        self.accumulate((from + 1.0) * period - self.now, 0.5);
        let whole = to - from - 1.0;
        let kept = 0.5f64.powf(whole);
        for (v, r) in self.value.iter_mut().zip(&self.rate) {
            *v = *v * kept + r * period * (1.0 - kept);
        }
        self.accumulate(t - to * period, 1.0);
    }

    fn accumulate(&mut self, seconds: f64, then_scale: f64) {
        for (v, r) in self.value.iter_mut().zip(&self.rate) {
            *v = (*v + r * seconds) * then_scale;
        }
    }
}

fn check_decay(decay: &Decay) -> Result<(), LedgerError> {
    let (name, value, ok, expected) = match *decay {
        Decay::None => return Ok(()),
        Decay::Exponential { tau } => ("tau", tau, tau >= 0.0, "zero, positive or infinite"),
        Decay::SlidingWindow { window } => (
            "window",
            window,
            window.is_finite() && window > 0.0,
            "positive and finite",
        ),
        Decay::StepwiseHalving { period } => (
            "period",
            period,
            period.is_finite() && period > 0.0,
            "positive and finite",
        ),
    };
    if ok {
        Ok(())
    } else {
        Err(LedgerError::BadParameter {
            name,
            expected,
            value,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn instantaneous_holds_the_current_rate() {
        let mut l = Ledger::new(Decay::None, 2, 0.0).unwrap();
        l.set_rate(1.0, &[0.5, 0.25]).unwrap();
        assert_eq!(l.value(100.0).unwrap(), &[0.5, 0.25]);
    }

    #[test]
    fn exponential_is_eq_6() {
        let mut l = Ledger::new(Decay::Exponential { tau: 10.0 }, 1, 0.0).unwrap();
        l.set_rate(0.0, &[1.0]).unwrap();
        let v = l.value(10.0).unwrap()[0];
        assert!(close(v, 1.0 - (-1.0f64).exp()), "{v}");
        l.set_rate(10.0, &[0.0]).unwrap();
        let w = l.value(20.0).unwrap()[0];
        assert!(close(w, v * (-1.0f64).exp()), "{w}");
    }

    #[test]
    fn sliding_window_counts_only_the_window() {
        let mut l = Ledger::new(Decay::SlidingWindow { window: 3.0 }, 1, 0.0).unwrap();
        l.set_rate(0.0, &[1.0]).unwrap();
        l.set_rate(2.0, &[0.0]).unwrap();
        l.set_rate(4.0, &[0.5]).unwrap();
        // Window [2, 5]: 0 × 2 s + 0.5 × 1 s.
        assert!(close(l.value(5.0).unwrap()[0], 0.5));
        // Window [0, 3] was 2 s at rate 1: check an earlier reading on a fresh ledger.
        let mut m = Ledger::new(Decay::SlidingWindow { window: 3.0 }, 1, 0.0).unwrap();
        m.set_rate(0.0, &[1.0]).unwrap();
        m.set_rate(2.0, &[0.0]).unwrap();
        assert!(close(m.value(3.0).unwrap()[0], 2.0));
        assert!(close(m.value(4.5).unwrap()[0], 0.5));
    }

    #[test]
    fn sliding_window_matches_direct_integration() {
        // Rates change at irregular times and the ledger is read at others.
        let changes = [
            (0.5, 2.0),
            (1.2, 0.0),
            (1.3, 1.0),
            (4.0, 3.0),
            (4.05, 0.5),
            (9.0, 0.0),
        ];
        let rate_at = |s: f64| changes.iter().rev().find(|c| c.0 <= s).map_or(0.0, |c| c.1);
        let direct = |t: f64| {
            (0..200_000)
                .map(|k| t - 3.0 + (k as f64 + 0.5) * 3.0 / 200_000.0)
                .filter(|s| *s >= 0.0)
                .map(|s| rate_at(s) * 3.0 / 200_000.0)
                .sum::<f64>()
        };
        let mut l = Ledger::new(Decay::SlidingWindow { window: 3.0 }, 1, 0.0).unwrap();
        let mut reads = vec![0.7, 1.25, 2.0, 3.9, 4.02, 5.0, 7.1, 9.5, 11.9, 12.5, 20.0];
        let mut next_change = 0;
        reads.sort_by(f64::total_cmp);
        for t in reads {
            while next_change < changes.len() && changes[next_change].0 <= t {
                let (at, rate) = changes[next_change];
                l.set_rate(at, &[rate]).unwrap();
                next_change += 1;
            }
            let got = l.value(t).unwrap()[0];
            assert!(
                (got - direct(t)).abs() < 1e-4,
                "at {t}: {got} vs {}",
                direct(t)
            );
        }
    }

    #[test]
    fn stepwise_halving_halves_at_each_period() {
        let mut l = Ledger::new(Decay::StepwiseHalving { period: 10.0 }, 1, 0.0).unwrap();
        l.set_rate(0.0, &[1.0]).unwrap();
        assert!(close(l.value(5.0).unwrap()[0], 5.0));
        // At 10: (10) / 2 = 5; then +5 by 15.
        assert!(close(l.value(15.0).unwrap()[0], 10.0));
        // Over many periods at a constant rate the value tends to rate × period.
        let v = l.value(1e6 + 10.0).unwrap()[0];
        assert!(close(v, 10.0), "{v}");
        // Closed form equals stepping one period at a time.
        let mut a = Ledger::new(Decay::StepwiseHalving { period: 3.0 }, 1, 0.0).unwrap();
        let mut b = a.clone();
        a.set_rate(1.0, &[2.0]).unwrap();
        b.set_rate(1.0, &[2.0]).unwrap();
        for t in (2..=40).map(|k| k as f64 * 0.7) {
            b.advance(t).unwrap();
        }
        assert!(close(a.value(28.0).unwrap()[0], b.value(28.0).unwrap()[0]));
    }

    #[test]
    fn refuses_time_travel_and_bad_parameters() {
        let mut l = Ledger::new(Decay::None, 1, 5.0).unwrap();
        assert!(matches!(
            l.advance(4.0),
            Err(LedgerError::TimeWentBackwards { .. })
        ));
        assert!(Ledger::new(Decay::SlidingWindow { window: 0.0 }, 1, 0.0).is_err());
        assert!(Ledger::new(Decay::Exponential { tau: f64::NAN }, 1, 0.0).is_err());
        assert!(l.set_rate(6.0, &[f64::NAN]).is_err());
    }
}
