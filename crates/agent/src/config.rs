//! The agent's configuration file (`agent.toml`): which cgroups are workloads, who owns them,
//! how big they are, what the node supplies, and either the daemon to talk to or the metric
//! to compute alone. Every key has a default but `parents`; a mistake names the key.

use crate::owner::OwnerRule;
use fairshare_core::config::{ConfigError, Location};
use fairshare_core::error::Invalid;
use fairshare_core::heaviness::knobs::PriorityConfig;
use fairshare_core::heaviness::{HeavinessConfig, Resource};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most reports kept while the daemon cannot be reached, whatever the file says.
pub const MAX_BUFFER: usize = 100_000;

/// Everything `fairshare agent` is told.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// This node's id at the daemon; the host name when absent.
    pub node: Option<String>,
    /// Seconds between two cycles (μ).
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub interval_s: f64,
    /// Where the cgroup file systems are mounted.
    pub cgroup_root: PathBuf,
    /// Parent cgroups, relative to each hierarchy's root; every child of one is a workload.
    pub parents: Vec<String>,
    /// Who owns a workload: `{ regex = "…" }` on its cgroup's name or `{ mapping = "FILE" }`.
    pub owner: OwnerRule,
    /// A workload's virtual size where its cgroup sets no limit.
    pub size: SizeConfig,
    /// What this node supplies; measured from the host where absent.
    pub supply: SupplyConfig,
    /// The resources reported, in the daemon's names and order.
    pub resources: Vec<Resource>,
    /// Reports kept while the daemon is down (oldest dropped first beyond it).
    pub buffer_reports: usize,
    /// Every how many cycles each knob is written again even if unchanged, to repair a value
    /// someone else wrote.
    pub rewrite_every: u64,
    /// Hysteresis: a knob is written only when its new value differs from the one written by
    /// more than this fraction of its full scale (the highest priority's value); the default
    /// 0.015 lets a priority move by one (1 % of the scale) without writing anything.
    pub knob_step: f64,
    /// What becomes of the knobs when the agent stops on SIGTERM or SIGINT.
    pub on_exit: OnExit,
    /// The fairness daemon; without it the agent computes its node's heaviness itself.
    pub daemon: Option<DaemonConfig>,
    /// The metric, in standalone mode (the daemon has its own).
    pub heaviness: HeavinessConfig,
    /// Heaviness to priority, in standalone mode.
    pub priority: PriorityConfig,
}

/// What the agent does with the knobs it wrote when it stops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnExit {
    /// Write the kernel's defaults back (`cpu.shares` 1024, `cpu.weight` 100, no memory
    /// protection, …): with no agent to update them, priorities would go stale.
    #[default]
    Restore,
    /// Leave the last values written (a restart that follows at once changes little).
    Keep,
}

/// A workload's virtual size when its cgroup does not limit it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SizeConfig {
    /// Virtual CPUs.
    pub cpu: f64,
    /// Memory bytes.
    pub memory: f64,
    /// Whether a cgroup's own CPU quota and memory limit, where set, give its size.
    pub from_limits: bool,
}

/// The node's supply; each absent value is read from the host.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SupplyConfig {
    /// CPUs (default: the CPUs this process may run on).
    pub cpu: Option<f64>,
    /// Memory bytes (default: MemTotal of /proc/meminfo).
    pub memory: Option<f64>,
    /// Disk bytes per second (default 500 MB/s: cgroups cannot tell).
    pub disk: Option<f64>,
    /// Network bytes per second (default 1.25 GB/s, 10 Gbit/s: cgroups cannot tell).
    pub network: Option<f64>,
    /// Speed factor of this node's CPUs against the reference (default 1).
    pub speed: Option<f64>,
}

/// How to reach the daemon.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaemonConfig {
    /// Its base URL, `http://host:7878` or `https://…`.
    pub url: String,
    /// A file holding the agent's bearer token (the `FAIRSHARE_TOKEN` environment variable
    /// wins over it).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// Seconds one request may take.
    #[serde(default = "default_timeout")]
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub timeout_s: f64,
    /// Whether the agent registers its node, the owners it finds (without a quota) and its
    /// workloads; off when an operator registers them.
    #[serde(default = "yes")]
    pub register: bool,
    /// The longest wait between two retries while the daemon is down, in seconds.
    #[serde(default = "default_max_backoff")]
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub max_backoff_s: f64,
}

fn default_timeout() -> f64 {
    5.0
}

fn default_max_backoff() -> f64 {
    60.0
}

fn yes() -> bool {
    true
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            node: None,
            interval_s: 10.0,
            cgroup_root: PathBuf::from("/sys/fs/cgroup"),
            parents: Vec::new(),
            owner: OwnerRule::default(),
            size: SizeConfig::default(),
            supply: SupplyConfig::default(),
            // The daemon's own default names, so that the defaults of both agree.
            resources: fairshare_wire::model::default_resources(),
            buffer_reports: 360,
            rewrite_every: 30,
            knob_step: 0.015,
            on_exit: OnExit::Restore,
            daemon: None,
            heaviness: HeavinessConfig::default(),
            priority: PriorityConfig::default(),
        }
    }
}

impl Default for SizeConfig {
    fn default() -> Self {
        SizeConfig {
            cpu: 1.0,
            memory: 1024.0 * 1024.0 * 1024.0,
            from_limits: true,
        }
    }
}

impl AgentConfig {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<AgentConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
        let config: AgentConfig = toml::from_str(&text).map_err(|e| ConfigError::Toml {
            at: Location::file(path),
            message: e.to_string(),
        })?;
        config
            .check()
            .map_err(|message| ConfigError::invalid(Location::file(path), message))?;
        Ok(config)
    }

    /// Checks every value; the error names the key.
    pub fn check(&self) -> Result<(), Invalid> {
        if !(self.interval_s.is_finite() && (0.1..=86_400.0).contains(&self.interval_s)) {
            return Err(Invalid(format!(
                "interval_s must lie in [0.1, 86400] seconds, found {}",
                self.interval_s
            )));
        }
        if self.parents.is_empty() {
            return Err(
                "parents: name at least one parent cgroup, e.g. parents = [\"user.slice\"]".into(),
            );
        }
        for (i, p) in self.parents.iter().enumerate() {
            let bad = p.is_empty()
                || Path::new(p)
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)));
            if bad {
                return Err(Invalid(format!(
                    "parents[{i}]: {p:?} must be a relative path below the cgroup root, without `..`"
                )));
            }
        }
        if let Some(node) = &self.node {
            fairshare_wire::model::check_id("node", node)?;
        }
        self.owner.check()?;
        let positive = |key: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Invalid(format!(
                    "{key} must be a positive number, found {v}"
                )))
            }
        };
        positive("size.cpu", self.size.cpu)?;
        positive("size.memory", self.size.memory)?;
        let s = &self.supply;
        for (key, v) in [
            ("supply.cpu", s.cpu),
            ("supply.memory", s.memory),
            ("supply.disk", s.disk),
            ("supply.network", s.network),
            ("supply.speed", s.speed),
        ] {
            if let Some(v) = v {
                positive(key, v)?;
            }
        }
        if self.resources.is_empty() {
            return Err(Invalid("resources: at least one resource is needed".into()));
        }
        for (i, r) in self.resources.iter().enumerate() {
            fairshare_wire::model::check_id("resource", &r.name)
                .map_err(|e| format!("resources[{i}]: {e}"))?;
            if self.resources[..i].iter().any(|o| o.name == r.name) {
                return Err(Invalid(format!("resources: {:?} is listed twice", r.name)));
            }
        }
        if !(1..=MAX_BUFFER).contains(&self.buffer_reports) {
            return Err(Invalid(format!(
                "buffer_reports must lie in [1, {MAX_BUFFER}], found {}",
                self.buffer_reports
            )));
        }
        if self.rewrite_every == 0 {
            return Err(Invalid(
                "rewrite_every must be at least 1 (1: write every cycle)".into(),
            ));
        }
        if !(self.knob_step.is_finite() && (0.0..=1.0).contains(&self.knob_step)) {
            return Err(Invalid(format!(
                "knob_step must lie in [0, 1] (a fraction of a knob's scale), found {}",
                self.knob_step
            )));
        }
        if let Some(d) = &self.daemon {
            if !(d.url.starts_with("http://") || d.url.starts_with("https://")) {
                return Err(Invalid(format!(
                    "daemon.url must start with http:// or https://, found {:?}",
                    d.url
                )));
            }
            positive("daemon.timeout_s", d.timeout_s)?;
            positive("daemon.max_backoff_s", d.max_backoff_s)?;
        }
        self.heaviness
            .check()
            .map_err(|e| format!("heaviness: {e}"))?;
        (self.priority.check()).map_err(|e| Invalid(format!("priority: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AgentConfig, String> {
        let c: AgentConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        c.check().map(|()| c).map_err(String::from)
    }

    #[test]
    fn the_smallest_file_takes_every_default() {
        let c = parse("parents = [\"fairshare\"]").unwrap();
        assert_eq!(c.interval_s, 10.0);
        assert_eq!(c.resources.len(), 4);
        assert!(c.daemon.is_none(), "standalone by default");
    }

    #[test]
    fn the_example_in_deploy_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/agent.toml");
        let c = AgentConfig::load(&path).unwrap();
        assert_eq!(c.parents, ["user.slice"]);
        assert!(c.daemon.is_some_and(|d| d.register));
    }

    #[test]
    fn mistakes_name_their_key() {
        for (text, key) in [
            ("", "parents"),
            ("parents = [\"../etc\"]", "parents[0]"),
            ("parents = [\"/abs\"]", "parents[0]"),
            ("parents = [\"a\"]\ninterval_s = 0", "interval_s"),
            ("parents = [\"a\"]\nsize = { cpu = -1 }", "size.cpu"),
            ("parents = [\"a\"]\nbuffer_reports = 0", "buffer_reports"),
            ("parents = [\"a\"]\nnode = \"a b\"", "node"),
            (
                "parents = [\"a\"]\n[daemon]\nurl = \"ftp://x\"",
                "daemon.url",
            ),
            (
                "parents = [\"a\"]\nowner = { regex = \"(\" }",
                "owner.regex",
            ),
            ("parents = [\"a\"]\ncolour = 1", "colour"),
            ("parents = [\"a\"]\nknob_step = 2", "knob_step"),
            ("parents = [\"a\"]\non_exit = \"drop\"", "on_exit"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(key), "{text:?}: {err}");
        }
    }
}
