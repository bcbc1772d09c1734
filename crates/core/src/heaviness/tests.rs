//! Every formula against the spec's hand-computed values, and the incentives the paper
//! requires as properties.

use super::knobs::{
    priority, target_priority, KnobProfile, KnobRange, PriorityConfig, PrioritySmoothing,
};
use super::*;
use proptest::prelude::*;

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

fn assert_all_close(found: &[f64], expected: &[f64], tolerance: f64) {
    assert_eq!(found.len(), expected.len());
    for (f, e) in found.iter().zip(expected) {
        assert!(
            close(*f, *e, tolerance),
            "found {found:?}, expected {expected:?}"
        );
    }
}

/// The cloud of spec §7.5: one host, CPU and disk per interval, users d (v1, v2) and e (v3).
fn worked_example() -> Cloud {
    Cloud {
        resources: vec![
            Resource::new("cpu", ResourceKind::Cpu),
            Resource::new("disk", ResourceKind::Disk),
        ],
        nodes: vec![Host::new(vec![20.0, 1000.0])],
        users: vec![User::default(), User::default()],
        workloads: vec![
            Workload::new(0, 0, vec![2.0, 0.0]).using(vec![8.0, 100.0]),
            Workload::new(0, 0, vec![2.0, 0.0]).using(vec![8.0, 0.0]),
            Workload::new(1, 0, vec![2.0, 0.0]).using(vec![4.0, 600.0]),
        ],
    }
}

fn no_overcommit() -> HeavinessConfig {
    HeavinessConfig {
        overcommit: Overcommit::none(),
        ..HeavinessConfig::default()
    }
}

#[test]
fn greediness_matches_the_worked_example_of_section_7_5() {
    let h = heaviness(&worked_example(), &no_overcommit()).unwrap();
    assert_all_close(&h.normalisation, &[0.05, 0.001], 1e-12);
    let g: Vec<f64> = h.workloads.iter().map(|w| w.dynamic).collect();
    assert_all_close(&g, &[-0.043137, -0.090196, 0.133333], 1e-6);
    for w in &h.workloads {
        assert!(close(w.static_part, 0.666667, 1e-6));
    }
    assert!(close(h.users[0].entitlement, 1.0, 1e-12));
    assert!(close(h.users[0].heaviness, 0.2, 1e-6));
    assert!(close(h.users[1].heaviness, -0.2, 1e-6));
    let hp: Vec<f64> = h.workloads.iter().map(|w| w.priority_input).collect();
    assert_all_close(&hp, &[0.156863, 0.109804, -0.066667], 1e-6);
    assert_eq!((h.users[0].rank, h.users[1].rank), (2, 1));
    assert!(close(h.users[0].unused_quota, 1.0 - 4.0 / 3.0, 1e-9));
}

#[test]
fn reference_b_greediness_with_dcf_1_matches_the_worked_example() {
    let config = HeavinessConfig {
        metric: Metric::greediness_dcf(1.0).unwrap(),
        ..no_overcommit()
    };
    let h = heaviness(&worked_example(), &config).unwrap();
    let g: Vec<f64> = h.workloads.iter().map(|w| w.dynamic).collect();
    assert_all_close(&g, &[0.015686, -0.015686, 0.266667], 1e-6);
}

#[test]
fn hp_includes_static_adds_the_workloads_own_size() {
    let config = HeavinessConfig {
        hp_includes_static: true,
        ..no_overcommit()
    };
    let h = heaviness(&worked_example(), &config).unwrap();
    assert!(close(
        h.workloads[0].priority_input,
        0.2 - 0.043137 + 0.666667,
        1e-6
    ));
}

#[test]
fn vm_endowments_match_the_worked_example_of_section_2_1() {
    let cloud = Cloud {
        resources: vec![
            Resource::new("cpu", ResourceKind::Cpu),
            Resource::new("mem", ResourceKind::Memory),
            Resource::new("net", ResourceKind::Network),
        ],
        nodes: vec![Host::new(vec![8.0, 32.0, 10.0])],
        users: vec![User::default()],
        workloads: vec![
            Workload::new(0, 0, vec![4.0, 8.0, 0.0]),
            Workload::new(0, 0, vec![8.0, 16.0, 0.0]),
            Workload::new(0, 0, vec![4.0, 24.0, 0.0]),
        ],
    };
    let e = workload_endowments(&cloud, &HeavinessConfig::default());
    assert_all_close(&e[0], &[2.0, 5.333333, 3.333333], 1e-6);
    assert_all_close(&e[1], &[4.0, 10.666667, 3.333333], 1e-6);
    assert_all_close(&e[2], &[2.0, 16.0, 3.333333], 1e-6);
    // Capped at the virtual size on an under-committed node; reference A's memory is the VRAM.
    let mut small = cloud.clone();
    small.workloads.truncate(1);
    let capped = HeavinessConfig {
        cap_endowment_at_vr: true,
        ..HeavinessConfig::default()
    };
    assert_all_close(
        &workload_endowments(&small, &capped)[0],
        &[4.0, 8.0, 10.0],
        1e-12,
    );
    assert_all_close(
        &workload_endowments(&small, &HeavinessConfig::default())[0],
        &[8.0, 32.0, 10.0],
        1e-12,
    );
    let reference = HeavinessConfig {
        endowment: EndowmentMode::Reference,
        ..HeavinessConfig::default()
    };
    assert_all_close(
        &workload_endowments(&cloud, &reference)[2],
        &[2.0, 24.0, 3.333333],
        1e-6,
    );
}

#[test]
fn user_endowments_match_the_worked_example_of_section_2_2() {
    let cloud = Cloud {
        resources: vec![
            Resource::new("cpu", ResourceKind::Cpu),
            Resource::new("mem", ResourceKind::Memory),
            Resource::new("disk", ResourceKind::Disk),
        ],
        nodes: vec![Host::new(vec![64.0, 256.0, 30.0])],
        users: [[40.0, 100.0], [80.0, 200.0], [40.0, 100.0]]
            .iter()
            .map(|q| User {
                quota: Some(vec![q[0], q[1], 0.0]),
            })
            .collect(),
        workloads: (0..3)
            .map(|u| Workload::new(u, 0, vec![1.0, 1.0, 0.0]))
            .collect(),
    };
    let e = user_endowments(&cloud).unwrap();
    assert_all_close(e[0].as_ref().unwrap(), &[16.0, 64.0, 10.0], 1e-9);
    assert_all_close(e[1].as_ref().unwrap(), &[32.0, 128.0, 10.0], 1e-9);
    assert_all_close(e[2].as_ref().unwrap(), &[16.0, 64.0, 10.0], 1e-9);
}

#[test]
fn nova_overcommit_gives_the_entitlement_of_section_7_4() {
    let kinds = [
        ResourceKind::Cpu,
        ResourceKind::Disk,
        ResourceKind::Disk,
        ResourceKind::Network,
        ResourceKind::Network,
        ResourceKind::Memory,
    ];
    let cloud = Cloud {
        resources: kinds.iter().map(|&k| Resource::new("r", k)).collect(),
        nodes: vec![Host::new(vec![2.0; 6])],
        users: vec![User::default()],
        workloads: vec![Workload::new(0, 0, vec![1.0; 6])],
    };
    let h = heaviness(&cloud, &HeavinessConfig::default()).unwrap();
    assert!(
        close(h.users[0].entitlement, 0.78819, 1e-5),
        "{}",
        h.users[0].entitlement
    );
}

#[test]
fn a_faster_node_counts_its_cpu_for_more() {
    let mut cloud = worked_example();
    cloud.nodes.push(Host {
        supply: vec![20.0, 1000.0],
        speed: 3.0,
    });
    cloud.workloads[2].node = 1;
    let h = heaviness(&cloud, &no_overcommit()).unwrap();
    assert_eq!(cloud_supply(&cloud), vec![80.0, 2000.0]);
    assert_all_close(&h.workloads[2].endowment, &[60.0, 1000.0], 1e-12);
    assert_all_close(&h.workloads[2].usage, &[12.0, 600.0], 1e-12);
}

#[test]
fn a_workload_seen_first_counts_as_using_its_endowment() {
    let mut cloud = worked_example();
    cloud.workloads[2].usage = None;
    let h = heaviness(&cloud, &no_overcommit()).unwrap();
    assert_eq!(h.workloads[2].usage, h.workloads[2].endowment);
    assert!(close(h.workloads[2].dynamic, 0.0, 1e-12));
}

#[test]
fn drf_and_asset_heaviness_follow_their_definitions() {
    for (metric, v3) in [
        // DRF: max(0.05·4, 0.001·600) − max(0.05·6.667, 0.001·333.3) = 0.6 − 0.3333.
        (Metric::Drf, 0.6 - 1.0 / 3.0),
        // Asset: 0.05·4 + 0.001·600 − 0.6667.
        (Metric::Asset, 0.8 - 2.0 / 3.0),
    ] {
        let config = HeavinessConfig {
            metric,
            ..no_overcommit()
        };
        let h = heaviness(&worked_example(), &config).unwrap();
        assert!(close(h.workloads[2].dynamic, v3, 1e-9), "{metric:?}");
    }
}

#[test]
fn users_without_workloads_take_no_part() {
    let mut cloud = worked_example();
    cloud.users.push(User::default());
    let h = heaviness(&cloud, &no_overcommit()).unwrap();
    assert!(!h.users[2].active);
    assert_eq!((h.users[2].heaviness, h.users[2].rank), (0.0, 0));
    assert!(close(h.users[0].heaviness, 0.2, 1e-6));
}

#[test]
fn bad_clouds_are_refused_with_what_and_where() {
    type Spoil = Box<dyn Fn(&mut Cloud)>;
    let cases: Vec<(Spoil, &str)> = vec![
        (
            Box::new(|c| c.workloads[1].size.pop().map(drop).unwrap_or(())),
            "workload 1: size has 1 components, expected 2",
        ),
        (
            Box::new(|c| c.workloads[0].usage = Some(vec![f64::NAN, 0.0])),
            "workload 0: usage[0] must be a finite number ≥ 0, found NaN",
        ),
        (
            Box::new(|c| c.workloads[2].owner = 7),
            "workload 2: owner 7 does not exist (2 known)",
        ),
        (
            Box::new(|c| c.nodes[0].supply[1] = 0.0),
            "resource disk: the cloud's supply is 0",
        ),
        (
            Box::new(|c| c.users[1].quota = Some(vec![1.0, 1.0])),
            "quotas: 1 of 2 users with workloads have a quota but user 0 has none",
        ),
        (
            Box::new(|c| c.nodes[0].speed = -1.0),
            "node 0: speed must be a finite number ≥ 0, found -1",
        ),
    ];
    for (spoil, expected) in cases {
        let mut cloud = worked_example();
        spoil(&mut cloud);
        let message = heaviness(&cloud, &no_overcommit()).unwrap_err().to_string();
        assert!(message.starts_with(expected), "{message}");
    }
    let config = HeavinessConfig {
        resource_decay_factor: 0.0,
        ..no_overcommit()
    };
    assert!(heaviness(&worked_example(), &config).is_err());
}

#[test]
fn smoothing_follows_section_4_1() {
    let d1 = smooth(None, &[20.0], 0.5);
    let d2 = smooth(Some(&d1), &[0.0], 0.5);
    let d3 = smooth(Some(&d2), &[20.0], 0.5);
    assert_eq!((d1[0], d2[0], d3[0]), (20.0, 10.0, 15.0));
}

#[test]
fn priorities_and_knobs_match_section_9() {
    assert_eq!(target_priority(1.0, 2.5), 50.0);
    assert_eq!(target_priority(-0.4, 2.5), -50.0);
    assert_eq!(target_priority(f64::NAN, 2.5), 0.0);
    let paper = KnobProfile::paper();
    let v = paper.values(0, Some(2 * 1024 * 1024 * 1024));
    assert_eq!(
        (v.cpu, v.io, v.network, v.memory),
        (50, 550, Some(49), Some(1_053_696))
    );
    // §9.3 continuing §7.5: h_p → p (7, 5, −8) → the knobs.
    let config = PriorityConfig::default();
    let expected = [
        (7, 43, 487, 42, 907_612),
        (5, 45, 505, 44, 949_350),
        (-8, 58, 622, 57, 1_220_648),
    ];
    for (h, (p, cpu, io, net, mem)) in [0.156863, 0.109804, -0.066667].iter().zip(expected) {
        let (applied, _) = priority(*h, None, &config);
        assert_eq!(applied, p);
        let v = paper.values(applied, Some(2 * 1024 * 1024 * 1024));
        assert_eq!(
            (v.cpu, v.io, v.network, v.memory),
            (cpu, io, Some(net), Some(mem))
        );
    }
    assert_eq!(KnobProfile::cgroup_v1().values(-50, None).cpu, 262_144);
    assert_eq!(KnobProfile::cgroup_v2().values(50, None).io, 1);
}

#[test]
fn priority_smoothing_follows_section_9_2() {
    let h = 7.843 / 50.0;
    let blend = PriorityConfig {
        smoothing: PrioritySmoothing::Blend10,
        ..PriorityConfig::default()
    };
    let (p1, m1) = priority(h, None, &blend);
    let (p2, _) = priority(h, Some(m1), &blend);
    assert_eq!((p1, p2), (0, 7));
    let ema = PriorityConfig {
        smoothing: PrioritySmoothing::Ema { alpha: 0.1 },
        ..PriorityConfig::default()
    };
    let mut memory = None;
    let mut smoothed = vec![];
    for _ in 0..3 {
        let (_, m) = priority(h, memory, &ema);
        smoothed.push(m.smoothed);
        memory = Some(m);
    }
    assert_all_close(&smoothed, &[0.7843, 1.49017, 2.12545], 1e-4);
}

/// DRF as a heaviness function (§8) does not meet the non-minimalistic condition: a workload
/// declared with no size but loading two resources is lighter than one sized to its load,
/// because only the dominant resource of the load counts against it while the whole size
/// counts as static heaviness. docs/runtime.md says so.
#[test]
fn drf_heaviness_rewards_declaring_a_workload_too_small() {
    let w = [0.1, 0.1];
    let load = [4.0, 4.0];
    let undeclared = vm_heaviness(&Metric::Drf, &w, &[0.0, 0.0], &load, &[0.0, 0.0]);
    let matched = vm_heaviness(&Metric::Drf, &w, &load, &load, &[0.0, 0.0]);
    assert!(close(undeclared.0 + undeclared.1, 0.4, 1e-12));
    assert!(close(matched.0 + matched.1, 0.8, 1e-12));
}

#[test]
fn jain_index_is_one_for_equal_and_one_over_n_for_one_holder() {
    assert_eq!(jain_index(&[2.0, 2.0, 2.0]), 1.0);
    assert!(close(jain_index(&[1.0, 0.0, 0.0, 0.0]), 0.25, 1e-12));
    assert_eq!(jain_index(&[0.0, 0.0]), 1.0);
    assert!(close(jain_index(&[-1.0, 1.0]), 0.5, 1e-12));
}

/// A random cloud: 1–3 nodes, 1–4 users, 1–8 workloads over CPU, memory and disk.
fn clouds() -> impl Strategy<Value = Cloud> {
    let amount = || 0.0..100.0f64;
    let nodes = prop::collection::vec((1.0..64.0f64, 1.0..256.0f64, 1.0..500.0f64), 1..4);
    let users = 1..5usize;
    (nodes, users).prop_flat_map(move |(nodes, users)| {
        let n = nodes.len();
        let workload = (
            0..users,
            0..n,
            0.5..8.0f64,
            0.5..16.0f64,
            amount(),
            amount(),
            amount(),
        );
        prop::collection::vec(workload, 1..9).prop_map(move |ws| Cloud {
            resources: vec![
                Resource::new("cpu", ResourceKind::Cpu),
                Resource::new("mem", ResourceKind::Memory),
                Resource::new("disk", ResourceKind::Disk),
            ],
            nodes: nodes
                .iter()
                .map(|&(c, m, d)| Host::new(vec![c, m, d]))
                .collect(),
            users: vec![User::default(); users],
            workloads: ws
                .into_iter()
                .map(|(u, n, c, m, uc, um, ud)| {
                    Workload::new(u, n, vec![c, m, 0.0]).using(vec![uc, um, ud])
                })
                .collect(),
        })
    })
}

fn metrics() -> impl Strategy<Value = Metric> {
    prop_oneof![
        (1.0..3.0f64, -1.0..=1.0f64)
            .prop_map(|(penalty, discount)| Metric::Greediness { penalty, discount }),
        Just(Metric::Drf),
        Just(Metric::Asset),
    ]
}

proptest! {
    /// Non-minimalistic condition (§3.1): with the same load, a workload whose endowment
    /// matches it is never heavier than one endowed too little; strictly lighter when π > 1.
    /// It holds for greediness and asset heaviness; DRF heaviness breaks it (see below).
    #[test]
    fn a_workload_sized_to_its_load_is_never_heavier(
        x in prop::collection::vec(0.0..50.0f64, 3),
        y in prop::collection::vec(0.0..50.0f64, 3),
        rho in prop::collection::vec(0.0..=1.0f64, 3),
        w in prop::collection::vec(0.001..1.0f64, 3),
        metric in metrics().prop_filter("DRF breaks it", |m| *m != Metric::Drf),
    ) {
        let load: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        let small = vm_heaviness(&metric, &w, &x, &load, &rho);
        let matched = vm_heaviness(&metric, &w, &load, &load, &rho);
        prop_assert!(small.0 + small.1 >= matched.0 + matched.1 - 1e-9);
        if let Metric::Greediness { penalty, .. } = metric {
            let sy: f64 = w.iter().zip(&y).map(|(w, y)| w * y).sum();
            if penalty > 1.0 && sy > 1e-6 {
                prop_assert!(small.0 + small.1 > matched.0 + matched.1);
            }
        }
    }

    /// An idle workload still adds static heaviness (h_v = s + d ≥ 0, d > −s), strictly when
    /// under-use is credited at less than full weight (θ < 1).
    #[test]
    fn an_idle_workload_is_never_negative(mut cloud in clouds(), metric in metrics(), idle in 0..8usize) {
        let idle = idle % cloud.workloads.len();
        cloud.workloads[idle].usage = Some(vec![0.0; 3]);
        let config = HeavinessConfig { metric, ..HeavinessConfig::default() };
        let h = heaviness(&cloud, &config).unwrap();
        let v = &h.workloads[idle];
        prop_assert!(v.static_part > 0.0);
        prop_assert!(v.heaviness >= -1e-12, "{v:?}");
        if let Metric::Greediness { discount, .. } = metric {
            if discount.abs() < 1.0 {
                prop_assert!(v.heaviness > 0.0);
            }
        }
    }

    /// More unused quota never makes a user heavier.
    #[test]
    fn more_quota_never_makes_a_user_heavier(cloud in clouds(), extra in 0.0..100.0f64, metric in metrics()) {
        let mut cloud = cloud;
        for user in cloud.users.iter_mut() {
            user.quota = Some(vec![10.0, 10.0, 10.0]);
        }
        let config = HeavinessConfig { metric, ..HeavinessConfig::default() };
        let before = heaviness(&cloud, &config).unwrap();
        let u = cloud.workloads[0].owner;
        cloud.users[u].quota = Some(vec![10.0 + extra, 10.0 + extra, 10.0]);
        let after = heaviness(&cloud, &config).unwrap();
        prop_assert!(after.users[u].heaviness <= before.users[u].heaviness + 1e-9);
    }

    /// Knob values always lie in their ranges, whatever the heaviness.
    #[test]
    fn knobs_always_lie_in_their_ranges(
        h in prop::num::f64::ANY,
        memory in prop::option::of(any::<u64>()),
        profile in prop::sample::select(knobs::PROFILES.to_vec()),
        smoothing in prop_oneof![Just(PrioritySmoothing::None), Just(PrioritySmoothing::Blend10), (0.01..=1.0f64).prop_map(|alpha| PrioritySmoothing::Ema { alpha })],
        previous in -100.0..100.0f64,
    ) {
        let profile = KnobProfile::named(profile).unwrap();
        let config = PriorityConfig { smoothing, ..PriorityConfig::default() };
        let memory_state = knobs::PriorityMemory { target: previous, smoothed: previous };
        let (p, _) = priority(h, Some(memory_state), &config);
        prop_assert!((-50..=50).contains(&p));
        let v = profile.values(p, memory);
        prop_assert!(profile.cpu.range.contains(v.cpu));
        prop_assert!(profile.io.range.contains(v.io));
        if let (Some(value), Some(bytes)) = (v.memory, memory) {
            let range = KnobRange { lo: profile.memory_floor, hi: bytes / profile.memory_unit };
            prop_assert!(range.contains(value));
        }
    }

    /// The user heavinesses are consistent: Eq. 3 holds and the endowments sum to the cloud.
    #[test]
    fn user_heaviness_is_the_sum_of_its_parts(cloud in clouds(), metric in metrics()) {
        let config = HeavinessConfig { metric, ..HeavinessConfig::default() };
        let h = heaviness(&cloud, &config).unwrap();
        let crs = cloud_supply(&cloud);
        for (r, supply) in crs.iter().enumerate() {
            let sum: f64 = h.users.iter().map(|u| u.endowment[r]).sum();
            prop_assert!(close(sum, *supply, 1e-6 * supply));
        }
        for (u, user) in h.users.iter().enumerate() {
            let own: f64 = cloud.workloads.iter().zip(&h.workloads)
                .filter(|(v, _)| v.owner == u).map(|(_, w)| w.heaviness).sum();
            if user.active {
                prop_assert!(close(user.heaviness, own - user.entitlement, 1e-9));
            }
        }
    }
}
