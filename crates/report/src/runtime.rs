//! The runtime report: what the fairness service did to a running cloud, beside what the kernel
//! alone would have done — each user's and each workload's share of every contended resource
//! at steady state, the knobs in force at the end, and over time the users' shares, their
//! heaviness and the CPU weights the service set.

use crate::html;
use crate::svg::{self, Axis, Colour, LineChart, Series};
use crate::text::{self, fixed, percent, strings};
use fairshare_sim::runtime::{RuntimeComparison, RuntimeRun};

/// Width of every chart, pixels.
const WIDTH: u32 = 1180;
/// At most this many points per line.
const MAX_POINTS: usize = 1_000;
/// At most this many lines per chart; the rest are named in the caption as left out.
const MAX_LINES: usize = 24;
/// A resource is shown when some user's steady share of it reaches this fraction.
const SHOWN_FROM: f64 = 0.0005;

/// The comparison as text: the run, then the user and workload tables.
pub fn runtime_table(c: &RuntimeComparison) -> String {
    let run: String = run_items(c)
        .iter()
        .map(|(t, d)| format!("{t:<10} {d}\n"))
        .collect();
    let tables: String = tables(c)
        .iter()
        .map(|(title, h, rows)| format!("\n{title}\n{}", text::table(h, rows)))
        .collect();
    format!("{run}{tables}")
}

/// The comparison as a self-contained HTML page.
pub fn runtime_html(c: &RuntimeComparison) -> String {
    let mut body = vec![
        String::from("<h1>fairshare simulate — runtime fairness</h1>\n"),
        format!("<h2>Run</h2>\n{}", html::definitions(&run_items(c))),
    ];
    for ((title, h, rows), head) in tables(c).into_iter().zip(["Users", "Workloads"]) {
        body.push(format!(
            "<h2>{head}</h2>\n<p class=\"note\">{}</p>\n{}",
            html::escape(&title),
            html::table_left(&h, &rows, if head == "Users" { 1 } else { 3 })
        ));
    }
    body.push(String::from("<h2>Shares over time</h2>\n"));
    for r in shown(c) {
        body.push(user_share_figure(&c.service, r));
        if let Some(baseline) = &c.baseline {
            body.push(user_share_figure(baseline, r));
        }
    }
    if c.service.metric.is_some() {
        body.push(String::from("<h2>What the service set</h2>\n"));
        body.push(heaviness_figure(&c.service));
        body.push(cpu_knob_figure(&c.service));
    }
    html::page("fairshare simulate — runtime", &body.concat())
}

/// What was simulated, as (term, description) pairs.
fn run_items(c: &RuntimeComparison) -> Vec<(&'static str, String)> {
    let s = &c.service;
    let (from, to) = s.steady();
    let policy = match &s.metric {
        Some(metric) => format!("{} (metric {metric}, knob profile {})", s.policy, s.profile),
        None => format!(
            "{} (every weight equal, as the kernel's defaults)",
            s.policy
        ),
    };
    vec![
        ("scenario", s.scenario.clone()),
        ("policy", policy),
        (
            "baseline",
            match &c.baseline {
                Some(b) => format!("{} beside, marked “off” in the tables", b.policy),
                None => String::from("none"),
            },
        ),
        (
            "time",
            format!(
                "{} intervals of μ = {} s ({})",
                s.ticks,
                fixed(s.interval_s, 1),
                text::duration(f64::from(s.ticks) * s.interval_s)
            ),
        ),
        (
            "steady",
            format!("intervals {from}–{to} (the last quarter), averaged in the tables"),
        ),
    ]
}

/// The resources worth a column: some user's steady share of them is not negligible.
fn shown(c: &RuntimeComparison) -> Vec<usize> {
    let runs: Vec<&RuntimeRun> = std::iter::once(&c.service).chain(&c.baseline).collect();
    (0..c.service.resources.len())
        .filter(|&r| {
            runs.iter().any(|run| {
                let (from, to) = run.steady();
                run.users
                    .iter()
                    .any(|u| RuntimeRun::mean(&u.share[r], from, to) >= SHOWN_FROM)
            })
        })
        .collect()
}

/// A titled table: title, column titles, rows.
type Titled = (String, Vec<String>, Vec<Vec<String>>);

/// The user table and the workload table.
fn tables(c: &RuntimeComparison) -> Vec<Titled> {
    let resources = shown(c);
    let s = &c.service;
    let (from, to) = s.steady();
    let columns = |head: &mut Vec<String>, of_cloud: bool| {
        for &r in &resources {
            let name = &s.resources[r];
            head.push(if of_cloud {
                name.clone()
            } else {
                format!("{name} of node")
            });
            if c.baseline.is_some() {
                head.push(format!("{name} off"));
            }
        }
    };
    let shares = |row: &mut Vec<String>, of: &dyn Fn(&RuntimeRun) -> &[Vec<f64>]| {
        for &r in &resources {
            row.push(percent(RuntimeRun::mean(&of(s)[r], from, to)));
            if let Some(b) = &c.baseline {
                let (bf, bt) = b.steady();
                row.push(percent(RuntimeRun::mean(&of(b)[r], bf, bt)));
            }
        }
    };
    let mut user_head = strings(&["user"]);
    columns(&mut user_head, true);
    user_head.push(String::from("heaviness at end"));
    let user_rows = (0..s.users.len())
        .map(|u| {
            let mut row = vec![s.users[u].name.clone()];
            shares(&mut row, &|run: &RuntimeRun| &run.users[u].share);
            row.push(
                s.users[u]
                    .heaviness
                    .last()
                    .copied()
                    .flatten()
                    .map_or(String::from("–"), |h| fixed(h, 3)),
            );
            row
        })
        .collect();
    let mut workload_head = strings(&["workload", "owner", "node"]);
    columns(&mut workload_head, false);
    workload_head.extend(strings(&["priority", "cpu", "io", "memory", "network"]));
    let workload_rows = (0..s.workloads.len())
        .map(|w| {
            let series = &s.workloads[w];
            let mut row = vec![
                series.name.clone(),
                series.owner.clone(),
                series.node.clone(),
            ];
            shares(&mut row, &|run: &RuntimeRun| &run.workloads[w].share);
            row.extend(knob_cells(series.knobs.last().copied().flatten()));
            row
        })
        .collect();
    vec![
        (
            format!("Users: mean share of the cloud over intervals {from}–{to}; heaviness at the last interval"),
            user_head,
            user_rows,
        ),
        (
            format!("Workloads: mean share of their node over intervals {from}–{to}; knobs in force in the last interval"),
            workload_head,
            workload_rows,
        ),
    ]
}

/// The cells of a knob setting: priority, CPU, I/O, memory, network (`–` where none).
fn knob_cells(knobs: Option<fairshare_core::heaviness::knobs::KnobValues>) -> Vec<String> {
    let dash = || String::from("–");
    match knobs {
        Some(k) => vec![
            k.priority.to_string(),
            k.cpu.to_string(),
            k.io.to_string(),
            k.memory.map_or_else(dash, |m| m.to_string()),
            k.network.map_or_else(dash, |n| n.to_string()),
        ],
        None => vec![dash(); 5],
    }
}

/// The points of a per-interval series against time (end of each interval), thinned to at
/// most [`MAX_POINTS`]; `None` values are left out.
fn points(run: &RuntimeRun, values: impl Iterator<Item = Option<f64>>) -> Vec<(f64, f64)> {
    let stride = (run.ticks as usize).div_ceil(MAX_POINTS).max(1);
    values
        .enumerate()
        .filter(|(k, _)| k % stride == 0 || k + 1 == run.ticks as usize)
        .filter_map(|(k, v)| v.map(|v| ((k + 1) as f64 * run.interval_s, v)))
        .collect()
}

/// A colour for each of `names`.
fn colours(names: &[&String]) -> Vec<Colour> {
    let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
    svg::colours_for(&names)
}

/// A line chart over the run's time.
fn chart(run: &RuntimeRun, y: Axis, series: Vec<Series>, hline: Option<f64>) -> String {
    svg::line_chart(&LineChart {
        size: (WIDTH, 360),
        x: Axis::new("time (s)").range(0.0, f64::from(run.ticks) * run.interval_s),
        y,
        series,
        hline,
        markers: false,
        legend: true,
    })
}

/// A caption's note on lines left out.
fn left_out(total: usize, what: &str) -> String {
    if total > MAX_LINES {
        format!(" The first {MAX_LINES} of {total} {what} are drawn.")
    } else {
        String::new()
    }
}

/// One line per named series of per-interval values (the first [`MAX_LINES`]), each in its
/// name's colour.
fn lines<'a>(
    run: &RuntimeRun,
    named: impl ExactSizeIterator<Item = (&'a String, Vec<Option<f64>>)>,
) -> Vec<Series> {
    let named: Vec<(&String, Vec<Option<f64>>)> = named.take(MAX_LINES).collect();
    let names: Vec<&String> = named.iter().map(|(n, _)| *n).collect();
    named
        .iter()
        .zip(colours(&names))
        .map(|((name, values), colour)| Series {
            label: (*name).clone(),
            colour,
            points: points(run, values.iter().copied()),
        })
        .collect()
}

/// Each user's share of resource `r` of the cloud over time.
fn user_share_figure(run: &RuntimeRun, r: usize) -> String {
    let series = lines(
        run,
        run.users
            .iter()
            .map(|u| (&u.name, u.share[r].iter().map(|&v| Some(v)).collect())),
    );
    let y = Axis::new(&format!("share of the cloud's {}", run.resources[r])).with_zero();
    html::figure(
        &chart(run, y, series, None),
        &format!(
            "{} — each user's share of the cloud's {} in each interval, policy {}.{}",
            run.resources[r],
            run.resources[r],
            run.policy,
            left_out(run.users.len(), "users")
        ),
    )
}

/// Each user's heaviness over time.
fn heaviness_figure(run: &RuntimeRun) -> String {
    let series = lines(
        run,
        run.users.iter().map(|u| (&u.name, u.heaviness.clone())),
    );
    html::figure(
        &chart(run, Axis::new("user heaviness h_u"), series, Some(0.0)),
        &format!(
            "User heaviness at the end of each interval: above 0 a user runs heavier than its \
             endowment and yields, below 0 lighter and gains.{}",
            left_out(run.users.len(), "users")
        ),
    )
}

/// Each workload's CPU weight over time.
fn cpu_knob_figure(run: &RuntimeRun) -> String {
    let series = lines(
        run,
        run.workloads.iter().map(|w| {
            let cpu = w.knobs.iter().map(|k| k.map(|k| k.cpu as f64)).collect();
            (&w.name, cpu)
        }),
    );
    let y = Axis::new(&format!("CPU weight ({})", run.profile)).with_zero();
    html::figure(
        &chart(run, y, series, None),
        &format!(
            "The CPU weight each workload ran under, set from the previous interval's \
             measurements (none before the service first saw it).{}",
            left_out(run.workloads.len(), "workloads")
        ),
    )
}
