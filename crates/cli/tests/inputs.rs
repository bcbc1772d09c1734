//! The command line on hostile or unusual input: every input is replayed correctly or refused
//! with a message naming what is wrong, before any long work, and output to a closed pipe ends
//! quietly. Each test writes its own small files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fairshare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An SWF log of `jobs` jobs by three users, every job with memory.
fn swf(jobs: u64) -> String {
    let mut text = String::from("; written by the input tests\n");
    for job in 1..=jobs {
        let (cpus, user) = (1 + job % 4, 1 + job % 3);
        text += &format!(
            "{job} {} 0 {} {cpus} -1 1000 {cpus} -1 -1 1 {user} 1 -1 1 -1 -1 -1\n",
            job * 10,
            60 + job % 7 * 30
        );
    }
    text
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(dir.path(), "log.swf", &swf(200));
    for to_stdout in ["--json", "--jobs"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fairshare"))
            .args(["replay", log.to_str().unwrap(), to_stdout, "-"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away at once, as `| head -0` would
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{to_stdout}: {}", stderr(&output));
        assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    }
}

#[test]
fn a_trace_on_standard_input_replays_like_the_file() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = swf(120);
    let log = write(dir.path(), "log.swf", &text);
    let from_file = fairshare(&["replay", log.to_str().unwrap(), "--json", "-"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["replay", "-", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let from_stdin = child.wait_with_output().unwrap();
    assert!(from_stdin.status.success());
    let strip = |o: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["setting"]["trace"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&from_file), strip(&from_stdin));
}

#[test]
fn unwritable_outputs_are_refused_before_the_work() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(dir.path(), "log.swf", &swf(50));
    let report = dir.path().join("no/such/folder/r.html");
    for command in ["replay", "sweep"] {
        let output = fairshare(&[
            command,
            log.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]);
        assert!(!output.status.success());
        assert!(
            stderr(&output).contains("does not exist"),
            "{}",
            stderr(&output)
        );
        assert!(
            output.stdout.is_empty(),
            "{command} ran before checking its output"
        );
    }
}

#[test]
fn absurd_horizons_are_refused_and_long_ones_stay_small() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(dir.path(), "log.swf", &swf(50));
    let log = log.to_str().unwrap();
    for (horizon, expected) in [
        (
            "18446744073709551615",
            "expected a duration from 0 to 1e10 s",
        ),
        ("1e308", "expected a duration from 0 to 1e10 s"),
        ("-5", "a duration cannot be negative, found \"-5\""),
        ("-5h", "a duration cannot be negative, found \"-5h\""),
        ("400y", "expected a duration from 0 to 1e10 s"),
    ] {
        let output = fairshare(&["replay", log, "--horizon", horizon]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{horizon}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains(expected), "{}", stderr(&output));
    }
    let output = fairshare(&["replay", log, "--horizon", "300y", "--json", "-"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let times = summary["policies"][0]["timeline"]["times_s"]
        .as_array()
        .unwrap();
    assert!(times.len() <= 1024, "{} samples", times.len());
    let last = times.last().unwrap().as_f64().unwrap();
    assert!(
        last > 299.0 * 365.0 * 86_400.0,
        "the timeline covers the horizon: {last}"
    );
}

#[test]
fn record_errors_say_that_lenient_would_skip_them() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = swf(20).replacen("\n5 50 0 ", "\n5 50 0 1e308x", 1);
    let log = write(dir.path(), "log.swf", &text);
    let output = fairshare(&["replay", log.to_str().unwrap()]);
    let message = stderr(&output);
    assert!(
        message.contains("log.swf:6: field 4 (run time)"),
        "{message}"
    );
    assert!(
        message.contains("--lenient skips such records"),
        "{message}"
    );
    let lenient = fairshare(&["replay", log.to_str().unwrap(), "--lenient"]);
    assert!(lenient.status.success(), "{}", stderr(&lenient));
}

#[test]
fn nothing_to_replay_names_the_file_and_the_reasons() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = "1 10 0 -1 4 -1 -1 4 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
    let log = write(dir.path(), "empty.swf", text);
    let message = stderr(&fairshare(&["replay", log.to_str().unwrap()]));
    assert!(
        message.contains("empty.swf: no task to replay: 1 found, 1 skipped (no runtime: 1)"),
        "{message}"
    );
}

const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

#[test]
fn cpu_only_alibaba_pods_replay_without_a_gpu_resource() {
    let dir = tempfile::TempDir::new().unwrap();
    let mut pods = PODS.to_owned();
    for i in 0..30 {
        let qos = ["LS", "BE"][i % 2];
        pods += &format!(
            "p{i},{},2048,0,0,,{qos},Running,{},{},{}\n",
            1000 + i * 100,
            i * 10,
            i * 10 + 300,
            i * 10
        );
    }
    let pods = write(dir.path(), "pods.csv", &pods);
    let nodes = write(
        dir.path(),
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,32000,262144,0,\n",
    );
    let pods = pods.to_str().unwrap();
    for extra in [
        vec![],
        vec!["--machines", nodes.to_str().unwrap()],
        vec!["--capacity", "cpu=10,mem=9000"],
        vec!["--capacity", "cpu=10,mem=9000,gpu=0"],
    ] {
        let mut args = vec!["replay", pods, "--json", "-"];
        args.extend(extra.iter().copied());
        let output = fairshare(&args);
        assert!(output.status.success(), "{extra:?}: {}", stderr(&output));
        let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            summary["setting"]["resources"],
            serde_json::json!(["cpu", "mem"])
        );
        assert_eq!(summary["resources_unused"], serde_json::json!(["gpu"]));
        assert!(stderr(&output).contains("no task requests gpu"));
    }
}

#[test]
fn gpu_pods_on_nodes_without_gpus_are_refused_naming_the_file_and_resource() {
    let dir = tempfile::TempDir::new().unwrap();
    let pods = PODS.to_owned() + "p0,1000,2048,1,500,,LS,Running,0,100,0\n";
    let pods = write(dir.path(), "pods.csv", &pods);
    let nodes = write(
        dir.path(),
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\n",
    );
    let output = fairshare(&[
        "replay",
        pods.to_str().unwrap(),
        "--machines",
        nodes.to_str().unwrap(),
    ]);
    let message = stderr(&output);
    assert!(
        message.contains("nodes.csv: no machine has any gpu"),
        "{message}"
    );
}

#[test]
fn negative_fractions_get_the_programs_own_message() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(dir.path(), "log.swf", &swf(20));
    let output = fairshare(&["replay", log.to_str().unwrap(), "--capacity-fraction", "-1"]);
    assert_eq!(
        stderr(&output).trim(),
        "error: --capacity-fraction must be a positive number, found -1"
    );
}

#[test]
fn formats_that_fit_nothing_are_named_with_what_each_format_expects() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(
        dir.path(),
        "batch_task.csv",
        "M1,1,j_1,1,Terminated,157213,157295,100,0.3\n",
    );
    let message = stderr(&fairshare(&["replay", log.to_str().unwrap()]));
    for expected in [
        "fits none of the trace formats",
        "SWF",
        "Alibaba",
        "Google",
        "--format",
    ] {
        assert!(message.contains(expected), "{expected}: {message}");
    }
}

#[test]
fn an_empty_file_is_called_empty() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(dir.path(), "log.swf", "");
    let message = stderr(&fairshare(&["replay", log.to_str().unwrap()]));
    assert!(message.contains("log.swf: the file is empty"), "{message}");
}

#[test]
fn the_per_job_table_goes_to_standard_output_for_a_dash() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(dir.path(), "log.swf", &swf(20));
    let log = log.to_str().unwrap();
    let file = dir.path().join("jobs.csv");
    let to_file = fairshare(&["replay", log, "--jobs", file.to_str().unwrap()]);
    assert!(to_file.status.success(), "{}", stderr(&to_file));
    let output = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["replay", log, "--jobs", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        output.stdout,
        std::fs::read(&file).unwrap(),
        "the table alone"
    );
    assert!(!dir.path().join("-").exists(), "no file named -");
    let both = fairshare(&["replay", log, "--jobs", "-", "--json", "-"]);
    assert!(stderr(&both).contains("standard output carries one of them"));
}

#[test]
fn allocation_errors_name_the_user_by_id() {
    let dir = tempfile::TempDir::new().unwrap();
    let instance = r#"{"policy": "drf", "mode": "tasks", "capacity": {"cpu": 10},
        "users": [{"id": "bob", "demand": {"cpu": 1}, "tasks": 2}, {"id": "alice", "demand": {"cpu": 0}}]}"#;
    let path = write(dir.path(), "i.json", instance);
    let message = stderr(&fairshare(&["allocate", path.to_str().unwrap()]));
    assert!(
        message.contains("user \"alice\" (users[1]): a task that needs nothing"),
        "{message}"
    );
    assert!(!message.contains("client 1"), "{message}");
}

#[test]
fn a_bad_program_line_is_told_once() {
    let dir = tempfile::TempDir::new().unwrap();
    write(
        dir.path(),
        "p.prog",
        "# Priority:\n50\n# Requests:\nloop 2\ncpu 1 x\n",
    );
    let scenario = "[[process]]\nname = \"a\"\nprogram_file = \"p.prog\"\n";
    let path = write(dir.path(), "s.toml", scenario);
    let message = stderr(&fairshare(&["simulate", path.to_str().unwrap()]));
    let expected = "p.prog:5: process \"a\": expected `RESOURCE MEAN WIDTH DIST`, found 3 field(s)";
    assert!(message.trim().ends_with(expected), "{message}");
    assert_eq!(message.matches("expected").count(), 1, "{message}");
}

#[test]
fn simulations_that_would_not_finish_are_refused_before_running() {
    let dir = tempfile::TempDir::new().unwrap();
    let scenario = |settings: &str, start: &str, program: &str| {
        format!("[simulation]\n{settings}\n[[process]]\nname = \"red\"\nentitlement = 1\nstart = {start}\nprogram = \"{program}\"\n")
    };
    let cases = [
        (scenario("", "1.9e13", "CPU_CS 1 0 NORM"), "start"),
        (
            scenario("quantum = 1e-300", "0", "CPU_CS 1 0 NORM"),
            "quantum",
        ),
        (
            scenario("", "0", "loop 4000000000\\nCPU_CS 1e9 0 NORM"),
            "past the latest instant",
        ),
        (
            scenario("", "0", "loop 4000000000\\nCPU_CS 0.01 0 NORM"),
            "engine events",
        ),
    ];
    for (k, (text, expected)) in cases.iter().enumerate() {
        let file = write(dir.path(), &format!("s{k}.toml"), text);
        let output = fairshare(&["simulate", file.to_str().unwrap(), "--json", "-"]);
        assert_eq!(output.status.code(), Some(1), "{text}");
        assert!(output.stdout.is_empty(), "{text}");
        assert!(
            stderr(&output).contains(expected),
            "{text}: {}",
            stderr(&output)
        );
    }
    let fine = write(
        dir.path(),
        "fine.toml",
        &scenario("", "0", "CPU_CS 1 0 NORM"),
    );
    let output = fairshare(&["simulate", fine.to_str().unwrap(), "--runs", "1000000"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("1 to 1000"), "{}", stderr(&output));
    let report = dir.path().join("missing/report.html");
    let output = fairshare(&[
        "simulate",
        fine.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("missing"), "{}", stderr(&output));
}

#[test]
fn an_swf_header_sizes_the_processors_even_when_memory_is_a_resource() {
    let dir = tempfile::TempDir::new().unwrap();
    let log = write(
        dir.path(),
        "log.swf",
        &format!("; MaxProcs: 240\n{}", swf(30)),
    );
    let output = fairshare(&["replay", log.to_str().unwrap(), "--json", "-"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let setting = &summary["setting"];
    assert_eq!(setting["resources"], serde_json::json!(["cpu", "mem"]));
    assert_eq!(setting["capacity"][0], 240.0, "{setting}");
    let source = setting["capacity_source"].as_str().unwrap();
    assert!(
        source.contains(
            "(MaxProcs: 240) for cpu; the most the log's own schedule ran at once for mem"
        ),
        "{source}"
    );
}

#[test]
fn a_machine_sized_from_a_lone_peak_of_the_log_is_warned_about() {
    let dir = tempfile::TempDir::new().unwrap();
    // One job recorded on 1000 processors for a minute, in a log that otherwise runs on four.
    let spike = "99 405 0 60 1000 -1 -1 1000 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
    let text = swf(40).replace(" 1000 ", " -1 ") + spike;
    let log = write(dir.path(), "log.swf", &text);
    let output = fairshare(&["replay", log.to_str().unwrap(), "--json", "-"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let doubt = summary["setting"]["capacity_doubt"].as_str().unwrap_or("");
    assert!(
        doubt.contains("busy on average (warned below 40 %)"),
        "{summary}"
    );
    assert!(
        stderr(&output).contains("warning: the machine's "),
        "{}",
        stderr(&output)
    );
    let table = fairshare(&["replay", log.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("--capacity (e.g. cpu=N)"), "{table}");
}

#[test]
fn a_simulation_says_it_started_where_no_bar_is_drawn() {
    let dir = tempfile::TempDir::new().unwrap();
    let text = "[simulation]\nruns = 2\n[[process]]\nname = \"red\"\nentitlement = 1\nprogram = \"CPU_CS 1 0 NORM\"\n";
    let file = write(dir.path(), "s.toml", text);
    let output = fairshare(&["simulate", file.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let expected = format!("simulate: 2 run(s) of {}", file.display());
    assert!(stderr(&output).contains(&expected), "{}", stderr(&output));
}
