//! Batch schedules worked out by hand: EASY, conservative and Slurm's backfilling against progressive
//! filling, a parallel job over nodes of two sizes, an exclusive job, a reservation that moves
//! up when a job ends before its walltime.
//!
//! One file per part: the engine's own schedulers (`textbook`), when Slurm's schedulers run
//! (`slurm_passes`) and what its backfill plans (`slurm_backfill`), its partitions
//! (`slurm_partitions`) and priority factors (`slurm_priority`), the adapter's site factors as
//! the model plays them (`adapter`), a window cut from a site's life (`windows`), limits
//! (`limits`) and outages (`outages`); this file holds the workloads and runs they share.

use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::model::{partition_property, MachineCatalogue, NodeType, Time};
use fairshare_sim::cluster::{
    run, run_observed, Capacity, ClusterConfig, JobState, LoopTurns, Partition, PlacementEntry,
    PolicyResult, QueueLimit, Scheduler, SchedulerEntry, SchedulerSettings, SlurmParameters, Task,
    Window,
};
use std::convert::Infallible;
use std::sync::Arc;

mod adapter;
mod limits;
mod outages;
mod slurm_backfill;
mod slurm_partitions;
mod slurm_passes;
mod slurm_priority;
mod textbook;
mod windows;

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

/// Two named nodes of 4 processors, `n1` and `n2`, as a Slurm site's catalogue names them.
fn named_nodes() -> Capacity {
    Capacity::Machines(MachineCatalogue::new(vec![
        NodeType::new("n1", 1, vec![4.0]),
        NodeType::new("n2", 1, vec![4.0]),
    ]))
}
