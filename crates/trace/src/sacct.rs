//! Slurm accounting dumps: `sacct --allusers --parsable2 --format=JobID,User,Account,Submit,
//! Start,End,AllocTRES,Partition,State` — the history every Slurm site already has, so an
//! administrator can replay it or check a fairshare policy on it (`fairshare priorities`).
//!
//! The file is `|`-separated with a header; columns are found by name, in any order.
//!
//! | task | from |
//! |---|---|
//! | `id` | the record's rank among the jobs of all files given (from 0) |
//! | `user` | `User` |
//! | `submit` | `Submit` (`YYYY-MM-DDTHH:MM:SS`, read as UTC) |
//! | `start` | `Start` |
//! | `runtime` | `End` − `Start` |
//! | cpu | `cpu=` of `AllocTRES`, processors |
//! | mem | `mem=` of `AllocTRES` (`16G`, `3900M`; a bare number is MiB, as Slurm writes it), KB |
//! | gpu | `gres/gpu=` of `AllocTRES`, GPUs |
//! | nodes | `node=` of `AllocTRES` |
//! | partition | `Partition`, when the column is there |
//!
//! Job steps (`123.batch`, `123.0`, `123.extern`) repeat their job's allocation and are
//! ignored. Jobs that never started (`Start` is `Unknown` or `None`), that have not ended
//! (`End` `Unknown`: still running when the dump was taken, so their usage so far is not
//! counted) or that were allocated nothing are skipped with the reason. `sacct` prints local
//! time and the reader takes it as UTC: dump with `TZ=UTC sacct …` so that jobs spanning a
//! daylight-saving change keep their true length. The `Account` column is not read: accounts
//! come from a share file (`--shares`). sacct dumps record partitions, not queues, so a
//! `.queues` file does not apply to them. Like the Alibaba pod list, the dump is not in submit order in
//! general (`sacct` lists by job id), so it is loaded whole and sorted.

use crate::input::{columns, Col, HeadedCsv, Record};
use crate::source::{Loaded, Meta, Source, Task};
use crate::{parse_size, ReadOptions, TraceError};
use fairshare_core::model::Time;
use std::path::{Path, PathBuf};

const COLUMNS: [&str; 6] = ["JobID", "User", "Submit", "Start", "End", "AllocTRES"];

/// A source of the jobs of the sacct dumps `paths`, sorted by submit time.
pub(crate) fn open(paths: &[PathBuf], options: &ReadOptions) -> Source<Loaded> {
    let mut meta = Meta::new(
        &["cpu", "mem", "gpu"],
        &["processors", "KB", "GPUs"],
        options.lenient,
    );
    let mut tasks = Vec::new();
    let error = paths
        .iter()
        .try_for_each(|path| read_jobs(path, &mut meta, &mut tasks))
        .err();
    Loaded::source(tasks, error, meta)
}

/// Reads the dump `path` into `tasks`; `Err` for an error that ends the stream.
fn read_jobs(path: &Path, meta: &mut Meta, tasks: &mut Vec<Task>) -> Result<(), TraceError> {
    let mut file = HeadedCsv::open_with(path, b'|')?;
    let header = file.header()?;
    let partition = header.iter().position(|h| h.trim_ascii() == b"Partition");
    let partition = partition.map(|i| Col::new(i + 1, "Partition"));
    let cols = columns(path, header, COLUMNS)?;
    while let Some(record) = file.next_record()? {
        if record.raw(cols[0]).contains(&b'.') {
            meta.ignore("job step");
            continue;
        }
        let job = match job(&record, &cols, partition) {
            Ok(job) => job,
            Err(e) => match meta.reject(e) {
                Some(e) => return Err(e),
                None => continue,
            },
        };
        meta.read();
        meta.found();
        let id = meta.stats.tasks_found - 1;
        match job.task(id) {
            Ok(task) => tasks.push(Task {
                user: meta.user(job.user),
                partition: job.partition.map(|p| meta.partition(p)),
                ..task
            }),
            Err(reason) => meta.skip(reason, 1),
        }
    }
    Ok(())
}

/// One job record, parsed.
struct Job<'r> {
    user: &'r str,
    submit: Time,
    start: Option<Time>,
    end: Option<Time>,
    demand: Vec<f64>,
    nodes: Option<u32>,
    partition: Option<&'r str>,
}

/// The job of one record.
fn job<'r>(
    record: &'r Record,
    cols: &[Col; 6],
    partition: Option<Col>,
) -> Result<Job<'r>, TraceError> {
    let [_, user, submit, start, end, tres] = *cols;
    let at = record.at;
    let time = |col: Col| {
        let raw = at.text(col, record.raw(col))?.trim();
        if matches!(raw, "" | "Unknown" | "None") {
            return Ok(None);
        }
        let parsed = humantime::parse_rfc3339_weak(raw)
            .map_err(|_| at.error(col, "a time such as 2024-01-15T10:23:45", raw))?;
        let secs = parsed.duration_since(std::time::UNIX_EPOCH).ok();
        let time = secs.and_then(|s| Time::from_input_secs(s.as_secs_f64()));
        time.map(Some)
            .ok_or_else(|| at.error(col, "a time from 1970 to about 317 years later", raw))
    };
    let allocated = at.text(tres, record.raw(tres))?;
    let (demand, nodes) =
        alloc_tres(allocated).map_err(|expected| at.error(tres, expected, allocated))?;
    let text = |col: Col| at.text(col, record.raw(col)).map(str::trim);
    Ok(Job {
        user: text(user)?,
        submit: time(submit)?.ok_or_else(|| at.error(submit, "a submit time", ""))?,
        start: time(start)?,
        end: time(end)?,
        demand,
        nodes,
        partition: partition.map(text).transpose()?.filter(|p| !p.is_empty()),
    })
}

impl Job<'_> {
    /// The task of this job, or the reason to skip it.
    fn task(&self, id: u64) -> Result<Task, &'static str> {
        let start = self.start.ok_or("never started")?;
        let end = self.end.ok_or("no end (still running)")?;
        if end < start {
            return Err("ended before it started");
        }
        if self.demand.iter().all(|&x| x == 0.0) {
            return Err("nothing allocated");
        }
        let mut task = Task::new(
            id,
            0,
            self.submit,
            end.as_micros() - start.as_micros(),
            self.demand.clone(),
        );
        task.start = Some(start);
        task.nodes = self.nodes;
        Ok(task)
    }
}

/// `cpu=4,mem=16G,node=1,billing=4,gres/gpu=2` as `[processors, KB, GPUs]` and the nodes;
/// other TRES are ignored. The error says what was expected.
fn alloc_tres(text: &str) -> Result<(Vec<f64>, Option<u32>), &'static str> {
    let mut demand = vec![0.0; 3];
    let mut nodes = None;
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or("TRES as key=value pairs, such as cpu=4,mem=16G")?;
        let number = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or("TRES amounts that are numbers >= 0")
        };
        match key {
            "cpu" => demand[0] = number()?,
            "mem" => {
                let bare = value.parse::<f64>().is_ok();
                let size = if bare {
                    format!("{value}M")
                } else {
                    value.to_owned()
                };
                demand[1] =
                    parse_size(&size).map_err(|_| "a memory size such as 16G or 3900M")? / 1024.0;
            }
            "gres/gpu" => demand[2] = number()?,
            "node" => {
                let n = value
                    .parse::<u32>()
                    .map_err(|_| "a whole number of nodes")?;
                nodes = Some(n).filter(|n| *n > 0);
            }
            _ => {}
        }
    }
    Ok((demand, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_tres_reads_cpus_memory_gpus_and_nodes() {
        let (demand, nodes) = alloc_tres("billing=8,cpu=8,gres/gpu=2,mem=16G,node=2").unwrap();
        assert_eq!(demand, vec![8.0, 16.0 * 1024.0 * 1024.0, 2.0]);
        assert_eq!(nodes, Some(2));
        let (demand, nodes) = alloc_tres("cpu=1,mem=3900M").unwrap();
        assert_eq!(demand, vec![1.0, 3900.0 * 1024.0, 0.0]);
        assert_eq!(nodes, None);
        assert_eq!(alloc_tres("mem=2048").unwrap().0[1], 2048.0 * 1024.0);
        assert_eq!(alloc_tres("").unwrap().0, vec![0.0; 3]);
        assert!(alloc_tres("cpu").is_err());
        assert!(alloc_tres("cpu=-1").is_err());
        assert!(alloc_tres("mem=12Q").is_err());
        assert!(alloc_tres("node=2.5").is_err());
        assert!(alloc_tres("node=99999999999").is_err());
    }
}
