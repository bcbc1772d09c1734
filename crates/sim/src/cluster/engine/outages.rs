//! The site's outages as the engine keeps them ([`Outage`]): which nodes are closed now, and
//! what the plans must not count on. A closed node is fenced in every pass, so no job starts
//! there; an announced outage (a reservation) is in the availability profile and in the
//! scheduler's own planner from the start, so that no job starts or is planned across it
//! (fenced only where the scheduler keeps no profile); an unannounced one (a node drained or
//! down) is there from its start until further notice, and taken away when it ends, as a
//! scheduler plans without knowing when a node comes back.

use super::{free_until, Engine};
use crate::cluster::scheduler::Reservations;
use crate::cluster::space::{Placed, Space};
use crate::cluster::{Outage, SimError};
use fairshare_core::model::Time;

/// The end of every plan that knows no end.
const UNTIL_FURTHER_NOTICE: Time = Time(u64::MAX);

/// One outage as the engine keeps it.
#[derive(Debug, Clone)]
struct Kept {
    /// Each of its nodes, whole.
    nodes: Vec<Placed>,
    /// When it begins.
    from: Time,
    /// Whether it was announced (see [`Outage::announced`]).
    announced: bool,
}

/// The outages of a run and when their nodes close and open again.
#[derive(Debug, Clone, Default)]
pub(super) struct Outages {
    kept: Vec<Kept>,
    /// Each change: when, which outage, and whether it closes its nodes (or opens them), in
    /// order of time.
    changes: Vec<(Time, usize, bool)>,
    /// How many changes have been made.
    made: usize,
    /// How many outages close each node now.
    closed: Vec<u32>,
    /// How many nodes are closed now.
    closed_nodes: usize,
}

impl Outages {
    /// The `outages` over `space`'s nodes, the announced ones held in its profile (and in
    /// `stand`, the scheduler's own planner) over their spans already. Refused: a host the space
    /// does not have.
    pub(super) fn of(
        outages: &[Outage],
        space: &mut Space,
        mut stand: impl FnMut(&Placed, Time, Time),
    ) -> Result<Outages, SimError> {
        let mut kept = Outages {
            closed: vec![0; space.nodes()],
            ..Outages::default()
        };
        for (i, outage) in outages.iter().enumerate() {
            let nodes = (outage.hosts.iter()).map(|host| {
                let unknown = || SimError::UnknownHost {
                    outage: outage.name.clone(),
                    host: host.clone(),
                };
                space.host(host).map(|n| space.whole(n)).ok_or_else(unknown)
            });
            let nodes = nodes.collect::<Result<Vec<_>, _>>()?;
            let to = outage.to.unwrap_or(UNTIL_FURTHER_NOTICE);
            if outage.announced {
                for node in &nodes {
                    space.expect(node, outage.from, to, 1.0);
                    stand(node, outage.from, to);
                }
            }
            kept.changes.push((outage.from, i, true));
            kept.changes.extend(outage.to.map(|to| (to, i, false)));
            kept.kept.push(Kept {
                nodes,
                from: outage.from,
                announced: outage.announced,
            });
        }
        // Opened before closed at one instant: a node handed from one outage to the next.
        kept.changes.sort_by_key(|&(t, i, closes)| (t, closes, i));
        Ok(kept)
    }

    /// When the next change is due.
    pub(super) fn next(&self) -> Option<Time> {
        self.changes.get(self.made).map(|c| c.0)
    }

    /// How many outages close each node now, when some node is closed.
    pub(super) fn closed(&self) -> Option<&[u32]> {
        (self.closed_nodes > 0).then_some(&self.closed[..])
    }
}

impl Engine {
    /// Makes every change of the outages due by `t`; whether one was made (a pass runs when a
    /// node's state changes).
    pub(super) fn change_nodes(&mut self, t: Time) -> bool {
        let mut changed = false;
        while let Some(&(at, i, closes)) = self.outages.changes.get(self.outages.made) {
            if at > t {
                break;
            }
            self.outages.made += 1;
            changed = true;
            let kept = self.outages.kept[i].clone();
            // Where starts are tried against the profile, an announced outage is there
            // already, and a fence would keep the node from plans past its end too.
            if kept.announced && self.space.profiled() {
                continue;
            }
            for node in &kept.nodes {
                let n = node[0].0;
                let closed = &mut self.outages.closed[n];
                let was = *closed;
                *closed = if closes {
                    *closed + 1
                } else {
                    closed.saturating_sub(1)
                };
                match (was, *closed) {
                    (0, 1) => self.outages.closed_nodes += 1,
                    (1, 0) => self.outages.closed_nodes -= 1,
                    _ => {}
                }
                if kept.announced {
                    continue;
                }
                if closes {
                    self.drop_reservations_on(n);
                }
                let sign = if closes { 1.0 } else { -1.0 };
                self.space.expect(node, at, UNTIL_FURTHER_NOTICE, sign);
                if let Some(planner) = &mut self.planner {
                    match closes {
                        true => planner.stand(node, kept.from, UNTIL_FURTHER_NOTICE),
                        false => planner.unstand(node, kept.from, UNTIL_FURTHER_NOTICE),
                    }
                }
                if !closes {
                    free_until(&mut self.freed, n, UNTIL_FURTHER_NOTICE);
                }
            }
        }
        changed
    }

    /// Drops every reservation kept from pass to pass that holds `node`, which an outage has
    /// just closed until further notice: each job is planned anew at the next pass, and the
    /// room it held may serve others.
    fn drop_reservations_on(&mut self, node: usize) {
        if self.reservations != Reservations::UntilStart {
            return;
        }
        for (user, index) in self.reserved() {
            let job = &self.queues[user as usize][index];
            let on_node = (job.reservation.as_ref())
                .is_some_and(|(_, placed)| placed.iter().any(|(n, _)| *n == node));
            let walltime = job.walltime;
            if let Some((t, placed)) = on_node.then(|| self.unreserve(user, index)).flatten() {
                for &(n, _) in &placed {
                    free_until(&mut self.freed, n, t.plus_micros(walltime));
                }
            }
        }
    }
}
