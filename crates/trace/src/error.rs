//! The one error type of the crate.
//!
//! A trace is someone else's file: when it is wrong, the message must say where (file and line),
//! which field, and what was expected, so the user can look at the line and decide. Errors about
//! one record are also the keys under which lenient reading counts what it skipped, so the same
//! wording serves both modes.

use crate::slurm_output::ReadError;
use crate::Format;
use fairshare_core::choice::Choice;
use fairshare_core::model::Time;
use std::path::PathBuf;
use thiserror::Error;

/// Everything that can go wrong while reading a trace.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A file could not be opened, read or decompressed.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        error: std::io::Error,
    },
    /// A field did not hold what its column needs.
    #[error("{}:{line}: field {field} ({name}): expected {expected}, found \"{found}\"", file.display())]
    Field {
        /// The file.
        file: PathBuf,
        /// The line in that file, from 1.
        line: u64,
        /// The field, from 1.
        field: usize,
        /// The field's name in the format's documentation.
        name: &'static str,
        /// What the field should hold.
        expected: &'static str,
        /// What it held.
        found: String,
    },
    /// A record had the wrong number of fields.
    #[error("{}:{line}: expected {expected} fields, found {found}", file.display())]
    FieldCount {
        /// The file.
        file: PathBuf,
        /// The line in that file, from 1.
        line: u64,
        /// The counts the format allows, in words.
        expected: &'static str,
        /// The count found.
        found: usize,
    },
    /// A record's time is earlier than the previous record's, so the stream cannot stay ordered.
    #[error("{}:{line}: time {time} is earlier than the previous record's {previous}; the records must be in time order", file.display())]
    OutOfOrder {
        /// The file.
        file: PathBuf,
        /// The line in that file, from 1.
        line: u64,
        /// This record's time.
        time: Time,
        /// The latest time before it.
        previous: Time,
    },
    /// A CSV header lacks a column the format needs.
    #[error("{}: the header has no column \"{column}\"", file.display())]
    MissingColumn {
        /// The file.
        file: PathBuf,
        /// The column looked for.
        column: &'static str,
    },
    /// A Slurm dump's header is not `|`-separated: `sacct` ran without `--parsable2`.
    #[error("{}: the header {header:?} is not separated by `|`: a Slurm dump is the output of `sacct --parsable2` (without it sacct pads its columns with spaces and cuts long values); `fairshare slurm collect --dry-run` prints the whole command", file.display())]
    NotParsable {
        /// The file.
        file: PathBuf,
        /// Its header, as read.
        header: String,
    },
    /// A file holds nothing but blank lines, if anything.
    #[error("{}: the file is empty (no line but blank ones): a trace file holds at least one record", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The first line of a file matches none of the formats.
    #[error("{}: the first line \"{line}\" fits none of the trace formats read here: SWF starts with a `;` header or whitespace-separated numbers; an Alibaba GPU 2023 pod list with a CSV header naming creation_time; a Google 2011 task_events part with comma-separated fields starting with a time in microseconds (if it is one of these, name it with --format)", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The start of its first non-blank line.
        line: String,
    },
    /// A name that is none of the formats' ([`Format::ALL`](crate::Format)).
    #[error("unknown trace format \"{0}\" (expected {names})", names = Format::names())]
    UnknownFormatName(String),
    /// The format has no machine list.
    #[error("the {0} format has no machine list")]
    NoMachineList(Format),
    /// No trace file was given.
    #[error("no trace files given")]
    NoInput,
    /// A machine catalogue (TOML) is malformed or inconsistent.
    #[error("{}: {message}", path.display())]
    Catalogue {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (TOML's own messages give the line and column).
        message: String,
    },
    /// A BAA timeline (TOML) is malformed or inconsistent.
    #[error("{}: {message}", path.display())]
    Timeline {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// A line of a Slurm file could not be read (the line and field are named).
    #[error("{}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        error: ReadError,
    },
    /// A share file is malformed or inconsistent.
    #[error("{}: {message}", path.display())]
    Shares {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (TOML's own messages give the line and column).
        message: String,
    },
}

impl TraceError {
    /// A line of `path` that could not be read.
    pub(crate) fn read(path: impl Into<PathBuf>, error: ReadError) -> TraceError {
        TraceError::Read {
            path: path.into(),
            error,
        }
    }

    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.into(),
            error: source,
        }
    }

    /// A read that failed after `line` whole lines of `path` (a compressed file cut short, a
    /// damaged disk), saying where.
    pub(crate) fn io_after(
        path: impl Into<PathBuf>,
        line: u64,
        source: std::io::Error,
    ) -> TraceError {
        let what = match source.kind() {
            std::io::ErrorKind::InvalidInput | std::io::ErrorKind::UnexpectedEof => {
                ": the file is cut short or damaged"
            }
            _ => "",
        };
        let error =
            std::io::Error::new(source.kind(), format!("after line {line}: {source}{what}"));
        TraceError::io(path, error)
    }

    /// The reason under which lenient reading counts a record rejected with this error, or
    /// `None` when the error is not about one record and must end the stream in any mode.
    pub fn skip_reason(&self) -> Option<String> {
        match self {
            TraceError::Field { field, name, .. } => {
                Some(format!("malformed: field {field} ({name})"))
            }
            TraceError::FieldCount { .. } => Some("malformed: field count".to_owned()),
            TraceError::OutOfOrder { .. } => Some("out of order".to_owned()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TraceError;
    use std::path::PathBuf;

    #[test]
    fn record_errors_have_stable_skip_reasons() {
        let field = TraceError::Field {
            file: PathBuf::from("t.swf"),
            line: 3,
            field: 4,
            name: "run time",
            expected: "a number",
            found: "x".into(),
        };
        assert_eq!(
            field.to_string(),
            "t.swf:3: field 4 (run time): expected a number, found \"x\""
        );
        assert_eq!(
            field.skip_reason().as_deref(),
            Some("malformed: field 4 (run time)")
        );
        let io = TraceError::io("t.swf", std::io::Error::other("gone"));
        assert_eq!(io.to_string(), "t.swf", "the system's error is its source");
        assert_eq!(fairshare_core::error::Chain(&io).to_string(), "t.swf: gone");
        assert_eq!(io.skip_reason(), None);
    }
}
