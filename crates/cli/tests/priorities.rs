//! `fairshare priorities` end to end on a log this test writes: two users with equal shares
//! who used 1,000 and 4,000 processor-seconds (the spec's §8.5), under PBS and MetaCentrum,
//! before and after a halving.

use serde_json::Value;
use std::process::Command;

fn fairshare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fairshare"))
        .args(args)
        .output()
        .expect("fairshare runs")
}

/// The factors and ranks of users `1` and `2` (by name) under `args`.
fn users(args: &[&str]) -> Vec<(f64, u64)> {
    let out = fairshare(&[args, &["--json", "-"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    ["1", "2"]
        .iter()
        .map(|name| {
            let rows = doc["rows"].as_array().unwrap();
            let row = rows
                .iter()
                .find(|r| r["name"] == *name && r["user"] == true)
                .unwrap();
            (
                row["factor"].as_f64().unwrap(),
                row["rank"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_spec_example_under_pbs_and_metacentrum() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("usage.swf");
    // User 1 runs 1 processor for 1,000 s; user 2 runs 4 processors for 1,000 s; a last job at
    // 20,000 s marks the end.
    let line = |id: u32, submit: u32, run: u32, cpus: u32, user: u32| {
        format!("{id} {submit} 0 {run} {cpus} -1 -1 {cpus} {run} -1 1 {user} 1 1 1 1 -1 -1\n")
    };
    let text = line(1, 0, 1000, 1, 1) + &line(2, 0, 1000, 4, 2) + &line(3, 20_000, 1, 1, 3);
    std::fs::write(&log, text).unwrap();
    let path = log.to_str().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-3 * b.abs().max(1e-9);
    let pbs = users(&[
        "priorities",
        path,
        "--at",
        "2000",
        "--function",
        "pbs",
        "--decay",
        "half-life:100000d",
    ]);
    // Three users with one share each: usage shares 0.2 and 0.8 of 5,000, shares 1/3.
    assert!(
        close(pbs[0].0, (-0.2f64 * 3.0).exp2()) && close(pbs[1].0, (-0.8f64 * 3.0).exp2()),
        "{pbs:?}"
    );
    assert_eq!(
        (pbs[0].1, pbs[1].1),
        (2, 3),
        "user 3, without usage, ranks first"
    );
    let t = |decay: &str| {
        users(&[
            "priorities",
            path,
            "--at",
            "15000",
            "--function",
            "metacentrum",
            "--decay",
            decay,
        ])
    };
    let before = t("step:20000s:0.5");
    assert!(
        close(before[0].0, 1.0 / 3.0 / 1000.0) && close(before[1].0, 1.0 / 3.0 / 4000.0),
        "{before:?}"
    );
    let halved = t("step:10000s:0.5");
    assert!(
        close(halved[0].0, 2.0 * before[0].0) && close(halved[1].0, 2.0 * before[1].0),
        "{halved:?}"
    );
    // The old spelling, --policy, still works, with a note; both at once are refused.
    let args = |flag: &'static str| ["priorities", path, "--at", "2000", flag, "pbs"];
    let (old, new) = (fairshare(&args("--policy")), fairshare(&args("--function")));
    assert!(String::from_utf8_lossy(&old.stderr).contains("note: --policy is now --function"));
    assert!(old.status.success() && new.stderr.is_empty());
    assert_eq!(old.stdout, new.stdout);
    let both = fairshare(&["priorities", path, "--function", "pbs", "--policy", "pbs"]);
    assert_eq!(both.status.code(), Some(2));
    let bad = fairshare(&["priorities", path, "--decay", "sometimes"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected half-life:D"));
}

/// The operator's case: a Slurm accounting dump and the site's share file. Physics (alice,
/// bob) and chemistry (carol) have one share each. By two hours alice used 8 processors for
/// 2 h (57,600 s), bob 2 for 1 h (7,200 s) and, still running when the dump was taken (its
/// latest time, 02:00), 64 from 01:31 (111,360 s), carol 4 for 1 h (14,400 s); a step is
/// ignored and the pending job is counted as never started, charged nothing.
#[test]
fn a_sacct_dump_gives_the_expected_tree_and_fair_tree_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.txt");
    let rows = [
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State",
        "11|alice|physics|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|cpu=8,mem=16G,node=1|batch|COMPLETED",
        "11.batch||physics|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|cpu=8,mem=16G,node=1||COMPLETED",
        "12|bob|physics|2024-01-01T00:10:00|2024-01-01T00:20:00|2024-01-01T01:20:00|cpu=2,mem=4G,node=1|batch|COMPLETED",
        "13|carol|chemistry|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=4,mem=4G,node=1|batch|COMPLETED",
        "14|carol|chemistry|2024-01-01T00:30:00|Unknown|Unknown||batch|PENDING",
        "15|bob|physics|2024-01-01T01:30:00|2024-01-01T01:31:00|Unknown|cpu=64,node=1|batch|RUNNING",
    ];
    std::fs::write(&dump, rows.join("\n") + "\n").unwrap();
    let shares = dir.path().join("shares.toml");
    std::fs::write(
        &shares,
        "[accounts]\nphysics = { shares = 1 }\nchemistry = { shares = 1 }\n\n[users]\nalice = { account = \"physics\" }\nbob = { account = \"physics\" }\ncarol = { account = \"chemistry\" }\n",
    )
    .unwrap();
    let out = fairshare(&[
        "priorities",
        dump.to_str().unwrap(),
        "--shares",
        shares.to_str().unwrap(),
        "--at",
        "2h",
        "--function",
        "fair-tree",
        "--decay",
        "half-life:100000d",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs_charged"], 4);
    assert_eq!(doc["jobs_without_start"], 1);
    let rows: Vec<(String, u64, Option<u64>, f64)> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["depth"].as_u64().unwrap(),
                r["rank"].as_u64(),
                r["raw_usage"].as_f64().unwrap(),
            )
        })
        .collect();
    let names: Vec<(&str, u64, Option<u64>)> = rows
        .iter()
        .map(|(n, d, r, _)| (n.as_str(), *d, *r))
        .collect();
    // The tree in the share file's order. Chemistry's level fairshare 0.5 / (14,400 /
    // 190,560) = 6.6 beats physics' 0.54; in physics alice's 0.5 / (57,600 / 176,160) = 1.53
    // beats bob's 0.74.
    assert_eq!(
        names,
        [
            ("root", 0, None),
            ("chemistry", 1, None),
            ("carol", 2, Some(1)),
            ("physics", 1, None),
            ("alice", 2, Some(2)),
            ("bob", 2, Some(3)),
        ]
    );
    let usage: Vec<f64> = rows.iter().map(|r| r.3).collect();
    let expected = [
        190_560.0, 14_400.0, 14_400.0, 176_160.0, 57_600.0, 118_560.0,
    ];
    for (u, e) in usage.iter().zip(expected) {
        assert!((u - e).abs() < 1e-3 * e, "{usage:?}");
    }
}

/// `--shares` takes `sacctmgr`'s association output as it is: with `parent` and 0 shares and
/// Slurm's root user, the same rows as the share file that says the same tree.
#[test]
fn a_sacctmgr_tree_ranks_as_the_share_file_that_says_it() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.txt");
    let rows = [
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State",
        "11|alice|physics|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|cpu=8,node=1|batch|COMPLETED",
        "12|bob|physics|2024-01-01T00:10:00|2024-01-01T00:20:00|2024-01-01T01:20:00|cpu=2,node=1|batch|COMPLETED",
        "13|carol|chemistry|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=4,node=1|batch|COMPLETED",
        "14|dave|chemistry|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:30:00|cpu=4,node=1|batch|COMPLETED",
    ];
    std::fs::write(&dump, rows.join("\n") + "\n").unwrap();
    let sacctmgr = dir.path().join("assoc.txt");
    std::fs::write(
        &sacctmgr,
        "cluster|root|||1|\ncluster|root|root||1|\ncluster|physics|||3|root\ncluster|physics|alice||1|\n\
         cluster|physics|bob||0|\ncluster|chemistry|||1|root\ncluster|chemistry|carol||parent|\n\
         cluster|chemistry|dave||2|\n",
    )
    .unwrap();
    let toml = dir.path().join("shares.toml");
    std::fs::write(
        &toml,
        "[accounts]\nphysics = { shares = 3 }\nchemistry = { shares = 1 }\n\n[users]\nroot = {}\n\
         alice = { account = \"physics\" }\nbob = { account = \"physics\", shares = 0 }\n\
         carol = { account = \"chemistry\", shares = \"parent\" }\ndave = { account = \"chemistry\", shares = 2 }\n",
    )
    .unwrap();
    for function in ["fair-tree", "slurm-classic", "pbs"] {
        let rows = |shares: &std::path::Path| -> Vec<(String, bool, Option<u64>, String)> {
            let out = fairshare(&[
                "priorities",
                dump.to_str().unwrap(),
                "--shares",
                shares.to_str().unwrap(),
                "--at",
                "2h",
                "--function",
                function,
                "--json",
                "-",
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut rows: Vec<_> = (doc["rows"].as_array().unwrap().iter())
                .map(|r| {
                    let name = r["name"].as_str().unwrap().to_owned();
                    let factor = format!("{:.12}", r["factor"].as_f64().unwrap());
                    (name, r["user"] == true, r["rank"].as_u64(), factor)
                })
                .collect();
            rows.sort();
            rows
        };
        let (from_sacctmgr, from_toml) = (rows(&sacctmgr), rows(&toml));
        assert_eq!(from_sacctmgr, from_toml, "{function}");
        // The same tree beside another cluster's, in one sacctmgr output: --cluster picks it.
        let both = dir.path().join("both.txt");
        let text = std::fs::read_to_string(&sacctmgr).unwrap();
        let other = text
            .replace("cluster|", "other|")
            .replace("|3|root", "|1|root");
        std::fs::write(&both, text + &other).unwrap();
        let picked = |extra: &[&str]| {
            let (dump, both) = (dump.to_str().unwrap(), both.to_str().unwrap());
            let args = [
                &[
                    "priorities",
                    dump,
                    "--shares",
                    both,
                    "--at",
                    "2h",
                    "--function",
                    function,
                ][..],
                extra,
            ]
            .concat();
            fairshare(&args)
        };
        let refused = String::from_utf8_lossy(&picked(&[]).stderr).into_owned();
        assert!(
            refused.contains("lists several clusters (cluster, other)")
                && refused.contains("--cluster"),
            "{refused}"
        );
        let out = picked(&["--cluster", "cluster", "--json", "-"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let factor = |name: &str| {
            let rows = doc["rows"].as_array().unwrap();
            let row = rows
                .iter()
                .find(|r| r["name"] == name && r["user"] == true)
                .unwrap();
            format!("{:.12}", row["factor"].as_f64().unwrap())
        };
        for (name, _, _, expected) in from_toml.iter().filter(|r| r.1) {
            assert_eq!(&factor(name), expected, "{function} {name}");
        }
        let rank = |name: &str| from_toml.iter().find(|r| r.0 == name && r.1).unwrap().2;
        if function == "fair-tree" {
            // carol (`parent`) first in chemistry, bob (0 shares) last in physics.
            assert!(rank("carol") < rank("dave"), "{from_toml:?}");
            assert!(rank("alice") < rank("bob"), "{from_toml:?}");
        }
    }
}

/// `--usage pe` on a sacct dump priced on a TOML catalogue: one node type of 12 processors and
/// 120 GiB. Alice ran 1 processor with 60 GiB for an hour (half the node's memory: a PE of 6),
/// bob 1 processor with 1 GiB (a PE of 1). Under CPU time both used 3,600 processor-seconds.
#[test]
fn the_pe_charges_a_sacct_dump_on_a_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("jobs.txt");
    let rows = [
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|State",
        "1|alice|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=1,mem=60G,node=1|p|COMPLETED",
        "2|bob|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|cpu=1,mem=1G,node=1|p|COMPLETED",
    ];
    std::fs::write(&dump, rows.join("\n") + "\n").unwrap();
    let catalogue = dir.path().join("cluster.toml");
    std::fs::write(
        &catalogue,
        "[[machine]]\nname = \"node\"\ncount = 4\ncpus = 12\nmemory = \"120GiB\"\n",
    )
    .unwrap();
    let usage = |metric: &str| {
        let out = fairshare(&[
            "priorities",
            dump.to_str().unwrap(),
            "--machines",
            catalogue.to_str().unwrap(),
            "--usage",
            metric,
            "--at",
            "1h",
            "--decay",
            "half-life:100000d",
            "--json",
            "-",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["usage"], metric);
        let raw = |name: &str| {
            let rows = doc["rows"].as_array().unwrap();
            let row = rows.iter().find(|r| r["name"] == name).unwrap();
            row["raw_usage"].as_f64().unwrap()
        };
        (raw("alice"), raw("bob"))
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-3 * b;
    let (alice, bob) = usage("pe");
    assert!(
        close(alice, 6.0 * 3600.0) && close(bob, 3600.0),
        "{alice} {bob}"
    );
    let (alice, bob) = usage("cpu");
    assert!(close(alice, 3600.0) && close(bob, 3600.0), "{alice} {bob}");
    // A dump says nothing about the machines: the PE needs them given.
    let out = fairshare(&["priorities", dump.to_str().unwrap(), "--usage", "pe"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("give --machines FILE"), "{said}");
}

/// `--usage billing` on a sacct dump, with the site's partitions and QOS as `scontrol` and
/// `sacctmgr` print them: each job charged its billable TRES times its QOS's usage factor, for
/// an hour. Alice: 4 CPUs and 8000 MB in `cpu` (weights CPU=1, Mem=0.25G): 4 + 8000 × 0.25 /
/// 1024 = 5.953125. Bob: 2 CPUs, 1 GB and 2 GPUs in `gpu` (CPU=0.5, GRES/gpu=4) under the
/// scavenger QOS (0.5): (1 + 8) × 0.5 = 4.5. Under MAX_TRES, alice max(4, 1.95) = 4 and bob
/// max(1, 8) × 0.5 = 4. Carol: in
/// `debug`, which has no weights: billing=3 as Slurm printed it.
#[test]
fn slurm_billing_charges_a_sacct_dump_as_slurm_bills() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let dump = write(
        "jobs.sacct",
        "JobID|User|Account|Submit|Start|End|AllocTRES|Partition|QOS|State\n\
         1|alice|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|billing=5,cpu=4,mem=8000M,node=1|cpu|normal|COMPLETED\n\
         2|bob|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|billing=9,cpu=2,mem=1G,node=1,gres/gpu=2|gpu|scavenger|COMPLETED\n\
         3|carol|a|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|billing=3,cpu=2,node=1|debug|normal|COMPLETED\n",
    );
    let partitions = write(
        "partitions.txt",
        "PartitionName=cpu AllowGroups=ALL TRESBillingWeights=CPU=1.0,Mem=0.25G\n\
         PartitionName=gpu AllowGroups=ALL TRESBillingWeights=CPU=0.5,GRES/gpu=4\n\
         PartitionName=debug AllowGroups=ALL\n",
    );
    let qos = write("qos.txt", "normal|1.000000\nscavenger|0.500000\n");
    let usage = |extra: &[&str]| {
        let args = [
            &[
                "priorities",
                dump.as_str(),
                "--usage",
                "billing",
                "--at",
                "1h",
            ][..],
            &["--decay", "half-life:100000d", "--json", "-"],
            extra,
        ]
        .concat();
        let out = fairshare(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        ["alice", "bob", "carol"].map(|name| {
            let rows = doc["rows"].as_array().unwrap();
            let row = rows.iter().find(|r| r["name"] == name).unwrap();
            row["raw_usage"].as_f64().unwrap() / 3600.0
        })
    };
    let close = |got: [f64; 3], want: [f64; 3]| {
        let near = got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-3 * w);
        assert!(near, "{got:?} against {want:?}");
    };
    // Without the site's rules: billing= as Slurm printed it (rounded down).
    close(usage(&[]), [5.0, 9.0, 3.0]);
    let rules = ["--partitions", partitions.as_str(), "--qos", qos.as_str()];
    close(usage(&rules), [5.953125, 4.5, 3.0]);
    close(
        usage(&[&rules[..], &["--max-tres"]].concat()),
        [4.0, 4.0, 3.0],
    );
    // A partitions file Slurm would not have written is refused, naming the file and line.
    let bad = write("bad.txt", "PartitionName=cpu TRESBillingWeights=CPU=one\n");
    let out = fairshare(&[
        "priorities",
        dump.as_str(),
        "--usage",
        "billing",
        "--partitions",
        bad.as_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("bad.txt") && said.contains("line 1") && said.contains("cpu"),
        "{said}"
    );
}

/// What a real Slurm 22.05 (Debian's slurm-wlm, one host, `scripts/slurm/up.sh`: Fair Tree,
/// `PriorityDecayHalfLife=00:10:00`, `PriorityCalcPeriod=00:01:00`, accounts physics 3 and
/// chemistry 1) recorded of `scripts/slurm/jobs.sh`, dumped at 03:02:38 while bob's job 7 ran,
/// its last decay tick at 03:01:57. Job 1 was cancelled while it waited (22.05 writes Start =
/// End and nothing allocated).
const SLURM_DUMP: &str = "\
JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State
1|dave|chemistry|2026-11-24T02:51:19|2026-11-24T02:51:21|2026-11-24T02:51:21|00:00:00|00:05:00||main|CANCELLED by 0
2|alice|physics|2026-11-24T02:51:21|2026-11-24T02:51:22|2026-11-24T02:58:22|00:07:00|00:10:00|billing=4,cpu=4,node=1|main|COMPLETED
2.batch||physics|2026-11-24T02:51:22|2026-11-24T02:51:22|2026-11-24T02:58:22|00:07:00||cpu=4,mem=0,node=1||COMPLETED
3|bob|physics|2026-11-24T02:51:21|2026-11-24T02:51:22|2026-11-24T02:53:02|00:01:40|00:05:00|billing=2,cpu=2,node=1|main|COMPLETED
3.batch||physics|2026-11-24T02:51:22|2026-11-24T02:51:22|2026-11-24T02:53:02|00:01:40||cpu=2,mem=0,node=1||COMPLETED
4|carol|chemistry|2026-11-24T02:51:21|2026-11-24T02:51:22|2026-11-24T02:55:12|00:03:50|00:05:00|billing=2,cpu=2,node=1|main|COMPLETED
4.batch||chemistry|2026-11-24T02:51:22|2026-11-24T02:51:22|2026-11-24T02:55:12|00:03:50||cpu=2,mem=0,node=1||COMPLETED
5|dave|chemistry|2026-11-24T02:51:26|2026-11-24T02:53:02|2026-11-24T02:53:32|00:00:30|00:01:00|billing=1,cpu=1,node=1|main|COMPLETED
5.batch||chemistry|2026-11-24T02:53:02|2026-11-24T02:53:02|2026-11-24T02:53:32|00:00:30||cpu=1,mem=0,node=1||COMPLETED
6|carol|chemistry|2026-11-24T02:51:26|2026-11-24T02:58:23|2026-11-24T03:01:43|00:03:20|00:10:00|billing=4,cpu=4,node=1|main|COMPLETED
6.batch||chemistry|2026-11-24T02:58:23|2026-11-24T02:58:23|2026-11-24T03:01:43|00:03:20||cpu=4,mem=0,node=1||COMPLETED
7|bob|physics|2026-11-24T02:51:26|2026-11-24T02:53:57|Unknown|00:08:41|00:15:00|billing=1,cpu=1,node=1|main|RUNNING
7.batch||physics|2026-11-24T02:53:57|2026-11-24T02:53:57|Unknown|00:08:41||cpu=1,mem=0,node=1||RUNNING
";

/// `sshare -a -l -P` at that moment (Account|User|RawShares|NormShares|RawUsage|NormUsage|
/// EffectvUsage|FairShare|LevelFS), less its TRES columns.
const SLURM_SSHARE: &str = "\
root|||0.000000|2390||1.000000||
 chemistry||1|0.250000|933|0.390351|0.390351||0.640449
  chemistry|carol|1|0.500000|917|0.383858|0.983365|0.250000|0.508458
  chemistry|dave|1|0.500000|15|0.006493|0.016635|0.500000|30.057361
 physics||3|0.750000|1457|0.609649|0.609649||1.230217
  physics|alice|1|0.500000|1002|0.419467|0.688048|0.750000|0.726694
  physics|bob|1|0.500000|454|0.190181|0.311952|1.000000|1.602809
";

/// The share file of that cluster.
const SLURM_SHARES: &str = "[accounts]\nphysics = { shares = 3 }\nchemistry = { shares = 1 }\n\n[users]\nalice = { account = \"physics\" }\nbob = { account = \"physics\" }\ncarol = { account = \"chemistry\" }\ndave = { account = \"chemistry\" }\n";

/// `fairshare priorities` on the sacct dump `dump` of that cluster, with `extra` arguments, as
/// JSON.
fn on_the_cluster(dump: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (path, shares) = (
        dir.path().join("slurm.sacct"),
        dir.path().join("shares.toml"),
    );
    std::fs::write(&path, dump).unwrap();
    std::fs::write(&shares, SLURM_SHARES).unwrap();
    let mut args = vec!["priorities", path.to_str().unwrap()];
    args.extend_from_slice(&["--shares", shares.to_str().unwrap(), "--json", "-"]);
    args.extend_from_slice(extra);
    let out = fairshare(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each row of `doc` with sshare's line for the same association (`sshare` lists them in the
/// same depth-first order), checking that both list the same names.
fn beside_sshare<'a>(doc: &'a Value, sshare: &'a str) -> Vec<(&'a Value, Vec<&'a str>)> {
    let rows = doc["rows"].as_array().unwrap();
    let lines: Vec<Vec<&str>> = sshare.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), lines.len(), "the same accounts and users");
    for (row, want) in rows.iter().zip(&lines) {
        let name = if want[1].is_empty() {
            want[0].trim()
        } else {
            want[1]
        };
        assert_eq!(row["name"], name);
    }
    rows.iter().zip(lines).collect()
}

/// Asserts that `row`'s raw usage is sshare's `RawUsage` cell, which sshare prints whole.
fn as_sshare_counts(row: &Value, cell: &str) {
    let (got, want) = (
        row["raw_usage"].as_f64().unwrap(),
        cell.parse::<f64>().unwrap(),
    );
    assert_eq!(got.floor(), want, "{} RawUsage: {got}", row["name"]);
}

/// Asserts that `row[key]` equals sshare's `cell` to sshare's six printed decimals.
fn as_sshare_prints(row: &Value, key: &str, cell: &str) {
    let (got, want) = (row[key].as_f64().unwrap(), cell.parse::<f64>().unwrap());
    let name = &row["name"];
    assert!(
        (got - want).abs() <= 5e-7 + 1e-9,
        "{name} {key}: {got} against sshare's {want}"
    );
}

/// Under Slurm's own accounting the table is `sshare -l`'s, column by column, to sshare's six
/// decimals: NormShares among siblings and EffectvUsage over the parent's usage (Fair Tree),
/// RawUsage as charged by the moment (bob's running job to the last tick only), the rest as
/// computed at the last tick. The user factors differ only in sshare's count of users (it has
/// no root user here, so both count four).
#[test]
fn slurm_accounting_reproduces_a_real_sshare() {
    let tick = [
        "--decay",
        "slurm:half-life=10m,period=1m,tick=2026-11-24T03:01:57",
    ];
    let doc = on_the_cluster(SLURM_DUMP, &tick);
    for (row, want) in beside_sshare(&doc, SLURM_SSHARE) {
        as_sshare_counts(row, want[4]);
        as_sshare_prints(row, "effective_usage", want[6]);
        if row["parent"].is_string() {
            as_sshare_prints(row, "normalized_shares", want[3]);
            as_sshare_prints(row, "normalized_usage", want[5]);
            as_sshare_prints(row, "level_fs", want[8]);
        }
        if !want[7].is_empty() {
            as_sshare_prints(row, "factor", want[7]);
        }
    }
    assert_eq!(
        doc["jobs_without_start"], 1,
        "job 1, cancelled while it waited"
    );
    assert_eq!(doc["jobs_charged"], 6);
}

/// The moment: `--at` counts from the log's first event (job 1's submit, 02:51:19, though job
/// 1 is not replayed), a date is read as UTC or with its offset, and the default is when the
/// dump was taken (bob's start 02:53:57 plus his elapsed 8:41 = 03:02:38).
#[test]
fn the_moment_counts_from_the_first_event_and_defaults_to_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    let default = on_the_cluster(SLURM_DUMP, &[]);
    assert_eq!(default["at_s"], 679.0);
    let after = on_the_cluster(SLURM_DUMP, &["--at", "30"]);
    assert_eq!(after["at_s"], 30.0);
    let date = on_the_cluster(SLURM_DUMP, &["--at", "2026-11-24T02:52:19"]);
    assert_eq!(date["at_s"], 60.0);
    let offset = on_the_cluster(SLURM_DUMP, &["--at", "2026-11-24T03:52:19+01:00"]);
    assert_eq!(offset["at_s"], 60.0);
    let dump = dir.path().join("slurm.sacct");
    std::fs::write(&dump, SLURM_DUMP).unwrap();
    let early = fairshare(&[
        "priorities",
        dump.to_str().unwrap(),
        "--at",
        "2026-11-24T02:00:00",
    ]);
    assert_eq!(early.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&early.stderr)
        .contains("before the log's first event, 2026-11-24T02:51:19Z"));
    let text = fairshare(&[
        "priorities",
        dump.to_str().unwrap(),
        "--function",
        "slurm-classic",
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with(
            "at 2026-11-24T03:02:38Z, 679 s after the log's first event: 6 jobs charged"
        ),
        "{text}"
    );
    assert!(text.contains("1 jobs never started (cancelled while they waited, or still waiting) and are charged nothing"), "{text}");
    assert!(
        text.contains("EffectvUsage") && !text.contains("LevelFS"),
        "classic has no LevelFS column: {text}"
    );
}

/// The same cluster switched to classic (`PriorityFlags=NO_FAIR_TREE`, by `scontrol
/// reconfigure`) and run again: jobs 8-14, dumped at 03:13:13 (`sacct -X`: no steps), its last
/// decay tick at 03:12:57. Job 8 is written `Start=None`, job 14 is still pending.
const SLURM_CLASSIC_DUMP: &str = "\
JobID|User|Account|Submit|Start|End|Elapsed|Timelimit|AllocTRES|Partition|State
1|dave|chemistry|2026-11-24T02:51:19|2026-11-24T02:51:21|2026-11-24T02:51:21|00:00:00|00:05:00||main|CANCELLED by 0
2|alice|physics|2026-11-24T02:51:21|2026-11-24T02:51:22|2026-11-24T02:58:22|00:07:00|00:10:00|billing=4,cpu=4,node=1|main|COMPLETED
3|bob|physics|2026-11-24T02:51:21|2026-11-24T02:51:22|2026-11-24T02:53:02|00:01:40|00:05:00|billing=2,cpu=2,node=1|main|COMPLETED
4|carol|chemistry|2026-11-24T02:51:21|2026-11-24T02:51:22|2026-11-24T02:55:12|00:03:50|00:05:00|billing=2,cpu=2,node=1|main|COMPLETED
5|dave|chemistry|2026-11-24T02:51:26|2026-11-24T02:53:02|2026-11-24T02:53:32|00:00:30|00:01:00|billing=1,cpu=1,node=1|main|COMPLETED
6|carol|chemistry|2026-11-24T02:51:26|2026-11-24T02:58:23|2026-11-24T03:01:43|00:03:20|00:10:00|billing=4,cpu=4,node=1|main|COMPLETED
7|bob|physics|2026-11-24T02:51:26|2026-11-24T02:53:57|2026-11-24T03:03:57|00:10:00|00:15:00|billing=1,cpu=1,node=1|main|COMPLETED
8|dave|chemistry|2026-11-24T03:08:26|None|2026-11-24T03:08:28|00:00:00|00:05:00||main|CANCELLED by 0
9|alice|physics|2026-11-24T03:08:28|2026-11-24T03:08:29|Unknown|00:04:44|00:10:00|billing=4,cpu=4,node=1|main|RUNNING
10|bob|physics|2026-11-24T03:08:28|2026-11-24T03:08:29|2026-11-24T03:10:09|00:01:40|00:05:00|billing=2,cpu=2,node=1|main|COMPLETED
11|carol|chemistry|2026-11-24T03:08:28|2026-11-24T03:08:29|2026-11-24T03:12:19|00:03:50|00:05:00|billing=2,cpu=2,node=1|main|COMPLETED
12|dave|chemistry|2026-11-24T03:08:33|2026-11-24T03:10:09|2026-11-24T03:10:39|00:00:30|00:01:00|billing=1,cpu=1,node=1|main|COMPLETED
13|carol|chemistry|2026-11-24T03:08:33|2026-11-24T03:12:20|Unknown|00:00:53|00:10:00|billing=4,cpu=4,node=1|main|RUNNING
14|bob|physics|2026-11-24T03:08:33|Unknown|Unknown|00:00:00|00:15:00||main|PENDING
";

/// `sshare -a -l -P` at that moment, less its TRES columns.
const SLURM_CLASSIC_SSHARE: &str = "\
root|||0.000000|2755||1.000000|0.000000
 chemistry||1|0.250000|974|0.348487|0.348487|0.380522
  chemistry|carol|1|0.500000|943|0.342527|0.345507|0.619418
  chemistry|dave|1|0.500000|30|0.011169|0.179828|0.779350
 physics||3|0.750000|1780|0.651513|0.651513|0.547646
  physics|alice|1|0.500000|1359|0.493410|0.572461|0.452214
  physics|bob|1|0.500000|421|0.152894|0.402204|0.572597
";

/// Classic as slurmctld leaves it between ticks: accounts' usage as it stood before the last
/// tick's charges, users' after them, each user's effective usage taking its parent's lagging
/// one. NormUsage, EffectvUsage and RawUsage must equal sshare's; NormShares and FairShare are
/// not compared, since a reconfigure from Fair Tree left Slurm's users at Fair Tree's sibling
/// shares (0.5, not classic's 0.125) until slurmctld restarts.
#[test]
fn slurm_classic_reproduces_a_real_sshare_between_ticks() {
    // At the dump's moment, and exactly at the last tick (no job ended in between, so sshare
    // showed the same there).
    for at in ["2026-11-24T03:13:13", "2026-11-24T03:12:57"] {
        let doc = on_the_cluster(
            SLURM_CLASSIC_DUMP,
            &[
                "--function",
                "slurm-classic",
                "--decay",
                "slurm:half-life=10m,period=1m,tick=2026-11-24T03:12:57",
                "--at",
                at,
            ],
        );
        for (row, want) in beside_sshare(&doc, SLURM_CLASSIC_SSHARE) {
            if row["parent"].is_string() {
                as_sshare_prints(row, "normalized_usage", want[5]);
            }
            as_sshare_prints(row, "effective_usage", want[6]);
            if at.ends_with("13:13") {
                as_sshare_counts(row, want[4]);
            }
        }
        assert_eq!(
            doc["jobs_without_start"], 3,
            "jobs 1, 8 (Start=None) and 14 (pending)"
        );
    }
}
