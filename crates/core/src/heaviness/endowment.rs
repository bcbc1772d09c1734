//! Endowments: what each workload is entitled to on its node (Eq. 1) and each user in the whole
//! cloud (Eq. 2), on the actual scale, CPU counted in reference CPUs (node speed applied).

use super::cloud::{Cloud, HeavinessError, ResourceKind};
use super::config::{EndowmentMode, HeavinessConfig};

/// The cloud's resource supply (CRS): Σ over nodes, CPU scaled by each node's speed.
pub fn cloud_supply(cloud: &Cloud) -> Vec<f64> {
    let mut crs = vec![0.0; cloud.resources.len()];
    for node in &cloud.nodes {
        for (r, resource) in cloud.resources.iter().enumerate() {
            crs[r] += resource.kind.at_speed(node.supply[r], node.speed);
        }
    }
    crs
}

/// Each workload's endowment ε(v) (spec §2.1): its node's supply in proportion to virtual
/// sizes, or split equally among the node's workloads for resources without a virtual size
/// (and for those whose virtual sizes on the node sum to zero). The cloud must be checked.
pub fn workload_endowments(cloud: &Cloud, config: &HeavinessConfig) -> Vec<Vec<f64>> {
    let m = cloud.resources.len();
    let mut count = vec![0usize; cloud.nodes.len()];
    let mut virtual_sum = vec![vec![0.0; m]; cloud.nodes.len()];
    for w in &cloud.workloads {
        count[w.node] += 1;
        for (sum, size) in virtual_sum[w.node].iter_mut().zip(&w.size) {
            *sum += size;
        }
    }
    let endowment = |w: &super::cloud::Workload| -> Vec<f64> {
        let node = &cloud.nodes[w.node];
        (0..m)
            .map(|r| {
                let kind = cloud.resources[r].kind;
                let supply = node.supply[r];
                let sum = virtual_sum[w.node][r];
                let physical = if config.endowment == EndowmentMode::Reference
                    && kind == ResourceKind::Memory
                {
                    w.size[r]
                } else if kind.has_virtual() && sum > 0.0 {
                    let ratio = supply / sum;
                    let ratio = if config.cap_endowment_at_vr {
                        ratio.min(1.0)
                    } else {
                        ratio
                    };
                    ratio * w.size[r]
                } else {
                    supply / count[w.node] as f64
                };
                kind.at_speed(physical, node.speed)
            })
            .collect()
    };
    cloud.workloads.iter().map(endowment).collect()
}

/// Each user's endowment ε_u (spec §2.2): the cloud's supply in proportion to quotas, or split
/// equally when users have no quotas and for resources without a virtual counterpart. `None`
/// for a user who owns no workload (such users take no part in the interval).
pub fn user_endowments(cloud: &Cloud) -> Result<Vec<Option<Vec<f64>>>, HeavinessError> {
    let crs = cloud_supply(cloud);
    let mut active = vec![false; cloud.users.len()];
    for w in &cloud.workloads {
        active[w.owner] = true;
    }
    let members: Vec<usize> = (0..cloud.users.len()).filter(|&u| active[u]).collect();
    let with_quota = members
        .iter()
        .filter(|&&u| cloud.users[u].quota.is_some())
        .count();
    if with_quota != 0 && with_quota != members.len() {
        let missing = members.iter().find(|&&u| cloud.users[u].quota.is_none());
        return Err(HeavinessError::Quotas(format!(
            "{with_quota} of {} users with workloads have a quota but user {} has none; \
             give every user a quota, or none for an equal split",
            members.len(),
            missing.copied().unwrap_or_default()
        )));
    }
    let users = members.len() as f64;
    let mut quota_sum = vec![0.0; crs.len()];
    for &u in &members {
        if let Some(quota) = &cloud.users[u].quota {
            for (sum, q) in quota_sum.iter_mut().zip(quota) {
                *sum += q;
            }
        }
    }
    let endowment = |u: usize| -> Vec<f64> {
        (0..crs.len())
            .map(|r| match &cloud.users[u].quota {
                Some(q) if cloud.resources[r].kind.has_virtual() && quota_sum[r] > 0.0 => {
                    crs[r] * q[r] / quota_sum[r]
                }
                _ => crs[r] / users,
            })
            .collect()
    };
    Ok((0..cloud.users.len())
        .map(|u| active[u].then(|| endowment(u)))
        .collect())
}
