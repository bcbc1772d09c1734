//! The tournament: who is first, kept with one certificate per match.
//!
//! SDRF only ever asks "who goes next", so the live tree does not keep every client in order
//! (that needs a certificate per adjacent pair, and at 100,000 near-tied clients most of them
//! fail every millisecond). It keeps a kinetic tournament instead: a complete binary tree over
//! the client slots in which every inner node holds the winner of the match between its two
//! children's winners, and a certificate, the moment at which that match's loser overtakes its
//! winner. Every node also knows the earliest certificate below it, so an advance finds the
//! failed matches by descending only where one is due, and replays them at the target moment.
//!
//! The multifactor ranker keeps its order in a plain one ([`Tournament::plain`]), without
//! certificates: its keys move only when a client's head or the factors do.
//!
//! Moments are read on the caller's clock: any number that grows with time (the live tree uses
//! minus its decay variable, so that no logarithm turns a crossing into a time). The tree never
//! compares by itself: every match is played by the caller's `play`, which compares two slots
//! now and computes their certificate (module `crossing`).

/// Marks an empty leaf, or a match without players.
pub(crate) const NIL: u32 = u32::MAX;

/// The outcome of a match: the winner and the moment the loser overtakes it (infinity: never).
pub(crate) type Outcome = (u32, f64);

/// The match of a plain tournament between slots `a` and `b` by their keys (`key`): the lower
/// key wins (`a` on a tie), a slot without one loses, and no certificate.
pub(crate) fn lower_key<K: Ord>(key: impl Fn(u32) -> Option<K>, a: u32, b: u32) -> Outcome {
    let winner = match (key(a), key(b)) {
        (Some(ka), Some(kb)) if kb < ka => b,
        (None, Some(_)) => b,
        _ => a,
    };
    (winner, f64::INFINITY)
}

/// One node of the tree: a leaf (a slot or `NIL`) or a match between its children's winners.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// The earliest certificate in this node's subtree, its own included.
    due: f64,
    /// The moment this match's loser overtakes its winner (infinity for a leaf or a walkover).
    certificate: f64,
    /// The slot that wins here (`NIL` if the subtree is empty).
    winner: u32,
}

const EMPTY: Node = Node {
    due: f64::INFINITY,
    certificate: f64::INFINITY,
    winner: NIL,
};

/// A kinetic tournament over slots `0..capacity`, root at index 1, leaf of slot s at
/// `capacity + s` (so node i's children are 2i and 2i + 1).
#[derive(Debug, Clone)]
pub(crate) struct Tournament {
    nodes: Vec<Node>,
    capacity: usize,
    /// Whether matches have certificates; a plain tournament keeps winners alone.
    kinetic: bool,
}

impl Tournament {
    /// A tournament without players.
    pub(crate) fn new() -> Self {
        Tournament {
            nodes: vec![EMPTY; 2],
            capacity: 1,
            kinetic: true,
        }
    }

    /// A tournament without players whose matches never fail: winners are kept and
    /// certificates ignored (every due moment stays at infinity).
    pub(crate) fn plain() -> Self {
        Tournament {
            kinetic: false,
            ..Tournament::new()
        }
    }

    /// The slot that wins the whole tournament, if any.
    pub(crate) fn first(&self) -> Option<u32> {
        Some(self.nodes[1].winner).filter(|&w| w != NIL)
    }

    /// The earliest certificate of the whole tournament (infinity if none).
    #[cfg(test)]
    pub(crate) fn due(&self) -> f64 {
        self.nodes[1].due
    }

    /// Puts slot `s` in (`present`) or out of the tournament, replaying the matches on its path.
    pub(crate) fn set(&mut self, s: u32, present: bool, play: impl Fn(u32, u32) -> Outcome) {
        if s as usize >= self.capacity {
            self.grow(s as usize + 1, &play);
        }
        let mut i = self.capacity + s as usize;
        self.nodes[i].winner = if present { s } else { NIL };
        // Whether the winner coming up the path may differ from the one the parent last saw.
        let mut changed = true;
        while i > 1 {
            i /= 2;
            if changed {
                let before = self.nodes[i].winner;
                self.replay(i, &play);
                let winner = self.nodes[i].winner;
                changed = winner != before || winner == s;
            } else if !self.kinetic {
                return;
            } else {
                let due = self.subtree_due(i);
                if due == self.nodes[i].due {
                    return;
                }
                self.nodes[i].due = due;
            }
        }
    }

    /// Puts each of `slots` in or out of the tournament, in turn, and replays once each match
    /// above any of them, children before parents: what [`Tournament::set`] one by one ends
    /// with, in fewer matches when many slots move together.
    pub(crate) fn set_many(&mut self, slots: &[(u32, bool)], play: impl Fn(u32, u32) -> Outcome) {
        let Some(top) = slots.iter().map(|&(s, _)| s).max() else {
            return;
        };
        if top as usize >= self.capacity {
            self.grow(top as usize + 1, &play);
        }
        let mut level: Vec<usize> = Vec::with_capacity(slots.len());
        for &(s, present) in slots {
            let leaf = self.capacity + s as usize;
            self.nodes[leaf].winner = if present { s } else { NIL };
            level.push(leaf);
        }
        while level[0] > 1 {
            level.iter_mut().for_each(|i| *i /= 2);
            level.sort_unstable();
            level.dedup();
            level.iter().for_each(|&i| self.replay(i, &play));
        }
    }

    /// Replays every match whose certificate is due by moment `t` (and the matches above them),
    /// at the caller's current moment `t`; returns how many certificates were due.
    pub(crate) fn refresh(&mut self, t: f64, play: impl Fn(u32, u32) -> Outcome) -> u64 {
        if self.nodes[1].due > t {
            return 0;
        }
        let mut failed = 0;
        self.refresh_below(1, t, &play, &mut failed);
        failed
    }

    /// [`Tournament::refresh`] of the subtree under node `i`, children before parents.
    fn refresh_below(
        &mut self,
        i: usize,
        t: f64,
        play: &impl Fn(u32, u32) -> Outcome,
        failed: &mut u64,
    ) {
        if i >= self.capacity {
            return;
        }
        for child in [2 * i, 2 * i + 1] {
            if self.nodes[child].due <= t {
                self.refresh_below(child, t, play, failed);
            }
        }
        if self.nodes[i].certificate <= t {
            *failed += 1;
        }
        self.replay(i, play);
    }

    /// Plays the match at inner node `i` between its children's winners.
    fn replay(&mut self, i: usize, play: &impl Fn(u32, u32) -> Outcome) {
        let (a, b) = (self.nodes[2 * i].winner, self.nodes[2 * i + 1].winner);
        let (winner, certificate) = match (a, b) {
            (NIL, w) | (w, NIL) => (w, f64::INFINITY),
            _ => play(a, b),
        };
        self.nodes[i].winner = winner;
        if !self.kinetic {
            return;
        }
        self.nodes[i].certificate = certificate;
        self.nodes[i].due = self.subtree_due(i);
    }

    /// The earliest of node `i`'s own certificate and its children's.
    fn subtree_due(&self, i: usize) -> f64 {
        let (left, right) = (self.nodes[2 * i].due, self.nodes[2 * i + 1].due);
        self.nodes[i].certificate.min(left).min(right)
    }

    /// Divides every certificate by `divisor` in (0, 1], as the caller's clock is rescaled.
    /// Rounding is monotone, so every node's earliest certificate below stays the earliest. A
    /// divisor that underflowed to 0 makes every finite certificate due at once (early, never
    /// late).
    pub(crate) fn rescale(&mut self, divisor: f64) {
        for node in &mut self.nodes {
            node.due /= divisor;
            node.certificate /= divisor;
        }
    }

    /// Makes room for slots `0..slots`, replaying every match of the larger tree.
    fn grow(&mut self, slots: usize, play: &impl Fn(u32, u32) -> Outcome) {
        let capacity = slots.next_power_of_two();
        let mut nodes = vec![EMPTY; 2 * capacity];
        nodes[capacity..capacity + self.capacity].copy_from_slice(&self.nodes[self.capacity..]);
        (self.nodes, self.capacity) = (nodes, capacity);
        self.replay_all(play);
    }

    /// Every slot of `0..slots` put in (`present`) or out, and every match replayed: a
    /// tournament built anew in one sweep.
    pub(crate) fn fill(
        &mut self,
        slots: usize,
        present: impl Fn(u32) -> bool,
        play: impl Fn(u32, u32) -> Outcome,
    ) {
        let capacity = slots.max(self.capacity).next_power_of_two();
        self.nodes = vec![EMPTY; 2 * capacity];
        self.capacity = capacity;
        for s in 0..slots as u32 {
            if present(s) {
                self.nodes[capacity + s as usize].winner = s;
            }
        }
        self.replay_all(&play);
    }

    /// Replays every match, children before parents: the winners and certificates as `play`
    /// decides them now.
    pub(crate) fn replay_all(&mut self, play: &impl Fn(u32, u32) -> Outcome) {
        for i in (1..self.capacity).rev() {
            self.replay(i, play);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Players on lines `value(t) = a + b·t`: the smaller value wins, ties to the smaller slot.
    fn play(lines: &[(f64, f64)], now: f64) -> impl Fn(u32, u32) -> Outcome + '_ {
        move |a, b| {
            let at = |s: u32| {
                let (p, q) = lines[s as usize];
                (p + q * now, s)
            };
            let (w, l) = if at(a) < at(b) { (a, b) } else { (b, a) };
            let ((wa, wb), (la, lb)) = (lines[w as usize], lines[l as usize]);
            // The loser overtakes when its line falls below the winner's.
            let cross = if lb < wb {
                ((la - wa) / (wb - lb)).max(now)
            } else {
                f64::INFINITY
            };
            (w, cross)
        }
    }

    /// The first of the players present at time `t`, by brute force.
    fn brute_first(lines: &[(f64, f64)], present: &[bool], t: f64) -> Option<u32> {
        (0..lines.len() as u32)
            .filter(|&s| present[s as usize])
            .min_by(|&a, &b| {
                let v = |s: u32| lines[s as usize].0 + lines[s as usize].1 * t;
                v(a).total_cmp(&v(b)).then(a.cmp(&b))
            })
    }

    #[test]
    fn an_empty_tournament_has_no_winner() {
        let mut tournament = Tournament::new();
        assert_eq!(tournament.first(), None);
        assert_eq!(tournament.due(), f64::INFINITY);
        let lines = [(1.0, 0.0)];
        tournament.set(0, true, play(&lines, 0.0));
        assert_eq!(tournament.first(), Some(0));
        tournament.set(0, false, play(&lines, 0.0));
        assert_eq!(tournament.first(), None);
    }

    proptest! {
        /// After any sequence of entries, exits and advances, the winner is the brute-force
        /// minimum.
        #[test]
        fn the_winner_is_the_minimum(
            lines in prop::collection::vec((0.0..1000.0f64, -50.0..50.0f64), 1..40),
            ops in prop::collection::vec((0..40u32, any::<bool>(), 0..3u32), 1..80),
        ) {
            let mut present = vec![false; lines.len()];
            let mut tournament = Tournament::new();
            let mut now = 0.0;
            for (s, enter, dt) in ops {
                let s = s % lines.len() as u32;
                if dt > 0 {
                    now += dt as f64;
                    tournament.refresh(now, play(&lines, now));
                }
                present[s as usize] = enter;
                tournament.set(s, enter, play(&lines, now));
                prop_assert_eq!(tournament.first(), brute_first(&lines, &present, now));
            }
        }

        /// Many slots set at once leave every match, certificate and due moment as setting
        /// them one by one does.
        #[test]
        fn setting_many_at_once_is_setting_them_in_turn(
            lines in prop::collection::vec((0.0..1000.0f64, -50.0..50.0f64), 1..40),
            before in prop::collection::vec((0..40u32, any::<bool>()), 0..40),
            batch in prop::collection::vec((0..40u32, any::<bool>()), 1..40),
            now in 0.0..100.0f64,
        ) {
            let slots = lines.len() as u32;
            let mut in_turn = Tournament::new();
            for (s, present) in before {
                in_turn.set(s % slots, present, play(&lines, 0.0));
            }
            in_turn.refresh(now, play(&lines, now));
            let mut at_once = in_turn.clone();
            let batch: Vec<(u32, bool)> = batch.into_iter().map(|(s, p)| (s % slots, p)).collect();
            for &(s, present) in &batch {
                in_turn.set(s, present, play(&lines, now));
            }
            at_once.set_many(&batch, play(&lines, now));
            let matches = |t: &Tournament| -> Vec<(u32, f64, f64)> {
                t.nodes.iter().map(|n| (n.winner, n.certificate, n.due)).collect()
            };
            prop_assert_eq!(matches(&at_once), matches(&in_turn));
        }
    }
}
