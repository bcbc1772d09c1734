//! # fairshare-slurm
//!
//! fairshare's policies applied to a live Slurm queue. Slurm computes each pending job's
//! priority from weighted factors, one of which — the **site factor** — an administrator may
//! set per job (`scontrol update JobId=… SiteFactor=N`). This crate reads what fairshare needs
//! from the cluster and turns a policy's ranking into site factors, so that Slurm's own
//! scheduler starts jobs in fairshare's order.
//!
//! It talks to Slurm through Slurm's own commands (`squeue --json`, `sacctmgr -P`, `sacct`,
//! `scontrol`), never through its database: they are on every cluster where `slurmctld` runs,
//! they need no extra daemon (as `slurmrestd` would, with its own authentication and a version
//! per plugin), and an administrator can run the very same commands to see what fairshare saw.
//!
//! - [`command`]: running those commands, each bounded in time, every failure told apart.
//! - [`queue`]: the jobs of `squeue --json` (id, user, account, state, priority, request) and
//!   the site factor each pending job holds, which Slurm 22.05 shows only in `sprio`.
//! - [`assoc`]: the association tree of `sacctmgr show assoc`: accounts under accounts, users
//!   under accounts, each with its shares or `parent` (read by `fairshare-trace`, whose share
//!   files take the same output).
//! - [`nodes`]: the nodes of `sinfo --json` (22.05) or `scontrol show nodes --json` (23.02 on):
//!   CPUs, memory, GPUs, features, partitions.
//! - [`accounting`]: what ran, from `sacct`: each job's user, account, times and allocated
//!   TRES (read as the trace reader reads them), and how many never started.
//! - [`sshare`]: what Slurm's own fair-share says, from `sshare`: each association's shares,
//!   usage, level fair-share and factor, as a sanity check beside fairshare's Fair Tree.
//! - [`error`]: what a reader says when it cannot take an output: the record and the field
//!   (shared with `fairshare-trace`'s readers of Slurm's outputs).
//! - [`settings`]: Slurm's settings that change its fairshare factor, and a note naming each
//!   one fairshare does not model.
//! - [`submit`]: the table `job_submit.lua` reads to rank a job at its submission.
//! - [`clients`]: the associations of the cluster served, as the reconcile's clients.
//! - [`config`]: the adapter's configuration file.
//! - [`bundle`]: a site bundle, the verbatim outputs of named commands that a replay of the
//!   site's history reads, collected here or by the shell commands it prints.
//! - [`adapter`]: one pass against a live Slurm, through the reconcile of `fairshare-reconcile`
//!   (history, order of starts, site factors, writes): its writes made with `scontrol` and
//!   read back with `sprio`.
#![warn(missing_docs)]

pub mod accounting;
pub mod adapter;
pub mod bundle;
pub use fairshare_trace::assoc;
pub mod clients;
pub use fairshare_reconcile::command;
pub mod config;
pub use fairshare_trace::slurm_output as error;
mod json;
pub mod nodes;
pub mod queue;
pub mod settings;
pub mod sshare;
pub mod submit;

pub use error::{Problem, ReadError};
