//! What each node is expected to hold over time: the availability profile that backfilling
//! reasons with. Running jobs hold their nodes until their requested walltime runs out, and
//! reserved jobs from their reservation for their walltime; a scheduler knows nothing finer, so
//! this is what "does this job delay that reservation?" is answered against.
//!
//! Each node's use is a step function of time ([`Skyline`]): a sorted list of times, each with
//! the use from then until the next. Adding and removing a job's interval splits steps; steps
//! in the past are folded away at each pass, so a skyline holds only what is still to come.

use fairshare_core::alloc::tasks::FIT_SLACK;
use fairshare_core::model::Time;

/// One node's expected use over time.
#[derive(Debug, PartialEq)]
pub(super) struct Skyline {
    /// Resources per step.
    resources: usize,
    /// When each step begins; the first step reaches back to the start of time, the last
    /// forward to its end.
    starts: Vec<Time>,
    /// The use of each resource during each step, step after step (`resources` per step), so a
    /// search walks one array instead of one allocation per step.
    uses: Vec<f64>,
}

impl Clone for Skyline {
    fn clone(&self) -> Skyline {
        Skyline {
            resources: self.resources,
            starts: self.starts.clone(),
            uses: self.uses.clone(),
        }
    }

    /// Copies `source` into the buffers already held (a pass's plans save the profile so).
    fn clone_from(&mut self, source: &Skyline) {
        self.resources = source.resources;
        self.starts.clone_from(&source.starts);
        self.uses.clone_from(&source.uses);
    }
}

impl Skyline {
    /// A node expected to stay empty, over `resources` resources.
    pub(super) fn empty(resources: usize) -> Skyline {
        Skyline {
            resources,
            starts: vec![Time::ZERO],
            uses: vec![0.0; resources],
        }
    }

    /// The use during step `k`.
    fn used(&self, k: usize) -> &[f64] {
        &self.uses[k * self.resources..(k + 1) * self.resources]
    }

    /// The index of the step in force at `t` (the first step for a time already forgotten).
    fn at(&self, t: Time) -> usize {
        // Most often the first step is in force (a pass forgets the steps before now).
        if self.starts.get(1).is_none_or(|next| *next > t) {
            return 0;
        }
        self.starts
            .partition_point(|from| *from <= t)
            .saturating_sub(1)
    }

    /// Makes a step begin at `t` (splitting the one in force) and returns its index.
    fn split(&mut self, t: Time) -> usize {
        let i = self.at(t);
        if self.starts[i] == t {
            return i;
        }
        let at = if t < self.starts[i] { i } else { i + 1 };
        let m = self.resources;
        self.starts.insert(at, t);
        // The use in force, copied to the end and rotated into place: no allocation.
        self.uses.extend_from_within(i * m..(i + 1) * m);
        self.uses[at * m..].rotate_right(m);
        at
    }

    /// Adds `amount` (or takes it away, with `sign` −1) over `[from, to)`.
    pub(super) fn add(&mut self, from: Time, to: Time, amount: &[f64], sign: f64) {
        if to <= from {
            return;
        }
        let first = self.split(from);
        let end = self.split(to);
        let m = self.resources;
        for used in self.uses[first * m..end * m].chunks_exact_mut(m.max(1)) {
            used.iter_mut().zip(amount).for_each(|(u, a)| {
                *u += sign * a;
                if u.abs() <= FIT_SLACK * 1e-3 {
                    *u = 0.0;
                }
            });
        }
        self.merge(first.saturating_sub(1), end + 1);
    }

    /// Joins neighbouring steps of equal use within `[lo, hi)`.
    fn merge(&mut self, lo: usize, hi: usize) {
        let hi = hi.min(self.starts.len());
        let mut i = lo.max(1);
        let mut end = hi;
        let m = self.resources;
        while i < end {
            if self.used(i) == self.used(i - 1) {
                self.starts.remove(i);
                self.uses.drain(i * m..(i + 1) * m);
                end -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// The use at `t`.
    pub(super) fn use_at(&self, t: Time) -> &[f64] {
        self.used(self.at(t))
    }

    /// The most of each resource in use at any time in `[from, to)`.
    pub(super) fn peak(&self, from: Time, to: Time) -> Vec<f64> {
        let mut peak = Vec::new();
        self.peak_into(from, to, &mut peak, |_| false);
        peak
    }

    /// Writes into `peak` the most of each resource in use at any time in `[from, to)`, or
    /// stops early, with a peak no higher than the true one, once `enough` says the peak so
    /// far settles what the caller wants to know.
    pub(super) fn peak_into(
        &self,
        from: Time,
        to: Time,
        peak: &mut Vec<f64>,
        enough: impl Fn(&[f64]) -> bool,
    ) {
        let first = self.at(from);
        peak.clear();
        peak.extend_from_slice(self.used(first));
        for k in first + 1..self.starts.len() {
            if self.starts[k] >= to || enough(peak) {
                break;
            }
            peak.iter_mut()
                .zip(self.used(k))
                .for_each(|(p, u)| *p = p.max(*u));
        }
    }

    /// The earliest time from `from`, and before `before` when given, that is `from` or a time
    /// at which use changes, such that `fits` holds for the use at every moment of the
    /// `length` that follows; `None` if there is none. Each step that does not fit is jumped
    /// past: no start before its end can avoid it.
    pub(super) fn first_room(
        &self,
        from: Time,
        before: Option<Time>,
        length: u64,
        fits: impl Fn(&[f64]) -> bool,
    ) -> Option<Time> {
        self.first_room_by(from, before, length, |_, used| fits(used))
    }

    /// [`Skyline::first_room`] with `fits` told the span `[start, end)` of each step it judges
    /// (the last step reaches to `Time(u64::MAX)`).
    pub(super) fn first_room_by(
        &self,
        from: Time,
        before: Option<Time>,
        length: u64,
        fits: impl Fn((Time, Time), &[f64]) -> bool,
    ) -> Option<Time> {
        let span = |k: usize| {
            let end = self.starts.get(k + 1).copied().unwrap_or(Time(u64::MAX));
            (self.starts[k], end)
        };
        let (mut i, mut t) = (self.at(from), from);
        loop {
            if before.is_some_and(|b| t >= b) {
                return None;
            }
            let end = t.plus_micros(length.max(1));
            let window = self.starts[i + 1..]
                .iter()
                .take_while(|start| **start < end);
            let last = i + window.count();
            let Some(bad) = (i..=last).rev().find(|k| !fits(span(*k), self.used(*k))) else {
                return Some(t);
            };
            i = bad + 1;
            t = *self.starts.get(i)?;
        }
    }

    /// The first time after `t` at which use changes.
    pub(super) fn next_change_after(&self, t: Time) -> Option<Time> {
        self.starts.get(self.at(t) + 1).copied()
    }

    /// The times after `t` at which use changes (for the full searches that check the
    /// pruned one).
    #[cfg(any(test, debug_assertions))]
    pub(super) fn changes_after(&self, t: Time) -> impl Iterator<Item = Time> + '_ {
        let first = self.at(t) + 1;
        self.starts[first..].iter().copied()
    }

    /// Forgets what lies before `t`.
    pub(super) fn forget_before(&mut self, t: Time) {
        let i = self.at(t);
        if i > 0 {
            self.starts.drain(..i);
            self.uses.drain(..i * self.resources);
        }
    }
}

#[cfg(test)]
mod first_room_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `first_room` finds what trying `from` and every later change, with `peak`, finds.
        #[test]
        fn first_room_is_the_first_start_that_fits(
            jobs in prop::collection::vec((0u64..40, 1u64..20, 1u32..4), 0..12),
            from in 0u64..30,
            length in 1u64..15,
            limit in 0u32..6,
            before in prop::option::of(0u64..60),
        ) {
            let secs = |s: u64| Time::from_secs_f64(s as f64);
            let mut sky = Skyline::empty(1);
            for (start, run, amount) in &jobs {
                sky.add(secs(*start), secs(start + run), &[f64::from(*amount)], 1.0);
            }
            let (from, before) = (secs(from), before.map(secs));
            let fits = |used: &[f64]| used[0] <= f64::from(limit);
            let length = secs(length).as_micros();
            let naive = std::iter::once(from)
                .chain(sky.changes_after(from))
                .take_while(|t| before.is_none_or(|b| *t < b))
                .find(|t| fits(&sky.peak(*t, t.plus_micros(length))));
            prop_assert_eq!(sky.first_room(from, before, length, fits), naive);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(s: u64) -> Time {
        Time::from_micros(s)
    }

    #[test]
    fn intervals_add_split_and_merge_back() {
        let mut line = Skyline::empty(1);
        line.add(t(10), t(20), &[2.0], 1.0);
        line.add(t(15), t(30), &[1.0], 1.0);
        assert_eq!(line.peak(t(0), t(10)), vec![0.0]);
        assert_eq!(line.peak(t(0), t(11)), vec![2.0]);
        assert_eq!(line.peak(t(12), t(16)), vec![3.0]);
        assert_eq!(line.peak(t(20), t(40)), vec![1.0]);
        assert_eq!(
            line.changes_after(t(12)).collect::<Vec<_>>(),
            vec![t(15), t(20), t(30)]
        );
        line.add(t(15), t(30), &[1.0], -1.0);
        line.add(t(10), t(20), &[2.0], -1.0);
        assert_eq!(
            line,
            Skyline::empty(1),
            "removing everything leaves one step"
        );
        line.add(t(5), t(8), &[1.0], 1.0);
        line.forget_before(t(6));
        assert_eq!(line.peak(t(6), t(7)), vec![1.0]);
        assert_eq!(line.changes_after(t(6)).collect::<Vec<_>>(), vec![t(8)]);
        line.add(t(2), t(4), &[2.0], 1.0);
        assert_eq!(
            line.peak(t(0), t(3)),
            vec![3.0],
            "a forgotten time reads as the first step"
        );
    }

    proptest! {
        /// The skyline's peak over any window equals the most use summed from the intervals
        /// active at any instant of it, however they were added and partly taken away.
        #[test]
        fn peak_matches_the_intervals(
            intervals in prop::collection::vec((0u64..50, 1u64..30, 1u32..5), 1..20),
            removed in prop::collection::vec(any::<bool>(), 20),
            window in (0u64..80, 1u64..40),
        ) {
            let mut line = Skyline::empty(1);
            for &(from, len, amount) in &intervals {
                line.add(t(from), t(from + len), &[f64::from(amount)], 1.0);
            }
            let kept: Vec<_> = intervals
                .iter()
                .zip(&removed)
                .filter(|(_, gone)| !**gone)
                .map(|(i, _)| *i)
                .collect();
            for (&(from, len, amount), _) in intervals.iter().zip(&removed).filter(|(_, g)| **g) {
                line.add(t(from), t(from + len), &[f64::from(amount)], -1.0);
            }
            let (from, len) = window;
            let naive = (from..from + len)
                .map(|instant| {
                    kept.iter()
                        .filter(|(f, l, _)| *f <= instant && instant < f + l)
                        .map(|(_, _, a)| f64::from(*a))
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            prop_assert_eq!(line.peak(t(from), t(from + len)), vec![naive]);
        }
    }
}
