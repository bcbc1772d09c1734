//! What a process simulation produces: per process, per resource, the Gantt chart, cumulative
//! service over time and the bottleneck intervals — for the first run in detail, and for every
//! run in a summary.
//!
//! Everything is derived after each run from the exact service intervals, so measuring never
//! perturbs the simulation: bottleneck intervals exactly (where the busy time in the window
//! crosses the threshold), cumulative service at sample times.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Seconds between samples of cumulative service (docs/mechanisms.md, bottleneck §3.5); longer runs
/// with more processes are sampled at a power-of-two multiple of it.
pub const SERVICE_SAMPLE_S: f64 = 0.1;
/// Most values of cumulative service over all processes together.
pub const MAX_SERVICE_VALUES: usize = 1_000_000;

/// One bar of the Gantt chart: `process` held `resource` over `[start, end)` seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Resource name (shared by all the resource's segments).
    pub resource: Arc<str>,
    /// Process name (shared by all the process's segments).
    pub process: Arc<str>,
    /// Start, seconds.
    #[serde(rename = "start_s")]
    pub start: f64,
    /// End, seconds.
    #[serde(rename = "end_s")]
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

/// One process in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRun {
    /// When its last request completed, or `None` if it had not by the end of the run.
    #[serde(rename = "finish_time_s")]
    pub finish_time: Option<f64>,
    /// Seconds of service from each resource.
    #[serde(rename = "consumed_s")]
    pub consumed: IndexMap<String, f64>,
}

/// One resource in one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ResourceRun {
    /// Seconds it was busy.
    pub busy_s: f64,
    /// Seconds it was a bottleneck.
    pub bottleneck_s: f64,
    /// When it first became a bottleneck, or `None` if it never did.
    pub bottleneck_from_s: Option<f64>,
}

/// One process's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessResult {
    /// Process name.
    pub name: String,
    /// Entitlement, normalised over all processes.
    pub entitlement: f64,
    /// When its last request completed (first run), or `None` if it had not by the end.
    #[serde(rename = "finish_time_s")]
    pub finish_time: Option<f64>,
    /// Seconds of service from each resource (first run).
    #[serde(rename = "consumed_s")]
    pub consumed: IndexMap<String, f64>,
    /// Over all runs: finish time (runs that finished).
    #[serde(
        rename = "finish_time_spread_s",
        skip_serializing_if = "Option::is_none"
    )]
    pub finish_time_spread: Option<Spread>,
    /// Over all runs: seconds of service per resource.
    #[serde(rename = "consumed_spread_s", skip_serializing_if = "Option::is_none")]
    pub consumed_spread: Option<IndexMap<String, Spread>>,
    /// Every run, in order (seeds `seed`, `seed + 1`, …).
    #[serde(default)]
    pub per_run: Vec<ProcessRun>,
}

/// One resource's results: the first run in detail, every run in summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceResult {
    /// Resource name.
    pub name: String,
    /// Seconds it was busy (first run).
    pub busy_s: f64,
    /// `[start, end]` intervals during which it was a bottleneck (first run): exact, from the
    /// instants at which its busy time in the window crosses the threshold.
    #[serde(rename = "bottleneck_intervals_s")]
    pub bottleneck_intervals: Vec<[f64; 2]>,
    /// Every run, in order (seeds `seed`, `seed + 1`, …).
    #[serde(default)]
    pub per_run: Vec<ResourceRun>,
}

/// Cumulative service of each process over time, all resources together.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Cumulative {
    /// Sample times, seconds.
    pub times_s: Vec<f64>,
    /// Per process (in process order), seconds of service received up to each sample time:
    /// the first run's values.
    #[serde(rename = "service_s")]
    pub service: Vec<Vec<f64>>,
    /// Per process, mean over runs at each sample time (several runs only).
    #[serde(rename = "mean_s", skip_serializing_if = "Vec::is_empty", default)]
    pub mean: Vec<Vec<f64>>,
    /// Per process, standard deviation over runs at each sample time (several runs only).
    #[serde(rename = "std_s", skip_serializing_if = "Vec::is_empty", default)]
    pub std: Vec<Vec<f64>>,
}

/// The output of `fairshare simulate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Its JSON starts with `schema_version`: `versioned_json!` below implements serde through these derives.
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
}

fairshare_core::versioned_json!(SimulationResult);

impl SimulationResult {
    /// When process `name` completed in the first run (`None` if it had not, or there is no
    /// such process).
    pub fn finish(&self, name: &str) -> Option<f64> {
        self.processes.iter().find(|p| p.name == name)?.finish_time
    }

    /// The fraction of `[from, to]` seconds during which `process` held `resource` in the first
    /// run.
    pub fn share(&self, process: &str, resource: &str, from: f64, to: f64) -> f64 {
        let held: f64 = self
            .timeline
            .iter()
            .filter(|s| &*s.process == process && &*s.resource == resource)
            .map(|s| (s.end.min(to) - s.start.max(from)).max(0.0))
            .sum();
        held / (to - from)
    }

    /// Seconds of `[from, to]` during which `resource` was a bottleneck in the first run (0 if
    /// there is no such resource).
    pub fn bottleneck_time(&self, resource: &str, from: f64, to: f64) -> f64 {
        self.bottleneck_intervals(resource)
            .iter()
            .map(|[s, e]| (e.min(to) - s.max(from)).max(0.0))
            .fold(0.0, |a, b| a + b)
    }

    /// When `resource` first became a bottleneck at or after `from` seconds in the first run.
    pub fn bottleneck_onset(&self, resource: &str, from: f64) -> Option<f64> {
        self.bottleneck_intervals(resource)
            .iter()
            .find(|[_, e]| *e > from)
            .map(|[s, _]| s.max(from))
    }

    fn bottleneck_intervals(&self, resource: &str) -> &[[f64; 2]] {
        self.resources
            .iter()
            .find(|r| r.name == resource)
            .map_or(&[], |r| &r.bottleneck_intervals)
    }
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
    let mut served = CoveredBefore::new(intervals);
    for (t, sum) in times.iter().zip(total) {
        *sum += served.at(*t);
    }
}

/// Time covered by sorted, disjoint intervals (seconds, or µs) before instants asked in
/// ascending order.
struct CoveredBefore<'a, T> {
    intervals: &'a [(T, T)],
    next: usize,
    done: T,
}

impl<'a, T> CoveredBefore<'a, T>
where
    T: Copy + Default + PartialOrd + std::ops::Add<Output = T> + std::ops::Sub<Output = T>,
{
    fn new(intervals: &'a [(T, T)]) -> Self {
        CoveredBefore {
            intervals,
            next: 0,
            done: T::default(),
        }
    }

    /// Covered time before `t` (no earlier than the last instant asked).
    fn at(&mut self, t: T) -> T {
        while let Some(&(start, end)) = self.intervals.get(self.next).filter(|iv| iv.1 <= t) {
            self.done = self.done + (end - start);
            self.next += 1;
        }
        match self.intervals.get(self.next) {
            Some(&(start, _)) if t > start => self.done + (t - start),
            _ => self.done,
        }
    }
}

/// Intervals in which a resource with the sorted, disjoint busy periods `busy` (µs) was a
/// bottleneck up to `end` (µs): busy for more than `threshold` of the previous `window` µs.
/// Exact: the busy time in the window is linear between the instants at which a busy period
/// starts or ends or leaves the window, so each crossing of the threshold is solved for.
/// Returned in seconds.
pub fn bottleneck_intervals(
    busy: &[(u64, u64)],
    window: u64,
    threshold: f64,
    end: u64,
) -> Vec<[f64; 2]> {
    let bar = threshold * window as f64;
    let mut instants: Vec<u64> = busy
        .iter()
        .flat_map(|&(s, e)| [s, e, s.saturating_add(window), e.saturating_add(window)])
        .filter(|t| *t <= end)
        .chain([0, end])
        .collect();
    instants.sort_unstable();
    instants.dedup();
    let (mut upto, mut before) = (CoveredBefore::new(busy), CoveredBefore::new(busy));
    let mut level = |t: u64| (upto.at(t) - before.at(t.saturating_sub(window))) as f64;
    let mut out: Vec<[f64; 2]> = Vec::new();
    let mut last = (0.0, level(0));
    for &t in instants.iter().skip(1) {
        let next = (t as f64, level(t));
        if let Some([from, to]) = above(last, next, bar) {
            match out.last_mut() {
                Some(iv) if iv[1] == from => iv[1] = to,
                _ => out.push([from, to]),
            }
        }
        last = next;
    }
    out.iter().map(|[s, e]| [s / 1e6, e / 1e6]).collect()
}

/// The part of `[a, b]` in which the line from `(a, at_a)` to `(b, at_b)` lies above `bar`.
fn above((a, at_a): (f64, f64), (b, at_b): (f64, f64), bar: f64) -> Option<[f64; 2]> {
    let cross = || a + (bar - at_a) * (b - a) / (at_b - at_a);
    match (at_a > bar, at_b > bar) {
        (true, true) => Some([a, b]),
        (false, true) => Some([cross(), b]),
        (true, false) => Some([a, cross()]),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_busy_from_zero_is_a_bottleneck_from_exactly_2_7_s() {
        let iv = bottleneck_intervals(&[(0, 10_000_000)], 3_000_000, 0.9, 10_000_000);
        assert_eq!(iv, vec![[2.7, 10.0]]);
        // Idle from 10 s: busy time in the window falls below 2.7 s at 10.3 s.
        let iv = bottleneck_intervals(&[(0, 10_000_000)], 3_000_000, 0.9, 20_000_000);
        assert_eq!(iv, vec![[2.7, 10.3]]);
    }

    #[test]
    fn bottleneck_intervals_by_hand() {
        // Busy 0–3 s, idle 3–3.5 s, busy 3.5–10 s; window 3 s, threshold 0.9 (2.7 s). The
        // busy time in the window rises to 3 s at 3 s, falls to 2.5 s at 3.5 s (crossing at
        // 3.3 s), stays there while busy time leaves as it enters, and rises again once the
        // idle gap leaves the window at 6 s (crossing at 6.2 s).
        let busy = [(0, 3_000_000), (3_500_000, 10_000_000)];
        let iv = bottleneck_intervals(&busy, 3_000_000, 0.9, 10_000_000);
        assert_eq!(iv.len(), 2, "{iv:?}");
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(iv[0][0], 2.7) && close(iv[0][1], 3.3), "{iv:?}");
        assert!(close(iv[1][0], 6.2) && close(iv[1][1], 10.0), "{iv:?}");
        // Exactly at the threshold is not above it.
        assert!(bottleneck_intervals(&[(0, 2_700_000)], 3_000_000, 0.9, 9_000_000).is_empty());
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
