//! A `sync` at a large site's scale: 100,000 pending jobs of 10,000 users in a four-level tree
//! (10 divisions of 10 groups of 10 teams of 10 users, some users with `parent` or 0 shares),
//! 50,000 jobs of accounting history over a week, 1,000 nodes — every output built from the
//! ones recorded on the live Slurm 22.05 (`tests/data/`), records copied with new ids, users
//! and times. A fake Slurm answers the reads, takes the writes and shows them in `sprio`.
//!
//! Measured: the whole pass (reading and parsing every output, rebuilding the history through
//! the policy's ranker, playing the order of starts out over every pending job, planning) as
//! `fairshare slurm sync` makes it on start, and a later pass that carries the history on. The
//! budget is 2 s of fairshare's own time. Printed: the `scontrol` calls of a first sync, of the
//! next one (nothing changed), and of one after 1 % of the jobs started and as many new ones
//! were submitted.

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_core::model::Time;
use fairshare_reconcile::controller::Controller;
use fairshare_slurm::adapter::{adapter as slurm_adapter, SlurmIo};
use fairshare_slurm::command::CommandError;
use fairshare_slurm::command::Commands;
use fairshare_slurm::config::SlurmConfig;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;

const USERS: usize = 10_000;
/// Users per team, teams per group, groups per division, divisions.
const FAN_OUT: usize = 10;
const PENDING: usize = 100_000;
const HISTORY: usize = 50_000;
const NODES: usize = 1_000;
/// The first pending job's id.
const FIRST_ID: u64 = 1_000_000;
/// The moment of the pass: 2026-11-24T12:00:00Z.
const NOW_S: u64 = 1_795_953_600;

/// A recorded output.
fn recorded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// A Slurm answering every read from outputs built in advance, counting the calls; `sprio`
/// shows the site factors its `scontrol update` calls set.
struct Scaled {
    outputs: RefCell<BTreeMap<&'static str, String>>,
    /// The pending jobs' site factors.
    held: RefCell<BTreeMap<u64, i64>>,
    calls: Cell<u32>,
    updates: Cell<u32>,
}

impl Commands for &Scaled {
    fn run(&self, command: &[&str]) -> Result<String, CommandError> {
        self.calls.set(self.calls.get() + 1);
        let key = match command {
            ["scontrol", "update", jobs, factor] => return Ok(self.update(jobs, factor)),
            ["sprio", ..] => return Ok(self.sprio()),
            ["scontrol", "--oneliner", "show", "partition"] => "partitions",
            ["sacctmgr", "show", "qos", ..] => "qos",
            [program, ..] => program,
            [] => unreachable!("a command names its program"),
        };
        Ok(self.outputs.borrow()[key].clone())
    }
}

impl Scaled {
    /// `scontrol update JobId=a,b,c SiteFactor=N`.
    fn update(&self, jobs: &str, factor: &str) -> String {
        self.updates.set(self.updates.get() + 1);
        let factor: i64 = factor.strip_prefix("SiteFactor=").unwrap().parse().unwrap();
        let mut held = self.held.borrow_mut();
        for id in jobs.strip_prefix("JobId=").unwrap().split(',') {
            held.insert(id.parse().unwrap(), factor);
        }
        String::new()
    }

    /// `sprio --noheader --format %i|%S`.
    fn sprio(&self) -> String {
        (self.held.borrow().iter())
            .map(|(id, factor)| format!("{id}|{factor}\n"))
            .collect()
    }

    /// The queue with the jobs `ids` (offsets from [`FIRST_ID`]) pending, `sprio` listing them
    /// at what they held (0 for new ones).
    fn queue(&self, ids: std::ops::Range<usize>) {
        let held = self.held.take();
        let kept = ids.clone().map(|i| {
            let id = FIRST_ID + i as u64;
            (id, held.get(&id).copied().unwrap_or(0))
        });
        *self.held.borrow_mut() = kept.collect();
        self.outputs.borrow_mut().insert("squeue", squeue(ids));
    }
}

/// `user`'s team account: `d{division}g{group}t{team}`.
fn team(user: usize) -> String {
    let team = user / FAN_OUT;
    let (t, g, d) = (
        team % FAN_OUT,
        team / FAN_OUT % FAN_OUT,
        team / FAN_OUT.pow(2),
    );
    format!("d{d}g{g}t{t}")
}

/// The association tree of `sacctmgr`: root, divisions, groups, teams, users; one user in 97
/// with `parent` shares, one in 50 with 0.
fn tree() -> String {
    let mut tree = String::from("fairshare|root|||1|\nfairshare|root|root||1|\n");
    for d in 0..FAN_OUT {
        tree += &format!("fairshare|d{d}|||{}|root\n", 1 + d % 4);
        for g in 0..FAN_OUT {
            tree += &format!("fairshare|d{d}g{g}|||{}|d{d}\n", 1 + g % 3);
            for t in 0..FAN_OUT {
                tree += &format!("fairshare|d{d}g{g}t{t}|||{}|d{d}g{g}\n", 1 + t % 2);
            }
        }
    }
    for u in 0..USERS {
        let share = match (u % 97, u % 50) {
            (0, _) => "parent".to_string(),
            (_, 0) => "0".to_string(),
            _ => (1 + u % 3).to_string(),
        };
        tree += &format!("fairshare|{}|u{u:05}||{share}|\n", team(u));
    }
    tree
}

/// The outputs at scale, each from its recorded original.
fn scaled() -> Scaled {
    let mut outputs = BTreeMap::new();
    outputs.insert("sacctmgr", tree());
    outputs.insert(
        "sinfo",
        copies(&recorded("sinfo.json"), "nodes", NODES, |i, node| {
            node["name"] = format!("cn{i:04}").into();
        }),
    );
    outputs.insert("sacct", history());
    let mut sshare = String::from("root|||0.000000|0|1.000000||\n");
    for u in 0..USERS {
        let fairshare = (USERS - u) as f64 / USERS as f64;
        sshare += &format!("    {}|u{u:05}|1|0.5|100|0.1|1.0|{fairshare:.6}\n", team(u));
    }
    outputs.insert("sshare", sshare);
    outputs.insert(
        "scontrol",
        "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\n".into(),
    );
    outputs.insert(
        "partitions",
        "PartitionName=main TRESBillingWeights=CPU=1.0,Mem=0.25G\n".into(),
    );
    outputs.insert("qos", "normal|1.000000\n".into());
    let scaled = Scaled {
        outputs: RefCell::new(outputs),
        held: RefCell::new(BTreeMap::new()),
        calls: Cell::new(0),
        updates: Cell::new(0),
    };
    scaled.queue(0..PENDING);
    scaled
}

/// `squeue --json` with the pending jobs `ids` (offsets from [`FIRST_ID`]), 10 per user.
fn squeue(ids: std::ops::Range<usize>) -> String {
    let first = ids.start;
    copies(&recorded("squeue.json"), "jobs", ids.len(), |k, job| {
        let i = first + k;
        let user = (i * 7) % USERS;
        job["job_id"] = (FIRST_ID + i as u64).into();
        job["user_name"] = format!("u{user:05}").into();
        job["account"] = team(user).into();
        job["job_state"] = serde_json::json!(["PENDING"]);
        job["submit_time"] = (NOW_S - 3_600 + i as u64 % 3_600).into();
    })
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

/// 50,000 ended jobs over the last week, from the recorded sacct line of a completed job.
fn history() -> String {
    let recorded = recorded("sacct.txt");
    let template: Vec<&str> = recorded
        .lines()
        .find(|l| l.contains("|COMPLETED|"))
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
                format!("u{user:05}"),
                team(user),
                date(start - 60),
                date(start),
                date(start + 600 + (i as u64 % 7) * 300),
                format!(
                    "billing={0},cpu={0},mem={1}M,node=1",
                    1 + i % 8,
                    1000 * (1 + i % 4)
                ),
            ];
            for (at, value) in [0, 1, 2, 4, 5, 6, 7].into_iter().zip(&fields) {
                line[at] = value;
            }
            line.join("|") + "\n"
        })
        .collect()
}

/// The `scontrol update` calls of a first sync, of the next one with nothing changed, and of
/// one after the first 1 % of the jobs started and as many new ones were submitted, printed.
fn calls(policy: &str, config: &SlurmConfig, now: Time) {
    let slurm = scaled();
    let later = |s: u64| Time(now.as_micros() + s * 1_000_000);
    // One adapter carries its history from pass to pass, as `watch` does.
    let sync = |slurm: &Scaled, adapter: &mut Controller<SlurmIo<&Scaled>>, at: Time| {
        let started = std::time::Instant::now();
        let pass = adapter.pass(at).unwrap();
        let took = started.elapsed();
        slurm.updates.set(0);
        let applied = adapter.apply(&pass.plan);
        assert!(applied.complete(), "{applied:?}");
        (pass, slurm.updates.get(), took)
    };
    let mut adapter = slurm_adapter(&slurm, &config.clone()).unwrap();
    let (first, first_calls, took) = sync(&slurm, &mut adapter, now);
    let (_, steady_calls, _) = sync(&slurm, &mut adapter, later(60));
    let churn = PENDING / 100;
    slurm.queue(churn..PENDING + churn);
    let (_, churn_calls, _) = sync(&slurm, &mut adapter, later(120));
    eprintln!(
        "{policy}: {} pending jobs of {} associations in {} runs; first pass {took:.2?}; scontrol calls: first sync {first_calls} ({} jobs written), next sync {steady_calls}, after 1 % started and 1 % new {churn_calls}",
        first.plan.jobs.len(),
        first.plan.standings.len(),
        first.plan.runs,
        first.plan.jobs_written(),
    );
}

fn sync(c: &mut Criterion) {
    let now = Time::from_micros(NOW_S * 1_000_000);
    let mut config = SlurmConfig::default();
    config.shared.window_s = 7.0 * 86_400.0;
    let mut group = c.benchmark_group("slurm_sync");
    group.sample_size(10);
    for policy in ["fairshare:function=fair-tree", "sdrf"] {
        let mut config = config.clone();
        config.shared.policy = policy.into();
        calls(policy, &config, now);
        let slurm = scaled();
        group.bench_function(format!("first pass, {policy}"), |b| {
            b.iter(|| {
                let mut adapter = slurm_adapter(&slurm, &config.clone()).unwrap();
                black_box(adapter.pass(now).unwrap())
            })
        });
        let mut adapter = slurm_adapter(&slurm, &config.clone()).unwrap();
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
