//! Which processes are active on which resource, their grace periods, and the shares and
//! rates that follow from the active set.

use super::*;

impl Engine<'_> {
    pub(super) fn slot(&self, resource: Option<usize>) -> Option<usize> {
        match (self.allocation.len(), resource) {
            (1, None) => Some(0),
            (1, Some(_)) | (_, None) => None,
            (_, Some(j)) => Some(j),
        }
    }

    pub(super) fn activate(&mut self, i: usize, resource: Option<usize>) {
        if let Some(s) = self.slot(resource) {
            self.grace[i][s] += 1;
            self.set_active(i, s, true);
        }
    }

    pub(super) fn deactivate(&mut self, i: usize, resource: Option<usize>) {
        let slots: Vec<usize> = match resource {
            None => (0..self.allocation.len()).collect(),
            Some(j) => vec![j],
        };
        for s in slots {
            self.grace[i][s] += 1;
            self.set_active(i, s, false);
        }
    }

    pub(super) fn start_grace(&mut self, i: usize, resource: Option<usize>) {
        let Some(s) = self.slot(resource).or(resource) else {
            return;
        };
        self.grace[i][s] += 1;
        let at = self.now.plus_micros(micros(self.scenario.simulation.grace));
        self.schedule(at, Event::GraceEnd(i, resource, self.grace[i][s]));
    }

    pub(super) fn end_grace(&mut self, i: usize, resource: Option<usize>, token: u64) {
        let Some(s) = self.slot(resource).or(resource) else {
            return;
        };
        if self.grace[i][s] == token {
            self.deactivate(i, Some(s).filter(|_| self.allocation.len() > 1));
        }
    }

    /// After the active sets changed: every changed slot's allocation rates become the
    /// renormalised entitlements (0 when inactive), and the shares are renormalised over the
    /// processes active anywhere.
    pub(super) fn refresh_rates(&mut self) {
        if !self.dirty.contains(&true) {
            return;
        }
        self.forget_priorities();
        if std::mem::take(&mut self.regrouped) {
            self.renormalise_shares();
            self.bounds += 1;
        }
        for s in 0..self.dirty.len() {
            if std::mem::take(&mut self.dirty[s]) {
                self.allocation[s].settle(self.now).expect(FORWARD);
            }
        }
        if self.prunes() {
            self.recap();
        }
    }

    /// Whether a dispatch computes only the stale priorities that can still win (by their
    /// ceilings): with one allocation per resource and live priorities. With one slot a
    /// priority is a few readings, cheaper than its ceiling; a frozen one is a lookup.
    pub(super) fn prunes(&self) -> bool {
        self.allocation.len() > 1 && self.frozen.is_none()
    }

    /// Keeps `cap` above every slot's rate per unit of entitlement, and within a factor 8 of
    /// the highest, raising `bounds` whenever it moves.
    fn recap(&mut self) {
        let highest = self
            .allocation
            .iter()
            .map(SharedWindow::unit_rate)
            .fold(0.0, f64::max);
        if highest > self.cap || highest * 8.0 < self.cap {
            self.cap = 2.0 * highest;
            self.bounds += 1;
        }
    }

    /// Each process's share: its entitlement over the total of the processes active anywhere
    /// (1 while none is).
    fn renormalise_shares(&mut self) {
        let active_total: f64 = (0..self.procs.len())
            .filter(|k| self.active_anywhere(*k))
            .map(|k| self.procs[k].entitlement)
            .sum();
        for (share, p) in self.shares.iter_mut().zip(&self.procs) {
            *share = if active_total > 0.0 {
                p.entitlement / active_total
            } else {
                1.0
            };
        }
    }

    /// Process `i` becomes active in slot `s` (`true`) or leaves it.
    fn set_active(&mut self, i: usize, s: usize, active: bool) {
        if self.allocation[s].is_active(i) != active {
            self.allocation[s]
                .set_active(self.now, i, active)
                .expect(FORWARD);
            let before = self.active_anywhere(i);
            if active {
                self.active_slots[i] += 1;
            } else {
                self.active_slots[i] -= 1;
            }
            self.regrouped |= before != self.active_anywhere(i);
            self.dirty[s] = true;
        }
    }

    /// Whether process `i` is active in any slot.
    fn active_anywhere(&self, i: usize) -> bool {
        self.active_slots[i] > 0
    }

    /// With a priority interval (docs/mechanisms.md, bottleneck §2.7), after the active set is updated: at a snapshot,
    /// the bottlenecks and every active process's priority are taken anew; between snapshots, a
    /// process that became active gets its priority now, on entry, and one that left the active
    /// set loses it.
    pub(super) fn freeze(&mut self, snapshot: bool) {
        if snapshot {
            self.set_bottlenecks();
            self.forget_priorities();
            let every = micros(self.scenario.simulation.priority_interval).max(1);
            self.schedule(self.now.plus_micros(every), Event::Snapshot);
        }
        for i in 0..self.procs.len() {
            let active = self.active_anywhere(i);
            let held = self.frozen.as_ref().and_then(|f| f[i]);
            let priority = match (active, held) {
                (false, _) => None,
                (true, Some(p)) if !snapshot => Some(p),
                (true, _) => Some(self.current_priority(i, 0).0),
            };
            if let Some(frozen) = self.frozen.as_mut() {
                frozen[i] = priority;
            }
        }
    }
}
