//! One pass's record, the same for every adapter: what the pass read and planned, what the
//! scheduler said beside it, and how many commands it asked. `fairshare-report` shows it and
//! `--json` prints it, so an adapter adds no record of its own; what only some schedulers have
//! (a version they print, a choice of mapping, their own order of the clients) is optional.

use crate::history::Step;
use crate::plan::{Plan, SubmitFactor};
use crate::state::ClientUsage;
use serde::Serialize;
use std::fmt;

/// The layout version of a pass's `--json` document and of a reset's (docs/json.md): 2 since
/// one record serves every adapter (`version` and `check` in place of Slurm's `slurm_version`
/// and `fair_tree` and Grid Engine's `share_tree`), 3 since the factor is `factor` in every
/// scheduler's words (Slurm's `site_factor` before).
pub const PASS_SCHEMA_VERSION: u32 = 3;

/// What one pass saw and planned, its jobs known by ids of type `J`.
#[derive(Debug, Clone, Serialize)]
pub struct Pass<J = u64> {
    /// When, in seconds after the Unix epoch.
    pub at_s: f64,
    /// The scheduler's version, when it prints one.
    pub version: Option<Version>,
    /// The policy as run.
    pub policy: String,
    /// How the adapter's factor enters the scheduler's priority, in the adapter's word for it,
    /// where the scheduler offers a choice (Slurm's `replace` or `add`).
    pub mapping: Option<&'static str>,
    /// Whether the history was (re)built from the accounting's window in this pass, and why.
    pub rebuilt: Option<String>,
    /// What the history took in.
    pub step: Step,
    /// Jobs running as the history holds them.
    pub running: usize,
    /// Every client's usage.
    pub usage: Vec<ClientUsage>,
    /// The plan.
    pub plan: Plan<J>,
    /// What an administrator should know: the scheduler's settings, records skipped, clients
    /// left out.
    pub notes: Vec<String>,
    /// The scheduler's own order of the waiting clients beside fairshare's, under a policy
    /// that reproduces the scheduler's own fairshare.
    pub check: Option<OrderCheck>,
    /// The factor each client's next job gets at submission.
    pub submit: Vec<SubmitFactor>,
    /// The scheduler's commands the pass ran to read the cluster.
    pub reads: u32,
}

/// A scheduler's version as it printed it, and whether fairshare is tested on its release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Version {
    /// The scheduler's name: `Slurm`.
    pub scheduler: String,
    /// The version as printed: `24.11.5`.
    pub text: String,
    /// Whether fairshare is tested on its release.
    pub tested: bool,
}

impl fmt::Display for Version {
    /// `Slurm 22.05.8 (tested)`, or `Slurm 24.11.5 (not tested)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tested = if self.tested { "tested" } else { "not tested" };
        write!(f, "{} {} ({tested})", self.scheduler, self.text)
    }
}

/// How a scheduler's own fairshare ranks the waiting clients beside fairshare's order: the
/// built-in check of a policy that reproduces it (Slurm's Fair Tree against `sshare`, Grid
/// Engine's share tree against `qstat -ext`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderCheck {
    /// The order checked, its source and what the source prints, in words.
    #[serde(skip)]
    pub words: CheckWords,
    /// The waiting clients with the scheduler's own measure of each, the first first.
    pub scheduler: Vec<(String, f64)>,
    /// The same clients in fairshare's order.
    pub fairshare: Vec<String>,
    /// Whether fairshare's order is one of the scheduler's: along it, the scheduler's
    /// measure never passes the one before.
    pub agrees: bool,
}

/// The words of an [`OrderCheck`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckWords {
    /// The order checked: `Fair Tree`.
    pub order: &'static str,
    /// The scheduler's own ranking and where it is read: `Slurm's own Fair Tree (sshare)`.
    pub own: &'static str,
    /// What it prints, with its verb: `sshare's FairShare is`.
    pub measure: &'static str,
    /// The decimals the measure is shown with.
    pub decimals: usize,
}

/// A scheduler's words for what its adapter shows: the report writes every pass in them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Words {
    /// The scheduler's name, its reads counted: `Slurm`.
    pub scheduler: &'static str,
    /// A ranked client: `association`.
    pub client: &'static str,
    /// The accounting, which may list jobs late: `sacct`.
    pub accounting: &'static str,
    /// The command that writes, counted in calls: `scontrol`.
    pub writer: &'static str,
    /// The command the writes are read back from: `sprio`.
    pub reader: &'static str,
    /// How a write sets a factor, before its value: `SiteFactor=`.
    pub set: &'static str,
    /// The factor's column heads: in the clients' table, and in the jobs' table before `now`
    /// and `wanted`: `Site`.
    pub factor: &'static str,
    /// The scheduler's priority of a job as it prints it: the adapter's whole number over
    /// this divisor, with as many decimals as it has zeros (1: as it is).
    pub priority_divisor: u64,
    /// Whether a job gets the adapter's factor at submission (Slurm's `job_submit.lua`): the
    /// clients' table then shows the factor a new job gets.
    pub new_jobs: bool,
}
