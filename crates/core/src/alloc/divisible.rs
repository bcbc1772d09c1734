//! Exact water-filling for divisible demands: stateful max–min (SDRF Eq. 4) and SDRF (Eq. 5),
//! which are DRF, weighted DRF and asset fairness when commitments are zero.
//!
//! Each client is a "tank" whose base sits at its commitment level; a common water level x
//! rises and every tank between its base and its brim fills at a rate set by its weight. Resource
//! use is piecewise linear in x, so the level where the first resource fills is found exactly by
//! walking the breakpoints (docs/mechanisms.md, SDRF §4.2), never by bisection.

use super::AllocError;
use crate::model::ResourceSet;
use crate::priority::{dominant_share, Policy};

/// One client's input to water-filling.
#[derive(Debug, Clone, PartialEq)]
pub struct DivisibleClient {
    /// Declared demand θ̂ per resource (non-negative), in the resources' units.
    pub demand: Vec<f64>,
    /// Relative weight ρ (see [`crate::model::relative_weights`]).
    pub weight: f64,
    /// Commitments per resource, fractions of each capacity (only SDRF reads them).
    pub commitment: Vec<f64>,
}

impl DivisibleClient {
    /// A client demanding `demand` (in the resources' units), weight 1, no commitment.
    pub fn new(demand: Vec<f64>) -> DivisibleClient {
        DivisibleClient {
            demand,
            weight: 1.0,
            commitment: Vec::new(),
        }
    }
}

/// The result of water-filling.
#[derive(Debug, Clone, PartialEq)]
pub struct WaterFill {
    /// Allocation per client per resource, in the resources' units.
    pub allocations: Vec<Vec<f64>>,
    /// The same allocations as fractions of each capacity.
    pub shares: Vec<Vec<f64>>,
    /// The water level x*: the common priority of every client that is neither empty nor full.
    pub level: f64,
    /// Resources saturated at the level (empty when every client is satisfied).
    pub bottlenecks: Vec<usize>,
}

/// A client's tank: where it starts filling, where it is full, and how fast it fills.
struct Tank {
    /// Demand scaled so its largest component is 1 (θ̃).
    unit: Vec<f64>,
    /// Dominant demand D.
    dominant: f64,
    /// Level at which the client starts receiving resources.
    start: f64,
    /// Level at which the client is satisfied.
    end: f64,
    /// Dominant share gained per unit of level (ρ / unit cost).
    rate: f64,
}

impl Tank {
    fn new(policy: &Policy, client: &DivisibleClient) -> Tank {
        let dominant = dominant_share(&client.demand);
        let unit: Vec<f64> = client.demand.iter().map(|d| d / dominant).collect();
        let weight = if policy.uses_weights() {
            client.weight
        } else {
            1.0
        };
        let cost = policy.unit_cost(&unit);
        let base = policy.commitment_level(&client.commitment);
        Tank {
            start: base / weight,
            end: (base + cost * dominant) / weight,
            rate: weight / cost,
            unit,
            dominant,
        }
    }

    /// Dominant share at level `x`.
    fn share(&self, x: f64) -> f64 {
        ((x - self.start) * self.rate).clamp(0.0, self.dominant)
    }
}

/// Water-fills `clients` on `resources` under `policy` (Eq. 5, exactly).
///
/// Clients whose demand is zero get nothing. Demand components may be zero; Eq. 5 then stops at
/// the first saturated resource (clients that do not need it could use more; docs/mechanisms.md, SDRF §4.2).
pub fn water_fill(
    policy: &Policy,
    resources: &ResourceSet,
    clients: &[DivisibleClient],
) -> Result<WaterFill, AllocError> {
    check(clients, resources.len())?;
    let normalised: Vec<DivisibleClient> = clients
        .iter()
        .map(|c| DivisibleClient {
            demand: c
                .demand
                .iter()
                .zip(resources.capacities())
                .map(|(d, k)| d / k)
                .collect(),
            ..c.clone()
        })
        .collect();
    let shares = fill_fractions(policy, &normalised, resources.len());
    let allocations = shares
        .allocations
        .iter()
        .map(|o| {
            o.iter()
                .zip(resources.capacities())
                .map(|(s, k)| s * k)
                .collect()
        })
        .collect();
    Ok(WaterFill {
        allocations,
        shares: shares.allocations,
        level: shares.level,
        bottlenecks: shares.bottlenecks,
    })
}

/// Water-filling on capacities of 1: allocations as fractions.
struct Fractions {
    allocations: Vec<Vec<f64>>,
    level: f64,
    bottlenecks: Vec<usize>,
}

/// Water-fills checked clients whose demands are fractions of each capacity.
fn fill_fractions(policy: &Policy, clients: &[DivisibleClient], resources: usize) -> Fractions {
    let tanks: Vec<Option<Tank>> = clients
        .iter()
        .map(|c| (dominant_share(&c.demand) > 0.0).then(|| Tank::new(policy, c)))
        .collect();
    let totals = column_sums(clients.iter().map(|c| c.demand.as_slice()), resources);
    let live = || tanks.iter().flatten();
    let (level, bottlenecks) = if totals.iter().all(|t| *t <= 1.0) {
        (live().map(|t| t.end).fold(0.0, f64::max), Vec::new())
    } else {
        let level = rising_level(&tanks, resources);
        let used = column_sums(
            allocations(&tanks, level, resources)
                .iter()
                .map(Vec::as_slice),
            resources,
        );
        (
            level,
            (0..resources).filter(|r| used[*r] >= 1.0 - 1e-9).collect(),
        )
    };
    let allocations = if bottlenecks.is_empty() {
        clients.iter().map(|c| c.demand.clone()).collect()
    } else {
        allocations(&tanks, level, resources)
    };
    Fractions {
        allocations,
        level,
        bottlenecks,
    }
}

/// Walks the breakpoints upwards until the first resource's use reaches 1 (docs/mechanisms.md, SDRF §4.2 step 4).
fn rising_level(tanks: &[Option<Tank>], resources: usize) -> f64 {
    let mut events: Vec<(f64, usize, f64)> = Vec::with_capacity(2 * tanks.len());
    for (i, tank) in tanks.iter().enumerate() {
        if let Some(t) = tank {
            events.push((t.start, i, 1.0));
            events.push((t.end, i, -1.0));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut used = vec![0.0; resources];
    let mut slope = vec![0.0; resources];
    let mut x = events.first().map_or(0.0, |e| e.0);
    let mut next = 0;
    loop {
        while next < events.len() && events[next].0 <= x {
            let (_, i, sign) = events[next];
            if let Some(t) = &tanks[i] {
                for (g, u) in slope.iter_mut().zip(&t.unit) {
                    *g += sign * t.rate * u;
                }
            }
            next += 1;
        }
        let x_next = events.get(next).map_or(f64::INFINITY, |e| e.0);
        let hit = (0..resources)
            .filter(|r| slope[*r] > 1e-15)
            .map(|r| x + (1.0 - used[r]) / slope[r])
            .fold(f64::INFINITY, f64::min);
        if hit <= x_next {
            return hit;
        }
        for (u, g) in used.iter_mut().zip(&slope) {
            *u += g * (x_next - x);
        }
        x = x_next;
    }
}

fn allocations(tanks: &[Option<Tank>], level: f64, resources: usize) -> Vec<Vec<f64>> {
    tanks
        .iter()
        .map(|tank| match tank {
            Some(t) => {
                let s = t.share(level);
                t.unit.iter().map(|u| u * s).collect()
            }
            None => vec![0.0; resources],
        })
        .collect()
}

fn column_sums<'a>(rows: impl Iterator<Item = &'a [f64]>, resources: usize) -> Vec<f64> {
    let mut sums = vec![0.0; resources];
    for row in rows {
        for (s, v) in sums.iter_mut().zip(row) {
            *s += v;
        }
    }
    sums
}

fn check(clients: &[DivisibleClient], resources: usize) -> Result<(), AllocError> {
    for (client, c) in clients.iter().enumerate() {
        super::check_vector(client, "demand", &c.demand, resources)?;
        if !c.commitment.is_empty() {
            super::check_vector(client, "commitment", &c.commitment, resources)?;
        }
        super::check_weight(client, c.weight)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::PriorityForm;

    const SDRF: Policy = Policy::Sdrf(PriorityForm::SumOfMaxes);

    /// Water-fills on resources of capacity 1 (as many as the first client's demand has), so
    /// demands and allocations are fractions.
    fn unit_fill(policy: &Policy, clients: &[DivisibleClient]) -> Result<WaterFill, AllocError> {
        let m = clients.first().map_or(1, |c| c.demand.len());
        water_fill(
            policy,
            &ResourceSet::from_capacities(&vec![1.0; m]).unwrap(),
            clients,
        )
    }

    fn client(demand: &[f64], commitment: &[f64]) -> DivisibleClient {
        DivisibleClient {
            demand: demand.to_vec(),
            weight: 1.0,
            commitment: commitment.to_vec(),
        }
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn one_resource_stateful_max_min() {
        // docs/mechanisms.md, SDRF §4.3: x* = 0.45, o = (0.40, 0.10, 0.20, 0.30).
        let clients = [
            client(&[0.5], &[0.05]),
            client(&[0.1], &[0.0]),
            client(&[0.2], &[0.10]),
            client(&[0.6], &[0.15]),
        ];
        let fill = unit_fill(&SDRF, &clients).unwrap();
        assert!((fill.level - 0.45).abs() < 1e-12);
        let got: Vec<f64> = fill.allocations.iter().map(|o| o[0]).collect();
        assert_close(&got, &[0.40, 0.10, 0.20, 0.30]);
        assert_eq!(fill.bottlenecks, vec![0]);
    }

    #[test]
    fn three_users_two_resources_water_level() {
        // docs/mechanisms.md, SDRF §4.4: x* = 2/3, bottleneck MEM.
        let clients = [
            client(&[0.8, 0.4], &[0.20, 0.10]),
            client(&[0.1, 0.2], &[0.0, 0.0]),
            client(&[0.3, 0.6], &[0.05, 0.10]),
        ];
        let fill = unit_fill(&SDRF, &clients).unwrap();
        assert!((fill.level - 2.0 / 3.0).abs() < 1e-12, "{}", fill.level);
        assert_eq!(fill.bottlenecks, vec![1]);
        assert_close(&fill.allocations[0], &[7.0 / 15.0, 7.0 / 30.0]);
        assert_close(&fill.allocations[1], &[0.1, 0.2]);
        assert_close(&fill.allocations[2], &[17.0 / 60.0, 17.0 / 30.0]);
        // DRF ignores the commitments: x* = 8/15.
        let drf = unit_fill(&Policy::Drf, &clients).unwrap();
        assert!((drf.level - 8.0 / 15.0).abs() < 1e-12);
        assert_close(&drf.allocations[0], &[8.0 / 15.0, 4.0 / 15.0]);
    }

    #[test]
    fn greedy_user_yields_to_sporadic_user() {
        // docs/mechanisms.md, SDRF §4.3 motivating case: A has c = 0.5, B none; both want everything.
        let fill = unit_fill(&SDRF, &[client(&[1.0], &[0.5]), client(&[1.0], &[0.0])]).unwrap();
        assert_close(
            &[fill.allocations[0][0], fill.allocations[1][0]],
            &[0.25, 0.75],
        );
    }

    #[test]
    fn everyone_satisfied_when_demand_fits() {
        let fill = unit_fill(
            &Policy::Drf,
            &[client(&[0.2, 0.1], &[]), client(&[0.3, 0.5], &[])],
        )
        .unwrap();
        assert!(fill.bottlenecks.is_empty());
        assert_eq!(fill.allocations[1], vec![0.3, 0.5]);
        assert!((fill.level - 0.5).abs() < 1e-15);
    }

    #[test]
    fn asset_fairness_equalises_sums_of_shares() {
        // One resource each: 0.5/0.5; A needs both resources equally → sums equal.
        let clients = [client(&[1.0, 1.0], &[]), client(&[1.0, 0.0], &[])];
        let fill = unit_fill(&Policy::Asset, &clients).unwrap();
        let sums: Vec<f64> = fill.allocations.iter().map(|o| o.iter().sum()).collect();
        assert!((sums[0] - sums[1]).abs() < 1e-12, "{sums:?}");
        assert!((fill.allocations[0][0] + fill.allocations[1][0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn weights_scale_shares() {
        let mut heavy = client(&[1.0], &[]);
        heavy.weight = 1.5;
        let mut light = client(&[1.0], &[]);
        light.weight = 0.5;
        let fill = unit_fill(&Policy::WeightedDrf, &[heavy.clone(), light.clone()]).unwrap();
        assert_close(
            &[fill.allocations[0][0], fill.allocations[1][0]],
            &[0.75, 0.25],
        );
        let plain = unit_fill(&Policy::Drf, &[heavy, light]).unwrap();
        assert_close(
            &[plain.allocations[0][0], plain.allocations[1][0]],
            &[0.5, 0.5],
        );
    }

    #[test]
    fn rejects_bad_vectors() {
        assert!(unit_fill(&SDRF, &[client(&[f64::NAN], &[])]).is_err());
        assert!(unit_fill(&SDRF, &[client(&[0.5], &[]), client(&[0.5, 0.1], &[])]).is_err());
        assert!(unit_fill(&SDRF, &[client(&[-0.5], &[])]).is_err());
    }
}
