//! What every reader of OpenPBS's outputs shares: its error, and its times, sizes and
//! durations as it prints them.

use fairshare_core::model::Time;
use std::time::UNIX_EPOCH;

/// Why an output of OpenPBS's could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// It is not the JSON `-F json` prints.
    #[error("not the JSON of `-F json`: {0}")]
    Json(#[from] serde_json::Error),
    /// One of its values is not what OpenPBS prints there.
    #[error("{item}: {field} is {found:?}, expected {expected}")]
    Value {
        /// The job, node or line.
        item: String,
        /// The attribute.
        field: &'static str,
        /// What it holds.
        found: String,
        /// What it should hold.
        expected: &'static str,
    },
    /// A file could not be read.
    #[error("{path}")]
    File {
        /// The file.
        path: String,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// A line of the fairshare tree does not fit in it.
    #[error("resource_group line {line}")]
    Tree {
        /// The line, from 1.
        line: usize,
        /// Why not.
        #[source]
        error: fairshare_core::model::AccountError,
    },
}

/// `found` in `field` of `item`, where `expected` belongs.
pub fn bad(item: &str, field: &'static str, found: &str, expected: &'static str) -> OutputError {
    let (item, found) = (item.to_string(), found.to_string());
    OutputError::Value {
        item,
        field,
        found,
        expected,
    }
}

/// A time as OpenPBS prints it, `Mon Nov 30 08:00:00 2026`, on a server that keeps UTC.
pub fn time(text: &str) -> Option<Time> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let words: Vec<&str> = text.split_whitespace().collect();
    let [_, month, day, clock, year] = words[..] else {
        return None;
    };
    let month = MONTHS.iter().position(|m| *m == month)? + 1;
    let day: u32 = day.parse().ok()?;
    let at = humantime::parse_rfc3339(&format!("{year}-{month:02}-{day:02}T{clock}Z")).ok()?;
    Some(Time::from_micros(
        at.duration_since(UNIX_EPOCH).ok()?.as_micros() as u64,
    ))
}

/// A size as OpenPBS prints it (`8gb`, `65536000kb`; bytes without a unit), in KB.
pub fn kb(text: &str) -> Option<f64> {
    let number = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let scale = match text[number.len()..].to_ascii_lowercase().as_str() {
        "" | "b" => 1.0 / 1024.0,
        "kb" => 1.0,
        "mb" => 1024.0,
        "gb" => 1024.0 * 1024.0,
        "tb" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * scale)
}

/// A duration as OpenPBS prints it, `[[hours:]minutes:]seconds`, in seconds.
pub fn seconds(text: &str) -> Option<u64> {
    (text.split(':')).try_fold(0, |total, part| {
        Some(total * 60 + part.parse::<u64>().ok()?)
    })
}
