//! `slurm_whatif`: a site bundle replayed under the site's own fairshare and the policies
//! asked for, as `fairshare slurm what-if` runs it (the same lab calls, in parallel), with the
//! GIL released while it runs.

use crate::progress::{Progress, ProgressLanes};
use crate::{input_error, Failure};
use fairshare_core::policy::PolicySpec;
use fairshare_lab::jobs::JobParts;
use fairshare_lab::runs::run_all_listing;
use fairshare_lab::whatif::{WhatIf, WhatIfSummary};
use fairshare_lab::MeasuredTrace;
use fairshare_sim::stats::RunStats;
use pyo3::prelude::*;
use std::path::PathBuf;

/// A finished what-if: the document `fairshare slurm what-if --json` writes, and what the runs
/// took.
#[pyclass(module = "fairshare._native", frozen)]
pub struct WhatIfRun {
    summary: WhatIfSummary,
    stats: Vec<RunStats>,
}

#[pymethods]
impl WhatIfRun {
    /// The document as `fairshare slurm what-if --json` writes it, to the byte.
    fn whatif_json(&self) -> PyResult<String> {
        let mut text = serde_json::to_string_pretty(&self.summary).map_err(input_error)?;
        text.push('\n');
        Ok(text)
    }

    /// The replay's summary within it, as `fairshare replay --json` would write it.
    fn json(&self) -> PyResult<String> {
        let mut text =
            serde_json::to_string_pretty(&self.summary.prediction).map_err(input_error)?;
        text.push('\n');
        Ok(text)
    }

    /// The page `fairshare slurm what-if --report` writes.
    fn html(&self) -> String {
        fairshare_report::whatif_html(&self.summary)
    }

    /// The text `fairshare slurm what-if` prints.
    fn table(&self) -> String {
        fairshare_report::whatif_table(&self.summary, &self.stats)
    }

    /// What the replay's results warn of.
    fn warnings(&self) -> Vec<String> {
        fairshare_report::replay_warnings(&self.summary.prediction)
    }

    /// What was taken from the bundle, in words.
    fn notes(&self) -> Vec<String> {
        self.summary.taken.clone()
    }

    /// Each run's wall-clock seconds and events, as `--stats` writes them (JSON).
    fn stats(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.stats).map_err(input_error)
    }
}

/// Predicts `policies` on the site bundle in `dir` as `fairshare slurm what-if` does; `jobs` a
/// file the per-job table is written to (as `--jobs`), or `None`.
#[pyfunction]
#[pyo3(signature = (dir, policies, *, jobs = None, progress = None))]
pub fn slurm_whatif_run(
    py: Python<'_>,
    dir: PathBuf,
    policies: Vec<String>,
    jobs: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<WhatIfRun> {
    Ok(whatif(py, dir, policies, jobs, progress)?)
}

/// [`slurm_whatif_run`], failing with what a Python caller is told.
fn whatif(
    py: Python<'_>,
    dir: PathBuf,
    policies: Vec<String>,
    jobs: Option<PathBuf>,
    progress: Option<PyObject>,
) -> Result<WhatIfRun, Failure> {
    let policies = (policies.iter())
        .map(|p| p.parse::<PolicySpec>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("policies: {e}"))?;
    let whatif = WhatIf::open(&dir, policies)?;
    py.allow_threads(|| {
        let measured = MeasuredTrace::scan(&whatif.trace, &mut |_| {})?;
        let plan = whatif.plan(&measured)?;
        let parts = jobs.as_deref().map(JobParts::beside).transpose()?;
        let span = (measured.span_s().ceil() as u64).max(1);
        let count = whatif.policies.len();
        let progress = Progress::new(progress, span * count as u64);
        let lanes = ProgressLanes {
            progress: &progress,
            span,
        };
        let ran = run_all_listing(&plan, count, &lanes, None, parts, |i, parts, progress| {
            whatif.run(&plan, i, parts, progress)
        })?;
        progress.finish()?;
        let stats = (ran.iter().zip(&whatif.policies))
            .map(|(((result, _), wall_s), policy)| {
                RunStats::new(&policy.name, result.events, *wall_s)
            })
            .collect();
        let runs = ran.into_iter().map(|(run, _)| run).collect();
        Ok(WhatIfRun {
            summary: whatif.summary(&plan, runs)?,
            stats,
        })
    })
}
