//! The shared model: named resources with capacities, client weights, the tasks and job
//! requests users submit, the machines of a cluster and the accounts that share it.
//!
//! Policies and allocators work in *normalised* units (every capacity is 1, an amount is a
//! fraction of its resource), as the papers do. This module owns the conversion between what
//! operators write (cores, GiB) and those fractions, and the checks that make it safe.

mod account;
mod duration;
mod input;
mod job;
mod machine;
mod release;
mod tres;

pub use account::{fairshare_parents, Account, AccountError, AccountTree, RawShares};
pub use duration::{
    parse_seconds, seconds, slurm_conf_duration, slurm_duration, whole_seconds, BadDuration,
};
pub use input::ReadStats;
pub use job::{Chunk, JobRequest, Pin, Task};
pub use machine::{partition_property, MachineCatalogue, NodeType, PARTITION_PROPERTY};
pub use release::slurm_release;
pub use tres::{tres_name, tres_type, TresWeights};

use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// A point in an engine's time: integer microseconds, so events order exactly.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Time(pub u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);

    /// The largest time or duration an input may give, in seconds (10¹⁰ s, about 317 years):
    /// far beyond any trace, yet small enough that a time plus a duration plus a horizon never
    /// reaches the end of [`Time`] (about 584,000 years), so arithmetic on inputs stays exact.
    pub const LONGEST_INPUT_S: f64 = 1e10;

    /// A time or duration read from an input, in seconds: `None` unless it is a number from 0
    /// to [`Time::LONGEST_INPUT_S`].
    pub fn from_input_secs(secs: f64) -> Option<Time> {
        (secs.is_finite() && (0.0..=Self::LONGEST_INPUT_S).contains(&secs))
            .then(|| Time::from_secs_f64(secs))
    }

    /// A UTC moment as Slurm's commands and `date -u +%FT%T.%N` print it
    /// (`2026-11-28T17:42:45`, with a fraction of a second or none; a date alone is its
    /// midnight), to the microsecond: `None` unless it is one, from 1970 to
    /// [`Time::LONGEST_INPUT_S`] later.
    pub fn from_utc(text: &str) -> Option<Time> {
        let midnight;
        let text = match text.len() {
            10 => {
                midnight = format!("{text}T00:00:00");
                &midnight
            }
            _ => text,
        };
        let since = humantime::parse_rfc3339_weak(text)
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        (since.as_secs_f64() <= Self::LONGEST_INPUT_S).then_some(Time(since.as_micros() as u64))
    }

    /// This time as a UTC moment to the second, as [`Time::from_utc`] reads it
    /// (`2026-11-28T17:42:45`).
    pub fn utc(self) -> String {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_micros(self.0);
        let text = humantime::format_rfc3339_seconds(at).to_string();
        text.trim_end_matches('Z').to_owned()
    }

    /// A time from whole microseconds.
    pub fn from_micros(micros: u64) -> Time {
        Time(micros)
    }

    /// A time from seconds, rounded to the microsecond (negative and NaN give zero).
    pub fn from_secs_f64(secs: f64) -> Time {
        Time((secs * 1e6).round().max(0.0) as u64)
    }

    /// Whole microseconds.
    pub fn as_micros(self) -> u64 {
        self.0
    }

    /// The whole second it falls in, counted from zero (the epoch, for a log's times).
    pub fn whole_secs(self) -> u64 {
        self.0 / 1_000_000
    }

    /// The start of whole second `secs`, saturating at the end of time.
    pub fn from_whole_secs(secs: u64) -> Time {
        Time(secs.saturating_mul(1_000_000))
    }

    /// Seconds, for the continuous math of decay and crossing times.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// `self + micros`, saturating at the end of time.
    pub fn plus_micros(self, micros: u64) -> Time {
        Time(self.0.saturating_add(micros))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} s", self.as_secs_f64())
    }
}

/// A problem with a resource set, a weight or a vector.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// Two resources share a name.
    #[error("resource {0:?} is listed twice")]
    DuplicateResource(String),
    /// A capacity is zero, negative, subnormal or not a number.
    #[error("capacity of resource {name:?} must be a positive finite number (at least 2.2e-308), found {value}")]
    BadCapacity {
        /// Resource name.
        name: String,
        /// The offending value.
        value: f64,
    },
    /// A resource set without resources.
    #[error("at least one resource is needed")]
    NoResources,
    /// A weight is zero, negative or not a number.
    #[error("weight of client {client} must be a positive finite number, found {value}")]
    BadWeight {
        /// Position of the client.
        client: usize,
        /// The offending value.
        value: f64,
    },
    /// A vector has the wrong number of components.
    #[error("expected {expected} resource amounts, found {found}")]
    WrongLength {
        /// Number of resources.
        expected: usize,
        /// Number of amounts given.
        found: usize,
    },
}

/// Named resources and their capacities, in the order every vector uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSet {
    names: Vec<String>,
    capacities: Vec<f64>,
}

impl ResourceSet {
    /// Resources named `r1`, `r2`, … with these capacities (positive), for callers whose
    /// resources have no names.
    pub fn from_capacities(capacities: &[f64]) -> Result<Self, ModelError> {
        ResourceSet::new(
            capacities
                .iter()
                .enumerate()
                .map(|(r, c)| (format!("r{}", r + 1), *c)),
        )
    }

    /// A resource set from `(name, capacity)` pairs; names unique, capacities positive normal
    /// numbers (not subnormal: dividing by one overflows).
    pub fn new<S: Into<String>>(
        resources: impl IntoIterator<Item = (S, f64)>,
    ) -> Result<Self, ModelError> {
        let mut names: Vec<String> = Vec::new();
        let mut capacities = Vec::new();
        for (name, capacity) in resources {
            let name = name.into();
            if names.contains(&name) {
                return Err(ModelError::DuplicateResource(name));
            }
            // A subnormal capacity would turn ordinary demands into infinite shares.
            if !(capacity.is_normal() && capacity > 0.0) {
                return Err(ModelError::BadCapacity {
                    name,
                    value: capacity,
                });
            }
            names.push(name);
            capacities.push(capacity);
        }
        if names.is_empty() {
            return Err(ModelError::NoResources);
        }
        Ok(ResourceSet { names, capacities })
    }

    /// Number of resources.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: a resource set holds at least one resource.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Resource names, in vector order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Capacities, in vector order.
    pub fn capacities(&self) -> &[f64] {
        &self.capacities
    }

    /// Position of a resource by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Raw amounts as fractions of each capacity.
    pub fn normalise(&self, amounts: &[f64]) -> Result<Vec<f64>, ModelError> {
        self.check_len(amounts)?;
        Ok(amounts
            .iter()
            .zip(&self.capacities)
            .map(|(a, c)| a / c)
            .collect())
    }

    /// Fractions of each capacity back to raw amounts.
    pub fn denormalise(&self, shares: &[f64]) -> Result<Vec<f64>, ModelError> {
        self.check_len(shares)?;
        Ok(shares
            .iter()
            .zip(&self.capacities)
            .map(|(s, c)| s * c)
            .collect())
    }

    fn check_len(&self, v: &[f64]) -> Result<(), ModelError> {
        if v.len() == self.len() {
            Ok(())
        } else {
            Err(ModelError::WrongLength {
                expected: self.len(),
                found: v.len(),
            })
        }
    }
}

/// Relative weights ρ_i = n·w_i with w_i = weight_i / Σ weight: 1 for everyone when all
/// weights are equal, so weighted formulas reduce exactly to the unweighted papers.
pub fn relative_weights(weights: &[f64]) -> Result<Vec<f64>, ModelError> {
    if let Some((client, &value)) = weights
        .iter()
        .enumerate()
        .find(|(_, w)| !(w.is_finite() && **w > 0.0))
    {
        return Err(ModelError::BadWeight { client, value });
    }
    let total: f64 = weights.iter().sum();
    let n = weights.len() as f64;
    Ok(weights
        .iter()
        .map(|w| if total > 0.0 { n * w / total } else { 1.0 })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_converts_exactly() {
        assert_eq!(Time::from_secs_f64(1.5).as_micros(), 1_500_000);
        assert_eq!(Time::from_secs_f64(-3.0), Time::ZERO);
        assert_eq!(Time(2_500_000).as_secs_f64(), 2.5);
        assert_eq!(Time(u64::MAX).plus_micros(5), Time(u64::MAX));
        assert_eq!(Time::from_input_secs(1.5), Some(Time(1_500_000)));
        assert_eq!(
            Time::from_input_secs(Time::LONGEST_INPUT_S),
            Some(Time(10u64.pow(16)))
        );
        for bad in [-1.0, 1e308, f64::NAN, f64::INFINITY, 1.8e13] {
            assert_eq!(Time::from_input_secs(bad), None, "{bad}");
        }
        assert_eq!(Time(1_000_000).to_string(), "1.000000 s");
    }

    /// A UTC moment is read to the microsecond, a date alone as its midnight, and anything
    /// else, or a moment before 1970 or past the longest input, is none.
    #[test]
    fn utc_moments_read_as_slurm_and_date_print_them() {
        let day = 1_764_288_000; // 2025-11-28T00:00:00
        let at = |secs: u64, micros: u64| Some(Time(secs * 1_000_000 + micros));
        assert_eq!(Time::from_utc("2025-11-28"), at(day, 0));
        assert_eq!(Time::from_utc("2025-11-28T00:00:01"), at(day + 1, 0));
        assert_eq!(
            Time::from_utc("2025-11-28T17:42:45.270123456"),
            at(day + 63_765, 270_123)
        );
        assert_eq!(
            Time::from_utc("2025-11-28T00:08:20.316"),
            at(day + 500, 316_000)
        );
        for bad in [
            "",
            "Unknown",
            "1969-12-31T23:59:59",
            "2025-11-28T25:00:00",
            "2400-01-01",
        ] {
            assert_eq!(Time::from_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn normalises_and_back() {
        let set = ResourceSet::new([("cpu", 9.0), ("mem", 18.0)]).unwrap();
        assert_eq!(set.normalise(&[3.0, 9.0]).unwrap(), vec![1.0 / 3.0, 0.5]);
        assert_eq!(set.denormalise(&[0.5, 0.5]).unwrap(), vec![4.5, 9.0]);
        assert_eq!(set.index_of("mem"), Some(1));
        assert!(set.normalise(&[1.0]).is_err());
    }

    #[test]
    fn rejects_bad_sets() {
        assert!(matches!(
            ResourceSet::new([("cpu", 1.0), ("cpu", 2.0)]),
            Err(ModelError::DuplicateResource(_))
        ));
        assert!(matches!(
            ResourceSet::new([("cpu", f64::NAN)]),
            Err(ModelError::BadCapacity { .. })
        ));
        assert!(matches!(
            ResourceSet::new([("cpu", 0.0)]),
            Err(ModelError::BadCapacity { .. })
        ));
        assert_eq!(
            ResourceSet::new(Vec::<(String, f64)>::new()),
            Err(ModelError::NoResources)
        );
    }

    #[test]
    fn relative_weights_average_to_one() {
        assert_eq!(
            relative_weights(&[1.0, 1.0, 1.0]).unwrap(),
            vec![1.0, 1.0, 1.0]
        );
        assert_eq!(relative_weights(&[1.0, 3.0]).unwrap(), vec![0.5, 1.5]);
        assert!(relative_weights(&[1.0, -1.0]).is_err());
    }
}
