//! The engine as a scheduler's [`Pass`]: the waiting users in the policy's order, tier by
//! tier, and the starts, reservations and skips a scheduler asks for.

use super::*;

impl Pass for Engine {
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
        if !self.queue_allows(job) {
            // Its queue is full: it waits, without a reservation, until a job of its queue
            // ends, and the pass goes on past it. The room it leaves lets reservations move
            // up, at once.
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
            let own_now = own
                .as_ref()
                .filter(|(t, _)| *t <= self.now && !self.whole_nodes);
            if let Some((_, placed)) = own_now {
                // Its reserved nodes are free for it now: starting elsewhere would free room
                // that no reservation was moved into.
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

    fn periodic(&self) -> bool {
        self.period.as_ref().is_some_and(|p| p.falls_on(self.now))
    }

    fn whole_queue(&self) -> bool {
        self.whole_queue_now
    }
}

/// The timer of the passes down the whole queue ([`WholeQueuePasses`]).
#[derive(Debug, Clone)]
pub(super) struct WholeQueueTimer {
    every_s: u64,
    /// When the timer started afresh, in order.
    restarts: Vec<Time>,
    /// Its next pass.
    next: Option<Time>,
}

impl WholeQueueTimer {
    /// The timer of `passes`, its first pass not yet set.
    pub(super) fn new(passes: WholeQueuePasses<'_>) -> WholeQueueTimer {
        WholeQueueTimer {
            every_s: passes.every_s.max(1),
            restarts: passes.timer_starts.to_vec(),
            next: None,
        }
    }
}

impl Engine {
    /// Whether this instant runs a pass, `asks` saying whether an event asked for one and
    /// `periodic` whether the scheduler's cycle falls now. Under a scheduler that spaces the
    /// passes events ask for, such a pass runs at the loop's first turn after the event at
    /// which the spacing has passed since the last: the next whole second (or now,
    /// `in_this_turn`, for a submission that came before the loop's turn in its second), or,
    /// where a log shows the turns, the first at or after the event, whose time the log gave
    /// to the millisecond. Until then a wake-up is set (a periodic pass runs now whatever was
    /// asked, and what was asked waits for the next turn).
    pub(super) fn passes_now(&mut self, asks: bool, in_this_turn: bool, periodic: bool) -> bool {
        let Some(spacing_s) = self.event_spacing_s else {
            return asks || periodic;
        };
        let woken = self.asked.woken_at == Some(self.now);
        self.asked.pending |= asks;
        if !self.asked.pending {
            return periodic;
        }
        let next_turn = self.turn_at_or_after(self.now.plus_micros(1));
        let earliest = if in_this_turn || self.turns.is_some() {
            self.turn_at_or_after(self.now)
        } else {
            next_turn
        };
        let due = match (woken, self.asked.last) {
            (true, _) => self.now,
            (false, Some(last)) => self.first_turn_spaced(last, spacing_s).max(earliest),
            (false, None) => earliest,
        };
        if due <= self.now && !periodic {
            self.asked = Asked {
                last: Some(self.now),
                ..Asked::default()
            };
            return true;
        }
        let due = due.max(next_turn);
        if self.asked.woken_at.is_none_or(|w| w <= self.now) {
            self.asked.woken_at = Some(due);
            self.wakeups.push(Reverse(due));
        }
        periodic
    }

    /// Sets the first pass down the whole queue, from the timer's first start.
    pub(super) fn start_whole_queue_timer(&mut self) {
        let first = self
            .whole_queue
            .as_ref()
            .and_then(|t| t.restarts.first().copied());
        let next = first.and_then(|start| self.next_whole_queue(start.whole_secs(), start));
        if let Some(timer) = &mut self.whole_queue {
            timer.next = next;
        }
    }

    /// Whether a pass down the whole queue falls now: the timer's pass, which the passes
    /// events ask for are spaced from and which serves what they asked. Those it passed
    /// while no job waited ran too, and count.
    pub(super) fn whole_queue_due(&mut self) -> bool {
        loop {
            let Some(next) = self.whole_queue.as_ref().and_then(|t| t.next) else {
                return false;
            };
            if next > self.now {
                return false;
            }
            let second = self.loop_turns().second_of(next);
            let after = self.next_whole_queue(second, next);
            if let Some(timer) = &mut self.whole_queue {
                timer.next = after;
            }
            self.asked = Asked {
                last: Some(next),
                ..Asked::default()
            };
            if next == self.now {
                return true;
            }
        }
    }

    /// The next pass down the whole queue once the loop's clock read `second` at `from`:
    /// the first turn `every_s` seconds on, unless the timer restarts before it.
    fn next_whole_queue(&self, mut second: u64, mut from: Time) -> Option<Time> {
        let timer = self.whole_queue.as_ref()?;
        let turns = self.loop_turns();
        loop {
            let next = turns.first_turn_in(second + timer.every_s);
            match timer.restarts.iter().find(|&&s| s > from && s < next) {
                Some(&restart) => (second, from) = (restart.whole_secs(), restart),
                None => return Some(next),
            }
        }
    }

    /// When the next pass down the whole queue falls, while jobs wait and some run.
    pub(super) fn next_whole_queue_pass(&self) -> Option<Time> {
        let waiting = self.smallest.least().is_some() && !self.finishes.is_empty();
        self.whole_queue
            .as_ref()
            .and_then(|t| t.next)
            .filter(|_| waiting)
    }

    /// The loop's first turn at or after `t`: from the log's turns, else the whole seconds.
    fn turn_at_or_after(&self, t: Time) -> Time {
        self.loop_turns().at_or_after(t)
    }

    /// The loop's first turn `spacing_s` seconds after its turn `last`, counted in the
    /// whole seconds its clock read at the two (`slurmctld`'s `difftime` of two `time_t`).
    fn first_turn_spaced(&self, last: Time, spacing_s: u64) -> Time {
        let turns = self.loop_turns();
        turns.first_turn_in(turns.second_of(last) + spacing_s)
    }

    /// The background loop's turns: the log's, else the whole seconds.
    fn loop_turns(&self) -> Cow<'_, LoopTurns> {
        match &self.turns {
            Some(turns) => Cow::Borrowed(turns),
            None => Cow::Owned(LoopTurns::default()),
        }
    }

    /// [`Pass::reserve`], the start found before `before` when given.
    fn reserve_before(&mut self, user: u32, before: Option<Time>) -> bool {
        let index = self.cursor[user as usize];
        let Some(job) = self.candidate(user) else {
            return false;
        };
        if job.reservation.is_some() {
            return true;
        }
        if !self.queue_allows(job) {
            return false;
        }
        if self.will_run {
            return self.plan_by_will_run(user, index, before);
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
}
