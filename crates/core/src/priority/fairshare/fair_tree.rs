//! Slurm's Fair Tree (`fair_tree.c`): the users ranked by a depth-first walk of the share tree,
//! siblings in decreasing level fairshare compared exactly as Slurm compares them.

use super::entry::{Columns, Factor, FunctionEntry};
use super::{Association, Standing, NO_VAL};
use crate::model::RawShares;
use std::cmp::Ordering;

/// Fair Tree's ranks and factors, as Slurm's `_calc_tree_fs` gives them: depth first from the
/// root, each fairshare parent's level in decreasing level fairshare (on a tie users before
/// accounts, then tree order). A user whose level fairshare ties the previous sibling's shares
/// the rank last given, and so does the first one reached under an account that tied its
/// previous sibling (Slurm never merges tied accounts' children, whatever its comments say).
/// The factor is `(users − rank + 1) / users`; accounts keep factor 0 (only users are ranked).
pub(super) fn rank_fair_tree(
    tree: &[Association],
    fs_parent: &[Option<usize>],
    levels: &LevelKeys,
    standings: &mut [Standing],
) {
    if tree.is_empty() {
        return;
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); tree.len()];
    for (i, f) in fs_parent.iter().enumerate() {
        if let Some(f) = f {
            children[*f].push(i);
        }
    }
    let users = tree.iter().filter(|a| a.user).count();
    let siblings = |kids: &[usize]| {
        let mut kids = kids.to_vec();
        kids.sort_by(|a, b| {
            levels
                .cmp(*b, *a)
                .then(tree[*b].user.cmp(&tree[*a].user))
                .then(a.cmp(b))
        });
        kids
    };
    // Slurm's own counters: `rank` is the one given, `untied` the next one without a tie.
    let (mut rank, mut untied) = (1, 1);
    let mut stack = vec![Walk::new(siblings(&[0]), false)];
    while let Some(level) = stack.last_mut() {
        let Some(&i) = level.kids.get(level.next) else {
            stack.pop();
            continue;
        };
        let tied = (level.next == 0 && level.starts_tied)
            || level
                .previous
                .is_some_and(|p| levels.cmp(p, i) == Ordering::Equal);
        level.next += 1;
        level.previous = Some(i);
        if tree[i].user {
            if !tied {
                rank = untied;
            }
            standings[i].rank = Some(rank);
            standings[i].factor = (users - rank + 1) as f64 / users as f64;
            untied += 1;
        } else {
            stack.push(Walk::new(siblings(&children[i]), tied));
        }
    }
}

/// One level of Fair Tree's walk: the siblings in order and how far the walk has come.
struct Walk {
    kids: Vec<usize>,
    next: usize,
    previous: Option<usize>,
    starts_tied: bool,
}

impl Walk {
    fn new(kids: Vec<usize>, starts_tied: bool) -> Self {
        Walk {
            kids,
            next: 0,
            previous: None,
            starts_tied,
        }
    }
}

/// Each association's level fairshare `S / U` as Slurm compares siblings' (`_cmp_level_fs`):
/// exactly, with no rounding of the quotient. `S` is the shares over the level's, in `f64` as
/// Slurm keeps `shares_norm` in a `double`; `U` the usage over the fairshare parent's, which
/// siblings share, so `S_a / U_a` against `S_b / U_b` is `S_a · usage_b` against
/// `S_b · usage_a`, compared by exact products. Two siblings with the same shares and usage
/// tie; two whose quotients are equal only in exact arithmetic (shares 1 and 3 of 10, usage 1
/// and 3: `3/10` in a `double` is below three times `1/10`) are ordered as Slurm's `long
/// double` quotients order them.
pub(super) struct LevelKeys {
    keys: Vec<LevelKey>,
}

/// What a level fairshare is, for an exact comparison among siblings.
#[derive(Debug, Clone, Copy)]
enum LevelKey {
    /// `S / U` with `U` = `usage` over the fairshare parent's, > 0 (`S = 0` for 0 shares,
    /// whatever the usage).
    Quotient { s: f64, usage: f64 },
    /// No usage but shares, or a `parent` user: above every quotient.
    Infinite,
}

impl LevelKeys {
    pub(super) fn new(
        tree: &[Association],
        weight: &[f64],
        raw: &[f64],
        fs_parent: &[Option<usize>],
    ) -> LevelKeys {
        let keys = (0..tree.len())
            .map(|i| {
                let parent_usage = fs_parent[i].map_or(raw[i], |f| raw[f]);
                match tree[i].shares {
                    RawShares::Parent if tree[i].user => LevelKey::Infinite,
                    // `NO_VAL` as a quotient: U = 1.
                    RawShares::Parent => LevelKey::Quotient {
                        s: NO_VAL,
                        usage: parent_usage,
                    },
                    RawShares::Count(_) if weight[i] == 0.0 => {
                        LevelKey::Quotient { s: 0.0, usage: 1.0 }
                    }
                    RawShares::Count(_) if raw[i] > 0.0 => LevelKey::Quotient {
                        s: weight[i],
                        usage: raw[i],
                    },
                    RawShares::Count(_) => LevelKey::Infinite,
                }
            })
            .collect();
        LevelKeys { keys }
    }

    /// How sibling `a`'s level fairshare compares with sibling `b`'s.
    fn cmp(&self, a: usize, b: usize) -> Ordering {
        match (self.keys[a], self.keys[b]) {
            (LevelKey::Infinite, LevelKey::Infinite) => Ordering::Equal,
            (LevelKey::Infinite, _) => Ordering::Greater,
            (_, LevelKey::Infinite) => Ordering::Less,
            // Siblings share their parent's usage, which cancels out.
            (
                LevelKey::Quotient {
                    s: sa, usage: ua, ..
                },
                LevelKey::Quotient {
                    s: sb, usage: ub, ..
                },
            ) => cmp_products(sa, ub, sb, ua),
        }
    }
}

/// Compares `a·b` with `c·d` exactly (all finite and ≥ 0): each product of two 53-bit
/// significands fits in 106 bits, so integers compare them without rounding.
pub(super) fn cmp_products(a: f64, b: f64, c: f64, d: f64) -> Ordering {
    let exact = |x: f64, y: f64| {
        let (mx, ex) = significand(x);
        let (my, ey) = significand(y);
        (u128::from(mx) * u128::from(my), ex + ey)
    };
    let (m1, e1) = exact(a, b);
    let (m2, e2) = exact(c, d);
    match (m1 == 0, m2 == 0) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        (false, false) => {}
    }
    // The place of each product's highest bit, then the significands aligned to it.
    let top = |m: u128, e: i32| e + (128 - m.leading_zeros()) as i32;
    top(m1, e1)
        .cmp(&top(m2, e2))
        .then((m1 << m1.leading_zeros()).cmp(&(m2 << m2.leading_zeros())))
}

/// `x = m · 2^e` exactly, for finite `x ≥ 0`.
fn significand(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    match exponent {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), exponent - 1075),
    }
}

/// Slurm Fair Tree (Slurm's default): users ranked by a depth-first walk visiting siblings in
/// decreasing level fairshare (shares / usage among siblings, infinite without usage); the
/// factor is the rank from the last user (1 for the first, 1/n for the last).
pub const FAIR_TREE: FunctionEntry = FunctionEntry {
    name: "fair-tree",
    about: "Slurm Fair Tree (Slurm's default): depth-first ranking by level fairshare",
    params: &[],
    factor: Factor::FairTree,
    columns: Columns {
        effective_usage: true,
        level_fs: true,
    },
    orders_by_usage_over_shares: true,
};
