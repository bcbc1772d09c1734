//! The loop of a run: arrivals in submit order, finishes, cancellations and wake-ups in time
//! order, a pass after each instant's events, and the outcomes told as jobs settle.

use super::*;

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
    loop {
        let next_arrival = match arrivals.peek() {
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
        let next_finish = engine.finishes.peek().map(|Reverse((t, _, _))| *t);
        let next_withdrawal = engine.next_withdrawal();
        if next_arrival.is_none() && next_finish.is_none() && engine.smallest.least().is_none() {
            // Nothing arrives, runs or waits: a wake-up left is a plan of a job that has
            // started since (or a periodic pass) and would only stretch the run.
            break;
        }
        let next_wakeup = engine.wakeups.peek().map(|Reverse(t)| *t);
        let next_periodic = engine.next_periodic();
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
        let asks = [next_arrival, next_finish, next_wakeup].contains(&Some(t)) || cancelled;
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
        while engine
            .finishes
            .peek()
            .is_some_and(|Reverse((f, _, _))| *f == t)
        {
            engine.finish_one();
        }
        while let Some(Ok(a)) = arrivals.next_if(|a| matches!(a, Ok(a) if a.submit == t)) {
            if a.submit < last_submit {
                return Err(RunError::Sim(SimError::OutOfOrder {
                    previous: last_submit,
                    got: a.submit,
                }));
            }
            last_submit = a.submit;
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
        if engine.passes_now(asks, periodic) {
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
    for rest in arrivals {
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
