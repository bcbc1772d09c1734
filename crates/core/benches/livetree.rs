//! Scheduling decisions per second: the live tree against recompute-and-sort and
//! recompute-into-a-heap.
//!
//! One decision is what Algorithm 1 does per task (docs/mechanisms.md, SDRF §6.3): take the client with
//! the lowest SDRF priority, give it one task (its allocation grows by its demand vector and its
//! excess becomes `max(o − 1/n, 0)`), and advance time by a step (see [`STEPS`]). Every 16th decision a
//! pseudo-random client also releases all its tasks, so allocations stay bounded (about 16 tasks
//! per client). Commitments use δ = 1 − 10⁻⁶ (τ ≈ 11.6 days); half the clients start with
//! non-zero commitments, so events happen from the start.
//!
//! Methods:
//! * `tree_step_1ms`, `tree_step_100ms` — [`LiveTree`]: `first`, `update`, `advance`, with
//!   1 ms or 100 ms of simulated time per decision.
//! * `tree_frozen` — the same with τ = ∞ (commitments frozen, so no events): the cost of
//!   the tournament alone, to tell it apart from the cost of the events.
//! * `sort` — decay every commitment over the step (one shared factor), recompute every
//!   priority with [`PriorityForm::priority`], sort all clients, take the first.
//! * `heap` — the same recomputation, then heapify into a `BinaryHeap` and pop the minimum.
//!
//! The baselines break ties by id only (not by slope); that does not change their cost. All
//! sizes are run, including the baselines at 100 000 clients (a few milliseconds per decision,
//! so criterion takes fewer iterations there). Run with
//! `cargo bench -p fairshare-core --bench livetree`; one case alone (built alone: its peak
//! memory is the process's) with a filter, e.g. `-- 'tree_step_1ms/100000x2$'`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fairshare_core::priority::{ClientView, PriorityForm};
use fairshare_core::rank::livetree::{LiveTree, Member};
use fairshare_core::usage::decay::{exp_progress, tau_from_epsilon};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

const FORM: PriorityForm = PriorityForm::SumOfMaxes;
/// Seconds of simulated time between two decisions: a scheduler deciding 1,000 times per
/// second (the paper cites "hundreds of decisions per second" at peak), and one deciding 10
/// times per second. Events per decision grow with the step.
const STEPS: [(&str, f64); 2] = [("1ms", 1e-3), ("100ms", 0.1)];
/// Every this many decisions, one client releases all its tasks.
const RELEASE_EVERY: u64 = 16;

/// SplitMix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The clients' allocations and demands, shared by all methods.
struct World {
    n: usize,
    m: usize,
    tau: f64,
    step: f64,
    now: f64,
    decisions: u64,
    allocation: Vec<f64>,
    excess: Vec<f64>,
    demand: Vec<f64>,
    rng: Rng,
}

impl World {
    /// `n` clients on `m` resources, each holding a few tasks already.
    fn new(n: usize, m: usize, step: f64) -> Self {
        let mut rng = Rng(n as u64 * 31 + m as u64);
        let demand: Vec<f64> = (0..n * m)
            .map(|_| (0.2 + 0.8 * rng.unit()) / (8.0 * n as f64))
            .collect();
        let mut world = World {
            n,
            m,
            tau: tau_from_epsilon(1e-6),
            step,
            now: 0.0,
            decisions: 0,
            allocation: vec![0.0; n * m],
            excess: vec![0.0; n * m],
            demand,
            rng,
        };
        for i in 0..n {
            for _ in 0..world.rng.below(24) {
                world.grant(i);
            }
        }
        world
    }

    /// Initial commitments: zero for even clients, up to twice the fair share for odd ones.
    fn initial_commitment(&mut self, i: usize) -> Vec<f64> {
        let odd = (i % 2) as f64;
        (0..self.m)
            .map(|_| odd * 2.0 * self.rng.unit() / self.n as f64)
            .collect()
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        i * self.m..(i + 1) * self.m
    }

    /// Client `i` starts one task.
    fn grant(&mut self, i: usize) {
        let fair = 1.0 / self.n as f64;
        for k in self.range(i) {
            self.allocation[k] += self.demand[k];
            self.excess[k] = (self.allocation[k] - fair).max(0.0);
        }
    }

    /// Client `i` releases all its tasks.
    fn release(&mut self, i: usize) {
        for k in self.range(i) {
            (self.allocation[k], self.excess[k]) = (0.0, 0.0);
        }
    }

    /// Count a decision and, every so often, pick a client to release its tasks.
    fn tick(&mut self) -> Option<usize> {
        self.decisions += 1;
        self.now += self.step;
        self.decisions
            .is_multiple_of(RELEASE_EVERY)
            .then(|| self.rng.below(self.n))
    }
}

/// The live tree method.
struct TreeSim {
    world: World,
    tree: LiveTree,
}

impl TreeSim {
    fn new(n: usize, m: usize, tau: f64, step: f64) -> Self {
        let mut world = World::new(n, m, step);
        let mut tree = LiveTree::new(m, tau, FORM);
        for i in 0..n {
            let commitment = world.initial_commitment(i);
            let r = world.range(i);
            let member = Member {
                weight: 1.0,
                allocation: world.allocation[r.clone()].to_vec(),
                excess: world.excess[r].to_vec(),
                commitment,
            };
            tree.insert(i as u32, member).unwrap();
        }
        TreeSim { world, tree }
    }

    fn decide(&mut self) {
        let Some(id) = self.tree.first() else { return };
        self.world.grant(id as usize);
        self.sync(id as usize);
        if let Some(j) = self.world.tick() {
            self.world.release(j);
            self.sync(j);
        }
        self.tree.advance(self.world.now).unwrap();
    }

    fn sync(&mut self, i: usize) {
        let r = self.world.range(i);
        let (allocation, excess) = (&self.world.allocation[r.clone()], &self.world.excess[r]);
        self.tree.update(i as u32, allocation, excess).unwrap();
    }
}

/// How a baseline finds the lowest priority once all are recomputed.
#[derive(Clone, Copy)]
enum Pick {
    Sort,
    Heap,
}

/// The recompute-everything baselines.
struct NaiveSim {
    world: World,
    pick: Pick,
    commitment: Vec<f64>,
    keys: Vec<(f64, u32)>,
    heap: Vec<Reverse<(u64, u32)>>,
}

impl NaiveSim {
    fn new(n: usize, m: usize, pick: Pick) -> Self {
        let mut world = World::new(n, m, STEPS[0].1);
        let commitment = (0..n).flat_map(|i| world.initial_commitment(i)).collect();
        NaiveSim {
            world,
            pick,
            commitment,
            keys: Vec::new(),
            heap: Vec::new(),
        }
    }

    fn priority(&self, i: usize) -> f64 {
        let r = self.world.range(i);
        let view = ClientView {
            weight: 1.0,
            allocation: &self.world.allocation[r.clone()],
            commitment: &self.commitment[r],
        };
        FORM.priority(&view)
    }

    fn lowest(&mut self) -> usize {
        let n = self.world.n;
        match self.pick {
            Pick::Sort => {
                let mut keys = std::mem::take(&mut self.keys);
                keys.clear();
                keys.extend((0..n).map(|i| (self.priority(i), i as u32)));
                keys.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let lowest = keys[0].1 as usize;
                self.keys = keys;
                lowest
            }
            Pick::Heap => {
                let mut buffer = std::mem::take(&mut self.heap);
                buffer.clear();
                // Priorities are non-negative, so their bit patterns sort like the values.
                buffer.extend((0..n).map(|i| Reverse((self.priority(i).to_bits(), i as u32))));
                let mut heap = BinaryHeap::from(buffer);
                let lowest = heap.pop().map_or(0, |Reverse((_, i))| i as usize);
                self.heap = heap.into_vec();
                lowest
            }
        }
    }

    fn decide(&mut self) {
        let i = self.lowest();
        self.world.grant(i);
        if let Some(j) = self.world.tick() {
            self.world.release(j);
        }
        // Eq. 6 over the step, for every client: the excesses are constant over it.
        let progress = exp_progress(self.world.step, self.world.tau);
        for (c, e) in self.commitment.iter_mut().zip(&self.world.excess) {
            *c += (e - *c) * progress;
        }
    }
}

fn livetree(c: &mut Criterion) {
    let mut group = c.benchmark_group("livetree");
    group.throughput(Throughput::Elements(1));
    for n in [100, 1_000, 10_000, 100_000] {
        for m in [2, 6] {
            let size = format!("{n}x{m}");
            let decaying = STEPS
                .map(|(label, step)| (format!("tree_step_{label}"), tau_from_epsilon(1e-6), step));
            let frozen = ("tree_frozen".to_string(), f64::INFINITY, STEPS[0].1);
            // Each case is built when criterion first runs it, so that a filtered run (one
            // case under `/usr/bin/time`, for its peak memory) builds that case alone.
            for (name, tau, step) in decaying.into_iter().chain([frozen]) {
                let mut sim = None;
                group.bench_function(BenchmarkId::new(&name, &size), |b| {
                    let sim = sim.get_or_insert_with(|| TreeSim::new(n, m, tau, step));
                    b.iter(|| sim.decide())
                });
                if let Some(sim) = sim {
                    let (events, decisions) = (sim.tree.counters().events, sim.world.decisions);
                    let per_decision = events as f64 / decisions.max(1) as f64;
                    eprintln!(
                        "{name} {size}: {decisions} decisions, {per_decision:.3} events each"
                    );
                }
            }
            for (name, pick) in [("sort", Pick::Sort), ("heap", Pick::Heap)] {
                let mut sim = None;
                group.bench_function(BenchmarkId::new(name, &size), |b| {
                    let sim = sim.get_or_insert_with(|| NaiveSim::new(n, m, pick));
                    b.iter(|| sim.decide())
                });
            }
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = livetree
}
criterion_main!(benches);
