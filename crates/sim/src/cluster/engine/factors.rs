//! The engine's side of a scheduler's job factors
//! ([`JobFactors`](crate::cluster::scheduler::JobFactors)): at each of the model's passes, the
//! waiting jobs listed as it reads them (each user's oldest first, with what each would hold
//! and its limit), the running jobs as it expects them to end, and the factors it writes put
//! back on the jobs, whose queues then go back in order of points. Where the model ranks some
//! partitions only ([`FactorScope`]), it hears of their jobs alone, holding fractions of their
//! nodes.

use super::{Engine, Space};
use crate::cluster::space::{held, Placed};
use crate::cluster::{Partition, SimError};
use fairshare_core::model::partition_property;
use fairshare_core::model::Time;
use fairshare_core::priority::dominant_share;
use fairshare_core::rank::play::{Expected, Waiting};
use fairshare_core::rank::Head;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Which jobs a scheduler's job factors rank and count, and the whole what they hold is a
/// fraction of: every job, on every node, unless the model names partitions.
#[derive(Debug, Default)]
pub(super) struct FactorScope {
    /// By the trace's partition index, whether its jobs are ranked (`None`: every job).
    ranked: Option<Vec<bool>>,
    /// By resource, the whole of the run over the whole of the partitions' nodes (empty: 1).
    scale: Vec<f64>,
}

impl FactorScope {
    /// The scope of a model that ranks `names` (empty: all) among the run's `partitions`, on
    /// `space`.
    pub(super) fn of(names: &[String], partitions: &[Partition], space: &Space) -> FactorScope {
        if names.is_empty() {
            return FactorScope::default();
        }
        let properties: Vec<String> = names.iter().map(|n| partition_property(n)).collect();
        // Where no node declares them, the partitions' nodes are every node: nothing to scale.
        let scale = match properties.iter().any(|p| space.declares(p)) {
            true => (space.extent_of_any(&properties).iter())
                .map(|w| if *w > 0.0 { 1.0 / w } else { 0.0 })
                .collect(),
            false => Vec::new(),
        };
        FactorScope {
            ranked: Some(partitions.iter().map(|p| names.contains(&p.name)).collect()),
            scale,
        }
    }

    /// Whether a job of `partition` is ranked and counted.
    pub(super) fn counts(&self, partition: Option<u32>) -> bool {
        let ranked = |p: u32| self.ranked.as_ref()?.get(p as usize).copied();
        self.ranked.is_none() || partition.and_then(ranked).unwrap_or(false)
    }

    /// `holding` (fractions of the run's whole) as fractions of the partitions' nodes: itself
    /// when every node is theirs.
    pub(super) fn scaled<'h>(&self, holding: &'h [f64]) -> Cow<'h, [f64]> {
        match self.scale.is_empty() {
            true => Cow::Borrowed(holding),
            false => Cow::Owned(
                holding
                    .iter()
                    .zip(&self.scale)
                    .map(|(h, s)| h * s)
                    .collect(),
            ),
        }
    }

    /// What a job placed at `placed` holds, over `resources` resources, as the model counts it.
    pub(super) fn held(&self, placed: &Placed, resources: usize) -> Vec<f64> {
        let holding = held(placed, resources);
        match self.scale.is_empty() {
            true => holding,
            false => self.scaled(&holding).into_owned(),
        }
    }
}

impl Engine {
    /// Every running job the job factors count, as a pass of theirs at `now` expects it to
    /// end: at its planned end.
    fn expected_ends(&self, now: Time) -> Vec<Expected> {
        (self.running.iter().flatten())
            .filter(|job| job.ranked)
            .map(|job| Expected {
                end: job.planned_end.max(now),
                client: job.user,
                holding: (self.factor_scope).held(&job.placed, self.book.holdings(job.user).len()),
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
            let mut order: Vec<usize> = (0..queue.len()).filter(|&i| queue[i].ranked).collect();
            if order.is_empty() {
                continue;
            }
            // Sequence numbers are unique: the order is total.
            order.sort_unstable_by_key(|&i| (queue[i].submit, queue[i].seq));
            let jobs = (order.iter()).map(|&i| {
                let job = &queue[i];
                Waiting {
                    head: Head::new(job.submit, job.seq).with_size(dominant_share(&job.holding)),
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
