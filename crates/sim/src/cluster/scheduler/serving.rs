//! How the engine serves users under a scheduler ([`Scheduler::serving`](super::Scheduler)):
//! by the policy's order of users, or by a job priority the scheduler keeps, with, where the
//! scheduler's own priority cannot hold the policy, a model that gives each waiting job a
//! factor pass by pass (an adapter writing the policy into the scheduler, as the replay models
//! it). The engine keeps the jobs; what the factors are is the scheduler's.

use fairshare_core::model::Time;
use fairshare_core::priority::multifactor::JobPriority;
use fairshare_core::rank::play::{Expected, Waiting};
use fairshare_core::rank::{Book, RankError, Ranker};
use std::collections::BTreeMap;

/// How the engine serves users: the ranker it asks, and how jobs are ordered.
pub struct Serving {
    /// The ranker users are served by.
    pub(in crate::cluster) ranker: Box<dyn Ranker>,
    /// The job priority jobs are ordered by, with where its recomputations fall past each
    /// multiple of its period (seconds), when the scheduler orders jobs.
    pub(in crate::cluster) job_order: Option<(JobPriority, f64)>,
    /// The model that gives each waiting job a factor, when the scheduler has one.
    pub(in crate::cluster) job_factors: Option<Box<dyn JobFactors>>,
}

impl Serving {
    /// Users served in the policy's order (`ranker`), each user's jobs oldest first.
    pub fn by_users(ranker: Box<dyn Ranker>) -> Serving {
        Serving {
            ranker,
            job_order: None,
            job_factors: None,
        }
    }
}

/// A model that gives each waiting job a factor, one more term of its points: it keeps its
/// own book of the policy (told every start and end), and at each of its passes writes every
/// waiting job's factor anew; a job submitted between passes gets its user's factor at
/// submission.
pub(in crate::cluster) trait JobFactors {
    /// Its book of the policy, to move on with the clock and to tell of starts and ends.
    fn book_mut(&mut self) -> &mut Book;
    /// The factor a job `user` submits now gets.
    fn submit_factor(&self, user: u32) -> Result<i64, RankError>;
    /// Whether one of its passes falls at `now` (the first moment the run reaches at or after
    /// each of its times); noted, so that each pass is due once.
    fn due(&mut self, now: Time) -> bool;
    /// Whether its passes expect jobs to end at their limits: the running jobs at their
    /// planned ends, the waiting jobs' [`Waiting::limit`] given.
    fn ends_at_limits(&self) -> bool;
    /// The partitions (by name) whose jobs it ranks and counts, their nodes the whole that
    /// what a job holds is a fraction of; empty: every job, on every node. A job of another
    /// partition keeps the factor it was submitted with.
    fn partitions(&self) -> &[String];
    /// One pass at `now` over `waiting` (each user's waiting jobs oldest first) whose jobs
    /// hold the factors `held` (by user, in the same places), the `running` jobs expected to
    /// end meanwhile: each job's factor, written in its place.
    fn pass(
        &mut self,
        now: Time,
        waiting: &BTreeMap<u32, Vec<Waiting<'_>>>,
        running: Vec<Expected>,
        held: &mut [Vec<i64>],
    ) -> Result<(), RankError>;
}
