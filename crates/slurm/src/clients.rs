//! Slurm's associations as a ranker's clients: every user association (a user under an
//! account) is one client, placed in the account tree with its shares.
//!
//! Slurm ranks associations, not users: a user who works in two accounts competes twice, once
//! in each. So a client here is an `(account, user)` pair, its entitlement is its fraction of
//! the cluster down the tree (its shares over its siblings', times its parent's), and
//! fairshare policies that read the tree (Fair Tree, classic, PBS) get the tree itself.
//!
//! Every association is ranked, as Slurm ranks it: one whose shares are `parent` competes as
//! its account does (Fair Tree puts a `parent` user first among its account's children, classic
//! gives it its account's factor, weighted policies its account's entitlement), one with 0
//! shares is entitled to nothing (Fair Tree and classic rank it last among its level; weighted
//! policies give it a vanishing weight). Only a user's second association with the same
//! account (limited to another partition) is left out, and its jobs are left alone.

use crate::assoc::{Associations, Share as AssocShare};
use fairshare_core::model::RawShares;
use fairshare_core::priority::fairshare::{standings, Association, FairshareFunction};
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
        built.account(tree, &cluster, ("root", RawShares::Count(1.0)), None);
        let Builder {
            walked: _,
            associations,
            leaf,
            names,
            left_out,
        } = built;
        if names.is_empty() {
            let why = match left_out.first() {
                Some((a, u, reason)) => format!("{u} under {a}: {reason}"),
                None => "it has none".into(),
            };
            return Err(ClientsError::Empty(cluster, why));
        }
        // Entitlements as Slurm classic normalises shares down the tree.
        let normalized = standings(&associations, FairshareFunction::SlurmClassic)
            .expect("the tree is built root first, parents before children, shares valid");
        let entitlements = leaf
            .iter()
            .map(|&l| normalized[l].normalized_shares)
            .collect();
        let accounts = Accounts::new(associations, leaf)
            .expect("the tree is built root first, parents before children, shares valid");
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

    /// Each client's weight and entitlement, as the stateless and SDRF rankers take them (a
    /// client entitled to nothing gets a vanishing weight).
    pub fn shares(&self) -> Vec<Share> {
        Share::entitled(&self.entitlements).expect("entitlements are finite and >= 0")
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
    left_out: Vec<(String, String, String)>,
}

impl Builder {
    /// Adds account `name` (with `own` shares among its siblings) under the association
    /// `parent` and everything below it.
    fn account(
        &mut self,
        tree: &Associations,
        cluster: &str,
        (name, own): (&str, RawShares),
        parent: Option<usize>,
    ) {
        if !self.walked.insert(name.to_string()) {
            return;
        }
        let at = self.associations.len();
        self.associations.push(Association {
            parent,
            shares: own,
            usage: 0.0,
            user: false,
        });
        for (child, share) in children(tree, cluster, name) {
            let share = raw_shares(share);
            match child {
                Child::Account(account) => self.account(tree, cluster, (account, share), Some(at)),
                Child::User(user) => self.user((name, user, share), at),
            }
        }
    }

    /// Adds `user` under `account` (association `parent`) with `own` shares as a client, or
    /// says why not.
    fn user(&mut self, (account, user, own): (&str, &str, RawShares), parent: usize) {
        let name = (account.to_string(), user.to_string());
        if self.names.contains(&name) {
            let why = "a second association of the same user and account (for another partition); the first is ranked";
            self.left_out.push((name.0, name.1, why.into()));
            return;
        }
        self.leaf.push(self.associations.len());
        self.associations.push(Association {
            parent: Some(parent),
            shares: own,
            usage: 0.0,
            user: true,
        });
        self.names.push(name);
    }
}

/// One child of an account: another account, or a user.
#[derive(Clone, Copy)]
enum Child<'a> {
    Account(&'a str),
    User(&'a str),
}

/// An association's shares as the core counts them.
fn raw_shares(share: AssocShare) -> RawShares {
    match share {
        AssocShare::Value(s) => RawShares::Count(f64::from(s)),
        AssocShare::Parent => RawShares::Parent,
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
