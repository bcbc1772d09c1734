//! Running the agent on a host: what the host is (its name, CPUs, memory, the token), the loop
//! that wakes every μ seconds (and between, for a retry the daemon's backoff asks for) until
//! told to stop, and the readiness check of `fairshare agent --check`.

use crate::agent::{describe, Agent, CycleReport, Supply, FILE_RESERVE};
use crate::cgroup::{self, Layout, Version, COUNTERS, KNOBS};
use crate::config::AgentConfig;
use crate::link::Link;
use crate::owner::Owners;
use fairshare_core::error::Chain;
use fairshare_core::error::Invalid;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// This host's name as a node id (characters the daemon refuses become `_`).
pub fn host_name() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_else(|_| "localhost".into());
    let name: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if name.is_empty() {
        "localhost".into()
    } else {
        name
    }
}

/// The node's supply: the configured values, the rest read from the host.
pub fn supply(config: &AgentConfig) -> Supply {
    let s = config.supply;
    let cpus = || std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
    Supply {
        cpu: s.cpu.unwrap_or_else(cpus),
        memory: s
            .memory
            .unwrap_or_else(|| mem_total().unwrap_or(1024.0 * 1048576.0)),
        disk: s.disk.unwrap_or(500e6),
        network: s.network.unwrap_or(1.25e9),
        speed: s.speed.unwrap_or(1.0),
    }
}

/// MemTotal of /proc/meminfo, in bytes.
fn mem_total() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The agent's token: `FAIRSHARE_TOKEN` from the environment, else the configured file.
pub fn token(config: &AgentConfig) -> Result<Option<String>, Invalid> {
    if let Ok(t) = std::env::var("FAIRSHARE_TOKEN") {
        return Ok(Some(t.trim().to_string()).filter(|t| !t.is_empty()));
    }
    let Some(path) = config.daemon.as_ref().and_then(|d| d.token_file.as_ref()) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("daemon.token_file {}: {e}", path.display()))?;
    Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty()))
}

/// Runs cycles every `interval` until `stop` is set, calling `on_cycle` after each (and after
/// each retry between cycles). A late wake-up does not bunch cycles: the next is one
/// interval after the late one.
pub fn run(
    agent: &mut Agent,
    interval: Duration,
    stop: &AtomicBool,
    mut on_cycle: impl FnMut(&CycleReport),
) {
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= next {
            on_cycle(&agent.cycle(now));
            next += interval;
            if next <= now {
                next = now + interval;
            }
        } else if let Some(report) = agent.retry(now) {
            on_cycle(&report);
        }
        let wake = agent.retry_at().map_or(next, |r| r.min(next));
        sleep_until(wake, stop);
    }
}

/// One full cycle: a first reading, `interval` later a second, then the decision and the
/// writes; `None` if stopped in between.
pub fn once(agent: &mut Agent, interval: Duration, stop: &AtomicBool) -> Option<CycleReport> {
    agent.cycle(Instant::now());
    sleep_until(Instant::now() + interval, stop);
    (!stop.load(Ordering::Relaxed)).then(|| agent.cycle(Instant::now()))
}

/// Sleeps until `t` in short slices, returning early when `stop` is set.
fn sleep_until(t: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= t || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(100)));
    }
}

/// One line of the readiness check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckItem {
    /// What was checked.
    pub what: String,
    /// `ok`, `warn` (works, but look) or `fail` (the agent cannot do its work).
    pub status: &'static str,
    /// What was seen.
    pub detail: String,
}

fn item(what: &str, status: &'static str, detail: impl Into<String>) -> CheckItem {
    CheckItem {
        what: what.into(),
        status,
        detail: detail.into(),
    }
}

/// Whether this node is ready, read-only: cgroup version and controllers, the file limit,
/// each parent, every workload's counters (each must be readable) and knobs (each must be
/// writable), and (with a daemon) that it answers and takes the token. Nothing is written
/// to the cgroups and nothing registered at the daemon. A `fail` means a workload could not
/// be measured or steered.
pub fn check(config: &AgentConfig, node: &str, token: Option<String>) -> Vec<CheckItem> {
    let supply = supply(config);
    let mut items = Vec::new();
    let layout = match Layout::detect(&config.cgroup_root) {
        Ok(l) => l,
        Err(e) => {
            items.push(item("cgroups", "fail", Chain(&e).to_string()));
            return items;
        }
    };
    let lines = describe(&layout, config, node, &supply);
    items.push(item("cgroups", "ok", lines[0].clone()));
    items.push(item(
        "measuring",
        "ok",
        lines[2].trim_start_matches("measuring: "),
    ));
    if layout.knobs.is_empty() {
        items.push(item(
            "knobs",
            "fail",
            "no knob file: no cpu, io or memory controller is available",
        ));
    }
    let owners = Owners::new(&config.owner).and_then(|mut o| o.refresh().map(|_| o));
    let owners = match owners {
        Ok(o) => o,
        Err(e) => {
            items.push(item("owner", "fail", e));
            return items;
        }
    };
    let mut workloads = 0;
    for parent in &config.parents {
        let (parent_items, found) = check_parent(&layout, &owners, parent);
        items.extend(parent_items);
        workloads += found;
    }
    items.push(check_file_limit(workloads));
    if let Some(daemon) = &config.daemon {
        let link = Link::new(daemon, token, node, 1, 0);
        let (reach, accepted) = link.probe();
        items.push(match reach {
            Ok(d) => item("daemon", "ok", d),
            Err(e) => item("daemon", "fail", e.to_string()),
        });
        items.push(match accepted {
            Ok(d) => item("token", "ok", d),
            Err(e) => item("token", "fail", e.to_string()),
        });
    } else {
        items.push(item("daemon", "ok", "none configured: standalone"));
    }
    items
}

/// Raises this process's soft limit on open files to its hard limit, so that the counter and
/// knob files of many workloads can stay open; returns the new limit.
pub fn raise_file_limit() -> std::io::Result<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    setrlimit(Resource::Nofile, limit)?;
    Ok(getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX))
}

/// Whether the agent can keep every workload's counter and knob files open: it raises its
/// soft limit to the hard one, so that is the limit that counts.
fn check_file_limit(workloads: usize) -> CheckItem {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    let each = (COUNTERS + KNOBS) as u64;
    let needed = each * workloads as u64 + FILE_RESERVE;
    let detail = format!(
        "{workloads} workloads need about {needed} open files ({each} each, counters and knobs, and {FILE_RESERVE} more); the agent raises its limit to {hard} (its hard limit here; under systemd, LimitNOFILE)"
    );
    if needed > hard {
        item("file limit", "warn", format!("{detail}: the files beyond are used by path, at more CPU per cycle; raise LimitNOFILE"))
    } else {
        item("file limit", "ok", detail)
    }
}

/// A parent's checks: it exists in every hierarchy used, and every child the owner rule
/// claims can be measured (each counter readable) and steered (each knob writable); the
/// count of those workloads. Without children, the parent's own files stand for theirs.
fn check_parent(layout: &Layout, owners: &Owners, parent: &str) -> (Vec<CheckItem>, usize) {
    let what = format!("parent {parent}");
    let dir = layout.primary.join(parent);
    if !dir.is_dir() {
        let detail = format!(
            "{} does not exist (misspelled?): no workload can be found there",
            dir.display()
        );
        return (vec![item(&what, "fail", detail)], 0);
    }
    let children = layout.children(parent).unwrap_or_default();
    let claimed: Vec<String> = children
        .iter()
        .filter(|(name, _)| owners.owner_of(name).is_some())
        .map(|(name, _)| format!("{parent}/{name}"))
        .collect();
    let mut items = vec![item(
        &what,
        "ok",
        format!(
            "{} with {} children, {} of them workloads (the owner rule names an owner)",
            dir.display(),
            children.len(),
            claimed.len()
        ),
    )];
    if layout.version == Version::V2 {
        items.extend(check_subtree_control(layout, &dir, &what));
    }
    let cgroups = if claimed.is_empty() {
        vec![parent.to_string()]
    } else {
        claimed.clone()
    };
    let places = [&layout.cpu_usage, &layout.memory_usage, &layout.io_usage];
    for place in places.into_iter().flatten() {
        let failed = failures(&cgroups, |rel| {
            cgroup::read(place, rel)
                .map(drop)
                .map_err(|e| format!("{}: {e}", place.path(rel).display()))
        });
        items.push(verdict(
            &format!("counter {}", place.file),
            &cgroups,
            failed,
            "readable",
        ));
    }
    for knob in &layout.knobs {
        let failed = failures(&cgroups, |rel| {
            writable(&knob.mount.join(rel).join(&knob.file))
        });
        items.push(verdict(
            &format!("knob {}", knob.file),
            &cgroups,
            failed,
            "writable",
        ));
    }
    (items, claimed.len())
}

/// The v2 controllers a parent does not give its children.
fn check_subtree_control(layout: &Layout, dir: &Path, what: &str) -> Vec<CheckItem> {
    let control = dir.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&control).unwrap_or_default();
    layout
        .knobs
        .iter()
        .filter_map(|knob| {
            let controller = knob.file.split('.').next().unwrap_or_default();
            (!enabled.split_whitespace().any(|c| c == controller)).then(|| {
                item(
                    what,
                    "fail",
                    format!(
                        "its children have no {} (echo +{controller} > {})",
                        knob.file,
                        control.display()
                    ),
                )
            })
        })
        .collect()
}

/// The errors of `test` over the cgroups.
fn failures(cgroups: &[String], test: impl Fn(&str) -> Result<(), String>) -> Vec<String> {
    cgroups.iter().filter_map(|rel| test(rel).err()).collect()
}

/// One line for a file checked in every cgroup: ok, or a failure naming the first few.
fn verdict(what: &str, cgroups: &[String], failed: Vec<String>, good: &str) -> CheckItem {
    const SHOWN: usize = 3;
    if failed.is_empty() {
        return item(
            what,
            "ok",
            format!("{good} in all {} checked", cgroups.len()),
        );
    }
    let more = failed.len().saturating_sub(SHOWN);
    let mut detail = format!(
        "{} of {} cgroups cannot be used: {}",
        failed.len(),
        cgroups.len(),
        failed[..failed.len().min(SHOWN)].join("; ")
    );
    if more > 0 {
        detail.push_str(&format!("; … {more} more"));
    }
    item(what, "fail", detail)
}

/// Whether a knob file may be opened for writing (nothing is written).
fn writable(file: &Path) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(file)
        .map(drop)
        .map_err(|e| format!("{}: {e}", file.display()))
}
