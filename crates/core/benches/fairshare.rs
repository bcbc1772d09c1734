//! Fairshare factors for a large site: 100,000 users under a 4-level account tree (10
//! divisions × 10 departments × 10 groups × 100 users), every factor recomputed from the
//! users' usage under each function, and one decision of the batch engine's fairshare ranker
//! at that size. The budget is 50 ms (docs/benchmarks.md).

use criterion::{criterion_group, criterion_main, Criterion};
use fairshare_core::choice::Choice;
use fairshare_core::model::{RawShares, Time};
use fairshare_core::priority::fairshare::{standings, Association, FairshareFunction};
use fairshare_core::rank::{Accounts, Charging, FairshareRanker, FairshareSettings, Head, Ranker};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

/// The seeded tree: accounts of 1–10 shares, users of 1–4 shares, a tenth of the users idle
/// and the rest with usage spread over six orders of magnitude.
fn site() -> Vec<Association> {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let mut tree = vec![Association {
        parent: None,
        shares: RawShares::Count(1.0),
        usage: 0.0,
        user: false,
    }];
    let mut level = vec![0];
    for fan_out in [10, 10, 10] {
        let mut next = Vec::new();
        for &parent in &level {
            for _ in 0..fan_out {
                next.push(tree.len());
                tree.push(Association {
                    parent: Some(parent),
                    shares: RawShares::Count(rng.gen_range(1..=10) as f64),
                    usage: 0.0,
                    user: false,
                });
            }
        }
        level = next;
    }
    for &group in &level {
        for _ in 0..100 {
            let idle = rng.gen_bool(0.1);
            tree.push(Association {
                parent: Some(group),
                shares: RawShares::Count(rng.gen_range(1..=4) as f64),
                usage: if idle {
                    0.0
                } else {
                    10f64.powf(rng.gen_range(0.0..6.0))
                },
                user: true,
            });
        }
    }
    tree
}

fn bench(c: &mut Criterion) {
    let tree = site();
    let users = tree.iter().filter(|a| a.user).count();
    assert_eq!(users, 100_000);
    let mut group = c.benchmark_group("standings_100k_users_4_levels");
    for &function in FairshareFunction::ALL {
        group.bench_function(function.name(), |b| {
            b.iter(|| standings(black_box(&tree), function).expect("a valid tree"))
        });
    }
    group.finish();
    ranker(c, tree);
}

/// The same site as a ranker in the batch engine: every user charged its usage, half of
/// them waiting; each decision after time moves recomputes every factor and orders the
/// waiting users.
fn ranker(c: &mut Criterion, tree: Vec<Association>) {
    let leaf: Vec<usize> = (0..tree.len()).filter(|&i| tree[i].user).collect();
    let usage: Vec<f64> = leaf.iter().map(|&l| tree[l].usage).collect();
    let accounts = Accounts::new(tree, leaf).expect("a valid tree");
    let settings = FairshareSettings {
        refresh_s: 0.0,
        charging: Charging::AtFinish,
        ..FairshareSettings::default()
    };
    let mut ranker = FairshareRanker::new(settings, accounts);
    for (c, u) in usage.iter().enumerate() {
        ranker
            .job_finished(c as u32, *u, 1.0)
            .expect("a valid charge");
        if c % 2 == 0 {
            let head = Head::new(Time::ZERO, c as u64);
            ranker
                .update(c as u32, &[0.0], Some(head))
                .expect("a client");
        }
    }
    let mut now = 0.0;
    c.bench_function("fairshare_ranker_100k_users_decision", |b| {
        b.iter(|| {
            now += 1.0;
            ranker
                .advance(Time::from_secs_f64(now))
                .expect("time moves on");
            black_box(ranker.first())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
