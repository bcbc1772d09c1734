//! A stand-in OpenPBS server for the example: it answers `qstat` and `pbsnodes` with the
//! outputs in `recorded/` and takes `qalter -p`, which changes the `Priority` its `qstat`
//! prints next, as a server's does. It can be taken down, so that every command fails.

use fairshare_core::model::Time;
use fairshare_reconcile::command::{CommandError, Commands};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;

/// When the outputs were recorded: Mon Nov 30 12:00:00 2026 UTC.
pub const NOW: Time = Time(1_796_040_000 * 1_000_000);

/// The recorded output `name`'s path.
pub fn path(name: &str) -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "examples/openpbs/recorded",
        name,
    ]
    .iter()
    .collect()
}

/// The recorded output `name`.
fn recorded(name: &str) -> String {
    std::fs::read_to_string(path(name)).expect("the example's recorded outputs are in the tree")
}

/// The stand-in server.
pub struct Server {
    /// `qstat -x -f -F json` now.
    jobs: RefCell<Value>,
    /// Whether it is down.
    pub down: Cell<bool>,
    /// Every `qalter` it took, as its command line.
    pub altered: RefCell<Vec<String>>,
}

impl Server {
    /// The server as recorded.
    pub fn new() -> Server {
        let jobs = serde_json::from_str(&recorded("qstat-x.json")).expect("recorded JSON");
        Server {
            jobs: RefCell::new(jobs),
            down: Cell::new(false),
            altered: RefCell::default(),
        }
    }

    /// `qstat -f -F json`, with the finished jobs (`-x`) or without.
    pub fn qstat(&self, finished: bool) -> String {
        let mut listed = self.jobs.borrow().clone();
        let jobs = listed["Jobs"].as_object_mut().expect("Jobs");
        jobs.retain(|_, job| finished || job["job_state"] != "F");
        listed.to_string()
    }

    /// `qalter -p priority ids…`.
    fn qalter(&self, priority: &str, ids: &[&str]) -> Result<String, CommandError> {
        let priority: i64 = priority.parse().expect("qalter -p takes a number");
        let mut jobs = self.jobs.borrow_mut();
        for id in ids {
            jobs["Jobs"][*id]["Priority"] = priority.into();
        }
        self.altered
            .borrow_mut()
            .push(format!("qalter -p {priority} {}", ids.join(" ")));
        Ok(String::new())
    }
}

impl Commands for Server {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        if self.down.get() {
            let (command, stderr) = (command.join(" "), "Connection refused".into());
            return Err(CommandError::Failed {
                command,
                status: ExitStatus::from_raw(15 << 8),
                stderr,
            });
        }
        match command {
            ["pbsnodes", "-a", "-F", "json"] => Ok(recorded("pbsnodes.json")),
            ["qstat", "-x", "-f", "-F", "json"] => Ok(self.qstat(true)),
            ["qstat", "-f", "-F", "json"] => Ok(self.qstat(false)),
            ["qalter", "-p", priority, ids @ ..] => self.qalter(priority, ids),
            _ => panic!("the example runs no other command: {command:?}"),
        }
    }
}
