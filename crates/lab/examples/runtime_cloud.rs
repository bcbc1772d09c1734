//! The larger runtime experiment of docs/runtime.md: 50 nodes, 20 users, 500 VMs drawn from
//! the Alibaba GPU 2023 node and pod lists, the last user arriving half-way, under every
//! runtime policy; prints how far each policy keeps users from their fair share and, with an
//! output folder, draws it as SVG.
//!
//!     cargo run --release -p fairshare-lab --example runtime_cloud -- [HOURS] [OUT_DIR] [SEED]
//!
//! HOURS defaults to 6 (arrival after half of them), SEED to 1; OUT_DIR `-` draws nothing. The traces are read from
//! ../shared/traces/alibaba-gpu-2023 (or $FAIRSHARE_TRACES/alibaba-gpu-2023).

use fairshare_lab::cloud::{build_cloud, measure, CloudSpec, PolicyOutcome};
use fairshare_report::svg::{self, Axis, LineChart, Series};
use fairshare_sim::runtime::RuntimePolicy;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let hours: f64 = args.next().map_or(Ok(6.0), |h| h.parse())?;
    let out = args.next().filter(|o| o != "-").map(PathBuf::from);
    let seed: u64 = args.next().map_or(Ok(1), |s| s.parse())?;
    let traces = std::env::var_os("FAIRSHARE_TRACES")
        .map_or_else(|| PathBuf::from("../shared/traces"), PathBuf::from)
        .join("alibaba-gpu-2023");
    let spec = CloudSpec {
        duration_s: hours * 3600.0,
        arrival_s: hours * 1800.0,
        seed,
        ..CloudSpec::default()
    };
    let scenario = build_cloud(
        &traces.join("openb_pod_list_default.csv"),
        &traces.join("openb_node_list_all_node.csv"),
        &spec,
    )?;
    let arriving = scenario
        .workloads
        .iter()
        .filter(|w| w.owner + 1 == spec.users)
        .count();
    println!(
        "{}: {} intervals, the last user ({arriving} VMs) arriving at {} s",
        scenario.name,
        scenario.ticks(),
        spec.arrival_s
    );
    let arrival = (spec.arrival_s / scenario.heaviness.update_interval_s) as usize;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "{:<16} {:>12} {:>10} {:>10} {:>10} {:>13} {:>14} {:>8}",
        "policy",
        "cpu shortfall",
        "before",
        "after",
        "worst user",
        "disk shortfall",
        "arrival ratio",
        "settles"
    );
    let mut outcomes: Vec<PolicyOutcome> = Vec::new();
    for policy in RuntimePolicy::ALL {
        let started = Instant::now();
        let o = measure(&scenario, policy, spec.arrival_s)?;
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{:<16} {:>12.5} {:>10.5} {:>10.5} {:>10.3} {:>13.5} {:>14.3} {:>8} ({seconds:.2} s)",
            policy.name(),
            mean(&o.cpu_shortfall),
            mean(&o.cpu_shortfall[..arrival]),
            mean(&o.cpu_shortfall[arrival..]),
            mean(&o.cpu_worst),
            mean(&o.disk_shortfall),
            mean(&o.arrival_ratio),
            o.convergence
                .map_or("never".to_string(), |k| format!("{k} int.")),
        );
        outcomes.push(o);
    }
    if let Some(out) = out {
        std::fs::create_dir_all(&out)?;
        draw(&outcomes, scenario.heaviness.update_interval_s, &out)?;
    }
    Ok(())
}

/// Draws the distance over time (CPU and disk) and the arriving user's ratio.
fn draw(outcomes: &[PolicyOutcome], interval_s: f64, out: &std::path::Path) -> std::io::Result<()> {
    let names: Vec<&str> = outcomes.iter().map(|o| o.policy.name()).collect();
    let colours = svg::colours_for(&names);
    let hours = |k: usize| (k + 1) as f64 * interval_s / 3600.0;
    let chart = |y: &str, pick: &dyn Fn(&PolicyOutcome) -> Vec<(f64, f64)>| {
        svg::line_chart(&LineChart {
            size: (900, 340),
            x: Axis::new("time (h)"),
            y: Axis::new(y).with_zero(),
            series: outcomes
                .iter()
                .zip(&colours)
                .map(|(o, &colour)| Series {
                    label: o.policy.name().to_string(),
                    colour,
                    points: pick(o),
                })
                .collect(),
            hline: None,
            markers: false,
            legend: true,
        })
    };
    // 48 means over the run keep the lines readable.
    let smoothed = |v: &[f64]| -> Vec<(f64, f64)> {
        let width = v.len().div_ceil(48).max(1);
        v.chunks(width)
            .enumerate()
            .map(|(i, c)| {
                let mean = c.iter().sum::<f64>() / c.len() as f64;
                (hours(i * width + c.len() - 1), mean)
            })
            .collect()
    };
    std::fs::write(
        out.join("runtime-cloud-cpu.svg"),
        chart("CPU owed, not delivered (fraction of the cloud)", &|o| {
            smoothed(&o.cpu_shortfall)
        }),
    )?;
    std::fs::write(
        out.join("runtime-cloud-disk.svg"),
        chart("disk writes owed, not delivered (fraction)", &|o| {
            smoothed(&o.disk_shortfall)
        }),
    )?;
    std::fs::write(
        out.join("runtime-cloud-arrival.svg"),
        chart("arriving user: delivered / owed CPU", &|o| {
            o.arrival_ratio
                .iter()
                .take(180)
                .enumerate()
                .map(|(k, &r)| ((k + 1) as f64 * interval_s / 60.0, r))
                .collect()
        })
        .replace("time (h)", "minutes after arrival"),
    )?;
    Ok(())
}
