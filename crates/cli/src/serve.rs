//! `fairshare serve` (the fairness service daemon) and `fairshare token new`: the configuration
//! file, then flags and environment variables over it, then the daemon until SIGTERM.

use anyhow::{bail, Context, Result};
use fairshare_core::error::Invalid;
use fairshare_core::heaviness::{Resource, ResourceKind};
use fairshare_core::model::parse_seconds;
use fairshare_service::config::{Limits, RateLimit, TlsConfig};
use fairshare_service::{Role, ServiceConfig, TokenDigest, TokenEntry};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What `fairshare serve --help` says after the options.
const SERVE_AFTER_HELP: &str = "\
Every option can also be given in the environment (shown as [env: …]) or in the TOML file of
--config; an option on the command line wins over the environment, which wins over the file.
The [heaviness] and [priority] tables take --heaviness and --priority as inline TOML tables,
whose keys replace the file's one by one: --heaviness '{normalizer = 2, metric = {kind = \"drf\"}}'
(docs/service.md lists every key; --check prints the result).

Without any [[tokens]] the API is open, which is allowed only on a loopback address.
Make a token with `fairshare token new --role admin` and paste the [[tokens]] entry it prints.

The API is described at /v1/openapi.json; /healthz, /readyz and /metrics need no token.";

/// Arguments of `fairshare serve`.
#[derive(clap::Args)]
#[command(after_help = SERVE_AFTER_HELP)]
pub struct Args {
    /// The TOML configuration file.
    #[arg(long, env = "FAIRSHARE_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address and port to listen on [default: 127.0.0.1:7878].
    #[arg(long, env = "FAIRSHARE_LISTEN", value_name = "ADDR:PORT")]
    listen: Option<SocketAddr>,
    /// sqlite:PATH (embedded; default sqlite:fairshare.db) or postgres://USER:PASSWORD@HOST/DB.
    #[arg(long, env = "FAIRSHARE_DATABASE", value_name = "URL")]
    database: Option<String>,
    /// Time between two priority cycles (μ), in seconds or as `30s`, `5m` [default: 10].
    #[arg(long, env = "FAIRSHARE_INTERVAL", value_name = "DURATION", value_parser = parse_seconds)]
    interval: Option<f64>,
    /// Knob profile of the values served: cgroup-v2, cgroup-v1, libvirt or paper [default: cgroup-v2].
    #[arg(long, env = "FAIRSHARE_PROFILE")]
    profile: Option<String>,
    /// Resources reports measure, as NAME=KIND (kind: cpu, memory, disk, network, other)
    /// [default: cpu=cpu,mem=memory,disk=disk,net=network].
    #[arg(
        long,
        env = "FAIRSHARE_RESOURCES",
        value_delimiter = ',',
        value_name = "NAME=KIND"
    )]
    resources: Vec<String>,
    /// A token, as ROLE:SHA256 (repeatable; adds to the tokens of the file).
    #[arg(
        long = "token-sha256",
        env = "FAIRSHARE_TOKENS",
        value_delimiter = ',',
        value_name = "ROLE:HEX"
    )]
    tokens: Vec<String>,
    /// Requests per second per token; 0 turns the limit off [default: 1000].
    #[arg(long, env = "FAIRSHARE_RATE_LIMIT", value_name = "PER_SECOND")]
    rate_limit: Option<u32>,
    /// Requests a token may make at once above its rate [default: 2000].
    #[arg(long, env = "FAIRSHARE_RATE_BURST", value_name = "REQUESTS")]
    rate_burst: Option<u32>,
    /// Connections open at once; above it a new one takes the place of the oldest that has
    /// shown no token, or is closed when every one has [default: 512].
    #[arg(long, env = "FAIRSHARE_MAX_CONNECTIONS", value_name = "COUNT")]
    max_connections: Option<usize>,
    /// Connections one peer (an IPv4 address, an IPv6 /64) may hold [default: a quarter of
    /// --max-connections].
    #[arg(long, env = "FAIRSHARE_MAX_CONNECTIONS_PER_PEER", value_name = "COUNT")]
    max_connections_per_peer: Option<usize>,
    /// Seconds a client has to send a request's headers: a new connection's first request from
    /// when it is accepted, then the longest an HTTP/1 connection waits for its next request
    /// [default: 20].
    #[arg(long, env = "FAIRSHARE_HEADER_TIMEOUT", value_name = "DURATION", value_parser = parse_seconds)]
    header_timeout: Option<f64>,
    /// Seconds a client has to send a request's body [default: 20].
    #[arg(long, env = "FAIRSHARE_BODY_TIMEOUT", value_name = "DURATION", value_parser = parse_seconds)]
    body_timeout: Option<f64>,
    /// Seconds a connection may go without a byte read or written [default: 60].
    #[arg(long, env = "FAIRSHARE_IDLE_TIMEOUT", value_name = "DURATION", value_parser = parse_seconds)]
    idle_timeout: Option<f64>,
    /// How long counted reports are kept (to recognise retries), in seconds or as `1d`
    /// [default: 86400].
    #[arg(long, env = "FAIRSHARE_REPORT_RETENTION", value_name = "DURATION", value_parser = whole_seconds)]
    report_retention: Option<u64>,
    /// TLS certificate chain (PEM); needs --tls-key.
    #[arg(
        long,
        env = "FAIRSHARE_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key"
    )]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM); needs --tls-cert.
    #[arg(
        long,
        env = "FAIRSHARE_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert"
    )]
    tls_key: Option<PathBuf>,
    /// Settings of the heaviness metric, as an inline TOML table over the file's heaviness table.
    #[arg(long, env = "FAIRSHARE_HEAVINESS", value_name = "TOML")]
    heaviness: Option<String>,
    /// Settings of heaviness to priority, as an inline TOML table over the file's priority table.
    #[arg(long, env = "FAIRSHARE_PRIORITY", value_name = "TOML")]
    priority: Option<String>,
    /// Log lines as JSON objects.
    #[arg(long, env = "FAIRSHARE_LOG_JSON")]
    log_json: bool,
    /// Log filter, as RUST_LOG takes it (e.g. info, debug, fairshare_service=debug).
    #[arg(long, env = "FAIRSHARE_LOG", default_value = "info")]
    log: String,
    /// Check the configuration, print it as TOML, and exit.
    #[arg(long)]
    check: bool,
}

/// Runs `fairshare serve`.
pub fn run(args: Args) -> Result<()> {
    let mut config = configuration(&args)?;
    config.check()?;
    if args.check {
        // The resolved configuration names the per-peer cap a default would give.
        let per_peer = config.limits.per_peer();
        config.limits.max_connections_per_peer = Some(per_peer);
        print!(
            "{}",
            toml::to_string(&config).context("printing the configuration")?
        );
        return Ok(());
    }
    logging(&args.log, config.log_json)?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let running = fairshare_service::start(config, true).await?;
        running.wait().await?;
        tracing::info!("stopped");
        Ok(())
    })
}

/// The file's settings with the flags and environment over them.
fn configuration(args: &Args) -> Result<ServiceConfig> {
    let overlays: Vec<(&str, &str)> =
        [("heaviness", &args.heaviness), ("priority", &args.priority)]
            .into_iter()
            .filter_map(|(key, inline)| Some((key, inline.as_deref()?)))
            .collect();
    let mut c = ServiceConfig::load(args.config.as_deref(), &overlays)?;
    if let Some(v) = args.listen {
        c.listen = v;
    }
    if let Some(v) = &args.database {
        c.database = v.clone();
    }
    if let Some(v) = args.interval {
        c.heaviness.update_interval_s = v;
    }
    if let Some(v) = &args.profile {
        c.profile = v.clone();
    }
    if !args.resources.is_empty() {
        c.resources = args
            .resources
            .iter()
            .map(|r| resource(r))
            .collect::<Result<_>>()?;
    }
    for t in &args.tokens {
        c.tokens.push(token(t)?);
    }
    let RateLimit { per_second, burst } = c.rate_limit;
    c.rate_limit = RateLimit {
        per_second: args.rate_limit.unwrap_or(per_second),
        burst: args.rate_burst.unwrap_or(burst),
    };
    let Limits {
        max_connections,
        max_connections_per_peer,
        header_timeout_s,
        body_timeout_s,
        idle_timeout_s,
    } = c.limits;
    c.limits = Limits {
        max_connections: args.max_connections.unwrap_or(max_connections),
        max_connections_per_peer: args.max_connections_per_peer.or(max_connections_per_peer),
        header_timeout_s: args.header_timeout.unwrap_or(header_timeout_s),
        body_timeout_s: args.body_timeout.unwrap_or(body_timeout_s),
        idle_timeout_s: args.idle_timeout.unwrap_or(idle_timeout_s),
    };
    if let Some(v) = args.report_retention {
        c.report_retention_s = v;
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        c.tls = Some(TlsConfig {
            cert: cert.clone(),
            key: key.clone(),
        });
    }
    c.log_json |= args.log_json;
    Ok(c)
}

fn resource(text: &str) -> Result<Resource> {
    let Some((name, kind)) = text.split_once('=') else {
        bail!("--resources: {text:?} must be NAME=KIND, e.g. cpu=cpu or mem=memory");
    };
    let kind: ResourceKind = serde_json::from_value(serde_json::Value::String(kind.into()))
        .map_err(|_| {
            anyhow::anyhow!(
                "--resources: kind {kind:?} of {name:?} is not one of cpu, memory, disk, network, other"
            )
        })?;
    Ok(Resource::new(name, kind))
}

fn token(text: &str) -> Result<TokenEntry> {
    let Some((role, digest)) = text.split_once(':') else {
        bail!("--token-sha256: {text:?} must be ROLE:SHA256");
    };
    let role: Role = role
        .parse()
        .map_err(|e: Invalid| anyhow::anyhow!("--token-sha256: {e}"))?;
    let sha256: TokenDigest = digest
        .parse()
        .map_err(|e: Invalid| anyhow::anyhow!("--token-sha256: {e}"))?;
    Ok(TokenEntry {
        role,
        sha256,
        name: None,
        nodes: None,
    })
}

/// Structured logs on standard error: text for a terminal or journald, JSON on request.
pub fn logging(filter: &str, json: bool) -> Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .with_context(|| format!("--log {filter:?}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).init();
    }
    Ok(())
}

/// Arguments of `fairshare token`.
#[derive(clap::Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    command: TokenCommand,
}

#[derive(clap::Subcommand)]
enum TokenCommand {
    /// Print a fresh random token and the tokens entry (its SHA-256 digest) to paste into
    /// the daemon's configuration; only the digest is ever stored.
    New {
        /// What the token may do: admin (register, remove, and everything below), agent
        /// (report usage, and read) or reader (read).
        #[arg(long)]
        role: Role,
        /// A name for the token in logs.
        #[arg(long)]
        name: Option<String>,
        /// For an agent token: a node it may act for (repeatable); without any, every node.
        #[arg(long = "node", value_name = "NODE")]
        nodes: Vec<String>,
    },
}

/// Runs `fairshare token …`.
pub fn token_command(args: TokenArgs) -> Result<()> {
    let TokenCommand::New { role, name, nodes } = args.command;
    let entry = token_entry(role, name, nodes)?;
    let token = fairshare_service::new_token();
    let entry = TokenEntry {
        sha256: TokenDigest::of(&token),
        ..entry
    };
    let toml = toml::to_string(&entry).context("printing the entry")?;
    crate::output::print(&format!(
        "token (give it to the client; it is not stored anywhere):\n{token}\n\n\
         entry for the daemon's configuration file:\n[[tokens]]\n{toml}"
    ))
}

/// The entry of a new token (its digest filled in later), its node list checked as the daemon
/// will check it.
fn token_entry(role: Role, name: Option<String>, nodes: Vec<String>) -> Result<TokenEntry> {
    let entry = TokenEntry {
        role,
        sha256: TokenDigest::of(""),
        name,
        nodes: (!nodes.is_empty()).then_some(nodes),
    };
    let config = ServiceConfig {
        tokens: vec![entry.clone()],
        ..ServiceConfig::default()
    };
    config.check().map_err(|e| anyhow::anyhow!("--node: {e}"))?;
    Ok(entry)
}

/// A duration in whole seconds, as `--report-retention` takes it (`86400`, `1d`).
fn whole_seconds(text: &str) -> Result<u64, String> {
    let seconds = parse_seconds(text)?;
    match seconds.fract() == 0.0 && seconds >= 0.0 {
        true => Ok(seconds as u64),
        false => Err(format!(
            "expected a whole number of seconds, found {seconds}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_their_mistakes() {
        assert!(resource("gpu")
            .unwrap_err()
            .to_string()
            .contains("NAME=KIND"));
        assert!(resource("gpu=accelerator")
            .unwrap_err()
            .to_string()
            .contains("not one of"));
        assert_eq!(resource("gpu=other").unwrap().kind, ResourceKind::Other);
        assert!(token("admin")
            .unwrap_err()
            .to_string()
            .contains("ROLE:SHA256"));
        assert!(token("root:00")
            .unwrap_err()
            .to_string()
            .contains("admin, agent, reader"));
        assert!(token("agent:00")
            .unwrap_err()
            .to_string()
            .contains("64 hex digits"));
        let hex = TokenDigest::of("x").to_hex();
        assert_eq!(token(&format!("agent:{hex}")).unwrap().role, Role::Agent);
        let bound = token_entry(Role::Agent, None, vec!["n1".into()]).unwrap();
        assert_eq!(bound.nodes, Some(vec!["n1".to_string()]));
        let e = token_entry(Role::Admin, None, vec!["n1".into()]).unwrap_err();
        assert!(e.to_string().contains("agent tokens only"), "{e}");
        let e = token_entry(Role::Agent, None, vec!["n 1".into()]).unwrap_err();
        assert!(e.to_string().contains("not a valid node id"), "{e}");
    }
}
