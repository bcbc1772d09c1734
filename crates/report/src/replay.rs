//! The replay report: how each policy did on one trace in one setting, as a terminal table and
//! as a page with utilisation, dominant-share and waiting-time plots.

use crate::html;
use crate::setting;
use crate::svg::{self, Axis, Bar, BarChart, Colour, LineChart, Scale, Series};
use crate::text::{self, duration, fixed, in_unit, percent, strings, time_unit};
use crate::{accounts, charges, occupancy};
use fairshare_lab::summary::ReplaySummary;
use fairshare_lab::whatif::{ADAPTER_BASELINE, BASELINE};
use fairshare_sim::cluster::{PolicyResult, UserResult};
use fairshare_sim::stats::RunStats;

/// Reduction bars are cut here (%), so one very slow policy does not flatten the others.
const FLOOR: f64 = -100.0;

pub use fairshare_sim::cluster::TOP_USERS;

/// Above this fraction of the submitted tasks, tasks that can never fit earn a warning.
pub const NEVER_FIT_WARNING: f64 = 0.01;

/// The replay as text: setting, input counts, three tables with one row per policy (tasks and
/// waits; use, with each run's wall-clock time from `stats` when given; fairness), then any
/// warnings.
pub fn replay_table(summary: &ReplaySummary, stats: &[RunStats]) -> String {
    let warnings: String = replay_warnings(summary)
        .iter()
        .map(|w| format!("\nwarning: {w}"))
        .collect();
    let tables: String = TEXT_TABLES.iter().map(|table| table(summary)).collect();
    format!(
        "{}\n{}\n{}:\n{}{NEVER_FIT_NOTE}.\n\n{USE_TITLE}:\n{}\n{FAIRNESS_TITLE}:\n{}{tables}{warnings}{}",
        setting::setting_text(&setting::setting_items(&summary.setting)),
        setting::input_table(&summary.input),
        tasks_title(summary),
        text::table(&task_headers(summary), &task_rows(summary)),
        text::table(&use_headers(summary, stats), &use_rows(summary, stats)),
        text::table(&FAIRNESS_HEADERS.map(String::from), &fairness_rows(summary)),
        if warnings.is_empty() { "" } else { "\n" }
    )
}

/// Title of the table of tasks and waits, with how the counts add up: [`tasks_title`] adds
/// the cancelled ones when there are some and closes the parenthesis.
const TASKS_TITLE: &str = "Tasks and waits (submitted = completed + unfinished + never fit";
/// What "never fit" means, said under the table of tasks and waits.
const NEVER_FIT_NOTE: &str =
    "Never fit: larger than the capacity, so never started; not unfinished, and left out of the waits";
/// Title of the table of use.
const USE_TITLE: &str = "Use (mean share of each resource in use; mean bounded slowdown)";
/// Title of the table of fairness.
const FAIRNESS_TITLE: &str = "Fairness (Jain's index, 1/n to 1, of 1/slowdown, of service while waiting and of mean dominant\nshare per user; the fraction of users' waiting time spent below their share; docs/json.md)";
/// The fairness table's columns.
const FAIRNESS_HEADERS: [&str; 5] = [
    "policy",
    "Jain 1/slowdown",
    "Jain service",
    "below share",
    "Jain dom. share",
];

/// What a reader of the results must know to trust them: tasks of the trace a reader left out
/// by default, with the option that keeps them; policies under which more than
/// [`NEVER_FIT_WARNING`] of the tasks can never fit the capacity (they are counted apart and
/// left out of the waits, so the waits describe only the tasks that fit); policies under which
/// tasks were cancelled while they waited (counted apart and left out of the waits too);
/// records `--lenient` skipped as malformed or out of order; tasks that arrive after the
/// horizon, in no policy's row; a machine sized from the log's own schedule that looks too
/// large.
pub fn replay_warnings(summary: &ReplaySummary) -> Vec<String> {
    let left_out = (LEFT_OUT_BY_DEFAULT.iter()).filter_map(|(reason, keeps)| {
        let n = *summary.input.tasks_skipped.get(*reason)?;
        let found = summary.input.tasks_found;
        Some(format!(
            "{n} of {found} tasks of the trace are left out as \"{reason}\": {keeps} keeps them"
        ))
    });
    let never_fit = summary
        .policies
        .iter()
        .filter(|p| p.tasks_never_fit as f64 > NEVER_FIT_WARNING * p.tasks_submitted as f64)
        .map(|p| {
            format!(
                "under {}, {} of {} tasks ({}) can never fit the capacity: they are counted as \"never fit\", not unfinished, and left out of every wait",
                p.policy,
                p.tasks_never_fit,
                p.tasks_submitted,
                percent(p.tasks_never_fit as f64 / p.tasks_submitted as f64)
            )
        });
    let cancelled = (summary.policies.iter())
        .filter(|p| p.tasks_cancelled > 0)
        .map(|p| {
            format!(
                "under {}, {} of {} tasks were cancelled by their owners while they waited, at the moments the log records: withdrawn then, they are counted as cancelled, not unfinished, and left out of every wait",
                p.policy, p.tasks_cancelled, p.tasks_submitted
            )
        });
    let lenient = (summary.input.tasks_skipped.iter())
        .filter(|(reason, _)| reason.starts_with("malformed") || *reason == "out of order")
        .map(|(reason, n)| {
            let hint = match reason.as_str() {
                "out of order" => ": were the files given in their order (Google's parts by number, a log's lines by submit time)?",
                _ => "",
            };
            format!(
                "{n} of {} records of the trace were skipped by --lenient as \"{reason}\"{hint}",
                summary.input.tasks_found
            )
        });
    let beyond = (summary.policies.first())
        .filter(|p| p.tasks_beyond_horizon > 0)
        .map(|p| {
            format!(
                "{} tasks arrive after the horizon: they are in no policy's row (--drain replays them all)",
                p.tasks_beyond_horizon
            )
        });
    let doubt = summary.setting.capacity_doubt.clone();
    (doubt
        .into_iter()
        .chain(left_out)
        .chain(lenient)
        .chain(beyond))
    .chain(never_fit)
    .chain(cancelled)
    .collect()
}

/// Reasons a reader skips tasks by default that an option undoes, with that option.
const LEFT_OUT_BY_DEFAULT: [(&str, &str); 1] =
    [("no memory", "--swf-memory none (processors only)")];

/// The replay as a self-contained HTML page.
pub fn replay_html(summary: &ReplaySummary) -> String {
    let body = String::from("<h1>fairshare replay</h1>\n") + &replay_body(summary);
    html::page("fairshare replay", &body)
}

/// The sections of [`replay_html`]'s page below its title: the setting, the policies' tables
/// and every section of [`SECTIONS`].
pub fn replay_body(summary: &ReplaySummary) -> String {
    let body = [
        setting::section(&setting::setting_items(&summary.setting), &summary.input),
        format!(
            "<h2>Policies</h2>\n<p>{}.</p>\n{}<p class=\"note\">{}.</p>\n<p>{}.</p>\n{}<p>{}.</p>\n{}{}",
            html::escape(&tasks_title(summary)),
            html::table(&task_headers(summary), &task_rows(summary)),
            html::escape(NEVER_FIT_NOTE),
            html::escape(USE_TITLE),
            html::table(&use_headers(summary, &[]), &use_rows(summary, &[])),
            html::escape(FAIRNESS_TITLE),
            html::table(&FAIRNESS_HEADERS.map(String::from), &fairness_rows(summary)),
            replay_warnings(summary)
                .iter()
                .map(|w| format!("<p class=\"warning\">Warning: {}</p>\n", html::escape(w)))
                .collect::<String>()
        ),
    ];
    let sections: String = SECTIONS.iter().map(|section| section(summary)).collect();
    body.concat() + &sections
}

/// The terminal's tables after the policies', in order; each gives nothing when it has
/// nothing to show. A new table is one file with its `text` and one line here.
pub const TEXT_TABLES: &[fn(&ReplaySummary) -> String] = &[accounts::text];

/// The page's sections after the policies, in order; each gives nothing when it has nothing
/// to show. A new table or chart is one file with its `section` and one line here.
pub const SECTIONS: &[fn(&ReplaySummary) -> String] = &[
    accounts::section,
    deviation_section,
    distribution_section,
    utilisation_section,
    occupancy::section,
    share_section,
    charges::section,
    |summary| wait_section(&summary.policies),
];

/// One row of the distribution charts: a policy, or the trace as recorded.
struct Distribution<'a> {
    label: &'a str,
    waits: &'a [f64],
    slowdowns: &'a [f64],
}

/// The distributions of waits and bounded slowdowns under each policy, and as the trace
/// recorded them: percentiles of the tasks against the wait (or slowdown) they got.
fn distribution_section(summary: &ReplaySummary) -> String {
    let recorded = &summary.setting.recorded;
    let policies = summary.policies.iter().map(|p| Distribution {
        label: &p.policy,
        waits: &p.wait_quantiles_s,
        slowdowns: &p.slowdown_quantiles,
    });
    let as_recorded = Distribution {
        label: "as recorded",
        waits: &recorded.wait_quantiles_s,
        slowdowns: &recorded.slowdown_quantiles,
    };
    let rows: Vec<Distribution> = policies
        .chain(std::iter::once(as_recorded))
        .filter(|d| !d.waits.is_empty())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let longest = rows
        .iter()
        .flat_map(|d| d.waits.iter().copied())
        .fold(0.0, f64::max);
    let unit = time_unit(longest);
    let has_recorded = recorded.started > 0;
    let chart = |values: fn(&Distribution, f64) -> Vec<f64>, y: Axis| {
        let series = rows.iter().enumerate().map(|(i, row)| Series {
            label: row.label.to_owned(),
            colour: if has_recorded && i + 1 == rows.len() {
                svg::GREY
            } else {
                Colour::Palette(i)
            },
            points: values(row, unit.0)
                .into_iter()
                .enumerate()
                .map(|(q, v)| (5.0 * q as f64, v))
                .collect(),
        });
        svg::line_chart(&LineChart {
            size: (1180, 340),
            x: Axis::new("tasks, by percentile of their wait or slowdown (%)").range(0.0, 100.0),
            y,
            series: series.collect(),
            hline: None,
            markers: true,
            legend: true,
        })
    };
    let waits = chart(
        |d, unit| d.waits.iter().map(|w| w / unit).collect(),
        Axis::new(&format!("wait ({})", unit.1)).with_zero(),
    );
    let slowdowns = chart(
        |d, _| d.slowdowns.to_vec(),
        Axis::new("bounded slowdown").scale(Scale::Log),
    );
    format!(
        "<h2>Distribution of waits and slowdowns</h2>\n{}{}",
        html::figure(&waits, "Each policy's tasks ordered by their wait, every 5th percentile, beside the waits the trace recorded (grey): a curve that stays low for longer serves more tasks promptly."),
        html::figure(&slowdowns, "The same for bounded slowdown, max(1, (wait + run) / max(run, 10 s)), on a log scale.")
    )
}

/// Accounts whose deviation over time the report draws (one palette colour each).
const DRAWN_ACCOUNTS: usize = 8;

/// One small chart per policy: each account's share of the processor-time delivered so far,
/// less its entitlement, over time (the fairshare deviation), one colour per account.
fn deviation_section(summary: &ReplaySummary) -> String {
    let Some(first) = summary.policies.first() else {
        return String::new();
    };
    let drawn: Vec<&str> = first
        .accounts
        .iter()
        .filter(|a| a.parent.is_some())
        .take(DRAWN_ACCOUNTS)
        .map(|a| a.name.as_str())
        .collect();
    if drawn.is_empty() {
        return String::new();
    }
    let (unit, x_label) = time_axis(&summary.policies);
    let figures: String = summary
        .policies
        .iter()
        .map(|p| {
            let series = p.accounts.iter().filter_map(|a| {
                let colour = Colour::Palette(drawn.iter().position(|d| *d == a.name)?);
                let points = p.timeline.times_s.iter().zip(&a.delivered_over_time);
                let points = points
                    .filter_map(|(t, d)| Some((t / unit, 100.0 * (d.as_ref()? - a.entitlement))));
                Some(Series {
                    label: a.name.clone(),
                    colour,
                    points: points.collect(),
                })
            });
            let chart = LineChart {
                size: (580, 300),
                x: Axis::new(&x_label).with_zero(),
                y: Axis::new("delivered − entitled (percentage points)"),
                series: series.collect(),
                hline: Some(0.0),
                markers: false,
                legend: false,
            };
            html::panel(&p.policy, &svg::line_chart(&chart))
        })
        .collect();
    let legend: Vec<(String, Colour)> = drawn
        .iter()
        .map(|d| d.to_string())
        .zip((0..).map(Colour::Palette))
        .collect();
    format!(
        "<h2>Accounts against their entitlement over time</h2>\n<p>Each account's share of the processor-time delivered from the start until then, less the share its entitlement promises, one chart per policy (the first {} accounts below the root): a fair-share policy brings the lines to the zero line, a line above it marks an account served beyond its share.</p>\n{}{figures}",
        drawn.len(),
        html::legend(&legend),
    )
}

/// Whether any policy's run withdrew tasks cancelled while they waited: the table of tasks
/// then counts them in a column of their own.
fn any_cancelled(summary: &ReplaySummary) -> bool {
    summary.policies.iter().any(|p| p.tasks_cancelled > 0)
}

/// The title of the table of tasks and waits, with how its counts add up.
fn tasks_title(summary: &ReplaySummary) -> String {
    let cancelled = if any_cancelled(summary) {
        " + cancelled"
    } else {
        ""
    };
    format!("{TASKS_TITLE}{cancelled})")
}

/// Column titles of the table of tasks and waits.
fn task_headers(summary: &ReplaySummary) -> Vec<String> {
    let mut headers = strings(&[
        "policy",
        "submitted",
        "completed",
        "unfinished",
        "never fit",
    ]);
    if any_cancelled(summary) {
        headers.push(String::from("cancelled"));
    }
    headers.extend(strings(&["mean wait", "p95 wait", "user-mean wait"]));
    headers
}

/// One row per policy, matching [`task_headers`], then the trace's own schedule as recorded
/// (when it records starts) for every replay to be read against.
fn task_rows(summary: &ReplaySummary) -> Vec<Vec<String>> {
    let cancelled = any_cancelled(summary);
    let row = |p: &PolicyResult| {
        let mut row = vec![
            p.policy.clone(),
            p.tasks_submitted.to_string(),
            p.tasks_completed.to_string(),
            p.tasks_unfinished.to_string(),
            p.tasks_never_fit.to_string(),
        ];
        row.extend(cancelled.then(|| p.tasks_cancelled.to_string()));
        row.extend([
            duration(p.mean_wait_s),
            duration(p.p95_wait_s),
            duration(p.user_mean_wait_s),
        ]);
        row
    };
    let mut rows: Vec<Vec<String>> = summary.policies.iter().map(row).collect();
    let r = &summary.setting.recorded;
    if r.started > 0 {
        let none = String::from("–");
        let mut row = vec![
            String::from("as recorded"),
            r.jobs.to_string(),
            r.started.to_string(),
            none.clone(),
            none.clone(),
        ];
        row.extend(cancelled.then(|| none.clone()));
        row.extend([duration(r.mean_wait_s), duration(r.p95_wait_s), none]);
        rows.push(row);
    }
    rows
}

/// Column titles of the table of use and fairness (a wall-clock column when `stats` are given).
fn use_headers(summary: &ReplaySummary, stats: &[RunStats]) -> Vec<String> {
    let mut h = vec![String::from("policy")];
    h.extend(
        summary
            .setting
            .resources
            .iter()
            .map(|r| format!("util {r}")),
    );
    h.extend(strings(&["slowdown", "live-tree events"]));
    if !stats.is_empty() {
        h.push("wall".into());
    }
    h
}

/// One row per policy, matching [`use_headers`].
fn use_rows(summary: &ReplaySummary, stats: &[RunStats]) -> Vec<Vec<String>> {
    let resources = summary.setting.resources.len();
    let row = |(i, p): (usize, &PolicyResult)| {
        let mut r = vec![p.policy.clone()];
        r.extend((0..resources).map(|i| {
            p.utilization
                .get_index(i)
                .map_or(String::from("–"), |(_, u)| percent(*u))
        }));
        r.push(fixed(p.mean_slowdown, 2));

        r.push(
            p.livetree_events
                .map_or(String::from("–"), |e| e.to_string()),
        );
        if let Some(s) = stats.get(i) {
            r.push(format!("{} s", fixed(s.wall_s, 2)));
        } else if !stats.is_empty() {
            r.push(String::from("–"));
        }
        r
    };
    let mut rows: Vec<Vec<String>> = summary.policies.iter().enumerate().map(row).collect();
    let recorded = &summary.setting.recorded;
    if recorded.started > 0 {
        let mut r = vec![String::from("as recorded")];
        r.extend((0..resources).map(|_| String::from("–")));
        r.push(fixed(recorded.mean_slowdown, 2));
        r.push(String::from("–"));
        if !stats.is_empty() {
            r.push(String::from("–"));
        }
        rows.push(r);
    }
    rows
}

/// One row per policy, matching [`FAIRNESS_HEADERS`] (the trace's own schedule has none: its
/// shares over time are not known).
fn fairness_rows(summary: &ReplaySummary) -> Vec<Vec<String>> {
    let row = |p: &PolicyResult| {
        vec![
            p.policy.clone(),
            fixed(p.jain_slowdown, 3),
            fixed(p.jain_service, 3),
            percent(p.time_below_share),
            fixed(p.jain_dominant_share, 3),
        ]
    };
    summary.policies.iter().map(row).collect()
}

/// A time unit fitting the longest timeline: (seconds per unit, axis title).
fn time_axis(policies: &[PolicyResult]) -> (f64, String) {
    let last = policies
        .iter()
        .flat_map(|p| p.timeline.times_s.last())
        .copied()
        .fold(0.0, f64::max);
    let (per, symbol) = time_unit(last);
    (per, format!("time since the first event ({symbol})"))
}

/// One chart per resource: the fraction in use over time, one line per policy.
fn utilisation_section(summary: &ReplaySummary) -> String {
    let (unit, x_label) = time_axis(&summary.policies);
    let figures: String = summary
        .setting
        .resources
        .iter()
        .enumerate()
        .map(|(r, name)| {
            let series = summary.policies.iter().enumerate().map(|(i, p)| Series {
                label: format!("{} {}", p.policy, p.utilization.get_index(r).map_or(String::new(), |(_, u)| percent(*u))),
                colour: Colour::Palette(i),
                points: timeline_points(&p.timeline.times_s, p.timeline.utilization.get(r).map_or(&[], Vec::as_slice), unit),
            });
            let chart = LineChart {
                size: (1180, 340),
                x: Axis::new(&x_label).with_zero(),
                y: Axis::new(&format!("{name} in use (% of capacity)")).range(0.0, 100.0),
                series: series.collect(),
                hline: None,
                markers: false,
                legend: true,
            };
            let caption = format!("Share of {name} in use over time under each policy (the legend gives each policy's mean): higher and steadier lines leave less capacity idle; lines that coincide hide one another.");
            html::figure(&svg::line_chart(&chart), &caption)
        })
        .collect();
    format!("<h2>Utilisation over time</h2>\n{figures}")
}

/// (time in `unit`, value in %) pairs of a sampled series.
fn timeline_points(times: &[f64], values: &[f64], unit: f64) -> Vec<(f64, f64)> {
    times
        .iter()
        .zip(values)
        .map(|(t, v)| (t / unit, 100.0 * v))
        .collect()
}

/// One small chart per policy, and one of the trace's own schedule when it records one: the
/// dominant share of the top users over time, one colour per user across all charts.
fn share_section(summary: &ReplaySummary) -> String {
    let users = top_users(&summary.policies);
    let (unit, x_label) = time_axis(&summary.policies);
    let recorded = &summary.setting.recorded.shares;
    let panels = (summary.policies.iter())
        .map(|p| {
            (
                p.policy.as_str(),
                &p.timeline.times_s,
                &p.timeline.dominant_share,
            )
        })
        .chain((!recorded.is_empty()).then_some((
            "as recorded",
            &recorded.times_s,
            &recorded.dominant_share,
        )));
    let panels: Vec<_> = panels.collect();
    let top = panels.iter().flat_map(|(_, _, shares)| *shares);
    let top = top.flat_map(|s| &s.values).copied();
    let top = 100.0 * top.filter(|v| v.is_finite()).fold(0.0, f64::max);
    let y_max = if top > 0.0 { top * 1.05 } else { 1.0 };
    let figures: String = panels
        .iter()
        .map(|(title, times_s, shares)| {
            let series = shares.iter().filter_map(|s| {
                let colour = Colour::Palette(users.iter().position(|u| *u == s.id)?);
                Some(Series {
                    label: s.id.clone(),
                    colour,
                    points: timeline_points(times_s, &s.values, unit),
                })
            });
            let chart = LineChart {
                size: (580, 300),
                x: Axis::new(&x_label).with_zero(),
                y: Axis::new("dominant share (%)").range(0.0, y_max),
                series: series.collect(),
                hline: None,
                markers: false,
                legend: false,
            };
            html::panel(title, &svg::line_chart(&chart))
        })
        .collect();
    let names = short_names(&users);
    let legend: Vec<(String, Colour)> = names
        .iter()
        .cloned()
        .zip((0..).map(Colour::Palette))
        .collect();
    format!(
        "<h2>Dominant share over time</h2>\n<p>The dominant share of the {} users with the most tasks, one chart per policy (and one of the schedule the trace recorded, when it records one) and the same colour for the same user everywhere: under a fair policy the lines of busy users stay close together.</p>\n{}{}{figures}",
        users.len(),
        html::legend(&legend),
        user_table(&users, &names, &summary.policies)
    )
}

/// User ids longer than this are shown by a short alias (u1, u2, …) in legends.
const LONGEST_ID: usize = 12;

/// What legends call `users`: their ids, or u1, u2, … in order when any id is longer than
/// [`LONGEST_ID`] (hashed ids of 44 characters would fill the legend).
fn short_names(users: &[String]) -> Vec<String> {
    if users.iter().all(|u| u.chars().count() <= LONGEST_ID) {
        return users.to_vec();
    }
    (1..=users.len()).map(|i| format!("u{i}")).collect()
}

/// The drawn users: the name the legend uses (when it is an alias), their full id and tasks.
fn user_table(users: &[String], names: &[String], policies: &[PolicyResult]) -> String {
    let aliased = users != names;
    let mut headers = Vec::new();
    if aliased {
        headers.push(String::from("alias"));
    }
    headers.extend(strings(&["user", "tasks submitted", "never fit"]));
    let rows: Vec<Vec<String>> = users
        .iter()
        .zip(names)
        .map(|(id, name)| {
            let result = policies.iter().flat_map(|p| &p.users).find(|u| u.id == *id);
            let count = |f: fn(&UserResult) -> u64| {
                result.map_or(String::from("–"), |u| f(u).to_string())
            };
            let mut row = Vec::new();
            if aliased {
                row.push(name.clone());
            }
            row.extend([
                id.clone(),
                count(|u| u.tasks_submitted),
                count(|u| u.tasks_never_fit),
            ]);
            row
        })
        .collect();
    html::table_left(&headers, &rows, if aliased { 2 } else { 1 })
}

/// The users that have a dominant-share series, in order of first appearance, at most
/// [`TOP_USERS`].
fn top_users(policies: &[PolicyResult]) -> Vec<String> {
    let mut users: Vec<String> = Vec::new();
    for s in policies.iter().flat_map(|p| &p.timeline.dominant_share) {
        if users.len() < TOP_USERS && !users.contains(&s.id) {
            users.push(s.id.clone());
        }
    }
    users
}

/// Mean waiting time per policy, and the reduction against a what-if's baseline, or DRF.
fn wait_section(policies: &[PolicyResult]) -> String {
    let longest = policies
        .iter()
        .map(|p| p.mean_wait_s)
        .filter(|w| w.is_finite());
    let unit = time_unit(longest.fold(0.0, f64::max));
    let waits = policies.iter().enumerate().map(|(i, p)| Bar {
        label: p.policy.clone(),
        value: p.mean_wait_s / unit.0,
        text: format!(
            "{} (p95 {})",
            in_unit(p.mean_wait_s, unit),
            in_unit(p.p95_wait_s, unit)
        ),
        colour: Colour::Palette(i),
        error: None,
    });
    let chart = BarChart {
        width: 1180,
        x: Axis::new(&format!("mean waiting time of tasks ({})", unit.1)),
        bars: waits.collect(),
    };
    let caption = "Mean waiting time of the tasks under each policy (95th percentile in brackets): shorter bars are better.";
    format!(
        "<h2>Waiting time</h2>\n{}{}",
        html::figure(&svg::bar_chart(&chart), caption),
        reduction_figure(policies)
    )
}

/// Bars of `1 − user-mean wait / the reference's user-mean wait` for every other policy, or a
/// note when there is no reference: a what-if's baseline (the site's own scheduling,
/// replayed first), else the DRF run.
fn reduction_figure(policies: &[PolicyResult]) -> String {
    let site = policies.first().filter(|p| is_site_baseline(&p.policy));
    let Some(reference) = site.or_else(|| policies.iter().find(|p| is_drf(&p.policy))) else {
        return String::from("<p class=\"note\">No DRF run in this replay, so no reduction against DRF is shown.</p>\n");
    };
    let name = match site {
        Some(baseline) => format!("{} (the baseline)", baseline.policy),
        None => "DRF".to_owned(),
    };
    if !(reference.user_mean_wait_s > 0.0 && reference.user_mean_wait_s.is_finite()) {
        return format!("<p class=\"note\">Under {} no user waited, so there is no waiting time to reduce.</p>\n", html::escape(&name));
    }
    let others = policies.iter().filter(|p| !std::ptr::eq(*p, reference));
    let bars = others.map(|p| {
        let reduction = 100.0 * (1.0 - p.user_mean_wait_s / reference.user_mean_wait_s);
        Bar {
            label: p.policy.clone(),
            value: reduction.max(FLOOR),
            text: format!("{} %", fixed(reduction, 1)),
            colour: Colour::Palette(if reduction >= 0.0 { 2 } else { 1 }),
            error: None,
        }
    });
    let chart = BarChart {
        width: 1180,
        x: Axis::new(&format!(
            "reduction of the users' mean waiting time vs {name} (%)"
        )),
        bars: bars.collect(),
    };
    if chart.bars.is_empty() {
        return String::new();
    }
    let caption = format!("Reduction of the users' mean waiting time relative to {name} (1 − W/W_ref): green bars right of zero wait less than it, red bars left of zero wait more (bars stop at −100 %; the number gives the full value).");
    html::figure(&svg::bar_chart(&chart), &caption)
}

/// Whether a policy is a what-if's baseline: the site's own scheduling replayed.
fn is_site_baseline(policy: &str) -> bool {
    [BASELINE, ADAPTER_BASELINE].contains(&policy)
}

/// Whether a policy specification is the DRF baseline.
pub fn is_drf(policy: &str) -> bool {
    policy.trim().eq_ignore_ascii_case("drf")
}
