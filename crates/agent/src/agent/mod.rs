//! One agent cycle: list the workloads, read their counters, turn them into the interval's
//! usage, get priorities (from the daemon, or computed here by the daemon's own cycle function
//! when standalone), and write each workload's knobs. Everything that can go wrong on a live
//! host — a cgroup removed mid-cycle, a daemon down, a knob the kernel refuses — is handled
//! here without stopping the loop, and each kind of trouble is said once, not every cycle.

mod apply;
mod decide;
mod measure;

use crate::cgroup::{self, Knob, KnobKind, Layout, OpenFiles, Place};
use crate::config::AgentConfig;
use crate::link::{Link, LinkError};
use crate::meter::{usage, Reading, Usage};
use crate::owner::Owners;
pub use decide::node_spec;
use fairshare_core::error::Chain;
use fairshare_core::error::Invalid;
use fairshare_core::heaviness::{HeavinessError, ResourceKind};
use fairshare_wire::cycle::{
    compute, Measured, Memory, NodeEntry, Registry, Settings, WorkloadEntry,
};
use fairshare_wire::model::{rate, valid_id, KnobsWritten, NodeSpec, Sample, WorkloadSpec};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::ErrorKind;
use std::time::Instant;

/// A cgroup the agent manages, as found this cycle: a child of a configured parent whose
/// owner the rule names; the daemon knows it as a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ManagedCgroup {
    /// Its id at the daemon: `node:cgroup-name`.
    pub id: String,
    /// Its cgroup's path below each hierarchy's root.
    pub cgroup: String,
    /// Its owner.
    pub owner: String,
    /// Virtual CPUs.
    pub cpu_size: f64,
    /// Virtual memory, bytes.
    pub memory_size: f64,
    #[serde(skip)]
    inode: u64,
}

/// The node's supply, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Supply {
    /// CPUs.
    pub cpu: f64,
    /// Memory bytes.
    pub memory: f64,
    /// Disk bytes per second.
    pub disk: f64,
    /// Network bytes per second.
    pub network: f64,
    /// CPU speed factor.
    pub speed: f64,
}

/// One knob write, done or (dry run) to be done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Write {
    /// The workload.
    pub workload: String,
    /// Its owner.
    pub owner: String,
    /// The priority the value comes from, −50 (highest) to 50.
    pub priority: i32,
    /// The file written.
    pub file: String,
    /// The value.
    pub value: u64,
}

/// One workload's usage over an interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// The workload.
    pub workload: String,
    /// Amount per resource name.
    pub usage: BTreeMap<String, f64>,
}

/// Where a cycle's priorities came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Computed here (standalone).
    Local,
    /// Fetched from the daemon this cycle.
    Daemon,
    /// The last ones known (the daemon did not answer, or nothing measured yet).
    #[default]
    Last,
}

/// What one cycle did.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CycleReport {
    /// The cycle's number, from 1.
    pub cycle: u64,
    /// Seconds since the previous reading (none on the first cycle).
    pub interval_s: Option<f64>,
    /// The managed cgroups found: the node's workloads.
    pub workloads: Vec<ManagedCgroup>,
    /// What each workload measured over the interval used, by resource (CPU-seconds, bytes
    /// moved, memory bytes in use).
    pub measured: Vec<Measurement>,
    /// Users' heaviness (standalone), lightest first.
    pub users: Vec<(String, f64)>,
    /// Where the priorities came from.
    pub source: Source,
    /// The knob writes (in a dry run, the ones that would be done).
    pub writes: Vec<Write>,
    /// Writes the kernel refused.
    pub refused: usize,
    /// Knobs left as written because the new value lay within `knob_step` of the old.
    pub held: usize,
    /// Workloads that disappeared during the cycle.
    pub vanished: usize,
    /// Reports waiting for the daemon.
    pub pending_reports: usize,
    /// Why the daemon was not reached, if it was not.
    pub daemon_error: Option<String>,
}

/// What reading a workload's counters gave.
enum Read {
    /// Every counter.
    Counters(Reading),
    /// The cgroup is there but a counter could not be read.
    Unreadable,
    /// The cgroup is gone.
    Gone,
}

/// Standalone mode: the daemon's cycle, run on this node alone.
#[derive(Debug)]
struct Local {
    settings: Settings,
    memory: Memory,
    cycle: u64,
    /// The registry of the last cycle's workloads.
    registry: Option<Registry>,
}

#[derive(Debug)]
enum Mode {
    Standalone(Box<Local>),
    Daemon(Box<Link>),
}

/// The agent: its configuration, what the host offers, and what it remembers between cycles.
#[derive(Debug)]
pub struct Agent {
    config: AgentConfig,
    layout: Layout,
    owners: Owners,
    node: String,
    supply: Supply,
    mode: Mode,
    dry_run: bool,
    last: FxHashMap<String, Reading>,
    last_at: Option<Instant>,
    priorities: BTreeMap<String, i32>,
    written: FxHashMap<String, [Option<u64>; cgroup::KNOBS]>,
    said: BTreeSet<String>,
    cycles: u64,
    files: OpenFiles,
    listed: BTreeMap<String, Vec<(String, u64)>>,
    /// Per parent, each child's workload as last found (named and sized) and the cycle it was
    /// last seen in.
    known: Vec<FxHashMap<String, (u64, ManagedCgroup)>>,
    managed: Vec<ManagedCgroup>,
}

/// File descriptors kept free for listings, reads and writes by path, the daemon's
/// connections and the log, beyond the counter and knob files kept open.
pub const FILE_RESERVE: u64 = 128;

/// Counter and knob files the agent may keep open: its soft file limit less [`FILE_RESERVE`].
pub fn file_budget() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let soft = limit.current.unwrap_or(u64::MAX);
    usize::try_from(soft.saturating_sub(FILE_RESERVE)).unwrap_or(usize::MAX)
}

impl Agent {
    /// An agent for this configuration on the host's cgroups as detected; `token` for the
    /// daemon; `dry_run` writes nothing and tells the daemon nothing.
    pub fn new(
        config: AgentConfig,
        layout: Layout,
        node: String,
        supply: Supply,
        token: Option<String>,
        dry_run: bool,
    ) -> Result<Agent, Invalid> {
        let owners = Owners::new(&config.owner)?;
        let mode = match &config.daemon {
            Some(daemon) => Mode::Daemon(Box::new(Link::new(
                daemon,
                token,
                &node,
                config.buffer_reports,
                now_ms().max(0) as u64,
            ))),
            None => Mode::Standalone(Box::new(Local {
                settings: Settings {
                    resources: config.resources.clone(),
                    heaviness: config.heaviness.clone(),
                    priority: config.priority,
                    profile: layout.profile.clone(),
                },
                memory: Memory::new(),
                cycle: 0,
                registry: None,
            })),
        };
        let parents = config.parents.len();
        Ok(Agent {
            config,
            layout,
            owners,
            node,
            supply,
            mode,
            dry_run,
            last: FxHashMap::default(),
            last_at: None,
            priorities: BTreeMap::new(),
            written: FxHashMap::default(),
            said: BTreeSet::new(),
            cycles: 0,
            files: OpenFiles::with_budget(file_budget()),
            listed: BTreeMap::new(),
            known: vec![FxHashMap::default(); parents],
            managed: Vec::new(),
        })
    }

    /// What was detected: lines an operator reads at start-up.
    pub fn describe(&self) -> Vec<String> {
        describe(&self.layout, &self.config, &self.node, &self.supply)
    }

    /// The link to the daemon, in daemon mode.
    pub fn link(&self) -> Option<&Link> {
        match &self.mode {
            Mode::Daemon(link) => Some(link),
            Mode::Standalone(_) => None,
        }
    }

    /// One cycle at `now`.
    pub fn cycle(&mut self, now: Instant) -> CycleReport {
        self.cycles += 1;
        match self.owners.refresh() {
            // Owners named before may have changed: every workload is named anew.
            Ok(true) => self.known.iter_mut().for_each(FxHashMap::clear),
            Ok(false) => {}
            Err(e) => self.say_once("owners", &format!("{e}; keeping the last mapping")),
        }
        let workloads = self.discover();
        let mut vanished = 0;
        let mut present = Vec::with_capacity(workloads.len());
        let mut readings = FxHashMap::default();
        readings.reserve(workloads.len());
        let mut carried = Vec::new();
        for w in workloads {
            match self.read(&w) {
                Read::Counters(r) => {
                    readings.insert(w.id.clone(), r);
                }
                Read::Unreadable => {
                    if let Some(before) = self.last.remove(&w.id) {
                        carried.push((w.id.clone(), before));
                    }
                }
                Read::Gone => {
                    vanished += 1;
                    continue;
                }
            }
            present.push(w);
        }
        let interval_s = self.last_at.map(|t| now.duration_since(t).as_secs_f64());
        let mut measured = Vec::new();
        if let Some(interval) = interval_s.filter(|&s| s > 0.0) {
            for w in &present {
                if let (Some(before), Some(now)) = (self.last.get(&w.id), readings.get(&w.id)) {
                    let u = usage(before, now);
                    if u.reset {
                        tracing::info!(workload = %w.id, "the cgroup was recreated; its counters start again from zero");
                    }
                    measured.push((w.id.clone(), self.amounts(&w.id, &u, interval)));
                }
            }
        }
        readings.extend(carried);
        self.last = readings;
        self.last_at = Some(now);
        let mut report = CycleReport {
            cycle: self.cycles,
            interval_s,
            measured: measured
                .iter()
                .map(|(id, amounts)| Measurement {
                    workload: id.clone(),
                    usage: named(&self.config.resources, amounts),
                })
                .collect(),
            vanished,
            ..CycleReport::default()
        };
        self.decide(&present, measured, interval_s, now, &mut report);
        self.apply(&present, &mut report);
        let kept: FxHashSet<&str> = present.iter().map(|w| w.cgroup.as_str()).collect();
        self.files.retain(|rel| kept.contains(rel));
        self.managed.clone_from(&present);
        report.workloads = present;
        report
    }

    /// Writes the kernel's defaults back to every knob of the workloads of the last cycle
    /// (`on_exit = "restore"`, when the agent stops), so that nothing stays weighted by
    /// priorities no one updates. Returns the knobs reset; a dry run resets nothing.
    pub fn restore(&mut self) -> usize {
        if self.dry_run {
            return 0;
        }
        let mut done = 0;
        for w in &self.managed {
            for knob in &self.layout.knobs {
                match cgroup::reset(knob, &w.cgroup) {
                    Ok(()) => done += 1,
                    Err(_) if !cgroup::exists(&self.layout, &w.cgroup) => break,
                    Err(e) => {
                        tracing::warn!(cgroup = %w.cgroup, file = %knob.file, error = %Chain(&e), "the kernel's default could not be written back")
                    }
                }
            }
        }
        self.written.clear();
        done
    }

    /// Between cycles: when the daemon was down and a retry is due, sync again and apply
    /// the priorities it gives. `None` when nothing was due.
    pub fn retry(&mut self, now: Instant) -> Option<CycleReport> {
        let Mode::Daemon(link) = &self.mode else {
            return None;
        };
        if link.failures() == 0 || !link.due(now) || self.dry_run {
            return None;
        }
        let present: Vec<ManagedCgroup> = self.discover();
        let mut report = CycleReport {
            cycle: self.cycles,
            ..CycleReport::default()
        };
        self.exchange(&present, now, false, &mut report);
        self.apply(&present, &mut report);
        report.workloads = present;
        Some(report)
    }

    /// When the loop should wake for a retry, if one is pending.
    pub fn retry_at(&self) -> Option<Instant> {
        self.link()
            .filter(|l| l.failures() > 0)
            .and_then(Link::retry_at)
    }

    /// Logs `message` the first time `key` comes up.
    fn say_once(&mut self, key: &str, message: &str) {
        if self.said.insert(key.to_string()) {
            tracing::warn!("{message}");
        }
    }
}

/// A name as an id the daemon accepts, one to one: letters, digits and `. _ - @` stay, and
/// every other byte (`:` included) becomes `:` and two upper-case hex digits, so `a b` is
/// `a:20b`, `a_b` stays `a_b` and `ü` is `:C3:BC`. Two names never share an id.
pub fn escape(raw: &str) -> String {
    let mut id = String::with_capacity(raw.len());
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || b"._-@".contains(&b) {
            id.push(char::from(b));
        } else {
            id.push_str(&format!(":{b:02X}"));
        }
    }
    id
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The start-up description of what was found and what can be controlled.
pub fn describe(layout: &Layout, config: &AgentConfig, node: &str, supply: &Supply) -> Vec<String> {
    let mut lines = Vec::new();
    let version = match (layout.version, &layout.hybrid) {
        (cgroup::Version::V2, _) => format!("cgroup v2 (unified) at {}", layout.primary.display()),
        (cgroup::Version::V1, Some((tree, controllers))) => format!(
            "cgroup v1 controllers, hybrid: a v2 tree at {} with {}",
            tree.display(),
            if controllers.is_empty() {
                "no controllers (used for nothing)".to_string()
            } else {
                format!("controllers {}", controllers.join(" "))
            }
        ),
        (cgroup::Version::V1, None) => "cgroup v1".to_string(),
    };
    lines.push(version);
    lines.push(format!(
        "workloads: the children of {} under {}",
        config.parents.join(", "),
        layout.primary.display()
    ));
    let measure = |name: &str, place: &Option<Place>| match place {
        Some(p) => format!("{name} from {} ({})", p.file, p.mount.display()),
        None => format!("{name}: not measured (counted as 0)"),
    };
    lines.push(format!(
        "measuring: {}; {}; {}; network: not measured by cgroups (counted as 0)",
        measure("cpu", &layout.cpu_usage),
        measure("memory", &layout.memory_usage),
        measure("io", &layout.io_usage)
    ));
    let controlled: Vec<String> = layout
        .knobs
        .iter()
        .map(|k| format!("{} ({})", k.file, k.mount.display()))
        .collect();
    let missing: Vec<&str> = [
        (KnobKind::Cpu, "CPU weight"),
        (KnobKind::Io, "I/O weight"),
        (KnobKind::Memory, "memory protection"),
    ]
    .into_iter()
    .filter(|(k, _)| !layout.knobs.iter().any(|x| x.kind == *k))
    .map(|(_, n)| n)
    .collect();
    lines.push(format!(
        "controlling: {}{}",
        if controlled.is_empty() {
            "nothing".to_string()
        } else {
            controlled.join(", ")
        },
        if missing.is_empty() {
            String::new()
        } else {
            format!("; no file for: {}", missing.join(", "))
        }
    ));
    lines.push(format!(
        "node {node}: {} CPUs (speed {}), {:.0} MiB, disk {:.0} MB/s, network {:.0} MB/s",
        supply.cpu,
        supply.speed,
        supply.memory / 1048576.0,
        supply.disk / 1e6,
        supply.network / 1e6
    ));
    lines.push(match &config.daemon {
        Some(d) => format!(
            "priorities from the daemon at {} every {} s",
            d.url, config.interval_s
        ),
        None => format!(
            "standalone: heaviness computed on this node every {} s",
            config.interval_s
        ),
    });
    lines
}

fn kind_key(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Cpu => "cpu",
        ResourceKind::Memory => "memory",
        ResourceKind::Disk => "disk",
        ResourceKind::Network => "network",
        ResourceKind::Other => "other",
    }
}

/// Values by resource name, as the API's bodies carry them.
fn named(
    resources: &[fairshare_core::heaviness::Resource],
    values: &[f64],
) -> BTreeMap<String, f64> {
    resources
        .iter()
        .zip(values)
        .map(|(r, &v)| (r.name.clone(), v))
        .collect()
}
