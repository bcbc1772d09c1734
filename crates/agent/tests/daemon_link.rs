//! The agent against a small stand-in for the daemon (plain HTTP on loopback) whose answers
//! the test sets: recovery within one interval of the daemon's return, hysteresis on
//! priorities that flap by one, and a `--check` that registers nothing.

use fairshare_agent::agent::Supply;
use fairshare_agent::cgroup::Layout;
use fairshare_agent::fake::{FakeTree, Shape};
use fairshare_agent::{run, Agent, AgentConfig, Source};
use fairshare_core::heaviness::knobs::KnobValues;
use fairshare_wire::model::{Priorities, WorkloadPriority};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the stand-in answers and what it was asked.
#[derive(Default)]
struct State {
    down: bool,
    /// Answers as a daemon older than the agent: a report with `written` is refused.
    old: bool,
    /// The nodes the agent's token may act for (`GET /v1/access`); `None`: every node.
    bound_to: Option<String>,
    priorities: Vec<(String, i32)>,
    requests: Vec<String>,
    reports: Vec<serde_json::Value>,
}

/// A stand-in daemon on a loopback port, serving until the test ends.
struct FakeDaemon {
    url: String,
    state: Arc<Mutex<State>>,
}

impl FakeDaemon {
    fn start() -> FakeDaemon {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let state = shared.clone();
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        FakeDaemon { url, state }
    }

    fn set(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.state.lock().unwrap());
    }

    fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().requests.clone()
    }

    fn reports(&self) -> Vec<serde_json::Value> {
        self.state.lock().unwrap().reports.clone()
    }
}

/// Answers the requests of one connection (keep-alive) until it closes.
fn serve(stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let request = line.trim().rsplit_once(' ').unwrap().0.to_string();
        let (status, answer) = answer(&request, &body, state);
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn answer(request: &str, body: &[u8], state: &Mutex<State>) -> (&'static str, String) {
    let mut state = state.lock().unwrap();
    state.requests.push(request.to_string());
    if state.down {
        return ("503 Service Unavailable", "{}".into());
    }
    if request.starts_with("GET /v1/priorities") {
        let p = priorities(&state.priorities);
        return ("200 OK", serde_json::to_string(&p).unwrap());
    }
    if request.starts_with("POST /v1/usage") {
        let report: serde_json::Value = serde_json::from_slice(body).unwrap();
        if state.old && report.get("written").is_some() {
            let refusal = "{\"error\":\"invalid_json\",\"message\":\"Failed to deserialize the JSON body into the target type: unknown field `written`, expected one of `node`, `seq`, `interval_s`, `samples`\"}";
            return ("400 Bad Request", refusal.into());
        }
        let ack =
            serde_json::json!({"node": report["node"], "seq": report["seq"], "duplicate": false});
        state.reports.push(report);
        return ("200 OK", ack.to_string());
    }
    if let Some(node) = request.strip_prefix("GET /v1/access?node=") {
        return match &state.bound_to {
            Some(bound) if bound != node => (
                "403 Forbidden",
                format!("{{\"error\":\"forbidden\",\"message\":\"token agent may act only for node {bound:?}, not for node {node:?}\"}}"),
            ),
            _ => ("204 No Content", String::new()),
        };
    }
    if request.starts_with("GET /healthz") {
        return ("200 OK", "{}".into());
    }
    ("204 No Content", String::new())
}

fn priorities(of: &[(String, i32)]) -> Priorities {
    Priorities {
        cycle: 1,
        computed_at_ms: 1,
        profile: "cgroup-v2".into(),
        resources: vec!["cpu".into()],
        users: Vec::new(),
        workloads: of
            .iter()
            .map(|(id, p)| WorkloadPriority {
                workload: id.as_str().into(),
                owner: "d".into(),
                node: "n1".into(),
                heaviness: 0.0,
                priority_input: 0.0,
                measured: true,
                knobs: KnobValues {
                    priority: *p,
                    cpu: 5000,
                    io: 5000,
                    memory: None,
                    network: None,
                },
                written: None,
            })
            .collect(),
    }
}

fn tree() -> (tempfile::TempDir, FakeTree) {
    let dir = tempfile::tempdir().unwrap();
    let tree = FakeTree::new(dir.path(), Shape::V1).unwrap();
    tree.add("fs/user-d.1").unwrap();
    (dir, tree)
}

fn config(tree: &FakeTree, daemon: &FakeDaemon, extra: &str) -> AgentConfig {
    let text = format!(
        "node = \"n1\"\ninterval_s = 1\ncgroup_root = {:?}\nparents = [\"fs\"]\n{extra}\n[daemon]\nurl = \"{}\"\ntimeout_s = 2\n",
        tree.root, daemon.url
    );
    let config: AgentConfig = toml::from_str(&text).unwrap();
    config.check().unwrap();
    config
}

fn agent(tree: &FakeTree, daemon: &FakeDaemon, extra: &str) -> Agent {
    let supply = Supply {
        cpu: 4.0,
        memory: 16e9,
        disk: 500e6,
        network: 1.25e9,
        speed: 1.0,
    };
    let layout = Layout::detect(&tree.root).unwrap();
    let config = config(tree, daemon, extra);
    Agent::new(config, layout, "n1".into(), supply, None, false).unwrap()
}

#[test]
fn the_agent_recovers_within_one_interval_of_the_daemons_return() {
    let (_dir, tree) = tree();
    let daemon = FakeDaemon::start();
    daemon.set(|s| s.priorities = vec![("n1:user-d.1".into(), 20)]);
    let mut a = agent(&tree, &daemon, "");
    let t0 = Instant::now();
    assert_eq!(a.cycle(t0).source, Source::Daemon);
    // Down for 30 cycles of 1 s: the backoff between cycles grows past the interval.
    daemon.set(|s| s.down = true);
    for i in 1..=30 {
        let report = a.cycle(t0 + Duration::from_secs(i));
        assert_eq!(report.source, Source::Last, "cycle {i}");
    }
    assert!(
        a.retry_at().unwrap() > t0 + Duration::from_secs(32),
        "the backoff is long by now"
    );
    // Back, with new priorities: the very next cycle has them.
    daemon.set(|s| {
        s.down = false;
        s.priorities = vec![("n1:user-d.1".into(), -20)];
    });
    let report = a.cycle(t0 + Duration::from_secs(31));
    assert_eq!(report.source, Source::Daemon, "{report:?}");
    assert_eq!(report.writes[0].priority, -20);
    assert_eq!(tree.knob("fs/user-d.1", "cpu.shares"), Some(1024 * 70 / 50));
}

#[test]
fn a_priority_that_flaps_by_one_writes_nothing() {
    let (_dir, tree) = tree();
    let daemon = FakeDaemon::start();
    let mut a = agent(&tree, &daemon, "");
    let t0 = Instant::now();
    let mut cpu_writes = Vec::new();
    // 10, 11, 10, 11, …, as user d's priority in the 3-cgroup run; then a real change to 13.
    for i in 0..8u64 {
        let p = if i == 7 { 13 } else { 10 + (i % 2) as i32 };
        daemon.set(|s| s.priorities = vec![("n1:user-d.1".into(), p)]);
        let report = a.cycle(t0 + Duration::from_secs(i));
        cpu_writes.push(
            report
                .writes
                .iter()
                .filter(|w| w.file == "cpu.shares")
                .map(|w| w.value)
                .collect::<Vec<_>>(),
        );
    }
    // Cycle 1 writes 819 (priority 10); the flaps write nothing; 13 writes 757.
    assert_eq!(cpu_writes[0], [819], "{cpu_writes:?}");
    assert!(cpu_writes[1..7].iter().all(Vec::is_empty), "{cpu_writes:?}");
    assert_eq!(cpu_writes[7], [757], "{cpu_writes:?}");
    assert_eq!(tree.knob("fs/user-d.1", "cpu.shares"), Some(757));
}

#[test]
fn each_report_says_what_is_in_force_held_values_included() {
    let (_dir, tree) = tree();
    let daemon = FakeDaemon::start();
    let mut a = agent(&tree, &daemon, "");
    let t0 = Instant::now();
    // Priority 10 writes cpu.shares 819; 11 would be 798, within knob_step: 819 is held.
    for (i, p) in [10, 11, 11].into_iter().enumerate() {
        daemon.set(|s| s.priorities = vec![("n1:user-d.1".into(), p)]);
        a.cycle(t0 + Duration::from_secs(i as u64));
    }
    let reports = daemon.reports();
    assert_eq!(reports.len(), 2, "none on the first cycle: {reports:?}");
    assert_eq!(
        reports[0]["written"]["n1:user-d.1"]["cpu.shares"], 819,
        "{}",
        reports[0]
    );
    let last = &reports[1]["written"]["n1:user-d.1"];
    assert_eq!(
        last["cpu.shares"], 819,
        "held, not the computed 798: {last}"
    );
    for file in ["cpu.shares", "blkio.weight", "memory.soft_limit_in_bytes"] {
        assert_eq!(
            last[file].as_u64(),
            tree.knob("fs/user-d.1", file),
            "{file} as in the file"
        );
    }
}

#[test]
fn the_check_registers_nothing_and_fails_on_what_it_cannot_measure() {
    let (_dir, tree) = tree();
    let daemon = FakeDaemon::start();
    let config = config(&tree, &daemon, "");
    let items = run::check(&config, "n1", Some("token".into()));
    let failed: Vec<_> = items.iter().filter(|i| i.status == "fail").collect();
    assert!(failed.is_empty(), "{items:?}");
    let requests = daemon.requests();
    assert!(
        requests.iter().all(|r| r.starts_with("GET ")),
        "only reads: {requests:?}"
    );
    // A child missing from cpuacct cannot be measured: a failure, naming the file.
    std::fs::remove_dir_all(tree.root.join("cpuacct/fs/user-d.1")).unwrap();
    let items = run::check(&config, "n1", Some("token".into()));
    let counter = items
        .iter()
        .find(|i| i.what == "counter cpuacct.usage")
        .unwrap();
    assert_eq!(counter.status, "fail", "{items:?}");
    assert!(counter.detail.contains("user-d.1"), "{counter:?}");
    // A token bound to another node reads priorities but may not act here: a failure.
    daemon.set(|s| s.bound_to = Some("node-17".into()));
    let items = run::check(&config, "n1", Some("token".into()));
    let token = items.iter().find(|i| i.what == "token").unwrap();
    assert_eq!(token.status, "fail", "{items:?}");
    assert!(
        token.detail.contains("403") && token.detail.contains("node-17"),
        "{token:?}"
    );
}

/// A daemon older than the agent refuses reports that carry `written`: the agent sends the
/// same reports without it, and goes on without it, so no usage is lost.
#[test]
fn a_daemon_older_than_the_agent_still_gets_every_report() {
    let (_dir, tree) = tree();
    let daemon = FakeDaemon::start();
    daemon.set(|s| {
        s.old = true;
        s.priorities = vec![("n1:user-d.1".into(), 10)];
    });
    let mut a = agent(&tree, &daemon, "");
    let t0 = Instant::now();
    for i in 0..4 {
        a.cycle(t0 + Duration::from_secs(i));
    }
    let reports = daemon.reports();
    assert_eq!(reports.len(), 3, "one a cycle after the first: {reports:?}");
    assert!(
        reports.iter().all(|r| r.get("written").is_none()),
        "{reports:?}"
    );
    let seqs: Vec<u64> = reports.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}
