//! Share files: the accounts of a site, their shares, and which account each user charges.
//!
//! Batch systems divide a cluster along a tree of accounts (Slurm's associations, PBS's
//! fairshare groups): each account has shares among its siblings, users sit under accounts
//! with shares of their own, and a user's entitlement is its share of its account's,
//! normalised down the tree from the root as Slurm normalises shares. A share file says this
//! in TOML:
//!
//! ```toml
//! [defaults]            # for users the file does not list (these are the defaults)
//! account = "root"      # the account they fall under
//! shares = 1            # their shares there
//!
//! [accounts]            # any order; `parent` defaults to the root
//! physics = { shares = 3 }
//! theory = { parent = "physics", shares = 1 }
//! biology = { shares = 1 }
//!
//! [users]
//! alice = { account = "physics", shares = 2 }
//! "1029" = { account = "biology" }   # shares default to 1
//! bob = { account = "theory", shares = "parent" }   # competes as theory does
//! carol = { account = "physics", shares = 0 }       # entitled to nothing
//! root = { account = "root" }   # a user may be named like an account
//! ```
//!
//! Shares are Slurm's: a number ≥ 0, or `"parent"` (an account's children then compete among
//! its parent's; a user competes as its account does). Users and accounts are nodes of one
//! [`AccountTree`], users as leaves. The root is named `root`.

use crate::TraceError;
use fairshare_core::error::Invalid;
use fairshare_core::model::{AccountError, AccountTree, RawShares};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a share file says, before the trace's users are placed in it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareFile {
    /// Where users the file does not list go.
    #[serde(default)]
    pub defaults: Defaults,
    /// Accounts by name.
    #[serde(default)]
    pub accounts: BTreeMap<String, AccountEntry>,
    /// Users by name (as the trace names them).
    #[serde(default)]
    pub users: BTreeMap<String, UserEntry>,
}

/// Where users a share file does not list go.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Their account (default: the root).
    #[serde(default = "root")]
    pub account: String,
    /// Their shares there (default 1).
    #[serde(default = "one")]
    pub shares: RawShares,
}

impl Default for Defaults {
    fn default() -> Defaults {
        Defaults {
            account: root(),
            shares: one(),
        }
    }
}

/// One account of a share file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountEntry {
    /// Its parent account (default: the root).
    #[serde(default = "root")]
    pub parent: String,
    /// Its shares among its siblings (default 1), or `"parent"`.
    #[serde(default = "one")]
    pub shares: RawShares,
}

/// One user of a share file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserEntry {
    /// Its account (default: the root).
    #[serde(default = "root")]
    pub account: String,
    /// Its shares among its account's children (default 1), or `"parent"`.
    #[serde(default = "one")]
    pub shares: RawShares,
}

fn root() -> String {
    "root".into()
}

fn one() -> RawShares {
    RawShares::Count(1.0)
}

/// The accounts with a trace's users placed in them.
#[derive(Debug, Clone, PartialEq)]
pub struct Shares {
    /// Accounts and users, users as leaves.
    pub tree: AccountTree,
    /// Each trace user's leaf in the tree, in the trace's user order.
    pub leaf: Vec<usize>,
    /// How many trace users the file does not list (placed by its defaults).
    pub unlisted: usize,
    /// The leaves of users the file lists but the trace does not have (they still take their
    /// shares).
    pub absent: Vec<usize>,
    /// Each trace user's association priority factor in [0, 1], in the trace's user order: its
    /// association's `Priority` over the highest (Slurm's normalised association priority);
    /// `None` when the file gives no association a priority above 0.
    pub assoc_factors: Option<Vec<f64>>,
}

impl Shares {
    /// Each trace user's entitlement: its fraction of the whole cluster, down the tree.
    pub fn entitlements(&self) -> Vec<f64> {
        let all = self.tree.entitlements();
        self.leaf.iter().map(|&l| all[l]).collect()
    }

    /// The account each trace user charges (its leaf's parent).
    pub fn account_of(&self, user: usize) -> usize {
        self.tree.accounts()[self.leaf[user]].parent.unwrap_or(0)
    }
}

/// Reads the share file at `path` and places the trace's `users` in it: a TOML share file, or
/// the output of `sacctmgr -P -n show assoc
/// format=Cluster,Account,User,Partition,Share,ParentName,Priority` as it is (recognised by
/// its seven `|`-separated columns, or six without `Priority`), of `cluster` when it names one
/// (see [`from_sacctmgr`]).
pub fn read_shares(
    path: &Path,
    users: &[String],
    cluster: Option<&str>,
) -> Result<Shares, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|error| TraceError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    if is_sacctmgr(&text) {
        return from_sacctmgr(&text, users, cluster).map_err(|message| bad(path, message.0));
    }
    let file: ShareFile = toml::from_str(&text).map_err(|e| bad(path, e.to_string()))?;
    place(&file, users).map_err(|message| bad(path, message.0))
}

/// Whether `text` is `sacctmgr -P` output of the association format: its first line that says
/// something has six or seven columns (a TOML line has no `|` outside a string).
fn is_sacctmgr(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| !l.contains('=') && (6..=7).contains(&l.split('|').count()))
}

/// The tree of `sacctmgr`'s association output `text` with `users` placed in it: each trace
/// user at its first association in `sacctmgr`'s order (its others still take their shares, as
/// users absent from the trace do), a user the tree lacks under the root with 1 share. The
/// tree is `cluster`'s when given (a Slurm configuration's `ClusterName`: refused when the
/// output does not list it), else the one cluster the output lists.
pub fn from_sacctmgr(
    text: &str,
    users: &[String],
    cluster: Option<&str>,
) -> Result<Shares, Invalid> {
    let associations =
        crate::assoc::parse_assoc(text).map_err(|e| format!("sacctmgr's output: {e}"))?;
    let listed = match associations.only_cluster() {
        Ok(Some(one)) => vec![one],
        Ok(None) => return Err(Invalid("sacctmgr's output lists no account".into())),
        Err(many) => many,
    };
    let cluster = match (cluster, listed.as_slice()) {
        (Some(wanted), _) if listed.iter().any(|c| c == wanted) => wanted.to_owned(),
        (Some(wanted), _) => {
            return Err(Invalid(format!(
                "sacctmgr's output lists the cluster{} {}, not the cluster {wanted} asked for",
                if listed.len() == 1 { "" } else { "s" },
                listed.join(", ")
            )))
        }
        (None, [one]) => one.clone(),
        (None, many) => {
            return Err(Invalid(format!(
                "sacctmgr's output lists several clusters ({}); keep one cluster's lines \
                 (sacctmgr show assoc where cluster=NAME), or name the cluster (the Slurm \
                 configuration's ClusterName, or --cluster)",
                many.join(", ")
            )))
        }
    };
    let walked = associations
        .tree_of(&cluster)
        .ok_or_else(|| format!("cluster `{cluster}` has no root account"))?;
    let mut tree = walked.tree;
    let mut first: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for (account, user, at) in &walked.users {
        first
            .entry(user.as_str())
            .or_insert((*at, account.as_str()));
    }
    let priorities = associations.user_priorities(&cluster);
    let highest = associations.highest_priority(&cluster);
    let mut leaf = Vec::with_capacity(users.len());
    let mut assoc_factors = Vec::with_capacity(users.len());
    let mut unlisted = 0;
    for user in users {
        let (at, priority) = match first.remove(user.as_str()) {
            Some((at, account)) => {
                let priority = priorities.get(&(account, user.as_str()));
                (at, priority.copied().unwrap_or(0))
            }
            None => {
                unlisted += 1;
                let at =
                    (tree.add_user(user.as_str(), 0, 1.0)).map_err(|e| account_error(e, "user"))?;
                (at, 0)
            }
        };
        leaf.push(at);
        assoc_factors.push(f64::from(priority) / f64::from(highest.max(1)));
    }
    let placed: std::collections::BTreeSet<usize> = leaf.iter().copied().collect();
    let absent = (walked.users.iter())
        .map(|(.., at)| *at)
        .filter(|at| !placed.contains(at))
        .collect();
    Ok(Shares {
        tree,
        leaf,
        unlisted,
        absent,
        assoc_factors: (highest > 0).then_some(assoc_factors),
    })
}

fn bad(path: &Path, message: String) -> TraceError {
    TraceError::Shares {
        path: PathBuf::from(path),
        message: message.trim_end().to_owned(),
    }
}

/// The tree of `file` with `users` placed in it.
pub fn place(file: &ShareFile, users: &[String]) -> Result<Shares, Invalid> {
    let mut tree = AccountTree::new("root");
    let mut pending: Vec<(&String, &AccountEntry)> = (file.accounts.iter())
        .filter(|(name, entry)| !is_the_root(name, entry))
        .collect();
    if let Some(entry) = file.accounts.get("root").filter(|e| e.parent != "root") {
        return Err(Invalid(format!(
            "account \"root\": the root of the tree has no parent, found parent {:?}",
            entry.parent
        )));
    }
    while !pending.is_empty() {
        let before = pending.len();
        let mut waiting = Vec::new();
        for (name, entry) in pending {
            match tree.index_of(&entry.parent) {
                Some(parent) => {
                    tree.add(name.as_str(), parent, entry.shares)
                        .map_err(|e| account_error(e, "account"))?;
                }
                None => waiting.push((name, entry)),
            }
        }
        if waiting.len() == before {
            return Err(Invalid(unplaceable(&waiting)));
        }
        pending = waiting;
    }
    let default_account = account(&tree, &file.defaults.account, "[defaults]")?;
    let mut leaf = Vec::with_capacity(users.len());
    let mut unlisted = 0;
    for user in users {
        let (parent, shares) = match file.users.get(user) {
            Some(entry) => {
                let parent = account(&tree, &entry.account, &format!("user {user:?}"))?;
                (parent, entry.shares)
            }
            None => {
                unlisted += 1;
                (default_account, file.defaults.shares)
            }
        };
        let index = tree
            .add_user(user.as_str(), parent, shares)
            .map_err(|e| account_error(e, "user"))?;
        leaf.push(index);
    }
    let mut absent = Vec::new();
    for (name, entry) in &file.users {
        if !users.contains(name) {
            let parent = account(&tree, &entry.account, &format!("user {name:?}"))?;
            let index = tree
                .add_user(name.as_str(), parent, entry.shares)
                .map_err(|e| account_error(e, "user"))?;
            absent.push(index);
        }
    }
    Ok(Shares {
        tree,
        leaf,
        unlisted,
        absent,
        assoc_factors: None,
    })
}

/// Whether `entry` is the root itself, listed as `sacctmgr` lists it (an account `root` with no
/// other parent): it is the tree's root, not an account under it.
fn is_the_root(name: &str, entry: &AccountEntry) -> bool {
    name == "root" && entry.parent == "root"
}

/// Why none of the `waiting` accounts finds its parent: the cycle their parents form, named
/// account by account, or the first parent that is not an account of the file.
fn unplaceable(waiting: &[(&String, &AccountEntry)]) -> String {
    let parent_of = |name: &str| {
        waiting
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, e)| e.parent.as_str())
    };
    let (first, entry) = waiting[0];
    let mut chain = vec![first.as_str()];
    let mut parent = entry.parent.as_str();
    loop {
        if let Some(at) = chain.iter().position(|n| *n == parent) {
            let cycle: Vec<String> = (chain[at..].iter().chain([&parent]))
                .map(|n| format!("{n:?}"))
                .collect();
            return format!("accounts {}: their parents form a cycle", cycle.join(" → "));
        }
        let Some(next) = parent_of(parent) else {
            let child = chain[chain.len() - 1];
            return format!(
                "account {child:?}: its parent {parent:?} is not an account of the file"
            );
        };
        chain.push(parent);
        parent = next;
    }
}

/// The index of account `name`, or the error naming `whose` reference it was.
fn account(tree: &AccountTree, name: &str, whose: &str) -> Result<usize, String> {
    tree.index_of(name)
        .ok_or_else(|| format!("{whose}: no account {name:?} in the file"))
}

/// An account error in the words of a share file.
fn account_error(error: AccountError, what: &str) -> String {
    match error {
        AccountError::Duplicate(name) if what == "user" => {
            format!("user {name:?}: listed twice under the same account")
        }
        AccountError::Duplicate(name) => {
            format!("{what} {name:?}: the name is already an account of the file")
        }
        AccountError::BadShares { name, shares } => format!(
            "{what} {name:?}: shares must be `parent` or a finite number >= 0, found {shares}"
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn parse(text: &str) -> ShareFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn shares_normalise_down_the_tree_as_slurm_does() {
        let file = parse(
            r#"
            [accounts]
            theory = { parent = "physics", shares = 1 }
            physics = { shares = 3 }
            biology = { shares = 1 }
            [users]
            alice = { account = "theory", shares = 2 }
            bob = { account = "theory" }
            carol = { account = "biology" }
            "#,
        );
        let shares = place(&file, &users(&["carol", "alice", "bob", "dave"])).unwrap();
        // root: physics 3, biology 1, dave 1 (a default) → 3/5, 1/5, 1/5.
        // physics: theory alone → 3/5; theory: alice 2, bob 1 → 2/5, 1/5.
        let e = shares.entitlements();
        let expected = [0.2, 0.4, 0.2, 0.2];
        for (got, want) in e.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{e:?}");
        }
        assert_eq!(shares.unlisted, 1);
        let theory = shares.tree.index_of("theory").unwrap();
        assert_eq!(shares.account_of(1), theory);
        assert_eq!(shares.account_of(3), 0, "dave is under the root");
    }

    #[test]
    fn listed_users_absent_from_the_trace_still_take_their_shares() {
        let file = parse("[users]\nalice = {}\nghost = { shares = 3 }\n");
        let shares = place(&file, &users(&["alice"])).unwrap();
        assert_eq!(shares.entitlements(), vec![0.25]);
        assert_eq!(shares.absent, vec![2], "ghost is a leaf after alice");
    }

    /// A tree as Slurm's are: `parent` and 0 shares, and a `root` user under `root`.
    const SLURM_LIKE: &str = r#"
        [accounts]
        physics = { shares = 2 }
        group = { parent = "physics", shares = "parent" }
        idle = { shares = 0 }
        [users]
        root = {}
        alice = { account = "group" }
        bob = { account = "physics", shares = 3 }
        carol = { account = "physics", shares = "parent" }
        dave = { account = "idle" }
    "#;

    /// `parent` and 0 shares and a `root` user under `root`, as a Slurm tree has them.
    #[test]
    fn parent_and_zero_shares_and_a_root_user() {
        let file = parse(SLURM_LIKE);
        let shares = place(&file, &users(&["root", "alice", "bob", "carol", "dave"])).unwrap();
        let e = shares.entitlements();
        let want = [
            1.0 / 3.0,
            0.25 * 2.0 / 3.0,
            0.75 * 2.0 / 3.0,
            2.0 / 3.0,
            0.0,
        ];
        for (got, want) in e.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{e:?}");
        }
        assert_eq!(shares.account_of(0), 0, "the root user charges the root");
    }

    /// `sacctmgr`'s own output is a share file too: the same tree as the TOML that says it.
    #[test]
    fn sacctmgr_output_reads_as_its_toml() {
        let sacctmgr = "\
fairshare|root|||1|
fairshare|root|root||1|
fairshare|physics|||2|root
fairshare|group|||parent|physics
fairshare|group|alice||1|
fairshare|physics|bob||3|
fairshare|physics|carol||parent|
fairshare|idle|||0|root
fairshare|idle|dave||1|
fairshare|idle|bob||1|
";
        assert!(is_sacctmgr(sacctmgr));
        let trace = users(&["root", "alice", "bob", "carol", "dave", "erin"]);
        let got = from_sacctmgr(sacctmgr, &trace, None).unwrap();
        let toml = parse(SLURM_LIKE);
        let want = place(&toml, &trace).unwrap();
        assert_eq!(got.entitlements()[..5], want.entitlements()[..5]);
        assert_eq!((got.unlisted, want.unlisted), (1, 1), "erin");
        assert_eq!(got.absent.len(), 1, "bob's second association, under idle");
        assert!(!is_sacctmgr("[users]\nalice = { account = \"a|b\" }"));
        let two = format!("{sacctmgr}other|root|||1|\n");
        assert!(from_sacctmgr(&two, &trace, None)
            .unwrap_err()
            .contains("several clusters"));
        // The configuration's ClusterName picks its lines, and one the output lacks is refused.
        let picked = from_sacctmgr(&two, &trace, Some("fairshare")).unwrap();
        assert_eq!(picked.entitlements(), got.entitlements());
        let other = from_sacctmgr(&two, &trace, Some("other")).unwrap();
        assert_eq!(other.unlisted, trace.len(), "no user is listed there");
        let missing = from_sacctmgr(&two, &trace, Some("peer")).unwrap_err();
        assert!(
            missing.contains("lists the clusters fairshare, other, not the cluster peer asked for"),
            "{missing}"
        );
    }

    /// Each trace user's association factor is its priority (its own, else its account's up
    /// the tree) over the highest listed; a user the file lacks has 0; without a priority
    /// above 0 there are none.
    #[test]
    fn association_priorities_are_inherited_and_normalised() {
        let sacctmgr = "\
fairshare|root|||1||
fairshare|root|root||1||
fairshare|science|||3|root|50
fairshare|physics|||2|science|
fairshare|physics|alice||1||
fairshare|physics|bob||1||200
fairshare|chemistry|||1|root|
fairshare|chemistry|carol||1||
fairshare|chemistry|dave||1||0
";
        assert!(is_sacctmgr(sacctmgr));
        let trace = users(&["alice", "bob", "carol", "dave", "erin"]);
        let got = from_sacctmgr(sacctmgr, &trace, None).unwrap();
        assert_eq!(got.assoc_factors, Some(vec![0.25, 1.0, 0.0, 0.0, 0.0]));
        let none = sacctmgr
            .replace("||200", "||")
            .replace("|root|50", "|root|");
        let got = from_sacctmgr(&none, &trace, None).unwrap();
        assert_eq!(got.assoc_factors, None);
        let six: String = (none.lines())
            .map(|l| format!("{}\n", l.rsplit_once('|').unwrap().0))
            .collect();
        assert!(is_sacctmgr(&six));
        let got = from_sacctmgr(&six, &trace, None).unwrap();
        assert_eq!((got.assoc_factors, got.unlisted), (None, 1));
        let bad = from_sacctmgr(&sacctmgr.replace("||200", "||high"), &trace, None).unwrap_err();
        assert!(bad.contains("Priority"), "{bad}");
    }

    #[test]
    fn the_root_listed_as_sacctmgr_lists_it_is_the_root() {
        let file = parse("[accounts]\nroot = { shares = 1 }\nphysics = { parent = \"root\" }");
        let shares = place(&file, &users(&["alice"])).unwrap();
        assert_eq!(shares.tree.index_of("root"), Some(0));
        assert!(shares.tree.index_of("physics").is_some());
        let under = parse("[accounts]\nroot = { parent = \"physics\" }\nphysics = {}");
        assert!(place(&under, &[]).unwrap_err().contains("has no parent"));
    }

    #[test]
    fn mistakes_are_named() {
        let unknown = place(
            &parse("[users]\nalice = { account = \"x\" }"),
            &users(&["alice"]),
        );
        assert_eq!(
            unknown.unwrap_err(),
            "user \"alice\": no account \"x\" in the file"
        );
        let cycle = parse("[accounts]\na = { parent = \"b\" }\nb = { parent = \"a\" }");
        assert_eq!(
            place(&cycle, &[]).unwrap_err(),
            "accounts \"a\" → \"b\" → \"a\": their parents form a cycle"
        );
        let tail = parse(
            "[accounts]\nx = { parent = \"a\" }\na = { parent = \"b\" }\nb = { parent = \"a\" }",
        );
        assert!(place(&tail, &[])
            .unwrap_err()
            .starts_with("accounts \"a\" → \"b\" → \"a\""));
        let orphan = parse("[accounts]\na = { parent = \"b\" }\nb = { parent = \"c\" }");
        assert_eq!(
            place(&orphan, &[]).unwrap_err(),
            "account \"b\": its parent \"c\" is not an account of the file"
        );
        let clash = parse("[accounts]\nalice = {}\n[accounts.bob]\nparent = \"alice\"");
        assert!(place(&clash, &[]).is_ok());
        let negative = parse("[accounts]\na = { shares = -1 }");
        assert_eq!(
            place(&negative, &[]).unwrap_err(),
            "account \"a\": shares must be `parent` or a finite number >= 0, found -1"
        );
        let word = toml::from_str::<ShareFile>("[accounts]\na = { shares = \"half\" }");
        assert!(word.unwrap_err().to_string().contains("\"parent\""));
        assert!(toml::from_str::<ShareFile>("[users]\nalice = { acount = \"a\" }").is_err());
    }
}
