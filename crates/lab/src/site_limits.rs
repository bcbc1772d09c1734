//! A Slurm site's limits as a replay holds them: the associations' and the QOS' caps of a
//! site bundle ([`fairshare_trace::slurm_limits`]), with their changes over the window, turned
//! into the engine's [`Limit`]s over the trace's users, QOS, partitions and resources. Slurm
//! holds a job its limits hold without holding anyone else's, so a replay that left them out
//! would start the held job early and give others' nodes to it.
//!
//! What is held: an association's `GrpTRES` and `GrpJobs` (over every user beneath it),
//! `MaxJobs` (each user's, or the nearest account's above one that sets none), a QOS'
//! `MaxTRESPU`/`MaxJobsPU` (each user's jobs in it), `MaxTRESPA`/`MaxJobsPA` (each account's)
//! and `GrpTRES`/`GrpJobs` (all its jobs), for a job's QOS and its partition's QOS, and every
//! change `sacctmgr list transactions` records of these. Everything else a site sets is named.

use crate::LabError;
use fairshare_core::model::Time;
use fairshare_sim::cluster::{Cap, Limit, Scope};
use fairshare_trace::bundle;
use fairshare_trace::sacct::Tres;
use fairshare_trace::slurm_conf::SlurmConf;
use fairshare_trace::slurm_limits::{
    read_assoc_limits, read_limit_changes, read_qos_limits, read_tres_ids, AssocLimits, Caps,
    Changed, LimitChange, QosLimits, Setting, TresCaps,
};
use std::collections::BTreeMap;
use std::path::Path;

/// A site's limits, as its bundle states them.
#[derive(Debug, Clone, Default)]
pub struct SiteLimits {
    assoc: Vec<AssocLimits>,
    qos: Vec<QosLimits>,
    changes: Vec<LimitChange>,
    /// Each partition's QOS, by partition name.
    partition_qos: Vec<(String, String)>,
    /// Whether Slurm enforces them (`AccountingStorageEnforce` with `limits` or `safe`).
    enforced: bool,
    /// Whether `assoc_limit_stop` is among the `SchedulerParameters`.
    stops: bool,
}

/// One component of a limit that a change sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Tres,
    Jobs,
}

impl SiteLimits {
    /// The limits of the bundle in `dir`, whose configuration is `conf`; `None` when it holds
    /// no `limits.txt` (a bundle of an earlier `collect`). A file that cannot be read is
    /// refused, naming it, its line and its field.
    pub fn read(dir: &Path, conf: &SlurmConf) -> Result<Option<SiteLimits>, LabError> {
        let path = |name: &str| dir.join(name);
        let Some(assoc) = optional_text(&path(bundle::LIMITS))? else {
            return Ok(None);
        };
        let wrong = |name: &str, e: &dyn std::fmt::Display| {
            LabError::Unusable(format!("{}: {e}", path(name).display()))
        };
        let assoc = read_assoc_limits(&assoc).map_err(|e| wrong(bundle::LIMITS, &e))?;
        let qos = optional_text(&path(bundle::QOS_LIMITS))?.unwrap_or_default();
        let qos = read_qos_limits(&qos).map_err(|e| wrong(bundle::QOS_LIMITS, &e))?;
        let tres = optional_text(&path(bundle::TRES))?.unwrap_or_default();
        let tres = read_tres_ids(&tres).map_err(|e| wrong(bundle::TRES, &e))?;
        let changes = optional_text(&path(bundle::TRANSACTIONS))?.unwrap_or_default();
        let mut changes =
            read_limit_changes(&changes, &tres).map_err(|e| wrong(bundle::TRANSACTIONS, &e))?;
        changes.sort_by_key(|c| (c.at, c.line));
        let enforce = conf.get("AccountingStorageEnforce").unwrap_or_default();
        let parameters = conf.get("SchedulerParameters").unwrap_or_default();
        Ok(Some(SiteLimits {
            assoc,
            qos,
            changes,
            partition_qos: (conf.partitions().iter())
                .filter_map(|p| p.qos.clone().map(|q| (p.name.clone(), q)))
                .collect(),
            enforced: enforce
                .split(',')
                .any(|e| matches!(e.trim(), "limits" | "safe")),
            stops: parameters
                .split(',')
                .any(|p| p.trim() == "assoc_limit_stop"),
        }))
    }

    /// One sentence on what was taken, and one on each thing set that the replay does not
    /// hold.
    pub fn describe(&self) -> (Vec<String>, Vec<String>) {
        if !self.enforced {
            let taken = format!("limits: none held, as AccountingStorageEnforce in {} has neither limits nor safe (Slurm enforces none)", bundle::CONFIG);
            return (vec![taken], Vec::new());
        }
        let taken = vec![format!(
            "limits: the associations' GrpTRES, GrpJobs and MaxJobs of {}, the QOS' MaxTRESPU, MaxJobsPU, MaxTRESPA, MaxJobsPA, GrpTRES and GrpJobs of {} (a job's and its partition's), and {} changes of them in {}",
            bundle::LIMITS,
            bundle::QOS_LIMITS,
            self.changes.len(),
            bundle::TRANSACTIONS
        )];
        let mut unmodelled = Vec::new();
        let assoc_unheld = self.assoc.iter().flat_map(|a| {
            let who = a
                .user
                .as_ref()
                .map_or(format!("account {}", a.account), |u| format!("user {u}"));
            a.unheld.iter().map(move |u| format!("{who}: {u}"))
        });
        let qos_unheld = (self.qos.iter())
            .flat_map(|q| q.unheld.iter().map(move |u| format!("QOS {}: {u}", q.name)));
        let unheld: Vec<String> = assoc_unheld.chain(qos_unheld).collect();
        if !unheld.is_empty() {
            unmodelled.push(format!("limits a replay does not hold (submission counts, TRES-minutes, wall time, per-job and per-node caps): {}", unheld.join("; ")));
        }
        let partitioned = self
            .assoc
            .iter()
            .filter(|a| a.partition.is_some() && has_caps(a))
            .count();
        if partitioned > 0 {
            unmodelled.push(format!("{partitioned} associations of one partition set limits, which a replay holds for the user's jobs in every partition"));
        }
        if self.stops {
            unmodelled.push("SchedulerParameters=assoc_limit_stop: a job a limit holds stops its partition in Slurm; in the replay the pass goes on past it".to_owned());
        }
        (taken, unmodelled)
    }

    /// The engine's limits over the trace's `users`, `qos` and `partitions` (by name) and the
    /// run's `resources`; none when Slurm does not enforce them.
    pub fn limits(
        &self,
        users: &[String],
        qos: &[String],
        partitions: &[String],
        resources: &[String],
    ) -> Vec<Limit> {
        if !self.enforced {
            return Vec::new();
        }
        let tree = Tree::of(&self.assoc, users);
        let mut limits = Vec::new();
        for assoc in &self.assoc {
            if assoc.partition.is_some() && !has_caps(assoc) {
                continue;
            }
            let (who, members) = match &assoc.user {
                Some(user) => (
                    format!("user {user}"),
                    tree.user(user).into_iter().collect(),
                ),
                None => (
                    format!("account {}", assoc.account),
                    tree.under(&assoc.account),
                ),
            };
            let of = |c: &Changed| matches!(c, Changed::Assoc { account, user } if *account == assoc.account && *user == assoc.user);
            let group = self.timeline(&assoc.group, of, Capped::Group, resources);
            let scope = Scope {
                users: Some(members),
                ..Scope::default()
            };
            limits.extend(limit(format!("{who} (GrpTRES, GrpJobs)"), scope, group));
        }
        limits.extend(self.max_jobs(&tree, users));
        for q in &self.qos {
            let in_jobs = qos.iter().position(|n| *n == q.name).map(|i| i as u32);
            let of_partitions = (self.partition_qos.iter()).filter(|(_, name)| *name == q.name);
            let of_partitions =
                of_partitions.filter_map(|(p, _)| partitions.iter().position(|n| n == p));
            let scopes = (in_jobs.map(|i| (Some(i), None)).into_iter())
                .chain(of_partitions.map(|p| (None, Some(p as u32))));
            for (in_qos, partition) in scopes {
                let of = |c: &Changed| matches!(c, Changed::Qos(name) if *name == q.name);
                let scope = Scope {
                    qos: in_qos,
                    partition,
                    ..Scope::default()
                };
                let name = format!("QOS {}", q.name);
                let per_user = self.timeline(&q.per_user, of, Capped::EachUser, resources);
                let each_user = Scope {
                    each_user: true,
                    ..scope.clone()
                };
                limits.extend(limit(
                    format!("{name} (MaxTRESPU, MaxJobsPU)"),
                    each_user,
                    per_user,
                ));
                let per_account = self.timeline(&q.per_account, of, Capped::EachAccount, resources);
                let each_account = Scope {
                    groups: tree.groups.clone(),
                    ..scope.clone()
                };
                limits.extend(limit(
                    format!("{name} (MaxTRESPA, MaxJobsPA)"),
                    each_account,
                    per_account,
                ));
                let group = self.timeline(&q.group, of, Capped::Group, resources);
                limits.extend(limit(format!("{name} (GrpTRES, GrpJobs)"), scope, group));
            }
        }
        limits
    }

    /// Each user's `MaxJobs`: its own association's, or the nearest account's above it that
    /// sets one, with their changes.
    fn max_jobs(&self, tree: &Tree, users: &[String]) -> Vec<Limit> {
        let mut limits = Vec::new();
        for (index, user) in users.iter().enumerate() {
            let own = self
                .assoc
                .iter()
                .find(|a| a.user.as_deref() == Some(user) && a.partition.is_none());
            let Some(own) = own else {
                continue;
            };
            let setting = |a: &&AssocLimits| {
                let changed = (self.changes.iter()).any(|c| what_changed(&c.setting).0 == Capped::MaxJobs && matches!(&c.of, Changed::Assoc { account, user } if *account == a.account && *user == a.user));
                a.max_jobs.is_some() || changed
            };
            let chain = std::iter::once(own).chain(tree.accounts_above(&own.account, &self.assoc));
            let Some(from) = chain.into_iter().find(|a| setting(a)) else {
                continue;
            };
            let of = |c: &Changed| matches!(c, Changed::Assoc { account, user } if *account == from.account && *user == from.user);
            let caps = Caps {
                tres: Vec::new(),
                jobs: from.max_jobs,
            };
            let timeline = self.timeline(&caps, of, Capped::MaxJobs, &[]);
            let scope = Scope {
                users: Some(vec![index as u32]),
                ..Scope::default()
            };
            limits.extend(limit(format!("user {user} (MaxJobs)"), scope, timeline));
        }
        limits
    }

    /// The caps over time of a limit whose values are now `now`, changed as the changes of
    /// its `capped` caps that `of` picks say: before its first change, each part changed was
    /// unset (the transactions record the new values, and an association or QOS starts with
    /// none).
    fn timeline(
        &self,
        now: &Caps,
        of: impl Fn(&Changed) -> bool,
        capped: Capped,
        resources: &[String],
    ) -> Vec<(Time, Cap)> {
        let changes: Vec<(Time, Part, Caps)> = (self.changes.iter())
            .filter(|c| of(&c.of))
            .map(|c| (c.at, what_changed(&c.setting)))
            .filter(|(_, (which, _, _))| *which == capped)
            .map(|(at, (_, part, caps))| (at, part, caps))
            .collect();
        let mut current = now.clone();
        for (_, part, _) in &changes {
            match part {
                Part::Tres => current.tres.clear(),
                Part::Jobs => current.jobs = None,
            }
        }
        let mut timeline = vec![(Time::ZERO, cap(&current, resources))];
        for (at, part, caps) in changes {
            match part {
                Part::Tres => current.tres = caps.tres,
                Part::Jobs => current.jobs = caps.jobs,
            }
            timeline.push((at, cap(&current, resources)));
        }
        timeline
    }
}

/// A limit named `name` over `scope` with `caps`, unless it never caps anything.
fn limit(name: String, scope: Scope, caps: Vec<(Time, Cap)>) -> Option<Limit> {
    let capped = |c: &Cap| c.jobs.is_some() || c.held.iter().any(Option::is_some);
    caps.iter()
        .any(|(_, c)| capped(c))
        .then_some(Limit { name, scope, caps })
}

/// `caps` over the run's `resources` (TRES of no resource of the run, such as nodes or
/// billing, are not held).
fn cap(caps: &Caps, resources: &[String]) -> Cap {
    let held = resources.iter().map(|r| {
        let tres = match r.as_str() {
            "cpu" => Tres::Cpu,
            "mem" => Tres::Mem,
            "gpu" => Tres::Gpu,
            _ => return None,
        };
        caps.tres
            .iter()
            .find(|(t, _)| *t == tres)
            .map(|(_, amount)| *amount)
    });
    Cap {
        jobs: caps.jobs,
        held: held.collect(),
    }
}

/// Whether an association sets a limit a replay holds.
fn has_caps(a: &AssocLimits) -> bool {
    !a.group.tres.is_empty() || a.group.jobs.is_some() || a.max_jobs.is_some()
}

/// Which caps of an association or QOS a change sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capped {
    /// What all its jobs hold (`GrpTRES`, `GrpJobs`).
    Group,
    /// What each user's jobs in a QOS hold (`MaxTRESPU`, `MaxJobsPU`).
    EachUser,
    /// What each account's jobs in a QOS hold (`MaxTRESPA`, `MaxJobsPA`).
    EachAccount,
    /// How many jobs each user runs (`MaxJobs`).
    MaxJobs,
}

/// Which caps a change sets, which part of them, and to what.
fn what_changed(setting: &Setting) -> (Capped, Part, Caps) {
    let tres = |tres: &TresCaps| {
        (
            Part::Tres,
            Caps {
                tres: tres.clone(),
                jobs: None,
            },
        )
    };
    let jobs = |jobs: &Option<u64>| {
        (
            Part::Jobs,
            Caps {
                tres: Vec::new(),
                jobs: *jobs,
            },
        )
    };
    let ((part, caps), capped) = match setting {
        Setting::GroupTres(t) => (tres(t), Capped::Group),
        Setting::GroupJobs(j) => (jobs(j), Capped::Group),
        Setting::UserTres(t) => (tres(t), Capped::EachUser),
        Setting::UserJobs(j) => (jobs(j), Capped::EachUser),
        Setting::AccountTres(t) => (tres(t), Capped::EachAccount),
        Setting::AccountJobs(j) => (jobs(j), Capped::EachAccount),
        Setting::MaxJobs(j) => (jobs(j), Capped::MaxJobs),
    };
    (capped, part, caps)
}

/// The accounts and the trace's users in them, as the limits' associations place them.
struct Tree {
    /// Each account's parent.
    parents: BTreeMap<String, String>,
    /// Each user's (first) account, by the trace's user index.
    accounts: Vec<Option<String>>,
    /// Each user's account as a group index, by user index (users of no account: their own).
    groups: Vec<u32>,
    /// The trace's users.
    users: Vec<String>,
}

impl Tree {
    /// The tree of `assoc` over the trace's `users`.
    fn of(assoc: &[AssocLimits], users: &[String]) -> Tree {
        let parents = (assoc.iter())
            .filter(|a| a.user.is_none())
            .filter_map(|a| a.parent.clone().map(|p| (a.account.clone(), p)))
            .collect();
        let accounts: Vec<Option<String>> = (users.iter())
            .map(|u| {
                assoc
                    .iter()
                    .find(|a| a.user.as_deref() == Some(u.as_str()))
                    .map(|a| a.account.clone())
            })
            .collect();
        let mut names: Vec<&String> = accounts.iter().flatten().collect();
        names.sort();
        names.dedup();
        let groups = (accounts.iter().enumerate())
            .map(|(u, a)| match a {
                Some(a) => names.iter().position(|n| *n == a).unwrap_or(0) as u32,
                None => (names.len() + u) as u32,
            })
            .collect();
        Tree {
            parents,
            accounts,
            groups,
            users: users.to_vec(),
        }
    }

    /// The index of the trace's user named `user`, when it has jobs.
    fn user(&self, user: &str) -> Option<u32> {
        self.users.iter().position(|u| u == user).map(|u| u as u32)
    }

    /// The trace's users under `account`, at any depth.
    fn under(&self, account: &str) -> Vec<u32> {
        let within = |from: &str| {
            let mut at = from;
            for _ in 0..=self.parents.len() {
                if at == account {
                    return true;
                }
                match self.parents.get(at) {
                    Some(parent) => at = parent.as_str(),
                    None => return false,
                }
            }
            false // A loop in the tree.
        };
        (self.accounts.iter().enumerate())
            .filter(|(_, a)| a.as_deref().is_some_and(within))
            .map(|(u, _)| u as u32)
            .collect()
    }

    /// The associations of the accounts above `account`, nearest first (`account`'s own
    /// first).
    fn accounts_above<'a>(&self, account: &str, assoc: &'a [AssocLimits]) -> Vec<&'a AssocLimits> {
        let mut above = Vec::new();
        let mut at = Some(account.to_owned());
        while let Some(name) = at {
            if above.len() > assoc.len() {
                break; // A loop in the tree.
            }
            above.extend(
                assoc
                    .iter()
                    .find(|a| a.user.is_none() && a.account == name && a.partition.is_none()),
            );
            at = self.parents.get(&name).cloned();
        }
        above
    }
}

/// The text of `path`, `None` when the bundle does not hold it.
pub(crate) fn optional_text(path: &Path) -> Result<Option<String>, LabError> {
    if !path.is_file() {
        return Ok(None);
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| LabError::Unusable(format!("{}: {e}", path.display())))
}
