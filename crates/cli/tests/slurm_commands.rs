//! `fairshare slurm` as a person runs it, against stand-ins for Slurm's commands: a folder of
//! scripts (`bin` in the configuration) that print the outputs recorded on the live Slurm 22.05
//! and log every call. They check what the commands print, that `--dry-run` writes nothing,
//! that `watch` logs a line per pass, survives a Slurm that stops answering, and stops cleanly
//! on SIGTERM. Runs everywhere: no Slurm needed.

use crate::live::{wait_until_logged, KillOnDrop};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A recorded output of the Slurm crate's tests.
fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../slurm/tests/data")
        .join(name)
}

/// A folder of stand-in commands and a configuration naming it, in `dir`; `squeue_sleeps`
/// makes `squeue` hang (a Slurm that stopped answering).
fn stand_ins(dir: &Path, squeue_sleeps: bool) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("calls.log");
    let script = |name: &str, body: String| {
        let path = bin.join(name);
        let text = format!(
            "#!/bin/sh\necho \"{name} $*\" >> {}\n{body}\n",
            log.display()
        );
        std::fs::write(&path, text).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&path, mode).unwrap();
    };
    let cat = |file: &str| format!("cat {}", recorded(file).display());
    script(
        "squeue",
        match squeue_sleeps {
            true => "sleep 5".into(),
            false => cat("squeue.json"),
        },
    );
    script("sprio", cat("sprio.txt"));
    script(
        "sacctmgr",
        format!(
            "[ \"$2\" = qos ] && {{ echo 'normal|1.000000'; exit 0; }}\n{}",
            cat("sacctmgr.txt")
        ),
    );
    script("sinfo", cat("sinfo.json"));
    script("sacct", cat("sacct.txt"));
    script("sshare", cat("sshare.txt"));
    script(
        "scontrol",
        "[ \"$1\" = show ] && printf 'PriorityType = priority/multifactor\\nPriorityWeightFairShare = 0\\nSLURM_VERSION = 22.05.8\\n'; exit 0".into(),
    );
    let config = dir.join("slurm.toml");
    let text = format!(
        "policy = \"sdrf\"\nweight = 1000\nwindow_s = 86400\ntimeout_s = 1\nbin = \"{}\"\nlock = \"{}\"\n",
        bin.display(),
        dir.join("fairshare.lock").display()
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// `fairshare slurm ARGS… --config CONFIG`: its status, output and error output.
fn fairshare(config: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .arg("slurm")
        .args(args)
        .args(["--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// The calls the stand-ins logged.
fn calls(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default()
}

#[test]
fn status_shows_every_association_and_pending_job() {
    let dir = tempfile::tempdir().unwrap();
    let config = stand_ins(dir.path(), false);
    let (ok, out, err) = fairshare(&config, &["status"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Slurm 22.05.8 (tested), policy sdrf, mapping replace; 3 pending jobs"),
        "{out}"
    );
    for header in ["Account", "Usage", "Rank", "Site now", "Site wanted"] {
        assert!(out.contains(header), "{header}: {out}");
    }
    assert_eq!(
        out.matches("physics").count() + out.matches("chemistry").count(),
        7,
        "{out}"
    );
    assert!(
        !calls(dir.path()).contains("update"),
        "status writes nothing"
    );
}

#[test]
fn a_dry_run_prints_the_writes_and_makes_none() {
    let dir = tempfile::tempdir().unwrap();
    let config = stand_ins(dir.path(), false);
    let (ok, out, err) = fairshare(&config, &["sync", "--dry-run"]);
    assert!(ok, "{err}");
    // Job 9 holds 500 already, which falls along the order: two jobs to set.
    assert_eq!(out.matches("would set SiteFactor=").count(), 2, "{out}");
    assert!(!calls(dir.path()).contains("update"));
    let (ok, json, _) = fairshare(&config, &["sync", "--dry-run", "--json"]);
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["schema_version"], 3, "the adapters' pass record");
    assert_eq!(json["applied"], serde_json::Value::Null);
    assert_eq!(json["plan"]["writes"].as_array().unwrap().len(), 2);
}

#[test]
fn a_sync_whose_writes_do_not_read_back_fails_and_says_so() {
    // The stand-in scontrol takes every write and changes nothing.
    let dir = tempfile::tempdir().unwrap();
    let config = stand_ins(dir.path(), false);
    let (ok, out, err) = fairshare(&config, &["sync"]);
    assert!(!ok);
    assert!(out.contains("NOT fully applied"), "{out}");
    assert!(out.contains("read back different"), "{out}");
    assert!(err.contains("not fully applied"), "{err}");
    assert_eq!(calls(dir.path()).matches("scontrol update").count(), 2);
}

#[test]
fn watch_logs_each_pass_survives_a_silent_slurm_and_stops_on_sigterm() {
    for silent in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let config = stand_ins(dir.path(), silent);
        let log = dir.path().join("watch.log");
        let mut child = watch(&config, &log, &["--dry-run"]);
        let expected = match silent {
            false => "2 jobs would be set (dry run)",
            true => "pass failed; nothing written, the next pass tries again",
        };
        wait_until_logged(&log, expected, 2, Duration::from_secs(30));
        let status = child.terminate();
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(status.success(), "{status:?}: {text}");
        assert!(
            text.contains("stopped; the site factors keep their last values"),
            "{text}"
        );
        if silent {
            assert!(text.contains("no answer within 1 s; killed"), "{text}");
        }
    }
}

/// While a watcher writes, a second writer on the cluster (`sync`, `reset`, another `watch`)
/// is refused, naming the lock file and the watcher's process; a dry run still looks, and
/// once the watcher stops, `sync` writes.
#[test]
fn a_second_writer_is_refused_while_a_watcher_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let config = stand_ins(dir.path(), false);
    let log = dir.path().join("watch.log");
    let mut child = watch(&config, &log, &[]);
    wait_until_logged(&log, " set in ", 1, Duration::from_secs(30));
    let lock = dir.path().join("fairshare.lock");
    let holder = format!("pid {} since", child.0.id());
    for args in [&["sync"][..], &["reset"], &["watch"]] {
        let (ok, _, err) = fairshare(&config, args);
        assert!(!ok, "{args:?} ran beside the watcher");
        assert!(err.contains(&lock.display().to_string()), "{err}");
        assert!(err.contains(&holder), "{err}");
        assert!(err.contains("one writer per cluster"), "{err}");
    }
    let (looked, _, err) = fairshare(&config, &["sync", "--dry-run"]);
    assert!(looked, "{err}");
    assert!(child.terminate().success());
    // It writes now: the stand-in sprio reads back its recording, so not as written.
    let (_, _, err) = fairshare(&config, &["sync"]);
    assert!(err.contains("not fully applied"), "{err}");
}

/// `fairshare slurm watch --interval 1s` with `extra` options on `config`, logging to `log`.
fn watch(config: &Path, log: &Path, extra: &[&str]) -> KillOnDrop {
    let child = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["slurm", "watch", "--interval", "1s"])
        .args(extra)
        .args(["--config", config.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    KillOnDrop(child)
}

/// `fairshare slurm draw` with `args`: success, standard output, standard error.
fn draw(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(["slurm", "draw"])
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn draw_writes_a_plan_a_script_can_submit() {
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("small.swf");
    // Three users; runs of 100 s to 10,000 s; the second job asks for 40 CPUs.
    let lines = [
        "1 0 0 100 4 -1 -1 4 200 1000 1 7 1 -1 1 1 -1 -1",
        "2 60 0 1000 40 -1 -1 40 2000 1000 1 8 1 -1 1 1 -1 -1",
        "3 120 0 10000 1 -1 -1 1 20000 1000 1 7 1 -1 1 1 -1 -1",
        "4 600 0 900 2 -1 -1 2 600 1000 1 9 1 -1 1 1 -1 -1",
    ];
    std::fs::write(&swf, lines.join("\n") + "\n").unwrap();
    let path = swf.to_str().unwrap();
    let args = [
        path,
        "--jobs",
        "4",
        "--cpus",
        "16",
        "--users",
        "ann,ben",
        "--max-cpus",
        "8",
    ];
    let (ok, plan, summary) = draw(&args);
    assert!(ok, "{summary}");
    let rows: Vec<Vec<&str>> = plan
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('|').collect())
        .collect();
    // at_s|user|cpus|mem_per_cpu_mb|run_s|limit_min|trace_id|trace_user
    assert_eq!(rows.len(), 4, "{plan}");
    assert_eq!(
        rows.iter().map(|r| r[1]).collect::<Vec<_>>(),
        ["ann", "ben", "ann", "ann"]
    );
    assert_eq!(
        rows.iter().map(|r| r[2]).collect::<Vec<_>>(),
        ["4", "8", "1", "2"]
    );
    // The shortest run (100 s) becomes 10 s and the longest (10,000 s) 2 min, by default.
    assert_eq!((rows[0][4], rows[2][4]), ("10", "120"));
    // The fourth job outran its 600 s limit: its limit is rounded down, its run goes past it.
    let (run, limit): (u32, u32) = (rows[3][4].parse().unwrap(), rows[3][5].parse().unwrap());
    assert!(run > limit * 60, "{plan}");
    assert!(
        plan.starts_with("# fairshare slurm draw: 4 jobs of"),
        "{plan}"
    );
    assert!(
        summary.contains("1 capped at 8 CPUs, 1 past their limit"),
        "{summary}"
    );
    assert!(
        summary.contains("7 (2) → ann, 8 (1) → ben, 9 (1) → ann"),
        "{summary}"
    );
    // The same trace and options give the same plan, byte for byte.
    assert_eq!(draw(&args).1, plan);
}

#[test]
fn draw_refuses_what_it_cannot_draw() {
    let (ok, _, err) = draw(&["/nonexistent.swf", "--cpus", "8", "--users", "a"]);
    assert!(!ok && err.contains("/nonexistent.swf"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("one.swf");
    std::fs::write(&swf, "1 0 0 100 4 -1 -1 4 200 1000 1 7 1 -1 1 1 -1 -1\n").unwrap();
    let path = swf.to_str().unwrap();
    let (ok, _, err) = draw(&[path, "--cpus", "8", "--users", "a"]);
    assert!(
        !ok && err.contains("the trace has 1 jobs after skipping 0; 300 asked for"),
        "{err}"
    );
    let (ok, _, err) = draw(&[
        path, "--jobs", "1", "--cpus", "8", "--users", "a", "--load", "0",
    ]);
    assert!(!ok && err.contains("offered load"), "{err}");
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn draw_takes_300_jobs_of_a_real_log() {
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/swf/wagap-2013.swf");
    let users = "alice,bob,carol,dave,erin,frank,grace,heidi,ivan";
    let path = trace.to_str().unwrap();
    let (ok, plan, summary) = draw(&[
        path,
        "--skip",
        "12000",
        "--cpus",
        "96",
        "--max-cpus",
        "16",
        "--load",
        "1.5",
        "--max-run",
        "60s",
        "--users",
        users,
    ]);
    assert!(ok, "{summary}");
    let rows: Vec<&str> = plan.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 300);
    for user in users.split(',') {
        assert!(
            rows.iter().any(|r| r.split('|').nth(1) == Some(user)),
            "{user} has no job"
        );
    }
    let at: Vec<f64> = rows
        .iter()
        .map(|r| r.split('|').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] <= w[1]),
        "submissions out of order"
    );
    assert!(summary.contains("load 1.5 on 96 CPUs"), "{summary}");
}
