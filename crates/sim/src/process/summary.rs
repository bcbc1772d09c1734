//! Several independent runs of a scenario, joined into one [`SimulationResult`]: the first run
//! in detail (Gantt chart, bottleneck intervals), every run in the spreads and mean curves.

use super::result::{
    bottleneck_intervals, cumulative, sample_step, Cumulative, Intervals, ProcessResult,
    ResourceResult, Segment, SimulationResult, Spread, BOTTLENECK_SAMPLE_S, MAX_BOTTLENECK_SAMPLES,
    MAX_SERVICE_VALUES, SERVICE_SAMPLE_S,
};
use super::{Engine, Grant, Run};
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
    let served: Vec<Served> = runs
        .iter()
        .map(|r| served(r, scenario.processes.len()))
        .collect();
    let end = runs.iter().map(|r| r.end).fold(0.0, f64::max);
    let most = MAX_SERVICE_VALUES / scenario.processes.len().max(1);
    let step = sample_step(end, SERVICE_SAMPLE_S, most);
    let times: Vec<f64> = (0..=(end / step).ceil() as usize)
        .map(|k| k as f64 * step)
        .collect();
    let curves: Vec<Vec<Vec<f64>>> = served
        .iter()
        .map(|by_process| cumulative(by_process, &times))
        .collect();
    let first = &runs[0];
    let events: u64 = runs.iter().map(|r| r.events).sum();
    SimulationResult {
        scenario: name.to_owned(),
        policy: sim.policy.to_string(),
        runs: runs.len() as u32,
        seed: sim.seed,
        end_s: first.end,
        processes: processes(scenario, runs, &served),
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

/// Per process and resource, the periods of service of one run.
type Served = Vec<Vec<Intervals>>;

/// The run's grants, by process and resource.
fn served(run: &Run, processes: usize) -> Served {
    let mut served = vec![vec![Vec::new(); run.grants.len()]; processes];
    for (j, grants) in run.grants.iter().enumerate() {
        for &(start, end, i) in grants {
            served[i][j].push((start, end));
        }
    }
    served
}

/// The periods in which the resource with these grants was busy.
fn busy(grants: &[Grant]) -> Intervals {
    let mut busy: Intervals = Vec::new();
    for &(start, end, _) in grants {
        match busy.last_mut() {
            Some(last) if (last.1 - start).abs() < 1e-9 => last.1 = end,
            _ => busy.push((start, end)),
        }
    }
    busy
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

fn total(intervals: &Intervals) -> f64 {
    intervals.iter().fold(0.0, |sum, (s, e)| sum + (e - s))
}

fn processes(scenario: &Scenario, runs: &[Run], served: &[Served]) -> Vec<ProcessResult> {
    let weight: f64 = scenario.processes.iter().map(|p| p.entitlement).sum();
    let several = runs.len() > 1;
    scenario
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let consumed = |run: &Served| -> IndexMap<String, f64> {
                scenario
                    .resources
                    .iter()
                    .cloned()
                    .zip(run[i].iter().map(total))
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
                        Spread::of(&served.iter().map(|r| total(&r[i][j])).collect::<Vec<_>>()),
                    )
                })
                .collect();
            ProcessResult {
                name: p.name.clone(),
                entitlement: p.entitlement / weight,
                finish_time: runs[0].finish[i],
                consumed: consumed(&served[0]),
                finish_time_spread: (several && !finishes.is_empty())
                    .then(|| Spread::of(&finishes)),
                consumed_spread: several.then_some(spread),
            }
        })
        .collect()
}

fn resources(scenario: &Scenario, run: &Run) -> Vec<ResourceResult> {
    let sim = &scenario.simulation;
    let most = MAX_BOTTLENECK_SAMPLES / scenario.resources.len().max(1);
    let step = sample_step(run.end, BOTTLENECK_SAMPLE_S, most);
    scenario
        .resources
        .iter()
        .zip(run.grants.iter().map(|g| busy(g)))
        .map(|(name, busy)| ResourceResult {
            name: name.clone(),
            busy_s: total(&busy),
            bottleneck_intervals: bottleneck_intervals(
                &busy,
                sim.window,
                sim.bottleneck_threshold,
                step,
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
    for (j, grants) in run.grants.iter().enumerate() {
        periods.extend(
            grants
                .iter()
                .map(|&(start, end, i)| (start, rank[j], i, end)),
        );
    }
    // One sorted run per resource: the stable sort merges them.
    periods.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
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
