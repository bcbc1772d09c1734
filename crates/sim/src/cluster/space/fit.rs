//! Placing one request on the nodes, one part at a time through the run's placement, and the
//! arithmetic of what fits.

use super::*;

/// Places `request` on `nodes` (whose `used` say what is taken; changed as the job is placed)
/// by asking `placement` for the whole job, or, when it places part by part, for one node at
/// a time; never on a node `fenced` marks (empty: none).
pub(super) fn fit(
    placement: &dyn Placement,
    request: &Request,
    nodes: &mut [NodeLoad],
    fenced: &[bool],
) -> Option<Placed> {
    for (i, node) in nodes.iter_mut().enumerate() {
        let allowed = request.eligible.as_ref().is_none_or(|e| e[i])
            && !fenced.get(i).copied().unwrap_or(false);
        node.closed = !allowed || (request.exclusive && !node.is_empty());
    }
    let (mut left, each, spread) = match &request.shape {
        Shape::Nodes { nodes, per_node } => (*nodes, per_node, false),
        Shape::Spread { units, per_unit } => (*units, per_unit, true),
    };
    let chosen = match placement.place(each, left, spread, nodes) {
        JobPlacement::NoRoom => return None,
        JobPlacement::On(parts) => Some(parts),
        JobPlacement::PartByPart => None,
    };
    let mut chosen = chosen.map(Vec::into_iter);
    let mut placed = Vec::new();
    while left > 0 {
        let (node, count) = match chosen.as_mut() {
            Some(parts) => parts.next()?,
            None => {
                let node = placement.select_node(each, nodes)?;
                let count = nodes
                    .get(node)
                    .map_or(1, |n| n.parts_it_holds(each, spread));
                (node, count)
            }
        };
        let chosen = nodes.get_mut(node)?;
        if !chosen.has_room(each) {
            return None;
        }
        let count = count.clamp(1, left);
        let amount: Vec<f64> = if request.exclusive {
            chosen.capacity.clone()
        } else {
            each.iter().map(|d| d * f64::from(count)).collect()
        };
        take(&mut chosen.used, &amount);
        chosen.closed = true;
        placed.push((node, amount));
        left -= count;
    }
    Some(placed)
}

/// Whether a node of `capacity` using `used` has room for its part of `request` (one node's
/// share, or one processor): the planning view, in which no node is closed.
pub(super) fn part_fits(request: &Request, capacity: &[f64], used: &[f64]) -> bool {
    part_fits_beside(request, capacity, used.iter().copied())
}

/// [`part_fits`] with `mine` taken off `used`.
pub(super) fn part_fits_without(
    request: &Request,
    capacity: &[f64],
    used: &[f64],
    mine: &[f64],
) -> bool {
    part_fits_beside(request, capacity, used.iter().zip(mine).map(|(u, m)| u - m))
}

/// [`part_fits`] for a node using `used`, given resource by resource.
fn part_fits_beside(
    request: &Request,
    capacity: &[f64],
    used: impl Iterator<Item = f64> + Clone,
) -> bool {
    let room = used
        .clone()
        .zip(request.piece())
        .zip(capacity)
        .all(|((u, d), c)| u + d <= c + FIT_SLACK);
    room && (!request.exclusive || used.into_iter().all(|u| u <= FIT_SLACK))
}

/// Takes `demand` off `used`, never below zero.
pub(super) fn release(used: &mut [f64], demand: &[f64]) {
    used.iter_mut()
        .zip(demand)
        .for_each(|(u, d)| *u = (*u - d).max(0.0));
}

/// Adds `demand` to `used`.
pub(super) fn take(used: &mut [f64], demand: &[f64]) {
    used.iter_mut().zip(demand).for_each(|(u, d)| *u += d);
}
