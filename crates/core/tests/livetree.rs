//! The live tree against a naive reference: recompute every priority at now and sort.

use fairshare_core::priority::{ClientView, PriorityForm};
use fairshare_core::rank::livetree::{LiveTree, LiveTreeCounters, Member};
use fairshare_core::usage::decay::exp_advance;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// A client of the reference: its commitment anchored at `since`, as in docs/mechanisms.md, SDRF §3.2.
#[derive(Debug, Clone)]
struct Client {
    weight: f64,
    allocation: Vec<f64>,
    excess: Vec<f64>,
    anchor: Vec<f64>,
    since: f64,
}

/// Recompute-and-sort: the definition the live tree must agree with.
#[derive(Debug)]
struct Reference {
    tau: f64,
    form: PriorityForm,
    now: f64,
    clients: BTreeMap<u32, Client>,
}

impl Reference {
    fn commitment(&self, id: u32) -> Vec<f64> {
        let c = &self.clients[&id];
        let dt = self.now - c.since;
        c.anchor
            .iter()
            .zip(&c.excess)
            .map(|(&a, &e)| exp_advance(a, e, dt, self.tau))
            .collect()
    }

    fn priority(&self, id: u32) -> f64 {
        let c = &self.clients[&id];
        let commitment = self.commitment(id);
        let view = ClientView {
            weight: c.weight,
            allocation: &c.allocation,
            commitment: &commitment,
        };
        self.form.priority(&view)
    }

    /// §7.6 rule 2: the smallest slope in x among the resources attaining the priority.
    fn slope(&self, id: u32) -> f64 {
        let c = &self.clients[&id];
        let commitment = self.commitment(id);
        let dominant = c.allocation.iter().copied().fold(0.0, f64::max);
        let level = |r: usize| match self.form {
            PriorityForm::SumOfMaxes => dominant + commitment[r],
            PriorityForm::MaxOfSums => c.allocation[r] + commitment[r],
        };
        let top = (0..commitment.len())
            .map(level)
            .fold(f64::NEG_INFINITY, f64::max);
        (0..commitment.len())
            .filter(|&r| level(r) == top)
            .map(|r| (commitment[r] - c.excess[r]) / c.weight)
            .fold(f64::INFINITY, f64::min)
    }

    fn order(&self) -> Vec<u32> {
        let mut keyed: Vec<_> = self
            .clients
            .keys()
            .map(|&id| (self.priority(id), -self.slope(id), id))
            .collect();
        keyed.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
        });
        keyed.into_iter().map(|k| k.2).collect()
    }

    fn reanchor(&mut self, id: u32) {
        let commitment = self.commitment(id);
        let client = self.clients.get_mut(&id).expect("known client");
        (client.anchor, client.since) = (commitment, self.now);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u32, Member),
    Remove(u32),
    Update(u32, Vec<f64>, Vec<f64>),
    Advance(f64),
}

fn share() -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 1 => Just(0.25), 4 => 0.0..1.0f64]
}

fn op(m: usize) -> impl Strategy<Value = Op> {
    let vector = move || prop::collection::vec(share(), m);
    let id = 0..12u32;
    let member = (
        prop_oneof![Just(1.0), 0.25..4.0f64],
        vector(),
        vector(),
        vector(),
    )
        .prop_map(|(weight, allocation, excess, commitment)| Member {
            weight,
            allocation,
            excess,
            commitment,
        });
    let step = prop_oneof![Just(0.0), (-14.0..12.0f64).prop_map(f64::exp)];
    prop_oneof![
        3 => (id.clone(), member).prop_map(|(id, m)| Op::Insert(id, m)),
        1 => id.clone().prop_map(Op::Remove),
        4 => (id, vector(), vector()).prop_map(|(id, o, e)| Op::Update(id, o, e)),
        4 => step.prop_map(Op::Advance),
    ]
}

fn tau() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(f64::INFINITY),
        (-12.0..-3.0f64).prop_map(f64::exp),
        (-2.0..18.0f64).prop_map(f64::exp),
    ]
}

fn form() -> impl Strategy<Value = PriorityForm> {
    prop_oneof![
        Just(PriorityForm::SumOfMaxes),
        Just(PriorityForm::MaxOfSums)
    ]
}

fn scenario() -> impl Strategy<Value = (usize, f64, PriorityForm, Vec<Op>)> {
    (1..=6usize, tau(), form()).prop_flat_map(|(m, tau, form)| {
        (
            Just(m),
            Just(tau),
            Just(form),
            prop::collection::vec(op(m), 1..60),
        )
    })
}

/// Priorities closer than this are interchangeable in the order (docs/mechanisms.md, SDRF §7.7).
fn tolerance(p: f64) -> f64 {
    1e-9 * p.abs().max(1.0)
}

fn apply(tree: &mut LiveTree, reference: &mut Reference, op: Op) {
    match op {
        Op::Insert(id, member) => {
            let client = Client {
                weight: member.weight,
                allocation: member.allocation.clone(),
                excess: member.excess.clone(),
                anchor: member.commitment.clone(),
                since: reference.now,
            };
            reference.clients.insert(id, client);
            tree.insert(id, member).unwrap();
        }
        Op::Remove(id) => {
            let expected = reference
                .clients
                .contains_key(&id)
                .then(|| reference.commitment(id));
            reference.clients.remove(&id);
            let got = tree.remove(id);
            assert_eq!(got.is_some(), expected.is_some());
            if let (Some(got), Some(expected)) = (got, expected) {
                assert_close(&got, &expected);
            }
        }
        Op::Update(id, allocation, excess) => {
            if reference.clients.contains_key(&id) {
                reference.reanchor(id);
                let client = reference.clients.get_mut(&id).expect("known client");
                (client.allocation, client.excess) = (allocation.clone(), excess.clone());
            }
            let known = tree.update(id, &allocation, &excess).unwrap();
            assert_eq!(known, reference.clients.contains_key(&id));
        }
        Op::Advance(dt) => {
            reference.now += dt;
            tree.advance(reference.now).unwrap();
        }
    }
}

fn assert_close(got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        assert!((g - e).abs() <= tolerance(*e), "{got:?} vs {expected:?}");
    }
}

/// The tree agrees with the reference: same clients, priorities and commitments, and an order
/// that differs from the sorted one only between near-equal priorities.
fn check(tree: &LiveTree, reference: &Reference) {
    let order: Vec<u32> = tree.iter().collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert!(sorted.iter().eq(reference.clients.keys()), "{order:?}");
    assert_eq!(tree.len(), reference.clients.len());
    for &id in &order {
        let (got, want) = (tree.priority(id).unwrap(), reference.priority(id));
        assert!(
            (got - want).abs() <= tolerance(want),
            "priority of {id}: {got} vs {want}"
        );
        assert_close(&tree.commitment(id).unwrap(), &reference.commitment(id));
    }
    let mut highest = f64::NEG_INFINITY;
    for &id in &order {
        let p = reference.priority(id);
        assert!(
            p >= highest - tolerance(p),
            "{order:?} vs {:?}",
            reference.order()
        );
        highest = highest.max(p);
    }
    let expected_first = reference.order().first().copied();
    if let (Some(got), Some(want)) = (tree.first(), expected_first) {
        let (p, q) = (reference.priority(got), reference.priority(want));
        assert!(p <= q + tolerance(q), "first {got} ({p}) vs {want} ({q})");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// After any sequence of operations the tree matches recompute-and-sort.
    #[test]
    fn matches_recompute_and_sort((m, tau, form, ops) in scenario()) {
        let mut tree = LiveTree::new(m, tau, form);
        let mut reference = Reference { tau, form, now: 0.0, clients: BTreeMap::new() };
        for op in ops {
            apply(&mut tree, &mut reference, op);
            check(&tree, &reference);
        }
    }
}

#[test]
fn matches_the_reference_on_a_busy_long_run() {
    // Many clients, τ = 9.49 s, a day of small steps: many events and rebases.
    let tau = fairshare_core::usage::decay::tau_from_epsilon(0.1);
    let form = PriorityForm::SumOfMaxes;
    let mut tree = LiveTree::new(2, tau, form);
    let mut reference = Reference {
        tau,
        form,
        now: 0.0,
        clients: BTreeMap::new(),
    };
    let mut seed = 7u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for id in 0..200 {
        let member = Member {
            weight: 1.0,
            allocation: vec![next() * 0.01, next() * 0.01],
            excess: vec![next() * 0.005, 0.0],
            commitment: vec![next() * 0.02, next() * 0.02],
        };
        apply(&mut tree, &mut reference, Op::Insert(id, member));
    }
    for step in 0..3000 {
        let id = tree.first().unwrap();
        let o = [next() * 0.01, next() * 0.01];
        let excess = [(o[0] - 0.005).max(0.0), (o[1] - 0.005).max(0.0)];
        apply(
            &mut tree,
            &mut reference,
            Op::Update(id, o.to_vec(), excess.to_vec()),
        );
        apply(&mut tree, &mut reference, Op::Advance(next() * 60.0));
        if step % 100 == 0 {
            check(&tree, &reference);
        }
    }
    check(&tree, &reference);
    assert!(tree.counters().events > 100, "{:?}", tree.counters());
}

#[test]
fn counters_count_what_happened() {
    let member = |c: f64| Member {
        weight: 1.0,
        allocation: vec![0.2],
        excess: vec![0.0],
        commitment: vec![c],
    };
    let mut tree = LiveTree::new(1, 10.0, PriorityForm::SumOfMaxes);
    tree.insert(1, member(0.0)).unwrap();
    tree.insert(2, member(0.5)).unwrap();
    tree.insert(2, member(0.5)).unwrap(); // replaces: one more insert, no removal
    assert_eq!(tree.len(), 2);
    // 1 holds 0.2 and now starts to accumulate, 2 decays from 0.7 towards 0.2 + 0.
    assert!(tree.update(1, &[0.3], &[0.3]).unwrap());
    assert!(!tree.update(9, &[0.3], &[0.3]).unwrap());
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![1, 2]);
    tree.advance(100.0).unwrap();
    assert_eq!(tree.iter().collect::<Vec<_>>(), vec![2, 1]);
    assert!(tree.remove(2).is_some());
    assert!(tree.remove(2).is_none());
    let expected = LiveTreeCounters {
        inserts: 3,
        removals: 1,
        updates: 1,
        events: 1,
    };
    assert_eq!(tree.counters(), expected);
}
