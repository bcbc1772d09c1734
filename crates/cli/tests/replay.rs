//! `fairshare replay` and `fairshare sweep` end to end: on a workload this test writes itself,
//! on the example trace a fresh clone has, and on every shared trace (ignored, with the reason,
//! where `../shared/traces` is absent).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fairshare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// A small SWF workload: three users, 300 jobs, fixed pseudo-random sizes and runtimes.
fn write_workload(dir: &Path) -> PathBuf {
    let mut text = String::from("; a workload written by the replay test\n");
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for job in 1..=300 {
        let (submit, runtime, cpus, user) = (job * 7, 30 + next(300), 1 + next(8), 1 + next(3));
        let memory = 1000 + 100 * next(50);
        text += &format!(
            "{job} {submit} 0 {runtime} {cpus} -1 {memory} {cpus} -1 -1 1 {user} 1 -1 1 -1 -1 -1\n"
        );
    }
    let path = dir.join("workload.swf");
    std::fs::write(&path, text).expect("write the workload");
    path
}

#[test]
fn a_fresh_clone_replays_its_example_trace_as_the_readme_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .current_dir(&root)
        .args([
            "replay",
            "examples/traces/small-cluster.swf",
            "--scheduler",
            "easy",
        ])
        .args(["--policy", "fifo", "--policy", "drf", "--policy", "sdrf"])
        .args(["--shares", "examples/shares.toml", "--drain", "--json", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["tasks_found"], 1042);
    assert_eq!(summary["setting"]["capacity"][0], 64.0);
    assert!(
        stderr.contains("23 of 1042 jobs were cancelled before they started"),
        "{stderr}"
    );
    for policy in summary["policies"].as_array().unwrap() {
        let settled = ["tasks_completed", "tasks_cancelled"].map(|k| policy[k].as_u64().unwrap());
        assert_eq!(
            settled.iter().sum::<u64>(),
            1042,
            "{}: every job drains",
            policy["policy"]
        );
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

/// Every count in a replay summary adds up.
fn assert_reconciles(summary: &Value, what: &str) {
    let found = summary["tasks_found"].as_u64().unwrap();
    let skipped: u64 = summary["tasks_skipped"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    for policy in summary["policies"].as_array().unwrap() {
        let n = |k: &str| {
            policy[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{what}: {k} missing"))
        };
        assert_eq!(
            found,
            n("tasks_submitted") + n("tasks_beyond_horizon") + skipped,
            "{what}: found ≠ submitted + skipped"
        );
        assert_eq!(
            n("tasks_submitted"),
            n("tasks_completed") + n("tasks_unfinished") + n("tasks_never_fit"),
            "{what}: submitted ≠ completed + unfinished + never fit"
        );
        assert!(n("tasks_started") >= n("tasks_completed"), "{what}");
    }
}

#[test]
fn replay_is_deterministic_and_reconciles() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_workload(dir.path());
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let run = |name: &str| {
        let status = fairshare(&[
            "replay",
            trace.to_str().unwrap(),
            "--policy",
            "fifo",
            "--policy",
            "drf",
            "--policy",
            "sdrf:delta=0.99",
            "--capacity-fraction",
            "0.5",
            "--json",
            &file(&format!("{name}.json")),
            "--report",
            &file(&format!("{name}.html")),
            "--stats",
            &file(&format!("{name}.stats.json")),
            "--jobs",
            &file(&format!("{name}.jobs.csv")),
        ]);
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    run("a");
    run("b");
    let bytes = |name: &str| std::fs::read(file(name)).unwrap();
    // The documents hold no clock reading: two runs give the same bytes.
    assert_eq!(bytes("a.json"), bytes("b.json"));
    assert_eq!(bytes("a.html"), bytes("b.html"));
    // The per-job table too, though its policies run in parallel.
    assert_eq!(bytes("a.jobs.csv"), bytes("b.jobs.csv"));
    let table = String::from_utf8(bytes("a.jobs.csv")).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["policy", "id", "job_id"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3 * 300, "every job once per policy");
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let policies: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(policies[0], "fifo", "in the order given");
    assert_eq!(policies[899], "sdrf:delta=0.99");
    assert!(
        !(dir.path().read_dir().unwrap()).any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".fairshare-jobs")),
        "the parts are removed"
    );
    let a = read_json(Path::new(&file("a.json")));
    let finished = rows
        .iter()
        .filter(|r| r[column("final_state")] == "finished");
    let completed: u64 = (a["policies"].as_array().unwrap().iter())
        .map(|p| p["tasks_completed"].as_u64().unwrap())
        .sum();
    assert_eq!(
        finished.count() as u64,
        completed,
        "the rows' states are the summary's counts"
    );
    assert_reconciles(&a, "generated workload");
    assert_eq!(a["tasks_found"], 300);
    assert_eq!(a["policies"].as_array().unwrap().len(), 3);
    assert!(a["policies"][2]["livetree_events"].is_u64());
    assert!(a["policies"][0].get("wall_s").is_none());
    let stats = read_json(Path::new(&file("a.stats.json")));
    let stats = stats.as_array().unwrap();
    assert_eq!(stats.len(), 3);
    assert_eq!(stats[2]["run"], "sdrf:delta=0.99");
    assert_eq!(stats[2]["events"], a["policies"][2]["events"]);
    assert!(stats[2]["wall_s"].as_f64().unwrap() >= 0.0);
    let html = String::from_utf8(bytes("a.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("sdrf:delta=0.99"));
}

#[test]
fn replay_explains_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bad.swf");
    let good = "1 0 0 60 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
    std::fs::write(
        &trace,
        format!("{good}2 5 0 x 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n"),
    )
    .unwrap();
    let out = fairshare(&["replay", trace.to_str().unwrap(), "--format", "swf"]);
    assert!(!out.status.success());
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.contains("bad.swf:2: field 4 (run time): expected a number, found \"x\""),
        "{message}"
    );
    let lenient = fairshare(&[
        "replay",
        trace.to_str().unwrap(),
        "--format",
        "swf",
        "--lenient",
        "--json",
        "-",
    ]);
    let summary: Value = serde_json::from_slice(&lenient.stdout).expect("json on stdout");
    assert_eq!(summary["tasks_skipped"]["malformed: field 4 (run time)"], 1);
    let policy = fairshare(&[
        "replay",
        trace.to_str().unwrap(),
        "--policy",
        "sdrf:delta=7",
    ]);
    assert!(String::from_utf8_lossy(&policy.stderr).contains("delta must lie in [0, 1]"));
    let twice = fairshare(&[
        "replay",
        trace.to_str().unwrap(),
        "--policy",
        "drf",
        "--policy",
        "drf",
    ]);
    let message = String::from_utf8_lossy(&twice.stderr);
    assert!(
        message.contains("policy \"drf\" is given twice"),
        "{message}"
    );
    let at = |capacity: &str| {
        let args = [
            "replay",
            trace.to_str().unwrap(),
            "--lenient",
            "--json",
            "-",
            "--capacity",
            capacity,
        ];
        fairshare(&args)
    };
    assert!(String::from_utf8_lossy(&at("cpu=4,gpu=1").stderr).contains("unknown resource \"gpu\""));
    let nowhere = fairshare(&[
        "replay",
        trace.to_str().unwrap(),
        "--lenient",
        "--jobs",
        "/nonexistent/jobs.csv",
    ]);
    let message = String::from_utf8_lossy(&nowhere.stderr);
    assert!(
        message.contains("--jobs /nonexistent/jobs.csv: the folder /nonexistent does not exist"),
        "{message}"
    );
    assert!(String::from_utf8_lossy(&at("cpu=-4").stderr).contains("must be a positive amount"));
    let summary: Value = serde_json::from_slice(&at("cpu=4").stdout).expect("json on stdout");
    assert_eq!(summary["setting"]["capacity"][0], 4.0);
    assert_eq!(summary["setting"]["capacity_fraction"], Value::Null);
}

#[test]
fn sweep_shards_merge_into_the_whole_grid() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_workload(dir.path());
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let grid = ["--fractions", "0.5,1.0", "--nines", "1,3"];
    let mut shards = Vec::new();
    for shard in ["0/2", "1/2"] {
        let out = path(&format!("shard{}.json", &shard[..1]));
        let mut args = vec![
            "sweep",
            trace.to_str().unwrap(),
            "--shard",
            shard,
            "--json",
            &out,
        ];
        args.extend(grid);
        assert!(fairshare(&args).status.success());
        shards.push(out);
    }
    let whole = path("whole.json");
    let mut args = vec!["sweep", trace.to_str().unwrap(), "--json", &whole];
    args.extend(grid);
    assert!(fairshare(&args).status.success());
    let merged = path("merged.json");
    let status = fairshare(&["sweep", "merge", &shards[0], &shards[1], "--json", &merged]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let strip = |mut v: Value| {
        v["shard_ids"] = Value::Null;
        v["shards"] = Value::Null;
        v
    };
    let (merged, whole) = (read_json(Path::new(&merged)), read_json(Path::new(&whole)));
    assert_eq!(merged["cells"].as_array().unwrap().len(), 6);
    assert_eq!(strip(merged), strip(whole));
    let twice = fairshare(&["sweep", "merge", &shards[0], &shards[0]]);
    assert!(String::from_utf8_lossy(&twice.stderr).contains("already in the merge"));
}

/// The shared traces beside the workspace (the tests that read them are ignored where they
/// were absent when the crate was built; see `crates/test-environment.rs`).
fn shared_traces() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    assert!(dir.is_dir(), "{} is gone since the build", dir.display());
    dir
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn every_shared_trace_replays_and_reconciles() {
    let traces = shared_traces();
    let mut google: Vec<String> = std::fs::read_dir(traces.join("google-2011/task_events"))
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    google.sort();
    let swf = |name: &str| vec![traces.join("swf").join(name).to_str().unwrap().to_owned()];
    let alibaba = vec![traces
        .join("alibaba-gpu-2023/openb_pod_list_default.csv")
        .to_str()
        .unwrap()
        .to_owned()];
    let machines = |path: PathBuf| vec!["--machines".to_owned(), path.to_str().unwrap().to_owned()];
    let cases: Vec<(Vec<String>, Vec<String>)> = vec![
        (swf("wagap-2013.swf"), vec![]),
        (
            swf("wagap-2013.swf"),
            machines(traces.join("swf/wagap-2013.swf.machines")),
        ),
        (swf("wagap-2013.swf"), {
            let mut cpu_only = machines(traces.join("swf/wagap-2013.swf.machines"));
            cpu_only.extend(["--swf-memory".to_owned(), "none".to_owned()]);
            cpu_only
        }),
        (swf("METACENTRUM-2009-2.swf.gz"), vec![]),
        (swf("KTH-SP2-1996-2.1-cln.swf.gz"), vec![]),
        (alibaba.clone(), vec![]),
        (
            alibaba,
            machines(traces.join("alibaba-gpu-2023/openb_node_list_all_node.csv")),
        ),
        (google, vec![]),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (files, extra) in cases {
        let out = dir.path().join("s.json");
        let mut args: Vec<String> = vec!["replay".into()];
        args.extend(files.iter().cloned());
        args.extend(extra.iter().cloned());
        args.extend(
            ["--policy", "drf", "--policy", "sdrf:delta=0.999", "--json"].map(String::from),
        );
        args.push(out.to_str().unwrap().into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let status = fairshare(&args);
        let what = format!("{} {}", files[0], extra.join(" "));
        assert!(
            status.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let summary = read_json(&out);
        assert_reconciles(&summary, &what);
        eprintln!(
            "{what}: found {}, skipped {}",
            summary["tasks_found"], summary["tasks_skipped"]
        );
    }
}

/// The textbook EASY case as an SWF log on a 4-processor machine its header declares: the
/// replay finds the machine in the header, backfills the short narrow job, reserves the wide
/// one, and reads the log's own waits as the "as recorded" row.
#[test]
fn easy_backfilling_on_the_machine_the_header_declares() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("easy.swf");
    let line = |id: u32, submit: u32, wait: u32, run: u32, cpus: u32, walltime: u32| {
        format!(
            "{id} {submit} {wait} {run} {cpus} -1 -1 {cpus} {walltime} -1 1 {id} 1 1 1 1 -1 -1\n"
        )
    };
    let text = String::from("; MaxProcs: 4\n; MaxNodes: 4\n")
        + &line(1, 0, 0, 10, 2, 10)
        + &line(2, 1, 9, 5, 4, 5)
        + &line(3, 2, 0, 5, 1, 5)
        + &line(4, 3, 12, 20, 1, 20);
    std::fs::write(&log, text).unwrap();
    let path = log.to_str().unwrap();
    let out = fairshare(&[
        "replay",
        path,
        "--drain",
        "--policy",
        "fifo",
        "--scheduler",
        "easy",
        "--gantt",
        "0+4",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let setting = &summary["setting"];
    assert_eq!(setting["scheduler"], "easy");
    assert_eq!(setting["capacity_source"], "the log's header (MaxProcs: 4)");
    assert_eq!(
        summary["policies"][0]["mean_wait_s"], 5.25,
        "(0 + 9 + 0 + 12) / 4"
    );
    assert_eq!(setting["recorded"]["mean_wait_s"], 5.25);
    let view = &setting["machine_view"];
    assert_eq!(
        view["nodes"],
        serde_json::json!([{"name": "pool", "processors": 4.0}])
    );
    let listed: Vec<u64> = summary["policies"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        listed,
        [1, 3],
        "the jobs running in the first 4 s, by start"
    );
    let bad = fairshare(&["replay", path, "--gantt", "5d"]);
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && said.contains("expected START+LENGTH"),
        "{said}"
    );
    let fill = fairshare(&["replay", path, "--drain", "--policy", "fifo", "--json", "-"]);
    let fill: serde_json::Value = serde_json::from_slice(&fill.stdout).unwrap();
    assert_eq!(
        fill["policies"][0]["mean_wait_s"], 8.5,
        "(0 + 9 + 13 + 12) / 4 without backfilling"
    );
}

/// Two accounts sharing a 4-processor machine 3 : 1, each with one user and one 10 s job
/// taking the whole machine: the first account is delivered everything until its job ends,
/// then its share of the processor-time falls as 10 s / t, and both end at half.
#[test]
fn accounts_are_followed_against_their_entitlement_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("accounts.swf");
    let line = |id: u32| format!("{id} 0 0 10 4 -1 -1 4 10 -1 1 {id} 1 1 1 1 -1 -1\n");
    std::fs::write(&log, String::from("; MaxProcs: 4\n") + &line(1) + &line(2)).unwrap();
    let shares = dir.path().join("shares.toml");
    std::fs::write(
        &shares,
        "[accounts]\na = { shares = 3 }\nb = { shares = 1 }\n\n[users]\n\"1\" = { account = \"a\" }\n\"2\" = { account = \"b\" }\n",
    )
    .unwrap();
    let out = fairshare(&[
        "replay",
        log.to_str().unwrap(),
        "--drain",
        "--policy",
        "fifo",
        "--shares",
        shares.to_str().unwrap(),
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let policy = &summary["policies"][0];
    let times: Vec<f64> = policy["timeline"]["times_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert!(times.len() > 2 && times.iter().any(|t| *t > 10.0));
    let account = |name: &str| {
        let accounts = policy["accounts"].as_array().unwrap();
        accounts.iter().find(|a| a["name"] == name).unwrap().clone()
    };
    let (a, b) = (account("a"), account("b"));
    assert_eq!(a["entitlement"], 0.75);
    assert_eq!(b["entitlement"], 0.25);
    assert_eq!(a["delivered"], 0.5);
    assert_eq!(a["mean_response_s"], 10.0, "ran at once for 10 s");
    assert_eq!(b["mean_response_s"], 20.0, "waited 10 s, ran 10 s");
    let over_time = |account: &Value| account["delivered_over_time"].as_array().unwrap().clone();
    let (a_series, b_series) = (over_time(&a), over_time(&b));
    assert_eq!(a_series.len(), times.len());
    for ((t, a), b) in times.iter().zip(&a_series).zip(&b_series) {
        if *t == 0.0 {
            assert!(a.is_null() && b.is_null(), "nothing delivered at 0");
            continue;
        }
        let expected = if *t <= 10.0 { 1.0 } else { 10.0 / t };
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!((a - expected).abs() < 1e-9, "a at {t}: {a}, not {expected}");
        assert!((a + b - 1.0).abs() < 1e-9, "the two make the whole at {t}");
    }
}

/// A `.queues` file beside the log holds queue 1 to 2 of the machine's 4 processors: its
/// second job waits for its first while a job of queue 2 starts; the summary says where the
/// limits came from and which queues did not match.
#[test]
fn a_queues_file_beside_the_log_limits_its_queues() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("queued.swf");
    let line = |id: u32, submit: u32, cpus: u32, queue: u32| {
        format!("{id} {submit} 0 10 {cpus} -1 -1 {cpus} 10 -1 1 {id} 1 1 {queue} 1 -1 -1\n")
    };
    let text =
        String::from("; MaxProcs: 4\n") + &line(1, 0, 2, 1) + &line(2, 1, 1, 1) + &line(3, 2, 1, 2);
    std::fs::write(&log, text).unwrap();
    let path = log.to_str().unwrap();
    let mean_wait = |args: &[&str]| {
        let out = fairshare(
            &[
                &[
                    "replay",
                    path,
                    "--drain",
                    "--policy",
                    "fifo",
                    "--scheduler",
                    "easy",
                    "--json",
                    "-",
                ],
                args,
            ]
            .concat(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            summary["policies"][0]["mean_wait_s"].as_f64().unwrap(),
            summary["setting"]["queues"].clone(),
        )
    };
    assert_eq!(mean_wait(&[]), (0.0, Value::Null), "no queues file yet");
    std::fs::write(
        dir.path().join("queued.swf.queues"),
        "# name limit priority\n1 2 0\n7 -1 1\n",
    )
    .unwrap();
    let (wait, said) = mean_wait(&[]);
    assert_eq!(wait, 3.0, "(0 + 9 + 0) / 3");
    let said = said.as_str().unwrap();
    assert!(
        said.ends_with(
            "queued.swf.queues; not listed, so unlimited at priority 0: 2; named by no job: 7"
        ),
        "{said}"
    );
    let elsewhere = dir.path().join("site.queues");
    std::fs::write(&elsewhere, "1 -1 0\n").unwrap();
    assert_eq!(
        mean_wait(&["--queues", elsewhere.to_str().unwrap()]).0,
        0.0,
        "--queues wins"
    );
    std::fs::write(&elsewhere, "1 many 0\n").unwrap();
    let bad = fairshare(&["replay", path, "--queues", elsewhere.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && said.contains("site.queues:1: field 2 (processor limit)"),
        "{said}"
    );
}

#[test]
fn tasks_left_out_by_default_are_a_warning_naming_the_option_that_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("mem.swf");
    // Two of three jobs record memory, so memory is a resource and the third is left out.
    let lines = [
        "1 0 0 100 4 -1 1000 4 -1 -1 1 7 1 -1 1 1 -1 -1",
        "2 10 0 100 2 -1 -1 2 -1 -1 1 8 1 -1 1 1 -1 -1",
        "3 20 0 100 1 -1 500 1 -1 -1 1 9 1 -1 1 1 -1 -1",
    ];
    std::fs::write(&swf, lines.join("\n") + "\n").unwrap();
    let out = fairshare(&["replay", swf.to_str().unwrap(), "--policy", "fifo"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .contains("1 of 3 tasks of the trace are left out as \"no memory\": --swf-memory none"),
        "{stdout}"
    );
    let kept = fairshare(&[
        "replay",
        swf.to_str().unwrap(),
        "--policy",
        "fifo",
        "--swf-memory",
        "none",
    ]);
    assert!(!String::from_utf8_lossy(&kept.stdout).contains("are left out as"));
}

/// A Slurm dump of three jobs on one 4-CPU node, written by the test: alice's 3-CPU job runs
/// 100 s, bob's 2-CPU job waits behind it, carol's 1-CPU, 10-s job would fit at once.
fn write_slurm_dump(dir: &Path) -> PathBuf {
    let text = "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State|QOS\n\
        1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED|normal\n\
        2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:40|2026-01-01T00:01:50|00:00:10|00:00:10|cpu=2,node=1|cpu|COMPLETED|normal\n\
        3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:31|2026-01-01T00:00:41|00:00:10|00:00:10|cpu=1,node=1|cpu|COMPLETED|scavenger\n";
    let path = dir.join("sacct.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// The cells of the named `columns` in each row of the per-job table at `path`, whose
/// policy, first, holds no comma.
fn job_cells<const N: usize>(path: &Path, columns: [&str; N]) -> Vec<[String; N]> {
    let table = std::fs::read_to_string(path).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let at = columns.map(column);
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            at.map(|i| cells[i].to_owned())
        })
        .collect()
}

/// A dump of `rows` in `dir`, with the column at index `without` taken out of every row when
/// given (a dump as a site without that column would have it), named by what it lacks.
fn write_rows(dir: &Path, rows: &[&str], without: Option<usize>) -> PathBuf {
    let text: Vec<String> = (rows.iter())
        .map(|row| {
            let mut cells: Vec<&str> = row.split('|').collect();
            if let Some(column) = without {
                cells.remove(column);
            }
            cells.join("|")
        })
        .collect();
    let path = dir.join(format!("sacct-without-{without:?}.txt"));
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// `fairshare replay` of the Slurm dump `dump` under FIFO on one 4-CPU node with `--scheduler
/// slurm`, until every job ends, its per-job table written to `jobs`, with `extra` arguments.
fn replay_slurm_dump(dump: &Path, jobs: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        dump.to_str().unwrap(),
        "--policy",
        "fifo",
        "--capacity",
        "cpu=4,mem=0,gpu=0",
        "--scheduler",
        "slurm",
        "--drain",
        "--jobs",
        jobs.to_str().unwrap(),
    ];
    args.extend(extra);
    fairshare(&args)
}

/// `--scheduler slurm`: carol's job starts at the first backfill cycle (30 s by default,
/// 10 s with `bf_interval=10` from `--slurm-conf`, whose unmodelled settings are named, as is
/// a size factor without the cluster's nodes), and
/// the per-job table sets each predicted start beside the recorded one.
#[test]
fn the_slurm_scheduler_predicts_starts_beside_the_recorded_ones() {
    let dir = tempfile::tempdir().unwrap();
    let dump = write_slurm_dump(dir.path());
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=10,bf_continue,batch_sched_delay=0\nPriorityWeightAge=1000\nPriorityWeightJobSize=10\nPriorityWeightQOS=1000\nPriorityWeightAssoc=10\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let run = |extra: &[&str]| replay_slurm_dump(&dump, &jobs, extra);
    let starts = |extra: &[&str]| {
        let out = run(extra);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let picked = [
            "user",
            "partition",
            "starting_time",
            "recorded_starting_time",
            "starting_time_error",
            "qos",
        ];
        let mut rows = job_cells(&jobs, picked);
        rows.sort();
        (rows, stderr)
    };
    let origin = 1_767_225_600; // 2026-01-01T00:00:00Z
    let at = |s: u64| (origin + s).to_string();
    let (rows, stderr) = starts(&[]);
    assert!(
        stderr.contains("note: the dump has no Flags column, so Slurm's backfill cycles are counted from the first submission"),
        "{stderr}"
    );
    assert_eq!(rows[2][0], "carol");
    assert_eq!(rows[2][1], "cpu");
    assert_eq!(rows[2][2], at(30), "at the first backfill cycle");
    assert_eq!(rows[2][3], at(31), "as Slurm recorded it");
    assert_eq!(rows[2][4], "-1");
    assert_eq!(
        (rows[0][5].as_str(), rows[2][5].as_str()),
        ("normal", "scavenger")
    );
    // bob starts at the main scheduler's pass the second after alice's end (Slurm's
    // background loop); the dump, made up, says at her end.
    assert_eq!(
        (rows[1][2].clone(), rows[1][4].clone()),
        (at(101), "1".to_owned())
    );
    let (rows, stderr) = starts(&["--slurm-conf", conf.to_str().unwrap()]);
    assert_eq!(rows[2][2], at(10), "bf_interval=10");
    assert!(
        stderr.contains(
            "note: --slurm-conf: SchedulerParameters not modelled, so left out: bf_continue"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: PriorityWeightAssoc is set but the shares give no association a priority above 0"),
        "{stderr}"
    );
    assert!(!stderr.contains("priority terms not modelled"), "{stderr}");
    assert!(
        stderr.contains("the job size factor counts the replay's nodes and processors"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "note: --slurm-conf: PriorityWeightQOS is set but no QOS has a priority above 0"
        ),
        "{stderr}"
    );
    // With the QOS priorities, carol's scavenger job outranks bob's and starts beside alice's
    // in the main scheduler's pass at its submission.
    let qos = dir.path().join("qos.txt");
    std::fs::write(&qos, "normal|1.000000|10\nscavenger|0.500000|1000\n").unwrap();
    let (rows, stderr) = starts(&[
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--qos",
        qos.to_str().unwrap(),
    ]);
    assert_eq!(rows[2][2], at(2), "the higher QOS first");
    assert!(!stderr.contains("PriorityWeightQOS is set"), "{stderr}");
    // With association priorities (account a's 50 inherited by bob, carol's own 10: factors
    // 1 and 0.2), PriorityWeightAssoc=10 leaves carol's QOS ahead (1,002 points to bob's 20)
    // and she starts at 2 s; at 5,000, bob's 5,010 outrank her 2,000 and she waits for the
    // backfill cycle at 10 s.
    let assoc = dir.path().join("assoc.txt");
    std::fs::write(
        &assoc,
        "fairshare|root|||1||\nfairshare|a|||1|root|50\nfairshare|a|alice||1||\n\
         fairshare|a|bob||1||\nfairshare|a|carol||1||10\n",
    )
    .unwrap();
    let with_assoc = |weight: &str| {
        let conf_assoc = dir.path().join(format!("slurm-assoc-{weight}.conf"));
        let text = std::fs::read_to_string(&conf).unwrap();
        let text = text.replace(
            "PriorityWeightAssoc=10",
            &format!("PriorityWeightAssoc={weight}"),
        );
        std::fs::write(&conf_assoc, text).unwrap();
        starts(&[
            "--slurm-conf",
            conf_assoc.to_str().unwrap(),
            "--qos",
            qos.to_str().unwrap(),
            "--shares",
            assoc.to_str().unwrap(),
        ])
    };
    let (rows, stderr) = with_assoc("10");
    assert_eq!(
        rows[2][2],
        at(2),
        "10 points of association do not outweigh the QOS"
    );
    assert!(!stderr.contains("PriorityWeightAssoc is set"), "{stderr}");
    let (rows, _) = with_assoc("5000");
    assert_eq!(
        rows[2][2],
        at(10),
        "4,000 points for bob: carol waits for the backfill"
    );
    std::fs::write(&qos, "normal|1.000000|ten\n").unwrap();
    let out = run(&[
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--qos",
        qos.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("line 1") && stderr.contains("Priority"),
        "{stderr}"
    );
}

/// The dump's `Flags` say Slurm's backfill started carol's job at 31 s: its cycles fall 1 s
/// past each half-minute, and the replay starts her job at 31 s, as recorded, rather than at
/// 30 s, the first cycle counted from the first submission.
#[test]
fn the_jobs_the_backfill_started_put_its_cycles_where_they_fell() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read_to_string(write_slurm_dump(dir.path())).unwrap();
    let mut lines = plain.lines();
    let mut text = lines.next().unwrap().to_owned() + "|Flags\n";
    for (line, flags) in lines.zip(["SchedSubmit", "SchedMain", "SchedBackfill"]) {
        text += &format!("{line}|{flags}\n");
    }
    let dump = dir.path().join("flags.txt");
    std::fs::write(&dump, text).unwrap();
    let jobs = dir.path().join("jobs.csv");
    let out = replay_slurm_dump(&dump, &jobs, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: Slurm's backfill cycles fall 1 s past each multiple of bf_interval (30 s) from the epoch, where 1 of the 1 jobs the dump's Flags say the backfill started began"),
        "{stderr}"
    );
    let mut rows = job_cells(&jobs, ["user", "starting_time_error"]);
    rows.sort();
    let errors: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    // carol's as recorded; alice's at the first cycle, 1 s, and bob's at the main scheduler's
    // pass the second after her end (the dump, made up, starts them at once).
    assert_eq!(errors, ["1", "2", "0"]);
}

/// `--site-weight`: a policy other than Slurm's own reaches Slurm as site factors of this
/// weight. alice fills the 4-CPU node until 100 s; bob's and carol's 4-CPU jobs wait, each
/// submitted with the submit table's factor, the whole weight. At the adapter's pass due at
/// 60 s (`--site-interval`, 60 s by default; it runs at the next event, 100 s), FIFO's order
/// gives bob's run the site factor 1 and carol's 0.5 of the weight, and carol's QOS adds 1,000
/// points: at the default weight (100,000) bob starts first when alice's node is free, at
/// weight 1 carol does (both runs get 1), and so she does when the adapter writes only every
/// 1,000 s (both still hold the whole weight at 100 s), unless its passes fall between (an
/// offset after `@`). Without `--scheduler slurm` either option is refused, as is an interval
/// under a second or an offset that is not a duration.
#[test]
fn the_site_weight_sets_a_policys_factors_against_the_other_terms() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("sacct.txt");
    std::fs::write(
        &dump,
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State|QOS\n\
        1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=4,node=1|cpu|COMPLETED|normal\n\
        2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:40|2026-01-01T00:01:50|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED|normal\n\
        3|carol|a|2026-01-01T00:00:02|2026-01-01T00:01:50|2026-01-01T00:02:00|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED|high\n",
    )
    .unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "PriorityWeightQOS=1000\nPriorityCalcPeriod=1\nSchedulerParameters=batch_sched_delay=0\n",
    )
    .unwrap();
    let qos = dir.path().join("qos.txt");
    std::fs::write(&qos, "normal|1.000000|0\nhigh|1.000000|100\n").unwrap();
    let jobs = dir.path().join("jobs.csv");
    let first_at_100_s = |extra: &[&str]| {
        let (conf, qos) = (conf.to_str().unwrap(), qos.to_str().unwrap());
        let mut args = vec!["--slurm-conf", conf, "--qos", qos];
        args.extend(extra);
        let out = replay_slurm_dump(&dump, &jobs, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The first to start once alice's node is free (its nodes answer 5 ms after her end).
        let rows = job_cells(&jobs, ["starting_time", "user"]);
        let start = |row: &[String; 2]| row[0].parse::<f64>().unwrap();
        let [_, user] = (rows.into_iter())
            .filter(|[_, user]| user != "alice")
            .min_by(|a, b| start(a).total_cmp(&start(b)))
            .unwrap();
        user
    };
    assert_eq!(
        first_at_100_s(&[]),
        "bob",
        "the site factor outweighs the QOS"
    );
    assert_eq!(
        first_at_100_s(&["--site-weight", "1"]),
        "carol",
        "the QOS outweighs it"
    );
    assert_eq!(
        first_at_100_s(&["--site-interval", "1000s"]),
        "carol",
        "both still hold the submit table's factor"
    );
    // The dump starts 600 s past a multiple of 1,000 s since the epoch: a pass 650 s past
    // each multiple falls 50 s into the run, before alice's end; one 750 s past, after it.
    assert_eq!(first_at_100_s(&["--site-interval", "1000s@650s"]), "bob");
    assert_eq!(first_at_100_s(&["--site-interval", "1000s@750s"]), "carol");
    for option in [
        ["--site-weight", "1"],
        ["--site-interval", "5s"],
        ["--turn-seed", "3"],
    ] {
        let mut args = vec!["replay", dump.to_str().unwrap()];
        args.extend(option);
        let refused = fairshare(&args);
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("needs --scheduler slurm"), "{stderr}");
    }
    let json = dir.path().join("drawn.json");
    let drawn = replay_slurm_dump(
        &dump,
        &jobs,
        &["--turn-seed", "3", "--json", json.to_str().unwrap()],
    );
    assert!(drawn.status.success());
    assert_eq!(
        read_json(&json)["setting"]["turn_seed"],
        3,
        "the seed is said in the JSON"
    );
    for bad in ["0.5s", "5s@soon"] {
        let out = replay_slurm_dump(&dump, &jobs, &["--site-interval", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        let said = format!("--site-interval {bad}: how often the Slurm adapter writes");
        assert!(stderr.contains(&said), "{stderr}");
    }
}

/// A Slurm site's nodes and partitions as `--machines` (the saved output of `scontrol show
/// node` and `show partition`): n1 in partition cpu, g1 in gpu, 4 CPUs each. alice's 3-CPU
/// job fills n1 until 100 s; bob's 2-CPU cpu job waits for it (and starts at the main
/// scheduler's pass the second after), and blocks partition cpu in the main scheduler: dave's
/// 1-CPU cpu job, which fits beside alice's, waits for the backfill cycle at 30 s, while
/// carol's gpu job starts on g1 at the main scheduler's next pass, at 4 s (`batch_sched_delay`:
/// 3 s after the one at 1 s). A file that defines no node is refused with the reason.
#[test]
fn a_slurm_sites_nodes_keep_each_job_in_its_partition() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("sacct.txt");
    std::fs::write(
        &dump,
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n\
        1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED\n\
        2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:41|2026-01-01T00:01:51|00:00:10|00:00:10|cpu=2,node=1|cpu|COMPLETED\n\
        3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:04|2026-01-01T00:00:14|00:00:10|00:00:10|cpu=1,node=1|gpu|COMPLETED\n\
        4|dave|a|2026-01-01T00:00:03|2026-01-01T00:00:30|2026-01-01T00:00:40|00:00:10|00:00:10|cpu=1,node=1|cpu|COMPLETED\n",
    )
    .unwrap();
    let nodes = dir.path().join("config.txt");
    std::fs::write(
        &nodes,
        "NodeName=n1 Arch=x86_64 CoresPerSocket=1\n   CPUAlloc=0 CPUTot=4 CPULoad=0.00\n   RealMemory=16000 AllocMem=0\n\n\
         NodeName=g1 Arch=x86_64 CoresPerSocket=1\n   CPUTot=4\n   Gres=gpu:4\n   RealMemory=32000\n\n\
         PartitionName=cpu\n   AllowGroups=ALL Default=YES\n   Nodes=n1\n\n\
         PartitionName=gpu\n   AllowGroups=ALL Default=NO\n   Nodes=g1\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let replay = |machines: &Path| {
        fairshare(&[
            "replay",
            dump.to_str().unwrap(),
            "--policy",
            "fifo",
            "--machines",
            machines.to_str().unwrap(),
            "--scheduler",
            "slurm",
            "--drain",
            "--jobs",
            jobs.to_str().unwrap(),
        ])
    };
    let out = replay(&nodes);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let picked = [
        "user",
        "partition",
        "allocated_resources",
        "starting_time_error",
    ];
    let mut rows = job_cells(&jobs, picked);
    rows.sort();
    // Nodes are named by their hosts.
    let row =
        |user: &str, partition: &str, host: &str| [user, partition, host, "0"].map(str::to_owned);
    assert_eq!(
        rows,
        [
            row("alice", "cpu", "n1"),
            row("bob", "cpu", "n1"),
            row("carol", "gpu", "g1"),
            row("dave", "cpu", "n1"),
        ],
        "{}",
        std::fs::read_to_string(&jobs).unwrap()
    );
    let empty = dir.path().join("empty.conf");
    std::fs::write(&empty, "SchedulerType=sched/backfill\n").unwrap();
    let out = replay(&empty);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("defines no node"), "{stderr}");
}

/// A job's `Constraints` hold it to the nodes with those features: of partition cpu's two
/// 4-CPU nodes only n1 is `fast`, and alice's job fills it until 100 s. bob's 1-CPU job asks
/// for `fast`, so it waits for n1 (the main scheduler's pass the second after alice's end)
/// though n2 is free, and blocks partition cpu in the main scheduler meanwhile: carol's job,
/// which asks for nothing, starts on n2 at the backfill's first cycle, at 30 s. Without the
/// column, bob's job starts on n2 at once.
#[test]
fn constraints_hold_a_job_to_the_nodes_with_its_features() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES|Partition|State|Constraints",
        "1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|cpu=4,node=1|cpu|COMPLETED|fast",
        "2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:41|2026-01-01T00:01:51|00:00:10|cpu=1,node=1|cpu|COMPLETED|fast",
        "3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:30|2026-01-01T00:00:40|00:00:10|cpu=1,node=1|cpu|COMPLETED|",
    ];
    let dump = |constraints: bool| write_rows(dir.path(), &rows, (!constraints).then_some(10));
    let nodes = dir.path().join("config.txt");
    std::fs::write(
        &nodes,
        "NodeName=n1 CPUTot=4 RealMemory=16000 AvailableFeatures=fast ActiveFeatures=fast\n\
         NodeName=n2 CPUTot=4 RealMemory=16000 AvailableFeatures=(null) ActiveFeatures=(null)\n\
         PartitionName=cpu Nodes=n[1-2] Default=YES\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let replay = |dump: &Path| {
        let out = fairshare(&[
            "replay",
            dump.to_str().unwrap(),
            "--policy",
            "fifo",
            "--machines",
            nodes.to_str().unwrap(),
            "--scheduler",
            "slurm",
            "--placement",
            "slurm",
            "--drain",
            "--jobs",
            jobs.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut rows = job_cells(&jobs, ["user", "allocated_resources", "waiting_time"]);
        rows.sort();
        rows
    };
    let row = |user: &str, host: &str, wait: &str| [user, host, wait].map(str::to_owned);
    assert_eq!(
        replay(&dump(true)),
        [
            row("alice", "n1", "0"),
            row("bob", "n1", "100"),
            row("carol", "n2", "28")
        ],
        "{}",
        std::fs::read_to_string(&jobs).unwrap()
    );
    let free = replay(&dump(false));
    assert_eq!(
        free[1][1], "n2",
        "without the column bob's job may run on n2: {free:?}"
    );
    assert!(free[1][2].parse::<f64>().unwrap() < 5.0, "{free:?}");
}

#[test]
fn a_slurm_conf_that_cannot_be_used_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let dump = write_slurm_dump(dir.path());
    let dump = dump.to_str().unwrap();
    let conf = dir.path().join("slurm.conf");
    let refused = |text: &str, scheduler: &str| {
        std::fs::write(&conf, text).unwrap();
        let out = fairshare(&[
            "replay",
            dump,
            "--policy",
            "fifo",
            "--capacity",
            "cpu=4,mem=0,gpu=0",
            "--scheduler",
            scheduler,
            "--slurm-conf",
            conf.to_str().unwrap(),
        ]);
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let shown = conf.display().to_string();
    assert!(refused("SchedulerParameters=bf_interval=60\n", "easy")
        .contains("--slurm-conf sets --scheduler slurm's parameters; add --scheduler slurm"));
    let message = refused("SchedulerParameters=bf_interval=soon\n", "slurm");
    assert!(message.contains(&format!("--slurm-conf {shown}: SchedulerParameters bf_interval takes a whole number, found \"soon\"")), "{message}");
    let message = refused("SchedulerType=sched/hold\n", "slurm");
    assert!(
        message.contains(
            "SchedulerType \"sched/hold\" is not modelled: sched/backfill or sched/builtin"
        ),
        "{message}"
    );
    let message = refused("# nothing\n", "slurm");
    assert!(message.contains("no Key=Value setting in it"), "{message}");
    let message = refused("OverTimeLimit=\nPowerPlugin = \n", "slurm");
    assert!(message.contains("no Key=Value setting in it"), "{message}");
}

/// A job cancelled while it waited (bob's, at 40 s: `Start` = `End`, nothing allocated, as
/// Slurm 22.05 writes it) waits, as its `ReqTRES` asked, until then: carol's 120-s job cannot
/// pass his 4-CPU job, reserved at alice's end (100 s), and starts at the first event after
/// the cancellation, the backfill cycle at 60 s (Slurm's schedulers do not run on a
/// cancellation). Without `ReqTRES`, bob's job is left out (a note says so) and carol's starts
/// beside alice's at the main scheduler's next pass.
#[test]
fn a_job_cancelled_while_it_waited_holds_the_others_back_until_then() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES|ReqTRES|State",
        "1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|cpu=3,node=1|cpu=3,node=1|COMPLETED",
        "2|bob|a|2026-01-01T00:00:01|2026-01-01T00:00:40|2026-01-01T00:00:40|00:10:00||cpu=4,node=1|CANCELLED by 1001",
        "3|carol|a|2026-01-01T00:00:02|2026-01-01T00:01:00|2026-01-01T00:02:30|00:02:00|cpu=1,node=1|cpu=1,node=1|COMPLETED",
    ];
    let dump = |req_tres: bool| write_rows(dir.path(), &rows, (!req_tres).then_some(8));
    let jobs = dir.path().join("jobs.csv");
    let out = replay_slurm_dump(&dump(true), &jobs, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 jobs were cancelled while they waited: each waits in the replay"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "warning: under fifo, 1 of 3 tasks were cancelled by their owners while they waited"
        ),
        "{stdout}"
    );
    let mut rows = job_cells(
        &jobs,
        ["user", "final_state", "starting_time", "waiting_time"],
    );
    rows.sort();
    let at = |s: u64| (1_767_225_600 + s).to_string();
    assert_eq!(
        rows,
        [
            ["alice".into(), "finished".into(), at(0), "0".into()],
            ["bob".into(), "cancelled".into(), String::new(), "39".into()],
            ["carol".into(), "finished".into(), at(60), "58".into()],
        ]
    );
    let out = replay_slurm_dump(&dump(false), &jobs, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 jobs cancelled while they waited are left out"),
        "{stderr}"
    );
    let rows = job_cells(&jobs, ["user", "starting_time"]);
    let carol = rows.iter().find(|[user, _]| user == "carol").unwrap();
    assert_eq!(
        carol[1],
        at(4),
        "nothing holds carol back: the main scheduler's next pass, 3 s after the one at 1 s"
    );
}

/// `--slurmctld-log`: the log's milliseconds time the dump's jobs and its main-scheduler
/// starts the background loop's turns (0.6 s past each second here). Under the main
/// scheduler alone (`sched/builtin`), alice's job, submitted
/// at 0.2 s, starts at the turn of its own second, 0.6 s, and ends at 60.9 s; bob's, submitted
/// at 30.1 s, starts at the loop's turn after that end, 61.6 s, as the log says it did (without
/// the log: at 1 s and 62 s, the whole seconds after each event). The recorded starts in the
/// per-job table are the log's, the JSON says how many turns (and controller starts) the log
/// showed, a log from the controller's start times the passes down the whole queue, and the option
/// is refused without `--scheduler slurm`, beside `--turn-seed`, for another trace format and
/// for a log line it cannot read (file and line named).
#[test]
fn slurmctlds_log_times_the_jobs_and_the_loops_turns() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.sacct");
    std::fs::write(
        &dump,
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State\n\
         1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|cpu=4,node=1|cpu|COMPLETED\n\
         2|bob|a|2026-01-01T00:00:30|2026-01-01T00:01:01|2026-01-01T00:01:11|cpu=4,node=1|cpu|COMPLETED\n",
    )
    .unwrap();
    let log = dir.path().join("slurmctld.log");
    std::fs::write(
        &log,
        "[2026-01-01T00:00:00.200] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=300\n\
         [2026-01-01T00:00:00.600] sched: Allocate JobId=1 NodeList=n1 #CPUs=4 Partition=cpu\n\
         [2026-01-01T00:00:30.100] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=1 usec=300\n\
         [2026-01-01T00:01:00.900] _job_complete: JobId=1 done\n\
         [2026-01-01T00:01:01.600] sched: Allocate JobId=2 NodeList=n1 #CPUs=4 Partition=cpu\n\
         [2026-01-01T00:01:11.650] _job_complete: JobId=2 done\n",
    )
    .unwrap();
    let (jobs, json) = (dir.path().join("jobs.csv"), dir.path().join("run.json"));
    // The main scheduler alone: the backfill's first cycle would fall on the first submission.
    let conf = dir.path().join("slurm.conf");
    std::fs::write(&conf, "SchedulerType=sched/builtin\n").unwrap();
    let starts = |extra: &[&str]| -> Vec<[f64; 2]> {
        let builtin = ["--slurm-conf", conf.to_str().unwrap()];
        let out = replay_slurm_dump(&dump, &jobs, &[&builtin[..], extra].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let rows = job_cells(&jobs, ["starting_time", "recorded_starting_time"]);
        let secs = |cell: &str| cell.parse::<f64>().unwrap() - 1_767_225_600.0;
        let round = |s: f64| (s * 1000.0).round() / 1000.0;
        (rows.iter())
            .map(|[start, recorded]| [round(secs(start)), round(secs(recorded))])
            .collect()
    };
    let log_arg = ["--slurmctld-log", log.to_str().unwrap()];
    let with_log = [&log_arg[..], &["--json", json.to_str().unwrap()]].concat();
    assert_eq!(starts(&with_log), [[0.6, 0.6], [61.6, 61.6]]);
    assert_eq!(read_json(&json)["setting"]["loop_turns_shown"], 2);
    assert!(read_json(&json)["setting"]["backfill_cycles_shown"].is_null());
    assert_eq!(read_json(&json)["setting"]["controller_starts_shown"], 0);
    assert_eq!(starts(&[]), [[1.0, 0.0], [62.0, 61.0]]);
    // A log from the controller's start times the passes down the whole queue too, every
    // 60 s from its second: at 0.6 s and at 60.6 s, which starts nothing (alice's job ends
    // at 60.9) but spaces the pass her end asks for to 63.6 s (this made-up log says 61.6).
    let from_start = dir.path().join("from-start.log");
    let started = "[2025-12-31T23:59:00.400] Running as primary controller\n";
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&from_start, format!("{started}{text}")).unwrap();
    let log_arg = ["--slurmctld-log", from_start.to_str().unwrap()];
    let with_start = [&log_arg[..], &["--json", json.to_str().unwrap()]].concat();
    assert_eq!(starts(&with_start), [[0.6, 0.6], [63.6, 61.6]]);
    assert_eq!(read_json(&json)["setting"]["controller_starts_shown"], 1);
    let log_arg = ["--slurmctld-log", log.to_str().unwrap()];

    let refused = |args: &[&str]| -> String {
        let out = fairshare(args);
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let dump_arg = dump.to_str().unwrap();
    let stderr = refused(&[&["replay", dump_arg][..], &log_arg].concat());
    assert!(stderr.contains("add --scheduler slurm"), "{stderr}");
    let drawn = [&log_arg[..], &["--turn-seed", "1"]].concat();
    let stderr =
        String::from_utf8_lossy(&replay_slurm_dump(&dump, &jobs, &drawn).stderr).into_owned();
    assert!(stderr.contains("which --turn-seed draws"), "{stderr}");
    let swf = dir.path().join("jobs.swf");
    std::fs::write(&swf, "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n").unwrap();
    let stderr = refused(
        &[
            &["replay", swf.to_str().unwrap(), "--scheduler", "slurm"][..],
            &log_arg,
        ]
        .concat(),
    );
    assert!(stderr.contains("not of a swf trace"), "{stderr}");
    std::fs::write(
        &log,
        "[2026-01-01T00:00:00.200] ok\n[2026-01-01T00:00:01] sched: Allocate JobId=1\n",
    )
    .unwrap();
    let stderr =
        String::from_utf8_lossy(&replay_slurm_dump(&dump, &jobs, &log_arg).stderr).into_owned();
    assert!(
        stderr.contains(&format!("--slurmctld-log {}", log.display()))
            && stderr.contains("line 2: field `timestamp`"),
        "{stderr}"
    );
}

/// With only the site's own files — its configuration and `sacctmgr`'s associations of two
/// clusters — a replay takes the machines, the partitions' billing, the placement, the
/// cluster and Slurm's own fairshare settings (half-life, a `PriorityCalcPeriod` of 30 s read
/// as Slurm reads it, a minute) from the configuration, each in a note, and predicts what the
/// command with every one of them spelled out predicts.
#[test]
fn a_slurm_replay_takes_its_defaults_from_the_sites_configuration() {
    let dir = tempfile::tempdir().unwrap();
    // bob and carol ran alike, then wait for alice's node: their shares say who goes first.
    let day = "2026-01-01T00:";
    let rows = [
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State".to_owned(),
        format!("1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu|COMPLETED"),
        format!("2|bob|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
        format!("3|carol|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
        format!("4|bob|a|{day}01:00|{day}01:40|{day}01:50|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED"),
        format!("5|carol|a|{day}01:01|{day}01:50|{day}02:00|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED"),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let dump = write_rows(dir.path(), &rows, None);
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "ClusterName=emu\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\n\
         PriorityWeightFairshare=10000\nPriorityWeightAge=2000\nPriorityDecayHalfLife=00:10:00\n\
         PriorityCalcPeriod=00:00:30\n\
         NodeName=n1 CPUs=4 RealMemory=16000\n\
         PartitionName=cpu Nodes=n1 Default=YES TRESBillingWeights=CPU=2.0\n",
    )
    .unwrap();
    // The same configuration without its name, for the runs that name every file.
    let unnamed = dir.path().join("unnamed.conf");
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(&unnamed, text.replace("ClusterName=emu\n", "")).unwrap();
    let assoc = dir.path().join("assoc.txt");
    let lines = |cluster: &str, shares: [u32; 3]| {
        format!(
            "{cluster}|root|||1||\n{cluster}|a|||1|root|\n{cluster}|a|alice||{}|a|\n\
             {cluster}|a|bob||{}|a|\n{cluster}|a|carol||{}|a|\n",
            shares[0], shares[1], shares[2]
        )
    };
    std::fs::write(
        &assoc,
        lines("peer", [10, 5, 1]) + &lines("emu", [1, 5, 10]),
    )
    .unwrap();
    let one_cluster = |cluster: &str, shares| {
        let path = dir.path().join(format!("{cluster}.txt"));
        std::fs::write(&path, lines(cluster, shares)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (emu, peer) = (
        one_cluster("emu", [1, 5, 10]),
        one_cluster("peer", [10, 5, 1]),
    );
    let (conf, unnamed, assoc, dump) = (
        conf.to_str().unwrap(),
        unnamed.to_str().unwrap(),
        assoc.to_str().unwrap(),
        dump.to_str().unwrap(),
    );
    let run = |shares: &str, extra: &[&str]| {
        let json = dir.path().join("out.json");
        let mut args = vec![
            "replay",
            dump,
            "--shares",
            shares,
            "--scheduler",
            "slurm",
            "--drain",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend(extra);
        let out = fairshare(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let mut document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        // What differs by construction: the policy as written, the files named.
        for policy in document["policies"].as_array_mut().unwrap() {
            policy["policy"] = serde_json::Value::Null;
        }
        (document["policies"].clone(), stderr)
    };
    let (defaults, stderr) = run(
        assoc,
        &[
            "--slurm-conf",
            conf,
            "--policy",
            "fairshare:function=fair-tree",
        ],
    );
    for note in [
        format!("note: machines: the nodes and partitions of --slurm-conf {conf}"),
        format!("note: billing: the partitions' TRESBillingWeights of --slurm-conf {conf}"),
        "note: --slurm-conf: fairshare:function=fair-tree: run as fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing, from the Slurm configuration (PriorityDecayHalfLife=00:10:00, PriorityCalcPeriod=00:00:30, Slurm charges billing units)".to_owned(),
    ] {
        assert!(stderr.contains(&note), "{note} missing from\n{stderr}");
    }
    let spelled = |shares: &str| {
        run(
            shares,
            &[
                "--slurm-conf",
                unnamed,
                "--machines",
                unnamed,
                "--partitions",
                unnamed,
                "--placement",
                "slurm",
                "--policy",
                "fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing",
            ],
        )
        .0
    };
    // Compared whole, and not printed whole when they differ.
    let same = defaults == spelled(&emu);
    assert!(
        same,
        "not emu's associations with every setting spelled out"
    );
    let same = defaults == spelled(&peer);
    assert!(
        !same,
        "the other cluster's shares order bob and carol otherwise"
    );
    // A file of another cluster than the configuration's is refused, as are two clusters
    // without the configuration's ClusterName.
    let out = fairshare(&[
        "replay",
        dump,
        "--shares",
        &peer,
        "--scheduler",
        "slurm",
        "--slurm-conf",
        conf,
        "--policy",
        "fifo",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sacctmgr's output lists the cluster peer, not the cluster emu asked for"),
        "{stderr}"
    );
    let out = fairshare(&["replay", dump, "--shares", assoc, "--policy", "fifo"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sacctmgr's output lists several clusters (emu, peer)"),
        "{stderr}"
    );
}

/// A Slurm dump's per-job table names each job by its `JobID` (an array's task as `10_1`),
/// so that every row joins back to the dump's own line by it.
#[test]
fn the_per_job_table_names_a_slurm_dumps_jobs_by_their_job_ids() {
    let dir = tempfile::tempdir().unwrap();
    let day = "2026-01-01T00:";
    let rows = [
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State".to_owned(),
        format!("4711|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu|COMPLETED"),
        format!("10_1|bob|a|{day}00:01|{day}00:01|{day}00:50|00:00:49|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
        format!("4711.batch|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40||cpu=2,node=1|cpu|COMPLETED"),
        format!("10_2|bob|a|{day}00:01|{day}00:02|{day}00:50|00:00:48|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let dump = write_rows(dir.path(), &rows, None);
    let jobs = dir.path().join("jobs.csv");
    let out = replay_slurm_dump(&dump, &jobs, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut listed = job_cells(&jobs, ["job_id", "user", "recorded_starting_time"]);
    listed.sort();
    let origin = 1_767_225_600; // 2026-01-01T00:00:00Z
    let row = |id: &str, user: &str, start: u64| {
        [id, user, &(origin + start).to_string()].map(str::to_owned)
    };
    assert_eq!(
        listed,
        [
            row("10_1", "bob", 1),
            row("10_2", "bob", 2),
            row("4711", "alice", 0)
        ]
    );
}
