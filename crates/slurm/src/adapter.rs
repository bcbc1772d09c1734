//! Slurm under fairshare's [`Controller`]: Slurm's readers and writer ([`SlurmIo`], the
//! [`SchedulerIo`] of `squeue`, `sacct`, `sacctmgr`, `sinfo`, `sprio` and `scontrol`), the
//! check of its priority settings, and what a pass adds of Slurm's own: Fair Tree's order
//! beside `sshare`'s, the warning when Slurm's other weights can cross the factors' gaps, and
//! the table `job_submit.lua` reads.
//!
//! Everything Slurm is asked goes through [`Commands`], so that the same code runs against the
//! real commands ([`Runner`](fairshare_reconcile::command::Runner)) and, in tests and benchmarks, against recorded outputs. The
//! controller keeps the history between passes (`watch`) and rebuilds it from `sacct` when it
//! starts and whenever the association tree, the nodes or the billing change.

use crate::accounting::{read_accounting, sacct_command};
use crate::clients::{clients, AssocError};
use crate::config::{Mapping, SettingError, SlurmConfig};
use crate::nodes::{nodes_command, parse_nodes};
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
use fairshare_reconcile::command::{CommandError, Commands, Counted, Unread};
use fairshare_reconcile::controller::{
    utc_seconds, Cluster, Controller, HalfLife, Held, Jobs, Review, SchedulerIo,
};
use fairshare_reconcile::history::HistoryError;
use fairshare_reconcile::job::QueuedJob;
use fairshare_reconcile::machines::{Machines, MachinesError};
use fairshare_reconcile::pass::{CheckWords, OrderCheck, Pass, Version, Words};
use fairshare_reconcile::plan::Plan;
use fairshare_reconcile::writes::Write;
pub use fairshare_reconcile::writes::{Applied, Refusal};
use fairshare_trace::assoc::{parse_assoc, SACCTMGR_COMMAND};
use fairshare_trace::billing::{
    parse_partitions, parse_qos, Billing, PARTITIONS_COMMAND, QOS_COMMAND,
};
use fairshare_trace::slurm_version::SlurmVersion;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a pass could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SlurmError {
    /// A command gave no usable answer, or one that could not be read.
    #[error(transparent)]
    Answer(#[from] Unread<ReadError>),
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

impl From<CommandError> for SlurmError {
    fn from(error: CommandError) -> SlurmError {
        SlurmError::Answer(Unread::Command(error))
    }
}

/// Slurm's words.
pub const WORDS: Words = Words {
    scheduler: "Slurm",
    client: "association",
    accounting: "sacct",
    writer: "scontrol",
    reader: "sprio",
    set: "SiteFactor=",
    factor: "Site",
    priority_divisor: 1,
    new_jobs: true,
};

/// The words of Slurm's Fair Tree check.
const FAIR_TREE: CheckWords = CheckWords {
    order: "Fair Tree",
    own: "Slurm's own Fair Tree (sshare)",
    measure: "sshare's FairShare is",
    decimals: 6,
};

/// How Slurm's own Fair Tree ranks the waiting associations beside fairshare's order, the
/// built-in check of `fairshare:function=fair-tree`: `slurm`, the associations as `user
/// (account)` with `sshare`'s FairShare, highest first; `fairshare`, the same in fairshare's
/// order. They agree when `sshare`'s FairShare never rises along fairshare's order
/// (associations Slurm ties may come in any order; one `sshare` does not list is not
/// compared).
pub fn fair_tree_check(slurm: Vec<(String, f64)>, fairshare: Vec<String>) -> OrderCheck {
    let by_name: BTreeMap<&str, f64> = slurm.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let values: Vec<f64> = (fairshare.iter())
        .filter_map(|name| by_name.get(name.as_str()).copied())
        .collect();
    let agrees = values.windows(2).all(|w| w[1] <= w[0] + 1e-6);
    OrderCheck {
        words: FAIR_TREE,
        scheduler: slurm,
        fairshare,
        agrees,
    }
}

/// A Slurm version as a pass records it.
fn recorded(version: &SlurmVersion) -> Version {
    Version {
        scheduler: "Slurm".into(),
        text: version.text.clone(),
        tested: version.tested,
    }
}

/// Slurm as the controller reads and writes it: its commands through `slurm`, counted.
pub struct SlurmIo<S: Commands> {
    slurm: Counted<S>,
    /// The cluster whose associations are ranked, when the configuration names one.
    cluster: Option<String>,
    /// The partitions whose nodes are the machines (empty: all).
    partitions: Vec<String>,
    /// How the factors stand beside Slurm's own fairshare factor.
    mapping: Mapping,
    /// Slurm's other weighted priority terms as the last pass read them ([`other_weights`]).
    others: Vec<(&'static str, u64)>,
    /// The Slurm version `scontrol show config` printed, when it printed one.
    version: Option<SlurmVersion>,
    /// `scontrol show config` as the last pass read it, for the notes on its settings that
    /// depend on the policy as run.
    config: String,
    /// The highest site factor written.
    weight: u32,
    /// The table `job_submit.lua` reads, when one is configured.
    submit_table: Option<PathBuf>,
}

impl<S: Commands> SlurmIo<S> {
    /// Runs `command` and reads its output with `read`.
    fn read<T>(
        &self,
        command: &[&str],
        read: impl Fn(&str) -> Result<T, ReadError>,
    ) -> Result<T, SlurmError> {
        Ok(self.slurm.read(command, read)?)
    }

    /// Reads Slurm's priority settings: an error where site factors cannot order jobs, else
    /// what a pass takes from them.
    fn check_setup(&mut self) -> Result<SlurmSetting, SlurmError> {
        let config = self.read(&["scontrol", "show", "config"], |t| Ok(t.to_string()))?;
        let value = |key: &str| setting(&config, key);
        let kind = value("PriorityType").unwrap_or_default();
        if kind != "priority/multifactor" {
            return Err(SlurmError::PriorityType(kind.to_string()));
        }
        let mut notes = Vec::new();
        self.version = set_setting(&config, "SLURM_VERSION").map(|text| SlurmVersion::new(&text));
        notes.extend(match &self.version {
            Some(version) => version.note(),
            None => Some("scontrol show config printed no SLURM_VERSION: which Slurm this is, and whether fairshare is tested on it, is not known".into()),
        });
        let plugin = value("PrioritySiteFactorPlugin").unwrap_or_default();
        if !matches!(plugin, "" | "(null)" | "site_factor/none") {
            notes.push(format!(
                "Slurm's PrioritySiteFactorPlugin is {plugin}: it may overwrite the site factors fairshare writes"
            ));
        }
        let half_life = set_setting(&config, "PriorityDecayHalfLife").and_then(|text| {
            let seconds = fairshare_core::model::slurm_conf_duration(&text).ok()??;
            let said = format!("Slurm's PriorityDecayHalfLife={text}");
            Some(HalfLife { seconds, said })
        });
        self.others = other_weights(value);
        let max_tres = priority_flags(value).any(|f| f == "MAX_TRES");
        let cluster_name = set_setting(&config, "ClusterName");
        self.config = config;
        Ok(SlurmSetting {
            notes,
            half_life,
            max_tres,
            cluster_name,
        })
    }

    /// Under Fair Tree, `sshare`'s order of the associations that wait beside fairshare's.
    fn sshare_order(
        &self,
        policy: &PolicySpec,
        plan: &Plan,
    ) -> Result<Option<OrderCheck>, SlurmError> {
        let fair_tree = matches!(policy.kind,
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
        Ok(Some(fair_tree_check(slurm, fairshare)))
    }

    /// Removes the table `job_submit.lua` reads, when one is configured, so that new jobs get
    /// no site factor at submission (`fairshare slurm reset`).
    pub fn remove_submit_table(&self) -> std::io::Result<()> {
        match &self.submit_table {
            Some(path) => match std::fs::remove_file(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                removed => removed,
            },
            None => Ok(()),
        }
    }
}

impl<S: Commands> SchedulerIo for SlurmIo<S> {
    type Error = SlurmError;
    type Job = u64;
    type Charging = Billing;
    const WORDS: Words = WORDS;

    fn cluster(&mut self) -> Result<Cluster<Billing>, SlurmError> {
        let setting = self.check_setup()?;
        let tree = self.read(&SACCTMGR_COMMAND, parse_assoc)?;
        // The configuration's `cluster`, else the one `scontrol show config` names when
        // sacctmgr lists it (a site's several clusters share one slurmdbd).
        let named = (setting.cluster_name).filter(|name| tree.tree_of(name).is_some());
        let cluster = self.cluster.as_deref().or(named.as_deref());
        let clients = clients(&tree, cluster)?;
        let nodes = self.read(nodes_command(self.version.as_ref()), parse_nodes)?;
        let machines = Machines::of(&nodes, &self.partitions).map_err(SlurmError::Machines)?;
        let billing = Billing {
            partitions: self.read(&PARTITIONS_COMMAND, parse_partitions)?,
            max_tres: setting.max_tres,
            usage_factors: self.read(&QOS_COMMAND, parse_qos)?,
        };
        Ok(Cluster {
            clients,
            machines,
            charging: billing,
            half_life: setting.half_life,
            version: self.version.as_ref().map(recorded),
            mapping: Some(self.mapping.name()),
            notes: setting.notes,
        })
    }

    /// `sacct`'s window, then the queue (`squeue` and `sprio`).
    fn jobs(&mut self, from: Time, to: Time, billing: &Billing) -> Result<Jobs, SlurmError> {
        let command = sacct_command(&utc_seconds(from), &utc_seconds(to));
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        let (accounting, rejected) = self.read(&command, |t| Ok(read_accounting(t, billing)))?;
        let skipped = rejected.iter().map(|e| format!("sacct: skipped {e}"));
        Ok(Jobs {
            ran: accounting.allocations,
            skipped: skipped.collect(),
            queue: self.queue()?,
        })
    }

    fn queue(&mut self) -> Result<Vec<QueuedJob>, SlurmError> {
        let jobs = self.read(&SQUEUE_COMMAND, parse_queue)?;
        let held = self.factors()?;
        let holding = |mut job: QueuedJob| {
            job.held = held.get(&job.id).copied();
            job
        };
        Ok(jobs.into_iter().map(|squeue| holding(squeue.job)).collect())
    }

    fn factors(&mut self) -> Result<Held, SlurmError> {
        self.read(&SPRIO_COMMAND, parse_site_factors)
    }

    fn write(&mut self, write: &Write) -> Result<(), SlurmError> {
        let args = scontrol_args(write);
        let command: Vec<&str> = std::iter::once("scontrol")
            .chain(args.iter().map(String::as_str))
            .collect();
        self.slurm.run(&command)?;
        Ok(())
    }

    fn reads(&mut self) -> u32 {
        self.slurm.taken()
    }

    /// The notes on Slurm's settings as they bear on the policy as run (told with the site's),
    /// the warning when Slurm's other weights can cross the factors' gaps, and under Fair Tree
    /// `sshare`'s order beside fairshare's.
    fn review(&mut self, policy: &PolicySpec, plan: &Plan) -> Review {
        let value = |key: &str| setting(&self.config, key);
        let mut settings = unmodelled(value, policy);
        let fairshare_weight = value("PriorityWeightFairShare").unwrap_or("0");
        if self.mapping == Mapping::Replace && fairshare_weight.trim() != "0" {
            settings.push(format!(
                "mapping replace, but Slurm's PriorityWeightFairshare is {fairshare_weight}: Slurm's own fairshare factor still weighs in; set PriorityWeightFairshare=0 (docs/slurm.md)"
            ));
        }
        let mut notes = Vec::new();
        let wanted: Vec<i64> = plan.jobs.iter().filter_map(|j| j.wanted).collect();
        notes.extend(gap_note(&self.others, &wanted, self.weight));
        let check = self.sshare_order(policy, plan).unwrap_or_else(|e| {
            let note = format!("the Fair Tree check could not be made: {}", Chain(&e));
            notes.push(note);
            None
        });
        Review {
            check,
            settings,
            notes,
        }
    }

    /// Rewrites the table `job_submit.lua` reads with the pass's factors, when one is
    /// configured.
    fn after_writing(&mut self, pass: &Pass) -> std::io::Result<()> {
        match &self.submit_table {
            Some(path) => write_atomically(path, &table(&pass.submit, pass.at_s as u64)),
            None => Ok(()),
        }
    }
}

/// What a pass takes from `scontrol show config`.
struct SlurmSetting {
    /// What an administrator should know of the settings.
    notes: Vec<String>,
    /// `PriorityDecayHalfLife`, when set.
    half_life: Option<HalfLife>,
    /// Whether Slurm bills with `PriorityFlags=MAX_TRES`.
    max_tres: bool,
    /// `ClusterName`, whose associations are ranked when `sacctmgr` lists several clusters.
    cluster_name: Option<String>,
}

/// The adapter: a policy applied to one Slurm cluster through `slurm`, as `config` (checked)
/// sets it.
pub fn adapter<S: Commands>(
    slurm: S,
    config: &SlurmConfig,
) -> Result<Controller<SlurmIo<S>>, SettingError> {
    config.check()?;
    let io = SlurmIo {
        slurm: Counted::new(slurm),
        cluster: config.cluster.clone(),
        partitions: config.partitions.clone(),
        mapping: config.mapping()?,
        others: Vec::new(),
        version: None,
        config: String::new(),
        weight: config.shared.weight,
        submit_table: config.submit_table.clone(),
    };
    let setup = config.setup()?;
    Ok(Controller::new(io, setup))
}

/// The arguments of the `scontrol` call that makes `write`.
pub fn scontrol_args(write: &Write) -> Vec<String> {
    let ids: Vec<String> = write.jobs.iter().map(u64::to_string).collect();
    vec![
        "update".into(),
        format!("JobId={}", ids.join(",")),
        format!("SiteFactor={}", write.factor),
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
