//! `fairshare slurm` against a real Slurm 22.05: the one-host cluster of `scripts/slurm/up.sh`
//! (8 CPUs; accounts physics, 3 shares, with alice, bob and frank (0 shares), and chemistry, 1
//! share, with carol, dave and erin (`parent` shares); Slurm's root user), reconfigured for the adapter's `replace` mapping: `PriorityWeightFairshare=0`, so
//! that every pending job's priority is its site factor alone.
//!
//! bob first fills the machine for a while, then alice holds it while bob, carol and dave queue
//! jobs that each need the whole machine, bob first. Slurm alone would start them in submit
//! order (bob, bob, carol, dave: equal priorities). After `fairshare slurm sync --policy sdrf`,
//! `sprio`'s SITE column holds exactly the site factors fairshare planned, a second sync writes
//! nothing, `reset` clears them and a new sync sets them again; and once alice's job ends the
//! jobs start in fairshare's order: the associations that used nothing first, bob last.
//!
//! Runs where `FAIRSHARE_TEST_SLURM` is set (`.ci/run` brings the cluster up and sets it);
//! skipped with a message elsewhere. It takes about a minute and a half of wall time.

use crate::live::{
    empty_queue, fairshare_weight, logged, slow_writer, sprio_site, started, state, wait_for,
    KillOnDrop,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The users of the test cluster.
const USERS: [&str; 6] = ["alice", "bob", "carol", "dave", "erin", "frank"];

/// Submits, as `user`, a job of `cpus` CPUs sleeping `seconds`; its id.
fn submit(user: &str, cpus: u32, seconds: u32) -> u64 {
    crate::live::submit(user, &format!("-n {cpus} -t 5"), seconds)
}

/// `fairshare slurm ARGS… --config CONFIG`, parsed as JSON.
fn fairshare(config: &std::path::Path, args: &[&str]) -> Value {
    crate::live::slurm(config, args)
}

/// The wanted site factor of every planned job of a `--json` pass.
fn wanted(pass: &Value) -> BTreeMap<u64, i64> {
    let jobs = pass["plan"]["jobs"].as_array().unwrap();
    jobs.iter()
        .filter_map(|j| Some((j["id"].as_u64()?, j["wanted"].as_i64()?)))
        .collect()
}

#[test]
#[cfg_attr(
    not(live_slurm),
    ignore = "needs a live one-host Slurm: scripts/slurm/up.sh --fresh fair-tree, then FAIRSHARE_TEST_SLURM=1"
)]
fn sync_orders_a_live_queue() {
    let _cluster = crate::live::exclusive();
    empty_queue(&USERS);
    fairshare_weight(0);
    // The history the test makes, and none of the jobs before it.
    std::thread::sleep(Duration::from_secs(2));
    let began = Instant::now();

    // bob's history: the whole machine for 15 s.
    let history = submit("bob", 8, 15);
    wait_for("bob's first job to end", Duration::from_secs(90), || {
        state(history).is_empty()
    });
    let blocker = submit("alice", 8, 25);
    wait_for("alice's job to start", Duration::from_secs(60), || {
        state(blocker) == "RUNNING"
    });
    let queued = [
        submit("bob", 8, 2),
        submit("bob", 8, 2),
        submit("carol", 8, 2),
        submit("dave", 8, 2),
    ];
    wait_for(
        "sprio to list the queued jobs",
        Duration::from_secs(30),
        || queued.iter().all(|id| sprio_site().contains_key(id)),
    );

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("slurm.toml");
    let window = began.elapsed().as_secs() + 1;
    let lock = dir.path().join("fairshare.lock");
    let text = format!(
        "policy = \"sdrf\"\nweight = 1000\nwindow_s = {window}\nlock = \"{}\"\n",
        lock.display()
    );
    std::fs::write(&config, text).unwrap();
    let first = fairshare(&config, &["sync"]);
    assert_eq!(first["applied"]["mismatched"], serde_json::json!([]));
    let planned = wanted(&first);
    let site = sprio_site();
    for id in queued {
        assert_eq!(
            site.get(&id),
            planned.get(&id),
            "job {id}: sprio's SITE against the plan"
        );
    }
    let order: Vec<&str> = (first["plan"]["standings"].as_array().unwrap().iter())
        .map(|s| s["user"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["carol", "dave", "bob"],
        "SDRF: who used nothing goes first"
    );
    assert_eq!(planned[&queued[2]], 1000);
    assert_eq!(planned[&queued[3]], 667);
    assert_eq!(planned[&queued[0]], 333);

    // The built-in check: fairshare's Fair Tree over the whole history orders the waiting
    // associations as Slurm's own does (sshare's FairShare).
    let fair_tree = dir.path().join("fair-tree.toml");
    let text = "policy = \"fairshare:function=fair-tree,decay=half-life:600,refresh=60\"\nwindow_s = 86400\n";
    std::fs::write(&fair_tree, text).unwrap();
    let status = fairshare(&fair_tree, &["status"]);
    // The Slurm it talks to, named as `scontrol --version` names it (`slurm-wlm 24.11.5`):
    // the test clusters run the tested 22.05 and 24.11.
    let version = &status["version"];
    let scontrol = crate::live::run("scontrol", &["--version"]);
    assert_eq!(
        Some(version["text"].as_str().unwrap()),
        scontrol.split_whitespace().last(),
        "{version}"
    );
    assert_eq!(version["tested"], true, "{version}");
    let check = &status["check"];
    assert_eq!(check["fairshare"].as_array().unwrap().len(), 3, "{check}");
    assert!(
        status["notes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| !n.as_str().unwrap().contains("Fair Tree")),
        "{status}"
    );
    eprintln!("Fair Tree check: {check}");
    assert_eq!(check["agrees"], true, "{check}");

    let second = fairshare(&config, &["sync"]);
    assert_eq!(
        second["plan"]["writes"],
        serde_json::json!([]),
        "idempotent"
    );
    let dry = fairshare(&config, &["reset", "--dry-run"]);
    let reset = serde_json::json!([{ "jobs": queued, "factor": 0 }]);
    assert_eq!(dry["writes"], reset, "one call clears all four");
    assert_eq!(sprio_site(), site, "a dry run changes nothing");
    fairshare(&config, &["reset"]);
    assert!(
        queued.iter().all(|id| sprio_site()[id] == 0),
        "reset clears"
    );
    fairshare(&config, &["sync"]);
    assert_eq!(sprio_site(), site, "a new sync sets the same factors again");

    wait_for("every queued job to end", Duration::from_secs(120), || {
        queued.iter().all(|&id| state(id).is_empty())
    });
    let mut started = started(&queued);
    started.sort();
    let started: Vec<u64> = started.into_iter().map(|(_, id)| id).collect();
    fairshare_weight(100_000);
    assert_eq!(
        started,
        [queued[2], queued[3], queued[0], queued[1]],
        "jobs start in fairshare's order (Slurm alone: submit order)"
    );
}

/// Starts `daemon` (slurmctld or slurmdbd, which fork themselves) and waits until `ready`.
fn start(daemon: &str, ready: impl FnMut() -> bool) {
    crate::live::run(daemon, &[]);
    wait_for(
        &format!("{daemon} to answer"),
        Duration::from_secs(60),
        ready,
    );
}

/// Whether `command` succeeds.
fn answers(command: &str, args: &[&str]) -> bool {
    std::process::Command::new(command)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
#[cfg_attr(
    not(live_slurm),
    ignore = "needs a live one-host Slurm: scripts/slurm/up.sh --fresh fair-tree, then FAIRSHARE_TEST_SLURM=1"
)]
fn watch_rides_out_slurmctld_and_slurmdbd_restarts_and_finishes_a_write_when_stopped() {
    let _cluster = crate::live::exclusive();
    empty_queue(&USERS);
    fairshare_weight(0);
    let blocker = submit("alice", 8, 300);
    wait_for("alice's job to start", Duration::from_secs(60), || {
        state(blocker) == "RUNNING"
    });
    let first = [submit("bob", 8, 2), submit("carol", 8, 2)];
    wait_for("sprio to list them", Duration::from_secs(30), || {
        first.iter().all(|id| sprio_site().contains_key(id))
    });
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("scontrol-update-ran");
    let read = ["squeue", "sprio", "sacct", "sacctmgr", "sinfo", "sshare"];
    let update = "[ \"$1\" = update ]";
    let bin = slow_writer(dir.path(), &marker, &read, "scontrol", update);
    let config = dir.path().join("slurm.toml");
    let text = format!(
        "policy = \"sdrf\"\nweight = 1000\nwindow_s = 600\nlock = \"{}\"\nbin = \"{}\"\n",
        dir.path().join("lock").display(),
        bin.display()
    );
    std::fs::write(&config, text).unwrap();
    let log = dir.path().join("watch.log");
    let mut watch = KillOnDrop(
        std::process::Command::new(env!("CARGO_BIN_EXE_fairshare"))
            .args(["slurm", "watch", "--interval", "2s"])
            .args(["--config", config.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let ranked = |id: &u64| sprio_site().get(id).is_some_and(|s| *s > 0);
    wait_for("the first pass's writes", Duration::from_secs(60), || {
        first.iter().all(ranked)
    });

    // slurmctld stopped: the passes fail and back off, nothing is written; started again,
    // the first passes after rank the job submitted since.
    crate::live::run("pkill", &["-x", "slurmctld"]);
    wait_for("two failed passes", Duration::from_secs(60), || {
        logged(&log, "pass failed") >= 2
    });
    start("slurmctld", || answers("squeue", &["-h"]));
    let back = Instant::now();
    let late = submit("dave", 8, 2);
    wait_for("dave's job ranked", Duration::from_secs(60), || {
        ranked(&late)
    });
    let after_ctld = back.elapsed();

    // slurmdbd stopped: the associations and the accounting cannot be read, so every pass
    // fails before it writes; started again, a job submitted meanwhile is ranked.
    let failed = logged(&log, "pass failed");
    crate::live::run("pkill", &["-x", "slurmdbd"]);
    wait_for("a failed pass", Duration::from_secs(60), || {
        logged(&log, "pass failed") >= failed + 2
    });
    let meanwhile = submit("erin", 8, 2);
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(
        sprio_site().get(&meanwhile),
        Some(&0),
        "nothing written while the accounting is down"
    );
    start("slurmdbd", || answers("sacct", &["-n", "-X", "-j", "1"]));
    let back = Instant::now();
    wait_for("erin's job ranked", Duration::from_secs(120), || {
        ranked(&meanwhile)
    });
    let after_dbd = back.elapsed();
    let text = std::fs::read_to_string(&log).unwrap();
    eprintln!(
        "slurmctld back: a new job ranked after {after_ctld:?}; slurmdbd back: after {after_dbd:?}; {} passes failed in all",
        text.matches("pass failed").count()
    );
    assert!(text.contains("sacctmgr"), "the failure names the command");

    // SIGTERM while scontrol update runs: the write finishes and is read back, then watch
    // exits 0.
    let _ = std::fs::remove_file(&marker);
    let written = logged(&log, " set in ");
    let last = submit("frank", 8, 2);
    wait_for(
        "an scontrol update under way",
        Duration::from_secs(60),
        || marker.exists(),
    );
    crate::live::run("kill", &["-TERM", &watch.0.id().to_string()]);
    let status = watch.0.wait().unwrap();
    assert!(status.success(), "{status}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged(&log, " set in ") > written,
        "the interrupted pass logged its writes:\n{text}"
    );
    assert!(text.contains("stopped; the site factors keep"), "{text}");
    assert!(
        ranked(&last),
        "the write under way when SIGTERM came was made"
    );
    empty_queue(&USERS);
    fairshare_weight(100_000);
}
