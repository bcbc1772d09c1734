//! Where users' entitlements come from in a replay: equal shares, a site's share file (accounts
//! and users, normalised down the tree as Slurm normalises shares), or each user's own mean
//! usage scaled by a factor (the "reserved share" mode of the SDRF authors' simulator, beside
//! the equal shares the paper's figures use). Policies read the result as weights and
//! entitlements; with a share file, results are also gathered per account.

use crate::{LabError, MeasuredTrace};
use fairshare_core::error::Invalid;
use fairshare_core::priority::dominant_share;
use fairshare_core::priority::fairshare::{self, Association};
use fairshare_core::rank::{Accounts, Share};
use fairshare_sim::cluster::{AccountResult, Capacity, PolicyResult};
use fairshare_trace::Shares;
use std::path::PathBuf;
use std::str::FromStr;

/// Where entitlements come from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ShareSource {
    /// Every user 1/n.
    #[default]
    Equal,
    /// A share file.
    File(PathBuf),
    /// Each user's own mean usage (its dominant share of the capacity) times this factor.
    Usage(f64),
}

impl FromStr for ShareSource {
    type Err = Invalid;

    /// `equal`, `usage:FACTOR`, or the path of a share file.
    fn from_str(s: &str) -> Result<ShareSource, Invalid> {
        if s == "equal" {
            return Ok(ShareSource::Equal);
        }
        if let Some(factor) = s.strip_prefix("usage:") {
            return match factor.parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => Ok(ShareSource::Usage(f)),
                _ => Err(Invalid(format!(
                    "usage:FACTOR needs a positive factor, found {factor:?}"
                ))),
            };
        }
        Ok(ShareSource::File(PathBuf::from(s)))
    }
}

/// The users' shares for a replay, and the account tree when they came from a share file.
#[derive(Debug, Clone, PartialEq)]
pub struct Entitled {
    /// Each user's weight and entitlement (`None`: equal).
    pub shares: Option<Vec<Share>>,
    /// The accounts, with the trace's users placed in them.
    pub accounts: Option<Shares>,
    /// Where they came from, in words.
    pub source: String,
}

impl MeasuredTrace {
    /// The users' shares from `source` on `capacity`; a `sacctmgr` share file is read for
    /// `cluster` when given (see [`fairshare_trace::shares::from_sacctmgr`]).
    pub fn entitled(
        &self,
        source: &ShareSource,
        capacity: &Capacity,
        cluster: Option<&str>,
    ) -> Result<Entitled, LabError> {
        match source {
            ShareSource::Equal => Ok(Entitled {
                shares: None,
                accounts: None,
                source: format!("equal: 1/{} each", self.users.len()),
            }),
            ShareSource::File(path) => {
                let tree = fairshare_trace::read_shares(path, &self.users, cluster)?;
                let weights = tree.entitlements();
                let shares = Share::entitled(&weights)
                    .map_err(|e| LabError::Unusable(format!("{}: {e}", path.display())))?;
                let source = format!(
                    "{} ({} of {} users not listed, placed by its defaults)",
                    path.display(),
                    tree.unlisted,
                    self.users.len()
                );
                Ok(Entitled {
                    shares: Some(shares),
                    accounts: Some(tree),
                    source,
                })
            }
            ShareSource::Usage(factor) => self.by_usage(*factor, capacity),
        }
    }

    /// Each user entitled to `factor` × its own mean dominant share of `capacity`.
    fn by_usage(&self, factor: f64, capacity: &Capacity) -> Result<Entitled, LabError> {
        let total = capacity.total();
        let entitlement: Vec<f64> = (0..self.users.len())
            .map(|u| {
                let mean = self.load.user_mean_demand(u);
                let share: Vec<f64> = mean.iter().zip(&total).map(|(m, c)| m / c).collect();
                factor * dominant_share(&share)
            })
            .collect();
        let sum: f64 = entitlement.iter().sum();
        if !(sum.is_finite() && sum > 0.0) {
            return Err(LabError::Unusable(
                "usage shares: no user has any recorded usage".into(),
            ));
        }
        let n = self.users.len() as f64;
        let shares = entitlement
            .iter()
            .map(|e| Share {
                weight: (n * e / sum).max(f64::MIN_POSITIVE),
                entitlement: *e,
            })
            .collect();
        Ok(Entitled {
            shares: Some(shares),
            accounts: None,
            source: format!("each user's own mean usage × {factor}"),
        })
    }
}

/// The accounts and users of `tree` as associations (no usage yet): the trace's users and the
/// users the file lists but the trace lacks are users, the rest accounts.
pub fn associations(tree: &Shares) -> Vec<Association> {
    fairshare::associations(&tree.tree)
}

impl Entitled {
    /// The account tree as fairshare policies rank by it, when the shares came from a file.
    pub fn ranked_accounts(&self) -> Result<Option<Accounts>, LabError> {
        let Some(tree) = &self.accounts else {
            return Ok(None);
        };
        Accounts::new(associations(tree), tree.leaf.clone())
            .map(Some)
            .map_err(|e| LabError::Unusable(format!("the share tree: {e}")))
    }
}

/// Gathers a result's users into the accounts of `tree` (every account, root first), with
/// `users` the trace's user names.
pub fn account_results(
    result: &PolicyResult,
    tree: &Shares,
    users: &[String],
) -> Vec<AccountResult> {
    let accounts = tree.tree.accounts();
    let leaves: std::collections::HashSet<usize> =
        tree.leaf.iter().chain(&tree.absent).copied().collect();
    let index: std::collections::HashMap<&str, usize> = users
        .iter()
        .enumerate()
        .map(|(i, u)| (u.as_str(), i))
        .collect();
    let delivered_total: f64 = result
        .users
        .iter()
        .map(|u| u.mean_held.first().copied().unwrap_or(0.0))
        .sum();
    let entitled = tree.tree.entitlements();
    let mut rows: Vec<AccountResult> = accounts
        .iter()
        .enumerate()
        .filter(|(i, _)| !leaves.contains(i))
        .map(|(i, a)| AccountResult {
            name: a.name.clone(),
            parent: a.parent.map(|p| accounts[p].name.clone()),
            entitlement: entitled[i],
            users: tree
                .leaf
                .iter()
                .filter(|&&l| accounts[l].parent == Some(i))
                .count(),
            tasks_submitted: 0,
            mean_wait_s: 0.0,
            mean_slowdown: 0.0,
            mean_response_s: 0.0,
            delivered: 0.0,
            delivered_over_time: Vec::new(),
        })
        .collect();
    let row_of = |account: usize| {
        accounts[..account]
            .iter()
            .enumerate()
            .filter(|(i, _)| !leaves.contains(i))
            .count()
    };
    let received = &result.timeline.received_by_user;
    let samples = result.timeline.times_s.len();
    let mut received_by_row = vec![vec![0.0; samples]; rows.len()];
    let mut waits = vec![(0.0, 0u64); rows.len()];
    let mut slowdowns = vec![(0.0, 0u64); rows.len()];
    let mut responses = vec![0.0; rows.len()];
    for user in &result.users {
        let Some(&u) = index.get(user.id.as_str()) else {
            continue;
        };
        let held = user.mean_held.first().copied().unwrap_or(0.0);
        let mut at = Some(tree.account_of(u));
        let direct = row_of(tree.account_of(u));
        rows[direct].tasks_submitted += user.tasks_submitted;
        let fit = user.tasks_submitted - user.tasks_never_fit;
        waits[direct].0 += user.mean_wait_s * fit as f64;
        waits[direct].1 += fit;
        slowdowns[direct].0 += user.mean_slowdown * user.tasks_started as f64;
        slowdowns[direct].1 += user.tasks_started;
        responses[direct] += user.mean_response_s * user.tasks_started as f64;
        while let Some(account) = at {
            let row = row_of(account);
            rows[row].delivered += if delivered_total > 0.0 {
                held / delivered_total
            } else {
                0.0
            };
            if let Some(series) = received.get(u) {
                let sums = received_by_row[row].iter_mut().zip(series);
                sums.for_each(|(sum, r)| *sum += r);
            }
            at = accounts[account].parent;
        }
    }
    let received_total: Vec<f64> = (0..samples)
        .map(|k| received.iter().filter_map(|s| s.get(k)).sum())
        .collect();
    for (row, sums) in rows.iter_mut().zip(received_by_row) {
        row.delivered_over_time = sums
            .iter()
            .zip(&received_total)
            .map(|(r, total)| (*total > 0.0).then(|| r / total))
            .collect();
    }
    let sums = waits.into_iter().zip(slowdowns).zip(responses);
    for (row, (((wait, fit), (slowdown, started)), response)) in rows.iter_mut().zip(sums) {
        if fit > 0 {
            row.mean_wait_s = wait / fit as f64;
        }
        if started > 0 {
            row.mean_slowdown = slowdown / started as f64;
            row.mean_response_s = response / started as f64;
        }
    }
    rows
}
