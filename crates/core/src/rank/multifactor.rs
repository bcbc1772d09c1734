//! A policy's order of users turned into Slurm's order of jobs. Under `priority/multifactor`
//! a job's priority is its user's fairshare factor times a weight, plus the job's own terms
//! (age, size, partition), and a site factor a policy writes in the fairshare factor's place;
//! Slurm recomputes it for every pending job each `PriorityCalcPeriod` and keeps it in
//! between. [`MultifactorRanker`] orders the waiting users by the priority of their next job,
//! whose own points (the site factor among them) the scheduler gives in [`Head::points`] (see
//! [`crate::priority::multifactor`]): with Slurm's own fairshare it wraps the policy's ranker
//! and reads every user's factor at each recomputation; with a policy that reaches Slurm as
//! site factors, the factors are the jobs' own, which a model of the adapter writes from the
//! policy's order of starts ([`super::play`], [`super::factors`]).

use super::{check_holdings, Head, RankError, Ranker};
use crate::model::Time;
use crate::priority::multifactor::JobPriority;
use crate::priority::PriorityKey;
use crate::rank::livetree::tournament::{lower_key, Tournament};
use crate::rank::livetree::LiveTreeCounters;
use std::cmp::Reverse;

/// What orders a waiting user: its next job's priority (highest first), then that job's
/// arrival and sequence number.
type Rank = (Reverse<PriorityKey>, Time, u64, u32);

/// Users ordered by the multifactor priority of their next job.
pub struct MultifactorRanker {
    /// The policy whose factors are read at each recomputation (Slurm's fairshare factor; 0
    /// for a policy that computes none); `None` when every job carries its own factor in its
    /// points (the site factors an adapter writes) and users are ordered by their next job's
    /// points alone.
    inner: Option<Box<dyn Ranker>>,
    priority: JobPriority,
    /// The weight of the policy's factor.
    weight: f64,
    /// Where recomputations fall: this many seconds after each multiple of the period.
    offset_s: f64,
    /// The recomputation the factors are from.
    calculated: Option<i64>,
    factor: Vec<f64>,
    heads: Vec<Option<Head>>,
    aside: Vec<bool>,
    /// Each client's place while it waits and is not set aside.
    ranks: Vec<Option<Rank>>,
    /// Who of the placed clients is first (a tournament without certificates: keys move only
    /// when a client's head or the factors do).
    order: Tournament,
}

impl MultifactorRanker {
    /// The policy's `inner` ranker over `clients` clients, its factors weighted by `weight` and
    /// recomputed each `priority.calc_period_s` from `offset_s`.
    pub fn new(
        inner: Box<dyn Ranker>,
        clients: usize,
        priority: JobPriority,
        weight: f64,
        offset_s: f64,
    ) -> MultifactorRanker {
        MultifactorRanker {
            inner: Some(inner),
            weight,
            offset_s,
            ..MultifactorRanker::of_jobs(clients, priority)
        }
    }

    /// `clients` clients whose jobs carry their own factors in their points (the site
    /// factors an adapter writes): no policy factor is read.
    pub fn of_jobs(clients: usize, priority: JobPriority) -> MultifactorRanker {
        MultifactorRanker {
            inner: None,
            priority,
            weight: 0.0,
            offset_s: 0.0,
            calculated: None,
            factor: vec![0.0; clients],
            heads: vec![None; clients],
            aside: vec![false; clients],
            ranks: vec![None; clients],
            order: Tournament::plain(),
        }
    }

    /// A waiting client's place in the order, from its head and its factor.
    fn rank(&self, client: u32, head: Head) -> Rank {
        let factor = self.factor.get(client as usize).copied().unwrap_or(0.0);
        let priority = (self.priority).priority(self.weight * factor.clamp(0.0, 1.0), head.points);
        (
            Reverse(PriorityKey(priority)),
            head.arrival,
            head.seq,
            client,
        )
    }

    /// Every client's factor now, from the policy.
    fn read_factors(inner: &dyn Ranker, clients: usize) -> Vec<f64> {
        inner.factors().unwrap_or_else(|| vec![0.0; clients])
    }

    /// The place of `client` now (none when it waits for nothing or is set aside).
    fn place(&self, client: u32) -> Option<Rank> {
        let c = client as usize;
        (!self.aside[c])
            .then_some(self.heads[c])
            .flatten()
            .map(|head| self.rank(client, head))
    }

    /// Puts `client` where its head and factor place it now, and replays its matches.
    fn replace(&mut self, client: u32) {
        let rank = self.place(client);
        self.ranks[client as usize] = rank;
        let ranks = &self.ranks;
        (self.order).set(client, rank.is_some(), |a, b| {
            lower_key(|c| ranks[c as usize], a, b)
        });
    }

    /// Every client placed anew, and every match replayed.
    fn rebuild(&mut self) {
        self.ranks = (0..self.heads.len() as u32)
            .map(|c| self.place(c))
            .collect();
        let ranks = &self.ranks;
        (self.order).fill(
            ranks.len(),
            |c| ranks[c as usize].is_some(),
            |a, b| lower_key(|c| ranks[c as usize], a, b),
        );
    }
}

impl Ranker for MultifactorRanker {
    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        let Some(inner) = self.inner.as_mut() else {
            return Ok(());
        };
        inner.advance(now)?;
        let calculation = (self.priority).calculation(now.as_secs_f64(), self.offset_s);
        if self.calculated != Some(calculation) {
            self.calculated = Some(calculation);
            self.factor = Self::read_factors(inner.as_ref(), self.heads.len());
            self.rebuild();
        }
        Ok(())
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        match self.inner.as_mut() {
            Some(inner) => inner.update(client, holdings, head)?,
            None => check_holdings(client, holdings, self.heads.len(), None)?,
        }
        self.heads[client as usize] = head;
        if !self.aside[client as usize] {
            self.replace(client);
        }
        Ok(())
    }

    fn job_started(&mut self, client: u32, rate: f64) -> Result<(), RankError> {
        match self.inner.as_mut() {
            Some(inner) => inner.job_started(client, rate),
            None => Ok(()),
        }
    }

    fn job_finished(&mut self, client: u32, rate: f64, ran_s: f64) -> Result<(), RankError> {
        match self.inner.as_mut() {
            Some(inner) => inner.job_finished(client, rate, ran_s),
            None => Ok(()),
        }
    }

    fn first(&self) -> Option<u32> {
        self.order.first()
    }

    /// The placed clients sorted (the tournament keeps only the first).
    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        let mut placed: Vec<Rank> = self.ranks.iter().flatten().copied().collect();
        placed.sort_unstable();
        Box::new(placed.into_iter().map(|(.., c)| c))
    }

    /// The negated priority of the client's next job (lower is served first).
    fn priority(&self, client: u32) -> Option<f64> {
        let head = (*self.heads.get(client as usize)?)?;
        Some(-(self.rank(client, head).0).0 .0)
    }

    /// The factors read at the last recomputation; none when jobs carry their own.
    fn factors(&self) -> Option<Vec<f64>> {
        self.inner.as_ref().map(|_| self.factor.clone())
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        self.inner.as_ref()?.livetree()
    }

    fn set_aside(&mut self, client: u32) {
        let c = client as usize;
        if c < self.aside.len() && !self.aside[c] {
            self.aside[c] = true;
            self.replace(client);
            if let Some(inner) = self.inner.as_mut() {
                inner.set_aside(client);
            }
        }
    }

    fn restore(&mut self) {
        if let Some(inner) = self.inner.as_mut() {
            inner.restore();
        }
        for client in 0..self.aside.len() as u32 {
            if std::mem::replace(&mut self.aside[client as usize], false) {
                self.replace(client);
            }
        }
    }

    fn boxed_clone(&self) -> Box<dyn Ranker> {
        Box::new(MultifactorRanker {
            inner: self.inner.as_ref().map(|inner| inner.boxed_clone()),
            factor: self.factor.clone(),
            heads: self.heads.clone(),
            aside: self.aside.clone(),
            ranks: self.ranks.clone(),
            order: self.order.clone(),
            ..*self
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    fn head(arrival: f64, seq: u64, points: f64) -> Option<Head> {
        Some(Head::new(at(arrival), seq).with_points(points))
    }

    /// Three clients under Fair Tree, weight 1000, recomputed each 60 s; clients 0 and 1 run
    /// jobs from the start, so their factors differ from client 2's.
    fn fair_tree() -> MultifactorRanker {
        use crate::rank::{Accounts, FairshareRanker, FairshareSettings, Share};
        let priority = JobPriority {
            calc_period_s: 60.0,
            ..JobPriority::default()
        };
        let accounts = Accounts::flat(&Share::equal(3));
        let inner = Box::new(FairshareRanker::new(FairshareSettings::default(), accounts));
        let mut ranker = MultifactorRanker::new(inner, 3, priority, 1000.0, 0.0);
        ranker.job_started(0, 1.0).unwrap();
        ranker.job_started(1, 0.5).unwrap();
        ranker
    }

    #[test]
    fn jobs_that_carry_their_factors_are_ordered_by_their_points_alone() {
        // Over Fair Tree, whose factors differ (client 0 has used the most): none is read.
        let mut ranker = MultifactorRanker::of_jobs(3, fair_tree().priority);
        ranker.advance(at(0.0)).unwrap();
        ranker.update(0, &[0.0], head(0.0, 1, 500.0)).unwrap();
        ranker.update(1, &[0.0], head(1.0, 2, 700.0)).unwrap();
        assert_eq!(ranker.iter().collect::<Vec<_>>(), [1, 0]);
        ranker.advance(at(600.0)).unwrap();
        assert_eq!(ranker.factors(), None, "no factor is read");
        assert_eq!(ranker.priority(1), Some(-700.0));
        ranker.update(1, &[0.0], head(1.0, 2, 400.0)).unwrap();
        assert_eq!(ranker.iter().collect::<Vec<_>>(), [0, 1]);
        ranker.set_aside(0);
        assert_eq!(ranker.first(), Some(1));
        ranker.restore();
        assert_eq!(ranker.first(), Some(0));
    }

    #[test]
    fn policy_factors_are_the_fairshare_rankers_own() {
        use crate::rank::{Accounts, FairshareRanker, FairshareSettings, Share};
        let settings = FairshareSettings::default();
        let accounts = Accounts::flat(&Share::equal(2));
        let inner = Box::new(FairshareRanker::new(settings, accounts));
        let priority = JobPriority::default();
        let mut ranker = MultifactorRanker::new(inner, 2, priority, 100.0, 0.0);
        ranker.advance(at(0.0)).unwrap();
        ranker.job_started(0, 1.0).unwrap();
        ranker.advance(at(300.0)).unwrap();
        // Fair Tree with two users: the one with no usage has factor 1, the other 1/2.
        assert_eq!(ranker.factors(), Some(vec![0.5, 1.0]));
        ranker.update(0, &[0.0], head(0.0, 1, 60.0)).unwrap();
        ranker.update(1, &[0.0], head(10.0, 2, 0.0)).unwrap();
        assert_eq!(
            ranker.iter().collect::<Vec<_>>(),
            [0, 1],
            "110 points above 100"
        );
        ranker.update(0, &[0.0], head(0.0, 1, 40.0)).unwrap();
        assert_eq!(
            ranker.iter().collect::<Vec<_>>(),
            [1, 0],
            "90 points below 100"
        );
    }

    proptest! {
        /// The order kept as heads change and factors are recomputed is the order sorted
        /// from scratch: priority (truncated, highest first), then arrival, then sequence;
        /// its first is the sorted order's, with a client set aside and once restored.
        #[test]
        fn the_kept_order_is_the_sorted_one(
            steps in prop::collection::vec((0u32..3, prop::option::of(0.0f64..2000.0), 0.0f64..100.0, any::<bool>()), 1..40),
        ) {
            let mut ranker = fair_tree();
            let mut now = 0.0;
            let mut heads: Vec<Option<Head>> = vec![None; 3];
            for (seq, (client, points, wait, aside)) in steps.into_iter().enumerate() {
                now += wait;
                ranker.advance(at(now)).unwrap();
                let head = points.and_then(|p| head(now, seq as u64, p));
                ranker.update(client, &[0.0], head).unwrap();
                heads[client as usize] = head;
                let factors = ranker.factors().unwrap();
                let mut sorted: Vec<(f64, Time, u64, u32)> = (0..3u32)
                    .filter_map(|c| {
                        let h = heads[c as usize]?;
                        let priority = (1000.0 * factors[c as usize] + h.points).floor();
                        Some((-priority, h.arrival, h.seq, c))
                    })
                    .collect();
                sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
                let expected: Vec<u32> = sorted.iter().map(|s| s.3).collect();
                prop_assert_eq!(ranker.iter().collect::<Vec<_>>(), expected.clone());
                prop_assert_eq!(ranker.first(), expected.first().copied());
                if aside {
                    ranker.set_aside(client);
                    let others = expected.iter().find(|&&c| c != client).copied();
                    prop_assert_eq!(ranker.first(), others);
                    ranker.restore();
                    prop_assert_eq!(ranker.first(), expected.first().copied());
                }
            }
        }
    }
}
