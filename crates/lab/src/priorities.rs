//! The operator's `sshare -l` on history: at a chosen moment of an accounting log, what each
//! account and user had used (decayed), what they are entitled to, and the fairshare factor and
//! rank a site's function gives them — how an administrator checks a fairshare policy on their
//! own cluster's history before switching to it.
//!
//! Usage is the log's own schedule: every job with a recorded start is charged its usage
//! metric (processors for CPU time, its Processor Equivalent on the cluster's machines, …) for
//! as long as it ran before the moment, as it ran, each instant decayed to the moment
//! ([`Decay::accrued`]); a job still running when a Slurm dump was taken runs until that
//! moment. A log does not say which machine ran a job, so no SPEC is applied.
//!
//! Under Slurm's own accounting ([`Decay::Slurm`]) the table is what `sshare` shows: raw
//! usage as charged by the moment, everything else as Slurm computed it at its last tick
//! ([`Decay::computed_at`]).
//!
//! [`MeasuredTrace::standings`] is the whole of `fairshare priorities` as one call: the share file
//! read, the moment resolved, the machines found, the standings computed, returned as the
//! [`PrioritiesDocument`] that `--json` writes and `fairshare-report` renders.

use crate::{LabError, MeasuredTrace};
use fairshare_core::model::{MachineCatalogue, RawShares, Time};
use fairshare_core::priority::fairshare::{
    children, slurm_classic_between_ticks, standings, Association, FairshareFunction, Standing,
    TreeError,
};
use fairshare_core::usage::decay::Decay;
use fairshare_core::usage::metric::UsageMetric;
use fairshare_core::usage::penalty::totals;
use fairshare_sim::cluster::Capacity;
use fairshare_trace::sacct::NEVER_STARTED;
use fairshare_trace::Shares;
use serde::{Serialize, Serializer};
use std::path::PathBuf;

/// How long before Slurm's last tick classic's lagging accounts are read: shorter than any
/// time a log records (sacct writes whole seconds).
const BEFORE_A_TICK_S: f64 = 1e-3;

/// One account or user of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriorityRow {
    /// Its name (a user's as the trace writes it).
    pub name: String,
    /// Its parent account's name, `None` for the root.
    pub parent: Option<String>,
    /// Its depth below the root.
    pub depth: usize,
    /// Whether it is a user.
    pub user: bool,
    /// Its shares among its siblings, as the share file gives them: a number, or `parent`.
    pub raw_shares: RawShares,
    /// What the fairshare function makes of it.
    #[serde(flatten)]
    pub standing: Standing,
}

/// The table at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Priorities {
    /// The moment, seconds after the log's first event (kept or not).
    pub at_s: f64,
    /// The moment on the log's own clock, in seconds (after the Unix epoch for logs of dates,
    /// such as Slurm dumps).
    pub at_log_s: f64,
    /// Jobs charged (started before the moment).
    pub jobs_charged: u64,
    /// Jobs without a recorded start, charged nothing: cancelled while they waited, or still
    /// waiting when the log was taken.
    pub jobs_without_start: u64,
    /// Jobs the usage metric could not price on any machine, charged Maui's system-wide PE.
    pub jobs_priced_system_wide: u64,
    /// Accounts and users, each account followed by its children (depth first).
    pub rows: Vec<PriorityRow>,
}

/// A moment of a log: a duration after its first event, or a date.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Moment {
    /// Microseconds after the log's first event (kept or not).
    After(u64),
    /// A date, on the Unix clock.
    Date(Time),
}

/// What `fairshare priorities` asks of a log.
#[derive(Debug, Clone, PartialEq)]
pub struct PrioritiesRequest {
    /// The share file; `None`: every user has one share under the root.
    pub shares: Option<PathBuf>,
    /// The moment; `None`: the log's last event, kept or not (for a Slurm dump, when it was
    /// taken).
    pub at: Option<Moment>,
    /// The fairshare function.
    pub function: FairshareFunction,
    /// How usage fades.
    pub decay: Decay,
    /// What a job is charged per second it ran.
    pub usage: UsageMetric,
    /// The machines the PE metrics price jobs on; `None`: the log's own, where it has one.
    pub machines: Option<PathBuf>,
    /// The cluster whose associations count when `sacctmgr`'s output lists several.
    pub cluster: Option<String>,
}

/// The standings with the setting they were computed under: what `fairshare priorities`
/// shows, and writes with `--json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrioritiesDocument {
    /// Layout version of this JSON document.
    pub schema_version: u32,
    /// The log's files, as given.
    pub trace: Vec<String>,
    /// The fairshare function.
    pub policy: FairshareFunction,
    /// How usage faded.
    pub decay: Decay,
    /// What jobs were charged, as `--usage` names it.
    #[serde(serialize_with = "as_text")]
    pub usage: UsageMetric,
    /// The standings.
    #[serde(flatten)]
    pub priorities: Priorities,
    /// Whether the log's clock is dates (a Slurm dump), so that the moment can be shown as one.
    #[serde(skip)]
    pub dated: bool,
}

/// A value as its text.
fn as_text<S: Serializer>(value: &UsageMetric, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// Seconds after the Unix epoch as a UTC date, `2026-11-24T03:02:38Z`: how a moment of a log
/// of dates is named.
pub fn utc_date(secs: f64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(secs.max(0.0));
    humantime::format_rfc3339_seconds(time).to_string()
}

impl MeasuredTrace {
    /// The standings `request` asks for, with the setting: the share file read against the
    /// log's users, the moment resolved from the log's first event, the machines of `--machines`
    /// or the log's own for the metrics that price jobs on machines.
    pub fn standings(&self, request: &PrioritiesRequest) -> Result<PrioritiesDocument, LabError> {
        let tree = request
            .shares
            .as_ref()
            .map(|path| fairshare_trace::read_shares(path, &self.users, request.cluster.as_deref()))
            .transpose()?;
        let first = self.first_event().as_micros();
        let at_s = match request.at {
            Some(Moment::After(micros)) => micros as f64 / 1e6,
            Some(Moment::Date(date)) => {
                let at = date.as_micros();
                if at < first {
                    return Err(LabError::Unusable(format!(
                        "--at {}: before the log's first event, {}",
                        utc_date(at as f64 / 1e6),
                        utc_date(first as f64 / 1e6)
                    )));
                }
                (at - first) as f64 / 1e6
            }
            None => (self.last_event().as_micros() - first) as f64 / 1e6,
        };
        let capacity = self.pricing_machines(request)?;
        let charged = (request.usage, capacity.as_ref());
        let priorities = self
            .priorities(
                tree.as_ref(),
                at_s,
                request.decay,
                request.function,
                charged,
            )
            .map_err(|e| LabError::Unusable(format!("computing the standings: {e}")))?;
        Ok(PrioritiesDocument {
            schema_version: fairshare_core::instance::SCHEMA_VERSION,
            trace: self.trace.shown.clone(),
            policy: request.function,
            decay: request.decay,
            usage: request.usage,
            priorities,
            dated: self.format == fairshare_trace::Format::SACCT,
        })
    }

    /// The machines the usage metric prices jobs on: the request's, else the log's own (as a
    /// replay finds it); none for metrics that need none.
    fn pricing_machines(&self, request: &PrioritiesRequest) -> Result<Option<Capacity>, LabError> {
        if let Some(path) = &request.machines {
            return Ok(Some(self.machines(path)?));
        }
        if !request.usage.needs_machines() {
            return Ok(None);
        }
        match self.own_machine()? {
            Some(own) => Ok(Some(own.capacity)),
            None => Err(LabError::Unusable(format!(
                "--usage {} prices jobs on the cluster's machines, and the log says nothing about them: give --machines FILE",
                request.usage
            ))),
        }
    }

    /// The standings of every account and user of `tree` (or, without one, of every user
    /// under the root with equal shares) `at_s` seconds after the log's first event, under
    /// `function`, jobs charged `metric` (on `capacity`, which the metrics that price jobs on
    /// machines need), usage decaying by `decay`.
    pub fn priorities(
        &self,
        tree: Option<&Shares>,
        at_s: f64,
        decay: Decay,
        function: FairshareFunction,
        (metric, capacity): (UsageMetric, Option<&Capacity>),
    ) -> Result<Priorities, LabError> {
        metric
            .check_resources(&self.resources)
            .map_err(|e| LabError::Unusable(format!("--usage: {e}")))?;
        let (catalogue, metric) = match capacity {
            Some(capacity) => capacity.pricing(metric),
            None if metric.needs_machines() => {
                return Err(LabError::Unusable(format!(
                    "the {metric} usage metric prices jobs on the cluster's machines: give them"
                )))
            }
            None => (MachineCatalogue { types: Vec::new() }, metric),
        };
        let totals = totals(&catalogue);
        let mut system_wide = 0;
        // Decay runs on the log's own clock, as the batch engine's fairshare ranker does, so
        // that stepwise periods fall at the same instants in both.
        let secs = |t: Time| t.as_micros() as f64 / 1e6;
        let at = secs(self.first_event()) + at_s;
        // Slurm shows the factors as computed at its last tick; classic shows accounts as they
        // stood just before it.
        let slurm = matches!(decay, Decay::Slurm { .. });
        let computed = decay.computed_at(at);
        let lagging = slurm && function == FairshareFunction::SLURM_CLASSIC;
        let before = computed - BEFORE_A_TICK_S;
        let mut usage = vec![0.0; self.users.len()];
        let mut usage_computed = vec![0.0; self.users.len()];
        let mut usage_before = vec![0.0; self.users.len()];
        let never_started = self.input.tasks_skipped.get(NEVER_STARTED);
        let (mut charged, mut without_start) = (0, never_started.copied().unwrap_or(0));
        for task in self.tasks()? {
            let task = task?;
            let Some(start) = task.start else {
                without_start += 1;
                continue;
            };
            let start_s = secs(start);
            if start_s >= at {
                continue;
            }
            let end_s = start_s + task.runtime as f64 / 1e6;
            let (rate, fallback) = metric.price(&task, &catalogue, &totals);
            system_wide += u64::from(fallback);
            let charge = |at: f64| match task.running {
                // Still running when the log was taken: as it stood then, not ended, decayed on.
                true => {
                    let taken = at.min(end_s);
                    decay.accrued(rate, start_s, f64::INFINITY, taken) * decay.factor(taken, at)
                }
                false => decay.accrued(rate, start_s, end_s, at),
            };
            let u = task.user as usize;
            if u < usage.len() {
                usage[u] += charge(at);
                if slurm {
                    usage_computed[u] += charge(computed);
                }
                if lagging {
                    usage_before[u] += charge(before);
                }
                charged += 1;
            }
        }
        let shares = |usage: &[f64]| self.associations(tree, usage);
        let unusable = |e: TreeError| LabError::Unusable(format!("the share tree: {e}"));
        // Other decays are read at the moment itself.
        let computed_usage = if slurm { &usage_computed } else { &usage };
        let (associations, names, parents) = shares(computed_usage);
        let mut standings = if lagging {
            slurm_classic_between_ticks(&shares(&usage_before).0, &associations)
        } else {
            standings(&associations, function)
        }
        .map_err(unusable)?;
        if slurm {
            let now = fairshare_core::priority::fairshare::standings(&shares(&usage).0, function);
            for (s, now) in standings.iter_mut().zip(now.map_err(unusable)?) {
                s.raw_usage = now.raw_usage;
            }
        }
        let rows = depth_first(&associations)
            .into_iter()
            .map(|(i, depth)| PriorityRow {
                name: names[i].clone(),
                parent: parents[i].map(|p| names[p].clone()),
                depth,
                user: associations[i].user,
                raw_shares: associations[i].shares,
                standing: standings[i].clone(),
            })
            .collect();
        Ok(Priorities {
            at_s,
            at_log_s: at,
            jobs_charged: charged,
            jobs_without_start: without_start,
            jobs_priced_system_wide: system_wide,
            rows,
        })
    }

    /// The share tree as associations with `usage` on the trace's users, with names and
    /// parent indices.
    fn associations(
        &self,
        tree: Option<&Shares>,
        usage: &[f64],
    ) -> (Vec<Association>, Vec<String>, Vec<Option<usize>>) {
        let Some(tree) = tree else {
            let root = Association {
                parent: None,
                shares: RawShares::Count(1.0),
                usage: 0.0,
                user: false,
            };
            let users = usage.iter().map(|u| Association {
                parent: Some(0),
                shares: RawShares::Count(1.0),
                usage: *u,
                user: true,
            });
            let associations: Vec<Association> = std::iter::once(root).chain(users).collect();
            let names = std::iter::once("root".to_owned()).chain(self.users.iter().cloned());
            let parents = associations.iter().map(|a| a.parent).collect();
            return (associations, names.collect(), parents);
        };
        let mut associations = crate::shares::associations(tree);
        for (u, &leaf) in tree.leaf.iter().enumerate() {
            associations[leaf].usage = usage.get(u).copied().unwrap_or(0.0);
        }
        let accounts = tree.tree.accounts();
        let names = accounts.iter().map(|a| a.name.clone()).collect();
        let parents = accounts.iter().map(|a| a.parent).collect();
        (associations, names, parents)
    }
}

/// Every association with its depth, each followed by its children, in tree order.
fn depth_first(tree: &[Association]) -> Vec<(usize, usize)> {
    let children = children(tree);
    let mut order = Vec::with_capacity(tree.len());
    let mut stack: Vec<(usize, usize)> = if tree.is_empty() {
        Vec::new()
    } else {
        vec![(0, 0)]
    };
    while let Some((i, depth)) = stack.pop() {
        order.push((i, depth));
        stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
    }
    order
}
