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

use fairshare_core::priority::fairshare::associations;
use fairshare_core::rank::{Accounts, Share};
use fairshare_trace::assoc::{Associations, ClusterTree};
use std::collections::BTreeMap;

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
#[non_exhaustive]
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
            None => match tree.only_cluster() {
                Ok(Some(one)) => one,
                Ok(None) => return Err(ClientsError::NoRoot("(none listed)".into())),
                Err(many) => return Err(ClientsError::WhichCluster(many.join(", "))),
            },
        };
        let Some(walked) = tree.tree_of(&cluster) else {
            return Err(ClientsError::NoRoot(cluster));
        };
        let ClusterTree {
            tree,
            users,
            left_out,
        } = walked;
        if users.is_empty() {
            let why = match left_out.first() {
                Some((a, u, reason)) => format!("{u} under {a}: {reason}"),
                None => "it has none".into(),
            };
            return Err(ClientsError::Empty(cluster, why));
        }
        // Entitlements as Slurm classic normalises shares down the tree.
        let all = tree.entitlements();
        let leaf: Vec<usize> = users.iter().map(|(.., at)| *at).collect();
        let entitlements = leaf.iter().map(|&l| all[l]).collect();
        let accounts = Accounts::new(associations(&tree), leaf)
            .expect("the tree is built root first, parents before children, shares valid");
        let names: Vec<(String, String)> = users.into_iter().map(|(a, u, _)| (a, u)).collect();
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
