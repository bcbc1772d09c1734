//! The priority cycle's transaction: what it reads, what it stores, and the snapshots it serves.

use super::reports::{measure, prune_reports};
use super::*;
use fairshare_core::error::Chain;

impl Store {
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
    pub(super) async fn read_cycle_input(
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

    /// Stores a cycle in one short write transaction: its own row (the snapshot without its
    /// workloads), the nodes' parts that differ from `before` (the parts as stored), the parts
    /// of nodes gone; and forgets the cycles before the ones kept.
    pub(super) async fn store_cycle(
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

    /// Forgets counted reports received before `before_ms`, remembering per node the highest
    /// number forgotten so that a late retry of one is still recognised.
    pub(super) async fn prune(
        &self,
        conn: &mut AnyConnection,
        before_ms: i64,
    ) -> Result<(), StoreError> {
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
}

/// Gives each workload of a cycle's answer the knob values last reported in force for it, when
/// they came from the node it is on; values that cannot be read are said and left out.
pub(super) fn attach_written(snapshot: &mut Snapshot, written: &Written) {
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
                tracing::warn!(workload = %w.workload, error = %Chain(&e), "stored knob values cannot be read; left out")
            }
        }
    }
}

/// Cycle `last` as stored: its workloads' memory (in its own row before migration 5, in the
/// nodes' parts since) and the parts. Memory that cannot be read (stored by a faulty version)
/// is reported and the cycle starts afresh (every workload unmeasured).
pub(super) async fn stored_cycle(
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
            tracing::error!(error = %Chain(&e), "starting this cycle without the previous one's memory");
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
pub(super) fn node_parts(
    snapshot: &Snapshot,
    memory: &Memory,
) -> Result<HashMap<Id, Part>, StoreError> {
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
pub(super) fn upsert_parts(rows: usize, backend: Backend) -> String {
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
