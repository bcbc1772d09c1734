//! The adapter's configuration file (`gridengine.toml`): which policy, how many priority
//! levels, how often, over how much history, where the accounting file is. Every key has a
//! default; a mistake names the key.

use crate::accounting::DEFAULT_ACCOUNTING;
use fairshare_core::config::ConfigError;
use fairshare_core::model::Time;
use fairshare_core::policy::PolicySpec;
use fairshare_core::rank::factors::RANKED_RUNS;
pub use fairshare_reconcile::config::SettingError;
use fairshare_reconcile::config::{self as common, at_least_one, seconds};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The highest POSIX priority Grid Engine takes (`qalter -p 1024`).
pub const MOST_WEIGHT: u32 = 1024;

/// Where the lock of the commands that write is, unless the configuration says.
pub const DEFAULT_LOCK: &str = "/run/lock/fairshare-gridengine.lock";

/// Everything `fairshare gridengine` is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GridEngineConfig {
    /// The policy, as `fairshare replay --policy` spells it.
    pub policy: String,
    /// The highest POSIX priority written: the first run's on a fresh queue (fairshare's
    /// factors in [0, 1] are multiplied by it), at most 1024.
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
    /// The accounting file (`qacct`'s).
    pub accounting: PathBuf,
    /// The most jobs one `qalter -p` call sets.
    pub jobs_per_call: usize,
    /// How many runs at the head of the order of starts get priorities of their own (after
    /// them, one per user).
    pub ranked_runs: usize,
    /// Seconds one Grid Engine command may take before it is killed.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub timeout_s: f64,
    /// The folder of Grid Engine's commands; `None`: they are found on `PATH`.
    pub bin: Option<PathBuf>,
    /// The lock file a command that writes (`sync`, `watch`, `reset`) holds while it runs, so
    /// that a second one on this cluster is refused; give each cluster its own.
    pub lock: PathBuf,
}

impl Default for GridEngineConfig {
    /// Fair Tree with Grid Engine's own half-time, priorities up to 1024, a pass a minute over
    /// four weeks of history, Debian's accounting file, 200 jobs per call, 30 s per command.
    fn default() -> GridEngineConfig {
        GridEngineConfig {
            policy: "fairshare".into(),
            weight: MOST_WEIGHT,
            interval_s: 60.0,
            window_s: 28.0 * 86_400.0,
            since: None,
            accounting: PathBuf::from(DEFAULT_ACCOUNTING),
            jobs_per_call: 200,
            ranked_runs: RANKED_RUNS,
            timeout_s: 30.0,
            bin: None,
            lock: PathBuf::from(DEFAULT_LOCK),
        }
    }
}

impl GridEngineConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<GridEngineConfig, ConfigError> {
        common::load(path, GridEngineConfig::check)
    }

    /// Checks every value; the error names the key.
    pub fn check(&self) -> Result<(), SettingError> {
        self.policy()?;
        self.since()?;
        seconds("interval_s", self.interval_s, 1.0..=86_400.0)?;
        seconds("window_s", self.window_s, 0.0..=366.0 * 86_400.0)?;
        seconds("timeout_s", self.timeout_s, 1.0..=3_600.0)?;
        if !(1..=MOST_WEIGHT).contains(&self.weight) {
            let message = format!("weight must lie in [1, {MOST_WEIGHT}] (Grid Engine's highest POSIX priority), found {}", self.weight);
            return Err(SettingError::new("weight", message));
        }
        at_least_one("jobs_per_call", self.jobs_per_call)?;
        at_least_one("ranked_runs", self.ranked_runs)
    }

    /// The policy, parsed.
    pub fn policy(&self) -> Result<PolicySpec, SettingError> {
        common::policy(&self.policy)
    }

    /// `since`, as the moment it names.
    pub fn since(&self) -> Result<Option<Time>, SettingError> {
        common::since(self.since.as_deref())
    }

    /// How long one Grid Engine command may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_file_loads_and_says_the_defaults() {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/gridengine.toml");
        assert_eq!(
            GridEngineConfig::load(&example).unwrap(),
            GridEngineConfig::default()
        );
    }

    #[test]
    fn the_weight_is_bounded_by_grid_engines_priorities() {
        let config = GridEngineConfig {
            weight: 2000,
            ..GridEngineConfig::default()
        };
        let e = config.check().unwrap_err();
        assert_eq!(
            (e.key, e.message.as_str()),
            (
                "weight",
                "weight must lie in [1, 1024] (Grid Engine's highest POSIX priority), found 2000"
            )
        );
        assert_eq!(GridEngineConfig::default().check(), Ok(()));
        let e = GridEngineConfig {
            interval_s: 0.5,
            ..GridEngineConfig::default()
        }
        .check()
        .unwrap_err();
        assert_eq!(e.key, "interval_s");
    }
}
