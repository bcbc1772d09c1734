//! Durations as people write them, one syntax for every option and parameter that takes one:
//! a number of seconds (`3600`, `0.5`) or a length with units (`90s`, `10m`, `6h`, `7d`,
//! `1h 30m`, `2days`), so that `--horizon 7d`, `decay=half-life:7d` and
//! `decayed-usage:half-life=7d` all read alike, in the command line, the Python package,
//! policy strings and the configuration files' `_s` keys ([`seconds`]).

use crate::error::Invalid;
use crate::model::Time;
use serde::{Deserialize, Deserializer};
use thiserror::Error;

/// `text` in seconds: a number of seconds, or a length with units as [`humantime`] reads it
/// (`s`, `m`, `h`, `d`, `w`, `months`, `years` and their long names, lower case); never
/// negative.
pub fn parse_seconds(text: &str) -> Result<f64, Invalid> {
    let text = text.trim();
    if text.starts_with('-') {
        return Err(Invalid(format!(
            "a duration cannot be negative, found {text:?}"
        )));
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return match seconds.is_finite() {
            true => Ok(seconds),
            false => Err(Invalid(format!(
                "expected a finite duration, found {text:?}"
            ))),
        };
    }
    humantime::parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|_| {
            Invalid(format!(
                "expected seconds or a duration such as 90s, 10m, 6h, 7d or 1h 30m (units s, m, h, \
                 d, w, months, years, in lower case), found {text:?}"
            ))
        })
}

/// Reads a configuration key in seconds, written as a number (`interval_s = 30`) or as a
/// duration (`interval_s = "10m"`), for `#[serde(deserialize_with = "seconds")]`.
pub fn seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(f64),
        Text(String),
    }
    match Written::deserialize(deserializer)? {
        Written::Number(seconds) => Ok(seconds),
        Written::Text(text) => parse_seconds(&text).map_err(serde::de::Error::custom),
    }
}

/// [`seconds`] for a key held in whole seconds: a fraction is refused, not cut.
pub fn whole_seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let seconds = seconds(deserializer)?;
    if seconds.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(&seconds) {
        Ok(seconds as u64)
    } else {
        Err(serde::de::Error::custom(format!(
            "expected a whole number of seconds, found {seconds}"
        )))
    }
}

/// A text that is not a Slurm duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("not a Slurm duration (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)")]
#[non_exhaustive]
pub struct BadDuration;

/// A Slurm duration as sacct, sbatch and `slurm.conf` write it — `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`,
/// `D-HH:MM` or `D-HH:MM:SS` — in seconds; `None` for no limit (`UNLIMITED`,
/// `Partition_Limit`, `INVALID` or empty).
pub fn slurm_duration(text: &str) -> Result<Option<u64>, BadDuration> {
    if matches!(
        text,
        "" | "UNLIMITED" | "Partition_Limit" | "INVALID" | "NONE"
    ) {
        return Ok(None);
    }
    let (days, clock) = match text.split_once('-') {
        Some((d, rest)) => (d.parse::<u64>().map_err(|_| BadDuration)?, rest),
        None => (0, text),
    };
    let parts = clock
        .split(':')
        .map(|p| p.parse::<u64>().map_err(|_| BadDuration))
        .collect::<Result<Vec<u64>, BadDuration>>()?;
    let (h, m, s) = match (text.contains('-'), parts.as_slice()) {
        (false, [m]) => (0, *m, 0),
        (false, [m, s]) => (0, *m, *s),
        (true, [h]) => (*h, 0, 0),
        (true, [h, m]) => (*h, *m, 0),
        (_, [h, m, s]) => (*h, *m, *s),
        _ => return Err(BadDuration),
    };
    // In u128 every step is exact: four u64 terms cannot overflow it.
    let seconds =
        ((u128::from(days) * 24 + u128::from(h)) * 60 + u128::from(m)) * 60 + u128::from(s);
    let longest = Time::LONGEST_INPUT_S as u128;
    (seconds <= longest)
        .then_some(Some(seconds as u64))
        .ok_or(BadDuration)
}

/// A duration of Slurm's configuration (`PriorityDecayHalfLife`, `PriorityCalcPeriod`,
/// `PriorityMaxAge`) as Slurm reads it: [`slurm_duration`], rounded up to whole minutes, the
/// configuration's resolution (`PriorityCalcPeriod=00:00:30` is a minute to Slurm, and
/// `scontrol show config` prints it `00:01:00`).
pub fn slurm_conf_duration(text: &str) -> Result<Option<u64>, BadDuration> {
    Ok(slurm_duration(text)?.map(|s| s.div_ceil(60) * 60))
}

#[cfg(test)]
mod tests {
    use super::{parse_seconds, slurm_conf_duration, slurm_duration, BadDuration};

    #[derive(serde::Deserialize, Debug)]
    struct Config {
        #[serde(deserialize_with = "super::seconds")]
        interval_s: f64,
        #[serde(deserialize_with = "super::whole_seconds")]
        retention_s: u64,
    }

    #[test]
    fn configuration_keys_take_seconds_or_durations() {
        let read = |text: &str| serde_json::from_str::<Config>(text).map_err(|e| e.to_string());
        let c = read(r#"{"interval_s": 30, "retention_s": "7d"}"#).unwrap();
        assert_eq!((c.interval_s, c.retention_s), (30.0, 604_800));
        let c = read(r#"{"interval_s": "1m 30s", "retention_s": 60}"#).unwrap();
        assert_eq!((c.interval_s, c.retention_s), (90.0, 60));
        let bad = read(r#"{"interval_s": "soon", "retention_s": 1}"#).unwrap_err();
        assert!(bad.contains("expected seconds or a duration"), "{bad}");
        let cut = read(r#"{"interval_s": 1, "retention_s": 1.5}"#).unwrap_err();
        assert!(cut.contains("whole number of seconds"), "{cut}");
    }

    #[test]
    fn seconds_and_units_read_alike() {
        for (text, seconds) in [
            ("3600", 3600.0),
            ("0.5", 0.5),
            ("90s", 90.0),
            ("10m", 600.0),
            ("6h", 21_600.0),
            ("7d", 604_800.0),
            ("1h 30m", 5_400.0),
            ("2days", 172_800.0),
            (" 1w ", 604_800.0),
        ] {
            assert_eq!(parse_seconds(text), Ok(seconds), "{text}");
        }
    }

    #[test]
    fn what_is_not_a_duration_says_what_is_expected() {
        for bad in ["", "x", "7 parsecs", "inf", "NaN", "1d-", "30D"] {
            let err = parse_seconds(bad).unwrap_err();
            assert!(err.contains("expected"), "{bad}: {err}");
        }
        for negative in ["-5", "-1d", " -0.5"] {
            let err = parse_seconds(negative).unwrap_err();
            assert!(
                err.starts_with("a duration cannot be negative"),
                "{negative}: {err}"
            );
        }
    }

    #[test]
    fn configuration_durations_are_whole_minutes_rounded_up() {
        assert_eq!(slurm_conf_duration("00:00:30"), Ok(Some(60)));
        assert_eq!(slurm_conf_duration("00:01:00"), Ok(Some(60)));
        assert_eq!(slurm_conf_duration("00:01:01"), Ok(Some(120)));
        assert_eq!(slurm_conf_duration("00:00:00"), Ok(Some(0)));
        assert_eq!(slurm_conf_duration("5"), Ok(Some(300)));
        assert_eq!(slurm_conf_duration("7-0"), Ok(Some(604_800)));
        assert_eq!(slurm_conf_duration("NONE"), Ok(None));
        assert_eq!(slurm_conf_duration("soon"), Err(BadDuration));
    }

    #[test]
    fn slurm_durations_read_as_sacct_and_sbatch_write_them() {
        assert_eq!(slurm_duration("00:10:00"), Ok(Some(600)));
        assert_eq!(slurm_duration("1-02:03:04"), Ok(Some(93_784)));
        assert_eq!(slurm_duration("30"), Ok(Some(1_800)));
        assert_eq!(slurm_duration("30:15"), Ok(Some(1_815)));
        assert_eq!(slurm_duration("2-12"), Ok(Some(216_000)));
        assert_eq!(slurm_duration("2-12:30"), Ok(Some(217_800)));
        for none in ["UNLIMITED", "Partition_Limit", ""] {
            assert_eq!(slurm_duration(none), Ok(None));
        }
        for bad in [
            "1:2:3:4",
            "ten",
            "-5",
            "1-",
            "99999999999999-00:00:00",
            "1000000000000000000-00:00:00",
            "0-18446744073709551615",
            "18446744073709551615:18446744073709551615",
        ] {
            assert_eq!(slurm_duration(bad), Err(BadDuration), "{bad}");
        }
    }
}
