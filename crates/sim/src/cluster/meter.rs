//! What a fairshare policy charges each job: its [`UsageMetric`] per second of running, priced
//! once when the job arrives (the price depends on what it asked for, not where it runs) and
//! multiplied by the SPEC of the node it starts on when the metric says so. The engine hands
//! that rate to the ranker; the meter also totals what each user was charged, undecayed, for
//! the results.

use super::space::Placed;
use super::Capacity;
use fairshare_core::model::{MachineCatalogue, Task};
use fairshare_core::usage::metric::UsageMetric;
use fairshare_core::usage::penalty::totals;

/// Prices jobs under one metric on one cluster.
#[derive(Debug, Clone)]
pub(super) struct Meter {
    metric: UsageMetric,
    catalogue: MachineCatalogue,
    totals: Vec<f64>,
    /// Each node's SPEC, in the engine's node order.
    spec: Vec<f64>,
    /// Per user, every charge so far (usage per second × seconds run), undecayed.
    charged: Vec<f64>,
    /// Jobs the metric could not price on any machine (a size or a combination of declared
    /// properties no machine offers, which the engine places by other rules), priced with
    /// Maui's system-wide PE instead.
    priced_system_wide: u64,
}

impl Meter {
    /// A meter of `metric` on `capacity` (a pool is priced as one machine) for `users` users.
    pub(super) fn new(metric: UsageMetric, capacity: &Capacity, users: usize) -> Meter {
        let (catalogue, metric) = capacity.pricing(metric);
        let spec = catalogue
            .expand()
            .map(|t| catalogue.types[t].spec)
            .collect();
        Meter {
            metric,
            totals: totals(&catalogue),
            catalogue,
            spec,
            charged: vec![0.0; users],
            priced_system_wide: 0,
        }
    }

    /// A task's usage per second, before SPEC.
    pub(super) fn price(&mut self, task: &Task) -> f64 {
        let (rate, system_wide) = self.metric.price(task, &self.catalogue, &self.totals);
        self.priced_system_wide += u64::from(system_wide);
        rate
    }

    /// The usage per second of a job priced `rate` that starts on `placed` (times its first
    /// node's SPEC when the metric says so).
    pub(super) fn rate_on(&self, rate: f64, placed: &Placed) -> f64 {
        match (self.metric.uses_spec(), placed.first()) {
            (true, Some(&(node, _))) => rate * self.spec.get(node).copied().unwrap_or(1.0),
            _ => rate,
        }
    }

    /// Totals what a job charged at `rate` accrued in `ran_s` seconds.
    pub(super) fn charge(&mut self, user: u32, rate: f64, ran_s: f64) {
        if let Some(c) = self.charged.get_mut(user as usize) {
            *c += rate * ran_s;
        }
    }

    /// Per user, what it was charged, and how many jobs were priced system-wide.
    pub(super) fn totals(self) -> (Vec<f64>, u64) {
        (self.charged, self.priced_system_wide)
    }
}
