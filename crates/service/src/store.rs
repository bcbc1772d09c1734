//! The daemon's durable state, in SQLite (embedded, WAL, every commit synced) or PostgreSQL
//! (several replicas, one of them computing at a time). One set of portable SQL serves both;
//! only the pragmas and the advisory lock are the backends' own.

use crate::cycle::{Id, Measured, Memory, NodeEntry, Registry, Snapshot, WorkloadEntry};
use crate::model::{
    NodeSpec, NodeStatus, UsageAck, UsageReport, UserSpec, WorkloadPriority, WorkloadSpec,
};
use fairshare_core::heaviness::Resource;
use rayon::prelude::*;
use sqlx::any::AnyPoolOptions;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Row};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;

/// The schema, one migration per version; a version once released never changes.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
    1,
    "registry, reports and cycles",
    "CREATE TABLE nodes (id TEXT PRIMARY KEY, spec TEXT NOT NULL, updated_ms BIGINT NOT NULL);
     CREATE TABLE users (id TEXT PRIMARY KEY, spec TEXT NOT NULL, has_quota BIGINT NOT NULL, updated_ms BIGINT NOT NULL);
     CREATE TABLE workloads (id TEXT PRIMARY KEY, owner TEXT NOT NULL REFERENCES users (id),
         node TEXT NOT NULL REFERENCES nodes (id), spec TEXT NOT NULL, updated_ms BIGINT NOT NULL);
     CREATE INDEX workloads_by_node ON workloads (node);
     CREATE INDEX workloads_by_owner ON workloads (owner);
     CREATE TABLE reports (node TEXT NOT NULL, seq BIGINT NOT NULL, interval_s DOUBLE PRECISION NOT NULL,
         samples TEXT NOT NULL, received_ms BIGINT NOT NULL, cycle BIGINT, PRIMARY KEY (node, seq));
     CREATE INDEX reports_by_cycle ON reports (cycle);
     CREATE TABLE pruned (node TEXT PRIMARY KEY, max_seq BIGINT NOT NULL);
     CREATE TABLE cycles (id BIGINT PRIMARY KEY, computed_ms BIGINT NOT NULL, seconds DOUBLE PRECISION NOT NULL,
         snapshot TEXT NOT NULL, memory TEXT NOT NULL);",
    ),
    (
        2,
        "which cycle counted each report, in a narrow table of its own",
        // A cycle marks the reports it counts; marking them in `reports` rewrote every
        // report's samples (SQLite rewrites a whole row), holding the write lock that long.
        "CREATE TABLE report_cycles (node TEXT NOT NULL, seq BIGINT NOT NULL, cycle BIGINT,
             PRIMARY KEY (node, seq));
         CREATE INDEX report_cycles_by_cycle ON report_cycles (cycle);
         INSERT INTO report_cycles (node, seq, cycle) SELECT node, seq, cycle FROM reports;
         DROP INDEX reports_by_cycle;
         ALTER TABLE reports DROP COLUMN cycle;
         CREATE INDEX reports_by_received ON reports (received_ms);",
    ),
    (
        3,
        "the knob values each workload's agent last reported in force",
        "CREATE TABLE knobs_written (workload TEXT PRIMARY KEY, node TEXT NOT NULL,
             seq BIGINT NOT NULL, knobs TEXT NOT NULL);
         CREATE INDEX knobs_written_by_node ON knobs_written (node);",
    ),
    (
        4,
        "a version of the registry, bumped by every write to it",
        // A cycle re-reads the registry only when this moved: at 100,000 workloads reading
        // and checking it took a third of a cycle.
        "CREATE TABLE registry_version (id BIGINT PRIMARY KEY, version BIGINT NOT NULL);
         INSERT INTO registry_version (id, version) VALUES (1, 0);",
    ),
    (
        5,
        "the latest cycle's workloads and memory kept by node, rewritten only when they change",
        // One document per cycle rewrote all of it (43 MB at 100,000 workloads) however little
        // changed; a row per workload was slower to write. A node's workloads report together,
        // so a node's part is what changes together. A cycle's own row keeps the rest.
        "CREATE TABLE node_parts (node TEXT PRIMARY KEY, cycle BIGINT NOT NULL,
             workloads TEXT NOT NULL, memory TEXT NOT NULL);",
    ),
];

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
pub enum StoreError {
    /// The database failed.
    #[error("database: {0}")]
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
    #[error("{path}.lock: {source}")]
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
                            tracing::debug!(error = %e, "PostgreSQL's default compression kept");
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

    /// Registers or updates a node.
    pub async fn put_node(&self, id: &str, spec: &NodeSpec) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO nodes (id, spec, updated_ms) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, updated_ms = excluded.updated_ms",
        )
        .bind(id)
        .bind(json(spec))
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        registry_changed(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds a user without a quota if absent (what an agent may do); an existing user is left
    /// as it is.
    pub async fn add_user(&self, id: &str) -> Result<(), StoreError> {
        self.write_user(id, &UserSpec::default(), false).await
    }

    /// Registers or updates a user; refuses to mix users with and without a quota.
    pub async fn put_user(&self, id: &str, spec: &UserSpec) -> Result<(), StoreError> {
        self.write_user(id, spec, true).await
    }

    /// Writes a user, replacing one already there or leaving it, under the users' lock.
    async fn write_user(&self, id: &str, spec: &UserSpec, replace: bool) -> Result<(), StoreError> {
        let has_quota = i64::from(spec.quota.is_some());
        let mut tx = self.locked_tx(USERS_LOCK).await?;
        if !replace {
            let found = sqlx::query("SELECT 1 FROM users WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            if found.is_some() {
                return Ok(());
            }
        }
        let other = sqlx::query("SELECT id FROM users WHERE has_quota <> $1 AND id <> $2 LIMIT 1")
            .bind(has_quota)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = other {
            let other: String = row.try_get(0)?;
            let (with, without) = if has_quota == 1 {
                ("", "out")
            } else {
                ("out", "")
            };
            return Err(StoreError::Conflict(format!(
                "user {id:?} would be with{with} a quota while user {other:?} is with{without} one; \
                 either every user has a quota or none has"
            )));
        }
        sqlx::query(
            "INSERT INTO users (id, spec, has_quota, updated_ms) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, has_quota = excluded.has_quota,
             updated_ms = excluded.updated_ms",
        )
        .bind(id)
        .bind(json(spec))
        .bind(has_quota)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        registry_changed(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Registers, moves or resizes a workload; its owner and node must be registered, and
    /// `may_act_for` must allow its node and, for a workload already registered, its old node.
    pub async fn put_workload(
        &self,
        id: &str,
        spec: &WorkloadSpec,
        may_act_for: impl Fn(&str) -> Result<(), String>,
    ) -> Result<(), StoreError> {
        may_act_for(&spec.node).map_err(StoreError::Forbidden)?;
        let mut tx = self.write_tx().await?;
        if let Some(old) = workload_node(&mut tx, id).await? {
            may_act_for(&old).map_err(StoreError::Forbidden)?;
        }
        for (table, what, key) in [
            ("users", "owner", &spec.owner),
            ("nodes", "node", &spec.node),
        ] {
            let found = sqlx::query(&format!("SELECT 1 FROM {table} WHERE id = $1"))
                .bind(key)
                .fetch_optional(&mut *tx)
                .await?;
            if found.is_none() {
                return Err(StoreError::Invalid(format!(
                    "{what} {key:?} is not registered; PUT /v1/{table}/{key} first"
                )));
            }
        }
        sqlx::query(
            "INSERT INTO workloads (id, owner, node, spec, updated_ms) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, node = excluded.node,
             spec = excluded.spec, updated_ms = excluded.updated_ms",
        )
        .bind(id)
        .bind(&spec.owner)
        .bind(&spec.node)
        .bind(json(spec))
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        registry_changed(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Removes a workload if `may_act_for` allows its node; whether it existed.
    pub async fn delete_workload(
        &self,
        id: &str,
        may_act_for: impl Fn(&str) -> Result<(), String>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let Some(node) = workload_node(&mut tx, id).await? else {
            return Ok(false);
        };
        may_act_for(&node).map_err(StoreError::Forbidden)?;
        for sql in [
            "DELETE FROM workloads WHERE id = $1",
            "DELETE FROM knobs_written WHERE workload = $1",
        ] {
            sqlx::query(sql).bind(id).execute(&mut *tx).await?;
        }
        registry_changed(&mut tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Removes a node and every workload on it; whether it existed. Its reports stay (until
    /// their retention ends), so a node registered again under its id goes on numbering.
    pub async fn delete_node(&self, id: &str) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        for table in ["workloads", "knobs_written"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE node = $1"))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        let done = sqlx::query("DELETE FROM nodes WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        registry_changed(&mut tx).await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    /// Whether a user is registered.
    pub async fn user_exists(&self, id: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 FROM users WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Checks a report against the registry: its node exists, every sample names a workload
    /// registered on it, and no rate exceeds the node's supply absurdly.
    pub async fn check_report(
        &self,
        report: &UsageReport,
        rates: &[Vec<f64>],
        resources: &[Resource],
    ) -> Result<(), StoreError> {
        let node = sqlx::query("SELECT spec FROM nodes WHERE id = $1")
            .bind(&report.node)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| {
                StoreError::Invalid(format!("node {:?} is not registered", report.node))
            })?;
        let spec: NodeSpec = parse("node", &node.try_get::<String, _>(0)?)?;
        let supply = spec.check(resources).map_err(StoreError::Corrupt)?;
        let rows = sqlx::query("SELECT id FROM workloads WHERE node = $1")
            .bind(&report.node)
            .fetch_all(&self.pool)
            .await?;
        let here: HashSet<String> = rows
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        for (i, (sample, rate)) in report.samples.iter().zip(rates).enumerate() {
            if !here.contains(&sample.workload) {
                return Err(StoreError::Invalid(format!(
                    "samples[{i}]: workload {:?} is not registered on node {:?}",
                    sample.workload, report.node
                )));
            }
            let limit = crate::model::ABSURD_FACTOR;
            if let Some(r) = (0..supply.len()).find(|&r| rate[r] > limit * supply[r]) {
                return Err(StoreError::Invalid(format!(
                    "samples[{i}].usage.{}: {} per second is more than {limit} times the node's supply of {}",
                    resources[r].name, rate[r], supply[r]
                )));
            }
        }
        if let Some(w) = report
            .written
            .iter()
            .flat_map(|w| w.keys())
            .find(|w| !here.contains(*w))
        {
            return Err(StoreError::Invalid(format!(
                "written[{w:?}]: workload {w:?} is not registered on node {:?}",
                report.node
            )));
        }
        Ok(())
    }

    /// Stores checked reports in one transaction (one sync for all of them): a report whose
    /// (node, seq) is stored already is acknowledged as a duplicate if it is the same, and
    /// refused if it differs; the knob values written of each report stored anew are kept as
    /// its workloads' latest.
    pub async fn store_reports(
        &self,
        reports: &[UsageReport],
    ) -> Result<Vec<Result<UsageAck, StoreError>>, StoreError> {
        let mut tx = self.write_tx().await?;
        let mut answers = Vec::with_capacity(reports.len());
        let now = now_ms();
        for report in reports {
            answers.push(store_report(&mut tx, report, now).await?);
        }
        forget_retries_of_forgotten(&mut tx, reports, &mut answers).await?;
        for (report, answer) in reports.iter().zip(&answers) {
            if matches!(answer, Ok(ack) if !ack.duplicate) {
                store_written(&mut tx, report).await?;
            }
        }
        tx.commit().await?;
        Ok(answers)
    }

    /// The latest cycle's number (0 before the first).
    pub async fn latest_cycle(&self) -> Result<u64, StoreError> {
        let row = sqlx::query("SELECT id FROM cycles ORDER BY id DESC LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(r) => r.try_get::<i64, _>(0)? as u64,
            None => 0,
        })
    }

    /// The latest cycle's snapshot, if there was a cycle: its own row and every node's part,
    /// read together. A stored snapshot this version cannot read is `Corrupt`: the caller
    /// reports it, and the next cycle computes a new one.
    pub async fn latest_snapshot(&self) -> Result<Option<Snapshot>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let mut tx = self.read_tx_on(&mut conn).await?;
        let row = sqlx::query("SELECT id, snapshot FROM cycles ORDER BY id DESC LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let id: i64 = row.try_get(0)?;
        let what = format!("cycle {id}'s snapshot");
        let mut snapshot: Snapshot = parse(&what, &row.try_get::<String, _>(1)?)?;
        let parts = sqlx::query("SELECT workloads FROM node_parts")
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        for part in parts {
            let workloads: Vec<WorkloadPriority> = parse(&what, &part.try_get::<String, _>(0)?)?;
            snapshot.workloads.extend(workloads);
        }
        snapshot
            .workloads
            .sort_unstable_by(|a, b| a.workload.cmp(&b.workload));
        Ok(Some(snapshot))
    }

    /// Every node with its latest report.
    pub async fn nodes(&self) -> Result<Vec<NodeStatus>, StoreError> {
        let rows = sqlx::query(
            "SELECT n.id, n.spec,
                (SELECT COUNT(*) FROM workloads w WHERE w.node = n.id),
                COALESCE((SELECT MAX(seq) FROM reports r WHERE r.node = n.id),
                         (SELECT max_seq FROM pruned p WHERE p.node = n.id)),
                (SELECT MAX(received_ms) FROM reports r WHERE r.node = n.id)
             FROM nodes n ORDER BY n.id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let spec: NodeSpec = parse("node", &row.try_get::<String, _>(1)?)?;
                Ok(NodeStatus {
                    node: row.try_get(0)?,
                    supply: spec.supply,
                    speed: spec.speed,
                    workloads: row.try_get::<i64, _>(2)? as u64,
                    last_seq: row.try_get::<Option<i64>, _>(3)?.map(|s| s as u64),
                    last_report_ms: row.try_get(4)?,
                })
            })
            .collect()
    }

    /// A connection of the pool, for the work of a cycle on SQLite (on PostgreSQL the cycle
    /// runs on the leader's own connection, see [`Leadership::connection`]).
    pub async fn connection(&self) -> Result<PoolConnection<Any>, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    /// Runs one cycle on `conn` without holding the write lock while it reads and computes:
    /// it marks the reports not counted yet as this cycle's (one short statement on a narrow
    /// table), reads them, the registry and the previous memory, computes with `compute` (which
    /// also says how long it took, and gives one memory per snapshot workload, in the same
    /// order), gives each workload the knob values last reported in force for it, and stores
    /// the snapshot and memory in one short transaction, rewriting only the nodes' parts that
    /// changed — all of a cycle or none: reports marked by a cycle that never stored are
    /// counted by the next attempt, which has the same number. A previous memory that cannot
    /// be read is reported and the cycle starts afresh; a result with a number that is not
    /// finite is not stored. Then it forgets old cycles and old counted reports.
    pub async fn run_cycle<E>(
        &self,
        conn: &mut AnyConnection,
        resources: &[Resource],
        retention_ms: i64,
        compute: impl FnOnce(u64, &Registry, &Memory, &Measured) -> Result<(Snapshot, Memory, f64), E>,
    ) -> Result<Result<(Snapshot, f64), E>, StoreError> {
        let last: Option<i64> = sqlx::query("SELECT MAX(id) FROM cycles")
            .fetch_one(&mut *conn)
            .await?
            .try_get(0)?;
        let cycle = last.unwrap_or(0) + 1;
        sqlx::query("UPDATE report_cycles SET cycle = $1 WHERE cycle IS NULL")
            .bind(cycle)
            .execute(&mut *conn)
            .await?;
        let input = self.read_cycle_input(conn, last, resources).await?;
        let (reports, resources_owned) = (input.reports, resources.to_vec());
        let measured = in_background(move || measure(&reports, &resources_owned)).await??;
        let previous = input.previous;
        let (mut snapshot, memory, seconds) =
            match compute(cycle as u64, &input.registry, &previous.memory, &measured) {
                Ok(done) => done,
                Err(e) => return Ok(Err(e)),
            };
        attach_written(&mut snapshot, &input.written);
        check_finite(&snapshot, &memory)?;
        let parts = node_parts(&snapshot, &memory)?;
        self.store_cycle(conn, &mut snapshot, &parts, &previous.parts, seconds)
            .await?;
        *self.stored.lock().expect("stored cycle") = Some(Stored {
            cycle,
            memory,
            parts,
        });
        self.prune(conn, snapshot.computed_at_ms - retention_ms)
            .await?;
        Ok(Ok((snapshot, seconds)))
    }

    /// What a cycle computes from, read in one read transaction (a consistent view, no write
    /// lock): the registry, the previous cycle (kept from storing it when this store did and
    /// nothing was stored since, read otherwise), the interval and samples of each report
    /// marked as this cycle's, and the knob values the agents last reported in force.
    async fn read_cycle_input(
        &self,
        conn: &mut AnyConnection,
        last: Option<i64>,
        resources: &[Resource],
    ) -> Result<CycleInput, StoreError> {
        let mut tx = self.read_tx_on(conn).await?;
        // Taken, not copied: a cycle that fails from here on reads the previous one again.
        let kept = self.stored.lock().expect("stored cycle").take();
        let previous = match kept.filter(|kept| Some(kept.cycle) == last) {
            Some(kept) => kept,
            None => stored_cycle(&mut tx, last).await?,
        };
        let cycle = last.unwrap_or(0) + 1;
        let rows = sqlx::query(
            "SELECT r.interval_s, r.samples FROM report_cycles c
             JOIN reports r ON r.node = c.node AND r.seq = c.seq WHERE c.cycle = $1",
        )
        .bind(cycle)
        .fetch_all(&mut *tx)
        .await?;
        let reports = rows
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()?;
        let registry = self.current_registry(&mut tx, resources).await?;
        let written = sqlx::query("SELECT workload, node, knobs FROM knobs_written")
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get(0)?, (r.try_get(1)?, r.try_get(2)?))))
            .collect::<Result<_, sqlx::Error>>()?;
        tx.commit().await?;
        Ok(CycleInput {
            registry,
            previous,
            reports,
            written,
        })
    }

    /// The registry as `tx` sees it: the one read last if the stored version has not moved
    /// since and the resources are the same, read afresh otherwise.
    async fn current_registry(
        &self,
        tx: &mut sqlx::Transaction<'_, Any>,
        resources: &[Resource],
    ) -> Result<Arc<Registry>, StoreError> {
        let version: i64 = sqlx::query("SELECT version FROM registry_version WHERE id = 1")
            .fetch_one(&mut **tx)
            .await?
            .try_get(0)?;
        if let Some(read) = self.registry.lock().expect("registry cache").as_ref() {
            if read.version == version && read.resources == resources {
                return Ok(Arc::clone(&read.registry));
            }
        }
        let registry = Arc::new(read_registry(tx, resources).await?);
        *self.registry.lock().expect("registry cache") = Some(ReadRegistry {
            version,
            resources: resources.to_vec(),
            registry: Arc::clone(&registry),
        });
        Ok(registry)
    }

    /// Stores a cycle in one short write transaction: its own row (the snapshot without its
    /// workloads), the nodes' parts that differ from `before` (the parts as stored), the parts
    /// of nodes gone; and forgets the cycles before the ones kept.
    async fn store_cycle(
        &self,
        conn: &mut AnyConnection,
        snapshot: &mut Snapshot,
        parts: &HashMap<Id, Part>,
        before: &HashMap<Id, Part>,
        seconds: f64,
    ) -> Result<(), StoreError> {
        let workloads = std::mem::take(&mut snapshot.workloads);
        let head = json(snapshot);
        snapshot.workloads = workloads;
        let cycle = snapshot.cycle as i64;
        let changed: Vec<_> = parts
            .iter()
            .filter(|(node, part)| before.get(*node) != Some(part))
            .collect();
        let gone: Vec<_> = before.keys().filter(|n| !parts.contains_key(*n)).collect();
        let mut tx = self.write_tx_on(conn).await?;
        sqlx::query(
            "INSERT INTO cycles (id, computed_ms, seconds, snapshot, memory) VALUES ($1, $2, $3, $4, '[]')",
        )
        .bind(cycle)
        .bind(snapshot.computed_at_ms)
        .bind(seconds)
        .bind(head)
        .execute(&mut *tx)
        .await?;
        for batch in changed.chunks(PARTS_PER_STATEMENT) {
            let statement = upsert_parts(batch.len(), self.backend);
            let mut query = sqlx::query(&statement);
            for (node, part) in batch {
                query = query
                    .bind(&***node)
                    .bind(cycle)
                    .bind(&part.workloads)
                    .bind(&part.memory);
            }
            query.execute(&mut *tx).await?;
        }
        for node in gone {
            sqlx::query("DELETE FROM node_parts WHERE node = $1")
                .bind(&**node)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("DELETE FROM cycles WHERE id < $1")
            .bind(cycle - CYCLES_KEPT)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Copies what the SQLite log holds into the database file, without waiting for readers
    /// or blocking writers (nothing to do on PostgreSQL). The leader runs it once a cycle is
    /// served, so the cycle's pages reach the file off the cycle's path.
    pub async fn checkpoint(&self, conn: &mut AnyConnection) -> Result<(), StoreError> {
        if self.backend == Backend::Sqlite {
            sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .fetch_all(&mut *conn)
                .await?;
        }
        Ok(())
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

    /// Forgets counted reports received before `before_ms`, remembering per node the highest
    /// number forgotten so that a late retry of one is still recognised.
    async fn prune(&self, conn: &mut AnyConnection, before_ms: i64) -> Result<(), StoreError> {
        // Only counted reports are forgotten: old uncounted ones must not take the write lock
        // every cycle for nothing. The old reports are walked from the oldest, in the index on
        // `received_ms`: the first is nearly always counted, and with none old the walk is
        // empty. Asked as a plain join, PostgreSQL (its statistics behind a table growing by
        // 10,000 rows a cycle) walked every counted report to find that none was old: 35 ms
        // with 10,000 of them, 74 ms with 20,000, and on.
        let old = sqlx::query(
            "SELECT 1 FROM reports r WHERE r.received_ms < $1 AND EXISTS (SELECT 1 FROM
             report_cycles c WHERE c.node = r.node AND c.seq = r.seq AND c.cycle IS NOT NULL)
             ORDER BY r.received_ms LIMIT 1",
        )
        .bind(before_ms)
        .fetch_optional(&mut *conn)
        .await?;
        if old.is_none() {
            return Ok(());
        }
        let mut tx = self.write_tx_on(conn).await?;
        prune_reports(&mut tx, before_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A claim to compute priorities, on a connection of its own (opened at the first attempt);
    /// `None` on SQLite, where the one daemon always computes.
    pub fn leadership(&self) -> Option<Leadership> {
        (self.backend == Backend::Postgres).then(|| Leadership {
            conn: None,
            held: false,
            pool: self.pool.clone(),
        })
    }
}

/// A replica's claim to compute priorities: a PostgreSQL session advisory lock, released by the
/// server when the replica's connection ends, however it ends.
#[derive(Debug)]
pub struct Leadership {
    conn: Option<AnyConnection>,
    held: bool,
    pool: AnyPool,
}

impl Leadership {
    /// Tries to take, or checks it still holds, the lock, waiting at most `patience`; whether
    /// this replica leads now. A connection that does not answer in time is dropped, and with
    /// it the claim: better no leader for a cycle than two.
    pub async fn hold(&mut self, patience: Duration) -> bool {
        match tokio::time::timeout(patience, self.try_hold()).await {
            Ok(Ok(held)) => self.held = held,
            Ok(Err(e)) => self.lose(&e.to_string()),
            Err(_) => self.lose("no answer in time"),
        }
        self.held
    }

    fn lose(&mut self, why: &str) {
        tracing::warn!(
            why,
            "leadership connection dropped; reconnecting at the next attempt"
        );
        self.conn = None;
        self.held = false;
    }

    async fn try_hold(&mut self) -> Result<bool, StoreError> {
        if self.conn.is_none() {
            self.conn = Some(self.pool.acquire().await?.detach());
        }
        let conn = self.conn.as_mut().expect("connected above");
        if self.held {
            conn.ping().await?;
            return Ok(true);
        }
        let row = sqlx::query("SELECT pg_try_advisory_lock($1)")
            .bind(LEADER_LOCK)
            .fetch_one(&mut *conn)
            .await?;
        Ok(row.try_get::<bool, _>(0)?)
    }

    /// The connection holding the lock, while it is held: a cycle's work runs on it, so that
    /// a replica whose claim is gone (its session ended) cannot store a cycle.
    pub fn connection(&mut self) -> Option<&mut AnyConnection> {
        self.conn.as_mut().filter(|_| self.held)
    }

    /// Lets another replica lead.
    pub async fn release(mut self) {
        if let Some(conn) = self.conn.take() {
            let _closed = conn.close().await;
        }
    }
}

async fn apply_migrations(conn: &mut PoolConnection<Any>) -> Result<(), StoreError> {
    conn.execute(
        "CREATE TABLE IF NOT EXISTS fairshare_migrations \
         (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_ms BIGINT NOT NULL)",
    )
    .await?;
    let applied: HashSet<i64> = sqlx::query("SELECT version FROM fairshare_migrations")
        .fetch_all(&mut **conn)
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    let newest = MIGRATIONS.last().map_or(0, |m| m.0);
    if let Some(&v) = applied.iter().find(|&&v| v > newest) {
        return Err(StoreError::Corrupt(format!(
            "the database has schema version {v}, newer than this fairshare knows ({newest}); \
             run a newer fairshare"
        )));
    }
    for &(version, name, sql) in MIGRATIONS.iter().filter(|m| !applied.contains(&m.0)) {
        let mut tx = conn.begin().await?;
        sqlx::raw_sql(sql).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO fairshare_migrations (version, name, applied_ms) VALUES ($1, $2, $3)",
        )
        .bind(version)
        .bind(name)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        tracing::info!(version, name, "database migrated");
    }
    Ok(())
}

async fn store_report(
    tx: &mut sqlx::Transaction<'_, Any>,
    report: &UsageReport,
    now: i64,
) -> Result<Result<UsageAck, StoreError>, StoreError> {
    let ack = |duplicate| {
        Ok(UsageAck {
            node: report.node.clone(),
            seq: report.seq,
            duplicate,
        })
    };
    let seq = report.seq as i64;
    let samples = json(&report.samples);
    let inserted = sqlx::query(
        "INSERT INTO reports (node, seq, interval_s, samples, received_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (node, seq) DO NOTHING",
    )
    .bind(&report.node)
    .bind(seq)
    .bind(report.interval_s)
    .bind(&samples)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    if inserted.rows_affected() == 1 {
        sqlx::query("INSERT INTO report_cycles (node, seq) VALUES ($1, $2)")
            .bind(&report.node)
            .bind(seq)
            .execute(&mut **tx)
            .await?;
        return Ok(ack(false));
    }
    let stored =
        sqlx::query("SELECT interval_s, samples FROM reports WHERE node = $1 AND seq = $2")
            .bind(&report.node)
            .bind(seq)
            .fetch_one(&mut **tx)
            .await?;
    let same = stored.try_get::<f64, _>(0)? == report.interval_s
        && stored.try_get::<String, _>(1)? == samples;
    Ok(if same {
        ack(true)
    } else {
        Err(StoreError::Conflict(format!(
            "node {:?} already reported seq {} with different contents; a retry must resend the same report",
            report.node, report.seq
        )))
    })
}

/// How many workloads' knob values one statement stores.
const WRITTEN_PER_STATEMENT: usize = 100;

/// Stores the knob values a report stored anew says are in force, a few workloads per
/// statement. A workload's values are replaced by those of a later report of its node, or of any
/// report from another node (it moved); unchanged values are not written again.
async fn store_written(
    tx: &mut sqlx::Transaction<'_, Any>,
    report: &UsageReport,
) -> Result<(), StoreError> {
    let rows: Vec<_> = report.written.iter().flatten().collect();
    for chunk in rows.chunks(WRITTEN_PER_STATEMENT) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                format!(
                    "(${}, ${}, ${}, ${})",
                    4 * i + 1,
                    4 * i + 2,
                    4 * i + 3,
                    4 * i + 4
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO knobs_written (workload, node, seq, knobs) VALUES {}
             ON CONFLICT (workload) DO UPDATE SET node = excluded.node, seq = excluded.seq,
             knobs = excluded.knobs WHERE knobs_written.node <> excluded.node
             OR (knobs_written.seq < excluded.seq AND knobs_written.knobs <> excluded.knobs)",
            values.join(", ")
        );
        let mut query = sqlx::query(&sql);
        for (workload, knobs) in chunk {
            query = query
                .bind(workload.as_str())
                .bind(report.node.as_str())
                .bind(report.seq as i64)
                .bind(json(knobs));
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Takes back the reports of a group that were stored anew although their first copy was
/// counted and forgotten (numbered at or below their node's watermark): they are retries, and
/// are acknowledged as duplicates. The watermarks are read after the inserts, which wait for a
/// cycle forgetting a first copy to commit, so they already cover it.
async fn forget_retries_of_forgotten(
    tx: &mut sqlx::Transaction<'_, Any>,
    reports: &[UsageReport],
    answers: &mut [Result<UsageAck, StoreError>],
) -> Result<(), StoreError> {
    let stored_anew = |a: &Result<UsageAck, StoreError>| matches!(a, Ok(ack) if !ack.duplicate);
    if !answers.iter().any(stored_anew) {
        return Ok(());
    }
    let marks: BTreeMap<String, i64> = sqlx::query("SELECT node, max_seq FROM pruned")
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    for (report, answer) in reports.iter().zip(answers) {
        let forgotten = marks
            .get(&report.node)
            .is_some_and(|&mark| report.seq as i64 <= mark);
        if let (true, Ok(ack)) = (forgotten, answer) {
            if !ack.duplicate {
                for table in ["reports", "report_cycles"] {
                    sqlx::query(&format!("DELETE FROM {table} WHERE node = $1 AND seq = $2"))
                        .bind(&report.node)
                        .bind(report.seq as i64)
                        .execute(&mut **tx)
                        .await?;
                }
                ack.duplicate = true;
            }
        }
    }
    Ok(())
}

/// Says, within a transaction that writes to the registry, that the registry changed: a
/// cycle that sees the new version reads it again.
async fn registry_changed(tx: &mut sqlx::Transaction<'_, Any>) -> Result<(), StoreError> {
    sqlx::query("UPDATE registry_version SET version = version + 1 WHERE id = 1")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Reads every node, user and workload and checks each spec under `resources`.
async fn read_registry(
    tx: &mut sqlx::Transaction<'_, Any>,
    resources: &[Resource],
) -> Result<Registry, StoreError> {
    let mut registry = Registry::default();
    for (id, spec, supply) in
        registered(tx, "nodes", "node", |s: &NodeSpec| s.check(resources)).await?
    {
        let speed = spec.speed;
        registry
            .nodes
            .insert(id.into(), NodeEntry { supply, speed });
    }
    for (id, _, quota) in registered(tx, "users", "user", |s: &UserSpec| s.check(resources)).await?
    {
        registry.users.insert(id.into(), quota);
    }
    let workloads = registered(tx, "workloads", "workload", |s: &WorkloadSpec| {
        s.check(resources)
    });
    for (id, spec, size) in workloads.await? {
        let missing = |what: &str, key: &str| {
            StoreError::Corrupt(format!("workload {id:?}: {what} {key:?} is not registered"))
        };
        let owner =
            shared_id(&registry.users, &spec.owner).ok_or_else(|| missing("owner", &spec.owner))?;
        let node =
            shared_id(&registry.nodes, &spec.node).ok_or_else(|| missing("node", &spec.node))?;
        registry
            .workloads
            .insert(id.into(), WorkloadEntry { owner, node, size });
    }
    Ok(registry)
}

/// Every row of a registry table: its id, its stored spec, and what `check` makes of the spec
/// under this configuration; a spec it refuses is named, with the way to mend it.
async fn registered<S: serde::de::DeserializeOwned, T>(
    tx: &mut sqlx::Transaction<'_, Any>,
    table: &str,
    what: &str,
    check: impl Fn(&S) -> Result<T, String>,
) -> Result<Vec<(String, S, T)>, StoreError> {
    let rows = sqlx::query(&format!("SELECT id, spec FROM {table}"))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter()
        .map(|row| {
            let id: String = row.try_get(0)?;
            let spec: S = parse(what, &row.try_get::<String, _>(1)?)?;
            let checked = check(&spec)
                .map_err(|e| StoreError::Corrupt(format!("{what} {id:?}: {e}; PUT it again")))?;
            Ok((id, spec, checked))
        })
        .collect()
}

/// The registry's own copy of an id, so workloads share their owner's and node's.
fn shared_id<V>(map: &BTreeMap<crate::cycle::Id, V>, key: &str) -> Option<crate::cycle::Id> {
    map.get_key_value(key).map(|(k, _)| k.clone())
}

/// The knob values each workload's agent last reported in force: workload → (node, values as
/// stored JSON).
type Written = BTreeMap<String, (String, String)>;

/// Gives each workload of a cycle's answer the knob values last reported in force for it, when
/// they came from the node it is on; values that cannot be read are said and left out.
fn attach_written(snapshot: &mut Snapshot, written: &Written) {
    for w in &mut snapshot.workloads {
        let Some((node, knobs)) = written.get(&*w.workload) else {
            continue;
        };
        if **node != *w.node {
            continue;
        }
        match serde_json::from_str(knobs) {
            Ok(knobs) => w.written = Some(knobs),
            Err(e) => {
                tracing::warn!(workload = %w.workload, error = %e, "stored knob values cannot be read; left out")
            }
        }
    }
}

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
                tracing::debug!(error = %e, "the cycle's thread keeps the daemon's priority");
            }
            let _ = done.send(work());
        })
        .map_err(|e| StoreError::Thread(e.to_string()))?;
    result
        .await
        .map_err(|_| StoreError::Thread("it stopped before answering".into()))
}

/// Adds up the samples of the reports a cycle counts, each given as its interval and its
/// stored samples (CPU work: run it off the async threads). Samples are read in place, without
/// copying ids or building a map per sample: a cycle may count millions.
fn measure(reports: &[(f64, String)], resources: &[Resource]) -> Result<Measured, StoreError> {
    let mut measured = Measured::default();
    let mut rates = vec![0.0; resources.len()];
    for (interval_s, samples) in reports {
        let samples: Vec<StoredSample> = serde_json::from_str(samples)
            .map_err(|e| StoreError::Corrupt(format!("report samples: {e}")))?;
        for sample in &samples {
            for (rate, r) in rates.iter_mut().zip(resources) {
                // A resource the sample lacks counts as 0: it was stored under an older list.
                let amount = sample.usage.0.iter().find(|(name, _)| *name == r.name);
                *rate = crate::model::rate(r.kind, amount.map_or(0.0, |a| a.1), *interval_s);
            }
            measured.add(sample.workload, &rates, *interval_s);
        }
    }
    Ok(measured)
}

/// A stored sample, read in place (ids are plain characters, never escaped in JSON).
#[derive(serde::Deserialize)]
struct StoredSample<'a> {
    workload: &'a str,
    #[serde(borrow)]
    usage: Amounts<'a>,
}

/// A sample's amounts by resource name, in the order stored.
struct Amounts<'a>(Vec<(&'a str, f64)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Amounts<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PairsVisitor)
    }
}

/// Reads an object into [`Amounts`].
struct PairsVisitor;

impl<'de> serde::de::Visitor<'de> for PairsVisitor {
    type Value = Amounts<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of amounts by resource")
    }

    fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Amounts<'de>, M::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(pair) = map.next_entry()? {
            pairs.push(pair);
        }
        Ok(Amounts(pairs))
    }
}

/// Cycle `last` as stored: its workloads' memory (in its own row before migration 5, in the
/// nodes' parts since) and the parts. Memory that cannot be read (stored by a faulty version)
/// is reported and the cycle starts afresh (every workload unmeasured).
async fn stored_cycle(
    tx: &mut sqlx::Transaction<'_, Any>,
    last: Option<i64>,
) -> Result<Stored, StoreError> {
    let Some(id) = last else {
        return Ok(Stored::default());
    };
    let own: String = sqlx::query("SELECT memory FROM cycles WHERE id = $1")
        .bind(id)
        .fetch_one(&mut **tx)
        .await?
        .try_get(0)?;
    let parts: HashMap<Id, Part> = sqlx::query("SELECT node, workloads, memory FROM node_parts")
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| {
            let part = Part {
                workloads: r.try_get(1)?,
                memory: r.try_get(2)?,
            };
            Ok((Id::from(r.try_get::<String, _>(0)?), part))
        })
        .collect::<Result<_, sqlx::Error>>()?;
    let what = format!("cycle {id}'s memory");
    let texts = std::iter::once(&own).chain(parts.values().map(|p| &p.memory));
    let memory = texts
        .map(|text| parse::<Memory>(&what, text))
        .collect::<Result<Vec<_>, _>>();
    let memory = match memory {
        Ok(memory) => {
            let mut memory: Memory = memory.into_iter().flatten().collect();
            memory.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            memory
        }
        Err(e) => {
            tracing::error!(error = %e, "starting this cycle without the previous one's memory");
            Memory::new()
        }
    };
    Ok(Stored {
        cycle: id,
        memory,
        parts,
    })
}

/// A cycle's workloads and their memory split by node, as the JSON each node's part stores.
/// `memory` must hold one entry per workload of `snapshot`, in the same order.
fn node_parts(snapshot: &Snapshot, memory: &Memory) -> Result<HashMap<Id, Part>, StoreError> {
    let aligned = snapshot.workloads.len() == memory.len()
        && snapshot
            .workloads
            .iter()
            .zip(memory)
            .all(|(w, m)| w.workload == m.0);
    if !aligned {
        return Err(StoreError::Invalid(format!(
            "cycle {}: the memory does not follow the snapshot's workloads",
            snapshot.cycle
        )));
    }
    let mut by_node: BTreeMap<&Id, (Vec<&WorkloadPriority>, Vec<_>)> = BTreeMap::new();
    for (w, m) in snapshot.workloads.iter().zip(memory) {
        let (workloads, memory) = by_node.entry(&w.node).or_default();
        workloads.push(w);
        memory.push(m);
    }
    // Written on every core: at 10,000 nodes the parts are 40 MB of JSON.
    Ok(by_node
        .par_iter()
        .map(|(node, (workloads, memory))| {
            let part = Part {
                workloads: json(workloads),
                memory: json(memory),
            };
            (Id::clone(node), part)
        })
        .collect())
}

/// The statement that writes `rows` nodes' parts, each over what was stored for it. On SQLite
/// its parameters are anonymous (`?`): SQLite finds a numbered one's name by a scan of the
/// names, and sqlx asks for every parameter's name, so 800 numbered ones took ~320,000 steps.
fn upsert_parts(rows: usize, backend: Backend) -> String {
    let parameter = |p: usize| match backend {
        Backend::Sqlite => "?".to_string(),
        Backend::Postgres => format!("${p}"),
    };
    let values: Vec<String> = (0..rows)
        .map(|r| {
            let [a, b, c, d] = [1, 2, 3, 4].map(|i| parameter(4 * r + i));
            format!("({a}, {b}, {c}, {d})")
        })
        .collect();
    format!(
        "INSERT INTO node_parts (node, cycle, workloads, memory) VALUES {} \
         ON CONFLICT (node) DO UPDATE SET cycle = excluded.cycle, \
         workloads = excluded.workloads, memory = excluded.memory",
        values.join(", ")
    )
}

/// The node a workload is registered on, if it is.
async fn workload_node(
    tx: &mut sqlx::Transaction<'_, Any>,
    id: &str,
) -> Result<Option<String>, StoreError> {
    let row = sqlx::query("SELECT node FROM workloads WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}

/// Forgets counted reports received before `before_ms`, remembering per node the highest
/// number forgotten so that a late retry of one is still recognised.
async fn prune_reports(
    tx: &mut sqlx::Transaction<'_, Any>,
    before_ms: i64,
) -> Result<(), StoreError> {
    let old = sqlx::query(
        "SELECT r.node, MAX(r.seq) FROM reports r JOIN report_cycles c ON c.node = r.node AND c.seq = r.seq
         WHERE c.cycle IS NOT NULL AND r.received_ms < $1 GROUP BY r.node",
    )
    .bind(before_ms)
    .fetch_all(&mut **tx)
    .await?;
    let marks: BTreeMap<String, i64> = old
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    for (node, max_seq) in &marks {
        sqlx::query(
            "INSERT INTO pruned (node, max_seq) VALUES ($1, $2)
             ON CONFLICT (node) DO UPDATE SET max_seq = CASE WHEN excluded.max_seq > pruned.max_seq
             THEN excluded.max_seq ELSE pruned.max_seq END",
        )
        .bind(node)
        .bind(max_seq)
        .execute(&mut **tx)
        .await?;
    }
    if !marks.is_empty() {
        // The counted ones among the old: their marks go first, as the reports identify them.
        sqlx::query(
            "DELETE FROM report_cycles WHERE cycle IS NOT NULL AND EXISTS (SELECT 1 FROM reports r
             WHERE r.node = report_cycles.node AND r.seq = report_cycles.seq AND r.received_ms < $1)",
        )
        .bind(before_ms)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "DELETE FROM reports WHERE received_ms < $1 AND NOT EXISTS (SELECT 1 FROM report_cycles c
             WHERE c.node = reports.node AND c.seq = reports.seq)",
        )
        .bind(before_ms)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
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
