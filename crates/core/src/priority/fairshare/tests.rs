//! The fairshare factors checked by hand against Slurm's, PBS's and MetaCentrum's numbers, and
//! their properties on random trees.

use super::fair_tree::cmp_products;
use super::*;
use std::cmp::Ordering;

fn account(parent: Option<usize>, shares: impl Into<RawShares>) -> Association {
    Association {
        parent,
        shares: shares.into(),
        usage: 0.0,
        user: false,
    }
}

fn user(parent: usize, shares: impl Into<RawShares>, usage: f64) -> Association {
    Association {
        parent: Some(parent),
        shares: shares.into(),
        usage,
        user: true,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

/// The tree of Slurm's classic fairshare example (Figure 3 of
/// <https://slurm.schedmd.com/classic_fair_share.html>, section "Example"): root → A (40)
/// → B (30) → user 1, A → C (10) → users 2 and 3; root → D (60) → E (25) → user 4, D → F
/// (35) → user 5; usage 0.2, 0.25, 0, 0.25, 0. With `rest`, an account without shares
/// holds the 0.3 of the machine's usage the page leaves to nobody, so that the users'
/// normalised usage is the page's own numbers.
fn slurm_example(rest: bool) -> (Vec<Association>, [usize; 5]) {
    let mut tree = vec![
        account(None, 1.0),
        account(Some(0), 40.0), // 1 A
        account(Some(1), 30.0), // 2 B
        account(Some(1), 10.0), // 3 C
        account(Some(0), 60.0), // 4 D
        account(Some(4), 25.0), // 5 E
        account(Some(4), 35.0), // 6 F
        user(2, 1.0, 0.2),
        user(3, 1.0, 0.25),
        user(3, 1.0, 0.0),
        user(5, 1.0, 0.25),
        user(6, 1.0, 0.0),
    ];
    if rest {
        tree.push(account(Some(0), 0.0));
        tree.push(user(12, 1.0, 0.3));
    }
    (tree, [7, 8, 9, 10, 11])
}

/// Slurm classic, recomputed from <https://slurm.schedmd.com/classic_fair_share.html>
/// ("The Slurm Fair-Share Formula" and "Example"): normalised shares 0.3, 0.05, 0.05,
/// 0.25, 0.35; effective usage 0.3875, 0.275, 0.15, 0.25, 0.1458; factors 0.408479,
/// 0.022097, 0.125, 0.5, 0.749154; accounts just under the root use their own usage.
#[test]
fn slurm_classic_matches_slurms_worked_example() {
    let (tree, users) = slurm_example(true);
    let s = standings(&tree, FairshareFunction::SLURM_CLASSIC).unwrap();
    let column = |f: fn(&Standing) -> f64| users.map(|u| f(&s[u]));
    let expect = |got: [f64; 5], want: [f64; 5]| {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-4, "{got:?} vs {want:?}");
        }
    };
    expect(
        column(|x| x.normalized_shares),
        [0.3, 0.05, 0.05, 0.25, 0.35],
    );
    expect(column(|x| x.normalized_usage), [0.2, 0.25, 0.0, 0.25, 0.0]);
    expect(
        column(|x| x.effective_usage),
        [0.3875, 0.275, 0.15, 0.25, 0.25 * 35.0 / 60.0],
    );
    expect(
        column(|x| x.factor),
        [0.408479, 0.022097, 0.125, 0.5, 0.749154],
    );
    let accounts = [2, 3, 5, 6].map(|a| s[a].effective_usage);
    expect(
        [
            accounts[0],
            accounts[1],
            accounts[2],
            accounts[3],
            s[1].effective_usage,
        ],
        [0.3875, 0.3, 0.25, 0.25 * 35.0 / 60.0, 0.45],
    );
    // User 5 is the most under-served, as the page concludes.
    assert_eq!(s[11].rank, Some(1));
}

/// Fair Tree on the same tree (no worked numbers on
/// <https://slurm.schedmd.com/fair_tree.html>, so recomputed from its "Level Fairshare
/// Calculation" and "Algorithm": LF = S / U among siblings, ∞ without usage, siblings
/// visited in decreasing LF, users ranked in pre-order, factor rank / user count). At the
/// root D (0.6 / (0.25 / 0.7) = 1.68) goes before A (0.4 / (0.45 / 0.7) = 0.62); in D, F
/// (no usage) before E; in A, B (0.75 / (0.2 / 0.45) = 1.69) before C (0.45); in C, user 3
/// (no usage) before user 2.
#[test]
fn fair_tree_ranks_slurms_example_tree_as_its_algorithm_says() {
    let (tree, users) = slurm_example(false);
    let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    assert!((s[4].level_fs - 0.6 / (0.25 / 0.7)).abs() < 1e-9);
    assert!((s[1].level_fs - 0.4 / (0.45 / 0.7)).abs() < 1e-9);
    assert!((s[2].level_fs - 0.75 / (0.2 / 0.45)).abs() < 1e-9);
    assert!(s[6].level_fs.is_infinite() && s[9].level_fs.is_infinite());
    assert_eq!(users.map(|u| s[u].rank), [3, 5, 4, 2, 1].map(Some));
    let factors = users.map(|u| s[u].factor);
    assert_eq!(factors, [0.6, 0.2, 0.4, 0.8, 1.0]);
    // sshare's Fair Tree columns: shares among siblings, usage over the parent's.
    assert!((s[2].normalized_shares - 0.75).abs() < 1e-12);
    assert!((s[2].effective_usage - 0.2 / 0.45).abs() < 1e-12);
    assert!((s[4].normalized_shares - 0.6).abs() < 1e-12);
    assert!((s[4].effective_usage - 0.25 / 0.7).abs() < 1e-12);
    let classic = standings(&tree, FairshareFunction::SLURM_CLASSIC).unwrap();
    assert!((classic[2].normalized_shares - 0.75 * 0.4).abs() < 1e-12);
}

/// Spec §8.5: two users with equal shares and usages 1000 and 4000.
#[test]
fn two_users_under_every_function() {
    let tree = [
        account(None, 1.0),
        user(0, 1.0, 1000.0),
        user(0, 1.0, 4000.0),
    ];
    let factor = |f| {
        standings(&tree, f)
            .unwrap()
            .iter()
            .map(|s| s.factor)
            .collect::<Vec<f64>>()
    };
    let t = factor(FairshareFunction::METACENTRUM);
    assert!(close(t[1], 5.0e-4) && close(t[2] * 1e4, 1.25), "{t:?}");
    let pbs = factor(FairshareFunction::PBS);
    assert!(close(pbs[1], 0.7579) && close(pbs[2], 0.3299), "{pbs:?}");
    let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    assert!(close(s[1].level_fs, 2.5) && close(s[2].level_fs, 0.625));
    assert_eq!((s[1].rank, s[2].rank), (Some(1), Some(2)));
    // Children of the root: Slurm classic's effective usage is their normalised usage.
    let classic = standings(&tree, FairshareFunction::SLURM_CLASSIC).unwrap();
    assert!(close(classic[1].effective_usage, 0.2));
    assert!(close(classic[1].factor, 0.7579));
    // After one 72 h halving: T doubles but keeps 4 : 1; the others do not move.
    let halved = [
        account(None, 1.0),
        user(0, 1.0, 500.0),
        user(0, 1.0, 2000.0),
    ];
    let t2: Vec<f64> = standings(&halved, FairshareFunction::METACENTRUM)
        .unwrap()
        .iter()
        .map(|s| s.factor)
        .collect();
    assert!(close(t2[1] / t[1], 2.0) && close(t2[1] / t2[2], 4.0));
    let pbs2: Vec<f64> = standings(&halved, FairshareFunction::PBS)
        .unwrap()
        .iter()
        .map(|s| s.factor)
        .collect();
    assert!(close(pbs2[1], pbs[1]) && close(pbs2[2], pbs[2]));
}

/// Under an account, Slurm classic's effective usage moves towards the parent's by the
/// user's share of its siblings' shares; Fair Tree keeps a whole account's users together.
#[test]
fn accounts_shape_the_factors() {
    // root ─ physics (shares 1, usage 900: alice 800, bob 100) and chemistry (1, usage 100: carol).
    let tree = [
        account(None, 1.0),
        account(Some(0), 1.0),
        account(Some(0), 1.0),
        user(1, 1.0, 800.0),
        user(1, 1.0, 100.0),
        user(2, 1.0, 100.0),
    ];
    let s = standings(&tree, FairshareFunction::SLURM_CLASSIC).unwrap();
    assert!(close(s[1].effective_usage, 0.9), "first level: its own");
    // bob: 0.1 + (0.9 − 0.1) · 1/2 = 0.5; normalised shares 1/4: 2^(−2).
    assert!(close(s[4].effective_usage, 0.5) && close(s[4].factor, 0.25));
    let fair_tree = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    // chemistry (0.5 / 0.1 = 5) before physics (0.5 / 0.9); in physics bob before alice.
    assert_eq!(fair_tree[5].rank, Some(1));
    assert_eq!(fair_tree[4].rank, Some(2));
    assert_eq!(fair_tree[3].rank, Some(3));
    assert!(close(fair_tree[5].factor, 1.0) && close(fair_tree[3].factor, 1.0 / 3.0));
}

/// Idle sibling users tie (and share a rank) under Fair Tree; a user without shares is
/// last under every function, as Slurm puts it.
#[test]
fn ties_and_users_without_shares() {
    let tree = [
        account(None, 1.0),
        user(0, 1.0, 0.0),
        user(0, 1.0, 0.0),
        user(0, 1.0, 50.0),
        user(0, 0.0, 0.0),
    ];
    let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    let ranks: Vec<Option<usize>> = s.iter().map(|x| x.rank).collect();
    assert_eq!(ranks, [None, Some(1), Some(1), Some(3), Some(4)]);
    assert_eq!(s[1].factor, s[2].factor);
    assert_eq!(s[4].level_fs, 0.0);
    for f in [FairshareFunction::PBS, FairshareFunction::SLURM_CLASSIC] {
        assert_eq!(standings(&tree, f).unwrap()[4].factor, 0.0, "{f:?}");
    }
}

/// Two accounts whose level fairshares tie, as a live Slurm 22.05 ranked them: the first
/// user reached under the second account shares the rank last given (bob with carol), and
/// the tied accounts' users are not merged (carol stays above alice).
#[test]
fn a_tied_account_passes_its_tie_to_its_first_user() {
    let tree = [
        account(None, 1.0),
        account(Some(0), 1.0),
        user(1, 1.0, 3.0),
        user(1, 1.0, 0.0),
        account(Some(0), 3.0),
        user(4, 1.0, 6.0),
        user(4, 1.0, 3.0),
    ];
    let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    assert_eq!(s[1].level_fs, s[4].level_fs);
    let ranks: Vec<Option<usize>> = s.iter().map(|x| x.rank).collect();
    assert_eq!(
        ranks,
        [None, None, Some(2), Some(1), None, Some(4), Some(2)]
    );
    let factors: Vec<f64> = s.iter().map(|x| x.factor).collect();
    assert_eq!(factors, [0.0, 0.0, 0.75, 1.0, 0.0, 0.25, 0.75]);
}

/// Slurm compares level fairshares exactly: shares 1 and 3 of a level of 10 with usage 1
/// and 3 are equal only in exact arithmetic (`3/10` in a `double` is below three times
/// `1/10`), so Slurm ranks the first above; the same shares and usage tie.
#[test]
fn level_fairshares_compare_as_slurms_do() {
    // Usage 1, 3 and 6 of 10: `6/10` is exactly twice `3/10` in a `double`,
    // so those two tie, as Slurm's quotients do.
    let tree = [
        account(None, 1.0),
        user(0, 1.0, 1.0),
        user(0, 3.0, 3.0),
        user(0, 6.0, 6.0),
        user(0, 0.0, 0.0),
    ];
    let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    let ranks: Vec<_> = s.iter().map(|x| x.rank).collect();
    assert_eq!(ranks, [None, Some(1), Some(2), Some(2), Some(4)]);
    let twins = [
        account(None, 1.0),
        user(0, 3.0, 3.0),
        user(0, 3.0, 3.0),
        user(0, 4.0, 1.0),
    ];
    let s = standings(&twins, FairshareFunction::FAIR_TREE).unwrap();
    assert_eq!(s[1].rank, s[2].rank, "the same shares and usage tie");
    assert_eq!(cmp_products(0.1, 3.0, 0.3, 1.0), Ordering::Greater);
    assert_eq!(cmp_products(0.5, 4.0, 2.0, 1.0), Ordering::Equal);
    assert_eq!(
        cmp_products(f64::MIN_POSITIVE / 4.0, 2.0, f64::MIN_POSITIVE, 0.5),
        Ordering::Equal
    );
    assert_eq!(cmp_products(0.0, 3.0, 1e-300, 1e-10), Ordering::Less);
}

/// The tree of `../shared/spec/slurm.md` (seen on a live Slurm 22.05): under root, the
/// idle `root` user; account `a` (1 share) with a 0-share user alone under it; account `b`
/// (1 share) with a `parent` user and a 1-share sibling; both accounts used the cluster, `a`
/// less. `sshare` gave FairShare 0.75 to the 0-share user (its account ranked first), 0.5 to
/// the `parent` user and 0.25 to its sibling.
#[test]
fn parent_and_zero_share_users_are_ranked_as_slurm_ranks_them() {
    let tree = [
        account(None, 1.0),
        user(0, 1.0, 0.0),               // 1 the root user
        account(Some(0), 1.0),           // 2 a
        user(2, 0.0, 100.0),             // 3 zero
        account(Some(0), 1.0),           // 4 b
        user(4, RawShares::Parent, 0.0), // 5 follower
        user(4, 1.0, 500.0),             // 6 worker
    ];
    let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
    let factors: Vec<f64> = [1, 3, 5, 6].iter().map(|&i| s[i].factor).collect();
    assert_eq!(factors, [1.0, 0.75, 0.5, 0.25]);
    assert_eq!(s[5].level_fs, f64::INFINITY);
    assert_eq!(s[3].level_fs, 0.0);
    assert_eq!(
        s[5].normalized_shares,
        1.0 / 3.0,
        "b's shares, as sshare prints them"
    );
    // Classic: the 0-share user has factor 0; the `parent` user its account's factor.
    let c = standings(&tree, FairshareFunction::SLURM_CLASSIC).unwrap();
    assert_eq!(c[3].factor, 0.0);
    assert_eq!(c[5].factor, c[4].factor);
    assert_eq!(c[5].normalized_shares, c[4].normalized_shares);
    // The `parent` user adds no shares to b's level, so its sibling holds all of b's.
    assert!((c[6].factor - c[4].factor).abs() < 1e-12 && c[6].factor > 0.0);
}

/// A `parent` account's children compete among its parent's, its shares adding nothing.
#[test]
fn a_parent_accounts_children_join_its_parents_level() {
    let flat = [
        account(None, 1.0),
        account(Some(0), 1.0),
        user(1, 1.0, 10.0),
        user(1, 2.0, 10.0),
        user(1, 1.0, 40.0),
    ];
    let nested = [
        account(None, 1.0),
        account(Some(0), 1.0),
        user(1, 1.0, 10.0),
        account(Some(1), RawShares::Parent),
        user(3, 2.0, 10.0),
        user(3, 1.0, 40.0),
    ];
    for f in [
        FairshareFunction::FAIR_TREE,
        FairshareFunction::SLURM_CLASSIC,
        FairshareFunction::PBS,
    ] {
        let a = standings(&flat, f).unwrap();
        let b = standings(&nested, f).unwrap();
        for (i, j) in [(2, 2), (3, 4), (4, 5)] {
            assert_eq!(a[i].rank, b[j].rank, "{f:?}");
            assert!((a[i].factor - b[j].factor).abs() < 1e-12, "{f:?}");
            assert!(
                (a[i].normalized_shares - b[j].normalized_shares).abs() < 1e-12,
                "{f:?}"
            );
        }
    }
}

#[test]
fn unusable_trees_are_refused() {
    assert_eq!(
        standings(&[user(0, 1.0, 1.0)], FairshareFunction::PBS),
        Err(TreeError::Order(0))
    );
    let negative = [account(None, 1.0), user(0, -1.0, 1.0)];
    assert_eq!(
        standings(&negative, FairshareFunction::PBS),
        Err(TreeError::Value(1))
    );
}

mod properties {
    use super::super::*;
    use proptest::prelude::*;

    /// A root, two accounts, and users under them with shares and usage.
    fn tree() -> impl Strategy<Value = Vec<Association>> {
        prop::collection::vec((0usize..2, 1u32..10, 0u32..1000), 2..8).prop_map(|users| {
            let mut tree = vec![
                Association {
                    parent: None,
                    shares: RawShares::Count(1.0),
                    usage: 0.0,
                    user: false,
                },
                Association {
                    parent: Some(0),
                    shares: RawShares::Count(2.0),
                    usage: 0.0,
                    user: false,
                },
                Association {
                    parent: Some(0),
                    shares: RawShares::Count(1.0),
                    usage: 0.0,
                    user: false,
                },
            ];
            tree.extend(
                users
                    .into_iter()
                    .map(|(account, shares, usage)| Association {
                        parent: Some(1 + account),
                        shares: RawShares::Count(f64::from(shares)),
                        usage: f64::from(usage),
                        user: true,
                    }),
            );
            tree
        })
    }

    fn ranks(tree: &[Association], f: FairshareFunction) -> Vec<Option<usize>> {
        standings(tree, f).unwrap().iter().map(|s| s.rank).collect()
    }

    proptest! {
        /// Decaying every usage by the same factor never reverses two users' order (MetaCentrum's
        /// included, as long as no usage falls to its floor of 1).
        #[test]
        fn a_uniform_decay_never_reverses_an_order(
            mut tree in tree(),
            decay in prop::sample::select(vec![0.5, 0.25, 0.125]),
        ) {
            for a in tree.iter_mut().filter(|a| a.user) {
                a.usage = 8.0 + a.usage * 8.0;
            }
            let decayed: Vec<Association> = tree.iter().map(|a| Association { usage: a.usage * decay, ..a.clone() }).collect();
            for f in [FairshareFunction::METACENTRUM, FairshareFunction::PBS, FairshareFunction::SLURM_CLASSIC, FairshareFunction::FAIR_TREE] {
                let before = standings(&tree, f).unwrap();
                let after = standings(&decayed, f).unwrap();
                for i in 0..tree.len() {
                    for j in 0..tree.len() {
                        if tree[i].user && tree[j].user && before[i].factor > before[j].factor * (1.0 + 1e-12) {
                            prop_assert!(after[i].factor >= after[j].factor * (1.0 - 1e-12), "{f:?}: {i} and {j} reversed");
                        }
                    }
                }
                prop_assert_eq!(ranks(&tree, f), ranks(&decayed, f));
            }
        }

        /// Fair Tree's ranks survive scaling every usage by a power of two (which rounds
        /// nothing), and siblings with the same shares and usage stay tied whatever the scale.
        #[test]
        fn fair_tree_ranks_do_not_see_scale(mut tree in tree(), scale in 0.1f64..10.0, power in -8i32..8) {
            // Few distinct shares and usages, so that levels tie often.
            for a in tree.iter_mut().filter(|a| a.user) {
                a.shares = RawShares::Count(1.0 + a.shares.raw() % 3.0);
                a.usage %= 4.0;
            }
            let scaled = |k: f64| -> Vec<Association> { tree.iter().map(|a| Association { usage: a.usage * k, ..a.clone() }).collect() };
            prop_assert_eq!(ranks(&tree, FairshareFunction::FAIR_TREE), ranks(&scaled(2f64.powi(power)), FairshareFunction::FAIR_TREE));
            let (before, after) = (ranks(&tree, FairshareFunction::FAIR_TREE), ranks(&scaled(scale), FairshareFunction::FAIR_TREE));
            for i in 0..tree.len() {
                for j in 0..tree.len() {
                    let twins = tree[i].user && tree[j].user && tree[i] == tree[j];
                    if twins && before[i] == before[j] {
                        prop_assert_eq!(after[i], after[j], "{} and {} untied", i, j);
                    }
                }
            }
        }

        /// Under Fair Tree a user without usage ranks above every sibling with usage.
        #[test]
        fn fair_tree_puts_an_idle_user_above_its_busy_siblings(mut tree in tree(), idle in 3usize..10) {
            let idle = 3 + (idle - 3) % (tree.len() - 3);
            tree[idle].usage = 0.0;
            let s = standings(&tree, FairshareFunction::FAIR_TREE).unwrap();
            for (i, a) in tree.iter().enumerate() {
                if a.user && i != idle && a.parent == tree[idle].parent && a.usage > 0.0 {
                    prop_assert!(s[idle].rank < s[i].rank, "idle {idle} at {:?}, busy {i} at {:?}", s[idle].rank, s[i].rank);
                }
            }
        }
    }
}
