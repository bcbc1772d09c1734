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

use crate::live::{empty_queue, fairshare_weight, sprio_site, started, state, wait_for};
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
    let check = &status["fair_tree"];
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
    let reset = serde_json::json!([{ "jobs": queued, "site_factor": 0 }]);
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
