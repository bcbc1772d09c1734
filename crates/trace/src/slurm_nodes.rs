//! When a Slurm site's nodes could not take every job: the nodes' events (down, drained,
//! failing, as `sacctmgr show event` lists them) and the reservations (`sacctmgr show
//! reservation`) of a window. No month of a production site keeps every node up, and a
//! maintenance reservation empties nodes for hours before it starts, so a replay of a site's
//! window has to know both; every value is read from a named column of a line, and the errors
//! say which.
//!
//! Both outputs are read with their header (`sacctmgr -P`, without `-n`), each column found by
//! the name `sacctmgr` prints for it.

use crate::hostlist::expand_hosts;
use crate::slurm_limits::{field, Table};
use crate::slurm_output::{Problem, ReadError};
use fairshare_core::model::Time;

/// The format of the nodes' events a bundle holds (`sacctmgr -P show event format=…`).
pub const EVENT_FORMAT: &str = "NodeName,TimeStart,TimeEnd,State,Reason,Event";

/// The format of the reservations a bundle holds (`sacctmgr -P show reservation format=…`).
pub const RESERVATION_FORMAT: &str = "Name,NodeNames,TimeStart,TimeEnd,Flags";

/// The most hosts one line may name.
const MOST_HOSTS: usize = 100_000;

/// A span of time some nodes could take no new job: down, drained or failing.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeEvent {
    /// Its line in the file.
    pub line: usize,
    /// The nodes, by host name.
    pub hosts: Vec<String>,
    /// When it began.
    pub from: Time,
    /// When it ended; `None`: it had not when the events were listed.
    pub to: Option<Time>,
    /// The nodes' state (`DRAIN`, `DOWN`, `FAIL`, …).
    pub state: String,
    /// Why, as the administrator or Slurm gave it.
    pub reason: String,
}

/// A reservation: nodes kept for its own jobs (or for nobody's, for maintenance) over a span
/// announced before it began.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteReservation {
    /// Its line in the file.
    pub line: usize,
    /// Its name, as jobs in it name it (`sacct`'s `Reservation`).
    pub name: String,
    /// Its nodes, by host name (none for a reservation of licenses or of a node count that
    /// `sacctmgr` names no nodes of).
    pub hosts: Vec<String>,
    /// When it begins.
    pub from: Time,
    /// When it ends.
    pub to: Time,
    /// Its flags (`MAINT`, `IGNORE_JOBS`, …).
    pub flags: Vec<String>,
}

/// The nodes' events in `text`, the output of `sacctmgr -P show event format=`[`EVENT_FORMAT`]
/// (its header first); the cluster's own events (no node named) are passed over.
pub fn read_node_events(text: &str) -> Result<Vec<NodeEvent>, ReadError> {
    let table = Table::of(text);
    let (nodes, start) = (
        table.needed(&["NodeName"])?,
        table.needed(&["TimeStart", "Start"])?,
    );
    let end = table.needed(&["TimeEnd", "End"])?;
    let (state, reason) = (table.column(&["State"]), table.column(&["Reason"]));
    let mut read = Vec::new();
    for (record, line, row) in &table.rows {
        // The cluster's own events name no node.
        let hosts = hosts(record, "NodeName", field(row, Some(nodes)))?;
        if hosts.is_empty() {
            continue;
        }
        read.push(NodeEvent {
            line: *line,
            hosts,
            from: moment(record, "TimeStart", field(row, Some(start)))?
                .ok_or_else(|| ReadError::field_of(record, "TimeStart", Problem::Missing))?,
            to: moment(record, "TimeEnd", field(row, Some(end)))?,
            state: field(row, state).to_owned(),
            reason: field(row, reason).to_owned(),
        });
    }
    Ok(read)
}

/// The reservations in `text`, the output of `sacctmgr -P show reservation
/// format=`[`RESERVATION_FORMAT`] (its header first).
pub fn read_reservations(text: &str) -> Result<Vec<SiteReservation>, ReadError> {
    let table = Table::of(text);
    let (name, nodes) = (
        table.needed(&["Name"])?,
        table.needed(&["NodeName", "NodeNames"])?,
    );
    let (start, end) = (
        table.needed(&["TimeStart", "Start"])?,
        table.needed(&["TimeEnd", "End"])?,
    );
    let flags = table.column(&["Flags"]);
    let mut read = Vec::new();
    for (record, line, row) in &table.rows {
        let needed = |column, what| {
            moment(record, what, field(row, Some(column)))?
                .ok_or_else(|| ReadError::field_of(record, what, Problem::Missing))
        };
        let (from, to) = (needed(start, "TimeStart")?, needed(end, "TimeEnd")?);
        if to < from {
            let problem = Problem::Invalid("it ends before it begins".into());
            return Err(ReadError::field_of(record, "TimeEnd", problem));
        }
        let flags = field(row, flags).split(',').filter(|f| !f.is_empty());
        read.push(SiteReservation {
            line: *line,
            name: field(row, Some(name)).to_owned(),
            hosts: hosts(record, "NodeName", field(row, Some(nodes)))?,
            from,
            to,
            flags: flags.map(str::to_owned).collect(),
        });
    }
    Ok(read)
}

/// The hosts of a host list (`n[01-04],gpu1`; `(null)` or empty: none).
fn hosts(record: &str, name: &'static str, list: &str) -> Result<Vec<String>, ReadError> {
    if matches!(list, "" | "(null)" | "None") {
        return Ok(Vec::new());
    }
    expand_hosts(list, MOST_HOSTS)
        .map_err(|why| ReadError::field_of(record, name, Problem::Invalid(why)))
}

/// A moment as `sacctmgr` prints it with `TZ=UTC` (`2026-11-29T14:05:43`); `Unknown` or empty:
/// none.
fn moment(record: &str, name: &'static str, text: &str) -> Result<Option<Time>, ReadError> {
    if matches!(text, "" | "Unknown" | "None") {
        return Ok(None);
    }
    let at = Time::from_utc(text).ok_or_else(|| {
        let why = format!("{text:?} is not a moment such as 2026-11-29T14:05:43");
        ReadError::field_of(record, name, Problem::Invalid(why))
    })?;
    Ok(Some(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sacctmgr -P show event format=…` of Slurm 22.05: the cluster's registration, a node
    /// drained and resumed, and nodes still down when listed.
    const EVENTS: &str = "NodeName|TimeStart|TimeEnd|State|Reason|Event
|2026-11-29T14:04:53|Unknown||Cluster Registered TRES|Cluster
n05|2026-11-29T14:05:43|2026-11-29T14:05:46|DRAIN|maintenance|Node
n[07-08]|2026-11-29T15:00:00|Unknown|DOWN|Not responding|Node
";

    /// `sacctmgr -P show reservation format=…` of Slurm 22.05.
    const RESERVATIONS: &str = "Name|NodeName|TimeStart|TimeEnd|Flags
maint|n[06-07]|2026-11-29T14:06:46|2026-11-29T14:08:46|MAINT,SPEC_NODES
";

    #[test]
    fn node_events_are_read_and_the_clusters_passed_over() {
        let events = read_node_events(EVENTS).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].hosts, ["n05"]);
        assert_eq!(
            events[0].from,
            Time::from_utc("2026-11-29T14:05:43").unwrap()
        );
        assert_eq!(events[0].to, Time::from_utc("2026-11-29T14:05:46"));
        assert_eq!((events[0].state.as_str(), events[0].line), ("DRAIN", 3));
        assert_eq!(events[1].hosts, ["n07", "n08"]);
        assert_eq!(events[1].to, None, "still down when listed");
    }

    #[test]
    fn reservations_are_read_with_their_nodes_and_flags() {
        let read = read_reservations(RESERVATIONS).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].name, "maint");
        assert_eq!(read[0].hosts, ["n06", "n07"]);
        assert_eq!(read[0].flags, ["MAINT", "SPEC_NODES"]);
        assert_eq!(
            read[0].to.as_micros() - read[0].from.as_micros(),
            120_000_000
        );
    }

    #[test]
    fn a_bad_field_is_named_with_its_line() {
        let bad = EVENTS.replace("2026-11-29T14:05:46", "yesterday");
        let e = read_node_events(&bad).unwrap_err().to_string();
        assert!(
            e.contains("line 3") && e.contains("TimeEnd") && e.contains("yesterday"),
            "{e}"
        );
        let bad = RESERVATIONS.replace("n[06-07]", "n[07-06]");
        let e = read_reservations(&bad).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("NodeName"), "{e}");
        let backwards = RESERVATIONS.replace("14:08:46", "14:00:00");
        let e = read_reservations(&backwards).unwrap_err().to_string();
        assert!(e.contains("ends before it begins"), "{e}");
        let e = read_reservations("Name|TimeStart\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("NodeName") && e.contains("missing"), "{e}");
    }
}
