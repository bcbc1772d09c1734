//! The machine a trace is replayed on: a pool sized from its mean load, one given as
//! amounts, machines from a file, or the trace's own machine, with what a reader should doubt
//! of it.

use super::{LabError, MeasuredTrace, MOST_MACHINES};
use crate::load::RecordedUse;
use fairshare_sim::cluster::Capacity;
use fairshare_trace::Format;

/// Below this mean use of the processors at the peak of a log's own schedule, a machine sized
/// from that peak is warned about ([`MeasuredTrace::own_machine`]).
pub const SPARSE_PEAK: f64 = 0.4;

/// The warning for processors sized from the peak of a log's own schedule (`used`, processors
/// at index `cpu`) when that schedule kept them, on average, less than [`SPARSE_PEAK`] busy: a
/// peak far above the usual load is more often jobs recorded overlapping than the machine.
fn sparse_peak(used: &RecordedUse, cpu: usize) -> Option<String> {
    let (peak, mean) = (used.peak[cpu], used.mean[cpu]);
    (mean < SPARSE_PEAK * peak).then(|| format!(
        "the machine's {peak} processors are the most the log's own schedule ran at once, but that schedule kept them only {:.1} % busy on average (warned below {:.0} %): such a peak is more often jobs recorded overlapping than the machine, and on too large a machine every policy looks alike; give the site's machine with --capacity (e.g. cpu=N) or a .machines file beside the log",
        100.0 * mean / peak,
        100.0 * SPARSE_PEAK
    ))
}

/// A trace's own machine, where it came from in words, and what a reader should doubt of it.
#[derive(Debug, Clone)]
pub struct OwnMachine {
    /// The machine.
    pub capacity: Capacity,
    /// Where it came from, in words.
    pub source: String,
    /// A warning about it, when it was sized from the log's own schedule and looks too large.
    pub doubt: Option<String>,
}

impl MeasuredTrace {
    /// A pool of `fraction` × R, R being the trace's mean requested amount of each resource.
    pub fn pool_of_mean(&self, fraction: f64) -> Result<Capacity, LabError> {
        if !(fraction.is_finite() && fraction > 0.0) {
            unusable!("a capacity fraction must be a number > 0, found {fraction}");
        }
        let pool: Vec<f64> = self
            .load
            .mean_demand()
            .iter()
            .map(|r| r * fraction)
            .collect();
        if let Some(r) = pool.iter().position(|c| !(c.is_finite() && *c > 0.0)) {
            let name = &self.resources[r];
            unusable!(
                "the trace's mean request R of {name} is {}, so {fraction} × R gives no usable capacity; give one with --capacity",
                pool[r] / fraction
            );
        }
        Ok(Capacity::Pool(pool))
    }

    /// The machines listed in `path` (an SWF `.machines` file, an Alibaba node list, a Slurm
    /// site's nodes and partitions for a sacct dump, or a TOML catalogue for traces whose
    /// memory is in KB: SWF and sacct), over the resources of the
    /// replay.
    pub fn machines(&self, path: &std::path::Path) -> Result<Capacity, LabError> {
        let shown = path.display();
        let catalogue = if path.extension().is_some_and(|e| e == "toml") {
            if self.format != Format::SWF && self.format != Format::SACCT {
                unusable!(
                    "{shown}: a TOML catalogue gives memory in KB and the {} trace's units differ; use its own machine list",
                    self.format
                );
            }
            fairshare_trace::read_catalogue(path)?
        } else {
            fairshare_trace::read_machines(path, self.format)?
        };
        let total = catalogue.nodes();
        if total == 0 {
            unusable!("{shown}: lists no machines");
        }
        if total > MOST_MACHINES {
            unusable!("{shown}: {total} machines; at most {MOST_MACHINES} can be simulated");
        }
        // Machine lists give resources in the reader's order (CPU first); a trace read with
        // fewer resources (e.g. SWF without memory) uses the leading ones.
        let Some(catalogue) = catalogue.project(&self.keep) else {
            let listed = catalogue
                .types
                .iter()
                .map(|t| t.capacity.len())
                .min()
                .unwrap_or(0);
            unusable!(
                "{shown}: machines list {listed} resources, the trace {} ({})",
                self.resources.len(),
                self.resources.join(", ")
            );
        };
        for (r, name) in self.resources.iter().enumerate() {
            if catalogue
                .types
                .iter()
                .all(|t| t.count == 0 || t.capacity[r] <= 0.0)
            {
                unusable!("{shown}: no machine has any {name}, yet the trace's tasks request it");
            }
        }
        Ok(Capacity::Machines(catalogue))
    }

    /// A pool written as `name=amount,...`, naming every resource of the replay once
    /// (resources of the trace that no task requests may be named, and are left out).
    pub fn pool(&self, spec: &str) -> Result<Capacity, LabError> {
        let mut pool = vec![None; self.resources.len()];
        for part in spec.split(',') {
            let Some((name, amount)) = part.split_once('=') else {
                unusable!("--capacity: expected NAME=AMOUNT, found {part:?}");
            };
            let name = name.trim();
            let Ok(amount) = amount.trim().parse::<f64>() else {
                unusable!("--capacity: {name}: expected a number, found {amount:?}");
            };
            if self.input.resources_unused.iter().any(|u| u == name) && amount >= 0.0 {
                continue;
            }
            let Some(r) = self.resources.iter().position(|n| n == name) else {
                unusable!(
                    "--capacity: unknown resource {name:?}; the replay has {}",
                    self.resources.join(", ")
                );
            };
            if !(amount.is_finite() && amount > 0.0) {
                unusable!("--capacity: {name} must be a positive amount, found {amount}");
            }
            pool[r] = Some(amount);
        }
        match pool.iter().position(Option::is_none) {
            Some(r) => unusable!("--capacity: give an amount for {} too", self.resources[r]),
            None => Ok(Capacity::Pool(pool.into_iter().flatten().collect())),
        }
    }

    /// The trace's own machine (SWF), where it was found, and what a reader should doubt of
    /// it: a `.machines` file beside the first trace file; else the processors the header
    /// declares (`MaxProcs`) and, for the other resources, the
    /// most the log's own schedule ran at once; else that most of every resource. `None` when
    /// the trace says nothing about its machine.
    pub fn own_machine(&self) -> Result<Option<OwnMachine>, LabError> {
        if self.format != Format::SWF {
            return Ok(None);
        }
        if let Some(path) = self.beside(".machines") {
            return Ok(Some(OwnMachine {
                capacity: self.machines(&path)?,
                source: format!("{}, found beside the log", path.display()),
                doubt: None,
            }));
        }
        let declared = self.input.declared_processors;
        let cpu = self.resources.iter().position(|r| r == "cpu");
        let used = self.recorded_use.as_ref();
        let used = used.filter(|u| u.peak.iter().all(|x| *x > 0.0));
        Ok(match (declared.zip(cpu), used) {
            (Some((procs, _)), _) if self.resources.len() == 1 => Some(OwnMachine {
                capacity: Capacity::Pool(vec![procs as f64]),
                source: format!("the log's header (MaxProcs: {procs})"),
                doubt: None,
            }),
            (Some((procs, cpu)), Some(used)) => {
                let mut capacity = used.peak.clone();
                capacity[cpu] = procs as f64;
                let derived: Vec<usize> = (0..capacity.len()).filter(|&r| r != cpu).collect();
                Some(OwnMachine {
                    capacity: Capacity::Pool(capacity),
                    source: format!(
                        "the log's header (MaxProcs: {procs}) for cpu; the most the log's own schedule ran at once for {}",
                        derived.iter().map(|&r| self.resources[r].as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    doubt: None,
                })
            }
            (None, Some(used)) => Some(OwnMachine {
                capacity: Capacity::Pool(used.peak.clone()),
                source: "no machine declared: the most of each resource the log's own schedule ran at once".into(),
                doubt: cpu.and_then(|cpu| sparse_peak(used, cpu)),
            }),
            _ => None,
        })
    }
}
