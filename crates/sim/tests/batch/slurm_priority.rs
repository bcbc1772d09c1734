//! Slurm's multifactor priority: the QOS, association, TRES, job size and age factors, and
//! priorities recomputed each `PriorityCalcPeriod`.

use super::*;

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
