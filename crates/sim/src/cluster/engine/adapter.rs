//! The Slurm adapter as the replay models it, for a policy that reaches Slurm as site factors
//! (any policy but Slurm's own fairshare): what `fairshare slurm watch` would write, pass by
//! pass.
//!
//! The adapter keeps its own history of the policy (here a [`Book`] told every start and end,
//! as the accounting tells the live adapter) and, at each of its passes (every
//! `site_interval_s`, `site_offset_s` past each multiple), plays the policy's order of starts out over the pending jobs, cuts it
//! into runs and gives each run a site factor, keeping the factors the jobs already hold where
//! they still fall along the order — the very function the live adapters call
//! ([`factors::pass_factors`]). A job submitted between passes gets the factor the adapter's
//! submit table gives its user. Each job's site factor is one more term of its points, so
//! Slurm's order of jobs is the model's own. The adapter's `ranked_runs` and
//! `ends_at_limits` are modelled (from [`JobPriority`]); every partition is ranked.

use super::Engine;
use crate::cluster::space::held;
use crate::cluster::SimError;
use fairshare_core::model::Time;
use fairshare_core::priority::multifactor::JobPriority;
use fairshare_core::rank::factors::{self, SubmitPlaces};
use fairshare_core::rank::play::{self, Expected, Waiting};
use fairshare_core::rank::{Book, Head, RankError, Ranker};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The adapter's state between its passes.
pub(super) struct Adapter {
    /// The policy's ranker with what each user holds, told every start and end.
    book: Book,
    /// The highest site factor.
    weight: u32,
    /// How many runs of the order of starts are ranked one by one.
    ranked_runs: usize,
    /// Whether the play expects running jobs to end at their limits.
    ends_at_limits: bool,
    /// Seconds between passes, and how far past each multiple of it they fall.
    interval_s: f64,
    offset_s: f64,
    /// The last pass, as a multiple of the interval.
    pass: Option<i64>,
    /// The site factor a job each user submits gets until the next pass.
    submit: SubmitTable,
}

/// The submit table of the last pass.
enum SubmitTable {
    /// By user (the weight for everyone before the first pass, and the whole table of a
    /// policy that cannot place one user alone).
    Whole(Vec<i64>),
    /// The places of the waiting users' runs, and the book as it stood at the pass: a user
    /// with nothing waiting is placed among them when it submits, so that no pass works out
    /// the factors of the many users who submit nothing before the next.
    Placed {
        places: SubmitPlaces,
        at_pass: Box<Book>,
        /// When the pass was: a submitting user is placed with a job submitted then.
        at: Time,
    },
}

impl Adapter {
    /// The adapter of `policy` (its ranker) for `users` users over `resources` resources,
    /// writing at `priority`'s site weight and interval.
    pub(super) fn new(
        policy: Box<dyn Ranker>,
        users: usize,
        resources: usize,
        priority: &JobPriority,
    ) -> Adapter {
        // At least 1 (a NaN too), at most Slurm's largest site factor.
        let weight = match priority.site_weight {
            w if w >= 1.0 => w.min(f64::from(i32::MAX)) as u32,
            _ => 1,
        };
        Adapter {
            book: Book::new(policy, users, resources),
            weight,
            ranked_runs: priority.site_ranked_runs.max(1),
            ends_at_limits: priority.site_ends_at_limits,
            interval_s: priority.site_interval_s.max(1.0),
            offset_s: priority.site_offset_s,
            pass: None,
            submit: SubmitTable::Whole(vec![i64::from(weight); users]),
        }
    }

    /// The policy's book, to tell it of starts and ends.
    pub(super) fn book_mut(&mut self) -> &mut Book {
        &mut self.book
    }

    /// The site factor a job `user` submits now gets.
    pub(super) fn submit_factor(&self, user: u32) -> Result<i64, RankError> {
        match &self.submit {
            SubmitTable::Whole(factors) => Ok(factors.get(user as usize).copied().unwrap_or(0)),
            SubmitTable::Placed {
                places,
                at_pass,
                at,
            } => {
                let asked = [(user, play::submitted_at(*at))];
                let standing = || at_pass.standings(&asked)?.first().copied();
                places.factor(user, standing).ok_or(RankError::Input {
                    client: user,
                    problem: "the policy gave no standing for the submit table".into(),
                })
            }
        }
    }

    /// Whether a pass falls at `now`: the first moment at or after each multiple of the
    /// interval (past the offset) that the run reaches.
    fn due(&mut self, now: Time) -> bool {
        let pass = ((now.as_secs_f64() - self.offset_s) / self.interval_s).floor() as i64;
        let due = self.pass != Some(pass);
        self.pass = Some(pass);
        due
    }

    /// One pass over `waiting` (each user's pending jobs oldest first) whose jobs hold the
    /// site factors `held` (by user, in the same places), the `running` jobs expected to end
    /// meanwhile: the site factor each job gets, in the same places, and the submit table
    /// anew.
    fn reconcile(
        &mut self,
        now: Time,
        waiting: &BTreeMap<u32, Vec<Waiting<'_>>>,
        running: Vec<Expected>,
        held: &mut [Vec<i64>],
    ) -> Result<(), RankError> {
        let held_at = |user: u32, place: usize| held.get(user as usize)?.get(place).copied();
        let settings = (self.ranked_runs, self.weight);
        let runs = factors::pass_factors(&self.book, now, waiting, running, held_at, settings)?;
        for run in &runs {
            if let Some(factors) = held.get_mut(run.client as usize) {
                factors[run.jobs.clone()].fill(run.factor);
            }
        }
        let first_and_last = factors::first_and_last(&runs);
        let heads: BTreeMap<u32, Head> = (waiting.iter())
            .filter_map(|(&user, jobs)| Some((user, jobs.first()?.head)))
            .collect();
        let (book, weight) = (&self.book, self.weight);
        self.submit = match SubmitPlaces::new(book, now, &heads, &first_and_last, weight) {
            Some(places) => SubmitTable::Placed {
                places,
                at_pass: Box::new(book.frozen()),
                at: now,
            },
            None => {
                let table = factors::submit_table(book, now, &heads, &first_and_last, weight)?;
                let mut factors = vec![i64::from(weight); book.clients()];
                table
                    .into_iter()
                    .for_each(|(user, f)| factors[user as usize] = f);
                SubmitTable::Whole(factors)
            }
        };
        Ok(())
    }
}

impl Engine {
    /// Every running job as the adapter's play at `now` expects it to end: at its planned end,
    /// its time limit (the Slurm scheduler, the only one whose jobs the adapter orders, plans
    /// with limits).
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

    /// At each of the adapter's passes: every pending job's site factor written anew, and
    /// each user whose factors moved has its queue put back in order of points and its next
    /// job told to the ranker.
    pub(super) fn adapter_pass(&mut self, now: Time) -> Result<(), SimError> {
        let Some(adapter) = self.adapter.as_mut() else {
            return Ok(());
        };
        if !adapter.due(now) {
            return Ok(());
        }
        // Each user's jobs oldest first, as the adapter lists them, by their place in the queue,
        // each with its limit where the play expects jobs to end at their limits.
        let limits = adapter.ends_at_limits;
        let users = self.queues.len();
        let mut places: Vec<Vec<usize>> = vec![Vec::new(); users];
        let mut waiting: BTreeMap<u32, Vec<Waiting>> = BTreeMap::new();
        let mut held: Vec<Vec<i64>> = vec![Vec::new(); users];
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
            held[user] = order.iter().map(|&i| queue[i].site_factor).collect();
            places[user] = order;
        }
        let running = match adapter.ends_at_limits {
            true => self.expected_ends(now),
            false => Vec::new(),
        };
        let adapter = self.adapter.as_mut().expect("checked above");
        (adapter.reconcile(now, &waiting, running, &mut held)).map_err(SimError::Rank)?;
        drop(waiting);
        for (user, (places, factors)) in places.iter().zip(held).enumerate() {
            let queue = &mut self.queues[user];
            let mut moved = false;
            for (&i, factor) in places.iter().zip(factors) {
                moved |= std::mem::replace(&mut queue[i].site_factor, factor) != factor;
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
