//! Rankers whose keys change only when a client does: FIFO by head-task arrival, and the
//! stateless policies (DRF, weighted DRF, asset), whose priorities move only with holdings.

use super::{check_holdings, forward, Head, RankError, Ranker, Share};
use crate::livetree::LiveTreeCounters;
use crate::model::Time;
use crate::policy::{ClientView, Policy, PriorityKey};
use std::collections::BTreeSet;

/// Waiting clients in an ordered set under a key computed from holdings and head task: the
/// shape of every ranker whose keys change only when a client does.
#[derive(Debug, Clone)]
pub(super) struct Ordered<K> {
    now: Time,
    keys: Vec<Option<K>>,
    heads: Vec<Option<Head>>,
    holdings: Vec<Vec<f64>>,
    order: BTreeSet<(K, u32)>,
    aside: Vec<u32>,
}

impl<K: Ord + Copy> Ordered<K> {
    /// No client waiting, of `clients`.
    pub(super) fn new(clients: usize) -> Self {
        Ordered {
            now: Time::ZERO,
            keys: vec![None; clients],
            heads: vec![None; clients],
            holdings: vec![Vec::new(); clients],
            order: BTreeSet::new(),
            aside: Vec::new(),
        }
    }

    /// Moves time forward (the keys do not depend on it).
    pub(super) fn advance(&mut self, now: Time) -> Result<(), RankError> {
        self.now = forward(self.now, now)?;
        Ok(())
    }

    /// The key of a waiting client.
    pub(super) fn key(&self, client: u32) -> Option<K> {
        self.keys.get(client as usize).copied().flatten()
    }

    /// How many clients there are.
    pub(super) fn clients(&self) -> usize {
        self.heads.len()
    }

    fn take_out(&mut self, client: u32) {
        if let Some(key) = self.keys[client as usize].take() {
            self.order.remove(&(key, client));
        }
    }

    fn put_in(&mut self, client: u32, key_of: impl Fn(u32, &[f64], &Head) -> K) {
        let c = client as usize;
        if let Some(head) = &self.heads[c] {
            let key = key_of(client, &self.holdings[c], head);
            self.keys[c] = Some(key);
            self.order.insert((key, client));
        }
    }

    pub(super) fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
        key_of: impl Fn(u32, &[f64], &Head) -> K,
    ) {
        let c = client as usize;
        self.take_out(client);
        self.holdings[c].clear();
        self.holdings[c].extend_from_slice(holdings);
        self.heads[c] = head;
        self.put_in(client, key_of);
    }

    pub(super) fn set_aside(&mut self, client: u32) {
        self.take_out(client);
        self.aside.push(client);
    }

    pub(super) fn restore(&mut self, key_of: impl Fn(u32, &[f64], &Head) -> K) {
        for client in std::mem::take(&mut self.aside) {
            self.put_in(client, &key_of);
        }
    }

    pub(super) fn first(&self) -> Option<u32> {
        self.order.first().map(|(_, c)| *c)
    }

    pub(super) fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        Box::new(self.order.iter().map(|(_, c)| *c))
    }
}

/// First come, first served: waiting clients by the arrival of their head task.
#[derive(Debug, Clone)]
pub struct FifoRanker {
    inner: Ordered<(Time, u64)>,
}

impl FifoRanker {
    /// A FIFO ranker for `clients` clients.
    pub fn new(clients: usize) -> FifoRanker {
        FifoRanker {
            inner: Ordered::new(clients),
        }
    }
}

/// The FIFO key: when the head task arrived, then its sequence number.
fn arrival(_: u32, _: &[f64], head: &Head) -> (Time, u64) {
    (head.arrival, head.seq)
}

impl Ranker for FifoRanker {
    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        self.inner.advance(now)
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        check_holdings(client, holdings, self.inner.clients(), None)?;
        self.inner.update(client, holdings, head, arrival);
        Ok(())
    }

    fn first(&self) -> Option<u32> {
        self.inner.first()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        self.inner.iter()
    }

    /// The head task's arrival, in seconds.
    fn priority(&self, client: u32) -> Option<f64> {
        let (time, _) = self.inner.key(client)?;
        Some(time.as_secs_f64())
    }

    fn set_aside(&mut self, client: u32) {
        self.inner.set_aside(client);
    }

    fn restore(&mut self) {
        self.inner.restore(arrival);
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        None
    }
}

/// A stateless policy (DRF, weighted DRF, asset fairness): priorities from holdings and
/// weights alone.
#[derive(Debug, Clone)]
pub struct StatelessRanker {
    policy: Policy,
    shares: Vec<Share>,
    inner: Ordered<PriorityKey>,
}

impl StatelessRanker {
    /// A ranker of clients with these shares under `policy` (commitments, which stateless
    /// policies do not have, count as zero).
    pub fn new(policy: Policy, shares: &[Share]) -> StatelessRanker {
        StatelessRanker {
            policy,
            shares: shares.to_vec(),
            inner: Ordered::new(shares.len()),
        }
    }

    /// The key of a client holding `holdings`.
    fn key(policy: Policy, shares: &[Share]) -> impl Fn(u32, &[f64], &Head) -> PriorityKey + '_ {
        move |client, holdings, _| {
            let view = ClientView {
                weight: shares[client as usize].weight,
                allocation: holdings,
                commitment: &[],
            };
            PriorityKey(policy.priority(&view))
        }
    }
}

impl Ranker for StatelessRanker {
    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        self.inner.advance(now)
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        check_holdings(client, holdings, self.shares.len(), None)?;
        let key = Self::key(self.policy, &self.shares);
        self.inner.update(client, holdings, head, key);
        Ok(())
    }

    fn first(&self) -> Option<u32> {
        self.inner.first()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        self.inner.iter()
    }

    fn priority(&self, client: u32) -> Option<f64> {
        Some(self.inner.key(client)?.0)
    }

    fn set_aside(&mut self, client: u32) {
        self.inner.set_aside(client);
    }

    fn restore(&mut self) {
        let key = Self::key(self.policy, &self.shares);
        self.inner.restore(key);
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        None
    }
}
