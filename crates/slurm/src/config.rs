//! The Slurm adapter's configuration file (`slurm.toml`): which policy, how its factor becomes
//! a site factor, how often, over how much history, which partitions. Every key has a default;
//! a mistake names the key. A what-if reads a site bundle's `adapter.toml` with this very type.
//!
//! Two mappings say what the site factor does beside Slurm's own factors:
//! - [`Mapping::Replace`]: the site sets `PriorityWeightFairshare=0` and fairshare's factor
//!   takes the fairshare factor's place. With a weight well above the other factors' weights,
//!   the order of jobs is fairshare's.
//! - [`Mapping::Add`]: Slurm's fairshare factor stays; fairshare's is added beside it, as one
//!   more factor with its own weight.
//!
//! Both compute the same numbers; they differ in what the site configures and in what the
//! adapter checks before it writes.

use fairshare_core::choice::Choice;
use fairshare_core::config::ConfigError;
use fairshare_core::policy::{PolicyKind, PolicySpec};
pub use fairshare_reconcile::config::SettingError;
use fairshare_reconcile::config::{self as common, AdapterDefaults, SharedKeys};
use fairshare_reconcile::controller::Setup;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How fairshare's factor enters a job's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mapping {
    /// Fairshare's factor instead of Slurm's (`PriorityWeightFairshare=0`).
    #[default]
    Replace,
    /// Fairshare's factor beside Slurm's own.
    Add,
}

impl Choice for Mapping {
    const ALL: &'static [Mapping] = &[Mapping::Replace, Mapping::Add];

    fn name(self) -> &'static str {
        match self {
            Mapping::Replace => "replace",
            Mapping::Add => "add",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Mapping::Replace => "fairshare's factor replaces Slurm's fairshare factor (the site sets PriorityWeightFairshare=0), so the order is fairshare's",
            Mapping::Add => "fairshare's factor is added beside Slurm's own factors",
        }
    }
}

/// How old a submit table `deploy/job_submit.lua` still reads (its `MAX_AGE`), in seconds.
pub const SUBMIT_TABLE_LIFE_S: f64 = 600.0;

/// The largest weight: Slurm holds a site factor as a signed 32-bit number.
pub const MOST_WEIGHT: u32 = 1_000_000_000;

/// Where the lock of the commands that write is, unless the configuration says.
pub const DEFAULT_LOCK: &str = "/run/lock/fairshare-slurm.lock";

/// The Slurm adapter's defaults for the keys every adapter has.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmDefaults;

impl AdapterDefaults for SlurmDefaults {
    const WEIGHT: u32 = 100_000;
    const MOST_WEIGHT: (u32, &'static str) = (
        MOST_WEIGHT,
        "Slurm holds a site factor as a signed 32-bit number",
    );
    const JOBS_PER_CALL: usize = 500;
    const LOCK: &'static str = DEFAULT_LOCK;
}

/// Everything `fairshare slurm` is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SlurmConfig {
    /// The keys every adapter has (policy, weight, interval, window, …).
    #[serde(flatten)]
    pub shared: SharedKeys<SlurmDefaults>,
    /// `replace` (the site sets `PriorityWeightFairshare=0`) or `add` (beside Slurm's factor).
    pub mapping: String,
    /// The partitions whose pending jobs are ranked and whose nodes make the cluster; empty:
    /// all.
    pub partitions: Vec<String>,
    /// The cluster of the association tree; `None`: the only one `sacctmgr` lists.
    pub cluster: Option<String>,
    /// Whether the play of starts expects running jobs to end at their time limits, so that
    /// whose job frees room weighs in the next choice; off, it ranks as if every pending job
    /// could start now (better where limits overstate run times many times over).
    pub ends_at_limits: bool,
    /// The table `job_submit.lua` reads to rank a job at its submission, rewritten every pass
    /// that writes (`sync`, `watch`); `None`: none is written.
    pub submit_table: Option<PathBuf>,
}

impl Default for SlurmConfig {
    /// Fair Tree over Slurm's billing with Slurm's week half-life, a weight of 100,000, `replace`,
    /// a pass a minute over four weeks of history, every partition, 500 jobs per call, 30 s
    /// per command.
    fn default() -> SlurmConfig {
        SlurmConfig {
            shared: SharedKeys::default(),
            mapping: Mapping::Replace.name().into(),
            partitions: Vec::new(),
            cluster: None,
            ends_at_limits: false,
            submit_table: None,
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
        self.shared.check()?;
        self.mapping()?;
        let interval_s = self.shared.interval_s;
        if self.submit_table.is_some() && interval_s > SUBMIT_TABLE_LIFE_S {
            let message = format!(
                "interval_s = {interval_s} with a submit_table: job_submit.lua takes a table older than {SUBMIT_TABLE_LIFE_S} s as stale, so passes must come more often"
            );
            return Err(SettingError::new("interval_s", message));
        }
        Ok(())
    }

    /// How a controller runs under this configuration.
    pub fn setup(&self) -> Result<Setup, SettingError> {
        let partitions = self.partitions.clone();
        (self.shared).setup(self.policy()?, partitions, self.ends_at_limits)
    }

    /// The policy, parsed. A fairshare function given no `usage=` charges Slurm's billing, as
    /// Slurm charges its own fairshare usage: the policy reads `…,usage=billing`.
    pub fn policy(&self) -> Result<PolicySpec, SettingError> {
        let text = &self.shared.policy;
        let given = common::policy(text)?;
        let params = text.split_once(':').map_or("", |(_, p)| p);
        let usage_given = params.split(',').any(|p| p.trim().starts_with("usage="));
        if !matches!(given.kind, PolicyKind::Fairshare(_)) || usage_given {
            return Ok(given);
        }
        let separator = if params.is_empty() { ":" } else { "," };
        let billed = format!("{}{separator}usage=billing", text.trim_end_matches(':'));
        Ok(billed.parse().unwrap_or(given))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_named() {
        assert_eq!(Mapping::named("add"), Some(Mapping::Add));
        assert_eq!(Mapping::default(), Mapping::Replace);
        assert_eq!(Mapping::names(), "replace or add");
    }

    fn policy(text: &str) -> String {
        let mut config = SlurmConfig::default();
        config.shared.policy = text.into();
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
        let mut config = SlurmConfig {
            submit_table: Some("/run/fairshare-slurm/submit-factors.txt".into()),
            ..SlurmConfig::default()
        };
        config.shared.interval_s = 900.0;
        assert!(config.check().unwrap_err().message.contains("stale"));
        let without = SlurmConfig {
            submit_table: None,
            ..config
        };
        assert_eq!(without.check(), Ok(()));
    }
}
