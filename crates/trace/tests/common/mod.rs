//! Helpers shared by the behaviour tests: hand-written trace files in a temporary folder.

#![allow(dead_code)]

use fairshare_trace::{open, Format, ReadOptions, ReadStats, Task, TraceError};
use flate2::{write::GzEncoder, Compression};
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Writes `text` to `dir/name`.
pub fn write(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// Writes `text` gzip-compressed to `dir/name`.
pub fn write_gz(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    let mut gz = GzEncoder::new(
        std::fs::File::create(&path).expect("create"),
        Compression::default(),
    );
    gz.write_all(text.as_bytes()).expect("write");
    gz.finish().expect("finish");
    path
}

/// Everything one read of a trace gives.
pub struct Read {
    /// Tasks yielded, in order.
    pub tasks: Vec<Task>,
    /// The error that ended the stream, if any.
    pub error: Option<TraceError>,
    /// The final statistics.
    pub stats: ReadStats,
    /// Resource names.
    pub resources: Vec<String>,
    /// Resource units.
    pub units: Vec<String>,
    /// User names.
    pub users: Vec<String>,
    /// Partition names.
    pub partitions: Vec<String>,
}

/// Reads `paths` as `format` to the end of the stream.
pub fn read(paths: &[impl AsRef<Path>], format: Option<Format>, options: &ReadOptions) -> Read {
    let paths: Vec<PathBuf> = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
    let mut source = open(&paths, format, options).expect("open");
    let mut tasks = Vec::new();
    let mut error = None;
    for item in &mut source {
        match item {
            Ok(task) => tasks.push(task),
            Err(e) => error = Some(e),
        }
    }
    assert!(source.next().is_none(), "the stream must stay ended");
    Read {
        tasks,
        error,
        stats: source.stats().clone(),
        resources: source.resources().to_vec(),
        units: source.units().to_vec(),
        users: source.users().to_vec(),
        partitions: source.partitions().to_vec(),
    }
}

/// Reads strictly and expects no error; checks order and reconciliation.
pub fn read_ok(paths: &[impl AsRef<Path>], format: Option<Format>) -> Read {
    let read = read(paths, format, &ReadOptions::default());
    if let Some(e) = &read.error {
        panic!("unexpected error: {e}");
    }
    assert_sound(&read);
    read
}

/// Reads leniently; checks order and reconciliation.
pub fn read_lenient(paths: &[impl AsRef<Path>], format: Option<Format>) -> Read {
    let options = ReadOptions {
        lenient: true,
        ..ReadOptions::default()
    };
    let read = read(paths, format, &options);
    assert!(read.error.is_none(), "{:?}", read.error);
    assert_sound(&read);
    read
}

/// Submit order, demand shapes, and found = yielded + skipped.
pub fn assert_sound(read: &Read) {
    for pair in read.tasks.windows(2) {
        assert!(pair[0].submit <= pair[1].submit, "order: {pair:?}");
    }
    for task in &read.tasks {
        assert_eq!(task.demand.len(), read.resources.len());
        assert!((task.user as usize) < read.users.len());
    }
    assert_eq!(read.stats.tasks_yielded, read.tasks.len() as u64);
    assert!(read.stats.reconciles(), "{:?}", read.stats);
}

/// The error a strict read of `path` stops at, as text.
pub fn strict_error(path: &Path) -> String {
    let read = read(&[path], None, &ReadOptions::default());
    read.error.expect("a strict read fails").to_string()
}

/// The skip count under `reason`.
pub fn skipped(read: &Read, reason: &str) -> u64 {
    read.stats.tasks_skipped.get(reason).copied().unwrap_or(0)
}
