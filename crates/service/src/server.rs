//! The running daemon: the state its handlers share, the writer that commits usage reports in
//! groups (one sync for many, so 200 means durable without one fsync per request), the cycle
//! that computes priorities where this replica leads, and a graceful start and stop.

use crate::admission::{Admission, Admitted, Mark, Refused, Watch};
use crate::api::router;
use crate::config::{Limits, ServiceConfig};
use crate::cycle::{compute, Settings, Snapshot};
use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::state::{Caller, Shared, WriteRequest};
use crate::store::{now_ms, redact, Leadership, Store, StoreError};
use axum::http::Request;
use axum_server::accept::Accept;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use axum_server::Handle;
use fairshare_core::config::ConfigError;
use fairshare_core::error::Chain;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_io_timeout::TimeoutStream;
use tower_service::Service;

/// The most reports one group commit writes.
const GROUP_MAX: usize = 1024;
/// How often a replica checks its claim to lead (or tries to take it), and one that does not
/// lead looks for a newer cycle.
const CHECK_PERIOD: Duration = Duration::from_millis(500);
/// How long a check of the claim may go unanswered before `/healthz` stops saying this replica
/// leads (the check itself may wait longer before the claim is dropped).
const UNCONFIRMED_AFTER: Duration = Duration::from_secs(1);
/// File descriptors kept beside the connections: database files and connections, the listener,
/// logs.
const FD_RESERVE: u64 = 128;

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, Error)]
#[non_exhaustive]
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
    file_limit(config.limits.max_connections)?;
    let store = Store::open(&config.database).await?;
    let snapshot = match store.latest_snapshot().await {
        Err(StoreError::Corrupt(e)) => {
            tracing::error!(error = %e, "the latest stored cycle cannot be read; serving none until the next cycle computes one");
            Snapshot::default()
        }
        other => other?.unwrap_or_default(),
    };
    let (writer, writes) = mpsc::channel(4 * GROUP_MAX);
    let shared = Arc::new(Shared {
        settings,
        digests: config.tokens.iter().map(|t| t.sha256).collect(),
        callers: (0..config.tokens.len())
            .map(|i| Caller::of(&config, i))
            .collect(),
        limiter: limiter(&config),
        body_timeout: Duration::from_secs_f64(config.limits.body_timeout_s),
        metrics: Metrics::new(),
        store: store.clone(),
        writer,
        snapshot: RwLock::new(Arc::new(snapshot)),
        leader: false.into(),
        connections: Admission::new(config.limits.max_connections, config.limits.per_peer()),
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
        Listening {
            listener,
            tls,
            limits: config.limits,
        },
        writes,
        stopped,
        signals,
        config.report_retention_s,
    ));
    tracing::info!(%addr, database = %redact(&config.database), tls = config.tls.is_some(), "listening");
    Ok(Running { addr, stop, done })
}

/// Makes sure the process may open `max_connections` sockets and its own files: raises the
/// soft limit on open files up to the hard one if needed, and refuses to start below it.
fn file_limit(max_connections: usize) -> Result<(), ServeError> {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let needed = max_connections as u64 + FD_RESERVE;
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current.is_none_or(|c| c >= needed) {
        return Ok(());
    }
    let raised = limit.maximum.map_or(needed, |m| m.min(needed));
    limit.current = Some(raised);
    let _ = setrlimit(Resource::Nofile, limit);
    match getrlimit(Resource::Nofile).current {
        Some(c) if c < needed => Err(ServeError::Io(format!(
            "limits.max_connections = {max_connections} needs {needed} open files, but this \
             process may open only {c} (ulimit -n; LimitNOFILE= in a systemd unit): raise that \
             limit or lower max_connections"
        ))),
        _ => Ok(()),
    }
}

fn limiter(config: &ServiceConfig) -> Option<DefaultKeyedRateLimiter<usize>> {
    let per_second = NonZeroU32::new(config.rate_limit.per_second)?;
    let burst = NonZeroU32::new(config.rate_limit.burst).unwrap_or(per_second);
    Some(RateLimiter::keyed(
        Quota::per_second(per_second).allow_burst(burst),
    ))
}

/// The bound socket, and how connections to it are served.
struct Listening {
    listener: std::net::TcpListener,
    tls: Option<RustlsConfig>,
    limits: Limits,
}

async fn run(
    shared: Arc<Shared>,
    listening: Listening,
    writes: mpsc::Receiver<WriteRequest>,
    mut stopped: watch::Receiver<bool>,
    signals: bool,
    retention_s: u64,
) -> Result<(), ServeError> {
    let writer = tokio::spawn(group_commit(shared.store.clone(), writes));
    let (cycle_stop, cycle_stopped) = watch::channel(false);
    let cycles = tokio::spawn(cycle_loop(shared.clone(), cycle_stopped, retention_s));
    let handle = Handle::new();
    let server = serve(shared.clone(), listening, handle.clone());
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

/// Serves the API on the socket, plain or TLS, with the connection limits.
async fn serve(shared: Arc<Shared>, l: Listening, handle: Handle) -> std::io::Result<()> {
    let app = router(shared.clone()).into_make_service();
    let header_timeout = Duration::from_secs_f64(l.limits.header_timeout_s);
    let guard = Guard {
        shared,
        first_request: header_timeout,
        idle: Duration::from_secs_f64(l.limits.idle_timeout_s),
    };
    match l.tls {
        Some(tls) => {
            let acceptor = RustlsAcceptor::new(tls).acceptor(guard);
            let mut server = axum_server::from_tcp(l.listener).acceptor(acceptor);
            http_timeouts(server.http_builder(), header_timeout);
            server.handle(handle).serve(app).await
        }
        None => {
            let mut server = axum_server::from_tcp(l.listener).acceptor(guard);
            http_timeouts(server.http_builder(), header_timeout);
            server.handle(handle).serve(app).await
        }
    }
}

/// HTTP/1 requests must bring their headers within `header_timeout`.
fn http_timeouts(builder: &mut Builder<TokioExecutor>, header_timeout: Duration) {
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    builder.http2().timer(TokioTimer::new());
}

/// Admits an accepted connection by the rules of [`crate::admission`] (else closes it at
/// once), and closes it when it brings no request by the header timeout or nothing was read
/// from or written to it for the idle timeout.
#[derive(Clone)]
struct Guard {
    shared: Arc<Shared>,
    first_request: Duration,
    idle: Duration,
}

impl<S: Send + 'static> Accept<TcpStream, S> for Guard {
    type Stream = Guarded;
    type Service = Marked<S>;
    type Future = std::future::Ready<std::io::Result<(Guarded, Marked<S>)>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let metrics = &self.shared.metrics;
        let admitted = stream
            .peer_addr()
            .map_err(|_| Refused::Full)
            .and_then(|peer| self.shared.connections.admit(peer));
        let ticket = match admitted {
            Ok((ticket, how)) => {
                if how == Admitted::Evicting {
                    metrics.connections_evicted.inc();
                    tracing::debug!("a connection without a token closed to make room");
                }
                ticket
            }
            Err(why) => {
                metrics.connections_refused.inc();
                tracing::debug!(?why, "a connection over the limits closed");
                return std::future::ready(Err(std::io::ErrorKind::ConnectionRefused.into()));
            }
        };
        let mark = ticket.mark().clone();
        let mut io = TimeoutStream::new(stream);
        io.set_read_timeout(Some(self.idle));
        io.set_write_timeout(Some(self.idle));
        let deadline = tokio::time::Instant::now() + self.first_request;
        std::future::ready(Ok((
            Guarded {
                io: Box::pin(io),
                watch: Watch::new(ticket, deadline),
            },
            Marked {
                inner: service,
                mark,
            },
        )))
    }
}

/// A connection's service: tells the connection's [`Mark`] that a request came, and hands the
/// mark to the request so that a valid token proves the connection.
#[derive(Clone)]
struct Marked<S> {
    inner: S,
    mark: Arc<Mark>,
}

impl<S: Service<Request<B>>, B> Service<Request<B>> for Marked<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        self.mark.requested();
        request.extensions_mut().insert(self.mark.clone());
        self.inner.call(request)
    }
}

/// A connection holding its place in the admission table until it closes.
struct Guarded {
    io: Pin<Box<TimeoutStream<TcpStream>>>,
    watch: Watch,
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Poll::Ready(closing) = self.watch.poll_closing(cx) {
            return Poll::Ready(Err(closing));
        }
        self.io.as_mut().poll_read(cx, buf)
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if let Poll::Ready(closing) = self.watch.poll_closing(cx) {
            return Poll::Ready(Err(closing));
        }
        self.io.as_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        if let Poll::Ready(closing) = self.watch.poll_closing(cx) {
            return Poll::Ready(Err(closing));
        }
        self.io.as_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if let Poll::Ready(closing) = self.watch.poll_closing(cx) {
            return Poll::Ready(Err(closing));
        }
        self.io.as_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.io.as_mut().poll_shutdown(cx)
    }
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

/// Every μ seconds the leader computes a cycle; between cycles, every [`CHECK_PERIOD`], each
/// replica checks its claim to lead (or tries to take it), and one that does not lead follows
/// the newest stored cycle.
async fn cycle_loop(shared: Arc<Shared>, mut stopped: watch::Receiver<bool>, retention_s: u64) {
    let period = Duration::from_secs_f64(shared.settings.heaviness.update_interval_s);
    let mut leadership = shared.store.leadership();
    let patience = period.clamp(Duration::from_secs(1), Duration::from_secs(10));
    let mut next_cycle = Instant::now() + period;
    let mut unreadable = None;
    loop {
        let leading = match &mut leadership {
            None => true,
            Some(l) => check_claim(&shared, l, patience).await,
        };
        shared.set_leader(leading);
        if leading && Instant::now() >= next_cycle {
            next_cycle = Instant::now() + period;
            one_cycle(&shared, leadership.as_mut(), retention_s).await;
        } else if !leading {
            follow(&shared, &mut unreadable).await;
        }
        let wake = match &leadership {
            None => next_cycle,
            Some(_) => next_cycle.min(Instant::now() + CHECK_PERIOD),
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

/// Checks (or tries to take) the claim to lead; while a check goes unanswered for longer than
/// [`UNCONFIRMED_AFTER`], this replica no longer says it leads.
async fn check_claim(shared: &Shared, l: &mut Leadership, patience: Duration) -> bool {
    let check = l.hold(patience);
    tokio::pin!(check);
    tokio::select! {
        leading = &mut check => leading,
        _ = tokio::time::sleep(UNCONFIRMED_AFTER) => {
            shared.set_leader(false);
            check.await
        }
    }
}

/// Computes and stores one cycle, and serves it; on PostgreSQL on the leader's own connection.
async fn one_cycle(shared: &Shared, leadership: Option<&mut Leadership>, retention_s: u64) {
    let mut pooled = None;
    let conn = match leadership {
        Some(l) => l.connection(),
        None => match shared.store.connection().await {
            Ok(c) => Some(&mut **pooled.insert(c)),
            Err(e) => {
                shared.metrics.cycle_errors.inc();
                tracing::error!(error = %Chain(&e), "cycle failed: no database connection");
                return;
            }
        },
    };
    let Some(conn) = conn else {
        return;
    };
    let settings = &shared.settings;
    let result = shared
        .store
        .run_cycle(
            conn,
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
            if let Err(e) = shared.store.checkpoint(conn).await {
                tracing::warn!(error = %Chain(&e), "the database log was not copied into its file");
            }
        }
        Ok(Err(e)) => {
            shared.metrics.cycle_errors.inc();
            tracing::error!(error = %Chain(&e), "cycle failed: the registry cannot be evaluated");
        }
        Err(e) => {
            shared.metrics.cycle_errors.inc();
            tracing::error!(error = %Chain(&e), "cycle failed");
        }
    }
}

/// Loads a newer cycle another replica computed; one it cannot read is reported once (`unreadable`
/// remembers it) and skipped until the leader computes the next.
async fn follow(shared: &Shared, unreadable: &mut Option<u64>) {
    let known = shared.snapshot().cycle;
    let latest = match shared.store.latest_cycle().await {
        Ok(latest) => latest,
        Err(e) => return tracing::warn!(error = %Chain(&e), "cannot read the latest cycle"),
    };
    if latest <= known || *unreadable == Some(latest) {
        return;
    }
    match shared.store.latest_snapshot().await {
        Ok(Some(snapshot)) => shared.set_snapshot(snapshot),
        Ok(None) => {}
        Err(StoreError::Corrupt(e)) => {
            *unreadable = Some(latest);
            tracing::error!(error = %e, "the latest stored cycle cannot be read; waiting for the next");
        }
        Err(e) => tracing::warn!(error = %Chain(&e), "cannot load the latest cycle"),
    }
}
