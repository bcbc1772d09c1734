//! A replay as three calls: [`ReplayPlan::new`] assembles, once, what every policy of a replay
//! shares — the capacity, the users' shares and account tree, the site's queue limits and the
//! engine's settings — [`ReplayPlan::run`] runs one policy under it (with the results per
//! account), and [`ReplayPlan::summary`] gathers the runs into the document the report draws
//! and `--json` writes. The command line and the tests replay through it, and so can any
//! library caller, so none repeats the assembly.

use crate::load::{recorded_shares, Recorded};
use crate::shares::{account_results, Entitled, ShareSource};
use crate::summary::{ReplaySummary, Setting};
use crate::{LabError, MeasuredTrace, Queues, Replay};
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::priority::fairshare::FairshareFunction;
use fairshare_core::rank::{Accounts, FairshareSettings};
use fairshare_sim::cluster::{
    Capacity, ClusterConfig, JobOutcome, PolicyResult, SchedulerEntry, SchedulerSettings,
};
use fairshare_trace::Format;
use std::path::PathBuf;

/// Where a replay's capacity comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CapacitySource {
    /// An explicit pool in the trace's units, as `cpu=120,mem=80`.
    Pool(String),
    /// A machine list or catalogue file.
    Machines(PathBuf),
    /// The nodes and partitions of the site's Slurm configuration, taken for the machines
    /// when no capacity was given.
    SiteMachines(PathBuf),
    /// A pool of this fraction of the trace's mean requested amount R.
    FractionOfMean(f64),
    /// The trace's own machine (a `.machines` file beside an SWF log, its header's MaxProcs),
    /// else a pool of 1.0 × R.
    Own,
}

/// A note when the scheduler weighs association priorities (`PriorityWeightAssoc`) but the
/// shares give none above 0.
fn unweighed_associations(replay: &Replay, entitled: &Entitled) -> Option<String> {
    let settings = SchedulerSettings {
        rule: replay.rule,
        slurm: replay.slurm.clone(),
    };
    let priority = replay.scheduler.configured(&settings).job_priority()?;
    let given = (entitled.accounts.as_ref()).is_some_and(|t| t.assoc_factors.is_some());
    (priority.assoc_weight != 0.0 && !given).then(|| {
        "PriorityWeightAssoc is set but the shares give no association a priority above 0 (the output of `sacctmgr -P -n show assoc format=Cluster,Account,User,Partition,Share,ParentName,Priority` gives them): every job's association factor is 0".into()
    })
}

/// Where Slurm's backfill cycles fall in a replay of a Slurm dump under `--scheduler slurm`
/// with the backfill on and neither a phase nor the cycles of `slurmctld`'s log given, and a
/// note saying how that was decided: the
/// second past each multiple of `bf_interval` at which most of the jobs the dump says the
/// backfill started began (the earliest such second on a tie), since Slurm's timer runs from
/// `slurmctld`'s start and not from the workload's; `None` as the phase (cycles counted from
/// the first submission) when the dump does not say which jobs the backfill started.
fn backfill_phase(measured: &MeasuredTrace, replay: &Replay) -> Option<(Option<u64>, String)> {
    let slurm = &replay.slurm;
    let applies = replay.scheduler == SchedulerEntry::SLURM && slurm.backfill;
    let placed = slurm.bf_phase_s.is_some() || slurm.bf_cycles.is_some();
    if !applies || placed || measured.format != Format::SACCT {
        return None;
    }
    let interval = slurm.bf_interval_s.max(1);
    let Some(starts) = &measured.input.backfill_starts else {
        return Some((None, "the dump has no Flags column, so Slurm's backfill cycles are counted from the first submission (add Flags to sacct's --format to put them where the jobs the backfill started say they fell)".into()));
    };
    let mut count = vec![0_usize; interval as usize];
    for start in starts {
        count[(start.as_micros() / 1_000_000 % interval) as usize] += 1;
    }
    let most = count.iter().copied().max().filter(|&most| most > 0);
    let Some(most) = most else {
        return Some((None, "the dump's Flags name no job the backfill started, so Slurm's backfill cycles are counted from the first submission".into()));
    };
    let phase = count
        .iter()
        .position(|&c| c == most)
        .expect("the most is a count") as u64;
    let said = format!(
        "Slurm's backfill cycles fall {phase} s past each multiple of bf_interval ({interval} s) from the epoch, where {most} of the {} jobs the dump's Flags say the backfill started began",
        starts.len()
    );
    Some((Some(phase), said))
}

/// What a replay is asked for beyond its trace and its policies.
#[derive(Debug, Clone)]
pub struct ReplayRequest {
    /// The capacity.
    pub capacity: CapacitySource,
    /// The users' entitlements.
    pub shares: ShareSource,
    /// The site's queue file; `None`: a `.queues` file beside the log, if there is one.
    pub queues: Option<PathBuf>,
    /// The engine's settings.
    pub replay: Replay,
}

/// What every policy of one replay runs under.
pub struct ReplayPlan<'w> {
    measured: &'w MeasuredTrace,
    replay: Replay,
    capacity: Capacity,
    /// The capacity's fraction of R, when it is one.
    fraction: Option<f64>,
    /// Where the capacity came from, in words.
    capacity_source: String,
    /// What a reader should doubt of the capacity, when anything.
    capacity_doubt: Option<String>,
    entitled: Entitled,
    accounts: Option<Accounts>,
    queues: Option<Queues>,
    /// The trace's own schedule of the jobs the runs submit.
    recorded: Recorded,
}

impl<'w> ReplayPlan<'w> {
    /// Reads and checks the capacity, the shares and the queues of `request` for `measured`;
    /// `note` hears, as each is read, what was taken from where (the capacity; the shares when
    /// not equal; the queues when there are any), for a person to read before the runs.
    pub fn new(
        measured: &'w MeasuredTrace,
        request: ReplayRequest,
        note: &mut dyn FnMut(String),
    ) -> Result<Self, LabError> {
        let (capacity, fraction, capacity_source, capacity_doubt) =
            capacity(measured, &request.capacity)?;
        note(format!("capacity: {capacity_source}"));
        let cluster = request.replay.cluster.as_deref();
        let entitled = measured.entitled(&request.shares, &capacity, cluster)?;
        if entitled.shares.is_some() {
            note(format!("shares: {}", entitled.source));
        }
        let accounts = entitled.ranked_accounts()?;
        if let Some(missing) = unweighed_associations(&request.replay, &entitled) {
            note(missing);
        }
        let mut replay = request.replay;
        if let Some((phase, said)) = backfill_phase(measured, &replay) {
            replay.slurm.bf_phase_s = phase;
            note(said);
        }
        let queues = measured.queue_limits(request.queues.as_deref())?;
        let recorded = measured.recorded_until(replay.stop, replay.opens)?;
        if let Some(queues) = &queues {
            note(format!("queues: {}", queues.in_words()));
        }
        Ok(ReplayPlan {
            measured,
            replay,
            capacity,
            fraction,
            capacity_source,
            capacity_doubt,
            entitled,
            accounts,
            queues,
            recorded,
        })
    }

    /// Replays `policy`, with each account's results when the shares came with accounts;
    /// `progress` hears the simulated seconds since the first arrival.
    pub fn run(
        &self,
        policy: &PolicySpec,
        progress: &mut dyn FnMut(u64),
    ) -> Result<PolicyResult, LabError> {
        self.replay(policy, progress, None)
    }

    /// [`ReplayPlan::run`], telling `on_job` what became of every job of the trace as the
    /// engine settles it.
    pub fn run_observed(
        &self,
        policy: &PolicySpec,
        progress: &mut dyn FnMut(u64),
        on_job: &mut dyn FnMut(JobOutcome),
    ) -> Result<PolicyResult, LabError> {
        self.replay(policy, progress, Some(on_job))
    }

    /// The run behind [`ReplayPlan::run`] and [`ReplayPlan::run_observed`].
    fn replay(
        &self,
        policy: &PolicySpec,
        progress: &mut dyn FnMut(u64),
        on_job: Option<&mut dyn FnMut(JobOutcome)>,
    ) -> Result<PolicyResult, LabError> {
        let measured = self.measured;
        let mut result = measured.replay(&self.config(policy), progress, on_job)?;
        if let Some(tree) = &self.entitled.accounts {
            result.accounts = account_results(&result, tree, &measured.users);
        }
        Ok(result)
    }

    /// The engine's configuration for `policy`: the measured trace's, with the plan's shares,
    /// account tree, association factors and queues.
    fn config(&self, policy: &PolicySpec) -> ClusterConfig {
        let base = (self.measured).config(&self.replay, policy.clone(), self.capacity.clone());
        let tree = self.entitled.accounts.as_ref();
        ClusterConfig {
            shares: self.entitled.shares.clone(),
            accounts: self.accounts.clone(),
            assoc_factors: tree
                .and_then(|t| t.assoc_factors.clone())
                .unwrap_or_default(),
            queues: (self.queues.as_ref()).map_or_else(Vec::new, |q| q.limits.clone()),
            ..base
        }
    }

    /// The measured trace it replays.
    pub fn measured(&self) -> &MeasuredTrace {
        self.measured
    }

    /// Each trace user's account by the share file, when the shares came with accounts.
    pub fn user_accounts(&self) -> Option<Vec<String>> {
        self.entitled.accounts.as_ref().map(|tree| {
            let all = tree.tree.accounts();
            let users = 0..self.measured.users.len();
            users
                .map(|u| all[tree.account_of(u)].name.clone())
                .collect()
        })
    }

    /// The capacity every run replays on.
    pub fn capacity(&self) -> &Capacity {
        &self.capacity
    }

    /// Notes on `policies` that must give the same results on this replay, and why: with
    /// every user directly under the root (no account tree), Fair Tree, Slurm's classic
    /// function and PBS all order users by decayed usage over shares, so policies that differ
    /// only in `function=` among them are one policy here (the functions whose entry says
    /// [`orders_by_usage_over_shares`](fairshare_core::priority::fairshare::FunctionEntry)).
    /// MetaCentrum's and HTCondor's are not among them: they floor usage (shares / max(usage,
    /// floor)), so users that have used less than the floor tie under them and not under the
    /// others.
    pub fn alike(&self, policies: &[PolicySpec]) -> Vec<String> {
        if self.accounts.is_some() {
            return Vec::new();
        }
        let mut groups: Vec<(FairshareSettings, Vec<&str>)> = Vec::new();
        for policy in policies {
            let PolicyKind::Fairshare(settings) = policy.kind else {
                continue;
            };
            if !settings.function.entry().orders_by_usage_over_shares {
                continue;
            }
            let key = FairshareSettings {
                function: FairshareFunction::FAIR_TREE,
                ..settings
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, names)) => names.push(&policy.name),
                None => groups.push((key, vec![&policy.name])),
            }
        }
        (groups.into_iter())
            .filter(|(_, names)| names.len() > 1)
            .map(|(_, names)| {
                format!(
                    "{} give the same results here: with every user directly under the root, each \
                     fairshare function orders users by decayed usage over shares alone (--shares \
                     with accounts tells them apart)",
                    names.join(", ")
                )
            })
            .collect()
    }

    /// The replay's document: what was read, the setting, and `results` (one per policy, in
    /// the order they are to be shown), with the recorded schedule's dominant shares of the
    /// first result's top users at its sample times when the trace records starts and was
    /// kept in memory (a trace streamed from disk is not read once more for them).
    pub fn summary(&self, results: Vec<PolicyResult>) -> Result<ReplaySummary, LabError> {
        let measured = self.measured;
        let mut recorded = self.recorded.clone();
        let runs = measured.recorded_runs().filter(|_| recorded.started > 0);
        if let (Some(runs), Some(first)) = (runs, results.first()) {
            let timeline = &first.timeline;
            let ids: Vec<String> = timeline
                .dominant_share
                .iter()
                .map(|s| s.id.clone())
                .collect();
            recorded.shares = recorded_shares(
                runs,
                &measured.users,
                &ids,
                measured.origin(),
                &timeline.times_s,
                &self.capacity.total(),
            );
        }
        let (capacity, source) = (&self.capacity, &self.capacity_source);
        let base = measured.setting(&self.replay, capacity, self.fraction, source);
        let setting = Setting {
            shares: match self.entitled.shares {
                Some(_) => self.entitled.source.clone(),
                None => String::new(),
            },
            queues: (self.queues.as_ref()).map_or_else(String::new, |q| q.in_words()),
            capacity_doubt: self.capacity_doubt.clone(),
            recorded,
            ..base
        };
        Ok(ReplaySummary {
            input: measured.input.clone(),
            setting,
            policies: results,
        })
    }
}

/// Refuses a list of policies that names one twice: the runs, their rows and their tables are
/// told apart by the policy as written.
pub fn distinct(policies: &[PolicySpec]) -> Result<(), LabError> {
    let mut seen = std::collections::HashSet::new();
    match policies.iter().find(|p| !seen.insert(p.name.as_str())) {
        Some(twice) => Err(LabError::Unusable(format!(
            "policy {:?} is given twice: runs are told apart by their policy, so give each once",
            twice.name
        ))),
        None => Ok(()),
    }
}

/// The capacity of `source`, its fraction of R when it is one, where it came from in words,
/// and what a reader should doubt of it.
fn capacity(
    measured: &MeasuredTrace,
    source: &CapacitySource,
) -> Result<(Capacity, Option<f64>, String, Option<String>), LabError> {
    Ok(match source {
        CapacitySource::Pool(spec) => {
            let words = format!("--capacity {spec}");
            (measured.pool(spec)?, None, words, None)
        }
        CapacitySource::Machines(path) => {
            let words = format!("--machines {}", path.display());
            (measured.machines(path)?, None, words, None)
        }
        CapacitySource::SiteMachines(path) => {
            let words = format!("the nodes of the Slurm configuration {}", path.display());
            (measured.machines(path)?, None, words, None)
        }
        CapacitySource::FractionOfMean(f) => {
            let words = format!("--capacity-fraction {f} of the mean demand R");
            (measured.pool_of_mean(*f)?, Some(*f), words, None)
        }
        CapacitySource::Own => match measured.own_machine()? {
            Some(own) => (own.capacity, None, own.source, own.doubt),
            None => {
                let words = "the trace says nothing about its machine: 1.0 × the mean demand R";
                (measured.pool_of_mean(1.0)?, Some(1.0), words.into(), None)
            }
        },
    })
}
