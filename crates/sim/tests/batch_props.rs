//! Properties of the batch engine on random small workloads and clusters: no node is ever
//! oversubscribed, properties and exclusivity are honoured, no job starts after its first
//! reservation where the discipline promises it, every job that can run does, and progressive
//! filling on a pool is exactly first-come-first-served as a naive simulator computes it.

use fairshare_core::alloc::tasks::Blocking;
use fairshare_core::model::{MachineCatalogue, NodeType, Time};
use fairshare_sim::cluster::{
    run, Capacity, ClusterConfig, Fit, JobRecord, PolicyResult, QueueLimit, Scheduler, Task, Window,
};
use proptest::prelude::*;
use std::convert::Infallible;

const SLACK: f64 = 1e-9;

/// A node type: count, processors, memory, and whether it has property `fast`.
fn node_type() -> impl Strategy<Value = (u32, u32, u32, bool)> {
    (
        1u32..3,
        prop::sample::select(vec![2u32, 4, 8]),
        1u32..5,
        any::<bool>(),
    )
}

/// A job: user, gap after the previous submit, runtime, walltime (none, short or long),
/// processors, nodes, exclusive, needs `fast`.
type JobSpec = (u32, u32, u32, Option<i32>, u32, Option<u32>, bool, bool);

fn job_spec() -> impl Strategy<Value = JobSpec> {
    (
        0u32..3,
        0u32..6,
        1u32..30,
        prop::option::of(-5i32..20),
        1u32..9,
        prop::option::of(1u32..3),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
    )
}

fn catalogue(types: &[(u32, u32, u32, bool)]) -> MachineCatalogue {
    let types = types
        .iter()
        .enumerate()
        .map(|(i, &(count, cpus, mem, fast))| {
            let mut node = NodeType::new(
                format!("t{i}"),
                count,
                vec![f64::from(cpus), f64::from(mem)],
            );
            if fast {
                node.properties = vec!["fast".into()];
            }
            node
        })
        .collect();
    MachineCatalogue::new(types)
}

fn tasks(specs: &[JobSpec]) -> Vec<Task> {
    let mut submit = 0;
    specs
        .iter()
        .enumerate()
        .map(
            |(id, &(user, gap, runtime, walltime, cpus, nodes, exclusive, fast))| {
                submit += gap;
                let secs = |s: u32| Time::from_secs_f64(f64::from(s)).as_micros();
                let mut task = Task::new(
                    id as u64,
                    user,
                    Time::from_secs_f64(f64::from(submit)),
                    secs(runtime),
                    vec![f64::from(cpus), f64::from(cpus) / 4.0],
                );
                task.walltime = walltime.map(|w| secs((runtime as i32 + w).max(1) as u32));
                task.nodes = nodes;
                task.exclusive = exclusive;
                if fast {
                    task.properties = vec!["fast".into()];
                }
                task
            },
        )
        .collect()
}

fn replay(
    capacity: &Capacity,
    policy: &str,
    scheduler: Scheduler,
    fit: Fit,
    tasks: &[Task],
) -> PolicyResult {
    replay_with_queues(capacity, policy, scheduler, fit, tasks, &[])
}

fn replay_with_queues(
    capacity: &Capacity,
    policy: &str,
    scheduler: Scheduler,
    fit: Fit,
    tasks: &[Task],
    queues: &[QueueLimit],
) -> PolicyResult {
    let users = (0..3).map(|u| format!("u{u}")).collect();
    let mut config = ClusterConfig::new(
        policy.parse().unwrap(),
        capacity.clone(),
        vec!["cpu".into(), "mem".into()],
        users,
    );
    config.discipline = scheduler.discipline(Blocking::HeadOfLine);
    config.placement = fit.placement();
    config.record_jobs = Some(Window::ALL);
    config.queues = queues.to_vec();
    run(
        &config,
        tasks.iter().cloned().map(Ok::<_, Infallible>),
        |_| {},
    )
    .unwrap()
}

/// Each node's capacity as a fraction of the cluster's total, and whether it is `fast`.
fn nodes(catalogue: &MachineCatalogue) -> Vec<(Vec<f64>, bool)> {
    let total: Vec<f64> = (0..2)
        .map(|r| {
            catalogue
                .types
                .iter()
                .map(|t| f64::from(t.count) * t.capacity[r])
                .sum()
        })
        .collect();
    catalogue
        .expand()
        .map(|t| {
            let ty = &catalogue.types[t];
            let share = ty.capacity.iter().zip(&total).map(|(c, t)| c / t).collect();
            (share, ty.properties.iter().any(|p| p == "fast"))
        })
        .collect()
}

/// No node holds more than its capacity at any start, and an exclusive job shares its nodes
/// with nobody.
fn check_nodes(
    jobs: &[JobRecord],
    tasks: &[Task],
    nodes: &[(Vec<f64>, bool)],
) -> Result<(), TestCaseError> {
    for job in jobs {
        let t = job.start;
        for (node, (capacity, _)) in nodes.iter().enumerate() {
            let here: Vec<&JobRecord> = jobs
                .iter()
                .filter(|j| j.start <= t && t < j.end && j.placed.iter().any(|(n, _)| *n == node))
                .collect();
            for r in 0..capacity.len() {
                let used: f64 = here
                    .iter()
                    .flat_map(|j| j.placed.iter().filter(|(n, _)| *n == node))
                    .map(|(_, a)| a[r])
                    .sum();
                prop_assert!(
                    used <= capacity[r] + SLACK,
                    "node {node} holds {used} of {} at {t}",
                    capacity[r]
                );
            }
            let exclusive = here.iter().any(|j| tasks[j.id as usize].exclusive);
            prop_assert!(
                !exclusive || here.len() == 1,
                "node {node} shared with an exclusive job at {t}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn schedules_are_sound(
        types in prop::collection::vec(node_type(), 1..3),
        specs in prop::collection::vec(job_spec(), 1..25),
        scheduler in prop::sample::select(vec![Scheduler::FILL, Scheduler::EASY, Scheduler::CONSERVATIVE]),
        fit in prop::sample::select(vec![Fit::FIRST, Fit::BEST]),
        policy in prop::sample::select(vec!["fifo", "drf"]),
    ) {
        let catalogue = catalogue(&types);
        let nodes = nodes(&catalogue);
        let tasks = tasks(&specs);
        let result = replay(&Capacity::Machines(catalogue), policy, scheduler, fit, &tasks);
        prop_assert_eq!(result.tasks_completed + result.tasks_never_fit, result.tasks_submitted, "every job that fits runs");
        prop_assert_eq!(result.jobs.len() as u64, result.tasks_completed);
        check_nodes(&result.jobs, &tasks, &nodes)?;
        let some_fast = nodes.iter().any(|n| n.1);
        for job in &result.jobs {
            let task = &tasks[job.id as usize];
            prop_assert!(job.start >= task.submit);
            if some_fast && !task.properties.is_empty() {
                prop_assert!(job.placed.iter().all(|(n, _)| nodes[*n].1), "job {} off its property", job.id);
            }
            let promised = scheduler == Scheduler::CONSERVATIVE || (scheduler == Scheduler::EASY && policy == "fifo");
            if let (true, Some(reserved)) = (promised, job.first_reserved) {
                prop_assert!(job.start <= reserved, "job {} started at {} after its reservation at {}", job.id, job.start, reserved);
            }
        }
    }

    #[test]
    fn queues_never_hold_more_than_their_limit(
        types in prop::collection::vec(node_type(), 1..3),
        specs in prop::collection::vec((job_spec(), 0u32..3), 1..25),
        limits in prop::collection::vec((prop::option::of(1u32..12), 0i32..3), 3),
        scheduler in prop::sample::select(vec![Scheduler::FILL, Scheduler::EASY, Scheduler::CONSERVATIVE]),
        policy in prop::sample::select(vec!["fifo", "drf"]),
    ) {
        let catalogue = catalogue(&types);
        let nodes = nodes(&catalogue);
        let (specs, queues): (Vec<JobSpec>, Vec<u32>) = specs.into_iter().unzip();
        let mut tasks = tasks(&specs);
        tasks.iter_mut().zip(&queues).for_each(|(t, q)| t.queue = Some(*q));
        let limits: Vec<QueueLimit> = limits
            .iter()
            .map(|&(processors, priority)| QueueLimit { processors: processors.map(f64::from), priority, cost: 1.0 })
            .collect();
        let capacity = Capacity::Machines(catalogue);
        let result = replay_with_queues(&capacity, policy, scheduler, Fit::FIRST, &tasks, &limits);
        prop_assert_eq!(result.tasks_completed + result.tasks_never_fit, result.tasks_submitted, "every job that fits runs");
        check_nodes(&result.jobs, &tasks, &nodes)?;
        for job in &result.jobs {
            let queue = tasks[job.id as usize].queue.unwrap() as usize;
            let Some(limit) = limits[queue].processors else { continue };
            let held: f64 = result
                .jobs
                .iter()
                .filter(|j| tasks[j.id as usize].queue == Some(queue as u32))
                .filter(|j| j.start <= job.start && job.start < j.end)
                .map(|j| tasks[j.id as usize].demand[0])
                .sum();
            prop_assert!(held <= limit + SLACK, "queue {queue} holds {held} of {limit} at {}", job.start);
        }
    }

    #[test]
    fn fill_on_a_pool_is_first_come_first_served(
        specs in prop::collection::vec(job_spec(), 1..40),
        cpus in 4u32..12,
    ) {
        let tasks: Vec<Task> = tasks(&specs)
            .into_iter()
            .map(|t| Task { demand: vec![t.demand[0].min(f64::from(cpus))], ..t })
            .collect();
        let users = (0..3).map(|u| format!("u{u}")).collect();
        let mut config = ClusterConfig::new("fifo".parse().unwrap(), Capacity::Pool(vec![f64::from(cpus)]), vec!["cpu".into()], users);
        config.record_jobs = Some(Window::ALL);
        let result = run(&config, tasks.iter().cloned().map(Ok::<_, Infallible>), |_| {}).unwrap();
        let mut engine: Vec<(u64, Time)> = result.jobs.iter().map(|j| (j.id, j.start)).collect();
        engine.sort_unstable();
        let naive: Vec<(u64, Time)> = fcfs(&tasks, f64::from(cpus)).into_iter().enumerate().map(|(i, s)| (i as u64, s)).collect();
        prop_assert_eq!(engine, naive);
    }
}

/// First-come-first-served on one pool, the obvious way: each job in submit order starts at
/// the first moment, no earlier than its submission or the previous job's start, at which the
/// jobs already started leave it room; it runs until its runtime or walltime, whichever comes
/// first.
fn fcfs(tasks: &[Task], capacity: f64) -> Vec<Time> {
    let mut started: Vec<(Time, Time, f64)> = Vec::new();
    let mut previous = Time::ZERO;
    for task in tasks {
        let need = task.demand[0];
        let mut t = task.submit.max(previous);
        loop {
            let used: f64 = started
                .iter()
                .filter(|(s, e, _)| *s <= t && t < *e)
                .map(|j| j.2)
                .sum();
            if used + need <= capacity + SLACK {
                break;
            }
            t = started
                .iter()
                .map(|j| j.1)
                .filter(|e| *e > t)
                .min()
                .expect("something ends");
        }
        // A job that ran past its walltime request is killed at it (the engine's default).
        let runtime = task.walltime.map_or(task.runtime, |w| w.min(task.runtime));
        started.push((t, t.plus_micros(runtime), need));
        previous = t;
    }
    started.into_iter().map(|j| j.0).collect()
}
