//! The fairness axioms of DRF and SDRF, checked on random instances for every allocator
//! (docs/mechanisms.md, SDRF §5): feasibility, the bottleneck property, no waste, sharing incentive,
//! strategy-proofness in a stage, and "SDRF without commitments is DRF".

use fairshare_core::alloc::divisible::{water_fill, DivisibleClient, WaterFill};
use fairshare_core::alloc::tasks::{fill_tasks, fits, FillRule, TaskClient, TaskFill};
use fairshare_core::alloc::AllocError;
use fairshare_core::model::ResourceSet;
use fairshare_core::priority::{dominant_share, Policy, PriorityForm};
use proptest::prelude::*;

/// Resources of these capacities.
fn units(capacities: &[f64]) -> ResourceSet {
    ResourceSet::from_capacities(capacities).expect("positive capacities")
}

/// Water-filling on resources of capacity 1, so demands and allocations are fractions.
fn unit_fill(policy: &Policy, clients: &[DivisibleClient]) -> Result<WaterFill, AllocError> {
    let m = clients.first().map_or(1, |c| c.demand.len());
    water_fill(policy, &units(&vec![1.0; m]), clients)
}

const EPS: f64 = 1e-9;
const SDRF: Policy = Policy::Sdrf(PriorityForm::SumOfMaxes);
const SDRF_PRINTED: Policy = Policy::Sdrf(PriorityForm::MaxOfSums);
const ALL: [Policy; 5] = [
    Policy::Drf,
    Policy::WeightedDrf,
    Policy::Asset,
    SDRF,
    SDRF_PRINTED,
];

/// A commitment: 0 with probability 0.3, else U(0, 0.3) (docs/mechanisms.md, SDRF §5), or always 0.
fn commitment(with_commitments: bool) -> BoxedStrategy<f64> {
    if with_commitments {
        prop_oneof![3 => Just(0.0), 7 => 0.0..0.3f64].boxed()
    } else {
        Just(0.0).boxed()
    }
}

/// A raw weight in [0.25, 4), or always 1.
fn weight(weighted: bool) -> BoxedStrategy<f64> {
    if weighted {
        (0.25..4.0f64).boxed()
    } else {
        Just(1.0).boxed()
    }
}

/// A random divisible instance: n ∈ [1, 8] users, m ∈ [1, 4] resources (docs/mechanisms.md, SDRF §5 generators).
fn divisible_instance(
    with_commitments: bool,
    weighted: bool,
) -> impl Strategy<Value = Vec<DivisibleClient>> {
    (1usize..=4).prop_flat_map(move |m| {
        let (commitment, weight) = (commitment(with_commitments), weight(weighted));
        let client = (
            prop::collection::vec(0.01..0.6f64, m),
            prop::collection::vec(commitment, m),
            weight,
        );
        prop::collection::vec(client, 1..=8).prop_map(|users| {
            let total: f64 = users.iter().map(|u| u.2).sum();
            let n = users.len() as f64;
            users
                .into_iter()
                .map(|(demand, commitment, w)| DivisibleClient {
                    demand,
                    commitment,
                    weight: n * w / total,
                })
                .collect()
        })
    })
}

/// Eq. 1: the fraction of the true demand the allocation can serve.
fn utility(allocation: &[f64], truth: &[f64]) -> f64 {
    allocation
        .iter()
        .zip(truth)
        .map(|(o, t)| o / t)
        .fold(1.0, f64::min)
}

fn column_sums(rows: &[Vec<f64>]) -> Vec<f64> {
    let mut sums = vec![0.0; rows[0].len()];
    for row in rows {
        for (s, v) in sums.iter_mut().zip(row) {
            *s += v;
        }
    }
    sums
}

/// Feasibility, P1 (bottleneck), P4 (no waste) and the meaning of the water level.
fn check_divisible(
    policy: &Policy,
    clients: &[DivisibleClient],
    fill: &WaterFill,
) -> Result<(), TestCaseError> {
    let used = column_sums(&fill.allocations);
    prop_assert!(
        used.iter().all(|u| *u <= 1.0 + EPS),
        "over capacity: {used:?}"
    );
    let satisfied = clients
        .iter()
        .zip(&fill.allocations)
        .all(|(c, o)| utility(o, &c.demand) >= 1.0 - EPS);
    prop_assert!(
        satisfied || used.iter().any(|u| *u >= 1.0 - EPS),
        "P1: nobody blocked yet nothing full: {used:?}"
    );
    for (c, o) in clients.iter().zip(&fill.allocations) {
        let ratios: Vec<f64> = o.iter().zip(&c.demand).map(|(o, d)| o / d).collect();
        let (lo, hi) = (
            ratios.iter().copied().fold(f64::MAX, f64::min),
            ratios.iter().copied().fold(0.0, f64::max),
        );
        prop_assert!(
            hi - lo <= EPS && hi <= 1.0 + EPS,
            "P4: not proportional to demand: {ratios:?}"
        );
        if lo > EPS && lo < 1.0 - EPS && !fill.bottlenecks.is_empty() {
            // A user that is neither empty nor full sits exactly at the water level.
            let weight = if policy.uses_weights() { c.weight } else { 1.0 };
            let unit: Vec<f64> = c
                .demand
                .iter()
                .map(|d| d / dominant_share(&c.demand))
                .collect();
            let key = (policy.unit_cost(&unit) * dominant_share(o)
                + policy.commitment_level(&c.commitment))
                / weight;
            prop_assert!(
                (key - fill.level).abs() <= 1e-9,
                "level {} but user key {key}",
                fill.level
            );
        }
    }
    Ok(())
}

/// Lies a user may tell about its demand vector (docs/mechanisms.md, SDRF §5 P2).
fn lies(truth: &[f64], seed: &[f64]) -> Vec<Vec<f64>> {
    let mut out = vec![truth
        .iter()
        .map(|t| t * (0.2 + 2.8 * seed[0]))
        .collect::<Vec<_>>()];
    out.push(
        seed.iter()
            .map(|s| 0.01 + 0.89 * s)
            .take(truth.len())
            .collect(),
    );
    for r in 0..truth.len() {
        for factor in [0.5, 2.0] {
            let mut v = truth.to_vec();
            v[r] *= factor;
            out.push(v);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn divisible_is_feasible_bottlenecked_and_wasteless(
        clients in divisible_instance(true, true),
    ) {
        for policy in ALL {
            let fill = unit_fill(&policy, &clients).unwrap();
            check_divisible(&policy, &clients, &fill)?;
        }
    }

    #[test]
    fn divisible_gives_the_sharing_incentive(clients in divisible_instance(true, true)) {
        // P6: a user with no commitment gets at least what its slice ⟨w, …, w⟩ would give.
        let n = clients.len() as f64;
        for policy in [Policy::Drf, Policy::WeightedDrf, SDRF] {
            let fill = unit_fill(&policy, &clients).unwrap();
            for (c, o) in clients.iter().zip(&fill.allocations) {
                if policy.uses_commitments() && dominant_share(&c.commitment) > 0.0 {
                    continue;
                }
                let w = if policy.uses_weights() { c.weight / n } else { 1.0 / n };
                let slice = c.demand.iter().map(|d| w / d).fold(1.0, f64::min);
                prop_assert!(utility(o, &c.demand) >= slice - EPS, "{policy}: {} < {slice}", utility(o, &c.demand));
            }
        }
    }

    #[test]
    fn divisible_is_strategy_proof(
        clients in divisible_instance(true, true),
        who in any::<prop::sample::Index>(),
        seed in prop::collection::vec(0.0..1.0f64, 4),
    ) {
        // P2: misreporting the demand vector never raises true utility (commitments fixed).
        let i = who.index(clients.len());
        for policy in ALL {
            let honest = utility(&unit_fill(&policy, &clients).unwrap().allocations[i], &clients[i].demand);
            for lie in lies(&clients[i].demand, &seed) {
                let mut told = clients.clone();
                told[i].demand = lie;
                let fill = unit_fill(&policy, &told).unwrap();
                let got = utility(&fill.allocations[i], &clients[i].demand);
                prop_assert!(got <= honest + EPS, "{policy}: lying gives {got} > {honest}");
            }
        }
    }

    #[test]
    fn divisible_sdrf_without_commitments_is_drf(clients in divisible_instance(false, true)) {
        for (sdrf, drf) in [(SDRF, Policy::WeightedDrf), (SDRF_PRINTED, Policy::WeightedDrf)] {
            let a = unit_fill(&sdrf, &clients).unwrap();
            let b = unit_fill(&drf, &clients).unwrap();
            prop_assert_eq!(a, b);
        }
    }
}

/// A random task instance: per-task demands small enough that dozens of tasks fit.
fn task_instance(
    with_commitments: bool,
    weighted: bool,
) -> impl Strategy<Value = (Vec<f64>, Vec<TaskClient>)> {
    (1usize..=4).prop_flat_map(move |m| {
        let (commitment, weight) = (commitment(with_commitments), weight(weighted));
        let tasks = prop_oneof![Just(None), (0u64..40).prop_map(Some)];
        let client = (
            prop::collection::vec(0.002..0.2f64, m),
            prop::collection::vec(commitment, m),
            weight,
            tasks,
        );
        (
            prop::collection::vec(1.0..100.0f64, m),
            prop::collection::vec(client, 1..=8),
        )
            .prop_map(|(capacity, users)| {
                let total: f64 = users.iter().map(|u| u.2).sum();
                let n = users.len() as f64;
                let clients = users
                    .into_iter()
                    .map(|(share, commitment, w, tasks)| TaskClient {
                        demand: share.iter().zip(&capacity).map(|(s, c)| s * c).collect(),
                        commitment,
                        weight: n * w / total,
                        tasks,
                    })
                    .collect();
                (capacity, clients)
            })
    })
}

fn shares(demand: &[f64], capacity: &[f64]) -> Vec<f64> {
    demand.iter().zip(capacity).map(|(d, c)| d / c).collect()
}

/// Feasibility, the task form of P1, and no waste.
fn check_tasks(
    capacity: &[f64],
    clients: &[TaskClient],
    fill: &TaskFill,
    rule: FillRule,
) -> Result<(), TestCaseError> {
    let used: Vec<f64> = (0..capacity.len())
        .map(|r| fill.allocations.iter().map(|o| o[r]).sum::<f64>() / capacity[r])
        .collect();
    prop_assert!(
        used.iter().all(|u| *u <= 1.0 + EPS),
        "over capacity: {used:?}"
    );
    let mut blocked = Vec::new();
    for (i, c) in clients.iter().enumerate() {
        let expected: Vec<f64> = c.demand.iter().map(|d| d * fill.tasks[i] as f64).collect();
        prop_assert!(
            expected
                .iter()
                .zip(&fill.allocations[i])
                .all(|(a, b)| (a - b).abs() <= EPS),
            "no waste"
        );
        if Some(fill.tasks[i]) != c.tasks {
            blocked.push(!fits(&used, &shares(&c.demand, capacity)));
        }
    }
    match rule {
        // Every unsatisfied user's next task no longer fits.
        FillRule::Skip => prop_assert!(
            blocked.iter().all(|b| *b),
            "skip: a waiting task still fits"
        ),
        // The pass stopped because someone's next task did not fit.
        FillRule::HeadOfLine => prop_assert!(
            blocked.is_empty() || blocked.iter().any(|b| *b),
            "HOL stopped early"
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn tasks_are_feasible_bottlenecked_and_wasteless((capacity, clients) in task_instance(true, true)) {
        for policy in ALL {
            for rule in [FillRule::HeadOfLine, FillRule::Skip] {
                let fill = fill_tasks(&policy, &units(&capacity), &clients, rule).unwrap();
                check_tasks(&capacity, &clients, &fill, rule)?;
            }
        }
    }

    #[test]
    fn tasks_give_the_sharing_incentive((capacity, clients) in task_instance(false, true)) {
        // With indivisible tasks, user i is guaranteed its slice's ⌊w_i / D_i⌋ tasks when the
        // others' tasks are small next to its own: Σ_{j≠i} D_j + max_j D_j ≤ D_i / w_i, where D
        // is a task's dominant share. (Above that, one large task can take i's room.)
        let n = clients.len() as f64;
        let dominant: Vec<f64> = clients.iter().map(|c| dominant_share(&shares(&c.demand, &capacity))).collect();
        let largest = dominant.iter().copied().fold(0.0, f64::max);
        for policy in [Policy::Drf, Policy::WeightedDrf, SDRF, SDRF_PRINTED] {
            for rule in [FillRule::HeadOfLine, FillRule::Skip] {
                let fill = fill_tasks(&policy, &units(&capacity), &clients, rule).unwrap();
                for (i, c) in clients.iter().enumerate() {
                    let w = if policy.uses_weights() { c.weight / n } else { 1.0 / n };
                    let others: f64 = dominant.iter().sum::<f64>() - dominant[i];
                    if others + largest > dominant[i] / w {
                        continue;
                    }
                    let slice = ((w / dominant[i]) * (1.0 + EPS)).floor() as u64;
                    let owed = c.tasks.map_or(slice, |t| t.min(slice));
                    prop_assert!(fill.tasks[i] >= owed, "{policy} {rule:?}: user {i} got {} < {owed}", fill.tasks[i]);
                }
            }
        }
    }

    #[test]
    fn tasks_sdrf_without_commitments_is_drf((capacity, clients) in task_instance(false, true)) {
        for rule in [FillRule::HeadOfLine, FillRule::Skip] {
            let drf = fill_tasks(&Policy::WeightedDrf, &units(&capacity), &clients, rule).unwrap();
            for sdrf in [SDRF, SDRF_PRINTED] {
                prop_assert_eq!(&fill_tasks(&sdrf, &units(&capacity), &clients, rule).unwrap(), &drf);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn tasks_are_strategy_proof(
        (capacity, clients) in task_instance(true, true),
        who in any::<prop::sample::Index>(),
        seed in prop::collection::vec(0.0..1.0f64, 4),
    ) {
        // A user who declares other task sizes runs, of its true tasks, only as many as the
        // resources it receives can hold. Indivisibility lets a liar with larger declared tasks
        // overshoot the fair level by part of its last task (found by this test: two equal
        // users, one declaring 2.7× larger tasks, runs 252 instead of 250), so the guarantee
        // is "no gain beyond what one declared task holds"; the divisible allocator is exactly
        // strategy-proof. Under the skip rule a user that declares *smaller* tasks also fills
        // the holes that larger tasks leave (this test found 14 instead of 11 tasks), so the
        // property is stated for the paper's head-of-line rule only.
        let i = who.index(clients.len());
        let truth = &clients[i].demand;
        let rule = FillRule::HeadOfLine;
        for policy in ALL {
            let honest = fill_tasks(&policy, &units(&capacity), &clients, rule).unwrap().tasks[i];
            for lie in lies(&shares(truth, &capacity), &seed) {
                let mut told = clients.clone();
                told[i].demand = lie.iter().zip(&capacity).map(|(s, c)| s * c).collect();
                let fill = fill_tasks(&policy, &units(&capacity), &told, rule).unwrap();
                let runnable = fill.allocations[i]
                    .iter()
                    .zip(truth)
                    .map(|(o, t)| ((o / t) * (1.0 + EPS)).floor())
                    .fold(f64::INFINITY, f64::min) as u64;
                let runnable = clients[i].tasks.map_or(runnable, |t| runnable.min(t));
                let one_task = told[i].demand.iter().zip(truth).map(|(l, t)| l / t);
                let one_task = one_task.fold(f64::INFINITY, f64::min).ceil();
                prop_assert!(
                    runnable as f64 <= honest as f64 + one_task,
                    "{policy}: lying runs {runnable} > {honest} + {one_task} tasks"
                );
            }
        }
    }
}
