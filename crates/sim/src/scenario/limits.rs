//! What a scenario may ask of the process simulator, so that every run finishes and its
//! output stays bounded (`docs/bottleneck.md`, "Limits").
//!
//! The settings and request lengths are checked one by one as the file is read (an error names
//! the key and its line); the program as a whole is checked after, from its mean request
//! lengths: how long it lasts and about how many engine events it causes. The engine checks the
//! same limits while it runs, since sampled lengths can exceed their means.

use super::Simulation;
use thiserror::Error;

/// The largest time value a scenario may give (a start, a duration, a mean or width, a
/// setting), and the latest instant a run may reach, in seconds: 10⁹ s, about 32 years. Below
/// 2⁵³ µs (≈ 9·10⁹ s) every engine instant, converted to seconds, is exact to the microsecond.
pub const MAX_TIME_S: f64 = 1e9;

/// [`MAX_TIME_S`] as written in messages.
const MAX_TIME_TEXT: &str = "1e9";

/// The shortest quantum, window and priority interval, seconds (1 ms): the engine's clock counts
/// microseconds, and a shorter step only multiplies the events and the output.
pub const MIN_STEP_S: f64 = 1e-3;

/// The most independent runs of one scenario (the paper's randomised figures use 20).
pub const MAX_RUNS: u32 = 1_000;

/// The most engine events one run may handle: 2,408 in the largest shipped scenario, about
/// 543,000 in the 10,000-s, 100-process benchmark scenario. The first run's Gantt chart in the
/// JSON holds about one segment per event (≈ 170 bytes each), so this also bounds the output.
pub const MAX_EVENTS_PER_RUN: u64 = 2_000_000;

/// Whether a resource is time-sliced in quanta: its name ends in `_CS` ("allows context
/// switching"); the others serve each request to completion.
pub fn is_time_sliced(resource: &str) -> bool {
    resource.ends_with("_CS")
}

/// A scenario the simulator would not finish, or whose output would not be bounded.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LimitError {
    /// A `[simulation]` setting or a process's start outside its range.
    #[error("{key}: expected {expected}, found {}", shown(*found))]
    Setting {
        /// The key, as written in the scenario.
        key: &'static str,
        /// The values allowed, in words.
        expected: &'static str,
        /// The value found.
        found: f64,
    },
    /// A program that, at its mean request lengths, ends after [`MAX_TIME_S`].
    #[error("process \"{process}\": starting at {start_s} s, its program takes {length_s:.3e} s at the mean request lengths, past the latest instant a run may reach ({MAX_TIME_TEXT} s); set [simulation] duration, or shorten the program")]
    TooLong {
        /// The process.
        process: String,
        /// Its start, seconds.
        start_s: f64,
        /// Its program's length at the mean request lengths, seconds.
        length_s: f64,
    },
    /// Programs that, at their mean request lengths, cause more than [`MAX_EVENTS_PER_RUN`].
    #[error("the programs cause about {events:.3e} engine events per run at the mean request lengths (process \"{process}\" alone {largest:.3e}), more than the {MAX_EVENTS_PER_RUN} a run may handle; set [simulation] duration, or lower the loop counts")]
    TooManyEvents {
        /// The process that causes the most.
        process: String,
        /// The events it causes.
        largest: f64,
        /// The events all programs cause.
        events: f64,
    },
}

/// The values one setting may take.
pub(crate) struct Range {
    key: &'static str,
    expected: &'static str,
    valid: fn(f64) -> bool,
}

impl Range {
    /// `value` if it is valid, else the error naming the key.
    pub(super) fn check(&self, value: f64) -> Result<f64, LimitError> {
        if value.is_finite() && (self.valid)(value) {
            Ok(value)
        } else {
            Err(LimitError::Setting {
                key: self.key,
                expected: self.expected,
                found: value,
            })
        }
    }
}

fn time_value(v: f64) -> bool {
    (0.0..=MAX_TIME_S).contains(&v)
}

fn positive_time(v: f64) -> bool {
    v > 0.0 && v <= MAX_TIME_S
}

fn step(v: f64) -> bool {
    (MIN_STEP_S..=MAX_TIME_S).contains(&v)
}

fn step_or_zero(v: f64) -> bool {
    v == 0.0 || step(v)
}

fn fraction(v: f64) -> bool {
    v > 0.0 && v <= 1.0
}

/// `duration`.
pub(crate) const DURATION: Range = Range {
    key: "duration",
    expected: "a number > 0 and ≤ 1e9 (seconds)",
    valid: positive_time,
};
/// `window`.
pub(crate) const WINDOW: Range = Range {
    key: "window",
    expected: "a number from 0.001 to 1e9 (seconds)",
    valid: step,
};
/// `bottleneck_threshold`.
pub(crate) const THRESHOLD: Range = Range {
    key: "bottleneck_threshold",
    expected: "a number > 0 and ≤ 1",
    valid: fraction,
};
/// `grace`.
pub(crate) const GRACE: Range = Range {
    key: "grace",
    expected: "a number from 0 to 1e9 (seconds)",
    valid: time_value,
};
/// `quantum`.
pub(crate) const QUANTUM: Range = Range {
    key: "quantum",
    expected: "a number from 0.001 to 1e9 (seconds)",
    valid: step,
};
/// `priority_interval`.
pub(crate) const PRIORITY_INTERVAL: Range = Range {
    key: "priority_interval",
    expected: "0, or a number from 0.001 to 1e9 (seconds)",
    valid: step_or_zero,
};
/// A process's `start`.
pub(crate) const START: Range = Range {
    key: "start",
    expected: "a number from 0 to 1e9 (seconds)",
    valid: time_value,
};
/// A request's mean or width, in a program.
pub(crate) const REQUEST_EXPECTED: &str = "a number from 0 to 1e9 (seconds)";

/// Whether a request's mean or width is allowed.
pub(crate) fn request_value(v: f64) -> bool {
    time_value(v)
}

/// `runs`.
const RUNS: Range = Range {
    key: "runs",
    expected: "a whole number from 1 to 1000",
    valid: runs,
};

fn runs(v: f64) -> bool {
    v.fract() == 0.0 && (1.0..=f64::from(MAX_RUNS)).contains(&v)
}

/// `runs` if it is from 1 to [`MAX_RUNS`] (the one rule for the scenario's key and for
/// overrides such as `--runs`).
pub fn check_runs(runs: u32) -> Result<u32, LimitError> {
    RUNS.check(f64::from(runs)).map(|_| runs)
}

/// A number as a person reads it: plainly, or in exponent form when very large or small.
fn shown(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e10).contains(&v.abs()) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

impl Range {
    /// Reads this setting with serde, refusing a value outside its range.
    pub(crate) fn read<'de, D: serde::Deserializer<'de>>(&self, d: D) -> Result<f64, D::Error> {
        use serde::de::Error as _;
        use serde::Deserialize as _;
        let value = f64::deserialize(d)?;
        self.check(value)
            .map_err(|e| D::Error::custom(e.to_string()))
    }
}

impl Simulation {
    /// Checks every setting against its range (the reader does as it reads; this is for
    /// settings changed after).
    pub fn check(&self) -> Result<(), LimitError> {
        if let Some(duration) = self.duration {
            DURATION.check(duration)?;
        }
        WINDOW.check(self.window)?;
        THRESHOLD.check(self.bottleneck_threshold)?;
        GRACE.check(self.grace)?;
        QUANTUM.check(self.quantum)?;
        PRIORITY_INTERVAL.check(self.priority_interval)?;
        check_runs(self.runs)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_in_messages_are_the_constants() {
        assert_eq!(MAX_TIME_TEXT.parse::<f64>(), Ok(MAX_TIME_S));
        for range in [
            &DURATION,
            &WINDOW,
            &GRACE,
            &QUANTUM,
            &PRIORITY_INTERVAL,
            &START,
        ] {
            assert!(range.expected.contains(MAX_TIME_TEXT), "{}", range.key);
        }
        assert!(REQUEST_EXPECTED.contains(MAX_TIME_TEXT));
        assert!(QUANTUM.expected.contains(&MIN_STEP_S.to_string()));
        assert!(RUNS.expected.ends_with(&MAX_RUNS.to_string()));
        assert!(check_runs(MAX_RUNS).is_ok() && check_runs(MAX_RUNS + 1).is_err());
    }

    #[test]
    fn ranges_accept_their_bounds_and_refuse_beyond() {
        assert!(QUANTUM.check(MIN_STEP_S).is_ok() && QUANTUM.check(MIN_STEP_S / 2.0).is_err());
        assert!(START.check(MAX_TIME_S).is_ok() && START.check(1.9e13).is_err());
        assert!(PRIORITY_INTERVAL.check(0.0).is_ok());
        assert!(PRIORITY_INTERVAL.check(1e-6).is_err());
        assert!(GRACE.check(f64::NAN).is_err() && DURATION.check(0.0).is_err());
    }
}
