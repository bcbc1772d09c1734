//! Usage reports: checked against what was stored, stored, measured and forgotten.

use super::*;

impl Store {
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
        let supply = (spec.check(resources)).map_err(|e| StoreError::Corrupt(e.0))?;
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
}

pub(super) async fn store_report(
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
pub(super) const WRITTEN_PER_STATEMENT: usize = 100;

/// Stores the knob values a report stored anew says are in force, a few workloads per
/// statement. A workload's values are replaced by those of a later report of its node, or of any
/// report from another node (it moved); unchanged values are not written again.
pub(super) async fn store_written(
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
pub(super) async fn forget_retries_of_forgotten(
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

/// Adds up the samples of the reports a cycle counts, each given as its interval and its
/// stored samples (CPU work: run it off the async threads). Samples are read in place, without
/// copying ids or building a map per sample: a cycle may count millions.
pub(super) fn measure(
    reports: &[(f64, String)],
    resources: &[Resource],
) -> Result<Measured, StoreError> {
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
pub(super) struct StoredSample<'a> {
    workload: &'a str,
    #[serde(borrow)]
    usage: Amounts<'a>,
}

/// A sample's amounts by resource name, in the order stored.
pub(super) struct Amounts<'a>(Vec<(&'a str, f64)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Amounts<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PairsVisitor)
    }
}

/// Reads an object into [`Amounts`].
pub(super) struct PairsVisitor;

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

/// Forgets counted reports received before `before_ms`, remembering per node the highest
/// number forgotten so that a late retry of one is still recognised.
pub(super) async fn prune_reports(
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
