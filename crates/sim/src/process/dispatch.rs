//! Dispatching a free resource: the waiting processes in its queue, their priorities computed
//! only where they may be the best, and the grant to the first.

use super::*;

/// A process waiting in a resource's queue, with its priority as last computed: exact until
/// `valid_before` (µs, exclusive; 0 = not computed) unless the bottlenecks or the entitlement
/// rates change, which moves the engine to a new epoch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Waiting {
    /// When it entered the queue, µs: ties go to the earlier entry, then to the lower process
    /// index (docs/mechanisms.md, bottleneck §2.5).
    pub(super) entered: u64,
    pub(super) process: usize,
    pub(super) priority: f64,
    pub(super) valid_before: u64,
    /// The engine's [`Engine::epoch`] when it was computed: from another, it no longer holds.
    pub(super) epoch: u64,
    /// When it was computed, µs, and the engine's [`Engine::bounds`] then: from another, how far
    /// it can have risen since is unknown.
    pub(super) at: u64,
    pub(super) bounds: u64,
    /// Until when (µs) its service in the window stays as it was then: no past service of it
    /// leaves the window before.
    pub(super) served_until: u64,
}

/// The place in `queue` of the process served first among those whose priority is `exact`
/// (at least one): the highest priority, and among priorities equal up to rounding the one
/// queued first.
///
/// The others must be certainly below the highest exact one, by more than rounding
/// ([`clearly_below`]): then they are passed over where the scan of every priority would have
/// found them, for whenever one of them would have led the scan, only such processes led it
/// then, and the first process near the top beats any of them outright.
pub(super) fn first_served(queue: &[Waiting], exact: impl Fn(&Waiting) -> bool) -> usize {
    let tolerance = |p: f64| 1e-12 * p.abs().max(1.0);
    let mut best = queue
        .iter()
        .position(&exact)
        .expect("one priority is exact");
    let mut bar = tolerance(queue[best].priority);
    for (k, w) in queue.iter().enumerate().skip(best + 1) {
        if !exact(w) {
            continue;
        }
        let leader = &queue[best];
        let wins = if (w.priority - leader.priority).abs() <= bar {
            (w.entered, w.process) < (leader.entered, leader.process)
        } else {
            w.priority > leader.priority
        };
        if wins {
            (best, bar) = (k, tolerance(w.priority));
        }
    }
    best
}

/// Whether a priority of at most `ceiling` is below `best` by far more than the tolerance of
/// equal priorities in [`first_served`], whatever the size of either.
pub(super) fn clearly_below(ceiling: f64, best: f64) -> bool {
    ceiling < best - 1e-6 * ceiling.abs().max(best.abs()).max(1.0)
}

impl Engine<'_> {
    /// Grants resource `j`, if free, to its best queued process (ties: first queued).
    pub(super) fn dispatch(&mut self, j: usize) {
        if self.res[j].holder.is_some() || self.res[j].queue.is_empty() {
            return;
        }
        if !self.fresh {
            self.set_bottlenecks();
        }
        let mut queue = std::mem::take(&mut self.res[j].queue);
        if self.prunes() {
            self.compute_promising(&mut queue, j);
        } else {
            for w in queue.iter_mut() {
                if !self.holds(w) {
                    self.compute(w, j);
                }
            }
        }
        let i = queue
            .swap_remove(first_served(&queue, |w| self.holds(w)))
            .process;
        self.res[j].queue = queue;
        self.grant(i, j);
    }

    /// Whether `w`'s priority as computed holds now.
    pub(super) fn holds(&self, w: &Waiting) -> bool {
        self.now.as_micros() < w.valid_before && w.epoch == self.epoch
    }

    /// Computes `w`'s priority at resource `j` now.
    fn compute(&mut self, w: &mut Waiting, j: usize) {
        (w.priority, w.valid_before) = self.priority(w.process, j);
        w.epoch = self.epoch;
    }

    /// Computes the stale priorities in `queue` that can still be the best: the one with the
    /// highest ceiling first (mostly the best, found in one pass rather than by sorting), then
    /// each other one whose ceiling is not clearly below the best priority known by then.
    fn compute_promising(&mut self, queue: &mut [Waiting], j: usize) {
        let accruing = match self.bottleneck.contains(&true) {
            true => 1.0,
            false => self.allocation.len() as f64,
        };
        // One pass: the best priority that holds, and the ceiling of each one that does not.
        let mut best = f64::NEG_INFINITY;
        let mut stale = std::mem::take(&mut self.stale);
        for (k, w) in queue.iter().enumerate() {
            if self.holds(w) {
                best = best.max(w.priority);
            } else {
                stale.push((self.ceiling(w, accruing), k));
            }
        }
        let highest = (0..stale.len()).reduce(|a, b| match stale[b].0 > stale[a].0 {
            true => b,
            false => a,
        });
        if let Some(h) = highest {
            stale.swap(0, h);
        }
        for &(ceiling, k) in &stale {
            if clearly_below(ceiling, best) {
                continue;
            }
            let w = &mut queue[k];
            self.compute(w, j);
            (w.at, w.bounds) = (self.now.as_micros(), self.bounds);
            w.served_until = self.consumption[w.process].steady_until().as_micros();
            best = best.max(w.priority);
        }
        stale.clear();
        self.stale = stale;
    }

    /// The highest priority a waiting process can have now, from the last one computed for
    /// it: a gap on a slot rises only as the process accrues entitlement there (at its
    /// entitlement times the slot's rate per unit, at most `cap`, while it is active; summed
    /// over `accruing` slots, every one when there is no bottleneck and one when there is) and
    /// as its past service leaves the window (at rate 1 at most, and not before
    /// `served_until`); a priority is its gap over the process's share. Unbounded when never
    /// computed, or when the shares, the bottlenecks or the cap changed since.
    pub(super) fn ceiling(&self, w: &Waiting, accruing: f64) -> f64 {
        let share = self.shares[w.process];
        if w.valid_before == 0 || w.bounds != self.bounds || share <= 0.0 {
            return f64::INFINITY;
        }
        let now = self.now.as_micros();
        // A bound, not a reading: multiplied by 1e-6 rather than divided by 1e6.
        let elapsed = (now - w.at) as f64 * 1e-6;
        let leaving = now.saturating_sub(w.at.max(w.served_until)) as f64 * 1e-6;
        let rise = accruing * self.procs[w.process].entitlement * self.cap * elapsed + leaving;
        w.priority + rise / share
    }

    pub(super) fn grant(&mut self, i: usize, j: usize) {
        let p = &mut self.procs[i];
        p.state = State::Serving(j);
        let length = if self.res[j].sliced {
            p.remaining
                .min(micros(self.scenario.simulation.quantum).max(1))
        } else {
            p.remaining
        };
        self.res[j].holder = Some(i);
        self.res[j].since = self.now;
        self.consumption[i].start(self.now, j).expect(FORWARD);
        self.busy[j].start(self.now, 0).expect(FORWARD);
        self.schedule(self.now.plus_micros(length), Event::GrantEnd(j));
    }
}
