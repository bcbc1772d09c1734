//! Prints the statistics over all runs of the bottleneck paper's figures, for
//! `docs/bottleneck.md`: every measure as mean ± standard deviation (min–max) over the
//! scenario's runs (20 seeds for the randomised figures), under the global priority and under
//! per-resource lags.
//!
//! `cargo run --release -p fairshare-sim --example figures`

#[path = "../tests/figures/mod.rs"]
mod figures;

use fairshare_sim::process::result::{SimulationResult, Spread};
use fairshare_sim::scenario::ProcessPolicy;
use figures::*;
use std::collections::HashMap;

/// One measure of one figure.
struct Row {
    figure: &'static str,
    prefix: &'static str,
    /// The quantum, where the row reads the scenario with another.
    quantum: Option<f64>,
    /// Whether every request takes its mean (the row reads a randomised scenario with fixed
    /// service times).
    fixed: bool,
    what: &'static str,
    value: fn(&SimulationResult) -> Option<f64>,
}

const fn row(
    figure: &'static str,
    prefix: &'static str,
    what: &'static str,
    value: fn(&SimulationResult) -> Option<f64>,
) -> Row {
    Row {
        figure,
        prefix,
        quantum: None,
        fixed: false,
        what,
        value,
    }
}

const fn with_quantum(quantum: f64, row: Row) -> Row {
    Row {
        quantum: Some(quantum),
        ..row
    }
}

const fn fixed(row: Row) -> Row {
    Row { fixed: true, ..row }
}

/// Fig. 14: the fraction of the CPU grants of `cpuheavy` and `both`, whose CPU requests are
/// drawn around 0.1 s, that are shorter than 20 ms: remainders of a request split by the quantum.
fn short_grants(r: &SimulationResult) -> Option<f64> {
    let grants: Vec<f64> = r
        .timeline
        .iter()
        .filter(|s| &*s.resource == "CPU_CS" && matches!(&*s.process, "cpuheavy" | "both"))
        .map(|s| s.end - s.start)
        .collect();
    let short = grants.iter().filter(|d| **d < 0.02).count();
    Some(short as f64 / grants.len() as f64)
}

const ROWS: &[Row] = &[
    row("4", "fig04", "blue's network share, 5–40 s", |r| {
        Some(r.share("blue", "NET_CS", 5.0, 40.0))
    }),
    row("4", "fig04", "disk green : red, 5–45 s", |r| {
        Some(r.share("green", "DISK_CS", 5.0, 45.0) / r.share("red", "DISK_CS", 5.0, 45.0))
    }),
    row(
        "5",
        "fig05",
        "red's exclusive CPU after a disk visit, s",
        |r| red_catch_up(r, Some("DISK_CS")),
    ),
    row("5", "fig05", "red completes, s", |r| r.finish("red")),
    row(
        "6",
        "fig06-suspension.toml",
        "red-only CPU after a suspension, s",
        |r| red_catch_up(r, None),
    ),
    row("8c", "fig08c", "CPU red share, 7–11 s", |r| {
        Some(r.share("red", "CPU_CS", 7.0, 11.0))
    }),
    row("8c", "fig08c", "CPU green share, 7–11 s", |r| {
        Some(r.share("green", "CPU_CS", 7.0, 11.0))
    }),
    row("8c", "fig08c", "disk green share, 7–11 s", |r| {
        Some(r.share("green", "DISK_CS", 7.0, 11.0))
    }),
    row("9", "fig09", "purple completes, s", |r| r.finish("purple")),
    row("9", "fig09", "purple's total wait, s", |r| {
        Some(total_wait(r, "purple"))
    }),
    row("9", "fig09", "first other completion, s", |r| {
        ["blue", "green", "red"]
            .iter()
            .filter_map(|p| r.finish(p))
            .reduce(f64::min)
    }),
    row(
        "10a",
        "fig10a",
        "purple's disk share while all run (entitled 0.40)",
        |r| Some(share_while_all_run(r, "purple", "DISK_CS")),
    ),
    row("10a", "fig10a", "purple's CPU share while all run", |r| {
        Some(share_while_all_run(r, "purple", "CPU_CS"))
    }),
    row("10a", "fig10a", "purple's total wait, s", |r| {
        Some(total_wait(r, "purple"))
    }),
    row(
        "10b",
        "fig10b",
        "purple's service ÷ others' mean, while all run",
        |r| Some(purple_over_others(r)),
    ),
    row(
        "10b",
        "fig10b",
        "purple's disk share while all run (entitled 0.10)",
        |r| Some(share_while_all_run(r, "purple", "DISK_CS")),
    ),
    row(
        "11 rand",
        "fig11-ring-rand",
        "last completion ÷ first",
        |r| Some(completion_spread(r)),
    ),
    row("11 rand", "fig11-ring-rand", "R0 busy fraction", |r| {
        Some(busy_fraction(r, "R0_CS"))
    }),
    row(
        "11 rand",
        "fig11-ring-rand",
        "R0 a bottleneck, fraction of 3 s–first completion",
        |r| Some(bottleneck_until_first_completion(r, "R0_CS")),
    ),
    with_quantum(
        0.1,
        row(
            "11 rand",
            "fig11-ring-rand",
            "Q 0.1: R0 a bottleneck, fraction of 3 s–first completion",
            |r| Some(bottleneck_until_first_completion(r, "R0_CS")),
        ),
    ),
    with_quantum(
        0.1,
        row(
            "11 rand",
            "fig11-ring-rand",
            "Q 0.1: last completion ÷ first",
            |r| Some(completion_spread(r)),
        ),
    ),
    row("12", "fig12", "CPU blue share, 8–24 s", |r| {
        Some(r.share("blue", "CPU_CS", 8.0, 24.0))
    }),
    row("12", "fig12", "CPU red share, 8–24 s", |r| {
        Some(r.share("red", "CPU_CS", 8.0, 24.0))
    }),
    row("12", "fig12", "CPU green share, 8–24 s", |r| {
        Some(r.share("green", "CPU_CS", 8.0, 24.0))
    }),
    row("12", "fig12", "disk red share, 8–24 s", |r| {
        Some(r.share("red", "DISK_CS", 8.0, 24.0))
    }),
    row(
        "12",
        "fig12",
        "any resource a bottleneck before 5 s, s",
        |r| {
            Some(
                ["CPU_CS", "DISK_CS", "NET_CS"]
                    .iter()
                    .map(|x| r.bottleneck_time(x, 0.0, 5.0))
                    .sum(),
            )
        },
    ),
    row("12", "fig12", "CPU a bottleneck from (after 5 s), s", |r| {
        r.bottleneck_onset("CPU_CS", 5.0)
    }),
    fixed(row(
        "12",
        "fig12",
        "fixed times: CPU blue share, 8–24 s",
        |r| Some(r.share("blue", "CPU_CS", 8.0, 24.0)),
    )),
    fixed(row(
        "12",
        "fig12",
        "fixed times: CPU red share, 8–24 s",
        |r| Some(r.share("red", "CPU_CS", 8.0, 24.0)),
    )),
    fixed(row(
        "12",
        "fig12",
        "fixed times: CPU green share, 8–24 s",
        |r| Some(r.share("green", "CPU_CS", 8.0, 24.0)),
    )),
    row(
        "12",
        "fig12",
        "CPU a bottleneck, fraction of 8–24 s",
        |r| Some(bottleneck_fraction(r, "CPU_CS", 8.0, 24.0)),
    ),
    row(
        "13",
        "fig13",
        "CPU a bottleneck, fraction of 4–10 s",
        |r| Some(bottleneck_fraction(r, "CPU_CS", 4.0, 10.0)),
    ),
    row("13", "fig13", "network a bottleneck before 10 s, s", |r| {
        Some(r.bottleneck_time("NET_CS", 0.0, 10.0))
    }),
    row("13", "fig13", "network a bottleneck after 10 s, s", |r| {
        Some(r.bottleneck_time("NET_CS", 10.0, r.end_s))
    }),
    row(
        "14 rand",
        "fig14-complementary-rand",
        "CPU a bottleneck, fraction of 3 s–first completion",
        |r| Some(bottleneck_until_first_completion(r, "CPU_CS")),
    ),
    row(
        "14 rand",
        "fig14-complementary-rand",
        "network a bottleneck, same",
        |r| Some(bottleneck_until_first_completion(r, "NET_CS")),
    ),
    row(
        "14 rand",
        "fig14-complementary-rand",
        "both's CPU share while all run",
        |r| Some(share_while_all_run(r, "both", "CPU_CS")),
    ),
    row(
        "14 rand",
        "fig14-complementary-rand",
        "both's network share while all run",
        |r| Some(share_while_all_run(r, "both", "NET_CS")),
    ),
    row(
        "14 rand",
        "fig14-complementary-rand",
        "CPU busy fraction",
        |r| Some(busy_fraction(r, "CPU_CS")),
    ),
    row(
        "14 rand",
        "fig14-complementary-rand",
        "cpuheavy and both: CPU grants under 20 ms, fraction",
        short_grants,
    ),
    with_quantum(
        0.1,
        row(
            "14 rand",
            "fig14-complementary-rand",
            "Q 0.1: CPU busy fraction",
            |r| Some(busy_fraction(r, "CPU_CS")),
        ),
    ),
    with_quantum(
        0.1,
        row(
            "14 rand",
            "fig14-complementary-rand",
            "Q 0.1: cpuheavy and both: CPU grants under 20 ms, fraction",
            short_grants,
        ),
    ),
    with_quantum(
        0.1,
        row(
            "14 rand",
            "fig14-complementary-rand",
            "Q 0.1: CPU a bottleneck, fraction of 3 s–first completion",
            |r| Some(bottleneck_until_first_completion(r, "CPU_CS")),
        ),
    ),
    with_quantum(
        0.1,
        row(
            "14 rand",
            "fig14-complementary-rand",
            "Q 0.1: both's CPU share while all run",
            |r| Some(share_while_all_run(r, "both", "CPU_CS")),
        ),
    ),
];

/// The runs of a scenario read with a quantum, under a policy, each made once.
type Cache = HashMap<(&'static str, Option<u64>, bool, ProcessPolicy), Vec<SimulationResult>>;

fn runs<'c>(cache: &'c mut Cache, row: &Row, policy: ProcessPolicy) -> &'c [SimulationResult] {
    cache
        .entry((row.prefix, row.quantum.map(f64::to_bits), row.fixed, policy))
        .or_insert_with(|| {
            let (mut scenario, name) = scenario(row.prefix);
            scenario.simulation.policy = policy;
            if let Some(quantum) = row.quantum {
                scenario.simulation.quantum = quantum;
            }
            if row.fixed {
                let requests = scenario
                    .processes
                    .iter_mut()
                    .flat_map(|p| &mut p.program.blocks);
                requests
                    .flat_map(|b| &mut b.requests)
                    .for_each(|r| r.width = 0.0);
            }
            fairshare_sim::process::simulate_each(&scenario, &name).expect("the scenario runs")
        })
}

/// `mean ± std (min–max)` over the runs that have a value, and how many lack one.
fn cell(values: &[Option<f64>]) -> String {
    let found: Vec<f64> = values.iter().flatten().copied().collect();
    // Adding 0 turns a negative zero (an empty sum) into 0.
    let s = Spread::of(&found.iter().map(|v| v + 0.0).collect::<Vec<_>>());
    let missing = values.len() - found.len();
    let note = if missing > 0 {
        format!(", {missing} runs without")
    } else {
        String::new()
    };
    format!(
        "{:.3} ± {:.3} ({:.3}–{:.3}){note}",
        s.mean, s.std, s.min, s.max
    )
}

fn main() {
    let mut cache = Cache::new();
    println!("| figure | measure | runs | bottleneck | per-resource |");
    println!("|---|---|---|---|---|");
    for row in ROWS {
        let mut cells = Vec::new();
        let mut count = 0;
        for policy in [ProcessPolicy::Bottleneck, ProcessPolicy::PerResource] {
            let values: Vec<Option<f64>> = runs(&mut cache, row, policy)
                .iter()
                .map(row.value)
                .collect();
            count = values.len();
            cells.push(cell(&values));
        }
        println!(
            "| {} | {} | {count} | {} | {} |",
            row.figure, row.what, cells[0], cells[1]
        );
    }
}
