//! Slurm's partitions: blocked one by one, fenced off their shared nodes, served by tier or
//! factor, exclusive.

use super::*;

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
