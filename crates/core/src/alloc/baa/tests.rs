//! BAA against the spec's worked examples (§3, §4.1) and the properties it claims.

use super::*;
use proptest::prelude::*;

/// The seed's four users (CPU and memory per task), on C = (100, 200), demands far above the
/// capacity (× 1000).
fn seed_users() -> Vec<Vec<f64>> {
    [(0.2, 0.8), (0.4, 0.6), (0.7, 0.3), (0.9, 0.1)]
        .iter()
        .map(|&(m, h)| vec![m * 1000.0, h * 1000.0])
        .collect()
}

const C: [f64; 2] = [100.0, 200.0];

/// Spec §3: the capacity-consistent rule puts u2, u3, u4 in the CPU set and u1 in the memory
/// set; the seed's example rule (θ = 0.3) gives the seed's own, contradictory, result.
#[test]
fn classification_of_the_seeds_users() {
    let sets = |rule| {
        seed_users()
            .iter()
            .map(|d| bottleneck(d, &C, rule).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(sets(Classification::Capacity), [1, 0, 0, 0]);
    assert_eq!(
        sets(Classification::PaperExample { theta: 0.3 }),
        [0, 0, 0, 1]
    );
    // A tie goes to the CPU set: m = 1/3 exactly.
    assert_eq!(bottleneck(&[1.0, 2.0], &C, Classification::Capacity), Ok(0));
    assert!(bottleneck(
        &[1.0, 2.0, 3.0],
        &[1.0; 3],
        Classification::PaperExample { theta: 0.3 }
    )
    .is_err());
}

/// Spec §4.1: levels p_d = 25, p_s = 100; u1 ⟨25, 100⟩, u2 ⟨25, 37.5⟩, u3 ⟨25, 10.714⟩,
/// u4 ⟨25, 2.778⟩; CPU full, memory 75.5 %. The greedy raise stops at p_d = 29.167, p_s = 50.
#[test]
fn the_seeds_example_by_the_programme_and_by_the_greedy_raise() {
    let baa = allocate(&seed_users(), &C, Classification::Capacity, Solver::Exact).unwrap();
    let absolute: Vec<Vec<f64>> = (baa.allocations.iter())
        .map(|a| a.iter().zip(&C).map(|(x, c)| x * c).collect())
        .collect();
    let expected = [[25.0, 100.0], [25.0, 37.5], [25.0, 10.714], [25.0, 2.778]];
    for (got, want) in absolute.iter().zip(expected) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-3, "{absolute:?}");
        }
    }
    let used = |a: &[Vec<f64>], k: usize| a.iter().map(|x| x[k]).sum::<f64>();
    assert!((used(&baa.allocations, 0) - 1.0).abs() < 1e-9);
    assert!((used(&baa.allocations, 1) - 150.992 / 200.0).abs() < 1e-4);
    let greedy = allocate(&seed_users(), &C, Classification::Capacity, Solver::Greedy).unwrap();
    assert!(
        (greedy.level[0] * 100.0 - 29.1667).abs() < 1e-3,
        "{:?}",
        greedy.level
    );
    assert!(
        (greedy.level[1] * 200.0 - 50.0).abs() < 1e-9,
        "{:?}",
        greedy.level
    );
    // The seed's throughput: each user's CPU over its CPU part m_i.
    let throughput = |b: &Baa| {
        (b.allocations.iter().zip(seed_users()))
            .map(|(a, d)| a[0] * C[0] / (d[0] / 1000.0))
            .sum::<f64>()
    };
    assert!((throughput(&baa) - 250.992).abs() < 1e-3);
    assert!((throughput(&greedy) - 209.49).abs() < 1e-2);
}

/// The seed's example rule makes the equal-share point itself infeasible: u1, memory-heavy,
/// sits in the CPU set and would use 2 × its CPU level of memory, more than the memory set
/// gets.
#[test]
fn the_seeds_rule_cannot_give_every_set_its_share() {
    let error = allocate(
        &seed_users(),
        &C,
        Classification::PaperExample { theta: 0.3 },
        Solver::Exact,
    );
    assert!(matches!(error, Err(BaaError::Infeasible(_))), "{error:?}");
}

#[test]
fn bad_input_is_refused() {
    assert!(allocate(
        &[vec![1.0, 0.0]],
        &C,
        Classification::Capacity,
        Solver::Exact
    )
    .is_err());
    assert!(allocate(
        &[vec![1.0, 1.0]],
        &[1.0, -1.0],
        Classification::Capacity,
        Solver::Exact
    )
    .is_err());
    assert!(allocate(&[vec![1.0]], &C, Classification::Capacity, Solver::Exact).is_err());
}

/// A user that needs less than its level gets its demand only.
#[test]
fn a_small_demand_is_met_and_no_more() {
    let users = vec![vec![10.0, 1.0], vec![1000.0, 100.0]];
    let baa = allocate(
        &users,
        &[100.0, 100.0],
        Classification::Capacity,
        Solver::Exact,
    )
    .unwrap();
    assert!(
        (baa.allocations[0][0] - 0.1).abs() < 1e-12,
        "{:?}",
        baa.allocations
    );
}

/// Users of two or three resources with demands far above the capacity.
fn users(m: usize) -> impl Strategy<Value = Vec<Vec<f64>>> {
    prop::collection::vec(prop::collection::vec(0.01..1.0f64, m), 1..12).prop_map(|u| {
        u.into_iter()
            .map(|d| d.iter().map(|x| x * 1e4).collect())
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Capacity is never exceeded; some resource is full (Pareto efficiency: with every
    /// demand above capacity, a level could otherwise rise); every user gets at least its
    /// equal share of its bottleneck (sharing incentive) and exactly its set's level (equality
    /// within a set); no user uses more of another set's bottleneck than that set's users get
    /// (envy-freeness across sets).
    #[test]
    fn the_claimed_properties_hold(m in 2usize..4, raw in users(3)) {
        let raw: Vec<Vec<f64>> = raw.into_iter().map(|d| d[..m].to_vec()).collect();
        let capacity = vec![1.0; m];
        let baa = allocate(&raw, &capacity, Classification::Capacity, Solver::Exact).unwrap();
        let n = raw.len() as f64;
        let used: Vec<f64> = (0..m).map(|k| baa.allocations.iter().map(|a| a[k]).sum()).collect();
        prop_assert!(used.iter().all(|u| *u <= 1.0 + 1e-9), "{used:?}");
        prop_assert!(used.iter().any(|u| *u >= 1.0 - 1e-9), "{used:?}");
        for (a, &r) in baa.allocations.iter().zip(&baa.bottleneck) {
            prop_assert!(a[r] >= 1.0 / n - 1e-9);
            prop_assert!((a[r] - baa.level[r]).abs() < 1e-9);
            for (s, level) in baa.level.iter().enumerate() {
                if s != r && *level > 0.0 {
                    prop_assert!(a[s] <= level + 1e-9, "uses {} of {s}, whose users get {level}", a[s]);
                }
            }
        }
        let greedy = allocate(&raw, &capacity, Classification::Capacity, Solver::Greedy).unwrap();
        let g_used: Vec<f64> = (0..m).map(|k| greedy.allocations.iter().map(|a| a[k]).sum()).collect();
        prop_assert!(g_used.iter().all(|u| *u <= 1.0 + 1e-9), "{g_used:?}");
    }

    /// The per-set sums kept as users join give the same levels as building them at once, in
    /// any order of arrival.
    #[test]
    fn arrivals_in_any_order_give_the_same_levels(raw in users(2), seed in any::<u64>()) {
        let capacity = [1.0, 1.0];
        let mut order: Vec<usize> = (0..raw.len()).collect();
        let mut s = seed;
        for i in (1..order.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(i, (s >> 33) as usize % (i + 1));
        }
        let mut sums = SetSums::new(2);
        for &u in &order {
            let set = bottleneck(&raw[u], &capacity, Classification::Capacity).unwrap();
            sums.add(set, &raw[u]);
        }
        let once = allocate(&raw, &capacity, Classification::Capacity, Solver::Exact).unwrap();
        let level = sums.levels(&capacity, raw.len(), &[1.0, 1.0], Solver::Exact).unwrap();
        for (a, b) in level.iter().zip(&once.level) {
            prop_assert!((a - b).abs() < 1e-9, "{level:?} vs {:?}", once.level);
        }
    }
}

/// How many tasks a user whose tasks truly need `truth` (fractions of capacity) runs on
/// `allocation`.
fn tasks(allocation: &[f64], truth: &[f64]) -> f64 {
    allocation
        .iter()
        .zip(truth)
        .map(|(a, d)| a / d)
        .fold(f64::INFINITY, f64::min)
}

/// BAA is not strategy-proof (found by a property test that lied for one user at random;
/// docs/baa.md). User 0 truly needs memory 40 times as much as CPU. By claiming a nearly
/// balanced demand it stays in the memory set but raises the set's weight in the utilisation
/// objective, so the memory set's level rises, and it runs more of its true tasks than by
/// telling the truth.
#[test]
fn a_user_gains_by_misreporting_its_demand() {
    let capacity = [1.0, 1.0];
    let truth = vec![
        vec![100.0, 4000.0],
        vec![4550.0, 7230.0],
        vec![7370.0, 4990.0],
    ];
    let mut lie = truth.clone();
    lie[0] = vec![6500.0, 6570.0];
    let run = |users: &[Vec<f64>]| {
        let baa = allocate(users, &capacity, Classification::Capacity, Solver::Exact).unwrap();
        tasks(&baa.allocations[0], &truth[0])
    };
    let (honest, dishonest) = (run(&truth), run(&lie));
    assert!(dishonest > 1.05 * honest, "{honest} vs {dishonest}");
}

/// Two sets whose envy constraints let each other rise by ever smaller steps: the greedy raise
/// stops in bounded time, at a feasible point (found in review: it used to run for about
/// 3e10 rounds).
#[test]
fn the_greedy_raise_ends_when_two_sets_push_each_other() {
    let users: Vec<Vec<f64>> = [[1.0, 1.0], [1.0, 0.001], [1.0, 1.0 + 1e-11], [0.001, 1.0]]
        .iter()
        .map(|d| d.iter().map(|x| x * 1e4).collect())
        .collect();
    let baa = allocate(
        &users,
        &[1.0, 1.0],
        Classification::Capacity,
        Solver::Greedy,
    )
    .unwrap();
    for k in 0..2 {
        let used: f64 = baa.allocations.iter().map(|a| a[k]).sum();
        assert!(used <= 1.0 + 1e-9, "{used}");
    }
}
