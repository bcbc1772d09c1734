//! The fairshare factors production batch systems compute from decayed usage and a share
//! tree (`spec/metacentrum.md` §5–§7): MetaCentrum's `percentage / usage` (reference T), PBS
//! Pro's `2^(−usage share / percentage)`, Slurm's classic `2^(−effective usage / shares)` and
//! Slurm's Fair Tree ranking. Sites run one of these every day; comparing them on the same
//! history needs them side by side, as pure functions of the tree and its usage.
//!
//! The usage they read is decayed by [`crate::usage::decay::Decay`]; what one sees between
//! two of Slurm's ticks is [`slurm_classic_between_ticks`].

use crate::model::{fairshare_parents, AccountTree, RawShares};
use serde::Serialize;
use std::cmp::Ordering;
use thiserror::Error;

/// The fairshare function that turns shares and usage into a priority factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FairshareFunction {
    /// MetaCentrum (reference T): normalised shares / raw usage, usage never below 1 (T starts
    /// every usage at 1); larger goes first.
    MetaCentrum,
    /// PBS Pro and the fairshare simulator: `2^(−usage share / normalised shares)`.
    Pbs,
    /// Slurm classic: `2^(−effective usage / normalised shares)`, effective usage taking in the
    /// parent account's (children of the root use their own normalised usage).
    SlurmClassic,
    /// Slurm Fair Tree: users ranked by a depth-first walk visiting siblings in decreasing
    /// level fairshare (shares / usage among siblings, infinite without usage); the factor is
    /// the rank from the last user (1 for the first, 1/n for the last).
    FairTree,
}

impl crate::choice::Choice for FairshareFunction {
    const ALL: &'static [FairshareFunction] = &[
        FairshareFunction::FairTree,
        FairshareFunction::SlurmClassic,
        FairshareFunction::Pbs,
        FairshareFunction::MetaCentrum,
    ];

    fn name(self) -> &'static str {
        match self {
            FairshareFunction::MetaCentrum => "metacentrum",
            FairshareFunction::Pbs => "pbs",
            FairshareFunction::SlurmClassic => "slurm-classic",
            FairshareFunction::FairTree => "fair-tree",
        }
    }

    fn about(self) -> &'static str {
        match self {
            FairshareFunction::MetaCentrum => {
                "MetaCentrum (PBS/TORQUE scheduler): normalised shares / usage"
            }
            FairshareFunction::Pbs => "PBS Pro: 2^(-usage share / normalised shares)",
            FairshareFunction::SlurmClassic => {
                "Slurm classic: 2^(-effective usage / normalised shares)"
            }
            FairshareFunction::FairTree => {
                "Slurm Fair Tree (Slurm's default): depth-first ranking by level fairshare"
            }
        }
    }
}

/// One association of a share tree: an account or a user.
#[derive(Debug, Clone, PartialEq)]
pub struct Association {
    /// Its parent's index; `None` for the root (index 0).
    pub parent: Option<usize>,
    /// Its shares among its siblings: a number ≥ 0 or Slurm's `parent`.
    pub shares: RawShares,
    /// The (decayed) usage charged to it directly: a user's own; 0 for an account.
    pub usage: f64,
    /// Whether it is a user (a leaf that jobs are charged to).
    pub user: bool,
}

/// What the fairshare function makes of one association: the columns of `sshare -l`, as
/// Slurm fills them under that function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    /// Its shares as a fraction of the whole cluster, normalised down the tree; under Fair
    /// Tree, as a fraction of its siblings' (what `sshare` prints there).
    pub normalized_shares: f64,
    /// Its usage and its descendants'.
    pub raw_usage: f64,
    /// That usage as a fraction of all usage.
    pub normalized_usage: f64,
    /// Slurm classic's effective usage; under Fair Tree, its usage over its parent's (0 when
    /// the parent has none).
    pub effective_usage: f64,
    /// Its shares over its usage among its siblings (Fair Tree's level fairshare).
    pub level_fs: f64,
    /// Its fairshare factor under the chosen function (larger goes first).
    pub factor: f64,
    /// Users only: the place in the order the factor gives, 1 first.
    pub rank: Option<usize>,
}

/// Why a share tree cannot be used.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TreeError {
    /// A parent must come before its children, and only the first association is the root.
    #[error("association {0}: its parent must come before it, and only association 0 has none")]
    Order(usize),
    /// Shares (`parent` but for the root) and usage must be finite and not negative.
    #[error("association {0}: shares must be `parent` or a number >= 0 (the root's a number), and usage a number >= 0")]
    Value(usize),
    /// A client must be placed at an association of the tree other than the root.
    #[error("a client is placed at association {0}, which is the root or not in the tree")]
    Leaf(usize),
}

/// Every association's standing under `function` (`tree[0]` is the root; parents precede
/// their children), as Slurm 22.05 computes it (`assoc_mgr.c`, `fair_tree.c`,
/// `priority_multifactor.c`). Associations compete among the children of their *fairshare
/// parent*, the nearest ancestor whose shares are its own: a `parent` account's children
/// compete among its parent's, and it adds no shares to that level. A `parent` association
/// takes its fairshare parent's normalised shares and (classic) effective usage and factor;
/// under Fair Tree a `parent` user ranks first among its level, tied with the idle.
pub fn standings(
    tree: &[Association],
    function: FairshareFunction,
) -> Result<Vec<Standing>, TreeError> {
    validate(tree)?;
    let n = tree.len();
    let mut raw = tree.iter().map(|a| a.usage).collect::<Vec<f64>>();
    for i in (1..n).rev() {
        if let Some(p) = tree[i].parent {
            raw[p] += raw[i];
        }
    }
    let total = raw.first().copied().unwrap_or(0.0);
    let fs_parent = fairshare_parents(tree.iter().map(|a| (a.parent, a.shares)));
    let mut level_shares = vec![0.0; n];
    for (i, a) in tree.iter().enumerate() {
        if let Some(f) = fs_parent[i] {
            level_shares[f] += a.shares.raw();
        }
    }
    let mut standings: Vec<Standing> = Vec::with_capacity(n);
    // Each association's shares over its level's (Fair Tree's `NormShares`).
    let mut weight = Vec::with_capacity(n);
    for i in 0..n {
        let normalized_usage = if total > 0.0 { raw[i] / total } else { 0.0 };
        let Some(f) = fs_parent[i] else {
            weight.push(1.0);
            standings.push(Standing {
                normalized_shares: 1.0,
                raw_usage: raw[i],
                normalized_usage,
                effective_usage: normalized_usage,
                level_fs: if raw[i] > 0.0 { 1.0 } else { f64::INFINITY },
                factor: 0.0,
                rank: None,
            });
            continue;
        };
        let parent = &standings[f];
        let level_has_shares = level_shares[f] > 0.0;
        let w = match tree[i].shares {
            RawShares::Parent => weight[f],
            RawShares::Count(own) if level_has_shares => own / level_shares[f],
            RawShares::Count(_) => 0.0,
        };
        weight.push(w);
        let (normalized_shares, effective_usage) = match tree[i].shares {
            _ if fs_parent[f].is_none() && tree[i].shares.is_parent() => {
                (parent.normalized_shares, normalized_usage)
            }
            RawShares::Parent => (parent.normalized_shares, parent.effective_usage),
            RawShares::Count(_) if fs_parent[f].is_none() => {
                (w * parent.normalized_shares, normalized_usage)
            }
            RawShares::Count(_) if !level_has_shares => (0.0, parent.effective_usage),
            RawShares::Count(_) => (
                w * parent.normalized_shares,
                normalized_usage + (parent.effective_usage - normalized_usage) * w,
            ),
        };
        let level_fs = match tree[i].shares {
            RawShares::Parent if tree[i].user => f64::INFINITY,
            RawShares::Parent => NO_VAL,
            RawShares::Count(_) if w == 0.0 => 0.0,
            RawShares::Count(_) if raw[i] > 0.0 => w / (raw[i] / raw[f]),
            RawShares::Count(_) => f64::INFINITY,
        };
        standings.push(Standing {
            normalized_shares,
            raw_usage: raw[i],
            normalized_usage,
            effective_usage,
            level_fs,
            factor: 0.0,
            rank: None,
        });
    }
    for s in standings.iter_mut() {
        s.factor = match function {
            FairshareFunction::MetaCentrum => s.normalized_shares / s.raw_usage.max(1.0),
            FairshareFunction::Pbs => exp2_ratio(s.normalized_usage, s.normalized_shares),
            FairshareFunction::SlurmClassic => exp2_ratio(s.effective_usage, s.normalized_shares),
            FairshareFunction::FairTree => 0.0,
        };
    }
    if function == FairshareFunction::FairTree {
        // Fair Tree shows its own two columns, as `sshare -l` prints them: the shares over the
        // level's and the usage over the fairshare parent's (0 when that has none).
        for i in 1..n {
            let f = fs_parent[i].expect("only the root has none");
            standings[i].normalized_shares = weight[i];
            standings[i].effective_usage = if raw[f] > 0.0 { raw[i] / raw[f] } else { 0.0 };
        }
        let levels = LevelKeys::new(tree, &weight, &raw, &fs_parent);
        rank_fair_tree(tree, &fs_parent, &levels, &mut standings);
    } else {
        // A `parent` association is ranked as its fairshare parent (Slurm classic gives its
        // jobs that association's factor).
        for i in 1..n {
            if let (Some(f), RawShares::Parent) = (fs_parent[i], tree[i].shares) {
                standings[i].factor = standings[f].factor;
            }
        }
        for (place, &i) in factor_order(tree, &standings).iter().enumerate() {
            standings[i].rank = Some(place + 1);
        }
    }
    Ok(standings)
}

/// Slurm's `NO_VAL`, the level fairshare a `parent` account is given: it sorts before its
/// siblings and ranks nothing, its children having moved up.
const NO_VAL: f64 = 4_294_967_294.0;

/// The associations of an account tree, without usage yet: what [`standings`] and the
/// fairshare ranker read.
pub fn associations(tree: &AccountTree) -> Vec<Association> {
    (tree.accounts().iter())
        .map(|a| Association {
            parent: a.parent,
            shares: a.shares,
            usage: 0.0,
            user: a.user,
        })
        .collect()
}

/// Slurm classic's standings as slurmctld leaves them for `sshare` between two ticks, from the
/// tree's usage just `before` its last tick and just `after` it. At each tick classic computes
/// every association's effective usage first, from the usage before the tick's decay and
/// charges; then, for each job in its list, it recomputes that user's normalised and effective
/// usage from the new usage but with its parent's effective usage as already computed. So
/// accounts show the usage one tick late, and users a mix.
pub fn slurm_classic_between_ticks(
    before: &[Association],
    after: &[Association],
) -> Result<Vec<Standing>, TreeError> {
    let lagged = standings(before, FairshareFunction::SlurmClassic)?;
    let mut shown = standings(after, FairshareFunction::SlurmClassic)?;
    for (i, a) in after.iter().enumerate() {
        let parent = a.parent.filter(|_| a.user);
        let Some(p) = parent else {
            shown[i] = Standing {
                raw_usage: shown[i].raw_usage,
                ..lagged[i].clone()
            };
            continue;
        };
        let (own, of_parent) = (shown[i].normalized_shares, shown[p].normalized_shares);
        let s = &mut shown[i];
        if after[p].parent.is_some() && of_parent > 0.0 {
            s.effective_usage = s.normalized_usage
                + (lagged[p].effective_usage - s.normalized_usage) * own / of_parent;
        }
        s.factor = exp2_ratio(s.effective_usage, own);
    }
    for (place, &i) in factor_order(after, &shown).iter().enumerate() {
        shown[i].rank = Some(place + 1);
    }
    Ok(shown)
}

/// Fair Tree's ranks and factors, as Slurm's `_calc_tree_fs` gives them: depth first from the
/// root, each fairshare parent's level in decreasing level fairshare (on a tie users before
/// accounts, then tree order). A user whose level fairshare ties the previous sibling's shares
/// the rank last given, and so does the first one reached under an account that tied its
/// previous sibling (Slurm never merges tied accounts' children, whatever its comments say).
/// The factor is `(users − rank + 1) / users`; accounts keep factor 0 (only users are ranked).
fn rank_fair_tree(
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
struct LevelKeys {
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
    fn new(
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
fn cmp_products(a: f64, b: f64, c: f64, d: f64) -> Ordering {
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

/// `2^(−usage / shares)`; 0 for an association without shares, as Slurm gives it.
fn exp2_ratio(usage: f64, shares: f64) -> f64 {
    if shares > 0.0 {
        (-usage / shares).exp2()
    } else {
        0.0
    }
}

/// Refuses a tree whose parents do not precede their children or whose numbers are unusable.
pub(crate) fn validate(tree: &[Association]) -> Result<(), TreeError> {
    for (i, a) in tree.iter().enumerate() {
        let ordered = match a.parent {
            None => i == 0,
            Some(p) => p < i,
        };
        if !ordered {
            return Err(TreeError::Order(i));
        }
        let usable = |x: f64| x.is_finite() && x >= 0.0;
        let own_root = i > 0 || !a.shares.is_parent();
        if !(a.shares.is_valid() && own_root && usable(a.usage)) {
            return Err(TreeError::Value(i));
        }
    }
    Ok(())
}

/// The users by decreasing factor (ties in tree order).
fn factor_order(tree: &[Association], standings: &[Standing]) -> Vec<usize> {
    let mut users: Vec<usize> = (0..tree.len()).filter(|i| tree[*i].user).collect();
    users.sort_by(|a, b| {
        standings[*b]
            .factor
            .total_cmp(&standings[*a].factor)
            .then(a.cmp(b))
    });
    users
}

/// Each association's children, in tree order.
pub fn children(tree: &[Association]) -> Vec<Vec<usize>> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); tree.len()];
    for (i, a) in tree.iter().enumerate() {
        if let Some(p) = a.parent {
            children[p].push(i);
        }
    }
    children
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = standings(&tree, FairshareFunction::SlurmClassic).unwrap();
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
        let s = standings(&tree, FairshareFunction::FairTree).unwrap();
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
        let classic = standings(&tree, FairshareFunction::SlurmClassic).unwrap();
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
        let t = factor(FairshareFunction::MetaCentrum);
        assert!(close(t[1], 5.0e-4) && close(t[2] * 1e4, 1.25), "{t:?}");
        let pbs = factor(FairshareFunction::Pbs);
        assert!(close(pbs[1], 0.7579) && close(pbs[2], 0.3299), "{pbs:?}");
        let s = standings(&tree, FairshareFunction::FairTree).unwrap();
        assert!(close(s[1].level_fs, 2.5) && close(s[2].level_fs, 0.625));
        assert_eq!((s[1].rank, s[2].rank), (Some(1), Some(2)));
        // Children of the root: Slurm classic's effective usage is their normalised usage.
        let classic = standings(&tree, FairshareFunction::SlurmClassic).unwrap();
        assert!(close(classic[1].effective_usage, 0.2));
        assert!(close(classic[1].factor, 0.7579));
        // After one 72 h halving: T doubles but keeps 4 : 1; the others do not move.
        let halved = [
            account(None, 1.0),
            user(0, 1.0, 500.0),
            user(0, 1.0, 2000.0),
        ];
        let t2: Vec<f64> = standings(&halved, FairshareFunction::MetaCentrum)
            .unwrap()
            .iter()
            .map(|s| s.factor)
            .collect();
        assert!(close(t2[1] / t[1], 2.0) && close(t2[1] / t2[2], 4.0));
        let pbs2: Vec<f64> = standings(&halved, FairshareFunction::Pbs)
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
        let s = standings(&tree, FairshareFunction::SlurmClassic).unwrap();
        assert!(close(s[1].effective_usage, 0.9), "first level: its own");
        // bob: 0.1 + (0.9 − 0.1) · 1/2 = 0.5; normalised shares 1/4: 2^(−2).
        assert!(close(s[4].effective_usage, 0.5) && close(s[4].factor, 0.25));
        let fair_tree = standings(&tree, FairshareFunction::FairTree).unwrap();
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
        let s = standings(&tree, FairshareFunction::FairTree).unwrap();
        let ranks: Vec<Option<usize>> = s.iter().map(|x| x.rank).collect();
        assert_eq!(ranks, [None, Some(1), Some(1), Some(3), Some(4)]);
        assert_eq!(s[1].factor, s[2].factor);
        assert_eq!(s[4].level_fs, 0.0);
        for f in [FairshareFunction::Pbs, FairshareFunction::SlurmClassic] {
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
        let s = standings(&tree, FairshareFunction::FairTree).unwrap();
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
        let s = standings(&tree, FairshareFunction::FairTree).unwrap();
        let ranks: Vec<_> = s.iter().map(|x| x.rank).collect();
        assert_eq!(ranks, [None, Some(1), Some(2), Some(2), Some(4)]);
        let twins = [
            account(None, 1.0),
            user(0, 3.0, 3.0),
            user(0, 3.0, 3.0),
            user(0, 4.0, 1.0),
        ];
        let s = standings(&twins, FairshareFunction::FairTree).unwrap();
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
        let s = standings(&tree, FairshareFunction::FairTree).unwrap();
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
        let c = standings(&tree, FairshareFunction::SlurmClassic).unwrap();
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
            FairshareFunction::FairTree,
            FairshareFunction::SlurmClassic,
            FairshareFunction::Pbs,
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
            standings(&[user(0, 1.0, 1.0)], FairshareFunction::Pbs),
            Err(TreeError::Order(0))
        );
        let negative = [account(None, 1.0), user(0, -1.0, 1.0)];
        assert_eq!(
            standings(&negative, FairshareFunction::Pbs),
            Err(TreeError::Value(1))
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
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
            for f in [FairshareFunction::MetaCentrum, FairshareFunction::Pbs, FairshareFunction::SlurmClassic, FairshareFunction::FairTree] {
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
            prop_assert_eq!(ranks(&tree, FairshareFunction::FairTree), ranks(&scaled(2f64.powi(power)), FairshareFunction::FairTree));
            let (before, after) = (ranks(&tree, FairshareFunction::FairTree), ranks(&scaled(scale), FairshareFunction::FairTree));
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
            let s = standings(&tree, FairshareFunction::FairTree).unwrap();
            for (i, a) in tree.iter().enumerate() {
                if a.user && i != idle && a.parent == tree[idle].parent && a.usage > 0.0 {
                    prop_assert!(s[idle].rank < s[i].rank, "idle {idle} at {:?}, busy {i} at {:?}", s[idle].rank, s[i].rank);
                }
            }
        }
    }
}
