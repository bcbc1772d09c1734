//! The operator's commands against a running daemon: `fairshare top` (the live ranking),
//! `fairshare explain USER` and `fairshare nodes`, each also as `--json`.

use anyhow::{bail, Context, Result};
use fairshare_agent::cgroup::{cpu_knob, Version};
use fairshare_report::text::{fixed, significant, table};
use fairshare_service::model::{ErrorBody, Explanation, NodeStatus, Priorities, WorkloadPriority};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the daemon is and who is asking.
#[derive(clap::Args)]
pub struct Server {
    /// The daemon's address.
    #[arg(
        long,
        env = "FAIRSHARE_SERVER",
        default_value = "http://127.0.0.1:7878"
    )]
    server: String,
    /// A token with the reader role (or higher).
    #[arg(long, env = "FAIRSHARE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print the daemon's JSON answer instead of a table.
    #[arg(long)]
    json: bool,
}

impl Server {
    /// GETs `path` and reads the JSON answer; an error answer becomes its message.
    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<(T, serde_json::Value)> {
        let url = format!("{}{path}", self.server.trim_end_matches('/'));
        let mut request = ureq::get(&url).timeout(Duration::from_secs(10));
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        let value: serde_json::Value = match request.call() {
            Ok(response) => response
                .into_json()
                .with_context(|| format!("reading {url}"))?,
            Err(ureq::Error::Status(code, response)) => {
                let body: Option<ErrorBody> = response.into_json().ok();
                let message = body.map_or_else(|| "no explanation".into(), |b| b.message);
                bail!("{url}: the daemon answered {code}: {message}");
            }
            Err(e) => bail!("{url}: {e} (is `fairshare serve` running there?)"),
        };
        let typed = serde_json::from_value(value.clone())
            .with_context(|| format!("{url}: an answer this fairshare cannot read"))?;
        Ok((typed, value))
    }

    fn print_json(&self, value: &serde_json::Value) -> Result<()> {
        crate::output::print(&format!("{}\n", serde_json::to_string_pretty(value)?))
    }
}

/// Arguments of `fairshare top`.
#[derive(clap::Args)]
pub struct TopArgs {
    #[command(flatten)]
    server: Server,
    /// Seconds between refreshes.
    #[arg(long, default_value_t = 2.0)]
    every: f64,
    /// Print the ranking once and exit (what --json always does).
    #[arg(long)]
    once: bool,
    /// Show at most this many users.
    #[arg(long, default_value_t = 25)]
    limit: usize,
}

/// Runs `fairshare top`.
pub fn top(args: TopArgs) -> Result<()> {
    if !(args.every.is_finite() && args.every >= 0.1) {
        bail!("--every must be at least 0.1 seconds, found {}", args.every);
    }
    loop {
        let (priorities, value) = args.server.get::<Priorities>("/v1/priorities")?;
        if args.server.json {
            return args.server.print_json(&value);
        }
        let screen = ranking(&priorities, args.limit, now_ms());
        if args.once {
            return crate::output::print(&screen);
        }
        crate::output::print(&format!("\x1b[H\x1b[2J{screen}"))?;
        std::thread::sleep(Duration::from_secs_f64(args.every));
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The ranking as `top` shows it: a header line, then users lightest first.
fn ranking(p: &Priorities, limit: usize, now_ms: i64) -> String {
    let age = if p.cycle == 0 {
        "no cycle yet".to_string()
    } else {
        format!(
            "{} s ago",
            fixed((now_ms - p.computed_at_ms) as f64 / 1000.0, 1)
        )
    };
    let measured = p.workloads.iter().filter(|w| w.measured).count();
    let header = format!(
        "fairshare top — cycle {} ({age}), {} active users, {} workloads ({measured} measured); CPU weights as node agents reported writing them, else computed\n\n",
        p.cycle,
        p.users.len(),
        p.workloads.len(),
    );
    let headers: Vec<String> = [
        "user",
        "rank",
        "heaviness",
        "workloads",
        "mean priority",
        "mean CPU weight",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = p
        .users
        .iter()
        .take(limit)
        .map(|u| {
            let mine: Vec<_> = p.workloads.iter().filter(|w| w.owner == u.user).collect();
            vec![
                u.user.to_string(),
                u.rank.to_string(),
                fixed(u.heaviness, 4),
                mine.len().to_string(),
                fixed(mean(mine.iter().map(|w| f64::from(w.knobs.priority))), 1),
                cpu_weight(&mine),
            ]
        })
        .collect();
    let more = p.users.len().saturating_sub(limit);
    let tail = if more > 0 {
        format!("… and {more} more (--limit)\n")
    } else {
        String::new()
    };
    format!("{header}{}{tail}", table(&headers, &rows))
}

/// The CPU weight a node agent computes for a priority on a cgroup version (the daemon's own
/// knob values are those of its profile, which agents do not use; within the agent's
/// `knob_step` of this, the value written before is kept).
fn computed(version: Version, priority: i32) -> f64 {
    cpu_knob(version, Path::new("")).value(priority, 0) as f64
}

/// The mean of some numbers (0 for none).
fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = values.len().max(1);
    values.sum::<f64>() / n as f64
}

/// Where a workload's CPU weight is shown from.
enum Cpu<'a> {
    /// What its node's agent reported in force: the file, its cgroup version, the value.
    Written(&'a str, &'static str, u64),
    /// Its agent reported knob values, none of them a CPU weight.
    NotWritten,
    /// Nothing reported: the priority an agent computes its values from.
    Computed(i32),
}

/// Where this workload's CPU weight is shown from.
fn cpu_of(w: &WorkloadPriority) -> Cpu<'_> {
    let Some(written) = &w.written else {
        return Cpu::Computed(w.knobs.priority);
    };
    [(Version::V1, "v1"), (Version::V2, "v2")]
        .into_iter()
        .find_map(|(version, name)| {
            let file = cpu_knob(version, Path::new("")).file;
            let (file, &value) = written.get_key_value(&file)?;
            Some(Cpu::Written(file, name, value))
        })
        .unwrap_or(Cpu::NotWritten)
}

/// The mean CPU weight of some workloads: per file written, as reported (`cpu.shares 1597 (v1,
/// written)`), and for those with nothing reported, as an agent would compute it on either
/// version, labelled so.
fn cpu_weight(workloads: &[&WorkloadPriority]) -> String {
    let mut written: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    let (mut not_written, mut priorities) = (0, Vec::new());
    for w in workloads {
        match cpu_of(w) {
            Cpu::Written(file, version, v) => {
                written.entry((file, version)).or_default().push(v as f64)
            }
            Cpu::NotWritten => not_written += 1,
            Cpu::Computed(p) => priorities.push(p),
        }
    }
    let mut parts: Vec<String> = written
        .iter()
        .map(|((file, version), values)| {
            let value = fixed(mean(values.iter().copied()), 0);
            format!("{file} {value} ({version}, written)")
        })
        .collect();
    if not_written > 0 {
        parts.push("none written".into());
    }
    if !priorities.is_empty() {
        let on = |v| fixed(mean(priorities.iter().map(|&p| computed(v, p))), 0);
        parts.push(format!(
            "cpu.shares {} (v1) / cpu.weight {} (v2), computed",
            on(Version::V1),
            on(Version::V2)
        ));
    }
    parts.join("; ")
}

/// Arguments of `fairshare explain`.
#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The user.
    user: String,
    #[command(flatten)]
    server: Server,
}

/// Runs `fairshare explain USER`.
pub fn explain(args: ExplainArgs) -> Result<()> {
    let (e, value) = args
        .server
        .get::<Explanation>(&format!("/v1/users/{}", args.user))?;
    if args.server.json {
        return args.server.print_json(&value);
    }
    crate::output::print(&explanation(&e))
}

fn explanation(e: &Explanation) -> String {
    let resources: Vec<&String> = e.usage.keys().collect();
    let headers: Vec<String> = std::iter::once("per resource".to_string())
        .chain(resources.iter().map(|r| r.to_string()))
        .collect();
    let row = |name: &str, m: &std::collections::BTreeMap<String, f64>| {
        std::iter::once(name.to_string())
            .chain(resources.iter().map(|r| significant(m[*r])))
            .collect::<Vec<_>>()
    };
    let per_resource = table(
        &headers,
        &[row("usage", &e.usage), row("endowment", &e.endowment)],
    );
    let units =
        "(per second, memory as a level, in the units nodes report; CPU at reference speed)";
    let terms = [
        (
            "static part",
            e.static_part,
            "Σ s(ε(v)): the size of the user's workloads",
        ),
        (
            "+ dynamic",
            e.dynamic,
            "Σ d(v): their load against their endowments",
        ),
        (
            "− entitlement",
            e.entitlement,
            "s(ε_u): the user's share of the cloud",
        ),
        (
            "= heaviness",
            e.heaviness,
            "h_u; below 0 lighter than the share, above 0 heavier",
        ),
        (
            "quota credit",
            e.unused_quota,
            "unused quota s(ε_u) − Σ s(ε(v)), included above",
        ),
    ];
    let lines: String = terms
        .iter()
        .map(|(name, v, why)| format!("  {name:<14} {:>9}   {why}\n", fixed(*v, 4)))
        .collect();
    let wl_headers: Vec<String> = [
        "workload",
        "node",
        "heaviness",
        "priority",
        "CPU weight",
        "measured",
    ]
    .map(String::from)
    .to_vec();
    let wl_rows: Vec<Vec<String>> = e
        .workloads
        .iter()
        .map(|w| {
            vec![
                w.workload.to_string(),
                w.node.to_string(),
                fixed(w.heaviness, 4),
                w.knobs.priority.to_string(),
                cpu_weight(&[w]),
                if w.measured { "yes" } else { "not yet" }.into(),
            ]
        })
        .collect();
    let status = if e.active {
        format!("rank {} (1 = lightest, served first)", e.rank)
    } else {
        "inactive (no workload), takes no part".into()
    };
    format!(
        "user {} — cycle {}, {status}\n\n{per_resource}{units}\n\n{lines}\n{}",
        e.user,
        e.cycle,
        table(&wl_headers, &wl_rows)
    )
}

/// Arguments of `fairshare nodes`.
#[derive(clap::Args)]
pub struct NodesArgs {
    #[command(flatten)]
    server: Server,
}

/// Runs `fairshare nodes`.
pub fn nodes(args: NodesArgs) -> Result<()> {
    let (nodes, value) = args.server.get::<Vec<NodeStatus>>("/v1/nodes")?;
    if args.server.json {
        return args.server.print_json(&value);
    }
    let now = now_ms();
    let headers: Vec<String> = [
        "node",
        "speed",
        "workloads",
        "last seq",
        "last report",
        "supply",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let supply: Vec<String> = n.supply.iter().map(|(r, v)| format!("{r}={v}")).collect();
            vec![
                n.node.clone(),
                fixed(n.speed, 2),
                n.workloads.to_string(),
                n.last_seq.map_or("–".into(), |s| s.to_string()),
                n.last_report_ms.map_or("never".into(), |t| {
                    format!("{} s ago", fixed((now - t) as f64 / 1000.0, 1))
                }),
                supply.join(" "),
            ]
        })
        .collect();
    crate::output::print(&table(&headers, &rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_service::model::{Knobs, UserPriority};

    #[test]
    fn the_ranking_names_the_cycle_and_lists_users_lightest_first() {
        let w = |id: &str, owner: &str, priority| WorkloadPriority {
            workload: id.into(),
            owner: owner.into(),
            node: "n1".into(),
            heaviness: 0.0,
            priority_input: 0.0,
            measured: true,
            knobs: Knobs {
                priority,
                cpu: 100,
                io: 100,
                memory: None,
                network: None,
            },
            written: None,
        };
        let p = Priorities {
            cycle: 7,
            computed_at_ms: 10_000,
            profile: "cgroup-v2".into(),
            resources: vec!["cpu".into()],
            users: vec![
                UserPriority {
                    user: "e".into(),
                    heaviness: -0.3,
                    rank: 1,
                },
                UserPriority {
                    user: "d".into(),
                    heaviness: 0.2,
                    rank: 2,
                },
            ],
            workloads: vec![w("v1", "d", 10), w("v2", "d", 20), w("v3", "e", -30)],
        };
        let text = ranking(&p, 1, 12_500);
        assert!(
            text.starts_with("fairshare top — cycle 7 (2.5 s ago), 2 active users"),
            "{text}"
        );
        assert!(text.contains("-0.3000"), "{text}");
        assert!(text.contains("\ne "), "{text}");
        assert!(!text.contains("\nd "), "{text}");
        assert!(text.contains("… and 1 more"), "{text}");
        // Nothing reported: e's priority −30 is computed as cpu.shares 1024·80/50 = 1638,
        // cpu.weight 160, not the daemon's profile value (100 here).
        assert!(
            text.contains("cpu.shares 1638 (v1) / cpu.weight 160 (v2), computed"),
            "{text}"
        );
    }

    #[test]
    fn written_values_are_shown_as_written_and_the_rest_as_computed() {
        let w = |id: &str, node: &str, written: Option<&[(&str, u64)]>| WorkloadPriority {
            workload: id.into(),
            owner: "d".into(),
            node: node.into(),
            heaviness: 0.0,
            priority_input: 0.0,
            measured: true,
            knobs: Knobs {
                priority: 10,
                cpu: 5000,
                io: 5000,
                memory: None,
                network: None,
            },
            written: written.map(|k| k.iter().map(|&(f, v)| (f.to_string(), v)).collect()),
        };
        let v1 = w(
            "d1",
            "old",
            Some(&[("cpu.shares", 204_472), ("blkio.weight", 500)]),
        );
        let v2 = w("d2", "new", Some(&[("cpu.weight", 90)]));
        let no_cpu = w("d3", "new", Some(&[("io.weight", 90)]));
        let none = w("d4", "new", None);
        assert_eq!(cpu_weight(&[&v1]), "cpu.shares 204472 (v1, written)");
        assert_eq!(
            cpu_weight(&[&v1, &v2, &no_cpu, &none]),
            "cpu.shares 204472 (v1, written); cpu.weight 90 (v2, written); none written; \
             cpu.shares 819 (v1) / cpu.weight 80 (v2), computed"
        );
        let e = Explanation {
            workloads: vec![v1],
            ..Explanation::uncounted("d", 3, ["cpu".to_string()].into_iter())
        };
        let text = explanation(&e);
        assert!(text.contains("d1 "), "{text}");
        assert!(text.contains("cpu.shares 204472 (v1, written)"), "{text}");
        assert!(!text.contains("5000"), "{text}");
    }
}
