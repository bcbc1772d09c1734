//! The association tree — accounts under accounts, users under accounts, each with its shares —
//! from `sacctmgr show assoc`.
//!
//! fairshare's policies divide the cluster along this tree, so it is read from Slurm rather
//! than written twice. `sacctmgr -P` prints one `|`-separated line per association; a line with
//! no user is an account (its parent in `ParentName`), a line with a user is that user under
//! the line's account (`ParentName` empty). A share is a number or `parent`: the association
//! then has no shares of its own and counts as part of its parent account. A seventh column,
//! `Priority`, is read when it is there (outputs saved without it still read): the
//! association's priority, which Slurm's `PriorityWeightAssoc` weighs.

use crate::slurm_output::{lines, Problem, ReadError};
use fairshare_core::model::{AccountTree, RawShares};
use std::collections::{BTreeMap, BTreeSet};

/// The command, with its arguments, whose output [`parse_assoc`] reads.
pub const SACCTMGR_COMMAND: [&str; 6] = [
    "sacctmgr",
    "show",
    "assoc",
    "--parsable2",
    "--noheader",
    "format=Cluster,Account,User,Partition,Share,ParentName,Priority",
];

/// The columns of [`SACCTMGR_COMMAND`]'s format, in order, as errors name them; the last,
/// `Priority`, may be left out.
const COLUMNS: [&str; 7] = [
    "Cluster",
    "Account",
    "User",
    "Partition",
    "Share",
    "ParentName",
    "Priority",
];

/// An association's shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssocShares {
    /// Its own raw shares.
    Value(u32),
    /// `parent`: none of its own; it counts as part of its parent account.
    Parent,
}

/// An account: a node of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The cluster it belongs to.
    pub cluster: String,
    /// Its name.
    pub name: String,
    /// Its parent account; `None` for `root`.
    pub parent: Option<String>,
    /// Its shares among its siblings.
    pub share: AssocShares,
    /// Its `Priority`, as `sacctmgr` shows it (inherited from its parent when it sets none);
    /// `None` when the column is absent or empty.
    pub priority: Option<u32>,
}

/// A user's association with one account (and possibly one partition): a leaf of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserAssoc {
    /// The cluster it belongs to.
    pub cluster: String,
    /// The account it sits under.
    pub account: String,
    /// The user's name.
    pub user: String,
    /// The partition it is limited to, if any.
    pub partition: Option<String>,
    /// Its shares among the account's children.
    pub share: AssocShares,
    /// Its `Priority`, as `sacctmgr` shows it (inherited from its account when it sets none);
    /// `None` when the column is absent or empty.
    pub priority: Option<u32>,
}

/// The association tree, in `sacctmgr`'s order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Associations {
    /// Every account.
    pub accounts: Vec<Account>,
    /// Every user association.
    pub users: Vec<UserAssoc>,
}

impl Associations {
    /// The account named `name` in `cluster`.
    pub fn account(&self, cluster: &str, name: &str) -> Option<&Account> {
        self.accounts
            .iter()
            .find(|a| a.cluster == cluster && a.name == name)
    }

    /// The accounts whose parent is `name` in `cluster`.
    pub fn child_accounts<'a>(
        &'a self,
        cluster: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Account> {
        self.accounts
            .iter()
            .filter(move |a| a.cluster == cluster && a.parent.as_deref() == Some(name))
    }

    /// The priority of each user association of `cluster`, by account and user, as
    /// slurmctld holds it: its own, else the first set on the way up its accounts, else 0
    /// (Slurm's unset priority); a user's first association under an account counts.
    pub fn user_priorities(&self, cluster: &str) -> BTreeMap<(&str, &str), u32> {
        let accounts: BTreeMap<&str, &Account> = (self.accounts.iter())
            .filter(|a| a.cluster == cluster)
            .map(|a| (a.name.as_str(), a))
            .collect();
        let inherited = |account: &str| {
            let mut at = accounts.get(account);
            // At most one step per account, so that a circle of parents ends.
            for _ in 0..=accounts.len() {
                let found = at?;
                if found.priority.is_some() {
                    return found.priority;
                }
                at = found.parent.as_deref().and_then(|p| accounts.get(p));
            }
            None
        };
        let mut priorities = BTreeMap::new();
        for u in self.users.iter().filter(|u| u.cluster == cluster) {
            let key = (u.account.as_str(), u.user.as_str());
            let priority = u.priority.or_else(|| inherited(&u.account));
            priorities.entry(key).or_insert(priority.unwrap_or(0));
        }
        priorities
    }

    /// The highest priority of `cluster`'s associations, accounts' and users' (Slurm's
    /// `g_assoc_max_priority`, which each association's priority factor is a fraction of): an
    /// inherited priority is some association's own, so the highest listed.
    pub fn highest_priority(&self, cluster: &str) -> u32 {
        let accounts = (self.accounts.iter())
            .filter(|a| a.cluster == cluster)
            .map(|a| a.priority);
        let users = (self.users.iter())
            .filter(|u| u.cluster == cluster)
            .map(|u| u.priority);
        accounts.chain(users).flatten().max().unwrap_or(0)
    }

    /// The user associations under the account `name` in `cluster`.
    pub fn users_of<'a>(
        &'a self,
        cluster: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = &'a UserAssoc> {
        self.users
            .iter()
            .filter(move |u| u.cluster == cluster && u.account == name)
    }
}

/// One cluster's associations as an account tree: accounts and users as `sacctmgr` lists them,
/// depth first from `root`, each with its shares (`parent` and 0 included).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterTree {
    /// The accounts and users.
    pub tree: AccountTree,
    /// Each user association placed in the tree: its account, its user and its index there.
    pub users: Vec<(String, String, usize)>,
    /// The user associations left out, each with why: `(account, user, reason)`.
    pub left_out: Vec<(String, String, String)>,
}

impl Associations {
    /// The one cluster listed: `Ok(None)` when none is, `Err` with their names when several are.
    pub fn only_cluster(&self) -> Result<Option<String>, Vec<String>> {
        let mut clusters: Vec<&str> = self.accounts.iter().map(|a| a.cluster.as_str()).collect();
        clusters.sort_unstable();
        clusters.dedup();
        match clusters.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.to_string())),
            many => Err(many.iter().map(|c| c.to_string()).collect()),
        }
    }

    /// The tree of `cluster`, walked depth first from its `root` account (child accounts
    /// first, then users, in `sacctmgr`'s order); `None` when it has no `root` account. An
    /// account named twice, or in a circle, is walked once; a user's second association with
    /// the same account (limited to another partition) is left out.
    pub fn tree_of(&self, cluster: &str) -> Option<ClusterTree> {
        self.account(cluster, "root")?;
        // Each account's child accounts and users, in order, found in one pass each.
        let mut child_accounts: BTreeMap<&str, Vec<&Account>> = BTreeMap::new();
        for a in self.accounts.iter().filter(|a| a.cluster == cluster) {
            if let Some(parent) = &a.parent {
                child_accounts.entry(parent).or_default().push(a);
            }
        }
        let mut users: BTreeMap<&str, Vec<&UserAssoc>> = BTreeMap::new();
        for u in self.users.iter().filter(|u| u.cluster == cluster) {
            users.entry(&u.account).or_default().push(u);
        }
        let mut built = ClusterTree {
            tree: AccountTree::new("root"),
            users: Vec::new(),
            left_out: Vec::new(),
        };
        // Depth first with a stack of what is left to visit, so a deep tree needs no deep
        // recursion: an account's users come after its child accounts' whole subtrees.
        let mut stack = vec![Visit::Account("root", 0)];
        while let Some(visit) = stack.pop() {
            match visit {
                Visit::Account(name, at) => {
                    let kids = users
                        .get(name)
                        .into_iter()
                        .flatten()
                        .rev()
                        .map(|u| Visit::User(name, u, at));
                    stack.extend(kids);
                    for account in child_accounts.get(name).into_iter().flatten().rev() {
                        stack.push(Visit::Child(account, at));
                    }
                }
                Visit::Child(account, at) => {
                    let shares = raw_shares(account.share);
                    if let Ok(index) = built.tree.add(account.name.as_str(), at, shares) {
                        stack.push(Visit::Account(&account.name, index));
                    }
                }
                Visit::User(account, user, at) => built.add_user(account, user, at),
            }
        }
        Some(built)
    }
}

/// What the walk of [`Associations::tree_of`] has left to do.
enum Visit<'a> {
    /// Visit what is under the account of this name, at this index.
    Account(&'a str, usize),
    /// Add this account under the one at this index, then visit it.
    Child(&'a Account, usize),
    /// Add this user association under the account (named) at this index.
    User(&'a str, &'a UserAssoc, usize),
}

impl ClusterTree {
    /// Adds `user` under `account` (at index `at`), or leaves it out with why.
    fn add_user(&mut self, account: &str, user: &UserAssoc, at: usize) {
        let shares = raw_shares(user.share);
        match self.tree.add_user(user.user.as_str(), at, shares) {
            Ok(index) => self
                .users
                .push((account.to_string(), user.user.clone(), index)),
            Err(_) => {
                let why = match &user.partition {
                    Some(p) => format!("a second association of the same user and account (for partition {p}); the first is ranked"),
                    None => "listed twice under the same account; the first is ranked".into(),
                };
                self.left_out
                    .push((account.to_string(), user.user.clone(), why));
            }
        }
    }
}

/// An association's shares as the core counts them.
fn raw_shares(share: AssocShares) -> RawShares {
    match share {
        AssocShares::Value(s) => RawShares::Count(f64::from(s)),
        AssocShares::Parent => RawShares::Parent,
    }
}

/// The association tree in `sacctmgr`'s output `text` (see [`SACCTMGR_COMMAND`]). Every parent
/// named must be an account listed, in the same cluster.
pub fn parse_assoc(text: &str) -> Result<Associations, ReadError> {
    let mut tree = Associations::default();
    let mut named = Lines::default();
    for (record, line) in lines(text) {
        let columns: Vec<&str> = line.split('|').map(str::trim).collect();
        if !(COLUMNS.len() - 1..=COLUMNS.len()).contains(&columns.len()) {
            let problem = Problem::Invalid(format!("{} columns, not 6 or 7", columns.len()));
            return Err(ReadError::field_of(&record, "format", problem));
        }
        if add_line(&mut tree, &columns, &record)? {
            named.accounts.push(record);
        } else {
            named.users.push(record);
        }
    }
    check_parents(&tree, &named)?;
    Ok(tree)
}

/// The line of each account and of each user association, in `Associations`' order.
#[derive(Default)]
struct Lines {
    accounts: Vec<String>,
    users: Vec<String>,
}

/// Adds the association of one line's `columns` to `tree`; whether it is an account.
fn add_line(tree: &mut Associations, columns: &[&str], record: &str) -> Result<bool, ReadError> {
    let required = |i: usize| match columns[i] {
        "" => Err(ReadError::field_of(record, COLUMNS[i], Problem::Missing)),
        value => Ok(value.to_string()),
    };
    let cluster = required(0)?;
    let account = required(1)?;
    let share = share(columns[4], record)?;
    let priority = priority(columns.get(6).copied().unwrap_or_default(), record)?;
    let optional = |i: usize| Some(columns[i].to_string()).filter(|s| !s.is_empty());
    if columns[2].is_empty() {
        let parent = optional(5);
        if parent.is_none() && account != "root" {
            return Err(ReadError::field_of(record, "ParentName", Problem::Missing));
        }
        tree.accounts.push(Account {
            cluster,
            name: account,
            parent,
            share,
            priority,
        });
        Ok(true)
    } else {
        tree.users.push(UserAssoc {
            cluster,
            account,
            user: columns[2].to_string(),
            partition: optional(3),
            share,
            priority,
        });
        Ok(false)
    }
}

/// The share in the `Share` column `text`.
fn share(text: &str, record: &str) -> Result<AssocShares, ReadError> {
    match text {
        "" => Err(ReadError::field_of(record, "Share", Problem::Missing)),
        "parent" => Ok(AssocShares::Parent),
        number => number.parse().map(AssocShares::Value).map_err(|_| {
            let problem = Problem::WrongType("a number or `parent`");
            ReadError::field_of(record, "Share", problem)
        }),
    }
}

/// The priority in the `Priority` column `text`: none when empty.
fn priority(text: &str, record: &str) -> Result<Option<u32>, ReadError> {
    match text {
        "" => Ok(None),
        number => number.parse().map(Some).map_err(|_| {
            let problem = Problem::WrongType("a whole number from 0");
            ReadError::field_of(record, "Priority", problem)
        }),
    }
}

/// Every account's parent, and every user's account, is an account of the same cluster.
fn check_parents(tree: &Associations, lines: &Lines) -> Result<(), ReadError> {
    let known: BTreeSet<(&str, &str)> = tree
        .accounts
        .iter()
        .map(|a| (a.cluster.as_str(), a.name.as_str()))
        .collect();
    let listed = |cluster: &str, name: &str, record: &str, field: &'static str| {
        let problem = Problem::Invalid(format!("`{name}` is not an account listed"));
        match known.contains(&(cluster, name)) {
            true => Ok(()),
            false => Err(ReadError::field_of(record, field, problem)),
        }
    };
    for (account, record) in tree.accounts.iter().zip(&lines.accounts) {
        if let Some(parent) = &account.parent {
            listed(&account.cluster, parent, record, "ParentName")?;
        }
    }
    for (user, record) in tree.users.iter().zip(&lines.users) {
        listed(&user.cluster, &user.account, record, "Account")?;
    }
    Ok(())
}
