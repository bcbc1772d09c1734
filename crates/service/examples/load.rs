//! Sustained usage reports against a real daemon on loopback: C concurrent clients (default 16),
//! each a node reporting S samples (default 100) per report as fast as it is answered, for a
//! fixed time. Prints samples per second and the latency percentiles — the service benchmark
//! of docs/benchmarks.md.
//!
//! `cargo run --release -p fairshare-service --example load -- [--database URL] [--seconds N]
//! [--clients C] [--samples S] [--interval SECONDS] [--p99-target-ms MS]`; the default database
//! is a fresh SQLite file, the default cycle interval 10 s (pass a short one, such as 2, so that
//! several cycles fall inside the run). With `--p99-target-ms` it fails (exit status 1) when the
//! 99th percentile is above the target.

use fairshare_service::config::RateLimit;
use fairshare_service::ServiceConfig;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Options {
    database: Option<String>,
    seconds: f64,
    clients: usize,
    samples: usize,
    interval: f64,
    p99_target_ms: Option<f64>,
}

/// How to call it, for `--help` and mistakes.
const USAGE: &str = "usage: load [--database URL] [--seconds N] [--clients C] [--samples S] [--interval SECONDS] [--p99-target-ms MS]";

/// The options, or what is wrong with them.
fn options() -> Result<Options, String> {
    let mut o = Options {
        database: None,
        seconds: 20.0,
        clients: 16,
        samples: 100,
        interval: 10.0,
        p99_target_ms: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let (key, value) = (pair[0].as_str(), pair.get(1));
        let value = value.ok_or_else(|| format!("{key} needs a value"))?;
        let number = |what: &str| {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| format!("{key}: expected {what} > 0, found {value:?}"))
        };
        match key {
            "--database" => o.database = Some(value.clone()),
            "--seconds" => o.seconds = number("seconds")?,
            "--clients" => o.clients = number("a count")? as usize,
            "--samples" => o.samples = number("a count")? as usize,
            "--interval" => o.interval = number("seconds")?,
            "--p99-target-ms" => o.p99_target_ms = Some(number("milliseconds")?),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

fn put(base: &str, path: &str, body: Value) {
    let answer = ureq::put(&format!("{base}{path}")).send_json(body);
    assert!(answer.is_ok(), "PUT {path}: {answer:?}");
}

/// Registers one node per client with `samples` workloads on it, owned by 100 users.
fn register(base: &str, o: &Options) {
    for u in 0..100 {
        put(base, &format!("/v1/users/u{u}"), json!({}));
    }
    for c in 0..o.clients {
        put(
            base,
            &format!("/v1/nodes/n{c}"),
            json!({"supply": {"cpu": 64, "mem": 274877906944u64, "disk": 1e9, "net": 1e9}}),
        );
        for w in 0..o.samples {
            put(
                base,
                &format!("/v1/workloads/n{c}-w{w}"),
                json!({"owner": format!("u{}", (c * o.samples + w) % 100), "node": format!("n{c}"),
                       "virtual": {"cpu": 2, "mem": 4294967296u64}}),
            );
        }
    }
}

/// One client: reports until `until`; the latency of each report.
fn client(base: String, c: usize, samples: usize, until: Instant) -> Vec<Duration> {
    let agent = ureq::AgentBuilder::new().build();
    let mut latencies = Vec::new();
    let mut seq = 0u64;
    while Instant::now() < until {
        seq += 1;
        let samples: Vec<Value> = (0..samples)
            .map(|w| {
                json!({"workload": format!("n{c}-w{w}"),
                "usage": {"cpu": (seq % 20) as f64, "mem": 2147483648u64, "disk": 1e6, "net": 1e5}})
            })
            .collect();
        let body =
            json!({"node": format!("n{c}"), "seq": seq, "interval_s": 10.0, "samples": samples});
        let start = Instant::now();
        let answer = agent.post(&format!("{base}/v1/usage")).send_json(body);
        latencies.push(start.elapsed());
        assert!(answer.is_ok(), "report {seq} of n{c}: {answer:?}");
    }
    latencies
}

fn main() {
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let o = options().unwrap_or_else(|e| {
        eprintln!("{e}\n{USAGE}");
        std::process::exit(2)
    });
    let dir = std::env::temp_dir().join(format!("fairshare-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut config = ServiceConfig {
        listen: "127.0.0.1:0".parse().expect("an address"),
        database: o
            .database
            .clone()
            .unwrap_or_else(|| format!("sqlite:{}", dir.join("load.db").display())),
        rate_limit: RateLimit {
            per_second: 0,
            burst: 0,
        },
        ..ServiceConfig::default()
    };
    config.heaviness.update_interval_s = o.interval;
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let running = runtime
        .block_on(fairshare_service::start(config.clone(), false))
        .expect("the daemon starts");
    let base = format!("http://{}", running.addr);
    register(&base, &o);
    let first_cycle = cycle(&base);
    let until = Instant::now() + Duration::from_secs_f64(o.seconds);
    let started = Instant::now();
    let threads: Vec<_> = (0..o.clients)
        .map(|c| {
            let base = base.clone();
            let samples = o.samples;
            std::thread::spawn(move || client(base, c, samples, until))
        })
        .collect();
    let mut latencies: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a client"))
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    let cycles = cycle(&base) - first_cycle;
    latencies.sort();
    let at =
        |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    let reports = latencies.len();
    println!(
        "database {}\n{} clients × {} samples for {:.1} s: {reports} reports, {:.0} samples/s\n\
         cycles computed during the run: {cycles} (every {} s)\n\
         latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
        config.database.split('@').next_back().unwrap_or_default(),
        o.clients,
        o.samples,
        elapsed,
        (reports * o.samples) as f64 / elapsed,
        o.interval,
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
    let p99 = at(0.99);
    runtime.block_on(running.stop()).expect("a clean stop");
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(target) = o.p99_target_ms.filter(|&t| p99 > t) {
        eprintln!("p99 {p99:.2} ms is above the target of {target} ms");
        std::process::exit(1);
    }
}

/// The daemon's latest cycle.
fn cycle(base: &str) -> u64 {
    let health: Value = ureq::get(&format!("{base}/healthz"))
        .call()
        .expect("/healthz answers")
        .into_json()
        .expect("a JSON answer");
    health["cycle"].as_u64().unwrap_or_default()
}
