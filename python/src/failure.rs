//! Why a call failed, as `fairshare.InputError` carries it: the message the command line
//! prints, and — where a trace reader knows them — the file, the line and the field as
//! attributes, so that a notebook can point at the record without parsing the message.

use crate::InputError;
use fairshare_lab::LabError;
use fairshare_trace::TraceError;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

/// A failed call: what went wrong, and where.
#[derive(Debug, Default)]
pub struct Failure {
    message: String,
    file: Option<PathBuf>,
    line: Option<u64>,
    field: Option<String>,
}

impl Failure {
    /// The failure `message`, at `file` (and `line`, `field`) when known.
    fn at(message: String, file: &Path, line: Option<u64>, field: Option<String>) -> Failure {
        Failure {
            message,
            file: Some(file.to_path_buf()),
            line,
            field,
        }
    }
}

impl Failure {
    /// A malformed record that a lenient read would skip, with the hint that says so.
    pub fn record(error: TraceError) -> Failure {
        let failure = Failure::from(error);
        Failure {
            message: format!(
                "{} (lenient=True skips such records and counts them)",
                failure.message
            ),
            ..failure
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            ..Failure::default()
        }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_owned())
    }
}

impl From<TraceError> for Failure {
    fn from(error: TraceError) -> Failure {
        let message = error.to_string();
        match error {
            TraceError::Field {
                file,
                line,
                field,
                name,
                ..
            } => Failure::at(
                message,
                &file,
                Some(line),
                Some(format!("{field} ({name})")),
            ),
            TraceError::FieldCount { file, line, .. }
            | TraceError::OutOfOrder { file, line, .. } => {
                Failure::at(message, &file, Some(line), None)
            }
            TraceError::MissingColumn { file, column } => {
                Failure::at(message, &file, None, Some(column.to_owned()))
            }
            TraceError::Io { path, .. }
            | TraceError::UnknownFormat { path, .. }
            | TraceError::Catalogue { path, .. }
            | TraceError::Timeline { path, .. }
            | TraceError::Shares { path, .. } => Failure::at(message, &path, None, None),
            _ => Failure::from(message),
        }
    }
}

impl From<LabError> for Failure {
    fn from(error: LabError) -> Failure {
        match error {
            LabError::Trace(error) => Failure::from(error),
            LabError::Record(error) => Failure::record(error),
            other => Failure::from(other.to_string()),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        Python::with_gil(|py| {
            let error = InputError::new_err(failure.message);
            let value = error.value(py);
            let file = failure.file.map(|f| f.display().to_string());
            let set = value
                .setattr("file", file)
                .and_then(|()| value.setattr("line", failure.line))
                .and_then(|()| value.setattr("field", failure.field));
            match set {
                Ok(()) => error,
                Err(e) => e,
            }
        })
    }
}
