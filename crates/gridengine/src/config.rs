//! The adapter's configuration file (`gridengine.toml`): which policy, how many priority
//! levels, how often, over how much history, where the accounting file is. Every key has a
//! default; a mistake names the key.

use crate::accounting::DEFAULT_ACCOUNTING;
use fairshare_core::config::ConfigError;
pub use fairshare_reconcile::config::SettingError;
use fairshare_reconcile::config::{self as common, AdapterDefaults, SharedKeys};
use fairshare_reconcile::controller::Setup;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The highest POSIX priority Grid Engine takes (`qalter -p 1024`).
pub const MOST_WEIGHT: u32 = 1024;

/// Where the lock of the commands that write is, unless the configuration says.
pub const DEFAULT_LOCK: &str = "/run/lock/fairshare-gridengine.lock";

/// The Grid Engine adapter's defaults for the keys every adapter has.
#[derive(Debug, Clone, PartialEq)]
pub struct GridEngineDefaults;

impl AdapterDefaults for GridEngineDefaults {
    const WEIGHT: u32 = MOST_WEIGHT;
    const MOST_WEIGHT: (u32, &'static str) = (MOST_WEIGHT, "Grid Engine's highest POSIX priority");
    const JOBS_PER_CALL: usize = 200;
    const LOCK: &'static str = DEFAULT_LOCK;
}

/// Everything `fairshare gridengine` is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GridEngineConfig {
    /// The keys every adapter has (policy, weight, interval, window, …).
    #[serde(flatten)]
    pub shared: SharedKeys<GridEngineDefaults>,
    /// The accounting file (`qacct`'s).
    pub accounting: PathBuf,
}

impl Default for GridEngineConfig {
    /// Fair Tree with Grid Engine's own half-time, priorities up to 1024, a pass a minute over
    /// four weeks of history, Debian's accounting file, 200 jobs per call, 30 s per command.
    fn default() -> GridEngineConfig {
        GridEngineConfig {
            shared: SharedKeys::default(),
            accounting: PathBuf::from(DEFAULT_ACCOUNTING),
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
        self.shared.check()
    }

    /// How a controller runs under this configuration: every queue's jobs considered.
    pub fn setup(&self) -> Result<Setup, SettingError> {
        let policy = common::policy(&self.shared.policy)?;
        self.shared.setup(policy, Vec::new(), false)
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
        let mut config = GridEngineConfig::default();
        config.shared.weight = 2000;
        let e = config.check().unwrap_err();
        assert_eq!(
            (e.key, e.message.as_str()),
            (
                "weight",
                "weight must lie in [1, 1024] (Grid Engine's highest POSIX priority), found 2000"
            )
        );
        assert_eq!(GridEngineConfig::default().check(), Ok(()));
        config.shared.weight = 1024;
        config.shared.interval_s = 0.5;
        let e = config.check().unwrap_err();
        assert_eq!(e.key, "interval_s");
    }
}
