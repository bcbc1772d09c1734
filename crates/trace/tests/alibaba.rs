//! The Alibaba GPU 2023 reader on hand-written pod and node lists.

use crate::common::{read, read_lenient, read_ok, skipped, write};
use fairshare_core::model::Time;
use fairshare_trace::{read_machines, Format, ReadOptions};
use tempfile::TempDir;

const HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

#[test]
fn pods_sorted_by_creation_with_fractional_gpus() {
    let dir = TempDir::new().unwrap();
    let rows = [
        "p0,12000,16384,1,460,,LS,Running,300,900,310",
        "p1,6000,12288,8,1000,,BE,Failed,100,400,150",
        "p2,4000,1024,0,0,,LS,Pending,200,500,",
        "p3,4000,1024,1,1000,,BE,Running,250,,260",
        "p4,4000,1024,1,1000,,BE,Running,250,240,260",
        "p5,0,0,0,0,,Burstable,Succeeded,260,270,260",
        "p6,2000,0,1,50,,BE,Succeeded,100,101,100",
    ];
    let path = write(
        &dir,
        "openb_pod_list_default.csv",
        &(HEADER.to_owned() + &rows.join("\n") + "\n"),
    );
    let read = read_ok(&[&path], None);
    assert_eq!(read.resources, ["cpu", "mem", "gpu"]);
    assert_eq!(read.units, ["cores", "MiB", "GPUs"]);
    let got: Vec<(u64, Time, u64, Vec<f64>)> = read
        .tasks
        .iter()
        .map(|t| (t.id, t.submit, t.runtime, t.demand.clone()))
        .collect();
    let s = |x: u64| Time::from_micros(x * 1_000_000);
    assert_eq!(
        got,
        [
            (1, s(100), 250_000_000, vec![6.0, 12288.0, 8.0]),
            (6, s(100), 1_000_000, vec![2.0, 0.0, 0.05]),
            (0, s(300), 590_000_000, vec![12.0, 16384.0, 0.46]),
        ]
    );
    assert_eq!(read.tasks[2].start, Some(s(310)));
    assert_eq!(
        read.users,
        ["LS", "BE"],
        "in order of first appearance in the file"
    );
    assert_eq!(skipped(&read, "never scheduled"), 1);
    assert_eq!(skipped(&read, "no known end"), 2);
    assert_eq!(skipped(&read, "zero request"), 1);
    assert_eq!(Format::detect(&path).unwrap(), Format::ALIBABA);
}

#[test]
fn bad_rows_strict_and_lenient() {
    let dir = TempDir::new().unwrap();
    let rows = "p0,1000,10,1,1000,,LS,Running,10,20,10\np1,lots,10,1,1000,,LS,Running,5,20,10\np2,1000,10,1,1000,,LS,Running,1,20,-3\n";
    let path = write(&dir, "pods.csv", &(HEADER.to_owned() + rows));
    let strict = read(&[&path], Some(Format::ALIBABA), &ReadOptions::default());
    assert!(strict.tasks.is_empty(), "the error comes first");
    let expected = format!(
        "{}:3: field 2 (cpu_milli): expected a number from 0 to 1e15, found \"lots\"",
        path.display()
    );
    assert_eq!(strict.error.unwrap().to_string(), expected);
    let lenient = read_lenient(&[path], Some(Format::ALIBABA));
    assert_eq!(lenient.tasks.len(), 1);
    assert_eq!(skipped(&lenient, "malformed: field 2 (cpu_milli)"), 1);
    assert_eq!(skipped(&lenient, "malformed: field 11 (scheduled_time)"), 1);
}

#[test]
fn missing_column_is_reported() {
    let dir = TempDir::new().unwrap();
    let path = write(
        &dir,
        "pods.csv",
        "name,cpu_milli,memory_mib,creation_time\np0,1,1,1\n",
    );
    let read = read(
        &[&path],
        Some(Format::ALIBABA),
        &ReadOptions {
            lenient: true,
            ..Default::default()
        },
    );
    let expected = format!("{}: the header has no column \"num_gpu\"", path.display());
    assert_eq!(read.error.unwrap().to_string(), expected);
}

#[test]
fn node_list_groups_identical_nodes() {
    let dir = TempDir::new().unwrap();
    let text = "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nn1,32000,262144,0,\nn2,96000,393216,8,G2\nn3,96000,393216,8,T4\n";
    let path = write(&dir, "nodes.csv", text);
    let machines = read_machines(&path, Format::ALIBABA).unwrap().types;
    let got: Vec<(&str, u32, &[f64])> = machines
        .iter()
        .map(|m| (m.name.as_str(), m.count, &m.capacity[..]))
        .collect();
    assert_eq!(
        got,
        [
            ("G2 x8 96c 384GiB", 2, &[96.0, 393216.0, 8.0][..]),
            ("cpu 32c 256GiB", 1, &[32.0, 262144.0, 0.0][..]),
            ("T4 x8 96c 384GiB", 1, &[96.0, 393216.0, 8.0][..]),
        ]
    );
    assert!(read_machines(&path, Format::GOOGLE).is_err());
}

#[test]
fn amounts_too_large_to_add_up_are_refused_and_names_repeated_are_counted() {
    let dir = TempDir::new().unwrap();
    let rows = "p0,1000,10,1,1000,,LS,Running,10,20,10\np0,1000,1e308,0,0,,LS,Running,10,20,10\np1,1000,10,1,1e308,,LS,Running,10,20,10\n";
    let path = write(&dir, "pods.csv", &(HEADER.to_owned() + rows));
    let strict = read(&[&path], Some(Format::ALIBABA), &ReadOptions::default());
    let expected = "field 3 (memory_mib): expected a number from 0 to 1e15, found \"1e308\"";
    assert_eq!(
        strict.error.unwrap().to_string(),
        format!("{}:3: {expected}", path.display())
    );
    let lenient = read_lenient(&[path], Some(Format::ALIBABA));
    assert_eq!(lenient.tasks.len(), 1);
    assert_eq!(skipped(&lenient, "malformed: field 5 (gpu_milli)"), 1);
    assert_eq!(lenient.stats.duplicate_ids, 1, "p0 twice");
}
