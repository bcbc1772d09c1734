//! A scheduler's associations as a ranker's clients: every user association (a user under an
//! account) is one client, placed in the account tree with its shares.
//!
//! Slurm, like most batch schedulers with accounts, ranks associations, not users: a user who works in two accounts competes twice, once
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

use fairshare_core::model::AccountTree;
use fairshare_core::priority::fairshare::{associations, TreeError};
use fairshare_core::rank::{Accounts, Share};
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

/// Why a tree's clients cannot be ranked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientsError {
    /// No user association can be ranked.
    #[error("no user association of cluster `{cluster}` can be ranked: {why}")]
    Empty {
        /// The cluster.
        cluster: String,
        /// Why its first user association was left out, or that it has none.
        why: String,
    },
    /// The tree is not one: a parent after its child, a user placed outside it, bad shares.
    #[error("the account tree of cluster `{cluster}`")]
    Tree {
        /// The cluster.
        cluster: String,
        /// What is wrong with it.
        #[source]
        source: TreeError,
    },
}

/// One cluster's account tree, with its user associations placed in it: what an adapter reads
/// from its scheduler's accounts.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    /// The cluster's name.
    pub cluster: String,
    /// The accounts and users, root first, parents before children.
    pub accounts: AccountTree,
    /// Each user association placed in the tree: its account, its user and its index there.
    pub users: Vec<(String, String, usize)>,
    /// The user associations left out, each with why: `(account, user, reason)`.
    pub left_out: Vec<(String, String, String)>,
}

impl Clients {
    /// The clients of `tree`, or why none can be ranked.
    pub fn new(tree: Tree) -> Result<Clients, ClientsError> {
        let Tree {
            cluster,
            accounts: tree,
            users,
            left_out,
        } = tree;
        if users.is_empty() {
            let why = match left_out.first() {
                Some((a, u, reason)) => format!("{u} under {a}: {reason}"),
                None => "it has none".into(),
            };
            return Err(ClientsError::Empty { cluster, why });
        }
        let leaf: Vec<usize> = users.iter().map(|(.., at)| *at).collect();
        let accounts = Accounts::new(associations(&tree), leaf.clone())
            .map_err(|source| ClientsError::Tree { cluster, source })?;
        // Entitlements as Slurm classic normalises shares down the tree.
        let all = tree.entitlements();
        let entitlements = leaf.iter().map(|&l| all[l]).collect();
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
            None => "no such association in the account tree".into(),
        })
    }

    /// Each client's weight and entitlement, as the stateless and SDRF rankers take them (a
    /// client entitled to nothing gets a vanishing weight).
    pub fn shares(&self) -> Vec<Share> {
        Share::entitled(&self.entitlements).expect("entitlements are finite and >= 0")
    }
}
