//! The Google 2011 `task_events` reader on hand-written event sequences: every transition of
//! the state machine, the reorder buffer, several parts, errors.

use crate::common::{read, read_lenient, read_ok, skipped, write, write_gz};
use fairshare_core::model::Time;
use fairshare_trace::{Format, ReadOptions, Task};
use tempfile::TempDir;

const SUBMIT: u8 = 0;
const SCHEDULE: u8 = 1;
const EVICT: u8 = 2;
const FAIL: u8 = 3;
const FINISH: u8 = 4;
const KILL: u8 = 5;
const LOST: u8 = 6;
const UPDATE: u8 = 8;

/// One event line for task (job, 0) of user `u<job>`, with requests `cpu`, `mem`.
fn ev(time: u64, job: u64, event: u8, cpu: &str, mem: &str) -> String {
    format!("{time},,{job},0,42,{event},u{job},2,0,{cpu},{mem},0.001,0\n")
}

/// An event without requests, as SUBMIT lines often are.
fn bare(time: u64, job: u64, event: u8) -> String {
    ev(time, job, event, "", "")
}

#[test]
fn every_transition() {
    let dir = TempDir::new().unwrap();
    let events = [
        bare(0, 1, SUBMIT),                      // before the trace: skipped
        ev(0, 1, SCHEDULE, "0.1", "0.1"),        // untracked
        bare(10, 2, SUBMIT),                     // 2: pending
        bare(10, 3, SUBMIT),                     // 3: pending
        bare(11, 4, SUBMIT),                     // 4: pending
        bare(12, 5, SUBMIT),                     // 5: pending
        bare(12, 6, SUBMIT),                     // 6: pending
        bare(13, 7, SUBMIT),                     // 7: pending
        bare(13, 8, SUBMIT),                     // 8: pending
        bare(14, 9, SUBMIT),                     // 9: pending
        bare(14, 10, SUBMIT),                    // 10: pending
        ev(20, 2, SCHEDULE, "0.5", "0.25"),      // 2: running
        ev(20, 3, SCHEDULE, "0.1", "0.2"),       // 3: running
        bare(21, 4, FAIL),                       // 4: failed while pending
        ev(22, 5, SCHEDULE, "0.1", "0.1"),       // 5: running
        bare(23, 5, EVICT),                      // 5: cancelled
        bare(23, 6, KILL),                       // 6: cancelled while pending
        ev(24, 7, SCHEDULE, "0", "0.1"),         // 7: running, zero cpu
        ev(25, 8, SCHEDULE, "0.3", "0.3"),       // 8: running
        bare(26, 8, LOST),                       // 8: cancelled
        bare(27, 9, FINISH),                     // 9: pending, FINISH has no transition
        ev(27, 2, SCHEDULE, "0.9", "0.9"),       // 2: already running, no transition
        ev(28, 2, UPDATE, "0.9", "0.9"),         // ignored
        "28,1,2,0,42,4,u2,2,0,,,,\n".to_owned(), // missing info: dropped
        bare(30, 2, FINISH),                     // 2: completes (runtime 10)
        bare(31, 3, FAIL),                       // 3: fails while running: completes (runtime 11)
        bare(32, 7, FINISH),                     // 7: zero request
        bare(33, 5, SUBMIT),                     // 5 again: a new task
        bare(34, 10, SUBMIT),                    // 10 resubmitted while pending
        ev(35, 5, SCHEDULE, "0.2", "0.2"),       // 5: running
        bare(36, 99, FINISH),                    // untracked
    ]
    .concat();
    let path = write(&dir, "part-00000-of-00500.csv", &events);
    let read = read_ok(&[&path], None);
    assert_eq!(read.resources, ["cpu", "mem"]);
    assert_eq!(read.units, ["fraction of largest machine"; 2]);
    let us = Time::from_micros;
    // A task's id is its SUBMIT's rank; its job's own id and its index come with it.
    let task = |id, job, user, runtime, demand: [f64; 2]| Task {
        start: Some(us(20)),
        job_part: Some((job, 0)),
        hosts: Vec::new(),
        ..Task::new(id, user, us(10), runtime, demand.to_vec())
    };
    assert_eq!(
        read.tasks,
        [
            task(1, 2, 0, 10, [0.5, 0.25]),
            task(2, 3, 1, 11, [0.1, 0.2])
        ]
    );
    assert_eq!(read.users[read.tasks[0].user as usize], "u2");
    // Only users with a kept task are users of the filtered trace (they set n, docs/mechanisms.md, SDRF §8.2).
    assert_eq!(read.users, ["u2", "u3"]);
    let stats = &read.stats;
    assert_eq!(stats.records_read, 31);
    assert_eq!(stats.tasks_found, 12);
    assert_eq!(skipped(&read, "submitted before the trace"), 1);
    assert_eq!(skipped(&read, "failed before it started"), 1);
    assert_eq!(skipped(&read, "cancelled by the system"), 3);
    assert_eq!(skipped(&read, "zero request"), 1);
    assert_eq!(skipped(&read, "resubmitted"), 1);
    assert_eq!(
        skipped(&read, "no known end"),
        3,
        "9 and 10 pending, 5 running"
    );
    let ignored = |reason: &str| stats.records_ignored.get(reason).copied().unwrap_or(0);
    assert_eq!(
        (
            ignored("untracked task"),
            ignored("no transition"),
            ignored("update"),
            ignored("missing info")
        ),
        (2, 2, 1, 1)
    );
}

#[test]
fn completed_tasks_wait_for_earlier_submissions() {
    let dir = TempDir::new().unwrap();
    let events = [
        bare(10, 1, SUBMIT),
        bare(20, 2, SUBMIT),
        bare(20, 3, SUBMIT),
        ev(21, 1, SCHEDULE, "0.1", "0.1"),
        ev(21, 2, SCHEDULE, "0.1", "0.1"),
        ev(21, 3, SCHEDULE, "0.1", "0.1"),
        bare(22, 3, FINISH),
        bare(23, 2, FINISH),
        bare(90, 1, FINISH),
        bare(95, 4, SUBMIT),
        ev(96, 4, SCHEDULE, "0.1", "0.1"),
        bare(97, 4, FINISH),
    ]
    .concat();
    let path = write(&dir, "events.csv", &events);
    let read = read_ok(&[path], Some(Format::GOOGLE));
    let order: Vec<u64> = read.tasks.iter().map(|t| t.id).collect();
    assert_eq!(order, [0, 1, 2, 3], "submit order, ties in SUBMIT order");
    assert_eq!(read.stats.peak_held, 3);
}

#[test]
fn a_task_never_ending_holds_the_buffer_until_the_end() {
    let dir = TempDir::new().unwrap();
    let events = [
        bare(10, 1, SUBMIT),
        ev(11, 1, SCHEDULE, "0.1", "0.1"),
        bare(12, 2, SUBMIT),
        ev(13, 2, SCHEDULE, "0.1", "0.1"),
        bare(14, 2, FINISH),
    ]
    .concat();
    let path = write(&dir, "events.csv", &events);
    let mut source =
        fairshare_trace::open(&[path], Some(Format::GOOGLE), &ReadOptions::default()).unwrap();
    let task = source.next().unwrap().unwrap();
    assert_eq!(task.id, 1);
    assert_eq!(source.stats().tasks_skipped.get("no known end"), Some(&1));
    assert!(source.next().is_none());
    assert!(source.stats().reconciles());
}

#[test]
fn parts_are_one_stream_plain_or_gzip() {
    let dir = TempDir::new().unwrap();
    let first = bare(10, 1, SUBMIT) + &ev(11, 1, SCHEDULE, "0.1", "0.2");
    let second = bare(12, 2, SUBMIT) + &bare(15, 1, FINISH);
    let third = ev(16, 2, SCHEDULE, "0.3", "0.4") + &bare(18, 2, FINISH);
    let paths = [
        write_gz(&dir, "part-00000-of-00500.csv.gz", &first),
        write(&dir, "part-00001-of-00500.csv", &second),
        write_gz(&dir, "part-00002-of-00500.csv.gz", &third),
    ];
    let read = read_ok(&paths, None);
    assert_eq!(
        read.tasks.iter().map(|t| t.runtime).collect::<Vec<_>>(),
        [4, 2]
    );
    assert_eq!(Format::detect(&paths[0]).unwrap(), Format::GOOGLE);
}

#[test]
fn strict_errors_name_file_line_and_field() {
    let dir = TempDir::new().unwrap();
    let cases = [
        ("9,,1,0,42,9,u,0,0,,,,\n", "field 6 (event type): expected an event type from 0 to 8, found \"9\""),
        ("x,,1,0,42,0,u,0,0,,,,\n", "field 1 (time): expected whole microseconds from 0 to 1e16, found \"x\""),
        ("9,,1,0,42,1,u,0,0,0.5,big,,\n", "field 11 (memory request): expected a number from 0 to 1e15, found \"big\""),
        ("9,,1,0,42,4,u,0,0,xyz,,,\n", "field 10 (cpu request): expected a number from 0 to 1e15, found \"xyz\""),
        ("9,,1,0,42\n", "expected 13 fields, found 5"),
        ("5,,1,0,42,0,u,0,0,,,,\n", "time 0.000005 s is earlier than the previous record's 0.000007 s; the records must be in time order"),
    ];
    for (line, message) in cases {
        let path = write(
            &dir,
            "bad.csv",
            &(bare(7, 1, SUBMIT) + line + &bare(8, 2, SUBMIT)),
        );
        let read = read(&[&path], Some(Format::GOOGLE), &ReadOptions::default());
        assert_eq!(
            read.error.unwrap().to_string(),
            format!("{}:2: {message}", path.display())
        );
        let lenient = read_lenient(&[path], Some(Format::GOOGLE));
        assert_eq!(lenient.stats.tasks_found, 3);
        assert_eq!(skipped(&lenient, "no known end"), 2);
        assert_eq!(lenient.stats.tasks_skipped.len(), 2, "{:?}", lenient.stats);
    }
}

#[test]
fn tasks_stream_out_before_the_rest_is_read() {
    let dir = TempDir::new().unwrap();
    let events = bare(10, 1, SUBMIT)
        + &ev(11, 1, SCHEDULE, "0.1", "0.1")
        + &bare(12, 1, FINISH)
        + "garbage\n";
    let path = write(&dir, "events.csv", &events);
    let read = read(&[path], Some(Format::GOOGLE), &ReadOptions::default());
    assert_eq!(
        read.tasks.len(),
        1,
        "the finished task came out before the bad line was met"
    );
    assert!(read.error.is_some());
}

#[test]
fn events_after_the_window_are_ignored_and_absurd_times_refused() {
    let dir = TempDir::new().unwrap();
    let after = "9223372036854775807";
    let text = bare(10, 1, SUBMIT)
        + &ev(20, 1, SCHEDULE, "0.1", "0.1")
        + &format!("{after},,1,0,42,{FINISH},u1,2,0,,,0.001,0\n");
    let after = read_ok(&[write(&dir, "after.csv", &text)], Some(Format::GOOGLE));
    assert!(after.tasks.is_empty());
    assert_eq!(after.stats.records_ignored["after the trace window"], 1);
    assert_eq!(
        skipped(&after, "no known end"),
        1,
        "the task's end is not known"
    );
    let text = bare(10, 1, SUBMIT) + &bare(20_000_000_000_000_000, 2, SUBMIT);
    let path = write(&dir, "far.csv", &text);
    let error = read(&[&path], Some(Format::GOOGLE), &ReadOptions::default());
    let message = error.error.unwrap().to_string();
    assert!(
        message.ends_with(":2: field 1 (time): expected whole microseconds from 0 to 1e16, found \"20000000000000000\""),
        "{message}"
    );
}

/// The BAA-T experiment's pool: every SUBMIT event that asks for CPU and memory, resubmissions
/// again, whatever became of the task; a bad line names its field.
#[test]
fn submit_requests_pool_every_submit_asking_for_both() {
    let dir = TempDir::new().unwrap();
    let events = [
        ev(0, 1, SUBMIT, "0.1", "0.2"),    // before the trace: still a request
        ev(10, 2, SUBMIT, "0.3", "0.4"),   // 2
        bare(11, 3, SUBMIT),               // no request
        ev(12, 4, SUBMIT, "0", "0.1"),     // zero CPU
        bare(13, 2, EVICT),                // 2 evicted …
        ev(14, 2, SUBMIT, "0.3", "0.5"),   // … and resubmitted: counted again
        ev(15, 2, SCHEDULE, "0.9", "0.9"), // not a SUBMIT
    ];
    let path = write(&dir, "part.csv", &events.concat());
    let pool = fairshare_trace::google::submit_requests(&[path]).unwrap();
    assert_eq!(pool.requests, [[0.1, 0.2], [0.3, 0.4], [0.3, 0.5]]);
    assert_eq!(pool.tasks, 2);
    let bad = write(&dir, "bad.csv", "10,,2,0,42,zero,u2,2,0,0.1,0.1,0,0\n");
    let error = fairshare_trace::google::submit_requests(&[bad])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bad.csv") && error.contains("event type"),
        "{error}"
    );
}

/// Completed tasks as the module docs define them, without a reorder buffer: the state machine
/// over `events` (time, job, event type), every completed task collected, then sorted by
/// (submit time, SUBMIT rank). Each is (id, submit, start, runtime).
fn completed_sorted(events: &[(u64, u64, u8)]) -> Vec<(u64, u64, u64, u64)> {
    let mut in_flight: std::collections::HashMap<u64, (u64, u64, Option<u64>)> = Default::default();
    let (mut rank, mut done) = (0, Vec::new());
    for &(time, job, event) in events {
        match event {
            SUBMIT => {
                in_flight.remove(&job);
                if time > 0 {
                    in_flight.insert(job, (time, rank, None));
                }
                rank += 1;
            }
            SCHEDULE => {
                if let Some((_, _, start @ None)) = in_flight.get_mut(&job) {
                    *start = Some(time);
                }
            }
            FAIL | FINISH => match in_flight.get(&job) {
                Some(&(submit, id, Some(start))) => {
                    in_flight.remove(&job);
                    done.push((id, submit, start, time - start));
                }
                Some(_) if event == FAIL => drop(in_flight.remove(&job)),
                _ => {}
            },
            EVICT | KILL | LOST => drop(in_flight.remove(&job)),
            _ => {}
        }
    }
    done.sort_by_key(|&(id, submit, _, _)| (submit, id));
    done
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// The reorder buffer gives out exactly the completed tasks, in submit order (ties in
    /// SUBMIT order), whatever the events: re-submissions, cancellations, failures before and
    /// after a start, tasks that never end.
    #[test]
    fn the_reorder_buffer_gives_what_sorting_every_completed_task_gives(
        steps in proptest::collection::vec((0u64..3, 0u64..6, 0u8..9), 0..80),
    ) {
        let mut time = 0;
        let events: Vec<(u64, u64, u8)> = steps
            .iter()
            .map(|&(dt, job, event)| {
                time += dt;
                (time, job, event)
            })
            .collect();
        let text: String = events
            .iter()
            .map(|&(t, job, event)| ev(t, job, event, "0.1", "0.1"))
            .collect();
        let dir = TempDir::new().unwrap();
        let path = write(&dir, "events.csv", &text);
        let read = read_ok(&[path], Some(Format::GOOGLE));
        let got: Vec<(u64, u64, u64, u64)> = read
            .tasks
            .iter()
            .map(|t| {
                let start = t.start.expect("a completed task started").as_micros();
                (t.id, t.submit.as_micros(), start, t.runtime)
            })
            .collect();
        proptest::prop_assert_eq!(got, completed_sorted(&events));
        proptest::prop_assert!(read.stats.reconciles());
    }
}

#[test]
fn a_compressed_part_cut_short_says_after_which_line() {
    let dir = TempDir::new().unwrap();
    // Varied lines, so that the compressed stream is long enough to cut.
    let text: String = (0..40_000)
        .map(|i| ev(i * 1_000, 1 + i, 0, "0.01", "0.02"))
        .collect();
    let bytes = std::fs::read(write_gz(&dir, "part.csv.gz", &text)).unwrap();
    let cut = dir.path().join("cut.csv.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let read = read(&[&cut], Some(Format::GOOGLE), &ReadOptions::default());
    let error = read.error.expect("the cut is an error");
    let message = fairshare_core::error::Chain(&error).to_string();
    let at = message.find("after line ").expect("names the line") + "after line ".len();
    let line: String = message[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let line: u64 = line.parse().unwrap();
    assert!(line > 0 && line < 40_000, "{message}");
    assert!(
        message.ends_with("the file is cut short or damaged"),
        "{message}"
    );
}
