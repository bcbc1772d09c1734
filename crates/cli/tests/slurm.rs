//! `fairshare priorities` against a real Slurm 22.05: the one-host cluster of
//! `scripts/slurm/up.sh` (Fair Tree, a 10-minute half-life, a 1-minute period) runs
//! `scripts/slurm/jobs.sh` (a user with `parent` shares, one with 0 and Slurm's root user
//! among them); mid-run, its accounting is dumped and `sshare -a -l` read at the
//! same moment, and every column fairshare computes under `--decay slurm:…` must equal
//! sshare's to the fourth decimal.
//!
//! Runs where `FAIRSHARE_TEST_SLURM` is set (`.ci/run` brings the cluster up and sets it);
//! skipped with a message elsewhere. It takes about three minutes of wall time: Slurm charges
//! usage once a minute.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The scripts that drive the cluster.
fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm")
}

/// Runs `command` with `args`, returning its standard output; panics with its error output.
fn run(command: &str, args: &[&str]) -> String {
    let out = Command::new(command).args(args).output().expect(command);
    assert!(
        out.status.success(),
        "{command} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// One consistent look at the cluster: the dump, sshare's rows and the last decay tick,
/// taken between two identical sshare readings under the same tick.
fn snapshot(dir: &Path) -> (PathBuf, String, String) {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    for _ in 0..10 {
        let before = run("sshare", &["-a", "-l", "-P"]);
        let tick_before = last_tick();
        let script = scripts().join("snapshot.sh");
        run("bash", &[script.to_str().unwrap(), dir.to_str().unwrap()]);
        let tick = read("last-tick.txt").trim().to_owned();
        if before == read("sshare.txt") && tick_before == tick {
            return (dir.join("sacct.txt"), before, tick);
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    panic!("Slurm's standings kept changing while the snapshot was taken");
}

/// The time of the last decay tick: when slurmctld last wrote its record of it.
fn last_tick() -> String {
    let file = "/var/spool/slurmctld/priority_last_decay_ran";
    run("date", &["-u", "-r", file, "+%Y-%m-%dT%H:%M:%S"])
        .trim()
        .to_owned()
}

#[test]
fn priorities_reproduce_a_live_sshare() {
    if std::env::var_os("FAIRSHARE_TEST_SLURM").is_none() {
        eprintln!(
            "SKIPPED: FAIRSHARE_TEST_SLURM is not set (scripts/slurm/up.sh brings a cluster up)"
        );
        return;
    }
    run("bash", &[scripts().join("jobs.sh").to_str().unwrap()]);
    // Past two decay ticks after the first starts, while alice's and bob's long jobs run.
    std::thread::sleep(Duration::from_secs(150));
    let dir = tempfile::tempdir().unwrap();
    let (dump, sshare, tick) = snapshot(dir.path());
    let shares = dir.path().join("shares.toml");
    std::fs::write(&shares, "[accounts]\nphysics = { shares = 3 }\nchemistry = { shares = 1 }\n\n[users]\nroot = {}\nalice = { account = \"physics\" }\nbob = { account = \"physics\" }\ncarol = { account = \"chemistry\" }\ndave = { account = \"chemistry\" }\nerin = { account = \"chemistry\", shares = \"parent\" }\nfrank = { account = \"physics\", shares = 0 }\n").unwrap();
    let decay = format!("slurm:half-life=10m,period=1m,tick={tick}");
    let json = run(
        env!("CARGO_BIN_EXE_fairshare"),
        &[
            "priorities",
            dump.to_str().unwrap(),
            "--shares",
            shares.to_str().unwrap(),
            "--decay",
            &decay,
            "--json",
            "-",
        ],
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let expected: Vec<Vec<&str>> = sshare
        .lines()
        .skip(1)
        .map(|l| l.split('|').collect())
        .collect();
    let accounting = std::fs::read_to_string(&dump).unwrap();
    eprintln!("last tick {tick}\nsacct:\n{accounting}\nsshare:\n{sshare}\nfairshare: {json}");
    assert_eq!(rows.len(), expected.len(), "the same accounts and users");
    for want in &expected {
        let user = !want[1].is_empty();
        let name = if user { want[1] } else { want[0].trim() };
        // The root user is named like the root account.
        let row = rows
            .iter()
            .find(|r| r["name"] == name && r["user"] == user)
            .unwrap_or_else(|| panic!("{name}"));
        let number = |key: &str| row[key].as_f64().unwrap();
        let agree = |key: &str, column: usize| {
            let sshare: f64 = want[column].parse().unwrap();
            let got = number(key);
            let scale = sshare.abs().max(1.0);
            assert!(
                (got - sshare).abs() <= 1e-4 * scale,
                "{name} {key}: {got} against sshare's {sshare}"
            );
        };
        let raw: f64 = want[4].parse().unwrap();
        assert!(
            (number("raw_usage") - raw).abs() <= 1.0,
            "{name} RawUsage: {} against {raw}",
            number("raw_usage")
        );
        agree("effective_usage", 6);
        if name != "root" || user {
            agree("normalized_shares", 3);
            agree("normalized_usage", 5);
            // sshare prints `inf` for a level without usage, nothing for a `parent` user.
            if !matches!(want[8], "inf" | "") {
                agree("level_fs", 8);
            }
        }
        if !want[7].is_empty() {
            agree("factor", 7);
        }
    }
}
