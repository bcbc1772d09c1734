//! The loop of a run: arrivals in submit order, finishes, cancellations and wake-ups in time
//! order, a pass after each instant's events, and the outcomes told as jobs settle.
//!
//! Under a scheduler that spaces the passes events ask for (Slurm's background loop, which
//! runs once a second at its own fraction of it), a log of whole seconds cannot say whether a
//! submission came before or after the loop's turn in its second; the loop's fraction creeps
//! through the whole second over a run. By default a submission is served at the next second,
//! or by a pass already due in its own. With turns drawn
//! ([`Scheduler::drawn_turns`]), each second's submissions came before the turn or after it
//! as a hash of the second and the seed says (half the seconds each way): before, the loop
//! may serve them in their own second; after, they arrive half a second late, unseen by a
//! pass of their second, and ask for the next. Replays with several seeds show how far what
//! the log cannot tell moves a prediction.

use super::*;
use std::collections::VecDeque;

/// How late a submission that came after the loop's turn in its second arrives.
const AFTER_THE_TURN_US: u64 = 500_000;

/// Whether the submissions of the second holding `t` came before the background loop's turn
/// in that second, under `seed`: a bit of a hash of the two (SplitMix64's finaliser).
fn before_the_turn(t: Time, seed: u64) -> bool {
    let second = t.as_micros() / 1_000_000;
    let mut z =
        (second ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & 1 == 1
}

/// The replay behind [`run`] and [`run_observed`].
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
    let turns = (config.scheduler.event_pass_spacing_s()).and(config.scheduler.drawn_turns());
    // Submissions that came after the loop's turn in their second, in submit order.
    let mut late: VecDeque<Task> = VecDeque::new();
    loop {
        let next_late = late
            .front()
            .map(|a| a.submit.plus_micros(AFTER_THE_TURN_US));
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
        let next_arrival = next_submit.into_iter().chain(next_late).min();
        let next_finish = engine.finishes.peek().map(|Reverse((t, _, _))| *t);
        let next_withdrawal = engine.next_withdrawal();
        if next_arrival.is_none() && next_finish.is_none() && engine.smallest.least().is_none() {
            // Nothing arrives, runs or waits: a wake-up left is a plan of a job that has
            // started since (or a periodic pass) and would only stretch the run.
            break;
        }
        let next_wakeup = engine.wakeups.peek().map(|Reverse(t)| *t);
        let next_periodic = engine
            .next_periodic()
            .into_iter()
            .chain(engine.next_whole_queue_pass());
        let events = next_arrival
            .into_iter()
            .chain(next_finish)
            .chain(next_withdrawal);
        let wakeups = next_wakeup.into_iter().chain(next_periodic);
        let Some(t) = events.chain(wakeups).min() else {
            break;
        };
        // What asks for a pass now: arrivals, ends, wake-ups, a cancellation if the scheduler
        // runs on them; a periodic pass is due of itself.
        let cancelled = next_withdrawal == Some(t) && config.scheduler.passes_on_cancellation();
        // Under spaced passes a wake-up asks for nothing: the one set for an asked pass is
        // its turn, and Slurm runs no pass where a plan of its backfill begins.
        let woken = next_wakeup == Some(t) && engine.event_spacing_s.is_none();
        let mut asks = woken || cancelled;
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
        let mut at_once = false;
        while engine
            .finishes
            .peek()
            .is_some_and(|Reverse((f, _, _))| *f == t)
        {
            // An end asks for a pass, or runs one at once.
            match engine.finish_one() {
                true => at_once = true,
                false => asks = true,
            }
        }
        while let Some(a) = late.pop_front_if(|a| a.submit.plus_micros(AFTER_THE_TURN_US) == t) {
            asks = true;
            engine.arrive(a).map_err(RunError::Sim)?;
        }
        // Whether a submission came before the loop's turn in this second, which may serve it.
        let mut in_this_turn = false;
        while let Some(Ok(a)) = arrivals.next_if(|a| matches!(a, Ok(a) if a.submit == t)) {
            if a.submit < last_submit {
                return Err(RunError::Sim(SimError::OutOfOrder {
                    previous: last_submit,
                    got: a.submit,
                }));
            }
            last_submit = a.submit;
            if turns.is_some_and(|seed| !before_the_turn(a.submit, seed)) {
                late.push_back(a);
                continue;
            }
            asks = true;
            in_this_turn |= turns.is_some();
            engine.arrive(a).map_err(RunError::Sim)?;
        }
        engine.withdraw_until(t);
        while engine.wakeups.peek().is_some_and(|Reverse(w)| *w <= t) {
            engine.wakeups.pop();
        }
        let periodic = engine.periodic();
        if periodic {
            engine.news = false;
        }
        let whole_queue = engine.whole_queue_due();
        asks &= !whole_queue;
        if engine.passes_now(asks, in_this_turn, periodic) || at_once || whole_queue {
            engine.whole_queue_now = whole_queue;
            engine.pass(config.scheduler.as_ref());
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
    // A submission that came after the loop's turn and arrives past the horizon is beyond it.
    for rest in late.into_iter().map(Ok).chain(arrivals) {
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
