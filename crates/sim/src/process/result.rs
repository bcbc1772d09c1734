//! What a process simulation produces: per process, per resource, the Gantt chart, cumulative
//! service over time and the bottleneck intervals — for one run, and averaged over several.
//!
//! Sampled series (cumulative service, bottleneck status) are derived after the run from the
//! exact service intervals, so sampling never perturbs the simulation.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Seconds between samples of cumulative service (spec `bottleneck.md` §3.5).
pub const SERVICE_SAMPLE_S: f64 = 0.1;
/// Seconds between samples of bottleneck status (spec §3.5).
pub const BOTTLENECK_SAMPLE_S: f64 = 0.01;
/// Most values of cumulative service over all processes together; longer runs with more
/// processes are sampled more sparsely.
pub const MAX_SERVICE_VALUES: usize = 1_000_000;
/// Most samples of bottleneck status over all resources together; longer runs with more
/// resources are sampled more sparsely.
pub const MAX_BOTTLENECK_SAMPLES: usize = 1_000_000;

/// The sampling step for a run of `end` seconds: `base`, or coarser so that at most `most`
/// samples are taken.
pub fn sample_step(end: f64, base: f64, most: usize) -> f64 {
    base.max(end / most as f64)
}

/// One bar of the Gantt chart: `process` held `resource` over `[start, end)` seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Resource name (shared by all the resource's segments).
    pub resource: Arc<str>,
    /// Process name (shared by all the process's segments).
    pub process: Arc<str>,
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
}

/// Mean and standard deviation over runs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Standard deviation (population).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero for none).
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Spread {
            mean,
            std: var.sqrt(),
            min,
            max,
        }
    }
}

/// One process's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessResult {
    /// Process name.
    pub name: String,
    /// Entitlement, normalised over all processes.
    pub entitlement: f64,
    /// When its last request completed (first run), or `None` if it had not by the end.
    pub finish_time: Option<f64>,
    /// Seconds of service from each resource (first run).
    pub consumed: IndexMap<String, f64>,
    /// Over all runs: finish time (runs that finished).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_time_spread: Option<Spread>,
    /// Over all runs: seconds of service per resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumed_spread: Option<IndexMap<String, Spread>>,
}

/// One resource's results (first run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceResult {
    /// Resource name.
    pub name: String,
    /// Seconds it was busy.
    pub busy_s: f64,
    /// `[start, end]` intervals during which it was a bottleneck (sampled every 10 ms, more
    /// sparsely in very long runs).
    pub bottleneck_intervals: Vec<[f64; 2]>,
}

/// Cumulative service of each process over time, all resources together.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Cumulative {
    /// Sample times, seconds.
    pub times_s: Vec<f64>,
    /// Per process (in process order), seconds of service received up to each sample time:
    /// the first run's values.
    pub service: Vec<Vec<f64>>,
    /// Per process, mean over runs at each sample time (several runs only).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub mean: Vec<Vec<f64>>,
    /// Per process, standard deviation over runs at each sample time (several runs only).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub std: Vec<Vec<f64>>,
}

/// The output of `fairshare simulate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Its JSON starts with `schema_version`: `crate::summary` implements serde through these derives.
#[serde(remote = "Self")]
pub struct SimulationResult {
    /// The scenario file.
    pub scenario: String,
    /// Ranking policy.
    pub policy: String,
    /// Independent runs made.
    pub runs: u32,
    /// Seed of the first run.
    pub seed: u64,
    /// Simulated seconds of the first run.
    pub end_s: f64,
    /// Per process.
    pub processes: Vec<ProcessResult>,
    /// Per resource, in lane order.
    pub resources: Vec<ResourceResult>,
    /// The first run's Gantt chart.
    pub timeline: Vec<Segment>,
    /// Cumulative service over time.
    pub cumulative: Cumulative,
    /// Engine events processed over all runs.
    pub events: u64,
    /// Wall-clock seconds the engine took for all runs, summarising excluded (the only field
    /// that differs between identical runs, with `events_per_s`).
    pub wall_s: f64,
    /// Engine events per wall-clock second of the engine.
    pub events_per_s: f64,
}

/// Service intervals `[start, end)` of one process on one resource, as the engine records them.
pub type Intervals = Vec<(f64, f64)>;

/// Cumulative service of each process at `times` (ascending), from its intervals on every
/// resource, in one sweep per interval list.
pub fn cumulative(per_process: &[Vec<Intervals>], times: &[f64]) -> Vec<Vec<f64>> {
    per_process
        .iter()
        .map(|lists| {
            let mut total = vec![0.0; times.len()];
            for list in lists {
                add_served(list, times, &mut total);
            }
            total
        })
        .collect()
}

/// Adds to `total[k]` the service in `intervals` before `times[k]`.
fn add_served(intervals: &Intervals, times: &[f64], total: &mut [f64]) {
    let mut served = ServedBefore::new(intervals);
    for (t, sum) in times.iter().zip(total) {
        *sum += served.at(*t);
    }
}

/// Time covered by sorted, disjoint intervals before instants asked in ascending order.
struct ServedBefore<'a> {
    intervals: &'a Intervals,
    next: usize,
    done: f64,
}

impl<'a> ServedBefore<'a> {
    fn new(intervals: &'a Intervals) -> Self {
        ServedBefore {
            intervals,
            next: 0,
            done: 0.0,
        }
    }

    /// Covered time before `t` (no earlier than the last instant asked).
    fn at(&mut self, t: f64) -> f64 {
        while let Some(&(start, end)) = self.intervals.get(self.next).filter(|iv| iv.1 <= t) {
            self.done += end - start;
            self.next += 1;
        }
        let partial = self
            .intervals
            .get(self.next)
            .map_or(0.0, |(s, _)| (t - s).max(0.0));
        self.done + partial
    }
}

/// Intervals in which a resource with busy periods `busy` was a bottleneck: busy for more than
/// `threshold` of the previous `window` seconds, sampled every `step` seconds up to `end`.
pub fn bottleneck_intervals(
    busy: &Intervals,
    window: f64,
    threshold: f64,
    step: f64,
    end: f64,
) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::new();
    let steps = (end / step).floor() as usize;
    let (mut upto, mut before) = (ServedBefore::new(busy), ServedBefore::new(busy));
    for k in 0..=steps {
        let t = k as f64 * step;
        let used = upto.at(t) - before.at(t - window);
        if used > threshold * window {
            match out.last_mut() {
                Some(iv) if (iv[1] - (t - step)).abs() < 1e-9 => iv[1] = t,
                _ => out.push([t, t]),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_busy_from_zero_is_a_bottleneck_from_2_7_s() {
        let iv = bottleneck_intervals(&vec![(0.0, 10.0)], 3.0, 0.9, 0.01, 10.0);
        assert_eq!(iv.len(), 1);
        assert!(
            (iv[0][0] - 2.71).abs() < 1e-9 && (iv[0][1] - 10.0).abs() < 1e-9,
            "{iv:?}"
        );
    }

    #[test]
    fn cumulative_service_by_hand() {
        let a: Intervals = vec![(0.0, 1.0), (2.0, 3.0)];
        let b: Intervals = vec![(1.0, 2.0)];
        let got = cumulative(&[vec![a, b]], &[0.5, 1.5, 2.5, 4.0]);
        assert_eq!(got, vec![vec![0.5, 1.5, 2.5, 3.0]]);
    }

    #[test]
    fn spread_by_hand() {
        let s = Spread::of(&[1.0, 3.0]);
        assert_eq!((s.mean, s.std, s.min, s.max), (2.0, 1.0, 1.0, 3.0));
    }
}
