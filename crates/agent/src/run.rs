//! Running the agent on a host: what the host is (its name, CPUs, memory, the token), the loop
//! that wakes every μ seconds (and between, for a retry the daemon's backoff asks for) until
//! told to stop, and the readiness check of `fairshare agent --check`.

use crate::agent::{describe, node_spec, Agent, CycleReport, Supply};
use crate::cgroup::{self, Layout, Version};
use crate::config::AgentConfig;
use crate::link::Link;
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
pub fn token(config: &AgentConfig) -> Result<Option<String>, String> {
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

/// Whether this node is ready: cgroup version and controllers, the parents, permission to
/// write each knob, the counters, and (with a daemon) that it answers and takes the token.
pub fn check(config: &AgentConfig, node: &str, token: Option<String>) -> Vec<CheckItem> {
    let supply = supply(config);
    let mut items = Vec::new();
    let layout = match Layout::detect(&config.cgroup_root) {
        Ok(l) => l,
        Err(e) => {
            items.push(item("cgroups", "fail", e.to_string()));
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
    for parent in &config.parents {
        items.extend(check_parent(&layout, parent));
    }
    if layout.knobs.is_empty() {
        items.push(item(
            "knobs",
            "fail",
            "no knob file: no cpu, io or memory controller is available",
        ));
    }
    if let Some(daemon) = &config.daemon {
        let link = Link::new(daemon, token, node, 1, 0);
        let (reach, accepted) = link.probe(&node_spec(&supply, config));
        items.push(match reach {
            Ok(d) => item("daemon", "ok", d),
            Err(e) => item("daemon", "fail", e),
        });
        items.push(match accepted {
            Ok(d) => item("token", "ok", d),
            Err(e) => item("token", "fail", e),
        });
    } else {
        items.push(item("daemon", "ok", "none configured: standalone"));
    }
    items
}

/// A parent's checks: it exists, its children get the controllers, each knob is writable.
fn check_parent(layout: &Layout, parent: &str) -> Vec<CheckItem> {
    let what = format!("parent {parent}");
    let dir = layout.primary.join(parent);
    if !dir.is_dir() {
        return vec![item(
            &what,
            "warn",
            format!(
                "{} does not exist yet: no workloads until it does",
                dir.display()
            ),
        )];
    }
    let children = layout.children(parent).unwrap_or_default();
    let mut items = vec![item(
        &what,
        "ok",
        format!("{} with {} children", dir.display(), children.len()),
    )];
    // The knobs written are the children's; without a child yet, the parent's tell the same.
    let sample = match children.first() {
        Some((name, _)) => format!("{parent}/{name}"),
        None => parent.to_string(),
    };
    if layout.version == Version::V2 {
        let enabled =
            std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
        for knob in &layout.knobs {
            let controller = knob.file.split('.').next().unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == controller) {
                items.push(item(
                    &what,
                    "warn",
                    format!(
                        "its children have no {} (echo +{controller} > {})",
                        knob.file,
                        dir.join("cgroup.subtree_control").display()
                    ),
                ));
            }
        }
    }
    for knob in &layout.knobs {
        let file = knob.mount.join(&sample).join(&knob.file);
        items.push(writable(&file, &knob.file));
    }
    if let Some(place) = &layout.cpu_usage {
        let path = place.path(&sample);
        items.push(match cgroup::read(place, &sample) {
            Ok(_) => item(
                &format!("counter {}", place.file),
                "ok",
                format!("{} readable", path.display()),
            ),
            Err(e) => item(
                &format!("counter {}", place.file),
                "warn",
                format!("{}: {e}", path.display()),
            ),
        });
    }
    items
}

/// Whether a knob file may be opened for writing (nothing is written).
fn writable(file: &Path, name: &str) -> CheckItem {
    match std::fs::OpenOptions::new().write(true).open(file) {
        Ok(_) => item(
            &format!("knob {name}"),
            "ok",
            format!("{} writable", file.display()),
        ),
        Err(e) => item(
            &format!("knob {name}"),
            "fail",
            format!("{}: {e}", file.display()),
        ),
    }
}
