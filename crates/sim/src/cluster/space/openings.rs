//! The nodes that may still take a part of a request, so that a search skips the full ones.

use super::*;

/// For a set of nodes, the next start at which each could take its part of a job: what
/// [`Space::earliest`] prunes its candidate starts with.
#[derive(Debug, Clone, Default)]
pub(super) struct Openings {
    /// Each node, the time its room must start before, and its next opening once looked up
    /// (`Some(None)`: none before that time).
    nodes: Vec<(usize, Option<Time>, Option<Option<Time>>)>,
    /// The next openings, gathered to pick the k-th.
    open: Vec<Time>,
}

impl Openings {
    /// Starts over with these nodes, each with the time a start on it must come before
    /// (keeping the buffers: searches run by the million).
    pub(super) fn reset(
        &mut self,
        nodes: impl Iterator<Item = (usize, Option<Time>)>,
    ) -> &mut Openings {
        self.nodes.clear();
        self.nodes
            .extend(nodes.map(|(n, before)| (n, before, None)));
        self
    }

    /// Marks in `barred`, of `all` nodes, every one but those [`Openings::opening`] found
    /// open at `t` and not `fenced`: the nodes a try at `t` need not look at.
    pub(super) fn barred_at(&self, t: Time, fenced: &[bool], all: usize, barred: &mut Vec<bool>) {
        barred.clear();
        barred.resize(all, true);
        for (node, _, next) in &self.nodes {
            if *next == Some(Some(t)) {
                barred[*node] = fenced.get(*node).copied().unwrap_or(false);
            }
        }
    }

    /// The earliest time from `t` at which `k` of the nodes could each take their part of
    /// `request` for `length` at once; `None` if fewer than `k` ever can before their times.
    /// Times must be asked in increasing order: a node's next opening is looked up again only
    /// once `t` has passed it, since use is constant between a node's own changes and a later
    /// start's window holds all that an earlier one's did from `t` on.
    pub(super) fn opening(
        &mut self,
        space: &Space,
        request: &Request,
        t: Time,
        length: u64,
        k: usize,
    ) -> Option<Time> {
        self.open.clear();
        for (node, before, next) in &mut self.nodes {
            if next.is_none_or(|n| n.is_some_and(|n| n < t)) {
                let capacity = &space.nodes[*node].capacity;
                let fits = |used: &[f64]| part_fits(request, capacity, used);
                *next = Some(space.profile[*node].first_room(t, *before, length, fits));
            }
            self.open.extend(next.flatten());
        }
        match k.checked_sub(1) {
            None => Some(t),
            Some(k) => (k < self.open.len()).then(|| *self.open.select_nth_unstable(k).1),
        }
    }
}
