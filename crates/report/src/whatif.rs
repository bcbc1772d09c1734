//! What `fairshare slurm what-if` shows: how far to trust the prediction first (the site's own
//! fairshare replayed against the record), then each policy against that baseline user by user,
//! what was taken from the bundle and what the model leaves out, then the replay's own tables.

use crate::replay::{replay_body, replay_table};
use crate::svg::{self, Axis, Bar, BarChart, Colour};
use crate::{html, text};
use fairshare_lab::trust::{PinnedJobs, Trust, WindowStart};
use fairshare_lab::whatif::{WhatIfSummary, ADAPTER_BASELINE};
use fairshare_sim::cluster::PolicyResult;
use fairshare_sim::stats::RunStats;

/// What the contested order is measured against.
const FLOOR: &str = "two real runs of one workload on a 16-node Slurm agree on 90–95 % of them";

/// The what-if as text: trust, the policies against the baseline, what was taken and left
/// out, then the replay's tables (with each run's wall-clock time from `stats`).
pub fn whatif_table(summary: &WhatIfSummary, stats: &[RunStats]) -> String {
    let (headers, rows) = user_table(&summary.trust);
    let mut out = format!(
        "{}\n\n{}\n",
        trust_lines(summary).join("\n"),
        text::table(&headers, &rows)
    );
    if summary.prediction.policies.len() > 1 {
        let (headers, rows) = versus_table(&summary.prediction.policies, &summary.trust);
        out += &format!(
            "{}:\n{}{WITHIN_ERROR}\n",
            VERSUS_TITLE,
            text::table(&headers, &rows)
        );
        out += &(gains(&summary.prediction.policies, &summary.trust).join("\n") + "\n\n");
    }
    let list = |title: &str, items: &[String]| {
        let items: String = items.iter().map(|i| format!("  - {i}\n")).collect();
        format!("{title}:\n{items}\n")
    };
    out += &list("Taken from the bundle", &summary.taken);
    out += &list("Not modelled", &summary.unmodelled);
    out + &replay_table(&summary.prediction, stats)
}

/// The what-if as one page: the same sections, then the replay's page with its plots of the
/// recorded and predicted shares over time.
pub fn whatif_html(summary: &WhatIfSummary) -> String {
    let (headers, rows) = user_table(&summary.trust);
    let lines = trust_lines(summary);
    let (title, about) = lines[0].split_once(": ").unwrap_or((&lines[0], ""));
    let mut body = format!(
        "<h1>fairshare slurm what-if</h1>\n<h2>{}</h2>\n<p>{}:</p>\n{}{}",
        html::escape(title),
        html::escape(&upper_first(about)),
        lines[1..]
            .iter()
            .map(|l| format!("<p>{}</p>\n", html::escape(l.trim())))
            .collect::<String>(),
        html::table(&headers, &rows)
    );
    if summary.prediction.policies.len() > 1 {
        let policies = &summary.prediction.policies;
        let (headers, rows) = versus_table(policies, &summary.trust);
        body += &format!(
            "<h2>{}</h2>\n{}<p>{}</p>\n{}{}",
            html::escape(VERSUS_TITLE),
            html::table(&headers, &rows),
            html::escape(WITHIN_ERROR),
            gains(policies, &summary.trust)
                .iter()
                .map(|g| format!("<p>{}</p>\n", html::escape(g)))
                .collect::<String>(),
            (policies[1..].iter())
                .map(|p| change_figure(&policies[0], p, &summary.trust))
                .collect::<String>()
        );
    }
    let list = |title: &str, items: &[String]| {
        let items: String = (items.iter())
            .map(|i| format!("<li>{}</li>\n", html::escape(i)))
            .collect();
        format!("<h2>{title}</h2>\n<ul>\n{items}</ul>\n")
    };
    body += &list("Taken from the bundle", &summary.taken);
    body += &list("Not modelled", &summary.unmodelled);
    body += "<h2>The replay</h2>\n";
    body += &replay_body(&summary.prediction);
    html::page("fairshare slurm what-if", &body)
}

/// The title of the table of policies against the baseline.
const VERSUS_TITLE: &str =
    "Each user's mean wait under each policy, and the change against the baseline";

/// The trust section's lines: a title, then one line per figure.
fn trust_lines(summary: &WhatIfSummary) -> Vec<String> {
    let t = &summary.trust;
    let baseline = summary.prediction.policies.first();
    let name = baseline.map_or("the baseline", |p| p.policy.as_str());
    let contested = match t.contested_order {
        Some(order) => format!(
            "{} of {} contested pairs started in the real order{} ({FLOOR})",
            text::percent(order),
            t.contested_pairs,
            t.sampled_one_in.map_or(String::new(), |k| format!(
                ", from the pairs of one first start in {k}"
            ))
        ),
        None => "no contested pair: no two users' jobs waited at once, so the order of starts was never a choice".to_owned(),
    };
    let timed = summary.prediction.setting.loop_turns_shown.is_some();
    let untimed = (!timed).then(|| format!("  {UNTIMED}"));
    let lines = vec![
        format!(
            "How far to trust this prediction: {} ({name}) replayed against what really happened",
            match name == ADAPTER_BASELINE {
                true => "the site's adapter",
                false => "the site's own fairshare",
            }
        ),
        format!("  contested order: {contested}"),
        format!(
            "  start error: median {}, p90 {}, over {} jobs ({} of the dump left out: cancelled while they waited, still waiting, or never started by the replay)",
            text::duration(t.median_start_error_s),
            text::duration(t.p90_start_error_s),
            t.jobs,
            t.left_out
        ),
        format!(
            "  users' mean waits within 10 % or 30 s of the record: {} of {}",
            t.users_within(),
            t.users.len()
        ),
    ];
    let window = t.window.as_ref().map(window_line);
    let limits = baseline.and_then(limits_line);
    let pinned = pinned_line(&t.pinned);
    lines
        .into_iter()
        .chain(window)
        .chain(limits)
        .chain(pinned)
        .chain(untimed)
        .collect()
}

/// The most limits the trust section names, those that held the most jobs first.
const SHOWN_LIMITS: usize = 5;

/// How many jobs the site's limits held in the baseline's replay, by limit.
fn limits_line(baseline: &PolicyResult) -> Option<String> {
    let held = &baseline.held_by_limits;
    let jobs: u64 = held.values().sum();
    let mut most: Vec<(&String, &u64)> = held.iter().collect();
    most.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut each: Vec<String> = (most.iter().take(SHOWN_LIMITS))
        .map(|(limit, n)| format!("{limit} {n}"))
        .collect();
    if most.len() > SHOWN_LIMITS {
        each.push(format!(
            "{} more limits in the JSON",
            most.len() - SHOWN_LIMITS
        ));
    }
    (jobs > 0).then(|| {
        format!(
            "  limits: {jobs} jobs held at least once in the replay ({}); the record's own count, from sacct's Reason, is under Taken from the bundle",
            each.join(", ")
        )
    })
}

/// The jobs the replay started as the record did, by what the record says of them.
fn pinned_line(pinned: &[PinnedJobs]) -> Option<String> {
    let each: Vec<String> = (pinned.iter())
        .map(|p| {
            format!(
                "{} {} ({}{})",
                p.jobs,
                p.why,
                p.named.join(", "),
                if p.jobs > p.named.len() { ", …" } else { "" }
            )
        })
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "  started as the record did, and left out of these figures, as the model does not replay what the record says of them: {}",
            each.join("; ")
        )
    })
}

/// What the machine held when the bundle's window opened, and the history charged before it.
fn window_line(w: &WindowStart) -> String {
    let held = match w.processors > 0.0 {
        true => format!(
            "{} of {} processors held ({}) by {} jobs",
            text::fixed(w.processors_held, 0),
            text::fixed(w.processors, 0),
            text::percent(w.processors_held / w.processors),
            w.jobs_running
        ),
        false => format!("{} jobs running", w.jobs_running),
    };
    let history = match &w.history_since {
        Some(since) => format!(
            "history from {since}: {} jobs, {} processor-hours charged before it",
            w.history_jobs,
            text::fixed(w.history_processor_hours, 1)
        ),
        None => format!(
            "no history before it in the bundle ({} jobs that ran across its start charged)",
            w.history_jobs
        ),
    };
    format!(
        "  the window opened at {}: {held}, {} jobs waiting; {history}; the {} jobs eligible before it are left out of these figures",
        w.opens, w.jobs_waiting, w.jobs_before
    )
}

/// What a bundle without the controller's log cannot tell, said under the trust figures.
const UNTIMED: &str = "the bundle holds no slurmctld.log.gz, so every start is known to the whole second and where Slurm's recomputations fall within it is guessed (on one workload of the test cluster a guess a second off moved the contested order by 25 points): `fairshare slurm collect` run on the controller's host copies the log in";

/// Each user's mean wait, real and predicted.
fn user_table(trust: &Trust) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = text::strings(&["user", "jobs", "real mean wait", "predicted", "within"]);
    let rows = (trust.users.iter())
        .map(|u| {
            vec![
                u.user.clone(),
                u.jobs.to_string(),
                text::duration(u.recorded_mean_wait_s),
                text::duration(u.predicted_mean_wait_s),
                if u.within { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    (headers, rows)
}

/// Each user's mean wait under the baseline (the first policy) and each other policy, with the
/// change, beside the user's real mean wait and the model's error for the user (the
/// baseline's predicted mean wait minus the real one, over the jobs the trust figures
/// compare); a change no larger than that error is marked, as the model cannot tell it apart.
fn versus_table(policies: &[PolicyResult], trust: &Trust) -> (Vec<String>, Vec<Vec<String>>) {
    let baseline = &policies[0];
    let mut headers = text::strings(&["user", "real", "model's error"]);
    headers.push(baseline.policy.clone());
    for p in &policies[1..] {
        headers.extend([p.policy.clone(), "change".to_owned()]);
    }
    let rows = (baseline.users.iter())
        .map(|user| {
            let real = trust.users.iter().find(|u| u.user == user.id);
            let error = model_error(trust, &user.id);
            let mut row = vec![
                user.id.clone(),
                real.map_or("–".to_owned(), |u| text::duration(u.recorded_mean_wait_s)),
                error.map_or("–".to_owned(), signed),
                text::duration(user.mean_wait_s),
            ];
            for p in &policies[1..] {
                let wait = mean_wait(p, &user.id);
                let change = wait - user.mean_wait_s;
                row.push(text::duration(wait));
                row.push(marked(change, error));
            }
            row
        })
        .collect();
    (headers, rows)
}

/// One bar per user: the change of its mean wait under `policy` against `baseline`, over a
/// grey band as wide as the model's error for that user, so a bar inside its band is a change
/// the model cannot tell from its error.
fn change_figure(baseline: &PolicyResult, policy: &PolicyResult, trust: &Trust) -> String {
    let changes: Vec<(&str, f64, Option<f64>)> = (baseline.users.iter())
        .map(|u| {
            let change = mean_wait(policy, &u.id) - u.mean_wait_s;
            (u.id.as_str(), change, model_error(trust, &u.id))
        })
        .collect();
    let largest = (changes.iter())
        .flat_map(|&(_, change, error)| [Some(change), error].into_iter().flatten())
        .map(f64::abs)
        .filter(|d| d.is_finite())
        .fold(0.0, f64::max);
    let unit = text::time_unit(largest);
    let bars = changes.iter().map(|&(user, change, error)| Bar {
        label: user.to_owned(),
        value: change / unit.0,
        text: marked(change, error),
        colour: Colour::Palette(if change <= 0.0 { 2 } else { 1 }),
        error: error.map(|e| e / unit.0),
    });
    let chart = BarChart {
        width: 1180,
        x: Axis::new(&format!(
            "{}: change of each user's mean wait against {} ({})",
            policy.policy, baseline.policy, unit.1
        )),
        bars: bars.collect(),
    };
    let caption = format!("Each user's mean wait under {} minus under the baseline {}: green bars left of zero wait less, red bars right of it wait more. The grey band around zero is the model's own error for that user (the baseline's predicted mean wait minus the real one): a bar that ends inside it (*) is a change the model cannot tell from its error.", policy.policy, baseline.policy);
    html::figure(&svg::bar_chart(&chart), &caption)
}

/// What a change marked in the table of policies means.
const WITHIN_ERROR: &str = "* no larger than the model's error for that user: the model cannot tell this change from its own error";

/// A change of wait with its sign, marked `*` when the model cannot tell it from its error.
fn marked(change: f64, error: Option<f64>) -> String {
    let mark = if within_error(change, error) {
        " *"
    } else {
        ""
    };
    signed(change) + mark
}

/// Whether a change of wait (at least half a second: one the table shows) is no larger than
/// the model's error for its user, so the model cannot tell it from its error.
fn within_error(change: f64, error: Option<f64>) -> bool {
    change.abs() >= 0.5 && error.is_some_and(|e| change.abs() <= e.abs())
}

/// The baseline's predicted mean wait of `user` minus the real one, when the trust figures
/// compare any of its jobs.
fn model_error(trust: &Trust, user: &str) -> Option<f64> {
    let u = trust.users.iter().find(|u| u.user == user)?;
    Some(u.predicted_mean_wait_s - u.recorded_mean_wait_s)
}

/// `user`'s mean wait under `policy` (NaN when it has no job there).
fn mean_wait(policy: &PolicyResult, user: &str) -> f64 {
    (policy.users.iter().find(|u| u.id == user)).map_or(f64::NAN, |u| u.mean_wait_s)
}

/// A change of wait, with its sign.
fn signed(seconds: f64) -> String {
    match seconds {
        s if !s.is_finite() => "–".to_owned(),
        s if s.abs() < 0.5 => "0 s".to_owned(),
        s if s > 0.0 => format!("+{}", text::duration(s)),
        s => format!("−{}", text::duration(-s)),
    }
}

/// One line per policy: its verdict (how many users wait less and more, by how much in all,
/// and how many of the changes are within the model's error), then who waits less than under
/// the baseline and who more, the largest first.
fn gains(policies: &[PolicyResult], trust: &Trust) -> Vec<String> {
    let baseline = &policies[0];
    policies[1..]
        .iter()
        .map(|p| {
            let mut changes: Vec<(f64, &str)> = (baseline.users.iter())
                .map(|u| (mean_wait(p, &u.id) - u.mean_wait_s, u.id.as_str()))
                .filter(|(d, _)| d.is_finite() && d.abs() >= 0.5)
                .collect();
            changes.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
            let named = |list: &[&(f64, &str)]| match list.is_empty() {
                true => "nobody".to_owned(),
                false => (list.iter())
                    .map(|(d, u)| format!("{u} ({})", signed(*d)))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let gain: Vec<_> = changes.iter().filter(|(d, _)| *d < 0.0).collect();
            let lose: Vec<_> = changes.iter().rev().filter(|(d, _)| *d > 0.0).collect();
            let total = |list: &[&(f64, &str)]| list.iter().map(|(d, _)| d.abs()).sum::<f64>();
            let within = (changes.iter())
                .filter(|(d, u)| within_error(*d, model_error(trust, u)))
                .count();
            format!(
                "{}: {} users wait {} less in all, {} wait {} more; {within} of the changes within the model's error. Against {}: waits less: {}; waits more: {}.",
                p.policy,
                gain.len(),
                text::duration(total(&gain)),
                lose.len(),
                text::duration(total(&lose)),
                baseline.policy,
                named(&gain),
                named(&lose)
            )
        })
        .collect()
}

/// `text` with its first letter in capitals.
fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}
