//! Shards of a sweep are checked like any input before a merge: a real run's output passes,
//! and each impossible value is refused with the JSON path of its field.

use fairshare_core::model::Time;
use fairshare_lab::shard::read_shard;
use fairshare_lab::summary::{Setting, SweepCell, SweepSummary};
use fairshare_sim::cluster::{run, Capacity, ClusterConfig, Fill, FirstFit, Stop, Task};
use serde_json::Value;
use std::convert::Infallible;
use std::sync::Arc;

/// The JSON of a one-cell sweep made by a real run of two users on a 2-CPU pool.
fn shard() -> Value {
    let config = ClusterConfig {
        policy: "drf".parse().unwrap(),
        capacity: Capacity::Pool(vec![2.0]),
        resources: vec!["cpu".into()],
        users: vec!["A".into(), "B".into()],
        scheduler: Arc::new(Fill::default()),
        placement: Arc::new(FirstFit),
        stop: Stop::Drain,
        origin: Time::ZERO,
        sample_every: 1.0,
        top_users: 2,
        record_jobs: None,
        queues: Vec::new(),
        overrun: fairshare_sim::cluster::Overrun::Kill,
        partitions: Vec::new(),
        qos_factors: Vec::new(),
        assoc_factors: Vec::new(),
        opens: None,
        limits: Vec::new(),
        outages: Vec::new(),
        shares: None,
        accounts: None,
    };
    let arrivals = (0..6).map(|i| {
        Ok::<_, Infallible>(Task::new(
            u64::from(i),
            i % 2,
            Time::from_secs_f64(f64::from(i)),
            5_000_000,
            vec![1.0],
        ))
    });
    let result = run(&config, arrivals, |_| {}).unwrap();
    let summary = SweepSummary {
        input: Default::default(),
        setting: Setting {
            resources: vec!["cpu".into()],
            mean_demand: vec![1.5],
            capacity: vec![1.5],
            users: 2,
            ..Setting::default()
        },
        shard_ids: vec![0],
        shards: 1,
        cells: vec![SweepCell {
            fraction: 1.0,
            epsilon: None,
            result,
        }],
    };
    serde_json::to_value(&summary).unwrap()
}

fn refused(shard: &Value) -> String {
    read_shard(&shard.to_string()).unwrap_err().to_string()
}

#[test]
fn a_real_shard_is_accepted() {
    let summary = read_shard(&shard().to_string()).unwrap();
    assert_eq!(summary.cells[0].result.tasks_completed, 6);
}

#[test]
fn impossible_values_are_refused_naming_the_field() {
    let cases: [(&str, Value, &str); 6] = [
        (
            "/cells/0/result/jain_dominant_share",
            (-5.0).into(),
            "cells[0].result.jain_dominant_share: expected a number from 0 to 1, found -5",
        ),
        (
            "/cells/0/result/mean_wait_s",
            (-1.0).into(),
            "cells[0].result.mean_wait_s: expected a finite number ≥ 0, found -1",
        ),
        (
            "/cells/0/result/utilization/cpu",
            1.5.into(),
            "cells[0].result.utilization.cpu: expected a number from 0 to 1, found 1.5",
        ),
        (
            "/cells/0/result/tasks_started",
            99.into(),
            "cells[0].result.tasks_started: expected at most tasks_submitted = 6, found 99",
        ),
        (
            "/cells/0/fraction",
            0.into(),
            "cells[0].fraction: expected a finite number > 0, found 0",
        ),
        (
            "/shard_ids/0",
            3.into(),
            "shard_ids[0]: expected a shard below shards = 1, found 3",
        ),
    ];
    for (pointer, value, expected) in cases {
        let mut bad = shard();
        *bad.pointer_mut(pointer).unwrap() = value;
        assert_eq!(refused(&bad), expected);
    }
    let mut user = shard();
    *user
        .pointer_mut("/cells/0/result/users/1/mean_dominant_share")
        .unwrap() = 7.into();
    assert!(refused(&user).starts_with("cells[0].result.users[1].mean_dominant_share"));
}

#[test]
fn text_that_is_not_a_sweep_is_refused() {
    assert!(refused(&Value::from("x")).starts_with("not a sweep output"));
    let error = read_shard("{\"shards\": 1,}").unwrap_err();
    let error = fairshare_core::error::Chain(&error).to_string();
    assert!(error.starts_with("not a sweep output: "), "{error}");
    assert!(error.contains("line 1"), "{error}");
}
