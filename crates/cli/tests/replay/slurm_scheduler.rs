//! `--scheduler slurm` on a Slurm dump: starts predicted beside the recorded ones, backfill
//! cycles where the dump's `Flags` put them, the site weight, jobs cancelled while they waited,
//! slurmctld's log, the per-job table's job ids.

use super::*;

/// `fairshare replay` of the Slurm dump `dump` under FIFO on one 4-CPU node with `--scheduler
/// slurm`, until every job ends, its per-job table written to `jobs`, with `extra` arguments.
fn replay_slurm_dump(dump: &Path, jobs: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        dump.to_str().unwrap(),
        "--policy",
        "fifo",
        "--capacity",
        "cpu=4,mem=0,gpu=0",
        "--scheduler",
        "slurm",
        "--drain",
        "--jobs",
        jobs.to_str().unwrap(),
    ];
    args.extend(extra);
    fairshare(&args)
}

/// `--scheduler slurm`: carol's job starts at the first backfill cycle (30 s by default,
/// 10 s with `bf_interval=10` from `--slurm-conf`, whose unmodelled settings are named, as is
/// a size factor without the cluster's nodes), and
/// the per-job table sets each predicted start beside the recorded one.
#[test]
fn the_slurm_scheduler_predicts_starts_beside_the_recorded_ones() {
    let dir = tempfile::tempdir().unwrap();
    let dump = write_slurm_dump(dir.path());
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=10,bf_continue,batch_sched_delay=0\nPriorityWeightAge=1000\nPriorityWeightJobSize=10\nPriorityWeightQOS=1000\nPriorityWeightAssoc=10\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let run = |extra: &[&str]| replay_slurm_dump(&dump, &jobs, extra);
    let starts = |extra: &[&str]| {
        let out = run(extra);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let picked = [
            "user",
            "partition",
            "starting_time",
            "recorded_starting_time",
            "starting_time_error",
            "qos",
        ];
        let mut rows = job_cells(&jobs, picked);
        rows.sort();
        (rows, stderr)
    };
    let origin = 1_767_225_600; // 2026-01-01T00:00:00Z
    let at = |s: u64| (origin + s).to_string();
    let (rows, stderr) = starts(&[]);
    assert!(
        stderr.contains("note: the dump has no Flags column, so Slurm's backfill cycles are counted from the first submission"),
        "{stderr}"
    );
    assert_eq!(rows[2][0], "carol");
    assert_eq!(rows[2][1], "cpu");
    assert_eq!(rows[2][2], at(30), "at the first backfill cycle");
    assert_eq!(rows[2][3], at(31), "as Slurm recorded it");
    assert_eq!(rows[2][4], "-1");
    assert_eq!(
        (rows[0][5].as_str(), rows[2][5].as_str()),
        ("normal", "scavenger")
    );
    // bob starts at the main scheduler's pass the second after alice's end (Slurm's
    // background loop); the dump, made up, says at her end.
    assert_eq!(
        (rows[1][2].clone(), rows[1][4].clone()),
        (at(101), "1".to_owned())
    );
    let (rows, stderr) = starts(&["--slurm-conf", conf.to_str().unwrap()]);
    assert_eq!(rows[2][2], at(10), "bf_interval=10");
    assert!(
        stderr.contains(
            "note: --slurm-conf: SchedulerParameters not modelled, so left out: bf_continue"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: PriorityWeightAssoc is set but the shares give no association a priority above 0"),
        "{stderr}"
    );
    assert!(!stderr.contains("priority terms not modelled"), "{stderr}");
    assert!(
        stderr.contains("the job size factor counts the replay's nodes and processors"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "note: --slurm-conf: PriorityWeightQOS is set but no QOS has a priority above 0"
        ),
        "{stderr}"
    );
    // With the QOS priorities, carol's scavenger job outranks bob's and starts beside alice's
    // in the main scheduler's pass at its submission.
    let qos = dir.path().join("qos.txt");
    std::fs::write(&qos, "normal|1.000000|10\nscavenger|0.500000|1000\n").unwrap();
    let (rows, stderr) = starts(&[
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--qos",
        qos.to_str().unwrap(),
    ]);
    assert_eq!(rows[2][2], at(2), "the higher QOS first");
    assert!(!stderr.contains("PriorityWeightQOS is set"), "{stderr}");
    // With association priorities (account a's 50 inherited by bob, carol's own 10: factors
    // 1 and 0.2), PriorityWeightAssoc=10 leaves carol's QOS ahead (1,002 points to bob's 20)
    // and she starts at 2 s; at 5,000, bob's 5,010 outrank her 2,000 and she waits for the
    // backfill cycle at 10 s.
    let assoc = dir.path().join("assoc.txt");
    std::fs::write(
        &assoc,
        "fairshare|root|||1||\nfairshare|a|||1|root|50\nfairshare|a|alice||1||\n\
         fairshare|a|bob||1||\nfairshare|a|carol||1||10\n",
    )
    .unwrap();
    let with_assoc = |weight: &str| {
        let conf_assoc = dir.path().join(format!("slurm-assoc-{weight}.conf"));
        let text = std::fs::read_to_string(&conf).unwrap();
        let text = text.replace(
            "PriorityWeightAssoc=10",
            &format!("PriorityWeightAssoc={weight}"),
        );
        std::fs::write(&conf_assoc, text).unwrap();
        starts(&[
            "--slurm-conf",
            conf_assoc.to_str().unwrap(),
            "--qos",
            qos.to_str().unwrap(),
            "--shares",
            assoc.to_str().unwrap(),
        ])
    };
    let (rows, stderr) = with_assoc("10");
    assert_eq!(
        rows[2][2],
        at(2),
        "10 points of association do not outweigh the QOS"
    );
    assert!(!stderr.contains("PriorityWeightAssoc is set"), "{stderr}");
    let (rows, _) = with_assoc("5000");
    assert_eq!(
        rows[2][2],
        at(10),
        "4,000 points for bob: carol waits for the backfill"
    );
    std::fs::write(&qos, "normal|1.000000|ten\n").unwrap();
    let out = run(&[
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--qos",
        qos.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("line 1") && stderr.contains("Priority"),
        "{stderr}"
    );
}

/// The dump's `Flags` say Slurm's backfill started carol's job at 31 s: its cycles fall 1 s
/// past each half-minute, and the replay starts her job at 31 s, as recorded, rather than at
/// 30 s, the first cycle counted from the first submission.
#[test]
fn the_jobs_the_backfill_started_put_its_cycles_where_they_fell() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read_to_string(write_slurm_dump(dir.path())).unwrap();
    let mut lines = plain.lines();
    let mut text = lines.next().unwrap().to_owned() + "|Flags\n";
    for (line, flags) in lines.zip(["SchedSubmit", "SchedMain", "SchedBackfill"]) {
        text += &format!("{line}|{flags}\n");
    }
    let dump = dir.path().join("flags.txt");
    std::fs::write(&dump, text).unwrap();
    let jobs = dir.path().join("jobs.csv");
    let out = replay_slurm_dump(&dump, &jobs, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: Slurm's backfill cycles fall 1 s past each multiple of bf_interval (30 s) from the epoch, where 1 of the 1 jobs the dump's Flags say the backfill started began"),
        "{stderr}"
    );
    let mut rows = job_cells(&jobs, ["user", "starting_time_error"]);
    rows.sort();
    let errors: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    // carol's as recorded; alice's at the first cycle, 1 s, and bob's at the main scheduler's
    // pass the second after her end (the dump, made up, starts them at once).
    assert_eq!(errors, ["1", "2", "0"]);
}

/// `--site-weight`: a policy other than Slurm's own reaches Slurm as site factors of this
/// weight. alice fills the 4-CPU node until 100 s; bob's and carol's 4-CPU jobs wait, each
/// submitted with the submit table's factor, the whole weight. At the adapter's pass due at
/// 60 s (`--site-interval`, 60 s by default; it runs at the next event, 100 s), FIFO's order
/// gives bob's run the site factor 1 and carol's 0.5 of the weight, and carol's QOS adds 1,000
/// points: at the default weight (100,000) bob starts first when alice's node is free, at
/// weight 1 carol does (both runs get 1), and so she does when the adapter writes only every
/// 1,000 s (both still hold the whole weight at 100 s), unless its passes fall between (an
/// offset after `@`). Without `--scheduler slurm` either option is refused, as is an interval
/// under a second or an offset that is not a duration.
#[test]
fn the_site_weight_sets_a_policys_factors_against_the_other_terms() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("sacct.txt");
    std::fs::write(
        &dump,
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State|QOS\n\
        1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=4,node=1|cpu|COMPLETED|normal\n\
        2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:40|2026-01-01T00:01:50|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED|normal\n\
        3|carol|a|2026-01-01T00:00:02|2026-01-01T00:01:50|2026-01-01T00:02:00|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED|high\n",
    )
    .unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "PriorityWeightQOS=1000\nPriorityCalcPeriod=1\nSchedulerParameters=batch_sched_delay=0\n",
    )
    .unwrap();
    let qos = dir.path().join("qos.txt");
    std::fs::write(&qos, "normal|1.000000|0\nhigh|1.000000|100\n").unwrap();
    let jobs = dir.path().join("jobs.csv");
    let first_at_100_s = |extra: &[&str]| {
        let (conf, qos) = (conf.to_str().unwrap(), qos.to_str().unwrap());
        let mut args = vec!["--slurm-conf", conf, "--qos", qos];
        args.extend(extra);
        let out = replay_slurm_dump(&dump, &jobs, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The first to start once alice's node is free (its nodes answer 5 ms after her end).
        let rows = job_cells(&jobs, ["starting_time", "user"]);
        let start = |row: &[String; 2]| row[0].parse::<f64>().unwrap();
        let [_, user] = (rows.into_iter())
            .filter(|[_, user]| user != "alice")
            .min_by(|a, b| start(a).total_cmp(&start(b)))
            .unwrap();
        user
    };
    assert_eq!(
        first_at_100_s(&[]),
        "bob",
        "the site factor outweighs the QOS"
    );
    assert_eq!(
        first_at_100_s(&["--site-weight", "1"]),
        "carol",
        "the QOS outweighs it"
    );
    assert_eq!(
        first_at_100_s(&["--site-interval", "1000s"]),
        "carol",
        "both still hold the submit table's factor"
    );
    // The dump starts 600 s past a multiple of 1,000 s since the epoch: a pass 650 s past
    // each multiple falls 50 s into the run, before alice's end; one 750 s past, after it.
    assert_eq!(first_at_100_s(&["--site-interval", "1000s@650s"]), "bob");
    assert_eq!(first_at_100_s(&["--site-interval", "1000s@750s"]), "carol");
    for option in [
        ["--site-weight", "1"],
        ["--site-interval", "5s"],
        ["--turn-seed", "3"],
    ] {
        let mut args = vec!["replay", dump.to_str().unwrap()];
        args.extend(option);
        let refused = fairshare(&args);
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("needs --scheduler slurm"), "{stderr}");
    }
    let json = dir.path().join("drawn.json");
    let drawn = replay_slurm_dump(
        &dump,
        &jobs,
        &["--turn-seed", "3", "--json", json.to_str().unwrap()],
    );
    assert!(drawn.status.success());
    assert_eq!(
        read_json(&json)["setting"]["turn_seed"],
        3,
        "the seed is said in the JSON"
    );
    for bad in ["0.5s", "5s@soon"] {
        let out = replay_slurm_dump(&dump, &jobs, &["--site-interval", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        let said = format!("--site-interval {bad}: how often the Slurm adapter writes");
        assert!(stderr.contains(&said), "{stderr}");
    }
}

/// A job cancelled while it waited (bob's, at 40 s: `Start` = `End`, nothing allocated, as
/// Slurm 22.05 writes it) waits, as its `ReqTRES` asked, until then: carol's 120-s job cannot
/// pass his 4-CPU job, reserved at alice's end (100 s), and starts at the first event after
/// the cancellation, the backfill cycle at 60 s (Slurm's schedulers do not run on a
/// cancellation). Without `ReqTRES`, bob's job is left out (a note says so) and carol's starts
/// beside alice's at the main scheduler's next pass.
#[test]
fn a_job_cancelled_while_it_waited_holds_the_others_back_until_then() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES|ReqTRES|State",
        "1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|cpu=3,node=1|cpu=3,node=1|COMPLETED",
        "2|bob|a|2026-01-01T00:00:01|2026-01-01T00:00:40|2026-01-01T00:00:40|00:10:00||cpu=4,node=1|CANCELLED by 1001",
        "3|carol|a|2026-01-01T00:00:02|2026-01-01T00:01:00|2026-01-01T00:02:30|00:02:00|cpu=1,node=1|cpu=1,node=1|COMPLETED",
    ];
    let dump = |req_tres: bool| write_rows(dir.path(), &rows, (!req_tres).then_some(8));
    let jobs = dir.path().join("jobs.csv");
    let out = replay_slurm_dump(&dump(true), &jobs, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 jobs were cancelled while they waited: each waits in the replay"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "warning: under fifo, 1 of 3 tasks were cancelled by their owners while they waited"
        ),
        "{stdout}"
    );
    let mut rows = job_cells(
        &jobs,
        ["user", "final_state", "starting_time", "waiting_time"],
    );
    rows.sort();
    let at = |s: u64| (1_767_225_600 + s).to_string();
    assert_eq!(
        rows,
        [
            ["alice".into(), "finished".into(), at(0), "0".into()],
            ["bob".into(), "cancelled".into(), String::new(), "39".into()],
            ["carol".into(), "finished".into(), at(60), "58".into()],
        ]
    );
    let out = replay_slurm_dump(&dump(false), &jobs, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 jobs cancelled while they waited are left out"),
        "{stderr}"
    );
    let rows = job_cells(&jobs, ["user", "starting_time"]);
    let carol = rows.iter().find(|[user, _]| user == "carol").unwrap();
    assert_eq!(
        carol[1],
        at(4),
        "nothing holds carol back: the main scheduler's next pass, 3 s after the one at 1 s"
    );
}

/// `--slurmctld-log`: the log's milliseconds time the dump's jobs and its main-scheduler
/// starts the background loop's turns (0.6 s past each second here). Under the main
/// scheduler alone (`sched/builtin`), alice's job, submitted
/// at 0.2 s, starts at the turn of its own second, 0.6 s, and ends at 60.9 s; bob's, submitted
/// at 30.1 s, starts at the loop's turn after that end, 61.6 s, as the log says it did (without
/// the log: at 1 s and 62 s, the whole seconds after each event). The recorded starts in the
/// per-job table are the log's, the JSON says how many turns (and controller starts) the log
/// showed, a log from the controller's start times the passes down the whole queue, and the option
/// is refused without `--scheduler slurm`, beside `--turn-seed`, for another trace format and
/// for a log line it cannot read (file and line named).
#[test]
fn slurmctlds_log_times_the_jobs_and_the_loops_turns() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.sacct");
    std::fs::write(
        &dump,
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State\n\
         1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:00|cpu=4,node=1|cpu|COMPLETED\n\
         2|bob|a|2026-01-01T00:00:30|2026-01-01T00:01:01|2026-01-01T00:01:11|cpu=4,node=1|cpu|COMPLETED\n",
    )
    .unwrap();
    let log = dir.path().join("slurmctld.log");
    std::fs::write(
        &log,
        "[2026-01-01T00:00:00.200] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=300\n\
         [2026-01-01T00:00:00.600] sched: Allocate JobId=1 NodeList=n1 #CPUs=4 Partition=cpu\n\
         [2026-01-01T00:00:30.100] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=1 usec=300\n\
         [2026-01-01T00:01:00.900] _job_complete: JobId=1 done\n\
         [2026-01-01T00:01:01.600] sched: Allocate JobId=2 NodeList=n1 #CPUs=4 Partition=cpu\n\
         [2026-01-01T00:01:11.650] _job_complete: JobId=2 done\n",
    )
    .unwrap();
    let (jobs, json) = (dir.path().join("jobs.csv"), dir.path().join("run.json"));
    // The main scheduler alone: the backfill's first cycle would fall on the first submission.
    let conf = dir.path().join("slurm.conf");
    std::fs::write(&conf, "SchedulerType=sched/builtin\n").unwrap();
    let starts = |extra: &[&str]| -> Vec<[f64; 2]> {
        let builtin = ["--slurm-conf", conf.to_str().unwrap()];
        let out = replay_slurm_dump(&dump, &jobs, &[&builtin[..], extra].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let rows = job_cells(&jobs, ["starting_time", "recorded_starting_time"]);
        let secs = |cell: &str| cell.parse::<f64>().unwrap() - 1_767_225_600.0;
        let round = |s: f64| (s * 1000.0).round() / 1000.0;
        (rows.iter())
            .map(|[start, recorded]| [round(secs(start)), round(secs(recorded))])
            .collect()
    };
    let log_arg = ["--slurmctld-log", log.to_str().unwrap()];
    let with_log = [&log_arg[..], &["--json", json.to_str().unwrap()]].concat();
    assert_eq!(starts(&with_log), [[0.6, 0.6], [61.6, 61.6]]);
    assert_eq!(read_json(&json)["setting"]["loop_turns_shown"], 2);
    assert!(read_json(&json)["setting"]["backfill_cycles_shown"].is_null());
    assert_eq!(read_json(&json)["setting"]["controller_starts_shown"], 0);
    assert_eq!(starts(&[]), [[1.0, 0.0], [62.0, 61.0]]);
    // A log from the controller's start times the passes down the whole queue too, every
    // 60 s from its second: at 0.6 s and at 60.6 s, which starts nothing (alice's job ends
    // at 60.9) but spaces the pass her end asks for to 63.6 s (this made-up log says 61.6).
    let from_start = dir.path().join("from-start.log");
    let started = "[2025-12-31T23:59:00.400] Running as primary controller\n";
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&from_start, format!("{started}{text}")).unwrap();
    let log_arg = ["--slurmctld-log", from_start.to_str().unwrap()];
    let with_start = [&log_arg[..], &["--json", json.to_str().unwrap()]].concat();
    assert_eq!(starts(&with_start), [[0.6, 0.6], [63.6, 61.6]]);
    assert_eq!(read_json(&json)["setting"]["controller_starts_shown"], 1);
    let log_arg = ["--slurmctld-log", log.to_str().unwrap()];

    let refused = |args: &[&str]| -> String {
        let out = fairshare(args);
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let dump_arg = dump.to_str().unwrap();
    let stderr = refused(&[&["replay", dump_arg][..], &log_arg].concat());
    assert!(stderr.contains("add --scheduler slurm"), "{stderr}");
    let drawn = [&log_arg[..], &["--turn-seed", "1"]].concat();
    let stderr =
        String::from_utf8_lossy(&replay_slurm_dump(&dump, &jobs, &drawn).stderr).into_owned();
    assert!(stderr.contains("which --turn-seed draws"), "{stderr}");
    let swf = dir.path().join("jobs.swf");
    std::fs::write(&swf, "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n").unwrap();
    let stderr = refused(
        &[
            &["replay", swf.to_str().unwrap(), "--scheduler", "slurm"][..],
            &log_arg,
        ]
        .concat(),
    );
    assert!(stderr.contains("not of a swf trace"), "{stderr}");
    std::fs::write(
        &log,
        "[2026-01-01T00:00:00.200] ok\n[2026-01-01T00:00:01] sched: Allocate JobId=1\n",
    )
    .unwrap();
    let stderr =
        String::from_utf8_lossy(&replay_slurm_dump(&dump, &jobs, &log_arg).stderr).into_owned();
    assert!(
        stderr.contains(&format!("--slurmctld-log {}", log.display()))
            && stderr.contains("line 2: field `timestamp`"),
        "{stderr}"
    );
}

/// A Slurm dump's per-job table names each job by its `JobID` (an array's task as `10_1`),
/// so that every row joins back to the dump's own line by it.
#[test]
fn the_per_job_table_names_a_slurm_dumps_jobs_by_their_job_ids() {
    let dir = tempfile::tempdir().unwrap();
    let day = "2026-01-01T00:";
    let rows = [
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State".to_owned(),
        format!("4711|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu|COMPLETED"),
        format!("10_1|bob|a|{day}00:01|{day}00:01|{day}00:50|00:00:49|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
        format!("4711.batch|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40||cpu=2,node=1|cpu|COMPLETED"),
        format!("10_2|bob|a|{day}00:01|{day}00:02|{day}00:50|00:00:48|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let dump = write_rows(dir.path(), &rows, None);
    let jobs = dir.path().join("jobs.csv");
    let out = replay_slurm_dump(&dump, &jobs, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut listed = job_cells(&jobs, ["job_id", "user", "recorded_starting_time"]);
    listed.sort();
    let origin = 1_767_225_600; // 2026-01-01T00:00:00Z
    let row = |id: &str, user: &str, start: u64| {
        [id, user, &(origin + start).to_string()].map(str::to_owned)
    };
    assert_eq!(
        listed,
        [
            row("10_1", "bob", 1),
            row("10_2", "bob", 2),
            row("4711", "alice", 0)
        ]
    );
}
