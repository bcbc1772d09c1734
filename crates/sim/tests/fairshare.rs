//! Fairshare policies in the batch engine, worked by hand: a user whose job held most of a
//! node's memory on one processor is charged for the memory under the heterogeneous PE and
//! waits behind a light user, while CPU time charges both alike.

use fairshare_core::model::{MachineCatalogue, NodeType, Time};
use fairshare_sim::cluster::{
    run, Capacity, ClusterConfig, PolicyResult, QueueLimit, Task, Window,
};
use std::convert::Infallible;

/// A one-node job of `user` submitted at `submit` s, running `runtime` s on `cpus` processors
/// and `mem` memory.
fn job(id: u64, user: u32, submit: f64, runtime: f64, cpus: f64, mem: f64) -> Task {
    let mut task = Task::new(
        id,
        user,
        Time::from_secs_f64(submit),
        Time::from_secs_f64(runtime).as_micros(),
        vec![cpus, mem],
    );
    task.nodes = Some(1);
    task
}

/// Heavy (user 0) and light (user 1) each run one processor for 100 s, heavy with 100 of the
/// node's 120 memory; a third user then fills the node from 150 s to 250 s, while heavy
/// (200 s) and light (201 s) each queue a whole-node job.
fn replay(policy: &str) -> PolicyResult {
    replay_in_queues(policy, &[])
}

/// [`replay`] with heavy's jobs in queue 0 and the others in queue 1, of these costs.
fn replay_in_queues(policy: &str, queues: &[QueueLimit]) -> PolicyResult {
    let node = NodeType::new("node", 1, vec![12.0, 120.0]);
    let capacity = Capacity::Machines(MachineCatalogue { types: vec![node] });
    let users = vec!["heavy".into(), "light".into(), "blocker".into()];
    let resources = vec!["cpu".into(), "mem".into()];
    let mut config = ClusterConfig::new(policy.parse().unwrap(), capacity, resources, users);
    config.record_jobs = Some(Window::ALL);
    config.queues = queues.to_vec();
    let jobs = [
        job(0, 0, 0.0, 100.0, 1.0, 100.0),
        job(1, 1, 0.0, 100.0, 1.0, 1.0),
        job(2, 2, 150.0, 100.0, 12.0, 0.0),
        job(3, 0, 200.0, 10.0, 12.0, 0.0),
        job(4, 1, 201.0, 10.0, 12.0, 0.0),
    ];
    let jobs = jobs.into_iter().map(|mut job| {
        job.queue = Some(u32::from(job.user != 0));
        Ok::<_, Infallible>(job)
    });
    run(&config, jobs, |_| {}).unwrap()
}

/// When each job started, by id.
fn start(result: &PolicyResult, id: u64) -> f64 {
    let job = result.jobs.iter().find(|j| j.id == id).unwrap();
    job.start.as_secs_f64()
}

/// What each user was charged, by name.
fn charged(result: &PolicyResult, user: &str) -> f64 {
    let user = result.users.iter().find(|u| u.id == user).unwrap();
    user.charged.expect("a fairshare policy reports charges")
}

#[test]
fn cpu_time_charges_alike_and_serves_in_arrival_order() {
    let result = replay("fairshare:usage=cpu,refresh=0");
    assert_eq!(charged(&result, "heavy"), 100.0 + 120.0);
    assert_eq!(charged(&result, "light"), 100.0 + 120.0);
    assert_eq!((start(&result, 3), start(&result, 4)), (250.0, 260.0));
}

#[test]
fn the_pe_charges_the_memory_held_and_serves_the_light_user_first() {
    for function in ["fair-tree", "slurm-classic", "pbs", "metacentrum"] {
        let result = replay(&format!("fairshare:function={function},usage=pe,refresh=0"));
        // max(1/12, 100/120) × 12 = 10 processors' worth for 100 s, then 12 × 10 s.
        assert!((charged(&result, "heavy") - (1000.0 + 120.0)).abs() < 1e-9);
        assert!((charged(&result, "light") - (100.0 + 120.0)).abs() < 1e-9);
        assert_eq!(
            (start(&result, 4), start(&result, 3)),
            (250.0, 260.0),
            "{function}"
        );
    }
}

#[test]
fn other_policies_report_no_charges() {
    let result = replay("drf");
    assert!(result.users.iter().all(|u| u.charged.is_none()));
}

#[test]
fn a_queue_cost_multiplies_the_charge() {
    let cost = |cost| QueueLimit {
        cost,
        ..QueueLimit::default()
    };
    let result = replay_in_queues("fairshare:usage=pe,refresh=0", &[cost(0.05), cost(1.0)]);
    assert!((charged(&result, "heavy") - 0.05 * (1000.0 + 120.0)).abs() < 1e-9);
    assert!((charged(&result, "light") - (100.0 + 120.0)).abs() < 1e-9);
    // Heavy's cheap queue makes its 1,000 processor-seconds of PE count as 50: it goes first,
    // where without the cost it waits behind light.
    assert_eq!((start(&result, 3), start(&result, 4)), (250.0, 260.0));
}

#[test]
fn tres_weights_go_by_position_and_may_not_outnumber_the_resources() {
    let result = replay("fairshare:usage=tres:2+0.5,refresh=0");
    // Heavy: 2 × 1 + 0.5 × 100 per second for 100 s, then 2 × 12 for 10 s.
    assert_eq!(charged(&result, "heavy"), 5200.0 + 240.0);
    let node = NodeType::new("node", 1, vec![12.0, 120.0]);
    let capacity = Capacity::Machines(MachineCatalogue { types: vec![node] });
    let config = ClusterConfig::new(
        "fairshare:usage=tres:1+1+1".parse().unwrap(),
        capacity,
        vec!["cpu".into(), "mem".into()],
        vec!["heavy".into()],
    );
    let error = run(
        &config,
        std::iter::empty::<Result<Task, Infallible>>(),
        |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("TRES billing weighs 3 resources, there are 2 (cpu, mem)"),
        "{error}"
    );
}

#[test]
fn jobs_still_running_at_the_horizon_are_charged_until_then() {
    let node = NodeType::new("node", 1, vec![12.0, 120.0]);
    let capacity = Capacity::Machines(MachineCatalogue { types: vec![node] });
    let mut config = ClusterConfig::new(
        "fairshare:usage=cpu".parse().unwrap(),
        capacity,
        vec!["cpu".into(), "mem".into()],
        vec!["long".into()],
    );
    config.stop = fairshare_sim::cluster::Stop::Horizon(Time::from_secs_f64(50.0));
    let jobs = [job(0, 0, 0.0, 100.0, 4.0, 1.0)];
    let result = run(&config, jobs.into_iter().map(Ok::<_, Infallible>), |_| {}).unwrap();
    assert_eq!(charged(&result, "long"), 4.0 * 50.0);
}

/// Kueue's entry penalty counts within the pass: on 2 processors, user a's two jobs and user
/// b's one arrive together; without the penalty a's older jobs take both processors, with it
/// b's job starts second.
#[test]
fn the_entry_penalty_counts_within_a_pass() {
    let starts = |policy: &str| {
        let capacity = Capacity::Pool(vec![2.0, 100.0]);
        let users = vec!["a".into(), "b".into()];
        let resources = vec!["cpu".into(), "mem".into()];
        let mut config = ClusterConfig::new(policy.parse().unwrap(), capacity, resources, users);
        config.record_jobs = Some(Window::ALL);
        let jobs = [
            job(0, 0, 0.0, 100.0, 1.0, 1.0),
            job(1, 0, 0.0, 100.0, 1.0, 1.0),
            job(2, 1, 0.0, 100.0, 1.0, 1.0),
        ];
        let result = run(&config, jobs.into_iter().map(Ok::<_, Infallible>), |_| {}).unwrap();
        [0, 1, 2].map(|id| start(&result, id))
    };
    assert_eq!(starts("fairshare:function=metacentrum"), [0.0, 0.0, 100.0]);
    assert_eq!(starts("kueue-afs"), [0.0, 100.0, 0.0]);
}
