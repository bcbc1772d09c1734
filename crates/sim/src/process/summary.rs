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
    let started = std::time::Instant::now();
    let sim = &scenario.simulation;
    let runs: Vec<Run> = (0..sim.runs.max(1))
        .map(|k| Engine::new(scenario, sim.seed.wrapping_add(k as u64)).run())
        .collect();
    let wall_s = started.elapsed().as_secs_f64();
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
        processes: processes(scenario, &runs),
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
    let resources: Vec<Arc<str>> = scenario
        .resources
        .iter()
        .map(|r| r.as_str().into())
        .collect();
    let mut segments: Vec<Segment> = Vec::new();
    for (p, by_resource) in scenario.processes.iter().zip(&run.served) {
        let process: Arc<str> = p.name.as_str().into();
        for (resource, list) in resources.iter().zip(by_resource) {
            segments.extend(list.iter().map(|&(start, end)| Segment {
                resource: Arc::clone(resource),
                process: Arc::clone(&process),
                start,
                end,
            }));
        }
    }
    segments.sort_by(|a, b| {
        a.start
            .total_cmp(&b.start)
            .then_with(|| a.resource.cmp(&b.resource))
    });
    segments
}
