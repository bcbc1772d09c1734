//! `fairshare agent` as an operator runs it: on a fake cgroup tree against the real daemon
//! (an outage loses no interval and counts none twice), its `--check`, `--once --dry-run` and
//! SIGTERM; and the paper's single-node experiment on this machine's real cgroups, where they
//! can be written.

use crate::daemon::*;
use fairshare_agent::cgroup::{self, Layout, Version};
use fairshare_agent::fake::{FakeTree, Shape};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `fairshare agent`, killed if the test ends without stopping it.
struct AgentProcess {
    child: Child,
    log: Arc<Mutex<String>>,
}

impl AgentProcess {
    fn start(config: &Path, token: Option<&str>) -> AgentProcess {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fairshare"));
        command
            .args([
                "agent",
                "--log",
                "fairshare=debug,fairshare_agent=debug",
                "--config",
            ])
            .arg(config)
            .env_remove("FAIRSHARE_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(t) = token {
            command.env("FAIRSHARE_TOKEN", t);
        }
        let mut child = command.spawn().expect("the fairshare binary starts");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        AgentProcess { child, log }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// SIGTERM, and the exit status (at most 10 s).
    fn terminate(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "no exit 10 s after SIGTERM:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits up to `secs` for `ready`, polling.
/// A fake cgroup tree of `shape` under `dir` with `workloads` under it.
fn fake_tree(dir: &Path, shape: Shape, workloads: &[&str]) -> FakeTree {
    let tree = FakeTree::new(&dir.join("cgroup"), shape).unwrap();
    for w in workloads {
        tree.add(w).unwrap();
    }
    tree
}

fn wait_for(secs: u64, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}: not within {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// CPU-seconds per workload over every stored report, and each report's (seq, received_ms).
fn stored_cpu(url: &str) -> (BTreeMap<String, f64>, Vec<(i64, i64)>) {
    use sqlx::{Connection, Row};
    sqlx::any::install_default_drivers();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows = rt.block_on(async {
        let mut conn = sqlx::AnyConnection::connect(url).await.unwrap();
        sqlx::query("SELECT seq, received_ms, samples FROM reports ORDER BY seq")
            .fetch_all(&mut conn)
            .await
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r.get::<i64, _>(0),
                    r.get::<i64, _>(1),
                    r.get::<String, _>(2),
                )
            })
            .collect::<Vec<_>>()
    });
    let mut cpu = BTreeMap::new();
    for (_, _, samples) in &rows {
        let samples: Value = serde_json::from_str(samples).unwrap();
        for s in samples.as_array().unwrap() {
            *cpu.entry(s["workload"].as_str().unwrap().to_string())
                .or_insert(0.0) += s["usage"]["cpu"].as_f64().unwrap();
        }
    }
    (cpu, rows.iter().map(|(seq, at, _)| (*seq, *at)).collect())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn an_outage_loses_no_interval_and_counts_none_twice() {
    let db = database("sqlite", "");
    let daemon = Daemon::start(&db, 0.5);
    let addr = daemon.url.trim_start_matches("http://").to_string();
    let dir = tempfile::tempdir().unwrap();
    let workloads = ["fs/user-a.1", "fs/user-b.1"];
    let tree = fake_tree(dir.path(), Shape::V2, &workloads);
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "node = \"n-agent\"\ninterval_s = 0.2\ncgroup_root = {:?}\nparents = [\"fs\"]\n\
             [supply]\ncpu = 4\n[daemon]\nurl = \"{}\"\ntimeout_s = 1\nmax_backoff_s = 0.4\n",
            tree.root, daemon.url
        ),
    )
    .unwrap();
    let agent = AgentProcess::start(&config, Some(AGENT));
    wait_for(30, "the agent registers its node and workloads", || {
        let (status, nodes) = daemon.call("GET", "/v1/nodes", Some(READER), None);
        status == 200 && nodes[0]["workloads"] == 2
    });
    // Counters advance by known amounts, in whole microseconds, before, during and after
    // an outage of about ten intervals.
    let mut total = [0u64; 2];
    let mut advance = |secs: f64| {
        let until = Instant::now() + Duration::from_secs_f64(secs);
        while Instant::now() < until {
            for (i, w) in workloads.iter().enumerate() {
                total[i] += 10_000 * (i as u64 + 1);
                tree.set(w, total[i] as f64 / 1e6, 0, 0).unwrap();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    advance(1.5);
    daemon.kill();
    let down_at = now_ms();
    advance(2.5);
    let daemon = Daemon::start_with(&db, &["--interval", "0.5", "--listen", &addr]);
    let up_at = now_ms();
    advance(1.0);
    let expected: BTreeMap<String, f64> = workloads
        .iter()
        .zip(total)
        .map(|(w, t)| {
            (
                format!("n-agent:{}", w.trim_start_matches("fs/")),
                t as f64 / 1e6,
            )
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (cpu, _) = stored_cpu(&db.url);
        if expected
            .iter()
            .all(|(w, t)| (cpu.get(w).copied().unwrap_or(0.0) - t).abs() < 1e-9)
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "stored {cpu:?}, expected {expected:?}\n{}",
            agent.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (cpu, reports) = stored_cpu(&db.url);
    for (w, t) in &expected {
        assert!(
            (cpu[w] - t).abs() < 1e-9,
            "{w}: stored {} CPU-s, counters advanced {t}",
            cpu[w]
        );
    }
    let buffered = reports
        .iter()
        .filter(|(seq, at)| *seq > down_at && *seq < up_at && *at >= up_at)
        .count();
    assert!(
        buffered >= 5,
        "reports made while the daemon was down and sent after: {buffered}\n{}",
        agent.log()
    );
    let log = agent.log();
    assert!(log.contains("the daemon cannot be reached"), "{log}");
    assert!(log.contains("the daemon answers again"), "{log}");
    assert_eq!(
        log.matches("the daemon cannot be reached").count(),
        1,
        "said once per outage"
    );
    assert!(agent.terminate().success());
    drop(daemon);
}

/// Runs `fairshare ARGS --server URL --token READER`: its standard output (it must succeed).
fn operator(url: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .args(["--server", url, "--token", READER])
        .env_remove("FAIRSHARE_TOKEN")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn top_and_explain_show_the_cpu_shares_a_v1_node_holds() {
    let db = database("sqlite", "");
    let daemon = Daemon::start(&db, 0.3);
    let dir = tempfile::tempdir().unwrap();
    let workloads = ["fs/user-d.1", "fs/user-d.2", "fs/user-e.1"];
    let tree = fake_tree(dir.path(), Shape::V1, &workloads);
    // knob_step = 1: every knob keeps the value written first (priority 0, cpu.shares 1024),
    // whatever the priorities the daemon computes later.
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "node = \"n-v1\"\ninterval_s = 0.2\nknob_step = 1\ncgroup_root = {:?}\n\
             parents = [\"fs\"]\n[supply]\ncpu = 4\n[daemon]\nurl = \"{}\"\ntimeout_s = 1\n",
            tree.root, daemon.url
        ),
    )
    .unwrap();
    let agent = AgentProcess::start(&config, Some(AGENT));
    // A workload no agent reports for: its weights can only be computed.
    wait_for(30, "the agent registers its node and workloads", || {
        let (status, nodes) = daemon.call("GET", "/v1/nodes", Some(READER), None);
        status == 200 && nodes[0]["workloads"] == 3
    });
    daemon.expect(
        204,
        "PUT",
        "/v1/users/f",
        ADMIN,
        Some(&serde_json::json!({})),
    );
    daemon.expect(
        204,
        "PUT",
        "/v1/workloads/f1",
        ADMIN,
        Some(&serde_json::json!(
        {"owner": "f", "node": "n-v1", "virtual": {"cpu": 1, "mem": 1073741824u64}})),
    );
    let e1 = "n-v1:user-e.1";
    let shares = |p: &Value| -> Option<(i32, u64)> {
        let w = p["workloads"]
            .as_array()?
            .iter()
            .find(|w| w["workload"] == e1)?;
        let priority = w["knobs"]["priority"].as_i64()? as i32;
        Some((priority, w["written"]["cpu.shares"].as_u64()?))
    };
    // User d's two workloads busy, e's idle: e is lighter, with a priority below 0, whose
    // computed cpu.shares is above 1024.
    let mut cpu = 0.0;
    let mut top = Value::Null;
    wait_for(
        30,
        "top --json shows e1's cpu.shares with a priority off 0",
        || {
            cpu += 0.05;
            for w in &workloads[..2] {
                tree.set(w, cpu, 0, 1 << 28).unwrap();
            }
            top = serde_json::from_str(&operator(&daemon.url, &["top", "--json"])).unwrap();
            shares(&top).is_some_and(|(p, _)| p < 0)
        },
    );
    let (priority, written) = shares(&top).unwrap();
    let computed = cgroup::cpu_knob(Version::V1, Path::new("")).value(priority, 0);
    assert_eq!(
        Some(written),
        tree.knob("fs/user-e.1", "cpu.shares"),
        "{top}"
    );
    assert_ne!(written, computed, "held by the hysteresis: {top}");
    let text = operator(&daemon.url, &["top", "--once"]);
    let line = |user: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{user} ")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("e").contains(&format!("cpu.shares {written} (v1, written)")),
        "{text}"
    );
    assert!(!line("e").contains("computed"), "{text}");
    assert!(line("f").contains("computed"), "{text}");
    let explained = operator(&daemon.url, &["explain", "e"]);
    assert!(
        explained.contains(&format!("cpu.shares {written} (v1, written)")),
        "{explained}"
    );
    let json: Value =
        serde_json::from_str(&operator(&daemon.url, &["explain", "e", "--json"])).unwrap();
    assert_eq!(json["workloads"][0]["written"]["cpu.shares"], written);
    let f = operator(&daemon.url, &["explain", "f"]);
    assert!(f.contains("cpu.weight") && f.contains("computed"), "{f}");
    assert!(agent.terminate().success());
    drop(daemon);
}

#[test]
fn check_once_and_dry_run_on_a_fake_tree() {
    let dir = tempfile::tempdir().unwrap();
    let tree = fake_tree(
        dir.path(),
        Shape::Hybrid,
        &["fs/user-d.1", "fs/user-d.2", "fs/user-e.1"],
    );
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "node = \"n1\"\ninterval_s = 0.2\ncgroup_root = {:?}\nparents = [\"fs\"]\n",
            tree.root
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fairshare"))
            .arg("agent")
            .arg("--config")
            .arg(&config)
            .args(args)
            .output()
            .unwrap()
    };
    let check = run(&["--check", "--json"]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let doc: Value = serde_json::from_slice(&check.stdout).unwrap();
    let by_what = |what: &str| {
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["what"] == what)
            .cloned()
            .unwrap()
    };
    assert!(
        by_what("cgroups")["detail"]
            .as_str()
            .unwrap()
            .contains("hybrid"),
        "{doc}"
    );
    assert_eq!(by_what("knob cpu.shares")["status"], "ok");
    assert_eq!(by_what("counter cpuacct.usage")["status"], "ok");
    let before = tree.knob("fs/user-e.1", "cpu.shares");
    let once = run(&["--once", "--dry-run", "--json"]);
    assert!(
        once.status.success(),
        "{}",
        String::from_utf8_lossy(&once.stderr)
    );
    let cycle: Value = serde_json::from_slice(&once.stdout).unwrap();
    assert_eq!(cycle["cycle"], 2);
    assert_eq!(cycle["writes"].as_array().unwrap().len(), 9, "{cycle}");
    assert_eq!(
        tree.knob("fs/user-e.1", "cpu.shares"),
        before,
        "a dry run writes nothing"
    );
    let text = run(&["--once"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("cycle 2: 3 workloads, 3 measured"), "{out}");
    assert!(out.contains("cpu.shares = "), "{out}");
    assert_ne!(tree.knob("fs/user-e.1", "cpu.shares"), before);
    // A misspelled parent, or a child missing from a hierarchy, fails the check, exit 1.
    let misspelled = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[\"fs\"]", "[\"fs\", \"absent\"]");
    std::fs::write(&config, misspelled).unwrap();
    let absent = run(&["--check"]);
    assert_eq!(absent.status.code(), Some(1));
    let out = String::from_utf8_lossy(&absent.stdout);
    assert!(out.contains("fail  parent absent"), "{out}");
    let fine = std::fs::read_to_string(&config)
        .unwrap()
        .replace(", \"absent\"", "");
    std::fs::write(&config, fine).unwrap();
    std::fs::remove_dir_all(tree.root.join("cpuacct/fs/user-d.2")).unwrap();
    let unmeasured = run(&["--check"]);
    assert_eq!(unmeasured.status.code(), Some(1));
    let out = String::from_utf8_lossy(&unmeasured.stdout);
    assert!(
        out.contains("fail  counter cpuacct.usage") && out.contains("user-d.2"),
        "{out}"
    );
    // A daemon that does not answer fails the check, exit status 1.
    std::fs::write(&config, format!("cgroup_root = {:?}\nparents = [\"fs\"]\n[daemon]\nurl = \"http://127.0.0.1:9\"\ntimeout_s = 1\n", tree.root)).unwrap();
    let down = run(&["--check"]);
    assert_eq!(down.status.code(), Some(1));
    let out = String::from_utf8_lossy(&down.stdout);
    assert!(out.contains("fail  daemon"), "{out}");
}

#[test]
fn sigterm_writes_the_kernels_defaults_back() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = ["fs/user-d.1", "fs/user-d.2", "fs/user-e.1"];
    let tree = fake_tree(dir.path(), Shape::V1, &workloads);
    let config = dir.path().join("agent.toml");
    let write_config = |extra: &str| {
        std::fs::write(
            &config,
            format!(
                "node = \"n1\"\ninterval_s = 0.2\ncgroup_root = {:?}\nparents = [\"fs\"]\n{extra}",
                tree.root
            ),
        )
        .unwrap()
    };
    for (on_exit, restored) in [("", true), ("on_exit = \"keep\"", false)] {
        write_config(on_exit);
        let agent = AgentProcess::start(&config, None);
        // Every workload busy: d's two weigh more than e's one, and the knobs move off the
        // defaults.
        let mut cpu = 0.0;
        wait_for(20, "weights off the defaults", || {
            cpu += 0.2;
            for w in workloads {
                tree.set(w, cpu, 0, 1 << 28).unwrap();
            }
            std::thread::sleep(Duration::from_millis(100));
            tree.knob("fs/user-e.1", "cpu.shares") > Some(1100)
        });
        assert!(agent.terminate().success());
        let shares: Vec<Option<u64>> = workloads
            .iter()
            .map(|w| tree.knob(w, "cpu.shares"))
            .collect();
        let soft = tree.knob("fs/user-e.1", "memory.soft_limit_in_bytes");
        if restored {
            assert_eq!(shares, [Some(1024); 3], "{on_exit:?}");
            assert_eq!(tree.knob("fs/user-e.1", "blkio.weight"), Some(500));
            // -1 is how v1 is told "unlimited"; a real kernel reads it back as a huge number.
            assert_eq!(soft, None, "the fake file holds \"-1\"");
            let text = std::fs::read_to_string(
                tree.root
                    .join("memory/fs/user-e.1/memory.soft_limit_in_bytes"),
            )
            .unwrap();
            assert_eq!(text, "-1");
        } else {
            assert!(shares[2] > Some(1100), "kept: {shares:?}");
        }
    }
}

// ---- The real experiment -------------------------------------------------------------

/// Three CPU-bound processes in three child cgroups of a fresh parent, pinned to one CPU;
/// every process and cgroup made is removed on drop, whatever happened.
struct Experiment {
    layout: Layout,
    parent: String,
    hierarchies: Vec<PathBuf>,
    processes: Vec<Child>,
}

const CHILDREN: [&str; 3] = ["user-d.1", "user-d.2", "user-e.1"];

impl Experiment {
    /// Sets it up, or says why this machine cannot.
    fn start(name: &str) -> Result<Experiment, String> {
        let root = Path::new("/sys/fs/cgroup");
        let layout = Layout::detect(root).map_err(|e| e.to_string())?;
        if !layout.knobs.iter().any(|k| k.kind == cgroup::KnobKind::Cpu)
            || layout.cpu_usage.is_none()
        {
            return Err("no cpu controller with a usage counter".into());
        }
        let mut hierarchies: Vec<PathBuf> = layout.knobs.iter().map(|k| k.mount.clone()).collect();
        hierarchies.extend(layout.cpu_usage.iter().map(|p| p.mount.clone()));
        hierarchies.push(layout.primary.clone());
        hierarchies.sort();
        hierarchies.dedup();
        let parent = format!("fairshare-test-{name}-{}", std::process::id());
        let mut ex = Experiment {
            layout,
            parent,
            hierarchies,
            processes: Vec::new(),
        };
        for h in ex.hierarchies.clone() {
            std::fs::create_dir(h.join(&ex.parent))
                .map_err(|e| format!("{}: {e}", h.join(&ex.parent).display()))?;
            if ex.layout.version == Version::V2 {
                std::fs::write(h.join(&ex.parent).join("cgroup.subtree_control"), "+cpu")
                    .map_err(|e| format!("enabling cpu for the children: {e}"))?;
            }
            for c in CHILDREN {
                std::fs::create_dir(h.join(&ex.parent).join(c)).map_err(|e| e.to_string())?;
            }
        }
        let cpu = first_allowed_cpu();
        for c in CHILDREN {
            let child = Command::new("taskset")
                .args(["-c", &cpu, "sh", "-c", "while :; do :; done"])
                .spawn()
                .map_err(|e| format!("taskset: {e}"))?;
            let pid = child.id().to_string();
            ex.processes.push(child);
            for h in &ex.hierarchies {
                std::fs::write(h.join(&ex.parent).join(c).join("cgroup.procs"), &pid)
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(ex)
    }

    /// Each child's CPU-seconds so far, from its cgroup's own counter.
    fn cpu(&self) -> [f64; 3] {
        let place = self.layout.cpu_usage.as_ref().unwrap();
        CHILDREN.map(|c| {
            cgroup::read(place, &format!("{}/{c}", self.parent))
                .unwrap()
                .unwrap()
        })
    }

    /// The shares of d and e of the three children's CPU time, measured every second for
    /// `secs` seconds: per second, and over the whole span.
    fn shares(&self, secs: u32) -> (Vec<(f64, f64)>, f64) {
        let start = self.cpu();
        let mut last = start;
        let mut per_second = Vec::new();
        for _ in 0..secs {
            std::thread::sleep(Duration::from_secs(1));
            let now = self.cpu();
            let d: f64 = (now[0] - last[0]) + (now[1] - last[1]);
            let e = now[2] - last[2];
            per_second.push((d / (d + e), e / (d + e)));
            last = now;
        }
        let d = (last[0] - start[0]) + (last[1] - start[1]);
        let e = last[2] - start[2];
        (per_second, e / (d + e))
    }

    fn config(&self, dir: &Path, daemon: Option<&str>) -> PathBuf {
        let path = dir.join("agent.toml");
        let daemon = daemon.map_or(String::new(), |url| format!("[daemon]\nurl = \"{url}\"\n"));
        std::fs::write(
            &path,
            format!(
                "node = \"exp\"\ninterval_s = 1\nparents = [\"{}\"]\n[supply]\ncpu = 1\n{daemon}",
                self.parent
            ),
        )
        .unwrap();
        path
    }
}

impl Drop for Experiment {
    fn drop(&mut self) {
        for p in &mut self.processes {
            let _ = p.kill();
            let _ = p.wait();
        }
        for h in &self.hierarchies {
            for c in CHILDREN {
                let _ = std::fs::remove_dir(h.join(&self.parent).join(c));
            }
            let _ = std::fs::remove_dir(h.join(&self.parent));
        }
    }
}

fn first_allowed_cpu() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let list = s
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                .trim()
                .to_string();
            Some(list.split([',', '-']).next()?.to_string())
        })
        .unwrap_or_else(|| "0".into())
}

/// Writes the measured shares where `FAIRSHARE_AGENT_EXPERIMENT_OUT` says, for docs/agent.md.
fn record(mode: &str, before: &[(f64, f64)], with: &[(f64, f64)]) {
    let Ok(dir) = std::env::var("FAIRSHARE_AGENT_EXPERIMENT_OUT") else {
        return;
    };
    let mut csv = String::from("second,phase,d_share,e_share\n");
    let rows = before
        .iter()
        .map(|r| ("without", r))
        .chain(with.iter().map(|r| ("with", r)));
    for (t, (phase, (d, e))) in rows.enumerate() {
        csv.push_str(&format!("{},{phase},{d:.4},{e:.4}\n", t + 1));
    }
    std::fs::write(Path::new(&dir).join(format!("experiment-{mode}.csv")), csv).unwrap();
}

/// One experiment at a time: both pin their processes to the same CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn experiment(mode: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ex = match Experiment::start(mode) {
        Ok(ex) => ex,
        Err(why) => {
            eprintln!("skipping the real cgroup experiment ({mode}): this machine's cgroups cannot be used: {why}");
            return;
        }
    };
    std::thread::sleep(Duration::from_secs(2));
    let (before, e_before) = ex.shares(8);
    assert!(
        (0.25..0.42).contains(&e_before),
        "without the agent e should get about a third, got {e_before:.3}"
    );
    let dir = tempfile::tempdir().unwrap();
    let db;
    let mut service = None;
    let config = if mode == "daemon" {
        db = database("sqlite", "");
        let d = Daemon::start(&db, 1.0);
        let config = ex.config(dir.path(), Some(&d.url));
        service = Some(d);
        config
    } else {
        ex.config(dir.path(), None)
    };
    let agent = AgentProcess::start(&config, Some(AGENT));
    let (with, e_with) = ex.shares(30);
    eprintln!("{mode}: user e's share of CPU {e_before:.3} without the agent, {e_with:.3} over the 30 s with it");
    record(mode, &before, &with);
    assert!(
        e_with >= 0.45,
        "{mode}: user e got {e_with:.3} of the CPU with the agent\n{}",
        agent.log()
    );
    assert!(agent.terminate().success());
    drop(service);
}

#[test]
fn the_real_experiment_standalone() {
    experiment("standalone");
}

#[test]
fn the_real_experiment_with_the_daemon() {
    experiment("daemon");
}
