//! What every adapter's configuration file shares: reading it, and checking the keys they all
//! have (the policy, `since`, durations in seconds, counts), each error naming its key. Each
//! adapter keeps its own file's keys and defaults, and checks what is its scheduler's.

use fairshare_core::config::{ConfigError, Location};
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use serde::de::DeserializeOwned;
use std::ops::RangeInclusive;
use std::path::Path;

/// A value of the configuration that cannot be used, with the key it was given under.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("{message}")]
pub struct SettingError {
    /// The key.
    pub key: &'static str,
    /// What is wrong, the key named in it.
    pub message: String,
}

impl SettingError {
    /// `message` about `key`.
    pub fn new(key: &'static str, message: impl Into<String>) -> SettingError {
        SettingError {
            key,
            message: message.into(),
        }
    }
}

/// Reads the TOML file at `path` and checks it with `check`; an error names the file (and, for
/// a TOML error, the line).
pub fn load<T: DeserializeOwned>(
    path: &Path,
    check: impl FnOnce(&T) -> Result<(), SettingError>,
) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
    let config: T = toml::from_str(&text)
        .map_err(|e| ConfigError::toml_in(&text, path, e.span(), e.message()))?;
    check(&config).map_err(|e| ConfigError::invalid(Location::file(path), e.message))?;
    Ok(config)
}

/// Checks that `key`'s `value` is a number of seconds within `range`.
pub fn seconds(
    key: &'static str,
    value: f64,
    range: RangeInclusive<f64>,
) -> Result<(), SettingError> {
    if value.is_finite() && range.contains(&value) {
        return Ok(());
    }
    let (least, most) = (range.start(), range.end());
    Err(SettingError::new(
        key,
        format!("{key} must lie in [{least}, {most}] seconds, found {value}"),
    ))
}

/// Checks that `key`'s `count` is at least 1.
pub fn at_least_one(key: &'static str, count: usize) -> Result<(), SettingError> {
    match count {
        0 => Err(SettingError::new(key, format!("{key} must be at least 1"))),
        _ => Ok(()),
    }
}

/// The policy `policy = "…"` names, parsed.
pub fn policy(text: &str) -> Result<PolicySpec, SettingError> {
    (text.parse()).map_err(|e| SettingError::new("policy", format!("policy = {text:?}: {e}")))
}

/// The moment `since = "…"` names, if given.
pub fn since(text: Option<&str>) -> Result<Option<Time>, SettingError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let at = Time::from_utc(text).ok_or_else(|| {
        let message = format!("since = {text:?}: a UTC moment such as \"2026-11-28\" or \"2026-11-28T18:00:00\" was expected");
        SettingError::new("since", message)
    })?;
    Ok(Some(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_names_its_key_and_what_was_expected() {
        assert_eq!(
            seconds("interval_s", 0.5, 1.0..=10.0).unwrap_err().message,
            "interval_s must lie in [1, 10] seconds, found 0.5"
        );
        assert!(seconds("window_s", f64::NAN, 0.0..=1.0).is_err());
        assert!(seconds("window_s", 0.0, 0.0..=1.0).is_ok());
        assert_eq!(
            at_least_one("jobs_per_call", 0).unwrap_err().message,
            "jobs_per_call must be at least 1"
        );
        assert!(at_least_one("ranked_runs", 1).is_ok());
        assert_eq!(policy("nope").unwrap_err().key, "policy");
        assert_eq!(policy("sdrf").unwrap().name, "sdrf");
        assert_eq!(since(None), Ok(None));
        assert_eq!(
            since(Some("2026-11-28")).unwrap(),
            Time::from_utc("2026-11-28")
        );
        assert!(since(Some("yesterday"))
            .unwrap_err()
            .message
            .starts_with("since = \"yesterday\""));
    }
}
