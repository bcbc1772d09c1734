//! The loop of a run: arrivals in submit order, finishes, cancellations and wake-ups in time
//! order, a pass whenever the scheduler's [`Timing`](crate::cluster::Timing) says so after
//! each instant's events, and the outcomes told as jobs settle.

use super::window::Opening;
use super::Engine;
use crate::cluster::scheduler::{Arrival, Happened, Standing};
use crate::cluster::{ClusterConfig, JobOutcome, JobState, PolicyResult, RunError, SimError, Stop};
use fairshare_core::model::{Task, Time};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// The replay behind [`run`](crate::cluster::run) and
/// [`run_observed`](crate::cluster::run_observed).
pub(in crate::cluster) fn replay<E>(
    config: &ClusterConfig,
    arrivals: impl Iterator<Item = Result<Task, E>>,
    mut progress: impl FnMut(Time),
    mut on_job: Option<&mut dyn FnMut(JobOutcome)>,
) -> Result<PolicyResult, RunError<E>> {
    let mut engine = Engine::new(config).map_err(RunError::Sim)?;
    engine.observed = on_job.is_some();
    let mut arrivals = arrivals.peekable();
    let mut last_submit = Time::ZERO;
    // Submissions that reach the scheduler later than their submit time, by when they do
    // (then in submit order).
    let mut late: BTreeMap<(Time, u64), Task> = BTreeMap::new();
    let mut held_back: u64 = 0;
    loop {
        let next_late = late.first_key_value().map(|((at, _), _)| *at);
        let next_submit = match arrivals.peek() {
            Some(Ok(a)) => Some(a.submit),
            Some(Err(_)) => {
                return Err(RunError::Input(
                    arrivals
                        .next()
                        .and_then(Result::err)
                        .expect("peeked an error"),
                ))
            }
            None => None,
        };
        let next_arrival = (next_submit.into_iter())
            .chain(next_late)
            .chain(engine.next_pin())
            .min();
        let next_finish = engine.finishes.peek().map(|Reverse((t, _, _))| *t);
        let next_withdrawal = engine.next_withdrawal();
        let next_change = engine.limit_changes.peek().map(|Reverse(t)| *t);
        // An outage that began before the run's first event changes the nodes at it.
        let next_outage = engine.outages.next().map(|t| t.max(engine.now));
        if next_arrival.is_none() && next_finish.is_none() && engine.smallest.least().is_none() {
            // Nothing arrives, runs or waits: a wake-up left is a plan of a job that has
            // started since (or a periodic pass) and would only stretch the run.
            break;
        }
        let next_wakeup = engine.wakeups.peek().map(|Reverse(t)| *t);
        let timing_wakeup = engine.timing.next_wakeup(engine.now, engine.standing());
        let events = next_arrival
            .into_iter()
            .chain(next_finish)
            .chain(next_withdrawal)
            .chain(next_change)
            .chain(next_outage);
        let wakeups = (next_wakeup.into_iter())
            .chain(timing_wakeup)
            .chain(engine.next_opening());
        let Some(t) = events.chain(wakeups).min() else {
            break;
        };
        let mut happened = Happened {
            now: t,
            asked: false,
            at_once: false,
            reserved_start: next_wakeup == Some(t),
            cancelled: next_withdrawal == Some(t),
            in_this_turn: false,
        };
        if let Stop::Horizon(h) = config.stop {
            if t > h {
                break;
            }
        }
        if t < engine.now {
            return Err(RunError::Sim(SimError::OutOfOrder {
                previous: engine.now,
                got: t,
            }));
        }
        engine.at(t).map_err(RunError::Sim)?;
        engine.take_opening_before(t);
        while engine
            .finishes
            .peek()
            .is_some_and(|Reverse((f, _, _))| *f == t)
        {
            // An end asks for a pass, or runs one at once.
            match engine.finish_one() {
                true => happened.at_once = true,
                false => happened.asked = true,
            }
        }
        while let Some(a) = late
            .first_entry()
            .filter(|e| e.key().0 == t)
            .map(|e| e.remove())
        {
            happened.asked = true;
            engine.arrive(a).map_err(RunError::Sim)?;
        }
        while let Some(Ok(a)) = arrivals.next_if(|a| matches!(a, Ok(a) if a.submit == t)) {
            if a.submit < last_submit {
                return Err(RunError::Sim(SimError::OutOfOrder {
                    previous: last_submit,
                    got: a.submit,
                }));
            }
            last_submit = a.submit;
            match engine.opening(&a) {
                Opening::Pinned(start) => {
                    engine.pin(a, start);
                    continue;
                }
                Opening::Held(opens) => {
                    held_back += 1;
                    late.insert((opens, held_back), a);
                    continue;
                }
                Opening::Free => {}
            }
            match engine.timing.arrival(a.submit) {
                // Later than its submission, or it is an arrival now after all.
                Arrival::Late(at) if at > t => {
                    held_back += 1;
                    late.insert((at, held_back), a);
                    continue;
                }
                Arrival::InThisTurn => happened.in_this_turn = true,
                Arrival::Now | Arrival::Late(_) => {}
            }
            happened.asked = true;
            engine.arrive(a).map_err(RunError::Sim)?;
        }
        while engine
            .limit_changes
            .peek()
            .is_some_and(|Reverse(c)| *c <= t)
        {
            // A limit was updated: a pass runs at once.
            engine.limit_changes.pop();
            happened.asked = true;
        }
        if engine.change_nodes(t) {
            // A node's state changed: a pass runs at once.
            happened.asked = true;
        }
        engine.start_pins(t).map_err(RunError::Sim)?;
        engine.withdraw_until(t);
        engine.take_opening(t);
        while engine.wakeups.peek().is_some_and(|Reverse(w)| *w <= t) {
            engine.wakeups.pop();
        }
        if let Some(kind) = engine.timing.pass_at(&happened) {
            if kind.periodic {
                engine.news = false;
            }
            engine.pass(config.scheduler.as_ref(), kind);
        }
        if let Some(fault) = engine.fault.take() {
            return Err(RunError::Sim(fault));
        }
        tell(&mut on_job, &mut engine.settled);
        progress(t);
    }
    let end = match config.stop {
        Stop::Horizon(h) => h.max(engine.now),
        Stop::Drain => engine.now,
    };
    // A submission that reaches the scheduler past the horizon is beyond it.
    for rest in late.into_values().map(Ok).chain(arrivals) {
        let task = rest.map_err(RunError::Input)?;
        engine.recorder.beyond_horizon();
        if let Some(on_job) = on_job.as_mut() {
            let outcome = JobOutcome::arrived(&task, task.runtime, false);
            on_job(JobOutcome {
                state: JobState::BeyondHorizon,
                ..outcome
            });
        }
    }
    let (result, mut settled) = engine.conclude(config, end);
    tell(&mut on_job, &mut settled);
    Ok(result)
}

/// Hands the jobs settled since the last call to `on_job`, in the order they were settled.
fn tell(on_job: &mut Option<&mut dyn FnMut(JobOutcome)>, settled: &mut Vec<JobOutcome>) {
    if let Some(on_job) = on_job.as_mut() {
        settled.drain(..).for_each(on_job);
    }
}

impl Engine {
    /// Where the queue stands, for the timing's own passes.
    fn standing(&self) -> Standing {
        Standing {
            waiting: self.smallest.least().is_some(),
            running: !self.finishes.is_empty(),
            changed: self.news,
        }
    }
}
