//! # fairshare-gridengine
//!
//! fairshare's policies applied to a live Grid Engine queue. Grid Engine orders its pending
//! jobs by `prio = weight_priority·npprior + weight_urgency·nurg + weight_ticket·ntckts`; with
//! `weight_priority 1` and the two other weights 0, a job's POSIX priority (`qalter -p N`,
//! -1023 to 1024) alone orders the queue, through the fixed mapping `npprior = (N + 1024) /
//! 2048` (../shared/spec/gridengine.md, §3). This crate reads what fairshare needs from the
//! cluster, and the reconcile of `fairshare-reconcile` turns a policy's order of starts into
//! one POSIX priority per job: Grid Engine's scheduler then starts jobs in fairshare's order.
//!
//! It talks to Grid Engine through its own commands (`qstat -xml`, `qconf`, `qhost -xml`,
//! `qalter`) and reads the accounting file `qacct` reads, never the qmaster's spool: they are on
//! every host that may administer the cluster, and an administrator can run the very same
//! commands to see what fairshare saw.
//!
//! - [`queue`]: the jobs of `qstat -u '*' -pri -xml` (id, owner, state, POSIX priority,
//!   submission or start, queue, slots).
//! - [`accounting`]: what ran, from the accounting file, read on from where the last pass
//!   stopped.
//! - [`tree`]: the share tree of `qconf -sstree` (or, without one, every user of `qconf
//!   -suserl` with one share) as the reconcile's clients.
//! - [`hosts`]: each execution host's slots (`qstat -f -xml`) and memory (`qhost -xml`).
//! - [`settings`]: the scheduler's weights and half-time (`qconf -ssconf`), and whether the
//!   POSIX priority orders jobs under them.
//! - [`config`]: the adapter's configuration file.
//! - [`adapter`]: one pass against a live Grid Engine under the reconcile's `Controller`: its
//!   writes made with `qalter -p` and read back with `qstat`.
#![warn(missing_docs)]

pub mod accounting;
pub mod adapter;
pub mod config;
pub mod hosts;
pub mod queue;
pub mod settings;
pub mod tree;

pub use fairshare_reconcile::command;

/// Why an output of Grid Engine could not be read: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("{place}: {field}: expected {expected}, found {found:?}")]
pub struct OutputError {
    /// Where in the output: a line, an element.
    pub place: String,
    /// The field.
    pub field: String,
    /// What was expected.
    pub expected: String,
    /// What was there.
    pub found: String,
}

impl OutputError {
    /// `field` at `place` is not `expected`: it is `found`.
    pub fn new(place: impl Into<String>, field: &str, expected: &str, found: &str) -> OutputError {
        OutputError {
            place: place.into(),
            field: field.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// A number of `field` at `place`.
pub(crate) fn number<T: std::str::FromStr>(
    text: &str,
    place: &str,
    field: &str,
    expected: &str,
) -> Result<T, OutputError> {
    text.trim()
        .parse()
        .map_err(|_| OutputError::new(place, field, expected, text))
}
