//! When Slurm's schedulers run: backfill cycles, `batch_sched_delay`, the background loop's
//! turns (drawn or read from a log), completing nodes, kills, `sched_interval` and the checks of
//! time limits.

use super::*;

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
