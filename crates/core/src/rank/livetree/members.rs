//! Per-client state in flat arrays, and the comparator of docs/mechanisms.md, SDRF §7.6.
//!
//! Every scheduling decision compares one client against O(log n) others, so a client's
//! priority must be cheap to evaluate at the current time: each client keeps its priority as m
//! lines in the tree's decay variable x (§7.4), stored contiguously with stride m, and an
//! evaluation is m multiply-adds with no exponential.

use super::crossing::{self, Handover, Line, Priority};
use crate::model::Time;
use crate::priority::PriorityForm;
use crate::rank::Standing;

/// Where a client stands at the current time: compared by value, then larger slope, then id.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Key {
    /// The priority.
    pub value: f64,
    /// The smallest slope in x among the lines attaining the priority.
    pub slope: f64,
    /// The client id.
    pub id: u32,
    /// Which of the client's lines attains the priority.
    pub line: u32,
}

impl Key {
    /// Where `self` stands against `other` in the order (§7.6).
    pub(crate) fn order(&self, other: &Key) -> std::cmp::Ordering {
        self.value
            .total_cmp(&other.value)
            .then(other.slope.total_cmp(&self.slope))
            .then(self.id.cmp(&other.id))
    }

    /// Whether `self` comes before `other` in the order (§7.6).
    pub(crate) fn precedes(&self, other: &Key) -> bool {
        self.order(other).is_lt()
    }

    /// The key as a ranker's [`Standing`], which orders as [`Key::order`] does: the larger
    /// slope first is the smaller tie.
    pub(crate) fn standing(&self) -> Standing {
        Standing {
            value: self.value,
            tie: -self.slope,
            arrival: (Time::ZERO, 0),
            client: self.id,
        }
    }
}

/// The clients of a tree, by slot.
///
/// A client's commitment at decay variable x is `c_r = ō_r + ρ·b_r·x`, with `b_r` the slope of
/// its r-th line: lines are the only record of the commitment, so there is nothing to re-sync.
#[derive(Debug, Clone)]
pub(crate) struct Members {
    m: usize,
    form: PriorityForm,
    ids: Vec<u32>,
    weights: Vec<f64>,
    allocations: Vec<f64>,
    excesses: Vec<f64>,
    lines: Vec<Line>,
    /// Each line's handover (module `crossing`), kept with the lines.
    handovers: Vec<Handover>,
    free: Vec<u32>,
}

impl Members {
    /// No clients, `m` resources, priorities of the given form.
    pub(crate) fn new(m: usize, form: PriorityForm) -> Self {
        Members {
            m,
            form,
            ids: Vec::new(),
            weights: Vec::new(),
            allocations: Vec::new(),
            excesses: Vec::new(),
            lines: Vec::new(),
            handovers: Vec::new(),
            free: Vec::new(),
        }
    }

    /// A slot for client `id` with relative weight `weight` (anything but a positive finite
    /// number counts as 1); its vectors are set by [`Members::anchor`].
    pub(crate) fn add(&mut self, id: u32, weight: f64) -> u32 {
        let weight = usable_weight(weight);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.ids.push(id);
                self.weights.push(weight);
                self.allocations
                    .resize(self.allocations.len() + self.m, 0.0);
                self.excesses.resize(self.excesses.len() + self.m, 0.0);
                self.lines
                    .resize(self.lines.len() + self.m, Line { a: 0.0, b: 0.0 });
                let none = Handover { at: 0.0, to: 0 };
                self.handovers.resize(self.handovers.len() + self.m, none);
                return (self.ids.len() - 1) as u32;
            }
        };
        self.ids[slot as usize] = id;
        self.weights[slot as usize] = weight;
        slot
    }

    /// Give the slot back for reuse.
    pub(crate) fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// How many slots there are, free ones included.
    pub(crate) fn slots(&self) -> usize {
        self.ids.len()
    }

    /// The client id in `slot`.
    pub(crate) fn id(&self, slot: u32) -> u32 {
        self.ids[slot as usize]
    }

    /// The lines of the client in `slot`.
    pub(crate) fn lines(&self, slot: u32) -> &[Line] {
        &self.lines[self.range(slot)]
    }

    /// The priority of the client in `slot` as crossings read it, with `key` its key now.
    pub(crate) fn priority(&self, slot: u32, key: &Key) -> Priority<'_> {
        Priority {
            lines: self.lines(slot),
            handovers: &self.handovers[self.range(slot)],
            top: key.line as usize,
        }
    }

    /// The key of the client in `slot` at decay variable `x`.
    pub(crate) fn key(&self, slot: u32, x: f64) -> Key {
        let top = crossing::top(self.lines(slot), x).expect("a client has at least one line");
        // `+ 0.0` turns −0 into +0, so that `total_cmp` agrees with `==` on zeros (as in
        // `entering_key`).
        Key {
            value: top.value + 0.0,
            slope: top.slope + 0.0,
            id: self.id(slot),
            line: top.line as u32,
        }
    }

    /// The commitment of the client in `slot` on resource `r` at decay variable `x`.
    pub(crate) fn commitment(&self, slot: u32, r: usize, x: f64) -> f64 {
        let i = slot as usize * self.m + r;
        (self.excesses[i] + self.weights[slot as usize] * self.lines[i].b * x).max(0.0)
    }

    /// The commitments of the client in `slot` at decay variable `x`.
    pub(crate) fn commitments(&self, slot: u32, x: f64) -> Vec<f64> {
        (0..self.m).map(|r| self.commitment(slot, r, x)).collect()
    }

    /// The allocation of the client in `slot`.
    pub(crate) fn allocation(&self, slot: u32) -> Vec<f64> {
        self.allocations[self.range(slot)].to_vec()
    }

    /// Anchor the client in `slot` at decay variable `x`: its commitment there is `commitment`
    /// (or, if `None`, what it is now under the old excess, Eq. 6), and from there on it holds
    /// `allocation` and relaxes towards `excess`. Missing entries count as 0, extra ones are
    /// ignored, and anything but a non-negative finite number counts as 0.
    pub(crate) fn anchor(
        &mut self,
        slot: u32,
        x: f64,
        allocation: &[f64],
        excess: &[f64],
        commitment: Option<&[f64]>,
    ) {
        let rho = self.weights[slot as usize];
        let base = slot as usize * self.m;
        for r in 0..self.m {
            let c = match commitment {
                Some(given) => share(given, r),
                None => self.commitment(slot, r, x),
            };
            self.excesses[base + r] = share(excess, r);
            self.allocations[base + r] = share(allocation, r);
            self.lines[base + r].b = slope(c, self.excesses[base + r], rho, x);
        }
        let dominant = dominant(&self.allocations[self.range(slot)]);
        for r in 0..self.m {
            let held = held(self.form, dominant, self.allocations[base + r]);
            self.lines[base + r].a = (held + self.excesses[base + r]) / rho;
        }
        self.hand_over(slot);
    }

    /// The key client `id` of relative weight `weight` would have at decay variable `x` were
    /// it anchored there as [`Members::anchor`] anchors it, holding `allocation`, relaxing
    /// towards `excess` from `commitment`: the key [`Members::add`], [`Members::anchor`] and
    /// [`Members::key`] give, without a slot (`lines`, a scratch buffer, is overwritten).
    pub(crate) fn entering_key(
        &self,
        (id, weight): (u32, f64),
        x: f64,
        (allocation, excess, commitment): (&[f64], &[f64], &[f64]),
        lines: &mut Vec<Line>,
    ) -> Key {
        let rho = usable_weight(weight);
        let dominant = (0..self.m)
            .map(|r| share(allocation, r))
            .fold(0.0, f64::max);
        lines.clear();
        lines.extend((0..self.m).map(|r| {
            let (o, e, c) = (share(allocation, r), share(excess, r), share(commitment, r));
            Line {
                a: (held(self.form, dominant, o) + e) / rho,
                b: slope(c, e, rho, x),
            }
        }));
        let top = crossing::top(lines, x).expect("a client has at least one line");
        Key {
            value: top.value + 0.0,
            slope: top.slope + 0.0,
            id,
            line: top.line as u32,
        }
    }

    /// Recompute the handovers of the client in `slot` from its lines.
    fn hand_over(&mut self, slot: u32) {
        let range = self.range(slot);
        crossing::handovers(&self.lines[range.clone()], &mut self.handovers[range]);
    }

    /// Multiply the slopes of the client in `slot` by `factor` (rebasing the decay variable).
    pub(crate) fn scale(&mut self, slot: u32, factor: f64) {
        let range = self.range(slot);
        self.lines[range].iter_mut().for_each(|l| l.b *= factor);
        self.hand_over(slot);
    }

    /// Multiply every slope by `factor`.
    pub(crate) fn scale_all(&mut self, factor: f64) {
        self.lines.iter_mut().for_each(|l| l.b *= factor);
        for slot in 0..self.ids.len() as u32 {
            self.hand_over(slot);
        }
    }

    /// Whether the client in `slot` has a commitment that still moves.
    pub(crate) fn moving(&self, slot: u32) -> bool {
        self.lines(slot).iter().any(|l| l.b != 0.0)
    }

    fn range(&self, slot: u32) -> std::ops::Range<usize> {
        slot as usize * self.m..(slot as usize + 1) * self.m
    }
}

/// A relative weight as a slot keeps it: anything but a positive finite number counts as 1.
fn usable_weight(weight: f64) -> f64 {
    if weight > 0.0 && weight.is_finite() {
        weight
    } else {
        1.0
    }
}

/// The largest of a client's allocations (0 for none).
fn dominant(allocation: &[f64]) -> f64 {
    allocation.iter().copied().fold(0.0, f64::max)
}

/// What a line's level counts of a client's allocation `own` on its resource: its dominant
/// share (sum of maxes) or that resource's own (max of sums).
fn held(form: PriorityForm, dominant: f64, own: f64) -> f64 {
    match form {
        PriorityForm::SumOfMaxes => dominant,
        PriorityForm::MaxOfSums => own,
    }
}

/// A line's slope in the decay variable `x` at which commitment `c` relaxes towards `excess`,
/// for relative weight `rho`.
fn slope(c: f64, excess: f64, rho: f64, x: f64) -> f64 {
    (c - excess) / (rho * x)
}

/// Entry `r` of `v` as a share: missing, negative, NaN and infinite entries count as 0.
fn share(v: &[f64], r: usize) -> f64 {
    v.get(r)
        .copied()
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(0.0)
}
