//! Whether a scenario stays within what one run may do: without a `duration`, every program
//! must end by the latest instant a run may reach and all together cause a bounded number of
//! events, at their mean request lengths. It reads the programs, so it sits above both the
//! limits and the programs.

use super::limits::{is_time_sliced, LimitError, MAX_EVENTS_PER_RUN, MAX_TIME_S, START};
use super::{Block, ProcessSpec, Request, Scenario};

impl Scenario {
    /// Checks the settings, and that without a `duration` every program ends by
    /// [`MAX_TIME_S`] and all cause at most [`MAX_EVENTS_PER_RUN`] events, at their mean
    /// request lengths.
    pub fn check(&self) -> Result<(), LimitError> {
        self.simulation.check()?;
        for process in &self.processes {
            START.check(process.start)?;
        }
        if self.simulation.duration.is_some() {
            return Ok(());
        }
        for process in &self.processes {
            let length_s = expected_length(process);
            if process.start + length_s > MAX_TIME_S {
                return Err(LimitError::TooLong {
                    process: process.name.clone(),
                    start_s: process.start,
                    length_s,
                });
            }
        }
        self.check_events()
    }

    /// Checks the events all programs cause at their mean request lengths.
    fn check_events(&self) -> Result<(), LimitError> {
        let quantum = self.simulation.quantum;
        let events: Vec<f64> = self
            .processes
            .iter()
            .map(|p| expected_events(p, quantum))
            .collect();
        let total: f64 = events.iter().sum();
        if total <= MAX_EVENTS_PER_RUN as f64 {
            return Ok(());
        }
        let (largest, process) =
            events
                .iter()
                .zip(&self.processes)
                .fold((0.0, &self.processes[0]), |best, (e, p)| {
                    if *e > best.0 {
                        (*e, p)
                    } else {
                        best
                    }
                });
        Err(LimitError::TooManyEvents {
            process: process.name.clone(),
            largest,
            events: total,
        })
    }
}

/// How long a process's program lasts if every request takes its mean, seconds.
fn expected_length(process: &ProcessSpec) -> f64 {
    let block = |b: &Block| f64::from(b.repeat) * b.requests.iter().map(|r| r.mean).sum::<f64>();
    process.program.blocks.iter().map(block).sum()
}

/// About how many engine events a process's program causes if every request takes its mean:
/// one per request, and one per quantum on a time-sliced resource.
fn expected_events(process: &ProcessSpec, quantum: f64) -> f64 {
    let request = |r: &Request| match &r.resource {
        Some(name) if is_time_sliced(name) => 1.0 + (r.mean / quantum).floor(),
        _ => 1.0,
    };
    let block = |b: &Block| f64::from(b.repeat) * b.requests.iter().map(request).sum::<f64>();
    process.program.blocks.iter().map(block).sum()
}
