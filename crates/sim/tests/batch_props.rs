//! Properties of the batch engine on random small workloads and clusters: no node is ever
//! oversubscribed, properties and exclusivity are honoured, no job starts after its first
//! reservation where the scheduler promises it, every job that can run does, and progressive
//! filling on a pool is exactly first-come-first-served as a naive simulator computes it, and
//! the per-job outcomes list every job once and add up to the summary.

use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::choice::Choice;
use fairshare_core::model::{partition_property, MachineCatalogue, NodeType, Time};
use fairshare_core::priority::multifactor::JobPriority;
use fairshare_sim::cluster::{
    run, run_observed, Capacity, ClusterConfig, JobOutcome, JobRecord, JobState, Outage, Partition,
    PlacementEntry, PolicyResult, QueueLimit, Scheduler, SchedulerEntry, SchedulerSettings,
    SlurmParameters, Stop, Task, Window,
};
use proptest::prelude::*;
use std::convert::Infallible;
use std::sync::Arc;

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

/// Some jobs cancelled while they wait, as a log records them: no runtime, and their owner's
/// cancellation `after` seconds past their submission, for each `Some(after)` in `cancels`.
fn with_cancellations(mut tasks: Vec<Task>, cancels: &[Option<u32>]) -> Vec<Task> {
    for (task, after) in tasks.iter_mut().zip(cancels) {
        if let Some(after) = after {
            task.runtime = 0;
            task.cancelled = Some(task.submit.plus_micros(u64::from(*after) * 1_000_000));
        }
    }
    tasks
}

/// Some jobs cancelled while they wait: each `Some` is seconds after its job's submission.
fn cancellations() -> impl Strategy<Value = Vec<Option<u32>>> {
    prop::collection::vec(prop::option::weighted(0.2, 0u32..40), 25)
}

fn replay(
    capacity: &Capacity,
    policy: &str,
    scheduler: SchedulerEntry,
    placement: PlacementEntry,
    tasks: &[Task],
) -> PolicyResult {
    replay_with_queues(capacity, policy, scheduler, placement, tasks, &[])
}

fn replay_with_queues(
    capacity: &Capacity,
    policy: &str,
    scheduler: SchedulerEntry,
    placement: PlacementEntry,
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
    config.scheduler = scheduler.scheduler(FillRule::HeadOfLine);
    config.placement = placement.placement();
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
        scheduler in prop::sample::select(SchedulerEntry::ALL.to_vec()),
        placement in prop::sample::select(PlacementEntry::ALL.to_vec()),
        policy in prop::sample::select(vec!["fifo", "drf"]),
        cancels in cancellations(),
    ) {
        let catalogue = catalogue(&types);
        let nodes = nodes(&catalogue);
        let tasks = with_cancellations(tasks(&specs), &cancels);
        let result = replay(&Capacity::Machines(catalogue), policy, scheduler, placement, &tasks);
        prop_assert_eq!(result.tasks_completed + result.tasks_never_fit + result.tasks_cancelled, result.tasks_submitted, "every job that fits and is not withdrawn runs");
        prop_assert_eq!(result.jobs.len() as u64, result.tasks_completed);
        check_nodes(&result.jobs, &tasks, &nodes)?;
        let some_fast = nodes.iter().any(|n| n.1);
        for job in &result.jobs {
            let task = &tasks[job.id as usize];
            prop_assert!(job.start >= task.submit);
            if let Some(cancelled) = task.cancelled {
                prop_assert!(job.start < cancelled && job.end <= cancelled, "job {} ran {}..{} though cancelled at {}", job.id, job.start, job.end, cancelled);
            }
            if some_fast && !task.properties.is_empty() {
                prop_assert!(job.placed.iter().all(|(n, _)| nodes[*n].1), "job {} off its property", job.id);
            }
            let promised = scheduler == SchedulerEntry::CONSERVATIVE || (scheduler == SchedulerEntry::EASY && policy == "fifo");
            if let (true, Some(reserved)) = (promised, job.first_reserved) {
                prop_assert!(job.start <= reserved, "job {} started at {} after its reservation at {}", job.id, job.start, reserved);
            }
        }
    }

    /// A site's outages hold: no job starts on a node while an outage closes it, and, under a
    /// scheduler that plans, no job is planned (to its time limit) on a node across a
    /// reservation announced for it.
    #[test]
    fn no_job_starts_on_a_closed_node_nor_crosses_a_reservation(
        types in prop::collection::vec(node_type(), 1..3),
        specs in prop::collection::vec(job_spec(), 1..25),
        outages in prop::collection::vec((0usize..6, 0u32..60, 1u32..40, any::<bool>()), 1..4),
        scheduler in prop::sample::select(SchedulerEntry::ALL.to_vec()),
    ) {
        let catalogue = catalogue(&types);
        let capacity = Capacity::Machines(catalogue);
        let hosts = capacity.named_nodes();
        let secs = |s: u32| Time::from_secs_f64(f64::from(s));
        let outages: Vec<Outage> = (outages.iter())
            .map(|&(node, from, length, announced)| Outage {
                name: format!("outage of node {}", node % hosts.len()),
                hosts: vec![hosts[node % hosts.len()].0.clone()],
                from: secs(from),
                to: Some(secs(from + length)),
                announced,
            })
            .collect();
        let tasks = tasks(&specs);
        let users = (0..3).map(|u| format!("u{u}")).collect();
        let mut config = ClusterConfig::new(
            "fifo".parse().unwrap(),
            capacity,
            vec!["cpu".into(), "mem".into()],
            users,
        );
        config.scheduler = scheduler.scheduler(FillRule::HeadOfLine);
        config.record_jobs = Some(Window::ALL);
        config.outages = outages.clone();
        let result = run(&config, tasks.iter().cloned().map(Ok::<_, Infallible>), |_| {}).unwrap();
        let plans = scheduler != SchedulerEntry::FILL;
        for job in &result.jobs {
            for outage in &outages {
                let node = hosts.iter().position(|(h, _)| *h == outage.hosts[0]).unwrap();
                if !job.placed.iter().any(|(n, _)| *n == node) {
                    continue;
                }
                let (from, to) = (outage.from, outage.to.unwrap());
                prop_assert!(
                    job.start < from || job.start >= to,
                    "job {} started at {} on node {node}, closed from {from} to {to}", job.id, job.start
                );
                // Planned to its time limit (its runtime without one): a job past its limit
                // is killed a little later, whatever is reserved.
                let task = &tasks[job.id as usize];
                let planned = job.start.plus_micros(task.walltime.filter(|w| *w > 0).unwrap_or(task.runtime));
                if plans && outage.announced {
                    prop_assert!(
                        planned <= from || job.start >= to,
                        "job {} planned {}..{planned} on node {node} across its reservation {from}..{to}", job.id, job.start
                    );
                }
            }
        }
    }

    #[test]
    fn queues_never_hold_more_than_their_limit(
        types in prop::collection::vec(node_type(), 1..3),
        specs in prop::collection::vec((job_spec(), 0u32..3), 1..25),
        limits in prop::collection::vec((prop::option::of(1u32..12), 0i32..3), 3),
        scheduler in prop::sample::select(SchedulerEntry::ALL.to_vec()),
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
        let result = replay_with_queues(&capacity, policy, scheduler, PlacementEntry::FIRST, &tasks, &limits);
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
    fn outcomes_list_every_job_once_and_add_up_to_the_summary(
        types in prop::collection::vec(node_type(), 1..3),
        specs in prop::collection::vec(job_spec(), 1..25),
        scheduler in prop::sample::select(SchedulerEntry::ALL.to_vec()),
        policy in prop::sample::select(vec!["fifo", "drf", "fairshare"]),
        horizon in prop::option::of(0u32..80),
        cancels in cancellations(),
        turn_seed in prop::option::of(any::<u64>()),
    ) {
        let tasks = with_cancellations(tasks(&specs), &cancels);
        let users = (0..3).map(|u| format!("u{u}")).collect();
        let resources = vec!["cpu".into(), "mem".into()];
        let capacity = Capacity::Machines(catalogue(&types));
        let mut config = ClusterConfig::new(policy.parse().unwrap(), capacity, resources, users);
        config.scheduler = scheduler.scheduler(FillRule::HeadOfLine);
        if scheduler == SchedulerEntry::SLURM && turn_seed.is_some() {
            // The background loop's turns drawn: submissions after the turn arrive late.
            let settings = SchedulerSettings {
                slurm: SlurmParameters { turn_seed, ..SlurmParameters::default() },
                ..SchedulerSettings::default()
            };
            config.scheduler = SchedulerEntry::SLURM.configured(&settings);
        }
        if let Some(h) = horizon {
            config.stop = Stop::Horizon(Time::from_secs_f64(f64::from(h)));
        }
        let mut outcomes = Vec::new();
        let arrivals = tasks.iter().cloned().map(Ok::<_, Infallible>);
        let result = run_observed(&config, arrivals, |_| {}, &mut |o| outcomes.push(o)).unwrap();
        check_outcomes(&result, &outcomes, &tasks)?;
        let plain = run(&config, tasks.iter().cloned().map(Ok::<_, Infallible>), |_| {}).unwrap();
        prop_assert_eq!(plain, result, "observing a run does not change it");
    }

    #[test]
    fn slurm_jumps_the_queue_only_at_its_backfill_cycles(
        specs in prop::collection::vec(job_spec(), 1..40),
        cpus in 4u32..12,
    ) {
        let (tasks, result) = fifo_on_a_pool(&one_user(&specs), cpus, SchedulerEntry::SLURM);
        prop_assert_eq!(result.jobs.len(), tasks.len());
        let start = |id: usize| result.jobs.iter().find(|j| j.id == id as u64).unwrap().start;
        for (j, job) in tasks.iter().enumerate() {
            let at = start(j);
            if at.as_micros() % 30_000_000 == 0 {
                continue;
            }
            // Started by the main scheduler: no job submitted before it was still waiting.
            for (earlier, other) in tasks.iter().enumerate().take(j) {
                prop_assert!(
                    other.submit == job.submit || start(earlier) <= at,
                    "job {j} started at {at} by the main scheduler while job {earlier}, submitted before it, waited until {}",
                    start(earlier)
                );
            }
        }
    }

    /// Ordered by job size alone (no site factor, no age), Slurm's main scheduler starts a
    /// job only once every job of a higher priority that waited with it has started.
    #[test]
    fn slurm_main_scheduler_follows_the_job_size_priority(
        specs in prop::collection::vec(job_spec(), 1..40),
        cpus in 4u32..12,
        favor_small in any::<bool>(),
    ) {
        let priority = JobPriority {
            site_weight: 0.0,
            size_weight: 10_000.0,
            favor_small,
            ..JobPriority::default()
        };
        let settings = SchedulerSettings {
            slurm: SlurmParameters { priority, ..SlurmParameters::default() },
            ..SchedulerSettings::default()
        };
        let scheduler = SchedulerEntry::SLURM.configured(&settings);
        let (tasks, result) = fifo_on_a_pool_by(&specs, cpus, scheduler);
        prop_assert_eq!(result.jobs.len(), tasks.len());
        let start = |id: usize| result.jobs.iter().find(|j| j.id == id as u64).unwrap().start;
        // Slurm's size factor on a pool, which counts as one node.
        let points = |t: &Task| {
            let (nodes, cpus) = (f64::from(t.nodes.unwrap_or(1)), t.demand[0] / f64::from(cpus));
            let factor = if favor_small { (2.0 - nodes - cpus) / 2.0 } else { (nodes + cpus) / 2.0 };
            (10_000.0 * factor.clamp(0.0, 1.0)).floor()
        };
        for (j, job) in tasks.iter().enumerate() {
            let at = start(j);
            if at.as_micros() % 30_000_000 == 0 {
                continue;
            }
            for (k, other) in tasks.iter().enumerate() {
                let waited_with_it = other.submit < at && start(k) >= at;
                prop_assert!(
                    !(waited_with_it && points(other) > points(job)) || start(k) <= at,
                    "job {j} ({} points) started at {at} by the main scheduler while job {k} ({} points) waited until {}",
                    points(job), points(other), start(k)
                );
            }
        }
    }

    /// With two partitions on nodes of their own and perhaps nodes they share, every job
    /// runs on its partition's nodes, and Slurm's main scheduler starts a job (in FIFO
    /// order) neither before an earlier job of its partition nor on a node of a partition
    /// whose earlier job waits: a blocked job stops its own partition and keeps the pass off
    /// its nodes, no more.
    #[test]
    fn slurm_keeps_each_partition_on_its_nodes_and_blocks_it_alone(
        specs in prop::collection::vec((job_spec(), 0u32..2), 1..40),
        sizes in prop::collection::vec((1u32..3, prop::sample::select(vec![2u32, 4, 8])), 2),
        shared in 0u32..3,
    ) {
        let node_type = |name: &str, count: u32, cpus: u32, partitions: &[&str]| {
            let mut node = NodeType::new(name, count, vec![f64::from(cpus), 4.0]);
            node.properties = partitions.iter().map(|p| partition_property(p)).collect();
            node
        };
        let mut types = vec![
            node_type("p0", sizes[0].0, sizes[0].1, &["p0"]),
            node_type("p1", sizes[1].0, sizes[1].1, &["p1"]),
        ];
        if shared > 0 {
            types.push(node_type("both", shared, 4, &["p0", "p1"]));
        }
        let capacity = Capacity::Machines(MachineCatalogue::new(types));
        let (specs, partitions): (Vec<JobSpec>, Vec<u32>) = specs.into_iter().unzip();
        let mut tasks = tasks(&one_user(&specs));
        tasks.iter_mut().zip(&partitions).for_each(|(t, p)| t.partition = Some(*p));
        let users = (0..3).map(|u| format!("u{u}")).collect();
        let resources = vec!["cpu".into(), "mem".into()];
        let mut config = ClusterConfig::new("fifo".parse().unwrap(), capacity, resources, users);
        config.scheduler = SchedulerEntry::SLURM.scheduler(FillRule::HeadOfLine);
        config.record_jobs = Some(Window::ALL);
        config.partitions = ["p0", "p1"].map(Partition::named).to_vec();
        let result = run(&config, tasks.iter().cloned().map(Ok::<_, Infallible>), |_| {}).unwrap();
        prop_assert_eq!(result.tasks_completed + result.tasks_never_fit, result.tasks_submitted);
        // Node indices run over the expanded catalogue: p0's own nodes, p1's, the shared.
        let (own_p0, own_p1) = (sizes[0].0 as usize, sizes[1].0 as usize);
        let in_partition = |node: usize, partition: u32| match node {
            n if n < own_p0 => partition == 0,
            n if n < own_p0 + own_p1 => partition == 1,
            _ => true,
        };
        let start = |id: usize| result.jobs.iter().find(|j| j.id == id as u64).map(|j| j.start);
        for job in &result.jobs {
            let j = job.id as usize;
            let nodes: Vec<usize> = job.placed.iter().map(|(n, _)| *n).collect();
            prop_assert!(nodes.iter().all(|&n| in_partition(n, partitions[j])), "job {j} off its partition");
            if job.start.as_micros() % 30_000_000 == 0 {
                continue;
            }
            for (k, other) in tasks.iter().enumerate().take(j) {
                let waiting = start(k).is_some_and(|s| s > job.start);
                let fenced = partitions[k] == partitions[j]
                    || nodes.iter().any(|&n| in_partition(n, partitions[k]));
                prop_assert!(
                    !(fenced && other.submit < tasks[j].submit && waiting),
                    "job {j} started at {} on {nodes:?} by the main scheduler while job {k} of partition p{}, submitted before it, waited", job.start, partitions[k]
                );
            }
        }
    }

    #[test]
    fn fill_on_a_pool_is_first_come_first_served(
        specs in prop::collection::vec(job_spec(), 1..40),
        cpus in 4u32..12,
    ) {
        let (tasks, result) = fifo_on_a_pool(&specs, cpus, SchedulerEntry::FILL);
        let mut engine: Vec<(u64, Time)> = result.jobs.iter().map(|j| (j.id, j.start)).collect();
        engine.sort_unstable();
        let naive: Vec<(u64, Time)> = fcfs(&tasks, f64::from(cpus)).into_iter().enumerate().map(|(i, s)| (i as u64, s)).collect();
        prop_assert_eq!(engine, naive);
    }
}

/// `specs`' jobs, each at most `cpus` processors, replayed in FIFO order by `scheduler` on a
/// pool of `cpus`, every job recorded.
fn fifo_on_a_pool(
    specs: &[JobSpec],
    cpus: u32,
    scheduler: SchedulerEntry,
) -> (Vec<Task>, PolicyResult) {
    fifo_on_a_pool_by(specs, cpus, scheduler.scheduler(FillRule::HeadOfLine))
}

/// `specs` all of user 0. Under Slurm, a policy other than Slurm's own reaches the scheduler
/// as the adapter's site factors, and the factor the adapter's submit table gives a job
/// between its passes may put one user's new job ahead of another's older one (a user with
/// nothing waiting gets the first factor of the nearest waiting user above it, whose later
/// runs hold less); one user's jobs keep their submission order, so FIFO is submission order.
fn one_user(specs: &[JobSpec]) -> Vec<JobSpec> {
    specs
        .iter()
        .map(|&(_, gap, run, wall, cpus, nodes, excl, fast)| {
            (0, gap, run, wall, cpus, nodes, excl, fast)
        })
        .collect()
}

/// [`fifo_on_a_pool`] with a scheduler already set up.
fn fifo_on_a_pool_by(
    specs: &[JobSpec],
    cpus: u32,
    scheduler: Arc<dyn Scheduler>,
) -> (Vec<Task>, PolicyResult) {
    let tasks: Vec<Task> = tasks(specs)
        .into_iter()
        .map(|t| Task {
            demand: vec![t.demand[0].min(f64::from(cpus))],
            ..t
        })
        .collect();
    let users = (0..3).map(|u| format!("u{u}")).collect();
    let mut config = ClusterConfig::new(
        "fifo".parse().unwrap(),
        Capacity::Pool(vec![f64::from(cpus)]),
        vec!["cpu".into()],
        users,
    );
    config.scheduler = scheduler;
    config.record_jobs = Some(Window::ALL);
    let result = run(
        &config,
        tasks.iter().cloned().map(Ok::<_, Infallible>),
        |_| {},
    )
    .unwrap();
    (tasks, result)
}

/// The summary's figures, recomputed from the per-job outcomes alone.
fn check_outcomes(
    result: &PolicyResult,
    outcomes: &[JobOutcome],
    tasks: &[Task],
) -> Result<(), TestCaseError> {
    let mut ids: Vec<u64> = outcomes.iter().map(|o| o.id).collect();
    ids.sort_unstable();
    prop_assert_eq!(
        ids,
        (0..tasks.len() as u64).collect::<Vec<_>>(),
        "every job once"
    );
    let count = |state: JobState| outcomes.iter().filter(|o| o.state == state).count() as u64;
    prop_assert_eq!(count(JobState::BeyondHorizon), result.tasks_beyond_horizon);
    prop_assert_eq!(count(JobState::NeverFits), result.tasks_never_fit);
    prop_assert_eq!(count(JobState::Finished), result.tasks_completed);
    prop_assert_eq!(count(JobState::Cancelled), result.tasks_cancelled);
    prop_assert_eq!(
        count(JobState::Unfinished) + count(JobState::NeverStarted),
        result.tasks_unfinished
    );
    let submitted = outcomes
        .iter()
        .filter(|o| o.state != JobState::BeyondHorizon);
    prop_assert_eq!(submitted.clone().count() as u64, result.tasks_submitted);
    let killed = submitted.filter(|o| o.killed_at_walltime).count() as u64;
    prop_assert_eq!(killed, result.tasks_killed_at_walltime);
    let started: Vec<&JobOutcome> = outcomes.iter().filter(|o| o.start.is_some()).collect();
    prop_assert_eq!(started.len() as u64, result.tasks_started);
    let mean = |values: Vec<f64>| {
        if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()));
    let waited = |o: &&JobOutcome| o.state != JobState::Cancelled;
    let wait = mean(
        outcomes
            .iter()
            .filter(waited)
            .filter_map(JobOutcome::wait_s)
            .collect(),
    );
    let slowdowns = started.iter().filter_map(|o| o.bounded_slowdown());
    let responses = started.iter().map(|o| o.wait_s().unwrap() + o.run_s());
    for (what, rows, summary) in [
        ("mean wait", wait, result.mean_wait_s),
        (
            "mean slowdown",
            mean(slowdowns.collect()),
            result.mean_slowdown,
        ),
        (
            "mean response",
            mean(responses.collect()),
            result.mean_response_s,
        ),
    ] {
        prop_assert!(
            close(rows, summary),
            "{}: {} from the rows, {} in the summary",
            what,
            rows,
            summary
        );
    }
    for user in result
        .users
        .iter()
        .filter(|u| u.tasks_submitted > u.tasks_never_fit)
    {
        let u = user.id.trim_start_matches('u');
        let own = outcomes.iter().filter(|o| o.user.to_string() == u);
        let wait = mean(own.filter(waited).filter_map(JobOutcome::wait_s).collect());
        prop_assert!(
            close(wait, user.mean_wait_s),
            "user {}: mean wait {} against {}",
            u,
            wait,
            user.mean_wait_s
        );
    }
    for o in outcomes {
        let ran = o
            .finish
            .zip(o.start)
            .map(|(f, s)| f.as_micros() - s.as_micros());
        prop_assert!(
            ran.is_none_or(|r| r == o.runtime),
            "job {} ran {:?}, its runtime is {}",
            o.id,
            ran,
            o.runtime
        );
    }
    Ok(())
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
