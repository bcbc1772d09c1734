//! Every file of the shared real traces, read to the end: the counts must reconcile, the order
//! must hold, and the figures are printed (`cargo test -p fairshare-trace --release --test
//! shared_traces -- --nocapture`). Ignored, with the reason, where `../shared/traces` is absent.

use fairshare_trace::{open, read_machines, Format, ReadOptions, ReadStats, TaskSource};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The shared traces folder beside the repository (the tests that read it are ignored where
/// it was absent when the crate was built; see `crates/test-environment.rs`).
fn traces() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    assert!(dir.is_dir(), "{} is gone since the build", dir.display());
    dir
}

/// Reads `paths` to the end, checking order, shapes and reconciliation; returns the stats.
fn read(paths: &[PathBuf], format: Format) -> (Box<dyn TaskSource + Send>, ReadStats) {
    let started = Instant::now();
    let mut source = open(paths, None, &ReadOptions::default()).expect("open");
    let mut last = None;
    while let Some(task) = source.next() {
        let task = task.unwrap_or_else(|e| panic!("{e}"));
        assert!(
            last <= Some(task.submit),
            "submit order broken at task {}",
            task.id
        );
        assert_eq!(task.demand.len(), source.resources().len());
        assert!((task.user as usize) < source.users().len());
        last = Some(task.submit);
    }
    let stats = source.stats().clone();
    let name = paths[0].file_name().unwrap_or_default().to_string_lossy();
    eprintln!(
        "{format} {name}{}: {:.2} s, resources {:?} in {:?}, {} users\n  {stats:?}",
        if paths.len() > 1 {
            format!(" (+{} more)", paths.len() - 1)
        } else {
            String::new()
        },
        started.elapsed().as_secs_f64(),
        source.resources(),
        source.units(),
        source.users().len(),
    );
    assert!(stats.reconciles(), "{stats:?}");
    assert_eq!(Format::detect(&paths[0]).expect("detect"), format);
    (source, stats)
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn swf_logs_reconcile() {
    let dir = traces();
    let (wagap, stats) = read(&[dir.join("swf/wagap-2013.swf")], Format::SWF);
    assert_eq!(wagap.resources(), ["cpu", "mem"]);
    assert_eq!(stats.tasks_found, 17_900);
    let (meta, stats) = read(&[dir.join("swf/METACENTRUM-2009-2.swf.gz")], Format::SWF);
    assert_eq!(meta.resources(), ["cpu", "mem"]);
    assert_eq!(stats.tasks_found, 103_656);
    let (kth, stats) = read(&[dir.join("swf/KTH-SP2-1996-2.1-cln.swf.gz")], Format::SWF);
    assert_eq!(kth.resources(), ["cpu"]);
    assert_eq!(stats.tasks_found, 27_992);
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn swf_machines() {
    let dir = traces();
    let machines = read_machines(&dir.join("swf/wagap-2013.swf.machines"), Format::SWF)
        .expect("read")
        .types;
    eprintln!("wagap machines: {machines:?}");
    assert_eq!(machines.len(), 2);
    assert_eq!(
        (machines[0].name.as_str(), machines[0].count),
        ("zewura", 20)
    );
    assert_eq!(machines[0].capacity, [80.0, 529_426_432.0]);
    assert_eq!(
        (machines[1].name.as_str(), machines[1].count),
        ("zegox", 48)
    );
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn google_parts_reconcile() {
    let dir = traces();
    let parts: Vec<PathBuf> = (0..7)
        .map(|i| {
            dir.join(format!(
                "google-2011/task_events/part-0000{i}-of-00500.csv.gz"
            ))
        })
        .collect();
    let (google, stats) = read(&parts, Format::GOOGLE);
    assert_eq!(google.resources(), ["cpu", "mem"]);
    assert!(stats.tasks_yielded > 100_000, "{stats:?}");
    // The BAA-T experiment's pool (spec/baa.md §8): every SUBMIT event asking for both.
    let pool = fairshare_trace::google::submit_requests(&parts).unwrap();
    assert_eq!((pool.requests.len(), pool.tasks), (469_074, 369_782));
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn alibaba_reconciles() {
    let dir = traces();
    let (alibaba, stats) = read(
        &[dir.join("alibaba-gpu-2023/openb_pod_list_default.csv")],
        Format::ALIBABA,
    );
    assert_eq!(alibaba.resources(), ["cpu", "mem", "gpu"]);
    assert_eq!(stats.tasks_found, 8_152);
    let nodes = dir.join("alibaba-gpu-2023/openb_node_list_all_node.csv");
    let machines = read_machines(&nodes, Format::ALIBABA).expect("read").types;
    let total: u32 = machines.iter().map(|m| m.count).sum();
    eprintln!("alibaba machines: {} kinds, {total} nodes", machines.len());
    for m in &machines {
        eprintln!("  {:>4} x {} {:?}", m.count, m.name, m.capacity);
    }
    assert_eq!(total, 1_523);
}
