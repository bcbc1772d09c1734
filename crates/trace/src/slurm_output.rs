//! Reading Slurm's own outputs (`sacctmgr -P`, `sshare -P`, `sprio`, the JSON of `squeue` and
//! `sinfo`): their lines, and what can go wrong, in one type for every reader. The association
//! tree is read here ([`crate::assoc`]) so that share files and the Slurm adapter share it;
//! the adapter's other readers use the same lines and errors.
//!
//! A reconcile that misreads one job could set a wrong site factor on it, so the readers are
//! strict about what they need and say exactly where they stopped: which record (a JSON array
//! index with the job's id or node's name, or a line number) and which field. They are lenient
//! about everything else: fields they do not use are never looked at.

use thiserror::Error;

/// An output of Slurm that a reader could not take.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The text is not JSON at all (or not an object at the top).
    #[error("not Slurm's JSON: {0}")]
    Json(String),
    /// Slurm's JSON has a non-empty `errors` array: the command itself failed.
    #[error("Slurm reported errors: {0}")]
    Slurm(String),
    /// A record lacks a field the reader needs, or has it in a form it cannot take.
    #[error("{record}: field `{field}` {problem}")]
    Field {
        /// Which record: `job 3 (id 42)`, `node 0 (cn1)`, `line 5`.
        record: String,
        /// The field, as Slurm names it (a JSON key or a column of the format).
        field: &'static str,
        /// What is wrong with it.
        problem: Problem,
    },
}

/// What is wrong with one field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Problem {
    /// The field is absent (or `null`, or an empty column, where a value is required).
    #[error("is missing")]
    Missing,
    /// The field holds another kind of value than the one expected.
    #[error("is not {0}")]
    WrongType(&'static str),
    /// The field holds a value of the right kind that makes no sense.
    #[error("is invalid: {0}")]
    Invalid(String),
}

impl ReadError {
    /// The field this error is about, if it is about one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ReadError::Field { field, .. } => Some(field),
            _ => None,
        }
    }

    /// An error about `field` of `record`.
    pub fn field_of(record: &str, field: &'static str, problem: Problem) -> Self {
        ReadError::Field {
            record: record.to_string(),
            field,
            problem,
        }
    }
}

/// Every non-blank line of `text`, with its name for errors: `line 5`, counting from 1.
pub fn lines(text: &str) -> impl Iterator<Item = (String, &str)> {
    (text.lines().enumerate())
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| (format!("line {}", index + 1), line))
}

/// The number of GPUs in a GRES string: the counts of its `gpu` items, `gpu:N` or
/// `gpu:type:N`, each maybe followed by `(S:…)`; a `gpu` or `gpu:type` without count is one.
pub fn gpus(gres: &str) -> Result<u64, Problem> {
    let mut total: u64 = 0;
    let sockets_left = without_sockets(gres);
    let items = sockets_left.split(',').map(str::trim);
    for item in items.filter(|item| !item.is_empty() && *item != "(null)") {
        let parts: Vec<&str> = item.split(':').collect();
        let count = match parts.as_slice() {
            ["gpu"] => Some(1),
            ["gpu", last] if !is_count(last) => Some(1),
            ["gpu", n] | ["gpu", _, n] if is_count(n) => n.parse().ok(),
            ["gpu", ..] => None,
            _ => Some(0),
        };
        total = count
            .and_then(|count| total.checked_add(count))
            .ok_or_else(|| Problem::Invalid(format!("GPU count in `{item}`")))?;
    }
    Ok(total)
}

/// Whether `text` is a count: digits only.
fn is_count(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `gres` without its parenthesised socket lists, whose commas do not separate items.
fn without_sockets(gres: &str) -> String {
    let mut depth = 0usize;
    gres.chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}
