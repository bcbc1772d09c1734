//! Several independent runs of a scenario, joined into one [`SimulationResult`]: the first run
//! in detail (Gantt chart, bottleneck intervals), every run in a summary, the spreads and mean
//! curves. Each run is summarised as soon as it ends and only the first is kept whole, so
//! memory does not grow with the number of runs.

use super::curves::Curves;
use super::result::{
    bottleneck_intervals, cumulative, Cumulative, Intervals, ProcessResult, ProcessRun,
    ResourceResult, ResourceRun, Segment, SimulationResult, Spread,
};
use super::{micros, Engine, Grant, Run, Stop};
use crate::scenario::{LimitError, Scenario, MAX_EVENTS_PER_RUN, MAX_TIME_S};
use fairshare_core::model::Time;
use indexmap::IndexMap;
use std::sync::Arc;
use thiserror::Error;

/// Where a simulation is: reported every 65,536 events of a run and at the end of each run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Runs finished.
    pub finished: u32,
    /// Runs to make.
    pub runs: u32,
    /// Simulated seconds of the run under way (of the run just finished, at its end).
    pub simulated_s: f64,
    /// Events the run under way has handled so far (in all, at its end).
    pub events: u64,
}

/// Why a simulation could not be made.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimulateError {
    /// A setting outside its range, or programs that would not finish (see
    /// [`Scenario::check`]).
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A run reached [`MAX_EVENTS_PER_RUN`].
    #[error("run {run} of {runs} (seed {seed}) stopped at {at_s} s of simulated time: it reached {MAX_EVENTS_PER_RUN} engine events, the most a run may handle; set [simulation] duration, or lower the loop counts")]
    TooManyEvents {
        /// The run, from 1.
        run: u32,
        /// The runs asked for.
        runs: u32,
        /// Its seed.
        seed: u64,
        /// Simulated seconds when it stopped.
        at_s: f64,
    },
    /// A run would have gone past [`MAX_TIME_S`].
    #[error("run {run} of {runs} (seed {seed}) stopped at {at_s} s of simulated time: {what} falls due at {due_s:.3e} s, past the latest instant a run may reach ({MAX_TIME_S:e} s); set [simulation] duration, or shorten the requests")]
    TooLate {
        /// The run, from 1.
        run: u32,
        /// The runs asked for.
        runs: u32,
        /// Its seed.
        seed: u64,
        /// Simulated seconds when it stopped.
        at_s: f64,
        /// What fell due too late: a process's request, or a priority snapshot.
        what: String,
        /// When, seconds.
        due_s: f64,
    },
}

/// Runs `scenario` `simulation.runs` times (seeds `seed`, `seed + 1`, …) and summarises.
pub fn simulate(scenario: &Scenario, name: &str) -> Result<SimulationResult, SimulateError> {
    simulate_with_progress(scenario, name, &mut |_| {})
}

/// [`simulate`], telling `progress` where it is as it goes.
pub fn simulate_with_progress(
    scenario: &Scenario,
    name: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<SimulationResult, SimulateError> {
    scenario.check()?;
    let sim = &scenario.simulation;
    let mut summary = Summary::new(scenario);
    for k in 0..sim.runs {
        let seed = sim.seed.wrapping_add(u64::from(k));
        let mut tell = |now: Time, events: u64| {
            progress(Progress {
                finished: k,
                runs: sim.runs,
                simulated_s: now.as_secs_f64(),
                events,
            })
        };
        let run = Engine::new(scenario, seed)
            .run(&mut tell)
            .map_err(|stop| stopped(scenario, stop, k, seed))?;
        progress(Progress {
            finished: k + 1,
            runs: sim.runs,
            simulated_s: run.end.as_secs_f64(),
            events: run.events,
        });
        summary.add(run);
    }
    Ok(summary.finish(name))
}

/// Every run of `scenario` in detail, one result per seed (`seed`, `seed + 1`, …), for
/// measuring what a summary keeps of the first run only (shares over an interval, Gantt
/// charts).
pub fn simulate_each(
    scenario: &Scenario,
    name: &str,
) -> Result<Vec<SimulationResult>, SimulateError> {
    (0..scenario.simulation.runs)
        .map(|k| {
            let mut one = scenario.clone();
            one.simulation.seed = scenario.simulation.seed.wrapping_add(u64::from(k));
            one.simulation.runs = 1;
            simulate(&one, name)
        })
        .collect()
}

/// Runs the engine once with `seed`, without summarising, and returns the events it handled
/// (for measuring the engine's throughput).
pub fn engine_events(scenario: &Scenario, seed: u64) -> Result<u64, SimulateError> {
    scenario.check()?;
    let run = Engine::new(scenario, seed)
        .run(&mut |_, _| {})
        .map_err(|stop| stopped(scenario, stop, 0, seed))?;
    Ok(run.events)
}

/// The error of run `k` (from 0) stopped early.
fn stopped(scenario: &Scenario, stop: Stop, k: u32, seed: u64) -> SimulateError {
    let (run, runs) = (k + 1, scenario.simulation.runs);
    match stop {
        Stop::TooManyEvents(at) => SimulateError::TooManyEvents {
            run,
            runs,
            seed,
            at_s: at.as_secs_f64(),
        },
        Stop::TooLate(at, due, process) => SimulateError::TooLate {
            run,
            runs,
            seed,
            at_s: at.as_secs_f64(),
            what: process.map_or_else(
                || String::from("a priority snapshot"),
                |i| format!("a request of process \"{}\"", scenario.processes[i].name),
            ),
            due_s: due.as_secs_f64(),
        },
    }
}

/// Per process and resource, the periods of service of one run, seconds.
type Served = Vec<Vec<Intervals>>;

/// The first run, kept whole for its Gantt chart and curves.
struct FirstRun {
    run: Run,
    /// Its service periods.
    served: Served,
    /// Its bottleneck intervals, per resource.
    intervals: Vec<Vec<[f64; 2]>>,
}

/// What is kept of the runs so far.
struct Summary<'a> {
    scenario: &'a Scenario,
    first: Option<FirstRun>,
    /// Per process, every run.
    processes: Vec<Vec<ProcessRun>>,
    /// Per resource, every run.
    resources: Vec<Vec<ResourceRun>>,
    curves: Curves,
    events: u64,
}

impl<'a> Summary<'a> {
    fn new(scenario: &'a Scenario) -> Summary<'a> {
        Summary {
            scenario,
            first: None,
            processes: vec![Vec::new(); scenario.processes.len()],
            resources: vec![Vec::new(); scenario.resources.len()],
            curves: Curves::new(scenario.processes.len()),
            events: 0,
        }
    }

    /// Summarises one run; keeps it whole if it is the first.
    fn add(&mut self, run: Run) {
        let sim = &self.scenario.simulation;
        let served = served(&run, self.scenario.processes.len());
        for (i, runs) in self.processes.iter_mut().enumerate() {
            runs.push(ProcessRun {
                finish_time: run.finish[i].map(Time::as_secs_f64),
                consumed: consumed(self.scenario, &run, i),
            });
        }
        let window = micros(sim.window);
        let mut intervals = Vec::with_capacity(run.grants.len());
        for (grants, runs) in run.grants.iter().zip(&mut self.resources) {
            let busy = busy(grants);
            let during =
                bottleneck_intervals(&busy, window, sim.bottleneck_threshold, run.end.as_micros());
            runs.push(ResourceRun {
                busy_s: busy.iter().map(|(s, e)| e - s).sum::<u64>() as f64 / 1e6,
                // Folded from 0: an empty float sum is −0, which JSON would show as -0.0.
                bottleneck_s: during.iter().map(|[s, e]| e - s).fold(0.0, |a, b| a + b),
                bottleneck_from_s: during.first().map(|iv| iv[0]),
            });
            intervals.push(during);
        }
        self.curves.add(&served, run.end.as_secs_f64());
        self.events += run.events;
        if self.first.is_none() {
            self.first = Some(FirstRun {
                run,
                served,
                intervals,
            });
        }
    }

    /// The result of all runs, named `name`.
    fn finish(self, name: &str) -> SimulationResult {
        let scenario = self.scenario;
        let sim = &scenario.simulation;
        let several = sim.runs > 1;
        let times = self.curves.times();
        let FirstRun {
            run: first,
            served,
            intervals,
        } = self.first.expect("at least one run");
        let resources = scenario
            .resources
            .iter()
            .zip(self.resources)
            .zip(intervals)
            .map(|((name, per_run), bottleneck_intervals)| ResourceResult {
                name: name.clone(),
                busy_s: per_run[0].busy_s,
                bottleneck_intervals,
                per_run,
            })
            .collect();
        SimulationResult {
            scenario: name.to_owned(),
            policy: sim.policy.to_string(),
            runs: sim.runs,
            seed: sim.seed,
            end_s: first.end.as_secs_f64(),
            processes: processes(scenario, self.processes, several),
            resources,
            timeline: timeline(scenario, &first),
            cumulative: Cumulative {
                service: cumulative(&served, &times),
                mean: if several {
                    self.curves.mean()
                } else {
                    Vec::new()
                },
                std: if several {
                    self.curves.std()
                } else {
                    Vec::new()
                },
                times_s: times,
            },
            events: self.events,
        }
    }
}

/// The run's grants, by process and resource, in seconds.
fn served(run: &Run, processes: usize) -> Served {
    let mut served = vec![vec![Vec::new(); run.grants.len()]; processes];
    for (j, grants) in run.grants.iter().enumerate() {
        for &(start, end, i) in grants {
            served[i][j].push((start.as_secs_f64(), end.as_secs_f64()));
        }
    }
    served
}

/// Seconds of service process `i` received from each resource in `run`.
fn consumed(scenario: &Scenario, run: &Run, i: usize) -> IndexMap<String, f64> {
    let total = |grants: &Vec<Grant>| {
        let mine = grants.iter().filter(|g| g.2 == i);
        mine.map(|(s, e, _)| e.as_micros() - s.as_micros())
            .sum::<u64>() as f64
            / 1e6
    };
    scenario
        .resources
        .iter()
        .cloned()
        .zip(run.grants.iter().map(total))
        .collect()
}

/// The periods, µs, in which the resource with these grants was busy.
fn busy(grants: &[Grant]) -> Vec<(u64, u64)> {
    let mut busy: Vec<(u64, u64)> = Vec::new();
    for &(start, end, _) in grants {
        let (start, end) = (start.as_micros(), end.as_micros());
        match busy.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => busy.push((start, end)),
        }
    }
    busy
}

/// Per process: the first run, the spreads over runs (several runs only) and every run.
fn processes(
    scenario: &Scenario,
    per_run: Vec<Vec<ProcessRun>>,
    several: bool,
) -> Vec<ProcessResult> {
    let weight: f64 = scenario.processes.iter().map(|p| p.entitlement).sum();
    scenario
        .processes
        .iter()
        .zip(per_run)
        .map(|(p, runs)| {
            let finishes: Vec<f64> = runs.iter().filter_map(|r| r.finish_time).collect();
            let spread = |name: &String| {
                let values: Vec<f64> = runs.iter().map(|r| r.consumed[name]).collect();
                (name.clone(), Spread::of(&values))
            };
            ProcessResult {
                name: p.name.clone(),
                entitlement: p.entitlement / weight,
                finish_time: runs[0].finish_time,
                consumed: runs[0].consumed.clone(),
                finish_time_spread: (several && !finishes.is_empty())
                    .then(|| Spread::of(&finishes)),
                consumed_spread: several.then(|| scenario.resources.iter().map(spread).collect()),
                per_run: runs,
            }
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
    let mut periods: Vec<(Time, usize, usize, Time)> = Vec::new();
    for (j, grants) in run.grants.iter().enumerate() {
        periods.extend(
            grants
                .iter()
                .map(|&(start, end, i)| (start, rank[j], i, end)),
        );
    }
    // One sorted run per resource: the stable sort merges them.
    periods.sort_by_key(|p| (p.0, p.1));
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
            start: start.as_secs_f64(),
            end: end.as_secs_f64(),
        })
        .collect()
}
