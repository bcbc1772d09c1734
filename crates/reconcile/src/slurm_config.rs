//! The Slurm adapter's configuration file (`slurm.toml`): which policy, how its factor becomes
//! a site factor, how often, over how much history, which partitions. Every key has a default;
//! a mistake names the key. It lives beside the reconcile core rather than in the adapter, so
//! that a what-if reads a site bundle's `adapter.toml` with the very type the adapter loads.

pub use crate::config::SettingError;
use crate::config::{self as common, at_least_one, seconds};
use crate::site::Mapping;
use fairshare_core::choice::Choice;
use fairshare_core::config::ConfigError;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::rank::factors::RANKED_RUNS;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How old a submit table `deploy/job_submit.lua` still reads (its `MAX_AGE`), in seconds.
pub const SUBMIT_TABLE_LIFE_S: f64 = 600.0;

/// The largest weight: Slurm holds a site factor as a signed 32-bit number.
pub const MOST_WEIGHT: u32 = 1_000_000_000;

/// Where the lock of the commands that write is, unless the configuration says.
pub const DEFAULT_LOCK: &str = "/run/lock/fairshare-slurm.lock";

/// Everything `fairshare slurm` is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlurmConfig {
    /// The policy, as `fairshare replay --policy` spells it.
    pub policy: String,
    /// The highest site factor: the first run's on a fresh queue (fairshare's factors in
    /// [0, 1] are multiplied by it).
    pub weight: u32,
    /// `replace` (the site sets `PriorityWeightFairshare=0`) or `add` (beside Slurm's factor).
    pub mapping: String,
    /// Seconds between two passes of `watch`.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub interval_s: f64,
    /// Seconds of accounting history read when the adapter starts.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub window_s: f64,
    /// A clean start: the history never reaches back before this moment (UTC, `2026-11-28`
    /// or `2026-11-28T18:00:00`), whatever `window_s` says; `None`: the window alone.
    pub since: Option<String>,
    /// The partitions whose pending jobs are ranked and whose nodes make the cluster; empty:
    /// all.
    pub partitions: Vec<String>,
    /// The cluster of the association tree; `None`: the only one `sacctmgr` lists.
    pub cluster: Option<String>,
    /// The most jobs one `scontrol update` call sets.
    pub jobs_per_call: usize,
    /// How many runs at the head of the order of starts get site factors of their own (after
    /// them, one per association).
    pub ranked_runs: usize,
    /// Whether the play of starts expects running jobs to end at their time limits, so that
    /// whose job frees room weighs in the next choice; off, it ranks as if every pending job
    /// could start now (better where limits overstate run times many times over).
    pub ends_at_limits: bool,
    /// Seconds one Slurm command may take before it is killed.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub timeout_s: f64,
    /// The folder of Slurm's commands; `None`: they are found on `PATH`.
    pub bin: Option<PathBuf>,
    /// The table `job_submit.lua` reads to rank a job at its submission, rewritten every pass
    /// that writes (`sync`, `watch`); `None`: none is written.
    pub submit_table: Option<PathBuf>,
    /// The lock file a command that writes (`sync`, `watch`, `reset`) holds while it runs,
    /// so that a second one on this cluster is refused; give each cluster its own.
    pub lock: PathBuf,
}

impl Default for SlurmConfig {
    /// Fair Tree over Slurm's billing with Slurm's week half-life, a weight of 100,000, `replace`,
    /// a pass a minute over four weeks of history, every partition, 500 jobs per call, 30 s
    /// per command.
    fn default() -> SlurmConfig {
        SlurmConfig {
            policy: "fairshare".into(),
            weight: 100_000,
            mapping: Mapping::Replace.name().into(),
            interval_s: 60.0,
            window_s: 28.0 * 86_400.0,
            since: None,
            partitions: Vec::new(),
            cluster: None,
            jobs_per_call: 500,
            ranked_runs: RANKED_RUNS,
            ends_at_limits: false,
            timeout_s: 30.0,
            bin: None,
            submit_table: None,
            lock: PathBuf::from(DEFAULT_LOCK),
        }
    }
}

impl SlurmConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<SlurmConfig, ConfigError> {
        common::load(path, SlurmConfig::check)
    }

    /// Checks every value; the error names the key.
    pub fn check(&self) -> Result<(), SettingError> {
        self.policy()?;
        self.mapping()?;
        seconds("interval_s", self.interval_s, 1.0..=86_400.0)?;
        seconds("window_s", self.window_s, 0.0..=366.0 * 86_400.0)?;
        seconds("timeout_s", self.timeout_s, 1.0..=3_600.0)?;
        self.since()?;
        if self.weight == 0 {
            let message = "weight must be at least 1 (the highest site factor)";
            return Err(SettingError::new("weight", message));
        }
        at_least_one("jobs_per_call", self.jobs_per_call)?;
        at_least_one("ranked_runs", self.ranked_runs)?;
        if self.submit_table.is_some() && self.interval_s > SUBMIT_TABLE_LIFE_S {
            let message = format!(
                "interval_s = {} with a submit_table: job_submit.lua takes a table older than {SUBMIT_TABLE_LIFE_S} s as stale, so passes must come more often",
                self.interval_s
            );
            return Err(SettingError::new("interval_s", message));
        }
        Ok(())
    }

    /// The policy, parsed. A fairshare function given no `usage=` charges Slurm's billing, as
    /// Slurm charges its own fairshare usage: the policy reads `…,usage=billing`.
    pub fn policy(&self) -> Result<PolicySpec, SettingError> {
        let given = common::policy(&self.policy)?;
        let params = self.policy.split_once(':').map_or("", |(_, p)| p);
        let usage_given = params.split(',').any(|p| p.trim().starts_with("usage="));
        if !matches!(given.kind, PolicyKind::Fairshare(_)) || usage_given {
            return Ok(given);
        }
        let separator = if params.is_empty() { ":" } else { "," };
        let billed = format!(
            "{}{separator}usage=billing",
            self.policy.trim_end_matches(':')
        );
        Ok(billed.parse().unwrap_or(given))
    }

    /// `since`, as the moment it names.
    pub fn since(&self) -> Result<Option<Time>, SettingError> {
        common::since(self.since.as_deref())
    }

    /// The mapping, parsed.
    pub fn mapping(&self) -> Result<Mapping, SettingError> {
        Mapping::named(&self.mapping).ok_or_else(|| {
            let message = format!(
                "mapping = {:?}: expected one of {}",
                self.mapping,
                Mapping::names()
            );
            SettingError::new("mapping", message)
        })
    }

    /// How long one Slurm command may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> String {
        let config = SlurmConfig {
            policy: text.into(),
            ..SlurmConfig::default()
        };
        config.policy().unwrap().name
    }

    #[test]
    fn fairshare_functions_charge_slurms_billing_unless_told() {
        assert_eq!(policy("fairshare"), "fairshare:usage=billing");
        assert_eq!(
            policy("fairshare:function=slurm-classic"),
            "fairshare:function=slurm-classic,usage=billing"
        );
        assert_eq!(policy("fairshare:usage=pe"), "fairshare:usage=pe");
        assert_eq!(policy("sdrf"), "sdrf");
    }

    #[test]
    fn a_submit_table_needs_passes_more_often_than_it_goes_stale() {
        let config = SlurmConfig {
            submit_table: Some("/run/fairshare-slurm/submit-factors.txt".into()),
            interval_s: 900.0,
            ..SlurmConfig::default()
        };
        assert!(config.check().unwrap_err().message.contains("stale"));
        let without = SlurmConfig {
            submit_table: None,
            ..config
        };
        assert_eq!(without.check(), Ok(()));
    }
}
