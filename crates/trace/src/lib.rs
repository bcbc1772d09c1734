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
//! | [`Format::SWF`] ([`swf`]) | Parallel Workloads Archive logs and the Alea extension | `cpu` (processors), `mem` (KB) if recorded |
//! | [`Format::GOOGLE`] ([`google`]) | Google 2011 `task_events` parts | `cpu`, `mem` (fractions of the largest machine) |
//! | [`Format::ALIBABA`] ([`alibaba`]) | Alibaba GPU 2023 pod list | `cpu` (cores), `mem` (MiB), `gpu` (GPUs) |
//! | [`Format::SACCT`] ([`sacct`]) | Slurm accounting dumps (`sacct --parsable2`) | `cpu` (processors), `mem` (KB), `gpu` (GPUs) |
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
//! [`read_machines`] reads the cluster beside a trace: an SWF `.machines` file, the Alibaba
//! node list, or a Slurm site's nodes and partitions.
#![warn(missing_docs)]

pub mod alibaba;
pub mod assoc;
pub mod billing;
pub mod bundle;
pub mod catalogue;
mod error;
pub mod google;
mod hostlist;
mod input;
pub mod queues;
pub mod sacct;
pub mod shares;
pub mod slurm_conf;
pub mod slurm_limits;
pub mod slurm_nodes;
pub mod slurm_output;
pub mod slurm_version;
pub mod slurmctld_log;
mod source;
pub mod swf;
pub mod timeline;
mod tres;

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

/// A trace format: its name, its one line of help, how its files are recognised, its reader
/// and, when it has one, its machine list's reader.
///
/// Formats are a registry: each reader's file declares its own `FORMAT` (e.g. [`swf::FORMAT`])
/// and [`Format::ALL`](Choice::ALL) lists them, in the order `--help` shows them. Everything
/// that names, parses, detects, opens or reads the machines of a format goes through that
/// list, so adding a format is one file with its reader and its `FORMAT`, and one line in
/// `ALL`. Two formats are equal when their names are.
#[derive(Clone, Copy)]
pub struct Format {
    /// Its name, as `--format` takes it.
    pub(crate) name: &'static str,
    /// What it is, in one line (`--help`).
    pub(crate) about: &'static str,
    /// Its claim on a file whose first non-blank line is this: `None` when the line is not its
    /// own, else a rank ([`Format::MARKER`], [`Format::HEADER`], [`Format::RECORD`]); detection
    /// takes the lowest rank any format claims, and among equal ranks the first format of
    /// [`Format::ALL`](Choice::ALL).
    pub(crate) detect: fn(&str) -> Option<u8>,
    /// A first line of its files, which `detect` must claim ahead of every other format (the
    /// registry's test checks it).
    pub(crate) sample: &'static str,
    /// Its reader: the files, read in the order given, as one stream of tasks.
    pub(crate) open: OpenFn,
    /// Its machine list's reader (capacities in the reader's resources and units), if it has
    /// one.
    pub(crate) machines: Option<MachinesFn>,
}

/// A format's reader: its files, read in the order given, as one stream of tasks.
pub type OpenFn = fn(&[PathBuf], &ReadOptions) -> Box<dyn TaskSource + Send>;

/// A format's machine list reader: one [`NodeType`] per kind of machine listed.
pub type MachinesFn = fn(&Path) -> Result<Vec<NodeType>, TraceError>;

impl Format {
    /// The Standard Workload Format ([`swf::FORMAT`]).
    pub const SWF: Format = swf::FORMAT;
    /// The Google cluster trace 2011 ([`google::FORMAT`]).
    pub const GOOGLE: Format = google::FORMAT;
    /// The Alibaba GPU cluster trace 2023 ([`alibaba::FORMAT`]).
    pub const ALIBABA: Format = alibaba::FORMAT;
    /// A Slurm accounting dump ([`sacct::FORMAT`]).
    pub const SACCT: Format = sacct::FORMAT;

    /// Detection rank of a line only this format writes (SWF's `;` header).
    pub const MARKER: u8 = 0;
    /// Detection rank of a header naming this format's columns.
    pub const HEADER: u8 = 10;
    /// Detection rank of a data record's shape (fields that look like numbers).
    pub const RECORD: u8 = 20;

    /// The format of `path`, told from its first non-blank line ([`Format::detect_line`]): a
    /// `;` comment or whitespace-separated fields starting with a number is SWF, a
    /// `|`-separated header with `JobID` is a sacct dump, a CSV header with `creation_time` is
    /// Alibaba, CSV starting with an integer is Google.
    pub fn detect(path: &Path) -> Result<Format, TraceError> {
        let line = input::first_line(path)?;
        if line.is_empty() {
            return Err(TraceError::Empty {
                path: path.to_path_buf(),
            });
        }
        Format::detect_line(&line).ok_or_else(|| TraceError::UnknownFormat {
            path: path.to_path_buf(),
            line: line.chars().take(80).collect(),
        })
    }

    /// A first line of this format's files, as detection recognises it.
    pub fn sample(self) -> &'static str {
        self.sample
    }

    /// The format whose files start with `line` (a file's first non-blank line, trimmed):
    /// the one with the lowest-ranked claim on it, the first of [`Format::ALL`](Choice::ALL)
    /// among equals.
    pub fn detect_line(line: &str) -> Option<Format> {
        Format::detect_among(Format::ALL, line)
    }

    /// [`Format::detect_line`] among `formats` only.
    fn detect_among(formats: &[Format], line: &str) -> Option<Format> {
        formats
            .iter()
            .filter_map(|format| Some(((format.detect)(line)?, *format)))
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, format)| format)
    }
}

impl Choice for Format {
    /// Every format, in the order `--help` lists them: the registry.
    const ALL: &'static [Format] = &[swf::FORMAT, google::FORMAT, alibaba::FORMAT, sacct::FORMAT];

    fn name(self) -> &'static str {
        self.name
    }

    fn about(self) -> &'static str {
        self.about
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name == other.name
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Format").field(&self.name).finish()
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl FromStr for Format {
    type Err = TraceError;

    /// The format of this name, in any case.
    fn from_str(s: &str) -> Result<Format, TraceError> {
        Format::ALL
            .iter()
            .find(|format| format.name.eq_ignore_ascii_case(s))
            .copied()
            .ok_or_else(|| TraceError::UnknownFormatName(s.to_owned()))
    }
}

/// How to read a trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadOptions {
    /// Skip and count bad records instead of stopping at the first one.
    pub lenient: bool,
    /// Which SWF fields make the demand vector.
    pub swf: SwfOptions,
    /// How the site's Slurm bills jobs, for the billing of sacct dumps' jobs
    /// ([`Task::billing`](fairshare_core::model::Task::billing)).
    pub billing: billing::Billing,
    /// Sacct dumps: `slurmctld`'s log, which gives the jobs' submissions, starts and ends to
    /// the millisecond ([`slurmctld_log::ControllerLog::time`]); `None`: whole seconds.
    pub controller_log: Option<std::sync::Arc<slurmctld_log::ControllerLog>>,
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
    Ok((format.open)(paths, options))
}

/// Reads the machines of a cluster in `format`'s machine list: an SWF `.machines` file
/// (capacity `[processors, KB]`), an Alibaba node list (capacity `[cores, MiB, GPUs]`) or, for
/// sacct dumps, the site's Slurm nodes and partitions (capacity `[processors, KB, GPUs]`); the
/// Google trace has none here.
pub fn read_machines(path: &Path, format: Format) -> Result<MachineCatalogue, TraceError> {
    match format.machines {
        Some(read) => read(path).map(MachineCatalogue::new),
        None => Err(TraceError::NoMachineList(format)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for format in Format::ALL {
            assert_eq!(format.to_string().parse::<Format>().unwrap(), *format);
        }
        assert_eq!("SWF".parse::<Format>().unwrap(), Format::SWF);
        assert!("parquet".parse::<Format>().is_err());
    }

    /// The seam: `Format::ALL` is the one list of formats. Every registered format has a
    /// unique name that round-trips through `Display`, `FromStr` and `Choice::named` (what
    /// `--format` and its `--help` read), is detected from its own sample first line, and
    /// opens and reads machines through its entry; the names an unknown one is told are
    /// exactly the registered ones, in registry order.
    #[test]
    fn every_registered_format_is_named_detected_and_opened_through_the_registry() {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for format in Format::ALL {
            assert_eq!(Format::named(format.name()), Some(*format));
            assert_eq!(format.name().parse::<Format>().unwrap(), *format);
            assert_eq!(format.to_string(), format.name());
            assert!(!format.about().is_empty(), "{format}");
            assert_eq!(
                Format::detect_line(format.sample()),
                Some(*format),
                "{format}'s sample {:?}",
                format.sample()
            );
        }
        let (last, rest) = names.split_last().unwrap();
        let listed = format!("{} or {last}", rest.join(", "));
        assert_eq!(Format::names(), listed);
        let unknown = "parquet".parse::<Format>().unwrap_err().to_string();
        assert_eq!(
            unknown,
            format!("unknown trace format \"parquet\" (expected {listed})")
        );

        let dir = tempfile::TempDir::new().unwrap();
        for format in Format::ALL {
            let path = dir.path().join(format.name());
            std::fs::write(&path, format!("{}\n", format.sample())).unwrap();
            assert_eq!(Format::detect(&path).unwrap(), *format);
            let source = open(std::slice::from_ref(&path), None, &ReadOptions::default())
                .unwrap_or_else(|e| panic!("{format}: {e}"));
            assert!(!source.resources().is_empty(), "{format}");
            if format.machines.is_none() {
                let machines = read_machines(&path, *format);
                assert!(matches!(machines, Err(TraceError::NoMachineList(f)) if f == *format));
            }
        }
    }

    /// Detection as it was written before the registry, one `if` after another.
    fn detect_as_before(line: &str) -> Option<&'static str> {
        let is_number = |field: Option<&str>| field.is_some_and(|f| f.parse::<f64>().is_ok());
        if line.starts_with(';') {
            Some("swf")
        } else if line.split('|').any(|h| h.trim() == "JobID") {
            Some("sacct")
        } else if line.split(',').any(|h| h.trim() == "creation_time") {
            Some("alibaba")
        } else if line.split_ascii_whitespace().nth(1).is_some() {
            is_number(line.split_ascii_whitespace().next()).then_some("swf")
        } else {
            is_number(line.split(',').next()).then_some("google")
        }
    }

    /// The registry's ranks keep detection's precedence exactly: SWF's `;` before everything,
    /// sacct's header before Alibaba's, headers before the shape of a record, and a
    /// whitespace-separated line that does not start with a number is no format's.
    #[test]
    fn detection_keeps_its_precedence() {
        // The formats the if-chain knew (formats registered since claim lines of their own).
        const OLD: &[Format] = &[Format::SWF, Format::GOOGLE, Format::ALIBABA, Format::SACCT];
        let pieces = [
            ";",
            "; ",
            "1",
            "1 ",
            "x ",
            "12,",
            "12, ",
            "abc",
            "JobID",
            "|JobID|",
            "JobID|x",
            ",creation_time",
            "creation_time,",
            " 2",
            "|",
            ",",
            "-1 ",
            "1e3,",
            "nan",
        ];
        let mut lines: Vec<String> = Format::ALL.iter().map(|f| f.sample.to_owned()).collect();
        lines.push("1 0 10 3600 4 -1 -1 4 7200 -1 1 7 -1 -1 1 -1 -1 -1".to_owned());
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    lines.push(format!("{a}{b}{c}").trim().to_owned());
                }
            }
        }
        for line in &lines {
            assert_eq!(
                Format::detect_among(OLD, line).map(|f| f.name()),
                detect_as_before(line),
                "{line:?}"
            );
        }
        for (line, name) in [
            ("; JobID|x,creation_time", Some("swf")),
            ("JobID|x,creation_time", Some("sacct")),
            ("1 x|JobID", Some("sacct")),
            ("1 x,creation_time", Some("alibaba")),
            ("12, abc", None),
            ("12,abc", Some("google")),
            ("hello world", None),
        ] {
            assert_eq!(
                Format::detect_among(OLD, line).map(|f| f.name()),
                name,
                "{line}"
            );
        }
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
        let empty = dir.path().join("empty.swf");
        std::fs::write(&empty, "\n  \n").unwrap();
        let error = open(&[empty], None, &options).err().unwrap();
        assert!(matches!(error, TraceError::Empty { .. }), "{error}");
        assert!(
            error.to_string().contains("empty.swf: the file is empty"),
            "{error}"
        );
    }
}
