//! The cluster engine's pluggable parts besides the policy: the **discipline** decides what
//! may start in a scheduling pass, the **placement** decides on which nodes.
//!
//! The engine ranks users through the policy's [`Ranker`](fairshare_core::rank::Ranker) and
//! hands the discipline a [`Pass`]: the waiting jobs in the policy's order, one candidate per
//! user, and the means to start a candidate now, reserve it a later start, pass over it to the
//! user's next job, or set the user aside. [`Fill`] is the SDRF paper's progressive filling;
//! [`Easy`] and [`Conservative`] are the backfilling of batch systems, which reserve starts
//! from the running jobs' requested walltimes and let later jobs jump ahead only where they
//! delay no reservation. Each starting job asks the [`Placement`] for nodes one at a time:
//! [`FirstFit`] or [`BestFit`].

use fairshare_core::alloc::tasks::{Blocking, FIT_SLACK};
use fairshare_core::choice::Choice;
use std::fmt;
use std::sync::Arc;

/// A node as a placement sees it: capacity and use as fractions of the cluster's total, and
/// its speed.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// What the node offers, as a fraction of the cluster's total of each resource.
    pub capacity: Vec<f64>,
    /// What running tasks use of it, in the same units.
    pub used: Vec<f64>,
    /// Relative speed: a task runs `runtime / speed` here.
    pub speed: f64,
    /// Whether the job being placed may not use this node (its properties do not match, the
    /// job already holds it, or the job wants it whole and it is not empty).
    pub closed: bool,
}

impl Node {
    /// Whether a task of normalised `demand` fits beside what runs here now.
    pub fn has_room(&self, demand: &[f64]) -> bool {
        !self.closed
            && self
                .used
                .iter()
                .zip(demand)
                .zip(&self.capacity)
                .all(|((u, d), c)| u + d <= c + FIT_SLACK)
    }

    /// Whether nothing runs here.
    pub fn is_empty(&self) -> bool {
        self.used.iter().all(|u| *u <= FIT_SLACK)
    }
}

/// Chooses the node a task, or one node's part of a parallel job, starts on.
pub trait Placement: fmt::Debug + Send + Sync {
    /// A node with room ([`Node::has_room`]) for normalised `demand`, given every node's state;
    /// `None` when no node has room.
    fn select_node(&self, demand: &[f64], nodes: &[Node]) -> Option<usize>;
}

/// The first node, in catalogue order, with room for the task.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstFit;

impl Placement for FirstFit {
    fn select_node(&self, demand: &[f64], nodes: &[Node]) -> Option<usize> {
        nodes.iter().position(|n| n.has_room(demand))
    }
}

/// The node with room whose free amount left after the task is smallest (summed over
/// resources, in fractions of the cluster), the first such in catalogue order on ties: packs
/// small jobs onto busy nodes and keeps empty nodes for wide ones.
#[derive(Debug, Clone, Copy, Default)]
pub struct BestFit;

impl Placement for BestFit {
    fn select_node(&self, demand: &[f64], nodes: &[Node]) -> Option<usize> {
        let left = |n: &Node| -> f64 {
            let free = n.capacity.iter().zip(&n.used).zip(demand);
            free.map(|((c, u), d)| c - u - d).sum()
        };
        let fitting = nodes.iter().enumerate().filter(|(_, n)| n.has_room(demand));
        fitting
            .min_by(|(i, a), (j, b)| left(a).total_cmp(&left(b)).then(i.cmp(j)))
            .map(|(i, _)| i)
    }
}

/// One scheduling pass as a discipline drives it: the waiting jobs in the policy's order, one
/// candidate per user (the user's oldest job not yet passed over in this pass).
pub trait Pass {
    /// The user whose candidate comes first in the policy's order, if any is left.
    fn first(&mut self) -> Option<u32>;
    /// Starts the user's candidate now if it has room and delays no reservation; whether the
    /// pass may go on to the next choice: true when the candidate started, or when its queue
    /// is at its limit and it was passed over (a held-back job blocks nobody).
    fn start(&mut self, user: u32) -> bool;
    /// Gives the user's candidate a reservation at the earliest time it fits without delaying
    /// another; a candidate that holds one keeps it. Whether it holds one: not when its queue
    /// is at its limit (no time can be promised) or no time fits.
    fn reserve(&mut self, user: u32) -> bool;
    /// Leaves the user's candidate waiting: the user's next job is its candidate for the rest
    /// of the pass (none left: the user is set aside).
    fn pass_over(&mut self, user: u32);
    /// Takes the user out of the rest of the pass.
    fn set_aside(&mut self, user: u32);
    /// Whether nothing more can start now, whatever the order (no node has any free room).
    fn full(&self) -> bool;
    /// How many waiting jobs hold no reservation.
    fn unreserved(&self) -> u64;
}

/// How long a discipline's reservations last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservations {
    /// None are made.
    None,
    /// Made in a pass and dropped when it ends (the next pass computes them again).
    ForThePass,
    /// Kept until the job starts, moved only earlier when jobs end before their walltime.
    UntilStart,
}

/// Runs one scheduling pass: starts jobs in the policy's order while it allows.
pub trait Discipline: fmt::Debug + Send + Sync {
    /// Whether and how long the discipline's reservations last; the engine keeps the
    /// availability profile only for disciplines that make them.
    fn reservations(&self) -> Reservations;
    /// Starts what may start now.
    fn pass(&self, pass: &mut dyn Pass);
}

/// Progressive filling (SDRF's Algorithm 1): serve the first user's next task while it fits;
/// when it does not, stop (head-of-line, the paper's rule) or skip that user for the pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill {
    /// What happens when the chosen user's task does not fit.
    pub blocking: Blocking,
}

impl Discipline for Fill {
    fn reservations(&self) -> Reservations {
        Reservations::None
    }

    fn pass(&self, pass: &mut dyn Pass) {
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            match self.blocking {
                Blocking::HeadOfLine => break,
                Blocking::Skip => pass.set_aside(user),
            }
        }
    }
}

/// EASY backfilling (Lifka's, as Slurm, Maui and the Alea simulator run it): jobs start in the
/// policy's order while they fit; the first that does not gets a reservation at the earliest
/// time enough resources free up by the running jobs' walltimes; every later job may start now
/// only if it does not delay that reservation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Easy;

impl Discipline for Easy {
    fn reservations(&self) -> Reservations {
        Reservations::ForThePass
    }

    fn pass(&self, pass: &mut dyn Pass) {
        let mut reserved = false;
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            if !reserved {
                reserved = pass.reserve(user);
            }
            if pass.full() {
                break;
            }
            pass.pass_over(user);
        }
    }
}

/// Conservative backfilling (Mu'alem and Feitelson): every waiting job holds a reservation,
/// made in the policy's order when it is first met and only ever moved earlier; a job may start
/// now only if it delays no reservation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conservative;

impl Discipline for Conservative {
    fn reservations(&self) -> Reservations {
        Reservations::UntilStart
    }

    fn pass(&self, pass: &mut dyn Pass) {
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            pass.reserve(user);
            if pass.full() && pass.unreserved() == 0 {
                break;
            }
            pass.pass_over(user);
        }
    }
}

/// The disciplines by name, as `--scheduler` chooses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheduler {
    /// [`Fill`], with a [`Blocking`] rule.
    #[default]
    Fill,
    /// [`Easy`].
    Easy,
    /// [`Conservative`].
    Conservative,
}

impl Scheduler {
    /// The discipline, filling by `blocking` when it is [`Scheduler::Fill`].
    pub fn discipline(self, blocking: Blocking) -> Arc<dyn Discipline> {
        match self {
            Scheduler::Fill => Arc::new(Fill { blocking }),
            Scheduler::Easy => Arc::new(Easy),
            Scheduler::Conservative => Arc::new(Conservative),
        }
    }
}

impl Choice for Scheduler {
    const ALL: &'static [Scheduler] = &[Scheduler::Fill, Scheduler::Easy, Scheduler::Conservative];

    fn name(self) -> &'static str {
        match self {
            Scheduler::Fill => "fill",
            Scheduler::Easy => "easy",
            Scheduler::Conservative => "conservative",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Scheduler::Fill => "Progressive filling in the policy's order (the SDRF paper's simulator; --rule says what a blocked job does)",
            Scheduler::Easy => "EASY backfilling: the first blocked job is reserved a start, later jobs may not delay it",
            Scheduler::Conservative => "Conservative backfilling: every waiting job holds a reservation none may delay",
        }
    }
}

/// What happens to a job that runs past the walltime it asked for, as `--overrun` chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overrun {
    /// It is killed at its walltime, as batch systems (and Alea) do: it runs only that long.
    #[default]
    Kill,
    /// It runs its recorded runtime in full, its request raised to that runtime.
    Extend,
}

impl Choice for Overrun {
    const ALL: &'static [Overrun] = &[Overrun::Kill, Overrun::Extend];

    fn name(self) -> &'static str {
        match self {
            Overrun::Kill => "kill",
            Overrun::Extend => "extend",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Overrun::Kill => "a job that ran longer than its walltime request is killed at the request, as sites do",
            Overrun::Extend => "a job that ran longer than its walltime request runs in full, its request raised to its runtime",
        }
    }
}

/// The placements by name, as `--placement` chooses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fit {
    /// [`FirstFit`].
    #[default]
    First,
    /// [`BestFit`].
    Best,
}

impl Fit {
    /// The placement.
    pub fn placement(self) -> Arc<dyn Placement> {
        match self {
            Fit::First => Arc::new(FirstFit),
            Fit::Best => Arc::new(BestFit),
        }
    }
}

impl Choice for Fit {
    const ALL: &'static [Fit] = &[Fit::First, Fit::Best];

    fn name(self) -> &'static str {
        match self {
            Fit::First => "first",
            Fit::Best => "best",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Fit::First => "The first node, in catalogue order, with room",
            Fit::Best => "The node with room that is left fullest",
        }
    }
}
