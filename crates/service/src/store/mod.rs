//! The daemon's durable state, in SQLite (embedded, WAL, every commit synced) or PostgreSQL
//! (several replicas, one of them computing at a time). One set of portable SQL serves both;
//! only the pragmas and the advisory lock are the backends' own.

use crate::cycle::{Id, Measured, Memory, NodeEntry, Registry, Snapshot, WorkloadEntry};
use crate::model::{
    NodeSpec, NodeStatus, UsageAck, UsageReport, UserSpec, WorkloadPriority, WorkloadSpec,
};
use fairshare_core::error::Chain;
use fairshare_core::heaviness::Resource;
use rayon::prelude::*;
use sqlx::any::AnyPoolOptions;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Row};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;

mod cycles;
mod leader;
mod migrations;
mod registry;
mod reports;

pub use leader::Leadership;
use migrations::apply_migrations;

/// The advisory lock key of the replica that computes priorities ("fairshar" in ASCII).
const LEADER_LOCK: i64 = 0x6661_6972_7368_6172;
/// The advisory lock key that serialises migrations between replicas starting together.
const MIGRATION_LOCK: i64 = LEADER_LOCK + 1;
/// The advisory lock key that orders user registrations, so that two concurrent ones cannot
/// both pass the every-user-or-none quota rule.
const USERS_LOCK: i64 = LEADER_LOCK + 2;
/// How many past cycles are kept besides the latest.
const CYCLES_KEPT: i64 = 2;
/// How many nodes' parts one statement writes.
const PARTS_PER_STATEMENT: usize = 200;
/// How long a request waits for a database connection before it is answered 503: during an
/// outage the answer comes this fast instead of after the connection's own retries.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(1);

/// Which database holds the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// One embedded file.
    Sqlite,
    /// A server, shared by replicas.
    Postgres,
}

/// What the store refuses or fails at.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database failed.
    #[error("database")]
    Database(#[from] sqlx::Error),
    /// The request names something that does not exist, or breaks a rule of the registry.
    #[error("{0}")]
    Invalid(String),
    /// The request contradicts what is stored.
    #[error("{0}")]
    Conflict(String),
    /// Stored data this version cannot read.
    #[error("stored data: {0}")]
    Corrupt(String),
    /// The thread that reads a cycle's reports could not run.
    #[error("the cycle's thread: {0}")]
    Thread(String),
    /// The database did not answer in time.
    #[error("the database did not answer within {0:?}")]
    Unanswered(Duration),
    /// The request acts for a node its token may not act for.
    #[error("{0}")]
    Forbidden(String),
    /// A number that is not finite was about to be stored.
    #[error("not stored: {0}")]
    NotFinite(String),
    /// Another daemon holds the SQLite file.
    #[error(
        "{path} is in use by another fairshare serve (it holds {path}.lock); one daemon serves \
         an SQLite file — stop the other, or use PostgreSQL to run several replicas"
    )]
    InUse {
        /// The database file.
        path: String,
    },
    /// The SQLite file's lock file could not be opened or locked.
    #[error("{path}.lock")]
    Lock {
        /// The database file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The database URL (its password left out) is not one this daemon knows.
    #[error("database {0:?}: expected sqlite:PATH or postgres://…")]
    Url(String),
}

/// A pool of connections to the state.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// On SQLite, the open lock file that keeps a second daemon off the database file.
    _lock: Option<Arc<std::fs::File>>,
    /// The registry as the last cycle read it, kept while its stored version stands.
    registry: Arc<Mutex<Option<ReadRegistry>>>,
    /// The cycle this store stored last, while no other replica may have stored one since.
    stored: Arc<Mutex<Option<Stored>>>,
}

/// A cycle as stored: what the next cycle starts from, and what it need not write again.
#[derive(Debug, Default)]
struct Stored {
    /// Its number.
    cycle: i64,
    /// What its workloads remembered.
    memory: Memory,
    /// Each node's part, as stored.
    parts: HashMap<Id, Part>,
}

/// One node's part of a cycle: its workloads' priorities and their memory, as stored JSON.
#[derive(Debug, PartialEq)]
struct Part {
    workloads: String,
    memory: String,
}

/// What a cycle computes from.
struct CycleInput {
    registry: Arc<Registry>,
    previous: Stored,
    reports: Vec<(f64, String)>,
    written: Written,
}

/// A registry read from the database, and what it was read under.
#[derive(Debug)]
struct ReadRegistry {
    /// The stored registry version it was read at.
    version: i64,
    /// The resources its specs were checked against.
    resources: Vec<Resource>,
    /// The registry.
    registry: Arc<Registry>,
}

/// The database file an `sqlite:` URL's path names (`None` for an in-memory database).
fn sqlite_file(path: &str) -> Option<&str> {
    let path = path.split('?').next().unwrap_or_default();
    let path = path.strip_prefix("//").unwrap_or(path);
    (!path.is_empty() && path != ":memory:").then_some(path)
}

/// The lock file of the SQLite database at `path`, beside the file the path resolves to, so
/// that two daemons reaching one database through different paths or links share one lock.
fn lock_path(path: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(path);
    let resolved = std::fs::canonicalize(path).ok().or_else(|| {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = std::fs::canonicalize(parent.unwrap_or(std::path::Path::new("."))).ok()?;
        Some(dir.join(path.file_name()?))
    });
    let mut lock = resolved
        .unwrap_or_else(|| path.to_path_buf())
        .into_os_string();
    lock.push(".lock");
    lock.into()
}

/// Takes the lock file beside an SQLite database for this process's life, refusing when another
/// daemon holds it (the kernel frees the lock when its holder exits, however it exits).
fn lock_sqlite(path: &str) -> Result<std::fs::File, StoreError> {
    let lock_error = |source| StoreError::Lock {
        path: path.to_string(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(path))
        .map_err(lock_error)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(file),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(StoreError::InUse {
            path: path.to_string(),
        }),
        Err(e) => Err(lock_error(e.into())),
    }
}

/// A database URL without its password (in the user part or as a `password=` parameter), for
/// logs and messages.
pub fn redact(url: &str) -> String {
    let mut out = url.to_string();
    if let (Some(scheme), Some(at)) = (out.find("://"), out.rfind('@')) {
        let user_part = out.get(scheme + 3..at).unwrap_or_default();
        if let Some(colon) = user_part.find(':') {
            out.replace_range(scheme + 3 + colon + 1..at, "…");
        }
    }
    if let Some(p) = out.find("password=") {
        let end = out[p..].find('&').map_or(out.len(), |e| p + e);
        out.replace_range(p + "password=".len()..end, "…");
    }
    out
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("API types always serialise")
}

/// Whether a cycle's answer holds only finite numbers; the first one that is not, named.
/// (serde_json writes NaN and infinity as `null`, which no later read accepts.)
fn check_finite(snapshot: &Snapshot, memory: &Memory) -> Result<(), StoreError> {
    let bad = |what: String| {
        Err(StoreError::NotFinite(format!(
            "cycle {}: {what}",
            snapshot.cycle
        )))
    };
    for (id, u) in &snapshot.users {
        let numbers = [
            u.entitlement,
            u.static_part,
            u.dynamic,
            u.unused_quota,
            u.heaviness,
        ];
        let all = numbers.iter().chain(&u.usage).chain(&u.endowment);
        if let Some(x) = all.copied().find(|x| !x.is_finite()) {
            return bad(format!("user {id:?} has {x}"));
        }
    }
    for w in &snapshot.workloads {
        if let Some(x) = [w.heaviness, w.priority_input]
            .into_iter()
            .find(|x| !x.is_finite())
        {
            return bad(format!("workload {:?} has {x}", w.workload));
        }
    }
    for (id, m) in memory {
        let smoothed = m.smoothed.iter().flatten().copied();
        let remembered = m.priority.iter().flat_map(|p| [p.target, p.smoothed]);
        if let Some(x) = smoothed.chain(remembered).find(|x| !x.is_finite()) {
            return bad(format!("workload {id:?} would remember {x}"));
        }
    }
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

impl Store {
    /// Connects (creating an SQLite file if needed) and brings the schema up to date.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let mut lock = None;
        let (backend, url) = if let Some(path) = url.strip_prefix("sqlite:") {
            lock = sqlite_file(path).map(lock_sqlite).transpose()?;
            let sep = if path.contains('?') { '&' } else { '?' };
            (Backend::Sqlite, format!("sqlite:{path}{sep}mode=rwc"))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_string())
        } else {
            return Err(StoreError::Url(redact(url)));
        };
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 8 } else { 16 })
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Postgres {
                        // Long texts (a node's part is about 4 KB) compressed by lz4 rather
                        // than pglz: a quarter less time storing a cycle at 10,000 nodes, a
                        // fifth less log. A server built without lz4 keeps its default.
                        let lz4 = conn.execute("SET default_toast_compression = 'lz4'").await;
                        if let Err(e) = lz4 {
                            tracing::debug!(error = %Chain(&e), "PostgreSQL's default compression kept");
                        }
                    }
                    if backend == Backend::Sqlite {
                        // A transaction keeps its dirty pages in memory until it commits
                        // (`cache_spill = OFF`): spilled to the log before the commit, a page
                        // dirtied again was written twice (a cycle at 10,000 nodes wrote
                        // 172 MB instead of 130; docs/benchmarks.md).
                        // The log is copied into the file after each cycle is served
                        // ([`Store::checkpoint`]), not when the cycle commits; the automatic
                        // checkpoint stays as a backstop at 64 MiB, past what a cycle writes at
                        // 10,000 nodes (46 MB), so that the cycle's commit does not run it.
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; \
                             PRAGMA cache_spill = OFF; PRAGMA wal_autocheckpoint = 16384;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect(&url)
            .await?;
        let store = Store {
            pool,
            backend,
            _lock: lock.map(Arc::new),
            registry: Arc::default(),
            stored: Arc::default(),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// A transaction that will write: on SQLite it takes the write lock at once, so it waits
    /// for another writer (busy timeout) instead of failing when it upgrades from reading.
    async fn write_tx(&self) -> Result<sqlx::Transaction<'static, Any>, StoreError> {
        Ok(match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        })
    }

    /// A write transaction holding a PostgreSQL transaction-level advisory lock until it ends;
    /// on SQLite, `BEGIN IMMEDIATE` already orders every writer.
    async fn locked_tx(&self, key: i64) -> Result<sqlx::Transaction<'static, Any>, StoreError> {
        let mut tx = self.write_tx().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx)
    }

    /// Closes every connection (SQLite checkpoints its WAL into the file).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Applies the migrations not applied yet, each in its own transaction.
    async fn migrate(&self) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *conn)
                .await?;
        }
        let result = apply_migrations(&mut conn).await;
        if self.backend == Backend::Postgres {
            let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *conn)
                .await;
            result?;
            unlocked?;
            return Ok(());
        }
        result
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// A connection of the pool, for the work of a cycle on SQLite (on PostgreSQL the cycle
    /// runs on the leader's own connection, see [`Leadership::connection`]).
    pub async fn connection(&self) -> Result<PoolConnection<Any>, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    /// A transaction that only reads, on a given connection: every statement in it sees the
    /// same state (on PostgreSQL, one snapshot for the whole transaction).
    async fn read_tx_on<'c>(
        &self,
        conn: &'c mut AnyConnection,
    ) -> Result<sqlx::Transaction<'c, Any>, StoreError> {
        Ok(match self.backend {
            Backend::Sqlite => conn.begin().await?,
            Backend::Postgres => {
                conn.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await?
            }
        })
    }

    /// A write transaction on a given connection (see [`Store::write_tx`]).
    async fn write_tx_on<'c>(
        &self,
        conn: &'c mut AnyConnection,
    ) -> Result<sqlx::Transaction<'c, Any>, StoreError> {
        Ok(match self.backend {
            Backend::Sqlite => conn.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => conn.begin().await?,
        })
    }
}

/// The knob values each workload's agent last reported in force: workload → (node, values as
/// stored JSON).
type Written = BTreeMap<String, (String, String)>;

/// How much lower than the request handlers' the priority of a cycle's background work is.
const BACKGROUND_NICE: i32 = 10;

/// Runs `work` on a thread of its own at a lower CPU priority (nice +10; Linux renices one
/// thread), so that requests keep being answered promptly while a cycle reads its reports.
async fn in_background<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, StoreError> {
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("fairshare-cycle".into())
        .spawn(move || {
            let me = rustix::thread::gettid();
            if let Err(e) = rustix::process::setpriority_process(Some(me), BACKGROUND_NICE) {
                tracing::debug!(error = %Chain(&e), "the cycle's thread keeps the daemon's priority");
            }
            let _ = done.send(work());
        })
        .map_err(|e| StoreError::Thread(e.to_string()))?;
    result
        .await
        .map_err(|_| StoreError::Thread("it stopped before answering".into()))
}

#[cfg(test)]
mod tests {
    use super::{lock_path, redact};

    /// Two paths to one database, one through a link, share one lock file.
    #[test]
    fn a_link_to_the_database_shares_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("fairshare.db");
        std::fs::write(&db, b"").unwrap();
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let lock = |p: &std::path::Path| lock_path(p.to_str().unwrap());
        assert_eq!(lock(&link), lock(&db));
        let fresh = dir.path().join("new.db");
        assert_eq!(lock(&fresh).file_name().unwrap(), "new.db.lock");
    }

    #[test]
    fn passwords_are_left_out_of_database_urls() {
        assert_eq!(
            redact("postgres://fs:s3cret@db/fairshare"),
            "postgres://fs:…@db/fairshare"
        );
        assert_eq!(
            redact("postgres://db/fairshare?user=fs&password=s3cret&sslmode=disable"),
            "postgres://db/fairshare?user=fs&password=…&sslmode=disable"
        );
        assert_eq!(redact("postgres://fs@db/x"), "postgres://fs@db/x");
        assert_eq!(redact("sqlite:/var/lib/a@b.db"), "sqlite:/var/lib/a@b.db");
        assert_eq!(redact("x@y://z"), "x@y://z");
    }
}
