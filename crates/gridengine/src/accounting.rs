//! What ran, from Grid Engine's accounting file (`$SGE_ROOT/$SGE_CELL/common/accounting`, the
//! file `qacct` reads): one `:`-separated line of 45 fields per finished job, appended when the
//! job ends (up to `flush_time` later).
//!
//! The file only grows between rotations, and on a busy cluster it grows large, so it is not
//! read whole each pass: [`AccountingFile`] reads on from where the last read stopped; from the
//! start again when the file was rotated (another file, or a shorter one) or a read reaches
//! back earlier than any before (the history was rebuilt); and from where the last read
//! started when a read asks from no later moment than it did (the pass that read it failed
//! before its history took the records in, so they are given again). A record is read only
//! once whole (its line ended).

use crate::queue::task_id;
use crate::{number, OutputError};
use fairshare_core::model::Time;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where Debian's Grid Engine writes its accounting.
pub const DEFAULT_ACCOUNTING: &str = "/var/lib/gridengine/default/common/accounting";

/// One finished job (or task) of the accounting file.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its id ([`task_id`] of its job number and task number).
    pub id: u64,
    /// Its owner.
    pub owner: String,
    /// The cluster queue it ran in.
    pub queue: String,
    /// When it was submitted.
    pub submit: Time,
    /// When it started.
    pub start: Time,
    /// When it ended.
    pub end: Time,
    /// The slots it held.
    pub slots: u32,
}

/// The fields of a record line.
const FIELDS: usize = 45;

/// The record of one line of the file (`line` its number, for errors); `None` for a job that
/// never started (start time 0: it failed before, and ran nothing).
pub fn parse_record(text: &str, line: usize) -> Result<Option<Record>, OutputError> {
    let place = format!("accounting line {line}");
    let fields: Vec<&str> = text.split(':').collect();
    if fields.len() != FIELDS {
        let found = format!("{} fields", fields.len());
        return Err(OutputError::new(
            place,
            "record",
            "45 `:`-separated fields",
            &found,
        ));
    }
    let secs = |i: usize, name: &str| -> Result<u64, OutputError> {
        number(fields[i], &place, name, "seconds since 1970")
    };
    let start = secs(9, "start_time")?;
    if start == 0 {
        return Ok(None);
    }
    let job: u64 = number(fields[5], &place, "job_number", "a job number")?;
    let task: u64 = number(fields[35], &place, "task_number", "a task number")?;
    let at = |s: u64| Time::from_micros(s.saturating_mul(1_000_000));
    Ok(Some(Record {
        id: task_id(job, task),
        owner: fields[3].to_string(),
        queue: fields[0].to_string(),
        submit: at(secs(8, "submission_time")?),
        start: at(start),
        end: at(secs(10, "end_time")?.max(start)),
        slots: number(fields[34], &place, "slots", "a whole number of slots")?,
    }))
}

/// A place in the accounting file: the bytes of whole lines before it, the lines among them,
/// and the file (its inode) they were read from.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Mark {
    bytes: u64,
    lines: usize,
    inode: u64,
}

/// The accounting file, read on from where the last read stopped.
#[derive(Debug, Clone)]
pub struct AccountingFile {
    path: PathBuf,
    /// Where the next read starts.
    at: Mark,
    /// The moment the last read asked from, and where it started.
    last: Option<(Time, Mark)>,
    /// The earliest moment the reads since the start of the file asked from.
    from: Option<Time>,
}

impl AccountingFile {
    /// The file at `path`, not read yet.
    pub fn new(path: impl Into<PathBuf>) -> AccountingFile {
        AccountingFile {
            path: path.into(),
            at: Mark::default(),
            last: None,
            from: None,
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The records that ended from `from` on, among those written since the last read (see the
    /// module's documentation for when it reads again from further back), with a sentence for
    /// each line that could not be read.
    ///
    /// A file that does not exist holds no record (Grid Engine writes it when the first job
    /// ends), said in a note, since a wrong path looks the same.
    pub fn read(&mut self, from: Time) -> std::io::Result<(Vec<Record>, Vec<String>)> {
        let mut file = match std::fs::File::open(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let note = format!("the accounting file {} does not exist: no finished job is counted (Grid Engine writes it when the first job ends; check `accounting` in the configuration)", self.path.display());
                return Ok((Vec::new(), vec![note]));
            }
            opened => opened?,
        };
        let meta = file.metadata()?;
        let (size, inode) = (meta.len(), std::os::unix::fs::MetadataExt::ino(&meta));
        let rotated = size < self.at.bytes || inode != self.at.inode;
        if rotated || self.from.is_none_or(|f| from < f) {
            self.at = Mark {
                bytes: 0,
                lines: 0,
                inode,
            };
            (self.from, self.last) = (Some(from), None);
        } else if let Some((_, mark)) = self.last.filter(|(asked, _)| from <= *asked) {
            self.at = mark;
        }
        self.last = Some((from, self.at));
        file.seek(SeekFrom::Start(self.at.bytes))?;
        let mut bytes = Vec::new();
        file.take(size - self.at.bytes).read_to_end(&mut bytes)?;
        let whole = bytes
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let text = String::from_utf8_lossy(&bytes[..whole]);
        let (mut records, mut skipped) = (Vec::new(), Vec::new());
        for line in text.lines() {
            self.at.lines += 1;
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            match parse_record(line, self.at.lines) {
                Ok(Some(record)) if record.end >= from => records.push(record),
                Ok(_) => {}
                Err(e) => skipped.push(format!("{}: skipped {e}", self.path.display())),
            }
        }
        self.at.bytes += whole as u64;
        Ok((records, skipped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const HEADER: &str = "# Version: 8.1.9\n# \n# DO NOT MODIFY THIS FILE MANUALLY!\n# \n";

    fn line(job: u64, owner: &str, start: u64, end: u64, slots: u32, task: u64) -> String {
        format!("all.q:vm:{owner}:{owner}:sleep:{job}:sge:0:{}:{start}:{end}:0:0:5:0.002493:0.008260:4924.000000:0:0:0:0:554:0:0:0.000000:24:0:0:0:11:6:NONE:defaultdepartment:NONE:{slots}:{task}:0.010753:0.000000:0.000040:NONE:0.000000:NONE:3534848.000000:0:0\n", start - 4)
    }

    fn secs(s: u64) -> Time {
        Time::from_micros(s * 1_000_000)
    }

    #[test]
    fn a_record_is_read_with_its_task_and_slots() {
        let r = parse_record(line(7, "gea", 1000, 1005, 4, 3).trim_end(), 5)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.id, r.owner.as_str(), r.queue.as_str(), r.slots),
            (7_000_003, "gea", "all.q", 4)
        );
        assert_eq!(
            (r.submit, r.start, r.end),
            (secs(996), secs(1000), secs(1005))
        );
        let never = line(8, "gea", 1000, 1005, 1, 0).replace(":996:1000:1005:", ":996:0:1005:");
        assert_eq!(parse_record(never.trim_end(), 6), Ok(None));
        let e = parse_record("all.q:vm:gea", 9).unwrap_err();
        assert_eq!(
            e.to_string(),
            "accounting line 9: record: expected 45 `:`-separated fields, found \"3 fields\""
        );
    }

    #[test]
    fn the_file_is_read_on_from_where_the_last_read_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("accounting");
        let mut file = std::fs::File::create(&path).unwrap();
        write!(
            file,
            "{HEADER}{}{}",
            line(1, "gea", 1000, 1100, 1, 0),
            line(2, "geb", 1000, 1200, 2, 0)
        )
        .unwrap();
        // A line being written: not read until whole.
        write!(file, "all.q:vm:gec:gec:sleep:3").unwrap();
        let mut accounting = AccountingFile::new(&path);
        let missing = AccountingFile::new(dir.path().join("none"))
            .read(secs(0))
            .unwrap();
        assert!(
            missing.0.is_empty() && missing.1[0].contains("does not exist"),
            "{missing:?}"
        );
        let (records, skipped) = accounting.read(secs(1150)).unwrap();
        assert_eq!(
            records.iter().map(|r| r.id).collect::<Vec<_>>(),
            [2],
            "ended before 1150: left out"
        );
        assert!(skipped.is_empty(), "{skipped:?}");
        // The pass that read it failed: asked from the same moment, the records come again.
        let (again, _) = accounting.read(secs(1150)).unwrap();
        assert_eq!(again, records);
        let rest = line(3, "gec", 1000, 1300, 1, 0);
        write!(file, "{}", &rest["all.q:vm:gec:gec:sleep:3".len()..]).unwrap();
        let (records, _) = accounting.read(secs(1160)).unwrap();
        assert_eq!(
            records.iter().map(|r| r.id).collect::<Vec<_>>(),
            [3],
            "only what was written since"
        );
        // A read reaching back further reads the whole file again.
        let (records, _) = accounting.read(secs(0)).unwrap();
        assert_eq!(records.len(), 3);
        // A rotated file is read from its start.
        std::fs::write(
            &path,
            format!("{HEADER}{}garbage\n", line(4, "gea", 2000, 2100, 1, 0)),
        )
        .unwrap();
        let (records, skipped) = accounting.read(secs(0)).unwrap();
        assert_eq!(records.iter().map(|r| r.id).collect::<Vec<_>>(), [4]);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].ends_with("skipped accounting line 6: record: expected 45 `:`-separated fields, found \"1 fields\""), "{skipped:?}");
        // Rotated by another file at least as long: another inode, read from its start.
        let fresh = dir.path().join("fresh");
        let lines: String = (5..8).map(|id| line(id, "geb", 3000, 3100, 1, 0)).collect();
        std::fs::write(&fresh, format!("{HEADER}{lines}")).unwrap();
        std::fs::rename(&fresh, &path).unwrap();
        let (records, _) = accounting.read(secs(0)).unwrap();
        assert_eq!(records.iter().map(|r| r.id).collect::<Vec<_>>(), [5, 6, 7]);
    }
}
