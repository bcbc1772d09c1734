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
//! - [`site`]: from a policy's order of users to each user's site factor (Fair Tree's
//!   `(n − i) / n` times a weight), and the two mappings beside Slurm's own factors.
//! - [`writes`]: from the site factors wanted and those Slurm holds, the writes that change
//!   only what differs, grouped so that one `scontrol` call sets many jobs.
#![warn(missing_docs)]

pub mod command;
pub mod site;
pub mod writes;
