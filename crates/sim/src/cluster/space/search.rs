//! The searches of the availability profile: where a job fits over a window of every node's
//! expected use, and the earliest start at which it fits, which backfilling and reservations
//! ask for every job they plan.

use super::*;

/// The buffers of [`Space::earliest`]: the eligible nodes, openings on any of them and on the
/// freed ones, and the nodes barred from a try.
pub(super) type Searches = (Vec<usize>, Openings, Openings, Vec<bool>);

impl Space {
    /// Where `request` fits from `from` for `length` by the availability profile (every node's
    /// most expected use over that window), without taking it. A request already known not to
    /// fit then is not tried again, and a failure at `from` is remembered.
    pub(in crate::cluster) fn fit_during(
        &mut self,
        request: &Request,
        from: Time,
        length: u64,
    ) -> Option<Placed> {
        if self.bounds.start_at_least(request, length) > from {
            debug_assert!(self.fit_during_in_full(request, from, length).is_none());
            return None;
        }
        let placed = self.fit_during_in_full(request, from, length);
        if placed.is_none() {
            self.bounds.learn(request, length, from.plus_micros(1));
        }
        placed
    }

    /// [`Space::fit_during`] tried in full, whatever is known, on every node the fences leave.
    pub(super) fn fit_during_in_full(
        &mut self,
        request: &Request,
        from: Time,
        length: u64,
    ) -> Option<Placed> {
        self.fit_during_except(request, from, length, None)
    }

    /// [`Space::fit_during_in_full`], on none of the nodes `barred` marks (`None`: the fenced
    /// ones), whose profiles are not even read.
    fn fit_during_except(
        &mut self,
        request: &Request,
        from: Time,
        length: u64,
        barred: Option<&[bool]>,
    ) -> Option<Placed> {
        let to = from.plus_micros(length.max(1));
        let barred = barred.unwrap_or(&self.fenced);
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut passed_by = std::mem::take(&mut self.passed_by);
        passed_by.clear();
        let nodes = scratch.iter_mut().zip(&self.profile).enumerate();
        passed_by.extend(nodes.map(|(i, (s, line))| {
            let allowed = request.eligible.as_ref().is_none_or(|e| e[i]);
            // Once the node has no room for one part of the job, how much more it would
            // hold changes nothing: the placement passes it by, as it passes a node with no
            // room at the window's start without reading further.
            let full = |peak: &[f64]| !part_fits(request, &s.capacity, peak);
            let passed = !allowed || barred.get(i).copied().unwrap_or(false);
            let passed = passed || full(line.use_at(from));
            if !passed {
                line.peak_into(from, to, &mut s.used, full);
            }
            passed
        }));
        let placed = fit(self.placement.as_ref(), request, &mut scratch, &passed_by);
        self.scratch = scratch;
        self.passed_by = passed_by;
        placed
    }

    /// The earliest time from `now`, and before `before` when given, at which `request` fits
    /// for `length` by the availability profile, and where; `None` if there is none. With
    /// `through`, only starts at which the job could use one of these nodes (each free up to
    /// its time) are tried: after room is freed there, no other start can have become possible.
    ///
    /// Candidate starts are `now` and the times at which some eligible node's use changes.
    /// Each node keeps the next start at which it could take its part of the job
    /// ([`Skyline::first_room`], moved on only when the candidates pass it), so a start is
    /// tried in full only when enough nodes could take part then.
    ///
    /// While the profile only gains use, no start comes before one found earlier for the same
    /// request for no longer: the search begins there ([`Bounds`]), and what it finds is
    /// remembered. A start that fits after such a bound is `now` or a change of use,
    /// as from `now`: a later time inside a step fits only if the step's start does.
    pub(in crate::cluster) fn earliest(
        &mut self,
        request: &Request,
        now: Time,
        length: u64,
        before: Option<Time>,
        through: Option<&[(usize, Time)]>,
    ) -> Option<(Time, Placed)> {
        let from = match through {
            None => now.max(self.bounds.start_at_least(request, length)),
            Some(_) => now,
        };
        if before.is_some_and(|b| from >= b) {
            return None;
        }
        let mut searches = std::mem::take(&mut self.searches);
        let found = self.earliest_with(&mut searches, request, from, length, before, through);
        self.searches = searches;
        if through.is_none() {
            let never = before.unwrap_or(Time(u64::MAX));
            let at = found.as_ref().map_or(never, |(t, _)| *t);
            self.bounds.learn(request, length, at);
        }
        found
    }

    /// [`Space::earliest`] with its buffers.
    fn earliest_with(
        &mut self,
        (nodes, any, freed, barred): &mut Searches,
        request: &Request,
        now: Time,
        length: u64,
        before: Option<Time>,
        through: Option<&[(usize, Time)]>,
    ) -> Option<(Time, Placed)> {
        let eligible = |i: &usize| request.eligible.as_ref().is_none_or(|e| e[*i]);
        let freed_until = through.map(|f| f.iter().map(|(_, until)| *until).max());
        let before = match freed_until {
            Some(None) => return None,
            Some(Some(until)) => Some(before.map_or(until, |b| b.min(until))),
            None => before,
        };
        nodes.clear();
        nodes.extend((0..self.profile.len()).filter(eligible));
        let any = any.reset(nodes.iter().map(|&n| (n, before)));
        let mut freed = through.map(|f| {
            let usable = f.iter().filter(|(n, _)| eligible(n));
            freed.reset(usable.map(|&(n, until)| (n, Some(before.map_or(until, |b| b.min(until))))))
        });
        let needed = match &request.shape {
            Shape::Nodes { nodes, .. } => *nodes as usize,
            Shape::Spread { .. } => 1,
        };
        let mut t = now;
        loop {
            // No start before a freed node opens can use it, and none before `needed` nodes
            // are open at once can hold the job: jump to where both hold.
            loop {
                let from = t;
                if let Some(freed) = &mut freed {
                    t = t.max(freed.opening(self, request, t, length, 1)?);
                }
                t = t.max(any.opening(self, request, t, length, needed)?);
                if t == from {
                    break;
                }
            }
            if before.is_some_and(|b| t >= b) {
                return None;
            }
            // Only the nodes open now can take a part: the others' profiles need no reading,
            // and a one-node part with one node open goes there (as on a pool).
            any.barred_at(t, &self.fenced, self.profile.len(), barred);
            if let (Shape::Nodes { nodes: 1, per_node }, false) =
                (&request.shape, request.exclusive)
            {
                let mut open = barred.iter().enumerate().filter(|(_, b)| !**b);
                if let (Some((node, _)), None) = (open.next(), open.next()) {
                    return Some((t, vec![(node, per_node.clone())]));
                }
            }
            if let Some(placed) = self.fit_during_except(request, t, length, Some(barred)) {
                return Some((t, placed));
            }
            let changes = nodes
                .iter()
                .filter_map(|&n| self.profile[n].next_change_after(t));
            t = changes.min()?;
        }
    }

    /// Whether [`Space::earliest`] could find a start before `before` for a job that holds
    /// the reservation `own` from `before` for `length` (still in the profile), given room
    /// freed `through` these nodes: `false` only when it surely finds none, because no freed
    /// node the job may use has room for its part before its time — on its own nodes with its
    /// own use taken off every step that overlaps its reservation, which can only add room.
    /// Compression asks this first and leaves the many reservations that cannot move where
    /// they are, rather than taking each out of the profile and putting it back.
    pub(in crate::cluster) fn may_move(
        &self,
        request: &Request,
        now: Time,
        length: u64,
        before: Time,
        through: &[(usize, Time)],
        own: &Placed,
    ) -> bool {
        let eligible = |i: usize| request.eligible.as_ref().is_none_or(|e| e[i]);
        let Some(until) = through.iter().map(|(_, until)| *until).max() else {
            return false;
        };
        let reserved = (before, before.plus_micros(length.max(1)));
        let before = before.min(until);
        through
            .iter()
            .filter(|(n, _)| eligible(*n))
            .any(|&(n, until)| {
                let capacity = &self.nodes[n].capacity;
                let mine = own.iter().find(|(o, _)| *o == n).map(|(_, amount)| amount);
                let fits = |(from, to): (Time, Time), used: &[f64]| match mine {
                    Some(mine) if from < reserved.1 && to > reserved.0 => {
                        part_fits_without(request, capacity, used, mine)
                    }
                    _ => part_fits(request, capacity, used),
                };
                let room =
                    self.profile[n].first_room_by(now, Some(before.min(until)), length, fits);
                room.is_some()
            })
    }

    /// The earliest start before `before` at which `request` fits, found the obvious way:
    /// trying `now` and every later time at which some node's use changes, in full. The
    /// reference [`Space::earliest`] is checked against in debug builds.
    #[cfg(debug_assertions)]
    pub(in crate::cluster) fn earliest_by_trying_every_start(
        &mut self,
        request: &Request,
        now: Time,
        length: u64,
        before: Time,
    ) -> Option<(Time, Placed)> {
        let mut times: Vec<Time> = self
            .profile
            .iter()
            .flat_map(|p| p.changes_after(now))
            .collect();
        times.push(now);
        times.sort_unstable();
        times.dedup();
        times
            .into_iter()
            .take_while(|t| *t < before)
            .find_map(|t| Some((t, self.fit_during_in_full(request, t, length)?)))
    }
}
