//! The operator's commands against a running daemon: `fairshare top` (the live ranking),
//! `fairshare explain USER` and `fairshare nodes`, each also as `--json`.

use anyhow::{bail, Context, Result};
use fairshare_agent::cgroup::{cpu_knob, Version};
use fairshare_report::{explain_table, nodes_table, top_table, CpuKnob};
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

    /// Prints the daemon's JSON answer, pretty.
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
        let screen = top_table(&priorities, args.limit, now_ms(), &agent_cpu_knobs());
        if args.once {
            return crate::output::print(&screen);
        }
        crate::output::print(&format!("\x1b[H\x1b[2J{screen}"))?;
        std::thread::sleep(Duration::from_secs_f64(args.every));
    }
}

/// Now, in milliseconds since the Unix epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The node agent's CPU weight knobs, v1 then v2: what the tables show for a workload whose
/// agent reported nothing written (not the daemon's profile values, which agents do not use;
/// within the agent's `knob_step` of this, the value written before is kept).
fn agent_cpu_knobs() -> [CpuKnob; 2] {
    [
        CpuKnob {
            version: "v1",
            file: cpu_knob(Version::V1, Path::new("")).file,
            value: |priority| cpu_knob(Version::V1, Path::new("")).value(priority, 0),
        },
        CpuKnob {
            version: "v2",
            file: cpu_knob(Version::V2, Path::new("")).file,
            value: |priority| cpu_knob(Version::V2, Path::new("")).value(priority, 0),
        },
    ]
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
    crate::output::print(&explain_table(&e, &agent_cpu_knobs()))
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
    crate::output::print(&nodes_table(&nodes, now_ms()))
}
