//! The sweep report: the SDRF paper's Figures 4–6 over a grid of capacity fractions × δ, as a
//! terminal table and as a page.

use crate::html;
use crate::replay::NEVER_FIT_WARNING;
use crate::setting;
use crate::svg::{
    self, delta_label, Axis, Bubble, BubbleChart, Colour, LineChart, Scale, Series, GREY,
};
use crate::text::{self, duration, fixed, percent};
use fairshare_lab::summary::{SweepCell, SweepSummary};
use fairshare_sim::cluster::{PolicyResult, UserResult};

/// The ε the paper finds best (δ = 1 − 10⁻⁶), used for Figure 5.
const BEST_EPSILON: f64 = 1e-6;
/// Figure 5's colours of users better off under SDRF (bluish green) and under DRF (vermillion).
const BETTER: Colour = Colour::Palette(2);
const WORSE: Colour = Colour::Palette(1);

/// The grid of a sweep: its fractions (ascending) and SDRF ε (descending, δ ascending).
struct Grid<'a> {
    fractions: Vec<f64>,
    epsilons: Vec<f64>,
    cells: &'a [SweepCell],
}

impl<'a> Grid<'a> {
    fn new(cells: &'a [SweepCell]) -> Self {
        let mut fractions: Vec<f64> = cells
            .iter()
            .map(|c| c.fraction)
            .filter(|f| f.is_finite())
            .collect();
        let mut epsilons: Vec<f64> = cells
            .iter()
            .filter_map(|c| c.epsilon)
            .filter(|e| e.is_finite() && *e > 0.0)
            .collect();
        fractions.sort_by(f64::total_cmp);
        fractions.dedup();
        epsilons.sort_by(|a, b| b.total_cmp(a));
        epsilons.dedup();
        Grid {
            fractions,
            epsilons,
            cells,
        }
    }

    /// The result at `fraction` for `epsilon` (`None` = the DRF baseline).
    fn result(&self, fraction: f64, epsilon: Option<f64>) -> Option<&'a PolicyResult> {
        self.cells
            .iter()
            .find(|c| c.fraction == fraction && c.epsilon == epsilon)
            .map(|c| &c.result)
    }

    /// The most tasks that can never fit at `fraction` over its cells (all cells of one
    /// fraction share the capacity), with the tasks submitted there.
    fn never_fit(&self, fraction: f64) -> Option<(u64, u64)> {
        self.cells
            .iter()
            .filter(|c| c.fraction == fraction)
            .map(|c| (c.result.tasks_never_fit, c.result.tasks_submitted))
            .max()
    }

    /// `1 − W̄(SDRF) / W̄(DRF)` at `fraction`, when both runs exist and DRF waited at all.
    fn reduction(&self, fraction: f64, epsilon: f64) -> Option<f64> {
        let drf = self.result(fraction, None)?.user_mean_wait_s;
        let sdrf = self.result(fraction, Some(epsilon))?.user_mean_wait_s;
        let r = 1.0 - sdrf / drf;
        (drf > 0.0 && r.is_finite()).then_some(r)
    }
}

/// k of δ = 1 − 10⁻ᵏ for `epsilon`.
fn nines(epsilon: f64) -> f64 {
    -epsilon.log10()
}

/// δ written the paper's way when ε is a power of ten, else as 1 − ε.
fn delta_name(epsilon: f64) -> String {
    let k = nines(epsilon);
    if (k - k.round()).abs() < 1e-6 {
        delta_label(k.round() as i32)
    } else {
        format!("1−{}", svg::number(epsilon))
    }
}

/// The sweep as text: setting, input counts, the capacities of the grid, any warnings, then
/// the grid with one row per fraction and one reduction column per δ.
pub fn sweep_table(summary: &SweepSummary) -> String {
    let grid = Grid::new(&summary.cells);
    let warnings: String = sweep_warnings(&grid)
        .iter()
        .map(|w| format!("warning: {w}\n"))
        .collect();
    format!(
        "{}\n{}\n{}\nCapacities of the grid:\n{}{warnings}\n{REDUCTION_TITLE}:\n{}",
        setting::setting_text(&sweep_setting(summary, &grid)),
        setting::input_table(&summary.input),
        shards_text(summary),
        text::table(&capacity_headers(summary), &capacity_rows(summary, &grid)),
        text::table(&grid_headers(&grid), &grid_rows(&grid))
    )
}

/// Title of the grid of reductions.
const REDUCTION_TITLE: &str =
    "Reduction of the users' mean waiting time vs DRF at the same capacity (1 − W/W_DRF)";

/// Which part of the grid this output holds, in the terms of `--shard i/n`.
fn shards_text(summary: &SweepSummary) -> String {
    let n = summary.shards;
    let name = |i: &usize| format!("{i}/{n}");
    let missing: Vec<String> = (0..n)
        .filter(|i| !summary.shard_ids.contains(i))
        .map(|i| name(&i))
        .collect();
    let held: Vec<String> = summary.shard_ids.iter().map(name).collect();
    let cells = summary.cells.len();
    match (n, held.len(), missing.len()) {
        (1, _, 0) => format!("The whole grid in one run (not split into shards): {cells} cells"),
        (_, _, 0) => format!("All {n} shards merged: the whole grid, {cells} cells"),
        (_, 1, _) => format!(
            "Shard {} only (--shard {}): part of the grid, {cells} cells",
            held[0], held[0]
        ),
        _ => format!(
            "Shards {} merged, {} missing: part of the grid, {cells} cells",
            held.join(", "),
            missing.join(", ")
        ),
    }
}

/// The setting of a sweep: the shared items, with the capacity given as the grid's range.
fn sweep_setting<'a>(summary: &'a SweepSummary, grid: &Grid) -> Vec<(&'a str, String)> {
    let mut items = setting::setting_items(&summary.setting);
    let range = match (grid.fractions.first(), grid.fractions.last()) {
        (Some(lo), Some(hi)) => format!(
            "{} to {} × mean demand, {} fractions (capacities of the grid below)",
            fixed(*lo, 2),
            fixed(*hi, 2),
            grid.fractions.len()
        ),
        _ => String::from("– (no cells)"),
    };
    for item in items.iter_mut().filter(|(t, _)| *t == "capacity") {
        item.1 = range.clone();
    }
    items
}

/// Column titles of the capacity table: the fraction, each resource with its unit, never fit.
fn capacity_headers(summary: &SweepSummary) -> Vec<String> {
    let mut h = vec![String::from("fraction")];
    h.extend(
        summary
            .setting
            .resources
            .iter()
            .map(|r| format!("capacity {r}")),
    );
    h.push(String::from("tasks never fit"));
    h
}

/// One row per fraction: the pool it simulates (the fraction × the mean demand, which is the
/// setting's capacity at fraction 1) and the tasks that can never fit it.
fn capacity_rows(summary: &SweepSummary, grid: &Grid) -> Vec<Vec<String>> {
    let setting = &summary.setting;
    let row = |f: &f64| {
        let capacity: Vec<f64> = setting.capacity.iter().map(|c| c * f).collect();
        let mut r = vec![fixed(*f, 2)];
        r.extend(setting::amount_list(setting, &capacity));
        r.push(
            grid.never_fit(*f)
                .map_or(String::from("–"), |(n, of)| format!("{n} of {of}")),
        );
        r
    };
    grid.fractions.iter().map(row).collect()
}

/// Fractions at which more than [`NEVER_FIT_WARNING`] of the tasks can never fit.
fn sweep_warnings(grid: &Grid) -> Vec<String> {
    grid.fractions
        .iter()
        .filter_map(|f| {
            let (n, of) = grid.never_fit(*f)?;
            (n as f64 > NEVER_FIT_WARNING * of as f64).then(|| {
                format!(
                    "at capacity {} × mean demand, {n} of {of} tasks ({}) can never fit: they are counted apart, not as unfinished, and left out of every wait, so the waits there describe only the tasks that fit",
                    fixed(*f, 2),
                    percent(n as f64 / of as f64)
                )
            })
        })
        .collect()
}

/// Column titles of the grid table.
fn grid_headers(grid: &Grid) -> Vec<String> {
    let mut h = vec![String::from("fraction"), String::from("DRF user-mean wait")];
    h.extend(
        grid.epsilons
            .iter()
            .map(|e| format!("δ={}", delta_name(*e))),
    );
    h
}

/// One row per fraction, matching [`grid_headers`].
fn grid_rows(grid: &Grid) -> Vec<Vec<String>> {
    let row = |f: &f64| {
        let drf = grid
            .result(*f, None)
            .map_or(String::from("–"), |r| duration(r.user_mean_wait_s));
        let mut r = vec![fixed(*f, 2), drf];
        r.extend(grid.epsilons.iter().map(|e| {
            grid.reduction(*f, *e).map_or(String::from("–"), |x| {
                format!("{} %", fixed(100.0 * x, 1))
            })
        }));
        r
    };
    grid.fractions.iter().map(row).collect()
}

/// The sweep as a self-contained HTML page with Figures 4–6.
pub fn sweep_html(summary: &SweepSummary) -> String {
    let grid = Grid::new(&summary.cells);
    let warnings: String = sweep_warnings(&grid)
        .iter()
        .map(|w| format!("<p class=\"warning\">Warning: {}</p>\n", html::escape(w)))
        .collect();
    let body = [
        String::from("<h1>fairshare sweep</h1>\n"),
        format!("<p class=\"note\">{}.</p>\n", html::escape(&shards_text(summary))),
        setting::section(&sweep_setting(summary, &grid), &summary.input),
        format!(
            "<h2>Capacities</h2>\n<p>Each fraction simulates a pool of that fraction of the trace's mean demand. Tasks that never fit are larger than that pool: they never start and are left out of the waits.</p>\n{}{warnings}",
            html::table(&capacity_headers(summary), &capacity_rows(summary, &grid))
        ),
        format!(
            "<h2>Reduction of mean waiting time vs DRF</h2>\n<p>{}.</p>\n{}",
            html::escape(REDUCTION_TITLE),
            html::table(&grid_headers(&grid), &grid_rows(&grid))
        ),
        format!("<h2>Figure 4 — waiting time</h2>\n{}", figure4(&grid)),
        format!(
            "<h2>Figure 5 — completed tasks per user</h2>\n{}{}",
            drained_note(summary),
            figure5(&grid)
        ),
        format!("<h2>Figure 6 — live-tree events</h2>\n{}", figure6(&grid)),
    ];
    html::page("fairshare sweep", &body.concat())
}

/// A warning that Figure 5 says nothing when every task ran to completion.
fn drained_note(summary: &SweepSummary) -> &'static str {
    if summary.setting.horizon_s.is_none() {
        "<p class=\"note\">This sweep ran until every task finished (<code>--drain</code>), so every user completed all its tasks under every policy. Completion ratios need a horizon: run the sweep without <code>--drain</code>.</p>\n"
    } else {
        ""
    }
}

/// Figure 4: reduction vs DRF (%) against capacity fraction, one line per δ.
fn figure4(grid: &Grid) -> String {
    let series: Vec<Series> = grid
        .epsilons
        .iter()
        .enumerate()
        .map(|(i, e)| Series {
            label: format!("δ = {}", delta_name(*e)),
            colour: Colour::Palette(i),
            points: grid
                .fractions
                .iter()
                .filter_map(|f| Some((*f, 100.0 * grid.reduction(*f, *e)?)))
                .collect(),
        })
        .collect();
    let mean =
        |s: &Series| s.points.iter().map(|p| p.1).sum::<f64>() / s.points.len().max(1) as f64;
    let best = series
        .iter()
        .filter(|s| !s.points.is_empty())
        .max_by(|a, b| mean(a).total_cmp(&mean(b)));
    let verdict = best.map_or(
        String::from("No fraction has both a DRF and an SDRF run, so there is nothing to compare."),
        |s| {
            format!(
                "Here the best is {}, with a mean reduction of {} %.",
                s.label,
                fixed(mean(s), 1)
            )
        },
    );
    let chart = LineChart {
        size: (1180, 420),
        x: Axis::new("capacity (fraction of the mean demand)"),
        y: Axis::new("reduction of users' mean wait (%)").with_zero(),
        series,
        hline: Some(0.0),
        markers: true,
        legend: true,
    };
    let caption = format!(
        "Each line is one δ: points above the grey zero line mean SDRF made users wait less than DRF at that capacity; look for the highest line and for larger gains at smaller capacity. {verdict}"
    );
    html::figure(&svg::line_chart(&chart), &caption)
}

/// Figure 5: per-user completion ratio under DRF (x) and SDRF (y), at δ = 1 − 10⁻⁶ and the
/// smallest fraction, or the nearest cell that exists.
fn figure5(grid: &Grid) -> String {
    let candidates = grid
        .fractions
        .iter()
        .flat_map(|f| grid.epsilons.iter().map(move |e| (*f, *e)));
    let distance = |e: f64| (nines(e) - nines(BEST_EPSILON)).abs();
    let chosen = candidates
        .filter(|(f, e)| grid.result(*f, None).is_some() && grid.result(*f, Some(*e)).is_some())
        .min_by(|a, b| {
            distance(a.1)
                .total_cmp(&distance(b.1))
                .then(a.0.total_cmp(&b.0))
        });
    let Some((fraction, epsilon)) = chosen else {
        return String::from("<p class=\"note\">No fraction has both a DRF and an SDRF run, so Figure 5 cannot be drawn.</p>\n");
    };
    let (Some(drf), Some(sdrf)) = (
        grid.result(fraction, None),
        grid.result(fraction, Some(epsilon)),
    ) else {
        return String::new();
    };
    let bubbles = user_bubbles(drf, sdrf);
    let count = |c: Colour| bubbles.iter().filter(|b| b.colour == c).count();
    let (above, below, on) = (count(BETTER), count(WORSE), count(GREY));
    let chart = BubbleChart {
        size: (860, 620),
        x: Axis::new("tasks completed / tasks that fit, under DRF").range(-0.03, 1.03),
        y: Axis::new("tasks completed / tasks that fit, under SDRF").range(-0.03, 1.03),
        bubbles,
        legend: vec![
            (format!("SDRF better: {above}"), BETTER),
            (format!("DRF better: {below}"), WORSE),
            (format!("equal: {on}"), GREY),
        ],
    };
    let fallback = if epsilon == BEST_EPSILON && Some(&fraction) == grid.fractions.first() {
        ""
    } else {
        " (the paper's δ = 1−10⁻⁶ at the smallest capacity is not in this sweep; this is the nearest cell present)"
    };
    let caption = format!(
        "Each bubble is a user (area ∝ log(1 + tasks submitted)) at δ = {} and capacity {}{fallback}: bubbles above the diagonal completed a larger share of their tasks that fit the capacity under SDRF than under DRF (tasks that never fit are left out; users with none that fit are not drawn). Above the line: {above}; below: {below}; on it: {on}.",
        delta_name(epsilon),
        fixed(fraction, 2)
    );
    html::figure(&svg::bubble_chart(&chart), &caption)
}

/// One bubble per user present in both runs with tasks submitted: green above the diagonal,
/// red below, grey on it.
fn user_bubbles(drf: &PolicyResult, sdrf: &PolicyResult) -> Vec<Bubble> {
    let fitting = |u: &UserResult| u.tasks_submitted.saturating_sub(u.tasks_never_fit);
    let ratio = |u: &UserResult| u.tasks_completed as f64 / fitting(u) as f64;
    drf.users
        .iter()
        .filter(|u| fitting(u) > 0)
        .filter_map(|d| {
            let s = sdrf.users.iter().find(|s| s.id == d.id && fitting(s) > 0)?;
            let (x, y) = (ratio(d), ratio(s));
            let colour = if y > x + 1e-9 {
                BETTER
            } else if y < x - 1e-9 {
                WORSE
            } else {
                GREY
            };
            Some(Bubble {
                x,
                y,
                weight: (d.tasks_submitted as f64).ln_1p(),
                colour,
            })
        })
        .collect()
}

/// Figure 6: live-tree events (log scale) against δ, one line per fraction.
fn figure6(grid: &Grid) -> String {
    let series: Vec<Series> = grid
        .fractions
        .iter()
        .enumerate()
        .map(|(i, f)| Series {
            label: format!("capacity {}", fixed(*f, 2)),
            colour: Colour::Palette(i),
            points: grid
                .epsilons
                .iter()
                .filter_map(|e| {
                    Some((
                        nines(*e),
                        grid.result(*f, Some(*e))?.livetree_events? as f64,
                    ))
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return String::from("<p class=\"note\">No SDRF run reported live-tree events, so Figure 6 cannot be drawn.</p>\n");
    }
    let zeros = series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.1 <= 0.0)
        .count();
    let ks: Vec<f64> = grid.epsilons.iter().map(|e| nines(*e)).collect();
    let (first, last) = (
        ks.first().copied().unwrap_or(1.0),
        ks.last().copied().unwrap_or(1.0),
    );
    let chart = LineChart {
        size: (1180, 420),
        x: Axis::new("discount δ = 1 − 10⁻ᵏ")
            .scale(Scale::Delta)
            .range(first - 0.2, last + 0.2),
        y: Axis::new("live-tree events (log scale)").scale(Scale::Log),
        series,
        hline: None,
        markers: true,
        legend: true,
    };
    let missing = match zeros {
        0 => String::new(),
        n => format!(" Runs with no events, which a log scale cannot show: {n}."),
    };
    let caption = format!("Live-tree events (log scale) per δ, one line per capacity: the work SDRF's kinetic tree does grows as δ moves away from 1 (left) and as capacity gets scarcer. fairshare counts its tournament's certificates that fell due, fewer than the swap events of the paper's sorted order (about 2·10⁴ at δ = 1−10⁻⁶, 5·10⁶ at 1−10⁻¹, over a month).{missing}");
    html::figure(&svg::line_chart(&chart), &caption)
}
