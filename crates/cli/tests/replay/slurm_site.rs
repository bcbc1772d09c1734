//! A Slurm site's own files in a replay: its nodes and partitions, job constraints, a
//! `slurm.conf` that cannot be used, and the defaults its configuration gives.

use super::*;

/// A Slurm site's nodes and partitions as `--machines` (the saved output of `scontrol show
/// node` and `show partition`): n1 in partition cpu, g1 in gpu, 4 CPUs each. alice's 3-CPU
/// job fills n1 until 100 s; bob's 2-CPU cpu job waits for it (and starts at the main
/// scheduler's pass the second after), and blocks partition cpu in the main scheduler: dave's
/// 1-CPU cpu job, which fits beside alice's, waits for the backfill cycle at 30 s, while
/// carol's gpu job starts on g1 at the main scheduler's next pass, at 4 s (`batch_sched_delay`:
/// 3 s after the one at 1 s). A file that defines no node is refused with the reason.
#[test]
fn a_slurm_sites_nodes_keep_each_job_in_its_partition() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("sacct.txt");
    std::fs::write(
        &dump,
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State\n\
        1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:01:40|cpu=3,node=1|cpu|COMPLETED\n\
        2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:41|2026-01-01T00:01:51|00:00:10|00:00:10|cpu=2,node=1|cpu|COMPLETED\n\
        3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:04|2026-01-01T00:00:14|00:00:10|00:00:10|cpu=1,node=1|gpu|COMPLETED\n\
        4|dave|a|2026-01-01T00:00:03|2026-01-01T00:00:30|2026-01-01T00:00:40|00:00:10|00:00:10|cpu=1,node=1|cpu|COMPLETED\n",
    )
    .unwrap();
    let nodes = dir.path().join("config.txt");
    std::fs::write(
        &nodes,
        "NodeName=n1 Arch=x86_64 CoresPerSocket=1\n   CPUAlloc=0 CPUTot=4 CPULoad=0.00\n   RealMemory=16000 AllocMem=0\n\n\
         NodeName=g1 Arch=x86_64 CoresPerSocket=1\n   CPUTot=4\n   Gres=gpu:4\n   RealMemory=32000\n\n\
         PartitionName=cpu\n   AllowGroups=ALL Default=YES\n   Nodes=n1\n\n\
         PartitionName=gpu\n   AllowGroups=ALL Default=NO\n   Nodes=g1\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let replay = |machines: &Path| {
        fairshare(&[
            "replay",
            dump.to_str().unwrap(),
            "--policy",
            "fifo",
            "--machines",
            machines.to_str().unwrap(),
            "--scheduler",
            "slurm",
            "--drain",
            "--jobs",
            jobs.to_str().unwrap(),
        ])
    };
    let out = replay(&nodes);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let picked = [
        "user",
        "partition",
        "allocated_resources",
        "starting_time_error",
    ];
    let mut rows = job_cells(&jobs, picked);
    rows.sort();
    // Nodes are named by their hosts.
    let row =
        |user: &str, partition: &str, host: &str| [user, partition, host, "0"].map(str::to_owned);
    assert_eq!(
        rows,
        [
            row("alice", "cpu", "n1"),
            row("bob", "cpu", "n1"),
            row("carol", "gpu", "g1"),
            row("dave", "cpu", "n1"),
        ],
        "{}",
        std::fs::read_to_string(&jobs).unwrap()
    );
    let empty = dir.path().join("empty.conf");
    std::fs::write(&empty, "SchedulerType=sched/backfill\n").unwrap();
    let out = replay(&empty);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("defines no node"), "{stderr}");
}

/// A job's `Constraints` hold it to the nodes with those features: of partition cpu's two
/// 4-CPU nodes only n1 is `fast`, and alice's job fills it until 100 s. bob's 1-CPU job asks
/// for `fast`, so it waits for n1 (the main scheduler's pass the second after alice's end)
/// though n2 is free, and blocks partition cpu in the main scheduler meanwhile: carol's job,
/// which asks for nothing, starts on n2 at the backfill's first cycle, at 30 s. Without the
/// column, bob's job starts on n2 at once.
#[test]
fn constraints_hold_a_job_to_the_nodes_with_its_features() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        "JobID|User|Account|Submit|Start|End|Timelimit|AllocTRES|Partition|State|Constraints",
        "1|alice|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|cpu=4,node=1|cpu|COMPLETED|fast",
        "2|bob|a|2026-01-01T00:00:01|2026-01-01T00:01:41|2026-01-01T00:01:51|00:00:10|cpu=1,node=1|cpu|COMPLETED|fast",
        "3|carol|a|2026-01-01T00:00:02|2026-01-01T00:00:30|2026-01-01T00:00:40|00:00:10|cpu=1,node=1|cpu|COMPLETED|",
    ];
    let dump = |constraints: bool| write_rows(dir.path(), &rows, (!constraints).then_some(10));
    let nodes = dir.path().join("config.txt");
    std::fs::write(
        &nodes,
        "NodeName=n1 CPUTot=4 RealMemory=16000 AvailableFeatures=fast ActiveFeatures=fast\n\
         NodeName=n2 CPUTot=4 RealMemory=16000 AvailableFeatures=(null) ActiveFeatures=(null)\n\
         PartitionName=cpu Nodes=n[1-2] Default=YES\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let replay = |dump: &Path| {
        let out = fairshare(&[
            "replay",
            dump.to_str().unwrap(),
            "--policy",
            "fifo",
            "--machines",
            nodes.to_str().unwrap(),
            "--scheduler",
            "slurm",
            "--placement",
            "slurm",
            "--drain",
            "--jobs",
            jobs.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut rows = job_cells(&jobs, ["user", "allocated_resources", "waiting_time"]);
        rows.sort();
        rows
    };
    let row = |user: &str, host: &str, wait: &str| [user, host, wait].map(str::to_owned);
    assert_eq!(
        replay(&dump(true)),
        [
            row("alice", "n1", "0"),
            row("bob", "n1", "100"),
            row("carol", "n2", "28")
        ],
        "{}",
        std::fs::read_to_string(&jobs).unwrap()
    );
    let free = replay(&dump(false));
    assert_eq!(
        free[1][1], "n2",
        "without the column bob's job may run on n2: {free:?}"
    );
    assert!(free[1][2].parse::<f64>().unwrap() < 5.0, "{free:?}");
}

#[test]
fn a_slurm_conf_that_cannot_be_used_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let dump = write_slurm_dump(dir.path());
    let dump = dump.to_str().unwrap();
    let conf = dir.path().join("slurm.conf");
    let refused = |text: &str, scheduler: &str| {
        std::fs::write(&conf, text).unwrap();
        let out = fairshare(&[
            "replay",
            dump,
            "--policy",
            "fifo",
            "--capacity",
            "cpu=4,mem=0,gpu=0",
            "--scheduler",
            scheduler,
            "--slurm-conf",
            conf.to_str().unwrap(),
        ]);
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let shown = conf.display().to_string();
    assert!(refused("SchedulerParameters=bf_interval=60\n", "easy")
        .contains("--slurm-conf sets --scheduler slurm's parameters; add --scheduler slurm"));
    let message = refused("SchedulerParameters=bf_interval=soon\n", "slurm");
    assert!(message.contains(&format!("--slurm-conf {shown}: SchedulerParameters bf_interval takes a whole number, found \"soon\"")), "{message}");
    let message = refused("SchedulerType=sched/hold\n", "slurm");
    assert!(
        message.contains(
            "SchedulerType \"sched/hold\" is not modelled: sched/backfill or sched/builtin"
        ),
        "{message}"
    );
    let message = refused("# nothing\n", "slurm");
    assert!(message.contains("no Key=Value setting in it"), "{message}");
    let message = refused("OverTimeLimit=\nPowerPlugin = \n", "slurm");
    assert!(message.contains("no Key=Value setting in it"), "{message}");
}

/// With only the site's own files — its configuration and `sacctmgr`'s associations of two
/// clusters — a replay takes the machines, the partitions' billing, the placement, the
/// cluster and Slurm's own fairshare settings (half-life, a `PriorityCalcPeriod` of 30 s read
/// as Slurm reads it, a minute) from the configuration, each in a note, and predicts what the
/// command with every one of them spelled out predicts.
#[test]
fn a_slurm_replay_takes_its_defaults_from_the_sites_configuration() {
    let dir = tempfile::tempdir().unwrap();
    // bob and carol ran alike, then wait for alice's node: their shares say who goes first.
    let day = "2026-01-01T00:";
    let rows = [
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State".to_owned(),
        format!("1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu|COMPLETED"),
        format!("2|bob|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
        format!("3|carol|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu|COMPLETED"),
        format!("4|bob|a|{day}01:00|{day}01:40|{day}01:50|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED"),
        format!("5|carol|a|{day}01:01|{day}01:50|{day}02:00|00:00:10|00:00:10|cpu=4,node=1|cpu|COMPLETED"),
    ];
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let dump = write_rows(dir.path(), &rows, None);
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "ClusterName=emu\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\n\
         PriorityWeightFairshare=10000\nPriorityWeightAge=2000\nPriorityDecayHalfLife=00:10:00\n\
         PriorityCalcPeriod=00:00:30\n\
         NodeName=n1 CPUs=4 RealMemory=16000\n\
         PartitionName=cpu Nodes=n1 Default=YES TRESBillingWeights=CPU=2.0\n",
    )
    .unwrap();
    // The same configuration without its name, for the runs that name every file.
    let unnamed = dir.path().join("unnamed.conf");
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(&unnamed, text.replace("ClusterName=emu\n", "")).unwrap();
    let assoc = dir.path().join("assoc.txt");
    let lines = |cluster: &str, shares: [u32; 3]| {
        format!(
            "{cluster}|root|||1||\n{cluster}|a|||1|root|\n{cluster}|a|alice||{}|a|\n\
             {cluster}|a|bob||{}|a|\n{cluster}|a|carol||{}|a|\n",
            shares[0], shares[1], shares[2]
        )
    };
    std::fs::write(
        &assoc,
        lines("peer", [10, 5, 1]) + &lines("emu", [1, 5, 10]),
    )
    .unwrap();
    let one_cluster = |cluster: &str, shares| {
        let path = dir.path().join(format!("{cluster}.txt"));
        std::fs::write(&path, lines(cluster, shares)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (emu, peer) = (
        one_cluster("emu", [1, 5, 10]),
        one_cluster("peer", [10, 5, 1]),
    );
    let (conf, unnamed, assoc, dump) = (
        conf.to_str().unwrap(),
        unnamed.to_str().unwrap(),
        assoc.to_str().unwrap(),
        dump.to_str().unwrap(),
    );
    let run = |shares: &str, extra: &[&str]| {
        let json = dir.path().join("out.json");
        let mut args = vec![
            "replay",
            dump,
            "--shares",
            shares,
            "--scheduler",
            "slurm",
            "--drain",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend(extra);
        let out = fairshare(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let mut document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        // What differs by construction: the policy as written, the files named.
        for policy in document["policies"].as_array_mut().unwrap() {
            policy["policy"] = serde_json::Value::Null;
        }
        (document["policies"].clone(), stderr)
    };
    let (defaults, stderr) = run(
        assoc,
        &[
            "--slurm-conf",
            conf,
            "--policy",
            "fairshare:function=fair-tree",
        ],
    );
    for note in [
        format!("note: machines: the nodes and partitions of --slurm-conf {conf}"),
        format!("note: billing: the partitions' TRESBillingWeights of --slurm-conf {conf}"),
        "note: --slurm-conf: fairshare:function=fair-tree: run as fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing, from the Slurm configuration (PriorityDecayHalfLife=00:10:00, PriorityCalcPeriod=00:00:30, Slurm charges billing units)".to_owned(),
    ] {
        assert!(stderr.contains(&note), "{note} missing from\n{stderr}");
    }
    let spelled = |shares: &str| {
        run(
            shares,
            &[
                "--slurm-conf",
                unnamed,
                "--machines",
                unnamed,
                "--partitions",
                unnamed,
                "--placement",
                "slurm",
                "--policy",
                "fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing",
            ],
        )
        .0
    };
    // Compared whole, and not printed whole when they differ.
    let same = defaults == spelled(&emu);
    assert!(
        same,
        "not emu's associations with every setting spelled out"
    );
    let same = defaults == spelled(&peer);
    assert!(
        !same,
        "the other cluster's shares order bob and carol otherwise"
    );
    // A file of another cluster than the configuration's is refused, as are two clusters
    // without the configuration's ClusterName.
    let out = fairshare(&[
        "replay",
        dump,
        "--shares",
        &peer,
        "--scheduler",
        "slurm",
        "--slurm-conf",
        conf,
        "--policy",
        "fifo",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sacctmgr's output lists the cluster peer, not the cluster emu asked for"),
        "{stderr}"
    );
    let out = fairshare(&["replay", dump, "--shares", assoc, "--policy", "fifo"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sacctmgr's output lists several clusters (emu, peer)"),
        "{stderr}"
    );
}
