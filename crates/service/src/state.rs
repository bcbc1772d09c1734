//! What every handler and task of the daemon shares: the settings, the store, who each token
//! is, the latest snapshot, the group-commit writer's queue, leadership and connection counts.
//! The handlers ([`crate::api`]) read it and the server ([`crate::server`]) builds and drives it.

use crate::admission::Admission;
use crate::auth::{Role, TokenDigest};
use crate::config::ServiceConfig;
use crate::cycle::{Settings, Snapshot};
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::model::{Health, UsageAck, UsageReport};
use crate::store::{now_ms, Store};
use fairshare_core::error::Invalid;
use governor::DefaultKeyedRateLimiter;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How long a report waits for its group commit before it is answered 503: a database that
/// stops answering without closing its connections (dropped packets) would otherwise hold
/// every writer until TCP gives up.
const WRITE_DEADLINE: Duration = Duration::from_secs(2);

/// A report for the group-commit writer, and where its answer goes.
pub(crate) type WriteRequest = (UsageReport, oneshot::Sender<Result<UsageAck, ApiError>>);

/// What every handler and task shares.
pub struct Shared {
    /// Computation settings.
    pub settings: Settings,
    /// The state.
    pub store: Store,
    /// The configured tokens' digests.
    pub digests: Vec<TokenDigest>,
    /// Who each token is and what it may do, in the order of `digests`.
    pub callers: Vec<Caller>,
    /// Per-token rate limit, if on.
    pub limiter: Option<DefaultKeyedRateLimiter<usize>>,
    /// How long a request's body may take to arrive.
    pub body_timeout: Duration,
    /// Metrics.
    pub metrics: Metrics,
    pub(crate) writer: mpsc::Sender<WriteRequest>,
    pub(crate) snapshot: RwLock<Arc<Snapshot>>,
    pub(crate) leader: AtomicBool,
    pub(crate) connections: Arc<Admission>,
}

impl Shared {
    /// The latest snapshot this replica knows.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().expect("no writer panics").clone()
    }

    pub(crate) fn set_snapshot(&self, snapshot: Snapshot) {
        self.metrics.cycle.set(snapshot.cycle as i64);
        *self.snapshot.write().expect("no writer panics") = Arc::new(snapshot);
    }

    /// Hands a checked report to the group-commit writer and waits until it is durable.
    pub async fn write(&self, report: UsageReport) -> Result<UsageAck, ApiError> {
        let (tx, rx) = oneshot::channel();
        self.writer
            .send((report, tx))
            .await
            .map_err(|_| ApiError::unavailable("the service is shutting down"))?;
        match tokio::time::timeout(WRITE_DEADLINE, rx).await {
            Ok(answer) => {
                answer.map_err(|_| ApiError::unavailable("the service is shutting down"))?
            }
            // The report may still be stored: a retry with its number is recognised.
            Err(_) => Err(ApiError::unavailable(format!(
                "the database did not store the report within {} s; send it again",
                WRITE_DEADLINE.as_secs()
            ))),
        }
    }

    /// Health as `/healthz` and `/readyz` print it.
    pub fn health(&self, status: &str) -> Health {
        let snapshot = self.snapshot();
        Health {
            status: status.to_string(),
            leader: self.leader.load(Ordering::Relaxed),
            cycle: snapshot.cycle,
            last_cycle_age_s: cycle_age(&snapshot),
        }
    }

    /// Updates the gauges read at a scrape: the last cycle's age, the connections open.
    pub fn refresh_gauges(&self) {
        if let Some(age) = cycle_age(&self.snapshot()) {
            self.metrics.last_cycle_age.set(age);
        }
        let open = self.connections.open();
        self.metrics.connections_open.set(open as i64);
    }

    pub(crate) fn set_leader(&self, leading: bool) {
        if self.leader.swap(leading, Ordering::Relaxed) != leading {
            tracing::info!(leading, "leadership changed");
        }
        self.metrics.leader.set(i64::from(leading));
    }
}

fn cycle_age(snapshot: &Snapshot) -> Option<f64> {
    (snapshot.cycle > 0).then(|| (now_ms() - snapshot.computed_at_ms).max(0) as f64 / 1000.0)
}

/// Who a request's token is: its role, its name, and for a bound agent token the nodes it
/// may act for.
#[derive(Debug, Clone)]
pub struct Caller {
    /// What the token may do.
    pub role: Role,
    /// The name messages give it.
    pub name: String,
    /// The only nodes it may act for; `None`: every node.
    pub nodes: Option<Arc<BTreeSet<String>>>,
}

impl Caller {
    /// Configured token `i`.
    pub fn of(config: &ServiceConfig, i: usize) -> Caller {
        let t = &config.tokens[i];
        Caller {
            role: t.role,
            name: config.token_name(i),
            nodes: t
                .nodes
                .as_ref()
                .map(|n| Arc::new(n.iter().cloned().collect())),
        }
    }

    /// Anyone, when the API is open (no tokens configured, loopback only).
    pub(crate) fn open() -> Caller {
        Caller {
            role: Role::Admin,
            name: "open API".into(),
            nodes: None,
        }
    }

    /// Whether this caller may act for `node`; the refusal says which nodes it may.
    pub fn may_act_for(&self, node: &str) -> Result<(), Invalid> {
        match &self.nodes {
            Some(nodes) if !nodes.contains(node) => Err(Invalid(format!(
                "token {} may act only for node{} {}, not for node {node:?}",
                self.name,
                if nodes.len() == 1 { "" } else { "s" },
                nodes
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            _ => Ok(()),
        }
    }

    /// [`Caller::may_act_for`] as an API error.
    pub(crate) fn check_node(&self, node: &str) -> Result<(), ApiError> {
        self.may_act_for(node).map_err(ApiError::forbidden)
    }
}
