//! What one counter read costs the kernel on this machine's cgroup v1 tree, apart from the
//! agent: the floor under `scripts/agent-overhead.sh` (docs/benchmarks.md, "Node agent").
//!
//! Makes N idle child cgroups of a fresh parent in the `cpuacct`, `memory` and `blkio`
//! hierarchies, opens the three files the agent reads per workload (`cpuacct.usage`,
//! `memory.usage_in_bytes`, `blkio.throttle.io_service_bytes`) and times one `pread` of each,
//! N at a time: one file kind after another back to back; the three of a workload together
//! (the agent's order) back to back; the same after a pause (the agent's case: it sleeps
//! between cycles); one kind after another after the pause, and each kind alone (whether the
//! order or one counter is what costs); after the pause and a short busy spin, which warms the
//! core's clock but not its caches; and, after the pause, each file opened anew relative to
//! its cgroup's kept directory, read and closed (what keeping the files open saves). Removes
//! the cgroups at the end. Needs root and cgroup v1.
//!
//! Run with `cargo run --release -p fairshare-agent --example cgroup_read_cost -- [N] [PAUSE_MS]`.

use rustix::fs::{openat, Mode, OFlags};
use rustix::io::pread;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::thread::sleep;
use std::time::{Duration, Instant};

const ROOT: &str = "/sys/fs/cgroup";
const FILES: [(&str, &str); 3] = [
    ("cpuacct", "cpuacct.usage"),
    ("memory", "memory.usage_in_bytes"),
    ("blkio", "blkio.throttle.io_service_bytes"),
];
const ROUNDS: usize = 20;

/// The parent cgroup in each hierarchy, removed with its children when dropped.
struct Parents(Vec<PathBuf>);

impl Drop for Parents {
    fn drop(&mut self) {
        for parent in &self.0 {
            if let Ok(children) = fs::read_dir(parent) {
                for child in children.flatten().filter(|c| c.path().is_dir()) {
                    let _ = fs::remove_dir(child.path());
                }
            }
            let _ = fs::remove_dir(parent);
        }
    }
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let n: usize = number(args.next(), 1000, "N (workloads)")?;
    let pause = Duration::from_millis(number(args.next(), 100, "PAUSE_MS")?);
    if let Some((hierarchy, _)) = FILES
        .iter()
        .find(|(h, _)| !PathBuf::from(ROOT).join(h).join("tasks").exists())
    {
        println!("skipped: no cgroup v1 `{hierarchy}` hierarchy under {ROOT}");
        return Ok(());
    }
    let name = format!("fairshare-read-cost-{}", std::process::id());
    let parents = Parents(
        FILES
            .iter()
            .map(|(h, _)| [ROOT, h, &name].iter().collect())
            .collect(),
    );
    let mut files = Vec::with_capacity(n * FILES.len());
    let mut dirs = Vec::with_capacity(n * FILES.len());
    for parent in &parents.0 {
        fs::create_dir(parent).map_err(|e| format!("{}: {e} (run as root)", parent.display()))?;
    }
    for w in 0..n {
        for (parent, (_, file)) in parents.0.iter().zip(FILES) {
            let dir = parent.join(format!("w{w}"));
            fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let path = dir.join(file);
            files.push(File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?);
            dirs.push((
                File::open(&dir).map_err(|e| format!("{}: {e}", dir.display()))?,
                file,
            ));
        }
    }
    let kinds: Vec<Vec<&File>> = (0..FILES.len())
        .map(|k| files.iter().skip(k).step_by(FILES.len()).collect())
        .collect();
    let by_kind: Vec<&File> = kinds.concat();
    let together: Vec<&File> = files.iter().collect();
    println!(
        "{n} workloads, {} reads a round, best and median of {ROUNDS} rounds:",
        files.len()
    );
    report("one file kind after another, back to back", &by_kind, || {})?;
    report(
        "a workload's three together, back to back",
        &together,
        || {},
    )?;
    report(
        &format!("together, after a {pause:?} pause"),
        &together,
        || sleep(pause),
    )?;
    report(
        &format!("one kind after another, after a {pause:?} pause"),
        &by_kind,
        || sleep(pause),
    )?;
    for ((_, file), kind) in FILES.iter().zip(&kinds) {
        report(&format!("{file} alone, after the pause"), kind, || {
            sleep(pause)
        })?;
    }
    let spin = Duration::from_millis(2);
    report(
        &format!("together, after the pause and a {spin:?} spin"),
        &together,
        || {
            sleep(pause);
            let start = Instant::now();
            while start.elapsed() < spin {}
        },
    )?;
    let reopen = |(dir, file): &(File, &str), buffer: &mut [u8]| -> std::io::Result<usize> {
        let fd = openat(dir, *file, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(pread(&fd, buffer, 0)?)
    };
    time(
        &format!("opened in the kept directory, after a {pause:?} pause"),
        &dirs,
        reopen,
        || sleep(pause),
    )?;
    Ok(())
}

/// Times `ROUNDS` rounds of one `pread` of each file, `before` run ahead of each round, and
/// prints the cost of one read.
fn report(what: &str, files: &[&File], before: impl FnMut()) -> Result<(), String> {
    time(what, files, |file, buffer| file.read_at(buffer, 0), before)
}

/// Times `ROUNDS` rounds of `read` over every item, `before` run ahead of each round, and
/// prints the cost of one.
fn time<T>(
    what: &str,
    items: &[T],
    read: impl Fn(&T, &mut [u8]) -> std::io::Result<usize>,
    mut before: impl FnMut(),
) -> Result<(), String> {
    let mut buffer = [0u8; 4096];
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        before();
        let start = Instant::now();
        for item in items {
            read(item, &mut buffer).map_err(|e| format!("read: {e}"))?;
        }
        rounds.push(start.elapsed());
    }
    rounds.sort();
    let per_read = |d: Duration| d.as_secs_f64() * 1e6 / items.len() as f64;
    println!(
        "  {what:<56} {:.2} µs best, {:.2} µs median a read ({:.2} ms a round)",
        per_read(rounds[0]),
        per_read(rounds[ROUNDS / 2]),
        rounds[ROUNDS / 2].as_secs_f64() * 1e3
    );
    Ok(())
}

/// The argument as a positive number, `default` when absent.
fn number<T: std::str::FromStr + PartialOrd + Default>(
    arg: Option<String>,
    default: T,
    what: &str,
) -> Result<T, String> {
    match arg {
        None => Ok(default),
        Some(text) => match text.parse::<T>() {
            Ok(value) if value > T::default() => Ok(value),
            _ => Err(format!(
                "{what}: expected a positive whole number, found `{text}`"
            )),
        },
    }
}
