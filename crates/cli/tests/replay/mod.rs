//! `fairshare replay` and `fairshare sweep` end to end: on a workload this test writes itself,
//! on the example trace a fresh clone has, and on every shared trace (ignored, with the reason,
//! where `../shared/traces` is absent).
//!
//! One file per part: runs on SWF workloads and the traces (`runs`), what an SWF log's header and
//! the files beside it say (`swf`), `--scheduler slurm` on a Slurm dump (`slurm_scheduler`), and a
//! Slurm site's own files (`slurm_site`); this file holds the command and the dumps they share.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod runs;
mod slurm_scheduler;
mod slurm_site;
mod swf;

fn fairshare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("json written")).expect("valid json")
}

/// A Slurm dump of three jobs on one 4-CPU node, written by the test: alice's 3-CPU job runs
/// 100 s, bob's 2-CPU job waits behind it, carol's 1-CPU, 10-s job would fit at once.
fn write_slurm_dump(dir: &Path) -> PathBuf {
    let text = "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State|QOS\n\
        1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED|normal\n\
        2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:40|2026-01-01T00:01:50|00:00:10|00:00:10|cpu=2,node=1|cpu|COMPLETED|normal\n\
        3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:31|2026-01-01T00:00:41|00:00:10|00:00:10|cpu=1,node=1|cpu|COMPLETED|scavenger\n";
    let path = dir.join("sacct.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// The cells of the named `columns` in each row of the per-job table at `path`, whose
/// policy, first, holds no comma.
fn job_cells<const N: usize>(path: &Path, columns: [&str; N]) -> Vec<[String; N]> {
    let table = std::fs::read_to_string(path).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let at = columns.map(column);
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            at.map(|i| cells[i].to_owned())
        })
        .collect()
}

/// A dump of `rows` in `dir`, with the column at index `without` taken out of every row when
/// given (a dump as a site without that column would have it), named by what it lacks.
fn write_rows(dir: &Path, rows: &[&str], without: Option<usize>) -> PathBuf {
    let text: Vec<String> = (rows.iter())
        .map(|row| {
            let mut cells: Vec<&str> = row.split('|').collect();
            if let Some(column) = without {
                cells.remove(column);
            }
            cells.join("|")
        })
        .collect();
    let path = dir.join(format!("sacct-without-{without:?}.txt"));
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}
