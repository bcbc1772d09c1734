//! The metric itself: normalisation (§7.2), static and dynamic heaviness of each workload
//! (§3.1, §7.3, §8), user heaviness (Eq. 3) and each workload's priority input (§3.3).

use super::cloud::{Cloud, HeavinessError};
use super::config::{HeavinessConfig, Metric};
use super::endowment::{cloud_supply, user_endowments, workload_endowments};
use serde::{Deserialize, Serialize};

/// The metric's answer for one interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heaviness {
    /// The normalisation vector w (spec §7.2): one share of the cloud per unit of each resource.
    pub normalisation: Vec<f64>,
    /// Per user, in the order of [`Cloud::users`].
    pub users: Vec<UserHeaviness>,
    /// Per workload, in the order of [`Cloud::workloads`].
    pub workloads: Vec<WorkloadHeaviness>,
}

/// A user's heaviness and how it came about — what an operator asks "why is alice heavy?".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserHeaviness {
    /// Whether the user owned a workload in the interval (others take no part: all zero).
    pub active: bool,
    /// ε_u: the user's share of the cloud (Eq. 2), reference units.
    pub endowment: Vec<f64>,
    /// What the user's workloads used, summed, reference units.
    pub usage: Vec<f64>,
    /// s(ε_u): the user's endowment, normalised.
    pub entitlement: f64,
    /// Σ s(ε(v)) over the user's workloads: the static heaviness of their size.
    pub static_part: f64,
    /// Σ d(v) over the user's workloads.
    pub dynamic: f64,
    /// The unused quota, s(ε_u) − Σ s(ε(v)), which makes the user lighter.
    pub unused_quota: f64,
    /// h_u = static part + dynamic − entitlement (Eq. 3).
    pub heaviness: f64,
    /// 1 for the lightest active user (served first), 0 for an inactive one.
    pub rank: usize,
}

/// A workload's heaviness.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadHeaviness {
    /// ε(v): its share of its node (Eq. 1), reference units.
    pub endowment: Vec<f64>,
    /// What it used (its smoothed demand), reference units.
    pub usage: Vec<f64>,
    /// s(ε(v)): its size, normalised; counts even when it is idle.
    pub static_part: f64,
    /// d(v): the cost of its load against its endowment.
    pub dynamic: f64,
    /// h_v = s + d.
    pub heaviness: f64,
    /// h_p: what its priorities are set from (its owner's h_u plus its own part).
    pub priority_input: f64,
}

/// Computes every user's and workload's heaviness for one interval.
pub fn heaviness(cloud: &Cloud, config: &HeavinessConfig) -> Result<Heaviness, HeavinessError> {
    config.check()?;
    cloud.check()?;
    let crs = cloud_supply(cloud);
    if let Some(r) = crs.iter().position(|&s| s.is_nan() || s <= 0.0) {
        return Err(HeavinessError::NoSupply {
            resource: cloud.resources[r].name.clone(),
            supply: crs[r],
        });
    }
    let user_endowment = user_endowments(cloud)?;
    let active = user_endowment.iter().filter(|e| e.is_some()).count().max(1);
    let m = crs.len() as f64;
    let w: Vec<f64> = crs
        .iter()
        .zip(&cloud.resources)
        .map(|(s, res)| {
            config.normalizer * active as f64 / (m * s * config.overcommit.of(res.kind))
        })
        .collect();
    let endowments = workload_endowments(cloud, config);
    let usages: Vec<Vec<f64>> = cloud
        .workloads
        .iter()
        .zip(&endowments)
        .map(|(v, e)| match &v.usage {
            Some(u) => u
                .iter()
                .zip(&cloud.resources)
                .map(|(&x, res)| res.kind.at_speed(x, cloud.nodes[v.node].speed))
                .collect(),
            None => e.clone(),
        })
        .collect();
    let rho = redistribution(cloud, &endowments, &usages);
    let workloads: Vec<WorkloadHeaviness> = endowments
        .into_iter()
        .zip(usages)
        .zip(&cloud.workloads)
        .map(|((endowment, usage), v)| {
            let (static_part, dynamic) =
                vm_heaviness(&config.metric, &w, &endowment, &usage, &rho[v.node]);
            WorkloadHeaviness {
                endowment,
                usage,
                static_part,
                dynamic,
                heaviness: static_part + dynamic,
                priority_input: 0.0,
            }
        })
        .collect();
    let users = users(cloud, &w, user_endowment, &workloads);
    let workloads = workloads
        .into_iter()
        .zip(&cloud.workloads)
        .map(|(mut h, v)| {
            let own = if config.hp_includes_static {
                h.heaviness
            } else {
                h.dynamic
            };
            h.priority_input = users[v.owner].heaviness + own;
            h
        })
        .collect();
    Ok(Heaviness {
        normalisation: w,
        users,
        workloads,
    })
}

/// One workload's static and dynamic heaviness, (s(ε), d), given the normalisation `w`, its
/// endowment, its (smoothed) usage and, for greediness, the redistribution ratios ρ of its node.
pub fn vm_heaviness(
    metric: &Metric,
    w: &[f64],
    endowment: &[f64],
    usage: &[f64],
    rho: &[f64],
) -> (f64, f64) {
    let asset = |x: &[f64]| -> f64 { w.iter().zip(x).map(|(w, x)| w * x).sum() };
    let dominant = |x: &[f64]| -> f64 { w.iter().zip(x).map(|(w, x)| w * x).fold(0.0, f64::max) };
    let static_part = asset(endowment);
    let dynamic = match *metric {
        Metric::Greediness { penalty, discount } => (0..w.len())
            .map(|r| {
                let delta = usage[r] - endowment[r];
                let (theta, rho) = if discount < 0.0 {
                    (-discount, 1.0)
                } else {
                    (discount, rho[r])
                };
                w[r] * (penalty * delta.max(0.0) + theta * rho * delta.min(0.0))
            })
            .sum(),
        Metric::Drf => dominant(usage) - dominant(endowment),
        Metric::Asset => asset(usage) - static_part,
    };
    (static_part, dynamic)
}

/// ρ per node and resource (spec §7.3): the fraction of the node's unused endowments that
/// over-users absorbed, at most 1; 0 where nobody left anything unused.
fn redistribution(cloud: &Cloud, endowments: &[Vec<f64>], usages: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let m = cloud.resources.len();
    let mut over = vec![vec![0.0; m]; cloud.nodes.len()];
    let mut under = vec![vec![0.0; m]; cloud.nodes.len()];
    for (i, v) in cloud.workloads.iter().enumerate() {
        for r in 0..m {
            let delta = usages[i][r] - endowments[i][r];
            if delta > 0.0 {
                over[v.node][r] += delta;
            } else {
                under[v.node][r] -= delta;
            }
        }
    }
    over.iter()
        .zip(&under)
        .map(|(p, n)| {
            p.iter()
                .zip(n)
                .map(|(p, n)| if *n > 0.0 { (p / n).min(1.0) } else { 0.0 })
                .collect()
        })
        .collect()
}

/// Every user's heaviness from their workloads' and their endowment (Eq. 3 with s_u = s), and
/// their rank among active users, lightest first.
fn users(
    cloud: &Cloud,
    w: &[f64],
    endowments: Vec<Option<Vec<f64>>>,
    workloads: &[WorkloadHeaviness],
) -> Vec<UserHeaviness> {
    let m = w.len();
    let mut users: Vec<UserHeaviness> = endowments
        .into_iter()
        .map(|e| {
            let active = e.is_some();
            let endowment = e.unwrap_or_else(|| vec![0.0; m]);
            let entitlement = if active {
                w.iter().zip(&endowment).map(|(w, x)| w * x).sum()
            } else {
                0.0
            };
            UserHeaviness {
                active,
                endowment,
                usage: vec![0.0; m],
                entitlement,
                static_part: 0.0,
                dynamic: 0.0,
                unused_quota: 0.0,
                heaviness: 0.0,
                rank: 0,
            }
        })
        .collect();
    for (v, h) in cloud.workloads.iter().zip(workloads) {
        let u = &mut users[v.owner];
        u.static_part += h.static_part;
        u.dynamic += h.dynamic;
        for (sum, x) in u.usage.iter_mut().zip(&h.usage) {
            *sum += x;
        }
    }
    for u in users.iter_mut().filter(|u| u.active) {
        u.unused_quota = u.entitlement - u.static_part;
        u.heaviness = u.static_part + u.dynamic - u.entitlement;
    }
    let mut order: Vec<usize> = (0..users.len()).filter(|&u| users[u].active).collect();
    order.sort_by(|&a, &b| {
        users[a]
            .heaviness
            .total_cmp(&users[b].heaviness)
            .then(a.cmp(&b))
    });
    for (rank, u) in order.into_iter().enumerate() {
        users[u].rank = rank + 1;
    }
    users
}

/// Measurement smoothing (spec §4.1): the newest raw value weighted δ against the previous
/// smoothed value; the raw value itself when there is no previous one.
pub fn smooth(previous: Option<&[f64]>, raw: &[f64], decay: f64) -> Vec<f64> {
    match previous {
        Some(p) => p
            .iter()
            .zip(raw)
            .map(|(p, x)| (1.0 - decay) * p + decay * x)
            .collect(),
        None => raw.to_vec(),
    }
}

/// Jain's fairness index (Σx)²/(n·Σx²) over users (reference B): 1 when all are equal, 1/n
/// when one has everything; 1 for no users or all zeros. Negative values are shifted up by
/// the smallest first, as for greediness vectors.
pub fn jain_index(x: &[f64]) -> f64 {
    let low = x.iter().copied().fold(0.0, f64::min);
    let sum: f64 = x.iter().map(|v| v - low).sum();
    let squares: f64 = x.iter().map(|v| (v - low) * (v - low)).sum();
    if squares == 0.0 {
        1.0
    } else {
        sum * sum / (x.len() as f64 * squares)
    }
}
