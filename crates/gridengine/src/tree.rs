//! Grid Engine's users as the reconcile's clients: the share tree of `qconf -sstree` when the
//! site has one, each user leaf a client under its parent node; without one, every user `qconf
//! -suserl` lists, one share each, side by side.
//!
//! A leaf named `default` stands, as in Grid Engine, for every user the tree does not name:
//! each such user gets a leaf of its own with `default`'s shares under `default`'s parent. A
//! client's account is its parent node's name. Grid Engine knows a user by name alone, so a user
//! the tree names twice is ranked where it is met first (the tree read level by level from the
//! root), and its other place is left out.

use crate::{number, OutputError};
use fairshare_core::model::AccountTree;
use fairshare_reconcile::clients::Tree;
use std::collections::BTreeMap;

/// The command whose output [`parse_share_tree`] reads.
pub const SHARE_TREE_COMMAND: [&str; 2] = ["qconf", "-sstree"];
/// The command that lists Grid Engine's users.
pub const USERS_COMMAND: [&str; 2] = ["qconf", "-suserl"];
/// What `qconf -sstree` says (and exits 1) when the site has no share tree.
pub const NO_SHARE_TREE: &str = "no sharetree element";
/// The cluster's name in notes and errors.
pub const CLUSTER: &str = "gridengine";

/// One node of the share tree.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareNode {
    /// Its id (the root's is 0).
    pub id: u64,
    /// Its name: a user's for a user leaf.
    pub name: String,
    /// Its shares.
    pub shares: u64,
    /// Its children's ids.
    pub children: Vec<u64>,
}

/// The nodes of `qconf -sstree`'s output, in its order.
pub fn parse_share_tree(text: &str) -> Result<Vec<ShareNode>, OutputError> {
    let mut nodes: Vec<ShareNode> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let place = format!("share tree line {}", i + 1);
        let Some((key, value)) = line.split_once('=') else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(OutputError::new(place, "line", "key=value", line));
        };
        if key == "id" {
            let id = number(value, &place, "id", "a node id")?;
            nodes.push(ShareNode {
                id,
                name: String::new(),
                shares: 0,
                children: Vec::new(),
            });
            continue;
        }
        let Some(node) = nodes.last_mut() else {
            return Err(OutputError::new(place, key, "id= first", line));
        };
        match key {
            "name" => node.name = value.to_string(),
            "shares" => node.shares = number(value, &place, "shares", "a whole number")?,
            "childnodes" if value == "NONE" => {}
            "childnodes" => {
                let ids = value
                    .split(',')
                    .map(|c| number(c, &place, "childnodes", "node ids"));
                node.children = ids.collect::<Result<_, _>>()?;
            }
            _ => {}
        }
    }
    Ok(nodes)
}

/// The users of `qconf -suserl`'s output.
pub fn parse_users(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// Why a share tree makes no tree of clients.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ShareTreeError {
    /// It has no node 0.
    #[error("the share tree has no root (node 0)")]
    NoRoot,
    /// A node lists a child that is not in it, or a node is reached twice.
    #[error("the share tree's node {0} is missing or reached twice")]
    BadChild(u64),
    /// Two inner nodes share a name.
    #[error("the share tree names two inner nodes `{0}`")]
    Duplicate(String),
}

/// The tree of `nodes` (a share tree), `users` standing in for its `default` leaf.
pub fn share_tree(nodes: &[ShareNode], users: &[String]) -> Result<Tree, ShareTreeError> {
    let by_id: BTreeMap<u64, &ShareNode> = nodes.iter().map(|n| (n.id, n)).collect();
    let root = by_id.get(&0).ok_or(ShareTreeError::NoRoot)?;
    let mut accounts = AccountTree::new(root.name.clone());
    let mut placed: BTreeMap<String, String> = BTreeMap::new();
    let mut tree = Tree {
        cluster: CLUSTER.into(),
        accounts: AccountTree::new(root.name.clone()),
        users: Vec::new(),
        left_out: Vec::new(),
    };
    let mut defaults: Vec<(usize, String, u64)> = Vec::new();
    let mut seen = std::collections::BTreeSet::from([0]);
    let mut todo = std::collections::VecDeque::from([(*root, 0usize)]);
    while let Some((node, at)) = todo.pop_front() {
        let parent = node.name.clone();
        for &child in &node.children {
            let c = by_id.get(&child).filter(|_| seen.insert(child));
            let c = c.ok_or(ShareTreeError::BadChild(child))?;
            if !c.children.is_empty() {
                let index = accounts.add(c.name.clone(), at, c.shares as f64);
                let index = index.map_err(|_| ShareTreeError::Duplicate(c.name.clone()))?;
                todo.push_back((c, index));
            } else if c.name == "default" {
                defaults.push((at, parent.clone(), c.shares));
            } else if let Some(first) = placed.get(&c.name) {
                let why = format!("named again in the share tree; its jobs count under {first}");
                tree.left_out.push((parent.clone(), c.name.clone(), why));
            } else {
                let index = accounts
                    .add_user(c.name.clone(), at, c.shares as f64)
                    .expect("a user placed nowhere yet");
                placed.insert(c.name.clone(), parent.clone());
                tree.users.push((parent.clone(), c.name.clone(), index));
            }
        }
    }
    for (at, parent, shares) in defaults {
        for user in users {
            if placed.contains_key(user) {
                continue;
            }
            let index = accounts
                .add_user(user.clone(), at, shares as f64)
                .expect("a user placed nowhere yet");
            placed.insert(user.clone(), parent.clone());
            tree.users.push((parent.clone(), user.clone(), index));
        }
    }
    tree.accounts = accounts;
    Ok(tree)
}

/// The tree of a site without a share tree: every user of `users` (once), one share each,
/// under `root`.
pub fn flat_tree(users: &[String]) -> Tree {
    let mut accounts = AccountTree::new("root");
    let users: std::collections::BTreeSet<&String> = users.iter().collect();
    let users = users
        .into_iter()
        .map(|u| {
            (
                "root".to_string(),
                u.clone(),
                accounts
                    .add_user(u.clone(), 0, 1.0)
                    .expect("each user once"),
            )
        })
        .collect();
    Tree {
        cluster: CLUSTER.into(),
        accounts,
        users,
        left_out: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's share tree (gridengine-samples/sstree.txt), with a `default` leaf added.
    const STREE: &str = "id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,5\nid=1\nname=ge\ntype=0\nshares=100\nchildnodes=2,3,4\nid=2\nname=gea\ntype=0\nshares=50\nchildnodes=NONE\nid=3\nname=geb\ntype=0\nshares=30\nchildnodes=NONE\nid=4\nname=gec\ntype=0\nshares=20\nchildnodes=NONE\nid=5\nname=default\ntype=0\nshares=10\nchildnodes=NONE\n";

    fn users(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn users_are_placed_under_their_nodes_and_default_stands_for_the_rest() {
        let nodes = parse_share_tree(STREE).unwrap();
        assert_eq!(nodes.len(), 6);
        let tree = share_tree(&nodes, &users(&["gea", "geb", "gec", "ged"])).unwrap();
        let placed: Vec<(&str, &str)> = tree
            .users
            .iter()
            .map(|(a, u, _)| (a.as_str(), u.as_str()))
            .collect();
        assert_eq!(
            placed,
            [("ge", "gea"), ("ge", "geb"), ("ge", "gec"), ("Root", "ged")]
        );
        let clients = fairshare_reconcile::clients::Clients::new(tree).unwrap();
        let e = &clients.entitlements;
        // ge holds 100 of Root's 110 shares, gea 50 of ge's 100; ged default's 10 of 110.
        assert!((e[0] - 100.0 / 110.0 * 0.5).abs() < 1e-12, "{e:?}");
        assert!((e[3] - 10.0 / 110.0).abs() < 1e-12, "{e:?}");
    }

    #[test]
    fn a_user_named_twice_is_ranked_where_first_named() {
        let text = STREE.replace("name=default", "name=gea");
        let tree = share_tree(&parse_share_tree(&text).unwrap(), &[]).unwrap();
        assert_eq!(tree.users.len(), 3);
        // Met first at Root's level, before ge's children.
        assert_eq!(
            tree.left_out,
            [(
                "ge".into(),
                "gea".into(),
                "named again in the share tree; its jobs count under Root".into()
            )]
        );
    }

    #[test]
    fn a_broken_tree_is_refused_with_where() {
        let e = parse_share_tree("id=0\nshares=many\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "share tree line 2: shares: expected a whole number, found \"many\""
        );
        let missing = parse_share_tree("id=0\nname=Root\nchildnodes=9\n").unwrap();
        assert_eq!(share_tree(&missing, &[]), Err(ShareTreeError::BadChild(9)));
    }

    #[test]
    fn without_a_share_tree_every_user_gets_one_share() {
        let tree = flat_tree(&users(&["gea", "geb"]));
        let clients = fairshare_reconcile::clients::Clients::new(tree).unwrap();
        assert_eq!(clients.entitlements, [0.5, 0.5]);
        assert_eq!(clients.client("root", "geb"), Some(1));
    }
}
