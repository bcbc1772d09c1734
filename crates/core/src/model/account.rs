//! Accounts and shares: the tree a site's fairshare divides the cluster along.
//!
//! Batch systems (Slurm, PBS, Maui) give each account a number of shares among its siblings;
//! a user's entitlement is its share of its parent's, down from the root. Policies read
//! entitlements from this one tree.

use serde::Serialize;
use std::collections::BTreeMap;
use thiserror::Error;

/// An association's shares among its siblings, as Slurm's `Fairshare=` gives them: a number,
/// or `"parent"` in a file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawShares {
    /// A number of shares among its siblings; 0 entitles it to nothing.
    Count(f64),
    /// `parent`: none of its own. A user competes as its account does (Fair Tree puts it first
    /// among its account's children; classic gives it its account's factor); an account's
    /// children compete as children of its nearest ancestor that has shares of its own.
    Parent,
}

impl RawShares {
    /// The raw shares it adds to its level: a `parent` association adds none.
    pub fn raw(self) -> f64 {
        match self {
            RawShares::Count(s) => s,
            RawShares::Parent => 0.0,
        }
    }

    /// Whether it is `parent`.
    pub fn is_parent(self) -> bool {
        self == RawShares::Parent
    }

    /// Whether it is usable: `parent`, or a finite number ≥ 0.
    pub fn is_valid(self) -> bool {
        match self {
            RawShares::Count(s) => s.is_finite() && s >= 0.0,
            RawShares::Parent => true,
        }
    }
}

impl From<f64> for RawShares {
    fn from(raw: f64) -> RawShares {
        RawShares::Count(raw)
    }
}

impl Serialize for RawShares {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RawShares::Count(raw) => s.serialize_f64(*raw),
            RawShares::Parent => s.serialize_str("parent"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for RawShares {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawShares, D::Error> {
        /// A number or the word `parent`.
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Word(String),
        }
        match Written::deserialize(d) {
            Ok(Written::Number(raw)) => Ok(RawShares::Count(raw)),
            Ok(Written::Word(word)) if word == "parent" => Ok(RawShares::Parent),
            _ => Err(serde::de::Error::custom(
                "expected a number of shares >= 0 or \"parent\"",
            )),
        }
    }
}

impl std::fmt::Display for RawShares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawShares::Count(s) => write!(f, "{s}"),
            RawShares::Parent => f.write_str("parent"),
        }
    }
}

/// One account (or user): its name, its parent and its shares among its siblings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Account {
    /// The name, unique among the tree's accounts (a user may be named like an account, as
    /// Slurm's `root` user under the `root` account is).
    pub name: String,
    /// The parent account's index; `None` for the root.
    pub parent: Option<usize>,
    /// Shares among its siblings.
    pub shares: RawShares,
    /// Whether it is a user (a leaf that jobs are charged to) rather than an account.
    pub user: bool,
}

/// A tree of accounts, the root first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountTree {
    accounts: Vec<Account>,
    /// Each account's index by name, and each user's by name and parent: adding one to a tree
    /// of ten thousand checks its name in O(log n).
    #[serde(skip)]
    index: BTreeMap<(String, Option<usize>), usize>,
}

/// An account that cannot join a tree.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AccountError {
    /// The name is already in the tree.
    #[error("account {0:?} is already in the tree")]
    Duplicate(String),
    /// The parent is not in the tree.
    #[error("account {name:?}: no parent account with index {parent}")]
    NoParent {
        /// The new account's name.
        name: String,
        /// The parent index given.
        parent: usize,
    },
    /// Shares must be `parent` or a finite number ≥ 0.
    #[error("account {name:?}: shares must be `parent` or a finite number >= 0, found {shares}")]
    BadShares {
        /// The new account's name.
        name: String,
        /// The shares given.
        shares: RawShares,
    },
    /// The root's shares are its own.
    #[error("the root's shares cannot be `parent`")]
    RootParent,
    /// Only an account can be a parent.
    #[error("{name:?}: its parent {parent:?} is a user, not an account")]
    UserParent {
        /// The new association's name.
        name: String,
        /// The user named as its parent.
        parent: String,
    },
}

impl AccountTree {
    /// A tree with only its root, named `root`.
    pub fn new(root: impl Into<String>) -> AccountTree {
        let name = root.into();
        AccountTree {
            index: BTreeMap::from([((name.clone(), None), 0)]),
            accounts: vec![Account {
                name,
                parent: None,
                shares: RawShares::Count(1.0),
                user: false,
            }],
        }
    }

    /// Adds an account under `parent` with `shares`, returning its index.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        parent: usize,
        shares: impl Into<RawShares>,
    ) -> Result<usize, AccountError> {
        let name = name.into();
        if self.index_of(&name).is_some() {
            return Err(AccountError::Duplicate(name));
        }
        self.push(name, parent, shares.into(), false)
    }

    /// Adds a user under account `parent` with `shares`, returning its index; a user may be
    /// named like an account, and one user may sit under several accounts (once under each).
    pub fn add_user(
        &mut self,
        name: impl Into<String>,
        parent: usize,
        shares: impl Into<RawShares>,
    ) -> Result<usize, AccountError> {
        let name = name.into();
        if self.index.contains_key(&(name.clone(), Some(parent))) {
            return Err(AccountError::Duplicate(name));
        }
        self.push(name, parent, shares.into(), true)
    }

    fn push(
        &mut self,
        name: String,
        parent: usize,
        shares: RawShares,
        user: bool,
    ) -> Result<usize, AccountError> {
        let Some(above) = self.accounts.get(parent) else {
            return Err(AccountError::NoParent { name, parent });
        };
        if above.user {
            let parent = above.name.clone();
            return Err(AccountError::UserParent { name, parent });
        }
        if !shares.is_valid() {
            return Err(AccountError::BadShares { name, shares });
        }
        let at = self.accounts.len();
        let key = (name.clone(), user.then_some(parent));
        self.index.insert(key, at);
        self.accounts.push(Account {
            name,
            parent: Some(parent),
            shares,
            user,
        });
        Ok(at)
    }

    /// The accounts and users, the root first, each after its parent.
    pub fn accounts(&self) -> &[Account] {
        &self.accounts
    }

    /// The index of the account (not user) named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(&(name.to_owned(), None)).copied()
    }

    /// Each association's fairshare parent (see [`fairshare_parents`]).
    pub fn fairshare_parents(&self) -> Vec<Option<usize>> {
        fairshare_parents(self.accounts.iter().map(|a| (a.parent, a.shares)))
    }

    /// The fraction of the whole cluster association `index` is entitled to; see
    /// [`AccountTree::entitlements`].
    pub fn entitlement(&self, index: usize) -> f64 {
        self.entitlements().get(index).copied().unwrap_or(0.0)
    }

    /// Every association's fraction of the whole cluster, as Slurm classic normalises shares:
    /// the product, down from the root, of its shares over its level's (the associations
    /// competing under the same fairshare parent); a `parent` association is entitled as its
    /// fairshare parent is, and 0 shares anywhere on the way entitle to nothing.
    pub fn entitlements(&self) -> Vec<f64> {
        let n = self.accounts.len();
        let fs_parent = self.fairshare_parents();
        let mut level = vec![0.0; n];
        for (i, f) in fs_parent.iter().enumerate() {
            if let Some(f) = f {
                level[*f] += self.accounts[i].shares.raw();
            }
        }
        let mut entitled = vec![1.0; n];
        for i in 0..n {
            let Some(f) = fs_parent[i] else { continue };
            entitled[i] = match self.accounts[i].shares {
                RawShares::Parent => entitled[f],
                RawShares::Count(own) if level[f] > 0.0 => own / level[f] * entitled[f],
                RawShares::Count(_) => 0.0,
            };
        }
        entitled
    }
}

/// Each association's fairshare parent, from each one's parent and shares in tree order
/// (every parent before its children): the nearest ancestor whose shares are its own, whose
/// children it competes among (Slurm's `fs_assoc_ptr`); `None` for the root.
pub fn fairshare_parents(
    links: impl IntoIterator<Item = (Option<usize>, RawShares)>,
) -> Vec<Option<usize>> {
    let (mut fs_parent, mut shares): (Vec<Option<usize>>, Vec<RawShares>) =
        (Vec::new(), Vec::new());
    for (parent, own) in links {
        let f = parent.map(|p| match (shares[p], fs_parent[p]) {
            (RawShares::Parent, Some(above)) => above,
            _ => p,
        });
        fs_parent.push(f);
        shares.push(own);
    }
    fs_parent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entitlements_multiply_down_the_tree() {
        let mut tree = AccountTree::new("root");
        let physics = tree.add("physics", 0, 3.0).unwrap();
        let biology = tree.add("biology", 0, 1.0).unwrap();
        let alice = tree.add("alice", physics, 1.0).unwrap();
        let bob = tree.add("bob", physics, 2.0).unwrap();
        assert_eq!(tree.entitlement(0), 1.0);
        assert_eq!(tree.entitlement(biology), 0.25);
        assert_eq!(tree.entitlement(alice), 0.25);
        assert_eq!(tree.entitlement(bob), 0.5);
        assert!(tree.add("bob", 0, 1.0).is_err());
        assert!(tree.add("carol", 9, 1.0).is_err());
        assert!(tree.add("carol", 0, -1.0).is_err());
    }

    /// Slurm's `parent` and 0 shares: a `parent` account's children compete among its
    /// parent's, a `parent` user is entitled as its account is, 0 shares entitle to nothing,
    /// and a user may be named like an account.
    #[test]
    fn parent_and_zero_shares_as_slurm_normalises_them() {
        let mut tree = AccountTree::new("root");
        let root_user = tree.add_user("root", 0, 1.0).unwrap();
        let physics = tree.add("physics", 0, 2.0).unwrap();
        let group = tree.add("group", physics, RawShares::Parent).unwrap();
        let alice = tree.add_user("alice", group, 1.0).unwrap();
        let bob = tree.add_user("bob", physics, 3.0).unwrap();
        let carol = tree.add_user("carol", physics, RawShares::Parent).unwrap();
        let idle = tree.add("idle", 0, 0.0).unwrap();
        let dave = tree.add_user("dave", idle, 1.0).unwrap();
        let fs_parent = tree.fairshare_parents();
        assert_eq!(fs_parent[alice], Some(physics));
        assert_eq!(fs_parent[group], Some(physics));
        // root's level: root user 1, physics 2, idle 0; physics' level: alice 1, bob 3.
        assert_eq!(tree.entitlement(root_user), 1.0 / 3.0);
        assert_eq!(tree.entitlement(physics), 2.0 / 3.0);
        assert_eq!(tree.entitlement(alice), 0.25 * 2.0 / 3.0);
        assert_eq!(tree.entitlement(bob), 0.75 * 2.0 / 3.0);
        assert_eq!(tree.entitlement(carol), 2.0 / 3.0);
        assert_eq!(tree.entitlement(group), 2.0 / 3.0);
        assert_eq!(tree.entitlement(dave), 0.0);
        assert_eq!(tree.index_of("root"), Some(0), "the account, not the user");
        assert!(
            tree.add_user("alice", group, 1.0).is_err(),
            "twice under one account"
        );
        assert!(
            tree.add_user("alice", physics, 1.0).is_ok(),
            "under a second account"
        );
        assert!(tree.add("x", alice, 1.0).is_err(), "a user has no children");
    }
}
