//! The table of accounts, when a replay had a share file: each account's entitlement by the
//! share tree beside the share of the processors its users were delivered, and their waits.

use crate::html;
use crate::text::{self, duration, fixed, percent, strings};
use fairshare_lab::summary::ReplaySummary;
use fairshare_sim::cluster::PolicyResult;

/// Title of the table of accounts.
const ACCOUNTS_TITLE: &str =
    "Accounts (entitled: share of the cluster by the share tree; delivered: share of the processors its users held)";

/// Column titles of the table of accounts.
fn account_headers() -> Vec<String> {
    strings(&[
        "policy",
        "account",
        "parent",
        "users",
        "tasks",
        "entitled",
        "delivered",
        "mean wait",
        "slowdown",
        "response",
    ])
}

/// One row per policy and account, matching [`account_headers`].
fn account_rows(policies: &[PolicyResult]) -> Vec<Vec<String>> {
    let rows = policies.iter().flat_map(|p| {
        p.accounts.iter().map(|a| {
            vec![
                p.policy.clone(),
                a.name.clone(),
                a.parent.clone().unwrap_or_else(|| String::from("–")),
                a.users.to_string(),
                a.tasks_submitted.to_string(),
                percent(a.entitlement),
                percent(a.delivered),
                duration(a.mean_wait_s),
                fixed(a.mean_slowdown, 1),
                duration(a.mean_response_s),
            ]
        })
    });
    rows.collect()
}

/// The table for the terminal, under its title, or nothing without accounts.
pub fn text(summary: &ReplaySummary) -> String {
    let rows = account_rows(&summary.policies);
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n{ACCOUNTS_TITLE}:\n{}",
        text::table(&account_headers(), &rows)
    )
}

/// The table of accounts, when the replay had a share file.
pub fn section(summary: &ReplaySummary) -> String {
    let rows = account_rows(&summary.policies);
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Accounts</h2>\n<p>{}.</p>\n{}",
        html::escape(ACCOUNTS_TITLE),
        html::table(&account_headers(), &rows)
    )
}
