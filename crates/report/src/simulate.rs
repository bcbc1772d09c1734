//! The simulate report: what the process-level simulator of the bottleneck paper measured, as a
//! terminal table and as a page drawing what the paper draws — who held each resource when (a
//! Gantt chart with the bottleneck intervals above each lane), cumulative service per process,
//! and the tables behind them. Each process keeps one colour on the whole page, its own when
//! it is named after a colour.

use crate::html;
use crate::svg::{self, Axis, Band, Colour, Gantt, LineChart, Series, Span, GREY};
use crate::text::{self, fixed, percent, strings};
use fairshare_sim::process::result::{
    ProcessResult, ResourceResult, ResourceRun, SimulationResult, Spread, SERVICE_SAMPLE_S,
};
use fairshare_sim::stats::RunStats;

/// Width of every chart, pixels.
const WIDTH: u32 = 1180;
/// At most this many Gantt bars are drawn; a longer first run is drawn up to where it reaches
/// them, which keeps the page a few megabytes at most.
const MAX_BARS: usize = 20_000;
/// At most this many points per cumulative-service line.
const MAX_POINTS: usize = 1_000;
/// Seconds between points of a ±1 std band, at least, so the band reads as a band.
const BAND_STEP_S: f64 = 1.0;
/// At most this many points per ±1 std band.
const MAX_BAND_POINTS: usize = 200;
/// Bars closer than this (seconds) count as touching when merged.
const TOUCH_S: f64 = 1e-9;

/// The simulation as text: the run (with its wall-clock time from `stats` when given), the
/// process tables, then one row per resource.
pub fn simulate_table(result: &SimulationResult, stats: Option<&RunStats>) -> String {
    let run: String = run_items(result, stats)
        .iter()
        .map(|(t, d)| format!("{t:<10} {d}\n"))
        .collect();
    let tables = |tables: Vec<Titled>| -> String {
        let table = |(title, h, rows): &Titled| format!("\n{title}\n{}", text::table(h, rows));
        tables.iter().map(table).collect()
    };
    format!(
        "{run}{}{}",
        tables(process_tables(result)),
        tables(resource_tables(result))
    )
}

/// The simulation as a self-contained HTML page.
pub fn simulate_html(result: &SimulationResult) -> String {
    let body = [
        String::from("<h1>fairshare simulate</h1>\n"),
        format!(
            "<h2>Run</h2>\n{}",
            html::definitions(&run_items(result, None))
        ),
        gantt_section(result),
        cumulative_section(result),
        tables_section("Processes", process_tables(result)),
        tables_section("Resources", resource_tables(result)),
    ];
    html::page("fairshare simulate", &body.concat())
}

/// Titled tables as an HTML section headed `head`.
fn tables_section(head: &str, tables: Vec<Titled>) -> String {
    let tables = tables.into_iter().map(|(title, h, rows)| {
        format!(
            "<p class=\"note\">{}</p>\n{}",
            html::escape(&title),
            html::table(&h, &rows)
        )
    });
    format!("<h2>{head}</h2>\n{}", tables.collect::<String>())
}

/// What was simulated, as (term, description) pairs.
fn run_items(r: &SimulationResult, stats: Option<&RunStats>) -> Vec<(&'static str, String)> {
    vec![
        ("scenario", r.scenario.clone()),
        ("policy", r.policy.clone()),
        (
            "runs",
            format!(
                "{} ({}seed {})",
                r.runs,
                if several(r) { "first " } else { "" },
                r.seed
            ),
        ),
        ("simulated", format!("{} s (first run)", fixed(r.end_s, 2))),
        (
            "events",
            match stats {
                Some(s) => format!(
                    "{} in {} s wall ({}/s)",
                    r.events,
                    fixed(s.wall_s, 3),
                    svg::number(s.events_per_s)
                ),
                None => r.events.to_string(),
            },
        ),
    ]
}

/// Whether there are several runs to summarise.
fn several(r: &SimulationResult) -> bool {
    r.runs > 1
}

/// A titled table: title, column titles, rows.
type Titled = (String, Vec<String>, Vec<Vec<String>>);

/// The process tables: the first run, and over all runs when there are several.
fn process_tables(r: &SimulationResult) -> Vec<Titled> {
    let resources = r.resources.iter().map(|res| res.name.as_str());
    let mut first = strings(&["process", "entitlement", "finish (s)"]);
    first.extend(resources.clone().map(|n| format!("{n} (s)")));
    let mut tables = vec![(format!("First run (seed {})", r.seed), first, first_rows(r))];
    if several(r) {
        let mut spread = strings(&["process", "finish mean ± std (s)", "finish min–max (s)"]);
        spread.extend(resources.map(|n| format!("{n} mean ± std (s)")));
        let title = format!(
            "Over the {} runs (finish times of the runs that finished)",
            r.runs
        );
        tables.push((title, spread, spread_rows(r)));
    }
    tables
}

/// One row per process in the first run: entitlement, finish time, service per resource.
fn first_rows(r: &SimulationResult) -> Vec<Vec<String>> {
    let row = |p: &ProcessResult| {
        let finish = p
            .finish_time
            .map_or(String::from("unfinished"), |t| fixed(t, 2));
        let mut row = vec![p.name.clone(), percent(p.entitlement), finish];
        let served = |name: &String| p.consumed.get(name).map_or(dash(), |v| fixed(*v, 2));
        row.extend(r.resources.iter().map(|res| served(&res.name)));
        row
    };
    r.processes.iter().map(row).collect()
}

/// One row per process over all runs: finish time and service per resource, mean ± std.
fn spread_rows(r: &SimulationResult) -> Vec<Vec<String>> {
    let row = |p: &ProcessResult| {
        let finish = p.finish_time_spread;
        let mut row = vec![
            p.name.clone(),
            finish.map_or(dash(), mean_std),
            finish.map_or(dash(), min_max),
        ];
        let spread = |name: &String| p.consumed_spread.as_ref()?.get(name).copied();
        row.extend(
            r.resources
                .iter()
                .map(|res| spread(&res.name).map_or(dash(), mean_std)),
        );
        row
    };
    r.processes.iter().map(row).collect()
}

/// The resource tables: the first run, and over all runs when there are several.
fn resource_tables(r: &SimulationResult) -> Vec<Titled> {
    let first = strings(&[
        "resource",
        "busy (s)",
        "busy",
        "bottleneck (s)",
        "bottleneck",
        "bottleneck intervals",
    ]);
    let mut tables = vec![(
        format!("First run (seed {})", r.seed),
        first,
        resource_rows(r),
    )];
    if several(r) {
        let spread = strings(&[
            "resource",
            "busy mean ± std (s)",
            "bottleneck mean ± std (s)",
            "runs with a bottleneck",
            "a bottleneck from, mean ± std (s)",
        ]);
        let title = format!(
            "Over the {} runs (first onset over the runs that had one)",
            r.runs
        );
        tables.push((title, spread, resource_spread_rows(r)));
    }
    tables
}

/// One row per resource over all runs: busy and bottleneck time, and when it first became a
/// bottleneck.
fn resource_spread_rows(r: &SimulationResult) -> Vec<Vec<String>> {
    let row = |res: &ResourceResult| {
        let of = |value: fn(&ResourceRun) -> Option<f64>| {
            let values: Vec<f64> = res.per_run.iter().filter_map(value).collect();
            (!values.is_empty()).then(|| Spread::of(&values))
        };
        let onsets = res
            .per_run
            .iter()
            .filter(|run| run.bottleneck_from_s.is_some());
        vec![
            res.name.clone(),
            of(|run| Some(run.busy_s)).map_or(dash(), mean_std),
            of(|run| Some(run.bottleneck_s)).map_or(dash(), mean_std),
            format!("{} of {}", onsets.count(), res.per_run.len()),
            of(|run| run.bottleneck_from_s).map_or(dash(), mean_std),
        ]
    };
    r.resources.iter().map(row).collect()
}

/// One row per resource (first run): busy and bottleneck time, also as shares of the run.
fn resource_rows(r: &SimulationResult) -> Vec<Vec<String>> {
    let row = |res: &ResourceResult| {
        let bottleneck = total(&res.bottleneck_intervals);
        vec![
            res.name.clone(),
            fixed(res.busy_s, 2),
            share(res.busy_s, r.end_s),
            fixed(bottleneck, 2),
            share(bottleneck, r.end_s),
            res.bottleneck_intervals.len().to_string(),
        ]
    };
    r.resources.iter().map(row).collect()
}

/// Total length of finite intervals.
fn total(intervals: &[[f64; 2]]) -> f64 {
    let lengths = intervals.iter().map(|[s, e]| (e - s).max(0.0));
    lengths.filter(|d| d.is_finite()).sum()
}

/// `part` as a percentage of a run of `end` seconds, or `–` for an empty run.
fn share(part: f64, end: f64) -> String {
    if end > 0.0 {
        percent(part / end)
    } else {
        dash()
    }
}

/// Mean ± standard deviation, two decimals.
fn mean_std(s: Spread) -> String {
    format!("{} ± {}", fixed(s.mean, 2), fixed(s.std, 2))
}

/// Smallest–largest, two decimals.
fn min_max(s: Spread) -> String {
    format!("{}–{}", fixed(s.min, 2), fixed(s.max, 2))
}

/// The cell of a missing value.
fn dash() -> String {
    String::from("–")
}

/// The legend every chart shares: process names with their entitlements, in process order.
fn process_legend(r: &SimulationResult) -> Vec<(String, Colour)> {
    let entry = |(p, colour): (&ProcessResult, Colour)| {
        (format!("{} ({})", p.name, percent(p.entitlement)), colour)
    };
    r.processes
        .iter()
        .zip(process_colours(r))
        .map(entry)
        .collect()
}

/// Each process's colour, the same on every chart: its name's when it is a colour name (see
/// [`svg::colours_for`]).
fn process_colours(r: &SimulationResult) -> Vec<Colour> {
    let names: Vec<&str> = r.processes.iter().map(|p| p.name.as_str()).collect();
    svg::colours_for(&names)
}

/// The last second to draw, the same on every chart: the first run's end, or the last thing
/// recorded if later (another run may have lasted longer).
fn run_end(r: &SimulationResult) -> f64 {
    let segments = r.timeline.iter().map(|s| s.end);
    let intervals = r.resources.iter().flat_map(|res| &res.bottleneck_intervals);
    let samples = r.cumulative.times_s.iter().copied();
    let times: Vec<f64> = segments
        .chain(intervals.map(|iv| iv[1]))
        .chain(samples)
        .collect();
    largest(&times).max(largest(&[r.end_s]))
}

/// The Gantt bars of the first run, one lane per resource, sorted and with touching bars of
/// the same process merged; segments on unknown resources are dropped, unknown processes grey.
fn gantt_bars(r: &SimulationResult) -> Vec<Span> {
    let lane = |name: &str| r.resources.iter().position(|res| res.name == name);
    let colours = process_colours(r);
    let colour = |name: &str| {
        let i = r.processes.iter().position(|p| p.name == name)?;
        colours.get(i).copied()
    };
    let mut bars: Vec<Span> = r
        .timeline
        .iter()
        .filter_map(|s| {
            let colour = colour(&s.process).unwrap_or(GREY);
            let finite = s.start.is_finite() && s.end.is_finite();
            finite.then_some(Span {
                lane: lane(&s.resource)?,
                start: s.start,
                end: s.end,
                part: (0.0, 1.0),
                colour,
            })
        })
        .collect();
    bars.sort_by(|a, b| a.lane.cmp(&b.lane).then(a.start.total_cmp(&b.start)));
    bars.into_iter().fold(Vec::new(), |mut out, b| {
        match out.last_mut() {
            Some(last)
                if last.lane == b.lane
                    && last.colour == b.colour
                    && b.start <= last.end + TOUCH_S =>
            {
                last.end = last.end.max(b.end)
            }
            _ => out.push(b),
        }
        out
    })
}

/// Where to stop drawing `bars` so at most [`MAX_BARS`] are drawn: `None` when all fit.
fn cut(bars: &[Span]) -> Option<f64> {
    let mut starts: Vec<f64> = bars.iter().map(|b| b.start).collect();
    starts.sort_by(f64::total_cmp);
    starts.get(MAX_BARS).copied()
}

/// The bottleneck intervals as marks above their resource's lane.
fn bottleneck_marks(r: &SimulationResult) -> Vec<Span> {
    let mut marks = Vec::new();
    for (lane, res) in r.resources.iter().enumerate() {
        marks.extend(res.bottleneck_intervals.iter().map(|[start, end]| Span {
            lane,
            start: *start,
            end: *end,
            part: (0.0, 1.0),
            colour: GREY,
        }));
    }
    marks
}

/// The Gantt chart of the first run, with a note when it is empty or cut.
fn gantt_section(r: &SimulationResult) -> String {
    let head = "<h2>Who holds which resource</h2>\n";
    if r.resources.is_empty() {
        return format!("{head}<p class=\"note\">The scenario has no resources.</p>\n");
    }
    let bars = gantt_bars(r);
    let end = run_end(r);
    let cut = cut(&bars);
    let mut legend = process_legend(r);
    legend.push((String::from("bottleneck"), GREY));
    let chart = Gantt {
        width: WIDTH,
        lane_px: 64,
        x: Axis::new("time (s)").range(0.0, cut.unwrap_or(end)),
        lanes: r.resources.iter().map(|res| res.name.clone()).collect(),
        bars,
        marks: bottleneck_marks(r),
        legend,
    };
    let caption = format!("Who holds each resource over time in the first run (seed {}): one lane per resource, bars coloured by process, blank while the resource is idle, and a grey strip above a lane while that resource is a bottleneck.", r.seed);
    format!(
        "{head}{}{}",
        gantt_note(r, cut, end),
        html::figure(&svg::gantt_chart(&chart), &caption)
    )
}

/// A note when the Gantt chart is empty or drawn only up to `cut`.
fn gantt_note(r: &SimulationResult, cut: Option<f64>, end: f64) -> String {
    let note = |text: String| format!("<p class=\"note\">{}</p>\n", html::escape(&text));
    match cut {
        _ if r.timeline.is_empty() => note(String::from("The first run recorded no service, so every lane is blank.")),
        Some(t) => note(format!("The first run has more than {MAX_BARS} bars, so only its first {} s of {} s are drawn; the cumulative service below covers the whole run.", fixed(t, 1), fixed(end, 1))),
        None => String::new(),
    }
}

/// The largest finite value of `values`, or 0.
fn largest(values: &[f64]) -> f64 {
    values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// Every `stride`-th index below `n`, and the last one.
fn sampled(n: usize, stride: usize) -> Vec<usize> {
    let mut picks: Vec<usize> = (0..n).step_by(stride.max(1)).collect();
    if n > 0 && picks.last() != Some(&(n - 1)) {
        picks.push(n - 1);
    }
    picks
}

/// `values` at the picked sample times, as points.
fn points(times: &[f64], values: &[f64], picks: &[usize]) -> Vec<(f64, f64)> {
    let at = |i: &usize| Some((*times.get(*i)?, *values.get(*i)?));
    picks.iter().filter_map(at).collect()
}

/// Cumulative service per process over time: the single run, or the mean over runs with a
/// ±1 std band.
fn cumulative_section(r: &SimulationResult) -> String {
    let head = "<h2>Cumulative service</h2>\n";
    let c = &r.cumulative;
    let n = c.times_s.len();
    if n == 0 {
        return format!("{head}<p class=\"note\">No samples of cumulative service: the run lasted no time.</p>\n");
    }
    let averaged = several(r) && !c.mean.is_empty();
    let lines = if averaged { &c.mean } else { &c.service };
    let picks = sampled(n, n.div_ceil(MAX_POINTS));
    let series =
        r.processes
            .iter()
            .zip(lines)
            .zip(process_colours(r))
            .map(|((p, values), colour)| Series {
                label: format!("{} ({})", p.name, percent(p.entitlement)),
                colour,
                points: points(&c.times_s, values, &picks),
            });
    let chart = LineChart {
        size: (WIDTH, 420),
        x: Axis::new("time (s)").range(0.0, run_end(r)),
        y: Axis::new("cumulative service (s)").with_zero(),
        series: series.collect(),
        hline: None,
        markers: false,
        legend: true,
    };
    let bands = if averaged { bands(r) } else { Vec::new() };
    let what = if averaged {
        format!("Mean cumulative service of each process over the {} runs, all resources together, shaded ±1 standard deviation", r.runs)
    } else {
        String::from("Cumulative service of each process, all resources together")
    };
    let caption = format!("{what}: slope 1 while a process is served continuously, flat while it waits, in between while it shares a resource.");
    format!(
        "{head}{}",
        html::figure(&svg::line_chart_with_bands(&chart, &bands), &caption)
    )
}

/// The ±1 std bands around the mean lines, sampled about every [`BAND_STEP_S`].
fn bands(r: &SimulationResult) -> Vec<Band> {
    let c = &r.cumulative;
    let n = c.times_s.len();
    let sampled_every = match c.times_s.as_slice() {
        [first, second, ..] => second - first,
        _ => SERVICE_SAMPLE_S,
    };
    let step = (BAND_STEP_S / sampled_every).round().max(1.0) as usize;
    let picks = sampled(n, step.max(n.div_ceil(MAX_BAND_POINTS)));
    let band = |((mean, std), colour): ((&Vec<f64>, &Vec<f64>), Colour)| Band {
        colour,
        points: picks
            .iter()
            .filter_map(|k| {
                let (t, m, s) = (*c.times_s.get(*k)?, *mean.get(*k)?, *std.get(*k)?);
                Some((t, (m - s).max(0.0), m + s))
            })
            .collect(),
    };
    c.mean
        .iter()
        .zip(&c.std)
        .take(r.processes.len())
        .zip(process_colours(r))
        .map(band)
        .collect()
}
