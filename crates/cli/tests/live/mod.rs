//! What the tests against a real Slurm share (22.05 on the host, or 24.11 when the test binary
//! runs in its root: scripts/slurm/in-root.sh): running its commands and fairshare's,
//! waiting for the cluster, reading `sprio`, taking a consistent snapshot of the accounting
//! and `sshare`, and comparing `fairshare priorities` with `sshare -l` row by row.

#![allow(dead_code)] // Each test module uses its own part.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The scripts that drive the cluster.
pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm")
}

/// Runs `command` with `args`, returning its standard output; panics with its error output.
pub fn run(command: &str, args: &[&str]) -> String {
    let out = Command::new(command).args(args).output().expect(command);
    assert!(
        out.status.success(),
        "{command} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Runs the script `name` of [`scripts`] with `args`.
pub fn script(name: &str, args: &[&str]) -> String {
    let path = scripts().join(name);
    run("bash", &[&[path.to_str().unwrap()], args].concat())
}

/// Submits, as `user`, `sbatch OPTIONS --wrap 'sleep SECONDS'`; its id.
pub fn submit(user: &str, options: &str, seconds: u32) -> u64 {
    let wrap =
        format!("sbatch --parsable --chdir=/tmp -o /dev/null {options} --wrap 'sleep {seconds}'");
    let id = run("su", &[user, "-c", &wrap]);
    id.trim().parse().expect("a job id")
}

/// Waits until `done` holds, at most `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The state of job `id` as squeue shows it (empty once it has left the queue).
pub fn state(id: u64) -> String {
    let args = ["-h", "-j", &id.to_string(), "-o", "%T"];
    let out = Command::new("squeue").args(args).output().expect("squeue");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Cancels every job of `users` and waits for an empty queue.
pub fn empty_queue(users: &[&str]) {
    for user in users {
        run("scancel", &["-u", user]);
    }
    wait_for("an empty queue", Duration::from_secs(60), || {
        run("squeue", &["-h"]).trim().is_empty()
    });
}

/// Every pending job's site factor, as `sprio` shows it.
pub fn sprio_site() -> std::collections::BTreeMap<u64, i64> {
    run("sprio", &["--noheader", "--format", "%i|%S"])
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(id, s)| (id.trim().parse().unwrap(), s.trim().parse().unwrap()))
        .collect()
}

/// When each of `ids` started, as `sacct` says (`Unknown` before it starts).
pub fn started(ids: &[u64]) -> Vec<(String, u64)> {
    ids.iter()
        .map(|&id| {
            let args = ["-n", "-X", "-P", "-j", &id.to_string(), "-o", "Start"];
            (run("sacct", &args).trim().to_owned(), id)
        })
        .collect()
}

/// `fairshare slurm ARGS… --config CONFIG`, parsed as JSON.
pub fn slurm(config: &Path, args: &[&str]) -> Value {
    let mut all = vec!["slurm"];
    all.extend(args);
    all.extend(["--config", config.to_str().unwrap(), "--json"]);
    serde_json::from_str(&run(env!("CARGO_BIN_EXE_fairshare"), &all)).expect("JSON")
}

/// Sets `PriorityWeightFairshare` in slurm.conf and makes slurmctld read it.
pub fn fairshare_weight(weight: u32) {
    let path = "/etc/slurm/slurm.conf";
    let conf = std::fs::read_to_string(path).unwrap();
    let conf: Vec<String> = conf
        .lines()
        .map(|l| match l.starts_with("PriorityWeightFairshare=") {
            true => format!("PriorityWeightFairshare={weight}"),
            false => l.to_string(),
        })
        .collect();
    std::fs::write(path, conf.join("\n") + "\n").unwrap();
    run("scontrol", &["reconfigure"]);
    wait_for("the new weight", Duration::from_secs(30), || {
        run("scontrol", &["show", "config"]).lines().any(|l| {
            l.split_whitespace().collect::<Vec<_>>()
                == ["PriorityWeightFairShare", "=", &weight.to_string()]
        })
    });
}

/// The time of the last decay tick: when slurmctld last wrote its record of it.
pub fn last_tick() -> String {
    let file = "/var/spool/slurmctld/priority_last_decay_ran";
    run("date", &["-u", "-r", file, "+%Y-%m-%dT%H:%M:%S"])
        .trim()
        .to_owned()
}

/// Waits for the next decay tick.
pub fn next_tick() {
    let before = last_tick();
    wait_for("a decay tick", Duration::from_secs(90), || {
        last_tick() != before
    });
}

/// One consistent look at the cluster into `dir` (`snapshot.sh`: the dump, sshare's rows, the
/// partitions, QOS and associations, the last decay tick), taken between two identical sshare
/// readings under the same tick: sshare's rows and the tick.
pub fn snapshot(dir: &Path) -> (String, String) {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    for _ in 0..10 {
        let before = run("sshare", &["-a", "-l", "-P"]);
        let tick_before = last_tick();
        script("snapshot.sh", &[dir.to_str().unwrap()]);
        let tick = read("last-tick.txt").trim().to_owned();
        if before == read("sshare.txt") && tick_before == tick {
            return (before, tick);
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    panic!("Slurm's standings kept changing while the snapshot was taken");
}

/// Checks every row of `sshare -a -l -P` against the row of `fairshare priorities --json` for
/// the same account or user: RawUsage to 1, every other column to the fourth decimal.
pub fn agree_with_sshare(sshare: &str, doc: &Value) {
    let rows = doc["rows"].as_array().unwrap();
    let expected: Vec<Vec<&str>> = sshare
        .lines()
        .skip(1)
        .map(|l| l.split('|').collect())
        .collect();
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

/// Holds the live cluster for one test at a time: the live tests share one Slurm, its
/// accounting and its slurm.conf, and run in one test binary.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CLUSTER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A child process (a `watch`) killed when the test ends, even by a failed assertion.
pub struct KillOnDrop(pub std::process::Child);

impl KillOnDrop {
    /// Sends it SIGTERM and waits for it to end.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        run("kill", &["-TERM", &self.0.id().to_string()]);
        self.0.wait().unwrap()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How many times `log` holds `text`.
pub fn logged(log: &Path, text: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches(text)
        .count()
}

/// Waits (`limit` at most) until `log` holds `text` `times` times.
pub fn wait_until_logged(log: &Path, text: &str, times: usize, limit: Duration) {
    wait_for(&format!("{text:?} logged {times} times"), limit, || {
        logged(log, text) >= times
    });
}

/// A folder in `dir` of a scheduler's commands: `commands` linked from `/usr/bin`, and `writer`
/// a script that, when the shell test `when` holds of its arguments, marks `marker` and takes
/// two seconds before it runs the real one — a write long enough to be signalled in the middle
/// of.
pub fn slow_writer(
    dir: &Path,
    marker: &Path,
    commands: &[&str],
    writer: &str,
    when: &str,
) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for command in commands {
        std::os::unix::fs::symlink(format!("/usr/bin/{command}"), bin.join(command)).unwrap();
    }
    let script = format!(
        "#!/bin/sh\nif {when}; then touch '{}'; sleep 2; fi\nexec /usr/bin/{writer} \"$@\"\n",
        marker.display()
    );
    let path = bin.join(writer);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}
