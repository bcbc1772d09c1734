//! Grid Engine under fairshare's [`Controller`]: Grid Engine's readers and writer ([`GridEngineIo`],
//! the [`SchedulerIo`] of `qstat`, `qconf`, `qhost`, the accounting file and `qalter`) and
//! the check that a POSIX priority orders jobs under the scheduler's weights.
//!
//! The reconcile's factor is a job's POSIX priority here: the plan's factors, from 1 up to
//! the weight (at most 1024), are written with `qalter -p N job,job,…`. A job at priority 0
//! is one fairshare has not ranked; a job whose owner lowered its priority below 0 (`qsub -p
//! -10`: only an operator may raise one) is left as its owner set it, and so is a job on hold
//! or in error. `reset` sets every priority fairshare wrote (above 0) back to 0, Grid Engine's
//! default, so that every job is as it was submitted.

use crate::accounting::AccountingFile;
use crate::config::{GridEngineConfig, SettingError};
use crate::hosts::{parse_nodes, HOSTS_COMMAND, QUEUES_COMMAND};
use crate::queue::{parse_qstat, GeJob, PRIO_SCALE, QSTAT_COMMAND};
use crate::settings::{parse_scheduler, SCHEDULER_COMMAND};
use crate::tree::{
    flat_tree, parse_share_tree, parse_users, share_tree, ShareTreeError, NO_SHARE_TREE,
    SHARE_TREE_COMMAND, USERS_COMMAND,
};
use crate::ReadError;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::priority::fairshare::FairshareFunction;
use fairshare_reconcile::clients::{Clients, ClientsError, Tree};
use fairshare_reconcile::command::{CommandError, Commands, Counted, Unread};
use fairshare_reconcile::controller::{remembering, Controller, Held, SchedulerIo, Setup, Site};
use fairshare_reconcile::history::{HistoryError, Step};
use fairshare_reconcile::job::{Allocation, JobState, QueuedJob};
use fairshare_reconcile::machines::{Machines, MachinesError};
use fairshare_reconcile::plan::{Plan, PlanSettings};
use fairshare_reconcile::state::Usage;
use fairshare_reconcile::watch::Passes;
use fairshare_reconcile::writes::Write;
pub use fairshare_reconcile::writes::{Applied, Refusal};
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// The accounting file could not be read.
    #[error("the accounting file {path}")]
    Accounting {
        /// The file.
        path: String,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// The share tree makes no tree.
    #[error(transparent)]
    ShareTree(#[from] ShareTreeError),
    /// The users cannot be ranked.
    #[error(transparent)]
    Clients(#[from] ClientsError),
    /// The hosts cannot make a cluster.
    #[error("the cluster's hosts")]
    Machines(#[source] MachinesError),
    /// The policy cannot rank this cluster's history.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// `weight_priority` is 0, so a POSIX priority orders no job: nothing is written.
    #[error("not written: Grid Engine's weight_priority is 0, so a job's POSIX priority does not enter its priority; set weight_priority 1, weight_urgency 0 and weight_ticket 0 (qconf -msconf; docs/gridengine.md)")]
    Lever,
}

impl From<Unread<ReadError>> for AdapterError {
    fn from(unread: Unread<ReadError>) -> AdapterError {
        match unread {
            Unread::Command(e) => AdapterError::Command(e),
            Unread::Read { command, error } => AdapterError::Read { command, error },
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
    /// Whether the history was (re)built from the accounting file's window in this pass, and
    /// why.
    pub rebuilt: Option<String>,
    /// What the history took in.
    pub step: Step,
    /// Jobs running as the history holds them.
    pub running: usize,
    /// Every user's usage.
    pub usage: Vec<Usage>,
    /// The plan.
    pub plan: Plan,
    /// Things an administrator should know (a setting of Grid Engine, users left out).
    pub notes: Vec<String>,
    /// Grid Engine commands run to read the cluster.
    pub reads: u32,
    /// Under `fairshare:function=grid-engine`, Grid Engine's own share-tree order beside
    /// fairshare's.
    pub share_tree: Option<ShareTreeCheck>,
}

/// How Grid Engine's own share tree ranks the waiting users beside fairshare's order: the
/// built-in check of `fairshare:function=grid-engine`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareTreeCheck {
    /// The waiting users with the share-tree tickets Grid Engine's last scheduler run gave
    /// them (their first pending job's `stickets` times their jobs before it), most first.
    pub gridengine: Vec<(String, f64)>,
    /// The same users in fairshare's order.
    pub fairshare: Vec<String>,
    /// Whether fairshare's order is one of Grid Engine's: along it, the tickets never rise.
    pub agrees: bool,
}

impl ShareTreeCheck {
    /// The check of fairshare's order `fairshare` against Grid Engine's tickets of `jobs`
    /// (a user's tickets within one ticket count as equal: `qstat` prints whole tickets).
    pub fn new(jobs: &[GeJob], fairshare: Vec<String>) -> ShareTreeCheck {
        let mut running: BTreeMap<&str, f64> = BTreeMap::new();
        for job in jobs.iter().filter(|j| j.running) {
            *running.entry(&job.owner).or_default() += 1.0;
        }
        let mut tickets: BTreeMap<String, f64> = BTreeMap::new();
        for job in jobs.iter().filter(|j| j.orderable()) {
            let Some(t) = job.share_tickets else { continue };
            let before = running.get(job.owner.as_str()).copied().unwrap_or(0.0);
            let user = tickets.entry(job.owner.clone()).or_default();
            *user = user.max(t * (before + 1.0));
        }
        let along: Vec<f64> = (fairshare.iter())
            .filter_map(|user| tickets.get(user).copied())
            .collect();
        let agrees = along.windows(2).all(|w| w[1] <= w[0] + 1.0 + 1e-9);
        let mut gridengine: Vec<(String, f64)> = tickets.into_iter().collect();
        gridengine.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ShareTreeCheck {
            gridengine,
            fairshare,
            agrees,
        }
    }
}

/// Grid Engine as the controller reads and writes it: its commands through `commands`,
/// counted, and its accounting file.
pub struct GridEngineIo<C: Commands> {
    commands: Counted<C>,
    accounting: AccountingFile,
    /// Each ranked user's account (its parent in the share tree), as the last pass read them.
    accounts: BTreeMap<String, String>,
    /// The jobs `qstat` listed for the accounting's running jobs, kept for the queue of the
    /// same pass: one listing for both.
    listed: Option<Vec<GeJob>>,
    /// Whether the scheduler's weights let a POSIX priority order jobs, as the last pass read
    /// them (`None`: not read, as by `reset`): without, every write but a reset's is refused.
    lever: Option<bool>,
    /// The jobs of the last listing, for the share-tree check.
    last_listing: Vec<GeJob>,
}

impl<C: Commands> GridEngineIo<C> {
    /// Runs `command` and reads its output with `read`.
    fn read<T>(
        &self,
        command: &[&str],
        read: impl Fn(&str) -> Result<T, ReadError>,
    ) -> Result<T, AdapterError> {
        Ok(self.commands.read(command, read)?)
    }

    /// Runs `command`, counted.
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        self.commands.run(command)
    }

    /// The clients: the share tree when the site has one, else every user side by side.
    fn tree(&self) -> Result<Tree, AdapterError> {
        let users = self.read(&USERS_COMMAND, |t| Ok(parse_users(t)))?;
        match self.run(&SHARE_TREE_COMMAND) {
            Ok(text) => {
                let nodes = parse_share_tree(&text).map_err(|error| AdapterError::Read {
                    command: SHARE_TREE_COMMAND.join(" "),
                    error,
                })?;
                Ok(share_tree(&nodes, &users)?)
            }
            Err(CommandError::Failed { stderr, .. }) if stderr.contains(NO_SHARE_TREE) => {
                Ok(flat_tree(&users))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The jobs `qstat` lists now.
    fn listing(&self) -> Result<Vec<GeJob>, AdapterError> {
        self.read(&QSTAT_COMMAND, parse_qstat)
    }

    /// The account `owner`'s jobs count under ("" for a user the tree does not rank).
    fn account(&self, owner: &str) -> String {
        self.accounts.get(owner).cloned().unwrap_or_default()
    }

    /// A job of `qstat` as the reconcile's queue holds it.
    fn queued(&self, job: &GeJob) -> QueuedJob {
        let state = match (job.running, job.state.contains('E')) {
            (true, _) => JobState::Running,
            (false, false) => JobState::Pending,
            (false, true) => JobState::Other(job.state.clone()),
        };
        let orderable = job.orderable() && job.posix_priority >= 0;
        QueuedJob {
            id: job.id,
            user: job.owner.clone(),
            account: self.account(&job.owner),
            partition: job.queue.clone(),
            state,
            priority: (job.prio * PRIO_SCALE as f64).round() as u64,
            held: orderable.then_some(job.posix_priority),
            submit: job.submit.or(job.start).unwrap_or(Time::ZERO),
            start: job.start.filter(|_| job.running),
            demand: vec![f64::from(job.slots), 0.0, 0.0],
            nodes: 1,
            limit: None,
        }
    }

    /// An allocation of `slots` to `owner`'s job `id` in `queue`.
    fn allocation(
        &self,
        id: u64,
        owner: &str,
        queue: &str,
        times: [Time; 2],
        end: Option<Time>,
        slots: u32,
    ) -> Allocation {
        let slots = f64::from(slots);
        Allocation {
            id,
            user: owner.to_string(),
            account: self.account(owner),
            partition: queue.to_string(),
            submit: times[0],
            start: times[1],
            end,
            demand: vec![slots, 0.0, 0.0],
            nodes: Some(1),
            qos: String::new(),
            billing: slots,
        }
    }
}

impl<C: Commands> SchedulerIo for GridEngineIo<C> {
    type Error = AdapterError;
    /// Grid Engine charges slots × wall-clock here, whatever its settings: nothing to compare.
    type Charging = ();
    const ACCOUNTING: &'static str = "the accounting file";

    fn site(&mut self, policy: &PolicySpec) -> Result<Site<()>, AdapterError> {
        self.listed = None;
        let scheduler = self.read(&SCHEDULER_COMMAND, parse_scheduler)?;
        self.lever = Some(scheduler.lever());
        let mut notes = scheduler.notes();
        let (policy, note) = match scheduler.halftime_h {
            h if h > 0.0 => remembering(
                policy,
                (h * 3600.0).round() as u64,
                &format!("Grid Engine's halftime ({h} h)"),
            ),
            _ => (policy.clone(), None),
        };
        notes.extend(note);
        let tree = self.tree()?;
        self.accounts = (tree.users.iter())
            .map(|(account, user, _)| (user.clone(), account.clone()))
            .collect();
        let clients = Clients::new(tree)?;
        let queues = self.run(&QUEUES_COMMAND)?;
        let hosts = self.run(&HOSTS_COMMAND)?;
        let nodes = parse_nodes(&queues, &hosts).map_err(|error| AdapterError::Read {
            command: format!(
                "{} and {}",
                QUEUES_COMMAND.join(" "),
                HOSTS_COMMAND.join(" ")
            ),
            error,
        })?;
        let machines = Machines::of(&nodes, &[]).map_err(AdapterError::Machines)?;
        Ok(Site {
            clients,
            machines,
            charging: (),
            policy,
            notes,
        })
    }

    fn accounting(
        &mut self,
        from: Time,
        _to: Time,
        _: &(),
    ) -> Result<(Vec<Allocation>, Vec<String>), AdapterError> {
        let (records, skipped) =
            self.accounting
                .read(from)
                .map_err(|error| AdapterError::Accounting {
                    path: self.accounting.path().display().to_string(),
                    error,
                })?;
        let listed = self.listing()?;
        let ended = records.iter().map(|r| {
            self.allocation(
                r.id,
                &r.owner,
                &r.queue,
                [r.submit, r.start],
                Some(r.end),
                r.slots,
            )
        });
        let running = listed.iter().filter(|j| j.running).filter_map(|j| {
            let start = j.start?;
            Some(self.allocation(j.id, &j.owner, &j.queue, [start, start], None, j.slots))
        });
        let allocations = ended.chain(running).collect();
        self.listed = Some(listed);
        Ok((allocations, skipped))
    }

    fn queue(&mut self) -> Result<Vec<QueuedJob>, AdapterError> {
        let listed = match self.listed.take() {
            Some(listed) => listed,
            None => self.listing()?,
        };
        let queue = listed.iter().map(|job| self.queued(job)).collect();
        self.last_listing = listed;
        Ok(queue)
    }

    fn factors(&mut self) -> Result<Held, AdapterError> {
        let listed = self.listing()?;
        let held = listed.iter().map(|job| self.queued(job));
        Ok(held.filter_map(|job| Some((job.id, job.held?))).collect())
    }

    fn write(&mut self, write: &Write) -> Result<(), AdapterError> {
        // Setting priorities back to 0 undoes fairshare's writes whatever the weights.
        if self.lever == Some(false) && write.site_factor != 0 {
            return Err(AdapterError::Lever);
        }
        let args = qalter_args(write);
        let command: Vec<&str> = std::iter::once("qalter")
            .chain(args.iter().map(String::as_str))
            .collect();
        self.run(&command)?;
        Ok(())
    }
}

/// The arguments of the `qalter` call that makes `write`.
pub fn qalter_args(write: &Write) -> Vec<String> {
    let ids: Vec<String> = write.jobs.iter().map(u64::to_string).collect();
    vec!["-p".into(), write.site_factor.to_string(), ids.join(",")]
}

/// The adapter: a policy applied to one Grid Engine cluster.
pub struct Adapter<C: Commands> {
    controller: Controller<GridEngineIo<C>>,
}

impl<C: Commands> Adapter<C> {
    /// An adapter of `config` (checked) talking to Grid Engine through `commands`.
    pub fn new(commands: C, config: &GridEngineConfig) -> Result<Adapter<C>, SettingError> {
        config.check()?;
        let io = GridEngineIo {
            commands: Counted::new(commands),
            accounting: AccountingFile::new(&config.accounting),
            accounts: BTreeMap::new(),
            listed: None,
            lever: None,
            last_listing: Vec::new(),
        };
        let setup = Setup {
            policy: config.policy()?,
            plan: PlanSettings {
                weight: config.weight,
                partitions: Vec::new(),
                per_call: config.jobs_per_call,
                ranked_runs: config.ranked_runs,
                ends_at_limits: false,
            },
            window_s: config.window_s,
            since: config.since()?,
        };
        Ok(Adapter {
            controller: Controller::new(io, setup),
        })
    }

    /// One pass at `now`: reads the cluster, brings the history to `now` and plans; under
    /// `fairshare:function=grid-engine`, Grid Engine's own share-tree order beside fairshare's.
    pub fn pass(&mut self, now: Time) -> Result<Reconciliation, AdapterError> {
        self.controller.io().commands.taken();
        let pass = self.controller.pass(now)?;
        let done = pass.reconciled;
        let grid_engine = matches!(self.controller.policy().kind,
            PolicyKind::Fairshare(s) if s.function.is(FairshareFunction::GRID_ENGINE));
        let share_tree = grid_engine.then(|| {
            let order = done.plan.standings.iter().map(|s| s.user.clone()).collect();
            ShareTreeCheck::new(&self.controller.io().last_listing, order)
        });
        Ok(Reconciliation {
            at_s: now.as_secs_f64(),
            policy: pass.policy,
            rebuilt: pass.rebuilt,
            step: done.step,
            running: done.running,
            usage: done.usage,
            plan: done.plan,
            notes: done.notes,
            reads: self.controller.io().commands.taken(),
            share_tree,
        })
    }

    /// Writes `plan`'s priorities, each refused call retried once, then reads them back.
    pub fn apply(&mut self, plan: &Plan) -> Applied {
        self.controller.apply(plan)
    }

    /// The writes that set every priority fairshare wrote (above 0) back to 0: `fairshare
    /// gridengine reset`.
    pub fn reset_plan(&mut self) -> Result<Plan, AdapterError> {
        self.controller.reset_plan()
    }
}

impl<C: Commands> Passes for Adapter<C> {
    type Pass = Reconciliation;
    type Error = AdapterError;

    fn pass(&mut self, now: Time) -> Result<Reconciliation, AdapterError> {
        Adapter::pass(self, now)
    }

    fn apply(&mut self, pass: &Reconciliation) -> Applied {
        Adapter::apply(self, &pass.plan)
    }

    fn notes(pass: &Reconciliation) -> &[String] {
        &pass.notes
    }
}
