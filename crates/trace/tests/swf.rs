//! The SWF reader on hand-written logs: field choices, skips, errors, gzip, several files.

use crate::common::{read, read_lenient, read_ok, skipped, write, write_gz};
use fairshare_core::model::Time;
use fairshare_trace::{
    read_machines, CpuField, Format, MemoryField, MemoryLayout, ReadOptions, SwfOptions,
};
use tempfile::TempDir;

/// A standard 18-field line: job, submit, wait, run, allocated, used memory, requested
/// processors, requested memory, user.
#[allow(clippy::too_many_arguments)]
fn job(
    id: i64,
    submit: i64,
    wait: i64,
    run: i64,
    alloc: i64,
    used: i64,
    req: i64,
    req_mem: i64,
    user: i64,
) -> String {
    format!("{id} {submit} {wait} {run} {alloc} -1 {used} {req} 3600 {req_mem} 1 {user} 1 -1 1 1 -1 -1\n")
}

const HEADER: &str = "; Version: 2.2\n; MaxProcs: 100\n;\n";

#[test]
fn standard_log_uses_allocated_then_requested_and_kb_per_processor() {
    let dir = TempDir::new().unwrap();
    let text = format!(
        "{HEADER}{}{}\n{}",
        job(1, 10, 5, 100, 4, 1000, 2, -1, 7),
        job(2, 20, -1, 50, 8, 500, -1, 300, 9),
        job(3, 20, 0, 0, 1, 10, -1, -1, 7),
    );
    let path = write(&dir, "log.swf", &text);
    let read = read_ok(&[path], None);
    assert_eq!(read.resources, ["cpu", "mem"]);
    assert_eq!(read.units, ["processors", "KB"]);
    assert_eq!(read.users, ["7", "9"]);
    let [a, b, c] = &read.tasks[..] else {
        panic!("{:?}", read.tasks)
    };
    assert_eq!(
        (a.id, a.user, a.submit, a.start),
        (
            1,
            0,
            Time::from_micros(10_000_000),
            Some(Time::from_micros(15_000_000))
        )
    );
    assert_eq!(a.runtime, 100_000_000);
    assert_eq!(
        a.demand,
        [4.0, 4.0 * 1000.0],
        "allocated CPUs, used memory x CPUs"
    );
    assert_eq!(
        (b.start, b.demand.clone()),
        (None, vec![8.0, 8.0 * 300.0]),
        "allocated CPUs, requested memory"
    );
    assert_eq!((c.runtime, c.user), (0, 0));
    assert_eq!(read.stats.records_read, 3);
    let differ = "1 of 3 jobs were allocated a processor count other than they requested";
    assert!(
        read.stats.notes.iter().any(|n| n.starts_with(differ)),
        "{:?}",
        read.stats.notes
    );
    assert_eq!(
        read.stats.declared_processors,
        Some(100),
        "the header's MaxProcs"
    );
    assert_eq!(read.stats.declared_nodes, None);
}

#[test]
fn extended_log_reads_bytes_per_node_times_nodes() {
    let dir = TempDir::new().unwrap();
    let ext = |id: i64, req: i64, bytes: i64, spec: &str| {
        format!("{id} 100 0 60 {req} -1 1024 {req} 86400 {bytes} 1 62 1 1 -1 1 1 1 {{1,2}} q_1d {spec}\n")
    };
    let text = ext(0, 64, 68_719_476_736, "1:ppn=64:x86_64:cl_zewura#excl")
        + &ext(1, 64, 8_589_934_592, "8:ppn=8:x86_64:cl_zegox")
        + &ext(2, 7, 1024, "1:ppn=1+3:ppn=2")
        + &ext(3, 12, 2048, "zewura19.cerit-sc.cz:ppn=12:brno");
    let path = write(&dir, "wagap.swf", &text);
    let read = read_ok(&[path], Some(Format::SWF));
    let mem: Vec<f64> = read.tasks.iter().map(|t| t.demand[1]).collect();
    assert_eq!(mem, [67_108_864.0, 8.0 * 8_388_608.0, 4.0, 2.0]);
    assert_eq!(read.tasks[0].demand[0], 64.0);
    let shape: Vec<_> = read
        .tasks
        .iter()
        .map(|t| (t.nodes, t.exclusive, t.properties.join(",")))
        .collect();
    assert_eq!(
        shape,
        [
            (Some(1), true, "x86_64,cl_zewura".to_owned()),
            (Some(8), false, "x86_64,cl_zegox".to_owned()),
            (Some(4), false, String::new()),
            (Some(1), false, "brno".to_owned()),
        ]
    );
    assert_eq!(read.tasks[0].walltime, Some(86_400_000_000));
}

#[test]
fn memory_is_decided_from_every_job_not_the_first() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 0, 0, 10, 4, -1, 4, -1, 1)
        + &job(2, 5, 0, 10, 2, 100, 2, -1, 1)
        + &job(3, 6, 0, 10, 1, 50, 1, -1, 2);
    let path = write(&dir, "mostly.swf", &text);
    let read = read_ok(&[path], None);
    assert_eq!(read.resources, ["cpu", "mem"]);
    assert_eq!(read.tasks[0].demand, [2.0, 200.0]);
    assert_eq!(skipped(&read, "no memory"), 1);
    assert_eq!(read.stats.notes.len(), 1, "the decision is reported");
    assert!(
        read.stats.notes[0].contains("2 of 3 jobs"),
        "{:?}",
        read.stats.notes
    );
}

#[test]
fn memory_recorded_on_few_jobs_is_not_a_resource() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 0, 0, 10, 4, 100, 4, -1, 1)
        + &job(2, 5, 0, 10, 2, -1, 2, -1, 1)
        + &job(3, 6, 0, 10, 1, -1, 1, -1, 2);
    let path = write(&dir, "few.swf", &text);
    let read = read_ok(&[path], None);
    assert_eq!(read.resources, ["cpu"]);
    assert_eq!(read.tasks.len(), 3);
    assert!(
        read.stats.notes[0].contains("1 of 3 jobs"),
        "{:?}",
        read.stats.notes
    );
    let none = write(&dir, "kth.swf", &job(1, 0, 0, 10, 4, -1, 4, -1, 1));
    let read = read_ok(&[none], None);
    assert_eq!(read.resources, ["cpu"]);
    assert!(
        read.stats.notes.is_empty(),
        "nothing to say when no job has memory"
    );
}

#[test]
fn a_missing_submit_time_skips_the_job_without_breaking_the_order() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 50, 0, 10, 4, 10, 4, -1, 1)
        + &job(2, -1, 0, 10, 2, 10, 2, -1, 1)
        + &job(3, 60, 0, 10, 1, 10, 1, -1, 2);
    let path = write(&dir, "archive.swf", &text);
    let read = read_ok(&[path], None);
    assert_eq!(read.tasks.len(), 2);
    assert_eq!(skipped(&read, "no submit time"), 1);
}

#[test]
fn times_and_amounts_that_cannot_be_represented_are_errors_not_clamped() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 0, 0, 10, 4, 10, 4, -1, 1) + &job(2, 5, 0, 10, 2, 10, 2, -1, 1);
    let huge_run = text.replacen("2 5 0 10 2", "2 5 0 1e308 2", 1);
    let path = write(&dir, "run.swf", &huge_run);
    let error = read(&[&path], None, &ReadOptions::default()).error.unwrap();
    let expected = "field 4 (run time): expected seconds from 0 to 1e10, found \"1e308\"";
    assert_eq!(
        error.to_string(),
        format!("{}:2: {expected}", path.display())
    );
    let lenient = read_lenient(&[path], None);
    assert_eq!(lenient.tasks.len(), 1);
    assert_eq!(skipped(&lenient, "malformed: field 4 (run time)"), 1);
    let huge_memory = text.replacen("2 5 0 10 2 -1 10", "2 5 0 10 2 -1 1e300", 1);
    let path = write(&dir, "mem.swf", &huge_memory);
    let error = read(&[&path], None, &ReadOptions::default()).error.unwrap();
    assert!(
        error
            .to_string()
            .contains(":2: field 7 (used memory): expected a number from 0 to 1e15"),
        "{error}"
    );
}

#[test]
fn repeated_job_ids_are_counted() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 0, 0, 10, 4, 10, 4, -1, 1)
        + &job(1, 5, 0, 10, 2, 10, 2, -1, 1)
        + &job(2, 6, 0, 10, 2, 10, 2, -1, 1);
    let read = read_ok(&[write(&dir, "twice.swf", &text)], None);
    assert_eq!(read.tasks.len(), 3, "each is still a task");
    assert_eq!(read.stats.duplicate_ids, 1);
}

#[test]
fn explicit_field_choices() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "log.swf", &job(1, 0, 0, 10, 4, 100, 2, 300, 1));
    let pick = |cpus, memory, memory_layout| {
        let swf = SwfOptions {
            cpus,
            memory,
            memory_layout,
        };
        let read = read(
            &[&path],
            None,
            &ReadOptions {
                swf,
                ..ReadOptions::default()
            },
        );
        read.tasks[0].demand.clone()
    };
    assert_eq!(
        pick(CpuField::Allocated, MemoryField::Used, MemoryLayout::Auto),
        [4.0, 400.0]
    );
    assert_eq!(
        pick(
            CpuField::Requested,
            MemoryField::Requested,
            MemoryLayout::KbPerProcessor
        ),
        [2.0, 600.0]
    );
    assert_eq!(
        pick(CpuField::Auto, MemoryField::Omit, MemoryLayout::Auto),
        [4.0]
    );
    let per_node = read(
        &[&path],
        None,
        &ReadOptions {
            swf: SwfOptions {
                memory_layout: MemoryLayout::BytesPerNode,
                ..SwfOptions::default()
            },
            ..ReadOptions::default()
        },
    );
    assert_eq!(
        skipped(&per_node, "no node count"),
        1,
        "an 18-field line has no nodespec"
    );
}

#[test]
fn skips_are_counted_by_reason() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 0, 0, -1, 4, 10, 4, -1, 1)
        + &job(2, 1, 0, 10, 0, 10, 0, -1, 1)
        + &job(3, 2, 0, 10, -1, 10, -1, -1, 1)
        + &job(4, 3, 0, 10, 2, -1, 2, -1, 1)
        + &job(5, 4, 0, 10, 2, 10, 2, -1, 2);
    let path = write(&dir, "log.swf", &text);
    let read = read_ok(&[path], None);
    assert_eq!(read.tasks.len(), 1);
    assert_eq!(read.users, ["2"], "users of skipped jobs are not listed");
    for reason in [
        "no runtime",
        "zero request",
        "no processor count",
        "no memory",
    ] {
        assert_eq!(skipped(&read, reason), 1, "{reason}");
    }
}

#[test]
fn strict_error_names_file_line_and_field_and_ends_the_stream() {
    let dir = TempDir::new().unwrap();
    let text = format!(
        "{HEADER}{}1 2 3 x 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n{}",
        job(1, 0, 0, 1, 1, 1, 1, -1, 1),
        job(3, 5, 0, 1, 1, 1, 1, -1, 1)
    );
    let path = write(&dir, "bad.swf", &text);
    let read = read(&[&path], None, &ReadOptions::default());
    assert_eq!(read.tasks.len(), 1);
    let error = read.error.expect("an error").to_string();
    assert_eq!(
        error,
        format!(
            "{}:5: field 4 (run time): expected a number, found \"x\"",
            path.display()
        )
    );
    assert_eq!(
        read.stats
            .tasks_skipped
            .get("malformed: field 4 (run time)"),
        Some(&1)
    );
}

#[test]
fn lenient_reading_skips_and_counts_bad_lines() {
    let dir = TempDir::new().unwrap();
    let text = job(1, 10, 0, 1, 1, 1, 1, -1, 1)
        + "2 11 0 1 1\n"
        + &job(3, 5, 0, 1, 1, 1, 1, -1, 1)
        + "4 12 0 1 1 -1 1 nan -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
        + "5 13 0 1 1 -1 1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1 {1} q 1:ppn=1+\n"
        + &job(6, 14, 0, 1, 1, 1, 1, -1, 1);
    let path = write(&dir, "bad.swf", &text);
    let lenient = read_lenient(&[&path], None);
    assert_eq!(
        lenient.tasks.iter().map(|t| t.id).collect::<Vec<_>>(),
        [1, 6]
    );
    assert_eq!(skipped(&lenient, "malformed: field count"), 1);
    assert_eq!(skipped(&lenient, "out of order"), 1);
    assert_eq!(
        skipped(&lenient, "malformed: field 8 (requested processors)"),
        1
    );
    assert_eq!(skipped(&lenient, "malformed: field 21 (nodespec)"), 1);
    let strict = read(&[&path], None, &ReadOptions::default());
    assert_eq!(
        strict.error.unwrap().to_string(),
        format!("{}:2: expected 18 or 21 fields, found 5", path.display())
    );
}

#[test]
fn out_of_order_error_text() {
    let dir = TempDir::new().unwrap();
    let path = write(
        &dir,
        "o.swf",
        &(job(1, 10, 0, 1, 1, 1, 1, -1, 1) + &job(2, 9, 0, 1, 1, 1, 1, -1, 1)),
    );
    let error = read(&[&path], None, &ReadOptions::default()).error.unwrap();
    let expected = "o.swf:2: time 9.000000 s is earlier than the previous record's 10.000000 s; the records must be in time order";
    assert!(error.to_string().ends_with(expected), "{error}");
}

#[test]
fn gzip_round_trip_and_several_files_in_order() {
    let dir = TempDir::new().unwrap();
    let first =
        HEADER.to_owned() + &job(1, 0, 0, 5, 2, 10, 2, -1, 1) + &job(2, 3, 1, 5, 2, 10, 2, -1, 2);
    let second = job(3, 7, 0, 5, 2, 10, 2, -1, 1);
    let plain = write(&dir, "a.swf", &first);
    let gz = write_gz(&dir, "a.swf.gz", &first);
    let rest = write_gz(&dir, "b.swf.gz", &second);
    assert_eq!(read_ok(&[&plain], None).tasks, read_ok(&[&gz], None).tasks);
    let both = read_ok(&[gz, rest], None);
    assert_eq!(
        both.tasks.iter().map(|t| t.id).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(Format::detect(&plain).unwrap(), Format::SWF);
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("absent.swf");
    let read = read(
        &[&path],
        Some(Format::SWF),
        &ReadOptions {
            lenient: true,
            ..Default::default()
        },
    );
    let error = read.error.unwrap();
    let shown = fairshare_core::error::Chain(&error).to_string();
    assert!(
        shown.starts_with(&format!("{}: ", path.display())),
        "{shown}"
    );
    assert!(read.stats.reconciles());
}

#[test]
fn machines_file() {
    let dir = TempDir::new().unwrap();
    let path = write(
        &dir,
        "c.swf.machines",
        "; two kinds\n0\tzewura\t20\t80\t1\t529426432\n1 zegox 48 12 1 94035968\n",
    );
    let machines = read_machines(&path, Format::SWF).unwrap().types;
    assert_eq!(machines.len(), 2);
    assert_eq!(
        (
            machines[1].name.as_str(),
            machines[1].count,
            machines[1].capacity.clone()
        ),
        ("zegox", 48, vec![12.0, 94_035_968.0])
    );
    let bad = write(&dir, "bad.machines", "0 zewura twenty 80 1 5\n");
    let error = read_machines(&bad, Format::SWF).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{}:1: field 3 (nodes): expected a whole number >= 0, found \"twenty\"",
            bad.display()
        )
    );
}

#[test]
fn a_failed_status_is_read() {
    let dir = TempDir::new().unwrap();
    // Field 11, the status: 0 failed, 1 completed, 5 cancelled, -1 not recorded; a status
    // that is not a number is an error naming the line and field.
    let text = format!(
        "{HEADER}{}{}{}{}",
        "1 0 0 10 1 -1 -1 1 60 -1 0 7 1 -1 -1 -1 -1 -1\n",
        "2 1 0 10 1 -1 -1 1 60 -1 1 7 1 -1 -1 -1 -1 -1\n",
        "3 2 0 10 1 -1 -1 1 60 -1 5 7 1 -1 -1 -1 -1 -1\n",
        "4 3 0 10 1 -1 -1 1 60 -1 -1 7 1 -1 -1 -1 -1 -1\n",
    );
    let path = write(&dir, "log.swf", &text);
    let source =
        fairshare_trace::open(&[path], Some(Format::SWF), &ReadOptions::default()).expect("open");
    let failed: Vec<bool> = source.map(|t| t.expect("task").failed).collect();
    assert_eq!(failed, [true, false, false, false]);
    let bad = format!("{HEADER}1 0 0 10 1 -1 -1 1 60 -1 done 7 1 -1 -1 -1 -1 -1\n");
    let path = write(&dir, "bad.swf", &bad);
    let mut source =
        fairshare_trace::open(&[path], Some(Format::SWF), &ReadOptions::default()).expect("open");
    let err = source
        .next()
        .expect("an item")
        .expect_err("a bad status")
        .to_string();
    assert!(err.contains("status") && err.contains("done"), "{err}");
}

#[test]
fn requested_walltime_queue_and_partition_are_read() {
    let dir = TempDir::new().unwrap();
    // Fields 9 (requested time), 15 (queue) and 16 (partition); -1 means not recorded. The
    // 21-field Alea line names its queue in field 20, which wins over field 15 unless it is
    // itself not recorded.
    let text = format!(
        "{HEADER}{}{}{}{}",
        "1 0 0 10 1 -1 -1 1 3600 -1 1 7 1 -1 4 2 -1 -1\n",
        "2 5 0 10 1 -1 -1 1 -1 -1 1 7 1 -1 -1 -1 -1 -1\n",
        "3 6 0 10 1 -1 -1 1 60 -1 1 8 1 -1 3 1 -1 -1 -1 long 1:ppn=1\n",
        "4 7 0 10 1 -1 -1 1 60 -1 1 8 1 -1 3 1 -1 -1 -1 -1 1:ppn=1\n",
    );
    let path = write(&dir, "log.swf", &text);
    let mut source =
        fairshare_trace::open(&[path], Some(Format::SWF), &ReadOptions::default()).expect("open");
    let tasks: Vec<_> = source.by_ref().map(|t| t.expect("task")).collect();
    let walltimes: Vec<_> = tasks.iter().map(|t| t.walltime).collect();
    assert_eq!(
        walltimes,
        [
            Some(3_600_000_000),
            None,
            Some(60_000_000),
            Some(60_000_000)
        ]
    );
    let queues: Vec<_> = tasks
        .iter()
        .map(|t| t.queue.map(|q| source.queues()[q as usize].clone()))
        .collect();
    assert_eq!(
        queues,
        [
            Some("4".into()),
            None,
            Some("long".into()),
            Some("3".into())
        ]
    );
    let partitions: Vec<_> = tasks
        .iter()
        .map(|t| t.partition.map(|p| source.partitions()[p as usize].clone()))
        .collect();
    assert_eq!(
        partitions,
        [Some("2".into()), None, Some("1".into()), Some("1".into())]
    );
}

#[test]
fn a_compressed_log_cut_short_says_after_which_line() {
    let dir = TempDir::new().unwrap();
    let line = "1 0 0 60 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n";
    // Varied lines, so that the compressed stream is long enough to cut.
    let text: String = (1..=20_000)
        .map(|i| line.replacen("1 0 0 60", &format!("{i} {i} 0 {}", 60 + i * 7 % 997), 1))
        .collect();
    let whole = write_gz(&dir, "log.swf.gz", &text);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.path().join("cut.swf.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let read = read(&[&cut], Some(Format::SWF), &ReadOptions::default());
    let error = read.error.expect("the cut is an error");
    let message = fairshare_core::error::Chain(&error).to_string();
    let after = number_after(&message, "after line ");
    assert!(after > 0 && after < 20_000, "{message}");
    assert_eq!(
        read.tasks.len() as u64,
        after,
        "every whole line before the cut is read"
    );
    assert!(
        message.ends_with("the file is cut short or damaged"),
        "{message}"
    );
}

/// The number that follows `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> u64 {
    let rest = &text[text.find(prefix).expect("the prefix") + prefix.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

#[test]
fn jobs_cancelled_before_they_started_wait_until_their_cancellation() {
    let dir = TempDir::new().unwrap();
    let cancelled = |line: String| line.replacen(" 3600 -1 1 ", " 3600 -1 5 ", 1);
    let text = format!(
        "{HEADER}{}{}{}{}",
        job(1, 0, 10, 100, 4, -1, 4, -1, 7),
        cancelled(job(2, 5, 30, 0, -1, -1, 64, -1, 7)),
        cancelled(job(3, 6, -1, -1, -1, -1, 8, -1, 9)),
        cancelled(job(4, 7, 5, 50, 2, -1, 2, -1, 9)),
    );
    let path = write(&dir, "log.swf", &text);
    let read = read_ok(&[path], None);
    let [ran, withdrawn, killed] = &read.tasks[..] else {
        panic!("{:?}", read.tasks)
    };
    assert_eq!((ran.id, ran.cancelled), (1, None));
    assert_eq!(withdrawn.id, 2);
    assert_eq!(withdrawn.start, None, "it never started");
    assert_eq!(withdrawn.cancelled, Some(Time::from_micros(35_000_000)));
    assert_eq!((withdrawn.runtime, &withdrawn.demand[..]), (0, &[64.0][..]));
    assert_eq!(killed.id, 4, "cancelled while it ran: a run like any other");
    assert_eq!(
        (killed.start, killed.cancelled),
        (Some(Time::from_micros(12_000_000)), None)
    );
    let unknown = "cancelled before it started, at an unrecorded moment";
    assert_eq!(read.stats.tasks_skipped.get(unknown), Some(&1));
    let note = read
        .stats
        .notes
        .iter()
        .find(|n| n.contains("cancelled before"));
    assert!(
        note.is_some_and(|n| n.starts_with("2 of 4 jobs were cancelled before they started")),
        "{:?}",
        read.stats.notes
    );
}
