//! Several independent runs of a scenario, joined into one [`SimulationResult`]: the first run
//! in detail (Gantt chart, bottleneck intervals), every run in the spreads and mean curves.

use super::result::{
    bottleneck_intervals, cumulative, sample_step, Cumulative, ProcessResult, ResourceResult,
    Segment, SimulationResult, Spread, MAX_SERVICE_VALUES, SERVICE_SAMPLE_S,
};
use super::{Engine, Run};
use fairshare_trace::scenario::Scenario;
use indexmap::IndexMap;
use std::sync::Arc;

/// Runs `scenario` `simulation.runs` times (seeds `seed`, `seed + 1`, …) and summarises.
pub fn simulate(scenario: &Scenario, name: &str) -> SimulationResult {
    Runs::of(scenario).summarise(scenario, name)
}

/// The engine's runs of one scenario, before they are summarised.
pub struct Runs {
    runs: Vec<Run>,
    wall_s: f64,
}

impl Runs {
    /// Runs `scenario` `simulation.runs` times (seeds `seed`, `seed + 1`, …).
    pub fn of(scenario: &Scenario) -> Runs {
        let started = std::time::Instant::now();
        let sim = &scenario.simulation;
        let runs = (0..sim.runs.max(1))
            .map(|k| Engine::new(scenario, sim.seed.wrapping_add(k as u64)).run())
            .collect();
        Runs {
            runs,
            wall_s: started.elapsed().as_secs_f64(),
        }
    }

    /// Engine events handled over all runs.
    pub fn events(&self) -> u64 {
        self.runs.iter().map(|r| r.events).sum()
    }

    /// The runs of `scenario` (named `name` in the output) as one result.
    pub fn summarise(&self, scenario: &Scenario, name: &str) -> SimulationResult {
        summarise(scenario, name, &self.runs, self.wall_s)
    }
}

fn summarise(scenario: &Scenario, name: &str, runs: &[Run], wall_s: f64) -> SimulationResult {
    let sim = &scenario.simulation;
    let end = runs.iter().map(|r| r.end).fold(0.0, f64::max);
    let most = MAX_SERVICE_VALUES / scenario.processes.len().max(1);
    let step = sample_step(end, SERVICE_SAMPLE_S, most);
    let times: Vec<f64> = (0..=(end / step).ceil() as usize)
        .map(|k| k as f64 * step)
        .collect();
    let curves: Vec<Vec<Vec<f64>>> = runs
        .iter()
        .map(|r| cumulative(&per_process(r), &times))
        .collect();
    let first = &runs[0];
    let events: u64 = runs.iter().map(|r| r.events).sum();
    SimulationResult {
        scenario: name.to_owned(),
        policy: sim.policy.to_string(),
        runs: runs.len() as u32,
        seed: sim.seed,
        end_s: first.end,
        processes: processes(scenario, runs),
        resources: resources(scenario, first),
        timeline: timeline(scenario, first),
        cumulative: Cumulative {
            service: curves[0].clone(),
            mean: if runs.len() > 1 {
                across(&curves, |v| Spread::of(v).mean)
            } else {
                Vec::new()
            },
            std: if runs.len() > 1 {
                across(&curves, |v| Spread::of(v).std)
            } else {
                Vec::new()
            },
            times_s: times,
        },
        events,
        wall_s,
        events_per_s: if wall_s > 0.0 {
            events as f64 / wall_s
        } else {
            0.0
        },
    }
}

fn per_process(run: &Run) -> Vec<Vec<&super::result::Intervals>> {
    run.served
        .iter()
        .map(|by_resource| by_resource.iter().collect())
        .collect()
}

/// Per process and sample, `f` of the values over runs.
fn across(curves: &[Vec<Vec<f64>>], f: impl Fn(&[f64]) -> f64) -> Vec<Vec<f64>> {
    let (processes, samples) = (curves[0].len(), curves[0].first().map_or(0, Vec::len));
    (0..processes)
        .map(|i| {
            (0..samples)
                .map(|k| f(&curves.iter().map(|c| c[i][k]).collect::<Vec<_>>()))
                .collect()
        })
        .collect()
}

fn total(intervals: &super::result::Intervals) -> f64 {
    intervals.iter().fold(0.0, |sum, (s, e)| sum + (e - s))
}

fn processes(scenario: &Scenario, runs: &[Run]) -> Vec<ProcessResult> {
    let weight: f64 = scenario.processes.iter().map(|p| p.entitlement).sum();
    let several = runs.len() > 1;
    scenario
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let consumed = |run: &Run| -> IndexMap<String, f64> {
                scenario
                    .resources
                    .iter()
                    .cloned()
                    .zip(run.served[i].iter().map(total))
                    .collect()
            };
            let finishes: Vec<f64> = runs.iter().filter_map(|r| r.finish[i]).collect();
            let spread = scenario
                .resources
                .iter()
                .enumerate()
                .map(|(j, name)| {
                    (
                        name.clone(),
                        Spread::of(
                            &runs
                                .iter()
                                .map(|r| total(&r.served[i][j]))
                                .collect::<Vec<_>>(),
                        ),
                    )
                })
                .collect();
            ProcessResult {
                name: p.name.clone(),
                entitlement: p.entitlement / weight,
                finish_time: runs[0].finish[i],
                consumed: consumed(&runs[0]),
                finish_time_spread: (several && !finishes.is_empty())
                    .then(|| Spread::of(&finishes)),
                consumed_spread: several.then_some(spread),
            }
        })
        .collect()
}

fn resources(scenario: &Scenario, run: &Run) -> Vec<ResourceResult> {
    let sim = &scenario.simulation;
    scenario
        .resources
        .iter()
        .zip(&run.busy)
        .map(|(name, busy)| ResourceResult {
            name: name.clone(),
            busy_s: total(busy),
            bottleneck_intervals: bottleneck_intervals(
                busy,
                sim.window,
                sim.bottleneck_threshold,
                run.end,
            ),
        })
        .collect()
}

/// The Gantt chart: every service period, by start time then resource name.
fn timeline(scenario: &Scenario, run: &Run) -> Vec<Segment> {
    let names = &scenario.resources;
    // Resources in name order, and each resource's place in it.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|j| &names[*j]);
    let mut rank = vec![0; names.len()];
    for (r, j) in order.iter().enumerate() {
        rank[*j] = r;
    }
    let mut periods: Vec<(f64, usize, usize, f64)> = Vec::new();
    for (i, by_resource) in run.served.iter().enumerate() {
        for (j, list) in by_resource.iter().enumerate() {
            periods.extend(list.iter().map(|&(start, end)| (start, rank[j], i, end)));
        }
    }
    periods.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let resources: Vec<Arc<str>> = order.iter().map(|j| names[*j].as_str().into()).collect();
    let processes: Vec<Arc<str>> = scenario
        .processes
        .iter()
        .map(|p| p.name.as_str().into())
        .collect();
    periods
        .into_iter()
        .map(|(start, r, i, end)| Segment {
            resource: Arc::clone(&resources[r]),
            process: Arc::clone(&processes[i]),
            start,
            end,
        })
        .collect()
}
