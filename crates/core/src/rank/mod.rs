//! Rankers: the clients that wait, in the order a scheduler serves them.
//!
//! A scheduler that embeds fairshare keeps one [`Ranker`]: it tells it when time moves
//! ([`Ranker::advance`]), what a client holds and whether it waits ([`Ranker::update`]), and
//! asks whom to serve next ([`Ranker::first`], [`Ranker::iter`]). The ranker keeps whatever
//! state its policy needs — nothing for DRF, the decaying commitments and the kinetic live tree
//! for SDRF — so the scheduler never needs to know the excess rule `max(o − e, 0)` or how a
//! discount factor δ becomes a time constant τ.
//!
//! ```
//! use fairshare_core::model::Time;
//! use fairshare_core::priority::PriorityForm;
//! use fairshare_core::rank::{Head, Ranker, SdrfRanker, Share};
//!
//! // Two clients sharing two resources under SDRF with δ = 1 − 10⁻³ per second.
//! let mut ranker = SdrfRanker::with_delta(2, 0.999, PriorityForm::SumOfMaxes, &Share::equal(2));
//! ranker.update(0, &[0.9, 0.2], None)?; // client 0 holds most of the CPU, waits for nothing
//! ranker.advance(Time::from_secs_f64(3600.0))?; // an hour later its commitment has grown
//! ranker.update(0, &[0.0, 0.0], Some(Head::new(Time::from_secs_f64(3600.0), 1)))?; // now it waits
//! ranker.update(1, &[0.0, 0.0], Some(Head::new(Time::from_secs_f64(3600.0), 2)))?; // and so does client 1
//! assert_eq!(ranker.first(), Some(1)); // the client that did not hog goes first
//! # Ok::<(), fairshare_core::rank::RankError>(())
//! ```

pub mod book;
pub mod factors;
mod fairshare;
pub mod livetree;
mod multifactor;
mod ordered;
pub mod play;
mod rows;
mod sdrf;
pub mod smallest;
mod usage;

pub use book::Book;
pub use fairshare::{Accounts, Charging, FairshareRanker, FairshareSettings};
pub use multifactor::MultifactorRanker;
pub use ordered::{FifoRanker, KeyFn, KeyedRanker, StandingFn, StatelessRanker};
pub use sdrf::SdrfRanker;
pub use usage::UsageRanker;

use crate::model::{relative_weights, ModelError, Time};
use crate::rank::livetree::LiveTreeCounters;
use thiserror::Error;

/// The head task of a waiting client: what a ranker may order waiting clients by besides
/// their holdings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head {
    /// When the task arrived.
    pub arrival: Time,
    /// A sequence number unique to the task, breaking ties between equal arrivals.
    pub seq: u64,
    /// The task's size: its dominant share (largest fraction of any resource it asks for).
    pub size: f64,
    /// Its own priority points, for rankers that order tasks by a job priority besides their
    /// client's factor ([`MultifactorRanker`]): higher goes first; 0 by default.
    pub points: f64,
}

impl Head {
    /// The head task that arrived at `arrival` with sequence number `seq`, of size 0.
    pub fn new(arrival: Time, seq: u64) -> Head {
        Head {
            arrival,
            seq,
            size: 0.0,
            points: 0.0,
        }
    }

    /// The same task, of size `size` (its dominant share).
    pub fn with_size(self, size: f64) -> Head {
        Head { size, ..self }
    }

    /// The same task, with `points` of its own priority.
    pub fn with_points(self, points: f64) -> Head {
        Head { points, ..self }
    }
}

/// What a ranker knows of a client besides its holdings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// Relative weight ρ = n·w (1 for everyone when weights are equal).
    pub weight: f64,
    /// The fraction of every resource the client is entitled to (1/n when weights are equal);
    /// what it holds beyond this is excess, which SDRF turns into commitments.
    pub entitlement: f64,
}

impl Share {
    /// `clients` clients with equal weights: ρ = 1 and entitlement 1/n each.
    pub fn equal(clients: usize) -> Vec<Share> {
        let entitlement = 1.0 / clients.max(1) as f64;
        vec![
            Share {
                weight: 1.0,
                entitlement,
            };
            clients
        ]
    }

    /// Clients entitled to these fractions of the cluster (finite, ≥ 0), weighted by them; a
    /// client entitled to nothing (Slurm's 0 shares) gets a weight a billion times below the
    /// smallest entitled client's (never below the smallest normal number), so that weighted
    /// policies serve it after every entitled client that holds anything. When none is
    /// entitled to anything, all weigh the same.
    pub fn entitled(entitlements: &[f64]) -> Result<Vec<Share>, ModelError> {
        let smallest = entitlements
            .iter()
            .copied()
            .filter(|e| *e > 0.0)
            .fold(f64::INFINITY, f64::min);
        let floor = if smallest.is_finite() {
            (smallest * 1e-9).max(f64::MIN_POSITIVE)
        } else {
            1.0
        };
        let weights: Vec<f64> = entitlements
            .iter()
            .map(|&e| if e == 0.0 { floor } else { e })
            .collect();
        Share::weighted(&weights)
    }

    /// Clients with these weights (positive, finite): ρ = n·w/Σw, entitlement w/Σw.
    pub fn weighted(weights: &[f64]) -> Result<Vec<Share>, ModelError> {
        let n = weights.len() as f64;
        Ok(relative_weights(weights)?
            .into_iter()
            .map(|weight| Share {
                weight,
                entitlement: weight / n,
            })
            .collect())
    }
}

/// An input a ranker refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RankError {
    /// Time must not go backwards.
    #[error("time went backwards: {now} after {previous}")]
    TimeWentBack {
        /// The ranker's time.
        previous: Time,
        /// The earlier time it was given.
        now: Time,
    },
    /// A client that is not one of the ranker's, or holdings it cannot use.
    #[error("client {client}: {problem}")]
    Input {
        /// The client.
        client: u32,
        /// What is wrong and what was expected.
        problem: String,
    },
}

/// The clients with work waiting, in the order a scheduler serves them.
///
/// Clients are numbered `0..n` when the ranker is built. A client waits while it has a head
/// task ([`Ranker::update`] with `Some(head)`); only waiting clients are ranked.
pub trait Ranker {
    /// Brings time-dependent priorities to `now`; time never goes backwards.
    fn advance(&mut self, now: Time) -> Result<(), RankError>;
    /// A client's holdings (fractions of each resource's capacity, finite, not negative) or
    /// head task changed; `head` is `None` when it has nothing waiting.
    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError>;
    /// The waiting client to serve first.
    fn first(&self) -> Option<u32>;
    /// Every waiting client, first to last (those set aside excluded).
    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_>;
    /// A job of `client` started, accruing `rate` usage per second while it runs (the
    /// policy's metric as the engine prices it). Only rankers that charge jobs
    /// ([`FairshareRanker`]) keep it; the others order by holdings.
    fn job_started(&mut self, client: u32, rate: f64) -> Result<(), RankError> {
        let _ = (client, rate);
        Ok(())
    }
    /// A job of `client` that started at `rate` finished after running `ran_s` seconds.
    fn job_finished(&mut self, client: u32, rate: f64, ran_s: f64) -> Result<(), RankError> {
        let _ = (client, rate, ran_s);
        Ok(())
    }
    /// A waiting client's priority now (lower is served first), `None` if it is not waiting.
    fn priority(&self, client: u32) -> Option<f64>;
    /// Takes a client out of the current pass (a scheduler's skip rule).
    fn set_aside(&mut self, client: u32);
    /// Brings back every client set aside, once the pass is over.
    fn restore(&mut self);
    /// Every client's factor in [0, 1], larger served first, as Slurm's multifactor priority
    /// weighs it, for rankers whose policy computes one (the production fairshare factors);
    /// `None` by default (a policy whose order reaches a scheduler as factors per job, see
    /// [`factors`]).
    fn factors(&self) -> Option<Vec<f64>> {
        None
    }
    /// Live-tree counters, for rankers that keep one (none by default).
    fn livetree(&self) -> Option<LiveTreeCounters> {
        None
    }
    /// A copy in the present state, to try decisions on without changing this one (the Slurm
    /// adapter plays the order of starts out on one).
    fn boxed_clone(&self) -> Box<dyn Ranker>;
    /// What, while time stands still, a waiting client's place among the others depends on:
    /// where it is not what it holds, a play of starts at one instant is worked out at once
    /// ([`play::starts`]). Its holdings and head by default.
    fn place_depends_on(&self) -> PlaceDependsOn {
        PlaceDependsOn::HoldingsAndHead
    }
    /// From now until [`Ranker::settle_order`], the ranker may leave its order unsettled as
    /// it is told of many clients at one instant (no one asks who is first meanwhile), to
    /// settle it once; nothing by default.
    fn defer_order(&mut self) {}
    /// The order settled after [`Ranker::defer_order`]: as telling each change at once would
    /// have left it.
    fn settle_order(&mut self) {}
    /// A copy in the present state to play decisions out on at this one instant: it may
    /// leave out what only time's passing needs until it is advanced (the live tree's
    /// certificates); the same as [`Ranker::boxed_clone`] by default.
    fn frozen_clone(&self) -> Box<dyn Ranker> {
        self.boxed_clone()
    }
    /// Every client, first to last, as the ranker would order them now were each waiting:
    /// client `c` holding `holdings[c]` with `heads[c]` first. By default worked out on a copy
    /// ([`order_of_all_on_a_copy`]); a ranker that can tell without one gives the same order.
    fn order_of_all(&self, holdings: &[&[f64]], heads: &[Head]) -> Result<Vec<u32>, RankError> {
        order_of_all_on_a_copy(self, holdings, heads)
    }
    /// The [`Standing`] of each client of `asked` (in that order) were it waiting now holding
    /// what it is given with (what the ranker was last told of it) and its given head first,
    /// for rankers that order waiting clients by a standing of each one's own, whoever else
    /// waits (SDRF, decayed usage, the stateless policies, FIFO, smallest-first): a client's
    /// place among any others is then its standing's. `None` by default, and where the ranker
    /// cannot tell.
    fn standings(&self, asked: &[(u32, &[f64], Head)]) -> Option<Vec<Standing>> {
        let _ = asked;
        None
    }
}

/// What a waiting client's place among the others depends on while time stands still
/// ([`Ranker::place_depends_on`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceDependsOn {
    /// What it holds and its head (SDRF, DRF): the play of starts asks after every start.
    HoldingsAndHead,
    /// Its head alone, by its [`Standing`] (FIFO, smallest-first): a play of starts merges
    /// the clients' queues by their jobs' standings.
    HeadAlone,
    /// Neither (decayed usage: a client's level is its usage so far): a play of starts at
    /// one instant starts each client's jobs together, in the order the clients stand.
    Nothing,
}

/// Where a client stands among waiting clients at one instant, for rankers that order them by
/// a standing of each one's own ([`Ranker::standings`]): the lower is served first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// The priority, lower first.
    pub value: f64,
    /// What orders equal priorities, lower first.
    pub tie: f64,
    /// What orders equal ties, lower first: the head's arrival and sequence number, for
    /// rankers that order heads by them (FIFO, smallest-first); `(Time::ZERO, 0)` for the
    /// others.
    pub arrival: (Time, u64),
    /// The client, which orders the rest.
    pub client: u32,
}

impl Eq for Standing {}

impl Ord for Standing {
    fn cmp(&self, other: &Standing) -> std::cmp::Ordering {
        (self.value.total_cmp(&other.value))
            .then(self.tie.total_cmp(&other.tie))
            .then(self.arrival.cmp(&other.arrival))
            .then(self.client.cmp(&other.client))
    }
}

impl PartialOrd for Standing {
    fn partial_cmp(&self, other: &Standing) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Every client of `ranker`, first to last, were each waiting now (see
/// [`Ranker::order_of_all`]): a copy told every client's holdings and head, then asked.
pub fn order_of_all_on_a_copy<R: Ranker + ?Sized>(
    ranker: &R,
    holdings: &[&[f64]],
    heads: &[Head],
) -> Result<Vec<u32>, RankError> {
    let mut copy = ranker.boxed_clone();
    for (client, (held, head)) in holdings.iter().zip(heads).enumerate() {
        copy.update(client as u32, held, Some(*head))?;
    }
    Ok(copy.iter().collect())
}

/// Builds a ranker from outside the policy registry: what a library user, or a class written in
/// Python, plugs into an engine through [`PolicySpec::plugged`](crate::policy::PolicySpec::plugged).
pub trait RankerFactory: Send + Sync {
    /// A ranker of `shares.len()` clients over `resources` resources, placed in `accounts` when
    /// the run has an account tree.
    fn ranker(
        &self,
        resources: usize,
        shares: &[Share],
        accounts: Option<&Accounts>,
    ) -> Box<dyn Ranker>;
}

/// The time after `previous`, or the error when `now` is earlier.
fn forward(previous: Time, now: Time) -> Result<Time, RankError> {
    if now < previous {
        Err(RankError::TimeWentBack { previous, now })
    } else {
        Ok(now)
    }
}

/// Checks that `client` is one of `clients` and that its holdings are `resources` (when the
/// ranker knows how many) finite, non-negative amounts.
fn check_holdings(
    client: u32,
    holdings: &[f64],
    clients: usize,
    resources: Option<usize>,
) -> Result<(), RankError> {
    let problem = |problem: String| Err(RankError::Input { client, problem });
    if client as usize >= clients {
        return problem(format!("no such client; the ranker has {clients}"));
    }
    if let Some(m) = resources.filter(|m| *m != holdings.len()) {
        return problem(format!("expected {m} holdings, found {}", holdings.len()));
    }
    match holdings.iter().find(|h| !(h.is_finite() && **h >= 0.0)) {
        Some(h) => problem(format!(
            "holdings must be finite and not negative, found {h}"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
