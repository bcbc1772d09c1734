//! What an adapter shows a person — `fairshare slurm` and `fairshare gridengine` alike: the
//! status (every client's usage and standing, every pending job with the scheduler's priority
//! and the factor it holds and would get), what a sync did, and the one-line summary `watch`
//! logs each pass. From the adapters' own passes and [`Applied`], in each scheduler's words
//! ([`Words`]), so that every table a person reads comes from this crate.

use crate::text::{fixed, table};
use fairshare_gridengine::adapter::{Reconciliation as GeReconciliation, ShareTreeCheck};
use fairshare_reconcile::history::Step;
use fairshare_reconcile::plan::{Plan, SubmitFactor};
use fairshare_reconcile::state::Usage;
use fairshare_reconcile::writes::Applied;
use fairshare_slurm::adapter::{FairTreeCheck, Reconciliation};
use std::fmt::Write as _;

/// A scheduler's words for what its adapter shows.
struct Words {
    /// How a write sets a factor: `SiteFactor=` (then the value).
    set: &'static str,
    /// The command that writes, counted in calls.
    writer: &'static str,
    /// The command the writes are read back from.
    reader: &'static str,
    /// The accounting's name, which may list jobs late.
    accounting: &'static str,
    /// A ranked client.
    client: &'static str,
    /// The scheduler's name, its reads counted.
    scheduler: &'static str,
    /// The factor's column heads: in the clients' table, and in the jobs' table before `now`
    /// and `wanted`.
    factor: &'static str,
    /// The scheduler's priority of a job as it prints it: the adapter's whole number over
    /// this divisor, with as many decimals as it has zeros (1: as it is).
    priority_divisor: u64,
}

/// Slurm's words.
const SLURM: Words = Words {
    set: "SiteFactor=",
    writer: "scontrol",
    reader: "sprio",
    accounting: "sacct",
    client: "association",
    scheduler: "Slurm",
    factor: "Site",
    priority_divisor: 1,
};

/// Grid Engine's words.
const GRID_ENGINE: Words = Words {
    set: "priority -p ",
    writer: "qalter",
    reader: "qstat",
    accounting: "the accounting file",
    client: "user",
    scheduler: "Grid Engine",
    factor: "-p",
    priority_divisor: fairshare_gridengine::queue::PRIO_SCALE,
};

/// One pass as every adapter shows it: what the reconcile saw and planned, and what only some
/// schedulers have.
struct Shown<'a> {
    at_s: f64,
    policy: &'a str,
    /// Slurm's mapping beside its own fairshare factor.
    mapping: Option<&'a str>,
    rebuilt: Option<&'a str>,
    step: &'a Step,
    running: usize,
    usage: &'a [Usage],
    plan: &'a Plan,
    notes: &'a [String],
    fair_tree: Option<&'a FairTreeCheck>,
    share_tree: Option<&'a ShareTreeCheck>,
    /// The factor each client's next job gets at submission (Slurm's `job_submit.lua`).
    submit: Option<&'a [SubmitFactor]>,
    reads: u32,
    words: &'static Words,
    /// The scheduler's version, as the pass read it (`Slurm 22.05.8 (tested)`).
    version: Option<String>,
}

impl<'a> Shown<'a> {
    /// A pass of the Slurm adapter.
    fn slurm(pass: &'a Reconciliation) -> Shown<'a> {
        Shown {
            at_s: pass.at_s,
            policy: &pass.policy,
            mapping: Some(&pass.mapping),
            rebuilt: pass.rebuilt.as_deref(),
            step: &pass.step,
            running: pass.running,
            usage: &pass.usage,
            plan: &pass.plan,
            notes: &pass.notes,
            fair_tree: pass.fair_tree.as_ref(),
            share_tree: None,
            submit: Some(&pass.submit),
            reads: pass.reads,
            words: &SLURM,
            version: pass.slurm_version.as_ref().map(ToString::to_string),
        }
    }

    /// A pass of the Grid Engine adapter.
    fn gridengine(pass: &'a GeReconciliation) -> Shown<'a> {
        Shown {
            at_s: pass.at_s,
            policy: &pass.policy,
            mapping: None,
            rebuilt: pass.rebuilt.as_deref(),
            step: &pass.step,
            running: pass.running,
            usage: &pass.usage,
            plan: &pass.plan,
            notes: &pass.notes,
            fair_tree: None,
            share_tree: pass.share_tree.as_ref(),
            submit: None,
            reads: pass.reads,
            words: &GRID_ENGINE,
            version: None,
        }
    }
}

/// `n` and `noun`, the noun in the plural unless `n` is 1: `1 job`, `3 jobs`.
fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// The whole status of a Slurm pass: a summary, the associations, the pending jobs, the notes.
pub fn slurm_status(pass: &Reconciliation) -> String {
    status(&Shown::slurm(pass))
}

/// The whole status of a Grid Engine pass: a summary, the users, the pending jobs, the notes.
pub fn gridengine_status(pass: &GeReconciliation) -> String {
    status(&Shown::gridengine(pass))
}

/// What a Slurm sync did (or, without `applied`, would do): the summary, the writes, the notes.
pub fn slurm_sync(pass: &Reconciliation, applied: Option<&Applied>) -> String {
    sync(&Shown::slurm(pass), applied)
}

/// What a Grid Engine sync did (or, without `applied`, would do).
pub fn gridengine_sync(pass: &GeReconciliation, applied: Option<&Applied>) -> String {
    sync(&Shown::gridengine(pass), applied)
}

/// The writes of a Slurm `reset` (or sync) plan, and what became of them.
pub fn writes_text(plan: &Plan, applied: Option<&Applied>) -> String {
    writes(plan, applied, &SLURM)
}

/// The writes of a Grid Engine `reset` (or sync) plan, and what became of them.
pub fn gridengine_writes_text(plan: &Plan, applied: Option<&Applied>) -> String {
    writes(plan, applied, &GRID_ENGINE)
}

/// One line for a pass of `fairshare slurm watch`.
pub fn slurm_pass_line(pass: &Reconciliation, applied: Option<&Applied>) -> String {
    pass_line(&Shown::slurm(pass), applied)
}

/// One line for a pass of `fairshare gridengine watch`.
pub fn gridengine_pass_line(pass: &GeReconciliation, applied: Option<&Applied>) -> String {
    pass_line(&Shown::gridengine(pass), applied)
}

/// The whole status: a summary, the clients, the pending jobs, the notes.
fn status(pass: &Shown) -> String {
    let mut out = format!("{}\n", summary(pass));
    let _ = write!(out, "\n{}", usage_table(pass));
    let _ = write!(out, "\n{}", jobs_table(pass.plan, pass.words));
    out.push_str(&notes(pass));
    out
}

/// What a sync did (or, without `applied`, would do): the summary, the writes, the notes.
fn sync(pass: &Shown, applied: Option<&Applied>) -> String {
    let mut out = format!("{}\n", summary(pass));
    out.push_str(&writes(pass.plan, applied, pass.words));
    out.push_str(&notes(pass));
    out
}

/// The writes of `plan` (none, or one line per call of the writer), and what became of them.
fn writes(plan: &Plan, applied: Option<&Applied>, words: &Words) -> String {
    let verb = if applied.is_some() {
        "set"
    } else {
        "would set"
    };
    let mut out = String::new();
    if plan.writes.is_empty() {
        out.push_str(match words.set {
            "SiteFactor=" => {
                "nothing to write: every pending job already holds the site factor wanted\n"
            }
            _ => "nothing to write: every pending job already holds the priority wanted\n",
        });
    }
    for w in &plan.writes {
        let ids: Vec<String> = w.jobs.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "  {verb} {}{} on {}: {}",
            words.set,
            w.site_factor,
            count(w.jobs.len(), "job"),
            ids.join(",")
        );
    }
    if let Some(a) = applied {
        out.push_str(&applied_text(a, words));
    }
    out
}

/// Whether the writes took, in words: the calls, what Slurm refused, what reads back.
fn applied_text(a: &Applied, words: &Words) -> String {
    let mut out = count(a.calls as usize, &format!("{} call", words.writer));
    for r in &a.refused {
        let _ = write!(
            out,
            "\n  refused twice: {}{} on {}: {}",
            words.set,
            r.write.site_factor,
            count(r.write.jobs.len(), "job"),
            r.message
        );
    }
    match &a.unverified {
        Some(why) => {
            let reader = words.reader;
            let _ = writeln!(out, "\nNOT verified: reading {reader} back failed: {why}");
        }
        None if a.complete() => {
            let _ = writeln!(
                out,
                "; read back from {}: {} still pending as written",
                words.reader,
                count(a.jobs, "job")
            );
        }
        None => {
            let ids: Vec<String> = a.mismatched.iter().map(u64::to_string).collect();
            let _ = writeln!(
                out,
                "\nNOT fully applied: {} as written, read back different: jobs {}",
                count(a.jobs, "job"),
                ids.join(",")
            );
        }
    }
    out
}

/// One line for a pass of `watch`.
fn pass_line(pass: &Shown, applied: Option<&Applied>) -> String {
    let plan = pass.plan;
    let wrote = match applied {
        Some(a) if a.complete() => format!(
            "{} set in {} ({} refused)",
            count(a.jobs, "job"),
            count(a.calls as usize, "call"),
            a.refused.len()
        ),
        Some(a) => format!(
            "{} set in {}, {} refused, {} read back different{}",
            count(a.jobs, "job"),
            count(a.calls as usize, "call"),
            a.refused.len(),
            a.mismatched.len(),
            if a.unverified.is_some() {
                ", NOT verified"
            } else {
                ""
            }
        ),
        None => format!(
            "{} would be set (dry run)",
            count(plan.jobs_written(), "job")
        ),
    };
    format!(
        "{} of {} ranked by {}, {} left alone; {wrote}; {}",
        count(plan.jobs.len() - plan.left_alone(), "pending job"),
        count(plan.standings.len(), pass.words.client),
        pass.policy,
        plan.left_alone(),
        count(
            pass.reads as usize,
            &format!("{} read", pass.words.scheduler)
        )
    )
}

/// The first lines: when, which policy and mapping, the history, the Fair Tree check.
fn summary(pass: &Shown) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(pass.at_s.max(0.0));
    let mapping = pass
        .mapping
        .map_or(String::new(), |m| format!(", mapping {m}"));
    let version = (pass.version.as_deref()).map_or(String::new(), |v| format!("{v}, "));
    let mut out = format!(
        "at {}: {version}policy {}{mapping}; {}, {} running as accounted",
        humantime::format_rfc3339_seconds(at),
        pass.policy,
        count(pass.plan.jobs.len(), "pending job"),
        pass.running
    );
    if let Some(why) = pass.rebuilt {
        let _ = write!(out, "\n{why}");
    }
    let step = pass.step;
    if pass.rebuilt.is_none() && step.clamped + step.missed > 0 {
        let _ = write!(
            out,
            "\n{} listed {} late: {} charged from the last pass on, {} that had already ended not charged",
            pass.words.accounting,
            count((step.clamped + step.missed) as usize, "job"),
            step.clamped,
            step.missed
        );
    }
    if let Some(check) = pass.fair_tree {
        let said = (check.slurm.iter()).map(|(name, v)| format!("{name} {v:.6}"));
        let own = (
            "Fair Tree",
            "Slurm's own Fair Tree (sshare)",
            "sshare's FairShare",
        );
        out.push_str(&check_line(own, check.agrees, said));
    }
    if let Some(check) = pass.share_tree {
        let said = (check.gridengine.iter()).map(|(name, t)| format!("{name} {t:.0}"));
        let own = (
            "Share-tree",
            "Grid Engine's own share tree (qstat -ext)",
            "qstat -ext's share-tree tickets are",
        );
        out.push_str(&check_line(own, check.agrees, said));
    }
    out
}

/// The line of a scheduler's own order beside fairshare's: `(order, own, measure)` name the
/// order checked, the scheduler's own ranking and what it printed, with its verb (`said`,
/// shown when the orders differ).
fn check_line(
    (order, own, measure): (&str, &str, &str),
    agrees: bool,
    said: impl Iterator<Item = String>,
) -> String {
    match agrees {
        true => format!("\n{order} order agrees with {own}"),
        false => {
            let own = own.split(" (").next().unwrap_or(own);
            let said: Vec<String> = said.collect();
            format!(
                "\n{order} order DIFFERS from {own}: {measure} {}",
                said.join(", ")
            )
        }
    }
}

/// Every client: its entitlement, what it was counted, what it holds, where it stands, the
/// factor of its first pending job, and (where the scheduler has a submit table) the one a job
/// it submits now gets.
fn usage_table(pass: &Shown) -> String {
    let place = |account: &str, user: &str| {
        (pass.plan.standings.iter()).find(|s| s.account == account && s.user == user)
    };
    let submitted = |account: &str, user: &str| {
        (pass.submit.unwrap_or_default().iter())
            .find(|s| s.account == account && s.user == user)
            .map_or(String::new(), |s| s.site_factor.to_string())
    };
    let mut headers = vec![
        "Account",
        "User",
        "Share",
        "Usage",
        "Holds",
        "Priority",
        "Rank",
        "Factor",
        pass.words.factor,
    ];
    if pass.submit.is_some() {
        headers.push("New job");
    }
    let rows: Vec<Vec<String>> = (pass.usage.iter())
        .map(|u| {
            let s = place(&u.account, &u.user);
            let mut row = vec![
                u.account.clone(),
                u.user.clone(),
                fixed(u.entitlement, 4),
                format!("{:.0}", u.counted),
                fixed(u.holding, 3),
                u.priority.map_or(String::new(), |p| format!("{p:.4}")),
                s.map_or(String::new(), |s| s.place.to_string()),
                s.map_or(String::new(), |s| fixed(s.factor, 3)),
                s.map_or(String::new(), |s| s.site_factor.to_string()),
            ];
            if pass.submit.is_some() {
                row.push(submitted(&u.account, &u.user));
            }
            row
        })
        .collect();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    table(&headers, &rows)
}

/// Every pending job: the scheduler's priority, the factor it holds and the one wanted.
fn jobs_table(plan: &Plan, words: &Words) -> String {
    if plan.jobs.is_empty() {
        return "no pending job\n".into();
    }
    let now = format!("{} now", words.factor);
    let wanted = format!("{} wanted", words.factor);
    let headers = [
        "Job",
        "User",
        "Account",
        "Partition",
        "Priority",
        &now,
        &wanted,
        "Note",
    ];
    let rows: Vec<Vec<String>> = (plan.jobs.iter())
        .map(|j| {
            let number = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
            vec![
                j.id.to_string(),
                j.user.clone(),
                j.account.clone(),
                j.partition.clone(),
                priority(j.priority, words.priority_divisor),
                number(j.held),
                number(j.wanted),
                j.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    table(&headers, &rows)
}

/// A job's priority as its scheduler prints it: `priority` over `divisor`, with as many
/// decimals as the divisor has zeros (Grid Engine's `0.50244`).
fn priority(priority: u64, divisor: u64) -> String {
    let decimals = divisor.max(1).ilog10() as usize;
    format!("{:.decimals$}", priority as f64 / divisor.max(1) as f64)
}

/// The pass's notes, one per line after a blank line, or nothing.
fn notes(pass: &Shown) -> String {
    let mut out = String::new();
    if !pass.notes.is_empty() {
        out.push('\n');
    }
    for note in pass.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{check_line, count, priority};

    #[test]
    fn a_schedulers_own_order_is_said_in_one_line() {
        let own = (
            "Fair Tree",
            "Slurm's own Fair Tree (sshare)",
            "sshare's FairShare is",
        );
        let said = || ["bob (physics) 0.500000".to_string()].into_iter();
        assert_eq!(
            check_line(own, true, said()),
            "\nFair Tree order agrees with Slurm's own Fair Tree (sshare)"
        );
        assert_eq!(
            check_line(own, false, said()),
            "\nFair Tree order DIFFERS from Slurm's own Fair Tree: sshare's FairShare is bob (physics) 0.500000"
        );
    }

    #[test]
    fn a_priority_reads_as_its_scheduler_prints_it() {
        assert_eq!(priority(50244, 100_000), "0.50244");
        assert_eq!(priority(1_234_567, 1), "1234567");
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "job"), "1 job");
        assert_eq!(count(0, "job"), "0 jobs");
        assert_eq!(count(3, "scontrol call"), "3 scontrol calls");
    }
}
