//! The live tree: SDRF clients kept in priority order while their commitments decay.
//!
//! Under SDRF a client's priority drifts between allocation changes, because its commitments
//! relax towards its excess use (Eq. 6), so a static priority queue goes stale and re-sorting at
//! every decision costs O(n log n). The live tree (docs/mechanisms.md, SDRF §7) is a kinetic sorted
//! structure: it keeps the clients sorted at its current time and only does work when two
//! *neighbours* swap, at times it computes exactly in advance.
//!
//! Design:
//!
//! * **Reference time.** Every priority is the maximum of m lines in the decay variable
//!   `x = e^(−(t − t_ref)/τ)` shared by all clients (§7.4), so evaluating a priority at the
//!   current time costs m multiply-adds. `t_ref` is rebased to the current time when
//!   `(now − t_ref)/τ` exceeds 32, which bounds every slope (§7.7).
//! * **Who goes next.** A kinetic tournament over the client slots (module `tournament`): every
//!   match is decided by the comparator at the current time (§7.6) and holds one certificate, the
//!   exact moment its loser overtakes its winner (module `crossing`), kept as minus the decay
//!   variable there: x falls as time passes, so −x is a clock, and a crossing needs no logarithm
//!   to become a time. A change of one client replays the O(log n) matches on its path. Only
//!   the matches on the way to the winner carry near-ties, so far fewer certificates fail than a
//!   sorted order's neighbour swaps.
//! * **Batch advance** (§7.7): the matches whose certificates fall due by the target time are
//!   replayed there, children before parents, found by descending only into subtrees with a due
//!   certificate. The full order, which only reports ask for, is sorted at the current time.
//!
//! ```
//! use fairshare_core::rank::livetree::{LiveTree, Member};
//! use fairshare_core::priority::PriorityForm;
//!
//! // docs/mechanisms.md, SDRF §7.5: A is ahead at t = 0, but its commitment grows while B's decays.
//! let mut tree = LiveTree::new(2, 100.0, PriorityForm::MaxOfSums);
//! tree.insert(0, Member {
//!     weight: 1.0,
//!     allocation: vec![0.40, 0.10],
//!     excess: vec![0.15, 0.0],
//!     commitment: vec![0.05, 0.20],
//! }).unwrap();
//! tree.insert(1, Member {
//!     weight: 1.0,
//!     allocation: vec![0.20, 0.30],
//!     excess: vec![0.0, 0.05],
//!     commitment: vec![0.30, 0.10],
//! }).unwrap();
//! assert_eq!(tree.first(), Some(0));
//! tree.advance(20.0).unwrap(); // they swap at t* = 13.3531 s
//! assert_eq!(tree.first(), Some(1));
//! assert_eq!(tree.counters().events, 1);
//! ```

mod crossing;
mod members;
pub(crate) mod tournament;

use crate::priority::PriorityForm;
use crate::rank::Standing;
use members::{Key, Members};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use tournament::{Outcome, Tournament, NIL};

/// Rebase the reference time once the decay variable has fallen below `e^(−REBASE)`.
const REBASE: f64 = 32.0;

/// The smallest decay variable a certificate holds (about `e^(−690)`, far above the
/// subnormals): crossings further away than that fall due there, early.
const FARTHEST: f64 = 1e-300;

/// One client as it enters the tree.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Member {
    /// Relative weight ρ = n·w > 0.
    pub weight: f64,
    /// Allocation `o_r`, as fractions of capacity.
    pub allocation: Vec<f64>,
    /// Excess use `ō_r`, the target the commitments relax towards.
    pub excess: Vec<f64>,
    /// Commitments `c_r` at the tree's current time.
    pub commitment: Vec<f64>,
}

/// What a tree has done since it was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LiveTreeCounters {
    /// Calls to [`LiveTree::insert`].
    pub inserts: u64,
    /// Clients removed by [`LiveTree::remove`].
    pub removals: u64,
    /// Clients updated by [`LiveTree::update`].
    pub updates: u64,
    /// Certificates that fell due in [`LiveTree::advance`] (docs/mechanisms.md, SDRF §7.8):
    /// matches replayed because their loser may have overtaken their winner, whether or not it had.
    pub events: u64,
}

/// An input the live tree refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LiveTreeError {
    /// Time must be finite and must not go backwards.
    #[error("time {t} s: expected a finite time not before the tree's {now} s")]
    Time {
        /// The tree's time.
        now: f64,
        /// The time given.
        t: f64,
    },
    /// A vector has another length than the tree's resources (empty means zeros, except for
    /// the allocation).
    #[error("client {id}: {field} has {found} amounts, expected {expected}")]
    WrongLength {
        /// The client.
        id: u32,
        /// Which vector.
        field: &'static str,
        /// Amounts given.
        found: usize,
        /// The tree's resources.
        expected: usize,
    },
    /// Weights must be positive and amounts finite and not negative.
    #[error(
        "client {id}: {field} must be finite and not negative (a weight positive), found {value}"
    )]
    BadValue {
        /// The client.
        id: u32,
        /// Which value.
        field: &'static str,
        /// The value given.
        value: f64,
    },
}

/// SDRF clients in priority order at a current time that only moves forward.
#[derive(Debug, Clone)]
pub struct LiveTree {
    resources: usize,
    tau: f64,
    now: f64,
    t_ref: f64,
    /// The decay variable at `now`: `e^(−(now − t_ref)/τ)`, never below `e^(−REBASE)`.
    x: f64,
    slots: HashMap<u32, u32, BuildHasherDefault<IdHasher>>,
    members: Members,
    tournament: Tournament,
    /// With τ = 0: clients anchored at the current instant, whose commitments jump at the next.
    fresh: Vec<u32>,
    /// While time is expected to stand still ([`LiveTree::freeze`]), the tree plays its
    /// matches without certificates and keeps each slot's key once worked out (a slot's
    /// entry is forgotten when it moves); `None` otherwise.
    frozen: Option<Vec<Cell<Option<Key>>>>,
    /// The slots put in or out of the tournament since [`LiveTree::defer`], their matches
    /// not yet replayed; `None` when every change is played at once.
    deferred: Option<Vec<(u32, bool)>>,
    counters: LiveTreeCounters,
}

impl LiveTree {
    /// An empty tree at time 0 for `resources` resources (at least one is kept), commitments
    /// with time constant `tau` seconds, and priorities of the given form.
    pub fn new(resources: usize, tau: f64, form: PriorityForm) -> Self {
        LiveTree {
            resources: resources.max(1),
            tau: if tau >= 0.0 { tau } else { 0.0 },
            now: 0.0,
            t_ref: 0.0,
            x: 1.0,
            slots: HashMap::default(),
            members: Members::new(resources.max(1), form),
            tournament: Tournament::new(),
            fresh: Vec::new(),
            frozen: None,
            deferred: None,
            counters: LiveTreeCounters::default(),
        }
    }

    /// The number of resources every client's vectors have.
    pub fn resources(&self) -> usize {
        self.resources
    }

    /// The current time in seconds.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Brings the order to time `t` seconds (now or later, finite).
    pub fn advance(&mut self, t: f64) -> Result<(), LiveTreeError> {
        if !(t >= self.now && t.is_finite()) {
            return Err(LiveTreeError::Time { now: self.now, t });
        }
        if t == self.now {
            return Ok(());
        }
        self.settle();
        if std::mem::take(&mut self.frozen).is_some() {
            // Every match is replayed now, with the certificates the frozen ones lacked.
            let (tournament, referee) = self.split();
            tournament.replay_all(&|a, b| referee.play(a, b));
        }
        self.now = t;
        self.rebase();
        let clock = -self.x;
        let (tournament, referee) = self.split();
        self.counters.events += tournament.refresh(clock, |a, b| referee.play(a, b));
        Ok(())
    }

    /// From now on, until time moves, matches are played without working out when their
    /// loser overtakes their winner: what a copy that plays decisions out at one instant
    /// (the adapters' play of starts) has no use for. The order is the same; the first
    /// [`LiveTree::advance`] to a later time works the certificates out again.
    pub fn freeze(&mut self) {
        self.frozen = Some(vec![Cell::new(None); self.members.slots()]);
    }

    /// Forgets the key kept for `slot` while frozen: its client entered, moved or left.
    fn forget_key(&mut self, slot: u32) {
        if let Some(keys) = self.frozen.as_mut() {
            let s = slot as usize;
            if keys.len() <= s {
                keys.resize(s + 1, Cell::new(None));
            }
            keys[s].set(None);
        }
    }

    /// From now until [`LiveTree::settle`], clients entering, moving and leaving replay no
    /// match: a caller telling many clients at one instant has each match played once, at
    /// the settling. Until then the tree cannot tell who is first.
    pub fn defer(&mut self) {
        self.deferred.get_or_insert_with(Vec::new);
    }

    /// Replays the matches the changes since [`LiveTree::defer`] touched: the tree is as
    /// telling each change at once would have left it.
    pub fn settle(&mut self) {
        if let Some(changed) = self.deferred.take() {
            let (tournament, referee) = self.split();
            tournament.set_many(&changed, |a, b| referee.play(a, b));
        }
    }

    /// Checks one of a client's vectors: `resources` finite non-negative amounts (or none,
    /// meaning zeros, where `empty_is_zero`).
    fn check(
        &self,
        id: u32,
        field: &'static str,
        v: &[f64],
        empty_is_zero: bool,
    ) -> Result<(), LiveTreeError> {
        if v.len() != self.resources && !(empty_is_zero && v.is_empty()) {
            return Err(LiveTreeError::WrongLength {
                id,
                field,
                found: v.len(),
                expected: self.resources,
            });
        }
        match v.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
            Some(&value) => Err(LiveTreeError::BadValue { id, field, value }),
            None => Ok(()),
        }
    }

    /// Inserts client `id` at the current time, replacing any client with that id.
    pub fn insert(&mut self, id: u32, member: Member) -> Result<(), LiveTreeError> {
        if !(member.weight.is_finite() && member.weight > 0.0) {
            return Err(LiveTreeError::BadValue {
                id,
                field: "weight",
                value: member.weight,
            });
        }
        self.check(id, "allocation", &member.allocation, false)?;
        self.check(id, "excess", &member.excess, true)?;
        self.check(id, "commitment", &member.commitment, true)?;
        self.remove_quietly(id);
        let slot = self.members.add(id, member.weight);
        let commitment = Some(member.commitment.as_slice());
        self.members
            .anchor(slot, self.x, &member.allocation, &member.excess, commitment);
        self.slots.insert(id, slot);
        self.note_fresh(slot);
        self.enter(slot, true);
        self.counters.inserts += 1;
        Ok(())
    }

    /// Remove client `id`, returning its commitments at the current time.
    pub fn remove(&mut self, id: u32) -> Option<Vec<f64>> {
        let commitment = self.remove_quietly(id)?;
        self.counters.removals += 1;
        Some(commitment)
    }

    /// Change the allocation and excess of client `id` from now on, and reposition it. Its
    /// commitments are first brought to now under the old excess (Eq. 6). False if unknown.
    pub fn update(
        &mut self,
        id: u32,
        allocation: &[f64],
        excess: &[f64],
    ) -> Result<bool, LiveTreeError> {
        self.check(id, "allocation", allocation, false)?;
        self.check(id, "excess", excess, true)?;
        let Some(&slot) = self.slots.get(&id) else {
            return Ok(false);
        };
        self.members.anchor(slot, self.x, allocation, excess, None);
        self.note_fresh(slot);
        self.enter(slot, true);
        self.counters.updates += 1;
        Ok(true)
    }

    /// The client with the lowest priority now (ties: §7.6).
    pub fn first(&self) -> Option<u32> {
        self.tournament.first().map(|slot| self.members.id(slot))
    }

    /// The client ids, lowest priority first (sorted now: O(n log n)).
    pub fn iter(&self) -> impl Iterator<Item = u32> {
        let mut standings: Vec<Standing> = (self.slots.values())
            .map(|&slot| self.members.key(slot, self.x).standing())
            .collect();
        standings.sort_unstable();
        standings.into_iter().map(|standing| standing.client)
    }

    /// The standing now of client `id` of the tree, if it is in it.
    pub(crate) fn standing(&self, id: u32) -> Option<Standing> {
        let slot = self.slot(id)?;
        Some(self.members.key(slot, self.x).standing())
    }

    /// The standing client `id`, which the tree does not hold, would have after inserting it
    /// now, without inserting it (no certificate computed): given its relative weight
    /// (positive and finite, as `insert` takes it) and its allocation, excess and commitments
    /// now (`lines`, a scratch buffer, is overwritten).
    pub(crate) fn entering_standing(
        &self,
        (id, weight): (u32, f64),
        [allocation, excess, commitment]: [&[f64]; 3],
        lines: &mut Vec<crossing::Line>,
    ) -> Standing {
        let vectors = (allocation, excess, commitment);
        (self.members)
            .entering_key((id, weight), self.x, vectors, lines)
            .standing()
    }

    /// The priority of client `id` now.
    pub fn priority(&self, id: u32) -> Option<f64> {
        self.slot(id)
            .map(|slot| self.members.key(slot, self.x).value)
    }

    /// The commitments of client `id` now.
    pub fn commitment(&self, id: u32) -> Option<Vec<f64>> {
        self.slot(id)
            .map(|slot| self.members.commitments(slot, self.x))
    }

    /// The allocation of client `id`.
    pub fn allocation(&self, id: u32) -> Option<Vec<f64>> {
        self.slot(id).map(|slot| self.members.allocation(slot))
    }

    /// Whether client `id` is in the tree.
    pub fn contains(&self, id: u32) -> bool {
        self.slots.contains_key(&id)
    }

    /// The number of clients.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the tree holds no client.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// What the tree has done so far.
    pub fn counters(&self) -> LiveTreeCounters {
        self.counters
    }

    fn slot(&self, id: u32) -> Option<u32> {
        self.slots.get(&id).copied()
    }

    /// Remove client `id` without counting it.
    fn remove_quietly(&mut self, id: u32) -> Option<Vec<f64>> {
        let slot = self.slots.remove(&id)?;
        let commitment = self.members.commitments(slot, self.x);
        self.enter(slot, false);
        self.members.release(slot);
        Some(commitment)
    }

    /// Put the client in `slot` in the tournament as it stands now (or take it out).
    fn enter(&mut self, slot: u32, present: bool) {
        self.forget_key(slot);
        if let Some(changed) = self.deferred.as_mut() {
            changed.push((slot, present));
            return;
        }
        let (tournament, referee) = self.split();
        tournament.set(slot, present, |a, b| referee.play(a, b));
    }

    /// The tournament, and who decides its matches at the current time.
    fn split(&mut self) -> (&mut Tournament, Referee<'_>) {
        let referee = Referee {
            members: &self.members,
            x: self.x,
            // Without time constant to time, no crossing is worked out.
            tau: if self.frozen.is_some() {
                f64::INFINITY
            } else {
                self.tau
            },
            keys: self.frozen.as_deref().unwrap_or_default(),
            last: Cell::new(NIL),
            last_key: Cell::new(Key::default()),
        };
        (&mut self.tournament, referee)
    }

    /// Recompute the decay variable at now, moving the reference time to now if it has fallen
    /// too far behind (and the certificates, which are decay variables, with it).
    fn rebase(&mut self) {
        let elapsed = (self.now - self.t_ref) / self.tau;
        if elapsed <= REBASE {
            self.x = (-elapsed).exp();
            return;
        }
        let factor = (-elapsed).exp();
        if self.tau == 0.0 {
            for slot in self.fresh.drain(..) {
                self.members.scale(slot, factor);
            }
        } else {
            self.members.scale_all(factor);
            self.tournament.rescale(factor);
        }
        (self.t_ref, self.x) = (self.now, 1.0);
    }

    /// With τ = 0, remember a client whose commitment jumps to its excess at the next instant.
    fn note_fresh(&mut self, slot: u32) {
        if self.tau == 0.0 && self.members.moving(slot) {
            self.fresh.push(slot);
        }
    }
}

/// Decides matches between clients at the tree's current time.
struct Referee<'a> {
    members: &'a Members,
    x: f64,
    tau: f64,
    /// The last winner (`NIL` before the first match): up a path, every match has the
    /// previous one's winner.
    last: Cell<u32>,
    /// The last winner's key.
    last_key: Cell<Key>,
    /// The keys kept by slot while the tree is frozen (empty otherwise, or for a slot whose
    /// key is not kept).
    keys: &'a [Cell<Option<Key>>],
}

impl Referee<'_> {
    /// The winner of slots `a` and `b` now (§7.6), and when the loser overtakes it (§7.5).
    fn play(&self, a: u32, b: u32) -> Outcome {
        let (ka, kb) = (self.key(a), self.key(b));
        let ((winner, w), (loser, l)) = if ka.precedes(&kb) {
            ((a, ka), (b, kb))
        } else {
            ((b, kb), (a, ka))
        };
        self.last.set(winner);
        self.last_key.set(w);
        (winner, self.overtaking((winner, w), (loser, l)))
    }

    /// The key of the client in `slot` now.
    fn key(&self, slot: u32) -> Key {
        if self.last.get() == slot {
            return self.last_key.get();
        }
        let Some(kept) = self.keys.get(slot as usize) else {
            return self.members.key(slot, self.x);
        };
        if let Some(key) = kept.get() {
            return key;
        }
        let key = self.members.key(slot, self.x);
        kept.set(Some(key));
        key
    }

    /// The moment `loser` overtakes `winner`, which precedes it now, on the tournament's clock
    /// −x (infinity: never); each comes with its key now.
    fn overtaking(&self, (winner, w): (u32, Key), (loser, l): (u32, Key)) -> f64 {
        if self.tau == f64::INFINITY {
            return f64::INFINITY;
        }
        let (before, after) = (
            self.members.priority(winner, &w),
            self.members.priority(loser, &l),
        );
        let Some(x) = crossing::crossing(before, after, self.x) else {
            return f64::INFINITY;
        };
        if self.tau == 0.0 {
            // Commitments jump at the next instant: due at the next advance, whatever it is.
            return f64::NEG_INFINITY;
        }
        // A crossing further than `FARTHEST` is kept there, early: no later rebase can lose it
        // to underflow, and an early event only re-sorts.
        -(self.x * x).max(FARTHEST)
    }
}

/// A fast hasher for client ids (a multiplicative hash; ids are not adversarial).
#[derive(Debug, Clone, Copy, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests;
