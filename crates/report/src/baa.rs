//! The BAA-T experiment's report (`fairshare baa`): the paper's three figures — utilisation
//! after each join, and the CPU and memory held by the two bottleneck sets — for BAA-T, static
//! BAA and DRF side by side, and a table of a few epochs for the terminal.

use crate::html;
use crate::svg::{self, Axis, Colour, LineChart, Series};
use crate::text::{self, fixed, percent};
use fairshare_lab::summary::{BaaSeries, BaaSummary, TimelineSummary};

/// Two named series of one policy.
type Pair<'a> = [(&'static str, &'a [f64]); 2];

/// Chart width in pixels.
const WIDTH: u32 = 1180;

/// The epochs the table shows: after 10 and 100 joins, after the last join, and at the end.
fn shown(s: &BaaSummary) -> Vec<usize> {
    let last = s.joined.len().saturating_sub(1);
    let mut epochs: Vec<usize> = [9, 99, s.users.saturating_sub(1), last]
        .into_iter()
        .filter(|e| *e <= last)
        .collect();
    epochs.sort_unstable();
    epochs.dedup();
    epochs
}

/// What the experiment is, in one sentence.
fn intro(s: &BaaSummary) -> String {
    format!(
        "{} users from {} (seed {}), joining one per epoch, each bringing 1/{} of the CPU and memory; utilisation of what is there:",
        s.users, s.source, s.seed, s.users
    )
}

/// The experiment as a terminal table.
pub fn baa_table(s: &BaaSummary) -> String {
    format!("{}\n\n{}", intro(s), table(s))
}

/// The table of a few epochs, and the epochs with envy.
fn table(s: &BaaSummary) -> String {
    let headers: Vec<String> = ["epoch", "joined", "CPU set", "memory set"]
        .iter()
        .map(|h| h.to_string())
        .chain(
            s.policies
                .iter()
                .flat_map(|p| [format!("{} CPU", p.policy), format!("{} memory", p.policy)]),
        )
        .collect();
    let rows: Vec<Vec<String>> = shown(s)
        .into_iter()
        .map(|e| {
            let counts = [e + 1, s.joined[e], s.cpu_set[e], s.memory_set[e]];
            (counts.iter().map(|c| c.to_string()))
                .chain(
                    s.policies
                        .iter()
                        .flat_map(|p| [percent(p.cpu[e]), percent(p.memory[e])]),
                )
                .collect()
        })
        .collect();
    let envy: Vec<String> = (s.policies.iter())
        .map(|p| format!("{} {}", p.policy, p.envious_epochs))
        .collect();
    let timed: Vec<String> = (s.policies.iter())
        .filter(|p| !p.spread.is_empty())
        .map(|p| {
            let blended = p.kept.iter().filter(|k| **k < 1.0 - 1e-12).count();
            let last = p.spread.last().copied().unwrap_or(0.0);
            format!(
                "{} spread {} at the end, {blended} epochs blended",
                p.policy,
                fixed(last, 3)
            )
        })
        .collect();
    format!(
        "{}\nepochs with envy across sets: {}\nwithin-set spread of what BAA-T's members received since their origin: {}\n",
        text::table(&headers, &rows),
        envy.join(", "),
        timed.join("; ")
    )
}

/// The experiment as a self-contained page.
pub fn baa_html(s: &BaaSummary) -> String {
    let x = || Axis::new("epoch (one user joins per epoch until all have)");
    let pct = |values: &[f64]| -> Vec<(f64, f64)> {
        (values.iter().enumerate())
            .map(|(e, v)| (e as f64 + 1.0, 100.0 * v))
            .collect()
    };
    let chart = |y: &str, series: Vec<Series>| {
        svg::line_chart(&LineChart {
            size: (WIDTH, 420),
            x: x(),
            y: Axis::new(y).range(0.0, 105.0),
            series,
            hline: Some(100.0),
            markers: false,
            legend: true,
        })
    };
    let each = |pick: &dyn Fn(&BaaSeries) -> Pair| -> Vec<Series> {
        (s.policies.iter().enumerate())
            .flat_map(|(i, p)| {
                pick(p)
                    .into_iter()
                    .enumerate()
                    .map(move |(j, (what, values))| Series {
                        label: format!("{} {what}", p.policy),
                        colour: Colour::Palette(2 * i + j),
                        points: pct(values),
                    })
            })
            .collect()
    };
    let utilisation = each(&|p| [("CPU", &p.cpu), ("memory", &p.memory)]);
    let cpu = each(&|p| {
        [
            ("CPU set", &p.cpu_set_cpu),
            ("memory set", &p.memory_set_cpu),
        ]
    });
    let memory = each(&|p| {
        [
            ("CPU set", &p.cpu_set_memory),
            ("memory set", &p.memory_set_memory),
        ]
    });
    let body = [
        String::from("<h1>fairshare baa — bottleneck-aware allocation with time constraint</h1>\n"),
        format!(
            "<p>{} users from {} (seed {}) join one per epoch, each bringing 1/{} of the CPU and memory; then {} epochs pass without joins. BAA-T uses the capacity-consistent sets, the levels' optimum and a catch-up cap of 2; from each newcomer's arrival (the default) with every demand unlimited it gives static BAA's allocation at every epoch, so their lines coincide; from time 0 (origin=global) newcomers catch up on the time before they came.</p>\n",
            s.users,
            html::escape(&s.source),
            s.seed,
            s.users,
            s.joined.len().saturating_sub(s.users)
        ),
        format!("<h2>Policies</h2>\n<pre>{}</pre>\n", html::escape(&table(s))),
        format!(
            "<h2>Figure 1: utilisation</h2>\n{}",
            html::figure(&chart("share of the capacity present in use (%)", utilisation), "CPU and memory in use after each epoch, as a share of what the users present brought.")
        ),
        format!(
            "<h2>Figure 2: CPU of the two sets</h2>\n{}",
            html::figure(&chart("share of the CPU present (%)", cpu), "The CPU held by the users whose bottleneck is CPU and by those whose bottleneck is memory.")
        ),
        format!(
            "<h2>Figure 3: memory of the two sets</h2>\n{}",
            html::figure(&chart("share of the memory present (%)", memory), "The memory held by each set.")
        ),
        format!(
            "<p class=\"note\">At the last epoch: {}.</p>\n",
            html::escape(
                &s.policies
                    .iter()
                    .map(|p| format!(
                        "{} CPU {} and memory {}",
                        p.policy,
                        fixed(100.0 * p.cpu.last().copied().unwrap_or(0.0), 1) + " %",
                        fixed(100.0 * p.memory.last().copied().unwrap_or(0.0), 1) + " %"
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        ),
    ];
    html::page("fairshare baa", &body.concat())
}

/// A timeline run as a terminal table: each user's bottleneck, what it held of it in each
/// epoch, and in all.
pub fn timeline_table(t: &TimelineSummary) -> String {
    let epochs = t.allocations.len();
    let headers: Vec<String> = ["user", "bottleneck"]
        .iter()
        .map(|h| h.to_string())
        .chain((1..=epochs).map(|e| format!("epoch {e}")))
        .chain(std::iter::once("received".to_string()))
        .collect();
    let rows: Vec<Vec<String>> = (t.users.iter().enumerate())
        .map(|(u, id)| {
            let r = t.resources.iter().position(|n| *n == t.bottleneck[u]);
            let held = t.allocations.iter().map(|epoch| match r {
                Some(r) => fixed(epoch[u][r], 3),
                None => "–".to_string(),
            });
            [id.clone(), t.bottleneck[u].clone()]
                .into_iter()
                .chain(held)
                .chain(std::iter::once(fixed(t.received[u], 3)))
                .collect()
        })
        .collect();
    format!(
        "{} over {epochs} epochs: what each user held of its bottleneck, epoch by epoch, and in all\n\n{}",
        t.policy,
        text::table(&headers, &rows)
    )
}
