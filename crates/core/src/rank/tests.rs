//! Every ranker against an obviously-correct reference: all priorities recomputed from scratch,
//! the smallest served.

use super::*;
use crate::model::RawShares;
use crate::priority::{ClientView, Policy, PriorityForm};
use crate::usage::decay::{exp_advance, tau_from_epsilon};
use proptest::prelude::*;

/// The obvious SDRF ranking: every client's commitments advanced by the closed form, every
/// priority recomputed, the smallest taken.
struct Naive {
    tau: f64,
    now: f64,
    shares: Vec<Share>,
    commitment: Vec<Vec<f64>>,
    excess: Vec<Vec<f64>>,
    holdings: Vec<Vec<f64>>,
    waiting: Vec<bool>,
}

impl Naive {
    fn new(tau: f64, shares: Vec<Share>) -> Naive {
        let zeros = vec![vec![0.0; 2]; shares.len()];
        Naive {
            tau,
            now: 0.0,
            waiting: vec![false; shares.len()],
            shares,
            commitment: zeros.clone(),
            excess: zeros.clone(),
            holdings: zeros,
        }
    }

    fn advance(&mut self, now: f64) {
        for (c, e) in self.commitment.iter_mut().zip(&self.excess) {
            c.iter_mut()
                .zip(e)
                .for_each(|(c, e)| *c = exp_advance(*c, *e, now - self.now, self.tau));
        }
        self.now = now;
    }

    fn update(&mut self, client: usize, holdings: &[f64], waiting: bool) {
        let entitled = self.shares[client].entitlement;
        self.excess[client] = holdings.iter().map(|o| (o - entitled).max(0.0)).collect();
        self.holdings[client] = holdings.to_vec();
        self.waiting[client] = waiting;
    }

    fn priority(&self, client: usize) -> f64 {
        let view = ClientView {
            weight: self.shares[client].weight,
            allocation: &self.holdings[client],
            commitment: &self.commitment[client],
        };
        PriorityForm::SumOfMaxes.priority(&view)
    }

    fn lowest(&self) -> Option<f64> {
        (0..self.waiting.len())
            .filter(|c| self.waiting[*c])
            .map(|c| self.priority(c))
            .min_by(f64::total_cmp)
    }
}

/// Shares for five clients: equal, or from weights 1..=5.
fn shares(weighted: bool) -> Vec<Share> {
    if weighted {
        Share::weighted(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap()
    } else {
        Share::equal(5)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever clients do, the SDRF ranker serves a client whose priority is the lowest, and
    /// its own priority and order agree with the reference.
    #[test]
    fn sdrf_serves_the_lowest_priority(
        epsilon in prop_oneof![Just(0.1), Just(1e-3), Just(1e-6)],
        weighted in any::<bool>(),
        ops in prop::collection::vec((0u32..5, prop::collection::vec(0.0..0.6f64, 2), any::<bool>(), 0.0..50.0f64), 1..80),
    ) {
        let tau = tau_from_epsilon(epsilon);
        let mut ranker = SdrfRanker::new(2, tau, PriorityForm::SumOfMaxes, &shares(weighted));
        let mut naive = Naive::new(tau, shares(weighted));
        let mut now = 0.0;
        for (seq, (client, holdings, waiting, dt)) in ops.into_iter().enumerate() {
            now += dt;
            ranker.advance(Time::from_secs_f64(now)).unwrap();
            naive.advance(Time::from_secs_f64(now).as_secs_f64());
            ranker.update(client, &holdings, waiting.then_some(Head::new(Time::ZERO, seq as u64))).unwrap();
            naive.update(client as usize, &holdings, waiting);
            match (ranker.first(), naive.lowest()) {
                (Some(first), Some(lowest)) => {
                    let got = naive.priority(first as usize);
                    prop_assert!(naive.waiting[first as usize], "served a client with nothing waiting");
                    prop_assert!(got <= lowest + 1e-9 * (1.0 + lowest), "served {got}, lowest {lowest}");
                    let own = ranker.priority(first).unwrap();
                    prop_assert!((own - got).abs() <= 1e-9 * (1.0 + got), "ranker says {own}, reference {got}");
                }
                (None, None) => {}
                (got, want) => prop_assert!(false, "ranker {got:?}, reference {want:?}"),
            }
            let order: Vec<u32> = ranker.iter().collect();
            let waiting = naive.waiting.iter().filter(|w| **w).count();
            prop_assert_eq!(order.len(), waiting);
        }
    }

    /// SDRF's order of every client were each waiting, worked out from keys alone, is the
    /// order a copy told every client's holdings and head gives (both forms, held and waiting
    /// clients, ties between clients that hold nothing).
    #[test]
    fn sdrf_order_of_all_is_the_copys(
        epsilon in prop_oneof![Just(0.1), Just(1e-3), Just(1e-6)],
        weighted in any::<bool>(),
        max_of_sums in any::<bool>(),
        ops in prop::collection::vec((0u32..5, prop::collection::vec(prop_oneof![Just(0.0), 0.0..0.6f64], 2), any::<bool>(), 0.0..50.0f64), 1..40),
    ) {
        let form = if max_of_sums { PriorityForm::MaxOfSums } else { PriorityForm::SumOfMaxes };
        let tau = tau_from_epsilon(epsilon);
        let mut ranker = SdrfRanker::new(2, tau, form, &shares(weighted));
        let mut holdings = vec![vec![0.0; 2]; 5];
        let mut now = 0.0;
        for (seq, (client, held, waiting, dt)) in ops.into_iter().enumerate() {
            now += dt;
            ranker.advance(Time::from_secs_f64(now)).unwrap();
            ranker.update(client, &held, waiting.then_some(Head::new(Time::ZERO, seq as u64))).unwrap();
            holdings[client as usize] = held;
            let heads: Vec<Head> = (0..5).map(|c| Head::new(Time::ZERO, c)).collect();
            let rows: Vec<&[f64]> = holdings.iter().map(Vec::as_slice).collect();
            let fast = ranker.order_of_all(&rows, &heads).unwrap();
            let copy = order_of_all_on_a_copy(&ranker, &rows, &heads).unwrap();
            prop_assert_eq!(fast, copy);
        }
    }

    /// A frozen copy of SDRF (no certificates while time stands still) serves and orders as
    /// a plain copy does through the same changes, and still after time moves on.
    #[test]
    fn a_frozen_sdrf_copy_orders_as_a_plain_one(
        epsilon in prop_oneof![Just(0.1), Just(1e-3), Just(0.0), Just(1.0)],
        before in prop::collection::vec((0u32..6, prop::collection::vec(0.0..0.6f64, 2), any::<bool>()), 0..12),
        after in prop::collection::vec((0u32..6, prop::collection::vec(0.0..0.6f64, 2), any::<bool>(), prop_oneof![Just(0.0), 0.0..80.0f64]), 1..30),
    ) {
        let tau = tau_from_epsilon(epsilon);
        let mut ranker = SdrfRanker::new(2, tau, PriorityForm::SumOfMaxes, &Share::equal(6));
        for (seq, (client, held, waiting)) in before.into_iter().enumerate() {
            ranker.advance(Time::from_secs_f64(seq as f64 * 7.0)).unwrap();
            ranker.update(client, &held, waiting.then_some(Head::new(Time::ZERO, seq as u64))).unwrap();
        }
        let (mut frozen, mut plain) = (ranker.frozen_clone(), ranker.boxed_clone());
        let mut now = 100.0;
        for (seq, (client, held, waiting, dt)) in after.into_iter().enumerate() {
            now += dt;
            for copy in [&mut frozen, &mut plain] {
                copy.advance(Time::from_secs_f64(now)).unwrap();
                copy.update(client, &held, waiting.then_some(Head::new(Time::ZERO, seq as u64))).unwrap();
            }
            prop_assert_eq!(frozen.first(), plain.first());
            prop_assert_eq!(frozen.iter().collect::<Vec<_>>(), plain.iter().collect::<Vec<_>>());
        }
    }

    /// Clients told at one instant with the order deferred and settled once serve and
    /// order as told one by one, on a frozen copy and a live one, and after time moves on.
    #[test]
    fn sdrf_told_many_at_once_orders_as_told_in_turn(
        epsilon in prop_oneof![Just(0.1), Just(1e-3), Just(0.0), Just(1.0)],
        frozen in any::<bool>(),
        before in prop::collection::vec((0u32..6, prop::collection::vec(0.0..0.6f64, 2), any::<bool>()), 0..12),
        batch in prop::collection::vec((0u32..6, prop::collection::vec(0.0..0.6f64, 2), any::<bool>()), 1..20),
        later in 0.0..80.0f64,
    ) {
        let tau = tau_from_epsilon(epsilon);
        let mut ranker = SdrfRanker::new(2, tau, PriorityForm::SumOfMaxes, &Share::equal(6));
        for (seq, (client, held, waiting)) in before.into_iter().enumerate() {
            ranker.advance(Time::from_secs_f64(seq as f64 * 7.0)).unwrap();
            ranker.update(client, &held, waiting.then_some(Head::new(Time::ZERO, seq as u64))).unwrap();
        }
        ranker.advance(Time::from_secs_f64(100.0)).unwrap();
        let copy = |r: &SdrfRanker| if frozen { r.frozen_clone() } else { r.boxed_clone() };
        let (mut in_turn, mut at_once) = (copy(&ranker), copy(&ranker));
        at_once.defer_order();
        for (seq, (client, held, waiting)) in batch.into_iter().enumerate() {
            let head = waiting.then_some(Head::new(Time::ZERO, 100 + seq as u64));
            in_turn.update(client, &held, head).unwrap();
            at_once.update(client, &held, head).unwrap();
        }
        at_once.settle_order();
        prop_assert_eq!(at_once.first(), in_turn.first());
        prop_assert_eq!(at_once.iter().collect::<Vec<_>>(), in_turn.iter().collect::<Vec<_>>());
        for copy in [&mut in_turn, &mut at_once] {
            copy.advance(Time::from_secs_f64(100.0 + later)).unwrap();
        }
        prop_assert_eq!(at_once.first(), in_turn.first());
        prop_assert_eq!(at_once.iter().collect::<Vec<_>>(), in_turn.iter().collect::<Vec<_>>());
    }

    /// A stateless ranker's order is the policy's priorities, recomputed, ties by client.
    #[test]
    fn stateless_orders_by_the_policy(
        policy in prop_oneof![Just(Policy::Drf), Just(Policy::WeightedDrf), Just(Policy::Asset)],
        weighted in any::<bool>(),
        ops in prop::collection::vec((0u32..5, prop::collection::vec(0.0..0.6f64, 2), any::<bool>()), 1..60),
    ) {
        let shares = shares(weighted);
        let mut ranker = StatelessRanker::new(policy, &shares);
        let mut held = vec![(vec![0.0; 2], false); 5];
        for (seq, (client, holdings, waiting)) in ops.into_iter().enumerate() {
            ranker.update(client, &holdings, waiting.then_some(Head::new(Time::ZERO, seq as u64))).unwrap();
            held[client as usize] = (holdings, waiting);
            let mut expected: Vec<(f64, u32)> = (0..5u32)
                .filter(|c| held[*c as usize].1)
                .map(|c| {
                    let view = ClientView { weight: shares[c as usize].weight, allocation: &held[c as usize].0, commitment: &[] };
                    (policy.priority(&view), c)
                })
                .collect();
            expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let order: Vec<u32> = ranker.iter().collect();
            prop_assert_eq!(order, expected.iter().map(|(_, c)| *c).collect::<Vec<_>>());
        }
    }
}

#[test]
fn fifo_serves_the_oldest_head_and_skips_those_set_aside() {
    let mut ranker = FifoRanker::new(3);
    let at = |s: f64, seq| Some(Head::new(Time::from_secs_f64(s), seq));
    ranker.update(0, &[0.5], at(3.0, 3)).unwrap();
    ranker.update(1, &[0.0], at(1.0, 1)).unwrap();
    ranker.update(2, &[0.0], at(2.0, 2)).unwrap();
    assert_eq!(ranker.iter().collect::<Vec<_>>(), [1, 2, 0]);
    assert_eq!(ranker.priority(2), Some(2.0));
    ranker.set_aside(1);
    assert_eq!(ranker.first(), Some(2));
    ranker.restore();
    assert_eq!(ranker.first(), Some(1));
    ranker.update(1, &[0.0], None).unwrap();
    assert_eq!(ranker.priority(1), None);
}

#[test]
fn weights_and_entitlements_are_honoured() {
    // Same holdings; client 1 has three times the weight, so weighted DRF serves it first.
    let shares = Share::weighted(&[1.0, 3.0]).unwrap();
    assert_eq!(shares[1].entitlement, 0.75);
    let mut wdrf = StatelessRanker::new(Policy::WeightedDrf, &shares);
    wdrf.update(0, &[0.3], Some(Head::new(Time::ZERO, 0)))
        .unwrap();
    wdrf.update(1, &[0.3], Some(Head::new(Time::ZERO, 1)))
        .unwrap();
    assert_eq!(wdrf.first(), Some(1));
    // Holding 0.6 is excess for client 0 (entitled to 0.25) but not for client 1 (0.75):
    // after a while only client 0 has a commitment.
    let mut sdrf = SdrfRanker::new(1, 100.0, PriorityForm::SumOfMaxes, &shares);
    sdrf.update(0, &[0.6], None).unwrap();
    sdrf.update(1, &[0.6], None).unwrap();
    sdrf.advance(Time::from_secs_f64(1000.0)).unwrap();
    assert!(sdrf.commitment(0).unwrap()[0] > 0.3);
    assert_eq!(sdrf.commitment(1).unwrap()[0], 0.0);
    assert_eq!(sdrf.commitment(2), None);
}

#[test]
fn time_going_backwards_is_an_error() {
    let mut ranker = SdrfRanker::with_delta(1, 0.999, PriorityForm::SumOfMaxes, &Share::equal(1));
    ranker.advance(Time::from_secs_f64(10.0)).unwrap();
    let error = ranker.advance(Time::from_secs_f64(5.0)).unwrap_err();
    assert_eq!(
        error,
        RankError::TimeWentBack {
            previous: Time::from_secs_f64(10.0),
            now: Time::from_secs_f64(5.0)
        }
    );
    assert!(FifoRanker::new(1).advance(Time::ZERO).is_ok());
}

#[test]
fn unknown_clients_and_bad_holdings_are_refused() {
    let mut sdrf = SdrfRanker::new(2, 10.0, PriorityForm::SumOfMaxes, &Share::equal(2));
    assert!(sdrf.update(2, &[0.1, 0.1], None).is_err(), "no client 2");
    assert!(
        sdrf.update(0, &[0.1], None).is_err(),
        "one holding for two resources"
    );
    assert!(sdrf.update(0, &[f64::NAN, 0.1], None).is_err());
    let mut fifo = FifoRanker::new(1);
    assert!(fifo.update(1, &[], None).is_err());
    // Setting aside a client that is not waiting, or not there at all, changes nothing.
    fifo.set_aside(7);
    fifo.restore();
    sdrf.set_aside(9);
    sdrf.restore();
    assert_eq!(fifo.first(), None);
    let mut drf = StatelessRanker::new(Policy::Drf, &Share::equal(1));
    assert!(drf
        .update(0, &[-0.5], Some(Head::new(Time::ZERO, 0)))
        .is_err());
    assert_eq!(drf.first(), None, "a refused update changes nothing");
}

#[test]
fn smallest_first_orders_by_head_size_then_arrival() {
    let spec: crate::policy::PolicySpec = "smallest-first".parse().unwrap();
    let mut ranker = spec.ranker(2, &Share::equal(3), None).unwrap();
    let head = |s: f64, seq, size| Some(Head::new(Time::from_secs_f64(s), seq).with_size(size));
    ranker.update(0, &[0.0, 0.0], head(1.0, 1, 0.5)).unwrap();
    ranker.update(1, &[0.9, 0.9], head(3.0, 3, 0.1)).unwrap();
    ranker.update(2, &[0.0, 0.0], head(2.0, 2, 0.1)).unwrap();
    assert_eq!(ranker.iter().collect::<Vec<_>>(), [2, 1, 0]);
    assert_eq!(ranker.priority(0), Some(0.5));
}

#[test]
fn decayed_usage_by_hand() {
    // One resource, half-life 100 s; user 0 holds half of it for 100 s from zero usage:
    // ∫₀¹⁰⁰ 0.5 · 2^(−(100 − s)/100) ds = 0.5 · 100/ln 2 · (1 − 1/2) ≈ 36.07.
    let mut ranker = UsageRanker::new(1, 100.0, &Share::equal(2));
    ranker.update(0, &[0.5], None).unwrap();
    ranker.advance(Time::from_secs_f64(100.0)).unwrap();
    let expected = 0.5 * 100.0 / std::f64::consts::LN_2 * 0.5;
    assert!((ranker.usage(0).unwrap()[0] - expected).abs() < 1e-9);
    // User 1 holds a fifth for 100 s more: it accrues less than user 0 had, which halved.
    ranker.update(1, &[0.2], None).unwrap();
    ranker.update(0, &[0.0], None).unwrap();
    ranker.advance(Time::from_secs_f64(200.0)).unwrap();
    assert!((ranker.usage(0).unwrap()[0] - expected / 2.0).abs() < 1e-9);
    // Both wait with nothing held: the user with less usage per entitlement goes first.
    ranker
        .update(0, &[0.0], Some(Head::new(Time::from_secs_f64(200.0), 1)))
        .unwrap();
    ranker
        .update(1, &[0.0], Some(Head::new(Time::from_secs_f64(200.0), 2)))
        .unwrap();
    let (u0, u1) = (ranker.usage(0).unwrap()[0], ranker.usage(1).unwrap()[0]);
    assert!(u1 < u0, "{u1} < {u0}");
    assert_eq!(ranker.iter().collect::<Vec<_>>(), [1, 0]);
    assert!((ranker.priority(1).unwrap() - u1 / 0.5).abs() < 1e-12);
    assert!(ranker.update(0, &[f64::NAN], None).is_err());
    assert_eq!(
        ranker.usage(2),
        None,
        "an unknown client has no usage, not a panic"
    );
    assert!(ranker.update(5, &[1.0], None).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Usage is the same however often it is brought forward (the closed form composes), and
    /// the ranker serves a waiting user whose priority is the lowest.
    #[test]
    fn decayed_usage_composes_and_serves_the_lowest(
        half_life in prop_oneof![Just(10.0), Just(1000.0), Just(f64::INFINITY)],
        ops in prop::collection::vec((0u32..4, prop::collection::vec(0.0..0.5f64, 2), any::<bool>(), 0.0..40.0f64), 1..50),
    ) {
        let shares = Share::weighted(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        let mut often = UsageRanker::new(2, half_life, &shares);
        let mut seldom = UsageRanker::new(2, half_life, &shares);
        let mut state: Vec<(Vec<f64>, Option<Head>)> = vec![(vec![0.0; 2], None); 4];
        let mut now = 0.0;
        for (seq, (client, holdings, waiting, dt)) in ops.into_iter().enumerate() {
            now += dt;
            let t = Time::from_secs_f64(now);
            often.advance(t).unwrap();
            seldom.advance(t).unwrap();
            // `often` re-anchors every user at every step; `seldom` only the one that changes.
            for (c, (held, head)) in state.iter().enumerate() {
                often.update(c as u32, held, *head).unwrap();
            }
            let head = waiting.then_some(Head::new(t, seq as u64));
            often.update(client, &holdings, head).unwrap();
            seldom.update(client, &holdings, head).unwrap();
            state[client as usize] = (holdings, head);
            for c in 0..4u32 {
                for (a, b) in often.usage(c).unwrap().iter().zip(seldom.usage(c).unwrap()) {
                    prop_assert!((a - b).abs() <= 1e-9 * (1.0 + a.abs()), "{a} vs {b}");
                }
            }
            if let Some(first) = seldom.first() {
                let lowest = (0..4u32)
                    .filter_map(|c| seldom.priority(c))
                    .fold(f64::INFINITY, f64::min);
                prop_assert_eq!(seldom.priority(first), Some(lowest));
            }
        }
    }
}

proptest! {
    /// The first user kept while time stands still (many changes at one instant, users set
    /// aside and restored) is the one the order sorted from scratch puts first.
    #[test]
    fn decayed_usage_keeps_its_first_as_the_sorted_order(
        ops in prop::collection::vec((0u32..5, prop::collection::vec(0.0..0.5f64, 2), any::<bool>(), prop_oneof![Just(0.0), 0.0..30.0f64], 0u8..4), 1..60),
    ) {
        let mut ranker = UsageRanker::new(2, 100.0, &Share::equal(5));
        let mut now = 0.0;
        for (seq, (client, holdings, waiting, dt, act)) in ops.into_iter().enumerate() {
            now += dt;
            let t = Time::from_secs_f64(now);
            ranker.advance(t).unwrap();
            match act {
                0 => ranker.set_aside(client),
                1 => ranker.restore(),
                _ => ranker.update(client, &holdings, waiting.then_some(Head::new(t, seq as u64))).unwrap(),
            }
            prop_assert_eq!(ranker.first(), ranker.iter().next());
        }
    }
}

/// Fairshare settings for tests: no decay unless given, factors at every decision.
fn fairshare(function: crate::priority::fairshare::FairshareFunction) -> FairshareSettings {
    FairshareSettings {
        function,
        decay: crate::usage::decay::Decay::Continuous {
            half_life_s: f64::INFINITY,
        },
        refresh_s: 0.0,
        ..FairshareSettings::default()
    }
}

/// Every client waiting, the head of client `c` arriving at time `c`.
fn all_waiting(ranker: &mut dyn Ranker, clients: u32) {
    for c in 0..clients {
        let head = Head::new(Time::from_secs_f64(f64::from(c)), u64::from(c));
        ranker.update(c, &[0.0], Some(head)).unwrap();
    }
}

#[test]
fn fairshare_charges_running_jobs_and_serves_the_least_charged() {
    const PBS: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::PBS;
    let mut ranker = FairshareRanker::new(fairshare(PBS), Accounts::flat(&Share::equal(2)));
    all_waiting(&mut ranker, 2);
    // Equal usage (none): the older head first.
    assert_eq!(ranker.iter().collect::<Vec<_>>(), [0, 1]);
    ranker.job_started(0, 4.0).unwrap();
    ranker.job_started(1, 1.0).unwrap();
    ranker.advance(Time::from_secs_f64(100.0)).unwrap();
    assert_eq!(ranker.usage(0), Some(400.0));
    assert_eq!(ranker.usage(1), Some(100.0));
    // PBS: 2^(−usage share / shares) = 2^(−0.8/0.5) and 2^(−0.2/0.5).
    assert_eq!(ranker.iter().collect::<Vec<_>>(), [1, 0]);
    assert!((ranker.priority(0).unwrap() + (-1.6f64).exp2()).abs() < 1e-12);
    assert!((ranker.priority(1).unwrap() + (-0.4f64).exp2()).abs() < 1e-12);
    // Finished jobs accrue nothing more.
    ranker.job_finished(0, 4.0, 100.0).unwrap();
    ranker.advance(Time::from_secs_f64(500.0)).unwrap();
    assert_eq!(ranker.usage(0), Some(400.0));
    assert_eq!(ranker.usage(1), Some(500.0));
    assert_eq!(ranker.first(), Some(0));
}

#[test]
fn fairshare_charged_at_finish_sees_nothing_until_then() {
    const METACENTRUM: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::METACENTRUM;
    let settings = FairshareSettings {
        charging: Charging::AtFinish,
        ..fairshare(METACENTRUM)
    };
    let mut ranker = FairshareRanker::new(settings, Accounts::flat(&Share::equal(2)));
    all_waiting(&mut ranker, 2);
    ranker.job_started(0, 4.0).unwrap();
    ranker.advance(Time::from_secs_f64(100.0)).unwrap();
    assert_eq!(ranker.usage(0), Some(0.0));
    assert_eq!(
        ranker.first(),
        Some(0),
        "nothing charged yet: arrival order"
    );
    ranker.job_finished(0, 4.0, 100.0).unwrap();
    assert_eq!(ranker.usage(0), Some(400.0));
    assert_eq!(ranker.first(), Some(1));
}

#[test]
fn fairshare_refreshed_periodically_keeps_its_order_until_the_period_ends() {
    const PBS: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::PBS;
    let settings = FairshareSettings {
        refresh_s: 3600.0,
        ..fairshare(PBS)
    };
    let mut ranker = FairshareRanker::new(settings, Accounts::flat(&Share::equal(2)));
    all_waiting(&mut ranker, 2);
    assert_eq!(ranker.first(), Some(0));
    ranker.job_started(0, 1.0).unwrap();
    ranker.advance(Time::from_secs_f64(3599.0)).unwrap();
    assert_eq!(ranker.first(), Some(0), "the factors of time 0 still hold");
    ranker.advance(Time::from_secs_f64(3600.0)).unwrap();
    assert_eq!(ranker.first(), Some(1), "recomputed at the hour");
}

#[test]
fn an_offset_moves_the_recomputations_off_the_multiples_of_the_period() {
    const PBS: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::PBS;
    // Slurm's decay thread at 49 s past each minute: not at 60 s, at 109 s.
    let settings = FairshareSettings {
        refresh_s: 60.0,
        refresh_offset_s: 49.0,
        ..fairshare(PBS)
    };
    let mut ranker = FairshareRanker::new(settings, Accounts::flat(&Share::equal(2)));
    all_waiting(&mut ranker, 2);
    ranker.advance(Time::from_secs_f64(50.0)).unwrap();
    assert_eq!(ranker.first(), Some(0));
    ranker.job_started(0, 1.0).unwrap();
    ranker.advance(Time::from_secs_f64(108.0)).unwrap();
    assert_eq!(
        ranker.first(),
        Some(0),
        "the factors of 49 s still hold at 108 s"
    );
    ranker.advance(Time::from_secs_f64(109.0)).unwrap();
    assert_eq!(ranker.first(), Some(1), "recomputed at 109 s");
}

#[test]
fn an_entry_penalty_charges_a_start_at_once() {
    const METACENTRUM: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::METACENTRUM;
    // At every decision, and with factors otherwise refreshed every 5 minutes (kueue-afs's
    // default): the penalty counts at once either way.
    for refresh_s in [0.0, 300.0] {
        let settings = FairshareSettings {
            entry_penalty_s: 300.0,
            refresh_s,
            ..fairshare(METACENTRUM)
        };
        let mut ranker = FairshareRanker::new(settings, Accounts::flat(&Share::equal(2)));
        all_waiting(&mut ranker, 2);
        assert_eq!(ranker.first(), Some(0));
        ranker.job_started(0, 2.0).unwrap();
        assert_eq!(ranker.usage(0), Some(600.0));
        assert_eq!(
            ranker.first(),
            Some(1),
            "user 0 pays before any time passes"
        );
    }
}

#[test]
fn fairshare_ranks_through_the_account_tree() {
    use crate::priority::fairshare::Association;
    const FAIR_TREE: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::FAIR_TREE;
    // root → A (1 share) → a1, a2; root → B (1 share) → b. Clients a1, a2, b.
    let node = |parent: Option<usize>, user: bool| Association {
        parent,
        shares: RawShares::Count(1.0),
        usage: 0.0,
        user,
    };
    let tree = vec![
        node(None, false),
        node(Some(0), false),
        node(Some(1), true),
        node(Some(1), true),
        node(Some(0), false),
        node(Some(4), true),
    ];
    let accounts = Accounts::new(tree, vec![2, 3, 5]).unwrap();
    let mut ranker = FairshareRanker::new(fairshare(FAIR_TREE), accounts);
    all_waiting(&mut ranker, 3);
    // a1 used 10, b used 30: A's level fairshare (0.5 / 0.25) beats B's (0.5 / 0.75), and
    // within A the idle a2 goes before a1.
    ranker.job_started(0, 1.0).unwrap();
    ranker.job_started(2, 3.0).unwrap();
    ranker.advance(Time::from_secs_f64(10.0)).unwrap();
    assert_eq!(ranker.iter().collect::<Vec<_>>(), [1, 0, 2]);
    // A client placed at the root, or outside the tree, is refused.
    assert!(Accounts::new(vec![node(None, false)], vec![0]).is_err());
    assert!(Accounts::new(vec![node(None, false)], vec![3]).is_err());
}

#[test]
fn fairshare_refuses_bad_jobs_and_unknown_clients() {
    const FAIR_TREE: crate::priority::fairshare::FairshareFunction =
        crate::priority::fairshare::FairshareFunction::FAIR_TREE;
    let mut ranker = FairshareRanker::new(fairshare(FAIR_TREE), Accounts::flat(&Share::equal(2)));
    assert!(ranker.job_started(0, f64::NAN).is_err());
    assert!(ranker.job_started(2, 1.0).is_err());
    assert!(ranker.job_finished(0, -1.0, 1.0).is_err());
    assert_eq!(ranker.usage(2), None);
}

/// One job of the reference: user, rate, start and (when finished) end.
type RefJob = (u32, f64, f64, Option<f64>);

/// The obvious fairshare: every job's usage integrated and decayed from scratch, the factors
/// recomputed, the waiting users sorted by them.
fn reference_order(
    settings: &FairshareSettings,
    shares: &[Share],
    jobs: &[RefJob],
    heads: &[Option<Head>],
    now: f64,
) -> Vec<u32> {
    use crate::priority::fairshare::standings;
    let decay = settings.decay;
    let mut usage = vec![0.0; shares.len()];
    for &(user, rate, start, end) in jobs {
        usage[user as usize] += match (settings.charging, end) {
            (Charging::Running, _) => decay.accrued(rate, start, end.unwrap_or(now), now),
            (Charging::AtFinish, Some(end)) => rate * (end - start) * decay.factor(end, now),
            (Charging::AtFinish, None) => 0.0,
        };
    }
    use crate::priority::fairshare::Association;
    let root = Association {
        parent: None,
        shares: RawShares::Count(1.0),
        usage: 0.0,
        user: false,
    };
    let users = shares.iter().zip(&usage).map(|(s, used)| Association {
        parent: Some(0),
        shares: RawShares::Count(s.weight),
        usage: *used,
        user: true,
    });
    let tree: Vec<Association> = std::iter::once(root).chain(users).collect();
    let standings = standings(&tree, settings.function).unwrap();
    let key = |u: usize| match settings.function {
        f if f.is_fair_tree() => standings[u + 1].rank.unwrap() as f64,
        _ => -standings[u + 1].factor,
    };
    let mut waiting: Vec<(f64, Head, u32)> = (0..shares.len())
        .filter_map(|u| Some((key(u), heads[u]?, u as u32)))
        .collect();
    waiting.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.arrival.cmp(&b.1.arrival))
            .then(a.1.seq.cmp(&b.1.seq))
    });
    waiting.into_iter().map(|(.., u)| u).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The fairshare ranker, which keeps usage in closed form and anchors only the users that
    /// change, orders waiting users exactly as recomputing every job's decayed usage does.
    #[test]
    fn fairshare_matches_the_reference(
        function in prop_oneof![
            Just(crate::priority::fairshare::FairshareFunction::FAIR_TREE),
            Just(crate::priority::fairshare::FairshareFunction::SLURM_CLASSIC),
            Just(crate::priority::fairshare::FairshareFunction::PBS),
            Just(crate::priority::fairshare::FairshareFunction::METACENTRUM),
            Just("htcondor:floor=0.25".parse().unwrap()),
            Just("grid-engine".parse().unwrap()),
        ],
        decay in prop_oneof![
            Just(crate::usage::decay::Decay::Continuous { half_life_s: 50.0 }),
            Just(crate::usage::decay::Decay::Step { period_s: 30.0, factor: 0.5 }),
            Just(crate::usage::decay::Decay::Continuous { half_life_s: f64::INFINITY }),
        ],
        at_finish in any::<bool>(),
        refresh_s in prop_oneof![Just(0.0), Just(25.0)],
        ops in prop::collection::vec((0u32..4, 0.5..8.0f64, 0u8..5, 0.0..20.0f64), 1..40),
    ) {
        let settings = FairshareSettings {
            decay,
            charging: if at_finish { Charging::AtFinish } else { Charging::Running },
            refresh_s,
            ..fairshare(function)
        };
        let mut aside = [false; 4];
        // The jobs as they stood at the last refresh, and its time: what a periodically
        // refreshed ranker serves (as they stood, not as their times say: a job that ends at
        // the very instant of the refresh, after it, waits for the next).
        let mut refreshed: Option<(f64, Vec<RefJob>)> = None;
        let mut before = 0.0;
        let shares = Share::weighted(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        let mut ranker = FairshareRanker::new(settings, Accounts::flat(&shares));
        let mut jobs: Vec<RefJob> = Vec::new();
        let mut heads: Vec<Option<Head>> = vec![None; 4];
        let mut now = 0.0;
        for (seq, (user, rate, action, dt)) in ops.into_iter().enumerate() {
            now += dt.round();
            ranker.advance(Time::from_secs_f64(now)).unwrap();
            // A refresh since the last event counts the jobs as they stood then, at its
            // instant, whenever the next decision comes.
            if refresh_s > 0.0 {
                let refresh = (now / refresh_s).floor() * refresh_s;
                let predated = refreshed.as_ref().is_some_and(|(at, _)| *at < refresh);
                if refresh >= before && predated {
                    refreshed = Some((refresh, jobs.clone()));
                }
            }
            before = now;
            match action {
                0 => {
                    ranker.job_started(user, rate).unwrap();
                    jobs.push((user, rate, now, None));
                }
                1 => {
                    let open = jobs.iter().position(|j| j.0 == user && j.3.is_none());
                    if let Some(i) = open {
                        ranker.job_finished(user, jobs[i].1, now - jobs[i].2).unwrap();
                        jobs[i].3 = Some(now);
                    }
                }
                2 => {
                    let head = heads[user as usize]
                        .is_none()
                        .then(|| Head::new(Time::from_secs_f64(now), seq as u64));
                    ranker.update(user, &[0.0], head).unwrap();
                    heads[user as usize] = head;
                }
                3 => {
                    ranker.set_aside(user);
                    aside[user as usize] = true;
                }
                _ => {
                    ranker.restore();
                    aside = [false; 4];
                }
            }
            // Without a refresh since (or without periodic refreshes) the keys are those of
            // this decision.
            if refresh_s <= 0.0 || refreshed.is_none() {
                refreshed = Some((now, jobs.clone()));
            }
            let (at, known) = refreshed.as_ref().expect("set above");
            let expected: Vec<u32> = reference_order(&settings, &shares, known, &heads, *at)
                .into_iter()
                .filter(|u| !aside[*u as usize])
                .collect();
            prop_assert_eq!(ranker.first(), expected.first().copied());
            prop_assert_eq!(ranker.iter().collect::<Vec<_>>(), expected);
        }
    }
}
