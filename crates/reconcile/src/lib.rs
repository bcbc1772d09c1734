//! # fairshare-reconcile
//!
//! The reconcile every scheduler adapter of fairshare makes, written once and in no
//! scheduler's terms. A batch scheduler orders its pending jobs by a priority; an adapter
//! gives each job an integer term of that priority, its factor (Slurm's site factor, Grid
//! Engine's and OpenPBS's job priority), so that the scheduler starts jobs in a fairshare
//! policy's order.
//!
//! An adapter reads its scheduler into the neutral types of [`job`], [`clients`] and
//! [`machines`] through a [`controller::SchedulerIo`]; the [`controller::Controller`] keeps the
//! history, reconciles ([`state::State::reconcile`]), writes the plan's [`writes`] and reads
//! them back, and records the pass ([`pass::Pass`], which the report shows); [`watch::watch`]
//! repeats it. `fairshare-slurm` and `fairshare-gridengine` are such adapters: what each keeps
//! is only its scheduler's (Slurm's: reading `squeue`, `sacct`, `sacctmgr`, `sinfo`, `sprio`,
//! writing `scontrol`).
//!
//! **Writing an adapter.** Its readers turn the scheduler's outputs into [`job::QueuedJob`],
//! [`job::Allocation`], [`clients::Tree`] and [`machines::SchedulerNode`], its jobs known by ids of the
//! type it chooses ([`job::JobId`]); its writer gives jobs a factor; its
//! [`controller::SchedulerIo`] calls them, through [`command::Counted`] commands, and an
//! adapter with no error of its own takes [`controller::PassError`]. Its configuration file
//! flattens [`config::SharedKeys`] under its [`config::AdapterDefaults`]. `examples/openpbs/` in this
//! crate is a whole adapter for OpenPBS — readers of `qstat -f -F json`, `pbsnodes -a -F
//! json` and the scheduler's `resource_group`, the writer `qalter -p`, and 60 lines of glue
//! — run on outputs in OpenPBS's shape and driven through a pass, a failed pass and a reset
//! (`cargo run -p fairshare-reconcile --example openpbs`): start from it. `tests/made_up.rs`
//! drives the controller and the loop through their failure modes.
//!
//! - [`job`]: a job in the queue, and a job that ran, charged to its client.
//! - [`clients`]: the associations as a ranker's clients, placed in the account tree.
//! - [`machines`]: the cluster's resources and node types, from its nodes.
//! - [`history`]: usage as the policy counts it, the accounting replayed through its ranker
//!   with the bookkeeping a scheduler uses (`fairshare_core::rank::Book`).
//! - [`plan`]: the reconcile without I/O: the order of starts, every pending job's
//!   factor, the writes, and the factor each association's next job gets at submission.
//! - [`writes`]: only the jobs whose factor differs, grouped so one call sets many.
//! - [`controller`]: one pass of any adapter, through the scheduler's readers and writer.
//! - [`pass`]: one pass's record, the same for every adapter, as the report shows it.
//! - [`state`]: what a reconcile keeps between passes, and one reconcile through all of the
//!   above.
//! - [`command`]: the scheduler's commands, run bounded in time, every failure told apart.
//! - [`config`]: the keys every adapter's configuration file has ([`config::SharedKeys`], which
//!   each adapter's file flattens beside its own), reading a file, and the checks.
//! - [`lock`]: one writer per cluster, a lock file a second writer is refused by.
//! - [`watch`]: the loop: interval, backoff after failures, stop on SIGTERM, an [`watch::Action`]
//!   after each reconcile.
#![warn(missing_docs)]

pub mod clients;
pub mod command;
pub mod config;
pub mod controller;
pub mod history;
pub mod job;
pub mod lock;
pub mod machines;
pub mod pass;
pub mod plan;
pub mod state;
pub mod watch;
pub mod writes;
