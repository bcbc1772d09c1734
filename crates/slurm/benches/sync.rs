//! A `sync` at the scale: 10,000 pending jobs of 1,000 users in 20 accounts, 20,000
//! jobs of accounting history, 100 nodes — every output built from the ones recorded on the
//! live Slurm 22.05 (`tests/data/`), records copied with new ids, users and times. Measured:
//! the whole pass (reading and parsing every output, rebuilding the history through the
//! policy's ranker, ranking and planning) as `fairshare slurm sync` makes it on start, and a
//! later pass that carries the history on; the Slurm calls are counted and printed. The budget
//! is 2 s of fairshare's own time.

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_core::model::Time;
use fairshare_slurm::adapter::{Adapter, Slurm};
use fairshare_slurm::command::CommandError;
use fairshare_slurm::config::SlurmConfig;
use serde_json::Value;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;

const USERS: usize = 1_000;
const ACCOUNTS: usize = 20;
const PENDING: usize = 10_000;
const HISTORY: usize = 20_000;
const NODES: usize = 100;
/// The moment of the pass: 2026-11-24T12:00:00Z.
const NOW_S: u64 = 1_795_953_600;

/// A recorded output.
fn recorded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// A Slurm answering every command from outputs built in advance, counting the calls.
struct Scaled {
    outputs: BTreeMap<&'static str, String>,
    calls: Cell<u32>,
}

impl Slurm for &Scaled {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        self.calls.set(self.calls.get() + 1);
        Ok(self.outputs[command[0]].clone())
    }
}

/// `user`'s account.
fn account(user: usize) -> usize {
    user % ACCOUNTS
}

/// The outputs at scale, each from its recorded original.
fn scaled() -> Scaled {
    let mut outputs = BTreeMap::new();
    let mut tree = String::from("fairshare|root|||1|\n");
    for a in 0..ACCOUNTS {
        tree += &format!("fairshare|a{a:02}|||{}|root\n", 1 + a % 4);
    }
    for u in 0..USERS {
        tree += &format!("fairshare|a{:02}|u{u:04}||{}|\n", account(u), 1 + u % 3);
    }
    outputs.insert("sacctmgr", tree);
    let mut sshare = String::from("root|||0.000000|0|1.000000||\n");
    for u in 0..USERS {
        let fairshare = (USERS - u) as f64 / USERS as f64;
        sshare += &format!(
            "  a{:02}|u{u:04}|1|0.5|100|0.1|1.0|{fairshare:.6}\n",
            account(u)
        );
    }
    outputs.insert("sshare", sshare);
    outputs.insert(
        "sinfo",
        copies(&recorded("sinfo.json"), "nodes", NODES, |i, node| {
            node["name"] = format!("cn{i:03}").into();
        }),
    );
    outputs.insert(
        "squeue",
        copies(&recorded("squeue.json"), "jobs", PENDING, |i, job| {
            let user = (i * 7) % USERS;
            job["job_id"] = (100_000 + i as u64).into();
            job["user_name"] = format!("u{user:04}").into();
            job["account"] = format!("a{:02}", account(user)).into();
            job["job_state"] = serde_json::json!(["PENDING"]);
            job["submit_time"] = (NOW_S - 3_600 + i as u64 % 3_600).into();
        }),
    );
    let sprio: String = (0..PENDING)
        .map(|i| format!("{}|{}\n", 100_000 + i, i % 5))
        .collect();
    outputs.insert("sprio", sprio);
    outputs.insert("sacct", history());
    outputs.insert(
        "scontrol",
        "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\n".into(),
    );
    Scaled {
        outputs,
        calls: Cell::new(0),
    }
}

/// `count` copies of the first record of `list` in the recorded JSON `text`, each changed by
/// `change`.
fn copies(text: &str, list: &str, count: usize, change: impl Fn(usize, &mut Value)) -> String {
    let mut doc: Value = serde_json::from_str(text).unwrap();
    let template = doc[list][0].clone();
    let records: Vec<Value> = (0..count)
        .map(|i| {
            let mut record = template.clone();
            change(i, &mut record);
            record
        })
        .collect();
    doc[list] = Value::Array(records);
    doc.to_string()
}

/// 20,000 ended jobs over the last week, from the recorded sacct line of a completed job.
fn history() -> String {
    let recorded = recorded("sacct.txt");
    let template: Vec<&str> = recorded
        .lines()
        .find(|l| l.ends_with("|COMPLETED"))
        .unwrap()
        .split('|')
        .collect();
    let date = |s: u64| {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(s);
        let text = humantime::format_rfc3339_seconds(t).to_string();
        text.trim_end_matches('Z').to_string()
    };
    let week = 7 * 86_400;
    (0..HISTORY)
        .map(|i| {
            let user = (i * 13) % USERS;
            let start = NOW_S - week + (i as u64 * week) / HISTORY as u64;
            let mut line = template.clone();
            let fields = [
                (i + 1).to_string(),
                format!("u{user:04}"),
                format!("a{:02}", account(user)),
                date(start - 60),
                date(start),
                date(start + 600 + (i as u64 % 7) * 300),
                format!("billing={0},cpu={0},node=1", 1 + i % 8),
            ];
            for (at, value) in [0, 1, 2, 4, 5, 6, 7].into_iter().zip(&fields) {
                line[at] = value;
            }
            line.join("|") + "\n"
        })
        .collect()
}

fn sync(c: &mut Criterion) {
    let slurm = scaled();
    let now = Time::from_micros(NOW_S * 1_000_000);
    let config = SlurmConfig {
        policy: "fairshare:function=fair-tree".into(),
        window_s: 7.0 * 86_400.0,
        ..SlurmConfig::default()
    };
    let mut adapter = Adapter::new(&slurm, config.clone()).unwrap();
    let pass = adapter.pass(now).unwrap();
    let calls = slurm.calls.get();
    eprintln!(
        "sync at scale: {} pending jobs of {} associations ranked, {} Slurm reads; writes: {} scontrol calls for {} jobs",
        pass.plan.jobs.len(),
        pass.plan.standings.len(),
        calls,
        pass.plan.writes.len(),
        pass.plan.jobs_written()
    );
    let mut group = c.benchmark_group("slurm_sync");
    group.sample_size(10);
    for policy in ["fairshare:function=fair-tree", "sdrf"] {
        let config = SlurmConfig {
            policy: policy.into(),
            ..config.clone()
        };
        group.bench_function(format!("first pass, {policy}"), |b| {
            b.iter(|| {
                let mut adapter = Adapter::new(&slurm, config.clone()).unwrap();
                black_box(adapter.pass(now).unwrap())
            })
        });
        let mut adapter = Adapter::new(&slurm, config.clone()).unwrap();
        adapter.pass(now).unwrap();
        let mut later = now;
        group.bench_function(format!("later pass, {policy}"), |b| {
            b.iter(|| {
                later = Time(later.as_micros() + 60_000_000);
                black_box(adapter.pass(later).unwrap())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, sync);
criterion_main!(benches);
