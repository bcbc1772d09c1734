//! End to end on random small traces: whatever an SWF log holds (missing values included), a
//! replay read through the trace reader and run through the cluster engine reports only finite
//! numbers, no negative wait, no utilisation above 100 %, and counts that reconcile.

use fairshare_lab::Load;
use fairshare_sim::cluster::{
    run, Capacity, ClusterConfig, Fill, FirstFit, PolicyResult, Stop, Task,
};
use fairshare_trace::{open, Format, ReadOptions};
use proptest::prelude::*;
use std::sync::Arc;

/// One SWF job line: submit gap, wait, runtime, processors, memory per processor and user, any
/// of which may be `-1` (missing).
#[derive(Debug, Clone)]
struct Job {
    gap: i64,
    wait: i64,
    runtime: i64,
    cpus: i64,
    memory: i64,
    user: u8,
}

fn maybe_missing(range: std::ops::Range<i64>) -> impl Strategy<Value = i64> {
    prop_oneof![9 => range, 1 => Just(-1)]
}

fn job() -> impl Strategy<Value = Job> {
    (
        0..50i64,
        maybe_missing(0..100),
        maybe_missing(0..500),
        maybe_missing(0..9),
        maybe_missing(0..4000),
        0..4u8,
    )
        .prop_map(|(gap, wait, runtime, cpus, memory, user)| Job {
            gap,
            wait,
            runtime,
            cpus,
            memory,
            user,
        })
}

/// The log of `jobs`, submit times rising by each job's gap.
fn log(jobs: &[Job]) -> String {
    let mut submit = 0;
    let mut text = String::from("; a random log\n");
    for (i, j) in jobs.iter().enumerate() {
        submit += j.gap;
        let (id, wait, run, cpus, mem, user) = (i + 1, j.wait, j.runtime, j.cpus, j.memory, j.user);
        text += &format!(
            "{id} {submit} {wait} {run} {cpus} -1 {mem} {cpus} -1 -1 1 {user} 1 -1 1 -1 -1 -1\n"
        );
    }
    text
}

/// Reads the log, replays it under `policy` on a pool of `fraction` × R, and returns the
/// result with the number of tasks read.
fn replay(text: &str, policy: &str, fraction: f64) -> Option<(PolicyResult, u64)> {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("log.swf");
    std::fs::write(&path, text).unwrap();
    let mut source = open(&[path], Some(Format::SWF), &ReadOptions::default()).unwrap();
    let tasks: Vec<_> = source.by_ref().collect::<Result<_, _>>().unwrap();
    assert!(source.stats().reconciles(), "{:?}", source.stats());
    let mut load = Load::new(source.resources().len());
    for t in &tasks {
        load.add(t.submit, t.start.unwrap_or(t.submit), t.runtime, &t.demand);
    }
    let keep = load.requested();
    let pool: Vec<f64> = keep
        .iter()
        .map(|&r| load.mean_demand()[r] * fraction)
        .collect();
    if tasks.is_empty() || pool.iter().any(|c| *c <= 0.0) {
        return None;
    }
    let config = ClusterConfig {
        policy: policy.parse().unwrap(),
        capacity: Capacity::Pool(pool),
        resources: keep
            .iter()
            .map(|&r| source.resources()[r].clone())
            .collect(),
        users: source.users().to_vec(),
        scheduler: Arc::new(Fill::default()),
        placement: Arc::new(FirstFit),
        stop: Stop::Drain,
        origin: load.first_submit().unwrap(),
        sample_every: 10.0,
        top_users: 3,
        record_jobs: None,
        queues: Vec::new(),
        shares: None,
        accounts: None,
        overrun: fairshare_sim::cluster::Overrun::Kill,
        partitions: Vec::new(),
        qos_factors: Vec::new(),
        assoc_factors: Vec::new(),
        opens: None,
        limits: Vec::new(),
        outages: Vec::new(),
    };
    let arrivals = tasks.iter().map(|t| {
        Ok::<_, std::convert::Infallible>(Task {
            demand: keep.iter().map(|&r| t.demand[r]).collect(),
            ..t.clone()
        })
    });
    let result = run(&config, arrivals, |_| {}).unwrap();
    Some((result, tasks.len() as u64))
}

/// What every result must satisfy.
fn assert_sound(r: &PolicyResult, read: u64) {
    assert_eq!(r.tasks_submitted, read, "every task read is submitted");
    assert!(r.tasks_completed <= r.tasks_started && r.tasks_started <= r.tasks_submitted);
    assert_eq!(
        r.tasks_submitted,
        r.tasks_completed + r.tasks_unfinished + r.tasks_never_fit
    );
    for (name, v) in [
        ("mean_wait_s", r.mean_wait_s),
        ("p95_wait_s", r.p95_wait_s),
        ("user_mean_wait_s", r.user_mean_wait_s),
        ("mean_slowdown", r.mean_slowdown),
        ("simulated_s", r.simulated_s),
    ] {
        assert!(v.is_finite() && v >= 0.0, "{name} = {v}");
    }
    assert!(
        r.jain_dominant_share.is_finite() && (0.0..=1.0 + 1e-9).contains(&r.jain_dominant_share)
    );
    for (resource, u) in &r.utilization {
        assert!((0.0..=1.0 + 1e-9).contains(u), "{resource}: {u}");
    }
    for user in &r.users {
        assert!(
            user.mean_wait_s.is_finite() && user.mean_wait_s >= 0.0,
            "{user:?}"
        );
        assert!(
            (0.0..=1.0 + 1e-9).contains(&user.mean_dominant_share),
            "{user:?}"
        );
    }
    for series in r
        .timeline
        .utilization
        .iter()
        .chain(r.timeline.dominant_share.iter().map(|s| &s.values))
    {
        assert!(
            series.iter().all(|v| (0.0..=1.0 + 1e-9).contains(v)),
            "{series:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn replays_of_random_logs_report_sound_numbers(
        jobs in prop::collection::vec(job(), 1..40),
        fraction in 0.3f64..1.5,
    ) {
        let text = log(&jobs);
        for policy in ["fifo", "drf", "sdrf:delta=0.99"] {
            if let Some((result, read)) = replay(&text, policy, fraction) {
                assert_sound(&result, read);
            }
        }
    }
}

#[test]
fn a_log_with_missing_values_replays_under_every_policy() {
    let jobs: Vec<Job> = (0..30)
        .map(|i| Job {
            gap: i % 7,
            wait: if i % 5 == 0 { -1 } else { i },
            runtime: if i == 3 { -1 } else { 10 + i * 13 % 200 },
            cpus: 1 + i % 8,
            memory: if i == 4 { -1 } else { 100 + i * 37 % 900 },
            user: (i % 4) as u8,
        })
        .collect();
    for policy in ["fifo", "drf", "sdrf:delta=0.99"] {
        let (result, read) = replay(&log(&jobs), policy, 0.5).expect("a replay");
        assert_eq!(read, 28, "the jobs without runtime or memory are skipped");
        assert_sound(&result, read);
        assert_eq!(result.tasks_completed, 28, "a drain finishes every task");
    }
}
