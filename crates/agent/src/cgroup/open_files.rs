//! Counter and knob files kept open between cycles, so that reading a counter or writing a
//! knob costs one system call rather than an open, a path walk and a close.

use super::{clip, out_of_files, parse, read, Knob, Place};
use rustc_hash::FxHashMap;
use std::fs;
use std::io::{self, ErrorKind};

/// Counter and knob files kept open between cycles and used again in place (a read at offset 0
/// makes the kernel regenerate the contents; a write at offset 0 sets the value): a cycle then
/// costs one system call per counter, and a knob one per write, not an open, a path walk, the
/// read or write and a close (about 0.5 µs against 6–7 µs on cgroupfs). At most `budget`
/// files are kept open (the process's file limit less a reserve), counters first since they
/// are read every cycle; beyond that, or when an open fails, a file is used by path, so that
/// any number of workloads is served.
#[derive(Debug)]
pub struct OpenFiles {
    open: FxHashMap<String, (u64, [Option<fs::File>; SLOTS])>,
    buf: Vec<u8>,
    budget: usize,
    held: usize,
}

/// Counters kept open per cgroup (CPU, I/O, memory).
pub const COUNTERS: usize = 3;
/// Knobs kept open per cgroup: at most one per [`KnobKind`](super::KnobKind).
pub const KNOBS: usize = 3;
/// Files kept open per cgroup: its counters, then its knobs.
const SLOTS: usize = COUNTERS + KNOBS;

impl OpenFiles {
    /// No file open yet; at most `budget` will be kept open.
    pub fn with_budget(budget: usize) -> OpenFiles {
        OpenFiles {
            open: FxHashMap::default(),
            buf: Vec::new(),
            budget,
            held: 0,
        }
    }

    /// Files kept open now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Reads counter `slot` (one of [`COUNTERS`] per cgroup) of the cgroup at `rel`, whose
    /// directory has inode `inode` (a new inode drops the files of the old cgroup).
    pub fn read(
        &mut self,
        place: &Place,
        slot: usize,
        rel: &str,
        inode: u64,
    ) -> io::Result<Option<f64>> {
        let open = || fs::File::open(place.path(rel));
        let mut buf = std::mem::take(&mut self.buf);
        let kept = self.kept(slot, rel, inode, open);
        let value = match kept.map(|file| read_at_zero(file, &mut buf)) {
            None => read(place, rel),
            Some(Err(_)) => {
                self.close(rel, slot);
                read(place, rel)
            }
            Some(Ok(len)) => {
                let text = std::str::from_utf8(&buf[..len]).unwrap_or_default();
                match parse(place.format, text) {
                    Some(v) => Ok(Some(v)),
                    None => Err(io::Error::new(
                        ErrorKind::InvalidData,
                        format!("unexpected contents {:?}", clip(text)),
                    )),
                }
            }
        };
        self.buf = buf;
        value
    }

    /// Writes `value` to the `k`-th of the layout's knobs (one of [`KNOBS`]) of the cgroup
    /// at `rel`, whose directory has inode `inode`. An error is the kernel's (a value
    /// refused, the cgroup gone); the file is opened again at the next write.
    pub fn write(
        &mut self,
        knob: &Knob,
        k: usize,
        rel: &str,
        inode: u64,
        value: u64,
    ) -> io::Result<()> {
        let path = || knob.mount.join(rel).join(&knob.file);
        let open = || on_cgroupfs(fs::OpenOptions::new().write(true).open(path())?);
        let text = value.to_string();
        let kept = match k < KNOBS {
            true => self.kept(COUNTERS + k, rel, inode, open),
            false => None,
        };
        let Some(file) = kept else {
            return fs::write(path(), text);
        };
        let written = file_write_at(file, text.as_bytes());
        if written.is_err() {
            self.close(rel, COUNTERS + k);
        }
        written
    }

    /// The file kept open in `slot` of the cgroup at `rel`, opened with `open` if it is not
    /// yet and the budget allows; `None` to use it by path.
    fn kept(
        &mut self,
        slot: usize,
        rel: &str,
        inode: u64,
        open: impl FnOnce() -> io::Result<fs::File>,
    ) -> Option<&fs::File> {
        // Looked up before inserting: a cycle uses every counter, and a key made for each
        // use would be an allocation per counter.
        if !self.open.contains_key(rel) {
            self.open
                .insert(rel.to_string(), (inode, Default::default()));
        }
        let entry = self.open.get_mut(rel).expect("inserted above");
        if entry.0 != inode {
            self.held -= entry.1.iter().flatten().count();
            *entry = (inode, Default::default());
        }
        if entry.1[slot].is_none() && self.held < self.budget {
            match open() {
                Ok(file) => {
                    entry.1[slot] = Some(file);
                    self.held += 1;
                }
                // Out of descriptors: keep no more than are open now.
                Err(e) if out_of_files(&e) => self.budget = self.held,
                Err(_) => {}
            }
        }
        entry.1[slot].as_ref()
    }

    /// Closes the file in `slot` of the cgroup at `rel`.
    fn close(&mut self, rel: &str, slot: usize) {
        if let Some(entry) = self.open.get_mut(rel) {
            if entry.1[slot].take().is_some() {
                self.held -= 1;
            }
        }
    }

    /// Closes the files of cgroups not in `keep`.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.open.retain(|rel, _| keep(rel));
        self.held = self
            .open
            .values()
            .map(|(_, files)| files.iter().flatten().count())
            .sum();
    }
}

/// `file` if it is on a cgroup file system, where a write replaces the value; another file
/// (a test's tree of regular files) is written by path, which truncates it.
fn on_cgroupfs(file: fs::File) -> io::Result<fs::File> {
    const CGROUP_SUPER_MAGIC: u64 = 0x0027_e0eb;
    const CGROUP2_SUPER_MAGIC: u64 = 0x6367_7270;
    let kind = rustix::fs::fstatfs(&file)?.f_type as u64;
    if matches!(kind, CGROUP_SUPER_MAGIC | CGROUP2_SUPER_MAGIC) {
        Ok(file)
    } else {
        Err(io::Error::new(
            ErrorKind::Unsupported,
            "not on a cgroup file system",
        ))
    }
}

/// Writes `bytes` at offset 0 of a kept knob file: cgroupfs takes a write whole, so a short
/// one is an error.
fn file_write_at(file: &fs::File, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let n = file.write_at(bytes, 0)?;
    if n == bytes.len() {
        Ok(())
    } else {
        Err(io::Error::new(
            ErrorKind::WriteZero,
            "a knob write was cut short",
        ))
    }
}

/// The whole file, read from offset 0 into the front of `buf`; returns its length. A read that
/// leaves room in the buffer has reached the end: cgroupfs generates a counter file whole into
/// as much room as it is given (and a file system's regular file is read short only at its
/// end), so a counter costs one system call, not a second one to find the end. `buf` only
/// grows and is not cleared (what lies past the returned length is an earlier file's), so no
/// counter pays for zeroing 4 KiB.
fn read_at_zero(file: &fs::File, buf: &mut Vec<u8>) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut at = 0;
    loop {
        if buf.len() == at {
            buf.resize(at + 4096.max(at), 0);
        }
        let room = buf.len() - at;
        let n = file.read_at(&mut buf[at..], at as u64)?;
        at += n;
        if n == 0 || n < room {
            return Ok(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_file_is_read_whole_whatever_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = Vec::new();
        // Longer files, then shorter ones into the same (grown, not cleared) buffer.
        for len in [0, 1, 4095, 4096, 4097, 8192, 20_000, 5, 0] {
            let path = dir.path().join(format!("counter-{len}"));
            let text: Vec<u8> = (0..len).map(|i| b'0' + (i % 10) as u8).collect();
            fs::write(&path, &text).unwrap();
            let read = read_at_zero(&fs::File::open(&path).unwrap(), &mut buf).unwrap();
            assert_eq!(&buf[..read], &text[..], "{len} bytes");
        }
    }
}
