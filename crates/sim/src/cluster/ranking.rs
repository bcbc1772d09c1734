//! The order in which the cluster engine serves waiting users, one implementation per kind of
//! policy: FIFO by head-task arrival, stateless policies whose priorities move only when
//! allocations do, and SDRF, whose priorities drift continuously and live in the live tree.

use crate::policy::Ranking as Kind;
use fairshare_core::decay::{exp_advance, tau_from_epsilon};
use fairshare_core::livetree::{LiveTree, LiveTreeCounters, Member};
use fairshare_core::model::Time;
use fairshare_core::policy::{ClientView, PriorityKey};
use std::collections::BTreeSet;

/// The head task of a waiting user: when it arrived and its arrival sequence number.
pub type Head = (Time, u64);

/// Users with pending tasks, in the order a pass serves them.
pub trait Ranking {
    /// Brings time-dependent priorities to `now`.
    fn advance(&mut self, now: Time);
    /// A user's allocation or head task changed; `head` is `None` when it has nothing pending.
    fn update(&mut self, user: u32, allocation: &[f64], head: Option<Head>);
    /// The waiting user with the lowest priority.
    fn first(&self) -> Option<u32>;
    /// Takes a user out of the current pass (the skip rule).
    fn set_aside(&mut self, user: u32);
    /// Brings back every user set aside, once the pass is over.
    fn restore(&mut self);
    /// Live-tree counters, for rankings that use one.
    fn livetree(&self) -> Option<LiveTreeCounters>;
}

/// The ranking for a policy, for `users` registered users sharing `resources` resources.
pub fn for_policy(kind: Kind, users: usize, resources: usize) -> Box<dyn Ranking> {
    match kind {
        Kind::Fifo => Box::new(Ordered::new(users, |_, head: &Head| *head)),
        Kind::Stateless(policy) => {
            Box::new(Ordered::new(users, move |allocation: &[f64], _: &Head| {
                let view = ClientView {
                    weight: 1.0,
                    allocation,
                    commitment: &[],
                };
                PriorityKey(policy.priority(&view))
            }))
        }
        Kind::Sdrf { epsilon, form } => {
            let tau = tau_from_epsilon(epsilon);
            Box::new(Stateful::new(
                LiveTree::new(resources, tau, form),
                tau,
                users,
                resources,
            ))
        }
    }
}

/// Users in an ordered set under a key that changes only when the user changes.
struct Ordered<K, F> {
    key_of: F,
    keys: Vec<Option<K>>,
    heads: Vec<Option<Head>>,
    allocations: Vec<Vec<f64>>,
    order: BTreeSet<(K, u32)>,
    aside: Vec<u32>,
}

impl<K: Ord + Copy, F: Fn(&[f64], &Head) -> K> Ordered<K, F> {
    fn new(users: usize, key_of: F) -> Self {
        Ordered {
            key_of,
            keys: vec![None; users],
            heads: vec![None; users],
            allocations: vec![Vec::new(); users],
            order: BTreeSet::new(),
            aside: Vec::new(),
        }
    }

    fn take_out(&mut self, user: u32) {
        if let Some(key) = self.keys[user as usize].take() {
            self.order.remove(&(key, user));
        }
    }

    fn put_in(&mut self, user: u32) {
        let u = user as usize;
        if let Some(head) = &self.heads[u] {
            let key = (self.key_of)(&self.allocations[u], head);
            self.keys[u] = Some(key);
            self.order.insert((key, user));
        }
    }
}

impl<K: Ord + Copy, F: Fn(&[f64], &Head) -> K> Ranking for Ordered<K, F> {
    fn advance(&mut self, _now: Time) {}

    fn update(&mut self, user: u32, allocation: &[f64], head: Option<Head>) {
        let u = user as usize;
        self.take_out(user);
        self.allocations[u].clear();
        self.allocations[u].extend_from_slice(allocation);
        self.heads[u] = head;
        self.put_in(user);
    }

    fn first(&self) -> Option<u32> {
        self.order.first().map(|(_, u)| *u)
    }

    fn set_aside(&mut self, user: u32) {
        self.take_out(user);
        self.aside.push(user);
    }

    fn restore(&mut self) {
        for user in std::mem::take(&mut self.aside) {
            self.put_in(user);
        }
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        None
    }
}

/// SDRF: every user's commitments, and the live tree of the users that wait.
struct Stateful {
    tree: LiveTree,
    now: f64,
    tau: f64,
    entitlement: f64,
    /// Per user: commitment at `anchor`, while the user is outside the tree.
    commitment: Vec<Vec<f64>>,
    anchor: Vec<f64>,
    excess: Vec<Vec<f64>>,
    allocation: Vec<Vec<f64>>,
    waiting: Vec<bool>,
    aside: Vec<u32>,
}

impl Stateful {
    fn new(tree: LiveTree, tau: f64, users: usize, resources: usize) -> Self {
        let zeros = vec![vec![0.0; resources]; users];
        Stateful {
            tau,
            tree,
            now: 0.0,
            entitlement: 1.0 / users.max(1) as f64,
            commitment: zeros.clone(),
            anchor: vec![0.0; users],
            excess: zeros.clone(),
            allocation: zeros,
            waiting: vec![false; users],
            aside: Vec::new(),
        }
    }

    /// Brings a user's own commitment record to now (only valid outside the tree).
    fn reanchor(&mut self, u: usize) {
        let dt = self.now - self.anchor[u];
        for (c, e) in self.commitment[u].iter_mut().zip(&self.excess[u]) {
            *c = exp_advance(*c, *e, dt, self.tau);
        }
        self.anchor[u] = self.now;
    }

    fn leave_tree(&mut self, user: u32) {
        if let Some(c) = self.tree.remove(user) {
            self.commitment[user as usize] = c;
            self.anchor[user as usize] = self.now;
        }
    }

    fn enter_tree(&mut self, user: u32) {
        let u = user as usize;
        self.reanchor(u);
        let member = Member {
            weight: 1.0,
            allocation: self.allocation[u].clone(),
            excess: self.excess[u].clone(),
            commitment: self.commitment[u].clone(),
        };
        self.tree.insert(user, member);
    }

    fn set_allocation(&mut self, u: usize, allocation: &[f64]) {
        self.allocation[u].clear();
        self.allocation[u].extend_from_slice(allocation);
        let w = self.entitlement;
        for (e, o) in self.excess[u].iter_mut().zip(allocation) {
            *e = (o - w).max(0.0);
        }
    }
}

impl Ranking for Stateful {
    fn advance(&mut self, now: Time) {
        self.now = now.as_secs_f64();
        self.tree.advance(self.now);
    }

    fn update(&mut self, user: u32, allocation: &[f64], head: Option<Head>) {
        let u = user as usize;
        if self.tree.contains(user) {
            if head.is_some() {
                self.set_allocation(u, allocation);
                let (o, e) = (&self.allocation[u], &self.excess[u]);
                self.tree.update(user, o, e);
            } else {
                self.leave_tree(user);
                self.set_allocation(u, allocation);
            }
        } else {
            self.reanchor(u);
            self.set_allocation(u, allocation);
            if head.is_some() {
                self.enter_tree(user);
            }
        }
        self.waiting[u] = head.is_some();
    }

    fn first(&self) -> Option<u32> {
        self.tree.first()
    }

    fn set_aside(&mut self, user: u32) {
        self.leave_tree(user);
        self.aside.push(user);
    }

    fn restore(&mut self) {
        for user in std::mem::take(&mut self.aside) {
            if self.waiting[user as usize] {
                self.enter_tree(user);
            }
        }
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        Some(self.tree.counters())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_core::policy::PriorityForm;
    use proptest::prelude::*;

    /// The obvious SDRF ranking: every user's commitments advanced by Eq. 6, every priority
    /// recomputed, the smallest taken.
    struct Naive {
        tau: f64,
        now: f64,
        commitment: Vec<Vec<f64>>,
        excess: Vec<Vec<f64>>,
        allocation: Vec<Vec<f64>>,
        waiting: Vec<bool>,
    }

    impl Naive {
        fn advance(&mut self, now: f64) {
            for (c, e) in self.commitment.iter_mut().zip(&self.excess) {
                c.iter_mut()
                    .zip(e)
                    .for_each(|(c, e)| *c = exp_advance(*c, *e, now - self.now, self.tau));
            }
            self.now = now;
        }

        fn priority(&self, u: usize) -> f64 {
            let view = ClientView {
                weight: 1.0,
                allocation: &self.allocation[u],
                commitment: &self.commitment[u],
            };
            PriorityForm::SumOfMaxes.priority(&view)
        }

        fn lowest(&self) -> Option<f64> {
            (0..self.waiting.len())
                .filter(|u| self.waiting[*u])
                .map(|u| self.priority(u))
                .min_by(f64::total_cmp)
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever users do, the live-tree ranking serves a user whose priority is the lowest.
        #[test]
        fn sdrf_ranking_serves_the_lowest_priority(
            epsilon in prop_oneof![Just(0.1), Just(1e-3), Just(1e-6)],
            ops in prop::collection::vec((0u32..5, prop::collection::vec(0.0..0.6f64, 2), any::<bool>(), 0.0..50.0f64), 1..80),
        ) {
            let users = 5;
            let tau = tau_from_epsilon(epsilon);
            let mut ranking = for_policy(Kind::Sdrf { epsilon, form: PriorityForm::SumOfMaxes }, users, 2);
            let zeros = vec![vec![0.0; 2]; users];
            let mut naive = Naive { tau, now: 0.0, commitment: zeros.clone(), excess: zeros.clone(), allocation: zeros, waiting: vec![false; users] };
            let mut now = 0.0;
            for (seq, (user, allocation, waiting, dt)) in ops.into_iter().enumerate() {
                now += dt;
                ranking.advance(Time::from_secs_f64(now));
                naive.advance(Time::from_secs_f64(now).as_secs_f64());
                let head = waiting.then_some((Time::ZERO, seq as u64));
                ranking.update(user, &allocation, head);
                let u = user as usize;
                naive.excess[u] = allocation.iter().map(|o| (o - 1.0 / users as f64).max(0.0)).collect();
                naive.allocation[u] = allocation;
                naive.waiting[u] = waiting;
                match (ranking.first(), naive.lowest()) {
                    (Some(first), Some(lowest)) => {
                        let got = naive.priority(first as usize);
                        prop_assert!(naive.waiting[first as usize], "served a user with nothing pending");
                        prop_assert!(got <= lowest + 1e-9 * (1.0 + lowest), "served {got}, lowest {lowest}");
                    }
                    (None, None) => {}
                    (got, want) => prop_assert!(false, "ranking {got:?}, reference {want:?}"),
                }
            }
        }
    }
}
