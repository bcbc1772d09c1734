//! Slurm's backfill plans a job that cannot start now where `select/cons_tres`'s will-run
//! test puts it (`Space::will_run`), on the nodes no earlier plan of the cycle holds over
//! the job's time limit, and tries again from a later boundary of the plans where nodes come
//! free (`_attempt_backfill`'s `later_start` in Slurm 22.05's
//! `plugins/sched/backfill/backfill.c`). The plans of a cycle are kept here node by node, as
//! Slurm's backfill map keeps them, beside the availability profile that holds them too.

use crate::cluster::scheduler::{Ask, Planner, PlansNodes, RunningView};
use crate::cluster::space::{Ending, Placed, Space};
use fairshare_core::model::Time;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::ops::Bound::Excluded;

/// What the will-run tests found while the running jobs stay as they are (within a pass,
/// until a job starts or ends): the running jobs in order of their planned ends, and each
/// test's answer by the job's request and the nodes barred to it. A backfill cycle asks the
/// same question again and again (a queue of like jobs, plans that leave a job's nodes as
/// they were), and the answer cannot change while what runs does not.
#[derive(Debug, Default)]
struct Tested {
    by_end: Option<Vec<Ending>>,
    answers: FxHashMap<TestKey, Option<(Time, Placed)>>,
}

impl Tested {
    /// Forgets everything: a job started or ended, or a new pass begins.
    fn forget(&mut self) {
        self.by_end = None;
        self.answers.clear();
    }
}

/// A will-run test as a key: its request's (see [`Request::key`]), then the barred nodes,
/// 64 to a word (as many words for every request of a run).
type TestKey = Vec<u64>;

/// A cycle's plans, node by node: each plan's span (rounded as the profile holds it), in
/// order of start, and the runs they make (spans that overlap or touch, joined), which
/// answer what a node holds by a binary search.
#[derive(Debug, Clone, Default)]
struct NodePlans {
    spans: Vec<Vec<(Time, Time)>>,
    runs: Vec<Vec<(Time, Time)>>,
    /// Every span's start and end over all nodes, each with how many spans have it there:
    /// the boundaries of Slurm's backfill map.
    boundaries: BTreeMap<Time, u32>,
    /// How many spans there are over all nodes.
    count: usize,
}

impl NodePlans {
    /// No plans on any of `nodes` nodes.
    fn new(nodes: usize) -> NodePlans {
        NodePlans {
            spans: vec![Vec::new(); nodes],
            runs: vec![Vec::new(); nodes],
            boundaries: BTreeMap::new(),
            count: 0,
        }
    }

    /// Enters a plan over `[from, to)` on `placed`'s nodes.
    fn add(&mut self, placed: &Placed, from: Time, to: Time) {
        for (node, _) in placed {
            let spans = &mut self.spans[*node];
            let at = spans.partition_point(|s| *s <= (from, to));
            spans.insert(at, (from, to));
            self.count += 1;
            self.join(*node);
            for b in [from, to] {
                *self.boundaries.entry(b).or_default() += 1;
            }
        }
    }

    /// Takes away a plan entered over `[from, to)` on `placed`'s nodes.
    fn remove(&mut self, placed: &Placed, from: Time, to: Time) {
        for (node, _) in placed {
            let spans = &mut self.spans[*node];
            if let Some(i) = spans.iter().position(|s| *s == (from, to)) {
                spans.remove(i);
                self.count -= 1;
                self.join(*node);
                for b in [from, to] {
                    if let Some(n) = self.boundaries.get_mut(&b) {
                        *n -= 1;
                        if *n == 0 {
                            self.boundaries.remove(&b);
                        }
                    }
                }
            }
        }
    }

    /// Joins `node`'s spans into its runs again.
    fn join(&mut self, node: usize) {
        let runs = &mut self.runs[node];
        runs.clear();
        for &(f, t) in &self.spans[node] {
            match runs.last_mut() {
                Some(last) if f <= last.1 => last.1 = last.1.max(t),
                _ => runs.push((f, t)),
            }
        }
    }

    /// `node`'s first run that ends after `from`.
    fn run_after(&self, node: usize, from: Time) -> Option<(Time, Time)> {
        let runs = &self.runs[node];
        if runs.last().is_none_or(|last| last.1 <= from) {
            return None;
        }
        runs.get(runs.partition_point(|r| r.1 <= from)).copied()
    }

    /// Takes every plan away.
    fn clear(&mut self) {
        if self.count > 0 {
            self.spans.iter_mut().for_each(Vec::clear);
            self.runs.iter_mut().for_each(Vec::clear);
            self.boundaries.clear();
            self.count = 0;
        }
    }

    /// Appends to `key` which nodes a plan holds at some time of `[from, to]`, one bit a node,
    /// 64 to a word.
    fn barred_into(&self, from: Time, to: Time, key: &mut Vec<u64>) {
        let first = key.len();
        key.resize(first + self.runs.len().div_ceil(64), 0);
        for node in (0..self.runs.len()).filter(|&n| self.holds(n, from, to)) {
            key[first + node / 64] |= 1 << (node % 64);
        }
    }

    /// Whether a plan holds `node` at some time of `[from, to]` (Slurm counts a plan that
    /// begins at the job's end as overlapping it).
    fn holds(&self, node: usize, from: Time, to: Time) -> bool {
        self.run_after(node, from).is_some_and(|(f, _)| f <= to)
    }

    /// The first time after `from` at which `node` comes free of its plans: the end of its
    /// first run that ends after `from`.
    fn comes_free(&self, node: usize, from: Time) -> Option<Time> {
        self.run_after(node, from).map(|(_, t)| t)
    }

    /// Slurm's `later_start` for a job tried from `from` until `to`: the first boundary of
    /// the plans after `from` at which a node the job may use comes free, if the backfill's
    /// walk of its map reaches it (up to the entry that begins past `to`, whose end is the
    /// last it looks at; `window_end` closes the map).
    /// With `sooner`, only a boundary before it is looked for (a start found then is kept
    /// unless a node comes free sooner).
    fn later_start(
        &self,
        eligible: impl Fn(usize) -> bool,
        (from, to): (Time, Time),
        window_end: Option<Time>,
        sooner: Option<Time>,
    ) -> Option<Time> {
        let first = (self.runs.iter().enumerate())
            .filter(|(node, runs)| !runs.is_empty() && eligible(*node))
            .filter_map(|(node, _)| self.comes_free(node, from))
            .min()
            .filter(|first| sooner.is_none_or(|s| *first < s))?;
        // The walk reaches the end of the first entry that begins past `to`: any boundary up
        // to `to`, and past it one with at most one other boundary between.
        if first <= to {
            return Some(first);
        }
        let planned = self.boundaries.range((Excluded(to), Excluded(first)));
        let closing =
            window_end.filter(|w| *w > to && *w < first && !self.boundaries.contains_key(w));
        match planned.map(|(b, _)| *b).chain(closing).nth(1) {
            Some(_) => None,
            None => Some(first),
        }
    }

    /// Whether a plan holds one of `placed`'s nodes during `[from, to)`
    /// (`_test_resv_overlap`).
    fn overlaps(&self, placed: &Placed, from: Time, to: Time) -> bool {
        (placed.iter()).any(|(node, _)| self.run_after(*node, from).is_some_and(|(f, _)| f < to))
    }
}

/// Slurm's backfill planning over one run: a cycle's plans node by node, and what the
/// will-run tests found while the running jobs stay as they are.
#[derive(Debug)]
pub(in crate::cluster) struct WillRun {
    plans: NodePlans,
    tested: Tested,
    /// What the site itself holds over spans, across cycles: reservations, and nodes drained
    /// or down until further notice.
    standing: Vec<(Placed, Time, Time)>,
}

impl WillRun {
    /// No plans yet on any of `nodes` nodes, as the scheduler's planner.
    pub(super) fn planner(nodes: usize) -> Planner {
        Planner(Box::new(WillRun {
            plans: NodePlans::new(nodes),
            tested: Tested::default(),
            standing: Vec::new(),
        }))
    }
}

impl PlansNodes for WillRun {
    /// Holds `placed`'s nodes over `[from, to)` in every cycle, until [`WillRun::unstand`].
    fn stand(&mut self, placed: &Placed, from: Time, to: Time) {
        self.plans.add(placed, from, to);
        self.standing.push((placed.clone(), from, to));
        self.tested.forget();
    }

    /// Takes away what [`WillRun::stand`] held over `[from, to)` on `placed`'s nodes.
    fn unstand(&mut self, placed: &Placed, from: Time, to: Time) {
        let held = |s: &(Placed, Time, Time)| s.0 == *placed && s.1 == from && s.2 == to;
        if let Some(i) = self.standing.iter().position(held) {
            self.standing.remove(i);
            self.plans.remove(placed, from, to);
            self.tested.forget();
        }
    }

    /// Enters a plan held over `[from, to)` on `placed`'s nodes.
    fn hold(&mut self, placed: &Placed, from: Time, to: Time) {
        self.plans.add(placed, from, to);
    }

    /// Takes away a plan held over `[from, to)` on `placed`'s nodes.
    fn release(&mut self, placed: &Placed, from: Time, to: Time) {
        self.plans.remove(placed, from, to);
    }

    /// Takes every plan away: the cycle ended.
    fn clear(&mut self) {
        self.plans.clear();
        for (placed, from, to) in &self.standing {
            self.plans.add(placed, *from, *to);
        }
    }

    /// Forgets what the will-run tests found: a job started or ended, or a pass begins.
    fn forget(&mut self) {
        self.tested.forget();
    }

    /// Where and from when the backfill plans `ask` at `now`: from now, the nodes the cycle's
    /// plans leave free over the job's time limit are tried by the will-run test on `space`,
    /// `running` giving the running jobs' planned ends and where each runs; a start found
    /// after the next boundary where a planned node comes free, none found, or nodes that a
    /// plan holds over the found span, try again from that boundary (or that start).
    /// `held_span` says what a plan starting at a time holds. `None`: no start is planned.
    fn plan<'a>(
        &mut self,
        space: &mut Space,
        now: Time,
        ask: Ask<'_>,
        (ends, placed_of): RunningView<'_, 'a>,
        held_span: &dyn Fn(Time) -> (Time, Time),
    ) -> Option<(Time, Placed)> {
        let Ask {
            request,
            walltime,
            before,
        } = ask;
        let ending: &[Ending] = self.tested.by_end.get_or_insert_with(|| {
            let mut by_end = ends();
            by_end.sort_unstable();
            by_end
        });
        let request_key = request.key();
        let eligible = |i: usize| request.eligible.as_ref().is_none_or(|e| e[i]);
        let mut from = now;
        // Each try starts later than the last, at a boundary of the plans or at a start found
        // beside them: a bound on the tries keeps a mistake from looping.
        for _ in 0..=2 * self.plans.count + 1 {
            let to = from.plus_micros(walltime);
            let mut key = request_key.clone();
            self.plans.barred_into(from, to, &mut key);
            let later = |sooner| (self.plans).later_start(eligible, (from, to), before, sooner);
            let found = match self.tested.answers.get(&key) {
                Some(found) => found.clone(),
                None => {
                    let bits = &key[request_key.len()..];
                    let barred: Vec<bool> = (0..self.plans.runs.len())
                        .map(|n| bits[n / 64] >> (n % 64) & 1 == 1)
                        .collect();
                    let found = space.will_run(request, now, (ending, &placed_of), &barred);
                    self.tested.answers.insert(key, found.clone());
                    found
                }
            };
            let retry = match found {
                None => later(None),
                Some((t, placed)) => {
                    let t = t.max(from);
                    let (start, end) = held_span(t);
                    let sooner = (t > now).then(|| later(Some(t))).flatten();
                    if sooner.is_some() {
                        sooner
                    } else if before.is_some_and(|b| t >= b) {
                        return None;
                    } else if t > now && self.plans.overlaps(&placed, start, end) {
                        Some(t)
                    } else {
                        return Some((t, placed));
                    }
                }
            };
            match retry {
                Some(next) if next > from => from = next,
                _ => return None,
            }
        }
        None
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
        assert_eq!(
            plans.later_start(all, (s(0), s(50)), None, None),
            Some(s(120))
        );
        // Node 0 not usable: node 1 comes free at 180 s, past the walk's reach.
        let not_0 = |n: usize| n != 0;
        assert_eq!(plans.later_start(not_0, (s(0), s(50)), None, None), None);
        // Tried until 130 s, the walk reaches 180 s.
        assert_eq!(
            plans.later_start(not_0, (s(0), s(130)), None, None),
            Some(s(180))
        );
        // From 120 s on, the first node to come free is node 1, at 180 s.
        assert_eq!(
            plans.later_start(all, (s(120), s(200)), None, None),
            Some(s(180))
        );
        // Only a boundary before a start already found is looked for.
        assert_eq!(
            plans.later_start(all, (s(0), s(50)), None, Some(s(120))),
            None
        );
        assert_eq!(
            plans.later_start(all, (s(0), s(50)), None, Some(s(121))),
            Some(s(120))
        );
        // Nothing comes free after the last plan ends.
        assert_eq!(plans.later_start(all, (s(300), s(400)), None, None), None);
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

    /// The slow, obvious answers over a list of (node, from, to) spans.
    mod reference {
        use super::*;

        pub type Spans = [(usize, Time, Time)];

        pub fn holds(spans: &Spans, node: usize, from: Time, to: Time) -> bool {
            (spans.iter()).any(|&(n, f, t)| n == node && t > from && f <= to)
        }

        pub fn comes_free(spans: &Spans, node: usize, from: Time) -> Option<Time> {
            let held_at = |x: Time| (spans.iter()).any(|&(n, f, t)| n == node && f <= x && x < t);
            let ends = spans.iter().filter(|s| s.0 == node).map(|s| s.2);
            ends.filter(|&t| t > from && !held_at(t)).min()
        }

        /// Slurm's walk: every boundary after `to` until the end of the first entry
        /// beginning past it.
        pub fn later_start(
            spans: &Spans,
            nodes: usize,
            (from, to): (Time, Time),
            window_end: Option<Time>,
        ) -> Option<Time> {
            let boundaries = spans.iter().flat_map(|&(_, f, t)| [f, t]).chain(window_end);
            let after = |x: Time| boundaries.clone().filter(|b| *b > x).min();
            let reach = after(to).map(|first| after(first).unwrap_or(first));
            let first = (0..nodes)
                .filter_map(|n| comes_free(spans, n, from))
                .min()?;
            reach.is_none_or(|r| first <= r).then_some(first)
        }
    }

    proptest::proptest! {
        /// The plans' runs and boundaries answer as the spans themselves do, however the
        /// spans came and some went.
        #[test]
        fn node_plans_answer_as_their_spans_do(
            spans in proptest::collection::vec((0usize..3, 0u64..20, 1u64..10), 1..12),
            gone in proptest::collection::vec(proptest::bool::ANY, 12),
            (from, len) in (0u64..30, 0u64..15),
            window_end in proptest::option::of(20u64..40),
        ) {
            let mut plans = NodePlans::new(3);
            let spans: Vec<(usize, Time, Time)> =
                spans.iter().map(|&(n, f, l)| (n, s(f), s(f + l))).collect();
            for &(n, f, t) in &spans {
                plans.add(&vec![(n, vec![1.0])], f, t);
            }
            let mut kept = Vec::new();
            for (&(n, f, t), gone) in spans.iter().zip(&gone) {
                match gone {
                    true => plans.remove(&vec![(n, vec![1.0])], f, t),
                    false => kept.push((n, f, t)),
                }
            }
            let (from, to) = (s(from), s(from + len));
            for node in 0..3 {
                proptest::prop_assert_eq!(
                    plans.holds(node, from, to),
                    reference::holds(&kept, node, from, to)
                );
                proptest::prop_assert_eq!(
                    plans.comes_free(node, from),
                    reference::comes_free(&kept, node, from)
                );
            }
            let window_end = window_end.map(s);
            proptest::prop_assert_eq!(
                plans.later_start(|_| true, (from, to), window_end, None),
                reference::later_start(&kept, 3, (from, to), window_end)
            );
        }
    }
}
