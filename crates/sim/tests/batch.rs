//! Batch schedules worked out by hand: EASY, conservative and Slurm's backfilling against progressive
//! filling, a parallel job over nodes of two sizes, an exclusive job, a reservation that moves
//! up when a job ends before its walltime.

use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::model::{partition_property, MachineCatalogue, NodeType, Time};
use fairshare_sim::cluster::{
    run, run_observed, Capacity, ClusterConfig, JobState, LoopTurns, Partition, PlacementEntry,
    PolicyResult, QueueLimit, Scheduler, SchedulerEntry, SchedulerSettings, SlurmParameters, Task,
    Window,
};
use std::convert::Infallible;
use std::sync::Arc;

/// A job of its own user `id`, submitted at `submit` s, running `runtime` s on `cpus`
/// processors with `walltime` s requested, spread over any nodes.
fn job(id: u64, submit: f64, runtime: f64, walltime: f64, cpus: f64) -> Task {
    let mut task = Task::new(
        id,
        id as u32,
        Time::from_secs_f64(submit),
        Time::from_secs_f64(runtime).as_micros(),
        vec![cpus],
    );
    task.walltime = Some(Time::from_secs_f64(walltime).as_micros());
    task.nodes = None;
    task
}

fn replay(
    capacity: Capacity,
    scheduler: SchedulerEntry,
    rule: FillRule,
    jobs: &[Task],
) -> PolicyResult {
    replay_with_queues(capacity, scheduler, rule, jobs, &[])
}

fn replay_with_queues(
    capacity: Capacity,
    scheduler: SchedulerEntry,
    rule: FillRule,
    jobs: &[Task],
    queues: &[QueueLimit],
) -> PolicyResult {
    let scheduler = match scheduler == SchedulerEntry::SLURM {
        true => slurm_with(at_every_event()),
        false => scheduler.scheduler(rule),
    };
    replay_by(capacity, scheduler, jobs, queues)
}

/// Slurm's defaults, but the main scheduler run at every event (`batch_sched_delay=0`) and
/// an end's nodes free at once, as the hand-worked cases below assume unless they test these.
fn at_every_event() -> SlurmParameters {
    SlurmParameters {
        batch_sched_delay_s: 0,
        completing_us: 0,
        killed_completing_us: 0,
        ..SlurmParameters::default()
    }
}

/// `jobs` replayed in FIFO order by `scheduler` on `capacity`, each job its own user's, first
/// fit, every job recorded.
fn replay_by(
    capacity: Capacity,
    scheduler: Arc<dyn Scheduler>,
    jobs: &[Task],
    queues: &[QueueLimit],
) -> PolicyResult {
    let config = ClusterConfig {
        queues: queues.to_vec(),
        ..config_for("fifo", capacity, scheduler, jobs)
    };
    replay_config(&config, jobs)
}

/// The run of `jobs` under `policy` by `scheduler` on `capacity`, each job its own user's
/// (unless it says otherwise), first fit, every job recorded.
fn config_for(
    policy: &str,
    capacity: Capacity,
    scheduler: Arc<dyn Scheduler>,
    jobs: &[Task],
) -> ClusterConfig {
    let users = (0..jobs.len()).map(|u| format!("u{u}")).collect();
    let mut config =
        ClusterConfig::new(policy.parse().unwrap(), capacity, vec!["cpu".into()], users);
    config.scheduler = scheduler;
    config.placement = PlacementEntry::FIRST.placement();
    config.record_jobs = Some(Window::ALL);
    config
}

/// `jobs` replayed under `config`.
fn replay_config(config: &ClusterConfig, jobs: &[Task]) -> PolicyResult {
    run(
        config,
        jobs.iter().cloned().map(Ok::<_, Infallible>),
        |_| {},
    )
    .unwrap()
}

/// Each job's start, in seconds, by id.
fn starts(result: &PolicyResult) -> Vec<f64> {
    let mut starts: Vec<(u64, f64)> = result
        .jobs
        .iter()
        .map(|j| (j.id, j.start.as_secs_f64()))
        .collect();
    starts.sort_by_key(|s| s.0);
    starts.into_iter().map(|s| s.1).collect()
}

/// Two nodes of `cpus` processors each.
fn two_nodes(cpus: f64) -> Capacity {
    Capacity::Machines(MachineCatalogue::new(vec![NodeType::new(
        "n",
        2,
        vec![cpus],
    )]))
}

fn pool(cpus: f64) -> Capacity {
    Capacity::Pool(vec![cpus])
}

/// The textbook case on 4 processors: a wide job waits for a running one and is reserved its
/// end; a short narrow job that ends before then is backfilled; a long narrow one is not.
#[test]
fn easy_backfills_the_short_narrow_job_and_not_the_long_one() {
    let jobs = [
        job(0, 0.0, 10.0, 10.0, 2.0),
        job(1, 1.0, 5.0, 5.0, 4.0),   // wide: reserved at 10
        job(2, 2.0, 5.0, 5.0, 1.0),   // short narrow: ends at 7, backfilled
        job(3, 3.0, 20.0, 20.0, 1.0), // long narrow: would hold a CPU at 10
    ];
    let easy = replay(pool(4.0), SchedulerEntry::EASY, FillRule::HeadOfLine, &jobs);
    assert_eq!(starts(&easy), [0.0, 10.0, 2.0, 15.0]);
    assert_eq!(
        easy.jobs.iter().find(|j| j.id == 1).unwrap().first_reserved,
        Some(Time::from_secs_f64(10.0))
    );
    let conservative = replay(
        pool(4.0),
        SchedulerEntry::CONSERVATIVE,
        FillRule::HeadOfLine,
        &jobs,
    );
    assert_eq!(starts(&conservative), [0.0, 10.0, 2.0, 15.0]);
    let fill = replay(pool(4.0), SchedulerEntry::FILL, FillRule::HeadOfLine, &jobs);
    assert_eq!(
        starts(&fill),
        [0.0, 10.0, 15.0, 15.0],
        "nothing passes the wide job"
    );
    let skip = replay(pool(4.0), SchedulerEntry::FILL, FillRule::Skip, &jobs);
    assert_eq!(
        starts(&skip),
        [0.0, 23.0, 2.0, 3.0],
        "the skip rule starves the wide job"
    );
}

/// A job cancelled while it waits holds its place, and its reservation, until its
/// cancellation: job 2 cannot pass the wide job 1 reserved at 10, and starts when job 1 is
/// withdrawn at 6 (under EASY; Slurm's schedulers wait for the next event); job 3, started at
/// 10, ends at its cancellation at 25, not its walltime.
#[test]
fn a_cancelled_job_waits_until_its_cancellation_and_a_started_one_ends_then() {
    let cancelled = |mut task: Task, at: f64| {
        task.runtime = 0;
        task.cancelled = Some(Time::from_secs_f64(at));
        task
    };
    let jobs = [
        job(0, 0.0, 10.0, 10.0, 2.0),
        cancelled(job(1, 1.0, 0.0, 20.0, 4.0), 6.0),
        job(2, 2.0, 10.0, 10.0, 2.0),
        cancelled(job(3, 3.0, 0.0, 30.0, 2.0), 25.0),
    ];
    let config = config_for(
        "fifo",
        pool(4.0),
        SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine),
        &jobs,
    );
    let mut outcomes = Vec::new();
    let arrivals = jobs.iter().cloned().map(Ok::<_, Infallible>);
    let result = run_observed(&config, arrivals, |_| {}, &mut |o| outcomes.push(o)).unwrap();
    let ids: Vec<u64> = result.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [0, 2, 3], "job 1 never starts");
    assert_eq!(starts(&result), [0.0, 6.0, 10.0]);
    let ended = result.jobs.iter().find(|j| j.id == 3).unwrap().end;
    assert_eq!(ended, Time::from_secs_f64(25.0), "at its cancellation");
    assert_eq!(
        (
            result.tasks_completed,
            result.tasks_unfinished,
            result.tasks_cancelled
        ),
        (3, 0, 1)
    );
    assert_eq!(
        result.mean_wait_s,
        (0.0 + 4.0 + 7.0) / 3.0,
        "job 1 left out"
    );
    outcomes.sort_by_key(|o| o.id);
    let states: Vec<JobState> = outcomes.iter().map(|o| o.state).collect();
    use JobState::{Cancelled, Finished};
    assert_eq!(states, [Finished, Cancelled, Finished, Finished]);
    assert_eq!(outcomes[1].wait_s(), Some(5.0), "it waited from 1 to 6");
    assert_eq!(outcomes[1].start, None);

    // Slurm's schedulers do not run on a cancellation: job 2 waits for the next event, job
    // 0's end at 10, where the main scheduler starts it and job 3.
    let slurm = slurm_with(at_every_event());
    let result = replay_config(&config_for("fifo", pool(4.0), slurm, &jobs), &jobs);
    assert_eq!(starts(&result), [0.0, 10.0, 10.0]);
    assert_eq!(result.tasks_cancelled, 1);

    // Not cancelled, job 1 starts at its reservation and job 2 after it.
    let mut kept = jobs.clone();
    kept[1].cancelled = None;
    kept[1].runtime = Time::from_secs_f64(5.0).as_micros();
    let result = replay_config(&config, &kept);
    assert_eq!(starts(&result)[..3], [0.0, 10.0, 15.0]);
}

/// EASY protects only the first blocked job: a long narrow job that fits beside the first
/// one's reservation starts, and delays the second blocked job, which conservative protects.
#[test]
fn conservative_protects_every_reservation_easy_only_the_first() {
    let jobs = [
        job(0, 0.0, 10.0, 10.0, 2.0),
        job(1, 1.0, 10.0, 10.0, 3.0), // reserved [10, 20) under both
        job(2, 2.0, 10.0, 10.0, 4.0), // conservative reserves [20, 30)
        job(3, 3.0, 30.0, 30.0, 1.0), // fits now and beside job 1, not beside job 2
    ];
    let easy = replay(pool(4.0), SchedulerEntry::EASY, FillRule::HeadOfLine, &jobs);
    assert_eq!(starts(&easy), [0.0, 10.0, 33.0, 3.0]);
    let conservative = replay(
        pool(4.0),
        SchedulerEntry::CONSERVATIVE,
        FillRule::HeadOfLine,
        &jobs,
    );
    assert_eq!(starts(&conservative), [0.0, 10.0, 20.0, 30.0]);
    let reserved: Vec<Option<f64>> = {
        let mut jobs = conservative.jobs.clone();
        jobs.sort_by_key(|j| j.id);
        jobs.iter()
            .map(|j| j.first_reserved.map(Time::as_secs_f64))
            .collect()
    };
    assert_eq!(reserved, [None, Some(10.0), Some(20.0), Some(30.0)]);
}

/// A running job that ends before its walltime lets the reservation behind it move up.
#[test]
fn reservations_move_up_when_a_job_ends_early() {
    let jobs = [
        job(0, 0.0, 6.0, 10.0, 2.0), // asks 10 s, ends at 6
        job(1, 1.0, 5.0, 5.0, 4.0),  // reserved at 10, starts at 6
        job(2, 2.0, 20.0, 20.0, 4.0),
    ];
    for scheduler in [SchedulerEntry::EASY, SchedulerEntry::CONSERVATIVE] {
        let result = replay(pool(4.0), scheduler, FillRule::HeadOfLine, &jobs);
        assert_eq!(starts(&result), [0.0, 6.0, 11.0], "{scheduler:?}");
        let first = result
            .jobs
            .iter()
            .find(|j| j.id == 1)
            .unwrap()
            .first_reserved;
        assert_eq!(first, Some(Time::from_secs_f64(10.0)));
    }
}

/// Two node types: one of 8 processors, two of 4. A 12-processor job spreads over the big
/// node and one small one; asked as 2 nodes × 6 it can never run; 2 × 4 waits while only one
/// node has 4 free, then takes the first two nodes.
#[test]
fn a_parallel_job_on_nodes_of_two_sizes() {
    let catalogue = MachineCatalogue::new(vec![
        NodeType::new("big", 1, vec![8.0]),
        NodeType::new("small", 2, vec![4.0]),
    ]);
    let machines = Capacity::Machines(catalogue);
    let mut shaped = job(1, 1.0, 10.0, 10.0, 12.0);
    shaped.nodes = Some(2);
    let mut pair = job(2, 2.0, 10.0, 10.0, 8.0);
    pair.nodes = Some(2);
    let jobs = [job(0, 0.0, 10.0, 10.0, 12.0), shaped, pair];
    let result = replay(machines, SchedulerEntry::EASY, FillRule::HeadOfLine, &jobs);
    assert_eq!(
        result.tasks_never_fit, 1,
        "2 nodes × 6 processors: only one node has 6"
    );
    let mut records = result.jobs.clone();
    records.sort_by_key(|j| j.id);
    let nodes = |j: usize| {
        records[j]
            .placed
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        nodes(0),
        [0, 1],
        "8 on the big node, 4 on the first small one"
    );
    assert!((records[0].placed[0].1[0] - 0.5).abs() < 1e-12);
    assert_eq!(records[1].id, 2);
    assert_eq!(nodes(1), [0, 1], "two distinct nodes, once job 0 has ended");
    assert_eq!(records[1].start.as_secs_f64(), 10.0);
}

/// An exclusive one-processor job takes a whole node: the next job goes to the other node,
/// and a job needing both nodes waits for the exclusive one to end.
#[test]
fn an_exclusive_job_holds_its_node_whole() {
    let machines = two_nodes(4.0);
    let mut exclusive = job(0, 0.0, 10.0, 10.0, 1.0);
    exclusive.exclusive = true;
    exclusive.nodes = Some(1);
    let mut one = job(1, 1.0, 5.0, 5.0, 1.0);
    one.nodes = Some(1);
    let jobs = [exclusive, one, job(2, 2.0, 5.0, 5.0, 6.0)];
    let result = replay(machines, SchedulerEntry::EASY, FillRule::HeadOfLine, &jobs);
    let mut records = result.jobs.clone();
    records.sort_by_key(|j| j.id);
    assert_eq!(records[0].placed, [(0, vec![0.5])], "the whole first node");
    assert_eq!(records[1].placed[0].0, 1, "not beside the exclusive job");
    assert_eq!(starts(&result), [0.0, 1.0, 10.0]);
}

/// `task` in queue `queue`.
fn in_queue(mut task: Task, queue: u32) -> Task {
    task.queue = Some(queue);
    task
}

/// A queue limited to 2 of 4 processors: its second job waits for its first although the
/// machine has room, gets no reservation, and a job of another queue starts past it, even
/// under head-of-line filling (a held-back job blocks nobody).
#[test]
fn a_queue_at_its_limit_holds_its_jobs_back() {
    let limited = QueueLimit {
        processors: Some(2.0),
        priority: 0,
        cost: 1.0,
    };
    let jobs = [
        in_queue(job(0, 0.0, 10.0, 10.0, 2.0), 0),
        in_queue(job(1, 1.0, 10.0, 10.0, 1.0), 0),
        in_queue(job(2, 2.0, 10.0, 10.0, 1.0), 1),
    ];
    for scheduler in [
        SchedulerEntry::FILL,
        SchedulerEntry::EASY,
        SchedulerEntry::CONSERVATIVE,
    ] {
        let rule = FillRule::Skip;
        let limits = [limited, QueueLimit::default()];
        let result = replay_with_queues(pool(4.0), scheduler, rule, &jobs, &limits);
        assert_eq!(starts(&result), [0.0, 10.0, 2.0], "{scheduler:?}");
        let unlimited = replay(pool(4.0), scheduler, rule, &jobs);
        assert_eq!(starts(&unlimited), [0.0, 1.0, 2.0], "{scheduler:?}");
    }
    let fill = replay_with_queues(
        pool(4.0),
        SchedulerEntry::FILL,
        FillRule::HeadOfLine,
        &jobs,
        &[limited],
    );
    assert_eq!(starts(&fill), [0.0, 10.0, 2.0]);
}

/// A high-priority queue goes first: on a machine busy until 10, a job submitted at 2 to a
/// queue of priority 5 starts before one submitted at 1 to a queue of priority 0, under
/// filling and EASY, whatever the priority's size; without the queues the order of arrival
/// holds. Conservative backfilling never delays a reservation, so the job reserved at 1 keeps
/// its start.
#[test]
fn higher_priority_queues_are_served_first() {
    let jobs = [
        in_queue(job(0, 0.0, 10.0, 10.0, 2.0), 0),
        in_queue(job(1, 1.0, 10.0, 10.0, 2.0), 0),
        in_queue(job(2, 2.0, 10.0, 10.0, 2.0), 1),
    ];
    let schedulers = [
        SchedulerEntry::FILL,
        SchedulerEntry::EASY,
        SchedulerEntry::CONSERVATIVE,
    ];
    for (scheduler, priority) in schedulers.into_iter().flat_map(|s| [(s, 5), (s, i32::MAX)]) {
        let urgent = QueueLimit {
            processors: None,
            priority,
            cost: 1.0,
        };
        let limits = [QueueLimit::default(), urgent];
        let rule = FillRule::HeadOfLine;
        let result = replay_with_queues(pool(2.0), scheduler, rule, &jobs, &limits);
        let expected = if scheduler == SchedulerEntry::CONSERVATIVE {
            [0.0, 10.0, 20.0]
        } else {
            [0.0, 20.0, 10.0]
        };
        assert_eq!(starts(&result), expected, "{scheduler:?}");
        let plain = replay(pool(2.0), scheduler, rule, &jobs);
        assert_eq!(starts(&plain), [0.0, 10.0, 20.0], "{scheduler:?}");
    }
}

/// One user's own jobs follow their queues' priorities too, and a pass goes down the tiers:
/// the user's urgent job (submitted last) starts first, then, in the order of arrival, its
/// own plain job and the other user's.
#[test]
fn a_users_own_urgent_job_goes_before_its_older_plain_one() {
    let urgent = QueueLimit {
        processors: None,
        priority: 1,
        cost: 1.0,
    };
    let mut jobs = [
        in_queue(job(0, 0.0, 10.0, 10.0, 2.0), 0),
        in_queue(job(1, 1.0, 10.0, 10.0, 2.0), 0),
        in_queue(job(2, 2.0, 10.0, 10.0, 2.0), 0),
        in_queue(job(3, 3.0, 10.0, 10.0, 2.0), 1),
    ];
    jobs[3].user = 1;
    let limits = [QueueLimit::default(), urgent];
    let result = replay_with_queues(
        pool(2.0),
        SchedulerEntry::EASY,
        FillRule::HeadOfLine,
        &jobs,
        &limits,
    );
    assert_eq!(starts(&result), [0.0, 20.0, 30.0, 10.0]);
}

/// A job that ran 100 s on a 60 s request: killed at 60 s under `kill` (the default, as sites
/// do), so the whole-machine job behind it starts at 60 s; run in full under `extend`, so it
/// starts at 100 s. Only `kill` counts it.
#[test]
fn an_overrun_is_killed_at_its_walltime_unless_extended() {
    use fairshare_sim::cluster::Overrun;
    let jobs = [job(0, 0.0, 100.0, 60.0, 4.0), job(1, 1.0, 10.0, 10.0, 4.0)];
    let users = vec!["u0".to_owned(), "u1".to_owned()];
    let mut config = ClusterConfig::new(
        "fifo".parse().unwrap(),
        pool(4.0),
        vec!["cpu".into()],
        users,
    );
    config.scheduler = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    config.record_jobs = Some(Window::ALL);
    let run_with = |overrun| {
        let config = ClusterConfig {
            overrun,
            ..config.clone()
        };
        run(
            &config,
            jobs.iter().cloned().map(Ok::<_, Infallible>),
            |_| {},
        )
        .unwrap()
    };
    let killed = run_with(Overrun::Kill);
    assert_eq!(starts(&killed), [0.0, 60.0]);
    assert_eq!(killed.tasks_killed_at_walltime, 1);
    let ends: Vec<f64> = killed
        .jobs
        .iter()
        .map(|j| j.end.as_micros() as f64 / 1e6)
        .collect();
    assert!(ends.contains(&60.0) && ends.contains(&70.0), "{ends:?}");
    let extended = run_with(Overrun::Extend);
    assert_eq!(starts(&extended), [0.0, 100.0]);
    assert_eq!(extended.tasks_killed_at_walltime, 0);
    // A request of 0 is no request (Slurm's --time=0; logs writing 0 for unknown): not killed.
    let mut unknown = jobs.clone();
    unknown[0].walltime = Some(0);
    let result = run(
        &config,
        unknown.iter().cloned().map(Ok::<_, Infallible>),
        |_| {},
    )
    .unwrap();
    assert_eq!(
        (starts(&result), result.tasks_killed_at_walltime),
        (vec![0.0, 100.0], 0)
    );
}

/// Slurm's two schedulers on 4 processors: a 3-processor job runs for 100 s, a 2-processor job
/// waits behind it, and a 1-processor, 10-s job that would fit at once arrives after. EASY
/// backfills it at once. Slurm's main scheduler, run at the arrival, stops at the blocked job,
/// so it waits for the backfill cycle (every 30 s by default, every 10 s when told, at the
/// phase it is told); under `sched/builtin`, with no backfill, it waits for the blocked job to start.
#[test]
fn slurm_starts_around_a_blocked_job_only_at_its_backfill_cycle() {
    use fairshare_sim::cluster::{SchedulerSettings, SlurmParameters};
    let jobs = [
        job(0, 0.0, 100.0, 100.0, 3.0),
        job(1, 1.0, 10.0, 10.0, 2.0),
        job(2, 2.0, 10.0, 10.0, 1.0),
    ];
    let with = |slurm: SlurmParameters| {
        let settings = SchedulerSettings {
            slurm,
            ..SchedulerSettings::default()
        };
        let scheduler = SchedulerEntry::SLURM.configured(&settings);
        starts(&replay_by(pool(4.0), scheduler, &jobs, &[]))
    };
    let easy = replay(pool(4.0), SchedulerEntry::EASY, FillRule::HeadOfLine, &jobs);
    assert_eq!(starts(&easy), [0.0, 100.0, 2.0]);
    assert_eq!(with(at_every_event()), [0.0, 100.0, 30.0]);
    let every_10_s = SlurmParameters {
        bf_interval_s: 10,
        ..at_every_event()
    };
    assert_eq!(with(every_10_s), [0.0, 100.0, 10.0]);
    // Cycles at a phase (seconds past each multiple of the interval, from the epoch: the
    // run's first submission is at 0 here): at 7 s, at 2 s (the arrival's own second, after
    // it), and a phase past the interval taken within it.
    let at_phase = |phase| SlurmParameters {
        bf_phase_s: Some(phase),
        ..at_every_event()
    };
    assert_eq!(with(at_phase(7)), [0.0, 100.0, 7.0]);
    assert_eq!(with(at_phase(2)), [0.0, 100.0, 2.0]);
    assert_eq!(with(at_phase(37)), [0.0, 100.0, 7.0]);
    assert_eq!(with(at_phase(0)), [0.0, 100.0, 30.0]);
    let builtin = SlurmParameters {
        backfill: false,
        ..at_every_event()
    };
    assert_eq!(with(builtin), [0.0, 100.0, 100.0]);
    // A backfill cycle that may test only one job tests the blocked one and starts nothing.
    let one_test = SlurmParameters {
        bf_max_job_test: 1,
        ..at_every_event()
    };
    assert_eq!(with(one_test), [0.0, 100.0, 100.0]);
}

/// Slurm's main scheduler runs for submissions and ends at slurmctld's next second, at most
/// every `batch_sched_delay` (3 s): on 2 processors, jobs 0 and 1 start at 0, at the backfill's
/// first cycle (counted from the first submission); job 0 ends at 10 and job 2 starts at the
/// next second, 11; job 1 ends at 12, and job 3 waits for the pass at 14, three seconds after
/// the last. At every event job 3 starts at 12; with `batch_sched_delay=5`, at 16.
#[test]
fn slurm_runs_its_main_scheduler_at_most_every_batch_sched_delay() {
    let mut jobs = [
        job(0, 0.0, 10.0, 10.0, 1.0),
        job(1, 0.0, 12.0, 12.0, 1.0),
        job(2, 1.0, 5.0, 5.0, 1.0),
        job(3, 1.0, 5.0, 5.0, 1.0),
    ];
    jobs.iter_mut().for_each(|j| j.user = 0);
    let starts_with =
        |parameters| starts(&replay_by(pool(2.0), slurm_with(parameters), &jobs, &[]));
    assert_eq!(
        starts_with(SlurmParameters::default()),
        [0.0, 0.0, 11.0, 14.0]
    );
    assert_eq!(starts_with(at_every_event()), [0.0, 0.0, 10.0, 12.0]);
    let every_5_s = SlurmParameters {
        batch_sched_delay_s: 5,
        ..SlurmParameters::default()
    };
    assert_eq!(starts_with(every_5_s), [0.0, 0.0, 11.0, 16.0]);
}

/// Slurm's backfill plans a running job to end at its time limit, and one past it to end the
/// next second, not when it will end: on 3 processors, job 0 (2 processors, a 60-s limit)
/// runs 80 s; job 1 (all 3) waits for it; job 2 (1 processor for 15 s, submitted at 50) would
/// end before job 0 does, but at the cycle at 60 job 0 is planned to end at 61, when job 1 is
/// planned to start, so job 2 waits. Job 0, past its limit, was killed at 80: the epilog its
/// nodes report 38 ms later runs the main scheduler at once, which starts job 1 at 80.038;
/// job 2 follows at 141, the second after job 1's end.
#[test]
fn slurm_plans_a_job_past_its_limit_to_end_the_next_second() {
    let jobs = [
        job(0, 0.0, 80.0, 60.0, 2.0),
        job(1, 1.0, 60.0, 60.0, 3.0),
        job(2, 50.0, 15.0, 15.0, 1.0),
    ];
    let parameters = SlurmParameters {
        bf_resolution_s: 1,
        ..SlurmParameters::default()
    };
    let result = replay_by(pool(3.0), slurm_with(parameters), &jobs, &[]);
    assert_eq!(starts(&result), [0.0, 80.038, 141.0]);
}

/// With the background loop's turns drawn (`turn_seed`), a submission that came before the
/// loop's turn in its second starts in that second and one that came after starts at the
/// next: on an idle pool, one job every 10 s (far from the last pass), the backfill off, each
/// job starts at its submission or a second later, both happen, one seed gives the same starts
/// on every replay and another seed others. Without a seed each starts a second later.
#[test]
fn drawn_turns_start_a_submission_in_its_own_second_or_the_next() {
    let jobs: Vec<Task> = (0..64)
        .map(|i| job(i, 5.0 + 10.0 * i as f64, 1.0, 1.0, 1.0))
        .collect();
    let delays = |turn_seed| -> Vec<f64> {
        let started = starts(&replay_by(pool(1.0), turns(turn_seed), &jobs, &[]));
        (started.iter().zip(&jobs))
            .map(|(start, job)| start - job.submit.as_secs_f64())
            .collect()
    };
    assert!(delays(None).iter().all(|&d| d == 1.0));
    let drawn = delays(Some(7));
    assert!(drawn.iter().all(|&d| d == 0.0 || d == 1.0), "{drawn:?}");
    let in_own_second = drawn.iter().filter(|&&d| d == 0.0).count();
    assert!((16..=48).contains(&in_own_second), "{in_own_second} of 64");
    assert_eq!(delays(Some(7)), drawn);
    assert_ne!(delays(Some(8)), drawn);
}

/// A submission that came after the loop's turn in its second is not seen by a pass due then:
/// on 2 processors, jobs 0 and 1, submitted at 0, start there (on the seeds whose second 0
/// came before the turn); job 0's end at 10 asks for a pass, due at 11, when job 2 is
/// submitted: it starts in that pass if its second came before the turn, else at the next
/// pass, 3 s later.
#[test]
fn a_submission_after_the_turn_waits_for_the_next_pass() {
    let jobs = [
        job(0, 0.0, 10.0, 10.0, 1.0),
        job(1, 0.0, 20.0, 20.0, 1.0),
        job(2, 11.0, 1.0, 1.0, 1.0),
    ];
    let job_2_starts: Vec<f64> = (0..32)
        .map(|seed| starts(&replay_by(pool(2.0), turns(Some(seed)), &jobs, &[])))
        .filter(|started| started[0] == 0.0)
        .map(|started| started[2])
        .collect();
    assert!(
        job_2_starts.iter().all(|&s| s == 11.0 || s == 14.0),
        "{job_2_starts:?}"
    );
    assert!(
        job_2_starts.contains(&11.0) && job_2_starts.contains(&14.0),
        "{job_2_starts:?}"
    );
}

/// Slurm's scheduler without backfill, its background loop's turns drawn with `turn_seed`.
fn turns(turn_seed: Option<u64>) -> Arc<dyn Scheduler> {
    slurm_with(SlurmParameters {
        backfill: false,
        turn_seed,
        ..SlurmParameters::default()
    })
}

/// With the background loop's turns read from a log (shown at 10.6 and 40.6 s: one a second,
/// 0.6 s past it), a pass an event asks for runs at the loop's first turn at or after the
/// event, `batch_sched_delay` (3 s) after the last pass: on one idle processor, the backfill
/// off, job 0, submitted at 20.3, starts at the turn of its own second, 20.6 (its end at 21.6
/// asks for a pass, at 23.6); job 1, submitted at 25.7, after that second's turn, at 26.6
/// (its end's pass at 29.6); job 2, submitted at 33.6, on a turn, then (its end's pass at
/// 36.6); job 3, submitted at 37.1, waits for the spacing, to 39.6; job 4, submitted at 39.7
/// while job 3 runs, starts at the turn after job 3's end at 49.9: 50.6. Without the log a
/// second's events come after its turn, at the whole second.
#[test]
fn loop_turns_from_a_log_time_the_passes_events_ask_for() {
    let jobs = [
        job(0, 20.3, 1.0, 5.0, 1.0),
        job(1, 25.7, 1.0, 5.0, 1.0),
        job(2, 33.6, 1.0, 5.0, 1.0),
        job(3, 37.1, 10.3, 20.0, 1.0),
        job(4, 39.7, 1.0, 5.0, 1.0),
    ];
    let shown = LoopTurns::every_second(vec![Time::from_secs_f64(40.6), Time::from_secs_f64(10.6)]);
    let by_log = slurm_with(SlurmParameters {
        backfill: false,
        loop_turns: Some(Arc::new(shown)),
        ..SlurmParameters::default()
    });
    let rounded = |result: &PolicyResult| -> Vec<f64> {
        let started = starts(result);
        started
            .iter()
            .map(|s| (s * 1000.0).round() / 1000.0)
            .collect()
    };
    let logged = replay_by(pool(1.0), by_log, &jobs, &[]);
    assert_eq!(rounded(&logged), [20.6, 26.6, 33.6, 39.6, 50.6]);
    let whole_seconds = replay_by(pool(1.0), turns(None), &jobs, &[]);
    assert_eq!(rounded(&whole_seconds), [21.0, 27.0, 34.0, 40.0, 51.0]);
}

/// Slurm's background loop with its turns read from a log, the backfill off.
fn logged_turns(shown: &[f64], parameters: SlurmParameters) -> Arc<dyn Scheduler> {
    let shown = shown.iter().map(|&s| Time::from_secs_f64(s)).collect();
    slurm_with(SlurmParameters {
        backfill: false,
        loop_turns: Some(Arc::new(LoopTurns::logged_every_second(shown))),
        ..parameters
    })
}

/// Starts to the millisecond.
fn starts_ms(result: &PolicyResult) -> Vec<f64> {
    let started = starts(result);
    started
        .iter()
        .map(|s| (s * 1000.0).round() / 1000.0)
        .collect()
}

/// A job's nodes stay completing until they answer the terminate request (5 ms): on one
/// processor, turns shown at 10.5 and 20.5 s, job 0 starts at 10.5 and ends at 15.497, and
/// job 1 waits for it. The turn at 15.5 comes before the processor is free at 15.502, so job
/// 1 starts at the next, 16.5; with the nodes free at the end it starts at 15.5.
#[test]
fn slurm_starts_nothing_on_a_node_still_completing() {
    let jobs = [job(0, 10.2, 4.997, 10.0, 1.0), job(1, 10.3, 1.0, 10.0, 1.0)];
    let turns = [10.5, 20.5];
    let completing = logged_turns(&turns, SlurmParameters::default());
    assert_eq!(
        starts_ms(&replay_by(pool(1.0), completing, &jobs, &[])),
        [10.5, 16.5]
    );
    let at_once = SlurmParameters {
        completing_us: 0,
        ..SlurmParameters::default()
    };
    let freed = logged_turns(&turns, at_once);
    assert_eq!(
        starts_ms(&replay_by(pool(1.0), freed, &jobs, &[])),
        [10.5, 15.5]
    );
}

/// The loop spaces the passes events ask for in the whole seconds its clock read, a couple
/// of milliseconds before the log shows a pass's starts: on one processor, turns shown at
/// 20.001 and 30.011 s (1.001 s apart), job 1 starts at 20.001 when job 0 ends, a pass its
/// clock read at second 19; job 1's end at 21.001 asks for another, which the loop runs at
/// its first turn of second 22, 22.003, and job 2 starts then (at 23.004 had the clock read
/// the pass's logged instant).
#[test]
fn slurm_spaces_its_passes_in_the_seconds_its_loop_read() {
    let jobs = [
        job(0, 0.0, 19.99, 30.0, 1.0),
        job(1, 0.5, 1.0, 30.0, 1.0),
        job(2, 0.6, 1.0, 30.0, 1.0),
    ];
    let slurm = logged_turns(&[20.001, 30.011], SlurmParameters::default());
    let result = replay_by(pool(1.0), slurm, &jobs, &[]);
    assert_eq!(starts_ms(&result), [0.001, 20.001, 22.003]);
    let shown = [20.001, 30.011].map(Time::from_secs_f64).to_vec();
    let read_at_the_logged_instant = slurm_with(SlurmParameters {
        backfill: false,
        loop_turns: Some(Arc::new(LoopTurns::every_second(shown))),
        ..SlurmParameters::default()
    });
    let result = replay_by(pool(1.0), read_at_the_logged_instant, &jobs, &[]);
    assert_eq!(starts_ms(&result), [0.001, 20.001, 23.004]);
}

/// A job killed at its limit has its nodes report their epilog, which runs the main
/// scheduler at once (38 ms on), unspaced and not counted in the spacing: on two
/// processors, jobs 0 and 1 start at 1; job 0 (a 60-s limit) is killed at 81 and job 2 starts
/// at 81.038, by the pass its epilog ran; job 1's end at 82.5 asks for a pass, which runs at
/// 83, the next second, as if the kill's had not run (at 84 were it counted), and starts
/// job 3.
#[test]
fn slurm_runs_its_main_scheduler_at_once_for_a_kill() {
    let jobs = [
        job(0, 0.0, 80.0, 60.0, 1.0),
        job(1, 0.0, 81.5, 100.0, 1.0),
        job(2, 1.5, 10.0, 100.0, 1.0),
        job(3, 2.0, 10.0, 100.0, 1.0),
    ];
    let slurm = slurm_with(SlurmParameters {
        backfill: false,
        ..SlurmParameters::default()
    });
    let result = replay_by(pool(2.0), slurm, &jobs, &[]);
    assert_eq!(starts_ms(&result), [1.0, 1.0, 81.038, 83.0]);
}

/// The background loop runs the main scheduler down the whole queue every
/// `sched_interval`, whatever was asked, from its start: on three processors,
/// the backfill off, job 0 holds two until 100 s; job 1 (two) blocks job 2 (one) until it is
/// cancelled at 50, which asks for no pass. With the loop started at 5.4 s and
/// `sched_interval=60`, the pass at 65 starts job 2; with no start known, the pass job 0's
/// end (at 101) asks for, at 102.
#[test]
fn slurm_runs_its_main_scheduler_down_the_whole_queue_every_sched_interval() {
    let mut jobs = [
        job(0, 0.0, 100.0, 200.0, 2.0),
        job(1, 1.0, 10.0, 200.0, 2.0),
        job(2, 2.0, 10.0, 200.0, 1.0),
    ];
    jobs[1].cancelled = Some(Time::from_secs_f64(50.0));
    let with_start = |starts: Vec<Time>| {
        let slurm = slurm_with(SlurmParameters {
            backfill: false,
            loop_starts: starts,
            ..SlurmParameters::default()
        });
        let result = replay_by(pool(3.0), slurm, &jobs, &[]);
        let started = result
            .jobs
            .iter()
            .find(|j| j.id == 2)
            .map(|j| j.start.as_secs_f64());
        started
    };
    assert_eq!(with_start(vec![Time::from_secs_f64(5.4)]), Some(65.0));
    assert_eq!(with_start(Vec::new()), Some(102.0));
}

/// A drained run ends with its last job, not at a plan made for a job that started earlier:
/// job 1 is planned at 200 s, job 0's walltime, by the backfill cycle at 30 s; job 0 ends at
/// 40 s and job 1 runs from 40 to 50 s.
#[test]
fn a_drained_run_ends_with_its_last_job_not_at_a_stale_plan() {
    let jobs = [job(0, 0.0, 40.0, 200.0, 4.0), job(1, 1.0, 10.0, 10.0, 4.0)];
    for scheduler in [SchedulerEntry::SLURM, SchedulerEntry::EASY] {
        let result = replay(pool(4.0), scheduler, FillRule::HeadOfLine, &jobs);
        assert_eq!(starts(&result), [0.0, 40.0]);
        assert_eq!(result.simulated_s, 50.0, "{scheduler:?}");
    }
}

/// Slurm's backfill plans every job it cannot start, not only the first, as conservative
/// backfilling does. On 4 processors, job 0 holds 2 until 100 s and job 1 holds 1 until 50 s.
/// Job 2 needs all 4 (planned at 100 s); job 3 needs 2 for 40 s (planned at 50 s, in the
/// hole before job 2); job 4 needs the 1 free processor for 90 s. EASY plans only job 2, so
/// job 4 starts at once and job 3 waits until 110 s. Slurm's backfill (`bf_resolution=1`, so
/// that plans hold exactly their spans), at 30 s, does not start job 4 (it would delay job 3's
/// plan); at 50 s the main scheduler stops at job 2, so job 3 starts at the 60-s cycle, and
/// job 4 after job 2. At Slurm's default `bf_resolution=60`, job 2's plan at 100 s holds from
/// 60 s (its start rounded down), so job 3 cannot start in the hole at 60 s and waits for job
/// 2 too.
#[test]
fn slurm_backfill_plans_every_job_it_cannot_start() {
    let jobs = [
        job(0, 0.0, 100.0, 100.0, 2.0),
        job(1, 0.0, 50.0, 50.0, 1.0),
        job(2, 1.0, 10.0, 10.0, 4.0),
        job(3, 2.0, 40.0, 40.0, 2.0),
        job(4, 3.0, 90.0, 90.0, 1.0),
    ];
    let easy = replay(pool(4.0), SchedulerEntry::EASY, FillRule::HeadOfLine, &jobs);
    assert_eq!(starts(&easy), [0.0, 0.0, 100.0, 110.0, 3.0]);
    let slurm = |bf_resolution_s| {
        let scheduler = slurm_with(SlurmParameters {
            bf_resolution_s,
            ..at_every_event()
        });
        starts(&replay_config(
            &config_for("fifo", pool(4.0), scheduler, &jobs),
            &jobs,
        ))
    };
    assert_eq!(slurm(1), [0.0, 0.0, 100.0, 60.0, 110.0]);
    assert_eq!(slurm(60), [0.0, 0.0, 100.0, 110.0, 110.0]);
}

/// Slurm's backfill plans nodes, not processors: a planned job holds the rest of each node it
/// is planned on, so nothing later starts there before it. On two nodes of 4 processors, job 0
/// holds 2 of node 0 and job 1 all of node 1 until 100 s; job 2 (3 processors on one node) is
/// planned on node 0 at 100 s; job 3 (1 processor, 200 s) would fit beside it there. Under
/// conservative backfilling, which plans processors, it starts at once; under Slurm's it
/// waits until job 2 starts.
#[test]
fn slurm_backfill_plans_whole_nodes() {
    let machines = || two_nodes(4.0);
    let mut jobs = [
        job(0, 0.0, 100.0, 100.0, 2.0),
        job(1, 0.0, 100.0, 100.0, 4.0),
        job(2, 1.0, 10.0, 10.0, 3.0),
        job(3, 2.0, 200.0, 200.0, 1.0),
    ];
    jobs.iter_mut().for_each(|j| j.nodes = Some(1));
    let conservative = replay(
        machines(),
        SchedulerEntry::CONSERVATIVE,
        FillRule::HeadOfLine,
        &jobs,
    );
    assert_eq!(starts(&conservative), [0.0, 0.0, 100.0, 2.0]);
    let slurm = replay(
        machines(),
        SchedulerEntry::SLURM,
        FillRule::HeadOfLine,
        &jobs,
    );
    assert_eq!(starts(&slurm), [0.0, 0.0, 100.0, 100.0]);
}

/// Slurm's backfill plans a job where its will-run test puts it, not at the earliest instant
/// it fits. On two nodes of 8 processors, job 0 fills node 0 until 100 s and job 1 holds 6 of
/// node 1 until 90 s; job 2 (8 processors on one node) fits first on node 1 at 90 s. Slurm
/// takes the running jobs away in a batch (every end within 30 s past 90 s rounded up to
/// 120 s: both), finds room on node 0 once both are gone, and plans job 2 there from the last
/// end, 100 s. Node 1 stays unplanned, so job 3 (1 processor, 50 s) starts beside job 1 at
/// the 30-s cycle; planned at the earliest fit, job 2 would hold node 1 from 60 s and job 3
/// would wait for job 0's end. Job 2 starts at 90 s either way (the main scheduler, when job 1
/// ends).
#[test]
fn slurm_backfill_plans_where_its_will_run_test_puts_a_job() {
    let machines = two_nodes(8.0);
    let mut jobs = [
        job(0, 0.0, 100.0, 100.0, 8.0),
        job(1, 0.0, 90.0, 90.0, 6.0),
        job(2, 1.0, 10.0, 100.0, 8.0),
        job(3, 2.0, 50.0, 60.0, 1.0),
    ];
    jobs.iter_mut().for_each(|j| j.nodes = Some(1));
    let slurm = replay(machines, SchedulerEntry::SLURM, FillRule::HeadOfLine, &jobs);
    assert_eq!(starts(&slurm), [0.0, 0.0, 90.0, 30.0]);
}

/// `jobs` replayed by `--scheduler slurm` under `priority` and `policy`, on `capacity`, each
/// job its own user's unless it says otherwise.
fn replay_under_priority(
    capacity: Capacity,
    policy: &str,
    priority: fairshare_core::priority::multifactor::JobPriority,
    jobs: &[Task],
) -> PolicyResult {
    let scheduler = slurm_under(priority);
    replay_config(&config_for(policy, capacity, scheduler, jobs), jobs)
}

/// `--scheduler slurm` with Slurm's defaults but for `priority`.
fn slurm_under(priority: fairshare_core::priority::multifactor::JobPriority) -> Arc<dyn Scheduler> {
    slurm_with(SlurmParameters {
        priority,
        ..at_every_event()
    })
}

/// `--scheduler slurm` with `parameters`.
fn slurm_with(parameters: SlurmParameters) -> Arc<dyn Scheduler> {
    let settings = SchedulerSettings {
        slurm: parameters,
        ..SchedulerSettings::default()
    };
    SchedulerEntry::SLURM.configured(&settings)
}

/// Nodes `a`, of partition `p0`, and `b`, of `p1`, of 4 processors each.
fn two_partitions() -> Capacity {
    let node = |name: &str, partition: &str| {
        let mut node = NodeType::new(name, 1, vec![4.0]);
        node.properties = vec![partition_property(partition)];
        node
    };
    Capacity::Machines(MachineCatalogue::new(vec![
        node("a", "p0"),
        node("b", "p1"),
    ]))
}

/// Slurm runs no pass where a plan of its backfill begins: nodes `a` (partition p0) and `b`
/// (p1) of 4 processors; job 0 fills `a` from 1 s, past its 100-s limit; job 1 (p0) waits
/// for it, planned by the backfill at 30 s to start at job 0's limit, 101. Job 2 (p1),
/// submitted at 101.5, asks for a pass, which runs at the next second, 102: no pass ran at
/// 101 to space it to 104.
#[test]
fn slurm_runs_no_pass_where_a_plan_begins() {
    let nodes = two_partitions();
    let jobs = [
        in_partition(job(0, 0.0, 200.0, 100.0, 4.0), 0),
        in_partition(job(1, 1.0, 10.0, 100.0, 4.0), 0),
        in_partition(job(2, 101.5, 10.0, 100.0, 1.0), 1),
    ];
    let scheduler = slurm_with(SlurmParameters {
        bf_resolution_s: 1,
        ..SlurmParameters::default()
    });
    let config = ClusterConfig {
        partitions: ["p0", "p1"].map(Partition::named).to_vec(),
        ..config_for("fifo", nodes, scheduler, &jobs)
    };
    let result = replay_config(&config, &jobs);
    let job_2 = result.jobs.iter().find(|j| j.id == 2).unwrap();
    assert_eq!(job_2.start.as_secs_f64(), 102.0);
}

/// Two nodes of 4 processors, `a` in partition `p0` and `b` in `p1`; job 0 fills `a` until
/// 100 s. Job 1 (partition p0) waits for it; job 2 (p1), submitted after, fits on `b`: Slurm's
/// main scheduler blocks p0 at job 1 and starts job 2 at once, not at its backfill cycle.
/// Job 3 (p0) waits for `a` although `b` has room; job 4 names a partition no node declares,
/// so it may run anywhere, and starts on `b` at once. Without the partitions declared, every
/// job may use either node, and the first that does not fit stops the main scheduler.
#[test]
fn slurm_blocks_partition_by_partition_and_keeps_jobs_on_their_partitions_nodes() {
    let declared = two_partitions();
    let jobs = [
        in_partition(job(0, 0.0, 100.0, 100.0, 4.0), 0),
        in_partition(job(1, 1.0, 10.0, 10.0, 2.0), 0),
        in_partition(job(2, 2.0, 10.0, 10.0, 2.0), 1),
        in_partition(job(3, 3.0, 10.0, 10.0, 1.0), 0),
        in_partition(job(4, 4.0, 10.0, 10.0, 1.0), 2),
    ];
    let slurm = |capacity: Capacity| {
        let scheduler = slurm_with(at_every_event());
        let config = ClusterConfig {
            partitions: ["p0", "p1", "p2"].map(Partition::named).to_vec(),
            ..config_for("fifo", capacity, scheduler, &jobs)
        };
        replay_config(&config, &jobs)
    };
    let result = slurm(declared);
    assert_eq!(starts(&result), [0.0, 100.0, 2.0, 100.0, 4.0]);
    assert_eq!(result.tasks_with_unknown_properties, 1, "job 4's partition");
    let nodes_of = |id: u64| {
        let job = result.jobs.iter().find(|j| j.id == id).unwrap();
        job.placed.iter().map(|(node, _)| *node).collect::<Vec<_>>()
    };
    assert_eq!(
        nodes_of(3),
        nodes_of(0),
        "job 3 runs on a, its partition's node"
    );
    let undeclared = two_nodes(4.0);
    let result = slurm(undeclared);
    assert_eq!(starts(&result), [0.0, 1.0, 2.0, 11.0, 11.0]);
    assert_eq!(
        result.tasks_with_unknown_properties, 0,
        "no partition is enforced"
    );
}

/// Nodes `a` (partition `lo`) and `s` (partitions `lo` and `hi`), 4 processors each.
fn lo_and_shared_hi() -> Capacity {
    let node = |name: &str, partitions: &[&str]| {
        let mut node = NodeType::new(name, 1, vec![4.0]);
        node.properties = partitions.iter().map(|p| partition_property(p)).collect();
        node
    };
    Capacity::Machines(MachineCatalogue::new(vec![
        node("a", &["lo"]),
        node("s", &["lo", "hi"]),
    ]))
}

/// `task` in the trace's partition `partition`, on one node.
fn in_partition(mut task: Task, partition: u32) -> Task {
    task.partition = Some(partition);
    task.nodes = Some(1);
    task
}

/// Partition `lo` has nodes `a` and `s`, partition `hi` only `s` (4 processors each). Job 0
/// (hi, 2 processors) holds half of `s` and job 1 (lo) all of `a` until 100 s; job 2 (hi)
/// waits for all of `s`. Job 3 (lo, 2 processors for 10 s) would fit on the other half of
/// `s` at once, but Slurm's main scheduler keeps every pass off a blocked partition's nodes,
/// so it starts only at the first backfill cycle (30 s), which does not (and delays job 2's
/// plan at 100 s in nothing). With the fence left out of the main scheduler, it started at 3 s.
#[test]
fn slurm_keeps_the_main_scheduler_off_a_blocked_partitions_shared_nodes() {
    let capacity = lo_and_shared_hi();
    let jobs = [
        in_partition(job(0, 0.0, 100.0, 100.0, 2.0), 1),
        in_partition(job(1, 1.0, 100.0, 100.0, 4.0), 0),
        in_partition(job(2, 2.0, 10.0, 10.0, 4.0), 1),
        in_partition(job(3, 3.0, 10.0, 10.0, 2.0), 0),
    ];
    let scheduler = slurm_with(at_every_event());
    let config = ClusterConfig {
        partitions: ["lo", "hi"].map(Partition::named).to_vec(),
        ..config_for("fifo", capacity, scheduler, &jobs)
    };
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [0.0, 1.0, 100.0, 30.0]);
    let job_3 = result.jobs.iter().find(|j| j.id == 3).unwrap();
    assert_eq!(
        job_3
            .placed
            .iter()
            .map(|(node, _)| *node)
            .collect::<Vec<_>>(),
        [1],
        "on s"
    );
}

/// Partitions `lo` and `hi` share one node of 4 processors, which job 0 (lo) holds until
/// 100 s; job 1 (lo) and then job 2 (hi) wait for all of it. In FIFO order job 1 goes first;
/// with `hi` on a higher `PriorityTier`, or with a higher partition factor weighted by
/// `PriorityWeightPartition` (the policy's site factor weighing nothing), job 2 does.
#[test]
fn slurm_serves_a_higher_partition_tier_or_factor_first() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut node = NodeType::new("n", 1, vec![4.0]);
    node.properties = vec![partition_property("lo"), partition_property("hi")];
    let shared = Capacity::Machines(MachineCatalogue::new(vec![node]));
    let jobs = [
        in_partition(job(0, 0.0, 100.0, 100.0, 4.0), 0),
        in_partition(job(1, 1.0, 10.0, 10.0, 4.0), 0),
        in_partition(job(2, 2.0, 10.0, 10.0, 4.0), 1),
    ];
    let run_with = |partitions: [Partition; 2], priority: JobPriority| {
        let scheduler = slurm_under(priority);
        let config = ClusterConfig {
            partitions: partitions.to_vec(),
            ..config_for("fifo", shared.clone(), scheduler, &jobs)
        };
        starts(&replay_config(&config, &jobs))
    };
    let partition = |name: &str, tier, factor| Partition {
        tier,
        factor,
        ..Partition::named(name)
    };
    let alike = [partition("lo", 1, 1.0), partition("hi", 1, 1.0)];
    assert_eq!(
        run_with(alike.clone(), JobPriority::default()),
        [0.0, 100.0, 110.0]
    );
    let tiered = [partition("lo", 1, 1.0), partition("hi", 2, 1.0)];
    assert_eq!(
        run_with(tiered, JobPriority::default()),
        [0.0, 110.0, 100.0]
    );
    let factors = [partition("lo", 1, 0.25), partition("hi", 1, 1.0)];
    let weighted = JobPriority {
        site_weight: 0.0,
        partition_weight: 1000.0,
        ..JobPriority::default()
    };
    assert_eq!(run_with(factors.clone(), weighted), [0.0, 110.0, 100.0]);
    assert_eq!(
        run_with(factors, JobPriority::default()),
        [0.0, 100.0, 110.0],
        "no weight"
    );
}

/// Partition `whole` (`OverSubscribe=EXCLUSIVE`) gives each job its node whole: on one node
/// of 4 processors, job 0's single processor keeps job 1 (one processor too) waiting until
/// job 0 ends at 100 s; in a partition that shares nodes, job 1 starts beside it at once.
#[test]
fn slurm_gives_the_jobs_of_an_exclusive_partition_whole_nodes() {
    let mut node = NodeType::new("n", 1, vec![4.0]);
    node.properties = vec![partition_property("whole")];
    let capacity = Capacity::Machines(MachineCatalogue::new(vec![node]));
    let jobs = [
        in_partition(job(0, 0.0, 100.0, 100.0, 1.0), 0),
        in_partition(job(1, 1.0, 10.0, 10.0, 1.0), 0),
    ];
    let run_with = |exclusive: bool| {
        let config = ClusterConfig {
            partitions: vec![Partition {
                exclusive,
                ..Partition::named("whole")
            }],
            ..config_for(
                "fifo",
                capacity.clone(),
                slurm_with(at_every_event()),
                &jobs,
            )
        };
        starts(&replay_config(&config, &jobs))
    };
    assert_eq!(run_with(true), [0.0, 100.0]);
    assert_eq!(run_with(false), [0.0, 1.0]);
}

/// On 4 processors held by job 0 until 100 s, job 1 (QOS `normal`) and then job 2 (QOS
/// `high`) wait for all of them. With `PriorityWeightQOS` weighing `high`'s factor 1 against
/// `normal`'s 0.1 (and the policy's site factor nothing), job 2 goes first; without the
/// weight, or with both QOS' factors equal, job 1 does. A QOS beyond the list has factor 0.
#[test]
fn slurm_qos_factor_starts_the_job_of_the_higher_qos_first() {
    use fairshare_core::priority::multifactor::JobPriority;
    let with_qos = |mut task: Task, qos: u32| {
        task.qos = Some(qos);
        task
    };
    let jobs = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        with_qos(job(1, 1.0, 10.0, 10.0, 4.0), 0),
        with_qos(job(2, 2.0, 10.0, 10.0, 4.0), 1),
        with_qos(job(3, 3.0, 10.0, 10.0, 4.0), 7),
    ];
    let run_with = |factors: &[f64], qos_weight: f64| {
        let priority = JobPriority {
            site_weight: 0.0,
            qos_weight,
            ..JobPriority::default()
        };
        let config = ClusterConfig {
            qos_factors: factors.to_vec(),
            assoc_factors: Vec::new(),
            opens: None,
            limits: Vec::new(),
            ..config_for("fifo", pool(4.0), slurm_under(priority), &jobs)
        };
        starts(&replay_config(&config, &jobs))
    };
    assert_eq!(run_with(&[0.1, 1.0], 1000.0), [0.0, 110.0, 100.0, 120.0]);
    assert_eq!(
        run_with(&[0.1, 1.0], 0.0),
        [0.0, 100.0, 110.0, 120.0],
        "no weight"
    );
    assert_eq!(
        run_with(&[1.0, 1.0], 1000.0),
        [0.0, 100.0, 110.0, 120.0],
        "equal"
    );
}

/// On 4 processors held by job 0 until 100 s, job 1 (user 1) and then job 2 (user 2) wait
/// for all of them. With `PriorityWeightAssoc` weighing user 2's association factor 1 against
/// user 1's 0.2 (and the policy's site factor nothing), job 2 goes first; without the weight,
/// or when user 2 is beyond the list of factors (factor 0), job 1 does.
#[test]
fn slurm_association_factor_starts_the_job_of_the_higher_association_first() {
    use fairshare_core::priority::multifactor::JobPriority;
    let jobs = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        job(1, 1.0, 10.0, 10.0, 4.0),
        job(2, 2.0, 10.0, 10.0, 4.0),
    ];
    let run_with = |factors: &[f64], assoc_weight: f64| {
        let priority = JobPriority {
            site_weight: 0.0,
            assoc_weight,
            ..JobPriority::default()
        };
        let config = ClusterConfig {
            assoc_factors: factors.to_vec(),
            opens: None,
            limits: Vec::new(),
            ..config_for("fifo", pool(4.0), slurm_under(priority), &jobs)
        };
        starts(&replay_config(&config, &jobs))
    };
    assert_eq!(run_with(&[0.0, 0.2, 1.0], 1000.0), [0.0, 110.0, 100.0]);
    assert_eq!(
        run_with(&[0.0, 0.2, 1.0], 0.0),
        [0.0, 100.0, 110.0],
        "no weight"
    );
    assert_eq!(
        run_with(&[0.0, 0.2], 1000.0),
        [0.0, 100.0, 110.0],
        "user 2 unlisted"
    );
}

/// Slurm's TRES factor, on a pool of 4 processors and 4 units of memory held by job 0 until
/// 100 s: job 1 (1 processor, all the memory) and then job 2 (all 4 processors, no memory)
/// wait. With `PriorityWeightTRES=CPU=1000`, job 2's 4 of the 4 CPUs (1,000 points) outrank
/// job 1's 1 of 4 (250), and it starts first; with `Mem=1000`, job 1's memory puts it first
/// again; with `Node=1000`, both ask the one node (1,000 each) and the older goes first.
#[test]
fn slurm_tres_factor_starts_the_job_asking_more_of_a_weighted_tres_first() {
    use fairshare_core::priority::multifactor::{JobPriority, Tres};
    let with_memory = |mut task: Task, memory: f64| {
        task.demand.push(memory);
        task
    };
    let jobs = [
        with_memory(job(0, 0.0, 100.0, 100.0, 4.0), 4.0),
        with_memory(job(1, 1.0, 10.0, 10.0, 1.0), 4.0),
        with_memory(job(2, 2.0, 10.0, 10.0, 4.0), 0.0),
    ];
    let run_with = |tres_weights: Tres| {
        let priority = JobPriority {
            site_weight: 0.0,
            tres_weights,
            ..JobPriority::default()
        };
        let config = ClusterConfig {
            resources: vec!["cpu".into(), "mem".into()],
            ..config_for(
                "fifo",
                Capacity::Pool(vec![4.0, 4.0]),
                slurm_under(priority),
                &jobs,
            )
        };
        starts(&replay_config(&config, &jobs))
    };
    let weight = |cpu, mem, node| Tres {
        cpu,
        mem,
        node,
        gpu: 0.0,
    };
    assert_eq!(run_with(weight(1000.0, 0.0, 0.0)), [0.0, 110.0, 100.0]);
    assert_eq!(run_with(weight(0.0, 1000.0, 0.0)), [0.0, 100.0, 110.0]);
    assert_eq!(run_with(weight(1000.0, 4000.0, 0.0)), [0.0, 100.0, 110.0]);
    assert_eq!(run_with(weight(0.0, 0.0, 1000.0)), [0.0, 100.0, 110.0]);
}

/// The TRES factor is a share of the job's partition: nodes `a` (partition `lo`) and `s`
/// (`lo` and `hi`), 4 processors each, `a` full until 200 s and `s` until 100 s. Job 2 (`lo`,
/// 4 processors) and then job 3 (`hi`, 4 processors) wait for `s`; with
/// `PriorityWeightTRES=CPU=1000`, job 3's 4 of `hi`'s 4 CPUs (1,000 points) outrank job 2's 4
/// of `lo`'s 8 (500), and job 3 takes `s` first (as shares of the whole cluster, both would
/// be 500, and the older would).
#[test]
fn slurm_tres_factor_is_a_share_of_the_jobs_partition() {
    use fairshare_core::priority::multifactor::{JobPriority, Tres};
    let capacity = lo_and_shared_hi();
    let jobs = [
        in_partition(job(0, 0.0, 200.0, 200.0, 4.0), 0),
        in_partition(job(1, 0.0, 100.0, 100.0, 4.0), 1),
        in_partition(job(2, 1.0, 10.0, 10.0, 4.0), 0),
        in_partition(job(3, 2.0, 10.0, 10.0, 4.0), 1),
    ];
    let run_with = |cpu| {
        let priority = JobPriority {
            site_weight: 0.0,
            tres_weights: Tres {
                cpu,
                ..Tres::default()
            },
            ..JobPriority::default()
        };
        let config = ClusterConfig {
            partitions: ["lo", "hi"].map(Partition::named).to_vec(),
            ..config_for("fifo", capacity.clone(), slurm_under(priority), &jobs)
        };
        starts(&replay_config(&config, &jobs))
    };
    assert_eq!(run_with(1000.0), [0.0, 0.0, 110.0, 100.0]);
    assert_eq!(run_with(0.0), [0.0, 0.0, 100.0, 110.0]);
}

/// Slurm's job size factor puts a large job before a small one that came first. On 4
/// processors held by job 0 until 100 s, job 1 (1 processor) and then job 2 (all 4) wait.
/// Ordered by the policy alone (FIFO), job 1 starts at 100 s and job 2 after it; with
/// `PriorityWeightJobSize` well above the policy's site factor, job 2 goes first — whether
/// it is another user's job or a later job of job 1's user.
#[test]
fn slurm_job_size_factor_starts_the_larger_job_first() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut jobs = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        job(1, 1.0, 10.0, 10.0, 1.0),
        job(2, 2.0, 10.0, 10.0, 4.0),
    ];
    let alone = JobPriority::default();
    let sized = JobPriority {
        site_weight: 1000.0,
        size_weight: 100_000.0,
        ..JobPriority::default()
    };
    assert_eq!(
        starts(&replay_under_priority(pool(4.0), "fifo", alone, &jobs)),
        [0.0, 100.0, 110.0]
    );
    assert_eq!(
        starts(&replay_under_priority(pool(4.0), "fifo", sized, &jobs)),
        [0.0, 110.0, 100.0]
    );
    jobs[2].user = 1;
    assert_eq!(
        starts(&replay_under_priority(pool(4.0), "fifo", sized, &jobs)),
        [0.0, 110.0, 100.0]
    );
}

/// On 4 processors, user 2's job 0 holds them until 100 s; users 0 and 1 each submit two
/// 4-processor jobs of 10 s (jobs 1 and 3, 2 and 4), one a second from 1 s.
fn two_users_after_one_job() -> [Task; 5] {
    let mut jobs = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        job(1, 1.0, 10.0, 10.0, 4.0),
        job(2, 2.0, 10.0, 10.0, 4.0),
        job(3, 3.0, 10.0, 10.0, 4.0),
        job(4, 4.0, 10.0, 10.0, 4.0),
    ];
    for (job, user) in jobs.iter_mut().zip([2, 0, 1, 0, 1]) {
        job.user = user;
    }
    jobs
}

/// Under a policy that reaches Slurm through the adapter, each run of one user's starts in
/// the policy's order gets a site factor of its own, as `fairshare slurm watch` writes them.
/// On 4 processors held by job 0 until 100 s, users 0 and 1 each submit two 4-processor jobs
/// (1 to 4 s). At the adapter's pass due at 60 s (every 60 s), which runs at the next event,
/// 100 s, before job 0's end there, SDRF plays their starts out as
/// turns — 0, 1, 0, 1 — and the four runs get 1000, 750, 500 and 250, so user 1's first job
/// starts before user 0's second; one factor per user (user 0's 1000 on both its jobs) would
/// have started both of user 0's jobs first. FIFO's order of starts is the jobs' own. The
/// same whether or not another term weighs in: Slurm's order is the site factors'.
#[test]
fn the_adapters_site_factors_follow_the_policys_runs_of_starts() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut jobs = two_users_after_one_job();
    // An age term too small to reorder anything.
    let adapter = JobPriority {
        site_weight: 1000.0,
        site_interval_s: 60.0,
        age_weight: 1.0,
        ..JobPriority::default()
    };
    let alone = JobPriority {
        age_weight: 0.0,
        ..adapter
    };
    for (policy, priority) in [("sdrf", adapter), ("fifo", adapter), ("sdrf", alone)] {
        assert_eq!(
            starts(&replay_under_priority(pool(4.0), policy, priority, &jobs)),
            [0.0, 100.0, 110.0, 120.0, 130.0],
            "{policy}, {priority:?}"
        );
    }
    // Jobs 3 and 4 swap users: SDRF's play at 100 s serves users 0 and 1 in turn, so user 0's
    // job 4 (500) goes before user 1's job 3 (250); FIFO serves by age.
    jobs[3].user = 1;
    jobs[4].user = 0;
    let sdrf = starts(&replay_under_priority(pool(4.0), "sdrf", adapter, &jobs));
    assert_eq!(sdrf, [0.0, 100.0, 110.0, 130.0, 120.0]);
    let fifo = starts(&replay_under_priority(pool(4.0), "fifo", adapter, &jobs));
    assert_eq!(fifo, [0.0, 100.0, 110.0, 120.0, 130.0]);
    // Passes every 1,000 s: none falls after the submissions before 1,000 s, every job keeps
    // the submit table's factor (the whole weight) and Slurm serves by age; with the passes
    // 50 s past each multiple, one falls at the first event after 50 s and SDRF's runs order
    // the jobs again.
    let seldom = JobPriority {
        site_interval_s: 1000.0,
        ..adapter
    };
    let never = starts(&replay_under_priority(pool(4.0), "sdrf", seldom, &jobs));
    assert_eq!(never, [0.0, 100.0, 110.0, 120.0, 130.0]);
    let offset = JobPriority {
        site_offset_s: 50.0,
        ..seldom
    };
    let once = starts(&replay_under_priority(pool(4.0), "sdrf", offset, &jobs));
    assert_eq!(once, [0.0, 100.0, 110.0, 130.0, 120.0]);
}

/// The adapter's `ranked_runs` and `ends_at_limits` are the model's too, at one pass at 100 s.
/// With one run ranked, SDRF's turns 0, 1, 0, 1 become user 0's first job (1000), then user 1's
/// two together (667), then user 0's second (333): user 1's second job starts before user
/// 0's. Under DRF, on 8 processors held at the adapter's pass at 100 s by user 0 (5, its job
/// limited to 100 s) and user 1 (3, to 300 s), each waiting with a 5-processor job: a play
/// that expects no end ranks the machine as it is, user 1 (holding less) first; one that
/// expects user 0's job to end at 100 s sees user 0 holding nothing then, and ranks it first.
#[test]
fn the_adapters_ranked_runs_and_ends_at_limits_are_modelled() {
    use fairshare_core::priority::multifactor::JobPriority;
    let jobs = two_users_after_one_job();
    // One pass only, at the first event after 50 s: 100 s.
    let adapter = JobPriority {
        site_weight: 1000.0,
        site_interval_s: 1000.0,
        site_offset_s: 50.0,
        ..JobPriority::default()
    };
    let one_run = JobPriority {
        site_ranked_runs: 1,
        ..adapter
    };
    let every = starts(&replay_under_priority(pool(4.0), "sdrf", adapter, &jobs));
    assert_eq!(every, [0.0, 100.0, 110.0, 120.0, 130.0]);
    let one = starts(&replay_under_priority(pool(4.0), "sdrf", one_run, &jobs));
    assert_eq!(one, [0.0, 100.0, 110.0, 130.0, 120.0]);

    let mut full = [
        job(0, 0.0, 100.0, 100.0, 5.0),
        job(1, 0.0, 300.0, 300.0, 3.0),
        job(2, 1.0, 10.0, 10.0, 5.0),
        job(3, 2.0, 10.0, 10.0, 5.0),
    ];
    for (job, user) in full.iter_mut().zip([0, 1, 0, 1]) {
        job.user = user;
    }
    let ending = JobPriority {
        site_ends_at_limits: true,
        ..adapter
    };
    let as_is = starts(&replay_under_priority(pool(8.0), "drf", adapter, &full));
    assert_eq!(as_is, [0.0, 0.0, 110.0, 100.0], "user 1 first");
    let ends = starts(&replay_under_priority(pool(8.0), "drf", ending, &full));
    assert_eq!(
        ends,
        [0.0, 0.0, 100.0, 110.0],
        "user 0, whose job ends, first"
    );

    // Pending jobs end at their limits in the play too. User 0's job 0 ends at 100 s, user
    // 1's job 1 holds 4 processors to 300 s; user 0 waits with jobs 2 and 3, user 1 with job
    // 4, each of 10 s. Job 2 starts at 100 s and is expected to end at 110 s, when user 0,
    // holding nothing again, is DRF's choice: jobs 2 and 3 make one run, ahead of job 4.
    // Were job 2 not expected to end, user 1 would come next at 300 s, ahead of job 3.
    let mut two = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        job(1, 0.0, 300.0, 300.0, 4.0),
        job(2, 1.0, 10.0, 10.0, 4.0),
        job(3, 2.0, 10.0, 10.0, 4.0),
        job(4, 3.0, 10.0, 10.0, 4.0),
    ];
    for (job, user) in two.iter_mut().zip([0, 1, 0, 0, 1]) {
        job.user = user;
    }
    let ends = starts(&replay_under_priority(pool(8.0), "drf", ending, &two));
    assert_eq!(ends, [0.0, 0.0, 100.0, 110.0, 120.0]);
    let as_is = starts(&replay_under_priority(pool(8.0), "drf", adapter, &two));
    assert_eq!(as_is, [0.0, 0.0, 100.0, 120.0, 110.0]);
}

/// The adapter's `submit_table` is the model's too. On 4 processors user 1 holds all of them
/// to 100 s and waits with job 1; user 0 waits with job 2. The adapter's one pass, at 60 s
/// just before user 0 submits job 3, gives job 2 (DRF's first: user 0 holds nothing) the
/// whole weight and job 1 less. Without a submit table job 3 waits with no site factor, after
/// job 1; with one it gets user 0's factor at submission and starts before job 1.
#[test]
fn the_adapters_submit_table_is_modelled() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut jobs = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        job(1, 1.0, 10.0, 10.0, 4.0),
        job(2, 2.0, 10.0, 10.0, 4.0),
        job(3, 60.0, 10.0, 10.0, 4.0),
    ];
    for (job, user) in jobs.iter_mut().zip([1, 1, 0, 0]) {
        job.user = user;
    }
    let table = JobPriority {
        site_weight: 1000.0,
        site_interval_s: 1000.0,
        site_offset_s: 50.0,
        ..JobPriority::default()
    };
    let none = JobPriority {
        site_submit_table: false,
        ..table
    };
    let with_table = starts(&replay_under_priority(pool(4.0), "drf", table, &jobs));
    assert_eq!(with_table, [0.0, 120.0, 100.0, 110.0], "job 3 before job 1");
    let without = starts(&replay_under_priority(pool(4.0), "drf", none, &jobs));
    assert_eq!(without, [0.0, 110.0, 100.0, 120.0], "job 3 after job 1");
}

/// The adapter's `partitions` are the model's too. Node `a` (partition p0) and node `b` (p1)
/// of 4 processors: user 0 holds 2 of `a`'s to 100 s, user 1 all of `b`'s; both wait in p0.
/// Counting every partition, user 1 holds more (4 of 8 processors against 2) and DRF ranks
/// user 0 first; ranking p0 alone, its nodes the whole, user 1 holds nothing there and goes
/// first. The same on a pool of 8 processors, where no node declares a partition: the jobs'
/// partitions still say which are ranked.
#[test]
fn the_adapters_partitions_are_modelled() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut jobs = [
        in_partition(job(0, 0.0, 100.0, 100.0, 2.0), 0),
        in_partition(job(1, 0.0, 1000.0, 1000.0, 4.0), 1),
        in_partition(job(2, 1.0, 10.0, 10.0, 4.0), 0),
        in_partition(job(3, 2.0, 10.0, 10.0, 4.0), 0),
        in_partition(job(4, 60.0, 10.0, 10.0, 1.0), 1),
    ];
    for (job, user) in jobs.iter_mut().zip([0, 1, 0, 1, 2]) {
        job.user = user;
    }
    let priority = JobPriority {
        site_weight: 1000.0,
        site_interval_s: 1000.0,
        site_offset_s: 50.0,
        ..JobPriority::default()
    };
    let starts_with = |adapter_partitions: Vec<String>, capacity: Capacity| {
        let scheduler = slurm_with(SlurmParameters {
            priority,
            adapter_partitions,
            ..SlurmParameters::default()
        });
        let config = ClusterConfig {
            partitions: ["p0", "p1"].map(Partition::named).to_vec(),
            ..config_for("drf", capacity, scheduler, &jobs)
        };
        starts(&replay_config(&config, &jobs))
    };
    for capacity in [two_partitions(), pool(8.0)] {
        let every = starts_with(Vec::new(), capacity.clone());
        assert!(every[2] < every[3], "user 0's job first: {every:?}");
        let p0 = starts_with(vec!["p0".into()], capacity);
        assert!(p0[3] < p0[2], "user 1's job first: {p0:?}");
    }
}

/// Slurm's age factor lets an older job of a user with the lower fairshare factor go first.
/// Under Fair Tree recomputed each minute, user 0 has used the 4 processors since 0 s when
/// its job 1 (submitted at 10 s) and user 1's job 2 (at 90 s) wait for them; at the 60-s
/// recomputation user 0's factor is 1/2, user 1's is 1. By fairshare alone, job 2 starts
/// first when job 0 ends at 100 s. With `PriorityWeightAge` equal to the fairshare weight and
/// `PriorityMaxAge` 50 s, job 1's priority at 60 s is 50,000 + 100,000, above job 2's 100,000
/// (computed at its submission, age 0), so job 1 starts first.
#[test]
fn slurm_age_factor_lets_an_older_job_of_a_heavier_user_go_first() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut jobs = [
        job(0, 0.0, 100.0, 100.0, 4.0),
        job(1, 10.0, 10.0, 10.0, 4.0),
        job(2, 90.0, 10.0, 10.0, 4.0),
    ];
    jobs[1].user = 0;
    jobs[2].user = 1;
    let policy = "fairshare:function=fair-tree,refresh=60";
    let fairshare = JobPriority {
        fairshare_weight: 100_000.0,
        calc_period_s: 60.0,
        ..JobPriority::default()
    };
    let aged = JobPriority {
        age_weight: 100_000.0,
        max_age_s: 50.0,
        ..fairshare
    };
    let machine = || pool(4.0);
    assert_eq!(
        starts(&replay_under_priority(machine(), policy, fairshare, &jobs)),
        [0.0, 110.0, 100.0]
    );
    assert_eq!(
        starts(&replay_under_priority(machine(), policy, aged, &jobs)),
        [0.0, 100.0, 110.0]
    );
    // With PriorityMaxAge 200 s, job 1's age term at 60 s is a quarter of the weight (25,000):
    // fairshare decides again.
    let slow = JobPriority {
        max_age_s: 200.0,
        ..aged
    };
    assert_eq!(
        starts(&replay_under_priority(machine(), policy, slow, &jobs)),
        [0.0, 110.0, 100.0]
    );
}

/// A user's own jobs change places as they age: Slurm recomputes every pending job's
/// priority each `PriorityCalcPeriod` (60 s here). On 4 processors held by job 0 until 130 s,
/// one user waits with job 1 (1 processor, submitted at 1 s) and job 2 (all 4, at 100 s).
/// Size weight 2000, age weight 1000, `PriorityMaxAge` 100 s: at job 2's submission, job 1's
/// priority (from the 60-s recomputation) is 1250 + 590, below job 2's 2000; at the 120-s
/// recomputation it is 1250 + 1000 against job 2's 2000 + 200, so job 1 starts first at 130 s.
#[test]
fn slurm_recomputes_a_users_order_of_jobs_as_they_age() {
    use fairshare_core::priority::multifactor::JobPriority;
    let mut jobs = [
        job(0, 0.0, 130.0, 130.0, 4.0),
        job(1, 1.0, 10.0, 10.0, 1.0),
        job(2, 100.0, 10.0, 10.0, 4.0),
    ];
    jobs[2].user = 1;
    let priority = JobPriority {
        site_weight: 10.0,
        size_weight: 2000.0,
        age_weight: 1000.0,
        max_age_s: 100.0,
        calc_period_s: 60.0,
        ..JobPriority::default()
    };
    assert_eq!(
        starts(&replay_under_priority(pool(4.0), "fifo", priority, &jobs)),
        [0.0, 130.0, 140.0]
    );
    // Recomputed only every 200 s, job 2 keeps the lead it had at its submission.
    let seldom = JobPriority {
        calc_period_s: 200.0,
        ..priority
    };
    assert_eq!(
        starts(&replay_under_priority(pool(4.0), "fifo", seldom, &jobs)),
        [0.0, 140.0, 130.0]
    );
}

/// A job past its time limit is killed at the limit by EASY; by Slurm at the first check of
/// time limits (every 30 s) once `OverTimeLimit` has passed too, and never when it is
/// `UNLIMITED`. Job 0 asks for 10 s and would run 200 s.
#[test]
fn slurm_kills_a_job_past_its_limit_and_over_time_limit() {
    use fairshare_sim::cluster::{SchedulerSettings, SlurmParameters};
    let jobs = [job(0, 0.0, 200.0, 10.0, 1.0)];
    let end = |scheduler: Arc<dyn Scheduler>| {
        let result = replay_by(pool(4.0), scheduler, &jobs, &[]);
        result.jobs[0].end.as_secs_f64()
    };
    let slurm = |over_time_s| {
        let slurm = SlurmParameters {
            over_time_s,
            ..at_every_event()
        };
        let settings = SchedulerSettings {
            slurm,
            ..SchedulerSettings::default()
        };
        end(SchedulerEntry::SLURM.configured(&settings))
    };
    assert_eq!(
        end(SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine)),
        10.0
    );
    assert_eq!(slurm(Some(0)), 40.0);
    assert_eq!(slurm(Some(60)), 100.0);
    assert_eq!(slurm(None), 200.0);
}

/// With the backfill's cycles read from a log (shown at 12.5 and 72.5 s, `bf_interval` 30 s
/// apart: one more at 42.5), the backfill runs there, not on its grid: on 3 processors job 0
/// holds 2 until 100 s, job 1 (all 3, submitted at 1) blocks the main scheduler, and job 2 (1
/// processor for 10 s, submitted at 5) can only be backfilled: at the cycle at 12.5 s, where
/// without the log it waits for the grid's cycle at 30 s. (The grid has a cycle at 0 that
/// starts job 0 there; with the log, no cycle falls then and the main scheduler starts it at
/// the next second, so job 1 follows it a second later too.)
#[test]
fn backfill_cycles_from_a_log_time_the_backfill() {
    let jobs = [
        job(0, 0.0, 100.0, 100.0, 2.0),
        job(1, 1.0, 10.0, 10.0, 3.0),
        job(2, 5.0, 10.0, 20.0, 1.0),
    ];
    let with_cycles = |bf_cycles: Option<Arc<LoopTurns>>| {
        let parameters = SlurmParameters {
            bf_resolution_s: 1,
            bf_cycles,
            ..SlurmParameters::default()
        };
        starts(&replay_by(pool(3.0), slurm_with(parameters), &jobs, &[]))
    };
    let shown = vec![Time::from_secs_f64(72.5), Time::from_secs_f64(12.5)];
    let logged = with_cycles(Some(Arc::new(LoopTurns::new(shown, 30_000_000))));
    assert_eq!(logged, [1.0, 102.0, 12.5]);
    assert_eq!(with_cycles(None), [0.0, 101.0, 30.0]);
}

/// Two named nodes of 4 processors, `n1` and `n2`, as a Slurm site's catalogue names them.
fn named_nodes() -> Capacity {
    Capacity::Machines(MachineCatalogue::new(vec![
        NodeType::new("n1", 1, vec![4.0]),
        NodeType::new("n2", 1, vec![4.0]),
    ]))
}

/// A window that opens at 100 s on a busy machine, as a window cut from a site's life: job 0,
/// which the record started at 10 s on n2, starts there then (n1 is the first fit) and holds
/// n2 to its end; job 1, submitted at 50 s, waits for the opening though n1 is free (with its
/// own submission, so that its age is right); job 2, submitted after the opening, waits for
/// room. Job 0 is charged, and jobs 0 and 1 are left out of every count and wait: the results
/// count the jobs eligible inside the window, from the opening.
#[test]
fn a_window_opens_on_the_machine_as_the_record_had_it() {
    let mut pinned = job(0, 0.0, 200.0, 300.0, 4.0);
    pinned.start = Some(Time::from_secs_f64(10.0));
    pinned.hosts = vec!["n2".into()];
    let mut waiting = job(1, 50.0, 30.0, 60.0, 4.0);
    waiting.start = Some(Time::from_secs_f64(150.0));
    let jobs = [pinned, waiting, job(2, 120.0, 10.0, 20.0, 4.0)];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    let empty = replay_config(&config, &jobs);
    assert_eq!(starts(&empty), [0.0, 50.0, 120.0], "an empty start");
    config.opens = Some(Time::from_secs_f64(100.0));
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [10.0, 100.0, 130.0]);
    assert_eq!(result.jobs[0].placed, [(1, vec![0.5])], "on n2");
    assert_eq!((result.tasks_pinned, result.tasks_pinned_elsewhere), (1, 0));
    assert_eq!(result.tasks_submitted, 1, "jobs 0 and 1 are not counted");
    let waits: Vec<f64> = result.users.iter().map(|u| u.mean_wait_s).collect();
    assert_eq!(waits, [10.0], "only job 2's user is listed");
    assert_eq!(result.simulated_s, 110.0, "from the opening to job 0's end");
    let opened = result.opened.expect("the machine at the opening");
    assert_eq!((opened.jobs_running, opened.jobs_waiting), (1, 1));
    assert_eq!((opened.held, opened.capacity), (vec![4.0], vec![8.0]));
}

/// A job the record started before the window on a node the catalogue does not name is started
/// at its recorded start where it fits, and counted; one that fits nowhere then waits.
#[test]
fn a_pinned_job_off_the_known_nodes_starts_where_it_fits() {
    let mut elsewhere = job(0, 0.0, 50.0, 60.0, 4.0);
    elsewhere.start = Some(Time::from_secs_f64(5.0));
    elsewhere.hosts = vec!["gone".into()];
    let mut unnamed = job(1, 0.0, 50.0, 60.0, 4.0);
    unnamed.start = Some(Time::from_secs_f64(6.0));
    let mut crowded = job(2, 0.0, 10.0, 60.0, 4.0);
    crowded.start = Some(Time::from_secs_f64(7.0));
    crowded.hosts = vec!["n1".into()];
    let jobs = [elsewhere, unnamed, crowded];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.opens = Some(Time::from_secs_f64(100.0));
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [5.0, 6.0, 55.0]);
    assert_eq!((result.tasks_pinned, result.tasks_pinned_elsewhere), (3, 3));
}

/// The usage of before the window counts as it counted for the site: under a fairshare
/// policy, the user whose job ran before the opening yields to one with no history, though
/// its job waited longer; without that history, the older job goes first.
#[test]
fn the_history_before_a_window_is_charged_to_the_accounting() {
    let capacity = || {
        Capacity::Machines(MachineCatalogue::new(vec![NodeType::new(
            "n1",
            1,
            vec![4.0],
        )]))
    };
    let mut history = job(0, 0.0, 50.0, 60.0, 4.0);
    history.start = Some(Time::ZERO);
    history.hosts = vec!["n1".into()];
    let mut older = job(1, 60.0, 10.0, 20.0, 4.0);
    older.user = 0;
    let mut newer = job(2, 70.0, 10.0, 20.0, 4.0);
    newer.user = 1;
    let easy = || SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let opens = Some(Time::from_secs_f64(100.0));
    let jobs = [history, older.clone(), newer.clone()];
    let mut config = config_for("fairshare", capacity(), easy(), &jobs);
    config.opens = opens;
    assert_eq!(starts(&replay_config(&config, &jobs)), [0.0, 110.0, 100.0]);
    let fresh = [older, newer];
    let mut config = config_for("fairshare", capacity(), easy(), &jobs);
    config.opens = opens;
    assert_eq!(starts(&replay_config(&config, &fresh)), [100.0, 110.0]);
}

/// A site's limit holds a group's jobs without holding anyone else's: u0 may run one job at a
/// time until its cap is raised to two at 5 s, so its second job starts then and its third
/// when its first ends; u1's job, submitted after them, starts at once on the free room, under
/// the main scheduler and backfill alike.
#[test]
fn a_limit_holds_its_groups_jobs_and_passes_over_them() {
    use fairshare_sim::cluster::{Cap, Limit, Scope};
    let mut jobs: Vec<Task> = (0..3)
        .map(|i| job(i, f64::from(i as u32) * 0.1, 10.0, 20.0, 2.0))
        .collect();
    jobs.iter_mut().for_each(|j| j.user = 0);
    jobs.push(job(3, 1.0, 10.0, 20.0, 2.0));
    jobs[3].user = 1;
    let cap = |most| Cap {
        jobs: Some(most),
        held: vec![None],
    };
    let limit = Limit {
        name: "user u0: MaxJobs".into(),
        scope: Scope {
            users: Some(vec![0]),
            ..Scope::default()
        },
        caps: vec![(Time::ZERO, cap(1)), (Time::from_secs_f64(5.0), cap(2))],
    };
    for scheduler in [
        SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine),
        slurm_with(at_every_event()),
    ] {
        let mut config = config_for("fifo", two_nodes(4.0), scheduler, &jobs);
        config.limits = vec![limit.clone()];
        let result = replay_config(&config, &jobs);
        assert_eq!(starts(&result), [0.0, 5.0, 10.0, 1.0]);
        assert_eq!(result.held_by_limits.get("user u0: MaxJobs"), Some(&2));
    }
}

/// A limit lets a job go when the job ends, not when its nodes are released: u0 may run one
/// job at a time; its first ends at 10 s on n1, whose node is completing for 20 ms more, and
/// a pass run at 10.01 s by u1's submission starts u0's second job on n2 at once (Slurm's
/// accounting policy counts the job out at its completion), u1's job taking n1 once it is
/// released. Counted out only with its node, u0's job would wait for n1.
#[test]
fn a_limit_lets_a_job_go_at_its_end_before_its_nodes_are_released() {
    use fairshare_sim::cluster::{Cap, Limit, Scope};
    let mut jobs = vec![
        job(0, 0.0, 10.0, 20.0, 4.0),
        job(1, 0.1, 10.0, 20.0, 4.0),
        job(2, 10.01, 10.0, 20.0, 4.0),
    ];
    jobs[1].user = 0;
    let limit = Limit {
        name: "user u0: MaxJobs".into(),
        scope: Scope {
            users: Some(vec![0]),
            ..Scope::default()
        },
        caps: vec![(
            Time::ZERO,
            Cap {
                jobs: Some(1),
                held: vec![None],
            },
        )],
    };
    let completing = SlurmParameters {
        completing_us: 20_000,
        ..at_every_event()
    };
    let mut config = config_for("fifo", two_nodes(4.0), slurm_with(completing), &jobs);
    config.limits = vec![limit];
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [0.0, 10.01, 10.02]);
    assert_eq!(result.jobs[1].placed[0].0, 1, "on n2");
}

/// A job of processors anywhere that the record ran over two hosts takes, at its recorded
/// start, as many processors on each in turn as fit there (Slurm spreads them unevenly): 2 on
/// n1 beside job 0's 2, then 4 on n2.
#[test]
fn a_pinned_job_of_processors_fills_its_hosts_in_turn() {
    let mut first = job(0, 0.0, 50.0, 60.0, 2.0);
    first.start = Some(Time::ZERO);
    first.hosts = vec!["n1".into()];
    let mut spread = job(1, 0.0, 50.0, 60.0, 6.0);
    spread.start = Some(Time::from_secs_f64(1.0));
    spread.hosts = vec!["n1".into(), "n2".into()];
    let jobs = [first, spread];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.opens = Some(Time::from_secs_f64(100.0));
    let result = replay_config(&config, &jobs);
    assert_eq!(result.tasks_pinned_elsewhere, 0);
    assert_eq!(result.jobs[1].placed, [(0, vec![0.25]), (1, vec![0.5])]);
}

/// The outage of `hosts` from `from` to `to` seconds, announced (a reservation) or not.
fn outage(hosts: &[&str], from: f64, to: f64, announced: bool) -> fairshare_sim::cluster::Outage {
    fairshare_sim::cluster::Outage {
        name: format!("{hosts:?}"),
        hosts: hosts.iter().map(|h| h.to_string()).collect(),
        from: Time::from_secs_f64(from),
        to: Some(Time::from_secs_f64(to)),
        announced,
    }
}

/// Nodes drained from 5 s to 30 s take no new job and keep their running one: job 0 runs on
/// n1 to its end at 50 s, and job 1, submitted at 10 s, waits for n2 to come back at 30 s
/// (at once without the drain), under the main scheduler and backfill alike.
#[test]
fn a_drained_node_takes_no_new_job_until_it_is_back() {
    let jobs = [job(0, 0.0, 50.0, 60.0, 4.0), job(1, 10.0, 10.0, 20.0, 4.0)];
    for scheduler in [
        SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine),
        slurm_with(at_every_event()),
    ] {
        let mut config = config_for("fifo", named_nodes(), scheduler, &jobs);
        assert_eq!(starts(&replay_config(&config, &jobs)), [0.0, 10.0]);
        config.outages = vec![outage(&["n1", "n2"], 5.0, 30.0, false)];
        let result = replay_config(&config, &jobs);
        assert_eq!(starts(&result), [0.0, 30.0]);
        assert_eq!(result.jobs[0].end, Time::from_secs_f64(50.0));
        assert_eq!(result.jobs[1].placed[0].0, 1, "on n2");
    }
}

/// A reservation of n2 from 40 s to 100 s, announced from the start, is crossed by no job:
/// job 1 runs on n2 before it; job 2, whose time limit would reach into it, waits for its end
/// though n2 is free at 11 s; job 3, short enough, backfills there before it (at 11 s under
/// EASY, at Slurm's backfill cycle of 30 s), under the main scheduler and Slurm's backfill
/// alike.
#[test]
fn no_job_crosses_an_announced_reservation() {
    let jobs = [
        job(0, 0.0, 150.0, 200.0, 4.0),
        job(1, 1.0, 10.0, 20.0, 4.0),
        job(2, 2.0, 10.0, 50.0, 4.0),
        job(3, 3.0, 5.0, 8.0, 4.0),
    ];
    for (scheduler, backfills_at) in [
        (SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine), 11.0),
        (slurm_with(at_every_event()), 30.0),
    ] {
        let mut config = config_for("fifo", named_nodes(), scheduler, &jobs);
        assert_eq!(
            starts(&replay_config(&config, &jobs)),
            [0.0, 1.0, 11.0, 21.0]
        );
        config.outages = vec![outage(&["n2"], 40.0, 100.0, true)];
        let result = replay_config(&config, &jobs);
        assert_eq!(starts(&result), [0.0, 1.0, 100.0, backfills_at]);
        assert_eq!(result.jobs[2].placed[0].0, 1, "on n2");
    }
}

/// An outage naming a node the run does not have is refused, naming both.
#[test]
fn an_outage_of_an_unknown_node_is_refused() {
    let jobs = [job(0, 0.0, 10.0, 20.0, 4.0)];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.outages = vec![outage(&["n9"], 5.0, 30.0, false)];
    let arrivals = jobs.iter().cloned().map(Ok::<_, Infallible>);
    let e = fairshare_sim::cluster::run(&config, arrivals, |_| {}).unwrap_err();
    assert!(e.to_string().contains("n9"), "{e}");
}

/// An outage that began long before the run's first event (its origin) closes its node from
/// the run's start: the job, submitted after the window opened, goes to the other node.
#[test]
fn an_outage_begun_before_the_run_closes_its_node_from_the_start() {
    let jobs = [job(0, 150.0, 10.0, 20.0, 4.0)];
    let easy = SchedulerEntry::EASY.scheduler(FillRule::HeadOfLine);
    let mut config = config_for("fifo", named_nodes(), easy, &jobs);
    config.opens = Some(Time::from_secs_f64(100.0));
    config.origin = Time::from_secs_f64(150.0);
    config.outages = vec![outage(&["n1"], 5.0, 300.0, false)];
    let result = replay_config(&config, &jobs);
    assert_eq!(starts(&result), [150.0]);
    assert_eq!(result.jobs[0].placed[0].0, 1, "on n2");
}
