//! Reading a sweep's shard outputs back: a shard is a file from another machine, so it is
//! checked like any input before it is merged.
//!
//! `fairshare sweep --shard i/n --json` writes a [`SweepSummary`]; `sweep merge` reads several.
//! A file that parses but holds impossible values (a Jain index of −5, a negative wait, a share
//! above 1, counts that do not add up) would otherwise be copied into the merged report as if
//! it were a result. [`read_shard`] refuses it, naming the field by its JSON path.

use crate::summary::{Setting, SweepSummary};
use fairshare_sim::cluster::PolicyResult;
use thiserror::Error;

/// Slack for values computed in floating point that must lie in `[0, 1]`.
const SLACK: f64 = 1e-9;

/// Why a shard cannot be merged.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ShardError {
    /// Not the JSON of a sweep output (serde names the line, column and field).
    #[error("not a sweep output")]
    Syntax(#[from] serde_json::Error),
    /// A field holds a value no sweep can produce.
    #[error("{field}: expected {expected}, found {found}")]
    Field {
        /// The field's JSON path, e.g. `cells[3].result.jain_dominant_share`.
        field: String,
        /// What it must hold.
        expected: String,
        /// What it held.
        found: String,
    },
}

/// Parses and checks one shard output.
pub fn read_shard(text: &str) -> Result<SweepSummary, ShardError> {
    let summary: SweepSummary = serde_json::from_str(text)?;
    check_sweep(&summary)?;
    Ok(summary)
}

/// Checks every value of a sweep output against what a sweep can produce.
pub fn check_sweep(summary: &SweepSummary) -> Result<(), ShardError> {
    check_setting(&summary.setting)?;
    if summary.shards == 0 {
        return Err(field("shards", "at least 1", summary.shards));
    }
    for (i, id) in summary.shard_ids.iter().enumerate() {
        if *id >= summary.shards {
            let expected = format!("a shard below shards = {}", summary.shards);
            return Err(field(format!("shard_ids[{i}]"), &expected, id));
        }
    }
    for (i, cell) in summary.cells.iter().enumerate() {
        let at = |name: &str| format!("cells[{i}].{name}");
        positive(&at("fraction"), cell.fraction)?;
        if let Some(epsilon) = cell.epsilon {
            if !(epsilon > 0.0 && epsilon < 1.0) {
                return Err(field(at("epsilon"), "a number between 0 and 1", epsilon));
            }
        }
        check_result(&at("result"), &cell.result, summary.setting.resources.len())?;
    }
    Ok(())
}

/// The shared setting: amounts finite and not negative, one per resource.
fn check_setting(setting: &Setting) -> Result<(), ShardError> {
    let resources = setting.resources.len();
    for (name, values) in [
        ("setting.mean_demand", &setting.mean_demand),
        ("setting.capacity", &setting.capacity),
    ] {
        if values.len() != resources {
            let expected = format!("{resources} values, one per resource");
            return Err(field(name, &expected, values.len()));
        }
        for (r, v) in values.iter().enumerate() {
            at_least_zero(&format!("{name}[{r}]"), *v)?;
        }
    }
    if let Some(f) = setting.capacity_fraction {
        positive("setting.capacity_fraction", f)?;
    }
    at_least_zero("setting.span_s", setting.span_s)?;
    if let Some(h) = setting.horizon_s {
        at_least_zero("setting.horizon_s", h)?;
    }
    Ok(())
}

/// One policy's result: counts that add up, times not negative, fractions within [0, 1].
fn check_result(at: &str, r: &PolicyResult, resources: usize) -> Result<(), ShardError> {
    let name = |f: &str| format!("{at}.{f}");
    if r.tasks_started > r.tasks_submitted {
        let expected = format!("at most tasks_submitted = {}", r.tasks_submitted);
        return Err(field(name("tasks_started"), &expected, r.tasks_started));
    }
    if r.tasks_completed > r.tasks_started {
        let expected = format!("at most tasks_started = {}", r.tasks_started);
        return Err(field(name("tasks_completed"), &expected, r.tasks_completed));
    }
    for (f, v) in [
        ("mean_wait_s", r.mean_wait_s),
        ("p95_wait_s", r.p95_wait_s),
        ("user_mean_wait_s", r.user_mean_wait_s),
        ("mean_slowdown", r.mean_slowdown),
        ("simulated_s", r.simulated_s),
    ] {
        at_least_zero(&name(f), v)?;
    }
    for (f, v) in [
        ("jain_dominant_share", r.jain_dominant_share),
        ("jain_slowdown", r.jain_slowdown),
        ("jain_service", r.jain_service),
        ("time_below_share", r.time_below_share),
    ] {
        fraction(&name(f), v)?;
    }
    if r.utilization.len() != resources {
        let expected = format!("{resources} values, one per resource");
        return Err(field(name("utilization"), &expected, r.utilization.len()));
    }
    for (resource, u) in &r.utilization {
        fraction(&name(&format!("utilization.{resource}")), *u)?;
    }
    for (u, user) in r.users.iter().enumerate() {
        let at = |f: &str| name(&format!("users[{u}].{f}"));
        at_least_zero(&at("mean_wait_s"), user.mean_wait_s)?;
        fraction(&at("mean_dominant_share"), user.mean_dominant_share)?;
        if user.tasks_completed > user.tasks_started || user.tasks_started > user.tasks_submitted {
            let expected = "completed ≤ started ≤ submitted";
            let found = format!(
                "{} ≤ {} ≤ {}",
                user.tasks_completed, user.tasks_started, user.tasks_submitted
            );
            return Err(field(at("tasks_completed"), expected, found));
        }
    }
    Ok(())
}

/// The error for `name` holding `found` instead of `expected`.
fn field(name: impl Into<String>, expected: &str, found: impl ToString) -> ShardError {
    ShardError::Field {
        field: name.into(),
        expected: expected.to_owned(),
        found: found.to_string(),
    }
}

fn at_least_zero(name: &str, v: f64) -> Result<(), ShardError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(field(name, "a finite number ≥ 0", v))
    }
}

fn positive(name: &str, v: f64) -> Result<(), ShardError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(field(name, "a finite number > 0", v))
    }
}

fn fraction(name: &str, v: f64) -> Result<(), ShardError> {
    if (-SLACK..=1.0 + SLACK).contains(&v) {
        Ok(())
    } else {
        Err(field(name, "a number from 0 to 1", v))
    }
}
