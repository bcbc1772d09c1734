//! Decayed usage, the classic fairshare of batch systems: waiting users are served by how much
//! they consumed recently, relative to what they are entitled to. Usage is what a user held
//! over time (fractions of each resource × seconds), and it halves
//! every half-life, as Slurm's `PriorityDecayHalfLife` does.
//!
//! Old usage decays by the same factor for everyone, but users that hold resources keep
//! accruing while they wait, so the order drifts with time; the [`Ledger`] gives each waiting
//! user's usage in closed form when asked, with no ticks: O(m) per user for m resources. Who
//! is first is kept in a tournament of the waiting users' levels while time stands still:
//! built in O(n) at the first question after time moves, and each change then costs
//! O(log n). A user's level does not move while time stands still, whatever it holds
//! ([`PlaceDependsOn::Nothing`]), so a play of starts at one instant is worked out at once.

use super::{check_holdings, forward, Head, PlaceDependsOn, RankError, Ranker, Share, Standing};
use crate::model::Time;
use crate::priority::PriorityKey;
use crate::rank::livetree::tournament::{lower_key, Tournament};
use crate::usage::decay::Decay;
use crate::usage::ledger::Ledger;
use std::cell::RefCell;

/// Users by decayed usage over entitlement, ties by user.
#[derive(Debug, Clone)]
pub struct UsageRanker {
    now: Time,
    shares: Vec<Share>,
    resources: usize,
    /// Per user: its usage, accruing what it holds.
    ledger: Ledger,
    heads: Vec<Option<Head>>,
    aside: Vec<bool>,
    /// Who is first, as of the last question (`RefCell`: a question may build it).
    standings: RefCell<Option<Standings>>,
}

/// The waiting users' levels at one instant, and who of them is first.
#[derive(Debug, Clone)]
struct Standings {
    /// The instant they are for.
    at: Time,
    /// Each user's level, where it waits and is not set aside.
    levels: Vec<Option<f64>>,
    order: Tournament,
}

impl UsageRanker {
    /// Users with these shares over `resources` resources, usage halving every `half_life`
    /// seconds (∞: never forgotten).
    pub fn new(resources: usize, half_life: f64, shares: &[Share]) -> UsageRanker {
        let n = shares.len();
        UsageRanker {
            now: Time::ZERO,
            shares: shares.to_vec(),
            resources,
            ledger: Ledger::new(
                Decay::Continuous {
                    half_life_s: half_life,
                },
                n,
                resources,
            ),
            heads: vec![None; n],
            aside: vec![false; n],
            standings: RefCell::new(None),
        }
    }

    /// A user's decayed usage now: what it held, integrated under the decay; `None` for a
    /// client the ranker does not have.
    pub fn usage(&self, client: u32) -> Option<Vec<f64>> {
        ((client as usize) < self.shares.len()).then(|| self.usage_of(client as usize).collect())
    }

    /// [`UsageRanker::usage`] of a client known to be there.
    fn usage_of(&self, c: usize) -> impl Iterator<Item = f64> + '_ {
        self.ledger.usage_at(c, self.now.as_secs_f64())
    }

    /// The waiting users that are not set aside, with their keys, first to last.
    fn ranked(&self) -> Vec<(PriorityKey, u32)> {
        let mut ranked: Vec<(PriorityKey, u32)> = (0..self.heads.len() as u32)
            .filter(|&c| self.heads[c as usize].is_some() && !self.aside[c as usize])
            .map(|c| (PriorityKey(self.level(c)), c))
            .collect();
        ranked.sort_unstable();
        ranked
    }

    /// Dominant decayed usage over entitlement.
    fn level(&self, client: u32) -> f64 {
        let dominant = self.usage_of(client as usize).fold(0.0, f64::max);
        dominant / self.shares[client as usize].entitlement
    }

    /// The level of `client` if it is ranked now (waiting, not set aside).
    fn ranked_level(&self, client: u32) -> Option<f64> {
        let c = client as usize;
        (self.heads[c].is_some() && !self.aside[c]).then(|| self.level(client))
    }

    /// Every waiting user's level now, and who is first, worked out anew.
    fn standings_now(&self) -> Standings {
        let levels: Vec<Option<f64>> = (0..self.heads.len() as u32)
            .map(|c| self.ranked_level(c))
            .collect();
        let mut order = Tournament::plain();
        let present = |c: u32| levels[c as usize].is_some();
        order.fill(levels.len(), present, |a, b| {
            lower_key(level_key(&levels), a, b)
        });
        Standings {
            at: self.now,
            levels,
            order,
        }
    }

    /// `client` placed anew in the standings kept for now, if any (others are worked out
    /// anew when next asked).
    fn replace(&mut self, client: u32) {
        let (c, now) = (client as usize, self.now);
        let kept = self.standings.get_mut().as_ref().filter(|s| s.at == now);
        let Some(before) = kept.map(|s| s.levels[c]) else {
            *self.standings.get_mut() = None;
            return;
        };
        let ranked = self.heads[c].is_some() && !self.aside[c];
        // A user's usage at this instant does not depend on what it holds from now on: a level
        // kept for this instant stands.
        let level = match (ranked, before) {
            (false, _) => None,
            (true, Some(level)) => Some(level),
            (true, None) => Some(self.level(client)),
        };
        if level.map(f64::to_bits) == before.map(f64::to_bits) {
            return;
        }
        if let Some(kept) = self.standings.get_mut() {
            kept.levels[c] = level;
            let levels = &kept.levels;
            let key = level_key(levels);
            (kept.order).set(client, level.is_some(), |a, b| lower_key(&key, a, b));
        }
    }
}

/// Each user's key in the tournament of levels: its level, then itself (`None`: not ranked).
fn level_key(levels: &[Option<f64>]) -> impl Fn(u32) -> Option<(PriorityKey, u32)> + '_ {
    |c| levels[c as usize].map(|level| (PriorityKey(level), c))
}

impl Ranker for UsageRanker {
    fn boxed_clone(&self) -> Box<dyn Ranker> {
        Box::new(self.clone())
    }

    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        self.now = forward(self.now, now)?;
        Ok(())
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        check_holdings(client, holdings, self.heads.len(), Some(self.resources))?;
        let c = client as usize;
        let now = self.now.as_secs_f64();
        (self.ledger.set_rate(c, now, holdings)).map_err(|e| RankError::Input {
            client,
            problem: e.to_string(),
        })?;
        self.heads[c] = head;
        self.replace(client);
        Ok(())
    }

    fn first(&self) -> Option<u32> {
        let mut standings = self.standings.borrow_mut();
        if standings.as_ref().is_none_or(|s| s.at != self.now) {
            *standings = Some(self.standings_now());
        }
        standings.as_ref().and_then(|s| s.order.first())
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        Box::new(self.ranked().into_iter().map(|(_, c)| c))
    }

    fn priority(&self, client: u32) -> Option<f64> {
        self.heads.get(client as usize)?.as_ref()?;
        Some(self.level(client))
    }

    /// A user's usage so far does not move while time stands still, whatever it holds.
    fn place_depends_on(&self) -> PlaceDependsOn {
        PlaceDependsOn::Nothing
    }

    /// A user's level is its own decayed usage, whatever it holds now or who else waits.
    fn standings(&self, asked: &[(u32, &[f64], Head)]) -> Option<Vec<Standing>> {
        let standing = |&(client, _, _): &(u32, &[f64], Head)| {
            let known = (client as usize) < self.heads.len();
            known.then(|| Standing {
                value: self.level(client),
                tie: 0.0,
                arrival: (Time::ZERO, 0),
                client,
            })
        };
        asked.iter().map(standing).collect()
    }

    fn set_aside(&mut self, client: u32) {
        if let Some(aside) = self.aside.get_mut(client as usize) {
            *aside = true;
            self.replace(client);
        }
    }

    fn restore(&mut self) {
        for client in 0..self.aside.len() as u32 {
            if std::mem::replace(&mut self.aside[client as usize], false) {
                self.replace(client);
            }
        }
    }
}
