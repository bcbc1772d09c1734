//! The fairshare factors production batch systems compute from decayed usage and a share
//! tree (`spec/metacentrum.md` §5–§7): MetaCentrum's `percentage / usage` (reference T), PBS
//! Pro's `2^(−usage share / percentage)`, Slurm's classic `2^(−effective usage / shares)` and
//! Slurm's Fair Tree ranking. Sites run one of these every day; comparing them on the same
//! history needs them side by side, as pure functions of the tree and its usage.
//!
//! The usage they read is decayed by [`crate::usage::decay::Decay`]; what one sees between
//! two of Slurm's ticks is [`slurm_classic_between_ticks`].

mod entry;
mod fair_tree;
mod function;
mod grid_engine;
mod htcondor;
mod metacentrum;
mod pbs;
mod slurm_classic;

pub use entry::{Columns, Factor, FunctionEntry, FunctionParam, MAX_PARAMS};
pub use function::FairshareFunction;

use crate::model::{fairshare_parents, AccountTree, RawShares};
use fair_tree::{rank_fair_tree, LevelKeys};
use serde::Serialize;
use thiserror::Error;

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
#[non_exhaustive]
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
    match function.entry().factor {
        Factor::Each(factor) => {
            for s in standings.iter_mut() {
                s.factor = factor(s, function.values());
            }
        }
        Factor::Whole(factors) => factors(&mut standings, tree, function.values()),
        Factor::FairTree => {}
    }
    if function.is_fair_tree() {
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
pub(super) const NO_VAL: f64 = 4_294_967_294.0;

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
    let lagged = standings(before, FairshareFunction::SLURM_CLASSIC)?;
    let mut shown = standings(after, FairshareFunction::SLURM_CLASSIC)?;
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

/// `2^(−usage / shares)`; 0 for an association without shares, as Slurm gives it.
pub(super) fn exp2_ratio(usage: f64, shares: f64) -> f64 {
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
mod tests;
