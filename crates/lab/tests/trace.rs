//! The replay's orchestration as a library: a workload this test writes itself, measured,
//! configured and replayed without the command line.

use fairshare_core::policy::PolicySpec;
use fairshare_lab::{LabError, MeasuredTrace, Replay, StopRule, TraceSpec};
use fairshare_sim::cluster::Capacity;
use std::path::{Path, PathBuf};

/// A small SWF workload: three users, 120 jobs with fixed pseudo-random sizes and runtimes.
fn write_workload(dir: &Path) -> PathBuf {
    let mut state = 7u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut text = String::from("; a workload written by the lab test\n");
    for job in 1..=120 {
        let (runtime, cpus, user) = (20 + next(200), 1 + next(6), 1 + next(3));
        text += &format!(
            "{job} {} 0 {runtime} {cpus} -1 -1 {cpus} 600 -1 1 {user} 1 -1 2 -1 -1 -1\n",
            job * 5
        );
    }
    let path = dir.join("workload.swf");
    std::fs::write(&path, text).expect("write the workload");
    path
}

fn scan(path: &Path, keep_at_most: usize) -> MeasuredTrace {
    let trace = TraceSpec::new(vec![path.to_path_buf()]);
    let mut read = 0;
    let measured = MeasuredTrace::scan_keeping(&trace, keep_at_most, &mut |n| read = n).unwrap();
    assert_eq!(read, 120, "progress hears every task");
    measured
}

#[test]
fn a_workload_is_measured_once_and_replayed_from_memory_or_disk_alike() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_workload(dir.path());
    let kept = scan(&path, 1_000);
    let streamed = scan(&path, 0);
    assert_eq!(kept.users.len(), 3);
    assert_eq!(kept.resources, ["cpu"]);
    assert_eq!(kept.input.tasks_found, 120);
    assert_eq!(kept.span_s(), streamed.span_s());
    let replay = Replay {
        stop: StopRule::Drain,
        ..Replay::default()
    };
    for policy in [
        "fifo",
        "drf",
        "sdrf:delta=0.999",
        "smallest-first",
        "decayed-usage:half-life=600",
    ] {
        let capacity = kept.pool_of_mean(0.5).unwrap();
        let run = |w: &MeasuredTrace| {
            let config = w.config(&replay, policy.parse().unwrap(), capacity.clone());
            serde_json::to_string(&w.run(&config, &mut |_| {}).unwrap()).unwrap()
        };
        let from_memory = run(&kept);
        assert_eq!(from_memory, run(&streamed), "{policy}");
        assert!(
            from_memory.contains("\"tasks_completed\":120"),
            "{policy} drains"
        );
    }
}

#[test]
fn capacities_stop_rules_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let measured = scan(&write_workload(dir.path()), 1_000);
    let Capacity::Pool(half) = measured.pool_of_mean(0.5).unwrap() else {
        panic!("a pool")
    };
    let mean = measured.load.mean_demand()[0];
    assert!((half[0] - 0.5 * mean).abs() < 1e-12);
    for fraction in [0.0, -1.0, f64::NAN] {
        let refused = measured.pool_of_mean(fraction).unwrap_err().to_string();
        assert!(refused.contains("must be a number > 0"), "{refused}");
    }
    assert_eq!(measured.pool("cpu=12").unwrap(), Capacity::Pool(vec![12.0]));
    let unknown = measured.pool("gpu=1").unwrap_err().to_string();
    assert!(unknown.contains("unknown resource \"gpu\""), "{unknown}");
    assert!(measured.pool("cpu=x").is_err());
    assert!(measured.pool("cpu=-1").is_err());
    let replay = Replay {
        stop: StopRule::After(60_000_000),
        ..Replay::default()
    };
    let capacity = measured.pool("cpu=12").unwrap();
    let setting = measured.setting(&replay, &capacity, None, "test");
    assert_eq!(setting.horizon_s, Some(60.0));
    assert_eq!(setting.capacity, [12.0]);
    assert_eq!(setting.rule, "head-of-line");
    let config = measured.config(&replay, "drf".parse().unwrap(), capacity);
    let early = measured.run(&config, &mut |_| {}).unwrap();
    assert!(
        early.tasks_completed < 120,
        "a 60-s horizon ends the run early"
    );
}

#[test]
fn weighted_drf_needs_shares() {
    let dir = tempfile::tempdir().unwrap();
    let measured = scan(&write_workload(dir.path()), 1_000);
    let spec = fairshare_core::policy::PolicySpec {
        name: "weighted-drf".into(),
        kind: fairshare_core::policy::PolicyKind::Stateless(
            fairshare_core::priority::Policy::WeightedDrf,
        ),
        factory: None,
    };
    let config = measured.config(&Replay::default(), spec, measured.pool("cpu=12").unwrap());
    let error = measured.run(&config, &mut |_| {}).unwrap_err();
    assert!(matches!(error, LabError::Run { .. }));
    let shown = fairshare_core::error::Chain(&error).to_string();
    assert!(
        shown.starts_with("replaying under weighted-drf: "),
        "{shown}"
    );
    assert!(shown.contains("without shares"), "{shown}");
    let capacity = measured.pool("cpu=12").unwrap();
    let usage = fairshare_lab::ShareSource::Usage(1.0);
    let entitled = measured.entitled(&usage, &capacity, None).unwrap();
    let mut weighted = config.clone();
    weighted.shares = entitled.shares;
    let result = measured.run(&weighted, &mut |_| {}).unwrap();
    assert_eq!(
        result.tasks_completed + result.tasks_unfinished,
        result.tasks_submitted
    );
}

/// The replay as the command line runs it, through the library's one plan: a share file gives
/// each policy its results per account, the queue file its limits, and the summary says where
/// the capacity, the shares and the queues came from.
#[test]
fn a_replay_plan_assembles_shares_accounts_and_queues_once_for_every_policy() {
    let dir = tempfile::tempdir().unwrap();
    let measured = scan(&write_workload(dir.path()), 1_000);
    let shares = dir.path().join("shares.toml");
    std::fs::write(
        &shares,
        "[accounts]\nphysics = { shares = 3 }\nchemistry = { shares = 1 }\n\n[users]\n\"1\" = { account = \"physics\" }\n\"2\" = { account = \"physics\" }\n\"3\" = { account = \"chemistry\" }\n",
    )
    .unwrap();
    let queues = dir.path().join("site.queues");
    std::fs::write(&queues, "1 4 0\n").unwrap();
    let request = fairshare_lab::ReplayRequest {
        capacity: fairshare_lab::CapacitySource::Pool("cpu=12".into()),
        shares: shares.to_str().unwrap().parse().unwrap(),
        queues: Some(queues.clone()),
        replay: Replay {
            stop: StopRule::Drain,
            ..Replay::default()
        },
    };
    let mut notes = Vec::new();
    let plan = fairshare_lab::ReplayPlan::new(&measured, request, &mut |n| notes.push(n)).unwrap();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert_eq!(notes[0], "capacity: --capacity cpu=12");
    assert!(notes[1].starts_with("shares: ") && notes[2].starts_with("queues: "));
    let results: Vec<_> = ["weighted-drf", "fairshare"]
        .iter()
        .map(|p| plan.run(&p.parse().unwrap(), &mut |_| {}).unwrap())
        .collect();
    for result in &results {
        let names: Vec<&str> = result.accounts.iter().map(|a| a.name.as_str()).collect();
        assert!(
            names.contains(&"physics") && names.contains(&"chemistry"),
            "{names:?}"
        );
        assert_eq!(result.tasks_completed, 120, "drained");
    }
    let alike: Vec<PolicySpec> = ["fairshare", "fairshare:function=pbs"]
        .map(|p| p.parse().unwrap())
        .to_vec();
    assert!(plan.alike(&alike).is_empty(), "accounts tell them apart");
    let summary = plan.summary(results).unwrap();
    assert_eq!(summary.policies.len(), 2);
    assert_eq!(summary.setting.shares, notes[1]["shares: ".len()..]);
    assert_eq!(summary.setting.queues, notes[2]["queues: ".len()..]);
    assert_eq!(summary.input.tasks_found, 120);
}

#[test]
fn functions_that_order_alike_without_accounts_are_said_to_and_do() {
    let dir = tempfile::tempdir().unwrap();
    let measured = scan(&write_workload(dir.path()), 1_000);
    let request = fairshare_lab::ReplayRequest {
        capacity: fairshare_lab::CapacitySource::Pool("cpu=12".into()),
        shares: fairshare_lab::shares::ShareSource::Equal,
        queues: None,
        replay: Replay {
            stop: StopRule::Drain,
            ..Replay::default()
        },
    };
    let plan = fairshare_lab::ReplayPlan::new(&measured, request, &mut |_| {}).unwrap();
    let names = [
        "fairshare",
        "fairshare:function=pbs",
        "fairshare:function=slurm-classic",
        "fairshare:usage=dominant",
        "fairshare:function=metacentrum",
        "fairshare:function=metacentrum,decay=half-life:7d",
        "sdrf",
    ];
    let policies: Vec<PolicySpec> = names.iter().map(|p| p.parse().unwrap()).collect();
    let notes = plan.alike(&policies);
    // usage=dominant charges otherwise, and MetaCentrum floors usage at one unit (even with
    // the others' decay): only the first three are one policy here.
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("fairshare, fairshare:function=pbs, fairshare:function=slurm-classic give the same results here"),
        "{notes:?}"
    );
    let run = |i: usize| plan.run(&policies[i], &mut |_| {}).unwrap();
    let (fair_tree, pbs, classic) = (run(0), run(1), run(2));
    for other in [&pbs, &classic] {
        assert_eq!(other.mean_wait_s, fair_tree.mean_wait_s);
        assert_eq!(other.users, fair_tree.users);
    }
}

#[test]
fn the_recorded_schedule_covers_the_jobs_a_horizon_submits() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_workload(dir.path());
    for keep_at_most in [1_000, 10] {
        let measured = scan(&path, keep_at_most);
        let replay = |stop| fairshare_lab::ReplayRequest {
            capacity: fairshare_lab::CapacitySource::Pool("cpu=12".into()),
            shares: fairshare_lab::shares::ShareSource::Equal,
            queues: None,
            replay: Replay {
                stop,
                ..Replay::default()
            },
        };
        // Jobs arrive every 5 s from 5 s: a horizon 200 s after the first submits 41 of them.
        let plan = |stop| fairshare_lab::ReplayPlan::new(&measured, replay(stop), &mut |_| {});
        let cut = plan(StopRule::After(200_000_000)).unwrap();
        let result = cut.run(&"fifo".parse().unwrap(), &mut |_| {}).unwrap();
        let summary = cut.summary(vec![result]).unwrap();
        assert_eq!(summary.policies[0].tasks_submitted, 41);
        assert_eq!(summary.setting.recorded.jobs, 41, "memory {keep_at_most}");
        assert_eq!(summary.setting.recorded.started, 41);
        check_recorded_shares(&summary, measured.is_kept());
        let whole = plan(StopRule::Drain).unwrap().summary(Vec::new()).unwrap();
        assert_eq!(whole.setting.recorded.jobs, 120);
    }
}

/// The recorded schedule's shares are those of the run's top users at its sample times when
/// the trace was `kept` in memory, and absent when it was streamed (not read once more).
fn check_recorded_shares(summary: &fairshare_lab::summary::ReplaySummary, kept: bool) {
    let (shares, timeline) = (
        &summary.setting.recorded.shares,
        &summary.policies[0].timeline,
    );
    if !kept {
        assert!(shares.is_empty(), "a streamed trace is not read once more");
        return;
    }
    assert_eq!(shares.times_s, timeline.times_s);
    let ids = |series: &[fairshare_sim::cluster::ShareSeries]| {
        series.iter().map(|s| s.id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ids(&shares.dominant_share), ids(&timeline.dominant_share));
    // The log's own machine held more than the replay's 12 CPUs at times: shares above 1.
    let held = shares.dominant_share.iter().flat_map(|s| &s.values);
    assert!(held.clone().any(|v| *v > 1.0) && held.clone().all(|v| *v >= 0.0));
}
