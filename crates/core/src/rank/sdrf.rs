//! Stateful DRF as a ranker: every client's commitments, and the live tree of those waiting.
//!
//! A client's commitment relaxes towards its excess `max(o − e, 0)` (holdings beyond its
//! entitlement) with time constant τ, whether or not it waits. Waiting clients live in the
//! kinetic [`LiveTree`], which knows the first of them as their priorities drift; a client that
//! stops waiting leaves the tree with its commitment, which is brought forward in closed form
//! when it returns.

use super::{check_holdings, forward, Head, RankError, Ranker, Share};
use crate::model::Time;
use crate::priority::PriorityForm;
use crate::rank::livetree::{LiveTree, LiveTreeCounters, LiveTreeError, Member};
use crate::usage::decay::{exp_advance, tau_from_epsilon};

/// SDRF over the live tree.
#[derive(Debug, Clone)]
pub struct SdrfRanker {
    tree: LiveTree,
    time: Time,
    now: f64,
    tau: f64,
    shares: Vec<Share>,
    /// Per client: commitment at `anchor`, while the client is outside the tree.
    commitment: Vec<Vec<f64>>,
    anchor: Vec<f64>,
    excess: Vec<Vec<f64>>,
    holdings: Vec<Vec<f64>>,
    waiting: Vec<bool>,
    aside: Vec<u32>,
}

impl SdrfRanker {
    /// SDRF for clients with these shares over `resources` resources, commitments relaxing
    /// with time constant `tau` seconds (∞: commitments never grow, and SDRF is DRF).
    pub fn new(resources: usize, tau: f64, form: PriorityForm, shares: &[Share]) -> SdrfRanker {
        let zeros = vec![vec![0.0; resources]; shares.len()];
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
        if c >= self.commitment.len() {
            return None;
        }
        self.reanchor(c);
        Some(self.commitment[c].clone())
    }

    /// Brings a client's own commitment record to now (only valid outside the tree).
    fn reanchor(&mut self, c: usize) {
        let dt = self.now - self.anchor[c];
        for (commitment, e) in self.commitment[c].iter_mut().zip(&self.excess[c]) {
            *commitment = exp_advance(*commitment, *e, dt, self.tau);
        }
        self.anchor[c] = self.now;
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
            self.commitment[client as usize] = c;
            self.anchor[client as usize] = self.now;
        }
    }

    fn enter_tree(&mut self, client: u32) -> Result<(), RankError> {
        let c = client as usize;
        self.reanchor(c);
        let member = Member {
            weight: self.shares[c].weight,
            allocation: self.holdings[c].clone(),
            excess: self.excess[c].clone(),
            commitment: self.commitment[c].clone(),
        };
        self.tree
            .insert(client, member)
            .map_err(Self::tree_error(client))
    }

    fn set_holdings(&mut self, c: usize, holdings: &[f64]) {
        self.holdings[c].clear();
        self.holdings[c].extend_from_slice(holdings);
        let entitled = self.shares[c].entitlement;
        for (e, o) in self.excess[c].iter_mut().zip(holdings) {
            *e = (o - entitled).max(0.0);
        }
    }
}

impl Ranker for SdrfRanker {
    fn boxed_clone(&self) -> Box<dyn Ranker> {
        Box::new(self.clone())
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
                if self.holdings[c] == holdings {
                    // Only the head moved (a job passed over): the priority does not depend on it.
                    return Ok(());
                }
                self.set_holdings(c, holdings);
                let (o, e) = (&self.holdings[c], &self.excess[c]);
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
}
