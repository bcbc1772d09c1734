//! The daemon's settings: one TOML file whose every top-level setting the command line and the
//! environment can override, checked before anything starts so a mistake is named up front.

use crate::auth::{Role, TokenDigest};
use fairshare_core::config::{ConfigError, Location};
use fairshare_core::heaviness::knobs::{KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{HeavinessConfig, Resource};
use fairshare_wire::model::default_resources;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Everything `fairshare serve` runs with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceConfig {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// `sqlite:PATH` (the default, `fairshare.db` in the working directory) or `postgres://…`.
    pub database: String,
    /// Log lines as JSON objects instead of text.
    pub log_json: bool,
    /// TLS certificate and key; plain HTTP without them.
    pub tls: Option<TlsConfig>,
    /// Requests per second each token may make, with a burst; `per_second = 0` turns it off.
    pub rate_limit: RateLimit,
    /// How many connections may be open at once, and how long a client may take.
    pub limits: Limits,
    /// The resources reports measure, in order.
    pub resources: Vec<Resource>,
    /// The knob profile whose values priorities become (`cgroup-v2`, `cgroup-v1`, `libvirt`, `paper`).
    pub profile: String,
    /// The heaviness metric; its `update_interval_s` is the period of the priority cycle.
    pub heaviness: HeavinessConfig,
    /// How heaviness becomes a priority.
    pub priority: PriorityConfig,
    /// How long reports are kept after they were counted, in seconds.
    #[serde(deserialize_with = "fairshare_core::model::whole_seconds")]
    pub report_retention_s: u64,
    /// The bearer tokens, by the SHA-256 digest of each.
    pub tokens: Vec<TokenEntry>,
}

/// A certificate chain and its private key, both PEM files.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The certificate chain (PEM).
    pub cert: PathBuf,
    /// The private key (PEM).
    pub key: PathBuf,
}

/// A token bucket per token.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimit {
    /// Sustained requests per second; 0 turns rate limiting off.
    pub per_second: u32,
    /// Requests allowed at once above the sustained rate.
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            per_second: 1000,
            burst: 2000,
        }
    }
}

/// The bounds on connections: what keeps idle, slow or too many clients from holding the
/// daemon's sockets, tasks and file descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Connections open at once; above it a new connection takes the place of the oldest one
    /// that has shown no token, or is closed as soon as it is accepted when every one has.
    pub max_connections: usize,
    /// Connections one peer (an IPv4 address, an IPv6 /64) may hold; default a quarter of
    /// `max_connections` (at least 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections_per_peer: Option<usize>,
    /// Seconds a client has to send a request's headers: a new connection's first request from
    /// when it was accepted; on a kept-alive HTTP/1 connection, from the previous answer.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub header_timeout_s: f64,
    /// Seconds a client has to send a request's whole body, from when its handler starts
    /// reading it; then the answer is 408 and the connection is closed.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub body_timeout_s: f64,
    /// Seconds a connection (HTTP/1 or HTTP/2) may go without a byte read; then it is closed.
    #[serde(deserialize_with = "fairshare_core::model::seconds")]
    pub idle_timeout_s: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 512,
            max_connections_per_peer: None,
            header_timeout_s: 20.0,
            body_timeout_s: 20.0,
            idle_timeout_s: 60.0,
        }
    }
}

impl Limits {
    /// The connections one peer may hold.
    pub fn per_peer(&self) -> usize {
        self.max_connections_per_peer
            .unwrap_or((self.max_connections / 4).max(1))
    }

    /// Checks every bound.
    fn check(&self) -> Result<(), ConfigError> {
        if !(1..=1_000_000).contains(&self.max_connections) {
            return Err(invalid_setting(format!(
                "limits.max_connections must be between 1 and 1000000, found {}",
                self.max_connections
            )));
        }
        if let Some(n) = self.max_connections_per_peer {
            if !(1..=self.max_connections).contains(&n) {
                return Err(invalid_setting(format!(
                    "limits.max_connections_per_peer must be between 1 and limits.max_connections \
                     ({}), found {n}",
                    self.max_connections
                )));
            }
        }
        for (name, v) in [
            ("header_timeout_s", self.header_timeout_s),
            ("body_timeout_s", self.body_timeout_s),
            ("idle_timeout_s", self.idle_timeout_s),
        ] {
            if !(0.1..=3600.0).contains(&v) {
                return Err(invalid_setting(format!(
                    "limits.{name} must be a number of seconds in [0.1, 3600], found {v}"
                )));
            }
        }
        Ok(())
    }
}

/// One `[[tokens]]` table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// What the token may do.
    pub role: Role,
    /// The hex SHA-256 digest of the token.
    pub sha256: TokenDigest,
    /// A name the daemon's messages use for the token (defaults to the digest's first 8 digits).
    #[serde(default)]
    pub name: Option<String>,
    /// For an agent token: the only nodes it may act for (report, register, change, delete,
    /// and register, move or delete workloads on); every node when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            database: "sqlite:fairshare.db".into(),
            log_json: false,
            tls: None,
            rate_limit: RateLimit::default(),
            limits: Limits::default(),
            resources: default_resources(),
            profile: "cgroup-v2".into(),
            heaviness: HeavinessConfig::default(),
            priority: PriorityConfig::default(),
            report_retention_s: 86_400,
            tokens: Vec::new(),
        }
    }
}

/// A value out of its range, found when the file, the environment and the command line are
/// put together: reported against the whole `configuration`, not a file.
fn invalid_setting(message: impl Into<String>) -> ConfigError {
    ConfigError::invalid(Location::file("configuration"), message)
}

impl ServiceConfig {
    /// Reads a TOML file (none: every default) with `overlays` laid over it: each is a table's
    /// name and an inline TOML table whose keys replace that table's one by one (how the
    /// command line and the environment set `[heaviness]` and `[priority]`).
    pub fn load(
        path: Option<&Path>,
        overlays: &[(&str, &str)],
    ) -> Result<ServiceConfig, ConfigError> {
        let source = path.map_or_else(|| PathBuf::from("(command line)"), Path::to_path_buf);
        let toml_error = |e: toml::de::Error| ConfigError::Toml {
            at: Location::file(&source),
            message: e.to_string(),
        };
        let mut table = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, e))?;
                toml::from_str::<toml::Table>(&text).map_err(toml_error)?
            }
            None => toml::Table::new(),
        };
        for (key, inline) in overlays {
            overlay(&mut table, key, inline)?;
        }
        table.try_into().map_err(toml_error)
    }

    /// The knob profile this configuration names.
    pub fn knob_profile(&self) -> Result<KnobProfile, ConfigError> {
        KnobProfile::named(&self.profile).ok_or_else(|| {
            invalid_setting(format!(
                "profile {:?} is not one of {}",
                self.profile,
                fairshare_core::heaviness::knobs::PROFILES.join(", ")
            ))
        })
    }

    /// Checks every value before the daemon starts.
    pub fn check(&self) -> Result<(), ConfigError> {
        let invalid = |m: String| Err(invalid_setting(m));
        self.knob_profile()?;
        self.heaviness
            .check()
            .map_err(|e| invalid_setting(e.to_string()))?;
        self.priority.check().map_err(invalid_setting)?;
        if self.resources.is_empty() {
            return invalid("resources: at least one resource is needed".into());
        }
        for (i, r) in self.resources.iter().enumerate() {
            if !crate::model::valid_id(&r.name) {
                return invalid(format!("resources[{i}]: {:?} is not a valid name", r.name));
            }
            if self.resources[..i].iter().any(|o| o.name == r.name) {
                return invalid(format!("resources: {:?} is listed twice", r.name));
            }
        }
        if self.heaviness.update_interval_s > 86_400.0 {
            return invalid(format!(
                "heaviness.update_interval_s must be at most 86400 (one day), found {}",
                self.heaviness.update_interval_s
            ));
        }
        if self.report_retention_s > 10 * 365 * 86_400 {
            return invalid(format!(
                "report_retention_s must be at most ten years, found {}",
                self.report_retention_s
            ));
        }
        if self.rate_limit.per_second > 0 && self.rate_limit.burst == 0 {
            return invalid("rate_limit.burst must be at least 1".into());
        }
        self.limits.check()?;
        for i in 0..self.tokens.len() {
            self.check_token_nodes(i)?;
        }
        if self.tokens.is_empty() && !self.listen.ip().is_loopback() {
            return invalid(format!(
                "no [[tokens]] are configured, so the API would be open to anyone; \
                 listen on a loopback address or add tokens (`fairshare token new --role admin`), \
                 not {}",
                self.listen
            ));
        }
        Ok(())
    }

    /// Checks token `i`'s node list: only an agent's, not empty, every id valid.
    fn check_token_nodes(&self, i: usize) -> Result<(), ConfigError> {
        let t = &self.tokens[i];
        let Some(nodes) = &t.nodes else {
            return Ok(());
        };
        let name = self.token_name(i);
        let invalid = |m: String| Err(invalid_setting(format!("tokens[{i}] ({name}): {m}")));
        if t.role != Role::Agent {
            return invalid(format!(
                "nodes binds agent tokens only; a {} token acts for every node",
                t.role.name()
            ));
        }
        if nodes.is_empty() {
            return invalid("nodes is empty: name at least one node, or leave nodes out".into());
        }
        match nodes.iter().find(|n| !crate::model::valid_id(n)) {
            Some(n) => invalid(format!("nodes: {n:?} is not a valid node id")),
            None => Ok(()),
        }
    }

    /// The name messages give token `i`.
    pub fn token_name(&self, i: usize) -> String {
        let t = &self.tokens[i];
        t.name
            .clone()
            .unwrap_or_else(|| format!("{}…", &t.sha256.to_hex()[..8]))
    }
}

/// Replaces the keys of the `key` table with those of an inline TOML table.
fn overlay(table: &mut toml::Table, key: &str, inline: &str) -> Result<(), ConfigError> {
    let wrong = || {
        invalid_setting(format!(
            "{key}: {inline:?} must be an inline TOML table such as {{normalizer = 2}}"
        ))
    };
    let given: toml::Table = toml::from_str(&format!("{key} = {inline}")).map_err(|_| wrong())?;
    let Some(toml::Value::Table(given)) = given.get(key).cloned() else {
        return Err(wrong());
    };
    let slot = table
        .entry(key)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let existing = slot.as_table_mut().ok_or_else(|| {
        invalid_setting(format!("{key} in the configuration file is not a table"))
    })?;
    existing.extend(given);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_configuration_reads_and_keeps_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/fairshare.toml");
        let config = ServiceConfig::load(Some(&path), &[]).unwrap();
        config.check().unwrap();
        let defaults = ServiceConfig::default();
        assert_eq!(config.resources, defaults.resources);
        assert_eq!(config.heaviness, defaults.heaviness);
        assert_eq!(config.priority, defaults.priority);
        assert_eq!(config.listen, defaults.listen);
        assert_eq!(config.limits, defaults.limits);
    }

    #[test]
    fn inline_tables_replace_the_files_keys_one_by_one() {
        let dir = std::env::temp_dir().join(format!("fairshare-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fairshare.toml");
        std::fs::write(
            &path,
            "[heaviness]\nnormalizer = 3.0\nresource_decay_factor = 0.25\n",
        )
        .unwrap();
        let overlays = [
            ("heaviness", "{normalizer = 2.0, metric = {kind = \"drf\"}}"),
            ("priority", "{smoothing = \"blend10\"}"),
        ];
        let c = ServiceConfig::load(Some(&path), &overlays).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.heaviness.normalizer, 2.0);
        assert_eq!(
            c.heaviness.resource_decay_factor, 0.25,
            "kept from the file"
        );
        assert_eq!(c.heaviness.metric, fairshare_core::heaviness::Metric::Drf);
        assert_eq!(
            c.priority.smoothing,
            fairshare_core::heaviness::knobs::PrioritySmoothing::Blend10
        );
        let e = ServiceConfig::load(None, &[("heaviness", "normalizer = 2")]).unwrap_err();
        assert!(e.to_string().contains("inline TOML table"), "{e}");
        let e = ServiceConfig::load(None, &[("heaviness", "{colour = 1}")]).unwrap_err();
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");
    }

    #[test]
    fn mistakes_are_named() {
        let bad = |text: &str| {
            let c: Result<ServiceConfig, _> = toml::from_str(text);
            match c {
                Err(e) => e.to_string(),
                Ok(c) => c.check().unwrap_err().to_string(),
            }
        };
        assert!(bad("colour = 1").contains("unknown field `colour`"));
        assert!(bad("profile = \"k8s\"").contains("not one of"));
        assert!(bad("listen = \"0.0.0.0:7878\"").contains("no [[tokens]]"));
        assert!(
            bad("[[tokens]]\nrole = \"root\"\nsha256 = \"00\"").contains("unknown variant `root`")
        );
        assert!(bad("[[tokens]]\nrole = \"admin\"\nsha256 = \"00\"").contains("64 hex digits"));
        assert!(bad("[heaviness]\nupdate_interval_s = 0").contains("update_interval_s"));
        assert!(bad("[heaviness]\nupdate_interval_s = 1e300").contains("at most 86400"));
        assert!(bad("report_retention_s = 999999999999").contains("ten years"));
        let twice = "[[resources]]\nname = \"cpu\"\nkind = \"cpu\"\n[[resources]]\nname = \"cpu\"\nkind = \"memory\"";
        assert!(bad(twice).contains("listed twice"));
        assert!(bad("[limits]\nheader_timeout_s = 0").contains("limits.header_timeout_s"));
        assert!(bad("[limits]\nmax_connections = 8\nmax_connections_per_peer = 9")
            .contains("limits.max_connections_per_peer must be between 1 and limits.max_connections (8), found 9"));
        assert!(bad("[limits]\nmax_connections = 0").contains("limits.max_connections"));
        let digest = "0".repeat(64);
        let token = |role: &str, nodes: &str| {
            format!("[[tokens]]\nrole = \"{role}\"\nsha256 = \"{digest}\"\nnodes = {nodes}")
        };
        assert!(bad(&token("admin", "[\"n1\"]")).contains("binds agent tokens only"));
        assert!(bad(&token("agent", "[]")).contains("nodes is empty"));
        assert!(bad(&token("agent", "[\"n 1\"]")).contains("not a valid node id"));
    }
}
