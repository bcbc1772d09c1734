//! `fairshare gridengine` against a real Grid Engine 8.1.9: the one-host cluster of
//! `scripts/gridengine/up.sh` (queue all.q on this host; users gea, geb and gec; the scheduler
//! ordering by POSIX priority alone).
//!
//! For each policy, SDRF and then Fair Tree: gea holds the whole queue (two slots) with two
//! long jobs, the queue is disabled, and gea, geb and gec queue three short jobs each, in turn;
//! geb also queues one job at a priority it lowered itself (-5). Grid Engine alone would start
//! them in submission order. `fairshare gridengine sync --policy P` writes a POSIX priority per
//! job and a second sync writes nothing; the first time, `reset` gives every job back the
//! priority it was submitted with (0, and geb's -5) and a sync sets them again. Then gea's jobs
//! are deleted, the queue is shrunk to one slot and enabled, and the jobs start one by one —
//! in the order fairshare planned (highest priority first, ties by job number): under SDRF geb
//! and gec taking turns, under Fair Tree one user's jobs after the other's, gea's last, and
//! geb's lowered job after all of them.
//!
//! Then the faults, on the same cluster: `watch` every 2 s while `sge_qmaster` is killed and
//! started again (the passes fail and back off, and the first pass after it is back ranks a
//! job submitted meanwhile), a second writer refused by the first's lock, and SIGTERM sent
//! while a `qalter` is under way (the write finishes, is read back and logged, then `watch`
//! exits 0).
//!
//! Last, Grid Engine's own share tree (`up.sh share-tree`): gea and geb run jobs, then one job
//! of each user waits; `fairshare gridengine status --policy fairshare:function=grid-engine`
//! orders the users as `qstat -ext`'s share-tree tickets do, and gives each the same number
//! of tickets within a few.
//!
//! Runs where `FAIRSHARE_TEST_GRIDENGINE` is set (`.ci/run` brings the cluster up and sets
//! it); ignored with the reason elsewhere. The three tests take about three minutes of wall
//! time.

use crate::live::{run, slow_writer, wait_for, wait_until_logged, KillOnDrop};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The users of the test cluster.
const USERS: [&str; 3] = ["gea", "geb", "gec"];

/// The accounting file of Debian's Grid Engine.
const ACCOUNTING: &str = "/var/lib/gridengine/default/common/accounting";

/// Holds the cluster for one test at a time.
fn exclusive() -> MutexGuard<'static, ()> {
    static CLUSTER: Mutex<()> = Mutex::new(());
    CLUSTER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Submits, as `user`, `qsub OPTIONS sleep SECONDS`; its job number.
fn submit(user: &str, options: &str, seconds: u32) -> u64 {
    let qsub = format!("qsub -terse -b y -o /dev/null -e /dev/null {options} sleep {seconds}");
    let id = run("su", &["-", user, "-c", &qsub]);
    id.trim().parse().expect("a job number")
}

/// The jobs `qstat` lists: job number to (state, POSIX priority).
fn jobs() -> BTreeMap<u64, (String, i64)> {
    let text = run("qstat", &["-u", "*", "-pri"]);
    (text.lines().skip(2))
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some((
                f.first()?.parse().ok()?,
                (f[8].to_string(), f[5].parse().ok()?),
            ))
        })
        .collect()
}

/// Sets the queue's slots.
fn slots(n: u32) {
    run(
        "qconf",
        &["-mattr", "queue", "slots", &n.to_string(), "all.q"],
    );
}

/// Deletes every job of the test users and waits for an empty queue.
fn empty_queue() {
    let _ = Command::new("qdel")
        .args(["-f", "-u", &USERS.join(",")])
        .output();
    wait_for("an empty queue", Duration::from_secs(60), || {
        jobs().is_empty()
    });
}

/// `fairshare gridengine ARGS… --config CONFIG --json`, parsed.
fn fairshare(config: &Path, args: &[&str]) -> Value {
    let config = config.to_str().unwrap();
    let all = [args, &["--config", config, "--json"]].concat();
    let out = run(
        env!("CARGO_BIN_EXE_fairshare"),
        &[&["gridengine"], &all[..]].concat(),
    );
    serde_json::from_str(&out).expect("JSON")
}

/// The wanted priority of every planned job of a `--json` pass.
fn wanted(pass: &Value) -> BTreeMap<u64, i64> {
    let jobs = pass["plan"]["jobs"].as_array().unwrap();
    jobs.iter()
        .filter_map(|j| Some((j["id"].as_u64()?, j["wanted"].as_i64()?)))
        .collect()
}

/// The start of each of `ids` the accounting file records, once every one is there.
fn starts(ids: &[u64]) -> BTreeMap<u64, u64> {
    let mut found = BTreeMap::new();
    wait_for("the accounting records", Duration::from_secs(60), || {
        let text = std::fs::read_to_string(ACCOUNTING).unwrap_or_default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(':').collect();
            let (Some(id), Some(start)) = (f.get(5), f.get(9)) else {
                continue;
            };
            if let (Ok(id), Ok(start)) = (id.parse::<u64>(), start.parse::<u64>()) {
                if ids.contains(&id) {
                    found.insert(id, start);
                }
            }
        }
        found.len() == ids.len()
    });
    found
}

/// One round under `policy`: the queue set up, ranked, (with `reset_too`) reset and ranked
/// again, then drained; the order of starts against the plan. Returns the owners of the
/// ranked jobs in the order they started.
fn round(config: &Path, policy: &str, reset_too: bool) -> Vec<String> {
    empty_queue();
    slots(2);
    run("qmod", &["-e", "all.q"]);
    let fillers = [submit("gea", "", 600), submit("gea", "", 600)];
    run("qconf", &["-tsm"]);
    wait_for("gea's two jobs to run", Duration::from_secs(60), || {
        let jobs = jobs();
        fillers
            .iter()
            .all(|id| jobs.get(id).is_some_and(|(s, _)| s == "r"))
    });
    run("qmod", &["-d", "all.q"]);
    let mut owner = BTreeMap::new();
    for _ in 0..3 {
        for user in USERS {
            owner.insert(submit(user, "", 3), user.to_string());
        }
    }
    let lowered = submit("geb", "-p -5", 3);

    let pass = fairshare(config, &["sync", "--policy", policy]);
    assert!(
        pass["applied"]["refused"].as_array().unwrap().is_empty(),
        "{pass}"
    );
    let mut wanted = wanted(&pass);
    assert_eq!(
        wanted.len(),
        9,
        "the nine jobs at priority 0 ranked: {wanted:?}"
    );
    assert!(
        !wanted.contains_key(&lowered),
        "geb's lowered job is left alone"
    );
    let held = jobs();
    for (id, w) in &wanted {
        assert_eq!(held[id].1, *w, "job {id} holds what was planned");
    }
    let again = fairshare(config, &["sync", "--policy", policy]);
    assert_eq!(
        again["plan"]["writes"],
        Value::Array(Vec::new()),
        "a second sync writes nothing"
    );
    if reset_too {
        let reset = fairshare(config, &["reset"]);
        assert_eq!(reset["applied"]["jobs"], 9, "{reset}");
        let after = jobs();
        for id in owner.keys() {
            assert_eq!(after[id].1, 0, "job {id} is back at its submitted priority");
        }
        assert_eq!(after[&lowered].1, -5, "geb's own priority is untouched");
        let pass = fairshare(config, &["sync", "--policy", policy]);
        wanted = self::wanted(&pass);
    }

    // Fairshare's order: highest priority first, ties to the lower job number, as Grid
    // Engine dispatches; geb's lowered job after every ranked one.
    let mut expected: Vec<u64> = wanted.keys().copied().collect();
    expected.sort_by_key(|id| (std::cmp::Reverse(wanted[id]), *id));
    expected.push(lowered);
    slots(1);
    for id in fillers {
        run("qdel", &["-f", &id.to_string()]);
    }
    run("qmod", &["-e", "all.q"]);
    run("qconf", &["-tsm"]);
    let started = starts(&expected);
    let mut order = expected.clone();
    order.sort_by_key(|id| (started[id], *id));
    assert_eq!(
        order, expected,
        "{policy}: the jobs started in fairshare's order; starts {started:?}"
    );
    slots(8);
    expected[..9].iter().map(|id| owner[id].clone()).collect()
}

#[test]
#[cfg_attr(
    not(live_gridengine),
    ignore = "needs a live one-host Grid Engine: scripts/gridengine/up.sh --fresh, then FAIRSHARE_TEST_GRIDENGINE=1"
)]
fn a_live_queue_starts_in_the_policys_order() {
    let _cluster = exclusive();
    up("lever");
    let dir = tempfile::tempdir().unwrap();
    let config = configure(dir.path(), "");

    let sdrf = round(&config, "sdrf", true);
    // gea holds the whole queue: geb and gec take turns, gea comes last.
    assert_eq!(&sdrf[6..], ["gea", "gea", "gea"], "{sdrf:?}");
    assert!(
        sdrf[..6].windows(2).all(|w| w[0] != w[1]),
        "geb and gec take turns: {sdrf:?}"
    );

    let fair_tree = round(&config, "fairshare:function=fair-tree", false);
    // One user's jobs after the other's, gea (the most usage) last.
    assert_eq!(&fair_tree[6..], ["gea", "gea", "gea"], "{fair_tree:?}");
    assert!(
        fair_tree[..3].iter().all(|u| *u == fair_tree[0]),
        "{fair_tree:?}"
    );
    assert!(
        fair_tree[3..6].iter().all(|u| *u == fair_tree[3]),
        "{fair_tree:?}"
    );
    assert_ne!(fair_tree[0], fair_tree[3]);
    empty_queue();
}

/// A configuration in `dir` with its own lock, the history of this test alone, and `extra`.
fn configure(dir: &Path, extra: &str) -> PathBuf {
    let config = dir.join("gridengine.toml");
    let since = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let toml = format!(
        "lock = \"{}\"\nsince = \"{}\"\n{extra}",
        dir.join("lock").display(),
        since.trim_end_matches('Z')
    );
    std::fs::write(&config, toml).unwrap();
    config
}

/// `sge_qmaster` running and answering.
fn start_qmaster() {
    run("/usr/sbin/sge_qmaster", &[]);
    wait_for("qmaster to answer", Duration::from_secs(60), || {
        Command::new("qstat")
            .output()
            .is_ok_and(|o| o.status.success())
    });
}

#[test]
#[cfg_attr(
    not(live_gridengine),
    ignore = "needs a live one-host Grid Engine: scripts/gridengine/up.sh --fresh, then FAIRSHARE_TEST_GRIDENGINE=1"
)]
fn watch_rides_out_a_qmaster_restart_and_finishes_a_write_when_stopped() {
    let _cluster = exclusive();
    up("lever");
    empty_queue();
    // Nothing starts: the jobs stay pending for the whole test.
    run("qmod", &["-d", "all.q"]);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("qalter-ran");
    let bin = slow_writer(
        dir.path(),
        &marker,
        &["qstat", "qconf", "qhost"],
        "qalter",
        "true",
    );
    let config = configure(dir.path(), &format!("bin = \"{}\"\n", bin.display()));
    let first = [submit("gea", "", 3), submit("geb", "", 3)];
    let log = dir.path().join("watch.log");
    let mut watch = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_fairshare"))
            .args([
                "gridengine",
                "watch",
                "--interval",
                "2s",
                "--policy",
                "sdrf",
            ])
            .args(["--config", config.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_until_logged(&log, "2 jobs set in", 1, Duration::from_secs(60));
    let held = jobs();
    assert!(first.iter().all(|id| held[id].1 > 0), "{held:?}");

    // A second writer is refused, naming the lock the first holds.
    let second = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["gridengine", "sync", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        !second.status.success() && said.contains("one writer per cluster"),
        "{said}"
    );

    // qmaster killed: the passes fail and back off; started again, the next pass ranks the
    // job submitted since.
    run("pkill", &["-x", "sge_qmaster"]);
    wait_until_logged(&log, "pass failed", 2, Duration::from_secs(60));
    start_qmaster();
    let back = Instant::now();
    let late = submit("gec", "", 3);
    wait_for("the new job ranked", Duration::from_secs(60), || {
        jobs().get(&late).is_some_and(|(_, p)| *p > 0)
    });
    let resumed = back.elapsed();
    let text = std::fs::read_to_string(&log).unwrap();
    let failed = text.matches("pass failed").count();
    eprintln!("qmaster back: the job submitted since ranked {resumed:?} after qmaster answered; {failed} passes failed while it was down");

    // SIGTERM while qalter runs: the write finishes and is read back, then watch exits 0.
    let _ = std::fs::remove_file(&marker);
    let written = text.matches(" set in ").count();
    let last = submit("gea", "", 3);
    wait_for("a qalter under way", Duration::from_secs(60), || {
        marker.exists()
    });
    let pid = watch.0.id().to_string();
    run("kill", &["-TERM", &pid]);
    let status = watch.0.wait().unwrap();
    assert!(status.success(), "{status}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.matches(" set in ").count() > written,
        "the interrupted pass logged its writes:\n{text}"
    );
    assert!(
        text.contains("stopped; the priorities keep their last values"),
        "{text}"
    );
    assert!(
        jobs()[&last].1 > 0,
        "the write under way when SIGTERM came was made"
    );
    // The note of the memory taken from Grid Engine's halftime, which every pass makes, is
    // logged once, though qmaster was down between passes.
    let passes = text.matches(" ranked by ").count();
    let memory = text
        .matches("its memory halves in Grid Engine's halftime")
        .count();
    assert!(
        passes > 2 && memory == 1,
        "{passes} passes, the note logged {memory} times:\n{text}"
    );
    run("qmod", &["-e", "all.q"]);
    empty_queue();
}

/// gea runs four one-slot jobs for 20 s and geb two, once they have ended the queue is
/// disabled: the usage the share-tree and SDRF tests rank.
fn gea_four_slots_and_geb_two() {
    let ran: Vec<u64> = [("gea", 4), ("geb", 2)]
        .iter()
        .flat_map(|&(user, jobs)| (0..jobs).map(move |_| submit(user, "", 20)))
        .collect();
    run("qconf", &["-tsm"]);
    let _ = starts(&ran);
    run("qmod", &["-d", "all.q"]);
}

/// The script that brings the cluster up, in `mode` (`lever` or `share-tree`).
fn up(mode: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gridengine/up.sh");
    run("bash", &[script.to_str().unwrap(), "--fresh", mode]);
}

#[test]
#[cfg_attr(
    not(live_gridengine),
    ignore = "needs a live one-host Grid Engine: scripts/gridengine/up.sh --fresh, then FAIRSHARE_TEST_GRIDENGINE=1"
)]
fn grid_engines_own_share_tree_orders_users_as_fairshares_grid_engine_function() {
    let _cluster = exclusive();
    up("share-tree");
    // Usage: gea four slots for 20 s, geb two, gec none.
    gea_four_slots_and_geb_two();
    let waiting: Vec<u64> = USERS.iter().map(|user| submit(user, "", 3)).collect();
    run("qconf", &["-tsm"]);
    let ticketed = || {
        let xml = run("qstat", &["-u", "*", "-ext", "-xml"]);
        xml.matches("<stickets>0</stickets>").count() == 0 && xml.contains("<stickets>")
    };
    wait_for(
        "share-tree tickets on every waiting job",
        Duration::from_secs(60),
        ticketed,
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gridengine.toml");
    std::fs::write(
        &config,
        format!(
            "lock = \"{}\"\nwindow_s = 3600\n",
            dir.path().join("lock").display()
        ),
    )
    .unwrap();
    let pass = fairshare(
        &config,
        &["status", "--policy", "fairshare:function=grid-engine"],
    );
    let check = &pass["check"];
    eprintln!("share-tree check: {check}");
    // gec used nothing: nearly every ticket. gea's share (0.5 for 80 slot-seconds) against
    // geb's (0.3 for 40) puts gea second.
    let order: Vec<&str> = (check["fairshare"].as_array().unwrap().iter())
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(order, ["gec", "gea", "geb"], "{pass}");
    assert_eq!(check["agrees"], true, "{check}");
    // The numbers too: fairshare's factor is the user's share of weight_tickets_share (10,000).
    // Grid Engine counts a job's usage from its own reports of it, a second or so more or less
    // than the accounting's start and end: measured within 5 % (gea 152.5 against 145 to 152).
    for row in pass["usage"].as_array().unwrap() {
        let user = row["user"].as_str().unwrap();
        let ours = -row["priority"].as_f64().unwrap() * 10_000.0;
        let theirs = (check["scheduler"].as_array().unwrap().iter())
            .find(|r| r[0] == user)
            .map(|r| r[1].as_f64().unwrap())
            .unwrap();
        eprintln!("{user}: fairshare {ours:.1} tickets, Grid Engine {theirs}");
        let close = (ours - theirs).abs() <= 2.0_f64.max(0.1 * theirs);
        assert!(close, "{user}: {ours} against {theirs}");
    }
    assert!(pass["notes"][0]
        .as_str()
        .unwrap()
        .contains("weight_priority is 0"));

    for id in waiting {
        run("qdel", &["-f", &id.to_string()]);
    }
    run("qmod", &["-e", "all.q"]);
    up("lever");
}

/// SDRF on the 8-slot queue of three equal users, after gea ran 4 slots for 20 s and geb 2
/// (the queue the share-tree test sets up, under the flat tree): a commitment grows only with
/// what a user holds beyond its entitlement (a third of 8 slots), so geb's 2 slots leave it at
/// 0 with gec, who never ran, and the tie goes to the tree's order; gea's 4 give it a
/// commitment, and it comes last (docs/gridengine.md).
#[test]
#[cfg_attr(
    not(live_gridengine),
    ignore = "needs a live one-host Grid Engine: scripts/gridengine/up.sh --fresh, then FAIRSHARE_TEST_GRIDENGINE=1"
)]
fn sdrf_ranks_a_user_who_ran_within_its_entitlement_as_one_who_never_ran() {
    let _cluster = exclusive();
    up("lever");
    let dir = tempfile::tempdir().unwrap();
    let config = configure(dir.path(), "");
    gea_four_slots_and_geb_two();
    let waiting: Vec<u64> = USERS.iter().map(|user| submit(user, "", 3)).collect();
    let sdrf = fairshare(&config, &["status", "--policy", "sdrf"]);
    eprintln!("SDRF usage: {}", sdrf["usage"]);
    let priority = |user: &str| {
        let rows = sdrf["usage"].as_array().unwrap();
        let row = rows.iter().find(|r| r["user"] == user).unwrap();
        row["priority"].as_f64().unwrap()
    };
    assert_eq!((priority("geb"), priority("gec")), (0.0, 0.0), "{sdrf}");
    assert!(priority("gea") > 0.0, "{sdrf}");
    let order: Vec<&str> = (sdrf["plan"]["standings"].as_array().unwrap().iter())
        .map(|s| s["user"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["geb", "gec", "gea"], "{sdrf}");
    for id in waiting {
        run("qdel", &["-f", &id.to_string()]);
    }
    run("qmod", &["-e", "all.q"]);
}
