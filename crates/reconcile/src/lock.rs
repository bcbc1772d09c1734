//! One writer per cluster. Two adapters writing one queue's factors undo each other pass after
//! pass, and nothing in the queue shows it; so a pass that writes (`watch`, `sync`, `reset`)
//! first takes a lock file, and a second one started by mistake is refused, naming the file
//! and the process that holds it.
//!
//! The lock is the operating system's (`flock`): it goes with the process, so a watcher killed
//! with SIGKILL leaves no stale lock behind. The file itself stays, holding the last holder's
//! process id and start.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A lock held until dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another process holds it.
    #[error("{} is held by another fairshare ({holder}): one writer per cluster; stop that one first, or give each cluster its own `lock`", path.display())]
    Held {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, as the file says (`pid 1234 since 2026-11-28T21:40:00`).
        holder: String,
    },
    /// The file could not be opened or written.
    #[error("lock file {}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl Lock {
    /// Takes the lock at `path` (made if need be) and writes this process's id and `since`
    /// into it; refused at once when another process holds it.
    pub fn take(path: &Path, since: &str) -> Result<Lock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = (OpenOptions::new().read(true).write(true).create(true))
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "a process that has not written its id yet".to_owned(),
                    said => said.to_owned(),
                };
                return Err(LockError::Held {
                    path: path.to_path_buf(),
                    holder,
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "pid {} since {since}", std::process::id()).map_err(io)?;
        Ok(Lock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second take is refused while the first is held (a lock is per open file, so this
    /// holds within one process too), naming the file and the holder; once dropped, it is
    /// taken again.
    #[test]
    fn a_second_writer_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fairshare.lock");
        let first = Lock::take(&path, "2026-11-28T21:40:00").unwrap();
        let refused = Lock::take(&path, "later").unwrap_err().to_string();
        let pid = std::process::id();
        assert!(refused.contains(&path.display().to_string()), "{refused}");
        assert!(
            refused.contains(&format!("pid {pid} since 2026-11-28T21:40:00")),
            "{refused}"
        );
        drop(first);
        Lock::take(&path, "again").unwrap();
        let said = std::fs::read_to_string(&path).unwrap();
        assert_eq!(said, format!("pid {pid} since again\n"));
        let missing = dir.path().join("no/such/dir/lock");
        let error = Lock::take(&missing, "now").unwrap_err();
        assert!(matches!(error, LockError::Io { .. }), "{error}");
    }
}
