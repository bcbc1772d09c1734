//! The process engine's priorities: which resources are bottlenecks, and each waiting
//! process's priority under the scenario's policy (bottleneck-based global priorities, the
//! per-resource and DRF baselines, FIFO), reused while its windows say the reading holds.

use super::{Engine, FORWARD};
use crate::scenario::ProcessPolicy;
use fairshare_core::priority::bottleneck::{global_priority, is_bottleneck};

impl Engine<'_> {
    /// The bottlenecks now become the ones priorities are computed against (only the
    /// bottleneck policy looks at them).
    pub(super) fn set_bottlenecks(&mut self) {
        self.fresh = true;
        if self.scenario.simulation.policy != ProcessPolicy::Bottleneck {
            return;
        }
        let sim = &self.scenario.simulation;
        let mut changed = false;
        for (j, (busy, r)) in self.busy.iter_mut().zip(&mut self.res).enumerate() {
            // Busy time in the window never falls while the resource is busy and never rises
            // while it is idle: a busy bottleneck, or an idle resource that is not one, keeps
            // its status for as long as it stays so.
            if r.since < r.checked && self.bottleneck[j] == r.holder.is_some() {
                continue;
            }
            r.checked = self.now;
            let seconds = busy.amount(self.now, 0).expect(FORWARD) as f64 / 1e6;
            let now = is_bottleneck(seconds, sim.window, sim.bottleneck_threshold);
            changed |= self.bottleneck[j] != now;
            self.bottleneck[j] = now;
        }
        if changed {
            self.forget_priorities();
            self.bounds += 1;
        }
    }

    /// Priorities computed so far no longer hold.
    pub(super) fn forget_priorities(&mut self) {
        self.epoch += 1;
    }

    /// The priority of process `i` at resource `j` (higher is served first) and the instant
    /// before which it holds. With a priority interval, the one frozen by [`Engine::freeze`]
    /// (per-resource lags are always current: they are one priority per resource).
    pub(super) fn priority(&mut self, i: usize, j: usize) -> (f64, u64) {
        let sim = &self.scenario.simulation;
        if sim.policy == ProcessPolicy::Fifo {
            return (0.0, u64::MAX);
        }
        if sim.policy == ProcessPolicy::PerResource {
            return self.current_priority(i, j);
        }
        match self.frozen.as_ref().and_then(|frozen| frozen[i]) {
            Some(p) => (p, u64::MAX),
            None => self.current_priority(i, j),
        }
    }

    /// Process `i`'s priority at resource `j` from its windows now, and the instant before
    /// which they keep their readings.
    pub(super) fn current_priority(&mut self, i: usize, j: usize) -> (f64, u64) {
        let sim = &self.scenario.simulation;
        let share = self.shares[i];
        self.consumption[i]
            .seconds(self.now, &mut self.consumed)
            .expect(FORWARD);
        // Read after the windows moved to now: until when their readings hold.
        let mut until = self.consumption[i].steady_until();
        let slots = self.allocation.len();
        for (s, slot) in self.allocation.iter_mut().enumerate() {
            self.allocated[s] = 0.0;
            if reads_slot(sim.policy, &self.bottleneck, slots, s, j) {
                let (allocated, steady) = slot.read(self.now, i).expect(FORWARD);
                self.allocated[s] = allocated;
                until = until.min(steady);
            }
        }
        let (allocation, consumption) = (&self.allocated, &self.consumed);
        let p = match sim.policy {
            ProcessPolicy::Bottleneck => global_priority(
                allocation,
                consumption,
                &self.bottleneck,
                share,
                sim.priority_form,
            ),
            ProcessPolicy::PerResource => {
                self.only.fill(false);
                self.only[j] = true;
                global_priority(
                    allocation,
                    consumption,
                    &self.only,
                    share,
                    sim.priority_form,
                )
            }
            ProcessPolicy::Drf => -consumption.iter().copied().fold(0.0, f64::max) / share,
            ProcessPolicy::Fifo => 0.0,
        };
        (p, until.as_micros().saturating_add(1))
    }
}

/// Whether a priority under `policy` at resource `j` reads the allocation of accounting slot
/// `slot` of `slots` (one per resource, or one for all): the one global slot whenever it reads
/// an allocation; per resource, bottleneck priorities read the bottlenecks' (every resource's
/// when there is none), per-resource ones resource `j`'s. Slots it does not read need not be
/// integrated, nor bound how long the priority holds.
fn reads_slot(
    policy: ProcessPolicy,
    bottleneck: &[bool],
    slots: usize,
    slot: usize,
    j: usize,
) -> bool {
    match policy {
        ProcessPolicy::Fifo | ProcessPolicy::Drf => false,
        _ if slots == 1 => true,
        ProcessPolicy::Bottleneck => bottleneck[slot] || !bottleneck.contains(&true),
        ProcessPolicy::PerResource => slot == j,
    }
}
