//! What Slurm's backfill plans: every job it cannot start, on whole nodes, where its will-run
//! test puts it, a job past its limit to end the next second.

use super::*;

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
