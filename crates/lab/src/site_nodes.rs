//! A Slurm site's nodes over a window as a replay takes them: the nodes' events (down,
//! drained, failing) and the reservations of a site bundle ([`fairshare_trace::slurm_nodes`]),
//! turned into the engine's [`Outage`]s over the bundle's nodes. A month of a production site
//! loses nodes and reserves them for maintenance; a replay that kept every node up would
//! start jobs where the site could not.

use crate::site_limits::optional_text;
use crate::LabError;
use fairshare_sim::cluster::Outage;
use fairshare_trace::bundle;
use fairshare_trace::slurm_nodes::{
    read_node_events, read_reservations, NodeEvent, SiteReservation,
};
use fairshare_trace::slurmctld_log::ControllerLog;
use std::collections::HashSet;
use std::path::Path;

/// How many spans a sentence lists before it counts the rest.
const LISTED: usize = 4;

/// A site's nodes' events and reservations, as its bundle states them.
#[derive(Debug, Clone, Default)]
pub struct SiteNodes {
    events: Vec<NodeEvent>,
    reservations: Vec<SiteReservation>,
}

impl SiteNodes {
    /// The events and reservations of the bundle in `dir`; `None` when it holds no
    /// `events.txt` (a bundle of an earlier `collect`). A file that cannot be read is refused,
    /// naming it, its line and its field.
    pub fn read(dir: &Path) -> Result<Option<SiteNodes>, LabError> {
        let path = |name: &str| dir.join(name);
        let wrong = |name: &str, e: &dyn std::fmt::Display| {
            LabError::Unusable(format!("{}: {e}", path(name).display()))
        };
        let Some(events) = optional_text(&path(bundle::EVENTS))? else {
            return Ok(None);
        };
        let events = read_node_events(&events).map_err(|e| wrong(bundle::EVENTS, &e))?;
        let reservations = optional_text(&path(bundle::RESERVATIONS))?.unwrap_or_default();
        let reservations =
            read_reservations(&reservations).map_err(|e| wrong(bundle::RESERVATIONS, &e))?;
        Ok(Some(SiteNodes {
            events,
            reservations,
        }))
    }

    /// The run's outages over the nodes named `known`, with one sentence on what was taken
    /// and one on each thing left out (a node the configuration does not define, a
    /// reservation that names no node). A node's event begins when its last job ended; the
    /// controller's `log`, when the bundle holds it, says when it was asked to take no new
    /// job, and the outage begins then.
    pub fn outages(
        &self,
        known: &[String],
        log: Option<&ControllerLog>,
    ) -> (Vec<Outage>, Vec<String>, Vec<String>) {
        let known: HashSet<&str> = known.iter().map(String::as_str).collect();
        let (mut outages, mut left_out) = (Vec::new(), Vec::new());
        let keep = |file: &str, line: usize, hosts: &[String], left_out: &mut Vec<String>| {
            let (kept, unknown): (Vec<String>, Vec<String>) = hosts
                .iter()
                .cloned()
                .partition(|h| known.contains(h.as_str()));
            if !unknown.is_empty() {
                left_out.push(format!(
                    "{file} line {line}: {} named by no node of {}, so left up",
                    unknown.join(","),
                    bundle::CONFIG
                ));
            }
            kept
        };
        let mut earlier = 0;
        for event in &self.events {
            let hosts = keep(bundle::EVENTS, event.line, &event.hosts, &mut left_out);
            let asked = (hosts.iter())
                .filter_map(|h| log?.closed_before(h, event.from))
                .min()
                .map(|asked| asked.min(event.from));
            earlier += usize::from(asked.is_some_and(|a| a < event.from));
            outages.extend((!hosts.is_empty()).then(|| Outage {
                name: format!(
                    "{} {}: {}",
                    event.hosts.join(","),
                    event.state,
                    event.reason
                ),
                hosts,
                from: asked.unwrap_or(event.from),
                to: event.to,
                announced: false,
            }));
        }
        let drained = outages.len();
        for reservation in &self.reservations {
            if reservation.hosts.is_empty() {
                left_out.push(format!("{} line {}: reservation {} names no node, so it holds none in the replay (its jobs still start as they did)", bundle::RESERVATIONS, reservation.line, reservation.name));
                continue;
            }
            let hosts = keep(
                bundle::RESERVATIONS,
                reservation.line,
                &reservation.hosts,
                &mut left_out,
            );
            outages.extend((!hosts.is_empty()).then(|| Outage {
                name: format!("reservation {}", reservation.name),
                hosts,
                from: reservation.from,
                to: Some(reservation.to),
                announced: true,
            }));
        }
        let asked = match log {
            Some(_) => format!(", {earlier} of them from when {} says the node was asked to take no new job, before its event began", bundle::CONTROLLER_LOG),
            None => String::new(),
        };
        if log.is_none() && drained > 0 {
            left_out.push(format!("when each drain was asked: a node's event in {} begins when its last job ended, and the bundle holds no {} that says when it was asked, so the replay may start jobs there in between", bundle::EVENTS, bundle::CONTROLLER_LOG));
        }
        let taken = vec![
            format!("nodes down, drained or failing: {} (each line of {}{asked}): over each, its nodes take no new job and no plan counts on them coming back, while the jobs running there run on", spans(&outages[..drained]), bundle::EVENTS),
            format!("reservations: {} ({}): no job starts on their nodes that could still run when one begins, none is planned across one, and the jobs the record ran in one start as they did", spans(&outages[drained..]), bundle::RESERVATIONS),
        ];
        (outages, taken, left_out)
    }
}

/// The outages `of`, a few listed with their spans, the rest counted.
fn spans(of: &[Outage]) -> String {
    if of.is_empty() {
        return "none".to_owned();
    }
    let span = |o: &Outage| {
        let to = o.to.map_or("its end unknown".to_owned(), |t| t.utc());
        format!(
            "{} on {} from {} to {to}",
            o.name,
            o.hosts.join(","),
            o.from.utc()
        )
    };
    let mut listed: Vec<String> = of.iter().take(LISTED).map(span).collect();
    if of.len() > LISTED {
        listed.push(format!("and {} more", of.len() - LISTED));
    }
    format!("{} ({})", of.len(), listed.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_core::model::Time;

    #[test]
    fn events_close_nodes_and_reservations_are_announced_and_unknown_nodes_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(bundle::EVENTS),
            "NodeName|TimeStart|TimeEnd|State|Reason|Event\n|2026-11-29T14:00:00|Unknown||Cluster Registered TRES|Cluster\nn[05-06]|2026-11-29T14:05:00|2026-11-29T14:07:30|DRAIN|maintenance|Node\nn99|2026-11-29T14:06:00|Unknown|DOWN|gone|Node\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(bundle::RESERVATIONS),
            "Name|NodeName|TimeStart|TimeEnd|Flags\nmaint|n[07-08]|2026-11-29T15:00:00|2026-11-29T16:00:00|MAINT\nlic||2026-11-29T15:00:00|2026-11-29T16:00:00|\n",
        )
        .unwrap();
        let nodes = SiteNodes::read(dir.path())
            .unwrap()
            .expect("the files are there");
        let known: Vec<String> = (1..=8).map(|i| format!("n{i:02}")).collect();
        let (outages, taken, left_out) = nodes.outages(&known, None);
        assert_eq!(outages.len(), 2);
        assert_eq!(outages[0].hosts, ["n05", "n06"]);
        assert!(!outages[0].announced);
        assert_eq!(outages[0].to, Time::from_utc("2026-11-29T14:07:30"));
        assert_eq!(outages[1].hosts, ["n07", "n08"]);
        assert!(outages[1].announced);
        assert!(taken[0].starts_with("nodes down, drained or failing: 1 (n05,n06 DRAIN: maintenance on n05,n06 from 2026-11-29T14:05:00"), "{}", taken[0]);
        assert!(
            taken[1].contains("reservations: 1 (reservation maint on n07,n08"),
            "{}",
            taken[1]
        );
        assert_eq!(left_out.len(), 3, "{left_out:?}");
        assert!(
            left_out[2].contains("when each drain was asked"),
            "{}",
            left_out[2]
        );
        assert!(
            left_out[0].contains("events.txt line 4: n99"),
            "{}",
            left_out[0]
        );
        assert!(
            left_out[1].contains("reservation lic names no node"),
            "{}",
            left_out[1]
        );
        assert!(SiteNodes::read(tempfile::tempdir().unwrap().path())
            .unwrap()
            .is_none());
    }
}
