//! The header both pages and both tables share: what was read from the trace (with every
//! reason a task was skipped) and the setting every run was simulated in.

use crate::html;
use crate::text::{amount, duration, fixed, strings};
use fairshare_lab::summary::{ReadStats, Setting};

/// Tasks submitted to the simulator: those found minus those skipped.
pub fn submitted(input: &ReadStats) -> u64 {
    input
        .tasks_found
        .saturating_sub(input.tasks_skipped.values().sum())
}

/// The input counts as (label, value) rows, skip reasons last.
pub fn input_rows(input: &ReadStats) -> Vec<Vec<String>> {
    let skipped: u64 = input.tasks_skipped.values().sum();
    let mut rows = vec![
        strings(&["records read", &input.records_read.to_string()]),
        strings(&["tasks found", &input.tasks_found.to_string()]),
        strings(&["tasks submitted", &submitted(input).to_string()]),
        strings(&["tasks skipped", &skipped.to_string()]),
    ];
    rows.extend(
        input
            .tasks_skipped
            .iter()
            .map(|(why, n)| vec![format!("  skipped: {why}"), n.to_string()]),
    );
    rows
}

/// The input counts as a text table.
pub fn input_table(input: &ReadStats) -> String {
    crate::text::table(&strings(&["input", "count"]), &input_rows(input))
}

/// The trace files, short: one name, or the first and last of many, with their folder.
fn trace_files(files: &[String]) -> String {
    let split = |f: &String| {
        f.rsplit_once('/')
            .map_or((String::new(), f.clone()), |(d, n)| {
                (format!("{d}/"), n.to_string())
            })
    };
    let (Some(first), Some(last)) = (files.first(), files.last()) else {
        return String::from("–");
    };
    let ((folder, a), (other, b)) = (split(first), split(last));
    let within = if folder.is_empty() || folder != other {
        String::new()
    } else {
        format!(" in {folder}")
    };
    let (a, b) = if within.is_empty() {
        (first.clone(), last.clone())
    } else {
        (a, b)
    };
    match files.len() {
        1 => first.clone(),
        2 => format!("{a}, {b}{within}"),
        n => format!("{a} … {b} ({n} files{within})"),
    }
}

/// One amount per resource of `setting`, each in a unit a person reads (`4.03 TiB`).
pub fn amount_list(setting: &Setting, values: &[f64]) -> Vec<String> {
    values
        .iter()
        .enumerate()
        .map(|(r, v)| amount(*v, setting.units.get(r).map_or("", String::as_str)))
        .collect()
}

/// [`amount_list`] on one line: `1013.19 processors / 4.03 TiB`.
fn amounts(setting: &Setting, values: &[f64]) -> String {
    amount_list(setting, values).join(" / ")
}

/// The setting as (term, description) pairs.
pub fn setting_items(s: &Setting) -> Vec<(&'static str, String)> {
    let resources = s
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| match s.units.get(i) {
            Some(u) if !u.is_empty() => format!("{r} ({u})"),
            _ => r.clone(),
        });
    let mut items = vec![
        ("trace", trace_files(&s.trace)),
        ("format", s.format.clone()),
        ("resources", resources.collect::<Vec<_>>().join(", ")),
        ("mean demand", amounts(s, &s.mean_demand)),
        ("capacity", amounts(s, &s.capacity)),
    ];
    if let Some(f) = s.capacity_fraction {
        items.push((
            "capacity fraction",
            format!("{} of mean demand", fixed(f, 2)),
        ));
    }
    if let Some(m) = s.machines {
        items.push(("machines", m.to_string()));
    }
    items.extend([
        ("users", s.users.to_string()),
        (
            "span",
            format!("{} ({} s)", duration(s.span_s), fixed(s.span_s, 0)),
        ),
        (
            "horizon",
            s.horizon_s.map_or(String::from("none (runs drain)"), |h| {
                format!("{} ({} s)", duration(h), fixed(h, 0))
            }),
        ),
    ]);
    if s.scheduler == "fill" {
        items.push(("scheduler", format!("fill (rule {})", s.rule)));
    } else {
        items.push(("scheduler", s.scheduler.clone()));
    }
    if s.machines.is_some() {
        items.push(("placement", format!("{} fit", s.placement)));
    }
    if !s.capacity_source.is_empty() {
        items.push(("capacity from", s.capacity_source.clone()));
    }
    if !s.queues.is_empty() {
        items.push(("queues", s.queues.clone()));
    }
    if !s.shares.is_empty() {
        items.push(("shares", s.shares.clone()));
    }
    let r = &s.recorded;
    if r.walltime_missing + r.walltime_exceeded > 0 {
        items.push((
            "walltimes",
            format!(
                "{} of {} jobs request none (planned with their runtime, a perfect estimate); {} ran longer than requested ({})",
                r.walltime_missing,
                r.jobs,
                r.walltime_exceeded,
                match s.overrun.as_str() {
                    "kill" => "killed at the request, --overrun kill",
                    _ => "run in full, the request raised to the runtime, --overrun extend",
                }
            ),
        ));
    }
    items
}

/// The setting (as [`setting_items`] gives it) and the input counts as HTML.
pub fn section(items: &[(&str, String)], input: &ReadStats) -> String {
    format!(
        "<h2>Setting</h2>\n{}<h2>Input</h2>\n{}",
        html::definitions(items),
        html::table(&strings(&["input", "count"]), &input_rows(input))
    )
}

/// The setting (as [`setting_items`] gives it) as text lines.
pub fn setting_text(items: &[(&str, String)]) -> String {
    items
        .iter()
        .map(|(t, d)| format!("{t:<18} {d}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_files_are_shortened() {
        let files: Vec<String> = (0..7).map(|i| format!("/t/part-{i}.gz")).collect();
        assert_eq!(
            trace_files(&files),
            "part-0.gz … part-6.gz (7 files in /t/)"
        );
        assert_eq!(trace_files(&files[..2]), "part-0.gz, part-1.gz in /t/");
        assert_eq!(trace_files(&files[..1]), "/t/part-0.gz");
        assert_eq!(trace_files(&["a".into(), "b".into()]), "a, b");
        assert_eq!(trace_files(&[]), "–");
    }
}
