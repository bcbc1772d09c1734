//! What Slurm's own fair-share says: `sshare`'s standings of every account and user.
//!
//! fairshare computes Fair Tree itself, from the association tree and the accounting; this
//! reader is the sanity check beside it: on a cluster with `PriorityType=priority/multifactor`
//! the same usage should give the same order of users as Slurm's `FairShare` column. It is
//! read, never acted on.
//!
//! `sshare --all --parsable2` prints one `|`-separated line per association, in the tree's
//! order. Slurm 22.05 writes an association's depth as leading spaces in `Account` (`root` none,
//! its accounts one, their users two…), which the reader keeps as [`ShareRow::depth`]. The root
//! line has no `RawShares`, `LevelFS` or `FairShare`; account lines have no `FairShare` under
//! Fair Tree; a user or account that has used nothing has `LevelFS` `inf`.

use fairshare_trace::assoc::AssocShares;
use fairshare_trace::slurm_output::lines;
use fairshare_trace::slurm_output::{Problem, ReadError};

/// The command, with its arguments, whose output [`parse_sshare`] reads.
pub const SSHARE_COMMAND: [&str; 5] = [
    "sshare",
    "--all",
    "--parsable2",
    "--noheader",
    "--format=Account,User,RawShares,NormShares,RawUsage,EffectvUsage,LevelFS,FairShare",
];

/// The columns of [`SSHARE_COMMAND`]'s format, in order, as errors name them.
const COLUMNS: [&str; 8] = [
    "Account",
    "User",
    "RawShares",
    "NormShares",
    "RawUsage",
    "EffectvUsage",
    "LevelFS",
    "FairShare",
];

/// One association's standing, as `sshare` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    /// The account: the association itself, or the one the user sits under.
    pub account: String,
    /// Its depth in the tree, from `Account`'s leading spaces: 0 for `root`.
    pub depth: u32,
    /// The user, for a user's association; `None` for an account.
    pub user: Option<String>,
    /// Its shares among its siblings (`parent`: its parent's); `None` for `root`.
    pub raw_shares: Option<AssocShares>,
    /// Its shares as a fraction of its siblings'.
    pub norm_shares: f64,
    /// Its decayed usage, in TRES-seconds weighted by billing.
    pub raw_usage: u64,
    /// Its usage as a fraction of its siblings' (`EffectvUsage`).
    pub effective_usage: f64,
    /// Fair Tree's level fair-share, `NormShares / EffectvUsage` (infinite for no usage);
    /// `None` where sshare prints none (`root`).
    pub level_fs: Option<f64>,
    /// Slurm's fair-share factor, from 0 to 1; `None` where sshare prints none (accounts under
    /// Fair Tree).
    pub fairshare: Option<f64>,
}

/// The standings in `sshare`'s output `text` (see [`SSHARE_COMMAND`]), in its order.
pub fn parse_sshare(text: &str) -> Result<Vec<ShareRow>, ReadError> {
    let mut rows = Vec::new();
    for (record, line) in lines(text) {
        let columns: Vec<&str> = line.split('|').collect();
        if columns.len() != COLUMNS.len() {
            let problem = Problem::Invalid(format!("{} columns, not 8", columns.len()));
            return Err(ReadError::field_of(&record, "format", problem));
        }
        rows.push(row(&columns, &record)?);
    }
    Ok(rows)
}

/// The standing of one line's `columns`.
fn row(columns: &[&str], record: &str) -> Result<ShareRow, ReadError> {
    let error = |i: usize, problem| ReadError::field_of(record, COLUMNS[i], problem);
    let column = |i: usize| columns[i].trim();
    let account = columns[0].trim_end();
    let indent = account.len() - account.trim_start_matches(' ').len();
    let account = account.trim_start();
    if account.is_empty() {
        return Err(error(0, Problem::Missing));
    }
    let depth = u32::try_from(indent).map_err(|_| error(0, Problem::Invalid("too deep".into())))?;
    let number = |i: usize, infinite: bool| -> Result<Option<f64>, ReadError> {
        match column(i) {
            "" => Ok(None),
            text => {
                let value = text
                    .parse::<f64>()
                    .map_err(|_| error(i, Problem::WrongType("a number")))?;
                let fits = value >= 0.0 && (value.is_finite() || infinite);
                fits.then_some(Some(value))
                    .ok_or_else(|| error(i, Problem::Invalid(format!("{text} is not >= 0"))))
            }
        }
    };
    let required = |i: usize| number(i, false)?.ok_or_else(|| error(i, Problem::Missing));
    let raw_shares = match column(2) {
        "" => None,
        "parent" => Some(AssocShares::Parent),
        text => {
            Some(AssocShares::Value(text.parse().map_err(|_| {
                error(2, Problem::WrongType("a number or `parent`"))
            })?))
        }
    };
    let raw_usage = match column(4) {
        "" => return Err(error(4, Problem::Missing)),
        text => text
            .parse::<u64>()
            .map_err(|_| error(4, Problem::WrongType("a whole number")))?,
    };
    Ok(ShareRow {
        account: account.to_string(),
        depth,
        user: Some(column(1).to_string()).filter(|u| !u.is_empty()),
        raw_shares,
        norm_shares: required(3)?,
        raw_usage,
        effective_usage: required(5)?,
        level_fs: number(6, true)?,
        fairshare: number(7, false)?,
    })
}
