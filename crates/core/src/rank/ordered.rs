//! Rankers whose keys change only when a client does: FIFO by head-task arrival,
//! smallest-first by its size, and the stateless policies (DRF, weighted DRF, asset), whose
//! priorities move only with holdings.

use super::{check_holdings, forward, Head, PlaceDependsOn, RankError, Ranker, Share, Standing};
use crate::model::Time;
use crate::priority::{ClientView, Policy, PriorityKey};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

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
        self.holdings[c].clear();
        self.holdings[c].extend_from_slice(holdings);
        let key = head.as_ref().map(|h| key_of(client, &self.holdings[c], h));
        self.heads[c] = head;
        // The same key (a stateless policy's client passed over in a pass: its holdings, and
        // so its key, did not change) leaves the order as it is.
        if key == self.keys[c] {
            return;
        }
        self.take_out(client);
        if let Some(key) = key {
            self.keys[c] = Some(key);
            self.order.insert((key, client));
        }
    }

    /// Takes a waiting client out until [`Ordered::restore`]; others are ignored.
    pub(super) fn set_aside(&mut self, client: u32) {
        if self.key(client).is_some() {
            self.take_out(client);
            self.aside.push(client);
        }
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

/// Computes a waiting client's key from its index, holdings and head task.
pub type KeyFn<K> = Arc<dyn Fn(u32, &[f64], &Head) -> K + Send + Sync>;

/// A key's [`Standing`] (value, tie, and head's arrival and sequence), in the key's order.
pub type StandingFn<K> = fn(&K) -> (f64, f64, (Time, u64));

/// A ranker whose keys change only when a client does: waiting clients ordered by a key
/// computed from holdings and head task, ties by client. FIFO, the stateless policies and
/// smallest-first are all this with another key.
#[derive(Clone)]
pub struct KeyedRanker<K> {
    inner: Ordered<K>,
    key: KeyFn<K>,
    priority: fn(&K) -> f64,
    /// The key as a [`Standing`], where the ranker has one: each client then stands by its
    /// own key, whoever else waits.
    standing: Option<StandingFn<K>>,
    /// What a client's key depends on besides time.
    place: PlaceDependsOn,
}

impl<K: Ord + Copy + 'static> KeyedRanker<K> {
    /// A ranker of `clients` clients by `key`, whose priority (as [`Ranker::priority`]
    /// reports it) is `priority` of the key.
    pub fn with_key(clients: usize, key: KeyFn<K>, priority: fn(&K) -> f64) -> Self {
        KeyedRanker {
            inner: Ordered::new(clients),
            key,
            priority,
            standing: None,
            place: PlaceDependsOn::HoldingsAndHead,
        }
    }

    /// The same ranker, whose clients stand by `standing` of their keys: it must order as
    /// the keys do, each key to numbers of its own.
    pub fn with_standing(self, standing: StandingFn<K>) -> Self {
        KeyedRanker {
            standing: Some(standing),
            ..self
        }
    }

    /// The same ranker, told that its key does not depend on what a client holds.
    pub fn on_heads_alone(self) -> Self {
        KeyedRanker {
            place: PlaceDependsOn::HeadAlone,
            ..self
        }
    }
}

impl<K: fmt::Debug> fmt::Debug for KeyedRanker<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedRanker")
            .field("order", &self.inner.order)
            .finish_non_exhaustive()
    }
}

/// First come, first served: waiting clients by the arrival of their head task.
pub type FifoRanker = KeyedRanker<(Time, u64)>;

impl FifoRanker {
    /// A FIFO ranker for `clients` clients (its priority is the head task's arrival, seconds).
    /// A client stands by its head's arrival, then its sequence number.
    pub fn new(clients: usize) -> FifoRanker {
        KeyedRanker::with_key(
            clients,
            Arc::new(|_, _, head: &Head| (head.arrival, head.seq)),
            |(arrival, _)| arrival.as_secs_f64(),
        )
        .with_standing(|&head| (0.0, 0.0, head))
        .on_heads_alone()
    }
}

/// A stateless policy (DRF, weighted DRF, asset fairness): priorities from holdings and
/// weights alone.
pub type StatelessRanker = KeyedRanker<PriorityKey>;

impl StatelessRanker {
    /// A ranker of clients with these shares under `policy` (commitments, which stateless
    /// policies do not have, count as zero); a client stands by the priority of its
    /// holdings.
    pub fn new(policy: Policy, shares: &[Share]) -> StatelessRanker {
        let weights: Vec<f64> = shares.iter().map(|s| s.weight).collect();
        let key = move |client: u32, holdings: &[f64], _: &Head| {
            let view = ClientView {
                weight: weights[client as usize],
                allocation: holdings,
                commitment: &[],
            };
            PriorityKey(policy.priority(&view))
        };
        KeyedRanker::with_key(shares.len(), Arc::new(key), |key| key.0)
            .with_standing(|key| (key.0, 0.0, (Time::ZERO, 0)))
    }
}

impl<K: Ord + Copy + 'static> Ranker for KeyedRanker<K> {
    fn boxed_clone(&self) -> Box<dyn Ranker> {
        Box::new(self.clone())
    }

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
        self.inner.update(client, holdings, head, self.key.as_ref());
        Ok(())
    }

    fn first(&self) -> Option<u32> {
        self.inner.first()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        self.inner.iter()
    }

    fn priority(&self, client: u32) -> Option<f64> {
        self.inner.key(client).map(|k| (self.priority)(&k))
    }

    fn set_aside(&mut self, client: u32) {
        self.inner.set_aside(client);
    }

    fn restore(&mut self) {
        self.inner.restore(self.key.as_ref());
    }

    fn place_depends_on(&self) -> PlaceDependsOn {
        self.place
    }

    /// Where the ranker has standings, each client stands by the key of the holdings and
    /// head it is given, whatever it was told.
    fn standings(&self, asked: &[(u32, &[f64], Head)]) -> Option<Vec<Standing>> {
        let of_key = self.standing?;
        let clients = self.inner.clients();
        let standing = |&(client, holdings, head): &(u32, &[f64], Head)| {
            check_holdings(client, holdings, clients, None).ok()?;
            let (value, tie, arrival) = of_key(&(self.key)(client, holdings, &head));
            Some(Standing {
                value,
                tie,
                arrival,
                client,
            })
        };
        asked.iter().map(standing).collect()
    }
}
