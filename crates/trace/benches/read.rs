//! Reading speed on the shared traces: the Google 2011 `task_events` parts, all of them in order,
//! and the SWF logs. Skipped (with a message) when `../shared/traces` is absent.

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_trace::{open, Format, ReadOptions};
use std::path::{Path, PathBuf};

/// The shared traces folder beside the repository.
fn traces() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    dir.is_dir().then_some(dir)
}

/// Reads `paths` to the end and returns how many tasks came out.
fn read_all(paths: &[PathBuf], format: Format) -> u64 {
    let source = open(paths, Some(format), &ReadOptions::default()).expect("open");
    source.map(|task| task.map(|_| 1).expect("read")).sum()
}

fn bench(c: &mut Criterion) {
    let Some(dir) = traces() else {
        eprintln!("skipping the read benchmarks: no shared traces folder beside the repository");
        return;
    };
    let mut group = c.benchmark_group("read");
    group.sample_size(10);
    let google: Vec<PathBuf> = (0..7)
        .map(|i| {
            dir.join(format!(
                "google-2011/task_events/part-0000{i}-of-00500.csv.gz"
            ))
        })
        .collect();
    group.bench_function("google 7 parts", |b| {
        b.iter(|| read_all(&google, Format::GOOGLE))
    });
    for name in ["wagap-2013.swf", "METACENTRUM-2009-2.swf.gz"] {
        let paths = [dir.join("swf").join(name)];
        group.bench_function(name, |b| b.iter(|| read_all(&paths, Format::SWF)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
