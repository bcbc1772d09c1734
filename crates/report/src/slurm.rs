//! What `fairshare slurm` shows a person: the status (every association's usage and standing,
//! every pending job with Slurm's priority and the site factor it holds and would get), what a
//! sync did, and the one-line summary `watch` logs each pass. From the adapter's own [`Reconciliation`]
//! and [`Applied`], so that every table a person reads comes from this crate.

use crate::text::{fixed, table};
use fairshare_reconcile::plan::Plan;
use fairshare_slurm::adapter::{Applied, Reconciliation};
use std::fmt::Write as _;

/// `n` and `noun`, the noun in the plural unless `n` is 1: `1 job`, `3 jobs`.
fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// The whole status: a summary, the associations, the pending jobs, the notes.
pub fn slurm_status(pass: &Reconciliation) -> String {
    let mut out = format!("{}\n", summary(pass));
    let _ = write!(out, "\n{}", usage_table(pass));
    let _ = write!(out, "\n{}", jobs_table(&pass.plan));
    out.push_str(&notes(pass));
    out
}

/// What a sync did (or, without `applied`, would do): the summary, the writes, the notes.
pub fn slurm_sync(pass: &Reconciliation, applied: Option<&Applied>) -> String {
    let mut out = format!("{}\n", summary(pass));
    out.push_str(&writes_text(&pass.plan, applied));
    out.push_str(&notes(pass));
    out
}

/// The writes of `plan` (none, or one line per `scontrol` call), and what became of them.
pub fn writes_text(plan: &Plan, applied: Option<&Applied>) -> String {
    let verb = if applied.is_some() {
        "set"
    } else {
        "would set"
    };
    let mut out = String::new();
    if plan.writes.is_empty() {
        out.push_str("nothing to write: every pending job already holds the site factor wanted\n");
    }
    for w in &plan.writes {
        let ids: Vec<String> = w.jobs.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "  {verb} SiteFactor={} on {}: {}",
            w.site_factor,
            count(w.jobs.len(), "job"),
            ids.join(",")
        );
    }
    if let Some(a) = applied {
        out.push_str(&applied_text(a));
    }
    out
}

/// Whether the writes took, in words: the calls, what Slurm refused, what reads back.
fn applied_text(a: &Applied) -> String {
    let mut out = count(a.calls as usize, "scontrol call");
    for r in &a.refused {
        let _ = write!(
            out,
            "\n  refused twice: SiteFactor={} on {}: {}",
            r.write.site_factor,
            count(r.write.jobs.len(), "job"),
            r.message
        );
    }
    match &a.unverified {
        Some(why) => {
            let _ = writeln!(out, "\nNOT verified: reading sprio back failed: {why}");
        }
        None if a.complete() => {
            let _ = writeln!(
                out,
                "; read back from sprio: {} still pending as written",
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
pub fn slurm_pass_line(pass: &Reconciliation, applied: Option<&Applied>) -> String {
    let plan = &pass.plan;
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
        count(plan.standings.len(), "association"),
        pass.policy,
        plan.left_alone(),
        count(pass.reads as usize, "Slurm read")
    )
}

/// The first lines: when, which policy and mapping, the history, the Fair Tree check.
fn summary(pass: &Reconciliation) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(pass.at_s.max(0.0));
    let mut out = format!(
        "at {}: policy {}, mapping {}; {}, {} running as accounted",
        humantime::format_rfc3339_seconds(at),
        pass.policy,
        pass.mapping,
        count(pass.plan.jobs.len(), "pending job"),
        pass.running
    );
    if let Some(why) = &pass.rebuilt {
        let _ = write!(out, "\n{why}");
    }
    let step = &pass.step;
    if pass.rebuilt.is_none() && step.clamped + step.missed > 0 {
        let _ = write!(
            out,
            "\nsacct listed {} late: {} charged from the last pass on, {} that had already ended not charged",
            count((step.clamped + step.missed) as usize, "job"),
            step.clamped,
            step.missed
        );
    }
    if let Some(check) = &pass.fair_tree {
        let verdict = match check.agrees {
            true => "agrees with Slurm's own Fair Tree (sshare)".to_string(),
            false => {
                let slurm: Vec<String> = (check.slurm.iter())
                    .map(|(name, v)| format!("{name} {v:.6}"))
                    .collect();
                format!(
                    "DIFFERS from Slurm's own Fair Tree: sshare's FairShare is {}",
                    slurm.join(", ")
                )
            }
        };
        let _ = write!(out, "\nFair Tree order {}", verdict);
    }
    out
}

/// Every association: its entitlement, what it was counted, what it holds, where it stands,
/// the site factor of its first pending job, and the one a job it submits now gets.
fn usage_table(pass: &Reconciliation) -> String {
    let place = |account: &str, user: &str| {
        (pass.plan.standings.iter()).find(|s| s.account == account && s.user == user)
    };
    let submitted = |account: &str, user: &str| {
        (pass.submit.iter())
            .find(|s| s.account == account && s.user == user)
            .map_or(String::new(), |s| s.site_factor.to_string())
    };
    let headers = [
        "Account", "User", "Share", "Usage", "Holds", "Priority", "Rank", "Factor", "Site",
        "New job",
    ];
    let rows: Vec<Vec<String>> = (pass.usage.iter())
        .map(|u| {
            let s = place(&u.account, &u.user);
            vec![
                u.account.clone(),
                u.user.clone(),
                fixed(u.entitlement, 4),
                format!("{:.0}", u.counted),
                fixed(u.holding, 3),
                u.priority.map_or(String::new(), |p| format!("{p:.4}")),
                s.map_or(String::new(), |s| s.place.to_string()),
                s.map_or(String::new(), |s| fixed(s.factor, 3)),
                s.map_or(String::new(), |s| s.site_factor.to_string()),
                submitted(&u.account, &u.user),
            ]
        })
        .collect();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    table(&headers, &rows)
}

/// Every pending job: Slurm's priority, the site factor it holds and the one wanted.
fn jobs_table(plan: &Plan) -> String {
    if plan.jobs.is_empty() {
        return "no pending job\n".into();
    }
    let headers = [
        "Job",
        "User",
        "Account",
        "Partition",
        "Priority",
        "Site now",
        "Site wanted",
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
                j.priority.to_string(),
                number(j.held),
                number(j.wanted),
                j.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    table(&headers, &rows)
}

/// The pass's notes, one per line after a blank line, or nothing.
fn notes(pass: &Reconciliation) -> String {
    let mut out = String::new();
    if !pass.notes.is_empty() {
        out.push('\n');
    }
    for note in &pass.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "job"), "1 job");
        assert_eq!(count(0, "job"), "0 jobs");
        assert_eq!(count(3, "scontrol call"), "3 scontrol calls");
    }
}
