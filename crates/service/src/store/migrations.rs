//! The schema, one migration per version, and how they are applied.

use super::*;

/// The schema, one migration per version; a version once released never changes.
pub(super) const MIGRATIONS: &[(i64, &str, &str)] = &[
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

pub(super) async fn apply_migrations(conn: &mut PoolConnection<Any>) -> Result<(), StoreError> {
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
