//! Replaying a trace under several policies from a program: what `fairshare replay` does.
//!
//! Give an SWF, Google or Alibaba trace as the argument; without one the example writes a small
//! workload of its own (three users, 300 jobs) to a temporary file and replays that.
//!
//! Run with `cargo run -p fairshare-lab --example replay_trace [-- TRACE...]`.

use fairshare_lab::{MeasuredTrace, Replay, TraceSpec};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let mut paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        paths.push(write_workload(folder.path())?);
    }
    let measured = MeasuredTrace::scan(&TraceSpec::new(paths), &mut |_| {})?;
    println!(
        "{} users, {:.0} s of trace, mean demand {:?}",
        measured.users.len(),
        measured.span_s(),
        measured.load.mean_demand()
    );
    let settings = Replay::default();
    let capacity = measured.pool_of_mean(0.5)?;
    for policy in ["fifo", "drf", "sdrf:delta=0.999"] {
        let config = measured.config(&settings, policy.parse()?, capacity.clone());
        let result = measured.run(&config, &mut |_| {})?;
        println!(
            "{policy:>16}: {} of {} tasks completed, user-mean wait {:.1} s",
            result.tasks_completed, result.tasks_submitted, result.user_mean_wait_s
        );
    }
    Ok(())
}

/// Writes a small SWF workload: three users, 300 jobs of 1–8 CPUs, fixed pseudo-random sizes.
fn write_workload(folder: &std::path::Path) -> std::io::Result<PathBuf> {
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut text = String::from("; a workload written by the replay_trace example\n");
    for job in 1..=300 {
        let (runtime, cpus, user) = (30 + next(300), 1 + next(8), 1 + next(3));
        text += &format!(
            "{job} {} 0 {runtime} {cpus} -1 -1 {cpus} -1 -1 1 {user} 1 -1 1 -1 -1 -1\n",
            job * 7
        );
    }
    let path = folder.join("workload.swf");
    std::fs::write(&path, text)?;
    Ok(path)
}
