//! The layout of a Slurm *site bundle*: a folder of the verbatim outputs of named Slurm
//! commands, with a small manifest. `fairshare slurm collect` writes one (or a site's shell
//! runs the commands it prints) and `fairshare slurm what-if` reads one; both take the file
//! names and the dump's fields from here, so that the two ends cannot drift apart.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `sacct` fields a bundle's dump holds: every field the replay reads.
pub const DUMP_FORMAT: &str = "JobID,User,Account,Submit,Eligible,Start,End,Elapsed,Timelimit,\
AllocTRES,ReqTRES,Partition,State,QOS,Flags,ReqNodes,Constraints,NodeList,Reason,Reservation,\
SubmitLine";

/// The accounting dump: `sacct --parsable2 --format=`[`DUMP_FORMAT`].
pub const DUMP: &str = "sacct.txt";
/// The accounting before the window (`sacct` over the history, in [`DUMP_FORMAT`]): what the
/// site's fairshare remembered when the window opened, which a replay charges without scoring.
pub const HISTORY: &str = "history.txt";
/// The associations' limits (`sacctmgr -P show assoc format=`[`ASSOC_FORMAT`], with its
/// header).
///
/// [`ASSOC_FORMAT`]: crate::slurm_limits::ASSOC_FORMAT
pub const LIMITS: &str = "limits.txt";
/// The QOS' limits (`sacctmgr -P show qos format=`[`QOS_FORMAT`], with its header).
///
/// [`QOS_FORMAT`]: crate::slurm_limits::QOS_FORMAT
pub const QOS_LIMITS: &str = "qos-limits.txt";
/// The TRES and their ids (`sacctmgr -P show tres`), which the transactions name TRES by.
pub const TRES: &str = "tres.txt";
/// The changes made to associations and QOS from the history's start to the window's end
/// (`sacctmgr -P list transactions withassoc`).
pub const TRANSACTIONS: &str = "transactions.txt";
/// The nodes' events over the window: when each was down, drained or failing
/// (`sacctmgr -P show event format=`[`EVENT_FORMAT`]).
///
/// [`EVENT_FORMAT`]: crate::slurm_nodes::EVENT_FORMAT
pub const EVENTS: &str = "events.txt";
/// The reservations over the window (`sacctmgr -P show reservation
/// format=`[`RESERVATION_FORMAT`]).
///
/// [`RESERVATION_FORMAT`]: crate::slurm_nodes::RESERVATION_FORMAT
pub const RESERVATIONS: &str = "reservations.txt";
/// `scontrol show config`, `show node` and `show partition`, in one file.
pub const CONFIG: &str = "config.txt";
/// `sacctmgr show assoc` of the cluster.
pub const ASSOC: &str = "assoc.txt";
/// `sacctmgr show qos`.
pub const QOS: &str = "qos.txt";
/// When `slurmctld` last decayed usage (the modification time of `priority_last_decay_ran`).
pub const LAST_DECAY: &str = "last-decay.txt";
/// What was collected, when, by which commands.
pub const MANIFEST: &str = "manifest.toml";
/// The site's adapter configuration (`/etc/fairshare/slurm.toml`), when it runs the adapter.
pub const ADAPTER: &str = "adapter.toml";
/// `slurmctld`'s log over the window, gzip'd, when the site adds it.
pub const CONTROLLER_LOG: &str = "slurmctld.log.gz";

/// The files every bundle holds, whether `collect` or the shell commands made it.
pub const REQUIRED: [&str; 4] = [CONFIG, ASSOC, QOS, DUMP];

/// Checks that every file a bundle holds is in `dir`.
pub fn check(dir: &Path) -> Result<(), BundleError> {
    match REQUIRED.into_iter().find(|f| !dir.join(f).is_file()) {
        Some(file) => Err(BundleError::Missing {
            dir: dir.to_path_buf(),
            file,
        }),
        None => Ok(()),
    }
}

/// What a bundle holds, as its `manifest.toml` says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The cluster.
    pub cluster: String,
    /// The dump's window, as given to `sacct`.
    pub since: String,
    /// The end of the window.
    pub until: String,
    /// The start of the history before the window ([`HISTORY`]), when the bundle holds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_since: Option<String>,
    /// `scontrol --version`.
    pub slurm_version: String,
    /// Whether the time of the last decay was read (`StateSaveLocation` is readable only on
    /// the controller's host).
    pub last_decay: bool,
    /// Whether `slurmctld`'s log was copied in ([`CONTROLLER_LOG`]).
    #[serde(default)]
    pub controller_log: bool,
    /// The shell commands that make the same files (left out of a what-if's JSON).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub commands: String,
}

/// Why a bundle cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// A file every bundle holds is missing.
    #[error("{dir}: not a site bundle: {file} is missing (`fairshare slurm collect` makes one; `fairshare slurm collect --dry-run` prints the commands)")]
    Missing {
        /// The bundle's folder.
        dir: PathBuf,
        /// The file.
        file: &'static str,
    },
    /// A file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest is not one `collect` writes.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong, where.
        message: String,
    },
}

impl Manifest {
    /// The manifest as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a manifest of strings and a flag is TOML")
    }

    /// The manifest at `path`.
    pub fn read(path: &Path) -> Result<Manifest, BundleError> {
        let path = path.to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(|source| BundleError::Read {
            path: path.clone(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| BundleError::Manifest {
            path,
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_without_a_file_is_refused_by_its_name() {
        let dir = tempfile::tempdir().unwrap();
        for file in [CONFIG, ASSOC, QOS, MANIFEST] {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        let e = check(dir.path()).unwrap_err().to_string();
        assert!(e.contains("sacct.txt is missing"), "{e}");
        std::fs::write(dir.path().join(DUMP), "").unwrap();
        check(dir.path()).unwrap();
        let e = Manifest::read(&dir.path().join(MANIFEST))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("manifest.toml") && e.contains("missing field"),
            "{e}"
        );
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = Manifest {
            cluster: "emu".into(),
            since: "now-30days".into(),
            until: "now".into(),
            history_since: None,
            slurm_version: "slurm 22.05.8".into(),
            last_decay: true,
            controller_log: false,
            commands: "TZ=UTC sacct …\n".into(),
        };
        std::fs::write(dir.path().join(MANIFEST), manifest.to_toml()).unwrap();
        assert_eq!(
            Manifest::read(&dir.path().join(MANIFEST)).unwrap(),
            manifest
        );
    }
}
