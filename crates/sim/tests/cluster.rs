//! The cluster engine on tiny workloads whose schedules are worked out by hand.

use fairshare_core::model::{MachineCatalogue, NodeType, Time};
use fairshare_sim::cluster::{
    run, Capacity, ClusterConfig, Fill, FirstFit, NodeLoad, Placement, PolicyResult, Stop, Task,
};
use std::convert::Infallible;
use std::sync::Arc;

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

fn task(user: u32, submit: f64, runtime: f64, demand: f64) -> Task {
    Task::new(
        0,
        user,
        secs(submit),
        secs(runtime).as_micros(),
        vec![demand],
    )
}

fn config(policy: &str, capacity: f64, stop: Stop) -> ClusterConfig {
    ClusterConfig {
        policy: policy.parse().unwrap(),
        capacity: Capacity::Pool(vec![capacity]),
        resources: vec!["cpu".into()],
        users: vec!["A".into(), "B".into()],
        scheduler: Arc::new(Fill::default()),
        placement: Arc::new(FirstFit),
        stop,
        origin: Time::ZERO,
        sample_every: 1.0,
        top_users: 2,
        record_jobs: None,
        queues: Vec::new(),
        overrun: fairshare_sim::cluster::Overrun::Kill,
        partitions: Vec::new(),
        qos_factors: Vec::new(),
        assoc_factors: Vec::new(),
        opens: None,
        limits: Vec::new(),
        outages: Vec::new(),
        shares: None,
        accounts: None,
    }
}

fn replay(policy: &str, capacity: f64, stop: Stop, tasks: &[Task]) -> PolicyResult {
    let arrivals = tasks.iter().cloned().map(Ok::<_, Infallible>);
    run(&config(policy, capacity, stop), arrivals, |_| {}).unwrap()
}

fn waits(result: &PolicyResult) -> Vec<f64> {
    result.users.iter().map(|u| u.mean_wait_s).collect()
}

#[test]
fn fifo_and_drf_differ() {
    // Capacity 4; A queues four 1-CPU tasks of 10 s at t = 0, B one, after A's.
    let tasks: Vec<Task> = (0..4)
        .map(|_| task(0, 0.0, 10.0, 1.0))
        .chain([task(1, 0.0, 10.0, 1.0)])
        .collect();
    // FIFO runs A's four first; B waits 10 s.
    let fifo = replay("fifo", 4.0, Stop::Drain, &tasks);
    assert_eq!(waits(&fifo), vec![0.0, 10.0]);
    // DRF alternates: A, B, A, A; A's fourth task waits 10 s (mean 2.5 s), B none.
    let drf = replay("drf", 4.0, Stop::Drain, &tasks);
    assert_eq!(waits(&drf), vec![2.5, 0.0]);
    assert_eq!(fifo.mean_wait_s, 2.0);
    assert_eq!(drf.mean_wait_s, 2.0);
    assert_eq!(drf.tasks_completed, 5);
    assert_eq!(drf.simulated_s, 20.0);
}

/// A hogs the whole cluster for 100 s, then A and B both queue four half-unit tasks.
fn hog_then_compete() -> Vec<Task> {
    let mut tasks = vec![task(0, 0.0, 100.0, 1.0), task(0, 0.0, 100.0, 1.0)];
    tasks.extend((0..4).map(|_| task(0, 100.0, 10.0, 0.5)));
    tasks.extend((0..4).map(|_| task(1, 100.0, 10.0, 0.5)));
    tasks
}

#[test]
fn sdrf_favours_the_user_that_was_idle() {
    // Capacity 2, n = 2 (entitlement 1 each). At t = 100 four tasks fit.
    // DRF alternates A, B, A, B: each starts two at once and two at t = 110.
    let drf = replay("drf", 2.0, Stop::Drain, &hog_then_compete());
    // SDRF (δ = 0.9, τ ≈ 9.5 s): A's commitment is ≈ 0.5 after 100 s of over-use, so B gets
    // three of the four slots (levels 0 → 0.25 → 0.5, then A at ≈0.5, then B at 0.5 < 0.75).
    let sdrf = replay("sdrf:delta=0.9", 2.0, Stop::Drain, &hog_then_compete());
    let started_at_100 =
        |r: &PolicyResult| r.users.iter().map(|u| u.mean_wait_s).collect::<Vec<_>>();
    // B's mean wait: DRF (0 + 0 + 10 + 10) / 4 = 5 s; SDRF (0 + 0 + 0 + 10) / 4 = 2.5 s.
    assert_eq!(started_at_100(&drf)[1], 5.0);
    assert_eq!(started_at_100(&sdrf)[1], 2.5);
    // A pays: its 6 tasks wait (0, 0, 0, 10, 10, 10) / 6 = 5 s under SDRF, (0,0,0,0,10,10)/6 under DRF.
    assert_eq!(started_at_100(&sdrf)[0], 5.0);
    assert!((started_at_100(&drf)[0] - 20.0 / 6.0).abs() < 1e-12);
    assert!(sdrf.livetree.is_some() && drf.livetree.is_none());
}

#[test]
fn horizon_counts_reconcile() {
    // Stop at 105 s: A's two long tasks and the four tasks started at 100 have not finished.
    let r = replay(
        "sdrf:delta=0.9",
        2.0,
        Stop::Horizon(secs(105.0)),
        &hog_then_compete(),
    );
    assert_eq!(r.tasks_submitted, 10);
    assert_eq!(r.tasks_completed, 2);
    assert_eq!(
        r.tasks_submitted,
        r.tasks_completed + r.tasks_unfinished + r.tasks_never_fit
    );
    assert_eq!(r.tasks_started, 6);
    // Still waiting at 105 s: four tasks, each counting 5 s of wait so far.
    assert!(
        (r.mean_wait_s - 20.0 / 10.0).abs() < 1e-12,
        "{}",
        r.mean_wait_s
    );
    let early = replay("drf", 2.0, Stop::Horizon(secs(50.0)), &hog_then_compete());
    assert_eq!(early.tasks_beyond_horizon, 8);
    assert_eq!(early.tasks_submitted, 2);
}

#[test]
fn oversized_tasks_never_run_and_do_not_block() {
    // User 0's only task needs 3 of 2 CPUs; user 1's two 2-CPU tasks run one after the other.
    let tasks = [
        task(0, 0.0, 1.0, 3.0),
        task(1, 0.0, 1.0, 2.0),
        task(1, 0.0, 1.0, 2.0),
    ];
    let r = replay("drf", 2.0, Stop::Drain, &tasks);
    assert_eq!(r.tasks_never_fit, 1);
    assert_eq!(r.users[0].tasks_never_fit, 1);
    assert_eq!(r.tasks_completed, 2);
    assert_eq!(
        r.tasks_unfinished, 0,
        "a task that can never fit is not unfinished"
    );
    assert_eq!(
        r.tasks_submitted,
        r.tasks_completed + r.tasks_unfinished + r.tasks_never_fit
    );
    assert_eq!(r.mean_wait_s, 0.5, "waits over the two tasks that fit");
    assert_eq!(r.users[1].mean_wait_s, 0.5);
    assert_eq!(
        r.user_mean_wait_s, 0.5,
        "a user none of whose tasks can fit has no wait to average in"
    );
}

#[test]
fn utilisation_is_time_weighted() {
    // One unit busy for 10 s out of 20 s on capacity 2: 25 %.
    let r = replay(
        "drf",
        2.0,
        Stop::Horizon(secs(20.0)),
        &[task(0, 0.0, 10.0, 1.0)],
    );
    assert!(
        (r.utilization[0] - 0.25).abs() < 1e-12,
        "{:?}",
        r.utilization
    );
    assert_eq!(r.timeline.times_s.len(), 21);
    assert_eq!(r.timeline.utilization[0][5], 0.5);
    assert_eq!(r.timeline.utilization[0][15], 0.0);
}

#[test]
fn same_input_same_output() {
    let a = replay("sdrf:delta=0.99", 2.0, Stop::Drain, &hog_then_compete());
    let b = replay("sdrf:delta=0.99", 2.0, Stop::Drain, &hog_then_compete());
    let json = |r: PolicyResult| serde_json::to_string(&r).unwrap();
    assert_eq!(json(a), json(b));
}

#[test]
fn arrivals_out_of_order_are_refused() {
    let tasks = [task(0, 5.0, 1.0, 1.0), task(1, 1.0, 1.0, 1.0)];
    let arrivals = tasks.iter().cloned().map(Ok::<_, Infallible>);
    assert!(run(&config("drf", 2.0, Stop::Drain), arrivals, |_| {}).is_err());
}

/// The last node with room: a placement written outside the engine.
#[derive(Debug)]
struct LastFit;

impl Placement for LastFit {
    fn select_node(&self, demand: &[f64], nodes: &[NodeLoad]) -> Option<usize> {
        nodes.iter().rposition(|n| n.has_room(demand))
    }
}

#[test]
fn placement_is_pluggable_and_node_speed_shortens_runtimes() {
    // Two one-CPU nodes, the second twice as fast; one 10-s task at t = 0, run for 7 s.
    let mut fast = NodeType::new("fast", 1, vec![1.0]);
    fast.speed = 2.0;
    let catalogue = MachineCatalogue::new(vec![NodeType::new("slow", 1, vec![1.0]), fast]);
    let mut config = ClusterConfig::new(
        "fifo".parse().unwrap(),
        Capacity::Machines(catalogue),
        vec!["cpu".into()],
        vec!["A".into()],
    );
    config.stop = Stop::Horizon(secs(7.0));
    let tasks = [Ok::<_, Infallible>(task(0, 0.0, 10.0, 1.0))];
    let first_fit = run(&config, tasks.clone().into_iter(), |_| {}).unwrap();
    assert_eq!(
        first_fit.tasks_completed, 0,
        "on the slow node it runs 10 s"
    );
    config.placement = Arc::new(LastFit);
    let last_fit = run(&config, tasks.into_iter(), |_| {}).unwrap();
    assert_eq!(last_fit.tasks_completed, 1, "on the fast node it runs 5 s");
}
