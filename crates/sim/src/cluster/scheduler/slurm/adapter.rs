//! The Slurm adapter as the replay models it, for a policy that reaches Slurm as site factors
//! (any policy but Slurm's own fairshare): what `fairshare slurm watch` would write, pass by
//! pass.
//!
//! The adapter keeps its own history of the policy (here a [`Book`] told every start and end,
//! as the accounting tells the live adapter) and, at each of its passes (every
//! `site_interval_s`, `site_offset_s` past each multiple), plays the policy's order of starts
//! out over the pending jobs, cuts it into runs and gives each run a site factor, keeping the
//! factors the jobs already hold where they still fall along the order — the very function
//! the live adapters call ([`factors::pass_factors`]). A job submitted between passes gets the
//! factor the adapter's submit table gives its user, or none without a table. Each job's site
//! factor is one more term of its points, so Slurm's order of jobs is the model's own. The
//! adapter's `ranked_runs`, `ends_at_limits` and `submit_table` are modelled (from
//! [`JobPriority`]), and its `partitions` (from [`SlurmParameters::adapter_partitions`]): only
//! their jobs are ranked and counted, their nodes the whole their holdings are fractions of.

use super::SlurmParameters;
use crate::cluster::scheduler::{JobFactors, Serving};
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_core::priority::multifactor::JobPriority;
use fairshare_core::rank::factors::{self, SubmitPlaces};
use fairshare_core::rank::play::{self, Expected, Waiting};
use fairshare_core::rank::{Book, Head, MultifactorRanker, RankError, Ranker};
use std::collections::BTreeMap;

/// How Slurm serves users under `policy` (its ranker `ranker`, for `users` users over
/// `resources` resources), jobs ordered by `parameters`' job priority: when Slurm's own
/// fairshare factor alone orders users, by the policy's order; with Slurm's own fairshare and a job's own terms, by
/// each user's next job's points, the policy's factors weighted by `PriorityWeightFairshare`
/// and recomputed where the policy's recomputations fall (the same thread runs both); with
/// any other policy, by the site factors the adapter gives each job, the policy itself kept
/// by the adapter.
pub(super) fn serving(
    policy: &PolicySpec,
    ranker: Box<dyn Ranker>,
    (users, resources): (usize, usize),
    parameters: &SlurmParameters,
) -> Serving {
    let priority = parameters.priority;
    let own = slurms_own(policy);
    if own.is_some() && !priority.orders_jobs() {
        return Serving::by_users(ranker);
    }
    let (ranker, job_factors) = match own {
        Some(offset) => {
            let weight = priority.fairshare_weight;
            let ranker = MultifactorRanker::new(ranker, users, priority, weight, offset);
            (Box::new(ranker) as Box<dyn Ranker>, None)
        }
        None => {
            let partitions = parameters.adapter_partitions.clone();
            let adapter = Adapter::new(ranker, (users, resources), &priority, partitions);
            let ranker = Box::new(MultifactorRanker::of_jobs(users, priority));
            (
                ranker as Box<dyn Ranker>,
                Some(Box::new(adapter) as Box<dyn JobFactors>),
            )
        }
    };
    Serving {
        ranker,
        job_order: Some((priority, own.unwrap_or(0.0))),
        job_factors,
    }
}

/// Where the recomputations of `policy` fall past each multiple of their period, when it is
/// Slurm's own fairshare factor (Fair Tree or classic over the processors or the billing
/// Slurm charges), which Slurm computes itself; `None` for any other policy, which reaches
/// Slurm as the adapter's site factor (job priorities then recompute on the multiples).
fn slurms_own(policy: &PolicySpec) -> Option<f64> {
    match policy.kind {
        PolicyKind::Fairshare(settings)
            if settings.function.is_slurms()
                && ["cpu", "billing"].contains(&settings.metric.entry().name) =>
        {
            Some(settings.refresh_offset_s)
        }
        _ => None,
    }
}

/// The adapter's state between its passes.
struct Adapter {
    /// The policy's ranker with what each user holds, told every start and end.
    book: Book,
    /// The highest site factor.
    weight: u32,
    /// How many runs of the order of starts are ranked one by one.
    ranked_runs: usize,
    /// Whether the play expects running jobs to end at their limits.
    ends_at_limits: bool,
    /// Whether a job submitted between passes gets its user's factor from the submit table
    /// (otherwise none until the next pass).
    submit_table: bool,
    /// The partitions whose jobs it ranks; empty: all.
    partitions: Vec<String>,
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
    /// writing at `priority`'s site weight and interval, ranking the jobs of `partitions`
    /// (empty: all).
    fn new(
        policy: Box<dyn Ranker>,
        (users, resources): (usize, usize),
        priority: &JobPriority,
        partitions: Vec<String>,
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
            submit_table: priority.site_submit_table,
            partitions,
            interval_s: priority.site_interval_s.max(1.0),
            offset_s: priority.site_offset_s,
            pass: None,
            submit: SubmitTable::Whole(vec![i64::from(weight); users]),
        }
    }
}

impl JobFactors for Adapter {
    fn book_mut(&mut self) -> &mut Book {
        &mut self.book
    }

    /// The site factor a job `user` submits now gets: its user's in the submit table, or none
    /// without a table.
    fn submit_factor(&self, user: u32) -> Result<i64, RankError> {
        if !self.submit_table {
            return Ok(0);
        }
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

    fn ends_at_limits(&self) -> bool {
        self.ends_at_limits
    }

    fn partitions(&self) -> &[String] {
        &self.partitions
    }

    /// One pass over `waiting` (each user's pending jobs oldest first) whose jobs hold the
    /// site factors `held` (by user, in the same places), the `running` jobs expected to end
    /// meanwhile: the site factor each job gets, in the same places, and the submit table
    /// anew.
    fn pass(
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
