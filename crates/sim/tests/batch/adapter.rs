//! The Slurm adapter as the model plays it: its site factors by runs of the policy's starts, and
//! its `ranked_runs`, `ends_at_limits`, `submit_table` and `partitions`.

use super::*;

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
