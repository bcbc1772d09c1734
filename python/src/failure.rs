//! Why a call failed, as `fairshare.InputError` carries it: the message the command line
//! prints, and — where a trace reader knows them — the file, the line and the field as
//! attributes, so that a notebook can point at the record without parsing the message.

use crate::InputError;
use fairshare_core::error::Chain;
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
        let message = Chain(&error).to_string();
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
            other => Failure::from(Chain(&other).to_string()),
        }
    }
}

/// The command line's options that a message may name, as Python's keyword arguments name
/// them: `--swf-memory none` becomes `swf_memory="none"`, `give --machines FILE` `give
/// machines=FILE`, `(--lenient skips …)` `(lenient=True skips …)`, `--capacity: …`
/// `capacity: …`. Options of Slurm's own commands (`sacct --parsable2`) are left as they are.
pub fn pythonic(message: &str) -> String {
    const SLURM_S: [&str; 4] = ["parsable2", "noheader", "oneliner", "allusers"];
    const SWITCHES: [&str; 3] = ["lenient", "drain", "max-tres"];
    const CHOICES: [&str; 8] = [
        "usage",
        "swf-memory",
        "swf-cpus",
        "scheduler",
        "rule",
        "placement",
        "overrun",
        "format",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(after.len());
        let name = &after[..len];
        // An option starts the text or follows a space or a parenthesis (not a path's
        // `run--old`), and is not already written `--name=value`.
        let starts_word = out.is_empty() || out.ends_with([' ', '(']);
        if !starts_word
            || !name.starts_with(|c: char| c.is_ascii_lowercase())
            || SLURM_S.contains(&name)
            || after[len..].starts_with('=')
        {
            out.push_str("--");
            rest = after;
            continue;
        }
        rest = &after[len..];
        out.push_str(&name.replace('-', "_"));
        let word = rest.strip_prefix(' ').map(|r| {
            let end = r.find([' ', ')', ',', ';']).unwrap_or(r.len());
            &r[..end]
        });
        match word {
            _ if SWITCHES.contains(&name) => out.push_str("=True"),
            _ if rest.starts_with(':') => {}
            Some(w) if CHOICES.contains(&name) && w.chars().all(|c| c.is_ascii_lowercase()) => {
                out.push_str(&format!("=\"{w}\""));
                rest = &rest[1 + w.len()..];
            }
            Some(w)
                if w.starts_with(|c: char| c.is_ascii_lowercase())
                    && !w.contains(['=', ':', '/', '.']) => {}
            Some(w) if !w.is_empty() => {
                out.push('=');
                out.push_str(w);
                rest = &rest[1 + w.len()..];
            }
            _ => out.push('='),
        }
    }
    out.push_str(rest);
    out
}

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        Python::with_gil(|py| {
            let error = InputError::new_err(pythonic(&failure.message));
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
