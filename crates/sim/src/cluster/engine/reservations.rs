//! Planned starts: a waiting job's reservation in the availability profile (and in the
//! scheduler's own planner, when it has one), moved up when jobs end early, dropped when the
//! pass that made them ends.

use super::{free_until, Engine};
#[cfg(doc)]
use crate::cluster::scheduler::Planning;
use crate::cluster::scheduler::{Ask, Reservations};
use crate::cluster::space::Placed;
use fairshare_core::model::Time;
use std::cmp::Reverse;

impl Engine {
    /// Every waiting job with a reservation, as (user, index in its queue), by reserved start.
    pub(super) fn reserved(&self) -> Vec<(u32, usize)> {
        let mut reserved: Vec<(Time, u64, u32, usize)> = Vec::new();
        for (u, queue) in self.queues.iter().enumerate() {
            for (i, job) in queue.iter().enumerate() {
                if let Some((t, _)) = &job.reservation {
                    reserved.push((*t, job.seq, u as u32, i));
                }
            }
        }
        reserved.sort_unstable();
        reserved.into_iter().map(|(_, _, u, i)| (u, i)).collect()
    }

    /// Takes a job's reservation out of the availability profile and off the job.
    pub(super) fn unreserve(&mut self, user: u32, index: usize) -> Option<(Time, Placed)> {
        let job = &mut self.queues[user as usize][index];
        let (t, placed) = job.reservation.take()?;
        let walltime = job.walltime;
        let (from, to) = self.held_span(t, walltime);
        self.unreserved += 1;
        match self.reservations {
            Reservations::ForThePass => self.space.unplan(&placed, from, to),
            _ => self.space.expect(&placed, from, to, -1.0),
        }
        if let Some(planner) = &mut self.planner {
            planner.release(&placed, from, to);
        }
        Some((t, placed))
    }

    /// What a reservation at `t` for `walltime` holds in the availability profile: from `t`
    /// for the walltime, or with a plan resolution ([`Planning::resolution_s`]), from `t` rounded
    /// down (but not before now) to the end rounded down, at least one resolution past the
    /// rounded start. A rounded span depends on now, so only reservations dropped in the pass
    /// that made them are rounded ([`Engine::new`] gives other schedulers no resolution).
    pub(super) fn held_span(&self, t: Time, walltime: u64) -> (Time, Time) {
        held_span(self.now, self.plan_resolution, t, walltime)
    }

    /// Drops every reservation (EASY's last only for the pass that made it): off the jobs,
    /// and out of the profile all at once.
    pub(super) fn drop_reservations(&mut self) {
        for user in std::mem::take(&mut self.reserving) {
            for job in self.queues[user as usize].iter_mut() {
                if job.reservation.take().is_some() {
                    self.unreserved += 1;
                }
            }
        }
        self.space.drop_plans();
        if let Some(planner) = &mut self.planner {
            planner.clear();
        }
    }

    /// Moves every reservation as early as it now fits, in the order of their starts, each
    /// against all the others, until none can move: jobs that ended before their walltime left
    /// room on the `freed` nodes, and since a job's own slot stays free while the others move,
    /// no reservation ever moves later. Before that room was freed no reservation could start
    /// earlier, so only starts at which a job could use freed room are tried; a reservation
    /// that moves frees its old slot, which earlier ones get to try in the next round.
    pub(super) fn compress(&mut self, mut freed: Vec<(usize, Time)>) {
        while !freed.is_empty() {
            let mut moved = Vec::new();
            for (user, index) in self.reserved() {
                let job = &self.queues[user as usize][index];
                let stays = job.reservation.as_ref().is_none_or(|(t, placed)| {
                    let (request, walltime) = (&job.request, job.walltime);
                    !self
                        .space
                        .may_move(request, self.now, walltime, *t, &freed, placed)
                });
                if stays {
                    continue;
                }
                let Some(old) = self.unreserve(user, index) else {
                    continue;
                };
                let job = &self.queues[user as usize][index];
                let (request, walltime) = (job.request.clone(), job.walltime);
                let found =
                    self.space
                        .earliest(&request, self.now, walltime, Some(old.0), Some(&freed));
                let (kept, held_before) = match found {
                    Some(earlier) => {
                        let end = old.0.plus_micros(walltime);
                        for &(node, _) in &old.1 {
                            free_until(&mut freed, node, end);
                            free_until(&mut moved, node, end);
                        }
                        (earlier, false)
                    }
                    None => (old, true),
                };
                self.hold(user, index, kept, held_before);
            }
            freed = moved;
        }
        #[cfg(debug_assertions)]
        self.assert_compressed();
    }

    /// Checks, in debug builds (and so in every test), that compression left no reservation
    /// able to start earlier, by trying every earlier start in full.
    #[cfg(debug_assertions)]
    fn assert_compressed(&mut self) {
        for (user, index) in self.reserved() {
            let Some(old) = self.unreserve(user, index) else {
                continue;
            };
            let job = &self.queues[user as usize][index];
            let (request, walltime) = (job.request.clone(), job.walltime);
            let earlier = self
                .space
                .earliest_by_trying_every_start(&request, self.now, walltime, old.0);
            assert!(
                earlier.is_none(),
                "job {} could start at {:?}, before its reservation at {}",
                job.id,
                earlier.map(|e| e.0),
                old.0
            );
            self.hold(user, index, old, true);
        }
    }

    /// Gives a waiting job the reservation `(t, placed)` and enters it in the profile, with a
    /// wakeup at `t` unless it `held_before` a reservation starting then (whose wakeup, still
    /// ahead, is in the heap already: one per hold would grow the heap with every compression).
    pub(super) fn hold(
        &mut self,
        user: u32,
        index: usize,
        (t, placed): (Time, Placed),
        held_before: bool,
    ) {
        let (from, to) = self.held_span(t, self.queues[user as usize][index].walltime);
        // The rest of each node from the planned start: before it, the jobs it waits for
        // still hold their part.
        let placed = match self.whole_nodes {
            true => self.space.rest_of_nodes(&placed, t.max(self.now), to),
            false => placed,
        };
        match self.reservations {
            Reservations::ForThePass => self.space.plan(&placed, from, to),
            _ => self.space.expect(&placed, from, to, 1.0),
        }
        if let Some(planner) = &mut self.planner {
            planner.hold(&placed, from, to);
        }
        let job = &mut self.queues[user as usize][index];
        job.first_reserved.get_or_insert(t);
        job.reservation = Some((t, placed));
        if self.reservations == Reservations::ForThePass {
            self.reserving.push(user);
        }
        if t > self.now && !held_before {
            self.wakeups.push(Reverse(t));
        }
        self.unreserved -= 1;
    }

    /// [`SchedulingPass::reserve`](crate::cluster::SchedulingPass::reserve), the start found
    /// before `before` when given.
    pub(super) fn reserve_before(&mut self, user: u32, before: Option<Time>) -> bool {
        let index = self.cursor[user as usize];
        let Some(job) = self.candidate(user) else {
            return false;
        };
        if job.reservation.is_some() {
            return true;
        }
        if !self.queue_allows(job) || self.held_by_limit(user, index) {
            return false;
        }
        let Some(job) = self.candidate(user) else {
            return false;
        };
        if self.planner.is_some() {
            return self.plan_own(user, index, before);
        }
        let (request, walltime) = (job.request.clone(), job.walltime);
        let found = self
            .space
            .earliest(&request, self.now, walltime, before, None);
        #[cfg(debug_assertions)]
        {
            let before = before.unwrap_or(Time(u64::MAX));
            let naive = self
                .space
                .earliest_by_trying_every_start(&request, self.now, walltime, before);
            assert_eq!(found, naive, "pruned and full searches differ");
        }
        found
            .map(|found| self.hold(user, index, found, false))
            .is_some()
    }

    /// [`SchedulingPass::reserve`](crate::cluster::SchedulingPass::reserve) as the scheduler's
    /// own planner plans; a start at or past `before` is not planned.
    fn plan_own(&mut self, user: u32, index: usize, before: Option<Time>) -> bool {
        let Some(planner) = self.planner.as_mut() else {
            return false;
        };
        let job = &self.queues[user as usize][index];
        let (request, walltime) = (job.request.clone(), job.walltime);
        let running = &self.running;
        let mut ends = || {
            (running.iter().enumerate())
                .filter_map(|(slot, job)| Some((job.as_ref()?.planned_end, slot)))
                .collect()
        };
        let placed_of = |slot: usize| running[slot].as_ref().map_or(&[][..], |j| &j.placed[..]);
        let (now, resolution) = (self.now, self.plan_resolution);
        let ask = Ask {
            request: &request,
            walltime,
            before,
        };
        let held = |t| held_span(now, resolution, t, walltime);
        let found = planner.plan(&mut self.space, now, ask, (&mut ends, &placed_of), &held);
        found
            .map(|found| self.hold(user, index, found, false))
            .is_some()
    }
}

/// How a scheduler rounds a reservation's span ([`Planning::resolution_s`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Resolution {
    /// The granularity, in microseconds.
    pub(super) micros: u64,
    /// Whether the end is rounded up (from the start's whole second plus the walltime,
    /// [`Planning::ends_rounded_up`]) rather than down.
    pub(super) ends_up: bool,
}

/// What a reservation at `t` for `walltime` holds at `now`, spans rounded by `resolution`
/// when given ([`Engine::held_span`]).
fn held_span(now: Time, resolution: Option<Resolution>, t: Time, walltime: u64) -> (Time, Time) {
    let end = t.plus_micros(walltime);
    let Some(Resolution { micros: r, ends_up }) = resolution else {
        return (t, end);
    };
    let down = |x: Time| Time(x.0 - x.0 % r);
    let start = down(t);
    let end = match ends_up {
        // Counted in whole seconds: ⌈(⌊t⌋ + walltime) / r⌉ · r.
        true => down(Time::from_whole_secs(t.whole_secs()).plus_micros(walltime + r - 1)),
        false => down(end),
    };
    (start.max(now), end.max(start.plus_micros(r)))
}

#[cfg(test)]
mod tests {
    use super::{held_span, Resolution};
    use fairshare_core::model::Time;

    fn s(secs: f64) -> Time {
        Time::from_micros((secs * 1e6).round() as u64)
    }

    #[test]
    fn a_rounded_span_starts_rounded_down_and_ends_down_before_24_11_and_up_after() {
        let minute = 60_000_000;
        let down = Resolution {
            micros: minute,
            ends_up: false,
        };
        let up = Resolution {
            ends_up: true,
            ..down
        };
        // Planned at 130.4 s for 5 minutes: 22.05 holds 120..420 s, 24.11 120..480 s.
        let (now, t, walltime) = (s(100.0), s(130.4), 300_000_000);
        assert_eq!(held_span(now, None, t, walltime), (t, s(430.4)));
        assert_eq!(
            held_span(now, Some(down), t, walltime),
            (s(120.0), s(420.0))
        );
        assert_eq!(held_span(now, Some(up), t, walltime), (s(120.0), s(480.0)));
        // An end on a multiple stays there: 24.11 counts from the start's whole second.
        assert_eq!(
            held_span(now, Some(up), s(120.7), walltime),
            (s(120.0), s(420.0))
        );
        // Never before now, and at least one resolution long.
        assert_eq!(
            held_span(s(125.0), Some(up), s(121.0), 10_000_000),
            (s(125.0), s(180.0))
        );
        assert_eq!(
            held_span(s(125.0), Some(down), s(121.0), 10_000_000),
            (s(125.0), s(180.0))
        );
    }
}
