//! One reconcile against a live Slurm: read the cluster, bring the usage history up to now,
//! rank, plan, and — unless asked only to look — write the site factors that differ, then read
//! them back.
//!
//! Everything Slurm is asked goes through [`Slurm`], so that the same code runs against the
//! real commands ([`Runner`]) and, in tests and benchmarks, against recorded outputs. The
//! adapter keeps its history between passes (`watch`); it rebuilds it from `sacct` when it
//! starts and whenever the association tree or the nodes change.

use crate::accounting::{read_accounting, sacct_command};
use crate::clients::{clients, AssocError};
use crate::command::{CommandError, Runner};
use crate::config::{SettingError, SlurmConfig};
use crate::nodes::{parse_nodes, SINFO_COMMAND};
use crate::queue::{parse_queue, parse_site_factors, SPRIO_COMMAND, SQUEUE_COMMAND};
use crate::settings::{gap_note, other_weights, priority_flags, unmodelled};
use crate::sshare::{parse_sshare, SSHARE_COMMAND};
use crate::submit::{table, write_atomically};
use crate::ReadError;
use fairshare_core::choice::Choice;
use fairshare_core::error::Chain;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::priority::fairshare::FairshareFunction;
use fairshare_reconcile::clients::Clients;
use fairshare_reconcile::history::{HistoryError, Step};
use fairshare_reconcile::job::QueuedJob;
use fairshare_reconcile::machines::{Machines, MachinesError};
use fairshare_reconcile::plan::{
    considered, pending, Plan, PlanSettings, PlannedJob, SubmitFactor,
};
use fairshare_reconcile::site::Mapping;
use fairshare_reconcile::state::{Reconciled, State, Usage};
use fairshare_reconcile::writes::Write;
use fairshare_trace::assoc::{parse_assoc, SACCTMGR_COMMAND};
use fairshare_trace::billing::{
    parse_partitions, parse_qos, Billing, PARTITIONS_COMMAND, QOS_COMMAND,
};
use serde::Serialize;
use std::cell::Cell;
use std::collections::BTreeMap;

/// Something that answers Slurm's commands: the real ones, or recorded outputs.
pub trait Slurm {
    /// The standard output of `command` (the program, then its arguments).
    fn run(&self, command: &[&str]) -> Result<String, CommandError>;
}

impl Slurm for Runner {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        let (program, args) = command.split_first().expect("a command names its program");
        Runner::run(self, program, args)
    }
}

/// Why a pass could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// A command gave no usable answer.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// A command's answer could not be read.
    #[error("`{command}`")]
    Read {
        /// The command line.
        command: String,
        /// What was wrong with its output.
        #[source]
        error: ReadError,
    },
    /// The association tree cannot be ranked.
    #[error(transparent)]
    Clients(#[from] AssocError),
    /// The nodes cannot make a cluster.
    #[error("the cluster's nodes")]
    Machines(#[source] MachinesError),
    /// The policy cannot rank this cluster's history.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// Slurm's `PriorityType` is not `priority/multifactor`, so site factors order no job.
    #[error(
        "Slurm's PriorityType is {0:?}: site factors order jobs only under priority/multifactor"
    )]
    PriorityType(String),
}

/// How Slurm's own Fair Tree ranks the waiting associations beside fairshare's order: the
/// built-in check of `fairshare:function=fair-tree`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FairTreeCheck {
    /// The waiting associations, as `user (account)`, with `sshare`'s FairShare, highest first.
    pub slurm: Vec<(String, f64)>,
    /// The same associations in fairshare's order.
    pub fairshare: Vec<String>,
    /// Whether fairshare's order is one of Slurm's: along it, `sshare`'s FairShare never rises
    /// (associations Slurm ties may come in any order; one `sshare` does not list is not
    /// compared).
    pub agrees: bool,
}

impl FairTreeCheck {
    /// The check of fairshare's order `fairshare` against `sshare`'s FairShare `slurm`.
    pub fn new(slurm: Vec<(String, f64)>, fairshare: Vec<String>) -> FairTreeCheck {
        let by_name: BTreeMap<&str, f64> = slurm.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let values: Vec<f64> = (fairshare.iter())
            .filter_map(|name| by_name.get(name.as_str()).copied())
            .collect();
        let agrees = values.windows(2).all(|w| w[1] <= w[0] + 1e-6);
        FairTreeCheck {
            slurm,
            fairshare,
            agrees,
        }
    }
}

/// What one pass saw and planned.
#[derive(Debug, Clone, Serialize)]
pub struct Reconciliation {
    /// When, in seconds after the Unix epoch.
    pub at_s: f64,
    /// The policy.
    pub policy: String,
    /// The mapping.
    pub mapping: String,
    /// Whether the history was (re)built from `sacct`'s window in this pass, and why.
    pub rebuilt: Option<String>,
    /// What the history took in.
    pub step: Step,
    /// Jobs running as the history holds them.
    pub running: usize,
    /// Every association's usage.
    pub usage: Vec<Usage>,
    /// The plan.
    pub plan: Plan,
    /// Things an administrator should know (a setting of Slurm, associations left out).
    pub notes: Vec<String>,
    /// Under Fair Tree, Slurm's order beside fairshare's.
    pub fair_tree: Option<FairTreeCheck>,
    /// The site factor a job each association submits now gets from `job_submit.lua`.
    pub submit: Vec<SubmitFactor>,
    /// Slurm commands run to read the cluster.
    pub reads: u32,
}

/// What writing a plan did, as `sprio` reads it back afterwards: a job that started or left
/// the queue meanwhile no longer needs its factor, and a call Slurm refused for one such job
/// (`Invalid job id`) may still have set the others.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Applied {
    /// `scontrol` calls made (retries included).
    pub calls: u32,
    /// Calls Slurm refused even after a retry, each with its message.
    pub refused: Vec<Refusal>,
    /// Jobs written that read back as written.
    pub jobs: usize,
    /// Jobs written, still pending, whose site factor reads back other than written.
    pub mismatched: Vec<u64>,
    /// Why the read-back could not be made, if it could not.
    pub unverified: Option<String>,
}

/// A write Slurm refused, with its message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    /// The write.
    pub write: Write,
    /// What Slurm said.
    pub message: String,
}

impl Applied {
    /// Whether every job still pending reads back as written.
    pub fn complete(&self) -> bool {
        self.mismatched.is_empty() && self.unverified.is_none()
    }
}

/// What the adapter keeps between passes: the reconcile's state and the billing it charged
/// the history under.
struct Known {
    state: State,
    billing: Billing,
}

/// What a pass takes from `scontrol show config`.
struct SlurmSetting {
    /// Where the mapping and the settings disagree, or a setting is not modelled.
    notes: Vec<String>,
    /// Whether Slurm bills with `PriorityFlags=MAX_TRES`.
    max_tres: bool,
    /// `ClusterName`, whose associations are ranked when `sacctmgr` lists several clusters.
    cluster_name: Option<String>,
    /// Slurm's other weighted priority terms ([`other_weights`]).
    others: Vec<(&'static str, u64)>,
}

/// The adapter: a policy applied to one Slurm cluster.
pub struct Adapter<S: Slurm> {
    slurm: S,
    config: SlurmConfig,
    /// The clean start the history never reaches back before (`since`).
    since: Option<Time>,
    policy: PolicySpec,
    mapping: Mapping,
    known: Option<Known>,
    calls: Cell<u32>,
}

impl<S: Slurm> Adapter<S> {
    /// An adapter of `config` (checked) talking to `slurm`.
    pub fn new(slurm: S, config: SlurmConfig) -> Result<Adapter<S>, SettingError> {
        config.check()?;
        Ok(Adapter {
            slurm,
            policy: config.policy()?,
            mapping: config.mapping()?,
            since: config.since()?,
            config,
            known: None,
            calls: Cell::new(0),
        })
    }

    /// The settings plans are made under.
    fn settings(&self) -> PlanSettings {
        PlanSettings {
            weight: self.config.weight,
            partitions: self.config.partitions.clone(),
            per_call: self.config.jobs_per_call,
            ranked_runs: self.config.ranked_runs,
            ends_at_limits: self.config.ends_at_limits,
        }
    }

    /// Runs `command` and reads its output with `read`.
    fn read<T>(
        &self,
        command: &[&str],
        read: impl Fn(&str) -> Result<T, ReadError>,
    ) -> Result<T, AdapterError> {
        self.calls.set(self.calls.get() + 1);
        let text = self.slurm.run(command)?;
        read(&text).map_err(|error| AdapterError::Read {
            command: command.join(" "),
            error,
        })
    }

    /// The jobs of `squeue`, as the reconcile takes them.
    fn queue(&self) -> Result<Vec<QueuedJob>, AdapterError> {
        let jobs = self.read(&SQUEUE_COMMAND, parse_queue)?;
        Ok(jobs.into_iter().map(|squeue| squeue.job).collect())
    }

    /// One pass at `now`: reads the cluster, brings the history to `now` and plans. A
    /// history the ranker refused midway is dropped, so the next pass rebuilds it.
    pub fn pass(&mut self, now: Time) -> Result<Reconciliation, AdapterError> {
        self.calls.set(0);
        let SlurmSetting {
            mut notes,
            max_tres,
            cluster_name,
            others,
        } = self.check_setup()?;
        let tree = self.read(&SACCTMGR_COMMAND, parse_assoc)?;
        // The configuration's `cluster`, else the one `scontrol show config` names when
        // sacctmgr lists it (a site's several clusters share one slurmdbd).
        let named = cluster_name.filter(|name| tree.tree_of(name).is_some());
        let cluster = self.config.cluster.as_deref().or(named.as_deref());
        let clients = clients(&tree, cluster)?;
        let nodes = self.read(&SINFO_COMMAND, parse_nodes)?;
        let machines =
            Machines::of(&nodes, &self.config.partitions).map_err(AdapterError::Machines)?;
        let billing = Billing {
            partitions: self.read(&PARTITIONS_COMMAND, parse_partitions)?,
            max_tres,
            usage_factors: self.read(&QOS_COMMAND, parse_qos)?,
        };
        let fresh = self.fresh(clients, machines, billing.clone(), now)?;
        let since = match (&fresh, &self.known) {
            (Some((known, _)), _) | (None, Some(known)) => known.state.history.now(),
            (None, None) => unreachable!("a history is fresh when none is kept"),
        };
        let from = Time(since.as_micros().saturating_sub(1_000_000));
        let command = sacct_command(&sacct_time(from), &sacct_time(now));
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        let (mut accounting, rejected) =
            self.read(&command, |t| Ok(read_accounting(t, &billing)))?;
        notes.extend(rejected.iter().map(|e| format!("sacct: skipped {e}")));
        let settings = self.settings();
        let partitions = &settings.partitions;
        (accounting.allocations).retain(|a| considered(&a.partition, partitions));
        let jobs = self.queue()?;
        let held = self.read(&SPRIO_COMMAND, parse_site_factors)?;
        let rebuilt = fresh.as_ref().map(|(_, why)| why.clone());
        let mut known = match fresh {
            Some((known, _)) => known,
            None => self.known.take().expect("known when not fresh"),
        };
        // A history the ranker refused midway is not kept: the next pass rebuilds it.
        let Reconciled {
            step,
            running,
            usage,
            plan,
            submit,
            notes: reconciled,
        } = (known.state).reconcile(&accounting.allocations, (&jobs, &held), now, &settings)?;
        notes.extend(reconciled);
        let wanted: Vec<i64> = plan.jobs.iter().filter_map(|j| j.wanted).collect();
        notes.extend(gap_note(&others, &wanted, self.config.weight));
        self.known = Some(known);
        let fair_tree = match self.fair_tree_check(&plan) {
            Ok(check) => check,
            Err(e) => {
                notes.push(format!(
                    "the Fair Tree check could not be made: {}",
                    Chain(&e)
                ));
                None
            }
        };
        Ok(Reconciliation {
            at_s: now.as_secs_f64(),
            policy: self.policy.name.clone(),
            mapping: self.mapping.name().into(),
            rebuilt,
            step,
            running,
            usage,
            plan,
            notes,
            fair_tree,
            submit,
            reads: self.calls.get(),
        })
    }

    /// A history of `clients` on `machines` from the window before `now`, with why, when
    /// there is none yet or either changed; `None` when the one kept still serves.
    fn fresh(
        &self,
        clients: Clients,
        machines: Machines,
        billing: Billing,
        now: Time,
    ) -> Result<Option<(Known, String)>, AdapterError> {
        let why = match &self.known {
            None => "no history yet",
            Some(k) if k.state.clients != clients => "the association tree changed",
            Some(k) if k.state.machines != machines => "the nodes changed",
            Some(k) if k.billing != billing => "the billing weights or usage factors changed",
            Some(_) => return Ok(None),
        };
        let window = (self.config.window_s * 1e6) as u64;
        let from = Time(now.as_micros().saturating_sub(window));
        let from = from.max(self.since.unwrap_or(from)).min(now);
        let state = State::new(&self.policy, clients, machines, from)?;
        let why = format!("{why}: usage rebuilt from sacct since {}", sacct_time(from));
        Ok(Some((Known { state, billing }, why)))
    }

    /// The policy with a memory as long as Slurm's `PriorityDecayHalfLife` (`half_life`: its
    /// text), when its own text leaves it out ([`PolicySpec::remembering`]); the history is
    /// rebuilt when that changes the policy. The sentence says which memory the policy keeps,
    /// for a policy that has one.
    fn remember_as_slurm(&mut self, half_life: Option<String>) -> Option<String> {
        let given = self.config.policy().ok()?;
        let text = half_life?;
        let seconds = fairshare_core::model::slurm_conf_duration(&text)
            .ok()
            .flatten();
        let policy = seconds.and_then(|s| given.remembering(s));
        let note = match &policy {
            Some(ran) => format!("policy {}: run as {}: its memory halves in Slurm's PriorityDecayHalfLife={text}, as Slurm's own usage does (give the policy its own memory to set another)", given.name, ran.name),
            None if given.has_memory() => format!("policy {} keeps the memory its text gives it; Slurm's PriorityDecayHalfLife={text} is not used", given.name),
            None => return None,
        };
        let policy = policy.unwrap_or(given);
        if policy.name != self.policy.name {
            self.policy = policy;
            self.known = None;
        }
        Some(note)
    }

    /// Reads Slurm's priority settings: an error where site factors cannot order jobs, else
    /// what a pass takes from them, the policy remembering as long as Slurm does when its
    /// text leaves its memory out.
    fn check_setup(&mut self) -> Result<SlurmSetting, AdapterError> {
        let config = self.read(&["scontrol", "show", "config"], |t| Ok(t.to_string()))?;
        let value = |key: &str| setting(&config, key);
        let kind = value("PriorityType").unwrap_or_default();
        if kind != "priority/multifactor" {
            return Err(AdapterError::PriorityType(kind.to_string()));
        }
        let fairshare_weight = value("PriorityWeightFairShare").unwrap_or("0");
        let mut notes = Vec::new();
        let plugin = value("PrioritySiteFactorPlugin").unwrap_or_default();
        if !matches!(plugin, "" | "(null)" | "site_factor/none") {
            notes.push(format!(
                "Slurm's PrioritySiteFactorPlugin is {plugin}: it may overwrite the site factors fairshare writes"
            ));
        }
        notes.extend(self.remember_as_slurm(set_setting(&config, "PriorityDecayHalfLife")));
        notes.extend(unmodelled(value, &self.policy));
        if self.mapping == Mapping::Replace && fairshare_weight.trim() != "0" {
            notes.push(format!(
                "mapping replace, but Slurm's PriorityWeightFairshare is {fairshare_weight}: Slurm's own fairshare factor still weighs in; set PriorityWeightFairshare=0 (docs/slurm.md)"
            ));
        }
        let max_tres = priority_flags(value).any(|f| f == "MAX_TRES");
        Ok(SlurmSetting {
            notes,
            max_tres,
            cluster_name: set_setting(&config, "ClusterName"),
            others: other_weights(value),
        })
    }

    /// Under Fair Tree, `sshare`'s order of the associations that wait beside fairshare's.
    fn fair_tree_check(&self, plan: &Plan) -> Result<Option<FairTreeCheck>, AdapterError> {
        let fair_tree = matches!(self.policy.kind,
            PolicyKind::Fairshare(s) if s.function == FairshareFunction::FAIR_TREE);
        if !fair_tree {
            return Ok(None);
        }
        let rows = self.read(&SSHARE_COMMAND, parse_sshare)?;
        let label = |account: &str, user: &str| format!("{user} ({account})");
        let fairshare: Vec<String> = (plan.standings.iter())
            .map(|s| label(&s.account, &s.user))
            .collect();
        let waiting: std::collections::BTreeSet<&String> = fairshare.iter().collect();
        let mut slurm: Vec<(f64, String)> = rows
            .iter()
            .filter_map(|r| Some((r.fairshare?, label(&r.account, r.user.as_deref()?))))
            .filter(|(_, name)| waiting.contains(name))
            .collect();
        slurm.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let slurm = slurm.into_iter().map(|(v, name)| (name, v)).collect();
        Ok(Some(FairTreeCheck::new(slurm, fairshare)))
    }

    /// Rewrites the table `job_submit.lua` reads with `pass`'s factors, when one is configured
    /// (`submit_table`).
    pub fn write_submit_table(&self, pass: &Reconciliation) -> std::io::Result<()> {
        let Some(path) = &self.config.submit_table else {
            return Ok(());
        };
        write_atomically(path, &table(&pass.submit, pass.at_s as u64))
    }

    /// Removes the table `job_submit.lua` reads, when one is configured, so that new jobs get
    /// no site factor at submission (`fairshare slurm reset`).
    pub fn remove_submit_table(&self) -> std::io::Result<()> {
        match &self.config.submit_table {
            Some(path) => match std::fs::remove_file(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                removed => removed,
            },
            None => Ok(()),
        }
    }

    /// Writes `plan`'s site factors, each refused call retried once, then reads them back.
    pub fn apply(&self, plan: &Plan) -> Applied {
        let mut applied = Applied::default();
        for write in &plan.writes {
            let args = scontrol_args(write);
            let command: Vec<&str> = std::iter::once("scontrol")
                .chain(args.iter().map(String::as_str))
                .collect();
            let mut outcome = self.slurm.run(&command);
            applied.calls += 1;
            if outcome.is_err() {
                applied.calls += 1;
                outcome = self.slurm.run(&command);
            }
            if let Err(e) = outcome {
                let (write, message) = (write.clone(), Chain(&e).to_string());
                applied.refused.push(Refusal { write, message });
            }
        }
        if plan.writes.is_empty() {
            return applied;
        }
        match self.read(&SPRIO_COMMAND, parse_site_factors) {
            Ok(held) => {
                for write in &plan.writes {
                    for id in &write.jobs {
                        match held.get(id) {
                            Some(h) if *h != write.site_factor => applied.mismatched.push(*id),
                            Some(_) => applied.jobs += 1,
                            None => {}
                        }
                    }
                }
            }
            Err(e) => applied.unverified = Some(Chain(&e).to_string()),
        }
        applied
    }

    /// The writes that set the non-zero site factor of every pending job `sprio` lists (in the
    /// configured partitions) back to 0: `fairshare slurm reset`.
    pub fn reset_plan(&self) -> Result<Plan, AdapterError> {
        let jobs = self.queue()?;
        let held = self.read(&SPRIO_COMMAND, parse_site_factors)?;
        Ok(reset_plan(&jobs, &held, &self.settings()))
    }
}

/// The plan that sets every pending job's site factor to 0.
fn reset_plan(jobs: &[QueuedJob], held: &BTreeMap<u64, i64>, settings: &PlanSettings) -> Plan {
    let jobs: Vec<PlannedJob> = pending(jobs, settings)
        .map(|job| {
            let held = held.get(&job.id).copied();
            PlannedJob::of(job, held, held.map(|_| 0), None)
        })
        .collect();
    Plan::of(Vec::new(), jobs, settings.per_call)
}

/// The arguments of the `scontrol` call that makes `write`.
pub fn scontrol_args(write: &Write) -> Vec<String> {
    let ids: Vec<String> = write.jobs.iter().map(u64::to_string).collect();
    vec![
        "update".into(),
        format!("JobId={}", ids.join(",")),
        format!("SiteFactor={}", write.site_factor),
    ]
}

/// The value of `key` in `scontrol show config`'s output (`Key = Value` lines; keys compared
/// without case, as slurm.conf reads them).
fn setting<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        k.trim().eq_ignore_ascii_case(key).then(|| v.trim())
    })
}

/// [`setting`], unless unset (empty, or `(null)` as `scontrol show config` writes it).
pub(crate) fn set_setting(config: &str, key: &str) -> Option<String> {
    let value = setting(config, key)?;
    (!value.is_empty() && value != "(null)").then(|| value.to_owned())
}

/// A time as `sacct` takes it, in UTC (the adapter runs Slurm's commands with `TZ=UTC`):
/// `2026-11-24T07:00:00`.
pub fn sacct_time(t: Time) -> String {
    let secs = std::time::Duration::from_secs(t.as_micros() / 1_000_000);
    let text = humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + secs).to_string();
    text.trim_end_matches('Z').to_string()
}
