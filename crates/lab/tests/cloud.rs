//! The larger runtime experiment on the Alibaba GPU 2023 node and pod lists (ignored, with
//! the reason, where `../shared/traces` is absent): built the same way from the same seed, and the
//! service's effect that docs/runtime.md reports, on a shortened run.

use fairshare_lab::cloud::{build_cloud, measure, CloudSpec};
use fairshare_sim::runtime::RuntimePolicy;
use std::path::{Path, PathBuf};

/// The Alibaba folder of the shared traces (the tests that read it are ignored where they
/// were absent when the crate was built; see `crates/test-environment.rs`).
fn alibaba() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/alibaba-gpu-2023");
    assert!(dir.is_dir(), "{} is gone since the build", dir.display());
    dir
}

fn two_hours() -> CloudSpec {
    CloudSpec {
        duration_s: 7200.0,
        arrival_s: 3600.0,
        ..CloudSpec::default()
    }
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn the_cloud_is_drawn_the_same_way_from_the_same_seed() {
    let dir = alibaba();
    let (pods, nodes) = (
        dir.join("openb_pod_list_default.csv"),
        dir.join("openb_node_list_all_node.csv"),
    );
    let spec = two_hours();
    let first = build_cloud(&pods, &nodes, &spec).unwrap();
    assert_eq!(first, build_cloud(&pods, &nodes, &spec).unwrap());
    assert_eq!(
        (first.nodes.len(), first.users.len(), first.workloads.len()),
        (50, 20, 500)
    );
    let other = build_cloud(&pods, &nodes, &CloudSpec { seed: 2, ..spec }).unwrap();
    assert_ne!(first.workloads, other.workloads);
    // Every user owns a VM; only the last user's start at the arrival.
    for u in 0..20 {
        let owned: Vec<_> = first.workloads.iter().filter(|w| w.owner == u).collect();
        assert!(!owned.is_empty(), "user {u}");
        let expected = if u == 19 { 3600.0 } else { 0.0 };
        assert!(owned.iter().all(|w| w.start_s == expected), "user {u}");
    }
}

#[test]
#[cfg_attr(
    not(shared_traces),
    ignore = "needs the real traces at ../shared/traces beside the workspace"
)]
fn the_service_cuts_what_users_are_owed_and_do_not_get() {
    let dir = alibaba();
    let spec = two_hours();
    let scenario = build_cloud(
        &dir.join("openb_pod_list_default.csv"),
        &dir.join("openb_node_list_all_node.csv"),
        &spec,
    )
    .unwrap();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let off = measure(&scenario, RuntimePolicy::Off, spec.arrival_s).unwrap();
    let on = measure(&scenario, RuntimePolicy::Heaviness, spec.arrival_s).unwrap();
    assert_eq!(off.cpu_shortfall.len(), 720);
    assert!(mean(&on.cpu_shortfall) < mean(&off.cpu_shortfall));
    assert!(mean(&on.disk_shortfall) < mean(&off.disk_shortfall));
    assert!(mean(&on.cpu_worst) > mean(&off.cpu_worst));
    for o in [&off, &on] {
        assert!(o
            .cpu_shortfall
            .iter()
            .chain(&o.disk_shortfall)
            .all(|s| (0.0..=1.0).contains(s)));
        assert!(o.cpu_worst.iter().all(|w| (0.0..=1.0).contains(w)));
    }
}
