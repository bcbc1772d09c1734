//! Properties of the runtime engine on random clouds: no node gives more than it has, no
//! workload more than it wants, nothing idles while someone wants more, and the same scenario
//! runs the same way twice.

use fairshare_core::heaviness::knobs::{KnobProfile, PriorityConfig};
use fairshare_core::heaviness::{HeavinessConfig, Resource, ResourceKind};
use fairshare_sim::runtime::{
    compare, run, run_observed, Demand, RuntimeComparison, RuntimeNode, RuntimePolicy,
    RuntimeScenario, RuntimeUser, RuntimeWorkload,
};
use proptest::prelude::*;

/// A random cloud of 1–3 nodes with CPU, disk and memory, and 1–8 workloads of 1–4 users whose
/// demand changes at random times.
fn scenarios() -> impl Strategy<Value = RuntimeScenario> {
    let node = (1.0..16.0f64, 1e6..1e9f64, 1e9..1e11f64, 0.5..2.0f64);
    let workload = (
        0..4usize,
        0..3usize,
        (1.0..4.0f64, 1e8..1e10f64),
        prop::collection::vec(
            (0.0..100.0f64, 0.0..20.0f64, 0.0..2e9f64, 0.0..2e10f64),
            1..4,
        ),
        0.0..60.0f64,
    );
    (
        prop::collection::vec(node, 1..4),
        prop::collection::vec(workload, 1..9),
        prop::sample::select(vec!["paper", "cgroup-v2", "cgroup-v1", "libvirt"]),
    )
        .prop_map(|(nodes, workloads, profile)| {
            let n = nodes.len();
            RuntimeScenario {
                name: "random".into(),
                policy: RuntimePolicy::Heaviness,
                duration_s: 120.0,
                baseline: true,
                profile: KnobProfile::named(profile).unwrap(),
                heaviness: HeavinessConfig::default(),
                priority: PriorityConfig::default(),
                resources: vec![
                    Resource {
                        name: "cpu".into(),
                        kind: ResourceKind::Cpu,
                    },
                    Resource {
                        name: "disk".into(),
                        kind: ResourceKind::Disk,
                    },
                    Resource {
                        name: "mem".into(),
                        kind: ResourceKind::Memory,
                    },
                ],
                nodes: nodes
                    .iter()
                    .enumerate()
                    .map(|(i, &(cpu, disk, mem, speed))| RuntimeNode {
                        name: format!("n{i}"),
                        supply: vec![cpu, disk, mem],
                        speed,
                    })
                    .collect(),
                users: (0..4)
                    .map(|u| RuntimeUser {
                        name: format!("u{u}"),
                        quota: None,
                    })
                    .collect(),
                workloads: workloads
                    .into_iter()
                    .enumerate()
                    .map(|(i, (owner, node, (vcpu, vmem), steps, start_s))| {
                        let mut at = 0.0;
                        let steps = steps
                            .into_iter()
                            .map(|(gap, cpu, disk, mem)| {
                                at += gap;
                                (at, vec![cpu, disk, mem])
                            })
                            .collect();
                        RuntimeWorkload {
                            name: format!("w{i}"),
                            owner,
                            node: node % n,
                            size: vec![vcpu, 0.0, vmem],
                            demand: Demand { steps },
                            start_s,
                            stop_s: None,
                        }
                    })
                    .collect(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_node_is_divided_within_supply_and_work_conserving(s in scenarios()) {
        for policy in RuntimePolicy::ALL {
            let mut failure = None;
            run_observed(&s, policy, &mut |tick| {
                for (j, node) in s.nodes.iter().enumerate() {
                    for r in 0..s.resources.len() {
                        let here: Vec<usize> = (0..s.workloads.len())
                            .filter(|&i| tick.active[i] && s.workloads[i].node == j)
                            .collect();
                        let given: f64 = here.iter().map(|&i| tick.allocation[i][r]).sum();
                        let eps = 1e-9 * node.supply[r].max(1.0);
                        let over = here.iter().any(|&i| tick.allocation[i][r] > tick.demand[i][r] + eps
                            || tick.allocation[i][r] < 0.0);
                        let starved = given < node.supply[r] - eps
                            && here.iter().any(|&i| tick.allocation[i][r] < tick.demand[i][r] - eps);
                        if given > node.supply[r] + eps || over || starved {
                            failure.get_or_insert(format!(
                                "{policy}: interval {} node {j} resource {r}: gave {given} of {}",
                                tick.index, node.supply[r]
                            ));
                        }
                    }
                }
                if let Some(users) = tick.users {
                    if users.iter().any(|u| !u.heaviness.is_finite()) {
                        failure.get_or_insert(format!("{policy}: a heaviness is not finite"));
                    }
                }
            })
            .unwrap();
            prop_assert!(failure.is_none(), "{}", failure.unwrap());
        }
    }

    #[test]
    fn the_same_scenario_runs_the_same_way_and_its_document_reads_back(s in scenarios()) {
        let first = serde_json::to_string(&run(&s, RuntimePolicy::Heaviness).unwrap()).unwrap();
        let second = serde_json::to_string(&run(&s, RuntimePolicy::Heaviness).unwrap()).unwrap();
        prop_assert_eq!(first, second);
        let both = compare(&s).unwrap();
        let text = serde_json::to_string(&both).unwrap();
        let versioned = text.starts_with(r#"{"schema_version":1,"#);
        prop_assert!(versioned, "{}", &text[..40]);
        let back: RuntimeComparison = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, both);
    }
}
