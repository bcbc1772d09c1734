//! Slurm's associations as a ranker's clients: every user association (a user under an
//! account) is one client, placed in the account tree with its shares.
//!
//! Slurm ranks associations, not users: a user who works in two accounts competes twice, once
//! in each. So a client here is an `(account, user)` pair, its entitlement is its fraction of
//! the cluster down the tree (its shares over its siblings', times its parent's), and
//! fairshare policies that read the tree (Fair Tree, classic, PBS) get the tree itself.
//!
//! What cannot be ranked is said, never guessed: an association whose shares are `parent`
//! (it borrows its parent's standing, which no fairshare policy models), one with no shares
//! anywhere on its path, and a user's second association with the same account (limited to
//! another partition) are left out, and their jobs are left alone.

use crate::assoc::{Associations, Share as AssocShare};
use fairshare_core::priority::fairshare::Association;
use fairshare_core::rank::{Accounts, Share};
use std::collections::{BTreeMap, BTreeSet};

/// The clients of one cluster's association tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Clients {
    /// Each client's `(account, user)`, by client index.
    pub names: Vec<(String, String)>,
    /// Each client's entitlement: its fraction of the cluster, down the tree.
    pub entitlements: Vec<f64>,
    /// The tree, with every client placed in it.
    pub accounts: Accounts,
    /// The user associations left out, each with why: `(account, user, reason)`.
    pub left_out: Vec<(String, String, String)>,
    index: BTreeMap<(String, String), u32>,
}

/// Why the tree cannot be used at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientsError {
    /// The cluster has no `root` account (or is not in the tree at all).
    #[error("cluster `{0}` has no root account in sacctmgr's associations")]
    NoRoot(String),
    /// Several clusters are listed and none was chosen.
    #[error("sacctmgr lists several clusters ({0}); name one in the configuration (`cluster`)")]
    WhichCluster(String),
    /// No user association can be ranked.
    #[error("no user association of cluster `{0}` can be ranked: {1}")]
    Empty(String, String),
}

impl Clients {
    /// The clients of `cluster` (`None`: the only cluster listed) in `tree`.
    pub fn of(tree: &Associations, cluster: Option<&str>) -> Result<Clients, ClientsError> {
        let cluster = match cluster {
            Some(c) => c.to_string(),
            None => only_cluster(tree)?,
        };
        if tree.account(&cluster, "root").is_none() {
            return Err(ClientsError::NoRoot(cluster));
        }
        let mut built = Builder::default();
        built.account(tree, &cluster, ("root", 1.0), None, Some(1.0));
        let Builder {
            walked: _,
            associations,
            leaf,
            names,
            entitlements,
            left_out,
        } = built;
        if names.is_empty() {
            let why = match left_out.first() {
                Some((a, u, reason)) => format!("{u} under {a}: {reason}"),
                None => "it has none".into(),
            };
            return Err(ClientsError::Empty(cluster, why));
        }
        let accounts = Accounts::new(associations, leaf)
            .expect("the tree is built root first, parents before children, shares >= 0");
        let index = (names.iter().cloned().enumerate())
            .map(|(i, name)| (name, i as u32))
            .collect();
        Ok(Clients {
            names,
            entitlements,
            accounts,
            left_out,
            index,
        })
    }

    /// How many clients.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The client of `user` under `account`, if it is one.
    pub fn client(&self, account: &str, user: &str) -> Option<u32> {
        self.index
            .get(&(account.to_string(), user.to_string()))
            .copied()
    }

    /// Why jobs of `user` under `account` cannot be ranked, if they cannot.
    pub fn why_not(&self, account: &str, user: &str) -> Option<String> {
        if self.client(account, user).is_some() {
            return None;
        }
        let left = self
            .left_out
            .iter()
            .find(|(a, u, _)| a == account && u == user);
        Some(match left {
            Some((_, _, reason)) => reason.clone(),
            None => "no such association in sacctmgr's tree".into(),
        })
    }

    /// Each client's weight and entitlement, as the stateless and SDRF rankers take them.
    pub fn shares(&self) -> Vec<Share> {
        Share::weighted(&self.entitlements).expect("every client's entitlement is positive")
    }
}

/// The one cluster `tree` lists, or why there is not exactly one.
fn only_cluster(tree: &Associations) -> Result<String, ClientsError> {
    let mut clusters: Vec<&str> = tree.accounts.iter().map(|a| a.cluster.as_str()).collect();
    clusters.sort_unstable();
    clusters.dedup();
    match clusters.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(ClientsError::NoRoot("(none listed)".into())),
        many => Err(ClientsError::WhichCluster(many.join(", "))),
    }
}

/// The tree as it is walked, depth first.
#[derive(Default)]
struct Builder {
    /// The accounts walked so far: a tree that names an account twice, or in a circle, is
    /// walked once.
    walked: BTreeSet<String>,
    associations: Vec<Association>,
    leaf: Vec<usize>,
    names: Vec<(String, String)>,
    entitlements: Vec<f64>,
    left_out: Vec<(String, String, String)>,
}

impl Builder {
    /// Adds account `name` (with `own_shares` among its siblings) under the association
    /// `parent` and everything below it; `fraction` is its entitlement (`None`: it cannot be
    /// ranked, nor anything below it).
    fn account(
        &mut self,
        tree: &Associations,
        cluster: &str,
        (name, own_shares): (&str, f64),
        parent: Option<usize>,
        fraction: Option<f64>,
    ) {
        if !self.walked.insert(name.to_string()) {
            return;
        }
        let at = self.associations.len();
        self.associations.push(Association {
            parent,
            shares: own_shares,
            usage: 0.0,
            user: false,
        });
        let children = children(tree, cluster, name);
        let total: f64 = children.iter().filter_map(|c| shares(c.1)).sum();
        for (child, share) in children {
            let fraction = match (fraction, shares(share)) {
                (None, _) => Err("an account above it has `parent` or 0 shares".to_string()),
                (_, None) => Err("its shares are `parent`, which fairshare does not model".into()),
                (Some(f), Some(s)) if s > 0.0 && total > 0.0 => Ok(f * s / total),
                _ => Err("it has 0 shares".into()),
            };
            let own = shares(share).unwrap_or(0.0);
            match child {
                Child::Account(account) => {
                    self.account(tree, cluster, (account, own), Some(at), fraction.ok())
                }
                Child::User(user) => self.user((name, user, own), at, fraction),
            }
        }
    }

    /// Adds `user` under `account` (association `parent`) with `own` shares as a client, or
    /// says why not.
    fn user(
        &mut self,
        (account, user, own): (&str, &str, f64),
        parent: usize,
        fraction: Result<f64, String>,
    ) {
        let name = (account.to_string(), user.to_string());
        let fraction = match fraction {
            _ if self.names.contains(&name) => {
                Err("a second association of the same user and account (for another partition); the first is ranked".into())
            }
            other => other,
        };
        match fraction {
            Ok(fraction) => {
                self.leaf.push(self.associations.len());
                self.associations.push(Association {
                    parent: Some(parent),
                    shares: own,
                    usage: 0.0,
                    user: true,
                });
                self.names.push(name);
                self.entitlements.push(fraction);
            }
            Err(reason) => self.left_out.push((name.0, name.1, reason)),
        }
    }
}

/// One child of an account: another account, or a user.
#[derive(Clone, Copy)]
enum Child<'a> {
    Account(&'a str),
    User(&'a str),
}

/// An association's shares among its siblings, `None` for `parent`.
fn shares(share: AssocShare) -> Option<f64> {
    match share {
        AssocShare::Value(s) => Some(f64::from(s)),
        AssocShare::Parent => None,
    }
}

/// The accounts and users under account `name`, in sacctmgr's order (accounts first).
fn children<'a>(
    tree: &'a Associations,
    cluster: &'a str,
    name: &'a str,
) -> Vec<(Child<'a>, AssocShare)> {
    let accounts = tree.child_accounts(cluster, name);
    let users = tree.users_of(cluster, name);
    accounts
        .map(|a| (Child::Account(&a.name), a.share))
        .chain(users.map(|u| (Child::User(&u.user), u.share)))
        .collect()
}
