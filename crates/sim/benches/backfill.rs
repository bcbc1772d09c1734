//! How the cost of a backfilling replay grows with the queue: 2,000 synthetic jobs (1 to 64
//! processors, runtimes from 1 minute to 4 hours, walltimes up to twice the runtime) on a
//! 128-processor pool, arriving fast enough to keep the machine at 80 %, 100 % and 120 % of
//! its capacity, under EASY and conservative backfilling and Slurm's two schedulers (FIFO
//! order; a pool has no nodes, so Slurm's backfill plans processors there). The mean number of waiting jobs at each load (Little's law, from the FIFO EASY
//! run) is printed once. `slurm_two_partitions` runs Slurm's schedulers on the same jobs on
//! 16 nodes of 8 processors in two partitions of 12 and 4 nodes, every 4th job in the smaller
//! one (at most its 32 processors), so that the main scheduler blocks partition by partition.
//!
//! Run with `cargo bench -p fairshare-sim --bench backfill`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::model::{partition_property, MachineCatalogue, NodeType, Time};
use fairshare_sim::cluster::{run, Capacity, ClusterConfig, Partition, SchedulerEntry, Stop, Task};
use std::convert::Infallible;
use std::time::Duration;

const JOBS: u64 = 2_000;
const CPUS: f64 = 128.0;

/// The jobs, arriving at `load` × the machine's capacity on average (a fixed generator).
fn jobs(load: f64) -> Vec<Task> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let shape: Vec<(f64, f64, f64)> = (0..JOBS)
        .map(|_| {
            let cpus = 2f64.powi((next() * 7.0) as i32);
            let runtime = 60.0 * 240f64.powf(next());
            (cpus, runtime, runtime * (1.0 + next()))
        })
        .collect();
    let work: f64 = shape.iter().map(|(c, r, _)| c * r).sum();
    let gap = work / (CPUS * load) / JOBS as f64;
    let mut submit = 0.0;
    shape
        .into_iter()
        .enumerate()
        .map(|(id, (cpus, runtime, walltime))| {
            submit += gap * 2.0 * next();
            let micros = |s: f64| Time::from_secs_f64(s).as_micros();
            let mut task = Task::new(
                id as u64,
                (id % 16) as u32,
                Time::from_secs_f64(submit),
                micros(runtime),
                vec![cpus],
            );
            task.walltime = Some(micros(walltime));
            task
        })
        .collect()
}

fn config(scheduler: SchedulerEntry) -> ClusterConfig {
    let users = (0..16).map(|u| format!("u{u}")).collect();
    let mut config = ClusterConfig::new(
        "fifo".parse().expect("fifo"),
        Capacity::Pool(vec![CPUS]),
        vec!["cpu".into()],
        users,
    );
    config.scheduler = scheduler.scheduler(FillRule::HeadOfLine);
    config.stop = Stop::Drain;
    config.sample_every = 600.0;
    config
}

/// `tasks` in two partitions on 16 nodes of 8 processors: every 4th in `small` (4 nodes, at
/// most 32 processors), the others in `large` (12 nodes), each spread over any of its nodes.
fn two_partitions(tasks: &[Task]) -> (ClusterConfig, Vec<Task>) {
    let node = |name: &str, count| {
        let mut node = NodeType::new(name, count, vec![8.0]);
        node.properties = vec![partition_property(name)];
        node
    };
    let catalogue = MachineCatalogue::new(vec![node("large", 12), node("small", 4)]);
    let config = ClusterConfig {
        capacity: Capacity::Machines(catalogue),
        partitions: ["large", "small"].map(Partition::named).to_vec(),
        ..config(SchedulerEntry::SLURM)
    };
    let tasks = tasks.iter().enumerate().map(|(i, task)| {
        let small = i % 4 == 3;
        let mut task = task.clone();
        task.partition = Some(u32::from(small));
        task.nodes = None;
        if small {
            task.demand[0] = task.demand[0].min(32.0);
        }
        task
    });
    (config, tasks.collect())
}

fn backfill(c: &mut Criterion) {
    let mut group = c.benchmark_group("backfill_2000_jobs_128_cpus");
    for load in [0.8, 1.0, 1.2] {
        let tasks = jobs(load);
        let easy = run(
            &config(SchedulerEntry::EASY),
            tasks.iter().cloned().map(Ok::<_, Infallible>),
            |_| {},
        )
        .expect("runs");
        let span = tasks.last().map_or(1.0, |t| t.submit.as_secs_f64());
        eprintln!(
            "load {load}: mean waiting jobs under EASY ≈ {:.0}",
            easy.mean_wait_s * JOBS as f64 / span
        );
        for scheduler in [
            SchedulerEntry::EASY,
            SchedulerEntry::CONSERVATIVE,
            SchedulerEntry::SLURM,
        ] {
            let config = config(scheduler);
            group.bench_with_input(
                BenchmarkId::new(format!("{scheduler:?}"), load),
                &tasks,
                |b, tasks| {
                    b.iter(|| {
                        run(
                            &config,
                            tasks.iter().cloned().map(Ok::<_, Infallible>),
                            |_| {},
                        )
                        .expect("runs")
                    })
                },
            );
        }
        let (config, tasks) = two_partitions(&tasks);
        group.bench_with_input(
            BenchmarkId::new("slurm_two_partitions", load),
            &tasks,
            |b, tasks| {
                b.iter(|| {
                    let arrivals = tasks.iter().cloned().map(Ok::<_, Infallible>);
                    run(&config, arrivals, |_| {}).expect("runs")
                })
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(10));
    targets = backfill
}
criterion_main!(benches);
