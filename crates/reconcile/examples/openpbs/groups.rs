//! The reader of the PBS scheduler's fairshare tree, `resource_group`: one entity a line,
//! `name unique_id parent shares`, under `root`. An entity another names as its parent is a
//! group (an account); every other is a user of its parent group.

use crate::read::{bad, OutputError};
use fairshare_core::model::AccountTree;
use fairshare_reconcile::clients::Tree;
use std::collections::BTreeSet;
use std::path::Path;

/// The tree of the file at `path`.
pub fn read(path: &Path) -> Result<Tree, OutputError> {
    let path_text = || path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| OutputError::File {
        path: path_text(),
        error,
    })?;
    tree(&text)
}

/// The tree of `text`, groups and users in the file's order (a parent before its children).
pub fn tree<'a>(text: &'a str) -> Result<Tree, OutputError> {
    let words = |line: &'a str| -> Vec<&'a str> {
        let data = line.split('#').next().unwrap_or_default();
        data.split_whitespace().collect()
    };
    let lines: Vec<(usize, Vec<&str>)> = (text.lines().map(words).enumerate())
        .map(|(i, words)| (i + 1, words))
        .filter(|(_, words)| !words.is_empty())
        .collect();
    let groups: BTreeSet<&str> = lines
        .iter()
        .filter_map(|(_, w)| w.get(2).copied())
        .collect();
    let mut accounts = AccountTree::new("root");
    let mut users = Vec::new();
    for (n, words) in &lines {
        let line = format!("resource_group line {n}");
        let [name, _, parent, shares] = words[..] else {
            return Err(bad(
                &line,
                "entity",
                &words.join(" "),
                "`name id parent shares`",
            ));
        };
        let shares: f64 =
            (shares.parse().ok()).ok_or_else(|| bad(&line, "shares", shares, "a number"))?;
        let at = (accounts.index_of(parent)).ok_or_else(|| {
            bad(
                &line,
                "parent",
                parent,
                "a group on an earlier line, or root",
            )
        })?;
        let added = match groups.contains(name) {
            true => accounts.add(name, at, shares),
            false => accounts.add_user(name, at, shares),
        };
        let index = added.map_err(|error| OutputError::Tree { line: *n, error })?;
        if !groups.contains(name) {
            users.push((parent.to_string(), name.to_string(), index));
        }
    }
    Ok(Tree {
        cluster: "pbs".into(),
        accounts,
        users,
        left_out: Vec::new(),
    })
}
