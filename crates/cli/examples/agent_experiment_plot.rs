//! Draws docs/img/agent-experiment.svg from the CSV files the real cgroup experiment writes
//! (`FAIRSHARE_AGENT_EXPERIMENT_OUT=DIR cargo test -p fairshare --test integration agent::the_real_experiment`):
//! user e's share of the CPU, second by second, without the agent and then with it.
//!
//! `cargo run -p fairshare --example agent_experiment_plot -- DIR docs/img/agent-experiment.svg`

use fairshare_report::svg::{line_chart, Axis, Colour, LineChart, Series};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(out)) = (args.get(1), args.get(2)) else {
        return Err("usage: agent_experiment_plot DIR OUT.svg".into());
    };
    let mut series = Vec::new();
    for (i, mode) in ["standalone", "daemon"].into_iter().enumerate() {
        let path = format!("{dir}/experiment-{mode}.csv");
        let mut reader = csv::Reader::from_path(&path).map_err(|e| format!("{path}: {e}"))?;
        let mut points = Vec::new();
        for row in reader.records() {
            let row = row.map_err(|e| format!("{path}: {e}"))?;
            let second: f64 = row[0].parse()?;
            let e_share: f64 = row[3].parse()?;
            points.push((second, 100.0 * e_share));
        }
        series.push(Series {
            label: format!("user e, agent {mode}"),
            colour: Colour::Palette(i),
            points,
        });
    }
    let chart = LineChart {
        size: (760, 340),
        x: Axis::new("second (agent started after second 8)"),
        y: Axis::new("user e's share of the CPU (%)").range(0.0, 70.0),
        series,
        hline: Some(50.0),
        markers: true,
        legend: true,
    };
    std::fs::write(out, line_chart(&chart))?;
    Ok(())
}
