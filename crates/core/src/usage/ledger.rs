//! The ledger: what each client consumed, decayed to any later moment, in closed form.
//!
//! Every ranker that keeps usage keeps it here, so usage means the same thing under every
//! policy that reads it. A client's usage is its amount at an *anchor* time plus what the rate
//! it has held since adds, both under one [`Decay`]: reading it at `t` costs one
//! [`Decay::factor`] and one [`Decay::accrued`] per resource, and time passing costs nothing.
//! Changing a rate or charging an amount re-anchors that one client. Times are seconds on the
//! caller's clock and must not go backwards for a client.

use super::decay::Decay;
use thiserror::Error;

/// A ledger or a window was misused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// Time moved backwards.
    #[error("time went backwards: ledger is at {now} s, asked for {asked} s")]
    TimeWentBackwards {
        /// The ledger's current time.
        now: f64,
        /// The earlier time asked for.
        asked: f64,
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
    /// A charge would make usage something other than a finite number.
    #[error("usage {usage} after a charge of {amount}")]
    NotFinite {
        /// The usage the charge would leave.
        usage: f64,
        /// The charge.
        amount: f64,
    },
}

/// The decayed usage of a fixed set of clients on a fixed number of resources.
#[derive(Debug, Clone)]
pub struct Ledger {
    decay: Decay,
    resources: usize,
    /// Per client: the time its usage was last brought up to date.
    anchor: Vec<f64>,
    /// Per client and resource (client-major): usage at the anchor.
    usage: Vec<f64>,
    /// Per client and resource: the rate accruing since the anchor.
    rate: Vec<f64>,
}

impl Ledger {
    /// `clients` clients with no usage on `resources` resources, forgetting under `decay`.
    pub fn new(decay: Decay, clients: usize, resources: usize) -> Ledger {
        Ledger {
            decay,
            resources,
            anchor: vec![0.0; clients],
            usage: vec![0.0; clients * resources],
            rate: vec![0.0; clients * resources],
        }
    }

    /// How many clients the ledger holds.
    pub fn clients(&self) -> usize {
        self.anchor.len()
    }

    /// The rate a client accrues now, per resource.
    pub fn rate(&self, client: usize) -> &[f64] {
        &self.rate[self.span(client)]
    }

    /// A client's usage read at `at_s` (not before its anchor), per resource.
    pub fn usage_at(&self, client: usize, at_s: f64) -> impl Iterator<Item = f64> + '_ {
        let from = self.anchor[client];
        let kept = self.decay.factor(from, at_s);
        let span = self.span(client);
        let (usage, rate) = (&self.usage[span.clone()], &self.rate[span]);
        usage
            .iter()
            .zip(rate)
            .map(move |(u, r)| u * kept + self.decay.accrued(*r, from, at_s, at_s))
    }

    /// From `at_s` on, the client accrues `rate` per second on each resource.
    pub fn set_rate(&mut self, client: usize, at_s: f64, rate: &[f64]) -> Result<(), LedgerError> {
        if rate.len() != self.resources || rate.iter().any(|r| !(r.is_finite() && *r >= 0.0)) {
            return Err(LedgerError::BadRate {
                expected: self.resources,
                found: rate.to_vec(),
            });
        }
        self.anchor(client, at_s)?;
        let span = self.span(client);
        self.rate[span].copy_from_slice(rate);
        Ok(())
    }

    /// Adds `amount` to a client's usage at `at_s`, all at once. Refused when a sum would no
    /// longer be a finite number: the client is then brought up to `at_s` (which changes no
    /// value it reads) and nothing is added.
    pub fn charge(&mut self, client: usize, at_s: f64, amount: &[f64]) -> Result<(), LedgerError> {
        if amount.len() != self.resources {
            return Err(LedgerError::WrongLength {
                expected: self.resources,
                found: amount.len(),
            });
        }
        self.anchor(client, at_s)?;
        let span = self.span(client);
        let usage = &mut self.usage[span];
        if let Some((u, a)) = usage
            .iter()
            .zip(amount)
            .find(|(u, a)| !(*u + *a).is_finite())
        {
            return Err(LedgerError::NotFinite {
                usage: u + a,
                amount: *a,
            });
        }
        usage.iter_mut().zip(amount).for_each(|(u, a)| *u += a);
        Ok(())
    }

    /// Brings a client's usage up to `at_s` and anchors it there.
    fn anchor(&mut self, client: usize, at_s: f64) -> Result<(), LedgerError> {
        let now = self.anchor[client];
        if at_s < now {
            return Err(LedgerError::TimeWentBackwards { now, asked: at_s });
        }
        // As `usage_at` reads it, written in place: no allocation on a job's start or end.
        let kept = self.decay.factor(now, at_s);
        for k in self.span(client) {
            let accrued = self.decay.accrued(self.rate[k], now, at_s, at_s);
            self.usage[k] = self.usage[k] * kept + accrued;
        }
        self.anchor[client] = at_s;
        Ok(())
    }

    /// Where a client's resources sit in the flat vectors.
    fn span(&self, client: usize) -> std::ops::Range<usize> {
        client * self.resources..(client + 1) * self.resources
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOUR: f64 = 3600.0;

    #[test]
    fn a_rate_accrues_and_halves_with_its_half_life() {
        let mut ledger = Ledger::new(Decay::Continuous { half_life_s: HOUR }, 2, 2);
        ledger.set_rate(0, 0.0, &[2.0, 1.0]).unwrap();
        ledger.set_rate(0, HOUR, &[0.0, 0.0]).unwrap();
        // ∫₀ᴴ r·2^(−(H−t)/H) dt = r·H / (2 ln 2), then halved over the next hour.
        let first_hour = HOUR / (2.0 * std::f64::consts::LN_2);
        let got: Vec<f64> = ledger.usage_at(0, 2.0 * HOUR).collect();
        assert!((got[0] - 2.0 * first_hour / 2.0).abs() < 1e-9, "{got:?}");
        assert!((got[1] - first_hour / 2.0).abs() < 1e-9, "{got:?}");
        assert_eq!(
            ledger.usage_at(1, 2.0 * HOUR).collect::<Vec<_>>(),
            [0.0, 0.0]
        );
    }

    #[test]
    fn a_charge_steps_halve_and_a_reset_forgets() {
        let halving = Decay::Step {
            period_s: 10.0,
            factor: 0.5,
        };
        let mut ledger = Ledger::new(halving, 1, 1);
        ledger.charge(0, 5.0, &[8.0]).unwrap();
        assert_eq!(ledger.usage_at(0, 9.9).next(), Some(8.0));
        assert_eq!(
            ledger.usage_at(0, 35.0).next(),
            Some(1.0),
            "three boundaries"
        );
        let reset = Decay::Step {
            period_s: 10.0,
            factor: 0.0,
        };
        let mut ledger = Ledger::new(reset, 1, 1);
        ledger.charge(0, 5.0, &[8.0]).unwrap();
        assert_eq!(ledger.usage_at(0, 10.0).next(), Some(0.0));
    }

    #[test]
    fn misuse_is_refused_and_changes_nothing() {
        let mut ledger = Ledger::new(Decay::Continuous { half_life_s: HOUR }, 1, 1);
        ledger.charge(0, 10.0, &[1.0]).unwrap();
        assert!(matches!(
            ledger.charge(0, 5.0, &[1.0]),
            Err(LedgerError::TimeWentBackwards { .. })
        ));
        assert!(matches!(
            ledger
                .charge(0, 10.0, &[f64::MAX])
                .and(ledger.charge(0, 10.0, &[f64::MAX])),
            Err(LedgerError::NotFinite { .. })
        ));
        assert_eq!(ledger.usage_at(0, 10.0).next(), Some(1.0 + f64::MAX));
        // A refused charge later on still brings the client up to then, which changes nothing
        // it reads: an hour on, the usage has halved either way.
        let mut clean = Ledger::new(Decay::Continuous { half_life_s: HOUR }, 1, 1);
        clean.charge(0, 0.0, &[8.0]).unwrap();
        let mut refused = clean.clone();
        assert!(refused.charge(0, HOUR, &[f64::INFINITY]).is_err());
        let read = |l: &Ledger| l.usage_at(0, 2.0 * HOUR).next().unwrap();
        assert!((read(&refused) - 2.0).abs() < 1e-12 && (read(&clean) - 2.0).abs() < 1e-12);
        assert!(matches!(
            ledger.set_rate(0, 10.0, &[-1.0]),
            Err(LedgerError::BadRate { .. })
        ));
        assert!(matches!(
            ledger.charge(0, 10.0, &[1.0, 1.0]),
            Err(LedgerError::WrongLength { .. })
        ));
    }

    proptest! {
        /// Re-anchoring is invisible: usage read through many rate changes equals summing every
        /// segment's accrual, decayed to the end, from scratch.
        #[test]
        fn anchoring_equals_summing_every_segment(
            steps in prop::collection::vec((1u32..500, 0u32..4), 1..12),
            decay in prop::sample::select(vec![
                Decay::Continuous { half_life_s: 300.0 },
                Decay::Step { period_s: 120.0, factor: 0.5 },
                Decay::Step { period_s: 90.0, factor: 0.0 },
            ]),
        ) {
            let mut ledger = Ledger::new(decay, 1, 1);
            let (mut t, mut segments) = (0.0, Vec::new());
            for (dt, rate) in steps {
                ledger.set_rate(0, t, &[f64::from(rate)]).unwrap();
                segments.push((t, t + f64::from(dt), f64::from(rate)));
                t += f64::from(dt);
            }
            ledger.set_rate(0, t, &[0.0]).unwrap();
            let end = t + 50.0;
            let expected: f64 = segments.iter().map(|&(a, b, r)| decay.accrued(r, a, b, end)).sum();
            let got = ledger.usage_at(0, end).next().unwrap();
            prop_assert!((got - expected).abs() <= 1e-9 * expected.max(1.0), "{got} vs {expected}");
        }
    }
}
