//! Slurm's accounting as `priority/multifactor` does it, tick by tick, in closed form.
//!
//! Slurm does not integrate a decaying rate: its decay thread wakes every `PriorityCalcPeriod`,
//! multiplies every usage by `d^Δ` (`d = 1 − 0.693 / PriorityDecayHalfLife` per second, `Δ`
//! the seconds since the previous tick), then charges each running job `rate · s · d^s` for the
//! `s` seconds it ran since that tick. A job that ends between two ticks is charged its last
//! `s` the same way when it ends. What `sshare` shows between ticks is the state after the
//! last one, plus the charges of jobs that ended since. Against the continuous integral this
//! reads a few per cent apart at short periods and half-lives (60 s and 10 min), and about
//! 0.02 % at Slurm's defaults (5 min and 7 days).
//!
//! `PriorityDecayHalfLife=0` means no decay (`d = 1`), the ticks still charging as they run;
//! `PriorityUsageResetPeriod` zeroes all usage at the first tick at or after each of its
//! boundaries ([`Reset`]), before that tick charges the seconds since the previous one.
//!
//! A job spanning many ticks is charged in O(1): its first partial period, the whole periods
//! between (a geometric series) and its last partial period.

use super::reset::Reset;

/// The `ln 2` Slurm's decay factor is written with: `d = 1 − 0.693 / half-life`.
pub(super) const SLURM_LN_2: f64 = 0.693;

/// Slurm's tick schedule, per-second decay factor and usage resets.
pub(super) struct Ticks {
    /// `ln d`, d the per-second decay factor (0: no decay, `PriorityDecayHalfLife=0`).
    ln_d: f64,
    /// Seconds between ticks.
    period: f64,
    /// The time of one tick.
    offset: f64,
    /// `PriorityUsageResetPeriod`, if usage is zeroed at calendar boundaries.
    reset: Option<Reset>,
}

impl Ticks {
    /// Slurm's ticks under `PriorityDecayHalfLife` = `half_life_s` (0: no decay),
    /// `PriorityCalcPeriod` = `period_s`, one of them at `offset_s`, and
    /// `PriorityUsageResetPeriod` = `reset`.
    pub(super) fn new(
        half_life_s: f64,
        period_s: f64,
        offset_s: f64,
        reset: Option<Reset>,
    ) -> Ticks {
        let ln_d = if half_life_s == 0.0 {
            0.0
        } else {
            (1.0 - SLURM_LN_2 / half_life_s).ln()
        };
        Ticks {
            ln_d,
            period: period_s,
            offset: offset_s,
            reset,
        }
    }

    /// `d^seconds`.
    fn power(&self, seconds: f64) -> f64 {
        (seconds * self.ln_d).exp()
    }

    /// The index of the last tick at or before `t`.
    fn last(&self, t: f64) -> f64 {
        ((t - self.offset) / self.period).floor()
    }

    /// The time of the last tick at or before `t`.
    pub(super) fn last_time(&self, t: f64) -> f64 {
        self.time(self.last(t))
    }

    /// The time of tick `k`.
    fn time(&self, k: f64) -> f64 {
        self.offset + k * self.period
    }

    /// The index of the last tick at or before `t` that zeroed usage: Slurm resets at its first
    /// tick at or after each boundary.
    fn last_reset(&self, t: f64) -> Option<f64> {
        let reset = self.reset?;
        // The last reset at or before the last tick is that of the last boundary before it.
        let boundary = reset.last_boundary(self.last_time(t));
        Some(((boundary - self.offset) / self.period).ceil())
    }

    /// What usage held at `from_s` is multiplied by when read at `to_s`: one `d^period` per
    /// tick in `(from_s, to_s]`, and 0 when one of those ticks reset usage.
    pub(super) fn factor(&self, from_s: f64, to_s: f64) -> f64 {
        let ticks = self.last(to_s) - self.last(from_s);
        if ticks <= 0.0 {
            1.0
        } else if self.last_reset(to_s).is_some_and(|r| r > self.last(from_s)) {
            0.0
        } else {
            self.power(self.period * ticks)
        }
    }

    /// What a job running at `rate` from `start_s` to `end_s` has been charged by `at_s`, as
    /// Slurm's ticks charged it, decayed it and reset it. A job still running at `at_s` is
    /// charged up to the last tick only, as `sshare` shows it.
    pub(super) fn accrued(&self, rate: f64, start_s: f64, end_s: f64, at_s: f64) -> f64 {
        if end_s <= start_s || start_s >= at_s {
            return 0.0;
        }
        let ended = end_s <= at_s;
        let first = self.last(start_s);
        let last = self.last(end_s.min(at_s));
        match self.last_reset(at_s) {
            // Every charge was made before the last reset.
            Some(r) if ended && last < r => 0.0,
            // The charges kept are those of tick r on, for the seconds since tick r − 1.
            Some(r) if first < r - 1.0 => {
                self.accrued_since(rate, (self.time(r - 1.0), r - 1.0), end_s, at_s)
            }
            _ => self.accrued_since(rate, (start_s, first), end_s, at_s),
        }
    }

    /// [`Ticks::accrued`] without resets, for a job charged from `start_s`, whose last tick at
    /// or before it is `first` (passed, not recomputed, so that a tick's own time stays its
    /// tick).
    fn accrued_since(&self, rate: f64, (start_s, first): (f64, f64), end_s: f64, at_s: f64) -> f64 {
        let ended = end_s <= at_s;
        let now = self.last(at_s);
        let last = self.last(end_s.min(at_s));
        // A charge of `s` seconds standing since tick `k`, decayed to `at_s`.
        let charge =
            |s: f64, k: f64| rate * s * self.power(s) * self.power(self.period * (now - k));
        if last <= first {
            return if ended {
                charge(end_s - start_s, last)
            } else {
                0.0
            };
        }
        let head = charge(self.time(first + 1.0) - start_s, first + 1.0);
        let whole = last - first - 1.0;
        let middle = if whole > 0.0 {
            charge(self.period, last) * self.series(whole)
        } else {
            0.0
        };
        let tail = if ended && end_s > self.time(last) {
            charge(end_s - self.time(last), last)
        } else {
            0.0
        };
        head + middle + tail
    }

    /// `1 + D + … + D^(n−1)` with `D = d^period`, precise when `D` is close to 1.
    fn series(&self, n: f64) -> f64 {
        let x = self.period * self.ln_d;
        if x == 0.0 {
            n
        } else {
            (n * x).exp_m1() / x.exp_m1()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::decay::Decay;

    fn parse(text: &str) -> Result<Decay, crate::error::Invalid> {
        format!("slurm:{text}").parse()
    }

    /// Slurm's ticks, simulated one by one as its decay thread runs them.
    fn simulated(decay: &Decay, rate: f64, start: f64, end: f64, at: f64) -> f64 {
        let Decay::Slurm {
            half_life_s,
            period_s,
            offset_s,
            reset,
        } = *decay
        else {
            unreachable!()
        };
        let d = match half_life_s {
            0.0 => 1.0,
            h => 1.0 - SLURM_LN_2 / h,
        };
        let mut usage = 0.0;
        let mut previous = offset_s + ((start - offset_s) / period_s).floor() * period_s;
        let mut charged_to = start;
        let mut tick = previous + period_s;
        while tick <= at {
            if end < tick && charged_to < end {
                // The job ended before this tick: its last seconds are charged at its end.
                let s = end - charged_to;
                usage += rate * s * d.powf(s);
                charged_to = end;
            }
            if reset.is_some_and(|r| r.last_boundary(tick) > previous) {
                usage = 0.0;
            }
            usage *= d.powf(tick - previous);
            if charged_to < end {
                let s = end.min(tick) - charged_to;
                usage += rate * s * d.powf(s);
                charged_to = end.min(tick);
            }
            previous = tick;
            tick += period_s;
        }
        if end <= at && charged_to < end {
            let s = end - charged_to;
            usage += rate * s * d.powf(s);
        }
        usage
    }

    #[test]
    fn closed_form_equals_ticking() {
        let decay = parse("half-life=600,period=60,offset=17").unwrap();
        let cases = [
            (0.0, 30.0, 40.0),
            (0.0, 30.0, 20.0),
            (5.0, 500.0, 400.0),
            (5.0, 500.0, 900.0),
            (17.0, 137.0, 137.0),
            (17.0, 137.0, 3000.0),
            (100.0, 7000.0, 7200.5),
            (0.0, 1e6, 2e5),
        ];
        for (start, end, at) in cases {
            let exact = decay.accrued(3.0, start, end, at);
            let ticked = simulated(&decay, 3.0, start, end, at);
            assert!(
                (exact - ticked).abs() <= 1e-9 * ticked.max(1.0),
                "{start}..{end} at {at}: {exact} vs {ticked}"
            );
        }
    }

    #[test]
    fn resets_and_no_decay_equal_ticking() {
        // Ticks every 10 h from 03:00, resets daily: the reset ticks fall at 03:00 + 30 h·k
        // hours past each midnight, never on one.
        let day = 86_400.0;
        for text in [
            "half-life=0,period=36000,offset=10800,reset=daily",
            "half-life=200000,period=36000,offset=10800,reset=weekly",
            "half-life=0,period=36000,offset=10800",
            "half-life=0,period=300,offset=7,reset=monthly",
        ] {
            let decay = parse(text).unwrap();
            for (start, end, at) in [
                (0.0, 5.0 * day, 5.5 * day),
                (0.3 * day, 0.9 * day, 1.2 * day),
                (0.3 * day, 0.9 * day, 0.95 * day),
                (1.1 * day, 9.7 * day, 9.0 * day),
                (2.0 * day, 2.2 * day, 40.0 * day),
                (20.0 * day, 45.0 * day, 45.5 * day),
                (31.0 * day, 31.9 * day, 32.5 * day),
            ] {
                let exact = decay.accrued(2.0, start, end, at);
                let ticked = simulated(&decay, 2.0, start, end, at);
                assert!(
                    (exact - ticked).abs() <= 1e-9 * ticked.max(1.0),
                    "{text}: {start}..{end} at {at}: {exact} vs {ticked}"
                );
            }
        }
        let daily = parse("half-life=0,period=36000,offset=10800,reset=daily").unwrap();
        // Held at 04:00 on day 0, read at 13:00 on day 1: the tick of 09:00 on day 1 reset it.
        assert_eq!(daily.factor(4.0 * 3600.0, day + 13.0 * 3600.0), 0.0);
        assert_eq!(daily.factor(4.0 * 3600.0, 11.0 * 3600.0), 1.0);
        assert!(parse("reset=hourly").unwrap_err().contains("daily"));
    }

    #[test]
    fn a_full_period_is_charged_less_than_the_integral() {
        let slurm = parse("half-life=600,period=60").unwrap();
        let continuous = Decay::Continuous { half_life_s: 600.0 };
        // One job over one whole period, read at the tick that ends it.
        let ticked = slurm.accrued(1.0, 0.0, 60.0, 60.0);
        assert!((ticked - 60.0 * (1.0 - 0.693 / 600.0_f64).powf(60.0)).abs() < 1e-12);
        let integral = continuous.accrued(1.0, 0.0, 60.0, 60.0);
        assert!(ticked < integral && ticked > 0.96 * integral);
        // Between ticks nothing more is charged for a job still running.
        assert_eq!(slurm.accrued(1.0, 0.0, 100.0, 90.0), ticked);
        assert_eq!(slurm.factor(10.0, 59.0), 1.0);
        assert_eq!(
            slurm.factor(59.0, 61.0),
            (1.0 - 0.693 / 600.0_f64).powf(60.0)
        );
    }

    #[test]
    fn parameters_are_checked() {
        assert!(parse("").is_ok());
        assert!(parse("half-life=0.5").unwrap_err().contains("0.693"));
        assert!(parse("half-life=0,reset=none").is_ok());
        assert!(parse("period=0").is_err());
        assert!(parse("rate=3").is_err());
        assert!(parse("period").is_err());
        assert!(parse("offset=nan").is_err());
    }
}
