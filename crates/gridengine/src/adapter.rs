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
use crate::OutputError;
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::priority::fairshare::FairshareFunction;
use fairshare_reconcile::clients::{Clients, ClientsError, Tree};
use fairshare_reconcile::command::{CommandError, Commands, Counted, Unread};
use fairshare_reconcile::controller::{Cluster, Controller, HalfLife, Jobs, Review, SchedulerIo};
use fairshare_reconcile::history::HistoryError;
use fairshare_reconcile::job::{Allocation, QueueState, QueuedJob};
use fairshare_reconcile::machines::{Machines, MachinesError};
use fairshare_reconcile::pass::{CheckWords, OrderCheck, Words};
use fairshare_reconcile::plan::Plan;
use fairshare_reconcile::writes::Write;
pub use fairshare_reconcile::writes::{Applied, Refusal};
use std::collections::BTreeMap;

/// Why a pass could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GridEngineError {
    /// A command gave no usable answer, or one that could not be read.
    #[error(transparent)]
    Answer(#[from] Unread<OutputError>),
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

impl From<CommandError> for GridEngineError {
    fn from(error: CommandError) -> GridEngineError {
        GridEngineError::Answer(Unread::Command(error))
    }
}

/// Grid Engine's words.
pub const WORDS: Words = Words {
    scheduler: "Grid Engine",
    client: "user",
    accounting: "the accounting file",
    writer: "qalter",
    reader: "qstat",
    set: "priority -p ",
    factor: "-p",
    priority_divisor: PRIO_SCALE,
    new_jobs: false,
};

/// The words of Grid Engine's share-tree check.
const SHARE_TREE: CheckWords = CheckWords {
    order: "Share-tree",
    own: "Grid Engine's own share tree (qstat -ext)",
    measure: "qstat -ext's share-tree tickets are",
    decimals: 0,
};

/// How Grid Engine's own share tree ranks the waiting users of `jobs` beside fairshare's
/// order `fairshare`, the built-in check of `fairshare:function=grid-engine`: each user's
/// share-tree tickets from Grid Engine's last scheduler run (its first pending job's
/// `stickets` times its jobs before it), most first; fairshare's order agrees when the
/// tickets never rise along it (a user's tickets within one ticket count as equal: `qstat`
/// prints whole tickets).
pub fn share_tree_check(jobs: &[GeJob], fairshare: Vec<String>) -> OrderCheck {
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
    let mut scheduler: Vec<(String, f64)> = tickets.into_iter().collect();
    scheduler.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    OrderCheck {
        words: SHARE_TREE,
        scheduler,
        fairshare,
        agrees,
    }
}

/// Grid Engine as the controller reads and writes it: its commands through `commands`,
/// counted, and its accounting file.
pub struct GridEngineIo<C: Commands> {
    commands: Counted<C>,
    accounting: AccountingFile,
    /// Each ranked user's account (its parent in the share tree), as the last pass read them.
    accounts: BTreeMap<String, String>,
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
        read: impl Fn(&str) -> Result<T, OutputError>,
    ) -> Result<T, GridEngineError> {
        Ok(self.commands.read(command, read)?)
    }

    /// Runs `command`, counted.
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        self.commands.run(command)
    }

    /// The clients: the share tree when the site has one, else every user side by side.
    fn tree(&self) -> Result<Tree, GridEngineError> {
        let users = self.read(&USERS_COMMAND, |t| Ok(parse_users(t)))?;
        match self.run(&SHARE_TREE_COMMAND) {
            Ok(text) => {
                let nodes = parse_share_tree(&text).map_err(|error| Unread::Read {
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
    fn listing(&self) -> Result<Vec<GeJob>, GridEngineError> {
        self.read(&QSTAT_COMMAND, parse_qstat)
    }

    /// The account `owner`'s jobs count under ("" for a user the tree does not rank).
    fn account(&self, owner: &str) -> String {
        self.accounts.get(owner).cloned().unwrap_or_default()
    }

    /// A job of `qstat` as the reconcile's queue holds it.
    fn queued(&self, job: &GeJob) -> QueuedJob {
        let state = match (job.running, job.state.contains('E')) {
            (true, _) => QueueState::Running,
            (false, false) => QueueState::Pending,
            (false, true) => QueueState::Other(job.state.clone()),
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
    type Error = GridEngineError;
    type Job = u64;
    /// Grid Engine charges slots × wall-clock here, whatever its settings: nothing to compare.
    type Charging = ();
    const WORDS: Words = WORDS;

    fn cluster(&mut self) -> Result<Cluster<()>, GridEngineError> {
        let scheduler = self.read(&SCHEDULER_COMMAND, parse_scheduler)?;
        self.lever = Some(scheduler.lever());
        let half_life = (scheduler.halftime_h > 0.0).then(|| HalfLife {
            seconds: (scheduler.halftime_h * 3600.0).round() as u64,
            said: format!("Grid Engine's halftime ({} h)", scheduler.halftime_h),
        });
        let tree = self.tree()?;
        self.accounts = (tree.users.iter())
            .map(|(account, user, _)| (user.clone(), account.clone()))
            .collect();
        let clients = Clients::new(tree)?;
        let queues = self.run(&QUEUES_COMMAND)?;
        let hosts = self.run(&HOSTS_COMMAND)?;
        let nodes = parse_nodes(&queues, &hosts).map_err(|error| Unread::Read {
            command: format!(
                "{} and {}",
                QUEUES_COMMAND.join(" "),
                HOSTS_COMMAND.join(" ")
            ),
            error,
        })?;
        let machines = Machines::of(&nodes, &[]).map_err(GridEngineError::Machines)?;
        Ok(Cluster {
            clients,
            machines,
            charging: (),
            half_life,
            version: None,
            mapping: None,
            notes: scheduler.notes(),
        })
    }

    /// The accounting file's records and one `qstat` listing, for both the jobs running and
    /// the queue.
    fn jobs(&mut self, from: Time, _to: Time, _: &()) -> Result<Jobs, GridEngineError> {
        let (records, skipped) =
            self.accounting
                .read(from)
                .map_err(|error| GridEngineError::Accounting {
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
        let ran = ended.chain(running).collect();
        let queue = listed.iter().map(|job| self.queued(job)).collect();
        self.last_listing = listed;
        Ok(Jobs {
            ran,
            skipped,
            queue,
        })
    }

    fn queue(&mut self) -> Result<Vec<QueuedJob>, GridEngineError> {
        let listed = self.listing()?;
        let queue = listed.iter().map(|job| self.queued(job)).collect();
        self.last_listing = listed;
        Ok(queue)
    }

    fn write(&mut self, write: &Write) -> Result<(), GridEngineError> {
        // Setting priorities back to 0 undoes fairshare's writes whatever the weights.
        if self.lever == Some(false) && write.factor != 0 {
            return Err(GridEngineError::Lever);
        }
        let args = qalter_args(write);
        let command: Vec<&str> = std::iter::once("qalter")
            .chain(args.iter().map(String::as_str))
            .collect();
        self.run(&command)?;
        Ok(())
    }

    fn reads(&mut self) -> u32 {
        self.commands.taken()
    }

    /// Under `fairshare:function=grid-engine`, Grid Engine's own share-tree order beside
    /// fairshare's.
    fn review(&mut self, policy: &PolicySpec, plan: &Plan) -> Review {
        let grid_engine = matches!(policy.kind,
            PolicyKind::Fairshare(s) if s.function.is(FairshareFunction::GRID_ENGINE));
        let order = || plan.standings.iter().map(|s| s.user.clone()).collect();
        Review {
            check: grid_engine.then(|| share_tree_check(&self.last_listing, order())),
            ..Review::default()
        }
    }
}

/// The arguments of the `qalter` call that makes `write`.
pub fn qalter_args(write: &Write) -> Vec<String> {
    let ids: Vec<String> = write.jobs.iter().map(u64::to_string).collect();
    vec!["-p".into(), write.factor.to_string(), ids.join(",")]
}

/// The adapter: a policy applied to one Grid Engine cluster through `commands`, as `config`
/// sets it (its keys checked by [`GridEngineConfig::setup`]).
pub fn adapter<C: Commands>(
    commands: C,
    config: &GridEngineConfig,
) -> Result<Controller<GridEngineIo<C>>, SettingError> {
    let setup = config.setup()?;
    let io = GridEngineIo {
        commands: Counted::new(commands),
        accounting: AccountingFile::new(&config.accounting),
        accounts: BTreeMap::new(),
        lever: None,
        last_listing: Vec::new(),
    };
    Ok(Controller::new(io, setup))
}
