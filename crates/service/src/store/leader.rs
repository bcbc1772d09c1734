//! Leadership between replicas: one computes at a time, under a PostgreSQL advisory lock.

use super::*;
use fairshare_core::error::Chain;

impl Store {
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
            Ok(Err(e)) => self.lose(&Chain(&e).to_string()),
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
