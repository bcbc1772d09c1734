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
//! A job spanning many ticks is charged in O(1): its first partial period, the whole periods
//! between (a geometric series) and its last partial period.

/// The `ln 2` Slurm's decay factor is written with: `d = 1 − 0.693 / half-life`.
pub(super) const SLURM_LN_2: f64 = 0.693;

/// Slurm's tick schedule and per-second decay factor.
pub(super) struct Ticks {
    /// `ln d`, d the per-second decay factor.
    ln_d: f64,
    /// Seconds between ticks.
    period: f64,
    /// The time of one tick.
    offset: f64,
}

impl Ticks {
    /// Slurm's ticks under `PriorityDecayHalfLife` = `half_life_s` and `PriorityCalcPeriod` =
    /// `period_s`, one of them at `offset_s`.
    pub(super) fn new(half_life_s: f64, period_s: f64, offset_s: f64) -> Ticks {
        Ticks {
            ln_d: (1.0 - SLURM_LN_2 / half_life_s).ln(),
            period: period_s,
            offset: offset_s,
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

    /// What usage held at `from_s` is multiplied by when read at `to_s`: one `d^period` per
    /// tick in `(from_s, to_s]`.
    pub(super) fn factor(&self, from_s: f64, to_s: f64) -> f64 {
        let ticks = self.last(to_s) - self.last(from_s);
        if ticks <= 0.0 {
            1.0
        } else {
            self.power(self.period * ticks)
        }
    }

    /// What a job running at `rate` from `start_s` to `end_s` has been charged by `at_s`, as
    /// Slurm's ticks charged it and decayed it. A job still running at `at_s` is charged up to
    /// the last tick only, as `sshare` shows it.
    pub(super) fn accrued(&self, rate: f64, start_s: f64, end_s: f64, at_s: f64) -> f64 {
        if end_s <= start_s || start_s >= at_s {
            return 0.0;
        }
        let ended = end_s <= at_s;
        let now = self.last(at_s);
        let first = self.last(start_s);
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

    fn parse(text: &str) -> Result<Decay, String> {
        format!("slurm:{text}").parse()
    }

    /// Slurm's ticks, simulated one by one as its decay thread runs them.
    fn simulated(decay: &Decay, rate: f64, start: f64, end: f64, at: f64) -> f64 {
        let Decay::Slurm {
            half_life_s,
            period_s,
            offset_s,
        } = *decay
        else {
            unreachable!()
        };
        let d = 1.0 - SLURM_LN_2 / half_life_s;
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
        assert!(parse("period=0").is_err());
        assert!(parse("rate=3").is_err());
        assert!(parse("period").is_err());
        assert!(parse("offset=nan").is_err());
    }
}
