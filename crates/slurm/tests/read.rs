//! The readers on outputs recorded from a real Slurm 22.05 (in `tests/data/`, users renamed
//! u1…u4), on hand-made bad inputs whose errors must name the field, and on arbitrary bytes.

use fairshare_core::model::Time;
use fairshare_slurm::accounting::{parse_accounting, sacct_command, Allocation};
use fairshare_slurm::assoc::{parse_assoc, AssocShares};
use fairshare_slurm::nodes::{gpus, parse_nodes};
use fairshare_slurm::queue::{parse_queue, parse_site_factors, Memory, QueueState};
use fairshare_slurm::sshare::{parse_sshare, ShareRow, SSHARE_COMMAND};
use fairshare_slurm::{Problem, ReadError};
use fairshare_trace::billing::Billing;
use proptest::prelude::*;

/// A recorded output.
fn data(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The job `id` of the recorded queue.
fn recorded_job(id: u64) -> fairshare_slurm::queue::SqueueJob {
    let jobs = parse_queue(&data("squeue.json")).expect("the recorded queue reads");
    jobs.into_iter()
        .find(|j| j.id == id)
        .expect("the job is recorded")
}

#[test]
fn recorded_queue_reads_every_job_in_order() {
    let jobs = parse_queue(&data("squeue.json")).unwrap();
    let ids: Vec<u64> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, [4, 7, 11, 8, 9, 10]);
    let users: Vec<&str> = jobs.iter().map(|j| j.user.as_str()).collect();
    assert_eq!(users, ["u3", "u2", "u3", "u1", "u2", "u4"]);
    assert!(jobs.iter().all(|j| j.partition == "main" && j.nodes == 1));
    assert!(jobs.iter().all(|j| j.required_nodes.is_none()));
}

#[test]
fn recorded_pending_job_has_its_request_and_no_start() {
    let job = recorded_job(9);
    assert_eq!(job.state, QueueState::Pending);
    assert_eq!((job.user.as_str(), job.account.as_str()), ("u2", "physics"));
    assert_eq!(job.priority, 50500, "fair-share 50000 plus site factor 500");
    assert_eq!(job.submit, Time::from_whole_secs(1795500635));
    assert_eq!(job.start, None, "Slurm's expected start is not a start");
    assert_eq!(job.cpus, 1);
    assert_eq!(job.memory, Some(Memory::PerNode(500)));
    assert_eq!(job.tres, "cpu=1,mem=500M,node=1,billing=1");
    assert_eq!(job.limit, Some(600), "time_limit 10 minutes");
    let big = recorded_job(10);
    assert_eq!((big.cpus, big.memory), (8, None));
}

#[test]
fn recorded_running_and_finished_jobs_have_their_start() {
    let running = recorded_job(11);
    assert_eq!(running.state, QueueState::Running);
    assert_eq!(running.start, Some(Time::from_whole_secs(1795500651)));
    assert_eq!(running.limit, Some(600));
    assert_eq!(recorded_job(7).limit, Some(900));
    assert_eq!(running.cpus, 3);
    assert_eq!(running.memory, Some(Memory::PerCpu(100)));
    let done = recorded_job(4);
    assert_eq!(done.state, QueueState::Other("COMPLETED".into()));
    assert_eq!(done.start, Some(Time::from_whole_secs(1795500233)));
}

#[test]
fn recorded_site_factors_are_signed_and_by_job() {
    let factors = parse_site_factors(&data("sprio.txt")).unwrap();
    let pairs: Vec<(u64, i64)> = factors.into_iter().collect();
    assert_eq!(pairs, [(6, 0), (8, -300), (9, 500), (10, 0)]);
}

#[test]
fn recorded_associations_form_the_tree() {
    let tree = parse_assoc(&data("sacctmgr.txt")).unwrap();
    assert_eq!(tree.accounts.len(), 3);
    let root = tree.account("fairshare", "root").unwrap();
    assert_eq!(
        (root.parent.as_deref(), root.share),
        (None, AssocShares::Value(1))
    );
    let children: Vec<(&str, AssocShares)> = tree
        .child_accounts("fairshare", "root")
        .map(|a| (a.name.as_str(), a.share))
        .collect();
    assert_eq!(
        children,
        [
            ("chemistry", AssocShares::Value(1)),
            ("physics", AssocShares::Value(3))
        ]
    );
    let physics: Vec<&str> = tree
        .users_of("fairshare", "physics")
        .map(|u| u.user.as_str())
        .collect();
    assert_eq!(physics, ["u1", "u2"]);
    assert_eq!(tree.users.len(), 4);
    assert!(tree
        .users
        .iter()
        .all(|u| u.share == AssocShares::Value(1) && u.partition.is_none()));
}

#[test]
fn recorded_nodes_have_their_capacity() {
    let nodes = parse_nodes(&data("sinfo.json")).unwrap();
    assert_eq!(nodes.len(), 1);
    let node = &nodes[0];
    assert_eq!(node.name, "vm");
    assert_eq!((node.cpus, node.memory_kb, node.gpus), (8, 2000 * 1024, 0));
    assert_eq!(node.partitions, ["main"]);
    assert!(node.features.is_empty());
}

#[test]
fn gres_strings_give_their_gpus() {
    assert_eq!(gpus(""), Ok(0));
    assert_eq!(gpus("gpu:4"), Ok(4));
    assert_eq!(gpus("gpu:a100:4(S:0-1)"), Ok(4));
    assert_eq!(gpus("gpu:a100:2(S:0,1),gpu:v100:1(S:1),mps:400"), Ok(3));
    assert_eq!(gpus("gpu"), Ok(1));
    assert_eq!(gpus("gpu:k80"), Ok(1));
    assert!(matches!(gpus("gpu:a:b:3"), Err(Problem::Invalid(_))));
    assert!(matches!(
        gpus("gpu:99999999999999999999"),
        Err(Problem::Invalid(_))
    ));
}

#[test]
fn hand_made_nodes_read_gres_and_features() {
    let text = r#"{"errors": [], "nodes": [{"name": "g1", "cpus": 64, "real_memory": 512000,
        "gres": "gpu:a100:4(S:0-1)", "features": "a100,ib", "partitions": ["gpu", "all"],
        "state": "idle", "state_flags": ["DRAIN"], "unknown": {"x": 1}}]}"#;
    let node = &parse_nodes(text).unwrap()[0];
    assert_eq!(
        (node.cpus, node.memory_kb, node.gpus),
        (64, 512000 * 1024, 4)
    );
    assert_eq!(node.features, ["a100", "ib"]);
    assert_eq!(node.partitions, ["gpu", "all"]);
}

/// The recorded queue with job 9's `field` replaced by `value` (JSON text).
fn queue_with(field: &str, value: &str) -> String {
    let mut top: serde_json::Value = serde_json::from_str(&data("squeue.json")).unwrap();
    let jobs = top["jobs"].as_array_mut().unwrap();
    let job = jobs.iter_mut().find(|j| j["job_id"] == 9).unwrap();
    let fields = job.as_object_mut().unwrap();
    match value {
        "absent" => fields.remove(field),
        _ => fields.insert(field.into(), serde_json::from_str(value).unwrap()),
    };
    top.to_string()
}

/// The field and record of a reader's error.
fn field_and_record(error: ReadError) -> (&'static str, String) {
    match error {
        ReadError::Field { record, field, .. } => (field, record),
        other => panic!("not about a field: {other}"),
    }
}

#[test]
fn a_bad_job_field_names_the_job_and_the_field() {
    for (field, value) in [
        ("user_name", "absent"),
        ("user_name", "3"),
        ("priority", "\"high\""),
        ("priority", "-1"),
        ("cpus", "4294967296"),
        ("submit_time", "null"),
        ("job_state", "absent"),
        ("memory_per_node", "1.5"),
    ] {
        let error = parse_queue(&queue_with(field, value)).unwrap_err();
        let message = error.to_string();
        assert_eq!(field_and_record(error), (field, "job 4 (id 9)".into()));
        assert!(message.starts_with("job 4 (id 9): field"), "{message}");
    }
    let error = parse_queue(&queue_with("job_id", "absent")).unwrap_err();
    assert_eq!(field_and_record(error), ("job_id", "job 4".into()));
}

#[test]
fn optional_job_fields_may_be_missing_and_unknown_ones_are_ignored() {
    let job = parse_queue(&queue_with("memory_per_node", "absent")).unwrap()[4].clone();
    assert_eq!((job.id, job.memory), (9, None));
    let job = parse_queue(&queue_with("tres_req_str", "null")).unwrap()[4].clone();
    assert_eq!(job.tres, "");
    let job = parse_queue(&queue_with("shiny_new_field", "[1, {}]")).unwrap()[4].clone();
    assert_eq!(job, recorded_job(9));
}

#[test]
fn later_slurm_shapes_of_numbers_and_states_are_taken() {
    let text = r#"{"jobs": [{"job_id": 5, "user_name": "u1", "account": "a",
        "partition": "p", "job_state": ["RUNNING"], "priority": {"set": true, "number": 7},
        "submit_time": {"set": true, "infinite": false, "number": 10},
        "start_time": {"set": true, "number": 12}, "cpus": {"set": true, "number": 2},
        "memory_per_node": {"set": false, "number": 0}, "node_count": 1}]}"#;
    let job = &parse_queue(text).unwrap()[0];
    assert_eq!(job.state, QueueState::Running);
    let secs = Time::from_whole_secs;
    assert_eq!(
        (job.priority, job.submit, job.start),
        (7, secs(10), Some(secs(12)))
    );
    assert_eq!((job.cpus, job.memory), (2, None));
}

#[test]
fn slurm_errors_and_wrong_shapes_are_errors() {
    let failed = r#"{"errors": [{"error": "Unable to contact slurm controller"}], "jobs": []}"#;
    assert!(matches!(parse_queue(failed), Err(ReadError::Slurm(_))));
    assert!(matches!(
        parse_queue("squeue: error"),
        Err(ReadError::Json(_))
    ));
    assert!(matches!(parse_queue("[]"), Err(ReadError::Json(_))));
    assert_eq!(parse_queue("{}").unwrap_err().field(), Some("jobs"));
    assert_eq!(
        parse_nodes(r#"{"nodes": 3}"#).unwrap_err().field(),
        Some("nodes")
    );
    assert!(matches!(
        parse_queue(r#"{"jobs": [3]}"#),
        Err(ReadError::Json(_))
    ));
    assert_eq!(parse_queue(r#"{"jobs": []}"#), Ok(vec![]));
}

#[test]
fn a_bad_node_field_names_the_node_and_the_field() {
    let node = |extra: &str| format!(r#"{{"nodes": [{{"name": "n1", {extra}}}]}}"#);
    let complete = r#""cpus": 4, "real_memory": 100, "state": "idle""#;
    assert!(parse_nodes(&node(complete)).is_ok());
    for (text, field) in [
        (node(r#""cpus": 4, "state": "idle""#), "real_memory"),
        (
            node(r#""cpus": "4", "real_memory": 100, "state": "idle""#),
            "cpus",
        ),
        (node(&format!(r#"{complete}, "gres": "gpu:x:y:z""#)), "gres"),
        (
            node(&format!(r#"{complete}, "partitions": [1]"#)),
            "partitions",
        ),
    ] {
        let error = parse_nodes(&text).unwrap_err();
        assert_eq!(field_and_record(error), (field, "node 0 (n1)".into()));
    }
    let error = parse_nodes(r#"{"nodes": [{"cpus": 4}]}"#).unwrap_err();
    assert_eq!(field_and_record(error), ("name", "node 0".into()));
}

#[test]
fn a_bad_association_line_names_the_line_and_the_field() {
    let good = data("sacctmgr.txt");
    for (bad, field) in [
        ("fairshare|physics|u9||many|", "Share"),
        ("fairshare|physics|u9||", "format"),
        ("fairshare||u9||1|", "Account"),
        ("|physics|u9||1|", "Cluster"),
        ("fairshare|biology|||1|", "ParentName"),
        ("fairshare|biology|||1|nowhere", "ParentName"),
        ("fairshare|biology|u9||1|", "Account"),
        ("fairshare|physics|u9|||", "Share"),
    ] {
        let text = format!("{good}{bad}\n");
        let error = parse_assoc(&text).unwrap_err();
        assert_eq!(field_and_record(error), (field, "line 8".into()), "{bad}");
    }
}

#[test]
fn hand_made_associations_take_parent_shares_sub_accounts_and_partitions() {
    let text = "c|root|||1|\nc|physics|||3|root\nc|theory|||parent|physics\n\
                c|theory|u1|gpu|parent|\nc|theory|u2||5|\n";
    let tree = parse_assoc(text).unwrap();
    let theory = tree.account("c", "theory").unwrap();
    assert_eq!(
        (theory.parent.as_deref(), theory.share),
        (Some("physics"), AssocShares::Parent)
    );
    let users: Vec<_> = tree.users_of("c", "theory").collect();
    assert_eq!(users[0].share, AssocShares::Parent);
    assert_eq!(users[0].partition.as_deref(), Some("gpu"));
    assert_eq!(users[1].share, AssocShares::Value(5));
}

#[test]
fn a_bad_sprio_line_names_the_line_and_the_field() {
    for (text, field) in [
        ("6|0\n7\n", "site factor"),
        ("6|0\n7|x\n", "site factor"),
        ("6|0\nseven|1\n", "job id"),
        ("6|0\n7|1|2\n", "site factor"),
        ("6|0\n6|1\n", "site factor"),
    ] {
        let error = parse_site_factors(text).unwrap_err();
        assert_eq!(field_and_record(error), (field, "line 2".into()), "{text}");
    }
    let twice = parse_site_factors("6|5\n6|5\n\n").unwrap();
    assert_eq!(twice.into_iter().collect::<Vec<_>>(), [(6, 5)]);
}

/// A time of the recorded dumps, `2026-11-24T` + `clock` UTC.
fn at(clock: &str) -> Time {
    let text = format!("2026-11-24T{clock}Z");
    let time = humantime::parse_rfc3339(&text).unwrap();
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Time::from_micros(secs * 1_000_000)
}

/// The allocation of job `id` in the recorded accounting.
fn recorded_allocation(id: u64) -> Allocation {
    let accounting =
        parse_accounting(&data("sacct.txt"), &Billing::default()).expect("the recorded dump reads");
    accounting
        .allocations
        .into_iter()
        .find(|a| a.id == id)
        .expect("the job is recorded")
}

#[test]
fn the_sacct_command_is_the_one_recorded() {
    let command = sacct_command("2026-11-24T06:00:00", "2026-11-24T08:00:00");
    assert_eq!(
        command.join(" "),
        "sacct --allusers --allocations --parsable2 --noheader \
         --starttime=2026-11-24T06:00:00 --endtime=2026-11-24T08:00:00 \
         --format=JobIDRaw,User,Account,Partition,Submit,Start,End,AllocTRES,NodeList,State,QOS"
    );
    assert_eq!(
        SSHARE_COMMAND.join(" "),
        "sshare --all --parsable2 --noheader \
         --format=Account,User,RawShares,NormShares,RawUsage,EffectvUsage,LevelFS,FairShare"
    );
}

#[test]
fn recorded_accounting_lists_every_job_that_started_in_sacct_order() {
    let accounting = parse_accounting(&data("sacct.txt"), &Billing::default()).unwrap();
    let ids: Vec<u64> = accounting.allocations.iter().map(|a| a.id).collect();
    assert_eq!(
        ids,
        [2, 3, 4, 5, 6, 7, 8, 11, 14, 15, 9],
        "array tasks 9_0, 9_1 last"
    );
    let users: Vec<&str> = accounting
        .allocations
        .iter()
        .map(|a| a.user.as_str())
        .collect();
    assert_eq!(
        users,
        ["u1", "u2", "u3", "u4", "u3", "u2", "u1", "u4", "u3", "u2", "u2"]
    );
    assert_eq!(
        accounting.never_started, 4,
        "1 (Start None), 10 (Start = End), 12 and 13 (pending)"
    );
    assert!(accounting
        .allocations
        .iter()
        .all(|a| a.partition == "main" && a.nodes == Some(1)));
}

#[test]
fn recorded_allocations_have_their_times_and_demand() {
    let timed_out = recorded_allocation(2);
    assert_eq!(
        (timed_out.user.as_str(), timed_out.account.as_str()),
        ("u1", "physics")
    );
    assert_eq!(timed_out.submit, at("06:44:08"));
    assert_eq!(timed_out.start, at("06:44:09"));
    assert_eq!(timed_out.end, Some(at("06:54:21")));
    assert_eq!(
        timed_out.demand,
        [4.0, 0.0, 0.0],
        "CR_CPU: no mem= allocated"
    );
    let done = recorded_allocation(8);
    assert_eq!(
        (done.start, done.end),
        (at("06:54:42"), Some(at("06:55:02")))
    );
    assert_eq!(done.demand, [2.0, 0.0, 0.0]);
    let failed = recorded_allocation(14);
    assert_eq!(
        (failed.user.as_str(), failed.account.as_str()),
        ("u3", "chemistry")
    );
    assert_eq!(failed.demand, [1.0, 0.0, 0.0]);
}

#[test]
fn recorded_running_jobs_have_no_end() {
    let accounting = parse_accounting(&data("sacct.txt"), &Billing::default()).unwrap();
    let running: Vec<u64> = accounting
        .allocations
        .iter()
        .filter(|a| a.end.is_none())
        .map(|a| a.id)
        .collect();
    assert_eq!(running, [7, 11]);
    let job = recorded_allocation(11);
    assert_eq!(
        (job.user.as_str(), job.account.as_str()),
        ("u4", "chemistry")
    );
    assert_eq!((job.submit, job.start), (at("06:51:40"), at("06:51:41")));
    assert_eq!(job.demand, [1.0, 0.0, 0.0]);
}

#[test]
fn hand_made_accounting_takes_gpus_memory_and_skips_steps() {
    let text = "\
        41|u1|physics|gpu|2026-11-24T05:00:00|2026-11-24T05:00:10|2026-11-24T06:00:10|\
        billing=8,cpu=8,gres/gpu=2,mem=16G,node=3|cn[03-05,7],gpu1|COMPLETED|scavenger\n\
        41.batch|||||2026-11-24T05:00:10|2026-11-24T06:00:10|cpu=8|cn03|COMPLETED|normal\n\
        41.0|||||2026-11-24T05:00:10|Unknown|cpu=8|cn03|RUNNING|\n\
        \n\
        42|u2|chemistry||2026-11-24T05:00:00|2026-11-24T05:01:00|2026-11-24T05:01:00|\
        cpu=1|gpu1|COMPLETED|normal\n\
        43|u2|chemistry|main|2026-11-24T05:00:00|2026-11-24T05:01:00|Unknown||None assigned|RUNNING|normal\n";
    let accounting = parse_accounting(text, &Billing::default()).unwrap();
    assert_eq!(
        accounting.never_started, 1,
        "43: running with nothing allocated"
    );
    let [gpu, zero] = accounting.allocations.as_slice() else {
        panic!("{accounting:?}")
    };
    assert_eq!(gpu.id, 41);
    assert_eq!(gpu.demand, [8.0, 16.0 * 1024.0 * 1024.0, 2.0]);
    assert_eq!(gpu.nodes, Some(3));
    assert_eq!(gpu.end, Some(at("06:00:10")));
    assert_eq!((zero.id, zero.partition.as_str()), (42, ""));
    assert_eq!(zero.end, Some(zero.start), "a job may end when it starts");
    assert_eq!(
        parse_accounting("", &Billing::default()),
        Ok(Default::default())
    );
    // Billing: billing= as Slurm printed it, else the CPUs; with the partition's weights and
    // the QOS's usage factor, (8 CPUs × 1 + 2 GPUs × 4) × 0.5.
    assert_eq!((gpu.billing, zero.billing), (8.0, 1.0));
    let billing = Billing {
        partitions: [("gpu".into(), "CPU=1,GRES/gpu=4".parse().unwrap())].into(),
        max_tres: false,
        usage_factors: [("scavenger".into(), 0.5)].into(),
    };
    let billed = parse_accounting(text, &billing).unwrap();
    assert_eq!(billed.allocations[0].billing, 8.0);
    assert_eq!(billed.allocations[0].qos, "scavenger");
}

#[test]
fn a_bad_sacct_line_names_the_line_and_the_field() {
    let good = data("sacct.txt");
    let times = "2026-11-24T06:51:40|2026-11-24T06:54:21|2026-11-24T06:54:26";
    for (bad, field) in [
        (format!("16|u1|physics|main|{times}|cpu=1|vm"), "format"),
        (
            format!("16|u1|physics|main|{times}|cpu=1|vm|COMPLETED|normal|x"),
            "format",
        ),
        (
            format!("x16|u1|physics|main|{times}|cpu=1|vm|COMPLETED|normal"),
            "JobIDRaw",
        ),
        (
            format!("16+0|u1|physics|main|{times}|cpu=1|vm|COMPLETED|normal"),
            "JobIDRaw",
        ),
        (
            format!("9_1|u1|physics|main|{times}|cpu=1|vm|COMPLETED|normal"),
            "JobIDRaw",
        ),
        (
            format!("|u1|physics|main|{times}|cpu=1|vm|COMPLETED|normal"),
            "JobIDRaw",
        ),
        (
            format!("16||physics|main|{times}|cpu=1|vm|COMPLETED|normal"),
            "User",
        ),
        (format!("16|u1||main|{times}|cpu=1|vm|COMPLETED|normal"), "Account"),
        (
            format!("16|u1|physics|main|{times}|cpu=two|vm|COMPLETED|normal"),
            "AllocTRES",
        ),
        (
            format!("16|u1|physics|main|{times}|mem=12Q|vm|COMPLETED|normal"),
            "AllocTRES",
        ),
        (
            "16|u1|physics|main|Unknown|Unknown|Unknown||None assigned|PENDING|normal".into(),
            "Submit",
        ),
        (
            "16|u1|physics|main|yesterday|Unknown|Unknown||None assigned|PENDING|normal".into(),
            "Submit",
        ),
        (
            "16|u1|physics|main|2026-11-24T06:51:40|2026-13-01T00:00:00|Unknown|cpu=1|vm|RUNNING|normal"
                .into(),
            "Start",
        ),
        (
            "16|u1|physics|main|2026-11-24T06:51:40|1960-01-01T00:00:00|Unknown|cpu=1|vm|RUNNING|normal"
                .into(),
            "Start",
        ),
        (
            "16|u1|physics|main|2026-11-24T06:51:40|2026-11-24T06:54:21|2026-11-24T06:54:20|\
             cpu=1|vm|COMPLETED|normal"
                .into(),
            "End",
        ),
    ] {
        let text = format!("{good}{bad}\n");
        let error = parse_accounting(&text, &Billing::default()).unwrap_err();
        let message = error.to_string();
        assert_eq!(field_and_record(error), (field, "line 16".into()), "{bad}");
        assert!(message.starts_with("line 16: field"), "{message}");
    }
}

/// The recorded standing of `account`'s `user` (`None`: the account's own line).
fn recorded_row(account: &str, user: Option<&str>) -> ShareRow {
    let rows = parse_sshare(&data("sshare.txt")).expect("the recorded standings read");
    rows.into_iter()
        .find(|r| r.account == account && r.user.as_deref() == user)
        .expect("the row is recorded")
}

#[test]
fn recorded_standings_read_every_association_with_its_depth() {
    let rows = parse_sshare(&data("sshare.txt")).unwrap();
    let tree: Vec<(u32, &str, Option<&str>)> = rows
        .iter()
        .map(|r| (r.depth, r.account.as_str(), r.user.as_deref()))
        .collect();
    assert_eq!(
        tree,
        [
            (0, "root", None),
            (1, "chemistry", None),
            (2, "chemistry", Some("u3")),
            (2, "chemistry", Some("u4")),
            (1, "physics", None),
            (2, "physics", Some("u1")),
            (2, "physics", Some("u2")),
        ]
    );
    let root = &rows[0];
    assert_eq!((root.raw_shares, root.norm_shares), (None, 0.0));
    assert_eq!((root.raw_usage, root.effective_usage), (2556, 1.0));
    assert_eq!((root.level_fs, root.fairshare), (None, None));
}

#[test]
fn recorded_standings_have_slurms_fair_tree_factors() {
    let factors: Vec<(&str, f64)> = [
        ("physics", "u1"),
        ("physics", "u2"),
        ("chemistry", "u3"),
        ("chemistry", "u4"),
    ]
    .iter()
    .map(|&(account, user)| (user, recorded_row(account, Some(user)).fairshare.unwrap()))
    .collect();
    assert_eq!(
        factors,
        [("u1", 0.75), ("u2", 1.0), ("u3", 0.25), ("u4", 0.5)]
    );
    let physics = recorded_row("physics", None);
    assert_eq!(physics.raw_shares, Some(AssocShares::Value(3)));
    assert_eq!((physics.norm_shares, physics.raw_usage), (0.75, 1525));
    assert_eq!(
        (physics.level_fs, physics.fairshare),
        (Some(1.218534), None)
    );
    let u3 = recorded_row("chemistry", Some("u3"));
    assert_eq!(u3.raw_shares, Some(AssocShares::Value(1)));
    assert_eq!(
        (u3.raw_usage, u3.effective_usage, u3.level_fs),
        (759, 0.714742, Some(0.699553))
    );
}

#[test]
fn hand_made_standings_take_no_usage_and_parent_shares() {
    // A user with no usage, as the live 22.05 printed it before u4 ran anything.
    let text = "root|||0.000000|1098|1.000000||\n \
                chemistry||1|0.250000|74|0.068023|3.675201|\n  \
                chemistry|u4|1|0.500000|0|0.000000|inf|1.000000\n  \
                chemistry|u5|parent|0.500000|0|0.000000|inf|1.000000\n";
    let rows = parse_sshare(text).unwrap();
    assert_eq!(rows[2].level_fs, Some(f64::INFINITY));
    assert_eq!((rows[2].raw_usage, rows[2].fairshare), (0, Some(1.0)));
    assert_eq!(rows[3].raw_shares, Some(AssocShares::Parent));
    assert_eq!(parse_sshare("\n"), Ok(vec![]));
}

#[test]
fn a_bad_sshare_line_names_the_line_and_the_field() {
    let good = data("sshare.txt");
    for (bad, field) in [
        ("  physics|u9|1|0.5|0|0.0|inf", "format"),
        ("  physics|u9|1|0.5|0|0.0|inf|1.0|x", "format"),
        ("   |u9|1|0.5|0|0.0|inf|1.0", "Account"),
        ("  physics|u9|many|0.5|0|0.0|inf|1.0", "RawShares"),
        ("  physics|u9|-1|0.5|0|0.0|inf|1.0", "RawShares"),
        ("  physics|u9|1||0|0.0|inf|1.0", "NormShares"),
        ("  physics|u9|1|half|0|0.0|inf|1.0", "NormShares"),
        ("  physics|u9|1|0.5||0.0|inf|1.0", "RawUsage"),
        ("  physics|u9|1|0.5|1.5|0.0|inf|1.0", "RawUsage"),
        ("  physics|u9|1|0.5|0|nan|inf|1.0", "EffectvUsage"),
        ("  physics|u9|1|0.5|0|inf|inf|1.0", "EffectvUsage"),
        ("  physics|u9|1|0.5|0|0.0|-1|1.0", "LevelFS"),
        ("  physics|u9|1|0.5|0|0.0|NaN|1.0", "LevelFS"),
        ("  physics|u9|1|0.5|0|0.0|inf|inf", "FairShare"),
        ("  physics|u9|1|0.5|0|0.0|inf|-0.5", "FairShare"),
    ] {
        let text = format!("{good}{bad}\n");
        let error = parse_sshare(&text).unwrap_err();
        assert_eq!(field_and_record(error), (field, "line 8".into()), "{bad}");
    }
}

proptest! {
    /// No reader panics, whatever the bytes.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_queue(&text);
        let _ = parse_nodes(&text);
        let _ = parse_assoc(&text);
        let _ = parse_site_factors(&text);
        let _ = gpus(&text);
        let _ = parse_accounting(&text, &Billing::default());
        let _ = parse_sshare(&text);
    }

    /// No reader panics on lines made of the characters its format uses.
    #[test]
    fn format_like_text_never_panics(text in "[a-z0-9|:(),\n -]{0,200}") {
        let _ = parse_assoc(&text);
        let _ = parse_site_factors(&text);
        let _ = gpus(&text);
    }

    /// A line reader's error always names a line, on lines made of the characters sacct and
    /// sshare print.
    #[test]
    fn line_readers_errors_name_a_line(text in "[a-zA-Z0-9|:=,.+_\\[\\]/\n -]{0,300}") {
        every_line_error_names_a_line(&text)?;
    }

    /// A recorded line output with one byte changed reads or names a line.
    #[test]
    fn recorded_lines_with_one_byte_changed_read_or_name_a_line(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        for name in ["sacct.txt", "sshare.txt", "sacctmgr.txt", "sprio.txt"] {
            let mut bytes = data(name).into_bytes();
            let i = at.index(bytes.len());
            bytes[i] = byte;
            let text = String::from_utf8_lossy(&bytes);
            every_line_error_names_a_line(&text)?;
        }
    }

    /// No JSON reader panics on a recorded output with one byte changed.
    #[test]
    fn recorded_json_with_one_byte_changed_never_panics(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        for name in ["squeue.json", "sinfo.json"] {
            let mut bytes = data(name).into_bytes();
            let i = at.index(bytes.len());
            bytes[i] = byte;
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse_queue(&text);
            let _ = parse_nodes(&text);
        }
    }
}

/// Reads `text` with every line reader: each error it gives names a line.
fn every_line_error_names_a_line(text: &str) -> Result<(), TestCaseError> {
    for result in [
        parse_accounting(text, &Billing::default()).map(drop),
        parse_sshare(text).map(drop),
        parse_assoc(text).map(drop),
        parse_site_factors(text).map(drop),
    ] {
        if let Err(error) = result {
            let (_, record) = field_and_record(error);
            prop_assert!(record.starts_with("line "), "{}", record);
        }
    }
    Ok(())
}
