//! fairshare against the many-node Slurm 22.05 of `scripts/slurm/up.sh --fresh --layout many`:
//! 16 nodes in two partitions (`cpu`, 12 nodes of 8 CPUs; `gpu`, 4 nodes with 4 GPUs each),
//! billing weights on both (`CPU=1.0,Mem=0.25G`, and `GRES/gpu=4.0` on `gpu`), memory
//! allocated (`CR_CPU_Memory`), a QOS `scavenger` with `UsageFactor=0.5`, a three-level tree
//! with `parent` and 0 associations (science: physics with alice, bob and frank (0), chemistry
//! with carol, dave and erin (`parent`); engineering: civil (`parent`) with grace and heidi,
//! mech with ivan), and `deploy/job_submit.lua` installed.
//!
//! In order, on one cluster (so one test):
//! 0. `replay --scheduler slurm --slurm-conf` predicts a small run from its own `sacct` dump:
//!    30 jobs of four users, one in four on partition `gpu` and the rest on `cpu`, Slurm's own
//!    Fair Tree, replayed on the cluster's own nodes and partitions (`--machines` the saved
//!    `scontrol show node` and `show partition`); every job runs on its partition's nodes, and
//!    the median |predicted − recorded start| is within one backfill interval (30 s). The
//!    cluster is then brought up afresh.
//! 1. `priorities` equals `sshare -l` for every association, `parent` and 0 ones included,
//!    right after a decay tick and half a period later, with usage charged in billing units
//!    from the saved `scontrol show partition` and `sacctmgr show qos`.
//! 2. `sync` makes jobs start in the policy's order under SDRF, `fairshare:usage=pe` and Fair
//!    Tree, job by job: carol's and dave's jobs interleave under SDRF.
//! 3. A job submitted between passes is ranked at once by the submit script, from the table
//!    `sync` writes; with the table stale or removed (`reset`) it keeps 0.
//!
//! Runs where `FAIRSHARE_TEST_SLURM_MANY` is set (`.ci/run` brings this layout up after the
//! one-node tests and sets it); skipped with a message elsewhere. About ten minutes.

use crate::live::{
    agree_with_sshare, empty_queue, fairshare_weight, next_tick, run, script, slurm, snapshot,
    sprio_site, started, state, submit, wait_for,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The users of the many-node cluster.
const USERS: [&str; 9] = [
    "alice", "bob", "frank", "carol", "dave", "erin", "grace", "heidi", "ivan",
];

/// Where `job_submit.lua` reads its table (the script's `TABLE`, as `up.sh` installs it).
const TABLE: &str = "/run/fairshare-slurm/submit-factors.txt";

/// A job taking the whole `cpu` partition (12 nodes of 8 CPUs).
const WHOLE_CPU: &str = "-N 12 -n 96 -t 3";

#[test]
#[cfg_attr(
    not(live_slurm_many),
    ignore = "needs the many-node Slurm: scripts/slurm/up.sh --fresh fair-tree --layout many, then FAIRSHARE_TEST_SLURM_MANY=1"
)]
fn many_nodes() {
    let _cluster = crate::live::exclusive();
    the_replay_predicts_a_small_run();
    priorities_equal_sshare();
    fairshare_weight(0);
    for policy in ["sdrf", "fairshare:usage=pe", "fairshare:function=fair-tree"] {
        sync_orders_jobs(policy);
    }
    the_submit_script_ranks_a_new_job();
    fairshare_weight(100_000);
}

/// `fairshare priorities` on a snapshot of the cluster, compared with its `sshare`.
fn compare_at(dir: &Path) {
    let (sshare, tick) = snapshot(dir);
    let file = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let decay = format!("slurm:half-life=10m,period=1m,tick={tick}");
    let json = run(
        env!("CARGO_BIN_EXE_fairshare"),
        &[
            "priorities",
            &file("sacct.txt"),
            "--shares",
            &file("assoc.txt"),
            "--usage",
            "billing",
            "--partitions",
            &file("partitions.txt"),
            "--qos",
            &file("qos.txt"),
            "--decay",
            &decay,
            "--json",
            "-",
        ],
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    eprintln!(
        "last tick {tick}\nsacct:\n{}\nsshare:\n{sshare}",
        std::fs::read_to_string(dir.join("sacct.txt")).unwrap()
    );
    agree_with_sshare(&sshare, &doc);
}

/// Part 0: a small run of Slurm's own Fair Tree on the fresh cluster (no usage yet), one job
/// in four in partition gpu, replayed from its dump with the cluster's configuration, nodes
/// and partitions and the decay thread's phase: each job on its partition's nodes.
fn the_replay_predicts_a_small_run() {
    next_tick();
    let tick = run(
        "stat",
        &["-c", "%Y", "/var/spool/slurmctld/priority_last_decay_ran"],
    );
    let phase = tick.trim().parse::<u64>().expect("seconds") % 60;
    let began = run("date", &["-u", "+%Y-%m-%dT%H:%M:%S"]);
    let users = ["alice", "bob", "carol", "ivan"];
    let mut ids = Vec::new();
    for i in 0..30usize {
        let user = users[(i * 3 + i / 4) % 4];
        let cpus = [8, 16, 24, 32][(i * 5 + i / 3) % 4];
        let seconds = 10 + 5 * ((i * 7) % 3) as u32;
        let partition = if i % 4 == 3 { "gpu" } else { "cpu" };
        ids.push(submit(
            user,
            &format!("-p {partition} -n {cpus} -t 1"),
            seconds,
        ));
        std::thread::sleep(Duration::from_secs(1));
    }
    wait_for("the small run to end", Duration::from_secs(300), || {
        ids.iter().all(|id| state(*id).is_empty())
    });
    // Jobs reach the accounting a moment after they leave the queue.
    std::thread::sleep(Duration::from_secs(3));
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let format = "--format=JobID,User,Account,Submit,Eligible,Start,End,Elapsed,Timelimit,AllocTRES,Partition,State,QOS,Flags,ReqNodes";
    let window = ["-S", began.trim(), "-E", "now"];
    let dump = run(
        "sacct",
        &[&["--allusers", "--parsable2", format][..], &window].concat(),
    );
    let saved = [
        ("sacct.txt", dump),
        (
            "config.txt",
            run("scontrol", &["show", "config"])
                + &run("scontrol", &["show", "node"])
                + &run("scontrol", &["show", "partition"]),
        ),
        (
            "partitions.txt",
            run("scontrol", &["--oneliner", "show", "partition"]),
        ),
        (
            "qos.txt",
            run(
                "sacctmgr",
                &["-P", "-n", "show", "qos", "format=Name,UsageFactor"],
            ),
        ),
        (
            "assoc.txt",
            run(
                "sacctmgr",
                &[
                    "-P",
                    "-n",
                    "show",
                    "assoc",
                    "format=Cluster,Account,User,Partition,Share,ParentName,Priority",
                ],
            ),
        ),
    ];
    for (name, text) in saved {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let policy = format!("fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing,refresh-offset={phase}");
    run(
        env!("CARGO_BIN_EXE_fairshare"),
        &[
            "replay",
            &file("sacct.txt"),
            "--format",
            "sacct",
            "--policy",
            &policy,
            "--machines",
            &file("config.txt"),
            "--shares",
            &file("assoc.txt"),
            "--partitions",
            &file("partitions.txt"),
            "--qos",
            &file("qos.txt"),
            "--drain",
            "--scheduler",
            "slurm",
            "--slurm-conf",
            &file("config.txt"),
            "--jobs",
            &file("jobs.csv"),
        ],
    );
    let table = std::fs::read_to_string(file("jobs.csv")).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    // A cell by its column, counted from the end: the policy, first, is quoted and holds commas.
    let cell = |line: &str, name: &str| {
        let column = header.iter().position(|h| *h == name).unwrap();
        let field = line.rsplit(',').nth(header.len() - 1 - column);
        field.unwrap_or_default().to_owned()
    };
    for line in table.lines().skip(1) {
        // n13-n16 are partition gpu's nodes, named by their hosts.
        let on_gpu_nodes = cell(line, "allocated_resources")
            .split(' ')
            .all(|node| ["n13", "n14", "n15", "n16"].contains(&node));
        assert_eq!(on_gpu_nodes, cell(line, "partition") == "gpu", "{line}");
    }
    let mut errors: Vec<f64> = lines
        .map(|l| {
            let parsed = cell(l, "starting_time_error").parse::<f64>();
            parsed.unwrap_or_else(|_| panic!("a job without a start error: {l}\n{table}"))
        })
        .map(f64::abs)
        .collect();
    errors.sort_by(f64::total_cmp);
    eprintln!("|predicted − recorded start| of the small run, s: {errors:?}\n{table}");
    assert_eq!(
        errors.len(),
        ids.len(),
        "every job of the run is in the table"
    );
    let median = errors[errors.len() / 2];
    assert!(
        median <= 30.0,
        "median |start error| {median} s, above one backfill interval"
    );
    collect_makes_what_the_shell_commands_make(began.trim(), ids.len());
    a_production_window_through_collect_and_what_if();
    // Its usage would enter part 1's comparison with sshare, where a job that ends in the same
    // second as a decay tick is charged a tick's decay apart (scripts/slurm/after-tick.sh):
    // the rest of the test starts on a fresh cluster, as it did before this part.
    script("up.sh", &["--fresh", "fair-tree", "--layout", "many"]);
}

/// A window as a production month opens: bob may run one job at a time (`MaxJobs=1`), node
/// n05 is drained for the run, one of alice's jobs is requeued while it runs, and the window
/// opens with jobs running and waiting, after the small run's usage. `collect --since` inside
/// the run, then `what-if`: the window's machine, the history, the limit, the drained node and
/// both runs of the requeued job are read and held, and the baseline is compared on the jobs
/// eligible inside the window (the pipeline exactly; agreement loosely).
fn a_production_window_through_collect_and_what_if() {
    let bobs_max_jobs = |most: &str| {
        let set = format!("MaxJobs={most}");
        run(
            "sacctmgr",
            &["-i", "modify", "user", "where", "name=bob", "set", &set],
        );
    };
    bobs_max_jobs("1");
    run(
        "scontrol",
        &[
            "update",
            "NodeName=n05",
            "State=DRAIN",
            "Reason=maintenance",
        ],
    );
    let mut ids = Vec::new();
    let mut opens = String::new();
    for i in 0..16usize {
        let user = ["alice", "bob", "carol", "bob"][i % 4];
        ids.push(submit(
            user,
            &format!("-p cpu -n {} -t 1", [16, 8, 24, 8][i % 4]),
            12,
        ));
        if i == 9 {
            opens = run("date", &["-u", "+%Y-%m-%dT%H:%M:%S"]);
        }
        std::thread::sleep(Duration::from_millis(700));
    }
    // One of alice's jobs inside the window is requeued while it runs, and runs again.
    let requeued = ids[12];
    wait_for("alice's job to start", Duration::from_secs(120), || {
        state(requeued) == "RUNNING"
    });
    run("scontrol", &["requeue", &requeued.to_string()]);
    wait_for("the window's run to end", Duration::from_secs(400), || {
        ids.iter().all(|id| state(*id).is_empty())
    });
    std::thread::sleep(Duration::from_secs(3));
    run("scontrol", &["update", "NodeName=n05", "State=RESUME"]);
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("window");
    let until = run("date", &["-u", "+%Y-%m-%dT%H:%M:%S"]);
    let fairshare = env!("CARGO_BIN_EXE_fairshare");
    let args = [
        "--since",
        opens.trim(),
        "--until",
        until.trim(),
        "--history",
        "1h",
    ];
    run(
        fairshare,
        &[&["slurm", "collect", bundle.to_str().unwrap()][..], &args].concat(),
    );
    bobs_max_jobs("-1");
    for file in [
        "history.txt",
        "limits.txt",
        "qos-limits.txt",
        "tres.txt",
        "transactions.txt",
        "events.txt",
        "reservations.txt",
    ] {
        assert!(bundle.join(file).is_file(), "{file}");
    }
    let out = run(
        fairshare,
        &["slurm", "what-if", bundle.to_str().unwrap(), "--json", "-"],
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    let window = &doc["trust"]["window"];
    assert_eq!(window["opens"], opens.trim(), "{window}");
    let (running, waiting) = (
        window["jobs_running"].as_u64().unwrap(),
        window["jobs_waiting"].as_u64().unwrap(),
    );
    assert!(
        running + waiting > 0,
        "the window opens on a busy machine: {window}"
    );
    assert!(
        window["history_jobs"].as_u64().unwrap() >= running,
        "{window}"
    );
    let held = &doc["prediction"]["policies"][0]["held_by_limits"];
    assert!(
        held["user bob (MaxJobs)"].as_u64().is_some_and(|n| n >= 1),
        "{held}"
    );
    assert!(doc["taken"]
        .to_string()
        .contains("changes of them in transactions.txt"));
    let taken = doc["taken"].to_string();
    assert!(
        taken.contains("nodes down, drained or failing: 1 (n05 DRAIN: maintenance on n05 from"),
        "{taken}"
    );
    // Both runs of the requeued job are in the dump, and the replay starts each as it ran.
    let dump = std::fs::read_to_string(bundle.join("sacct.txt")).unwrap();
    let runs = (dump.lines())
        .filter(|l| l.starts_with(&format!("{requeued}|")))
        .count();
    assert!(runs >= 2, "{requeued} ran {runs} times in\n{dump}");
    let pinned = doc["trust"]["pinned"].to_string();
    assert!(
        pinned.contains("was requeued or preempted") && pinned.contains(&requeued.to_string()),
        "{pinned}"
    );
    let jobs = doc["trust"]["jobs"].as_u64().unwrap();
    let before = window["jobs_before"].as_u64().unwrap();
    eprintln!(
        "the production window: {window}, {jobs} jobs compared, contested order {}",
        doc["trust"]["contested_order"]
    );
    assert!(jobs >= 1 && jobs + before >= 6, "{}", doc["trust"]);
}

/// `slurm collect` over the small run writes a bundle whose dump lists its `jobs` jobs, and
/// whose dump, associations and QOS are, byte for byte, what the shell commands its
/// `--dry-run` prints write (the configuration, nodes and partitions carry the moment they
/// were read, so they are only checked to be there). `slurm what-if` then predicts the same
/// for both bundles, to the byte, and its baseline agrees with the run.
fn collect_makes_what_the_shell_commands_make(began: &str, jobs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (collected, scripted) = (dir.path().join("collected"), dir.path().join("scripted"));
    // The decay thread rewrites its file every minute; a pair of bundles made across one of
    // its ticks is made again.
    for _ in 0..2 {
        make_both_bundles(began, &collected, &scripted);
        let read = |dir: &Path| std::fs::read_to_string(dir.join("last-decay.txt")).unwrap();
        if read(&collected) == read(&scripted) {
            break;
        }
    }
    let read = |dir: &Path, name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    for name in [
        "sacct.txt",
        "history.txt",
        "assoc.txt",
        "qos.txt",
        "limits.txt",
        "qos-limits.txt",
        "tres.txt",
        "transactions.txt",
        "last-decay.txt",
    ] {
        assert_eq!(read(&collected, name), read(&scripted, name), "{name}");
    }
    for name in ["config.txt", "manifest.toml"] {
        assert!(!read(&collected, name).is_empty(), "{name}");
    }
    let dump = read(&collected, "sacct.txt");
    let is_job = |id: &str| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit());
    let listed: std::collections::BTreeSet<String> = dump
        .lines()
        .filter_map(|l| l.split('|').next().filter(|id| is_job(id)))
        .map(str::to_owned)
        .collect();
    assert_eq!(listed.len(), jobs, "the dump lists every job of the run");
    what_if_predicts_the_run(&collected, &scripted, &listed);
}

/// Writes a bundle of the run since `began` into `collected` with `slurm collect`, and into
/// `scripted` with the shell commands its `--dry-run` prints.
fn make_both_bundles(began: &str, collected: &Path, scripted: &Path) {
    let until = run("date", &["-u", "+%Y-%m-%dT%H:%M:%S"]);
    let window = ["--since", began, "--until", until.trim()];
    let fairshare = env!("CARGO_BIN_EXE_fairshare");
    let collect = |extra: &[&str]| {
        let args = [
            &["slurm", "collect", collected.to_str().unwrap()][..],
            &window,
            extra,
        ];
        run(fairshare, &args.concat())
    };
    let _ = std::fs::remove_dir_all(scripted);
    std::fs::create_dir(scripted).unwrap();
    collect(&[]);
    let script = collect(&["--dry-run"]);
    let config = run("scontrol", &["show", "config"]);
    let value = |key: &str| {
        let line = config.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_once('=').unwrap().1.trim().to_owned()
    };
    // The history's start, four half-lives before the window's, as collect computed it.
    let manifest = std::fs::read_to_string(collected.join("manifest.toml")).unwrap();
    let history_since = manifest
        .lines()
        .find_map(|l| l.strip_prefix("history_since = "))
        .expect("collect takes a history by default")
        .trim_matches('"')
        .to_owned();
    let status = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(scripted)
        .env("HISTORY_SINCE", history_since)
        .env("CLUSTER", value("ClusterName"))
        .env("STATE", value("StateSaveLocation"))
        .env("LOG", value("SlurmctldLogFile"))
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the shell commands of --dry-run:\n{script}"
    );
}

/// `slurm what-if` with no option but a policy: the per-job predictions of the two bundles are
/// the same to the byte, every row's `job_id` is one of the dump's `JobID`s, and the
/// baseline's figures at the top of the output are those of its JSON, every job compared and
/// the order of the contested pairs mostly the real one (loosely: two real runs agree on
/// 90–95 %).
fn what_if_predicts_the_run(
    collected: &Path,
    scripted: &Path,
    listed: &std::collections::BTreeSet<String>,
) {
    let fairshare = env!("CARGO_BIN_EXE_fairshare");
    let what_if = |bundle: &Path| {
        let (json, jobs) = (bundle.join("what-if.json"), bundle.join("what-if.csv"));
        let args = [
            "slurm",
            "what-if",
            bundle.to_str().unwrap(),
            "--policy",
            "sdrf",
            "--json",
            json.to_str().unwrap(),
            "--jobs",
            jobs.to_str().unwrap(),
        ];
        let out = std::process::Command::new(fairshare)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        (doc, std::fs::read_to_string(jobs).unwrap())
    };
    let (doc, rows) = what_if(collected);
    let (scripted_doc, scripted_rows) = what_if(scripted);
    assert_eq!(
        rows, scripted_rows,
        "the per-job predictions of the two bundles"
    );
    // The setting names each bundle's own files; what was predicted is the same. Only the
    // collected bundle's manifest says when its window opened (on the empty machine before
    // the run), so only it describes the machine then.
    let policies = |doc: &Value| {
        let mut policies = doc["prediction"]["policies"].clone();
        for policy in policies.as_array_mut().unwrap() {
            policy.as_object_mut().unwrap().remove("opened");
        }
        policies
    };
    assert_eq!(policies(&doc), policies(&scripted_doc));
    let trust = |doc: &Value| {
        let mut trust = doc["trust"].clone();
        trust.as_object_mut().unwrap().remove("window");
        trust
    };
    assert_eq!(trust(&doc), trust(&scripted_doc));
    assert_eq!(
        doc["trust"]["window"]["jobs_before"], 0,
        "the window opened before the run"
    );
    let mut table = csv::Reader::from_reader(rows.as_bytes());
    let headers = table.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (policy, job_id) = (column("policy"), column("job_id"));
    let mut ids: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for row in table.records() {
        let row = row.unwrap();
        ids.entry(row[policy].to_owned())
            .or_default()
            .insert(row[job_id].to_owned());
    }
    assert_eq!(ids.keys().collect::<Vec<_>>(), ["as-slurm", "sdrf"]);
    assert!(
        ids.values().all(|set| set == listed),
        "job_id is the dump's JobID"
    );
    let trust = &doc["trust"];
    assert_eq!(trust["jobs"].as_u64(), Some(listed.len() as u64), "{trust}");
    assert_eq!(trust["left_out"].as_u64(), Some(0), "{trust}");
    let order = trust["contested_order"].as_f64().unwrap();
    assert!(
        order >= 0.75,
        "the baseline orders {order} of the contested pairs as the run did"
    );
    let out = run(
        fairshare,
        &["slurm", "what-if", collected.to_str().unwrap()],
    );
    let top = out.lines().nth(1).unwrap();
    let shown = format!(
        "{:.1} % of {} contested pairs",
        100.0 * order,
        trust["contested_pairs"]
    );
    assert!(top.contains(&shown), "{top} shows {shown}");
    let taken = doc["taken"].to_string();
    // 22.05 logs the priority plugin's start after the controller's; 24.11 before it, and
    // the controller's start stands for it.
    assert!(
        taken.contains("the priority plugin's start in slurmctld.log.gz")
            || taken.contains("the controller's start in slurmctld.log.gz"),
        "collect copies the controller's log by default: {taken}"
    );
    without_the_controllers_log(collected, listed.len());
}

/// `collect --no-log` leaves the controller's log out, and the what-if still compares every
/// job, saying first that it knows the starts only to the second.
fn without_the_controllers_log(collected: &Path, jobs: usize) {
    let unlogged = collected.with_file_name("unlogged");
    let manifest = std::fs::read_to_string(collected.join("manifest.toml")).unwrap();
    let field = |key: &str| {
        let line = manifest.lines().find(|l| l.starts_with(key)).unwrap();
        line.split('"').nth(1).unwrap().to_owned()
    };
    let fairshare = env!("CARGO_BIN_EXE_fairshare");
    let (since, until) = (field("since ="), field("until ="));
    let dir = unlogged.to_str().unwrap();
    let window = ["--since", &since, "--until", &until];
    run(
        fairshare,
        &[&["slurm", "collect", dir, "--no-log"][..], &window].concat(),
    );
    assert!(!unlogged.join("slurmctld.log.gz").exists());
    let json = unlogged.join("what-if.json");
    let out = run(
        fairshare,
        &["slurm", "what-if", dir, "--json", json.to_str().unwrap()],
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(
        doc["trust"]["jobs"].as_u64(),
        Some(jobs as u64),
        "{}",
        doc["trust"]
    );
    let head: String = out.lines().take(6).collect();
    assert!(
        head.contains("holds no slurmctld.log.gz"),
        "said with the trust figures: {out}"
    );
}

/// Part 1: every association, at a tick and between ticks.
fn priorities_equal_sshare() {
    script("jobs-many.sh", &[]);
    // Past two decay ticks after the first jobs start, while several still run.
    std::thread::sleep(Duration::from_secs(120));
    next_tick();
    let at_tick = tempfile::tempdir().unwrap();
    compare_at(at_tick.path());
    std::thread::sleep(Duration::from_secs(30));
    let between = tempfile::tempdir().unwrap();
    compare_at(between.path());
    empty_queue(&USERS);
}

/// The site factor each job of `pass` is to hold.
fn wanted(pass: &Value) -> BTreeMap<u64, i64> {
    let jobs = pass["plan"]["jobs"].as_array().unwrap();
    jobs.iter()
        .filter_map(|j| Some((j["id"].as_u64()?, j["wanted"].as_i64()?)))
        .collect()
}

/// A configuration of `policy` in `dir`, weight 1000, the history since `window_s` ago, the
/// submit table written.
fn config(dir: &Path, policy: &str, window_s: u64) -> std::path::PathBuf {
    let path = dir.join("slurm.toml");
    let text = format!(
        "policy = \"{policy}\"\nweight = 1000\nwindow_s = {window_s}\nsubmit_table = \"{TABLE}\"\nlock = \"{}\"\n",
        dir.join("fairshare.lock").display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Part 2: with the `cpu` partition held by alice, three jobs of carol, three of dave, one of
/// grace and one of bob queue, each needing the whole partition; after a sync they start one
/// at a time in the order of the factors written (ties in submit order).
fn sync_orders_jobs(policy: &str) {
    empty_queue(&USERS);
    let began = std::time::Instant::now();
    let blocker = submit("alice", WHOLE_CPU, 25);
    wait_for("alice's job to start", Duration::from_secs(60), || {
        state(blocker) == "RUNNING"
    });
    let queued: Vec<u64> = [
        "carol", "carol", "carol", "dave", "dave", "dave", "grace", "bob",
    ]
    .iter()
    .map(|user| submit(user, WHOLE_CPU, 2))
    .collect();
    wait_for(
        "sprio to list the queued jobs",
        Duration::from_secs(30),
        || {
            let site = sprio_site();
            queued.iter().all(|id| site.contains_key(id))
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), policy, began.elapsed().as_secs() + 600);
    let pass = slurm(&config, &["sync"]);
    assert_eq!(
        pass["applied"]["mismatched"],
        serde_json::json!([]),
        "{policy}"
    );
    let planned = wanted(&pass);
    let site = sprio_site();
    for id in &queued {
        assert_eq!(site.get(id), planned.get(id), "{policy}: job {id}");
    }
    let mut expected = queued.clone();
    expected.sort_by_key(|id| (std::cmp::Reverse(planned[id]), *id));
    let runs = pass["plan"]["runs"].as_u64().unwrap();
    eprintln!("{policy}: factors {planned:?}, {runs} runs");
    if policy == "sdrf" {
        let carol_dave: Vec<u64> = expected
            .iter()
            .copied()
            .filter(|id| queued[..6].contains(id))
            .collect();
        let users: Vec<bool> = carol_dave
            .iter()
            .map(|id| queued[..3].contains(id))
            .collect();
        assert!(
            users.windows(2).all(|w| w[0] != w[1]),
            "SDRF interleaves carol's and dave's jobs: {carol_dave:?}"
        );
    }
    wait_for("every queued job to end", Duration::from_secs(180), || {
        queued.iter().all(|&id| state(id).is_empty())
    });
    let mut order = started(&queued);
    order.sort();
    let order: Vec<u64> = order.into_iter().map(|(_, id)| id).collect();
    assert_eq!(
        order, expected,
        "{policy}: jobs start in the order of the factors written"
    );
}

/// The site factor of `account`/`user` in the submit table.
fn in_table(account: &str, user: &str) -> i64 {
    let text = std::fs::read_to_string(TABLE).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{account}|{user}|")))
        .unwrap_or_else(|| panic!("{account}|{user} in {text}"));
    line.rsplit('|').next().unwrap().parse().unwrap()
}

/// The site factor `sprio` shows for job `id` once it lists it.
fn listed(id: u64) -> i64 {
    let mut factor = None;
    wait_for("sprio to list the new job", Duration::from_secs(30), || {
        factor = sprio_site().get(&id).copied();
        factor.is_some()
    });
    factor.unwrap()
}

/// Part 3: a sync writes the table; a new job of a waiting user and one of a user with nothing
/// waiting are ranked at submission; a stale table, and `reset`, leave a new job at 0.
fn the_submit_script_ranks_a_new_job() {
    empty_queue(&USERS);
    let blocker = submit("alice", WHOLE_CPU, 60);
    wait_for("alice's job to start", Duration::from_secs(60), || {
        state(blocker) == "RUNNING"
    });
    submit("carol", WHOLE_CPU, 2);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "sdrf", 3_600);
    slurm(&config, &["sync"]);
    let rows = std::fs::read_to_string(TABLE).unwrap().lines().count();
    assert_eq!(
        rows,
        1 + 10,
        "a first line and every association, root's user included"
    );
    for (user, account) in [("carol", "chemistry"), ("ivan", "mech")] {
        let id = submit(user, WHOLE_CPU, 2);
        let factor = listed(id);
        assert!(factor > 0, "{user}'s new job waits at {factor}");
        assert_eq!(
            factor,
            in_table(account, user),
            "{user}: the table's factor"
        );
    }
    // A table the adapter wrote an hour ago is stale: nothing is set.
    let text = std::fs::read_to_string(TABLE).unwrap();
    let written = text.lines().next().unwrap().to_owned();
    let old = format!("# fairshare {}", 1_700_000_000);
    std::fs::write(TABLE, text.replacen(&written, &old, 1)).unwrap();
    assert_eq!(
        listed(submit("dave", WHOLE_CPU, 2)),
        0,
        "a stale table sets nothing"
    );
    slurm(&config, &["reset"]);
    assert!(!Path::new(TABLE).exists(), "reset removes the table");
    assert_eq!(
        listed(submit("grace", WHOLE_CPU, 2)),
        0,
        "no table, no factor"
    );
    empty_queue(&USERS);
}
