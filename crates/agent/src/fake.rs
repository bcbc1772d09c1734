//! A fake cgroup tree in a folder, shaped as the kernel shapes v1, v2 and hybrid hosts, for
//! tests and benchmarks on machines where cgroups cannot be written (and to drive counters
//! exactly where they can).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Which host to imitate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Unified hierarchy with cpu, io and memory controllers.
    V2,
    /// v1 controllers mounted apart (cpu, cpuacct, memory, blkio), no v2 tree.
    V1,
    /// v1 controllers and an empty v2 tree at `unified`, as systemd's hybrid mode.
    Hybrid,
}

/// A fake tree: its root and shape.
#[derive(Debug, Clone)]
pub struct FakeTree {
    /// The folder standing for `/sys/fs/cgroup`.
    pub root: PathBuf,
    /// Its shape.
    pub shape: Shape,
}

impl FakeTree {
    /// Makes the hierarchies' roots under `root`.
    pub fn new(root: &Path, shape: Shape) -> io::Result<FakeTree> {
        let tree = FakeTree {
            root: root.to_path_buf(),
            shape,
        };
        fs::create_dir_all(root)?;
        match shape {
            Shape::V2 => {
                fs::write(
                    root.join("cgroup.controllers"),
                    "cpuset cpu io memory pids\n",
                )?;
                fs::write(root.join("cpu.stat"), "usage_usec 0\n")?;
            }
            Shape::V1 | Shape::Hybrid => {
                for (dir, files) in V1_FILES {
                    let d = root.join(dir);
                    fs::create_dir_all(&d)?;
                    for (file, content) in *files {
                        fs::write(d.join(file), content)?;
                    }
                }
                if shape == Shape::Hybrid {
                    let u = root.join("unified");
                    fs::create_dir_all(&u)?;
                    fs::write(u.join("cgroup.controllers"), "")?;
                }
            }
        }
        Ok(tree)
    }

    /// Makes the cgroup `rel` (all its parents too) in every hierarchy, counters at zero.
    pub fn add(&self, rel: &str) -> io::Result<()> {
        for (dir, files) in self.hierarchies() {
            let d = dir.join(rel);
            fs::create_dir_all(&d)?;
            for (file, content) in files {
                fs::write(d.join(file), content)?;
            }
        }
        Ok(())
    }

    /// Removes the cgroup `rel` from every hierarchy.
    pub fn remove(&self, rel: &str) -> io::Result<()> {
        for (dir, _) in self.hierarchies() {
            fs::remove_dir_all(dir.join(rel))?;
        }
        Ok(())
    }

    /// Sets `rel`'s counters: CPU-seconds and bytes moved since it was made, memory in use.
    /// Files are rewritten in place, as the kernel's stay the same file (the agent keeps them
    /// open); a reader may see one half written, which the agent must survive.
    pub fn set(&self, rel: &str, cpu_s: f64, io_bytes: u64, memory_bytes: u64) -> io::Result<()> {
        let r = |sub: &str| self.root.join(sub).join(rel);
        match self.shape {
            Shape::V2 => {
                let d = self.root.join(rel);
                fs::write(
                    d.join("cpu.stat"),
                    format!(
                        "usage_usec {}\nuser_usec 0\nsystem_usec 0\n",
                        (cpu_s * 1e6).round() as u64
                    ),
                )?;
                fs::write(
                    d.join("io.stat"),
                    format!("8:0 rbytes={io_bytes} wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"),
                )?;
                fs::write(d.join("memory.current"), format!("{memory_bytes}\n"))
            }
            Shape::V1 | Shape::Hybrid => {
                fs::write(
                    r("cpuacct").join("cpuacct.usage"),
                    format!("{}\n", (cpu_s * 1e9).round() as u64),
                )?;
                fs::write(r("blkio").join("blkio.throttle.io_service_bytes"), format!("8:0 Read {io_bytes}\n8:0 Write 0\n8:0 Total {io_bytes}\nTotal {io_bytes}\n"))?;
                fs::write(
                    r("memory").join("memory.usage_in_bytes"),
                    format!("{memory_bytes}\n"),
                )
            }
        }
    }

    /// A knob's value as last written to `rel`, read back (the last word: v2's `io.weight`
    /// reads `default 100`).
    pub fn knob(&self, rel: &str, file: &str) -> Option<u64> {
        let dir = match (self.shape, file.split('.').next()?) {
            (Shape::V2, _) => self.root.clone(),
            (_, "cpu") => self.root.join("cpu"),
            (_, "blkio") => self.root.join("blkio"),
            _ => self.root.join("memory"),
        };
        fs::read_to_string(dir.join(rel).join(file))
            .ok()?
            .split_whitespace()
            .last()?
            .parse()
            .ok()
    }

    fn hierarchies(&self) -> Vec<(PathBuf, Vec<(&'static str, &'static str)>)> {
        match self.shape {
            Shape::V2 => vec![(self.root.clone(), V2_FILES.to_vec())],
            Shape::V1 | Shape::Hybrid => V1_FILES
                .iter()
                .map(|(dir, files)| (self.root.join(dir), files.to_vec()))
                .collect(),
        }
    }
}

const V2_FILES: &[(&str, &str)] = &[
    ("cgroup.controllers", "cpu io memory pids\n"),
    ("cgroup.subtree_control", "cpu io memory\n"),
    ("cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n"),
    ("cpu.weight", "100\n"),
    ("cpu.max", "max 100000\n"),
    ("io.stat", ""),
    ("io.weight", "default 100\n"),
    ("memory.current", "0\n"),
    ("memory.low", "0\n"),
    ("memory.max", "max\n"),
];

const V1_FILES: &[(&str, &[(&str, &str)])] = &[
    (
        "cpu",
        &[
            ("cpu.shares", "1024\n"),
            ("cpu.cfs_quota_us", "-1\n"),
            ("cpu.cfs_period_us", "100000\n"),
            (
                "cpu.stat",
                "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
            ),
        ],
    ),
    ("cpuacct", &[("cpuacct.usage", "0\n")]),
    (
        "memory",
        &[
            ("memory.usage_in_bytes", "0\n"),
            ("memory.limit_in_bytes", "9223372036854771712\n"),
            ("memory.soft_limit_in_bytes", "9223372036854771712\n"),
        ],
    ),
    (
        "blkio",
        &[
            ("blkio.throttle.io_service_bytes", "Total 0\n"),
            ("blkio.weight", "500\n"),
        ],
    ),
];
