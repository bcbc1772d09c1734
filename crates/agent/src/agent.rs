//! One agent cycle: list the workloads, read their counters, turn them into the interval's
//! usage, get priorities (from the daemon, or computed here by the daemon's own cycle function
//! when standalone), and write each workload's knobs. Everything that can go wrong on a live
//! host — a cgroup removed mid-cycle, a daemon down, a knob the kernel refuses — is handled
//! here without stopping the loop, and each kind of trouble is said once, not every cycle.

use crate::cgroup::{self, Knob, KnobKind, Layout, OpenFiles, Place};
use crate::config::AgentConfig;
use crate::link::{Link, LinkError};
use crate::meter::{usage, Reading, Usage};
use crate::owner::Owners;
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

/// A workload found this cycle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workload {
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
    /// The workloads found.
    pub workloads: Vec<Workload>,
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
    known: Vec<FxHashMap<String, (u64, Workload)>>,
    managed: Vec<Workload>,
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
    ) -> Result<Agent, String> {
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
                        tracing::warn!(cgroup = %w.cgroup, file = %knob.file, error = %e, "the kernel's default could not be written back")
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
        let present: Vec<Workload> = self.discover();
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

    /// The workloads under every parent whose owner the rule names.
    fn discover(&mut self) -> Vec<Workload> {
        let mut found = Vec::new();
        let mut ids = BTreeSet::new();
        let several = self.config.parents.len() > 1;
        for (p, parent) in self.config.parents.clone().iter().enumerate() {
            let children = self.list(parent);
            for (name, inode) in &children {
                let Some(w) = self.workload(p, parent, name, *inode) else {
                    continue;
                };
                // Names are unique within a parent: ids can clash only across parents.
                if several && !ids.insert(w.id.clone()) {
                    let cgroup = &w.cgroup;
                    self.say_once(&format!("twice {cgroup}"), &format!("{cgroup}: another parent has a child of the same name; only the first is a workload"));
                    continue;
                }
                found.push(w);
            }
            self.listed.insert(parent.clone(), children);
        }
        for known in &mut self.known {
            known.retain(|_, (seen, _)| *seen == self.cycles);
        }
        found
    }

    /// The workload of child `name` (directory inode `inode`) of the `p`-th parent: as found
    /// in an earlier cycle if it is the same directory, else named anew from the owner rule
    /// and sized from its limits (`None`, said once, when the rule names no owner or the id is
    /// too long). Every `rewrite_every` cycles each is named and sized anew, so that changed
    /// limits are seen.
    fn workload(&mut self, p: usize, parent: &str, name: &str, inode: u64) -> Option<Workload> {
        let anew = self.cycles % self.config.rewrite_every == 1 || self.config.rewrite_every == 1;
        if let Some((seen, w)) = self.known[p]
            .get_mut(name)
            .filter(|(_, w)| w.inode == inode && !anew)
        {
            *seen = self.cycles;
            return Some(w.clone());
        }
        let cgroup = format!("{parent}/{name}");
        let Some(owner) = self.owners.owner_of(name) else {
            self.say_once(
                &format!("owner {cgroup}"),
                &format!("{cgroup}: the owner rule names no owner; left alone"),
            );
            return None;
        };
        let owner = escape(&owner);
        let id = format!("{}:{}", self.node, escape(name));
        if !valid_id(&id) || !valid_id(&owner) {
            self.say_once(&format!("id {cgroup}"), &format!("{cgroup}: its id {id:?} or owner {owner:?} is longer than 128 characters once escaped; left alone"));
            return None;
        }
        let (cpu_size, memory_size) = self.limits(&cgroup);
        let w = Workload {
            id,
            cgroup,
            owner,
            cpu_size,
            memory_size,
            inode,
        };
        self.known[p].insert(name.to_string(), (self.cycles, w.clone()));
        Some(w)
    }

    /// The children of a parent, or, when it cannot be listed (out of file descriptors, say),
    /// the children of its last listing: a failed listing never drops a workload.
    fn list(&mut self, parent: &str) -> Vec<(String, u64)> {
        match self.layout.children(parent) {
            Ok(children) => children,
            Err(e) => {
                let why = if cgroup::out_of_files(&e) {
                    format!("{e}: the agent has too many files open (raise LimitNOFILE)")
                } else {
                    e.to_string()
                };
                self.say_once(
                    &format!("list {parent}"),
                    &format!("{parent} cannot be listed: {why}; keeping its last listing"),
                );
                self.listed.remove(parent).unwrap_or_default()
            }
        }
    }

    /// A workload's virtual size: its cgroup's limits where set and wanted, else the default.
    fn limits(&self, cgroup: &str) -> (f64, f64) {
        let size = self.config.size;
        let limit = |place: &Option<Place>| {
            let place = place.as_ref().filter(|_| size.from_limits)?;
            cgroup::read(place, cgroup)
                .ok()
                .flatten()
                .filter(|v| *v > 0.0)
        };
        (
            limit(&self.layout.cpu_limit).unwrap_or(size.cpu),
            limit(&self.layout.memory_limit).unwrap_or(size.memory),
        )
    }

    /// A workload's counters. A counter that cannot be read leaves the workload unmeasured
    /// this cycle (said once): its previous reading stays, so the next good one covers both
    /// intervals and nothing is lost or counted twice.
    fn read(&mut self, w: &Workload) -> Read {
        let mut values = [0.0; 3];
        let places = [
            &self.layout.cpu_usage,
            &self.layout.io_usage,
            &self.layout.memory_usage,
        ];
        let mut trouble = None;
        for (slot, (value, place)) in values.iter_mut().zip(places).enumerate() {
            let Some(place) = place else { continue };
            match self.files.read(place, slot, &w.cgroup, w.inode) {
                Ok(v) => *value = v.unwrap_or(0.0),
                Err(_) if !cgroup::exists(&self.layout, &w.cgroup) => return Read::Gone,
                Err(e) => {
                    trouble = Some(format!("{}: {e}", place.path(&w.cgroup).display()));
                    break;
                }
            }
        }
        if let Some(trouble) = trouble {
            let message = format!("{trouble}; the workload is not measured until it can be read");
            self.say_once(&trouble, &message);
            return Read::Unreadable;
        }
        let [cpu_s, io_bytes, memory_bytes] = values;
        Read::Counters(Reading {
            inode: w.inode,
            cpu_s,
            io_bytes,
            memory_bytes,
        })
    }

    /// A usage as the amounts of every configured resource, each at most what the node could
    /// have given in the interval (a report over it would be refused as absurd).
    fn amounts(&mut self, id: &str, u: &Usage, interval: f64) -> Vec<f64> {
        let resources = self.config.resources.clone();
        resources
            .iter()
            .map(|r| {
                let (amount, most) = match r.kind {
                    ResourceKind::Cpu => (u.cpu_s, self.supply.cpu * interval),
                    ResourceKind::Memory => (u.memory_bytes, self.supply.memory),
                    ResourceKind::Disk => (u.io_bytes, self.supply.disk * interval),
                    ResourceKind::Network | ResourceKind::Other => (0.0, 0.0),
                };
                if amount > most {
                    self.say_once(
                        &format!("over {}", r.name),
                        &format!("workload {id} used more {} than the node's configured supply gives; counted at the supply (set supply.{} to the node's real value)", r.name, kind_key(r.kind)),
                    );
                }
                amount.min(most)
            })
            .collect()
    }

    /// This cycle's priorities, into `self.priorities`.
    fn decide(
        &mut self,
        present: &[Workload],
        measured: Vec<(String, Vec<f64>)>,
        interval_s: Option<f64>,
        now: Instant,
        report: &mut CycleReport,
    ) {
        match &mut self.mode {
            Mode::Standalone(local) => {
                let Some(interval) = interval_s else { return };
                // The registry is the workloads': built again only when they changed.
                let registry = match local.registry.take() {
                    Some(kept) if self.managed == present => kept,
                    _ => registry(&self.node, &self.supply, &self.config, present),
                };
                let decided = local.decide(&registry, &measured, interval);
                local.registry = Some(registry);
                match decided {
                    Ok((priorities, users)) => {
                        self.priorities = priorities;
                        report.users = users;
                        report.source = Source::Local;
                    }
                    Err(e) => {
                        let message = format!(
                            "heaviness could not be computed: {e}; keeping the last priorities"
                        );
                        self.say_once("heaviness", &message);
                    }
                }
            }
            Mode::Daemon(link) => {
                if let (Some(interval), false) = (interval_s, self.dry_run) {
                    let samples = measured
                        .into_iter()
                        .filter(|(id, _)| !link.refused.contains_key(id))
                        .map(|(id, amounts)| Sample {
                            workload: id,
                            usage: named(&self.config.resources, &amounts),
                        })
                        .collect();
                    let mut written = in_force(&self.written, &self.layout.knobs);
                    written.retain(|id, _| !link.refused.contains_key(id));
                    link.queue(interval, samples, written, now_ms().max(0) as u64);
                }
                self.exchange(present, now, true, report);
            }
        }
    }

    /// Syncs with the daemon — every cycle (`cycle`), between cycles only when a retry is
    /// due: registrations, buffered reports, priorities. Trying at every cycle whatever the
    /// backoff makes the agent recover within one interval of the daemon's return.
    fn exchange(
        &mut self,
        present: &[Workload],
        now: Instant,
        cycle: bool,
        report: &mut CycleReport,
    ) {
        let Mode::Daemon(link) = &mut self.mode else {
            return;
        };
        if self.dry_run {
            match link.fetch() {
                Ok(p) => {
                    self.priorities = p;
                    report.source = Source::Daemon;
                }
                Err(e) => report.daemon_error = Some(e.to_string()),
            }
            return;
        }
        if cycle || link.due(now) {
            let node = node_spec(&self.supply, &self.config);
            let specs = present
                .iter()
                .map(|w| (w.id.clone(), workload_spec(&self.node, &self.config, w)))
                .collect();
            let was_down = link.failures();
            match link.sync(&node, &specs, now) {
                Ok(done) => {
                    if was_down > 0 {
                        tracing::info!(
                            failures = was_down,
                            sent = done.sent,
                            "the daemon answers again; the buffered reports were sent"
                        );
                    }
                    self.priorities = done.priorities;
                    report.source = Source::Daemon;
                }
                Err(e) => {
                    let wait = link.retry_at().map(|t| t.saturating_duration_since(now));
                    if was_down == 0 {
                        tracing::warn!(error = %e, retry_in = ?wait, "the daemon cannot be reached; keeping the last priorities and buffering reports");
                    } else {
                        tracing::debug!(error = %e, failures = link.failures(), retry_in = ?wait, "the daemon still cannot be reached");
                    }
                    if matches!(e, LinkError::Refused(_)) {
                        tracing::error!(error = %e, "the daemon refused a request");
                    }
                    report.daemon_error = Some(e.to_string());
                }
            }
        }
        report.pending_reports = link.pending();
        if link.dropped > 0 {
            let dropped = link.dropped;
            self.say_once("dropped", &format!("the report buffer is full: {dropped} reports of the oldest intervals were dropped (buffer_reports = {})", self.config.buffer_reports));
        }
    }

    /// Writes every present workload's knobs from its priority (0, neutral, if it has none
    /// yet), each value clamped to the knob's range. A value within `knob_step` of the one
    /// written is not a change: nothing is written except every `rewrite_every` cycles,
    /// when the value held is written again.
    fn apply(&mut self, present: &[Workload], report: &mut CycleReport) {
        let rewrite =
            self.cycles % self.config.rewrite_every == 1 || self.config.rewrite_every == 1;
        let knobs = self.layout.knobs.clone();
        for w in present {
            let priority = self.priorities.get(&w.id).copied().unwrap_or(0);
            for (k, knob) in knobs.iter().enumerate() {
                let new = knob.value(priority, w.memory_size as u64);
                let before = self.written.get(w.id.as_str()).and_then(|v| *v.get(k)?);
                let value = match before {
                    Some(old) if self.within_step(knob, w, old, new) => {
                        if old != new {
                            report.held += 1;
                        }
                        old
                    }
                    _ => new,
                };
                if !rewrite && !self.dry_run && before == Some(value) {
                    continue;
                }
                let write = Write {
                    workload: w.id.clone(),
                    owner: w.owner.clone(),
                    priority,
                    file: knob.file.clone(),
                    value,
                };
                if self.dry_run {
                    report.writes.push(write);
                    continue;
                }
                match self.files.write(knob, k, &w.cgroup, w.inode, value) {
                    Ok(()) => {
                        self.remember(&w.id, k, value);
                        report.writes.push(write);
                    }
                    Err(e) if cgroup::out_of_files(&e) => {
                        report.refused += 1;
                        self.say_once(
                            "write: out of files",
                            &format!("{} of {} could not be opened: {e}: the agent has too many files open (raise LimitNOFILE)", knob.file, w.cgroup),
                        );
                    }
                    Err(_) if !cgroup::exists(&self.layout, &w.cgroup) => {
                        report.vanished += 1;
                        break;
                    }
                    Err(e) => {
                        report.refused += 1;
                        let io = if e.kind() == ErrorKind::NotFound {
                            "no such file".to_string()
                        } else {
                            e.to_string()
                        };
                        self.say_once(
                            &format!("refused {}", knob.file),
                            &format!("the kernel refused {value} for {} of {}: {io}; further refusals of {} are not reported", knob.file, w.cgroup, knob.file),
                        );
                    }
                }
            }
        }
        let present: FxHashSet<&str> = present.iter().map(|w| w.id.as_str()).collect();
        self.written.retain(|id, _| present.contains(id.as_str()));
    }

    /// Remembers `value` as written to the `k`-th knob of workload `id`.
    fn remember(&mut self, id: &str, k: usize, value: u64) {
        // Looked up before inserting: a key made for each write would be an allocation.
        let values = match self.written.get_mut(id) {
            Some(values) => values,
            None => self.written.entry(id.to_string()).or_default(),
        };
        if let Some(slot) = values.get_mut(k) {
            *slot = Some(value);
        }
    }

    /// Whether `new` lies within `knob_step` of the knob's full scale from `old`.
    fn within_step(&self, knob: &Knob, w: &Workload, old: u64, new: u64) -> bool {
        let scale = knob.full_scale(w.memory_size as u64) as f64;
        (old.abs_diff(new) as f64) <= self.config.knob_step * scale
    }

    /// Logs `message` the first time `key` comes up.
    fn say_once(&mut self, key: &str, message: &str) {
        if self.said.insert(key.to_string()) {
            tracing::warn!("{message}");
        }
    }
}

impl Local {
    /// Runs the daemon's cycle on this node's registry and the interval's amounts.
    #[allow(clippy::type_complexity)]
    fn decide(
        &mut self,
        registry: &Registry,
        measured: &[(String, Vec<f64>)],
        interval: f64,
    ) -> Result<(BTreeMap<String, i32>, Vec<(String, f64)>), HeavinessError> {
        let mut counted = Measured::default();
        for (id, amounts) in measured {
            let rates: Vec<f64> = amounts
                .iter()
                .zip(&self.settings.resources)
                .map(|(&a, r)| rate(r.kind, a, interval))
                .collect();
            counted.add(id, &rates, interval);
        }
        self.cycle += 1;
        let out = compute(
            &self.settings,
            registry,
            &self.memory,
            &counted,
            self.cycle,
            now_ms(),
        )?;
        self.memory = out.memory;
        let priorities = out
            .snapshot
            .workloads
            .iter()
            .map(|w| (w.workload.to_string(), w.knobs.priority))
            .collect();
        let mut users: Vec<(String, f64)> = out
            .snapshot
            .users
            .iter()
            .map(|(u, h)| (u.to_string(), h.heaviness))
            .collect();
        users.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        Ok((priorities, users))
    }
}

/// The values in force in each workload's knob files, as last written: workload → file → value.
fn in_force(
    written: &FxHashMap<String, [Option<u64>; cgroup::KNOBS]>,
    knobs: &[Knob],
) -> BTreeMap<String, KnobsWritten> {
    let mut out: BTreeMap<String, KnobsWritten> = BTreeMap::new();
    for (id, values) in written {
        for (knob, value) in knobs.iter().zip(values) {
            if let Some(value) = value {
                out.entry(id.clone())
                    .or_default()
                    .insert(knob.file.clone(), *value);
            }
        }
    }
    out
}

/// This node, its owners and workloads as the daemon's cycle sees a registry.
fn registry(node: &str, supply: &Supply, config: &AgentConfig, present: &[Workload]) -> Registry {
    let node_id: fairshare_wire::model::Id = node.into();
    let mut registry = Registry::default();
    registry.nodes.insert(
        node_id.clone(),
        NodeEntry {
            supply: supply_vector(supply, config),
            speed: supply.speed,
        },
    );
    for w in present {
        registry.users.insert(w.owner.as_str().into(), None);
        registry.workloads.insert(
            w.id.as_str().into(),
            WorkloadEntry {
                owner: w.owner.as_str().into(),
                node: node_id.clone(),
                size: size_vector(config, w),
            },
        );
    }
    registry
}

fn supply_vector(supply: &Supply, config: &AgentConfig) -> Vec<f64> {
    config
        .resources
        .iter()
        .map(|r| match r.kind {
            ResourceKind::Cpu => supply.cpu,
            ResourceKind::Memory => supply.memory,
            ResourceKind::Disk => supply.disk,
            ResourceKind::Network => supply.network,
            ResourceKind::Other => 1.0,
        })
        .collect()
}

fn size_vector(config: &AgentConfig, w: &Workload) -> Vec<f64> {
    config
        .resources
        .iter()
        .map(|r| match r.kind {
            ResourceKind::Cpu => w.cpu_size,
            ResourceKind::Memory => w.memory_size,
            _ => 0.0,
        })
        .collect()
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

/// The node as `PUT /v1/nodes/{id}` registers it.
pub fn node_spec(supply: &Supply, config: &AgentConfig) -> NodeSpec {
    NodeSpec {
        supply: named(&config.resources, &supply_vector(supply, config)),
        speed: supply.speed,
    }
}

fn workload_spec(node: &str, config: &AgentConfig, w: &Workload) -> WorkloadSpec {
    let size = size_vector(config, w);
    WorkloadSpec {
        owner: w.owner.clone(),
        node: node.to_string(),
        size: config
            .resources
            .iter()
            .zip(size)
            .filter(|(r, _)| r.kind.has_virtual())
            .map(|(r, v)| (r.name.clone(), v))
            .collect(),
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

fn kind_key(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Cpu => "cpu",
        ResourceKind::Memory => "memory",
        ResourceKind::Disk => "disk",
        ResourceKind::Network => "network",
        ResourceKind::Other => "other",
    }
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
