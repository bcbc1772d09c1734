//! The commands whose result is one document: `priorities`, `penalty`, `simulate`, `sweep` and
//! `baa timeline`. Each runs the same lab call as the command, with the GIL released, and
//! gives the document as the command writes it: JSON, the table, the HTML report where the
//! command has one.

use crate::progress::{Progress, ProgressLanes};
use crate::replay::ClusterOptions;
use crate::{named, trace_spec, Failure, TraceOptions};
use fairshare_core::priority::fairshare::FairshareFunction;
use fairshare_core::usage::penalty::PeMode;
use fairshare_lab::input::{parse_decay, parse_duration, parse_moment};
use fairshare_lab::penalty::{explain, PenaltyRequest};
use fairshare_lab::runs::run_all;
use fairshare_lab::simulation::{LoadedScenario, Simulated};
use fairshare_lab::slurm_conf::BillingFiles;
use fairshare_lab::{sweep, MeasuredTrace, PrioritiesRequest};
use fairshare_sim::stats::{timed, RunStats};
use fairshare_trace::parse_size;
use pyo3::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

/// A command's result as it writes it.
#[pyclass(module = "fairshare._native", frozen)]
pub struct Document {
    json: String,
    table: String,
    html: Option<String>,
}

impl Document {
    /// The document of `value`: its JSON as `--json` writes it, its table, its page.
    fn of<T: Serialize>(
        value: &T,
        table: String,
        html: Option<String>,
    ) -> Result<Document, Failure> {
        let mut json = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
        json.push('\n');
        Ok(Document { json, table, html })
    }
}

#[pymethods]
impl Document {
    /// The JSON the command writes with `--json`, to the byte.
    fn json(&self) -> &str {
        &self.json
    }

    /// The table the command prints.
    fn table(&self) -> &str {
        &self.table
    }

    /// The HTML report the command writes with `--report`, if it has one.
    fn html(&self) -> Option<&str> {
        self.html.as_deref()
    }
}

/// Runs `work` without the GIL, its error as an `InputError`.
fn released<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Failure> + Send,
) -> PyResult<T> {
    py.allow_threads(work).map_err(PyErr::from)
}

/// `fairshare priorities`: each account's and user's fairshare standing at a moment of a log.
#[pyfunction]
#[pyo3(signature = (
    traces, *, format = None, lenient = false, swf_cpus = "auto".to_owned(),
    swf_memory = "auto".to_owned(), shares = None, at = None, policy = "fair-tree".to_owned(),
    decay = "half-life:7d".to_owned(), usage = "cpu".to_owned(), machines = None, cluster = None
))]
#[allow(clippy::too_many_arguments)]
pub fn priorities_run(
    py: Python<'_>,
    traces: Vec<PathBuf>,
    format: Option<String>,
    lenient: bool,
    swf_cpus: String,
    swf_memory: String,
    shares: Option<PathBuf>,
    at: Option<String>,
    policy: String,
    decay: String,
    usage: String,
    machines: Option<PathBuf>,
    cluster: Option<String>,
) -> PyResult<Document> {
    let spec = trace_spec(&TraceOptions {
        paths: traces,
        format,
        lenient,
        swf_cpus,
        swf_memory,
        billing: BillingFiles::default(),
        controller_log: None,
    });
    let request = || -> Result<PrioritiesRequest, Failure> {
        Ok(PrioritiesRequest {
            shares,
            at: at
                .as_deref()
                .map(parse_moment)
                .transpose()
                .map_err(|e| format!("at: {e}"))?,
            function: FairshareFunction::parse(&policy)
                .map_err(|e| format!("function {policy:?}: {e}"))?,
            decay: parse_decay(&decay).map_err(|e| format!("decay: {e}"))?,
            usage: usage.parse().map_err(|e| format!("usage: {e}"))?,
            machines,
            cluster,
        })
    };
    let (spec, request) = (spec.map_err(PyErr::from)?, request().map_err(PyErr::from)?);
    released(py, || {
        let measured = MeasuredTrace::scan(&spec, &mut |_| {})?;
        let document = measured.standings(&request)?;
        Document::of(
            &document,
            fairshare_report::priorities_table(&document),
            None,
        )
    })
}

/// `fairshare penalty`: what one job is charged machine by machine.
#[pyfunction]
#[pyo3(signature = (
    machines, *, cpus = 1.0, mem = "0".to_owned(), gpus = 0.0, scratch = "0".to_owned(),
    nodes = 1, exclusive = false, properties = Vec::new(), walltime = "1h".to_owned(),
    queue_cost = 1.0, spec = None, mode = "max".to_owned()
))]
#[allow(clippy::too_many_arguments)]
pub fn penalty_run(
    py: Python<'_>,
    machines: PathBuf,
    cpus: f64,
    mem: String,
    gpus: f64,
    scratch: String,
    nodes: u32,
    exclusive: bool,
    properties: Vec<String>,
    walltime: String,
    queue_cost: f64,
    spec: Option<f64>,
    mode: String,
) -> PyResult<Document> {
    let request = || -> Result<PenaltyRequest, Failure> {
        Ok(PenaltyRequest {
            machines,
            cpus,
            memory_bytes: parse_size(&mem).map_err(|e| format!("mem: {e}"))?,
            gpus,
            scratch_bytes: parse_size(&scratch).map_err(|e| format!("scratch: {e}"))?,
            nodes,
            exclusive,
            properties,
            walltime: parse_duration(&walltime).map_err(|e| format!("walltime: {e}"))?,
            queue_cost,
            spec,
            mode: named::<PeMode>("mode", &mode)?,
        })
    };
    let request = request().map_err(PyErr::from)?;
    released(py, || {
        let explanation = explain(&request)?;
        Document::of(
            &explanation,
            fairshare_report::penalty_table(&explanation),
            None,
        )
    })
}

/// `fairshare simulate`: a process or runtime scenario, with its report; `progress` is told
/// the runs finished.
#[pyfunction]
#[pyo3(signature = (scenario, *, policy = None, runs = None, progress = None))]
pub fn simulate_run(
    py: Python<'_>,
    scenario: PathBuf,
    policy: Option<String>,
    runs: Option<u32>,
    progress: Option<PyObject>,
) -> PyResult<Document> {
    released(py, || {
        let simulation = LoadedScenario::read(&scenario, policy.as_deref(), runs)?;
        let name = scenario.display().to_string();
        let progress = Progress::new(progress, u64::from(simulation.runs()));
        let mut told = 0;
        let (result, wall_s) = timed(|| {
            simulation.run(&name, &mut |p| {
                progress.advance(u64::from(p.finished.saturating_sub(told)));
                told = told.max(p.finished);
            })
        });
        progress.advance(u64::from(simulation.runs().saturating_sub(told)));
        progress.finish()?;
        let (result, events) = result?;
        let stats = RunStats::new(&name, events, wall_s);
        match result {
            Simulated::Processes(r) => Document::of(
                &*r,
                fairshare_report::simulate_table(&r, Some(&stats)),
                Some(fairshare_report::simulate_html(&r)),
            ),
            Simulated::Runtime(r) => Document::of(
                &*r,
                fairshare_report::runtime_table(&r),
                Some(fairshare_report::runtime_html(&r)),
            ),
        }
    })
}

/// `fairshare sweep`: the SDRF paper's grid of discount factors × capacity fractions, or one
/// shard of it; `progress` is told the cells finished.
#[pyfunction]
#[pyo3(signature = (
    traces, *, fractions, nines, baseline = "drf".to_owned(), shard = (0, 1), format = None,
    lenient = false, swf_cpus = "auto".to_owned(), swf_memory = "auto".to_owned(), horizon = None,
    drain = false, rule = "head-of-line".to_owned(), scheduler = "fill".to_owned(),
    overrun = "kill".to_owned(), progress = None
))]
#[allow(clippy::too_many_arguments)]
pub fn sweep_run(
    py: Python<'_>,
    traces: Vec<PathBuf>,
    fractions: Vec<f64>,
    nines: Vec<u32>,
    baseline: String,
    shard: (usize, usize),
    format: Option<String>,
    lenient: bool,
    swf_cpus: String,
    swf_memory: String,
    horizon: Option<String>,
    drain: bool,
    rule: String,
    scheduler: String,
    overrun: String,
    progress: Option<PyObject>,
) -> PyResult<Document> {
    let cluster = ClusterOptions {
        capacity_fraction: None,
        capacity: None,
        machines: None,
        horizon,
        drain,
        rule,
        scheduler,
        placement: None,
        overrun,
        slurm_conf: None,
        site_weight: None,
        site_interval: None,
    };
    let trace = TraceOptions {
        paths: traces,
        format,
        lenient,
        swf_cpus,
        swf_memory,
        billing: BillingFiles::default(),
        controller_log: None,
    };
    released(py, || {
        let cells = sweep::plan(&fractions, &nines, &baseline, shard)?;
        let (replay, _) = cluster.replay(&trace.billing, None)?;
        let measured = MeasuredTrace::scan(&trace_spec(&trace)?, &mut |_| {})?;
        let progress = Progress::new(progress, cells.len() as u64);
        let lanes = ProgressLanes {
            progress: &progress,
            span: 0,
        };
        let ran = run_all(cells.len(), &lanes, |i, _| {
            sweep::run_cell(&measured, &replay, &cells[i])
        })?;
        let results = ran.into_iter().map(|(cell, _)| cell).collect();
        progress.finish()?;
        let summary = sweep::summary(&measured, &replay, shard.0, shard.1, results)?;
        Document::of(
            &summary,
            fairshare_report::sweep_table(&summary),
            Some(fairshare_report::sweep_html(&summary)),
        )
    })
}

/// `fairshare baa timeline`: a timeline of joins, departures and demand caps, epoch by epoch.
#[pyfunction]
pub fn baa_timeline_run(py: Python<'_>, timeline: PathBuf) -> PyResult<Document> {
    released(py, || {
        let read = fairshare_trace::read_timeline(&timeline)?;
        let summary = fairshare_lab::baa::timeline(&read)
            .map_err(|e| format!("{}: cannot run: {e}", timeline.display()))?;
        Document::of(&summary, fairshare_report::timeline_table(&summary), None)
    })
}
