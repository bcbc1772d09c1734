//! Grid Engine's share tree (`sgeee.c`, the classic share-tree pass): each user's share of the
//! share-tree tickets. Measured against a real Grid Engine 8.1.9 in
//! `../shared/spec/gridengine.md` §4.3, whose ticket counts the tests below reproduce.
//!
//! For each user, `m` is its share down the tree (its shares over its siblings', times its
//! parent's) and `u` its decayed usage. Usage below 1 counts as `m` (Grid Engine's
//! `SGE_MIN_USAGE`), and a user's proportion is `m² / u`. When a user's proportion of the sum
//! exceeds `compensation_factor` times its target (`m` over the sum of `m`), its usage is raised
//! by that excess before the second pass; its tickets are then `m² / u` over the sum. Grid
//! Engine counts only the nodes with jobs; these standings count every user, as if each
//! waited (the same numbers when every user of the tree has a job).

use super::entry::{Columns, Factor, FunctionEntry, FunctionParam};
use super::{Association, Standing};

/// Grid Engine's share tree: a user's factor is its share of the share-tree tickets (the
/// tickets of its first job are the factor times `weight_tickets_share`).
pub const GRID_ENGINE: FunctionEntry = FunctionEntry {
    name: "grid-engine",
    about: "Grid Engine's share tree: each user's share of the tickets, m² / usage over the sum (usage below 1 counts as m)",
    params: &[FunctionParam {
        key: "compensation",
        about: "compensation_factor: how many times its target share a user's proportion may reach before its usage is raised (Grid Engine's 5; 0: never)",
        default: 5.0,
        min: 0.0,
    }],
    factor: Factor::Whole(share_of_tickets),
    columns: Columns {
        effective_usage: false,
        level_fs: false,
    },
    orders_by_usage_over_shares: false,
};

/// The least usage Grid Engine counts (`SGE_MIN_USAGE`): below it, a user's usage is its share.
const MIN_USAGE: f64 = 1.0;

/// `m² / usage`, usage below [`MIN_USAGE`] counted as `m` (0 when both are 0).
fn proportion(m: f64, usage: f64) -> f64 {
    let usage = if usage < MIN_USAGE {
        MIN_USAGE * m
    } else {
        usage
    };
    if usage > 0.0 {
        m * m / usage
    } else {
        0.0
    }
}

/// Every user's share of the tickets as its factor, an account's the sum of its users'.
fn share_of_tickets(standings: &mut [Standing], tree: &[Association], values: &[f64]) {
    let users: Vec<usize> = (1..tree.len()).filter(|&i| tree[i].user).collect();
    let m = |i: usize| standings[i].normalized_shares;
    let first: Vec<f64> = (users.iter())
        .map(|&i| proportion(m(i), standings[i].raw_usage))
        .collect();
    let sum_m: f64 = users.iter().map(|&i| m(i)).sum();
    let sum_first: f64 = first.iter().sum();
    let compensation = values[0];
    let adjusted: Vec<f64> = (users.iter().zip(&first))
        .map(|(&i, &p)| {
            let (m, usage) = (m(i), standings[i].raw_usage);
            let target = if sum_m > 0.0 { m / sum_m } else { 0.0 };
            let current = if sum_first > 0.0 { p / sum_first } else { 0.0 };
            let over = target > 0.0 && compensation > 0.0 && current > compensation * target;
            match over {
                true => proportion(
                    m,
                    usage.max(MIN_USAGE * m) * current / (compensation * target),
                ),
                false => proportion(m, usage),
            }
        })
        .collect();
    let sum: f64 = adjusted.iter().sum();
    for s in standings.iter_mut() {
        s.factor = 0.0;
    }
    for (&i, a) in users.iter().zip(adjusted) {
        standings[i].factor = if sum > 0.0 { a / sum } else { 0.0 };
    }
    for i in (1..tree.len()).rev() {
        if let Some(p) = tree[i].parent {
            let own = standings[i].factor;
            standings[p].factor += own;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::RawShares;
    use crate::priority::fairshare::{standings, Association, FairshareFunction};

    /// The spec's share tree, Root / ge (100) / gea 50, geb 30, gec 20, with `usage`.
    fn tree(usage: [f64; 3]) -> Vec<Association> {
        let node = |parent, shares: f64, user, usage| Association {
            parent,
            shares: RawShares::Count(shares),
            user,
            usage,
        };
        vec![
            node(None, 1.0, false, 0.0),
            node(Some(0), 100.0, false, 0.0),
            node(Some(1), 50.0, true, usage[0]),
            node(Some(1), 30.0, true, usage[1]),
            node(Some(1), 20.0, true, usage[2]),
        ]
    }

    /// Each user's share-tree tickets out of 10,000 (weight_tickets_share), as `qstat -ext`
    /// prints a user's first job's (truncated).
    fn tickets(usage: [f64; 3], function: &str) -> Vec<u64> {
        let s = standings(&tree(usage), function.parse::<FairshareFunction>().unwrap()).unwrap();
        s[2..]
            .iter()
            .map(|s| (s.factor * 10_000.0) as u64)
            .collect()
    }

    #[test]
    fn grid_engines_measured_tickets_are_reproduced() {
        // gridengine.md §4.2 and §4.3: no usage; after gea and geb ran; two snapshots later,
        // gec's second job running (so its third, the one measured, is its second: half).
        assert_eq!(tickets([0.0; 3], "grid-engine"), [5000, 3000, 2000]);
        assert_eq!(tickets([269.2, 89.7, 0.0], "grid-engine"), [45, 49, 9904]);
        let t = tickets([267.7, 89.2, 10.0], "grid-engine");
        assert_eq!((t[0], t[1], t[2] / 2), (1571, 1697, 3365));
        // The last row's usage is printed to 0.1 only: 2372 and 2561 from it, against 2370
        // and 2560 measured (from share_mon's full figures).
        let t = tickets([266.9, 89.0, 20.0], "grid-engine");
        assert!(
            t[0].abs_diff(2370) <= 3 && t[1].abs_diff(2560) <= 3,
            "{t:?}"
        );
    }

    #[test]
    fn a_user_far_past_its_target_has_its_usage_raised() {
        // gea holds a twentieth of the tree and used little, the others a lot: its proportion
        // passes five times its target, and the compensation pulls it back.
        let users = |usage: [f64; 3], function: &str| {
            let mut t = tree(usage);
            t[2].shares = RawShares::Count(2.5);
            let f = function.parse::<FairshareFunction>().unwrap();
            standings(&t, f).unwrap()[2].factor
        };
        let raised = users([2.0, 5_000.0, 5_000.0], "grid-engine");
        let free = users([2.0, 5_000.0, 5_000.0], "grid-engine:compensation=0");
        // By hand: m = 2.5/52.5, proportions m²/2, (30/52.5)²/5000, (20/52.5)²/5000; gea's
        // 0.9232 of their sum is past 5 × its target 0.0476, so its usage 2 is raised to
        // 2 × 0.9232 / 0.2381 = 7.757 and its share falls to 0.7561.
        assert!((free - 0.9232).abs() < 1e-4, "{free}");
        assert!((raised - 0.7561).abs() < 1e-4, "{raised}");
        let accounts = standings(&tree([1.0, 2.0, 3.0]), "grid-engine".parse().unwrap()).unwrap();
        assert!(
            (accounts[1].factor - 1.0).abs() < 1e-12,
            "ge holds every ticket"
        );
    }

    proptest::proptest! {
        /// On any flat tree, the users' factors are shares of the tickets (none negative, all
        /// summing to 1), and without compensation each is `m² / u` (usage below 1 as `m`)
        /// over the sum, worked out here the plain way.
        #[test]
        fn the_factors_are_shares_of_the_tickets(
            users in proptest::collection::vec((1u32..100, 0.0f64..1000.0), 1..8),
        ) {
            let mut tree = vec![Association { parent: None, shares: RawShares::Count(1.0), user: false, usage: 0.0 }];
            for &(shares, usage) in &users {
                tree.push(Association { parent: Some(0), shares: RawShares::Count(f64::from(shares)), user: true, usage });
            }
            for function in ["grid-engine", "grid-engine:compensation=0"] {
                let s = standings(&tree, function.parse::<FairshareFunction>().unwrap()).unwrap();
                let sum: f64 = s[1..].iter().map(|s| s.factor).sum();
                proptest::prop_assert!((sum - 1.0).abs() < 1e-9, "{function}: {sum}");
                proptest::prop_assert!(s[1..].iter().all(|s| s.factor >= 0.0));
            }
            let total: f64 = users.iter().map(|&(sh, _)| f64::from(sh)).sum();
            let plain: Vec<f64> = (users.iter())
                .map(|&(sh, u)| {
                    let m = f64::from(sh) / total;
                    m * m / if u < 1.0 { m } else { u }
                })
                .collect();
            let plain_sum: f64 = plain.iter().sum();
            let free = "grid-engine:compensation=0".parse::<FairshareFunction>().unwrap();
            let s = standings(&tree, free).unwrap();
            for (got, want) in s[1..].iter().zip(&plain) {
                proptest::prop_assert!((got.factor - want / plain_sum).abs() < 1e-9);
            }
        }
    }
}
