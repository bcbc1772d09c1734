//! Writes `examples/traces/small-cluster.swf`: a week of made-up jobs on a small cluster, so that
//! a fresh clone has a trace to replay before it fetches the real ones.
//!
//! Eight nodes of eight processors and 4 GB per processor, shared by six users who behave as
//! users of a real cluster often do: one submits bursts of wide, long jobs twice a day, one
//! asks for a steady stream of mid-sized jobs, two come now and then with small ones (one of
//! them with much memory per processor), one runs on the whole machine once a day, and one
//! submits many one-processor jobs. A few jobs fail and a few are cancelled before they start.
//! The recorded waits are those of a first-come-first-served scheduler on the machine, so a
//! replay has an "as recorded" row to compare with.
//!
//! The same seed gives the same file, byte for byte:
//! `cargo run -q -p fairshare-lab --example small_cluster > examples/traces/small-cluster.swf`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write;

/// The machine's processors.
const PROCESSORS: u32 = 64;
/// The memory each processor comes with, KB (4 GB).
const KB_PER_PROCESSOR: u64 = 4 * 1024 * 1024;
/// How long users submit, seconds (a week).
const WEEK_S: u64 = 7 * 86_400;
/// The seed of every draw.
const SEED: u64 = 2026;

/// One job as the log records it.
struct Job {
    submit: u64,
    user: u32,
    processors: u32,
    runtime: u64,
    walltime: u64,
    kb_per_processor: u64,
    status: u8,
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut jobs = Vec::new();
    bursts(&mut rng, &mut jobs);
    steady(&mut rng, &mut jobs, 2, 3_600, (4, 8), (1_800, 10_800), 1);
    steady(&mut rng, &mut jobs, 3, 7_200, (1, 4), (600, 3_600), 1);
    steady(&mut rng, &mut jobs, 4, 7_200, (1, 4), (600, 3_600), 4);
    steady(&mut rng, &mut jobs, 5, 86_400, (64, 64), (3_600, 3_600), 1);
    steady(&mut rng, &mut jobs, 6, 1_200, (1, 1), (300, 1_200), 1);
    jobs.sort_by_key(|job| (job.submit, job.user));
    print!("{}", log(&jobs, &first_come_first_served(&mut rng, &jobs)));
}

/// User 1: 12 wide jobs (8 to 24 processors, one to three hours) every twelve hours or so.
fn bursts(rng: &mut ChaCha8Rng, jobs: &mut Vec<Job>) {
    let mut at = rng.gen_range(0..3_600);
    while at < WEEK_S {
        for i in 0..12 {
            let (processors, runtime) = (rng.gen_range(8..=24), rng.gen_range(3_600..=10_800));
            jobs.push(job(rng, at + i * 20, 1, processors, runtime, 2));
        }
        at += rng.gen_range(36_000..=50_400);
    }
}

/// A user who submits about every `gap_s` seconds (exponential gaps), jobs of `processors`
/// and `runtime_s` drawn uniformly, with `gb_per_processor` GB of memory per processor at most.
fn steady(
    rng: &mut ChaCha8Rng,
    jobs: &mut Vec<Job>,
    user: u32,
    gap_s: u64,
    processors: (u32, u32),
    runtime_s: (u64, u64),
    gb_per_processor: u64,
) {
    let mut at = 0.0;
    loop {
        at += -(gap_s as f64) * (1.0 - rng.gen::<f64>()).ln();
        if at >= WEEK_S as f64 {
            return;
        }
        let processors = rng.gen_range(processors.0..=processors.1);
        let runtime = rng.gen_range(runtime_s.0..=runtime_s.1);
        jobs.push(job(
            rng,
            at as u64,
            user,
            processors,
            runtime,
            gb_per_processor,
        ));
    }
}

/// A job of `user`: a walltime 1.2 to 3 times its runtime in whole minutes, memory up to
/// `gb_per_processor` GB per processor; one in twenty fails halfway, one in fifty is cancelled
/// before it starts.
fn job(
    rng: &mut ChaCha8Rng,
    submit: u64,
    user: u32,
    processors: u32,
    runtime: u64,
    gb: u64,
) -> Job {
    let walltime = ((runtime as f64 * rng.gen_range(1.2..3.0)) as u64).div_ceil(60) * 60;
    let kb_per_processor = rng.gen_range(gb * 1024 * 1024 / 4..=gb * 1024 * 1024);
    let (status, runtime) = match rng.gen_range(0..100) {
        0..2 => (5, 0),
        2..7 => (0, runtime / 2),
        _ => (1, runtime),
    };
    Job {
        submit,
        user,
        processors,
        runtime,
        walltime,
        kb_per_processor: kb_per_processor.min(KB_PER_PROCESSOR),
        status,
    }
}

/// Each job's wait under first come, first served on the machine: no job starts before one
/// submitted earlier, and a job cancelled before it starts waits a random while and holds
/// nothing.
fn first_come_first_served(rng: &mut ChaCha8Rng, jobs: &[Job]) -> Vec<u64> {
    let mut running: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let (mut free, mut last_start) = (PROCESSORS, 0);
    let mut waits = Vec::with_capacity(jobs.len());
    for job in jobs {
        if job.status == 5 {
            waits.push(rng.gen_range(300..=3_600));
            continue;
        }
        let mut start = job.submit.max(last_start);
        loop {
            while let Some(&Reverse((end, processors))) = running.peek() {
                if end > start {
                    break;
                }
                free += processors;
                running.pop();
            }
            if free >= job.processors {
                break;
            }
            let Some(&Reverse((end, _))) = running.peek() else {
                break;
            };
            start = end;
        }
        free -= job.processors;
        running.push(Reverse((start + job.runtime, job.processors)));
        last_start = start;
        waits.push(start - job.submit);
    }
    waits
}

/// The log: a header, then one 18-field line per job.
fn log(jobs: &[Job], waits: &[u64]) -> String {
    let mut text = format!(
        "; Version: 2.2\n\
         ; Computer: fairshare's example cluster, 8 nodes of 8 processors and 32 GB (made up)\n\
         ; Note: written by `cargo run -q -p fairshare-lab --example small_cluster`, seed {SEED}; every job is made up\n\
         ; Note: waits are those of first come, first served on the machine\n\
         ; MaxJobs: {}\n\
         ; MaxRecords: {}\n\
         ; MaxNodes: 8\n\
         ; MaxProcs: {PROCESSORS}\n\
         ;\n",
        jobs.len(),
        jobs.len()
    );
    for (id, (job, wait)) in jobs.iter().zip(waits).enumerate() {
        let allocated = if job.status == 5 {
            -1
        } else {
            i64::from(job.processors)
        };
        writeln!(
            text,
            "{} {} {wait} {} {allocated} -1 -1 {} {} {} {} {} -1 -1 1 1 -1 -1",
            id + 1,
            job.submit,
            job.runtime,
            job.processors,
            job.walltime,
            job.kb_per_processor,
            job.status,
            job.user
        )
        .expect("writing to a String");
    }
    text
}
