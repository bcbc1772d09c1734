//! Stateful DRF as a ranker: every client's commitments, and the live tree of those waiting.
//!
//! A client's commitment relaxes towards its excess `max(o − e, 0)` (holdings beyond its
//! entitlement) with time constant τ, whether or not it waits. Waiting clients live in the
//! kinetic [`LiveTree`], which knows the first of them as their priorities drift; a client that
//! stops waiting leaves the tree with its commitment, which is brought forward in closed form
//! when it returns.

use super::rows::Rows;
use super::{check_holdings, forward, Head, RankError, Ranker, Share, Standing};
use crate::model::Time;
use crate::priority::PriorityForm;
use crate::rank::livetree::{LiveTree, LiveTreeCounters, LiveTreeError, Member};
use crate::usage::decay::{exp_progress, tau_from_epsilon};

/// SDRF over the live tree.
#[derive(Debug, Clone)]
pub struct SdrfRanker {
    tree: LiveTree,
    time: Time,
    now: f64,
    tau: f64,
    shares: Vec<Share>,
    /// Per client: commitment at `anchor`, while the client is outside the tree.
    commitment: Rows,
    anchor: Vec<f64>,
    excess: Rows,
    holdings: Rows,
    waiting: Vec<bool>,
    aside: Vec<u32>,
}

impl SdrfRanker {
    /// SDRF for clients with these shares over `resources` resources, commitments relaxing
    /// with time constant `tau` seconds (∞: commitments never grow, and SDRF is DRF).
    pub fn new(resources: usize, tau: f64, form: PriorityForm, shares: &[Share]) -> SdrfRanker {
        // As many amounts as the tree keeps (at least one).
        let zeros = Rows::zeros(shares.len(), resources.max(1));
        SdrfRanker {
            tree: LiveTree::new(resources, tau, form),
            time: Time::ZERO,
            now: 0.0,
            tau,
            shares: shares.to_vec(),
            commitment: zeros.clone(),
            anchor: vec![0.0; shares.len()],
            excess: zeros.clone(),
            holdings: zeros,
            waiting: vec![false; shares.len()],
            aside: Vec::new(),
        }
    }

    /// SDRF with the paper's discount factor δ per second (τ = −1/ln δ, computed stably).
    pub fn with_delta(
        resources: usize,
        delta: f64,
        form: PriorityForm,
        shares: &[Share],
    ) -> SdrfRanker {
        SdrfRanker::new(resources, tau_from_epsilon(1.0 - delta), form, shares)
    }

    /// A client's commitments now (`None` for a client the ranker does not have).
    pub fn commitment(&mut self, client: u32) -> Option<Vec<f64>> {
        if let Some(c) = self.tree.commitment(client) {
            return Some(c);
        }
        let c = client as usize;
        if c >= self.shares.len() {
            return None;
        }
        self.reanchor(c);
        Some(self.commitment.row(c).to_vec())
    }

    /// Brings a client's own commitment record to now (only valid outside the tree).
    fn reanchor(&mut self, c: usize) {
        let progress = self.progress(c);
        for (commitment, e) in self
            .commitment
            .row_mut(c)
            .iter_mut()
            .zip(self.excess.row(c))
        {
            *commitment += (e - *commitment) * progress;
        }
        self.anchor[c] = self.now;
    }

    /// How far a client's commitments outside the tree have relaxed towards its excess since
    /// they were anchored (Eq. 6: `c + (ō − c) · progress`), one exponential for every resource.
    fn progress(&self, c: usize) -> f64 {
        exp_progress(self.now - self.anchor[c], self.tau)
    }

    /// A tree error as a ranker error about `client`.
    fn tree_error(client: u32) -> impl Fn(LiveTreeError) -> RankError {
        move |e| RankError::Input {
            client,
            problem: e.to_string(),
        }
    }

    fn leave_tree(&mut self, client: u32) {
        if let Some(c) = self.tree.remove(client) {
            self.commitment.row_mut(client as usize).copy_from_slice(&c);
            self.anchor[client as usize] = self.now;
        }
    }

    fn enter_tree(&mut self, client: u32) -> Result<(), RankError> {
        let c = client as usize;
        self.reanchor(c);
        let member = Member {
            weight: self.shares[c].weight,
            allocation: self.holdings.row(c).to_vec(),
            excess: self.excess.row(c).to_vec(),
            commitment: self.commitment.row(c).to_vec(),
        };
        self.tree
            .insert(client, member)
            .map_err(Self::tree_error(client))
    }

    fn set_holdings(&mut self, c: usize, holdings: &[f64]) {
        self.holdings.row_mut(c).copy_from_slice(holdings);
        let entitled = self.shares[c].entitlement;
        for (e, o) in self.excess.row_mut(c).iter_mut().zip(holdings) {
            *e = (o - entitled).max(0.0);
        }
    }
}

impl Ranker for SdrfRanker {
    fn boxed_clone(&self) -> Box<dyn Ranker> {
        Box::new(self.clone())
    }

    fn frozen_clone(&self) -> Box<dyn Ranker> {
        let mut copy = self.clone();
        copy.tree.freeze();
        Box::new(copy)
    }

    fn defer_order(&mut self) {
        self.tree.defer();
    }

    fn settle_order(&mut self) {
        self.tree.settle();
    }

    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        let previous = self.time;
        self.time = forward(self.time, now)?;
        self.now = now.as_secs_f64();
        self.tree
            .advance(self.now)
            .map_err(|_| RankError::TimeWentBack { previous, now })
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        let resources = self.tree.resources();
        check_holdings(client, holdings, self.shares.len(), Some(resources))?;
        let c = client as usize;
        if self.tree.contains(client) {
            if head.is_some() {
                if self.holdings.row(c) == holdings {
                    // Only the head moved (a job passed over): the priority does not depend on it.
                    return Ok(());
                }
                self.set_holdings(c, holdings);
                let (o, e) = (self.holdings.row(c), self.excess.row(c));
                self.tree
                    .update(client, o, e)
                    .map_err(Self::tree_error(client))?;
            } else {
                self.leave_tree(client);
                self.set_holdings(c, holdings);
            }
        } else {
            self.reanchor(c);
            self.set_holdings(c, holdings);
            if head.is_some() {
                self.enter_tree(client)?;
            }
        }
        self.waiting[c] = head.is_some();
        Ok(())
    }

    fn first(&self) -> Option<u32> {
        self.tree.first()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        Box::new(self.tree.iter())
    }

    fn priority(&self, client: u32) -> Option<f64> {
        self.tree.priority(client)
    }

    fn set_aside(&mut self, client: u32) {
        if self.tree.contains(client) {
            self.leave_tree(client);
            self.aside.push(client);
        }
    }

    fn restore(&mut self) {
        for client in std::mem::take(&mut self.aside) {
            if self.waiting[client as usize] {
                // Holdings were checked when they were set, so the tree takes the client back.
                let _ = self.enter_tree(client);
            }
        }
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        Some(self.tree.counters())
    }

    /// SDRF orders by holdings and commitments alone: sorted by their standings, with no
    /// copy of the tree; holdings the ranker was not told are worked out on a copy.
    fn order_of_all(&self, holdings: &[&[f64]], heads: &[Head]) -> Result<Vec<u32>, RankError> {
        let asked: Vec<(u32, &[f64], Head)> = (0..holdings.len() as u32)
            .zip(holdings.iter().copied())
            .zip(heads)
            .map(|((client, held), &head)| (client, held, head))
            .collect();
        match self.standings(&asked) {
            Some(mut standings) if holdings.len() == heads.len() => {
                standings.sort_unstable();
                Ok(standings.into_iter().map(|s| s.client).collect())
            }
            _ => super::order_of_all_on_a_copy(self, holdings, heads),
        }
    }

    /// Each client stands where its key now puts it: the tree's for those in it, the key it
    /// would enter with for the others (their commitments brought to now, as `enter_tree`
    /// brings them). Only for the holdings the ranker was told, and weights the tree takes.
    fn standings(&self, asked: &[(u32, &[f64], Head)]) -> Option<Vec<Standing>> {
        let told = |&(client, holdings, _): &(u32, &[f64], Head)| {
            let c = client as usize;
            (self.shares.get(c)).is_some_and(|s| s.weight.is_finite() && s.weight > 0.0)
                && holdings == self.holdings.row(c)
        };
        if !asked.iter().all(told) {
            return None;
        }
        let mut lines = Vec::new();
        let mut commitment = Vec::with_capacity(self.tree.resources());
        let standing = |&(client, _, _): &(u32, &[f64], Head)| {
            if let Some(standing) = self.tree.standing(client) {
                return standing;
            }
            let c = client as usize;
            let progress = self.progress(c);
            commitment.clear();
            commitment.extend(
                (self.commitment.row(c).iter().zip(self.excess.row(c)))
                    .map(|(commitment, e)| commitment + (e - commitment) * progress),
            );
            let vectors = [self.holdings.row(c), self.excess.row(c), &commitment];
            (self.tree).entering_standing((client, self.shares[c].weight), vectors, &mut lines)
        };
        Some(asked.iter().map(standing).collect())
    }
}
