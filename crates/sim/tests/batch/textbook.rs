//! The engine's own schedulers worked by hand: progressive filling, EASY and conservative
//! backfilling, cancellations, jobs over nodes, exclusive jobs, queues and overruns.

use super::*;

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
