//! A job's life in the engine: its arrival (checked, priced and queued), its start on the
//! nodes a pass chose, and its end.

use super::{free_until, on_node, Engine, Pending, Running};
use crate::cluster::overrun::Overrun;
use crate::cluster::space::{held, Placed};
use crate::cluster::{JobOutcome, JobRecord, JobState, SimError, Task};
use fairshare_core::priority::dominant_share;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::slice;

impl Engine {
    /// Queues an arrival, or settles it at once when it can never fit; one submitted before
    /// the window opened is scheduled but left out of every count and wait, as the results
    /// count the jobs eligible inside the window.
    pub(super) fn arrive(&mut self, a: Task) -> Result<(), SimError> {
        let before_the_window = self.opens.is_some_and(|opens| a.submit < opens);
        self.queue(a, before_the_window)
    }

    /// Queues `a`, or settles it at once when it can never fit; a `pinned` job (one the log
    /// started before the window opened or records what the replay does not model, or one
    /// submitted before the window opened) is left out of every count.
    pub(super) fn queue(&mut self, a: Task, pinned: bool) -> Result<(), SimError> {
        self.news = true;
        let u = a.user as usize;
        if u >= self.queues.len() {
            return Err(SimError::BadArrival {
                user: a.user,
                problem: "no such user".into(),
            });
        }
        self.recorder.event();
        if !pinned {
            self.recorder.submitted(a.user);
        }
        let bad = |problem| SimError::BadArrival {
            user: a.user,
            problem,
        };
        let demand = self.space.normalise(&a.demand).map_err(bad)?;
        let size = dominant_share(&demand);
        let cpus = a.demand.first().copied().unwrap_or(0.0);
        let partition_rule = a.partition.and_then(|p| self.partitions.get(p as usize));
        let extent = partition_rule.map_or(&self.cluster_extent, |r| &r.extent);
        let tres_points = (self.job_order).map_or(0.0, |o| o.tres_points(&demand, a.nodes, extent));
        let properties = match partition_rule.and_then(|r| r.property.as_ref()) {
            Some(property) if a.properties.is_empty() => Cow::Borrowed(slice::from_ref(property)),
            Some(property) => {
                Cow::Owned([a.properties.as_slice(), slice::from_ref(property)].concat())
            }
            None => Cow::Borrowed(a.properties.as_slice()),
        };
        let exclusive = a.exclusive || partition_rule.is_some_and(|r| r.exclusive);
        // What it would hold, for the job factors' passes when they rank it.
        let ranked = self.job_factors.is_some() && self.factor_scope.counts(a.partition);
        let holding = match ranked {
            true => self.factor_scope.scaled(&demand).into_owned(),
            false => Vec::new(),
        };
        let (request, unknown) =
            (self.space).request(cpus, demand, a.nodes, exclusive, &properties);
        let partition = a
            .partition
            .filter(|_| partition_rule.is_some_and(|r| r.declared));
        self.unknown_properties += u64::from(unknown);
        let rule = self.queue_rule(a.queue);
        let within_queue = rule.processors.is_none_or(|limit| cpus <= limit + 1e-9);
        if !(within_queue && self.space.could_ever_fit(&request)) {
            if !pinned {
                self.recorder.never_fits(a.user);
            }
            if self.observed {
                let outcome = JobOutcome::arrived(&a, a.runtime, false);
                self.settled.push(JobOutcome {
                    state: JobState::NeverFits,
                    ..outcome
                });
            }
            return Ok(());
        }
        let rate = self.meter.as_mut().map_or(0.0, |m| m.price(&a)) * rule.cost;
        let kill_grace = self.timing.kill_grace_us();
        // A request of 0 is no request (`--time=0`, and logs that write 0 for unknown).
        let (runtime, walltime, killed) = match (a.walltime.filter(|w| *w > 0), self.overrun) {
            (Some(limit), Overrun::Kill)
                if kill_grace.is_some_and(|g| limit.saturating_add(g) < a.runtime) =>
            {
                self.recorder.killed_at_walltime();
                let killed_at = limit.saturating_add(kill_grace.unwrap_or(0));
                (killed_at, killed_at, true)
            }
            (limit, _) => (a.runtime, limit.unwrap_or(a.runtime).max(a.runtime), false),
        };
        // A job cancelled while it waited runs, if started, until its cancellation or its
        // limit; with no limit, the longest it could is from its submission to its cancellation.
        let (runtime, walltime) = match a.cancelled {
            Some(at) => {
                let until = at.as_micros().saturating_sub(a.submit.as_micros());
                let limit = a.walltime.filter(|w| *w > 0).unwrap_or(until);
                (limit, limit)
            }
            None => (runtime, walltime),
        };
        let walltime = match a.walltime.filter(|w| *w > 0) {
            Some(limit) if self.plans_with_limits => limit,
            _ => walltime,
        };
        let outcome = (self.observed).then(|| Box::new(JobOutcome::arrived(&a, runtime, killed)));
        if !pinned {
            self.recorder.queued(a.user);
        }
        self.seq += 1;
        if let Some(at) = a.cancelled {
            self.withdrawals.push(Reverse((at, self.seq, a.user)));
            self.cancellable.insert(self.seq);
        }
        self.unreserved += 1;
        self.smallest.add(&request);
        let (tier, factor) = self.partition_setting(a.partition);
        let priority = rule.priority.saturating_add(tier);
        let qos_factor = a.qos.and_then(|q| self.qos_factors.get(q as usize));
        let assoc_factor = self.assoc_factors.get(u).copied().unwrap_or(0.0);
        let factors = (factor, qos_factor.copied().unwrap_or(0.0), assoc_factor);
        let fixed_points = (self.job_order).map_or(0.0, |o| {
            o.fixed_points(cpus, a.nodes, factors) + tres_points
        });
        let factor = match self.job_factors.as_ref() {
            Some(model) => model.submit_factor(a.user).map_err(SimError::Rank)?,
            None => 0,
        };
        let limits = self.limits.of(a.user, a.qos, a.partition);
        let points =
            (self.job_order).map_or(0.0, |o| o.points_of(fixed_points, a.submit)) + factor as f64;
        let at = self.queue_position(u, priority, points);
        self.queues[u].insert(
            at,
            Pending {
                id: a.id,
                seq: self.seq,
                submit: a.submit,
                runtime,
                walltime,
                request,
                size,
                fixed_points,
                factor,
                holding,
                ranked,
                queue: a.queue,
                processors: cpus,
                priority,
                partition,
                rate,
                reservation: None,
                first_reserved: None,
                cancelled: a.cancelled,
                outcome,
                pinned,
                raw: match limits.is_empty() {
                    true => Vec::new(),
                    false => a.demand.clone(),
                },
                limits,
                held_back: false,
            },
        );
        if at == 0 {
            self.rerank(a.user);
        }
        Ok(())
    }

    /// Starts the job at `index` of `user`'s queue on `placed` now.
    pub(super) fn launch(&mut self, user: u32, index: usize, placed: Placed) {
        self.news = true;
        self.forget_found();
        let Some(job) = self.queues[user as usize].remove(index) else {
            return;
        };
        self.unreserved -= 1;
        self.smallest.remove(&job.request);
        let speed = self.space.speed(&placed);
        let until_cancelled = (job.cancelled).map(|at| {
            self.started_before_cancellation(job.seq);
            at.as_micros().saturating_sub(self.now.as_micros())
        });
        let runtime = on_node(job.runtime, speed);
        let run = runtime.min(until_cancelled.unwrap_or(u64::MAX));
        // Ended by a signal: cancelled before its end, or run past its limit.
        let killed = run < runtime || run > on_node(job.walltime, speed);
        let release = (self.timing).end_release(killed, self.now.plus_micros(run));
        let wait = (self.now.as_micros() - job.submit.as_micros()) as f64 / 1e6;
        if !job.pinned {
            self.recorder.started(user, wait, run as f64 / 1e6);
        }
        let holding = held(&placed, self.book.holdings(user).len());
        let rate = self.meter.as_ref().map(|m| m.rate_on(job.rate, &placed));
        if let Err(e) = self.book.take(user, &holding, rate) {
            self.fault.get_or_insert(SimError::Rank(e));
        }
        if let Some(model) = (self.job_factors.as_mut()).filter(|_| job.ranked) {
            let holding = self.factor_scope.scaled(&holding);
            if let Err(e) = model.book_mut().started(user, &holding, rate) {
                self.fault.get_or_insert(SimError::Rank(e));
            }
        }
        self.recorder
            .allocation(user, self.now, self.book.holdings(user));
        if let Some(held) = job.queue.and_then(|q| self.queue_held.get_mut(q as usize)) {
            *held += job.processors;
        }
        self.limits.count(&job.limits, user, &job.raw, 1.0);
        self.space.take(&placed);
        let end = self.now.plus_micros(run);
        let planned = self.now.plus_micros(on_node(job.walltime, speed));
        let planned_end = if self.plans_with_limits {
            planned
        } else {
            planned.max(end)
        };
        self.space.expect(&placed, self.now, planned_end, 1.0);
        let slot = self.free_slots.pop().unwrap_or(self.running.len());
        if slot == self.running.len() {
            self.running.push(None);
        }
        if planned_end < end {
            self.overdue.push((slot, job.seq));
        }
        let released = end.plus_micros(release.after_us);
        self.finishes.push(Reverse((released, job.seq, slot)));
        if !job.limits.is_empty() {
            self.limit_ends.push(Reverse((end, job.seq, slot)));
        }
        let recorded = self.record_jobs.filter(|w| w.overlaps(self.now, end));
        let record = recorded.map(|_| JobRecord {
            id: job.id,
            user,
            submit: job.submit,
            start: self.now,
            end,
            placed: placed.clone(),
            first_reserved: job.first_reserved,
        });
        let outcome = job.outcome.map(|mut outcome| {
            outcome.start = Some(self.now);
            outcome.waited_until = self.now;
            outcome.runtime = run;
            outcome.machines = placed.iter().map(|(node, _)| *node).collect();
            let totals = self.totals.iter();
            outcome.allocated = holding.iter().zip(totals).map(|(h, t)| h * t).collect();
            outcome
        });
        self.running[slot] = Some(Running {
            user,
            queue: job.queue,
            ranked: job.ranked,
            processors: job.processors,
            placed,
            planned_end,
            seq: job.seq,
            started: self.now,
            ends: end,
            passes_at_once: release.passes_at_once,
            rate,
            record,
            outcome,
            pinned: job.pinned,
            limits: job.limits,
            raw: job.raw,
        });
    }

    /// Ends the next job of the finish queue (its nodes released now, its run charged to its
    /// end); says whether its end runs a pass at once.
    pub(super) fn finish_one(&mut self) -> bool {
        self.news = true;
        self.forget_found();
        let Some(Reverse((_, _, slot))) = self.finishes.pop() else {
            return false;
        };
        let Some(job) = self.running[slot].take() else {
            return false;
        };
        self.free_slots.push(slot);
        self.recorder.event();
        if !job.pinned {
            self.recorder.completed(job.user);
        }
        if let Some(held) = job.queue.and_then(|q| self.queue_held.get_mut(q as usize)) {
            *held = (*held - job.processors).max(0.0);
        }
        self.limits.count(&job.limits, job.user, &job.raw, -1.0);
        self.space.release(&job.placed);
        if job.planned_end > self.now {
            self.space
                .expect(&job.placed, self.now, job.planned_end, -1.0);
            for &(node, _) in &job.placed {
                free_until(&mut self.freed, node, job.planned_end);
            }
        }
        self.recorder.used(self.space.used());
        let holding = held(&job.placed, self.book.holdings(job.user).len());
        let ran_s = (job.ends.as_micros() - job.started.as_micros()) as f64 / 1e6;
        if let Err(e) = (self.book).give_back(job.user, &holding, job.rate, ran_s) {
            self.fault.get_or_insert(SimError::Rank(e));
        }
        if let Some(model) = (self.job_factors.as_mut()).filter(|_| job.ranked) {
            let holding = self.factor_scope.scaled(&holding);
            let finished = model
                .book_mut()
                .finished(job.user, &holding, job.rate, ran_s);
            if let Err(e) = finished {
                self.fault.get_or_insert(SimError::Rank(e));
            }
        }
        self.recorder
            .allocation(job.user, self.now, self.book.holdings(job.user));
        self.jobs.extend(job.record);
        if let Some(mut outcome) = job.outcome {
            outcome.finish = Some(job.ends);
            outcome.state = JobState::Finished;
            self.settled.push(*outcome);
        }
        if let (Some(meter), Some(rate)) = (self.meter.as_mut(), job.rate) {
            meter.charge(job.user, rate, ran_s);
        }
        self.rerank(job.user);
        job.passes_at_once
    }

    /// Plans each running job past its planned end to end the next second, as a scheduler that
    /// plans with time limits does ([`Planning::with_limits`]); the jobs that ended are
    /// dropped.
    ///
    /// [`Planning::with_limits`]: crate::cluster::scheduler::Planning::with_limits
    pub(super) fn plan_overdue(&mut self) {
        let (now, running, space) = (self.now, &mut self.running, &mut self.space);
        let next = now.plus_micros(1_000_000);
        self.overdue
            .retain(|&(slot, seq)| match &mut running[slot] {
                Some(job) if job.seq == seq => {
                    if job.planned_end <= now {
                        space.expect(&job.placed, now, next, 1.0);
                        job.planned_end = next;
                    }
                    true
                }
                _ => false,
            });
    }
}
