//! What ran: each job's allocation — who, which account, when, how much — from `sacct`.
//!
//! A fairshare policy charges users for what they used, so the adapter needs the history the
//! cluster already keeps, not a copy of its own. `sacct --allocations --parsable2` prints one
//! `|`-separated line per job (steps repeat their job's allocation and are left out): the
//! allocation's TRES are read by the very code of the trace reader
//! ([`fairshare_trace::sacct::alloc_tres`]), so that replaying a dump and reading a live
//! cluster charge a job alike.
//!
//! How a line is read, by what it says (its `NodeList` and `State`, such as `CANCELLED by 0`,
//! are in the format for whoever runs the same command, and are not read):
//!
//! - **Ran or running**: a `Start`, and TRES allocated (or an `End` after its `Start`): an
//!   [`Allocation`]; `End` is `Unknown` while it runs.
//! - **Never started** (pending, or cancelled while waiting): `Start` is `Unknown`, `None` or
//!   empty, or — as Slurm 22.05 may also write a job cancelled while pending — `Start` = `End`
//!   with nothing allocated. Counted in [`SacctListing::never_started`], not listed.
//! - **A step** (`123.batch`, `123.0`): ignored; `--allocations` should print none.
//!
//! `JobIDRaw` is always one number: each task of an array has its own job id there (the last
//! task keeps the array's: `JobID` `9_0` is 15, `9_1` is 9), and so has each component of a
//! heterogeneous job (`JobID` `12+1` is `JobIDRaw` 13), each its own record with its own
//! allocation — as Slurm 22.05 printed them. A `+` or `_` in `JobIDRaw` is refused as not a
//! job id rather than guessed at.
//!
//! `sacct` prints times in its local time zone without saying which; the reader takes them as
//! UTC, so the caller runs the command with `TZ=UTC` in its environment.
//!
//! Each allocation carries what Slurm charges its association per second, in billing units:
//! worked out from its partition's `TRESBillingWeights`, its `AllocTRES` and its `QOS`'s
//! `UsageFactor` ([`fairshare_trace::billing`]), the charge the `billing` usage metric makes.

use fairshare_core::model::Time;
pub use fairshare_reconcile::job::Allocation;
use fairshare_trace::billing::Billing;
use fairshare_trace::sacct::alloc_tres;
use fairshare_trace::slurm_output::lines;
use fairshare_trace::slurm_output::{Problem, ReadError};

/// The columns of `sacct`'s `--format`, in order, as errors name them.
pub const SACCT_FORMAT: [&str; 11] = [
    "JobIDRaw",
    "User",
    "Account",
    "Partition",
    "Submit",
    "Start",
    "End",
    "AllocTRES",
    "NodeList",
    "State",
    "QOS",
];

/// The command, with its arguments, whose output [`parse_accounting`] reads: every user's jobs
/// (allocations only, no steps) that were in the system between `from` and `to`, times as
/// sacct takes them (such as `2026-11-24T05:00:00`). Run it with `TZ=UTC`: the reader takes
/// the times it prints as UTC. sacct places a job in the window by its eligible time, so a
/// job cancelled while held (`--begin` later) is listed only once `to` reaches that time.
pub fn sacct_command(from: &str, to: &str) -> Vec<String> {
    [
        "sacct",
        "--allusers",
        "--allocations",
        "--parsable2",
        "--noheader",
    ]
    .into_iter()
    .map(str::to_string)
    .chain([
        format!("--starttime={from}"),
        format!("--endtime={to}"),
        format!("--format={}", SACCT_FORMAT.join(",")),
    ])
    .collect()
}

/// What `sacct`'s output says ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SacctListing {
    /// The jobs that started, in `sacct`'s order: by job id, an array's tasks together.
    pub allocations: Vec<Allocation>,
    /// How many jobs were listed that never started (pending, or cancelled while waiting).
    pub never_started: u64,
}

/// The jobs in `sacct`'s output `text` (see [`sacct_command`]), times read as UTC, each billed
/// under `billing`.
pub fn parse_accounting(text: &str, billing: &Billing) -> Result<SacctListing, ReadError> {
    let (accounting, mut rejected) = read_accounting(text, billing);
    match rejected.is_empty() {
        true => Ok(accounting),
        false => Err(rejected.swap_remove(0)),
    }
}

/// The allocations of every line of `text` that reads, and why each other line does not: a
/// reconcile skips one bad record rather than stop for as long as it stays in the window.
pub fn read_accounting(text: &str, billing: &Billing) -> (SacctListing, Vec<ReadError>) {
    let mut accounting = SacctListing::default();
    let mut rejected = Vec::new();
    for (record, line) in lines(text) {
        let columns: Vec<&str> = line.split('|').map(str::trim).collect();
        if columns.len() != SACCT_FORMAT.len() {
            let problem = Problem::Invalid(format!(
                "{} columns, not {}",
                columns.len(),
                SACCT_FORMAT.len()
            ));
            rejected.push(ReadError::field_of(&record, "format", problem));
            continue;
        }
        if columns[0].contains('.') {
            continue;
        }
        match allocation(&columns, &record, billing) {
            Ok(Some(allocation)) => accounting.allocations.push(allocation),
            Ok(None) => accounting.never_started += 1,
            Err(error) => rejected.push(error),
        }
    }
    (accounting, rejected)
}

/// The allocation of one job line's `columns`; `None` if the job never started.
fn allocation(
    columns: &[&str],
    record: &str,
    billing: &Billing,
) -> Result<Option<Allocation>, ReadError> {
    let error = |i: usize, problem| ReadError::field_of(record, SACCT_FORMAT[i], problem);
    let required = |i: usize| match columns[i] {
        "" => Err(error(i, Problem::Missing)),
        value => Ok(value.to_string()),
    };
    let id = match columns[0] {
        "" => return Err(error(0, Problem::Missing)),
        id => id
            .parse::<u64>()
            .map_err(|_| error(0, Problem::WrongType("a job id")))?,
    };
    let user = required(1)?;
    let account = required(2)?;
    let time = |i: usize| time(columns[i]).map_err(|problem| error(i, problem));
    let submit = time(4)?.ok_or_else(|| error(4, Problem::Missing))?;
    let start = time(5)?;
    let end = time(6)?;
    let (demand, nodes) = alloc_tres(columns[7])
        .map_err(|expected| error(7, Problem::Invalid(format!("expected {expected}"))))?;
    let nothing_allocated = demand.iter().all(|&x| x == 0.0);
    let Some(start) = start else {
        return Ok(None);
    };
    if nothing_allocated && end.is_none_or(|end| end <= start) {
        return Ok(None);
    }
    if end.is_some_and(|end| end < start) {
        return Err(error(6, Problem::Invalid("before Start".into())));
    }
    let (partition, qos) = (columns[3], columns[10]);
    let billing = billing
        .charge(nonempty(partition), nonempty(qos), columns[7])
        .map_err(|e| error(7, Problem::Invalid(e.0)))?;
    Ok(Some(Allocation {
        id,
        user,
        account,
        partition: partition.to_string(),
        submit,
        start,
        end,
        demand,
        nodes,
        qos: qos.to_string(),
        billing,
    }))
}

/// `text`, unless it is empty.
fn nonempty(text: &str) -> Option<&str> {
    Some(text).filter(|t| !t.is_empty())
}

/// A time as sacct prints it (`2026-11-24T05:00:00`), read as UTC; `None` for `Unknown`,
/// `None` or empty.
fn time(text: &str) -> Result<Option<Time>, Problem> {
    if matches!(text, "" | "Unknown" | "None") {
        return Ok(None);
    }
    Time::from_utc(text).map(Some).ok_or(Problem::WrongType(
        "a time such as 2026-11-24T05:00:00, from 1970 to about 317 years on",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sacct_times_read_as_utc() {
        assert_eq!(
            time("2026-11-24T05:00:00"),
            Ok(Some(Time::from_micros(1_795_496_400_000_000)))
        );
        assert_eq!(time("Unknown"), Ok(None));
        assert!(time("yesterday").is_err());
        assert!(time("1969-12-31T23:59:59").is_err());
    }
}
