//! From an order of runs to falling whole-number factors, one per run, changing as few as
//! it can of the factors a scheduler already holds.
//!
//! A scheduler that orders jobs by a number (Slurm's site factor, Grid Engine's POSIX
//! priority) is told a policy's order of starts ([`super::play`]) as one factor per run of one
//! client's consecutive starts: falling along the runs, so that the scheduler's other factors
//! (age, size, QOS) keep the relative order of the jobs within a run, and the jobs of one
//! client keep theirs. A fresh queue gets Fair Tree's own factors: for `n` runs, the `i`-th
//! (from 0) gets `(n − i) / n` times a weight, rounded to a whole number as Slurm stores it —
//! exactly Slurm's Fair Tree factor when the order is Fair Tree's. Later passes keep the
//! factors the scheduler already holds wherever they still fall along the order, so a steady
//! queue needs few writes. The adapters write these factors; the replay's model of an adapter
//! computes the same ones.

use super::play::{self, Expected, Waiting};
use super::{Book, Head, RankError, Standing};
use crate::model::Time;
use std::collections::BTreeMap;
use std::ops::Range;

/// How many runs at the head of the order of starts get factors of their own, by default
/// (the adapters' `ranked_runs`); after them each client's remaining jobs make one run.
pub const RANKED_RUNS: usize = 1_000;

/// The whole factor a scheduler stores of a factor in [0, 1] under `weight`: `factor × weight`, rounded, the
/// factor clamped into [0, 1] first (a NaN counts as 0).
pub fn whole_factor(factor: f64, weight: u32) -> i64 {
    let factor = if factor.is_nan() {
        0.0
    } else {
        factor.clamp(0.0, 1.0)
    };
    (factor * f64::from(weight)).round() as i64
}

/// The site factors of `n = held.len()` runs of jobs, first to last (a run is one
/// association's jobs that the policy starts one after another), changing as few as it can of
/// what Slurm already holds: `held[b]` is what the first job of run `b` holds.
///
/// Factors fall strictly along the runs, from at most `weight` down to at least 1 (0 is a job
/// fairshare does not rank). The runs whose held factors already fall along the order (a
/// longest such subsequence) keep them; the others get factors spread evenly in the gaps
/// between. Only when some gap has too few whole numbers left are all the runs given anew
/// `weight × (n − b) / n`, Fair Tree's factors. With `weight < n`, factors cannot all differ:
/// those are clamped to 1 and later runs tie.
pub fn stable_factors(held: &[Option<i64>], weight: u32) -> Vec<i64> {
    let top = i64::from(weight);
    let usable: Vec<Option<i64>> = (held.iter())
        .map(|h| h.filter(|v| (1..=top).contains(v)))
        .collect();
    let kept = falling_subsequence(&usable);
    let value = |b: usize| usable.get(b).copied().flatten().unwrap_or(0);
    let Some(&first) = kept.first() else {
        return evenly(held.len(), weight);
    };
    // Above the first kept run: from the weight down, the first new run at the weight.
    let (room, count) = (top - value(first), first as i64);
    if room < count {
        return evenly(held.len(), weight);
    }
    let mut factors: Vec<i64> = (0..count).map(|j| top - j * room / count.max(1)).collect();
    // Each kept run, then the runs below it spread down to the next kept one (or to 0).
    let ends = kept.iter().skip(1).copied().chain([held.len()]);
    for (&at, next) in kept.iter().zip(ends) {
        let (high, low, gap) = (value(at), value(next), (next - at - 1) as i64);
        if high - low - 1 < gap {
            return evenly(held.len(), weight);
        }
        factors.push(high);
        factors.extend((0..gap).map(|j| high - (j + 1) * (high - low) / (gap + 1)));
    }
    factors
}

/// `weight × (n − b) / n` for each of `n` runs, rounded, at least 1: Fair Tree's own
/// factors.
fn evenly(n: usize, weight: u32) -> Vec<i64> {
    (0..n)
        .map(|b| whole_factor((n - b) as f64 / n as f64, weight).max(1))
        .collect()
}

/// One run of a pass's factors: a client's jobs the policy starts one after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The client.
    pub client: u32,
    /// The places of its jobs in its queue.
    pub jobs: Range<usize>,
    /// The factor every job of the run gets.
    pub factor: i64,
}

/// The factors one pass of an adapter writes at `now`, run by run, first to last: the order
/// in which the policy of `book` would start the jobs of `queues` (each client's waiting jobs
/// in the order the scheduler keeps them; `running` the jobs expected to end meanwhile), its
/// first `ranked` runs ranked one by one ([`play::run_spans`]), each run's factor kept from
/// what its first job holds (`held`: by client and place in its queue) wherever it still falls
/// along the order ([`stable_factors`]) under `weight`. The live adapters and the replay's
/// model of an adapter both write these.
pub fn pass_factors(
    book: &Book,
    now: Time,
    queues: &BTreeMap<u32, Vec<Waiting<'_>>>,
    running: Vec<Expected>,
    held: impl Fn(u32, usize) -> Option<i64>,
    (ranked, weight): (usize, u32),
) -> Result<Vec<Run>, RankError> {
    let starts = play::starts(book, now, queues, ranked, running)?;
    let runs = play::run_spans(&starts, ranked);
    let firsts: Vec<Option<i64>> = (runs.iter())
        .map(|(client, jobs)| held(*client, jobs.start))
        .collect();
    let factors = stable_factors(&firsts, weight);
    Ok((runs.into_iter().zip(factors))
        .map(|((client, jobs), factor)| Run {
            client,
            jobs,
            factor,
        })
        .collect())
}

/// Each client's first and last runs' factors among `runs`: what its next job joins.
pub fn first_and_last(runs: &[Run]) -> BTreeMap<u32, (i64, i64)> {
    let mut ends: BTreeMap<u32, (i64, i64)> = BTreeMap::new();
    for run in runs {
        ends.entry(run.client).or_insert((run.factor, run.factor)).1 = run.factor;
    }
    ends
}

/// The factor a job each client submits now gets, until the next pass ranks it with the
/// others (what the Slurm adapter's `job_submit.lua` sets), in the order of `everyone` (every
/// client, as the policy would rank them were each waiting): a waiting client's new job joins
/// its last run (it is the newest of its jobs); one with nothing waiting takes the first
/// factor of the nearest waiting client ranked above it, or the weight when none is — a tie
/// the scheduler breaks by age, the older job first, so the new job comes right after.
/// `waiting` holds each waiting client's first and last runs' factors.
pub fn submit_factors(
    everyone: &[u32],
    waiting: &BTreeMap<u32, (i64, i64)>,
    weight: u32,
) -> Vec<(u32, i64)> {
    let mut above = i64::from(weight);
    (everyone.iter())
        .map(|&client| match waiting.get(&client) {
            Some(&(first, last)) => {
                above = first;
                (client, last)
            }
            None => (client, above),
        })
        .collect()
}

/// The submit table of `book` at `now` ([`submit_factors`] over [`play::order_of_all`], the
/// waiting clients with their `heads`), `waiting` holding each waiting client's first and last
/// runs' factors. Where the ranker orders by each client's own standing, every other client is
/// placed among the waiting ones ([`SubmitPlaces`]), with no order of all of them.
pub fn submit_table(
    book: &Book,
    now: Time,
    heads: &BTreeMap<u32, Head>,
    waiting: &BTreeMap<u32, (i64, i64)>,
    weight: u32,
) -> Result<Vec<(u32, i64)>, RankError> {
    let everyone = with_heads(0..book.clients() as u32, heads, now);
    let Some(standings) = book.standings(&everyone) else {
        let everyone = play::order_of_all(book, now, heads)?;
        return Ok(submit_factors(&everyone, waiting, weight));
    };
    let of_waiting = waiting.keys().map(|&client| standings[client as usize]);
    let places = SubmitPlaces::with_standings(of_waiting, waiting, weight);
    let table = standings.iter().filter_map(|standing| {
        let client = standing.client;
        Some((client, places.factor(client, || Some(*standing))?))
    });
    Ok(table.collect())
}

/// Each of `clients` with its head in `heads`, or, with none there, a job submitted at `now`
/// ([`play::submitted_at`]).
fn with_heads(
    clients: impl Iterator<Item = u32>,
    heads: &BTreeMap<u32, Head>,
    now: Time,
) -> Vec<(u32, Head)> {
    let head = |client: u32| heads.get(&client).copied();
    (clients.map(|client| (client, head(client).unwrap_or(play::submitted_at(now))))).collect()
}

/// The submit table of one pass, for a ranker that orders by each client's own standing, as
/// the places of the waiting clients' runs among which any other client's standing falls: a
/// client's factor can then be worked out alone, when it submits ([`SubmitPlaces::factor`]),
/// rather than every client's at every pass.
#[derive(Debug, Clone)]
pub struct SubmitPlaces {
    /// Each waiting client's standing with its first run's factor, by standing.
    firsts: Vec<(Standing, i64)>,
    /// Each waiting client's last run's factor.
    lasts: BTreeMap<u32, i64>,
    /// The highest site factor.
    weight: u32,
}

impl SubmitPlaces {
    /// The places of the `waiting` clients of `book` (each with its first and last runs'
    /// factors, and its head in `heads`) at `now`; `None` where the ranker does not order by
    /// standings, or gives not one per waiting client.
    pub fn new(
        book: &Book,
        now: Time,
        heads: &BTreeMap<u32, Head>,
        waiting: &BTreeMap<u32, (i64, i64)>,
        weight: u32,
    ) -> Option<Self> {
        let asked = with_heads(waiting.keys().copied(), heads, now);
        let standings = book.standings(&asked)?;
        Some(SubmitPlaces::with_standings(standings, waiting, weight))
    }

    /// The places of the `waiting` clients, given their `standings` in the same order.
    fn with_standings(
        standings: impl IntoIterator<Item = Standing>,
        waiting: &BTreeMap<u32, (i64, i64)>,
        weight: u32,
    ) -> Self {
        let mut firsts: Vec<(Standing, i64)> = (standings.into_iter())
            .zip(waiting.values().map(|&(first, _)| first))
            .collect();
        firsts.sort_unstable_by_key(|&(standing, _)| standing);
        let lasts = (waiting.iter()).map(|(&client, &(_, last))| (client, last));
        SubmitPlaces {
            firsts,
            lasts: lasts.collect(),
            weight,
        }
    }

    /// The factor a job `client` submits gets (as [`submit_factors`] gives it): its last
    /// run's when it waits, else the first run's of the nearest waiting client standing above
    /// it, by its standing (`standing`, asked only then), or the weight when none is; `None`
    /// when that standing is not known.
    pub fn factor(&self, client: u32, standing: impl FnOnce() -> Option<Standing>) -> Option<i64> {
        if let Some(&last) = self.lasts.get(&client) {
            return Some(last);
        }
        let standing = standing()?;
        let above = (self.firsts).partition_point(|(first, _)| *first < standing);
        let nearest = above.checked_sub(1).map(|i| self.firsts[i].1);
        Some(nearest.unwrap_or(i64::from(self.weight)))
    }
}

/// The indices of a longest subsequence of the `Some` values that falls strictly, in
/// O(n log n) (patience sorting).
fn falling_subsequence(values: &[Option<i64>]) -> Vec<usize> {
    // ends[k]: the index ending the best falling subsequence of length k + 1 found so far
    // (the one whose last value is highest); before[i]: the index before i in its subsequence.
    let mut ends: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = vec![None; values.len()];
    for (i, value) in values.iter().enumerate() {
        let Some(v) = *value else { continue };
        let length = ends.partition_point(|&e| values[e].is_some_and(|w| w > v));
        before[i] = length.checked_sub(1).map(|k| ends[k]);
        match ends.get_mut(length) {
            Some(end) => *end = i,
            None => ends.push(i),
        }
    }
    let mut chain = Vec::new();
    let mut at = ends.last().copied();
    while let Some(i) = at {
        chain.push(i);
        at = before[i];
    }
    chain.reverse();
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::Policy;
    use crate::rank::Ranker;
    use proptest::prelude::*;

    #[test]
    fn held_factors_that_fall_along_the_order_are_kept() {
        // A fresh queue: Fair Tree's factors.
        assert_eq!(stable_factors(&[None, None, None], 1000), [1000, 667, 333]);
        // The second run started; a new run came last: the others keep theirs.
        let held = [Some(1000), Some(333), None];
        assert_eq!(stable_factors(&held, 1000), [1000, 333, 167]);
        // Two runs swapped: one keeps its factor, the other moves above it.
        let held = [Some(333), Some(667), Some(100)];
        assert_eq!(stable_factors(&held, 1000), [1000, 667, 100]);
        let held = [Some(900), Some(100), Some(500)];
        assert_eq!(stable_factors(&held, 1000), [900, 700, 500]);
        // No room left between 5 and 4: all anew.
        let held = [Some(5), None, Some(4)];
        assert_eq!(stable_factors(&held, 9), [9, 6, 3]);
        // Factors above the weight, and 0, are not kept.
        assert_eq!(stable_factors(&[Some(2000), Some(0)], 1000), [1000, 500]);
        // Fewer whole numbers than runs: later runs tie at 1.
        assert_eq!(stable_factors(&[None, None, None], 2), [2, 1, 1]);
        assert!(stable_factors(&[], 10).is_empty());
    }

    /// The length of a longest strictly falling subsequence, by trying every subset.
    fn longest_by_hand(values: &[Option<i64>]) -> usize {
        let n = values.len();
        (0u32..1 << n)
            .filter(|mask| {
                let chosen: Vec<i64> = (0..n)
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| values[i])
                    .collect::<Option<Vec<i64>>>()
                    .unwrap_or_default();
                chosen.len() == mask.count_ones() as usize && chosen.windows(2).all(|w| w[0] > w[1])
            })
            .map(|mask| mask.count_ones() as usize)
            .max()
            .unwrap_or(0)
    }

    proptest! {
        /// Under SDRF, the stateless policies, decayed usage, FIFO and smallest-first, the submit
        /// table found by standings, and
        /// each client's factor placed alone, are the ones the order of every client, worked
        /// out on a copy, gives.
        #[test]
        fn the_submit_table_by_standings_is_the_order_of_alls(
            policy in 0u8..6,
            held in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0.0), 0.0..0.4f64], 2), 6),
            ran in prop::collection::vec((0usize..6, 1.0..500.0f64), 0..12),
            waiting in prop::collection::btree_map(0u32..6, (1i64..1000, 1i64..1000), 0..6),
            weight in 1u32..2000,
        ) {
            use crate::priority::PriorityForm;
            use crate::rank::{order_of_all_on_a_copy, smallest, FifoRanker, SdrfRanker, Share, StatelessRanker, UsageRanker};
            let shares = Share::equal(6);
            let ranker: Box<dyn Ranker> = match policy {
                0 => Box::new(StatelessRanker::new(Policy::Drf, &shares)),
                1 => Box::new(StatelessRanker::new(Policy::Asset, &shares)),
                2 => Box::new(UsageRanker::new(2, 300.0, &shares)),
                3 => Box::new(FifoRanker::new(6)),
                4 => smallest::smallest_first(2, &shares),
                _ => Box::new(SdrfRanker::with_delta(2, 0.99, PriorityForm::SumOfMaxes, &shares)),
            };
            let mut book = Book::new(ranker, 6, 2);
            let mut now = 0.0;
            for (client, dt) in ran {
                now += dt;
                book.advance(Time::from_secs_f64(now)).unwrap();
                book.started(client as u32, &held[client], None).unwrap();
            }
            let now = Time::from_secs_f64(now + 1.0);
            book.advance(now).unwrap();
            // Heads of several arrivals and sizes, some after the new jobs' `now`.
            let head = |c: u32| {
                let arrival = Time::from_secs_f64(f64::from((c * 7) % 4) * now.as_secs_f64() / 2.0);
                Head::new(arrival, u64::from(c)).with_size(0.1 * f64::from(c % 3))
            };
            let heads: BTreeMap<u32, Head> = waiting.keys().map(|&c| (c, head(c))).collect();
            let table = submit_table(&book, now, &heads, &waiting, weight).unwrap();
            let all: Vec<Head> = (0..6).map(|c| heads.get(&c).copied().unwrap_or(Head::new(now, u64::MAX))).collect();
            let rows: Vec<&[f64]> = (0..6).map(|c| book.holdings(c)).collect();
            let everyone = order_of_all_on_a_copy(book.ranker(), &rows, &all).unwrap();
            let mut by_hand = submit_factors(&everyone, &waiting, weight);
            let mut table = table;
            by_hand.sort_unstable();
            table.sort_unstable();
            prop_assert_eq!(&table, &by_hand);
            let places = SubmitPlaces::new(&book, now, &heads, &waiting, weight).unwrap();
            let new = play::submitted_at(now);
            let alone: Vec<(u32, i64)> = (0..6u32)
                .map(|c| (c, places.factor(c, || Some(book.standings(&[(c, new)])?[0])).unwrap()))
                .collect();
            prop_assert_eq!(alone, by_hand);
        }

        #[test]
        fn factors_fall_and_keep_a_longest_falling_run_of_held_ones(
            held in prop::collection::vec(prop::option::of(0i64..60), 0..10),
            weight in 10u32..60,
        ) {
            let factors = stable_factors(&held, weight);
            prop_assert_eq!(factors.len(), held.len());
            prop_assert!(factors.windows(2).all(|w| w[0] > w[1]), "{:?}", factors);
            prop_assert!(factors.iter().all(|f| (1..=i64::from(weight)).contains(f)));
            let usable: Vec<Option<i64>> =
                held.iter().map(|h| h.filter(|v| (1..=i64::from(weight)).contains(v))).collect();
            let chain = falling_subsequence(&usable);
            prop_assert_eq!(chain.len(), longest_by_hand(&usable));
            let kept = factors.iter().zip(&held).filter(|(f, h)| Some(**f) == **h).count();
            // Either the longest falling run kept, or everything given anew.
            prop_assert!(kept >= chain.len() || factors == evenly(held.len(), weight));
        }
    }

    #[test]
    fn a_new_job_joins_its_clients_last_run_or_the_nearest_waiting_client_above() {
        // Clients 3, 1, 0, 2 in the policy's order; 1 and 2 wait.
        let waiting = BTreeMap::from([(1, (900, 500)), (2, (400, 100))]);
        let factors = submit_factors(&[3, 1, 0, 2], &waiting, 1000);
        assert_eq!(factors, [(3, 1000), (1, 500), (0, 900), (2, 100)]);
        assert_eq!(
            submit_factors(&[0, 1], &BTreeMap::new(), 7),
            [(0, 7), (1, 7)]
        );
    }

    #[test]
    fn whole_factors_are_weighted_rounded_and_clamped() {
        assert_eq!(whole_factor(0.75, 10_000), 7_500);
        assert_eq!(whole_factor(1.0 / 3.0, 1_000), 333);
        assert_eq!(whole_factor(1.5, 100), 100);
        assert_eq!(whole_factor(-0.2, 100), 0);
        assert_eq!(whole_factor(f64::NAN, 100), 0);
        assert_eq!(whole_factor(1.0, u32::MAX), i64::from(u32::MAX));
    }
}
