//! The Alibaba GPU cluster trace 2023 ("Beware of Fragmentation", ATC'23): pod and node lists.
//!
//! It is the public trace with GPUs — fractional GPUs at that — and a heterogeneous cluster,
//! so it exercises the third resource and machine placement. The pod list is a CSV with a
//! header; columns are found by name, so their order does not matter:
//!
//! | task | from |
//! |---|---|
//! | `id` | the row's rank among the data rows of all files given (from 0); a `name` repeated across rows is counted in [`crate::ReadStats::duplicate_ids`] |
//! | `user` | `qos` (LS, BE, Burstable, Guaranteed): the trace has no tenant column; listed in order of first appearance in the file |
//! | `submit` | `creation_time`, seconds |
//! | `start` | `scheduled_time`, seconds |
//! | `runtime` | `deletion_time` − `scheduled_time` |
//! | cpu | `cpu_milli` / 1000, cores |
//! | mem | `memory_mib`, MiB |
//! | gpu | `num_gpu` × `gpu_milli` / 1000, GPUs |
//!
//! The GPU reading: in the data, a pod asking for several GPUs always has `gpu_milli` = 1000
//! (whole GPUs), and a pod with `gpu_milli` < 1000 asks for one GPU, shared; so `gpu_milli` is the
//! share of each GPU and the product is the GPU amount (0.46 for `1,460`, 8 for `8,1000`).
//!
//! `pod_phase` is the last phase observed and is not used: the times tell what happened. Every
//! pod has a deletion time; pods never scheduled (blank `scheduled_time`, the Pending ones) are
//! skipped as "never scheduled", pods whose deletion time is blank or earlier than the
//! scheduling as "no known end", pods asking for nothing as "zero request". Failed pods ran and
//! are kept, as the Google reader keeps failed tasks.
//!
//! The file is a snapshot, not a log, and is not in creation order in general, so the reader
//! loads it whole and sorts it by creation time (ties in file order): memory is the whole pod
//! list (8,152 pods in the shared file).
//!
//! The node list (`sn, cpu_milli, memory_mib, gpu, model`) becomes one [`NodeType`] per distinct
//! (cores, memory, GPUs, GPU model), with its count, in order of first appearance, named like
//! `G2 x8 96c 384GiB` or `cpu 32c 256GiB`.

use crate::input::{columns, Col, HeadedCsv, Record};
use crate::source::{Loaded, Meta, Source, Task};
use crate::{Format, ReadOptions, TraceError};
use fairshare_core::model::NodeType;
use fairshare_core::model::Time;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const POD_COLUMNS: [&str; 8] = [
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "qos",
    "creation_time",
    "scheduled_time",
    "deletion_time",
];

/// One pod row, parsed.
struct Pod<'r> {
    demand: Vec<f64>,
    qos: &'r str,
    creation: Time,
    scheduled: Option<Time>,
    deletion: Option<Time>,
}

/// The Alibaba GPU 2023 pod list in the format registry ([`crate::Format`]): a CSV header
/// naming `creation_time`; machines in the node list.
pub const FORMAT: Format = Format {
    name: "alibaba",
    about: "Alibaba GPU 2023 pod list",
    // Ranked after sacct's header, so that a line naming both columns stays a sacct dump.
    detect: |line| {
        let header = line.split(',').any(|h| h.trim() == "creation_time");
        header.then_some(Format::HEADER + 1)
    },
    sample: "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
    open: |paths, options| Box::new(open(paths, options)),
    machines: Some(read_machines),
};

/// A source of the pods of the pod lists `paths`, sorted by creation time.
pub(crate) fn open(paths: &[PathBuf], options: &ReadOptions) -> Source<Loaded> {
    let mut meta = Meta::new(
        &["cpu", "mem", "gpu"],
        &["cores", "MiB", "GPUs"],
        options.lenient,
    );
    let mut tasks = Vec::new();
    let mut names = HashSet::new();
    let error = paths
        .iter()
        .try_for_each(|path| read_pods(path, &mut meta, &mut tasks, &mut names))
        .err();
    Loaded::source(tasks, error, meta)
}

/// Reads the pod list `path` into `tasks`; `Err` for an error that ends the stream.
fn read_pods(
    path: &Path,
    meta: &mut Meta,
    tasks: &mut Vec<Task>,
    names: &mut HashSet<Vec<u8>>,
) -> Result<(), TraceError> {
    let mut file = HeadedCsv::open(path)?;
    let header = file.header()?;
    let name = header.iter().position(|h| h.trim_ascii() == b"name");
    let name = name.map(|i| Col::new(i + 1, "name"));
    let cols = columns(path, header, POD_COLUMNS)?;
    while let Some(record) = file.next_record()? {
        if let Some(col) = name {
            if !names.insert(record.raw(col).to_vec()) {
                meta.duplicate();
            }
        }
        let pod = match pod(&record, &cols) {
            Ok(pod) => pod,
            Err(e) => match meta.reject(e) {
                Some(e) => return Err(e),
                None => continue,
            },
        };
        meta.read();
        meta.found();
        let id = meta.stats.tasks_found - 1;
        match task(&pod, id) {
            Ok(task) => tasks.push(Task {
                user: meta.user(pod.qos),
                ..task
            }),
            Err(reason) => meta.skip(reason, 1),
        }
    }
    Ok(())
}

/// The pod of one row.
fn pod<'r>(record: &'r Record, cols: &[Col; 8]) -> Result<Pod<'r>, TraceError> {
    let [cpu, mem, num_gpu, gpu_milli, qos, creation, scheduled, deletion] = *cols;
    let at = record.at;
    let amount = |col: Col| at.amount(col, record.raw(col));
    let optional = |col: Col| at.optional(record.raw(col), |r| at.seconds(col, r));
    Ok(Pod {
        demand: vec![
            amount(cpu)? / 1000.0,
            amount(mem)?,
            amount(num_gpu)? * amount(gpu_milli)? / 1000.0,
        ],
        qos: at.text(qos, record.raw(qos))?,
        creation: at.seconds(creation, record.raw(creation))?,
        scheduled: optional(scheduled)?,
        deletion: optional(deletion)?,
    })
}

/// The task of `pod`, or the reason to skip it.
fn task(pod: &Pod, id: u64) -> Result<Task, &'static str> {
    let scheduled = pod.scheduled.ok_or("never scheduled")?;
    let deletion = pod
        .deletion
        .filter(|&d| d >= scheduled)
        .ok_or("no known end")?;
    if pod.demand.iter().all(|&x| x == 0.0) {
        return Err("zero request");
    }
    let runtime = deletion.as_micros() - scheduled.as_micros();
    let mut task = Task::new(id, 0, pod.creation, runtime, pod.demand.clone());
    task.start = Some(scheduled);
    Ok(task)
}

const NODE_COLUMNS: [&str; 3] = ["cpu_milli", "memory_mib", "gpu"];

/// Reads a node list: one [`NodeType`] per distinct (cores, MiB, GPUs, GPU model), capacity
/// `[cores, MiB, GPUs]`.
pub(crate) fn read_machines(path: &Path) -> Result<Vec<NodeType>, TraceError> {
    let mut file = HeadedCsv::open(path)?;
    let header = file.header()?;
    let model = header.iter().position(|h| h.trim_ascii() == b"model");
    let model = model.map(|i| Col::new(i + 1, "model"));
    let cols = columns(path, header, NODE_COLUMNS)?;
    let mut machines: Vec<NodeType> = Vec::new();
    let mut kinds: HashMap<String, usize> = HashMap::new();
    while let Some(record) = file.next_record()? {
        let node = node(&record, &cols, model)?;
        match kinds.get(&node.name) {
            Some(&i) => machines[i].count = machines[i].count.saturating_add(1),
            None => {
                kinds.insert(node.name.clone(), machines.len());
                machines.push(node);
            }
        }
    }
    Ok(machines)
}

/// The machine of one node row, counted once.
fn node(record: &Record, cols: &[Col; 3], model: Option<Col>) -> Result<NodeType, TraceError> {
    let [cpu, mem, gpu] = *cols;
    let at = record.at;
    let amount = |col: Col| at.amount(col, record.raw(col));
    let capacity = vec![amount(cpu)? / 1000.0, amount(mem)?, amount(gpu)?];
    let model = match model {
        Some(col) => at.text(col, record.raw(col))?.trim(),
        None => "",
    };
    let label = match (model, capacity[2] > 0.0) {
        (_, false) => "cpu".to_owned(),
        ("", true) => format!("gpu x{}", capacity[2]),
        (model, true) => format!("{model} x{}", capacity[2]),
    };
    let name = format!("{label} {}c {}GiB", capacity[0], capacity[1] / 1024.0);
    Ok(NodeType::new(name, 1, capacity))
}
