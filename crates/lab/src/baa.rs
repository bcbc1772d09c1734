//! The BAA-T paper's experiment (`spec/baa.md` §8), as a library: users whose demand vectors
//! are sampled from a trace's task requests join one by one, each bringing 1/n of the CPU and
//! memory, and after every join BAA-T, static BAA and DRF divide what is there. The paper's
//! figures are the utilisation of each resource after each join (Figure 1) and the CPU and
//! memory held by the two bottleneck sets (Figures 2–3).

use crate::LabError;
use fairshare_core::alloc::baa::time::{BaaTime, Origin, TimeSettings};
use fairshare_core::alloc::baa::{self, Classification, Solver};
use fairshare_core::alloc::divisible::{water_fill, DivisibleClient};
use fairshare_core::model::{ResourceSet, Task};
use fairshare_core::policy::{Engine, PolicyKind, PolicySpec};
use fairshare_core::priority::Policy;
use fairshare_sim::summary::{BaaSeries, BaaSummary, TimelineSummary, SCHEMA_VERSION};
use fairshare_trace::{Timeline, TraceError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

/// Each user's demand is its request times this: far above the whole cluster, so every user
/// could use everything (the paper's "infinitely many tasks").
const UNBOUNDED: f64 = 1e6;

/// The (CPU, memory) requests of the tasks of `tasks` that request both: the completed tasks
/// a replay would run, a narrower pool than the SUBMIT events the spec samples.
pub fn task_requests(
    tasks: impl Iterator<Item = Result<Task, TraceError>>,
) -> Result<Vec<[f64; 2]>, LabError> {
    let mut pool = Vec::new();
    for task in tasks {
        if let [cpu, mem, ..] = task?.demand[..] {
            if cpu > 0.0 && mem > 0.0 {
                pool.push([cpu, mem]);
            }
        }
    }
    Ok(pool)
}

/// `users` demands (CPU, memory), drawn uniformly with replacement and seeded from `pool`.
pub fn sample(pool: &[[f64; 2]], users: usize, seed: u64) -> Result<Vec<Vec<f64>>, LabError> {
    if pool.is_empty() {
        return Err(LabError::Unusable(
            "no request asks for both CPU and memory".into(),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Ok((0..users)
        .map(|_| pool[rng.gen_range(0..pool.len())].to_vec())
        .collect())
}

/// `users` demands drawn from LogNormal(−3, 1) for both resources, seeded: the spec's
/// stand-in when no trace is at hand.
pub fn generated(users: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let law = LogNormal::new(-3.0, 1.0).expect("a valid log-normal law");
    (0..users)
        .map(|_| vec![law.sample(&mut rng), law.sample(&mut rng)])
        .collect()
}

/// The experiment: `demands` join one per epoch, then `tail` epochs pass without joins.
pub fn experiment(
    demands: &[Vec<f64>],
    source: String,
    seed: u64,
    tail: usize,
) -> Result<BaaSummary, LabError> {
    let n = demands.len();
    if n == 0 {
        return Err(LabError::Unusable(
            "the experiment needs at least one user".into(),
        ));
    }
    let failed = |e: baa::BaaError| LabError::Unusable(format!("BAA: {e}"));
    let sets: Vec<usize> = demands
        .iter()
        .map(|d| baa::bottleneck(d, &[1.0, 1.0], Classification::Capacity))
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    let global = TimeSettings {
        origin: Origin::Global,
        ..TimeSettings::default()
    };
    let mut timed = BaaTime::new(2, 1.0 / n as f64, TimeSettings::default()).map_err(failed)?;
    let mut from_zero = BaaTime::new(2, 1.0 / n as f64, global).map_err(failed)?;
    let mut summary = BaaSummary {
        schema_version: SCHEMA_VERSION,
        source,
        seed,
        users: n,
        joined: Vec::new(),
        cpu_set: Vec::new(),
        memory_set: Vec::new(),
        policies: ["baa-time", "baa-time:origin=global", "baa", "drf"]
            .map(series)
            .to_vec(),
    };
    for epoch in 0..n + tail {
        let k = (epoch + 1).min(n);
        let share = k as f64 / n as f64;
        if epoch < n {
            for baa in [&mut timed, &mut from_zero] {
                baa.set_scale(share).map_err(failed)?;
                baa.join(demands[epoch].clone(), sets[epoch], f64::INFINITY)
                    .map_err(failed)?;
            }
        }
        let present: Vec<Vec<f64>> = demands[..k]
            .iter()
            .map(|d| d.iter().map(|x| x * UNBOUNDED).collect())
            .collect();
        let of_capacity = |a: Vec<Vec<f64>>| -> Vec<Vec<f64>> {
            a.into_iter()
                .map(|x| x.iter().map(|v| v / share).collect())
                .collect()
        };
        let (arrival, global) = (
            timed.epoch(1.0).map_err(failed)?,
            from_zero.epoch(1.0).map_err(failed)?,
        );
        for (s, (run, epoch)) in summary
            .policies
            .iter_mut()
            .zip([(&timed, &arrival), (&from_zero, &global)])
        {
            s.spread.push(run.spread());
            s.kept.push(epoch.kept);
        }
        let allocations = [
            of_capacity(arrival.allocations),
            of_capacity(global.allocations),
            baa::allocate(
                &present,
                &[share, share],
                Classification::Capacity,
                Solver::Exact,
            )
            .map_err(failed)?
            .allocations,
            drf(&present, share)?,
        ];
        let in_cpu_set = sets[..k].iter().filter(|s| **s == 0).count();
        summary.joined.push(k);
        summary.cpu_set.push(in_cpu_set);
        summary.memory_set.push(k - in_cpu_set);
        for (s, a) in summary.policies.iter_mut().zip(&allocations) {
            record(s, a, &sets[..k]);
        }
    }
    Ok(summary)
}

/// Runs a timeline under its policy (`baa`: the levels alone each epoch; `baa-time`: the
/// time constraint), one unit of time per epoch.
pub fn timeline(t: &Timeline) -> Result<TimelineSummary, LabError> {
    let spec = PolicySpec::parse_for(&t.policy, Engine::Allocate)
        .map_err(|e| LabError::Unusable(format!("policy: {e}")))?;
    let PolicyKind::Baa(policy) = spec.kind else {
        return Err(LabError::Unusable(format!(
            "policy: a timeline runs baa or baa-time, found {:?}",
            t.policy
        )));
    };
    // Static BAA keeps no history: nobody gets more than its level (catch-up 1).
    let settings = policy.time.unwrap_or(TimeSettings {
        solver: policy.solver,
        catch_up: 1.0,
        ..TimeSettings::default()
    });
    let failed = |e: baa::BaaError| LabError::Unusable(format!("BAA: {e}"));
    let m = t.capacity.len();
    let mut run = BaaTime::new(m, 1.0, settings).map_err(failed)?;
    let mut index: Vec<Option<usize>> = vec![None; t.users.len()];
    let mut allocations = Vec::new();
    for epoch in 0..t.epochs {
        // Departures first, so that a newcomer's key never comes from a user leaving now.
        for (u, user) in t.users.iter().enumerate() {
            if let (Some(i), Some(true)) = (index[u], user.leave.map(|l| l == epoch)) {
                run.leave(i);
            }
        }
        for (u, user) in t.users.iter().enumerate() {
            if user.join == epoch {
                let set = baa::bottleneck(&user.demand, &t.capacity, policy.classification)
                    .map_err(failed)?;
                let share = user
                    .demand
                    .iter()
                    .zip(&t.capacity)
                    .map(|(d, c)| d / c)
                    .collect();
                index[u] = Some(run.join(share, set, f64::INFINITY).map_err(failed)?);
            }
            if let Some(i) = index[u] {
                let set = run.set_of(i).unwrap_or(0);
                run.set_cap(i, user.cap_at(epoch) / t.capacity[set]);
            }
        }
        let shares = run.epoch(1.0).map_err(failed)?.allocations;
        let absolute = (index.iter())
            .map(|i| match i {
                Some(i) => shares[*i]
                    .iter()
                    .zip(&t.capacity)
                    .map(|(x, c)| x * c)
                    .collect(),
                None => vec![0.0; m],
            })
            .collect();
        allocations.push(absolute);
    }
    let (received, sets) = (run.received(), run.sets());
    let of_user = |u: usize| index[u].map(|i| (received[i] * t.capacity[sets[i]], sets[i]));
    let bottleneck = (0..t.users.len())
        .map(|u| of_user(u).map_or_else(|| "–".to_owned(), |(_, r)| t.resources[r].clone()))
        .collect();
    Ok(TimelineSummary {
        schema_version: SCHEMA_VERSION,
        policy: t.policy.clone(),
        resources: t.resources.clone(),
        users: t.users.iter().map(|u| u.id.clone()).collect(),
        bottleneck,
        allocations,
        received: (0..t.users.len())
            .map(|u| of_user(u).map_or(0.0, |(r, _)| r))
            .collect(),
    })
}

/// An empty series for `policy`.
fn series(policy: &str) -> BaaSeries {
    BaaSeries {
        policy: policy.into(),
        cpu: Vec::new(),
        memory: Vec::new(),
        cpu_set_cpu: Vec::new(),
        cpu_set_memory: Vec::new(),
        memory_set_cpu: Vec::new(),
        memory_set_memory: Vec::new(),
        envious_epochs: 0,
        spread: Vec::new(),
        kept: Vec::new(),
    }
}

/// DRF's exact division of `(share, share)` among `demands`, as fractions of it.
fn drf(demands: &[Vec<f64>], share: f64) -> Result<Vec<Vec<f64>>, LabError> {
    let resources = ResourceSet::new([("cpu".to_string(), share), ("mem".to_string(), share)])
        .map_err(|e| LabError::Unusable(format!("DRF: {e}")))?;
    let clients: Vec<DivisibleClient> = demands.iter().cloned().map(DivisibleClient::new).collect();
    let fill = water_fill(&Policy::Drf, &resources, &clients)
        .map_err(|e| LabError::Unusable(format!("DRF: {e}")))?;
    Ok(fill.shares)
}

/// One epoch's use by each set and in all, and whether some user envied the other set.
fn record(s: &mut BaaSeries, allocations: &[Vec<f64>], sets: &[usize]) {
    let total = |set: Option<usize>, k: usize| -> f64 {
        (allocations.iter().zip(sets))
            .filter(|(_, r)| set.is_none_or(|set| **r == set))
            .map(|(a, _)| a[k])
            .sum()
    };
    s.cpu.push(total(None, 0));
    s.memory.push(total(None, 1));
    s.cpu_set_cpu.push(total(Some(0), 0));
    s.cpu_set_memory.push(total(Some(0), 1));
    s.memory_set_cpu.push(total(Some(1), 0));
    s.memory_set_memory.push(total(Some(1), 1));
    let extreme = |set: usize, k: usize, low: bool| {
        let values = (allocations.iter().zip(sets))
            .filter(|(_, r)| **r == set)
            .map(|(a, _)| a[k]);
        if low {
            values.fold(f64::INFINITY, f64::min)
        } else {
            values.fold(f64::NEG_INFINITY, f64::max)
        }
    };
    let envy = extreme(0, 0, true) < extreme(1, 0, false) * (1.0 - 1e-9)
        || extreme(1, 1, true) < extreme(0, 1, false) * (1.0 - 1e-9);
    s.envious_epochs += usize::from(envy);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's expectations (§8) on the generated users: capacity never exceeded, some
    /// resource full at every epoch (but under BAA-T from time 0, whose catch-up is blended
    /// back), BAA without envy across sets, BAA-T (Arrival, unlimited demands) equal to static
    /// BAA, and the same answer for the same seed.
    #[test]
    fn the_experiment_meets_the_specs_expectations() {
        let demands = generated(60, 7);
        let summary = experiment(&demands, "generated".into(), 7, 5).unwrap();
        assert_eq!(summary.joined.len(), 65);
        assert_eq!(summary.policies.len(), 4);
        for s in &summary.policies {
            for (c, m) in s.cpu.iter().zip(&s.memory) {
                assert!(
                    *c <= 1.0 + 1e-9 && *m <= 1.0 + 1e-9,
                    "{}: {c} {m}",
                    s.policy
                );
                // Catching up from time 0 is blended back to fit the capacities, which can
                // leave both short of full.
                if !s.policy.contains("global") {
                    assert!(c.max(*m) >= 1.0 - 1e-9, "{}: {c} {m}", s.policy);
                }
            }
        }
        let (timed, fixed) = (&summary.policies[0], &summary.policies[2]);
        for (a, b) in timed.cpu.iter().zip(&fixed.cpu) {
            assert!((a - b).abs() < 1e-9);
        }
        assert_eq!(fixed.envious_epochs, 0);
        // From arrival with unlimited demands every member of a set is even; from time 0 the
        // newcomers lag, and the series are kept for BAA-T only.
        assert!(timed.spread.iter().all(|s| *s < 1e-9));
        assert!(summary.policies[1].spread.iter().any(|s| *s > 0.01));
        assert_eq!(timed.kept.len(), 65);
        assert!(fixed.spread.is_empty() && fixed.kept.is_empty());
        assert_eq!(
            summary,
            experiment(&demands, "generated".into(), 7, 5).unwrap()
        );
    }
}
