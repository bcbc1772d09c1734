//! Timelines for `fairshare baa timeline`: users joining and leaving a cluster shared by
//! bottleneck-aware allocation, epoch by epoch, each with the most of its bottleneck it can
//! use in each epoch — the small scenarios in which BAA-T's time constraint shows (a user that
//! needed less for a while is repaid later; a late joiner catches up or not).
//!
//! ```toml
//! policy = "baa-time"             # or "baa", "baa-time:origin=global,catch-up=2"
//! epochs = 4                      # optional: default, one past the last join or leave
//!
//! [capacity]                      # per epoch, in any units
//! cpu = 100
//! mem = 200
//!
//! [[user]]
//! id = "u1"
//! demand = { cpu = 1, mem = 4 }   # the proportions its tasks run in: every resource > 0
//! join = 0                        # the epoch it joins (default 0)
//! leave = 3                       # optional: the epoch it is gone
//! cap = [40, inf]                 # optional: the most of its bottleneck it can use in each
//!                                 # epoch from its join; the last value holds on (default inf)
//! ```
//!
//! Resources are taken in the order of their names.

use crate::TraceError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most epochs a timeline may run, so that a typo cannot start an endless run.
pub const MOST_EPOCHS: u64 = 1_000_000;

/// The most users a timeline may list.
pub const MOST_USERS: usize = 100_000;

/// The most user-epochs (users × epochs) a timeline may run: its results hold one allocation
/// per user per epoch.
pub const MOST_USER_EPOCHS: u64 = 10_000_000;

/// A timeline, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The policy as written.
    pub policy: String,
    /// How many epochs to run.
    pub epochs: u64,
    /// Resource names, in order.
    pub resources: Vec<String>,
    /// Capacity per epoch, per resource.
    pub capacity: Vec<f64>,
    /// The users, in file order.
    pub users: Vec<TimelineUser>,
}

/// One user of a timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineUser {
    /// Its name.
    pub id: String,
    /// Its demand per resource (the proportions its tasks run in), all positive.
    pub demand: Vec<f64>,
    /// The epoch it joins.
    pub join: u64,
    /// The epoch it is gone, if it leaves.
    pub leave: Option<u64>,
    /// The most of its bottleneck it can use in each epoch from its join (the last holds on).
    pub cap: Vec<f64>,
}

impl TimelineUser {
    /// Its cap in epoch `epoch` (its first cap up to its join, its last after the list).
    pub fn cap_at(&self, epoch: u64) -> f64 {
        let i = epoch.saturating_sub(self.join) as usize;
        self.cap
            .get(i)
            .or(self.cap.last())
            .copied()
            .unwrap_or(f64::INFINITY)
    }
}

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    policy: String,
    epochs: Option<u64>,
    capacity: BTreeMap<String, f64>,
    #[serde(default)]
    user: Vec<UserEntry>,
}

/// One `[[user]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserEntry {
    id: String,
    demand: BTreeMap<String, f64>,
    #[serde(default)]
    join: u64,
    leave: Option<u64>,
    #[serde(default)]
    cap: Option<Cap>,
}

/// A cap: one number, or one per epoch.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Cap {
    One(f64),
    Each(Vec<f64>),
}

/// Reads and checks the timeline at `path`.
pub fn read_timeline(path: &Path) -> Result<Timeline, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|error| TraceError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let bad = |message: String| TraceError::Timeline {
        path: PathBuf::from(path),
        message: message.trim_end().to_owned(),
    };
    let file: File = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    check(file).map_err(bad)
}

/// The timeline of a parsed file, or what is wrong with it.
fn check(file: File) -> Result<Timeline, String> {
    if file.capacity.is_empty() {
        return Err("[capacity] names no resource".into());
    }
    if let Some((name, c)) = file
        .capacity
        .iter()
        .find(|(_, c)| !(c.is_finite() && **c > 0.0))
    {
        return Err(format!(
            "capacity.{name}: expected a positive number, found {c}"
        ));
    }
    if file.user.len() > MOST_USERS {
        return Err(format!("{} users; at most {MOST_USERS}", file.user.len()));
    }
    let resources: Vec<String> = file.capacity.keys().cloned().collect();
    let mut users: Vec<TimelineUser> = Vec::with_capacity(file.user.len());
    let mut seen = std::collections::HashSet::new();
    for (i, entry) in file.user.into_iter().enumerate() {
        if !seen.insert(entry.id.clone()) {
            return Err(format!("user[{i}]: {:?} is listed twice", entry.id));
        }
        users.push(user(i, entry, &resources)?);
    }
    let last = (users.iter())
        .map(|u| {
            u.leave
                .unwrap_or(u.join.saturating_add(1))
                .max(u.join.saturating_add(1))
        })
        .max()
        .unwrap_or(1);
    let epochs = file.epochs.unwrap_or(last);
    if epochs == 0 || epochs > MOST_EPOCHS {
        return Err(format!(
            "epochs: expected 1 to {MOST_EPOCHS}, found {epochs}"
        ));
    }
    if epochs.saturating_mul(users.len() as u64) > MOST_USER_EPOCHS {
        return Err(format!(
            "{epochs} epochs × {} users: at most {MOST_USER_EPOCHS} user-epochs",
            users.len()
        ));
    }
    Ok(Timeline {
        policy: file.policy,
        epochs,
        resources,
        capacity: file.capacity.into_values().collect(),
        users,
    })
}

/// One checked user.
fn user(i: usize, entry: UserEntry, resources: &[String]) -> Result<TimelineUser, String> {
    let whose = |what: String| format!("user[{i}] ({:?}): {what}", entry.id);
    if let Some(name) = entry.demand.keys().find(|k| !resources.contains(k)) {
        return Err(whose(format!(
            "demand.{name}: not a resource of [capacity]"
        )));
    }
    let demand = (resources.iter())
        .map(|r| match entry.demand.get(r) {
            Some(d) if d.is_finite() && *d > 0.0 => Ok(*d),
            found => Err(whose(format!(
                "demand.{r}: expected a positive number (BAA needs every resource), found {found:?}"
            ))),
        })
        .collect::<Result<Vec<f64>, String>>()?;
    if entry.leave.is_some_and(|leave| leave <= entry.join) {
        return Err(whose(format!(
            "leave must come after join ({})",
            entry.join
        )));
    }
    let cap = match entry.cap {
        None => vec![f64::INFINITY],
        Some(Cap::One(c)) => vec![c],
        Some(Cap::Each(c)) if !c.is_empty() => c,
        Some(Cap::Each(_)) => return Err(whose("cap: an empty list".into())),
    };
    if let Some(c) = cap.iter().find(|c| c.is_nan() || **c < 0.0) {
        return Err(whose(format!(
            "cap: expected numbers >= 0 (or inf), found {c}"
        )));
    }
    Ok(TimelineUser {
        id: entry.id,
        demand,
        join: entry.join,
        leave: entry.leave,
        cap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Timeline, TraceError> {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("timeline.toml");
        std::fs::write(&path, text).unwrap();
        read_timeline(&path)
    }

    #[test]
    fn a_timeline_with_caps_joins_and_leaves() {
        let t = read(
            "policy = \"baa-time\"\n[capacity]\ncpu = 100\n[[user]]\nid = \"a\"\ndemand = { cpu = 1 }\ncap = [40, inf]\n[[user]]\nid = \"b\"\ndemand = { cpu = 1 }\njoin = 2\nleave = 4\n",
        )
        .unwrap();
        assert_eq!(t.epochs, 4);
        assert_eq!(
            (t.resources.clone(), t.capacity.clone()),
            (vec!["cpu".to_string()], vec![100.0])
        );
        assert_eq!(t.users[0].cap_at(0), 40.0);
        assert_eq!(t.users[0].cap_at(7), f64::INFINITY);
        assert_eq!((t.users[1].join, t.users[1].leave), (2, Some(4)));
    }

    /// docs/baa.md's example: a cap list counts from the user's join, not from epoch 0.
    #[test]
    fn a_cap_list_counts_from_the_join() {
        let t = read(
            "policy = \"baa-time\"\n[capacity]\ncpu = 100\n[[user]]\nid = \"late\"\ndemand = { cpu = 1 }\njoin = 3\ncap = [40, 10]\n",
        )
        .unwrap();
        let caps: Vec<f64> = (3..6).map(|e| t.users[0].cap_at(e)).collect();
        assert_eq!(caps, [40.0, 10.0, 10.0]);
    }

    #[test]
    fn bad_timelines_say_what_is_wrong() {
        let said = |text: &str| read(text).unwrap_err().to_string();
        let head = "policy = \"baa\"\n[capacity]\ncpu = 1\nmem = 1\n";
        assert!(said(&format!(
            "{head}[[user]]\nid = \"a\"\ndemand = {{ cpu = 1 }}\n"
        ))
        .contains("user[0] (\"a\"): demand.mem: expected a positive number"));
        assert!(said(&format!(
            "{head}[[user]]\nid = \"a\"\ndemand = {{ cpu = 1, mem = 1, gpu = 1 }}\n"
        ))
        .contains("demand.gpu: not a resource"));
        assert!(said(&format!(
            "{head}[[user]]\nid = \"a\"\ndemand = {{ cpu = 1, mem = 1 }}\njoin = 3\nleave = 3\n"
        ))
        .contains("leave must come after join"));
        assert!(said(&format!(
            "{head}[[user]]\nid = \"a\"\ndemand = {{ cpu = 1, mem = 1 }}\ncap = [-1]\n"
        ))
        .contains("cap: expected numbers >= 0"));
        assert!(said("policy = \"baa\"\nepochs = 0\n[capacity]\ncpu = 1\n")
            .contains("epochs: expected 1 to"));
        assert!(said("policy = \"baa\"\n[capacity]\ncpu = 0\n")
            .contains("capacity.cpu: expected a positive number"));
        assert!(said("policy = \"baa\"\n[capacity]\n").contains("[capacity] names no resource"));
    }
}
