//! The registry: nodes, users and workloads as the API writes them, and as a cycle reads them.

use super::*;
use fairshare_core::error::Invalid;

impl Store {
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
    pub(super) async fn write_user(
        &self,
        id: &str,
        spec: &UserSpec,
        replace: bool,
    ) -> Result<(), StoreError> {
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
        may_act_for: impl Fn(&str) -> Result<(), Invalid>,
    ) -> Result<(), StoreError> {
        may_act_for(&spec.node).map_err(|e| StoreError::Forbidden(e.0))?;
        let mut tx = self.write_tx().await?;
        if let Some(old) = workload_node(&mut tx, id).await? {
            may_act_for(&old).map_err(|e| StoreError::Forbidden(e.0))?;
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
        may_act_for: impl Fn(&str) -> Result<(), Invalid>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let Some(node) = workload_node(&mut tx, id).await? else {
            return Ok(false);
        };
        may_act_for(&node).map_err(|e| StoreError::Forbidden(e.0))?;
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

    /// The registry as `tx` sees it: the one read last if the stored version has not moved
    /// since and the resources are the same, read afresh otherwise.
    pub(super) async fn current_registry(
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
}

/// Says, within a transaction that writes to the registry, that the registry changed: a
/// cycle that sees the new version reads it again.
pub(super) async fn registry_changed(
    tx: &mut sqlx::Transaction<'_, Any>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE registry_version SET version = version + 1 WHERE id = 1")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Reads every node, user and workload and checks each spec under `resources`.
pub(super) async fn read_registry(
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
pub(super) async fn registered<S: serde::de::DeserializeOwned, T>(
    tx: &mut sqlx::Transaction<'_, Any>,
    table: &str,
    what: &str,
    check: impl Fn(&S) -> Result<T, Invalid>,
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
pub(super) fn shared_id<V>(
    map: &BTreeMap<crate::cycle::Id, V>,
    key: &str,
) -> Option<crate::cycle::Id> {
    map.get_key_value(key).map(|(k, _)| k.clone())
}

/// The node a workload is registered on, if it is.
pub(super) async fn workload_node(
    tx: &mut sqlx::Transaction<'_, Any>,
    id: &str,
) -> Result<Option<String>, StoreError> {
    let row = sqlx::query("SELECT node FROM workloads WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.map(|r| r.try_get(0)).transpose()?)
}
