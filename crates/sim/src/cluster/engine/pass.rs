//! The engine as a scheduler's [`SchedulingPass`]: the waiting users in the policy's order, tier by
//! tier, and the starts, reservations and skips a scheduler asks for.

use super::{free_until, Engine};
use crate::cluster::scheduler::{PassKind, Reservations, Scheduler, SchedulingPass};
use std::cmp::Reverse;

impl Engine {
    /// One scheduling pass of `kind`; time stands still during it, so use is recorded after
    /// it.
    pub(super) fn pass(&mut self, scheduler: &dyn Scheduler, kind: PassKind) {
        self.kind = kind;
        self.plan_overdue();
        self.forget_found();
        if self.reservations != Reservations::None {
            self.space.forget_before(self.now);
            let freed = std::mem::take(&mut self.freed);
            if self.reservations == Reservations::UntilStart && !freed.is_empty() {
                self.compress(freed);
            }
        }
        if let Some(closed) = self.outages.closed() {
            self.space.fence_closed(closed);
        }
        if self.tiered {
            if let Some(top) = self.next_tier(None) {
                self.enter_tier(top);
            }
        }
        scheduler.pass(self);
        self.space.unfence();
        if self.reservations == Reservations::ForThePass {
            self.drop_reservations();
        }
        self.tier = None;
        for user in std::mem::take(&mut self.moved) {
            self.cursor[user as usize] = 0;
            self.rerank(user);
        }
        self.book.ranker_mut().restore();
        self.recorder.used(self.space.used());
    }

    /// The highest priority of any waiting job, below `below` when given.
    fn next_tier(&self, below: Option<i32>) -> Option<i32> {
        let priorities = self.queues.iter().flatten().map(|j| j.priority);
        priorities.filter(|p| below.is_none_or(|b| *p < b)).max()
    }

    /// Starts considering the jobs of priority `tier`: every user's candidate becomes its
    /// oldest job of that priority, and users without one are set aside.
    fn enter_tier(&mut self, tier: i32) {
        self.book.ranker_mut().restore();
        self.tier = Some(tier);
        for user in 0..self.queues.len() as u32 {
            let u = user as usize;
            if self.queues[u].is_empty() {
                continue;
            }
            let first = self.queues[u].iter().position(|j| j.priority == tier);
            self.cursor[u] = first.unwrap_or(0);
            if self.cursor[u] != 0 {
                self.moved.push(user);
            }
            match first {
                Some(_) => self.rerank(user),
                None => self.set_aside(user),
            }
        }
    }

    /// Re-ranks a user whose candidate at `index` just started, or sets the user aside when
    /// no job is left for it in this pass (or tier) but it still waits (it is re-ranked when
    /// the pass ends).
    fn after_start(&mut self, user: u32, index: usize) {
        let waits = self.queues[user as usize].len() > self.cursor[user as usize];
        if self.candidate(user).is_none() && (index > 0 || waits) {
            self.set_aside(user);
            if index == 0 {
                // Moved past its tier with its cursor where it was (a moved cursor is listed).
                self.moved.push(user);
            }
        } else {
            self.rerank(user);
        }
    }
}

impl SchedulingPass for Engine {
    fn first(&mut self) -> Option<u32> {
        loop {
            if let Some(user) = self.book.ranker().first() {
                return Some(user);
            }
            let lower = self.next_tier(Some(self.tier?))?;
            self.enter_tier(lower);
        }
    }

    fn start(&mut self, user: u32) -> bool {
        let (u, index) = (user as usize, self.cursor[user as usize]);
        let Some(job) = self.queues[u].get(index) else {
            return false;
        };
        let within_queue = self.queue_allows(job);
        if !within_queue || self.held_by_limit(user, index) {
            // Its queue is full, or a limit holds it: it waits, without a reservation, until
            // a job of its group ends, and the pass goes on past it. The room it leaves lets
            // reservations move up, at once.
            let job = &self.queues[u][index];
            let walltime = job.walltime;
            if let Some((t, placed)) = self.unreserve(user, index) {
                for &(node, _) in &placed {
                    free_until(&mut self.freed, node, t.plus_micros(walltime));
                }
                self.wakeups.push(Reverse(self.now));
            }
            self.pass_over(user);
            return true;
        }
        let job = &self.queues[u][index];
        if self.reservations == Reservations::UntilStart
            && job.reservation.as_ref().is_some_and(|(t, _)| *t > self.now)
        {
            // Reservations are compressed before the pass: one that could start now would.
            return false;
        }
        let walltime = job.walltime;
        let placed = if self.reservations == Reservations::None {
            self.space.fit_now(&self.queues[u][index].request)
        } else {
            let own = self.unreserve(user, index);
            let own_now = own.as_ref().filter(|(t, placed)| {
                *t <= self.now && !self.whole_nodes && !self.space.fences_any(placed)
            });
            if let Some((_, placed)) = own_now {
                // Its reserved nodes are free for it now (and open: a node closed since it
                // was planned is not): starting elsewhere would free room that no reservation
                // was moved into.
                let placed = placed.clone();
                self.launch(user, index, placed);
                self.after_start(user, index);
                return true;
            }
            let request = &self.queues[u][index].request;
            let placed = self.space.fit_during(request, self.now, walltime);
            if placed.is_none() {
                if let Some(own) = own {
                    self.hold(user, index, own, true);
                }
            }
            placed
        };
        let Some(placed) = placed else {
            return false;
        };
        self.launch(user, index, placed);
        self.after_start(user, index);
        true
    }

    fn reserve(&mut self, user: u32) -> bool {
        self.reserve_before(user, None)
    }

    fn reserve_within(&mut self, user: u32, window_s: u64) -> bool {
        let before = self.now.plus_micros(window_s.saturating_mul(1_000_000));
        self.reserve_before(user, Some(before))
    }

    fn pass_over(&mut self, user: u32) {
        let u = user as usize;
        if self.cursor[u] == 0 {
            self.moved.push(user);
        }
        self.cursor[u] += 1;
        if self.candidate(user).is_some() {
            self.rerank(user);
        } else {
            self.set_aside(user);
        }
    }

    fn set_aside(&mut self, user: u32) {
        self.book.ranker_mut().set_aside(user);
    }

    fn partition(&self, user: u32) -> Option<u32> {
        self.candidate(user).and_then(|job| job.partition)
    }

    fn fence(&mut self, user: u32) {
        let rule = self
            .partition(user)
            .and_then(|p| self.partitions.get(p as usize));
        if let Some(property) = rule.and_then(|rule| rule.property.as_ref()) {
            self.space.fence(property);
        }
    }

    fn full(&self) -> bool {
        self.smallest
            .least()
            .is_none_or(|least| self.space.too_full_for(least))
    }

    fn unreserved(&self) -> u64 {
        self.unreserved
    }

    fn kind(&self) -> PassKind {
        self.kind
    }
}
