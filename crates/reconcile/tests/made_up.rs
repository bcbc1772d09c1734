//! The reconcile's seam, proven the way the batch engine's scheduler seam is: an adapter
//! written here, outside the crate, for a scheduler that does not exist ("gridq"), reads that
//! scheduler's recorded outputs into the neutral types and reconciles through the crate alone;
//! as a whole adapter, it is those readers and its `SchedulerIo` ([`GridqIo`]) under the
//! crate's `Controller`. Nothing of Slurm is linked: if a second scheduler's adapter needed any of it, this would
//! not compile.

use fairshare_core::model::{AccountTree, Time};
use fairshare_core::policy::PolicySpec;
use fairshare_reconcile::clients::{Clients, Tree};
use fairshare_reconcile::controller::{Cluster, Controller, Held, Jobs, SchedulerIo, Setup};
use fairshare_reconcile::history::HistoryError;
use fairshare_reconcile::job::{Allocation, QueueState, QueuedJob};
use fairshare_reconcile::machines::{Machines, SchedulerNode};
use fairshare_reconcile::pass::Words;
use fairshare_reconcile::plan::PlanSettings;
use fairshare_reconcile::state::{Reconciled, State};
use fairshare_reconcile::watch::{
    watch, Action, Backoff, Clock, Reconciler, Told, Watched, Watcher,
};
use fairshare_reconcile::writes::Write;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// `gridq accounts`: `account NAME PARENT SHARES` and `user NAME ACCOUNT SHARES`.
const ACCOUNTS: &str = "\
account physics root 1
account chemistry root 1
user ana physics 1
user ben physics 1
user cy chemistry 1
";

/// `gridq nodes`: `NAME CPUS MEMORY_MB GPUS`.
const NODES: &str = "\
g01 8 16384 0
g02 8 16384 0
";

/// `gridq history`: `ID USER ACCOUNT START END CPUS` (unix seconds; `-`: still running).
/// Ana ran all 16 CPUs for ten hours yesterday.
const HISTORY: &str = "\
1 ana physics 1699990000 1700026000 16
";

/// `gridq queue`: `ID USER ACCOUNT STATE SUBMIT CPUS` (`wait` or `run`). Zed has no account.
const QUEUE: &str = "\
101 ana physics wait 1700090000 4
102 ben physics wait 1700090100 4
103 cy chemistry wait 1700090200 4
104 zed physics wait 1700090300 4
";

/// `gridq factors`: `ID FACTOR`, the factor each waiting job holds.
const NO_FACTORS: &str = "\
101 0
102 0
103 0
104 0
";

/// When the reconcile runs.
const NOW_S: u64 = 1_700_100_000;

/// The whitespace-separated columns of every line of `text`.
fn rows(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines().map(|line| line.split_whitespace().collect())
}

/// Seconds as the reconcile's time.
fn secs(s: u64) -> Time {
    Time::from_micros(s * 1_000_000)
}

/// gridq's account tree.
fn tree(text: &str) -> Tree {
    let mut accounts = AccountTree::new("root");
    let mut users = Vec::new();
    for row in rows(text) {
        let parent = accounts.index_of(row[2]).expect("parent listed first");
        let shares: f64 = row[3].parse().unwrap();
        match row[0] {
            "account" => {
                accounts.add(row[1], parent, shares).unwrap();
            }
            _ => {
                let at = accounts.add_user(row[1], parent, shares).unwrap();
                users.push((row[2].to_string(), row[1].to_string(), at));
            }
        }
    }
    Tree {
        cluster: "gridq".into(),
        accounts,
        users,
        left_out: Vec::new(),
    }
}

/// gridq's nodes.
fn nodes(text: &str) -> Vec<SchedulerNode> {
    rows(text)
        .map(|row| SchedulerNode {
            name: row[0].into(),
            cpus: row[1].parse().unwrap(),
            memory_kb: row[2].parse::<u64>().unwrap() * 1024,
            gpus: row[3].parse().unwrap(),
            features: Vec::new(),
            partitions: Vec::new(),
        })
        .collect()
}

/// gridq's history, each job charged its CPUs per second.
fn history(text: &str) -> Vec<Allocation> {
    rows(text)
        .map(|row| {
            let cpus: f64 = row[5].parse().unwrap();
            Allocation {
                id: row[0].parse().unwrap(),
                user: row[1].into(),
                account: row[2].into(),
                partition: String::new(),
                submit: secs(row[3].parse().unwrap()),
                start: secs(row[3].parse().unwrap()),
                end: row[4].parse().ok().map(secs),
                demand: vec![cpus, 0.0, 0.0],
                nodes: None,
                qos: String::new(),
                billing: cpus,
            }
        })
        .collect()
}

/// gridq's queue, each waiting job holding its factor in `held`.
fn queue(text: &str, held: &BTreeMap<u64, i64>) -> Vec<QueuedJob> {
    rows(text)
        .map(|row| QueuedJob {
            id: row[0].parse().unwrap(),
            user: row[1].into(),
            account: row[2].into(),
            partition: String::new(),
            state: match row[3] {
                "wait" => QueueState::Pending,
                "run" => QueueState::Running,
                other => QueueState::Other(other.into()),
            },
            priority: 0,
            held: held.get(&row[0].parse().unwrap()).copied(),
            submit: secs(row[4].parse().unwrap()),
            start: None,
            demand: vec![row[5].parse().unwrap(), 0.0, 0.0],
            nodes: 1,
            limit: None,
        })
        .collect()
}

/// gridq's factors.
fn factors(text: &str) -> BTreeMap<u64, i64> {
    (rows(text).map(|row| (row[0].parse().unwrap(), row[1].parse().unwrap()))).collect()
}

/// The factors `writes` leave, from `held`: what gridq would list after the adapter wrote them.
fn after(mut held: BTreeMap<u64, i64>, writes: &[Write]) -> BTreeMap<u64, i64> {
    for write in writes {
        held.extend(write.jobs.iter().map(|&id| (id, write.factor)));
    }
    held
}

/// Each write as its factor and its jobs.
fn written(writes: &[Write]) -> Vec<(i64, Vec<u64>)> {
    (writes.iter())
        .map(|w| (w.factor, w.jobs.clone()))
        .collect()
}

/// The adapter: gridq's clients and machines, a Fair Tree history from a week back.
fn state() -> State {
    let policy: PolicySpec = "fairshare:function=fair-tree".parse().unwrap();
    let clients = Clients::new(tree(ACCOUNTS)).unwrap();
    let machines = Machines::of(&nodes(NODES), &[]).unwrap();
    State::new(&policy, clients, machines, secs(NOW_S - 7 * 86_400)).unwrap()
}

/// A weight of 300 over three runs gives 300, 200, 100.
fn settings() -> PlanSettings {
    PlanSettings {
        weight: 300,
        partitions: Vec::new(),
        per_call: 10,
        ranked_runs: 100,
        ends_at_limits: false,
    }
}

/// One reconcile of the recorded queue, holding `held`, given what the accounting lists since
/// the last reconcile (jobs that ended since, or still run).
fn reconcile(state: &mut State, held: &BTreeMap<u64, i64>) -> Reconciled {
    let jobs = queue(QUEUE, held);
    let since = state.history.now();
    let allocations: Vec<Allocation> = (history(HISTORY).into_iter())
        .filter(|a| a.end.is_none_or(|end| end >= since))
        .collect();
    (state.reconcile(&allocations, &jobs, secs(NOW_S), &settings())).unwrap()
}

#[test]
fn a_made_up_scheduler_reconciles_through_the_core_alone() {
    let mut state = state();
    let held = factors(NO_FACTORS);
    let first = reconcile(&mut state, &held);
    assert_eq!((first.step.started, first.step.ended), (1, 1));
    // Chemistry used nothing, so cy leads; within physics, ben (nothing used) before ana.
    let order: Vec<&str> = (first.plan.standings.iter())
        .map(|s| s.user.as_str())
        .collect();
    assert_eq!(order, ["cy", "ben", "ana"]);
    assert_eq!(
        written(&first.plan.writes),
        [(100, vec![101]), (200, vec![102]), (300, vec![103])]
    );
    let zed = first.plan.jobs.iter().find(|j| j.id == 104).unwrap();
    assert_eq!(zed.wanted, None, "a job of no client is left alone");
    assert_eq!(
        zed.note.as_deref(),
        Some("no such association in the account tree")
    );
    let ana = first.usage.iter().find(|u| u.user == "ana").unwrap();
    assert_eq!(ana.counted, 16.0 * 36_000.0, "CPU-seconds, undecayed");

    // gridq now holds what was written: the next reconcile writes nothing.
    let second = reconcile(&mut state, &after(held, &first.plan.writes));
    assert!(second.plan.writes.is_empty(), "{:?}", second.plan.writes);
    assert_eq!(second.step, Default::default(), "nothing charged twice");
}

/// A clock that only records how long the loop would wait; the time it shows is shared with
/// the controller, whose failures take time.
struct Recording {
    now: Rc<Cell<Instant>>,
    waits: Vec<Duration>,
}

impl Clock for Recording {
    fn now(&self) -> Instant {
        self.now.get()
    }

    fn wait_until(&mut self, until: Instant, _stop: &AtomicBool) {
        let now = self.now.get();
        self.waits.push(until.saturating_duration_since(now));
        self.now.set(until.max(now));
    }
}

/// A clock that has waited for nothing yet, showing the time `now`.
fn recording(now: &Rc<Cell<Instant>>) -> Recording {
    Recording {
        now: Rc::clone(now),
        waits: Vec::new(),
    }
}

/// How long a failed reconcile takes: a command that does not answer, killed at its timeout.
const TIMED_OUT: Duration = Duration::from_secs(30);

/// gridq's controller: down for the first `down` reconciles, then up; the loop stops after
/// `passes` good reconciles.
struct Gridq {
    now: Rc<Cell<Instant>>,
    down: u32,
    passes: u32,
    state: State,
    held: BTreeMap<u64, i64>,
    errors: Vec<(String, Duration)>,
}

impl Gridq {
    /// gridq on the clock showing `now`, down for `down` reconciles, stopping after `passes`
    /// good ones.
    fn new(now: &Rc<Cell<Instant>>, down: u32, passes: u32) -> Gridq {
        Gridq {
            now: Rc::clone(now),
            down,
            passes,
            state: state(),
            held: factors(NO_FACTORS),
            errors: Vec::new(),
        }
    }
}

impl Reconciler for Gridq {
    type Error = String;

    fn reconcile(&mut self) -> Result<Action, String> {
        if self.down > 0 {
            self.down -= 1;
            self.now.set(self.now.get() + TIMED_OUT);
            return Err("gridq: controller unreachable".into());
        }
        let reconciled = reconcile(&mut self.state, &self.held);
        self.held = after(std::mem::take(&mut self.held), &reconciled.plan.writes);
        self.passes -= 1;
        Ok(match self.passes {
            0 => Action::Stop,
            _ => Action::Requeue(Duration::from_secs(60)),
        })
    }

    fn error_policy(&mut self, error: String, backoff: Duration) -> Action {
        self.errors.push((error, backoff));
        Action::Requeue(backoff)
    }
}

#[test]
fn the_loop_backs_off_after_failures_and_requeues_after_success() {
    let now = Rc::new(Cell::new(Instant::now()));
    let mut gridq = Gridq::new(&now, 3, 2);
    let mut clock = recording(&now);
    let backoff = Backoff::for_interval(Duration::from_secs(60));
    let watched = watch(&mut gridq, backoff, &AtomicBool::new(false), &mut clock);
    assert_eq!(
        watched,
        Watched {
            reconciles: 5,
            failures: 3
        }
    );
    let secs: Vec<u64> = clock.waits.iter().map(Duration::as_secs).collect();
    assert_eq!(
        secs,
        [10, 20, 40, 60],
        "backoff from the end of each failed reconcile (each took 30 s), then the interval"
    );
    assert_eq!(gridq.errors.len(), 3);
    assert_eq!(gridq.errors[0].0, "gridq: controller unreachable");
    assert_eq!(gridq.held[&103], 300, "the factors were written once up");
}

#[test]
fn a_stop_already_asked_for_reconciles_nothing() {
    let now = Rc::new(Cell::new(Instant::now()));
    let mut gridq = Gridq::new(&now, 0, 5);
    let mut clock = recording(&now);
    let stop = AtomicBool::new(true);
    let backoff = Backoff::for_interval(Duration::from_secs(60));
    let watched = watch(&mut gridq, backoff, &stop, &mut clock);
    assert_eq!(watched, Watched::default());
    assert!(clock.waits.is_empty());
}

/// Jobs the accounting lists after the history passed their start cost the policy's memory
/// the running before it, counted so that the adapter warns only when that is worth a word;
/// a policy without a memory loses nothing.
#[test]
fn jobs_listed_late_count_the_running_left_uncharged() {
    let late = |state: &mut State| {
        let now = state.history.now().as_micros() / 1_000_000;
        let job = |id: u64, start: u64, end: Option<u64>| Allocation {
            id,
            user: "ben".into(),
            account: "physics".into(),
            partition: String::new(),
            submit: secs(start),
            start: secs(start),
            end: end.map(secs),
            demand: vec![1.0, 0.0, 0.0],
            nodes: None,
            qos: String::new(),
            billing: 1.0,
        };
        // One still running, started 100 s ago; one that ran from 300 to 200 s ago, unseen.
        let listed = [
            job(901, now - 100, None),
            job(902, now - 300, Some(now - 200)),
        ];
        let jobs = queue(QUEUE, &factors(NO_FACTORS));
        let at = secs(now + 10);
        state
            .reconcile(&listed, &jobs, at, &settings())
            .unwrap()
            .step
    };
    let step = late(&mut state());
    assert_eq!((step.clamped, step.missed), (1, 1));
    assert_eq!(step.uncharged_ms, 200_000);
    let clients = Clients::new(tree(ACCOUNTS)).unwrap();
    let machines = Machines::of(&nodes(NODES), &[]).unwrap();
    let drf: PolicySpec = "drf".parse().unwrap();
    let mut stateless = State::new(&drf, clients, machines, secs(NOW_S - 86_400)).unwrap();
    let step = late(&mut stateless);
    assert_eq!((step.clamped, step.missed, step.uncharged_ms), (1, 1, 0));
}

/// What gridq's configuration makes every pass say.
const CONFIGURATION_NOTE: &str = "gridq's own fairshare is still on";

/// gridq under the controller: the adapter is its readers above and this, its
/// [`SchedulerIo`]; the factors it holds follow the writes it takes.
struct GridqIo {
    held: BTreeMap<u64, i64>,
    /// How many more times gridq is down when asked for its cluster.
    down: u32,
    /// Whether `gridq write` refuses.
    refusing: bool,
    /// The accounting windows asked for, in unix seconds.
    asked: Vec<(u64, u64)>,
    /// The commands run since the count was last taken.
    reads: u32,
}

#[derive(Debug, thiserror::Error)]
enum GridqError {
    #[error("gridq refused: {0}")]
    Refused(String),
    #[error("gridq: controller unreachable")]
    Down,
    #[error(transparent)]
    History(#[from] HistoryError),
}

impl SchedulerIo for GridqIo {
    type Error = GridqError;
    type Job = u64;
    type Charging = ();
    const WORDS: Words = Words {
        scheduler: "gridq",
        client: "user",
        accounting: "gridq history",
        writer: "gridq write",
        reader: "gridq factors",
        set: "factor ",
        factor: "Factor",
        priority_divisor: 1,
        new_jobs: false,
    };

    fn cluster(&mut self) -> Result<Cluster<()>, GridqError> {
        self.reads += 1;
        if self.down > 0 {
            self.down -= 1;
            return Err(GridqError::Down);
        }
        Ok(Cluster {
            clients: Clients::new(tree(ACCOUNTS)).unwrap(),
            machines: Machines::of(&nodes(NODES), &[]).unwrap(),
            charging: (),
            half_life: None,
            version: None,
            mapping: None,
            notes: vec![CONFIGURATION_NOTE.into()],
        })
    }

    fn jobs(&mut self, from: Time, to: Time, _: &()) -> Result<Jobs, GridqError> {
        self.reads += 1;
        self.asked.push((from.whole_secs(), to.whole_secs()));
        let listed = history(HISTORY).into_iter();
        let since = |a: &Allocation| a.end.is_none_or(|end| end >= from);
        Ok(Jobs {
            ran: listed.filter(since).collect(),
            skipped: Vec::new(),
            queue: self.queue()?,
        })
    }

    fn queue(&mut self) -> Result<Vec<QueuedJob>, GridqError> {
        self.reads += 1;
        Ok(queue(QUEUE, &self.held))
    }

    fn factors(&mut self) -> Result<Held, GridqError> {
        Ok(self.held.clone())
    }

    fn reads(&mut self) -> u32 {
        std::mem::take(&mut self.reads)
    }

    fn write(&mut self, write: &Write) -> Result<(), GridqError> {
        if self.refusing {
            return Err(GridqError::Refused(format!("{:?}", write.jobs)));
        }
        self.held
            .extend(write.jobs.iter().map(|&id| (id, write.factor)));
        Ok(())
    }
}

/// The controller of gridq: Fair Tree, its history from a week back.
fn controller(refusing: bool) -> Controller<GridqIo> {
    let io = GridqIo {
        held: factors(NO_FACTORS),
        down: 0,
        refusing,
        asked: Vec::new(),
        reads: 0,
    };
    let setup = Setup {
        policy: "fairshare:function=fair-tree".parse().unwrap(),
        plan: settings(),
        window_s: 7.0 * 86_400.0,
        since: None,
    };
    Controller::new(io, setup)
}

#[test]
fn a_made_up_scheduler_is_driven_by_the_controller() {
    let mut controller = controller(false);
    let first = controller.pass(secs(NOW_S)).unwrap();
    assert_eq!(first.reads, 3, "gridq's accounts, history and queue");
    let rebuilt = first.rebuilt.as_deref().unwrap();
    assert!(rebuilt.starts_with("no history yet: usage rebuilt from gridq history since"));
    assert_eq!(
        written(&first.plan.writes),
        [(100, vec![101]), (200, vec![102]), (300, vec![103])]
    );
    let applied = controller.apply(&first.plan);
    assert_eq!((applied.calls, applied.jobs), (3, 3));
    assert!(applied.complete());
    let second = controller.pass(secs(NOW_S + 60)).unwrap();
    assert_eq!(second.rebuilt, None);
    assert!(second.plan.writes.is_empty(), "{:?}", second.plan.writes);
    assert_eq!(second.step, Default::default());
    let asked = &controller.io().asked;
    assert_eq!(
        asked[1],
        (NOW_S - 1, NOW_S + 60),
        "the last second asked again"
    );
    let reset = controller.reset_plan().unwrap();
    let cleared = written(&reset.writes);
    assert_eq!(cleared, [(0, vec![101, 102, 103])]);
}

#[test]
fn a_refused_write_is_retried_once_and_reported() {
    let mut controller = controller(true);
    let pass = controller.pass(secs(NOW_S)).unwrap();
    let applied = controller.apply(&pass.plan);
    assert_eq!(applied.calls, 6, "three writes, each tried twice");
    assert_eq!(applied.refused.len(), 3);
    assert_eq!(applied.refused[0].message, "gridq refused: [101]");
    assert_eq!(applied.mismatched, [101, 102, 103]);
    assert!(!applied.complete());
}

/// What the watcher told its log, in short: each pass's jobs written and read back and its
/// notes that are news, or a failure and its backoff in seconds.
#[derive(Debug, PartialEq)]
enum Heard {
    Passed(usize, Vec<String>),
    Failed(String, u64),
}

/// The whole loop through the crate: gridq down for two turns, then up. The watcher tells
/// each failure with its backoff, writes the factors once, and then nothing; the note of
/// gridq's configuration, which every pass makes, is told at the first pass alone.
#[test]
fn the_watcher_drives_a_made_up_scheduler_through_its_controller() {
    let heard = Rc::new(std::cell::RefCell::new(Vec::new()));
    let stop = Rc::new(AtomicBool::new(false));
    let (told, stopping) = (Rc::clone(&heard), Rc::clone(&stop));
    let mut controller = controller(false);
    controller.io_mut().down = 2;
    let mut watcher = Watcher {
        adapter: controller,
        dry_run: false,
        interval: Duration::from_secs(60),
        now: || secs(NOW_S),
        told: Vec::new(),
        log: move |t: Told<'_, Controller<GridqIo>>| {
            let mut heard = told.borrow_mut();
            heard.push(match t {
                Told::Passed { applied, news, .. } => Heard::Passed(
                    applied.map_or(0, |a| a.jobs),
                    news.iter().map(|n| n.to_string()).collect(),
                ),
                Told::Failed(e, backoff) => Heard::Failed(e.to_string(), backoff.as_secs()),
            });
            stopping.store(heard.len() == 4, std::sync::atomic::Ordering::Relaxed);
        },
    };
    let now = Rc::new(Cell::new(Instant::now()));
    let mut clock = recording(&now);
    let backoff = Backoff::for_interval(Duration::from_secs(60));
    let watched = watch(&mut watcher, backoff, &stop, &mut clock);
    assert_eq!(
        watched,
        Watched {
            reconciles: 4,
            failures: 2
        }
    );
    let down = |s| Heard::Failed("gridq: controller unreachable".into(), s);
    let expected = [
        down(10),
        down(20),
        Heard::Passed(3, vec![CONFIGURATION_NOTE.into()]),
        Heard::Passed(0, Vec::new()),
    ];
    assert_eq!(*heard.borrow(), expected);
    let waits: Vec<u64> = clock.waits.iter().map(Duration::as_secs).collect();
    assert_eq!(waits, [10, 20, 60, 60]);
    assert_eq!(watcher.adapter.io().held[&103], 300);
}
