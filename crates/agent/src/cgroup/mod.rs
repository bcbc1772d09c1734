//! Linux control groups, version 1, version 2 or both (hybrid), as one shape: where each
//! quantity of a workload is read and where each knob is written. libvirt, systemd,
//! container runtimes and batch systems all put their workloads in cgroups, so reading and
//! writing these files serves them all. The parsers are pure functions of a file's text.

use fairshare_core::heaviness::knobs::{KnobProfile, KnobRange};
use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

mod open_files;

pub use open_files::{OpenFiles, COUNTERS, KNOBS};

/// Which cgroup interface the host offers the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// One controller per hierarchy (or a few co-mounted), `/sys/fs/cgroup/cpu/…`.
    V1,
    /// The unified hierarchy, `/sys/fs/cgroup/…`.
    V2,
}

/// How a counter file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One integer of nanoseconds (`cpuacct.usage`), read as seconds.
    Nanoseconds,
    /// `usage_usec N` in a key-value file (`cpu.stat`), read as seconds.
    UsageUsec,
    /// One integer of bytes (`memory.current`, `memory.usage_in_bytes`).
    Bytes,
    /// `MAJ:MIN Read|Write N` lines (`blkio.throttle.io_service_bytes`), summed.
    BlkioBytes,
    /// `MAJ:MIN rbytes=N wbytes=N …` lines (`io.stat`), summed.
    IoStat,
    /// v1 CPU quota: `cpu.cfs_quota_us` over `cpu.cfs_period_us`, as CPUs.
    CfsQuota,
    /// v2 CPU quota: `cpu.max` (`max 100000` or `200000 100000`), as CPUs.
    CpuMax,
    /// A memory limit in bytes (`memory.max`'s `max`, or v1's huge "unlimited", is none).
    MemoryLimit,
}

/// Where one quantity of every workload lives: a hierarchy's mount and a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The hierarchy's mount point.
    pub mount: PathBuf,
    /// The file in each cgroup.
    pub file: &'static str,
    /// How it is read.
    pub format: Format,
}

impl Place {
    fn new(mount: &Path, file: &'static str, format: Format) -> Place {
        Place {
            mount: mount.to_path_buf(),
            file,
            format,
        }
    }

    /// The file of the cgroup at `rel` (relative to the mount).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.mount.join(rel).join(self.file)
    }
}

/// The knobs the agent writes, one per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KnobKind {
    /// CPU weight (`cpu.weight`, `cpu.shares`).
    Cpu,
    /// I/O weight (`io.weight`, `blkio.weight`).
    Io,
    /// Memory protection (`memory.low`, `memory.soft_limit_in_bytes`).
    Memory,
}

/// A knob file, its valid range and the kernel's own default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    /// What it steers.
    pub kind: KnobKind,
    /// The hierarchy's mount point.
    pub mount: PathBuf,
    /// The file.
    pub file: String,
    /// Its valid values (memory: from the floor up to the workload's size).
    pub range: KnobRange,
    /// A weight's kernel default (`cpu.shares` 1024, `cpu.weight` 100, …), which a neutral
    /// workload gets; `None` for memory protection.
    pub default: Option<u64>,
    /// What the kernel gives a new cgroup, as written back when the agent stops.
    pub reset: String,
}

impl Knob {
    /// The value for a priority (−50 highest … 50 lowest): a weight is its kernel default
    /// times (50 − p)/50, so a neutral workload weighs as much as a cgroup nobody steers and
    /// the highest priority twice that; memory protection runs linearly from the floor (10 MiB)
    /// up to the workload's memory size. Clamped to the knob's range.
    pub fn value(&self, priority: i32, memory_size: u64) -> u64 {
        let p = u64::from((50 - priority.clamp(-50, 50)).unsigned_abs());
        match self.default {
            Some(neutral) => {
                let v = u128::from(neutral) * u128::from(p) / 50;
                (v.min(u128::from(u64::MAX)) as u64).clamp(self.range.lo, self.range.hi)
            }
            None => KnobRange {
                lo: self.range.lo.min(memory_size),
                hi: memory_size,
            }
            .value(priority),
        }
    }

    /// The value of the highest priority: the scale a change is measured against.
    pub fn full_scale(&self, memory_size: u64) -> u64 {
        self.value(-50, memory_size)
    }
}

/// What the host offers: the version, where workloads are listed, each quantity's file and
/// each knob's.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// v1 or v2.
    pub version: Version,
    /// A v2 tree beside v1 controllers (a hybrid host), and the controllers it has.
    pub hybrid: Option<(PathBuf, Vec<String>)>,
    /// The hierarchy whose children are listed as workloads.
    pub primary: PathBuf,
    /// CPU time, cumulative.
    pub cpu_usage: Option<Place>,
    /// Memory in use, a level.
    pub memory_usage: Option<Place>,
    /// Bytes read and written, cumulative.
    pub io_usage: Option<Place>,
    /// The CPU quota, as CPUs.
    pub cpu_limit: Option<Place>,
    /// The memory limit, in bytes.
    pub memory_limit: Option<Place>,
    /// The knobs there are files for.
    pub knobs: Vec<Knob>,
    /// The knob ranges of this version.
    pub profile: KnobProfile,
}

/// Why the host's cgroups cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CgroupError {
    /// Nothing cgroup-like under the root.
    #[error("{0}: no cgroup hierarchy found (neither cgroup.controllers of v2 nor a v1 controller such as cpu/cpu.shares)")]
    NotFound(PathBuf),
    /// The root cannot be listed.
    #[error("{path}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl Layout {
    /// Finds out what the cgroup file system under `root` offers.
    pub fn detect(root: &Path) -> Result<Layout, CgroupError> {
        let controllers = root.join("cgroup.controllers");
        if controllers.is_file() {
            return Ok(Layout::unified(root, &read_words(&controllers)));
        }
        let entries = fs::read_dir(root).map_err(|source| CgroupError::Io {
            path: root.into(),
            source,
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        let with = |file: &str| dirs.iter().find(|d| d.join(file).is_file()).cloned();
        let cpu = with("cpu.shares");
        let cpuacct = with("cpuacct.usage");
        let memory = with("memory.usage_in_bytes");
        let blkio = with("blkio.throttle.io_service_bytes");
        let Some(primary) = cpu
            .clone()
            .or(cpuacct.clone())
            .or(memory.clone())
            .or(blkio.clone())
        else {
            return Err(CgroupError::NotFound(root.into()));
        };
        let hybrid = dirs
            .iter()
            .find(|d| d.join("cgroup.controllers").is_file())
            .map(|d| (d.clone(), read_words(&d.join("cgroup.controllers"))));
        let profile = KnobProfile::cgroup_v1();
        let mut knobs = Vec::new();
        let mut cpu_usage = cpuacct
            .as_deref()
            .map(|m| Place::new(m, "cpuacct.usage", Format::Nanoseconds));
        if let Some(m) = &cpu {
            knobs.push(cpu_knob(Version::V1, m));
            if cpu_usage.is_none() && has_usage_usec(m) {
                cpu_usage = Some(Place::new(m, "cpu.stat", Format::UsageUsec));
            }
        }
        if let Some(m) = &blkio {
            knobs.extend(v1_io_knob(m));
        }
        if let Some(m) = &memory {
            knobs.push(memory_knob(m, &profile, "-1"));
        }
        Ok(Layout {
            version: Version::V1,
            hybrid,
            primary,
            cpu_usage,
            memory_usage: memory
                .as_deref()
                .map(|m| Place::new(m, "memory.usage_in_bytes", Format::Bytes)),
            io_usage: blkio
                .as_deref()
                .map(|m| Place::new(m, "blkio.throttle.io_service_bytes", Format::BlkioBytes)),
            cpu_limit: cpu
                .as_deref()
                .map(|m| Place::new(m, "cpu.cfs_quota_us", Format::CfsQuota)),
            memory_limit: memory
                .as_deref()
                .map(|m| Place::new(m, "memory.limit_in_bytes", Format::MemoryLimit)),
            knobs,
            profile,
        })
    }

    /// The v2 layout of a unified root with these controllers.
    fn unified(root: &Path, controllers: &[String]) -> Layout {
        let has = |c: &str| controllers.iter().any(|x| x == c);
        let profile = KnobProfile::cgroup_v2();
        let mut knobs = Vec::new();
        if has("cpu") {
            knobs.push(cpu_knob(Version::V2, root));
        }
        if has("io") {
            knobs.push(v2_io_knob(root));
        }
        if has("memory") {
            knobs.push(memory_knob(root, &profile, "0"));
        }
        let place = |on: bool, file, format| on.then(|| Place::new(root, file, format));
        Layout {
            version: Version::V2,
            hybrid: None,
            primary: root.into(),
            // cpu.stat's usage_usec is there without the cpu controller.
            cpu_usage: Some(Place::new(root, "cpu.stat", Format::UsageUsec)),
            memory_usage: place(has("memory"), "memory.current", Format::Bytes),
            io_usage: place(has("io"), "io.stat", Format::IoStat),
            cpu_limit: place(has("cpu"), "cpu.max", Format::CpuMax),
            memory_limit: place(has("memory"), "memory.max", Format::MemoryLimit),
            knobs,
            profile,
        }
    }

    /// The children of a parent cgroup (relative path), sorted by name: `(name, inode)`.
    /// A parent that does not exist has no children.
    pub fn children(&self, parent: &str) -> io::Result<Vec<(String, u64)>> {
        use std::os::unix::fs::DirEntryExt;
        let dir = self.primary.join(parent);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut children = Vec::new();
        for entry in entries {
            let entry = entry?;
            // The directory entry's own type and inode: no stat per child.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                if let Some(name) = entry.file_name().to_str() {
                    children.push((name.to_string(), entry.ino()));
                }
            }
        }
        children.sort();
        Ok(children)
    }
}

/// The CPU weight knob of a version in the hierarchy at `mount`: v1 `cpu.shares` 2–262144,
/// default 1024; v2 `cpu.weight` 1–10000, default 100.
pub fn cpu_knob(version: Version, mount: &Path) -> Knob {
    match version {
        Version::V1 => weight_knob(KnobKind::Cpu, mount, "cpu.shares", (2, 262_144), 1024),
        Version::V2 => weight_knob(KnobKind::Cpu, mount, "cpu.weight", (1, 10_000), 100),
    }
}

/// A weight knob with its kernel range and default; the default is written back on reset.
fn weight_knob(
    kind: KnobKind,
    mount: &Path,
    file: &str,
    (lo, hi): (u64, u64),
    default: u64,
) -> Knob {
    Knob {
        kind,
        mount: mount.to_path_buf(),
        file: file.to_string(),
        range: KnobRange { lo, hi },
        default: Some(default),
        reset: default.to_string(),
    }
}

/// v1's I/O weight: `blkio.weight` (CFQ's, 10–1000, default 500) where the root has it, else
/// BFQ's `blkio.bfq.weight` (1–1000, default 100; only non-root cgroups have the file) where
/// BFQ is loaded, else none.
fn v1_io_knob(mount: &Path) -> Option<Knob> {
    if mount.join("blkio.weight").is_file() {
        Some(weight_knob(
            KnobKind::Io,
            mount,
            "blkio.weight",
            (10, 1000),
            500,
        ))
    } else if mount.join("blkio.bfq.io_service_bytes").is_file() {
        Some(weight_knob(
            KnobKind::Io,
            mount,
            "blkio.bfq.weight",
            (1, 1000),
            100,
        ))
    } else {
        None
    }
}

/// v2's I/O weight: `io.weight` (1–10000, default 100), or BFQ's `io.bfq.weight` (1–1000,
/// default 100) where cgroups below the root (which has neither) have that file and not the
/// plain one.
fn v2_io_knob(root: &Path) -> Knob {
    let below = subdirs(root).into_iter().flat_map(|d| {
        let mut level = subdirs(&d);
        level.push(d);
        level
    });
    let (mut plain, mut bfq) = (false, false);
    for dir in below {
        plain |= dir.join("io.weight").is_file();
        bfq |= dir.join("io.bfq.weight").is_file();
    }
    if bfq && !plain {
        weight_knob(KnobKind::Io, root, "io.bfq.weight", (1, 1000), 100)
    } else {
        weight_knob(KnobKind::Io, root, "io.weight", (1, 10_000), 100)
    }
}

/// Memory protection from the profile's floor up to the workload's size; `reset` is the
/// kernel's "none" (`memory.low` 0, v1's soft limit −1, unlimited).
fn memory_knob(mount: &Path, profile: &KnobProfile, reset: &str) -> Knob {
    Knob {
        kind: KnobKind::Memory,
        mount: mount.to_path_buf(),
        file: profile.memory.clone(),
        range: KnobRange {
            lo: profile.memory_floor,
            hi: u64::MAX,
        },
        default: None,
        reset: reset.to_string(),
    }
}

/// The directories in `dir`.
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

fn read_words(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn has_usage_usec(mount: &Path) -> bool {
    fs::read_to_string(mount.join("cpu.stat"))
        .map(|t| parse(Format::UsageUsec, &t).is_some())
        .unwrap_or(false)
}

/// Reads one quantity of the cgroup at `rel`: `Ok(None)` when the file says "no value"
/// (no limit), an error of kind `NotFound` when the cgroup or file is gone.
pub fn read(place: &Place, rel: &str) -> io::Result<Option<f64>> {
    let path = place.path(rel);
    let text = fs::read_to_string(&path)?;
    match place.format {
        Format::CfsQuota => {
            let period = fs::read_to_string(path.with_file_name("cpu.cfs_period_us"))?;
            Ok(cfs_quota(&text, &period))
        }
        format => match parse(format, &text) {
            Some(v) if format == Format::MemoryLimit => Ok(memory_limit(v)),
            Some(v) => Ok(Some(v)),
            None if is_unlimited(format, &text) => Ok(None),
            None => Err(io::Error::new(
                ErrorKind::InvalidData,
                format!("unexpected contents {:?}", clip(&text)),
            )),
        },
    }
}

/// A memory limit of `v` bytes, or none for v1's "unlimited" (a page-rounded `i64::MAX`).
fn memory_limit(v: f64) -> Option<f64> {
    (v < (1u64 << 62) as f64).then_some(v)
}

fn is_unlimited(format: Format, text: &str) -> bool {
    matches!(format, Format::MemoryLimit | Format::CpuMax)
        && text.split_whitespace().next() == Some("max")
}

/// Parses a counter or limit file's text; `None` when it does not have the expected shape.
pub fn parse(format: Format, text: &str) -> Option<f64> {
    match format {
        Format::Nanoseconds => single(text).map(|ns| ns as f64 / 1e9),
        Format::Bytes | Format::MemoryLimit => single(text).map(|b| b as f64),
        Format::UsageUsec => text
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|us| us as f64 / 1e6),
        Format::BlkioBytes => sum_lines(text, |l| {
            let mut w = l.split_whitespace();
            if !w.next()?.contains(':') {
                return Some(0); // "Total N"
            }
            let (op, n) = (w.next()?, w.next()?.parse::<u64>().ok()?);
            Some(if matches!(op, "Read" | "Write") { n } else { 0 })
        }),
        Format::IoStat => sum_lines(text, |l| {
            let mut sum = 0u64;
            for field in l.split_whitespace().skip(1) {
                let (key, value) = field.split_once('=')?;
                if matches!(key, "rbytes" | "wbytes") {
                    sum = sum.checked_add(value.parse().ok()?)?;
                }
            }
            Some(sum)
        }),
        Format::CpuMax => {
            let mut w = text.split_whitespace();
            let (quota, period) = (w.next()?, w.next().unwrap_or("100000"));
            let (q, p) = (quota.parse::<u64>().ok()?, period.parse::<u64>().ok()?);
            (p > 0).then(|| q as f64 / p as f64)
        }
        Format::CfsQuota => None,
    }
}

/// v1's CPU quota: `None` when unlimited (−1).
pub fn cfs_quota(quota: &str, period: &str) -> Option<f64> {
    let q = quota.trim().parse::<i64>().ok()?;
    let p = period.trim().parse::<i64>().ok()?;
    (q > 0 && p > 0).then(|| q as f64 / p as f64)
}

fn single(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

fn sum_lines(text: &str, line: impl Fn(&str) -> Option<u64>) -> Option<f64> {
    let mut sum = 0u64;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        sum = sum.checked_add(line(l)?)?;
    }
    Some(sum as f64)
}

fn clip(text: &str) -> &str {
    let end = text.char_indices().nth(80).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// Writes the kernel's default back to a knob of the cgroup at `rel`.
pub fn reset(knob: &Knob, rel: &str) -> io::Result<()> {
    fs::write(knob.mount.join(rel).join(&knob.file), &knob.reset)
}

/// Whether an error means this process has run out of file descriptors (EMFILE, ENFILE):
/// the agent's trouble, not the kernel refusing a value or a cgroup gone.
pub fn out_of_files(e: &io::Error) -> bool {
    use rustix::io::Errno;
    matches!(Errno::from_io_error(e), Some(Errno::MFILE | Errno::NFILE))
}

/// Whether the cgroup at `rel` still exists in the listed hierarchy.
pub fn exists(layout: &Layout, rel: &str) -> bool {
    layout.primary.join(rel).is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_parse_as_the_kernel_writes_them() {
        assert_eq!(parse(Format::Nanoseconds, "2500000000\n"), Some(2.5));
        let stat = "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n";
        assert_eq!(parse(Format::UsageUsec, stat), Some(1.5));
        assert_eq!(parse(Format::UsageUsec, "nr_periods 0\n"), None);
        let blkio =
            "8:0 Read 100\n8:0 Write 20\n8:0 Sync 120\n8:0 Total 120\n8:16 Read 5\nTotal 125\n";
        assert_eq!(parse(Format::BlkioBytes, blkio), Some(125.0));
        assert_eq!(
            parse(Format::BlkioBytes, "Total 0\n"),
            Some(0.0),
            "a fresh cgroup"
        );
        let io = "8:0 rbytes=100 wbytes=20 rios=3 wios=1 dbytes=7 dios=1\n8:16 rbytes=5 wbytes=0\n";
        assert_eq!(parse(Format::IoStat, io), Some(125.0));
        assert_eq!(parse(Format::IoStat, ""), Some(0.0));
        assert_eq!(parse(Format::CpuMax, "200000 100000\n"), Some(2.0));
        assert_eq!(parse(Format::CpuMax, "max 100000\n"), None);
        assert_eq!(cfs_quota("-1\n", "100000\n"), None);
        assert_eq!(cfs_quota("50000\n", "100000\n"), Some(0.5));
    }

    #[test]
    fn hostile_text_is_refused_not_misread() {
        for text in ["", "abc", "-5", "1e3", "18446744073709551616"] {
            assert_eq!(parse(Format::Nanoseconds, text), None, "{text:?}");
        }
        let overflow = "8:0 Read 18446744073709551615\n8:1 Read 1\n";
        assert_eq!(parse(Format::BlkioBytes, overflow), None);
        assert_eq!(parse(Format::IoStat, "8:0 rbytes=x\n"), None);
        assert_eq!(parse(Format::CpuMax, "10 0"), None);
    }
}
