//! The running daemon: the state its handlers share, the writer that commits usage reports in
//! groups (one sync for many, so 200 means durable without one fsync per request), the cycle
//! that computes priorities where this replica leads, and a graceful start and stop.

use crate::api::{router, ApiError};
use crate::auth::{Role, TokenDigest};
use crate::config::{ConfigError, ServiceConfig};
use crate::cycle::{compute, Settings, Snapshot};
use crate::metrics::Metrics;
use crate::model::{Health, UsageAck, UsageReport};
use crate::store::{now_ms, redact, Store, StoreError};
use axum_server::tls_rustls::RustlsConfig;
use axum_server::Handle;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// The most reports one group commit writes.
const GROUP_MAX: usize = 1024;
/// How often a replica that does not lead looks for a newer cycle.
const FOLLOW_PERIOD: Duration = Duration::from_millis(500);

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The configuration is not usable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The address could not be bound, or TLS files could not be read.
    #[error("{0}")]
    Io(String),
}

type WriteRequest = (UsageReport, oneshot::Sender<Result<UsageAck, ApiError>>);

/// What every handler and task shares.
pub struct Shared {
    /// Computation settings.
    pub settings: Settings,
    /// The state.
    pub store: Store,
    /// The configured tokens' digests, roles and names, in the same order.
    pub digests: Vec<TokenDigest>,
    /// See `digests`.
    pub roles: Vec<Role>,
    /// See `digests`.
    pub token_names: Vec<String>,
    /// Per-token rate limit, if on.
    pub limiter: Option<DefaultKeyedRateLimiter<usize>>,
    /// Metrics.
    pub metrics: Metrics,
    writer: mpsc::Sender<WriteRequest>,
    snapshot: RwLock<Arc<Snapshot>>,
    leader: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// The latest snapshot this replica knows.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().expect("no writer panics").clone()
    }

    fn set_snapshot(&self, snapshot: Snapshot) {
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
        rx.await
            .map_err(|_| ApiError::unavailable("the service is shutting down"))?
    }

    /// Health as `/healthz` and `/readyz` print it.
    pub fn health(&self, status: &str) -> Health {
        let snapshot = self.snapshot();
        Health {
            status: status.to_string(),
            leader: self.leader.load(std::sync::atomic::Ordering::Relaxed),
            cycle: snapshot.cycle,
            last_cycle_age_s: cycle_age(&snapshot),
        }
    }

    /// Updates the last-cycle-age gauge before a scrape.
    pub fn refresh_age(&self) {
        if let Some(age) = cycle_age(&self.snapshot()) {
            self.metrics.last_cycle_age.set(age);
        }
    }
}

fn cycle_age(snapshot: &Snapshot) -> Option<f64> {
    (snapshot.cycle > 0).then(|| (now_ms() - snapshot.computed_at_ms).max(0) as f64 / 1000.0)
}

/// A daemon started in this process: its address, and how to stop it.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    done: JoinHandle<Result<(), ServeError>>,
}

impl Running {
    /// Stops gracefully (in-flight requests finish, the database is closed) and waits.
    pub async fn stop(self) -> Result<(), ServeError> {
        let _ = self.stop.send(true);
        self.done
            .await
            .map_err(|e| ServeError::Io(format!("the daemon's task failed: {e}")))?
    }

    /// Waits until the daemon stops by itself (on SIGTERM or Ctrl-C when started so).
    pub async fn wait(self) -> Result<(), ServeError> {
        self.done
            .await
            .map_err(|e| ServeError::Io(format!("the daemon's task failed: {e}")))?
    }
}

/// Starts the daemon: checks the configuration, opens and migrates the database, binds, and
/// serves until [`Running::stop`] (or, with `signals`, SIGTERM or Ctrl-C).
pub async fn start(config: ServiceConfig, signals: bool) -> Result<Running, ServeError> {
    config.check()?;
    let settings = Settings {
        resources: config.resources.clone(),
        heaviness: config.heaviness.clone(),
        priority: config.priority,
        profile: config.knob_profile()?,
    };
    let tls = match &config.tls {
        Some(t) => Some({
            // One process-wide crypto provider; a second installation attempt changes nothing.
            let _ = rustls::crypto::ring::default_provider().install_default();

            RustlsConfig::from_pem_file(&t.cert, &t.key)
                .await
                .map_err(|e| {
                    ServeError::Io(format!(
                        "TLS certificate {} or key {}: {e}",
                        t.cert.display(),
                        t.key.display()
                    ))
                })?
        }),
        None => None,
    };
    let store = Store::open(&config.database).await?;
    let snapshot = store.latest_snapshot().await?.unwrap_or_default();
    let (writer, writes) = mpsc::channel(4 * GROUP_MAX);
    let shared = Arc::new(Shared {
        settings,
        digests: config.tokens.iter().map(|t| t.sha256).collect(),
        roles: config.tokens.iter().map(|t| t.role).collect(),
        token_names: (0..config.tokens.len())
            .map(|i| config.token_name(i))
            .collect(),
        limiter: limiter(&config),
        metrics: Metrics::new(),
        store: store.clone(),
        writer,
        snapshot: RwLock::new(Arc::new(snapshot)),
        leader: false.into(),
    });
    shared.metrics.cycle.set(shared.snapshot().cycle as i64);
    let listener = std::net::TcpListener::bind(config.listen)
        .map_err(|e| ServeError::Io(format!("cannot listen on {}: {e}", config.listen)))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| ServeError::Io(e.to_string()))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServeError::Io(e.to_string()))?;
    if config.tokens.is_empty() {
        tracing::warn!("no [[tokens]] configured: the API is open to every local process");
    }
    let (stop, stopped) = watch::channel(false);
    let done = tokio::spawn(run(
        shared,
        listener,
        tls,
        writes,
        stopped,
        signals,
        config.report_retention_s,
    ));
    tracing::info!(%addr, database = %redact(&config.database), tls = config.tls.is_some(), "listening");
    Ok(Running { addr, stop, done })
}

fn limiter(config: &ServiceConfig) -> Option<DefaultKeyedRateLimiter<usize>> {
    let per_second = NonZeroU32::new(config.rate_limit.per_second)?;
    let burst = NonZeroU32::new(config.rate_limit.burst).unwrap_or(per_second);
    Some(RateLimiter::keyed(
        Quota::per_second(per_second).allow_burst(burst),
    ))
}

async fn run(
    shared: Arc<Shared>,
    listener: std::net::TcpListener,
    tls: Option<RustlsConfig>,
    writes: mpsc::Receiver<WriteRequest>,
    mut stopped: watch::Receiver<bool>,
    signals: bool,
    retention_s: u64,
) -> Result<(), ServeError> {
    let writer = tokio::spawn(group_commit(shared.store.clone(), writes));
    let (cycle_stop, cycle_stopped) = watch::channel(false);
    let cycles = tokio::spawn(cycle_loop(shared.clone(), cycle_stopped, retention_s));
    let handle = Handle::new();
    let app = router(shared.clone()).into_make_service();
    let server = {
        let handle = handle.clone();
        async move {
            match tls {
                Some(tls) => {
                    axum_server::from_tcp_rustls(listener, tls)
                        .handle(handle)
                        .serve(app)
                        .await
                }
                None => {
                    axum_server::from_tcp(listener)
                        .handle(handle)
                        .serve(app)
                        .await
                }
            }
        }
    };
    let shutdown = async move {
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => {}
            _ = termination(), if signals => {}
        }
        tracing::info!("shutting down: finishing in-flight requests");
        handle.graceful_shutdown(Some(Duration::from_secs(30)));
    };
    let (served, ()) = tokio::join!(server, shutdown);
    let _ = cycle_stop.send(true);
    let _ = cycles.await;
    // The last sender of the writer's queue goes with `shared`: the writer commits what is
    // queued, then closes the database.
    drop(shared);
    let _ = writer.await;
    served.map_err(|e| ServeError::Io(format!("server: {e}")))
}

/// SIGTERM or Ctrl-C.
async fn termination() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler can be installed");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// Commits waiting reports together: whatever queued while the previous commit synced goes in
/// the next one, up to [`GROUP_MAX`].
async fn group_commit(store: Store, mut writes: mpsc::Receiver<WriteRequest>) {
    while let Some(first) = writes.recv().await {
        let mut group = vec![first];
        while group.len() < GROUP_MAX {
            match writes.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        let (reports, replies): (Vec<_>, Vec<_>) = group.into_iter().unzip();
        match store.store_reports(&reports).await {
            Ok(answers) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    let _ = reply.send(answer.map_err(ApiError::from));
                }
            }
            Err(e) => {
                let e = ApiError::from(e);
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }
    store.close().await;
}

/// Every μ seconds: lead if possible; the leader computes a cycle, the others follow the
/// newest stored one.
async fn cycle_loop(shared: Arc<Shared>, mut stopped: watch::Receiver<bool>, retention_s: u64) {
    let period = Duration::from_secs_f64(shared.settings.heaviness.update_interval_s);
    let mut leadership = shared.store.leadership();
    let patience = period.clamp(Duration::from_secs(1), Duration::from_secs(10));
    let mut next_cycle = Instant::now() + period;
    loop {
        let leading = match &mut leadership {
            None => true,
            Some(l) => l.hold(patience).await,
        };
        let was = shared
            .leader
            .swap(leading, std::sync::atomic::Ordering::Relaxed);
        if leading != was {
            tracing::info!(leading, "leadership changed");
        }
        shared.metrics.leader.set(i64::from(leading));
        if leading && Instant::now() >= next_cycle {
            next_cycle = Instant::now() + period;
            one_cycle(&shared, retention_s).await;
        } else if !leading {
            follow(&shared).await;
        }
        let wake = if leading {
            next_cycle
        } else {
            Instant::now() + FOLLOW_PERIOD.min(period)
        };
        tokio::select! {
            _ = tokio::time::sleep_until(wake.into()) => {}
            _ = stopped.wait_for(|s| *s) => break,
        }
    }
    if let Some(l) = leadership {
        l.release().await;
    }
}

/// Computes and stores one cycle, and serves it.
async fn one_cycle(shared: &Shared, retention_s: u64) {
    let settings = &shared.settings;
    let result = shared
        .store
        .run_cycle(
            &settings.resources,
            retention_s.saturating_mul(1000) as i64,
            |cycle, registry, memory, measured| {
                let start = Instant::now();
                let outcome = tokio::task::block_in_place(|| {
                    compute(settings, registry, memory, measured, cycle, now_ms())
                })?;
                let seconds = start.elapsed().as_secs_f64();
                Ok::<_, fairshare_core::heaviness::HeavinessError>((
                    outcome.snapshot,
                    outcome.memory,
                    seconds,
                ))
            },
        )
        .await;
    match result {
        Ok(Ok((snapshot, seconds))) => {
            shared.metrics.cycle_seconds.observe(seconds);
            tracing::debug!(cycle = snapshot.cycle, seconds, "cycle computed");
            shared.set_snapshot(snapshot);
        }
        Ok(Err(e)) => {
            shared.metrics.cycle_errors.inc();
            tracing::error!(error = %e, "cycle failed: the registry cannot be evaluated");
        }
        Err(e) => {
            shared.metrics.cycle_errors.inc();
            tracing::error!(error = %e, "cycle failed");
        }
    }
}

/// Loads a newer cycle another replica computed.
async fn follow(shared: &Shared) {
    let known = shared.snapshot().cycle;
    match shared.store.latest_cycle().await {
        Ok(latest) if latest > known => match shared.store.latest_snapshot().await {
            Ok(Some(snapshot)) => shared.set_snapshot(snapshot),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "cannot load the latest cycle"),
        },
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot read the latest cycle"),
    }
}
