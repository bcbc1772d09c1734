//! The engine's side of a scheduler's job factors
//! ([`JobFactors`](crate::cluster::scheduler::JobFactors)): at each of the model's passes, the
//! waiting jobs listed as it reads them (each user's oldest first, with what each would hold
//! and its limit), the running jobs as it expects them to end, and the factors it writes put
//! back on the jobs, whose queues then go back in order of points.

use super::Engine;
use crate::cluster::space::held;
use crate::cluster::SimError;
use fairshare_core::model::Time;
use fairshare_core::rank::play::{Expected, Waiting};
use fairshare_core::rank::Head;
use std::borrow::Cow;
use std::collections::BTreeMap;

impl Engine {
    /// Every running job as a pass of the job factors at `now` expects it to end: at its
    /// planned end.
    fn expected_ends(&self, now: Time) -> Vec<Expected> {
        (self.running.iter().flatten())
            .map(|job| Expected {
                end: job.planned_end.max(now),
                client: job.user,
                holding: held(&job.placed, self.book.holdings(job.user).len()),
                rate: job.rate,
                start: job.started,
            })
            .collect()
    }

    /// At each pass of the job factors: every waiting job's factor written anew, and each
    /// user whose factors moved has its queue put back in order of points and its next job
    /// told to the ranker.
    pub(super) fn job_factors_pass(&mut self, now: Time) -> Result<(), SimError> {
        let Some(model) = self.job_factors.as_mut() else {
            return Ok(());
        };
        if !model.due(now) {
            return Ok(());
        }
        // Each user's jobs oldest first, by their place in the queue, each with its limit
        // where the passes expect jobs to end at their limits.
        let limits = model.ends_at_limits();
        let users = self.queues.len();
        let mut places: Vec<Vec<usize>> = vec![Vec::new(); users];
        let mut waiting: BTreeMap<u32, Vec<Waiting>> = BTreeMap::new();
        let mut held_factors: Vec<Vec<i64>> = vec![Vec::new(); users];
        for (user, queue) in self
            .queues
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.is_empty())
        {
            let mut order: Vec<usize> = (0..queue.len()).collect();
            // Sequence numbers are unique: the order is total.
            order.sort_unstable_by_key(|&i| (queue[i].submit, queue[i].seq));
            let jobs = (order.iter()).map(|&i| {
                let job = &queue[i];
                Waiting {
                    head: Head::new(job.submit, job.seq).with_size(job.size),
                    holding: Cow::Borrowed(&job.holding),
                    rate: self.meter.as_ref().map(|_| job.rate),
                    limit: limits.then_some(job.walltime),
                }
            });
            waiting.insert(user as u32, jobs.collect());
            held_factors[user] = order.iter().map(|&i| queue[i].factor).collect();
            places[user] = order;
        }
        let running = match limits {
            true => self.expected_ends(now),
            false => Vec::new(),
        };
        let model = self.job_factors.as_mut().expect("checked above");
        (model.pass(now, &waiting, running, &mut held_factors)).map_err(SimError::Rank)?;
        drop(waiting);
        for (user, (places, factors)) in places.iter().zip(held_factors).enumerate() {
            let queue = &mut self.queues[user];
            let mut moved = false;
            for (&i, factor) in places.iter().zip(factors) {
                moved |= std::mem::replace(&mut queue[i].factor, factor) != factor;
            }
            // Queues are kept in order of points, which only the factors moved.
            if moved {
                self.reorder_queue(user as u32);
                self.rerank(user as u32);
            }
        }
        Ok(())
    }
}
