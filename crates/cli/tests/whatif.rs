//! `fairshare slurm what-if` on small bundles written here: everything is taken from the
//! bundle's files (each said), it predicts what the replay command with every setting spelled
//! out predicts, its trust figures are printed first, and a partial bundle is refused.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn fairshare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// Writes a bundle of three users on one 4-CPU node into `dir`: bob and carol ran alike, then
/// wait for alice's node, so that their shares say who goes first; with the site's adapter
/// configuration, the last decay's time, and two settings the model leaves out.
fn bundle(dir: &Path) {
    let day = "2026-01-01T00:";
    let rows = [
        "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|Partition|State".to_owned(),
        format!("1|alice|a|{day}00:00|{day}00:00|{day}01:40|00:01:40|00:01:40|cpu=2,node=1|cpu=2,node=1|cpu|COMPLETED"),
        format!("2|bob|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu=1,node=1|cpu|COMPLETED"),
        format!("3|carol|a|{day}00:00|{day}00:00|{day}00:50|00:00:50|00:00:50|cpu=1,node=1|cpu=1,node=1|cpu|COMPLETED"),
        format!("4|bob|a|{day}01:00|{day}01:40|{day}01:50|00:00:10|00:00:10|cpu=4,node=1|cpu=4,node=1|cpu|COMPLETED"),
        format!("5|carol|a|{day}01:01|{day}01:50|{day}02:00|00:00:10|00:00:10|cpu=4,node=1|cpu=4,node=1|cpu|COMPLETED"),
        format!("6|alice|a|{day}01:02|{day}01:10|{day}01:10|00:00:00|00:00:10||cpu=4,node=1|cpu|CANCELLED by 0"),
    ];
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("sacct.txt", &(rows.join("\n") + "\n"));
    write(
        "config.txt",
        "ClusterName=emu\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\n\
         PriorityWeightFairshare=10000\nPriorityWeightAge=2000\nPriorityDecayHalfLife=00:10:00\n\
         PriorityCalcPeriod=00:00:30\nPriorityUsageResetPeriod=WEEKLY\nPriorityFlags=ACCRUE_ALWAYS\n\
         NodeName=n1 CPUs=4 RealMemory=16000\n\
         PartitionName=cpu Nodes=n1 Default=YES TRESBillingWeights=CPU=2.0\n",
    );
    write(
        "assoc.txt",
        "emu|root|||1||\nemu|a|||1|root|\nemu|a|alice||1|a|\nemu|a|bob||1|a|\nemu|a|carol||10|a|\n\
         peer|root|||1||\npeer|a|||1|root|\npeer|a|alice||1|a|\npeer|a|bob||10|a|\npeer|a|carol||1|a|\n",
    );
    write("qos.txt", "normal|1.000000|0\n");
    write("last-decay.txt", "2026-01-01T00:00:17.500000000\n");
    write(
        "adapter.toml",
        "policy = \"sdrf\"\nweight = 5000\ninterval_s = 30\n",
    );
}

/// The JSON a run writes to standard output, with its standard error.
fn json_of(args: &[&str]) -> (Value, String) {
    let out = fairshare(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "fairshare {args:?}: {stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// The policies' results, their names left out (the replay names them as given).
fn results(policies: &Value) -> Vec<Value> {
    let mut policies = policies.as_array().unwrap().clone();
    for p in &mut policies {
        p["policy"] = Value::Null;
    }
    policies
}

#[test]
fn a_what_if_predicts_what_the_replay_with_every_setting_spelled_out_predicts() {
    let dir = tempfile::tempdir().unwrap();
    bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    // The site runs the adapter with sdrf: that is the baseline, and Slurm's own fairshare
    // the policy asked about.
    let (doc, _) = json_of(&[
        "slurm",
        "what-if",
        site,
        "--policy",
        "fairshare",
        "--json",
        "-",
    ]);
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (conf, assoc, qos, dump) = (
        file("config.txt"),
        file("assoc.txt"),
        file("qos.txt"),
        file("sacct.txt"),
    );
    let (spelled, _) = json_of(&[
        "replay",
        &dump,
        "--format",
        "sacct",
        "--scheduler",
        "slurm",
        "--drain",
        "--slurm-conf",
        &conf,
        "--machines",
        &conf,
        "--partitions",
        &conf,
        "--qos",
        &qos,
        "--shares",
        &assoc,
        "--placement",
        "slurm",
        "--site-weight",
        "5000",
        "--site-interval",
        "30s",
        "--policy",
        "sdrf",
        "--policy",
        "fairshare:decay=half-life:600,refresh=60,refresh-offset=17.5,usage=billing",
        "--json",
        "-",
    ]);
    let predicted = &doc["prediction"]["policies"];
    assert_eq!(predicted[0]["policy"], "as-adapter");
    assert_eq!(predicted[1]["policy"], "fairshare");
    assert_eq!(results(predicted), results(&spelled["policies"]));
    let taken = doc["taken"].to_string();
    for said in [
        "the baseline (as-adapter): what the site ran, the adapter's policy sdrf through the site factors it writes, weight 5000 every 30 s (adapter.toml)",
        "fairshare: run as fairshare:decay=half-life:600,refresh=60,refresh-offset=17.5,usage=billing",
        "PriorityCalcPeriod=00:00:30",
        "the last decay at 2026-01-01T00:00:17.500000000 in last-decay.txt",
        "weight 5000 every 30 s (adapter.toml)",
        "billing: the partitions' TRESBillingWeights of config.txt",
        "the associations of cluster emu in assoc.txt",
        "settings of config.txt: SchedulerType=sched/backfill, PriorityWeightFairshare=10000, PriorityWeightAge=2000",
    ] {
        assert!(taken.contains(said), "{said} not in {taken}");
    }
    let unmodelled = doc["unmodelled"].to_string();
    for said in [
        "PriorityUsageResetPeriod=WEEKLY is not modelled",
        "PriorityFlags ACCRUE_ALWAYS not modelled",
    ] {
        assert!(unmodelled.contains(said), "{said} not in {unmodelled}");
    }
    let trust = &doc["trust"];
    assert_eq!(trust["jobs"], 5, "{trust}");
    assert_eq!(trust["left_out"], 1, "alice's cancelled job: {trust}");
}

/// The adapter's `ranked_runs`, `ends_at_limits`, `submit_table` and `partitions` are
/// modelled: said among what was taken from the bundle, not among what is not modelled.
#[test]
fn the_adapters_play_of_starts_is_taken_from_its_configuration() {
    let dir = tempfile::tempdir().unwrap();
    bundle(dir.path());
    let adapter = "policy = \"sdrf\"\nweight = 5000\ninterval_s = 30\nranked_runs = 2\n\
                   ends_at_limits = true\npartitions = [\"cpu\"]\n";
    std::fs::write(dir.path().join("adapter.toml"), adapter).unwrap();
    let site = dir.path().to_str().unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--policy", "drf", "--json", "-"]);
    let (taken, unmodelled) = (doc["taken"].to_string(), doc["unmodelled"].to_string());
    let said = "weight 5000 every 30 s, its first 2 runs of starts ranked (ranked_runs), jobs expected to end at their limits (ends_at_limits), a job waiting with no site factor until the next pass (no submit_table), only the jobs of cpu ranked and counted, their nodes the whole (partitions) (adapter.toml)";
    assert!(taken.contains(said), "{said} not in {taken}");
    for key in [
        "ranked_runs",
        "ends_at_limits",
        "submit_table",
        "partitions",
    ] {
        assert!(!unmodelled.contains(key), "{key} in {unmodelled}");
    }
    // Where the adapter's window of history began, no file says.
    let history = "the adapter's history (window_s = 2419200 s in adapter.toml)";
    assert!(
        unmodelled.contains(history),
        "{history} not in {unmodelled}"
    );
    let table = format!("{adapter}submit_table = \"/etc/slurm/fairshare.lua\"\n");
    std::fs::write(dir.path().join("adapter.toml"), table).unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--policy", "drf", "--json", "-"]);
    let taken = doc["taken"].to_string();
    let said = "(ends_at_limits), each job given its user's factor at submission (submit_table), only the jobs of cpu ranked and counted, their nodes the whole (partitions) (adapter.toml)";
    assert!(taken.contains(said), "{said} not in {taken}");
    // A partition the configuration does not have is named: the replay ranks no job of it.
    let unknown = adapter.replace("[\"cpu\"]", "[\"cpu\", \"gpu\"]");
    std::fs::write(dir.path().join("adapter.toml"), unknown).unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--policy", "drf", "--json", "-"]);
    let unmodelled = doc["unmodelled"].to_string();
    let said = "partitions gpu in adapter.toml: not partitions of config.txt";
    assert!(unmodelled.contains(said), "{said} not in {unmodelled}");
}

/// A `fairshare` policy of the user's is completed from the configuration as the baseline is,
/// and its note names it once, as given.
#[test]
fn a_fairshare_policy_of_the_users_is_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    let given = "fairshare:function=slurm-classic";
    let (doc, _) = json_of(&["slurm", "what-if", site, "--policy", given, "--json", "-"]);
    assert_eq!(doc["prediction"]["policies"][1]["policy"], given);
    let taken = doc["taken"].to_string();
    let said = format!("\"{given}: run as {given},decay=half-life:600,refresh=60");
    assert!(taken.contains(&said), "{said} not in {taken}");
}

/// The figures at the top of the text are the JSON's, and the first thing printed.
#[test]
fn how_far_to_trust_it_is_printed_first() {
    let dir = tempfile::tempdir().unwrap();
    bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--json", "-"]);
    let out = fairshare(&["slurm", "what-if", site]);
    let text = String::from_utf8(out.stdout).unwrap();
    let trust = &doc["trust"];
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("How far to trust this prediction"),
        "{text}"
    );
    let order = trust["contested_order"].as_f64().unwrap();
    let pairs = trust["contested_pairs"].as_u64().unwrap();
    assert!(
        lines[1].contains(&format!(
            "{:.1} % of {pairs} contested pairs",
            100.0 * order
        )),
        "{}",
        lines[1]
    );
    assert!(lines[3].contains(&format!(
        "{} of {}",
        trust["users"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["within"] == true)
            .count(),
        trust["users"].as_array().unwrap().len()
    )));
}

#[test]
fn a_partial_or_wrong_bundle_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    let refused = |what: &str| {
        let out = fairshare(&["slurm", "what-if", site]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(what), "{what} not in {stderr}");
    };
    std::fs::write(dir.path().join("last-decay.txt"), "yesterday\n").unwrap();
    refused("last-decay.txt: \"yesterday\" is not a UTC moment");
    std::fs::remove_file(dir.path().join("last-decay.txt")).unwrap();
    std::fs::write(dir.path().join("adapter.toml"), "weight = -3\n").unwrap();
    refused("adapter.toml:1:1: weight: invalid value: integer `-3`, expected u32");
    std::fs::write(dir.path().join("adapter.toml"), "policy = \"sdrff\"\n").unwrap();
    refused("adapter.toml: policy");
    std::fs::remove_file(dir.path().join("adapter.toml")).unwrap();
    std::fs::write(
        dir.path().join("config.txt"),
        "ClusterName=emu\nPriorityWeightAge=10\n",
    )
    .unwrap();
    refused("config.txt: no node is defined");
    std::fs::remove_file(dir.path().join("qos.txt")).unwrap();
    refused("not a site bundle: qos.txt is missing");
}

/// A bundle whose window opens at 60 s, with its history before it: bob's job 2 holds half of
/// n1 then (started at 40 s, on n1), carol's job 3 waits, and alice's job 1 ran before it.
fn window_bundle(dir: &Path) {
    let t = |s: u32| format!("2026-01-01T00:{:02}:{:02}", s / 60, s % 60);
    let row = |id, user: &str, submit, start, end, cpus| {
        let tres = format!("cpu={cpus},node=1");
        format!(
            "{id}|{user}|a|{}|{}|{}|||{tres}|{tres}|cpu|COMPLETED|n1",
            t(submit),
            t(start),
            t(end)
        )
    };
    let header = "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|Partition|State|NodeList";
    let history = [
        header.to_owned(),
        row(1, "alice", 0, 0, 30, 2),
        row(2, "bob", 10, 40, 100, 2),
        row(3, "carol", 50, 100, 110, 4),
    ];
    let window = [
        header.to_owned(),
        row(2, "bob", 10, 40, 100, 2),
        row(3, "carol", 50, 100, 110, 4),
        row(4, "alice", 70, 110, 120, 4),
        row(5, "bob", 75, 120, 130, 4),
    ];
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("history.txt", &(history.join("\n") + "\n"));
    write("sacct.txt", &(window.join("\n") + "\n"));
    write("config.txt", "ClusterName=emu\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\nPriorityWeightFairshare=10000\nPriorityDecayHalfLife=00:10:00\nNodeName=n1 CPUs=4 RealMemory=16000\nPartitionName=cpu Nodes=n1 Default=YES\n");
    write(
        "assoc.txt",
        "emu|root|||1||\nemu|a|||1|root|\nemu|a|alice||1|a|\nemu|a|bob||1|a|\nemu|a|carol||1|a|\n",
    );
    write("qos.txt", "normal|1.000000|0\n");
    write("manifest.toml", &format!("cluster = \"emu\"\nsince = \"{}\"\nuntil = \"{}\"\nhistory_since = \"{}\"\nslurm_version = \"slurm 22.05.8\"\nlast_decay = false\n", t(60), t(600), t(0)));
}

/// A window that opens on a busy machine: the what-if says what the machine held then and
/// what history it charged, and scores only the jobs eligible inside the window.
#[test]
fn a_window_opens_where_the_site_stood() {
    let dir = tempfile::tempdir().unwrap();
    window_bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--json", "-"]);
    let window = &doc["trust"]["window"];
    assert_eq!(window["opens"], "2026-01-01T00:01:00", "{window}");
    assert_eq!(
        (
            window["jobs_running"].as_u64(),
            window["jobs_waiting"].as_u64()
        ),
        (Some(1), Some(1)),
        "{window}"
    );
    assert_eq!(
        (
            window["processors_held"].as_f64(),
            window["processors"].as_f64()
        ),
        (Some(2.0), Some(4.0))
    );
    assert_eq!(
        (
            window["jobs_before"].as_u64(),
            window["history_jobs"].as_u64()
        ),
        (Some(3), Some(2))
    );
    let hours = window["history_processor_hours"].as_f64().unwrap();
    assert!((hours - 100.0 / 3600.0).abs() < 1e-9, "{hours}");
    assert_eq!(doc["trust"]["jobs"], 2, "jobs 4 and 5 alone are scored");
    let baseline = &doc["prediction"]["policies"][0];
    assert_eq!(baseline["tasks_pinned"], 2);
    // The "as recorded" row speaks of the jobs the runs score: the window's.
    let recorded = &doc["prediction"]["setting"]["recorded"];
    assert_eq!(recorded["started"], 2, "{recorded}");
    let taken = doc["taken"].to_string();
    assert!(
        taken.contains("the window: opens at 2026-01-01T00:01:00")
            && taken.contains("history.txt from 2026-01-01T00:00:00"),
        "{taken}"
    );
    assert!(
        taken.contains("1 jobs are listed in an earlier dump too")
            || taken.contains("2 jobs are listed in an earlier dump too"),
        "{taken}"
    );
    let out = fairshare(&["slurm", "what-if", site]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("the window opened at"))
        .unwrap_or_default();
    assert!(
        line.contains("2 of 4 processors held (50.0 %) by 1 jobs, 1 jobs waiting")
            && line.contains("history from 2026-01-01T00:00:00: 2 jobs, 0.0 processor-hours"),
        "{text}"
    );
    std::fs::remove_file(dir.path().join("manifest.toml")).unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--json", "-"]);
    assert!(doc["trust"]["window"].is_null());
    assert!(
        doc["unmodelled"]
            .to_string()
            .contains("names no moment it opened at"),
        "{}",
        doc["unmodelled"]
    );
}

/// A bundle in which alice may run one job at a time until her `MaxJobs` is raised to 2 at
/// 5 s (the transactions say so; limits.txt has the value after): her three 1-CPU jobs, all
/// submitted at once, would all start at once on the 4-CPU node without the limit.
fn limits_bundle(dir: &Path) {
    let t = |s: u32| format!("2026-01-01T00:{:02}:{:02}", s / 60, s % 60);
    let row = |id, user: &str, submit, start, end| {
        format!(
            "{id}|{user}|a|{}|{}|{}|||cpu=1,node=1|cpu=1,node=1|cpu|COMPLETED|n1|None",
            t(submit),
            t(start),
            t(end)
        )
    };
    let header = "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|Partition|State|NodeList|Reason";
    let rows = [
        header.to_owned(),
        row(1, "alice", 0, 0, 10),
        row(2, "alice", 1, 7, 17),
        row(3, "alice", 2, 11, 21),
        row(4, "bob", 3, 4, 14),
    ];
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("sacct.txt", &(rows.join("\n") + "\n"));
    write("config.txt", "ClusterName=emu\nAccountingStorageEnforce=associations,limits\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\nPriorityWeightFairshare=10000\nPriorityDecayHalfLife=00:10:00\nNodeName=n1 CPUs=4 RealMemory=16000\nPartitionName=cpu Nodes=n1 Default=YES\n");
    write(
        "assoc.txt",
        "emu|root|||1||\nemu|a|||1|root|\nemu|a|alice||1|a|\nemu|a|bob||1|a|\n",
    );
    write("qos.txt", "normal|1.000000|0\n");
    write("limits.txt", "Cluster|Account|User|Partition|Par Name|GrpTRES|GrpJobs|GrpSubmit|GrpTRESMins|GrpTRESRunMins|GrpWall|MaxJobs|MaxSubmit|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|QOS\nemu|root||||||||||||||||normal\nemu|a|||root|||||||||||||normal\nemu|a|alice|||||||||2||||||normal\nemu|a|bob|||||||||||||||normal\n");
    write("qos-limits.txt", "Name|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|GrpTRES|GrpJobs|MaxTRES|MaxWall|Flags\nnormal||||||||||\n");
    write("tres.txt", "Type|Name|ID\ncpu||1\nmem||2\ngres|gpu|1001\n");
    write("transactions.txt", "Time|Action|Actor|Where|Info|User|Account|Cluster\n2025-12-31T23:00:00|Modify Associations|root|(id_assoc=3)|max_jobs=1|alice|a|emu\n2026-01-01T00:00:05|Modify Associations|root|(id_assoc=3)|max_jobs=2|alice|a|emu\n");
    write("manifest.toml", &format!("cluster = \"emu\"\nsince = \"{}\"\nuntil = \"{}\"\nslurm_version = \"slurm 22.05.8\"\nlast_decay = false\n", t(0), t(600)));
}

/// The limits hold alice's jobs as Slurm held them, one at a time until the cap is raised,
/// while bob's starts at once; without AccountingStorageEnforce=limits nothing is held.
#[test]
fn a_limit_holds_jobs_as_slurm_held_them() {
    let dir = tempfile::tempdir().unwrap();
    limits_bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    let csv = dir.path().join("jobs.csv");
    let (doc, _) = json_of(&[
        "slurm",
        "what-if",
        site,
        "--json",
        "-",
        "--jobs",
        csv.to_str().unwrap(),
    ]);
    let held = &doc["prediction"]["policies"][0]["held_by_limits"];
    assert_eq!(held["user alice (MaxJobs)"], 2, "{held}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    let starts: Vec<i64> = rows
        .lines()
        .skip(1)
        .map(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            fields[16].parse::<f64>().unwrap() as i64 - 1_767_225_600
        })
        .collect();
    // Jobs 1, 4 (bob), 2 (once the cap is 2, at the main scheduler's next turn) and 3 (when 1 ends).
    assert_eq!(starts, [0, 4, 7, 11], "{rows}");
    let taken = doc["taken"].to_string();
    assert!(
        taken.contains("2 changes of them in transactions.txt"),
        "{taken}"
    );
    let config = std::fs::read_to_string(dir.path().join("config.txt")).unwrap();
    std::fs::write(
        dir.path().join("config.txt"),
        config.replace("associations,limits", "associations"),
    )
    .unwrap();
    let (doc, _) = json_of(&["slurm", "what-if", site, "--json", "-"]);
    assert!(doc["prediction"]["policies"][0]["held_by_limits"].is_null());
    assert!(doc["taken"].to_string().contains("Slurm enforces none"));
}

/// A bundle in which n2 is drained from 5 s to 50 s, so bob's job 2 waits for it; carol's job 3
/// ran in reservation maint on n2 and dave's job 4 waited on job 2 (`--dependency`), both of
/// which the replay starts as the record did.
fn nodes_bundle(dir: &Path) {
    let t = |s: u32| format!("2026-01-01T00:{:02}:{:02}", s / 60, s % 60);
    let row = |id, user: &str, (submit, start, end), node, reservation, line| {
        format!(
            "{id}|{user}|a|{}|{}|{}|||cpu=4,node=1|cpu=4,node=1|cpu|COMPLETED|{node}|{reservation}|{line}",
            t(submit),
            t(start),
            t(end)
        )
    };
    let header = "JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|Partition|State|NodeList|Reservation|SubmitLine";
    let rows = [
        header.to_owned(),
        row(1, "alice", (0, 0, 100), "n1", "", "sbatch a.sh"),
        row(2, "bob", (10, 50, 60), "n2", "", "sbatch b.sh"),
        row(
            3,
            "carol",
            (150, 200, 210),
            "n2",
            "maint",
            "sbatch --reservation=maint c.sh",
        ),
        row(
            4,
            "dave",
            (20, 110, 120),
            "n1",
            "",
            "sbatch --dependency=afterok:2 d.sh",
        ),
    ];
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("sacct.txt", &(rows.join("\n") + "\n"));
    write("config.txt", "ClusterName=emu\nSchedulerType=sched/backfill\nPriorityType=priority/multifactor\nPriorityWeightFairshare=10000\nPriorityDecayHalfLife=00:10:00\nNodeName=n[1-2] CPUs=4 RealMemory=16000\nPartitionName=cpu Nodes=n[1-2] Default=YES\n");
    write(
        "assoc.txt",
        "emu|root|||1||\nemu|a|||1|root|\nemu|a|alice||1|a|\nemu|a|bob||1|a|\nemu|a|carol||1|a|\nemu|a|dave||1|a|\n",
    );
    write("qos.txt", "normal|1.000000|0\n");
    write("events.txt", &format!("NodeName|TimeStart|TimeEnd|State|Reason|Event\n|{}|Unknown||Cluster Registered TRES|Cluster\nn2|{}|{}|DRAIN|maintenance|Node\n", t(0), t(5), t(50)));
    write(
        "reservations.txt",
        &format!(
            "Name|NodeName|TimeStart|TimeEnd|Flags\nmaint|n2|{}|{}|MAINT\n",
            t(200),
            t(300)
        ),
    );
    write("manifest.toml", &format!("cluster = \"emu\"\nsince = \"{}\"\nuntil = \"{}\"\nslurm_version = \"slurm 22.05.8\"\nlast_decay = false\n", t(0), t(600)));
}

/// A drained node takes no job until it is back, as in the record; the jobs of a reservation
/// and of a dependency start as the record started them and are counted and named, not
/// scored; without the events, bob's job starts at once.
#[test]
fn nodes_drained_and_reserved_hold_jobs_as_slurm_held_them() {
    let dir = tempfile::tempdir().unwrap();
    nodes_bundle(dir.path());
    let site = dir.path().to_str().unwrap();
    let csv = dir.path().join("jobs.csv");
    let starts = |extra: &[&str]| {
        let mut args = vec!["slurm", "what-if", site, "--json", "-", "--jobs"];
        args.push(csv.to_str().unwrap());
        args.extend_from_slice(extra);
        let (doc, _) = json_of(&args);
        let rows = std::fs::read_to_string(&csv).unwrap();
        let mut starts: Vec<(String, i64)> = (rows.lines().skip(1))
            .map(|l| {
                let fields: Vec<&str> = l.split(',').collect();
                let at = fields[16].parse::<f64>().unwrap() as i64 - 1_767_225_600;
                (fields[2].to_owned(), at)
            })
            .collect();
        starts.sort();
        (
            doc,
            starts.into_iter().map(|(_, at)| at).collect::<Vec<i64>>(),
        )
    };
    let (doc, at) = starts(&[]);
    assert_eq!(
        (at[0], at[2], at[3]),
        (0, 200, 110),
        "jobs 3 and 4 as recorded"
    );
    // At the main scheduler's next turn, a second after n2 is back (or after its submission).
    assert!(
        (50..=51).contains(&at[1]),
        "job 2 waits for n2, back at 50 s: {at:?}"
    );
    let pinned = &doc["trust"]["pinned"];
    assert_eq!(pinned[0]["why"], "ran in a reservation", "{pinned}");
    assert_eq!(
        (pinned[0]["jobs"].as_u64(), pinned[0]["named"][0].as_str()),
        (Some(1), Some("3"))
    );
    assert_eq!(
        pinned[1]["why"], "waited for other jobs (a dependency)",
        "{pinned}"
    );
    assert_eq!(pinned[1]["named"][0], "4");
    assert_eq!(doc["trust"]["jobs"], 2, "jobs 1 and 2 alone are scored");
    let taken = doc["taken"].to_string();
    assert!(taken.contains("nodes down, drained or failing: 1 (n2 DRAIN: maintenance on n2 from 2026-01-01T00:00:05 to 2026-01-01T00:00:50)"), "{taken}");
    assert!(
        taken.contains("reservations: 1 (reservation maint on n2"),
        "{taken}"
    );
    let out = fairshare(&["slurm", "what-if", site]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("started as the record did, and left out of these figures, as the model does not replay what the record says of them: 1 ran in a reservation (3); 1 waited for other jobs (a dependency) (4)"), "{text}");
    std::fs::remove_file(dir.path().join("events.txt")).unwrap();
    let (doc, at) = starts(&[]);
    assert!(
        (10..=11).contains(&at[1]),
        "n2 is up throughout without the events: {at:?}"
    );
    assert!(doc["unmodelled"]
        .to_string()
        .contains("the bundle holds no events.txt"));
}

/// The bundle `fairshare slurm collect` made on the many-node cluster of each tested Slurm
/// (crates/slurm/tests/data/versions, scripts/slurm/samples.sh), one workload under way.
fn recorded_bundle(version: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../slurm/tests/data/versions")
        .join(version)
        .join("bundle")
}

#[test]
fn each_tested_slurms_own_bundle_is_read_whole_and_modelled_as_it_ran() {
    for (version, followed) in [
        (
            "22.05",
            "the background loop turning a second after its work (22.05)",
        ),
        (
            "24.11",
            "the background loop waking on each whole second where no log shows its turns (23.11 on)",
        ),
    ] {
        let bundle = recorded_bundle(version);
        let (doc, _) = json_of(&["slurm", "what-if", bundle.to_str().unwrap(), "--json", "-"]);
        let taken: Vec<&str> = (doc["taken"].as_array().unwrap().iter())
            .map(|t| t.as_str().unwrap())
            .collect();
        let ran = taken.iter().find(|t| t.starts_with("the Slurm that ran"));
        assert!(
            ran.is_some_and(|t| t.contains(&format!("Slurm {version}."))
                && t.contains("(tested)")
                && t.contains(followed)),
            "{version}: {taken:?}"
        );
        // Every job of the workload is read; those the log timed, to the millisecond, all
        // twelve that had started (24.11's dump dates some a second early: the coarse clock).
        let timed = taken.iter().find(|t| t.contains("slurmctld's log timed"));
        assert!(
            timed.is_some_and(|t| t.contains("12 of the dump's 12 jobs' submissions, 12 starts")),
            "{version}: {taken:?}"
        );
        let trust = &doc["trust"];
        assert_eq!(trust["users"].as_array().unwrap().len(), 9, "{version}");
        // 22.05's jobs start within 0.02 s of the record; 24.11's 0.84 s late: the passes its
        // loop ran just after the controller started are not placed (docs/slurm.md).
        let median = trust["median_start_error_s"].as_f64().unwrap();
        assert!(median < 1.0, "{version}: median start error {median} s");
        let unmodelled = doc["unmodelled"].as_array().unwrap();
        let notes_24_11 = unmodelled
            .iter()
            .filter(|n| n.as_str().unwrap().contains("24.11"))
            .count();
        assert_eq!(
            notes_24_11 > 0,
            version == "24.11",
            "{version}: {unmodelled:?}"
        );
    }
}
