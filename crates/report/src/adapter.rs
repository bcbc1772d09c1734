//! What an adapter shows a person — `fairshare slurm` and `fairshare gridengine` alike: the
//! status (every client's usage and standing, every pending job with the scheduler's priority
//! and the factor it holds and would get), what a sync did, and the one-line summary `watch`
//! logs each pass. From the one pass record every adapter makes ([`Pass`]) and [`Applied`], in
//! each scheduler's words ([`Words`]), so that every table a person reads comes from this
//! crate.

use crate::text::{fixed, table};
use fairshare_reconcile::job::JobId;
use fairshare_reconcile::pass::{OrderCheck, Pass, Words};
use fairshare_reconcile::plan::Plan;
use fairshare_reconcile::writes::Applied;
use std::fmt::Write as _;

/// `n` and `noun`, the noun in the plural unless `n` is 1: `1 job`, `3 jobs`.
fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// The whole status of a pass: a summary, the clients, the pending jobs, the notes, in the
/// scheduler's `words`.
pub fn adapter_status<J: JobId>(pass: &Pass<J>, words: &Words) -> String {
    let mut out = format!("{}\n", summary(pass, words));
    let _ = write!(out, "\n{}", usage_table(pass, words));
    let _ = write!(out, "\n{}", jobs_table(&pass.plan, words));
    out.push_str(&notes(pass));
    out
}

/// What a sync did (or, without `applied`, would do): the summary, the writes, the notes.
pub fn adapter_sync<J: JobId>(
    pass: &Pass<J>,
    applied: Option<&Applied<J>>,
    words: &Words,
) -> String {
    let mut out = format!("{}\n", summary(pass, words));
    out.push_str(&writes_text(&pass.plan, applied, words));
    out.push_str(&notes(pass));
    out
}

/// The writes of `plan` (a sync's, or a reset's: none, or one line per call of the writer),
/// and what became of them.
pub fn writes_text<J: JobId>(
    plan: &Plan<J>,
    applied: Option<&Applied<J>>,
    words: &Words,
) -> String {
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
        let ids: Vec<String> = w.jobs.iter().map(J::to_string).collect();
        let _ = writeln!(
            out,
            "  {verb} {}{} on {}: {}",
            words.set,
            w.factor,
            count(w.jobs.len(), "job"),
            ids.join(",")
        );
    }
    if let Some(a) = applied {
        out.push_str(&applied_text(a, words));
    }
    out
}

/// Whether the writes took, in words: the calls, what the scheduler refused, what reads back.
fn applied_text<J: JobId>(a: &Applied<J>, words: &Words) -> String {
    let mut out = count(a.calls as usize, &format!("{} call", words.writer));
    for r in &a.refused {
        let _ = write!(
            out,
            "\n  refused twice: {}{} on {}: {}",
            words.set,
            r.write.factor,
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
            let ids: Vec<String> = a.mismatched.iter().map(J::to_string).collect();
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
pub fn pass_line<J: JobId>(pass: &Pass<J>, applied: Option<&Applied<J>>, words: &Words) -> String {
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
        count(plan.standings.len(), words.client),
        pass.policy,
        plan.left_alone(),
        count(pass.reads as usize, &format!("{} read", words.scheduler))
    )
}

/// The first lines: when, which version, policy and mapping, the history, the scheduler's
/// own order beside fairshare's.
fn summary<J: JobId>(pass: &Pass<J>, words: &Words) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(pass.at_s.max(0.0));
    let mapping = (pass.mapping).map_or(String::new(), |m| format!(", mapping {m}"));
    let version = (pass.version.as_ref()).map_or(String::new(), |v| format!("{v}, "));
    let mut out = format!(
        "at {}: {version}policy {}{mapping}; {}, {} running as accounted",
        humantime::format_rfc3339_seconds(at),
        pass.policy,
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
            "\n{} listed {} late: {} charged from the last pass on, {} that had already ended not charged",
            words.accounting,
            count((step.clamped + step.missed) as usize, "job"),
            step.clamped,
            step.missed
        );
    }
    if let Some(check) = &pass.check {
        out.push_str(&check_line(check));
    }
    out
}

/// The line of a scheduler's own order beside fairshare's, with what the scheduler printed
/// when the orders differ.
fn check_line(check: &OrderCheck) -> String {
    let words = check.words;
    match check.agrees {
        true => format!("\n{} order agrees with {}", words.order, words.own),
        false => {
            let own = words.own.split(" (").next().unwrap_or(words.own);
            let decimals = words.decimals;
            let said: Vec<String> = (check.scheduler.iter())
                .map(|(name, v)| format!("{name} {v:.decimals$}"))
                .collect();
            format!(
                "\n{} order DIFFERS from {own}: {} {}",
                words.order,
                words.measure,
                said.join(", ")
            )
        }
    }
}

/// Every client: its entitlement, what it was counted, what it holds, where it stands, the
/// factor of its first pending job, and (where the scheduler has a submit table) the one a job
/// it submits now gets.
fn usage_table<J: JobId>(pass: &Pass<J>, words: &Words) -> String {
    let place = |account: &str, user: &str| {
        (pass.plan.standings.iter()).find(|s| s.account == account && s.user == user)
    };
    let submitted = |account: &str, user: &str| {
        (pass.submit.iter())
            .find(|s| s.account == account && s.user == user)
            .map_or(String::new(), |s| s.factor.to_string())
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
        words.factor,
    ];
    if words.new_jobs {
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
                s.map_or(String::new(), |s| fixed(s.fraction, 3)),
                s.map_or(String::new(), |s| s.factor.to_string()),
            ];
            if words.new_jobs {
                row.push(submitted(&u.account, &u.user));
            }
            row
        })
        .collect();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    table(&headers, &rows)
}

/// Every pending job: the scheduler's priority, the factor it holds and the one wanted.
fn jobs_table<J: JobId>(plan: &Plan<J>, words: &Words) -> String {
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
fn notes<J: JobId>(pass: &Pass<J>) -> String {
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
    use super::{check_line, count, priority};
    use fairshare_reconcile::pass::{CheckWords, OrderCheck};

    #[test]
    fn a_schedulers_own_order_is_said_in_one_line() {
        let words = CheckWords {
            order: "Fair Tree",
            own: "Slurm's own Fair Tree (sshare)",
            measure: "sshare's FairShare is",
            decimals: 6,
        };
        let check = |agrees| OrderCheck {
            words,
            scheduler: vec![("bob (physics)".into(), 0.5)],
            fairshare: vec!["bob (physics)".into()],
            agrees,
        };
        assert_eq!(
            check_line(&check(true)),
            "\nFair Tree order agrees with Slurm's own Fair Tree (sshare)"
        );
        assert_eq!(
            check_line(&check(false)),
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
