//! Slurm's backfill plans a job that cannot start now where `select/cons_tres`'s will-run
//! test puts it ([`Space::will_run`]), on the nodes no earlier plan of the cycle holds over
//! the job's time limit, and tries again from a later boundary of the plans where nodes come
//! free (`_attempt_backfill`'s `later_start` in Slurm 22.05's
//! `plugins/sched/backfill/backfill.c`). The plans of a cycle are kept here node by node, as
//! Slurm's backfill map keeps them, beside the availability profile that holds them too.

use super::*;
use crate::cluster::space::Ending;

/// A cycle's plans, node by node: each plan's span (rounded as the profile holds it).
#[derive(Debug, Clone, Default)]
pub(super) struct NodePlans {
    spans: Vec<Vec<(Time, Time)>>,
}

impl NodePlans {
    /// No plans on any of `nodes` nodes.
    pub(super) fn new(nodes: usize) -> NodePlans {
        NodePlans {
            spans: vec![Vec::new(); nodes],
        }
    }

    /// Enters a plan over `[from, to)` on `placed`'s nodes.
    pub(super) fn add(&mut self, placed: &Placed, from: Time, to: Time) {
        for (node, _) in placed {
            self.spans[*node].push((from, to));
        }
    }

    /// Takes away a plan entered over `[from, to)` on `placed`'s nodes.
    pub(super) fn remove(&mut self, placed: &Placed, from: Time, to: Time) {
        for (node, _) in placed {
            let spans = &mut self.spans[*node];
            if let Some(i) = spans.iter().position(|s| *s == (from, to)) {
                spans.swap_remove(i);
            }
        }
    }

    /// Takes every plan away.
    pub(super) fn clear(&mut self) {
        self.spans.iter_mut().for_each(Vec::clear);
    }

    /// Whether a plan holds `node` at some time of `[from, to]` (Slurm counts a plan that
    /// begins at the job's end as overlapping it).
    fn holds(&self, node: usize, from: Time, to: Time) -> bool {
        self.spans[node].iter().any(|&(f, t)| t > from && f <= to)
    }

    /// Whether a plan holds `node` at `t`.
    fn holds_at(&self, node: usize, t: Time) -> bool {
        self.spans[node].iter().any(|&(f, e)| f <= t && t < e)
    }

    /// Slurm's `later_start` for a job tried from `from` until `to`: the first boundary of
    /// the plans after `from` at which a node the job may use comes free, if the backfill's
    /// walk of its map reaches it (up to the entry that begins past `to`, whose end is the
    /// last it looks at; `window_end` closes the map).
    fn later_start(
        &self,
        eligible: impl Fn(usize) -> bool,
        from: Time,
        to: Time,
        window_end: Option<Time>,
    ) -> Option<Time> {
        let boundaries = self.spans.iter().flatten().flat_map(|&(f, t)| [f, t]);
        let after = |x: Time| {
            boundaries
                .clone()
                .chain(window_end)
                .filter(move |b| *b > x)
                .min()
        };
        let reach = after(to).map(|first| after(first).unwrap_or(first));
        let frees = |(node, spans): (usize, &Vec<(Time, Time)>)| {
            let ends = spans.iter().map(|&(_, t)| t);
            ends.filter(move |&t| t > from && !self.holds_at(node, t))
                .min()
        };
        let first = (self.spans.iter().enumerate())
            .filter(|(node, _)| eligible(*node))
            .filter_map(frees)
            .min()?;
        reach.is_none_or(|r| first <= r).then_some(first)
    }

    /// Whether a plan holds one of `placed`'s nodes during `[from, to)`
    /// (`_test_resv_overlap`).
    fn overlaps(&self, placed: &Placed, from: Time, to: Time) -> bool {
        let overlapping = |&(f, t): &(Time, Time)| f < to && t > from;
        placed
            .iter()
            .any(|(node, _)| self.spans[*node].iter().any(overlapping))
    }
}

impl Engine {
    /// [`Pass::reserve`] as Slurm's backfill plans: from now, the nodes the cycle's plans
    /// leave free over the job's time limit are tried by the will-run test; a start found
    /// after the next boundary where a planned node comes free, none found, or nodes that a
    /// plan holds over the found span, try again from that boundary (or that start). A start
    /// at or past `before` is not planned.
    pub(super) fn plan_by_will_run(
        &mut self,
        user: u32,
        index: usize,
        before: Option<Time>,
    ) -> bool {
        let job = &self.queues[user as usize][index];
        let (request, walltime) = (job.request.clone(), job.walltime);
        if self.by_end.is_none() {
            let mut by_end: Vec<(Time, usize)> = (self.running.iter().enumerate())
                .filter_map(|(slot, job)| Some((job.as_ref()?.planned_end, slot)))
                .collect();
            by_end.sort_unstable();
            self.by_end = Some(by_end);
        }
        let ending: Vec<Ending> = (self.by_end.iter().flatten())
            .filter_map(|&(end, slot)| Some((end, &self.running[slot].as_ref()?.placed)))
            .collect();
        let eligible = |i: usize| request.eligible.as_ref().is_none_or(|e| e[i]);
        let mut from = self.now;
        // Each try starts later than the last, at a boundary of the plans or at a start found
        // beside them: a bound on the tries keeps a mistake from looping.
        for _ in 0..=2 * self.node_plans.spans.iter().map(Vec::len).sum::<usize>() + 1 {
            let to = from.plus_micros(walltime);
            let barred: Vec<bool> = (0..self.node_plans.spans.len())
                .map(|node| self.node_plans.holds(node, from, to))
                .collect();
            let later = || self.node_plans.later_start(eligible, from, to, before);
            let found = self.space.will_run(&request, self.now, &ending, &barred);
            let retry = match found {
                None => later(),
                Some((t, _))
                    if t.max(from) > self.now && later().is_some_and(|l| t.max(from) > l) =>
                {
                    later()
                }
                Some((t, _)) if before.is_some_and(|b| t.max(from) >= b) => return false,
                Some((t, placed)) => {
                    let t = t.max(from);
                    let (start, end) = self.held_span(t, walltime);
                    if t > self.now && self.node_plans.overlaps(&placed, start, end) {
                        Some(t)
                    } else {
                        drop(ending);
                        self.hold(user, index, (t, placed), false);
                        return true;
                    }
                }
            };
            match retry {
                Some(next) if next > from => from = next,
                _ => return false,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> Time {
        Time(secs * 1_000_000)
    }

    /// Plans on three nodes: node 0 over [60, 120) s, node 1 over [60, 180) s, node 2 over
    /// [120, 300) s.
    fn plans() -> NodePlans {
        let mut plans = NodePlans::new(3);
        for (node, from, to) in [(0, 60, 120), (1, 60, 180), (2, 120, 300)] {
            plans.add(&vec![(node, vec![1.0])], s(from), s(to));
        }
        plans
    }

    #[test]
    fn later_start_is_the_first_boundary_where_a_usable_node_comes_free() {
        let plans = plans();
        let all = |_: usize| true;
        // From 0 until 50 s: the map's entries begin at 60 (the first past 50 s), whose end,
        // 120 s, is the last looked at; node 0 comes free there (node 2's plan begins there).
        assert_eq!(plans.later_start(all, s(0), s(50), None), Some(s(120)));
        // Node 0 not usable: node 1 comes free at 180 s, past the walk's reach.
        let not_0 = |n: usize| n != 0;
        assert_eq!(plans.later_start(not_0, s(0), s(50), None), None);
        // Tried until 130 s, the walk reaches 180 s.
        assert_eq!(plans.later_start(not_0, s(0), s(130), None), Some(s(180)));
        // From 120 s on, the first node to come free is node 1, at 180 s.
        assert_eq!(plans.later_start(all, s(120), s(200), None), Some(s(180)));
        // Nothing comes free after the last plan ends.
        assert_eq!(plans.later_start(all, s(300), s(400), None), None);
    }

    #[test]
    fn plans_hold_their_nodes_over_their_spans_and_go_away_one_by_one() {
        let mut plans = plans();
        assert!(
            plans.holds(0, s(0), s(60)),
            "a plan beginning at the end holds"
        );
        assert!(
            !plans.holds(0, s(120), s(200)),
            "one ending at the start does not"
        );
        assert!(plans.overlaps(&vec![(2, vec![1.0])], s(100), s(121)));
        assert!(!plans.overlaps(&vec![(2, vec![1.0])], s(0), s(120)));
        plans.remove(&vec![(1, vec![1.0])], s(60), s(180));
        assert!(!plans.holds(1, s(0), s(1000)));
        plans.clear();
        assert!(!plans.holds(0, s(0), s(1000)) && !plans.holds(2, s(0), s(1000)));
    }
}
