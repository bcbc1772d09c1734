//! The Grid Engine adapter against a stand-in Grid Engine: a queue kept in memory and shown as
//! `qstat -pri -xml` shows it, `qalter -p` changing it (and refusing the jobs a test names, as
//! Grid Engine refuses a job that left), outputs of `qconf` and `qhost` as the one-host cluster
//! of `scripts/gridengine/up.sh` prints them, and a real accounting file in a temporary folder.
//! A pass, its writes and their read-back, and what the adapter does when Grid Engine fails
//! under it: no answer, a write refused for some jobs, the accounting file unreadable.

use fairshare_core::model::Time;
use fairshare_gridengine::adapter::{adapter as gridengine, GridEngineIo};
use fairshare_gridengine::command::{CommandError, Commands};
use fairshare_gridengine::config::GridEngineConfig;
use fairshare_reconcile::controller::Controller;
use fairshare_reconcile::pass::Pass;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

/// `qconf -ssconf` with fairshare's lever set (only the lines the adapter reads).
const LEVER: &str = "halftime                          168\nweight_tickets_share              10000\nweight_ticket                     0.000000\nweight_urgency                    0.000000\nweight_priority                   1.000000\n";

/// `qstat -f -xml`: one host, eight slots.
const QUEUES: &str = "<?xml version='1.0'?>\n<job_info><queue_info><Queue-List><name>all.q@vm</name><slots_total>8</slots_total></Queue-List></queue_info><job_info></job_info></job_info>";

/// `qhost -xml`.
const HOSTS: &str = "<?xml version='1.0'?>\n<qhost><host name='global'></host><host name='vm'><hostvalue name='mem_total'>23.5G</hostvalue></host></qhost>";

/// When the passes run: 2026-11-28T12:00:00.
const NOW_S: u64 = 1_795_867_200;

/// One job of the stand-in queue.
#[derive(Clone)]
struct Job {
    owner: &'static str,
    state: &'static str,
    priority: i64,
    slots: u32,
    /// Its share-tree tickets from Grid Engine's last scheduler run.
    tickets: u32,
}

/// A Grid Engine in memory.
struct Fake {
    jobs: RefCell<BTreeMap<u64, Job>>,
    scheduler: String,
    share_tree: Option<String>,
    /// Every command fails, as when sge_qmaster is down.
    down: bool,
    /// Jobs `qalter` refuses.
    refused: BTreeSet<u64>,
    /// The `qalter` calls made.
    qalters: RefCell<Vec<String>>,
}

impl Fake {
    /// gea runs two jobs of four slots; gea, geb and gec wait with two jobs each; geb has one
    /// more it lowered itself and gec one on hold.
    fn new() -> Fake {
        let mut jobs = BTreeMap::new();
        let job = |owner, state, priority| Job {
            owner,
            state,
            priority,
            slots: 1,
            tickets: 0,
        };
        jobs.insert(
            1,
            Job {
                slots: 4,
                ..job("gea", "r", 0)
            },
        );
        jobs.insert(
            2,
            Job {
                slots: 4,
                ..job("gea", "r", 0)
            },
        );
        for (i, owner) in ["gea", "geb", "gec", "gea", "geb", "gec"]
            .into_iter()
            .enumerate()
        {
            jobs.insert(10 + i as u64, job(owner, "qw", 0));
        }
        jobs.insert(20, job("geb", "qw", -5));
        jobs.insert(21, job("gec", "hqw", 0));
        Fake {
            jobs: RefCell::new(jobs),
            scheduler: LEVER.into(),
            share_tree: None,
            down: false,
            refused: BTreeSet::new(),
            qalters: RefCell::new(Vec::new()),
        }
    }

    /// `qstat -u '*' -pri -xml` of the queue now.
    fn qstat(&self) -> String {
        let mut running = String::new();
        let mut pending = String::new();
        for (id, j) in self.jobs.borrow().iter() {
            let (list, time, queue) = match j.state {
                "r" => (
                    &mut running,
                    "<JAT_start_time>2026-11-28T11:00:00</JAT_start_time>",
                    "all.q@vm",
                ),
                _ => (
                    &mut pending,
                    "<JB_submission_time>2026-11-28T11:30:00</JB_submission_time>",
                    "",
                ),
            };
            let kind = if j.state == "r" { "running" } else { "pending" };
            list.push_str(&format!("<job_list state=\"{kind}\"><JB_job_number>{id}</JB_job_number><JAT_prio>0.50000</JAT_prio><JB_priority>{}</JB_priority><JB_owner>{}</JB_owner><state>{}</state>{time}<stickets>{}</stickets><queue_name>{queue}</queue_name><slots>{}</slots></job_list>\n", j.priority, j.owner, j.state, j.tickets, j.slots));
        }
        format!("<?xml version='1.0'?>\n<job_info><queue_info>\n{running}</queue_info><job_info>\n{pending}</job_info></job_info>")
    }

    /// `qalter -p N ids`: sets what it can, then fails naming what it refused.
    fn qalter(&self, args: &[&str]) -> Result<String, CommandError> {
        self.qalters.borrow_mut().push(args.join(" "));
        let priority: i64 = args[1].parse().unwrap();
        let mut denied = Vec::new();
        for id in args[2].split(',').map(|i| i.parse::<u64>().unwrap()) {
            match self.refused.contains(&id) {
                true => denied.push(format!("denied: job \"{id}\" does not exist")),
                false => self.jobs.borrow_mut().get_mut(&id).unwrap().priority = priority,
            }
        }
        match denied.is_empty() {
            true => Ok(String::new()),
            false => Err(failed("qalter", &denied.join("\n"))),
        }
    }
}

/// A command that ended with status 1 and said `stderr`.
fn failed(command: &str, stderr: &str) -> CommandError {
    CommandError::Failed {
        command: command.into(),
        status: std::process::ExitStatus::from_raw(256),
        stderr: stderr.into(),
    }
}

impl Commands for &Fake {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        if self.down {
            return Err(failed(command[0], "error: commlib error: got select error (Connection refused)\nerror: unable to send message to qmaster using port 6444 on host \"vm\": got send error"));
        }
        match command {
            ["qconf", "-ssconf"] => Ok(self.scheduler.clone()),
            ["qconf", "-suserl"] => Ok("gea\ngeb\ngec\n".into()),
            ["qconf", "-sstree"] => self
                .share_tree
                .clone()
                .ok_or_else(|| failed("qconf -sstree", "no sharetree element")),
            ["qstat", "-f", "-xml"] => Ok(QUEUES.into()),
            ["qhost", "-xml"] => Ok(HOSTS.into()),
            ["qstat", "-u", "*", "-pri", "-ext", "-xml"] => Ok(self.qstat()),
            ["qalter", args @ ..] => self.qalter(args),
            other => panic!("unexpected command {other:?}"),
        }
    }
}

/// The accounting file: gea ran eight slots for an hour this morning.
fn accounting(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("accounting");
    let record = "all.q:vm:gea:gea:sleep:1:sge:0:1795852000:1795852800:1795856400:0:0:3600:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:NONE:defaultdepartment:NONE:8:0:0:0:0:NONE:0:NONE:0:0:0";
    std::fs::write(&path, format!("# Version: 8.1.9\n{record}\n")).unwrap();
    path
}

/// An adapter of the stand-in under `policy`, its accounting in `dir`.
fn adapter<'a>(fake: &'a Fake, dir: &Path, policy: &str) -> Controller<GridEngineIo<&'a Fake>> {
    let mut config = GridEngineConfig {
        accounting: accounting(dir),
        ..GridEngineConfig::default()
    };
    config.shared.policy = policy.into();
    gridengine(fake, &config).unwrap()
}

fn at(s: u64) -> Time {
    Time::from_micros(s * 1_000_000)
}

/// The POSIX priority of each job now.
fn priorities(fake: &Fake) -> BTreeMap<u64, i64> {
    fake.jobs
        .borrow()
        .iter()
        .map(|(id, j)| (*id, j.priority))
        .collect()
}

#[test]
fn a_pass_ranks_the_waiting_users_and_a_second_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new();
    let mut adapter = adapter(&fake, dir.path(), "fairshare:function=fair-tree");
    let pass = adapter.pass(at(NOW_S)).unwrap();
    let order: Vec<&str> = pass
        .plan
        .standings
        .iter()
        .map(|s| s.user.as_str())
        .collect();
    assert_eq!(order, ["geb", "gec", "gea"], "gea ran and runs: last");
    let applied = adapter.apply(&pass.plan);
    assert!(applied.complete(), "{applied:?}");
    let now = priorities(&fake);
    // geb's first job at the weight; gea's two last, sharing one priority (one run).
    assert_eq!(now[&11], 1024);
    assert!(
        [11, 12, 14, 15].iter().all(|id| now[&10] < now[id]),
        "{now:?}"
    );
    assert_eq!(now[&10], now[&13], "{now:?}");
    assert_eq!(
        (now[&20], now[&21]),
        (-5, 0),
        "geb's lowered job and gec's held job left alone"
    );
    assert_eq!(now[&1], 0, "running jobs are not written");
    let calls = fake.qalters.borrow().len();
    let again = adapter.pass(at(NOW_S + 60)).unwrap();
    assert!(again.plan.writes.is_empty(), "{:?}", again.plan.writes);
    assert!(
        again.rebuilt.is_none(),
        "the history is kept between passes"
    );
    assert_eq!(adapter.apply(&again.plan).calls, 0);
    assert_eq!(fake.qalters.borrow().len(), calls);

    // reset: every priority fairshare wrote back to 0; the lowered one stays.
    let reset = adapter.reset_plan().unwrap();
    assert!(adapter.apply(&reset).complete());
    let after = priorities(&fake);
    assert!(
        after
            .iter()
            .all(|(id, p)| *p == if *id == 20 { -5 } else { 0 }),
        "{after:?}"
    );
}

#[test]
fn the_share_tree_places_users_and_default_stands_for_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = Fake::new();
    fake.share_tree = Some("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\nid=1\nname=ge\ntype=0\nshares=100\nchildnodes=3\nid=3\nname=gea\ntype=0\nshares=100\nchildnodes=NONE\nid=2\nname=default\ntype=0\nshares=10\nchildnodes=NONE\n".into());
    let mut adapter = adapter(&fake, dir.path(), "sdrf");
    let pass = adapter.pass(at(NOW_S)).unwrap();
    let usage: Vec<(&str, &str)> = (pass.usage.iter())
        .map(|u| (u.account.as_str(), u.user.as_str()))
        .collect();
    assert_eq!(usage, [("ge", "gea"), ("Root", "geb"), ("Root", "gec")]);
    let jobs = &pass.plan.jobs;
    assert!(
        jobs.iter().all(|j| j.user != "gea" || j.account == "ge"),
        "{jobs:?}"
    );
}

#[test]
fn without_the_lever_status_says_so_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = Fake::new();
    fake.scheduler = LEVER.replace(
        "weight_priority                   1.000000",
        "weight_priority 0.000000",
    );
    let mut adapter = adapter(&fake, dir.path(), "sdrf");
    let pass = adapter.pass(at(NOW_S)).unwrap();
    assert!(
        pass.notes[0].starts_with("Grid Engine's weight_priority is 0"),
        "{:?}",
        pass.notes
    );
    let applied = adapter.apply(&pass.plan);
    assert!(!applied.complete() && applied.refused.len() == pass.plan.writes.len());
    let said = &applied.refused[0].message;
    assert!(
        said.contains("set weight_priority 1, weight_urgency 0 and weight_ticket 0"),
        "{said}"
    );
    assert!(fake.qalters.borrow().is_empty(), "no qalter run");
    // An undo is always written: reset sets a priority fairshare wrote back to 0.
    fake.jobs.borrow_mut().get_mut(&11).unwrap().priority = 700;
    let mut fresh = self::adapter(&fake, dir.path(), "sdrf");
    let reset = fresh.reset_plan().unwrap();
    assert!(fresh.apply(&reset).complete());
    assert_eq!(priorities(&fake)[&11], 0);
    fake.scheduler = LEVER.replace(
        "weight_urgency                    0.000000",
        "weight_urgency 0.5",
    );
    let pass = self::adapter(&fake, dir.path(), "sdrf")
        .pass(at(NOW_S))
        .unwrap();
    assert!(
        pass.notes
            .iter()
            .any(|n| n.starts_with("Grid Engine's weight_urgency is 0.5")),
        "{:?}",
        pass.notes
    );
}

#[test]
fn a_job_qalter_refuses_is_counted_and_written_by_the_next_pass() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = Fake::new();
    fake.refused.insert(10);
    let mut adapter = adapter(&fake, dir.path(), "fairshare:function=fair-tree");
    let pass = adapter.pass(at(NOW_S)).unwrap();
    let applied = adapter.apply(&pass.plan);
    assert!(!applied.complete());
    assert_eq!(applied.refused.len(), 1, "{applied:?}");
    assert_eq!(
        applied.refused[0].write.jobs,
        [10, 13],
        "one call for gea's two jobs, refused for one"
    );
    assert!(applied.refused[0]
        .message
        .contains("denied: job \"10\" does not exist"));
    assert_eq!(
        applied.calls as usize,
        pass.plan.writes.len() + 1,
        "the refused call tried twice"
    );
    let set = priorities(&fake);
    assert!(
        set[&13] > 0 && set[&10] == 0,
        "the call set the job it did not refuse: {set:?}"
    );

    let fake = Fake {
        refused: BTreeSet::new(),
        ..fake
    };
    let mut adapter = self::adapter(&fake, dir.path(), "fairshare:function=fair-tree");
    let next = adapter.pass(at(NOW_S + 60)).unwrap();
    let written: Vec<u64> = next
        .plan
        .writes
        .iter()
        .flat_map(|w| w.jobs.clone())
        .collect();
    assert_eq!(written, [10], "only the refused job is written again");
    assert!(adapter.apply(&next.plan).complete());
}

#[test]
fn a_grid_engine_that_does_not_answer_fails_the_pass_and_keeps_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut fake = Fake::new();
    let mut adapter = adapter(&fake, dir.path(), "sdrf");
    let first = adapter.pass(at(NOW_S)).unwrap();
    assert!(first.rebuilt.is_some());
    adapter.apply(&first.plan);
    let written = priorities(&fake);
    drop(adapter);

    fake.down = true;
    let mut adapter = self::adapter(&fake, dir.path(), "sdrf");
    let e = adapter.pass(at(NOW_S + 60)).err().unwrap();
    assert!(
        e.to_string()
            .starts_with("qconf: exit status: 1: error: commlib error"),
        "{e}"
    );
    assert_eq!(priorities(&fake), written, "nothing written");
}

#[test]
fn an_unreadable_accounting_file_fails_the_pass_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new();
    let mut adapter = adapter(&fake, dir.path(), "sdrf");
    let first = adapter.pass(at(NOW_S)).unwrap();
    // The accounting file replaced by a folder: it cannot be read.
    std::fs::remove_file(dir.path().join("accounting")).unwrap();
    std::fs::create_dir(dir.path().join("accounting")).unwrap();
    let e = adapter.pass(at(NOW_S + 60)).err().unwrap();
    assert!(e.to_string().starts_with("the accounting file "), "{e}");
    assert!(fake.qalters.borrow().is_empty(), "nothing written");
    // Back: the history the first pass built is brought on, not rebuilt.
    std::fs::remove_dir(dir.path().join("accounting")).unwrap();
    accounting(dir.path());
    let next = adapter.pass(at(NOW_S + 120)).unwrap();
    assert!(next.rebuilt.is_none());
    assert_eq!(next.plan.standings, first.plan.standings);
}

#[test]
fn grid_engines_own_share_tree_order_is_checked_under_its_function() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new();
    // gea ran this morning: Grid Engine gives its first pending job the fewest tickets; gea
    // also runs two jobs, so its first pending job is its third (a third of its tickets).
    for (id, tickets) in [
        (10, 100),
        (11, 4000),
        (12, 3000),
        (13, 50),
        (14, 2000),
        (15, 1500),
    ] {
        fake.jobs.borrow_mut().get_mut(&id).unwrap().tickets = tickets;
    }
    let mut adapter = adapter(&fake, dir.path(), "fairshare:function=grid-engine");
    let pass = adapter.pass(at(NOW_S)).unwrap();
    let check = pass.check.clone().expect("checked under grid-engine");
    assert_eq!(check.fairshare, ["geb", "gec", "gea"]);
    let users: Vec<&str> = check.scheduler.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(users, ["geb", "gec", "gea"], "{check:?}");
    assert_eq!(
        check.scheduler[2].1, 300.0,
        "gea's 100 tickets were its third job's"
    );
    assert!(check.agrees);
    // Grid Engine ranking gec first: fairshare's order is not one of its.
    fake.jobs.borrow_mut().get_mut(&12).unwrap().tickets = 5000;
    let pass = adapter.pass(at(NOW_S + 60)).unwrap();
    assert!(!pass.check.unwrap().agrees);
    let sdrf = self::adapter(&fake, dir.path(), "sdrf")
        .pass(at(NOW_S))
        .unwrap();
    assert!(sdrf.check.is_none(), "checked only under its function");
}

/// An accounting record of `owner`'s job `id`, `slots` slots from `start` to `end` (unix
/// seconds), as Grid Engine writes it.
fn record(id: u64, owner: &str, start: u64, end: u64, slots: u32) -> String {
    format!("all.q:vm:{owner}:{owner}:sleep:{id}:sge:0:{start}:{start}:{end}:0:0:{}:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:NONE:defaultdepartment:NONE:{slots}:0:0:0:0:NONE:0:NONE:0:0:0", end - start)
}

/// The pass of SDRF (Grid Engine's 168-hour halftime as its memory) over one waiting job of
/// each user, after gea ran 4 slots for 20 s and geb `geb_slots` slots for 20 slot-seconds.
fn sdrf_after(geb_slots: u32) -> Pass {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new();
    fake.jobs.borrow_mut().retain(|id, _| (10..13).contains(id));
    let t = NOW_S - 600;
    let records = [
        record(1, "gea", t, t + 20, 4),
        record(2, "geb", t, t + u64::from(20 / geb_slots), geb_slots),
    ];
    let accounting = dir.path().join("accounting");
    std::fs::write(
        &accounting,
        format!("# Version: 8.1.9\n{}\n", records.join("\n")),
    )
    .unwrap();
    let mut config = GridEngineConfig {
        accounting,
        ..GridEngineConfig::default()
    };
    config.shared.policy = "sdrf".into();
    let mut adapter = gridengine(&fake, &config).unwrap();
    adapter.pass(at(NOW_S)).unwrap()
}

/// The order seen on the live Grid Engine (geb, who ran, before gec, who never did) is SDRF's
/// own: a commitment grows only with what a user holds beyond its entitlement (Eq. 6), and
/// geb's 2 slots were within its third of 8, so geb's priority is exactly gec's, 0, and the
/// tie goes to the tree's order. A user absent from the accounting is ranked as one at 0.
/// geb holding 4 slots for the same 20 slot-seconds passes its entitlement, and goes after gec.
#[test]
fn sdrf_ranks_use_within_the_entitlement_as_no_use() {
    let priority = |pass: &Pass, user: &str| {
        let usage = pass.usage.iter().find(|u| u.user == user).unwrap();
        usage.priority.unwrap()
    };
    let order = |pass: &Pass| -> Vec<String> {
        pass.plan.standings.iter().map(|s| s.user.clone()).collect()
    };
    let within = sdrf_after(2);
    assert_eq!(
        (priority(&within, "geb"), priority(&within, "gec")),
        (0.0, 0.0)
    );
    assert!(priority(&within, "gea") > 0.0, "{:?}", within.usage);
    assert_eq!(order(&within), ["geb", "gec", "gea"]);

    let beyond = sdrf_after(4);
    let geb = priority(&beyond, "geb");
    assert!(
        geb > 0.0 && geb < priority(&beyond, "gea"),
        "{:?}",
        beyond.usage
    );
    assert_eq!(order(&beyond), ["gec", "geb", "gea"]);
}
