//! Slurm's node selection (`select/cons_tres`, Slurm 22.05's `_eval_nodes` in
//! `plugins/select/cons_tres/job_test.c`, with equal node weights and no topology): a job's
//! nodes are chosen together, within runs of consecutive nodes that have room.

use super::{JobPlacement, NodeLoad, Placement, PlacementEntry};
use std::sync::Arc;

/// `--placement slurm`.
pub(super) const SLURM: PlacementEntry = PlacementEntry {
    name: "slurm",
    about: "Slurm's cons_tres: the tightest run of consecutive nodes with room, the fullest node there that holds the whole job, else its nodes in order",
    build: || Arc::new(SlurmNodes),
};

/// Slurm's choice of a job's nodes. The nodes with room for a part of the job form runs of
/// consecutive nodes (in the configuration's order); the job goes to the first run with room
/// for all of it and, among such, the one with the fewest free processors (none has room: the
/// largest first, then the next). In the chosen run, the job goes whole onto the fullest node
/// that holds it, if one does; otherwise it takes the run's nodes in order, each as much as
/// it holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlurmNodes;

/// A run of consecutive nodes with room: its first and last node, and the parts and the free
/// processors it holds.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: usize,
    last: usize,
    parts: u64,
    free: f64,
}

impl Placement for SlurmNodes {
    /// One node, as [`SlurmNodes::place`] would choose for a one-part job.
    fn select_node(&self, demand: &[f64], nodes: &[NodeLoad]) -> Option<usize> {
        let capacity = |n: &NodeLoad| u32::from(n.has_room(demand));
        let parts = place(1, nodes, capacity)?;
        parts.first().map(|&(node, _)| node)
    }

    fn place(&self, each: &[f64], parts: u32, spread: bool, nodes: &[NodeLoad]) -> JobPlacement {
        match place(parts, nodes, |n| n.parts_it_holds(each, spread)) {
            Some(parts) => JobPlacement::On(parts),
            None => JobPlacement::NoRoom,
        }
    }
}

/// `parts` parts on `nodes`, each node holding `capacity` of them, as Slurm chooses: see
/// [`SlurmNodes`] (a node that holds the rest whole is looked for whatever the job's shape:
/// a job held to several nodes, one part each, comes to it at its last part, as in Slurm).
/// `None` when they do not all fit.
fn place(
    parts: u32,
    nodes: &[NodeLoad],
    capacity: impl Fn(&NodeLoad) -> u32,
) -> Option<Vec<(usize, u32)>> {
    let holds: Vec<u32> = nodes.iter().map(capacity).collect();
    let free = |n: &NodeLoad| {
        n.capacity
            .first()
            .zip(n.used.first())
            .map_or(0.0, |(c, u)| c - u)
    };
    let mut runs = runs(&holds, |i| free(&nodes[i]));
    let mut left = parts;
    let mut placed = Vec::new();
    while left > 0 {
        let best = best_run(&runs, left)?;
        let run = runs.remove(best);
        let within = run.first..=run.last;
        // The fullest node that holds the rest whole (the first such on ties).
        let whole = within.clone().filter(|&i| holds[i] >= left);
        let fullest = whole.min_by(|&i, &j| {
            let (a, b) = (free(&nodes[i]), free(&nodes[j]));
            a.total_cmp(&b).then(i.cmp(&j))
        });
        if let Some(node) = fullest {
            placed.push((node, left));
            return Some(placed);
        }
        for node in within {
            let take = holds[node].min(left);
            if take > 0 {
                placed.push((node, take));
                left -= take;
            }
            if left == 0 {
                break;
            }
        }
    }
    Some(placed)
}

/// The runs of consecutive nodes that hold a part, with their free processors by `free`.
fn runs(holds: &[u32], free: impl Fn(usize) -> f64) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (i, &h) in holds.iter().enumerate() {
        if h == 0 {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.last + 1 == i => {
                run.last = i;
                run.parts += u64::from(h);
                run.free += free(i);
            }
            _ => runs.push(Run {
                first: i,
                last: i,
                parts: u64::from(h),
                free: free(i),
            }),
        }
    }
    runs
}

/// Slurm's pick among `runs` for `left` parts: the first with room for them all and, among
/// such, the fewest free processors; when none has room, the most free processors (the first
/// on ties). `None` when there is no run.
fn best_run(runs: &[Run], left: u32) -> Option<usize> {
    let mut best: Option<(usize, bool)> = None;
    for (i, run) in runs.iter().enumerate() {
        let sufficient = run.parts >= u64::from(left);
        let better = match best {
            None => true,
            Some((b, b_sufficient)) => match (sufficient, b_sufficient) {
                (true, false) => true,
                (true, true) => run.free < runs[b].free,
                (false, false) => run.free > runs[b].free,
                (false, true) => false,
            },
        };
        if better {
            best = Some((i, sufficient));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nodes of 8 processors using `used` each.
    fn nodes(used: &[f64]) -> Vec<NodeLoad> {
        (used.iter())
            .map(|&u| NodeLoad {
                capacity: vec![8.0],
                used: vec![u],
                speed: 1.0,
                closed: false,
            })
            .collect()
    }

    fn spread(cpus: u32, used: &[f64]) -> JobPlacement {
        SlurmNodes.place(&[1.0], cpus, true, &nodes(used))
    }

    #[test]
    fn a_job_goes_whole_onto_the_fullest_node_of_the_tightest_run_that_holds_it() {
        // Free 2, 8, 6 and 0: one run of three nodes. First fit would split 4 processors
        // over nodes 0 and 1; Slurm puts them on node 2, the fullest that holds them.
        assert_eq!(
            spread(4, &[6.0, 0.0, 2.0, 8.0]),
            JobPlacement::On(vec![(2, 4)])
        );
        // 10 fit no node whole: the run's nodes in order.
        let split = JobPlacement::On(vec![(0, 2), (1, 8)]);
        assert_eq!(spread(10, &[6.0, 0.0, 2.0, 8.0]), split);
        // Free 0, 4, 0, 8, 8: runs {1} (4 free) and {3, 4} (16). 4 go to the tighter run;
        // 6 only fit the other, on its first node of the two equally full.
        let used = [8.0, 4.0, 8.0, 0.0, 0.0];
        assert_eq!(spread(4, &used), JobPlacement::On(vec![(1, 4)]));
        assert_eq!(spread(6, &used), JobPlacement::On(vec![(3, 6)]));
        // 20 fit no run: the largest first, then the rest in the other.
        let across = JobPlacement::On(vec![(3, 8), (4, 8), (1, 4)]);
        assert_eq!(spread(20, &used), across);
        assert_eq!(spread(21, &used), JobPlacement::NoRoom);
    }

    proptest::proptest! {
        /// Whatever the nodes' use, a job fits exactly when the nodes hold all its parts, and
        /// then takes every part, each node at most what it holds, no node twice.
        #[test]
        fn a_job_takes_all_its_parts_within_what_each_node_holds(
            used in proptest::collection::vec(0.0..=8.0f64, 1..12),
            parts in 1u32..40,
            per_part in 1.0..=3.0f64,
            spread: bool,
        ) {
            let nodes = nodes(&used.iter().map(|u| u.floor()).collect::<Vec<_>>());
            let each = [per_part.floor()];
            let holds = |n: &NodeLoad| n.parts_it_holds(&each, spread);
            let room: u32 = nodes.iter().map(holds).sum();
            match SlurmNodes.place(&each, parts, spread, &nodes) {
                JobPlacement::On(placed) => {
                    proptest::prop_assert!(room >= parts);
                    let total: u32 = placed.iter().map(|(_, count)| count).sum();
                    proptest::prop_assert_eq!(total, parts);
                    let mut seen = std::collections::BTreeSet::new();
                    for (node, count) in placed {
                        proptest::prop_assert!(seen.insert(node), "node {} twice", node);
                        proptest::prop_assert!(count >= 1 && count <= holds(&nodes[node]));
                    }
                }
                JobPlacement::NoRoom => proptest::prop_assert!(room < parts),
                JobPlacement::PartByPart => proptest::prop_assert!(false, "Slurm places whole jobs"),
            }
        }
    }

    #[test]
    fn a_job_held_to_several_nodes_takes_them_in_order_and_one_node_is_chosen_alike() {
        let used = [8.0, 4.0, 8.0, 0.0, 0.0];
        let two = SlurmNodes.place(&[2.0], 2, false, &nodes(&used));
        assert_eq!(two, JobPlacement::On(vec![(3, 1), (4, 1)]));
        assert_eq!(SlurmNodes.select_node(&[2.0], &nodes(&used)), Some(1));
        assert_eq!(SlurmNodes.select_node(&[5.0], &nodes(&used)), Some(3));
        assert_eq!(SlurmNodes.select_node(&[9.0], &nodes(&used)), None);
    }
}
