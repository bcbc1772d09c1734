//! The Slurm accounting reader on a hand-written `sacct --parsable2` dump.

use crate::common::{read, read_lenient, read_ok, skipped, strict_error, write};
use fairshare_core::model::Time;
use fairshare_trace::{Format, ReadOptions};
use tempfile::TempDir;

const HEADER: &str = "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State\n";

/// Seconds since the epoch of 2024-01-01T00:00:00 plus `s`.
fn at(s: u64) -> Time {
    Time::from_micros((1_704_067_200 + s) * 1_000_000)
}

/// What a test looks at in a task: submit, start, runtime, demand, nodes.
type Seen = (Time, Option<Time>, u64, Vec<f64>, Option<u32>);

#[test]
fn jobs_sorted_by_submit_steps_ignored_running_ones_until_the_dump() {
    let dir = TempDir::new().unwrap();
    let rows = [
        "12|bob|physics|2024-01-01T00:10:00|2024-01-01T00:20:00|2024-01-01T01:20:00|billing=2,cpu=2,mem=3900M,node=1|gpu|COMPLETED",
        "12.batch||physics|2024-01-01T00:20:00|2024-01-01T00:20:00|2024-01-01T01:20:00|cpu=2,mem=3900M,node=1||COMPLETED",
        "11|alice|physics|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|cpu=8,gres/gpu=2,mem=16G,node=2|gpu|COMPLETED",
        "13|carol|chemistry|2024-01-01T00:30:00|Unknown|Unknown||cpu|PENDING",
        "14|carol|chemistry|2024-01-01T00:40:00|2024-01-01T00:41:00|Unknown|cpu=1,mem=1G,node=1|cpu|RUNNING",
        "15|carol|chemistry|2024-01-01T00:50:00|None|2024-01-01T00:50:00||cpu|CANCELLED by 0",
    ];
    let path = write(
        &dir,
        "jobs.sacct",
        &(HEADER.to_owned() + &rows.join("\n") + "\n"),
    );
    let read = read_ok(&[&path], None);
    assert_eq!(read.resources, ["cpu", "mem", "gpu"]);
    assert_eq!(read.units, ["processors", "KB", "GPUs"]);
    let got: Vec<Seen> = read
        .tasks
        .iter()
        .map(|t| (t.submit, t.start, t.runtime, t.demand.clone(), t.nodes))
        .collect();
    let gib = 1024.0 * 1024.0;
    assert_eq!(
        got,
        [
            (
                at(0),
                Some(at(0)),
                7_200_000_000,
                vec![8.0, 16.0 * gib, 2.0],
                Some(2)
            ),
            (
                at(600),
                Some(at(1200)),
                3_600_000_000,
                vec![2.0, 3900.0 * 1024.0, 0.0],
                Some(1)
            ),
            // Still running: until the dump's latest time, alice's end at 02:00.
            (
                at(2400),
                Some(at(2460)),
                (7200 - 2460) * 1_000_000,
                vec![1.0, gib, 0.0],
                Some(1)
            ),
        ]
    );
    let users: Vec<&str> = read
        .tasks
        .iter()
        .map(|t| read.users[t.user as usize].as_str())
        .collect();
    assert_eq!(users, ["alice", "bob", "carol"]);
    assert_eq!(read.stats.records_ignored.get("job step"), Some(&1));
    assert_eq!(skipped(&read, "never started"), 2);
    assert_eq!(read.stats.first_event, Some(at(0)));
    assert_eq!(read.stats.last_event, Some(at(7200)));
    assert!(read.stats.reconciles());
}

/// Slurm 22.05 writes a job cancelled while it waited with `Start` = `End` (the cancel) and
/// nothing allocated; `Elapsed` of a running job dates the dump; `Timelimit` is the walltime.
#[test]
fn elapsed_dates_the_dump_and_timelimit_is_the_walltime() {
    let dir = TempDir::new().unwrap();
    let header =
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n";
    let rows = [
        "1|dave|chemistry|2024-01-01T00:00:00|2024-01-01T00:00:02|2024-01-01T00:00:02|00:00:00|00:05:00||main|CANCELLED by 0",
        "2|alice|physics|2024-01-01T00:00:10|2024-01-01T00:00:11|Unknown|00:02:26|00:10:00|billing=4,cpu=4,node=1|main|RUNNING",
        "3|bob|physics|2024-01-01T00:00:10|2024-01-01T00:00:11|2024-01-01T00:01:51|00:01:40|UNLIMITED|billing=2,cpu=2,node=1|main|COMPLETED",
        "4|carol|chemistry|2024-01-01T00:00:15|Unknown|Unknown|00:00:00|1-00:00:00||main|PENDING",
    ];
    let path = write(
        &dir,
        "live.sacct",
        &(header.to_owned() + &rows.join("\n") + "\n"),
    );
    let dump = read_ok(&[&path], None);
    let got: Vec<(u64, Option<u64>)> = dump.tasks.iter().map(|t| (t.runtime, t.walltime)).collect();
    assert_eq!(got, [(146_000_000, Some(600_000_000)), (100_000_000, None)]);
    assert_eq!(skipped(&dump, "never started"), 2);
    assert_eq!(dump.stats.first_event, Some(at(0)));
    assert_eq!(dump.stats.last_event, Some(at(11 + 146)));
    assert!(dump
        .stats
        .notes
        .iter()
        .any(|n| n.contains("1 jobs were still running")));
    let bad = "5|erin|x|2024-01-01T00:00:00|2024-01-01T00:00:01|Unknown|00:00:09|ten minutes|cpu=1|main|RUNNING\n";
    let path = write(&dir, "bad.sacct", &(header.to_owned() + bad));
    let error = read(&[&path], None, &ReadOptions::default()).error;
    let error = error.expect("an error").to_string();
    assert!(
        error.contains("bad.sacct") && error.contains("Timelimit") && error.contains("UNLIMITED"),
        "{error}"
    );
}

#[test]
fn a_bad_time_or_tres_names_file_line_and_field() {
    let dir = TempDir::new().unwrap();
    let bad_time =
        "1|ann|a|2024-13-45T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1|p|COMPLETED\n";
    let path = write(&dir, "bad.sacct", &(HEADER.to_owned() + bad_time));
    let error = read(&[&path], Some(Format::SACCT), &ReadOptions::default())
        .error
        .expect("an error");
    let text = error.to_string();
    assert!(text.contains("bad.sacct:2: field 4 (Submit)"), "{text}");
    let bad_tres = "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=lots|p|COMPLETED\n";
    let path = write(
        &dir,
        "tres.sacct",
        &(HEADER.to_owned() + bad_tres + bad_time),
    );
    let text = read(&[&path], None, &ReadOptions::default())
        .error
        .unwrap()
        .to_string();
    assert!(text.contains("tres.sacct:2: field 7 (AllocTRES)"), "{text}");
    // Found by fuzzing: a year the engine cannot hold is an error, not a task beyond its clock.
    let far =
        "1|ann|a|4048-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1|p|COMPLETED\n";
    let path = write(&dir, "far.sacct", &(HEADER.to_owned() + far));
    let text = read(&[&path], None, &ReadOptions::default())
        .error
        .unwrap()
        .to_string();
    assert!(text.contains("far.sacct:2: field 4 (Submit)"), "{text}");
    let path = write(
        &dir,
        "tres.sacct",
        &(HEADER.to_owned() + bad_tres + bad_time),
    );
    let lenient = read_lenient(&[&path], None);
    assert!(lenient.tasks.is_empty());
    assert_eq!(lenient.stats.tasks_found, 2);
    assert!(lenient.stats.reconciles());
}

#[test]
fn a_dump_without_a_needed_column_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = write(
        &dir,
        "short.sacct",
        "JobID|User|Submit\n1|ann|2024-01-01T00:00:00\n",
    );
    let error = read(&[&path], None, &ReadOptions::default()).error;
    let text = error.map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("Start"), "{text}");
}

#[test]
fn req_nodes_holds_a_job_to_its_nodes_only_when_it_asked_for_several() {
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Account|Submit|Start|End|AllocTRES|ReqNodes\n";
    let rows = "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=12,node=2|1\n\
                2|ann|a|2024-01-01T00:00:01|2024-01-01T00:00:01|2024-01-01T00:01:00|cpu=12,node=3|3\n";
    let path = write(&dir, "req.sacct", &(header.to_owned() + rows));
    let read = read_ok(&[&path], None);
    let nodes: Vec<Option<u32>> = read.tasks.iter().map(|t| t.nodes).collect();
    assert_eq!(nodes, [None, Some(3)], "one node asked: spread as it fits");
    assert!(read.stats.notes.iter().all(|n| !n.contains("ReqNodes")));
    // Without the column, each job keeps the nodes it was given, and a note says so.
    let path = write(&dir, "alloc.sacct", &(HEADER.to_owned() + "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=12,node=2|p|COMPLETED\n"));
    let read = read_ok(&[&path], None);
    assert_eq!(read.tasks[0].nodes, Some(2));
    assert!(
        read.stats
            .notes
            .iter()
            .any(|n| n.contains("no ReqNodes column")),
        "{:?}",
        read.stats.notes
    );
    let bad =
        "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1,node=1|two\n";
    let path = write(&dir, "bad.sacct", &(header.to_owned() + bad));
    let strict = strict_error(&path);
    assert!(
        strict.contains(
            "bad.sacct:2: field 8 (ReqNodes): expected a whole number of nodes, found \"two\""
        ),
        "{strict}"
    );
}

#[test]
fn a_job_that_became_eligible_later_arrives_then() {
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Account|Submit|Eligible|Start|End|AllocTRES|ReqNodes\n";
    let rows = "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:05|2024-01-01T00:01:00|cpu=1,node=1|1\n\
                2|ann|a|2024-01-01T00:00:01|2024-01-01T00:10:00|2024-01-01T00:10:30|2024-01-01T00:11:00|cpu=1,node=1|1\n\
                3|ann|a|2024-01-01T00:00:02|Unknown|2024-01-01T00:00:09|2024-01-01T00:01:00|cpu=1,node=1|1\n";
    let path = write(&dir, "held.sacct", &(header.to_owned() + rows));
    let read = read_ok(&[&path], None);
    let arrivals: Vec<f64> = read.tasks.iter().map(|t| t.submit.as_secs_f64()).collect();
    let day = 1_704_067_200.0; // 2024-01-01T00:00:00Z
    assert_eq!(arrivals, [day, day + 2.0, day + 600.0], "in arrival order");
    assert!(
        read.stats
            .notes
            .iter()
            .any(|n| n.contains("1 of its jobs became eligible after their submission")),
        "{:?}",
        read.stats.notes
    );
    let bad =
        "1|ann|a|2024-01-01T00:00:00|soon|2024-01-01T00:00:05|2024-01-01T00:01:00|cpu=1,node=1|1\n";
    let path = write(&dir, "bad.sacct", &(header.to_owned() + bad));
    let strict = strict_error(&path);
    assert!(
        strict.contains("bad.sacct:2: field 5 (Eligible): expected a time"),
        "{strict}"
    );
}

#[test]
fn flags_keep_the_starts_of_the_jobs_the_backfill_started() {
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Submit|Start|End|AllocTRES|Flags\n";
    let rows = "1|ann|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1|SchedSubmit\n\
                2|ann|2024-01-01T00:00:01|2024-01-01T00:00:35|2024-01-01T00:02:00|cpu=1|SchedBackfill\n\
                2.batch||2024-01-01T00:00:35|2024-01-01T00:00:35|2024-01-01T00:02:00|cpu=1|SchedBackfill\n\
                3|bob|2024-01-01T00:00:02|2024-01-01T00:01:05|2024-01-01T00:02:00|cpu=1|SchedMain,StartRecieved\n\
                4|bob|2024-01-01T00:00:03|None|2024-01-01T00:00:50||SchedBackfill\n\
                5|bob|2024-01-01T00:00:04|2024-01-01T00:01:35|2024-01-01T00:02:00|cpu=2|StartRecieved,SchedBackfill\n";
    let path = write(&dir, "flags.sacct", &(header.to_owned() + rows));
    let read = read_ok(&[&path], None);
    assert_eq!(read.tasks.len(), 4, "job 4 never started");
    assert_eq!(
        read.stats.backfill_starts,
        Some(vec![at(35), at(95)]),
        "jobs 2 and 5, once each; not the never-started job 4"
    );
    let path = write(&dir, "plain.sacct", &format!("{HEADER}1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1|cpu|COMPLETED\n"));
    assert_eq!(
        read_ok(&[&path], None).stats.backfill_starts,
        None,
        "no Flags column: nothing said"
    );
}

#[test]
fn constraints_hold_a_job_to_the_features_it_requires() {
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Submit|Start|End|AllocTRES|Constraints\n";
    let rows = "1|ann|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1|fast\n\
                2|ann|2024-01-01T00:00:01|2024-01-01T00:00:01|2024-01-01T00:01:00|cpu=1|fast&ib\n\
                3|bob|2024-01-01T00:00:02|2024-01-01T00:00:02|2024-01-01T00:01:00|cpu=1|\n\
                4|bob|2024-01-01T00:00:03|2024-01-01T00:00:03|2024-01-01T00:01:00|cpu=1|[a|b]\n\
                5|bob|2024-01-01T00:00:04|2024-01-01T00:00:04|2024-01-01T00:01:00|cpu=1|a*2&b\n";
    let path = write(&dir, "features.sacct", &(header.to_owned() + rows));
    let read = read_ok(&[&path], None);
    let asked: Vec<Vec<&str>> = (read.tasks.iter())
        .map(|t| t.properties.iter().map(String::as_str).collect())
        .collect();
    let none: Vec<&str> = Vec::new();
    assert_eq!(
        asked,
        [
            vec!["fast"],
            vec!["fast", "ib"],
            none.clone(),
            none.clone(),
            none
        ]
    );
    let said = |text: &str| read.stats.notes.iter().any(|n| n.contains(text));
    assert!(
        said("2 jobs ask for node features by a constraint other than a list"),
        "{:?}",
        read.stats.notes
    );
    // A dump without the column, or whose jobs ask for no features, says nothing of them.
    let path = write(&dir, "plain.sacct", &format!("{HEADER}1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|cpu=1|cpu|COMPLETED\n"));
    let read = read_ok(&[&path], None);
    assert!(read.tasks[0].properties.is_empty());
    assert!(read.stats.notes.iter().all(|n| !n.contains("features")));
}

#[test]
fn a_job_cancelled_while_it_waited_waits_as_it_asked_until_its_cancellation() {
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Submit|Start|End|Timelimit|AllocTRES|ReqTRES|ReqNodes|State\n";
    let rows = [
        "1|ann|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:00|00:05:00|cpu=2,mem=1G,node=1|billing=2,cpu=2,mem=1G,node=1|1|COMPLETED",
        // Cancelled while waiting, as Slurm 22.05 writes it: Start = End, nothing allocated.
        "2|bob|2024-01-01T00:00:05|2024-01-01T00:00:40|2024-01-01T00:00:40|00:10:00||billing=16,cpu=16,mem=4000M,node=2|2|CANCELLED by 1001",
        // And with no Start at all; one node asked, so it may spread.
        "3|bob|2024-01-01T00:00:06|None|2024-01-01T00:00:50|00:10:00||cpu=4,gres/gpu=1,node=1|1|CANCELLED by 0",
        // Still pending when the dump was taken: nothing to replay it to.
        "4|cat|2024-01-01T00:00:07|Unknown|Unknown|00:10:00||cpu=1,node=1|1|PENDING",
        // Cancelled while it ran: an ended job like any other.
        "5|cat|2024-01-01T00:00:08|2024-01-01T00:00:20|2024-01-01T00:00:30|00:10:00|cpu=1,node=1|cpu=1,node=1|1|CANCELLED by 1002",
    ];
    let text = header.to_owned() + &rows.join("\n") + "\n";
    let path = write(&dir, "cancelled.sacct", &text);
    let read = read_ok(&[&path], None);
    /// Runtime (s), start, walltime (s), demand, nodes, cancellation.
    type Withdrawn = (u64, Option<Time>, u64, Vec<f64>, Option<u32>, Option<Time>);
    let got: Vec<Withdrawn> = (read.tasks)
        .iter()
        .map(|t| {
            let run = t.runtime / 1_000_000;
            (
                run,
                t.start,
                t.walltime.unwrap_or(0) / 1_000_000,
                t.demand.clone(),
                t.nodes,
                t.cancelled,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                50,
                Some(at(10)),
                300,
                vec![2.0, 1024.0 * 1024.0, 0.0],
                None,
                None
            ),
            (
                0,
                None,
                600,
                vec![16.0, 4000.0 * 1024.0, 0.0],
                Some(2),
                Some(at(40))
            ),
            (0, None, 600, vec![4.0, 0.0, 1.0], None, Some(at(50))),
            (10, Some(at(20)), 600, vec![1.0, 0.0, 0.0], None, None),
        ],
        "runtime, start, walltime, demand, nodes and cancellation of jobs 1, 2, 3 and 5"
    );
    assert_eq!(read.tasks[1].billing, Some(16.0), "billed as it asked");
    assert_eq!(skipped(&read, "never started"), 1, "job 4, still pending");
    let said = |text: &str| read.stats.notes.iter().any(|n| n.contains(text));
    assert!(
        said("2 jobs were cancelled while they waited"),
        "{:?}",
        read.stats.notes
    );
    assert!(read.stats.reconciles());

    // Without ReqTRES nothing says what they asked for: they are left out, and a note says so.
    let plain: Vec<String> = (header.lines().chain(rows.iter().copied()))
        .map(|line| {
            let mut fields: Vec<&str> = line.split('|').collect();
            fields.remove(7);
            fields.join("|")
        })
        .collect();
    let path = write(&dir, "plain.sacct", &(plain.join("\n") + "\n"));
    let read = read_ok(&[&path], None);
    assert_eq!(read.tasks.len(), 2);
    assert!(read.tasks.iter().all(|t| t.cancelled.is_none()));
    assert_eq!(skipped(&read, "never started"), 3);
    let left_out = "2 jobs cancelled while they waited are left out";
    assert!(
        read.stats
            .notes
            .iter()
            .any(|n| n.contains(left_out) && n.contains("add ReqTRES")),
        "{:?}",
        read.stats.notes
    );

    // Submitted to two partitions, as a job that never started names them: the first is kept.
    let header_p = "JobID|User|Submit|Start|End|AllocTRES|ReqTRES|Partition|State\n";
    let row = "1|ann|2024-01-01T00:00:00|None|2024-01-01T00:00:09||cpu=1|gpu,cpu|CANCELLED\n";
    let path = write(&dir, "partitions.sacct", &(header_p.to_owned() + row));
    let read = read_ok(&[&path], None);
    assert_eq!(read.partitions, ["gpu"], "one partition, the first named");
    assert_eq!(read.tasks[0].partition, Some(0));
    let said = |text: &str| read.stats.notes.iter().any(|n| n.contains(text));
    assert!(
        said("1 jobs name several partitions"),
        "{:?}",
        read.stats.notes
    );

    let bad = "1|ann|2024-01-01T00:00:00|None|2024-01-01T00:00:09|00:05:00||cpu=x|1|CANCELLED\n";
    let path = write(&dir, "bad.sacct", &(header.to_owned() + bad));
    let strict = strict_error(&path);
    assert!(
        strict.contains("bad.sacct:2: field 8 (ReqTRES): expected TRES amounts that are numbers >= 0, found \"cpu=x\""),
        "{strict}"
    );
}

/// `slurmctld`'s log gives a dump's jobs their moments to the millisecond where they fall in
/// the seconds the dump records: jobs 21 and 22, submitted in one second, come in the order
/// the log says (22 first); job 21's start and end and job 22's start are the log's, its end
/// (not in the log) the dump's; job 23's logged submission falls in another second (another
/// controller's job of that id) and is not taken; job 24's logged start comes before its
/// logged submission, so its submission is not taken (it would follow the start). A note
/// counts what the log timed.
#[test]
fn slurmctlds_log_times_the_jobs_to_the_millisecond() {
    use fairshare_trace::slurmctld_log::parse_controller_log;
    let dir = TempDir::new().unwrap();
    let rows = [
        "21|alice|physics|2024-01-01T00:00:10|2024-01-01T00:00:11|2024-01-01T00:00:31|cpu=1,node=1|cpu|COMPLETED",
        "22|bob|physics|2024-01-01T00:00:10|2024-01-01T00:00:11|2024-01-01T00:00:41|cpu=1,node=1|cpu|COMPLETED",
        "23|bob|physics|2024-01-01T00:01:00|2024-01-01T00:01:00|2024-01-01T00:01:10|cpu=1,node=1|cpu|COMPLETED",
        "24|bob|physics|2024-01-01T00:02:00|2024-01-01T00:02:00|2024-01-01T00:02:10|cpu=1,node=1|cpu|COMPLETED",
    ];
    let path = write(
        &dir,
        "jobs.sacct",
        &(HEADER.to_owned() + &rows.join("\n") + "\n"),
    );
    let log = "\
[2024-01-01T00:00:10.100] _slurm_rpc_submit_batch_job: JobId=22 InitPrio=1 usec=300
[2024-01-01T00:00:10.700] _slurm_rpc_submit_batch_job: JobId=21 InitPrio=1 usec=300
[2024-01-01T00:00:11.620] sched: Allocate JobId=21 NodeList=n01 #CPUs=1 Partition=cpu
[2024-01-01T00:00:11.620] sched: Allocate JobId=22 NodeList=n02 #CPUs=1 Partition=cpu
[2024-01-01T00:00:31.655] _job_complete: JobId=21 done
[2024-01-01T00:00:59.900] _slurm_rpc_submit_batch_job: JobId=23 InitPrio=1 usec=300
[2024-01-01T00:02:00.800] _slurm_rpc_submit_batch_job: JobId=24 InitPrio=1 usec=300
[2024-01-01T00:02:00.300] sched/backfill: _start_job: Started JobId=24 in cpu on n01
";
    let options = ReadOptions {
        controller_log: Some(std::sync::Arc::new(parse_controller_log(log).unwrap())),
        ..ReadOptions::default()
    };
    let read = read(&[&path], None, &options);
    assert!(read.error.is_none(), "{:?}", read.error);
    let ms = |s: u64, ms: u64| at(s).plus_micros(ms * 1000);
    let got: Vec<(u64, Time, Option<Time>, u64)> = (read.tasks.iter())
        .map(|t| (t.id, t.submit, t.start, t.runtime))
        .collect();
    assert_eq!(
        got,
        [
            (1, ms(10, 100), Some(ms(11, 620)), 29_380_000),
            (0, ms(10, 700), Some(ms(11, 620)), 20_035_000),
            (2, at(60), Some(at(60)), 10_000_000),
            (3, at(120), Some(ms(120, 300)), 9_700_000),
        ]
    );
    let note = read.stats.notes.iter().find(|n| n.contains("slurmctld"));
    assert_eq!(
        note.map(String::as_str),
        Some("slurmctld's log timed to the millisecond 2 of the dump's 4 jobs' submissions, 3 starts and 1 ends (the rest keep the dump's whole seconds)")
    );
}

/// `NodeList` gives each job the hosts it ran on, expanded; a job listed in an earlier dump (the
/// history before a window lists the jobs that ran across its start, as the window's dump does)
/// is that dump's, counted once; a host list that is not one names its field.
#[test]
fn node_lists_are_hosts_and_a_job_of_an_earlier_dump_is_read_once() {
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Account|Submit|Start|End|AllocTRES|NodeList\n";
    let history = [
        "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|cpu=2,node=1|n03",
        "2|bob|a|2024-01-01T00:05:00|2024-01-01T00:06:00|2024-01-01T01:00:00|cpu=8,node=2|n[01-02]",
        "3|bob|a|2024-01-01T00:07:00|Unknown|Unknown||None assigned",
    ];
    let window = [
        "2|bob|a|2024-01-01T00:05:00|2024-01-01T00:06:00|2024-01-01T01:00:00|cpu=8,node=2|n[01-02]",
        "4|ann|a|2024-01-01T00:20:00|2024-01-01T00:21:00|2024-01-01T00:30:00|cpu=1,node=1|gpu1",
    ];
    let lines = |rows: &[&str]| header.to_owned() + &rows.join("\n") + "\n";
    let history = write(&dir, "history.txt", &lines(&history));
    let window = write(&dir, "sacct.txt", &lines(&window));
    let read = read_ok(&[&history, &window], Some(Format::SACCT));
    let hosts: Vec<Vec<String>> = read.tasks.iter().map(|t| t.hosts.clone()).collect();
    assert_eq!(hosts, [vec!["n03"], vec!["n01", "n02"], vec!["gpu1"]]);
    assert_eq!(
        read.stats.records_ignored.get("listed in an earlier dump"),
        Some(&1)
    );
    let notes = read.stats.notes.join("\n");
    assert!(
        notes.contains("sacct.txt: 1 jobs are listed in an earlier dump too"),
        "{notes}"
    );
    let bad =
        "5|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|cpu=2,node=1|n[3-1]\n";
    let path = write(&dir, "bad.txt", &(header.to_owned() + bad));
    let error = read_of(&path).to_string();
    assert!(
        error.contains("bad.txt:2: field 8 (NodeList)") && error.contains("falls"),
        "{error}"
    );
}

/// The error reading `path` gives.
fn read_of(path: &std::path::Path) -> fairshare_trace::TraceError {
    read(&[path], Some(Format::SACCT), &ReadOptions::default())
        .error
        .expect("an error")
}

/// A dump made without `--parsable2` is named for what it is, not for a missing column.
#[test]
fn a_dump_without_parsable2_is_told_so() {
    let dir = TempDir::new().unwrap();
    let text = "       JobID      User    Account              Submit\n------------ --------- ---------- -------------------\n1                 ann          a 2024-01-01T00:00:00\n";
    let path = write(&dir, "sacct.txt", text);
    let error = read_of(&path).to_string();
    assert!(
        error.contains("sacct.txt: the header \"JobID      User")
            && error.contains("sacct --parsable2"),
        "{error}"
    );
}

/// A job the dump records in a reservation, with a dependency on its submission line, or
/// requeued or preempted is marked for a replay to start as it started; a pipe inside the
/// last column (`SubmitLine`, a `--wrap` command) hides no dependency after it.
#[test]
fn what_a_replay_does_not_model_is_marked_on_the_job() {
    use fairshare_core::model::Pin;
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Account|Submit|Start|End|AllocTRES|State|Reservation|SubmitLine\n";
    let rows = [
        "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:01|2024-01-01T00:10:00|cpu=2|COMPLETED|maint|sbatch -n 2 job.sh",
        "2|ann|a|2024-01-01T00:00:02|2024-01-01T00:10:01|2024-01-01T00:20:00|cpu=2|COMPLETED||sbatch --dependency=afterok:1 job.sh",
        "3|bob|a|2024-01-01T00:00:03|2024-01-01T00:10:02|2024-01-01T00:20:00|cpu=2|COMPLETED||sbatch -d singleton job.sh",
        "4|bob|a|2024-01-01T00:00:04|2024-01-01T00:00:05|2024-01-01T00:05:00|cpu=2|PREEMPTED||sbatch job.sh",
        "5|bob|a|2024-01-01T00:00:05|2024-01-01T00:00:06|2024-01-01T00:05:00|cpu=2|COMPLETED||sbatch --wrap 'ls | sort' --dep=after:4",
        "6|bob|a|2024-01-01T00:00:06|2024-01-01T00:00:07|2024-01-01T00:05:00|cpu=2|COMPLETED||sbatch --wrap 'ls | wc' -n 2 --mem=1G",
        "7|bob|a|2024-01-01T00:00:07|2024-01-01T00:00:08|2024-01-01T00:05:00|cpu=2|COMPLETED||sbatch -n 2 -D /tmp job.sh",
    ];
    let path = write(
        &dir,
        "sacct.txt",
        &(header.to_owned() + &rows.join("\n") + "\n"),
    );
    let read = read_ok(&[&path], Some(Format::SACCT));
    let pins: Vec<Option<Pin>> = read.tasks.iter().map(|t| t.pinned).collect();
    let (r, d, q) = (Pin::Reservation, Pin::Dependency, Pin::Requeued);
    assert_eq!(
        pins,
        [Some(r), Some(d), Some(d), Some(q), Some(d), None, None]
    );
}

/// `sacct --duplicates` lists each run of a job Slurm requeued under its one `JobID`: the runs
/// before the last (`REQUEUED`) and the last are each read, and both marked for a replay to
/// start as they started, so the earlier run's usage is charged; a run the history before a
/// window listed too (the same `JobID` and `Start`) is still read once, while the job's later
/// run, in the window only, is read.
#[test]
fn each_run_of_a_requeued_job_is_read_and_marked() {
    use fairshare_core::model::Pin;
    let dir = TempDir::new().unwrap();
    let header = "JobID|User|Account|Submit|Start|End|AllocTRES|State\n";
    let history = [
        "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:01|2024-01-01T00:02:00|cpu=2|REQUEUED",
        "2|bob|a|2024-01-01T00:00:02|2024-01-01T00:00:03|2024-01-01T00:20:00|cpu=2|COMPLETED",
    ];
    let window = [
        "1|ann|a|2024-01-01T00:00:00|2024-01-01T00:00:01|2024-01-01T00:02:00|cpu=2|REQUEUED",
        "1|ann|a|2024-01-01T00:02:30|2024-01-01T00:03:00|2024-01-01T00:13:00|cpu=2|COMPLETED",
        "2|bob|a|2024-01-01T00:00:02|2024-01-01T00:00:03|2024-01-01T00:20:00|cpu=2|COMPLETED",
        "3|bob|a|2024-01-01T00:04:00|2024-01-01T00:04:01|2024-01-01T00:05:00|cpu=2|COMPLETED",
    ];
    let lines = |rows: &[&str]| header.to_owned() + &rows.join("\n") + "\n";
    let history = write(&dir, "history.txt", &lines(&history));
    let window = write(&dir, "sacct.txt", &lines(&window));
    let read = read_ok(&[&history, &window], Some(Format::SACCT));
    let runs: Vec<(u64, Option<Pin>)> = (read.tasks.iter())
        .map(|t| (t.start.unwrap().as_micros() / 1_000_000 % 3600, t.pinned))
        .collect();
    let q = Some(Pin::Requeued);
    assert_eq!(runs, [(1, q), (3, None), (180, q), (241, None)]);
    assert_eq!(
        read.stats.records_ignored.get("listed in an earlier dump"),
        Some(&2)
    );
}
