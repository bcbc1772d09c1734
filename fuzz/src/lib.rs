//! What every fuzz target of fairshare checks, in one place: the readers take files, so the
//! input is written to a file first; then whatever comes out must obey the readers' contract.
//!
//! The contract (see `fairshare_trace`): no panic; tasks in submit order with one finite,
//! non-negative amount per resource and times within `Time::LONGEST_INPUT_S`; an error about a
//! record names `file:line:`; a stream that ends without error reconciles its counts; lenient
//! reading only stops on errors that are not about one record.

use fairshare_core::model::Time;
use fairshare_trace::{open, read_machines, Format, NodeType, ReadOptions, TaskSource, TraceError};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The largest time a reader may yield, in microseconds (submit plus runtime stays below it
/// twice over).
const LATEST: u64 = (Time::LONGEST_INPUT_S * 1e6) as u64;

/// Writes `data` to the file `name` in this process's scratch folder and returns its path.
pub fn file(name: &str, data: &[u8]) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::TempDir::new().expect("a scratch folder"));
    let path = dir.path().join(name);
    std::fs::write(&path, data).expect("write the input");
    path
}

/// Reads `data` as a trace of `format`, strictly and leniently, checking the contract.
pub fn trace(name: &str, format: Format, data: &[u8]) {
    let path = file(name, data);
    for lenient in [false, true] {
        let options = ReadOptions {
            lenient,
            ..ReadOptions::default()
        };
        let source = open(std::slice::from_ref(&path), Some(format), &options).expect("opens");
        drain(source, &path, lenient);
    }
}

/// Reads `data` as Google parts into the BAA experiment's SUBMIT pool: every request kept is
/// positive and finite, no more tasks than requests, and an error names the file.
pub fn submit_pool(name: &str, data: &[u8]) {
    let path = file(name, data);
    match fairshare_trace::google::submit_requests(std::slice::from_ref(&path)) {
        Ok(pool) => {
            assert!(pool.tasks <= pool.requests.len());
            let usable = |x: f64| x.is_finite() && x > 0.0;
            assert!(pool.requests.iter().all(|[c, m]| usable(*c) && usable(*m)));
        }
        Err(error) => record_error_names_its_line(&error, &path),
    }
}

/// Pulls the whole stream and checks every task, the error if any, and the final counts.
fn drain(mut source: Box<dyn TaskSource + Send>, path: &Path, lenient: bool) {
    let mut last = Time::ZERO;
    while let Some(item) = source.next() {
        match item {
            Ok(task) => {
                assert_eq!(task.demand.len(), source.resources().len());
                assert!(task.demand.iter().all(|d| d.is_finite() && *d >= 0.0), "{task:?}");
                assert!(task.submit.as_micros() <= LATEST && task.runtime <= LATEST, "{task:?}");
                assert!(task.submit >= last, "order: {task:?} after {last}");
                assert!((task.user as usize) < source.users().len());
                last = task.submit;
            }
            Err(error) => {
                assert!(!(lenient && error.skip_reason().is_some()), "lenient stopped: {error}");
                record_error_names_its_line(&error, path);
                assert!(source.next().is_none(), "the stream ends after an error");
                return;
            }
        }
    }
    assert!(source.stats().reconciles(), "{:?}", source.stats());
}

/// An error about one record says `file:line:`.
pub fn record_error_names_its_line(error: &TraceError, path: &Path) {
    if error.skip_reason().is_some() {
        let text = error.to_string();
        let rest = text
            .strip_prefix(&format!("{}:", path.display()))
            .unwrap_or_else(|| panic!("no file in {text}"));
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        assert!(digits > 0 && rest[digits..].starts_with(':'), "no line in {text}");
    }
}

/// Reads `data` as a machine list of `format`, checking every capacity.
pub fn machines(name: &str, format: Format, data: &[u8]) {
    let path = file(name, data);
    match read_machines(&path, format) {
        Ok(machines) => machines.types.iter().for_each(sound_machine),
        Err(error) => record_error_names_its_line(&error, &path),
    }
}

fn sound_machine(machine: &NodeType) {
    assert!(
        machine.capacity.iter().all(|c| c.is_finite() && *c >= 0.0),
        "{machine:?}"
    );
}
