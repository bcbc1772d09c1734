//! The report of `fairshare cloud`: a cloud drawn from the Alibaba GPU 2023 node and pod lists
//! run under every runtime policy, each measured by how far users were from what they were
//! owed — the table for the terminal, the page with its charts, and the charts alone (the
//! figures of docs/runtime.md), all from the lab's [`CloudSummary`].

use crate::html;
use crate::svg::{self, Axis, LineChart, Series};
use crate::text::{self, duration, fixed};
use fairshare_lab::cloud::{CloudPolicy, CloudSummary};

/// Chart width and height in pixels.
const SIZE: (u32, u32) = (1180, 380);
/// The run's series are drawn as this many means, so the lines stay readable.
const MEANS: usize = 48;
/// The arriving user's chart shows this many intervals from the arrival (30 minutes at μ = 10 s).
const ARRIVAL_INTERVALS: usize = 180;

/// One chart of the page: the file name `--charts` writes it to, its title, caption and SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudChart {
    /// The file name, e.g. `runtime-cloud-cpu.svg`.
    pub file: &'static str,
    /// The title above it on the page.
    pub title: &'static str,
    /// What it shows, in words.
    pub caption: String,
    /// The chart.
    pub svg: String,
}

/// The cloud as the first lines say it.
fn intro(s: &CloudSummary) -> Vec<(&'static str, String)> {
    let hours = |t: f64| duration(t);
    vec![
        ("cloud", s.scenario.clone()),
        (
            "supply",
            format!(
                "{} cores and {} of memory on {} nodes; {} VCPUs on them ({} per core); disks {} and networks {} each way per node",
                fixed(s.cores, 0),
                text::amount(s.memory_bytes, "B"),
                s.nodes,
                fixed(s.vcpus, 0),
                fixed(s.vcpus / s.cores.max(f64::MIN_POSITIVE), 2),
                rate(s.disk_bytes_per_s),
                rate(s.network_bytes_per_s),
            ),
        ),
        (
            "demand",
            format!(
                "busy and quiet phases of {} on average (busy: every VCPU, quiet: a tenth); a third of the VMs disk-heavy ({} when busy)",
                hours(s.phase_s),
                rate(s.disk_heavy_bytes_per_s),
            ),
        ),
        (
            "run",
            format!(
                "{} intervals of {} ({}); user u{:02} ({} VM{}) arrives at {}; knob profile {}, heaviness metric {}",
                s.intervals,
                duration(s.interval_s),
                hours(s.duration_s),
                s.users,
                s.arriving_workloads,
                if s.arriving_workloads == 1 { "" } else { "s" },
                hours(s.arrival_s),
                s.profile,
                s.metric,
            ),
        ),
        ("lists", format!("{} and {}", s.node_list, s.pods)),
    ]
}

/// Bytes per second for people: `500 MB/s`, `1.25 GB/s` (decimal, as bandwidths are sold),
/// the unit held to its number by a no-break space.
fn rate(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e9 {
        format!("{}\u{a0}GB/s", text::significant(bytes_per_s / 1e9))
    } else {
        format!("{}\u{a0}MB/s", text::significant(bytes_per_s / 1e6))
    }
}

/// The headers of the policies' table.
fn headers() -> Vec<String> {
    text::strings(&[
        "policy",
        "CPU shortfall",
        "before arrival",
        "after arrival",
        "worst user (CPU)",
        "disk shortfall",
        "arriving user (CPU)",
        "settles after",
    ])
}

/// One row per policy.
fn rows(s: &CloudSummary) -> Vec<Vec<String>> {
    let maybe = |v: Option<f64>, digits| v.map_or("–".into(), |v| fixed(v, digits));
    (s.policies.iter())
        .map(|p: &CloudPolicy| {
            vec![
                p.policy.clone(),
                fixed(p.cpu_shortfall_mean, 5),
                maybe(p.cpu_shortfall_before, 5),
                maybe(p.cpu_shortfall_after, 5),
                fixed(p.cpu_worst_mean, 3),
                fixed(p.disk_shortfall_mean, 5),
                maybe(p.arrival_ratio_mean, 3),
                p.settles_after
                    .map_or("never".into(), |k| format!("{k} intervals")),
            ]
        })
        .collect()
}

/// What the columns mean.
const MEASURES: &str = "Means over the intervals. Shortfall: what users were owed (the smaller of an equal part of the cloud and what they wanted) and did not get, summed over users, as a fraction of the cloud's supply; lower is better. Worst user: the least fraction of what they were owed any user got; higher is better. Arriving user: the fraction of the CPU they were owed the last user got from their arrival on. Settles after: intervals from the arrival until they got 90 % of it for six intervals in a row.";

/// Terminal lines are at most this wide, but for the table.
const COLUMNS: usize = 100;

/// `text` in lines of at most `width` characters, broken between words.
fn words(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let line = lines.last_mut().expect("a line");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// The experiment as a terminal table.
pub fn cloud_table(s: &CloudSummary) -> String {
    let items = intro(s);
    let width = items.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
    let lines: String = (items.iter())
        .flat_map(|(t, d)| {
            (words(d, COLUMNS - width - 2).into_iter().enumerate())
                .map(move |(i, line)| format!("{:<width$}  {line}\n", if i == 0 { *t } else { "" }))
        })
        .collect();
    format!(
        "{lines}\n{}\n{}\n",
        text::table(&headers(), &rows(s)),
        words(MEASURES, COLUMNS).join("\n")
    )
}

/// The experiment as a self-contained page: the cloud, the table and the charts.
pub fn cloud_html(s: &CloudSummary) -> String {
    let mut body = vec![
        String::from("<h1>fairshare cloud — runtime fairness on a cloud drawn from the Alibaba GPU 2023 lists</h1>\n"),
        format!(
            "<p>Nodes and VM sizes are rows of the Alibaba GPU 2023 node and pod lists, drawn with seed {}; demand over time, disks and networks are drawn (the trace has none of them). {} users own the VMs with Zipf weights 1/k; the last one's VMs all start at {}. Each policy runs the same cloud; <code>off</code> is the kernel's equal weights, the yardstick.</p>\n",
            s.seed,
            s.users,
            html::escape(&duration(s.arrival_s))
        ),
        format!("<h2>Cloud</h2>\n{}", html::definitions(&intro(s))),
        format!(
            "<h2>Policies</h2>\n{}<p class=\"note\">{}</p>\n",
            html::table(&headers(), &rows(s)),
            html::escape(MEASURES)
        ),
    ];
    for chart in cloud_charts(s) {
        body.push(format!(
            "<h2>{}</h2>\n{}",
            html::escape(chart.title),
            html::figure(&chart.svg, &chart.caption)
        ));
    }
    html::page("fairshare cloud", &body.concat())
}

/// The page's charts: the CPU and disk shortfall and the worst-served user over the run, and
/// the arriving user's first intervals.
pub fn cloud_charts(s: &CloudSummary) -> Vec<CloudChart> {
    let names: Vec<&str> = s.policies.iter().map(|p| p.policy.as_str()).collect();
    let colours = svg::colours_for(&names);
    let chart = |x: &str, y: Axis, hline, pick: &dyn Fn(&CloudPolicy) -> Vec<(f64, f64)>| {
        svg::line_chart(&LineChart {
            size: SIZE,
            x: Axis::new(x).with_zero(),
            y,
            series: (s.policies.iter().zip(&colours))
                .map(|(p, &colour)| Series {
                    label: p.policy.clone(),
                    colour,
                    points: pick(p),
                })
                .collect(),
            hline,
            markers: false,
            legend: true,
        })
    };
    let hours = |k: usize| k as f64 * s.interval_s / 3600.0;
    // Interval k (from 0) ends at (k + 1)·μ; each mean is drawn at the end of its intervals.
    let smoothed = |v: &[f64]| -> Vec<(f64, f64)> {
        let width = v.len().div_ceil(MEANS).max(1);
        (v.chunks(width).enumerate())
            .map(|(i, c)| {
                let mean = c.iter().sum::<f64>() / c.len() as f64;
                (hours(i * width + c.len()), mean)
            })
            .collect()
    };
    let over_run = |what: &str| {
        format!(
            "{what}, each point the mean of {} intervals; the last user arrives at {}.",
            s.intervals.div_ceil(MEANS as u32).max(1),
            duration(s.arrival_s)
        )
    };
    let shown = ARRIVAL_INTERVALS.min(
        (s.policies.iter())
            .map(|p| p.arrival_ratio.len())
            .max()
            .unwrap_or(0),
    );
    vec![
        CloudChart {
            file: "runtime-cloud-cpu.svg",
            title: "CPU owed and not delivered",
            caption: over_run("The CPU users were owed and did not get, as a fraction of the cloud's cores (lower is better)"),
            svg: chart(
                "time (h)",
                Axis::new("CPU owed, not delivered (fraction of the cloud)").with_zero(),
                None,
                &|p| smoothed(&p.cpu_shortfall),
            ),
        },
        CloudChart {
            file: "runtime-cloud-disk.svg",
            title: "Disk writes owed and not delivered",
            caption: over_run("The disk-write bandwidth users were owed and did not get, as a fraction of the cloud's (lower is better)"),
            svg: chart(
                "time (h)",
                Axis::new("disk writes owed, not delivered (fraction)").with_zero(),
                None,
                &|p| smoothed(&p.disk_shortfall),
            ),
        },
        CloudChart {
            file: "runtime-cloud-worst.svg",
            title: "The worst-served user",
            caption: over_run("The least fraction of the CPU they were owed that any user got (higher is better)"),
            svg: chart(
                "time (h)",
                // Its own range: the policies differ by a few hundredths below 1.
                Axis::new("worst user: delivered / owed CPU"),
                Some(1.0),
                &|p| smoothed(&p.cpu_worst),
            ),
        },
        CloudChart {
            file: "runtime-cloud-arrival.svg",
            title: "The arriving user",
            caption: format!(
                "The CPU the last user got over what they were owed, interval by interval, in the {} after they arrive; the line marks the 90 % that “settles after” waits for.",
                duration(shown as f64 * s.interval_s)
            ),
            svg: chart(
                "minutes after the arrival",
                Axis::new("arriving user: delivered / owed CPU").range(0.0, 1.05),
                Some(0.9),
                &|p| {
                    (p.arrival_ratio.iter().take(shown).enumerate())
                        .map(|(k, &r)| ((k + 1) as f64 * s.interval_s / 60.0, r))
                        .collect()
                },
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small summary of two policies over six intervals, the arrival after three.
    fn summary() -> CloudSummary {
        let policy = |name: &str, short: f64, settles| CloudPolicy {
            policy: name.into(),
            cpu_shortfall_mean: short,
            cpu_shortfall_before: Some(short / 2.0),
            cpu_shortfall_after: Some(1.5 * short),
            cpu_worst_mean: 0.9,
            disk_shortfall_mean: 2.0 * short,
            arrival_ratio_mean: Some(0.95),
            settles_after: settles,
            cpu_shortfall: vec![short; 6],
            disk_shortfall: vec![2.0 * short; 6],
            cpu_worst: vec![0.9; 6],
            arrival_ratio: vec![0.95; 3],
        };
        CloudSummary {
            pods: "pods.csv".into(),
            node_list: "nodes.csv".into(),
            scenario: "2 nodes, 2 users, 4 VMs from the Alibaba GPU 2023 lists (seed 1)".into(),
            nodes: 2,
            users: 2,
            workloads: 4,
            seed: 1,
            duration_s: 60.0,
            arrival_s: 30.0,
            phase_s: 1800.0,
            disk_bytes_per_s: 500e6,
            disk_heavy_bytes_per_s: 200e6,
            network_bytes_per_s: 1.25e9,
            profile: "cgroup-v2".into(),
            metric: "greediness".into(),
            interval_s: 10.0,
            intervals: 6,
            cores: 16.0,
            memory_bytes: 64.0 * 1024.0 * 1024.0 * 1024.0,
            vcpus: 20.0,
            arriving_workloads: 1,
            policies: vec![
                policy("off", 0.01, None),
                policy("heaviness", 0.003, Some(2)),
            ],
        }
    }

    #[test]
    fn the_table_has_a_row_per_policy_and_says_what_it_measures() {
        let table = cloud_table(&summary());
        let flat = table
            .split([' ', '\n'])
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains("16 cores and 64.0 GiB of memory on 2 nodes; 20 VCPUs on them (1.25 per core); disks 500\u{a0}MB/s and networks 1.25\u{a0}GB/s"), "{table}");
        let (above, below) = table.split_once("\n\npolicy").expect("the table");
        let below = below.split_once("\n\n").expect("the notes").1;
        for line in above.lines().chain(below.lines()) {
            assert!(line.chars().count() <= COLUMNS, "{line}");
        }
        assert!(
            flat.contains("user u02 (1 VM) arrives at 30.0 s"),
            "{table}"
        );
        let row = |name: &str| {
            (table.lines())
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("{name} missing from\n{table}"))
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            row("off "),
            "0.01000 0.00500 0.01500 0.900 0.02000 0.950 never"
        );
        assert_eq!(
            row("heaviness"),
            "0.00300 0.00150 0.00450 0.900 0.00600 0.950 2 intervals"
        );
        assert!(flat.contains("Shortfall: what users were owed"));
    }

    #[test]
    fn the_page_holds_the_table_and_every_chart() {
        let s = summary();
        let page = cloud_html(&s);
        let charts = cloud_charts(&s);
        assert_eq!(charts.len(), 4);
        for chart in &charts {
            assert!(chart.svg.starts_with("<svg"), "{}", chart.file);
            assert!(page.contains(&chart.svg), "{} not on the page", chart.file);
            assert!(chart.svg.contains("heaviness") && chart.svg.contains("off"));
        }
        assert!(page.contains("<td class=\"l\">heaviness</td>"));
        assert!(!page.contains("<script"));
        assert_eq!(page, cloud_html(&s), "the same summary, the same page");
    }
}
