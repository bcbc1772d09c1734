//! What every adapter's configuration file shares: the keys they all have ([`SharedKeys`], which
//! each adapter's file flattens beside its own keys, with the adapter's [`AdapterDefaults`]), reading
//! a file (a key the file's type does not have is refused, naming where it is written), and
//! the checks, each error naming its key. Each adapter keeps only its scheduler's keys and checks.

use crate::command::Runner;
use crate::controller::Setup;
use crate::plan::PlanSettings;
use fairshare_core::config::{ConfigError, Location};
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_core::rank::factors::RANKED_RUNS;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An adapter's defaults for the keys every adapter has, and the bound on its weight.
pub trait AdapterDefaults {
    /// The highest factor written, unless the file says.
    const WEIGHT: u32;
    /// The largest weight the scheduler holds, and what bounds it, in words.
    const MOST_WEIGHT: (u32, &'static str);
    /// The most jobs one write sets, unless the file says.
    const JOBS_PER_CALL: usize;
    /// The lock file, unless the file says.
    const LOCK: &'static str;
}

/// The keys every adapter's configuration file has. An adapter's file flattens it
/// (`#[serde(flatten)]`) beside its own keys; `D` gives the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, bound = "")]
pub struct SharedKeys<D: AdapterDefaults> {
    /// The policy, as `fairshare replay --policy` spells it.
    pub policy: String,
    /// The highest factor: the first run's on a fresh queue (fairshare's factors in [0, 1]
    /// are multiplied by it).
    pub weight: u32,
    /// Seconds between two passes of `watch`.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub interval_s: f64,
    /// Seconds of accounting history read when the adapter starts.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub window_s: f64,
    /// A clean start: the history never reaches back before this moment (UTC, `2026-11-28`
    /// or `2026-11-28T18:00:00`), whatever `window_s` says; `None`: the window alone.
    pub since: Option<String>,
    /// The most jobs one write sets.
    pub jobs_per_call: usize,
    /// How many runs at the head of the order of starts get factors of their own (after
    /// them, one per client).
    pub ranked_runs: usize,
    /// Seconds one of the scheduler's commands may take before it is killed.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub timeout_s: f64,
    /// The folder of the scheduler's commands; `None`: they are found on `PATH`.
    pub bin: Option<PathBuf>,
    /// The lock file a command that writes (`sync`, `watch`, `reset`) holds while it runs, so
    /// that a second one on this cluster is refused; give each cluster its own.
    pub lock: PathBuf,
    #[serde(skip)]
    defaults: PhantomData<D>,
}

impl<D: AdapterDefaults> Default for SharedKeys<D> {
    /// Fair Tree, the adapter's weight, a pass a minute over four weeks of history, the
    /// adapter's jobs per call, 30 s per command, the adapter's lock.
    fn default() -> SharedKeys<D> {
        SharedKeys {
            policy: "fairshare".into(),
            weight: D::WEIGHT,
            interval_s: 60.0,
            window_s: 28.0 * 86_400.0,
            since: None,
            jobs_per_call: D::JOBS_PER_CALL,
            ranked_runs: RANKED_RUNS,
            timeout_s: 30.0,
            bin: None,
            lock: PathBuf::from(D::LOCK),
            defaults: PhantomData,
        }
    }
}

impl<D: AdapterDefaults> SharedKeys<D> {
    /// Checks every value; the error names the key.
    pub fn check(&self) -> Result<(), SettingError> {
        policy(&self.policy)?;
        self.since()?;
        seconds("interval_s", self.interval_s, 1.0..=86_400.0)?;
        seconds("window_s", self.window_s, 0.0..=366.0 * 86_400.0)?;
        seconds("timeout_s", self.timeout_s, 1.0..=3_600.0)?;
        let (most, bound) = D::MOST_WEIGHT;
        if !(1..=most).contains(&self.weight) {
            let message = format!(
                "weight must lie in [1, {most}] ({bound}), found {}",
                self.weight
            );
            return Err(SettingError::new("weight", message));
        }
        at_least_one("jobs_per_call", self.jobs_per_call)?;
        at_least_one("ranked_runs", self.ranked_runs)
    }

    /// `since`, as the moment it names.
    pub fn since(&self) -> Result<Option<Time>, SettingError> {
        since(self.since.as_deref())
    }

    /// How long one of the scheduler's commands may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }

    /// The scheduler's real commands as these keys run them: from `bin` (else `PATH`), each
    /// bounded by `timeout_s`.
    pub fn runner(&self) -> Runner {
        Runner {
            bin: self.bin.clone(),
            timeout: self.timeout(),
        }
    }

    /// How a controller of `policy` runs under these keys, each checked first, its plans
    /// considering `partitions` (empty: all) and, with `ends_at_limits`, running jobs ending
    /// at their limits.
    pub fn setup(
        &self,
        policy: PolicySpec,
        partitions: Vec<String>,
        ends_at_limits: bool,
    ) -> Result<Setup, SettingError> {
        self.check()?;
        Ok(Setup {
            policy,
            plan: PlanSettings {
                weight: self.weight,
                partitions,
                per_call: self.jobs_per_call,
                ranked_runs: self.ranked_runs,
                ends_at_limits,
            },
            window_s: self.window_s,
            since: self.since()?,
        })
    }
}

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
/// a TOML error or a key the configuration does not have, the line).
pub fn load<T: DeserializeOwned + Serialize + Default>(
    path: &Path,
    check: impl FnOnce(&T) -> Result<(), SettingError>,
) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
    let config: T = toml::from_str(&text).map_err(|e| located::<T>(&text, path, e))?;
    unknown_key::<T>(&text, path)?;
    check(&config).map_err(|e| ConfigError::invalid(Location::file(path), e.message))?;
    Ok(config)
}

/// `error` of reading `text` as `T`, at the key whose value it is: a value of a flattened
/// struct's key comes without its place, so each key is read alone, in the file's order,
/// until one fails.
fn located<T: DeserializeOwned>(text: &str, path: &Path, error: toml::de::Error) -> ConfigError {
    let whole = || ConfigError::toml_in(text, path, error.span(), error.message());
    let Ok(keys) = top_keys(text) else {
        return whole();
    };
    for (key, span, value) in keys {
        let alone = toml::Table::from_iter([(key.clone(), value)]);
        let Ok(one) = toml::to_string(&alone) else {
            continue;
        };
        if let Err(e) = toml::from_str::<T>(&one) {
            let at = Location::in_text(text, path, Some(span));
            return ConfigError::invalid(at, format!("{key}: {}", e.message()));
        }
    }
    whole()
}

/// The top-level keys of `text`, in the file's order, each with where it is written and its
/// value (a table's key is its header's).
fn top_keys(text: &str) -> Result<Vec<(String, Range<usize>, toml::Value)>, toml::de::Error> {
    let table: BTreeMap<toml::Spanned<String>, toml::Value> = toml::from_str(text)?;
    let mut keys: Vec<_> = (table.into_iter())
        .map(|(key, value)| (key.get_ref().clone(), key.span(), value))
        .collect();
    keys.sort_by_key(|(_, span, _)| span.start);
    Ok(keys)
}

/// Refuses the first key of `text` (in the file's order) that `T` does not have, naming where
/// it is written and the keys `T` has: a flattened struct cannot refuse unknown keys itself.
fn unknown_key<T: Serialize + Default>(text: &str, path: &Path) -> Result<(), ConfigError> {
    let known = match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(known)) => known,
        _ => unreachable!("a configuration serializes as a JSON object"),
    };
    let given =
        top_keys(text).map_err(|e| ConfigError::toml_in(text, path, e.span(), e.message()))?;
    let Some((key, span, _)) = given.into_iter().find(|(key, ..)| !known.contains_key(key)) else {
        return Ok(());
    };
    let keys: Vec<&str> = known.keys().map(String::as_str).collect();
    let message = format!("unknown key `{key}`: expected one of {}", keys.join(", "));
    Err(ConfigError::invalid(
        Location::in_text(text, path, Some(span)),
        message,
    ))
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

    #[derive(Debug, Clone, PartialEq)]
    struct Small;

    impl AdapterDefaults for Small {
        const WEIGHT: u32 = 7;
        const MOST_WEIGHT: (u32, &'static str) = (9, "the small scheduler's highest factor");
        const JOBS_PER_CALL: usize = 3;
        const LOCK: &'static str = "/run/lock/small.lock";
    }

    /// An adapter's file: the shared keys and one of its own.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    #[serde(default)]
    struct SmallConfig {
        #[serde(flatten)]
        shared: SharedKeys<Small>,
        queue: Option<String>,
    }

    fn load_text(text: &str) -> Result<SmallConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.toml");
        std::fs::write(&path, text).unwrap();
        load(&path, |c: &SmallConfig| c.shared.check())
    }

    #[test]
    fn the_shared_keys_take_the_adapters_defaults_and_a_key_no_one_has_is_refused_by_line() {
        let config = load_text("queue = \"short\"\ninterval_s = \"5m\"\n").unwrap();
        assert_eq!(config.queue.as_deref(), Some("short"));
        assert_eq!(config.shared.interval_s, 300.0);
        assert_eq!(
            (config.shared.weight, config.shared.jobs_per_call),
            (7, 3),
            "the adapter's defaults"
        );
        assert_eq!(config.shared.lock, PathBuf::from("/run/lock/small.lock"));
        let typo = load_text("policy = \"sdrf\"\n\n weigth = 5\nzzz = 1\n").unwrap_err();
        let said = typo.to_string();
        assert!(
            said.contains("small.toml:3:2: unknown key `weigth`"),
            "{said}"
        );
        assert!(
            said.contains("unknown key `weigth`: expected one of "),
            "{said}"
        );
        assert!(said.contains("queue") && said.contains("weight"), "{said}");
        let negative = load_text("queue = \"a\"\nweight = -3\n")
            .unwrap_err()
            .to_string();
        assert!(
            negative.ends_with("small.toml:2:1: weight: invalid value: integer `-3`, expected u32"),
            "{negative}"
        );
        let quoted = load_text("'weigth' = 5\n").unwrap_err().to_string();
        assert!(
            quoted.contains("small.toml:1:1: unknown key `weigth`"),
            "{quoted}"
        );
        let table = load_text("[weigth]\nx = 1\n").unwrap_err().to_string();
        assert!(
            table.contains("small.toml:1:2: unknown key `weigth`"),
            "{table}"
        );
        let heavy = load_text("weight = 10\n").unwrap_err().to_string();
        assert!(
            heavy.contains(
                "weight must lie in [1, 9] (the small scheduler's highest factor), found 10"
            ),
            "{heavy}"
        );
    }

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
