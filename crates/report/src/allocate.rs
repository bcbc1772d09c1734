//! The table of `fairshare allocate`: what one instance's policy gives each user, resource by
//! resource, with the share of each resource in use below. It is here, not in the command, so
//! that every table a person reads comes from this crate, from the core's [`Outcome`]; the
//! command solves the instance and prints what [`allocate_table`] returns.

use crate::text::table;
use fairshare_core::instance::Outcome;

/// The outcome as a terminal table: a line naming the policy (and, in divisible mode, the
/// water level and the saturated resources), then one row per user, one column per resource,
/// the tasks placed in task mode, the dominant share, and a last row with each resource's use.
pub fn allocate_table(outcome: &Outcome) -> String {
    let mut header = vec!["user".to_string()];
    let with_tasks = outcome.users.iter().any(|u| u.tasks.is_some());
    if with_tasks {
        header.push("tasks".into());
    }
    header.extend(outcome.utilization.keys().cloned());
    header.push("dominant share".into());
    let mut rows = Vec::new();
    for user in &outcome.users {
        let mut row = vec![user.id.clone()];
        if with_tasks {
            let tasks = user.tasks.unwrap_or(0).to_string();
            row.push(if user.never_fits {
                format!("{tasks} (never fits)")
            } else {
                tasks
            });
        }
        row.extend(user.allocation.values().map(|v| format!("{v:.4}")));
        row.push(format!("{:.4}", user.dominant_share));
        rows.push(row);
    }
    let mut used = vec!["in use".to_string()];
    if with_tasks {
        used.push(String::new());
    }
    used.extend(
        outcome
            .utilization
            .values()
            .map(|u| format!("{:.1}%", 100.0 * u)),
    );
    used.push(String::new());
    rows.push(used);
    let mut out = format!("policy {}", outcome.policy);
    if let Some(level) = outcome.level {
        out += &format!(", water level {level:.4}");
    }
    if let Some(b) = outcome.bottlenecks.as_ref().filter(|b| !b.is_empty()) {
        out += &format!(", bottleneck {}", b.join(", "));
    }
    out.push('\n');
    out + &table(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_core::alloc::tasks::FillRule;
    use fairshare_core::instance::Instance;

    fn solved(json: &str, rule: FillRule) -> Outcome {
        Instance::from_json(json).unwrap().solve(rule).unwrap()
    }

    /// examples/allocate/textbook-drf.json (the DRF paper's example, task mode): the table
    /// `fairshare allocate --rule head-of-line` printed before it moved here.
    #[test]
    fn task_mode_shows_the_tasks_placed() {
        let outcome = solved(
            r#"{"policy": "drf", "mode": "tasks", "capacity": {"cpu": 9, "mem": 18},
                "users": [{"id": "A", "demand": {"cpu": 1, "mem": 4}, "tasks": 1000},
                          {"id": "B", "demand": {"cpu": 3, "mem": 1}, "tasks": 1000}]}"#,
            FillRule::HeadOfLine,
        );
        assert_eq!(
            allocate_table(&outcome),
            "\
policy drf
user    tasks     cpu      mem  dominant share
──────  ─────  ──────  ───────  ──────────────
A           3  3.0000  12.0000          0.6667
B           2  6.0000   2.0000          0.6667
in use         100.0%    77.8%
"
        );
    }

    /// examples/allocate/sdrf-three-users.json (divisible mode): the water level and the
    /// saturated resource on the first line, no tasks column.
    #[test]
    fn divisible_mode_shows_the_level_and_the_bottleneck() {
        let outcome = solved(
            r#"{"policy": "sdrf", "mode": "divisible", "capacity": {"cpu": 100, "mem": 400},
                "users": [
                  {"id": "A", "demand": {"cpu": 80, "mem": 160}, "commitment": {"cpu": 0.20, "mem": 0.10}},
                  {"id": "B", "demand": {"cpu": 10, "mem": 80}},
                  {"id": "C", "demand": {"cpu": 30, "mem": 240}, "commitment": {"cpu": 0.05, "mem": 0.10}}]}"#,
            FillRule::Skip,
        );
        assert_eq!(
            allocate_table(&outcome),
            "\
policy sdrf, water level 0.6667, bottleneck mem
user        cpu       mem  dominant share
──────  ───────  ────────  ──────────────
A       46.6667   93.3333          0.4667
B       10.0000   80.0000          0.2000
C       28.3333  226.6667          0.5667
in use    85.0%    100.0%
"
        );
    }

    /// A task larger than the whole capacity is marked as never fitting.
    #[test]
    fn a_task_that_never_fits_is_marked() {
        let outcome = solved(
            r#"{"policy": "drf", "mode": "tasks", "capacity": {"cpu": 10, "mem": 10},
                "users": [{"id": "a", "demand": {"cpu": 20, "mem": 1}}]}"#,
            FillRule::HeadOfLine,
        );
        assert_eq!(
            allocate_table(&outcome),
            "\
policy drf
user             tasks     cpu     mem  dominant share
──────  ──────────────  ──────  ──────  ──────────────
a       0 (never fits)  0.0000  0.0000          0.0000
in use                    0.0%    0.0%
"
        );
    }
}
