//! The operator's commands against a running daemon: `fairshare top` (the live ranking),
//! `fairshare explain USER` and `fairshare nodes`, each also as `--json`.

use anyhow::{bail, Context, Result};
use fairshare_agent::cgroup::{cpu_knob, Version};
use fairshare_report::text::{fixed, significant, table};
use fairshare_service::model::{ErrorBody, Explanation, NodeStatus, Priorities};
use serde::de::DeserializeOwned;
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
        "fairshare top — cycle {} ({age}), {} active users, {} workloads ({measured} measured); CPU weights as node agents write them\n\n",
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
        "mean cpu.shares (v1)",
        "mean cpu.weight (v2)",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = p
        .users
        .iter()
        .take(limit)
        .map(|u| {
            let mine: Vec<_> = p.workloads.iter().filter(|w| w.owner == u.user).collect();
            let mean = |f: &dyn Fn(&&fairshare_service::model::WorkloadPriority) -> f64| {
                mine.iter().map(f).sum::<f64>() / mine.len().max(1) as f64
            };
            vec![
                u.user.to_string(),
                u.rank.to_string(),
                fixed(u.heaviness, 4),
                mine.len().to_string(),
                fixed(mean(&|w| f64::from(w.knobs.priority)), 1),
                fixed(mean(&|w| written(Version::V1, w.knobs.priority)), 0),
                fixed(mean(&|w| written(Version::V2, w.knobs.priority)), 0),
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

/// The CPU weight a node agent writes for a priority on a cgroup version (the daemon's own
/// knob values are those of its profile, which agents do not use; within the agent's
/// `knob_step` of this, the value written before is kept).
fn written(version: Version, priority: i32) -> f64 {
    cpu_knob(version, Path::new("")).value(priority, 0) as f64
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
        "cpu.shares (v1)",
        "cpu.weight (v2)",
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
                written(Version::V1, w.knobs.priority).to_string(),
                written(Version::V2, w.knobs.priority).to_string(),
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
    use fairshare_service::model::{Knobs, UserPriority, WorkloadPriority};

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
        // e's priority −30 is written as cpu.shares 1024·80/50 = 1638, cpu.weight 160, not
        // the daemon's profile value (100 here).
        assert!(text.contains("1638") && text.contains("160"), "{text}");
    }
}
