//! `fairshare replay` and `fairshare sweep` run whole: the README's example, a deterministic
//! replay whose counts add up, bad input explained, sweep shards merged, every shared trace.

use super::*;

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
