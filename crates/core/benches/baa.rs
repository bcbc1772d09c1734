//! One arrival under BAA and BAA-T at n = 1,000, 10,000 and 100,000 users present: the
//! per-set sums updated, the levels solved, and every user's allocation written (BAA); the
//! newcomer placed and one epoch water-filled (BAA-T). Both should grow linearly in n
//! (docs/benchmarks.md).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fairshare_core::alloc::baa::time::{BaaTime, TimeSettings};
use fairshare_core::alloc::baa::{at_level, bottleneck, Classification, SetSums, Solver};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use std::hint::black_box;

/// `n` seeded demands from LogNormal(−3, 1) for CPU and memory.
fn demands(n: usize) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let law = LogNormal::new(-3.0, 1.0).expect("a valid law");
    (0..n)
        .map(|_| vec![law.sample(&mut rng), law.sample(&mut rng)])
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("baa_one_arrival");
    for n in [1_000usize, 10_000, 100_000] {
        let users = demands(n + 1);
        let sets: Vec<usize> = (users.iter())
            .map(|d| bottleneck(d, &[1.0, 1.0], Classification::Capacity).expect("two resources"))
            .collect();
        let mut sums = SetSums::new(2);
        for (d, &r) in users[..n].iter().zip(&sets) {
            sums.add(r, d);
        }
        group.bench_with_input(BenchmarkId::new("baa", n), &n, |b, &n| {
            b.iter(|| {
                let mut sums = sums.clone();
                sums.add(sets[n], &users[n]);
                let level = sums
                    .levels(&[1.0, 1.0], n + 1, &[1.0, 1.0], Solver::Exact)
                    .expect("feasible");
                let written: f64 = (users.iter().zip(&sets))
                    .map(|(d, &r)| at_level(d, r, level[r])[1 - r])
                    .sum();
                black_box(written)
            })
        });
        let mut timed = BaaTime::new(2, 1.0, TimeSettings::default()).expect("a capacity");
        for (d, &r) in users[..n].iter().zip(&sets) {
            timed.join(d.clone(), r, f64::INFINITY).expect("a demand");
        }
        timed.epoch(1.0).expect("an epoch");
        group.bench_with_input(BenchmarkId::new("baa_time", n), &n, |b, &n| {
            b.iter(|| {
                let mut timed = timed.clone();
                timed
                    .join(users[n].clone(), sets[n], f64::INFINITY)
                    .expect("a demand");
                black_box(timed.epoch(1.0).expect("an epoch").kept)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
