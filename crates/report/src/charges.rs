//! What fairshare policies charged each user, on the replay page: the heart of the
//! heterogeneous-fairshare study (docs/metacentrum.md). A user whose jobs hold a machine's
//! memory on few processors is charged little under CPU time and much under the Processor
//! Equivalent; this section shows who moves, and what it did to their waits.

use crate::html;
use crate::svg::{self, Axis, Bubble, BubbleChart, Colour, Scale, GREY};
use crate::text::{fixed, in_unit, time_unit};
use fairshare_lab::summary::ReplaySummary;
use fairshare_sim::cluster::PolicyResult;
use std::collections::HashMap;

/// Shares of all charges below this (%) are drawn at it, on the log axes.
const FLOOR_PCT: f64 = 1e-3;

/// How many users the table lists.
const LISTED: usize = 12;

/// Charged more than under the reference: red; less: green.
const MORE: Colour = Colour::Palette(1);
const LESS: Colour = Colour::Palette(2);

/// The section, or nothing when no policy charged users.
pub fn section(summary: &ReplaySummary) -> String {
    let charged: Vec<&PolicyResult> = summary
        .policies
        .iter()
        .filter(|p| p.users.iter().any(|u| u.charged.is_some()))
        .collect();
    let Some(reference) = charged.first() else {
        return String::new();
    };
    let metrics = distinct(&charged);
    let figures: String = metrics[1..].iter().map(|p| figure(reference, p)).collect();
    format!(
        "<h2>What each user was charged</h2>\n<p>Each fairshare policy charges a user's finished jobs its usage metric × the seconds they ran (undecayed). The table lists the users with the largest share of all charges under any policy; the charts compare each metric's shares with those of {} (policies whose shares equal an earlier one's are left out).</p>\n{}{figures}",
        html::escape(&reference.policy),
        table(&metrics, &charged),
    )
}

/// Each user's share of all charges under `policy`, in percent, by user id.
fn shares(policy: &PolicyResult) -> Vec<(&str, f64)> {
    let total: f64 = policy.users.iter().filter_map(|u| u.charged).sum();
    policy
        .users
        .iter()
        .map(|u| {
            let share = match (u.charged, total > 0.0) {
                (Some(c), true) => 100.0 * c / total,
                _ => 0.0,
            };
            (u.id.as_str(), share)
        })
        .collect()
}

/// The charged policies whose shares differ from every earlier one's.
fn distinct<'a>(charged: &[&'a PolicyResult]) -> Vec<&'a PolicyResult> {
    let mut kept: Vec<(&PolicyResult, Vec<(&str, f64)>)> = Vec::new();
    for p in charged {
        let b = shares(p);
        let same = |(_, a): &(&PolicyResult, Vec<(&str, f64)>)| {
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x.1 - y.1).abs() < 1e-9)
        };
        if !kept.iter().any(same) {
            kept.push((p, b));
        }
    }
    kept.into_iter().map(|(p, _)| p).collect()
}

/// The users with the largest share under any metric: their shares, and their mean wait
/// under every charged policy.
fn table(metrics: &[&PolicyResult], charged: &[&PolicyResult]) -> String {
    let mut largest: HashMap<&str, f64> = HashMap::new();
    for p in metrics {
        for (id, share) in shares(p) {
            let most = largest.entry(id).or_insert(share);
            *most = most.max(share);
        }
    }
    let mut top: Vec<(&str, f64)> = largest.into_iter().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    top.truncate(LISTED);
    let longest = charged
        .iter()
        .flat_map(|p| &p.users)
        .map(|u| u.mean_wait_s)
        .fold(0.0, f64::max);
    let unit = time_unit(longest);
    let headers: Vec<String> = std::iter::once("user".to_owned())
        .chain(metrics.iter().map(|p| format!("% charged, {}", p.policy)))
        .chain(charged.iter().map(|p| format!("mean wait, {}", p.policy)))
        .collect();
    let metric_shares: Vec<HashMap<&str, f64>> = metrics
        .iter()
        .map(|p| shares(p).into_iter().collect())
        .collect();
    let rows = top
        .iter()
        .map(|(id, _)| {
            let share = |shares: &HashMap<&str, f64>| {
                let s = shares.get(id);
                s.map_or("–".to_owned(), |s| format!("{} %", fixed(*s, 2)))
            };
            let wait = |p: &PolicyResult| {
                let u = p.users.iter().find(|u| u.id == *id);
                u.map_or("–".to_owned(), |u| in_unit(u.mean_wait_s, unit))
            };
            std::iter::once(id.to_string())
                .chain(metric_shares.iter().map(share))
                .chain(charged.iter().map(|p| wait(p)))
                .collect()
        })
        .collect::<Vec<Vec<String>>>();
    html::table(&headers, &rows)
}

/// One bubble per user: its share of all charges under `reference` (x) and under `policy`
/// (y), on log axes, area by its jobs.
fn figure(reference: &PolicyResult, policy: &PolicyResult) -> String {
    let base: HashMap<&str, f64> = shares(reference).into_iter().collect();
    let jobs: HashMap<&str, u64> = (policy.users.iter())
        .map(|u| (u.id.as_str(), u.tasks_submitted))
        .collect();
    let bubbles: Vec<Bubble> = shares(policy)
        .into_iter()
        .filter_map(|(id, y)| {
            let (x, jobs) = (*base.get(id)?, *jobs.get(id)?);
            let colour = if (y - x).abs() <= 0.05 * x.max(y) {
                GREY
            } else if y > x {
                MORE
            } else {
                LESS
            };
            Some(Bubble {
                x: x.max(FLOOR_PCT),
                y: y.max(FLOOR_PCT),
                weight: (1.0 + jobs as f64).ln(),
                colour,
            })
        })
        .collect();
    let count = |c: Colour| bubbles.iter().filter(|b| b.colour == c).count();
    let axis = |name: &str| Axis::new(name).scale(Scale::Log).range(FLOOR_PCT, 100.0);
    let chart = BubbleChart {
        size: (860, 620),
        x: axis(&format!("% of all charges under {}", reference.policy)),
        y: axis(&format!("% of all charges under {}", policy.policy)),
        legend: vec![
            (format!("charged more: {}", count(MORE)), MORE),
            (format!("charged less: {}", count(LESS)), LESS),
            (format!("within 5 %: {}", count(GREY)), GREY),
        ],
        bubbles,
    };
    let caption = format!(
        "Each bubble is a user (area ∝ log(1 + jobs)); above the diagonal the user carries a larger share of all charges under {} than under {} (shares below {FLOOR_PCT} % are drawn at it).",
        policy.policy, reference.policy
    );
    html::figure(&svg::bubble_chart(&chart), &caption)
}
