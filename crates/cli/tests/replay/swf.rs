//! What an SWF log tells the replay: the machine its header declares, accounts followed against
//! their entitlement, a `.queues` file beside it, tasks left out for a missing field.

use super::*;

/// The textbook EASY case as an SWF log on a 4-processor machine its header declares: the
/// replay finds the machine in the header, backfills the short narrow job, reserves the wide
/// one, and reads the log's own waits as the "as recorded" row.
#[test]
fn easy_backfilling_on_the_machine_the_header_declares() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("easy.swf");
    let line = |id: u32, submit: u32, wait: u32, run: u32, cpus: u32, walltime: u32| {
        format!(
            "{id} {submit} {wait} {run} {cpus} -1 -1 {cpus} {walltime} -1 1 {id} 1 1 1 1 -1 -1\n"
        )
    };
    let text = String::from("; MaxProcs: 4\n; MaxNodes: 4\n")
        + &line(1, 0, 0, 10, 2, 10)
        + &line(2, 1, 9, 5, 4, 5)
        + &line(3, 2, 0, 5, 1, 5)
        + &line(4, 3, 12, 20, 1, 20);
    std::fs::write(&log, text).unwrap();
    let path = log.to_str().unwrap();
    let out = fairshare(&[
        "replay",
        path,
        "--drain",
        "--policy",
        "fifo",
        "--scheduler",
        "easy",
        "--gantt",
        "0+4",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let setting = &summary["setting"];
    assert_eq!(setting["scheduler"], "easy");
    assert_eq!(setting["capacity_source"], "the log's header (MaxProcs: 4)");
    assert_eq!(
        summary["policies"][0]["mean_wait_s"], 5.25,
        "(0 + 9 + 0 + 12) / 4"
    );
    assert_eq!(setting["recorded"]["mean_wait_s"], 5.25);
    let view = &setting["machine_view"];
    assert_eq!(
        view["nodes"],
        serde_json::json!([{"name": "pool", "processors": 4.0}])
    );
    let listed: Vec<u64> = summary["policies"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        listed,
        [1, 3],
        "the jobs running in the first 4 s, by start"
    );
    let bad = fairshare(&["replay", path, "--gantt", "5d"]);
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && said.contains("expected START+LENGTH"),
        "{said}"
    );
    let fill = fairshare(&["replay", path, "--drain", "--policy", "fifo", "--json", "-"]);
    let fill: serde_json::Value = serde_json::from_slice(&fill.stdout).unwrap();
    assert_eq!(
        fill["policies"][0]["mean_wait_s"], 8.5,
        "(0 + 9 + 13 + 12) / 4 without backfilling"
    );
}

/// Two accounts sharing a 4-processor machine 3 : 1, each with one user and one 10 s job
/// taking the whole machine: the first account is delivered everything until its job ends,
/// then its share of the processor-time falls as 10 s / t, and both end at half.
#[test]
fn accounts_are_followed_against_their_entitlement_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("accounts.swf");
    let line = |id: u32| format!("{id} 0 0 10 4 -1 -1 4 10 -1 1 {id} 1 1 1 1 -1 -1\n");
    std::fs::write(&log, String::from("; MaxProcs: 4\n") + &line(1) + &line(2)).unwrap();
    let shares = dir.path().join("shares.toml");
    std::fs::write(
        &shares,
        "[accounts]\na = { shares = 3 }\nb = { shares = 1 }\n\n[users]\n\"1\" = { account = \"a\" }\n\"2\" = { account = \"b\" }\n",
    )
    .unwrap();
    let out = fairshare(&[
        "replay",
        log.to_str().unwrap(),
        "--drain",
        "--policy",
        "fifo",
        "--shares",
        shares.to_str().unwrap(),
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let policy = &summary["policies"][0];
    let times: Vec<f64> = policy["timeline"]["times_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    assert!(times.len() > 2 && times.iter().any(|t| *t > 10.0));
    let account = |name: &str| {
        let accounts = policy["accounts"].as_array().unwrap();
        accounts.iter().find(|a| a["name"] == name).unwrap().clone()
    };
    let (a, b) = (account("a"), account("b"));
    assert_eq!(a["entitlement"], 0.75);
    assert_eq!(b["entitlement"], 0.25);
    assert_eq!(a["delivered"], 0.5);
    assert_eq!(a["mean_response_s"], 10.0, "ran at once for 10 s");
    assert_eq!(b["mean_response_s"], 20.0, "waited 10 s, ran 10 s");
    let over_time = |account: &Value| account["delivered_over_time"].as_array().unwrap().clone();
    let (a_series, b_series) = (over_time(&a), over_time(&b));
    assert_eq!(a_series.len(), times.len());
    for ((t, a), b) in times.iter().zip(&a_series).zip(&b_series) {
        if *t == 0.0 {
            assert!(a.is_null() && b.is_null(), "nothing delivered at 0");
            continue;
        }
        let expected = if *t <= 10.0 { 1.0 } else { 10.0 / t };
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!((a - expected).abs() < 1e-9, "a at {t}: {a}, not {expected}");
        assert!((a + b - 1.0).abs() < 1e-9, "the two make the whole at {t}");
    }
}

/// A `.queues` file beside the log holds queue 1 to 2 of the machine's 4 processors: its
/// second job waits for its first while a job of queue 2 starts; the summary says where the
/// limits came from and which queues did not match.
#[test]
fn a_queues_file_beside_the_log_limits_its_queues() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("queued.swf");
    let line = |id: u32, submit: u32, cpus: u32, queue: u32| {
        format!("{id} {submit} 0 10 {cpus} -1 -1 {cpus} 10 -1 1 {id} 1 1 {queue} 1 -1 -1\n")
    };
    let text =
        String::from("; MaxProcs: 4\n") + &line(1, 0, 2, 1) + &line(2, 1, 1, 1) + &line(3, 2, 1, 2);
    std::fs::write(&log, text).unwrap();
    let path = log.to_str().unwrap();
    let mean_wait = |args: &[&str]| {
        let out = fairshare(
            &[
                &[
                    "replay",
                    path,
                    "--drain",
                    "--policy",
                    "fifo",
                    "--scheduler",
                    "easy",
                    "--json",
                    "-",
                ],
                args,
            ]
            .concat(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            summary["policies"][0]["mean_wait_s"].as_f64().unwrap(),
            summary["setting"]["queues"].clone(),
        )
    };
    assert_eq!(mean_wait(&[]), (0.0, Value::Null), "no queues file yet");
    std::fs::write(
        dir.path().join("queued.swf.queues"),
        "# name limit priority\n1 2 0\n7 -1 1\n",
    )
    .unwrap();
    let (wait, said) = mean_wait(&[]);
    assert_eq!(wait, 3.0, "(0 + 9 + 0) / 3");
    let said = said.as_str().unwrap();
    assert!(
        said.ends_with(
            "queued.swf.queues; not listed, so unlimited at priority 0: 2; named by no job: 7"
        ),
        "{said}"
    );
    let elsewhere = dir.path().join("site.queues");
    std::fs::write(&elsewhere, "1 -1 0\n").unwrap();
    assert_eq!(
        mean_wait(&["--queues", elsewhere.to_str().unwrap()]).0,
        0.0,
        "--queues wins"
    );
    std::fs::write(&elsewhere, "1 many 0\n").unwrap();
    let bad = fairshare(&["replay", path, "--queues", elsewhere.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && said.contains("site.queues:1: field 2 (processor limit)"),
        "{said}"
    );
}

#[test]
fn tasks_left_out_by_default_are_a_warning_naming_the_option_that_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("mem.swf");
    // Two of three jobs record memory, so memory is a resource and the third is left out.
    let lines = [
        "1 0 0 100 4 -1 1000 4 -1 -1 1 7 1 -1 1 1 -1 -1",
        "2 10 0 100 2 -1 -1 2 -1 -1 1 8 1 -1 1 1 -1 -1",
        "3 20 0 100 1 -1 500 1 -1 -1 1 9 1 -1 1 1 -1 -1",
    ];
    std::fs::write(&swf, lines.join("\n") + "\n").unwrap();
    let out = fairshare(&["replay", swf.to_str().unwrap(), "--policy", "fifo"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .contains("1 of 3 tasks of the trace are left out as \"no memory\": --swf-memory none"),
        "{stdout}"
    );
    let kept = fairshare(&[
        "replay",
        swf.to_str().unwrap(),
        "--policy",
        "fifo",
        "--swf-memory",
        "none",
    ]);
    assert!(!String::from_utf8_lossy(&kept.stdout).contains("are left out as"));
}
