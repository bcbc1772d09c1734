//! fairshare's trace readers (SWF, Google, Alibaba, Slurm sacct) on their own, streaming: a
//! researcher reads a trace chunk by chunk as columns, the same tasks a replay would see,
//! without holding the whole trace in memory.

use crate::{input_error, trace_spec, Failure, TraceOptions};
use fairshare_core::model::Task;
use fairshare_lab::slurm_conf::BillingFiles;
use fairshare_trace::TaskSource;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Mutex;

/// An open trace, read a chunk at a time.
#[pyclass(module = "fairshare._native", frozen)]
pub struct TraceReader {
    /// The source; `None` only while a chunk is being read without the GIL.
    source: Mutex<Option<Box<dyn TaskSource + Send>>>,
    /// Whether malformed records are skipped (else the first stops the read, with the hint).
    lenient: bool,
}

#[pymethods]
impl TraceReader {
    /// Opens the traces (read in order) as `fairshare replay` would.
    #[new]
    #[pyo3(signature = (
        traces, *, format = None, lenient = false, swf_cpus = "auto".to_owned(),
        swf_memory = "auto".to_owned()
    ))]
    fn new(
        traces: Vec<PathBuf>,
        format: Option<String>,
        lenient: bool,
        swf_cpus: String,
        swf_memory: String,
    ) -> PyResult<TraceReader> {
        let spec = trace_spec(&TraceOptions {
            paths: traces,
            format,
            lenient,
            swf_cpus,
            swf_memory,
            billing: BillingFiles::default(),
            controller_log: None,
        })
        .map_err(PyErr::from)?;
        let source = fairshare_trace::open(&spec.paths, spec.format, &spec.options)
            .map_err(Failure::from)?;
        Ok(TraceReader {
            source: Mutex::new(Some(source)),
            lenient,
        })
    }

    /// The resources, in the order of the demand columns.
    fn resources(&self) -> Vec<String> {
        self.with_source(|s| s.resources().to_vec())
    }

    /// The unit of each resource.
    fn units(&self) -> Vec<String> {
        self.with_source(|s| s.units().to_vec())
    }

    /// What has been read, yielded and skipped so far, as the results' `input` (JSON).
    fn stats(&self) -> PyResult<String> {
        serde_json::to_string(&self.with_source(|s| s.stats().clone())).map_err(input_error)
    }

    /// Up to `size` more tasks as columns (a dict of lists), or `None` at the end.
    fn next_chunk(&self, py: Python<'_>, size: usize) -> PyResult<Option<Py<PyDict>>> {
        let mut slot = self.slot();
        let Some(mut source) = slot.take() else {
            return Err(input_error("the trace is being read by another thread"));
        };
        let (tasks, source) = py.allow_threads(move || {
            let tasks = (&mut *source)
                .take(size.max(1))
                .collect::<Result<Vec<Task>, _>>();
            (tasks, source)
        });
        let source = slot.insert(source);
        let tasks = tasks.map_err(|e| match e.skip_reason() {
            Some(_) if !self.lenient => Failure::record(e),
            _ => Failure::from(e),
        })?;
        if tasks.is_empty() {
            return Ok(None);
        }
        columns(py, &**source, &tasks).map(Some)
    }
}

impl TraceReader {
    /// The slot of the source, whoever held it last.
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn TaskSource + Send>>> {
        self.source.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What `look` sees of the source (nothing, while another thread reads a chunk).
    fn with_source<T: Default>(&self, look: impl FnOnce(&dyn TaskSource) -> T) -> T {
        self.slot().as_deref().map(|s| look(s)).unwrap_or_default()
    }
}

/// The tasks as columns: times in seconds on the trace's clock, names for indices, one column
/// per resource.
fn columns(py: Python<'_>, source: &dyn TaskSource, tasks: &[Task]) -> PyResult<Py<PyDict>> {
    let seconds = |us: u64| us as f64 / 1e6;
    let name = |names: &[String], i: Option<u32>| i.and_then(|i| names.get(i as usize).cloned());
    let table = PyDict::new(py);
    table.set_item("id", tasks.iter().map(|t| t.id).collect::<Vec<_>>())?;
    let users = source.users();
    table.set_item(
        "user",
        tasks
            .iter()
            .map(|t| users[t.user as usize].as_str())
            .collect::<Vec<_>>(),
    )?;
    table.set_item(
        "submit_s",
        tasks
            .iter()
            .map(|t| seconds(t.submit.0))
            .collect::<Vec<_>>(),
    )?;
    table.set_item(
        "start_s",
        tasks
            .iter()
            .map(|t| t.start.map(|s| seconds(s.0)))
            .collect::<Vec<_>>(),
    )?;
    table.set_item(
        "runtime_s",
        tasks.iter().map(|t| seconds(t.runtime)).collect::<Vec<_>>(),
    )?;
    table.set_item(
        "walltime_s",
        tasks
            .iter()
            .map(|t| t.walltime.map(seconds))
            .collect::<Vec<_>>(),
    )?;
    for (r, resource) in source.resources().iter().enumerate() {
        table.set_item(
            resource,
            tasks.iter().map(|t| t.demand[r]).collect::<Vec<_>>(),
        )?;
    }
    let queues = source.queues();
    table.set_item(
        "queue",
        tasks
            .iter()
            .map(|t| name(queues, t.queue))
            .collect::<Vec<_>>(),
    )?;
    let partitions = source.partitions();
    table.set_item(
        "partition",
        tasks
            .iter()
            .map(|t| name(partitions, t.partition))
            .collect::<Vec<_>>(),
    )?;
    table.set_item("nodes", tasks.iter().map(|t| t.nodes).collect::<Vec<_>>())?;
    table.set_item(
        "exclusive",
        tasks.iter().map(|t| t.exclusive).collect::<Vec<_>>(),
    )?;
    table.set_item(
        "properties",
        tasks
            .iter()
            .map(|t| t.properties.clone())
            .collect::<Vec<_>>(),
    )?;
    table.set_item(
        "running",
        tasks.iter().map(|t| t.running).collect::<Vec<_>>(),
    )?;
    table.set_item(
        "cancelled_s",
        tasks
            .iter()
            .map(|t| t.cancelled.map(|c| seconds(c.0)))
            .collect::<Vec<_>>(),
    )?;
    Ok(table.unbind())
}
