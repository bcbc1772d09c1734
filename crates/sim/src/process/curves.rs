//! The mean and spread over runs of each process's cumulative service, gathered one run at a
//! time, so that memory does not grow with the number of runs.
//!
//! Samples are taken every [`SERVICE_SAMPLE_S`], or every power-of-two multiple of it once a run
//! is too long for [`MAX_SERVICE_VALUES`]: doubling the step keeps every other sample, so what
//! was gathered stays exact. A run that ended before a later, longer one keeps its total service
//! at the samples after its end.

use super::result::{cumulative, Intervals, MAX_SERVICE_VALUES, SERVICE_SAMPLE_S};

/// Running mean and sum of squared deviations (Welford) per process and sample time.
pub(crate) struct Curves {
    /// Most samples per process.
    most: usize,
    step: f64,
    samples: usize,
    mean: Vec<Vec<f64>>,
    m2: Vec<Vec<f64>>,
    /// Per run so far, per process: its total service.
    totals: Vec<Vec<f64>>,
}

impl Curves {
    /// No runs yet, for `processes` processes.
    pub(crate) fn new(processes: usize) -> Curves {
        Curves {
            most: (MAX_SERVICE_VALUES / processes.max(1)).max(2),
            step: SERVICE_SAMPLE_S,
            samples: 0,
            mean: vec![Vec::new(); processes],
            m2: vec![Vec::new(); processes],
            totals: Vec::new(),
        }
    }

    /// The sample times, seconds.
    pub(crate) fn times(&self) -> Vec<f64> {
        (0..self.samples).map(|k| k as f64 * self.step).collect()
    }

    /// Adds a run that lasted `end` seconds, with its service periods per process and resource.
    pub(crate) fn add(&mut self, served: &[Vec<Intervals>], end: f64) {
        self.cover(end);
        let curves = cumulative(served, &self.times());
        let n = (self.totals.len() + 1) as f64;
        for (i, curve) in curves.iter().enumerate() {
            for (k, x) in curve.iter().enumerate() {
                welford(&mut self.mean[i][k], &mut self.m2[i][k], *x, n);
            }
        }
        let totals = curves.iter().map(|c| c.last().copied().unwrap_or(0.0));
        self.totals.push(totals.collect());
    }

    /// Per process, the mean over the runs at every sample time.
    pub(crate) fn mean(&self) -> Vec<Vec<f64>> {
        self.mean.clone()
    }

    /// Per process, the standard deviation (population) over the runs at every sample time.
    pub(crate) fn std(&self) -> Vec<Vec<f64>> {
        let n = self.totals.len().max(1) as f64;
        let std = |m2: &Vec<f64>| m2.iter().map(|v| (v / n).max(0.0).sqrt()).collect();
        self.m2.iter().map(std).collect()
    }

    /// Makes the samples reach `end` seconds, coarsening the step while they would be too many.
    fn cover(&mut self, end: f64) {
        let needed = |step: f64| (end / step).ceil() as usize + 1;
        while needed(self.step) > self.most {
            self.coarsen();
        }
        let needed = needed(self.step);
        if needed > self.samples {
            self.extend(needed);
        }
    }

    /// Doubles the step, keeping every other sample.
    fn coarsen(&mut self) {
        self.step *= 2.0;
        self.samples = self.samples.div_ceil(2);
        for values in self.mean.iter_mut().chain(self.m2.iter_mut()) {
            *values = values.iter().step_by(2).copied().collect();
        }
    }

    /// New samples up to `to`, where every earlier run had its total service.
    fn extend(&mut self, to: usize) {
        for (i, (mean, m2)) in self.mean.iter_mut().zip(&mut self.m2).enumerate() {
            let (mut m, mut s) = (0.0, 0.0);
            for (r, totals) in self.totals.iter().enumerate() {
                welford(&mut m, &mut s, totals[i], (r + 1) as f64);
            }
            mean.resize(to, m);
            m2.resize(to, s);
        }
        self.samples = to;
    }
}

/// Adds value `x` as the `n`-th to a running mean and sum of squared deviations.
fn welford(mean: &mut f64, m2: &mut f64, x: f64, n: f64) {
    let delta = x - *mean;
    *mean += delta / n;
    *m2 += delta * (x - *mean);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One process served continuously over `[0, end)`.
    fn served(end: f64) -> Vec<Vec<Intervals>> {
        vec![vec![vec![(0.0, end)]]]
    }

    #[test]
    fn mean_and_spread_over_runs_of_different_lengths() {
        let mut curves = Curves::new(1);
        curves.add(&served(0.2), 0.2);
        curves.add(&served(0.4), 0.4);
        assert_eq!(curves.times().len(), 5);
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
        // At 0.3 s the first run had its 0.2 s, the second 0.3 s.
        assert!(close(&curves.mean()[0], &[0.0, 0.1, 0.2, 0.25, 0.3]));
        assert!(close(&curves.std()[0], &[0.0, 0.0, 0.0, 0.05, 0.1]));
    }

    #[test]
    fn a_long_run_coarsens_the_step_by_doubling() {
        let mut curves = Curves::new(MAX_SERVICE_VALUES / 10);
        curves.add(&vec![vec![vec![(0.0, 0.3)]]; MAX_SERVICE_VALUES / 10], 0.3);
        curves.add(&vec![vec![vec![(0.0, 1.0)]]; MAX_SERVICE_VALUES / 10], 2.0);
        let times = curves.times();
        assert!(times.len() <= 10, "{times:?}");
        assert!((times[1] - 0.4).abs() < 1e-12, "{times:?}");
        // At 0.4 s: 0.3 and 0.4 s of service.
        assert!((curves.mean()[0][1] - 0.35).abs() < 1e-12);
    }
}
