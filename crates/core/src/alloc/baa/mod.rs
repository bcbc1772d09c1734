//! Bottleneck-aware allocation: BAA (Wang & Varman) and its time-constrained variant BAA-T
//! (seed 002, `spec/baa.md`).
//!
//! Users whose tasks run in fixed proportions are grouped by the resource that limits them
//! (their *bottleneck set*). Within a set every user gets the same amount of the set's
//! bottleneck resource, the *level* `p_r`; the levels of the sets are chosen together to use
//! the resources as fully as possible while no user's share falls below an equal partition
//! (sharing incentive) and no user uses more of another set's bottleneck than that set's users
//! get (envy-freeness across sets). That choice is a linear programme with one variable per
//! set ([`lp`]), whose size does not depend on the number of users: the per-set sums it needs
//! are kept as users join ([`SetSums`]), so an arrival costs O(m²) plus the programme, and
//! writing every allocation O(n).
//!
//! Everything here is in fractions of capacity: a user's demand `ĉ_i` is what one unit of its
//! work takes of each resource's capacity, and the capacity of resource k is `C_k` (1 for a
//! fixed cluster, k/n while users who each bring 1/n join).

pub mod lp;
pub mod time;

use lp::Programme;
use thiserror::Error;

/// How users are put into bottleneck sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Classification {
    /// A user's bottleneck is the resource its demand loads most relative to capacity (ties
    /// go to the lower index: CPU before memory), as the model's own constraints imply.
    Capacity,
    /// The seed's worked example only (two resources): a user is in the first (CPU) set when
    /// the memory part of its raw demand, `d₂ / (d₁ + d₂)`, is at least `theta` (0.3
    /// reproduces the seed). It contradicts the paper's definitions (docs/baa.md).
    PaperExample {
        /// The threshold on the memory part.
        theta: f64,
    },
}

/// How the set levels are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Solver {
    /// The optimum of the levels' linear programme.
    #[default]
    Exact,
    /// The paper's greedy raise (Algorithms 2–3): sets in decreasing order of their ratio
    /// sums, each raised as far as it can go in turn; may stop short of the optimum.
    Greedy,
}

/// An allocation BAA cannot make.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum BaaError {
    /// A user's demand must be positive in every resource and finite.
    #[error("user {user}: every demand must be a positive finite number, found {demand:?}")]
    Demand {
        /// The user.
        user: usize,
        /// Its demand.
        demand: Vec<f64>,
    },
    /// Capacities must be positive, one per resource.
    #[error("capacities must be positive numbers, one per resource, found {0:?}")]
    Capacity(Vec<f64>),
    /// The sharing-incentive point violates a constraint (only under the seed's example rule,
    /// which can put a user in a set that is not its bottleneck).
    #[error("no levels give every set its equal share without envy: {0}")]
    Infeasible(String),
    /// The seed's example rule is defined for two resources only.
    #[error("the seed's example classification needs two resources, found {0}")]
    NotTwoResources(usize),
}

/// The bottleneck set of a user whose raw demand (in the resources' units) is `raw`, on
/// capacities `capacity`, under `rule`.
pub fn bottleneck(raw: &[f64], capacity: &[f64], rule: Classification) -> Result<usize, BaaError> {
    match rule {
        Classification::Capacity => {
            let load = |k: usize| raw[k] / capacity[k];
            Ok((1..raw.len()).fold(0, |best, k| if load(k) > load(best) { k } else { best }))
        }
        Classification::PaperExample { theta } => match raw {
            [cpu, mem] => Ok(if mem / (cpu + mem) >= theta { 0 } else { 1 }),
            _ => Err(BaaError::NotTwoResources(raw.len())),
        },
    }
}

/// What the levels' programme needs of the users, kept per set as users join: how many, the
/// sum over members of `ĉ_ik / ĉ_ir` for every resource k, and the largest such ratio
/// (`κ_{r→k}`: how much of k a member of r uses per unit of r).
#[derive(Debug, Clone, PartialEq)]
pub struct SetSums {
    count: Vec<usize>,
    ratio: Vec<Vec<f64>>,
    kappa: Vec<Vec<f64>>,
}

impl SetSums {
    /// No users, over `resources` resources.
    pub fn new(resources: usize) -> SetSums {
        SetSums {
            count: vec![0; resources],
            ratio: vec![vec![0.0; resources]; resources],
            kappa: vec![vec![0.0; resources]; resources],
        }
    }

    /// A user of demand `demand` (fractions of capacity) in set `set` joins: O(m).
    pub fn add(&mut self, set: usize, demand: &[f64]) {
        self.count[set] += 1;
        for (k, d) in demand.iter().enumerate() {
            let ratio = d / demand[set];
            self.ratio[set][k] += ratio;
            self.kappa[set][k] = self.kappa[set][k].max(ratio);
        }
    }

    /// The levels' programme on `capacity` for `n_fair` entitled users, the objective
    /// weighing resource k by `omega[k]`, with the non-empty sets it has variables for.
    fn programme(&self, capacity: &[f64], n_fair: usize, omega: &[f64]) -> (Programme, Vec<usize>) {
        let sets: Vec<usize> = (0..self.count.len())
            .filter(|&r| self.count[r] > 0)
            .collect();
        let objective = sets
            .iter()
            .map(|&r| self.ratio[r].iter().zip(omega).map(|(s, w)| s * w).sum())
            .collect();
        let mut rows: Vec<Vec<f64>> = (0..capacity.len())
            .map(|k| sets.iter().map(|&r| self.ratio[r][k]).collect())
            .collect();
        let mut bounds = capacity.to_vec();
        for (a, &r) in sets.iter().enumerate() {
            for (b, &s) in sets.iter().enumerate() {
                if r != s {
                    let mut row = vec![0.0; sets.len()];
                    row[a] = self.kappa[r][s];
                    row[b] = -1.0;
                    rows.push(row);
                    bounds.push(0.0);
                }
            }
        }
        let floor = sets
            .iter()
            .map(|&r| capacity[r] / n_fair.max(1) as f64)
            .collect();
        let programme = Programme {
            objective,
            rows,
            bounds,
            floor,
        };
        (programme, sets)
    }

    /// Each resource's level (0 for a set without users) on `capacity` for `n_fair` entitled
    /// users, by `solver`, utilisation weighed by `omega`.
    pub fn levels(
        &self,
        capacity: &[f64],
        n_fair: usize,
        omega: &[f64],
        solver: Solver,
    ) -> Result<Vec<f64>, BaaError> {
        let (programme, sets) = self.programme(capacity, n_fair, omega);
        let solved = match solver {
            Solver::Exact => programme.solve(),
            Solver::Greedy => {
                // Algorithm 3: the set whose members use most of the other resources per unit
                // of their own (M against H) rises first.
                let mut order: Vec<usize> = (0..sets.len()).collect();
                let others =
                    |v: usize| programme.objective[v] - self.count[sets[v]] as f64 * omega[sets[v]];
                order.sort_by(|a, b| others(*b).total_cmp(&others(*a)).then(a.cmp(b)));
                programme.greedy(&order)
            }
        };
        let p = solved.map_err(|e| BaaError::Infeasible(e.to_string()))?;
        let mut level = vec![0.0; capacity.len()];
        for (v, &r) in sets.iter().enumerate() {
            level[r] = p[v];
        }
        Ok(level)
    }
}

/// A user's allocation (fractions of capacity) in set `set` at level `level`, its tasks
/// running in the proportions of `demand`: `level` of the bottleneck and the matching amounts
/// of the rest.
pub fn at_level(demand: &[f64], set: usize, level: f64) -> Vec<f64> {
    demand.iter().map(|d| level * d / demand[set]).collect()
}

/// Static BAA's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Baa {
    /// Each user's bottleneck set.
    pub bottleneck: Vec<usize>,
    /// Each resource's level (0 for a set without users).
    pub level: Vec<f64>,
    /// Each user's allocation, fractions of capacity.
    pub allocations: Vec<Vec<f64>>,
}

/// Static BAA: `raw` demands (in the resources' units; each the most the user could use, in
/// the proportions its tasks run in) on `capacity` (same units), `n_fair` = every user,
/// utilisation weighed equally across resources. A user that needs less than its set's level
/// gets its demand, and the rest of the level stays idle.
pub fn allocate(
    raw: &[Vec<f64>],
    capacity: &[f64],
    rule: Classification,
    solver: Solver,
) -> Result<Baa, BaaError> {
    if capacity.is_empty() || !capacity.iter().all(|c| c.is_finite() && *c > 0.0) {
        return Err(BaaError::Capacity(capacity.to_vec()));
    }
    let m = capacity.len();
    let mut sums = SetSums::new(m);
    let mut demands = Vec::with_capacity(raw.len());
    let mut bottlenecks = Vec::with_capacity(raw.len());
    for (user, d) in raw.iter().enumerate() {
        if d.len() != m || !d.iter().all(|x| x.is_finite() && *x > 0.0) {
            return Err(BaaError::Demand {
                user,
                demand: d.clone(),
            });
        }
        let share: Vec<f64> = d.iter().zip(capacity).map(|(x, c)| x / c).collect();
        let set = bottleneck(d, capacity, rule)?;
        sums.add(set, &share);
        demands.push(share);
        bottlenecks.push(set);
    }
    let level = sums.levels(&vec![1.0; m], raw.len(), &vec![1.0; m], solver)?;
    let allocations = demands
        .iter()
        .zip(&bottlenecks)
        .map(|(d, &r)| at_level(d, r, level[r].min(d[r])))
        .collect();
    Ok(Baa {
        bottleneck: bottlenecks,
        level,
        allocations,
    })
}

#[cfg(test)]
mod tests;
