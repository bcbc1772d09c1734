//! `fairshare agent`: the node agent. It reads its file, detects the host's cgroups, says what
//! it found, and runs cycles until SIGTERM — or one (`--once`), or without writing
//! (`--dry-run`), or only checks that the node is ready (`--check`).

use anyhow::{bail, Context, Result};
use fairshare_agent::cgroup::Layout;
use fairshare_agent::config::OnExit;
use fairshare_agent::run;
use fairshare_agent::{Agent, AgentConfig, CycleReport};
use fairshare_core::error::Chain;
use fairshare_reconcile::watch::stop_on_signals;
use fairshare_report::{check_table, cycle_text};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// What `fairshare agent --help` says after the options.
const AGENT_AFTER_HELP: &str = "\
Every child cgroup of the configured parents is a workload; its owner comes from a regular
expression on its name or a mapping file. Every interval the agent reads the counters, reports
the usage to the daemon (or, without [daemon], computes the node's heaviness itself) and writes
cpu.weight/io.weight/memory.low (cgroup v2) or cpu.shares/blkio.weight/memory.soft_limit_in_bytes
(cgroup v1). The token comes from FAIRSHARE_TOKEN or daemon.token_file.

  fairshare agent --config /etc/fairshare/agent.toml --check     is this node ready?
  fairshare agent --config agent.toml --once --dry-run           what would be written

docs/agent.md describes every key of the file; deploy/agent.toml is an example.";

/// Arguments of `fairshare agent`.
#[derive(clap::Args)]
#[command(after_help = AGENT_AFTER_HELP)]
pub struct Args {
    /// The TOML configuration file.
    #[arg(
        long,
        env = "FAIRSHARE_AGENT_CONFIG",
        value_name = "FILE",
        default_value = "/etc/fairshare/agent.toml"
    )]
    config: PathBuf,
    /// Time between two cycles (μ), in seconds or as `30s`, `5m`, over the file's interval_s.
    #[arg(long, value_name = "DURATION", value_parser = fairshare_core::model::parse_seconds)]
    interval: Option<f64>,
    /// Run one full cycle (two readings one interval apart, then the writes), then exit.
    #[arg(long)]
    once: bool,
    /// Write nothing and report nothing: print what would be written each cycle.
    #[arg(long)]
    dry_run: bool,
    /// Check, read-only, whether the node is ready (cgroups, every workload's counters and
    /// knobs, the file limit, daemon, token) and exit: status 1 when a workload could not be
    /// measured or steered. Nothing is written and nothing registered at the daemon.
    #[arg(long)]
    check: bool,
    /// Print cycles (with --once or --dry-run) or the check as JSON.
    #[arg(long)]
    json: bool,
    /// Log filter (RUST_LOG syntax).
    #[arg(long, env = "FAIRSHARE_LOG", default_value = "info")]
    log: String,
    /// Log lines as JSON objects.
    #[arg(long, env = "FAIRSHARE_LOG_JSON")]
    log_json: bool,
}

/// Runs `fairshare agent`.
pub fn run(args: Args) -> Result<()> {
    let mut config = AgentConfig::load(&args.config)?;
    if let Some(interval) = args.interval {
        config.interval_s = interval;
        config.check().context("--interval")?;
    }
    let node = config.node.clone().unwrap_or_else(run::host_name);
    let token = run::token(&config)?;
    if args.check {
        return check(&config, &node, token, args.json);
    }
    crate::serve::logging(&args.log, args.log_json)?;
    match run::raise_file_limit() {
        Ok(limit) => tracing::info!(
            limit,
            "open files: the soft limit is raised to the hard one"
        ),
        Err(e) => tracing::warn!(error = %Chain(&e), "the limit on open files could not be raised"),
    }
    let layout = Layout::detect(&config.cgroup_root)?;
    let on_exit = config.on_exit;
    let supply = run::supply(&config);
    let interval = Duration::from_secs_f64(config.interval_s);
    let mut agent = Agent::new(config, layout, node, supply, token, args.dry_run)?;
    for line in agent.describe() {
        tracing::info!("{line}");
    }
    let stop = stop_on_signals().context("installing the signal handler")?;
    let print = args.once || args.dry_run;
    let mut out = std::io::stdout().lock();
    let mut show = |report: &CycleReport| {
        if print {
            let shown = if args.json {
                json_line(report)
            } else {
                cycle_text(report)
            };
            // A closed standard output (as by `| head`) ends nothing but the printing.
            let _ = out.write_all(shown.as_bytes()).and_then(|()| out.flush());
        } else {
            log_cycle(report);
        }
    };
    if args.once {
        if let Some(report) = run::once(&mut agent, interval, &stop) {
            show(&report);
        }
    } else {
        run::run(&mut agent, interval, &stop, &mut show);
        if on_exit == OnExit::Restore {
            let reset = agent.restore();
            tracing::info!(
                knobs = reset,
                "stopped; the kernel's defaults are written back (on_exit = \"restore\")"
            );
        } else {
            tracing::info!("stopped; the knobs keep their last values (on_exit = \"keep\")");
        }
    }
    Ok(())
}

fn check(config: &AgentConfig, node: &str, token: Option<String>, json: bool) -> Result<()> {
    let items = run::check(config, node, token);
    if json {
        let doc = serde_json::json!({"schema_version": 1, "node": node, "checks": items});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", check_table(&items));
    }
    let failed = items.iter().filter(|i| i.status == "fail").count();
    if failed > 0 {
        bail!("node {node} is not ready: {failed} check(s) failed");
    }
    Ok(())
}

/// One cycle as a JSON line.
fn json_line(report: &CycleReport) -> String {
    let mut doc = serde_json::to_value(report).unwrap_or_default();
    doc["schema_version"] = 1.into();
    format!("{doc}\n")
}

/// A cycle in the log: one summary line at info; each knob written at debug.
fn log_cycle(report: &CycleReport) {
    tracing::info!(
        cycle = report.cycle,
        workloads = report.workloads.len(),
        measured = report.measured.len(),
        source = ?report.source,
        written = report.writes.len(),
        held = report.held,
        refused = report.refused,
        pending = report.pending_reports,
        "cycle"
    );
    for w in &report.writes {
        tracing::debug!(workload = %w.workload, owner = %w.owner, priority = w.priority, file = %w.file, value = w.value, "knob written");
    }
}
