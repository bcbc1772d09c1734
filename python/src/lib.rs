//! `fairshare._native`: the library crates as a Python module. Every function takes and gives
//! what the CLI's `--json` takes and gives, as JSON text, so that a result from Python is the
//! CLI's to the last digit; the `fairshare` package around it turns that text into Python
//! objects and its errors into `fairshare.InputError`.

mod documents;
mod failure;
mod progress;
mod ranker;
mod reader;
mod replay;
mod whatif;

use failure::Failure;
use fairshare_core::alloc::tasks::FillRule;
use fairshare_core::choice::Choice;
use fairshare_core::instance::Instance;
use fairshare_core::policy::registry::POLICIES;
use fairshare_core::policy::Engine;
use fairshare_lab::slurm_conf::{check_log_format, BillingFiles};
use fairshare_lab::TraceSpec;
use fairshare_trace::slurmctld_log::{read_controller_log, ControllerLog};
use fairshare_trace::swf::SwfOptions;
use fairshare_trace::{Format, ReadOptions};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// mimalloc for the library's own allocations, as the `fairshare` binary has: a replay
/// allocates per task, and the system allocator made the same replay a third slower here
/// than on the command line.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _native,
    InputError,
    PyValueError,
    "An input fairshare cannot use: the message says where and what was expected."
);

/// One policy of the registry, as `fairshare.policies()` lists it.
#[derive(Serialize)]
struct PolicyInfo {
    name: &'static str,
    aliases: &'static [&'static str],
    about: &'static str,
    params: Vec<ParamInfo>,
    engines: Vec<&'static str>,
}

/// One parameter of a policy.
#[derive(Serialize)]
struct ParamInfo {
    key: &'static str,
    value: &'static str,
    about: &'static str,
    /// The choices another registry generates (the fairshare functions of `function=`).
    choices: Option<String>,
}

/// Every policy of the registry, as JSON: name, aliases, about, parameters, and the commands
/// that run it.
#[pyfunction]
fn policies_json() -> PyResult<String> {
    let list: Vec<PolicyInfo> = POLICIES
        .iter()
        .map(|e| PolicyInfo {
            name: e.name,
            aliases: e.aliases,
            about: e.about,
            params: (e.params.iter())
                .map(|p| ParamInfo {
                    key: p.key,
                    value: p.value,
                    about: p.about,
                    choices: p.more.map(|more| more()),
                })
                .collect(),
            engines: (e.engines.iter()).map(|e| engine_name(*e)).collect(),
        })
        .collect();
    serde_json::to_string(&list).map_err(|e| InputError::new_err(e.to_string()))
}

/// The name of `engine` as the Python package spells it: the command that runs it.
fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Allocate => "allocate",
        Engine::Replay => "replay",
        Engine::Simulate => "simulate",
        Engine::Runtime => "runtime",
    }
}

/// The allocation of the instance `text` (the JSON of an instance file) under `rule`, as the
/// JSON `fairshare allocate --json` prints.
#[pyfunction]
#[pyo3(signature = (text, rule = "head-of-line"))]
fn allocate_json(py: Python<'_>, text: &str, rule: &str) -> PyResult<String> {
    let rule = FillRule::named(rule).ok_or_else(|| {
        InputError::new_err(format!("rule {rule:?}: expected {}", FillRule::names()))
    })?;
    py.allow_threads(|| {
        let instance = Instance::from_json(text).map_err(|e| e.to_string())?;
        let outcome = instance.solve(rule).map_err(|e| e.to_string())?;
        serde_json::to_string_pretty(&outcome).map_err(|e| e.to_string())
    })
    .map_err(InputError::new_err)
}

/// The error for `error`, an input fairshare cannot use.
fn input_error(error: impl std::fmt::Display) -> PyErr {
    InputError::new_err(error.to_string())
}

/// The option of `T` called `name`, or an error naming `field` and the options.
fn named<T: Choice>(field: &str, name: &str) -> Result<T, Failure> {
    (T::named(name)).ok_or_else(|| format!("{field} {name:?}: expected {}", T::names()).into())
}

/// Where the tasks come from, by the command line's names.
#[derive(Clone)]
pub struct TraceOptions {
    /// The trace files, read in order.
    pub paths: Vec<PathBuf>,
    /// `--format`; detected when `None`.
    pub format: Option<String>,
    /// `--lenient`.
    pub lenient: bool,
    /// `--swf-cpus`.
    pub swf_cpus: String,
    /// `--swf-memory`.
    pub swf_memory: String,
    /// `--partitions`, `--qos` and `--max-tres`: how a Slurm dump's jobs are billed.
    pub billing: BillingFiles,
    /// `--slurmctld-log`, read: a Slurm dump's jobs timed to the millisecond, and the
    /// Slurm scheduler's passes at the turns it shows.
    pub controller_log: Option<Arc<ControllerLog>>,
}

/// `slurmctld_log`, read as `--slurmctld-log` is.
fn controller_log(path: Option<&Path>) -> Result<Option<Arc<ControllerLog>>, Failure> {
    let Some(path) = path else {
        return Ok(None);
    };
    let log = read_controller_log(path).map_err(|e| format!("slurmctld_log: {e}"))?;
    Ok(Some(Arc::new(log)))
}

/// The lab's description of the trace, each option checked as the command line checks it.
fn trace_spec(trace: &TraceOptions) -> Result<TraceSpec, Failure> {
    if trace.paths.is_empty() {
        return Err("traces: give at least one file".into());
    }
    let format = (trace.format.as_deref())
        .map(|f| named::<Format>("format", f))
        .transpose()?;
    if trace.controller_log.is_some() {
        let format = match format {
            Some(format) => format,
            None => Format::detect(&trace.paths[0]).map_err(|e| e.to_string())?,
        };
        check_log_format(format, ("slurmctld_log", "format=\"sacct\""))
            .map_err(|e| e.to_string())?;
    }
    Ok(TraceSpec {
        shown: (trace.paths.iter())
            .map(|p| p.display().to_string())
            .collect(),
        paths: trace.paths.clone(),
        format,
        options: ReadOptions {
            lenient: trace.lenient,
            swf: SwfOptions {
                cpus: named("swf_cpus", &trace.swf_cpus)?,
                memory: named("swf_memory", &trace.swf_memory)?,
                ..SwfOptions::default()
            },
            billing: trace.billing.billing()?,
            controller_log: trace.controller_log.clone(),
        },
    })
}

/// Replays `traces` under `policies` as `fairshare replay` does; `gantt` is a window
/// `START+LENGTH`, `"day"` for the middle day (as `--report` lists), or `None`; `jobs` a file
/// the per-job table is written to (as `--jobs`), or `None`.
#[pyfunction]
#[pyo3(signature = (
    traces, policies, *, format = None, lenient = false, swf_cpus = "auto".to_owned(),
    swf_memory = "auto".to_owned(), capacity_fraction = None, capacity = None, machines = None,
    shares = "equal".to_owned(), queues = None, horizon = None, drain = false,
    rule = "head-of-line".to_owned(), scheduler = "fill".to_owned(), placement = None,
    overrun = "kill".to_owned(), slurm_conf = None, site_weight = None, site_interval = None,
    partitions = None, qos = None,
    max_tres = false, slurmctld_log = None, gantt = None, jobs = None, progress = None
))]
#[allow(clippy::too_many_arguments)]
fn replay_run(
    py: Python<'_>,
    traces: Vec<PathBuf>,
    policies: Vec<Bound<'_, PyAny>>,
    format: Option<String>,
    lenient: bool,
    swf_cpus: String,
    swf_memory: String,
    capacity_fraction: Option<f64>,
    capacity: Option<String>,
    machines: Option<PathBuf>,
    shares: String,
    queues: Option<PathBuf>,
    horizon: Option<String>,
    drain: bool,
    rule: String,
    scheduler: String,
    placement: Option<String>,
    overrun: String,
    slurm_conf: Option<PathBuf>,
    site_weight: Option<u32>,
    site_interval: Option<String>,
    partitions: Option<PathBuf>,
    qos: Option<PathBuf>,
    max_tres: bool,
    slurmctld_log: Option<PathBuf>,
    gantt: Option<String>,
    jobs: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<replay::Replayed> {
    let billing = BillingFiles {
        partitions,
        qos,
        max_tres,
        prefix: "",
    };
    let trace = TraceOptions {
        paths: traces,
        format,
        lenient,
        swf_cpus,
        swf_memory,
        billing,
        controller_log: controller_log(slurmctld_log.as_deref())?,
    };
    let cluster = replay::ClusterOptions {
        capacity_fraction,
        capacity,
        machines,
        horizon,
        drain,
        rule,
        scheduler,
        placement,
        overrun,
        slurm_conf,
        site_weight,
        site_interval,
    };
    let view = match gantt.as_deref() {
        None => replay::MachineView::None,
        Some("day") => replay::MachineView::MiddleDay,
        Some(window) => replay::MachineView::Window(window.to_owned()),
    };
    let run = replay::Run {
        trace: &trace,
        policies: &policies,
        cluster: &cluster,
        shares: &shares,
        queues,
        view,
        jobs,
    };
    replay::replay(py, run, progress)
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(allocate_json, m)?)?;
    m.add_function(wrap_pyfunction!(replay_run, m)?)?;
    m.add_class::<replay::Replayed>()?;
    m.add_function(wrap_pyfunction!(whatif::slurm_whatif_run, m)?)?;
    m.add_class::<whatif::WhatIfRun>()?;
    m.add_function(wrap_pyfunction!(documents::priorities_run, m)?)?;
    m.add_function(wrap_pyfunction!(documents::penalty_run, m)?)?;
    m.add_function(wrap_pyfunction!(documents::simulate_run, m)?)?;
    m.add_function(wrap_pyfunction!(documents::sweep_run, m)?)?;
    m.add_function(wrap_pyfunction!(documents::baa_timeline_run, m)?)?;
    m.add_class::<documents::Document>()?;
    m.add_class::<reader::TraceReader>()?;
    Ok(())
}
