//! How long runs took on the wall clock, kept apart from the result documents.
//!
//! A result document ([`PolicyResult`](crate::cluster::PolicyResult),
//! [`SimulationResult`](crate::process::result::SimulationResult), the summaries) depends only on its
//! input and seed, so two runs give the same JSON byte for byte. What the machine decides —
//! seconds taken, events per second — lives here, for the terminal and for `--stats`.

use serde::Serialize;
use std::time::Instant;

/// The wall-clock figures of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunStats {
    /// What ran (a policy, a scenario, a sweep cell).
    pub run: String,
    /// Engine events processed.
    pub events: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
    /// Engine events per wall-clock second (0 when the run took no measurable time).
    pub events_per_s: f64,
}

impl RunStats {
    /// The figures of `run`, which processed `events` events in `wall_s` seconds.
    pub fn new(run: impl Into<String>, events: u64, wall_s: f64) -> RunStats {
        RunStats {
            run: run.into(),
            events,
            wall_s,
            events_per_s: if wall_s > 0.0 {
                events as f64 / wall_s
            } else {
                0.0
            },
        }
    }
}

/// Calls `work`, returning its value and the wall-clock seconds it took.
pub fn timed<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let value = work();
    (value, started.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_events_over_seconds() {
        assert_eq!(RunStats::new("drf", 100, 0.5).events_per_s, 200.0);
        assert_eq!(RunStats::new("drf", 100, 0.0).events_per_s, 0.0);
        let ((), seconds) = timed(|| ());
        assert!(seconds >= 0.0);
    }
}
