//! # fairshare-trace
//!
//! Streaming readers of real cluster workload traces, so that fair-share policies can be
//! replayed on what clusters actually ran.
//!
//! Four formats become one stream of [`Task`]s — submit time, original start, runtime, and a
//! demand vector over named resources — behind the [`TaskSource`] trait:
//!
//! | [`Format`] | files | resources |
//! |---|---|---|
//! | [`Format::Swf`] ([`swf`]) | Parallel Workloads Archive logs and the Alea extension | `cpu` (processors), `mem` (KB) if recorded |
//! | [`Format::Google`] ([`google`]) | Google 2011 `task_events` parts | `cpu`, `mem` (fractions of the largest machine) |
//! | [`Format::Alibaba`] ([`alibaba`]) | Alibaba GPU 2023 pod list | `cpu` (cores), `mem` (MiB), `gpu` (GPUs) |
//! | [`Format::Sacct`] ([`sacct`]) | Slurm accounting dumps (`sacct --parsable2`) | `cpu` (processors), `mem` (KB), `gpu` (GPUs) |
//!
//! ```no_run
//! use fairshare_trace::{open, ReadOptions, TaskSource};
//!
//! let paths = ["wagap-2013.swf".into()];
//! let mut tasks = open(&paths, None, &ReadOptions::default())?;
//! while let Some(task) = tasks.next() {
//!     let task = task?;
//!     println!("{} asks {:?} at {}", tasks.users()[task.user as usize], task.demand, task.submit);
//! }
//! println!("{:?}", tasks.stats().tasks_skipped);
//! # Ok::<(), fairshare_trace::TraceError>(())
//! ```
//!
//! What every source guarantees:
//!
//! - **Order.** Tasks come out in non-decreasing `submit` order.
//! - **Accounting.** Nothing is dropped silently: every task found is yielded or counted in
//!   [`ReadStats::tasks_skipped`] under a short, stable reason ("no known end", "zero request",
//!   "malformed: field 4 (run time)", …), so that when the stream ends
//!   `tasks_found == tasks_yielded + Σ tasks_skipped` ([`ReadStats::reconciles`]).
//! - **Errors.** A bad record is reported as `file:line: field N (name): expected …, found "…"`.
//!   In strict mode (the default) the first one is yielded as `Err` and ends the stream; with
//!   [`ReadOptions::lenient`] it is skipped and counted as "malformed: …" instead. I/O errors end
//!   the stream in both modes.
//! - **Streaming.** Files are read as the stream is pulled, plain or gzip (recognised by its
//!   magic bytes), several files in the order given. SWF holds one line at a time; Google holds
//!   the tasks in flight and a reorder buffer (see [`google`]); Alibaba's pod list, a snapshot
//!   rather than a log, and sacct dumps, listed by job id, are loaded and sorted whole.
//!
//! [`read_machines`] reads the cluster beside a trace: an SWF `.machines` file or the Alibaba
//! node list.
#![warn(missing_docs)]

pub mod alibaba;
pub mod catalogue;
mod error;
pub mod google;
mod input;
pub mod queues;
pub mod sacct;
pub mod shares;
mod source;
pub mod swf;
pub mod timeline;

pub use catalogue::{parse_size, read_catalogue, CATALOGUE_RESOURCES};
pub use error::TraceError;
pub use fairshare_core::model::{MachineCatalogue, NodeType};
pub use queues::{read_queues, QueueRule};
pub use shares::{read_shares, Shares};
pub use source::{ReadStats, Task, TaskSource};
pub use swf::{CpuField, MemoryField, MemoryLayout, SwfOptions};
pub use timeline::{read_timeline, Timeline, TimelineUser};

use fairshare_core::choice::Choice;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Standard Workload Format, with the Alea extension.
    Swf,
    /// Google cluster trace 2011, `task_events`.
    Google,
    /// Alibaba GPU cluster trace 2023.
    Alibaba,
    /// A Slurm accounting dump (`sacct --parsable2`).
    Sacct,
}

impl Format {
    /// The format of `path`, told from its first non-blank line: a `;` comment or
    /// whitespace-separated fields starting with a number is SWF, a `|`-separated header with
    /// `JobID` is a sacct dump, a CSV header with
    /// `creation_time` is Alibaba, CSV starting with an integer is Google.
    pub fn detect(path: &Path) -> Result<Format, TraceError> {
        let line = input::first_line(path)?;
        let is_number = |field: Option<&str>| field.is_some_and(|f| f.parse::<f64>().is_ok());
        let format = if line.starts_with(';') {
            Some(Format::Swf)
        } else if line.split('|').any(|h| h.trim() == "JobID") {
            Some(Format::Sacct)
        } else if line.split(',').any(|h| h.trim() == "creation_time") {
            Some(Format::Alibaba)
        } else if line.split_ascii_whitespace().nth(1).is_some() {
            is_number(line.split_ascii_whitespace().next()).then_some(Format::Swf)
        } else {
            is_number(line.split(',').next()).then_some(Format::Google)
        };
        format.ok_or_else(|| TraceError::UnknownFormat {
            path: path.to_path_buf(),
            line: line.chars().take(80).collect(),
        })
    }
}

impl Choice for Format {
    const ALL: &'static [Format] = &[Format::Swf, Format::Google, Format::Alibaba, Format::Sacct];

    fn name(self) -> &'static str {
        match self {
            Format::Swf => "swf",
            Format::Google => "google",
            Format::Alibaba => "alibaba",
            Format::Sacct => "sacct",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Format::Swf => {
                "Standard Workload Format (18 fields, or the 21-field Alea extension), plain or gzip"
            }
            Format::Google => "Google cluster trace 2011 task_events parts",
            Format::Alibaba => "Alibaba GPU 2023 pod list",
            Format::Sacct => "Slurm accounting dump: sacct --parsable2 with JobID, User, Submit, Start, End, AllocTRES",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Format, TraceError> {
        match s.to_ascii_lowercase().as_str() {
            "swf" => Ok(Format::Swf),
            "google" => Ok(Format::Google),
            "alibaba" => Ok(Format::Alibaba),
            "sacct" => Ok(Format::Sacct),
            _ => Err(TraceError::UnknownFormatName(s.to_owned())),
        }
    }
}

/// How to read a trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Skip and count bad records instead of stopping at the first one.
    pub lenient: bool,
    /// Which SWF fields make the demand vector.
    pub swf: SwfOptions,
}

/// Opens the trace files `paths`, read in the order given, as one stream of tasks; `format`
/// `None` detects it from the first file ([`Format::detect`]).
pub fn open(
    paths: &[PathBuf],
    format: Option<Format>,
    options: &ReadOptions,
) -> Result<Box<dyn TaskSource + Send>, TraceError> {
    let first = paths.first().ok_or(TraceError::NoInput)?;
    let format = match format {
        Some(format) => format,
        None => Format::detect(first)?,
    };
    Ok(match format {
        Format::Swf => Box::new(swf::open(paths, options)),
        Format::Google => Box::new(google::open(paths, options)),
        Format::Alibaba => Box::new(alibaba::open(paths, options)),
        Format::Sacct => Box::new(sacct::open(paths, options)),
    })
}

/// Reads the machines of a cluster: an SWF `.machines` file (capacity `[processors, KB]`) or an
/// Alibaba node list (capacity `[cores, MiB, GPUs]`); the Google trace has none here.
pub fn read_machines(path: &Path, format: Format) -> Result<MachineCatalogue, TraceError> {
    match format {
        Format::Swf => swf::read_machines(path).map(MachineCatalogue::new),
        Format::Alibaba => alibaba::read_machines(path).map(MachineCatalogue::new),
        Format::Google | Format::Sacct => Err(TraceError::NoMachineList(format)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for format in [Format::Swf, Format::Google, Format::Alibaba, Format::Sacct] {
            assert_eq!(format.to_string().parse::<Format>().unwrap(), format);
        }
        assert_eq!("SWF".parse::<Format>().unwrap(), Format::Swf);
        assert!("parquet".parse::<Format>().is_err());
    }

    #[test]
    fn open_needs_a_file_and_a_known_format() {
        let options = ReadOptions::default();
        assert!(matches!(
            open(&[], None, &options),
            Err(TraceError::NoInput)
        ));
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "\n\nhello world\n").unwrap();
        let error = open(&[path], None, &options).err().unwrap();
        assert!(matches!(error, TraceError::UnknownFormat { .. }), "{error}");
    }
}
