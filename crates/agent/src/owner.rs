//! Who owns a workload: a regular expression on its cgroup's name (systemd's `user-1000.slice`,
//! a batch system's `job_42_alice`) or a mapping file an operator or orchestrator keeps. A
//! workload no rule claims is left alone and said once.

use fairshare_core::error::Invalid;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The rule, as the configuration gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum OwnerRule {
    /// A regular expression on the cgroup's name; the group `owner` (or else the first group,
    /// or else the whole match) is the owner.
    Regex(String),
    /// A TOML file of `"cgroup-name" = "owner"` lines, read again whenever it changes.
    Mapping(PathBuf),
}

impl Default for OwnerRule {
    /// systemd's user slices: `user-1000.slice` is owned by `1000`.
    fn default() -> Self {
        OwnerRule::Regex(r"^user-(?P<owner>[^.]+)\.".into())
    }
}

impl OwnerRule {
    /// Checks the rule can be used (the expression compiles; a mapping file is read later,
    /// so that it may appear after the agent starts).
    pub fn check(&self) -> Result<(), Invalid> {
        match self {
            OwnerRule::Regex(r) => Regex::new(r)
                .map(drop)
                .map_err(|e| Invalid(format!("owner.regex: {e}"))),
            OwnerRule::Mapping(_) => Ok(()),
        }
    }
}

/// The rule in force: the compiled expression, or the mapping as last read.
#[derive(Debug)]
pub enum Owners {
    /// By expression.
    Regex(Regex),
    /// By file, with the time it was read at.
    Mapping {
        /// The file.
        path: PathBuf,
        /// Its modification time when read.
        read_at: Option<SystemTime>,
        /// Cgroup name → owner.
        map: BTreeMap<String, String>,
    },
}

impl Owners {
    /// The rule of a configuration (checked before).
    pub fn new(rule: &OwnerRule) -> Result<Owners, Invalid> {
        match rule {
            OwnerRule::Regex(r) => Regex::new(r)
                .map(Owners::Regex)
                .map_err(|e| Invalid(format!("owner.regex: {e}"))),
            OwnerRule::Mapping(path) => Ok(Owners::Mapping {
                path: path.clone(),
                read_at: None,
                map: BTreeMap::new(),
            }),
        }
    }

    /// Reads the mapping file again if it changed; an unreadable file keeps the last mapping.
    /// Says whether it was read again (owners found before may have changed).
    pub fn refresh(&mut self) -> Result<bool, Invalid> {
        let Owners::Mapping { path, read_at, map } = self else {
            return Ok(false);
        };
        let modified = std::fs::metadata(&*path)
            .and_then(|m| m.modified())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if *read_at == Some(modified) {
            return Ok(false);
        }
        *map = read_mapping(path)?;
        *read_at = Some(modified);
        Ok(true)
    }

    /// The owner of the cgroup called `name`, if the rule names one.
    pub fn owner_of(&self, name: &str) -> Option<String> {
        match self {
            Owners::Regex(re) => {
                let caps = re.captures(name)?;
                let m = caps
                    .name("owner")
                    .or_else(|| caps.get(1))
                    .or_else(|| caps.get(0))?;
                Some(m.as_str().to_string()).filter(|o| !o.is_empty())
            }
            Owners::Mapping { map, .. } => map.get(name).cloned(),
        }
    }
}

/// Reads a mapping file: a TOML table of strings.
pub fn read_mapping(path: &Path) -> Result<BTreeMap<String, String>, Invalid> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_mapping(&text).map_err(|e| Invalid(format!("{}: {e}", path.display())))
}

/// Parses a mapping: `"cgroup-name" = "owner"` per line.
pub fn parse_mapping(text: &str) -> Result<BTreeMap<String, String>, Invalid> {
    toml::from_str(text).map_err(|e| Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_reads_systemd_user_slices() {
        let o = Owners::new(&OwnerRule::default()).unwrap();
        assert_eq!(o.owner_of("user-1000.slice").as_deref(), Some("1000"));
        assert_eq!(o.owner_of("system.slice"), None);
    }

    #[test]
    fn a_group_or_the_match_names_the_owner() {
        let first = Owners::new(&OwnerRule::Regex(r"^job_\d+_(\w+)$".into())).unwrap();
        assert_eq!(first.owner_of("job_42_alice").as_deref(), Some("alice"));
        let whole = Owners::new(&OwnerRule::Regex(r"^[a-z]+".into())).unwrap();
        assert_eq!(whole.owner_of("bob7").as_deref(), Some("bob"));
    }

    #[test]
    fn a_mapping_file_is_read_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("owners.toml");
        std::fs::write(&path, "\"vm-1\" = \"alice\"\n").unwrap();
        let mut o = Owners::new(&OwnerRule::Mapping(path.clone())).unwrap();
        assert!(o.refresh().unwrap(), "read the first time");
        assert!(!o.refresh().unwrap(), "not read again while unchanged");
        assert_eq!(o.owner_of("vm-1").as_deref(), Some("alice"));
        assert_eq!(o.owner_of("vm-2"), None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, "\"vm-1\" = \"alice\"\n\"vm-2\" = \"bob\"\n").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(o.refresh().unwrap(), "read again once changed");
        assert_eq!(o.owner_of("vm-2").as_deref(), Some("bob"));
        std::fs::write(&path, "not toml [").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later + std::time::Duration::from_secs(5))
            .unwrap();
        let err = o.refresh().unwrap_err();
        assert!(err.contains("owners.toml"), "{err}");
        assert_eq!(
            o.owner_of("vm-2").as_deref(),
            Some("bob"),
            "the last mapping stays"
        );
    }
}
