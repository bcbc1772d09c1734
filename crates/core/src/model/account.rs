//! Accounts and shares: the tree a site's fairshare divides the cluster along.
//!
//! Batch systems (Slurm, PBS, Maui) give each account a number of shares among its siblings;
//! a user's entitlement is its share of its parent's, down from the root. Policies read
//! entitlements from this one tree.

use serde::Serialize;
use thiserror::Error;

/// One account: its name, its parent and its shares among its siblings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Account {
    /// The account's name, unique in its tree.
    pub name: String,
    /// The parent account's index; `None` for the root.
    pub parent: Option<usize>,
    /// Shares among its siblings (positive).
    pub shares: f64,
}

/// A tree of accounts, the root first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountTree {
    accounts: Vec<Account>,
}

/// An account that cannot join a tree.
#[derive(Debug, Clone, PartialEq, Error)]
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
    /// Shares must be positive and finite.
    #[error("account {name:?}: shares must be a positive finite number, found {shares}")]
    BadShares {
        /// The new account's name.
        name: String,
        /// The shares given.
        shares: f64,
    },
}

impl AccountTree {
    /// A tree with only its root, named `root`.
    pub fn new(root: impl Into<String>) -> AccountTree {
        AccountTree {
            accounts: vec![Account {
                name: root.into(),
                parent: None,
                shares: 1.0,
            }],
        }
    }

    /// Adds an account under `parent` with `shares`, returning its index.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        parent: usize,
        shares: f64,
    ) -> Result<usize, AccountError> {
        let name = name.into();
        if self.index_of(&name).is_some() {
            return Err(AccountError::Duplicate(name));
        }
        if parent >= self.accounts.len() {
            return Err(AccountError::NoParent { name, parent });
        }
        if !(shares.is_finite() && shares > 0.0) {
            return Err(AccountError::BadShares { name, shares });
        }
        self.accounts.push(Account {
            name,
            parent: Some(parent),
            shares,
        });
        Ok(self.accounts.len() - 1)
    }

    /// The accounts, the root first, each after its parent.
    pub fn accounts(&self) -> &[Account] {
        &self.accounts
    }

    /// The index of the account named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.accounts.iter().position(|a| a.name == name)
    }

    /// The fraction of the whole cluster account `index` is entitled to: the product, from the
    /// account up to the root, of its shares over the shares of it and its siblings.
    pub fn entitlement(&self, index: usize) -> f64 {
        let mut fraction = 1.0;
        let mut at = index;
        while let Some(parent) = self.accounts.get(at).and_then(|a| a.parent) {
            let siblings: f64 = self
                .accounts
                .iter()
                .filter(|a| a.parent == Some(parent))
                .map(|a| a.shares)
                .sum();
            fraction *= self.accounts[at].shares / siblings;
            at = parent;
        }
        fraction
    }
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
        assert!(tree.add("carol", 0, 0.0).is_err());
    }
}
