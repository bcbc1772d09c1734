//! A scenario file as `fairshare simulate` runs it: processes cycling over resource queues
//! (the bottleneck paper's simulator) or workloads on a cloud's nodes under the runtime
//! fairness service (the heaviness paper's), told apart by the file's tables, with the
//! command's policy and run-count overrides applied. The command line and the Python package
//! both read scenarios here, so they accept and refuse the same files.

use crate::LabError;
use fairshare_core::error::Invalid;
use fairshare_core::policy::{Engine, PolicySpec};
use fairshare_sim::process::result::SimulationResult;
use fairshare_sim::process::{simulate_with_progress, Progress};
use fairshare_sim::runtime::{compare, RuntimeComparison, RuntimeScenario};
use fairshare_sim::scenario::{check_runs, ProcessPolicy, Scenario, MAX_RUNS};
use std::path::Path;

/// A scenario read from its file, ready to run.
pub enum LoadedScenario {
    /// Processes over resource queues.
    Processes(Box<Scenario>),
    /// Workloads under the runtime fairness service.
    Runtime(Box<RuntimeScenario>),
}

/// What a simulation gave.
pub enum Simulated {
    /// The process engine's result.
    Processes(Box<SimulationResult>),
    /// The runtime engine's run beside its run without the service.
    Runtime(Box<RuntimeComparison>),
}

impl LoadedScenario {
    /// The scenario in `path`, under `policy` instead of its own and with `runs` runs when
    /// given.
    pub fn read(
        path: &Path,
        policy: Option<&str>,
        runs: Option<u32>,
    ) -> Result<LoadedScenario, LabError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LabError::Unusable(format!("cannot read {}: {e}", path.display())))?;
        if RuntimeScenario::is_runtime(&text) {
            return Self::runtime(&text, path, policy, runs);
        }
        let mut scenario = Scenario::from_toml(&text, path).map_err(unusable)?;
        if let Some(policy) = policy {
            let spec = PolicySpec::parse_for(policy, Engine::Simulate)
                .map_err(|e| LabError::Unusable(format!("--policy: {e}")))?;
            scenario.simulation.policy = ProcessPolicy::of(&spec).ok_or_else(|| {
                LabError::Unusable("--policy: the registry and the process engine disagree".into())
            })?;
        }
        if let Some(runs) = runs {
            if check_runs(runs).is_err() {
                return Err(LabError::Unusable(format!(
                    "--runs {runs}: expected a whole number from 1 to {MAX_RUNS}"
                )));
            }
            scenario.simulation.runs = runs;
        }
        Ok(LoadedScenario::Processes(Box::new(scenario)))
    }

    /// A runtime scenario of `text`, with the overrides.
    fn runtime(
        text: &str,
        path: &Path,
        policy: Option<&str>,
        runs: Option<u32>,
    ) -> Result<LoadedScenario, LabError> {
        let mut scenario = RuntimeScenario::from_toml(text, path).map_err(unusable)?;
        if let Some(policy) = policy {
            scenario.policy = (policy.parse())
                .map_err(|e: Invalid| LabError::Unusable(format!("--policy: {e}")))?;
        }
        if runs.is_some() {
            return Err(LabError::Unusable(
                "--runs: a runtime scenario is deterministic and runs once".into(),
            ));
        }
        Ok(LoadedScenario::Runtime(Box::new(scenario)))
    }

    /// The runs to make (each told to `progress` as a process simulation goes on).
    pub fn runs(&self) -> u32 {
        match self {
            LoadedScenario::Processes(s) => s.simulation.runs,
            LoadedScenario::Runtime(_) => 1,
        }
    }

    /// Runs it, named `name` in errors and results; returns the result and the events (for a
    /// runtime scenario, the intervals simulated) it took.
    pub fn run(
        &self,
        name: &str,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(Simulated, u64), LabError> {
        let failed =
            |e: &dyn std::fmt::Display| LabError::Unusable(format!("simulating {name}: {e}"));
        match self {
            LoadedScenario::Processes(scenario) => {
                let result =
                    simulate_with_progress(scenario, name, progress).map_err(|e| failed(&e))?;
                let events = result.events;
                Ok((Simulated::Processes(Box::new(result)), events))
            }
            LoadedScenario::Runtime(scenario) => {
                let result = compare(scenario).map_err(|e| failed(&e))?;
                let runs = 1 + u64::from(result.baseline.is_some());
                Ok((
                    Simulated::Runtime(Box::new(result)),
                    u64::from(scenario.ticks()) * runs,
                ))
            }
        }
    }
}

/// A scenario file's error, as it says itself (file, line, field).
fn unusable(error: impl std::fmt::Display) -> LabError {
    LabError::Unusable(error.to_string())
}
