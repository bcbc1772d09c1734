//! BAA-T's time constraint (`spec/baa.md` §5): within a bottleneck set every user should get
//! the same *cumulative* amount of the set's bottleneck over time, so a user that had less
//! (it needed less for a while, or it just arrived) is served first until it catches up.
//!
//! Time runs in epochs. Each epoch the levels are solved for the users present (as in static
//! BAA), and each set's budget `|X_r|·p_r·Δ` is water-filled over the members' keys (what
//! they received so far): the member with the lowest key is topped up first, none above its
//! demand nor above `γ` times the level (the catch-up cap; γ = 1 is static BAA, ∞ the literal
//! seed). Moving bottleneck amounts between members changes what they use of the other
//! resources, so when the water-filled allocation would exceed a capacity it is blended with
//! the level allocation, in closed form, until it fits.

use super::{at_level, BaaError, SetSums, Solver};

/// Where a newcomer's key starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// At zero: cumulative from time 0, so a late joiner catches up on the time before it came
    /// (the literal `∫₀ᵗ`).
    Global,
    /// At the lowest key of its set's present members: only shortfalls after arrival are
    /// repaid.
    #[default]
    Arrival,
}

/// BAA-T's choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeSettings {
    /// How the levels are chosen.
    pub solver: Solver,
    /// Where a newcomer's key starts.
    pub origin: Origin,
    /// The catch-up cap γ ≥ 1: no member gets more than γ × its set's level in one epoch.
    pub catch_up: f64,
}

impl Default for TimeSettings {
    /// The spec's defaults: the exact levels, `Arrival`, γ = 2.
    fn default() -> TimeSettings {
        TimeSettings {
            solver: Solver::Exact,
            origin: Origin::Arrival,
            catch_up: 2.0,
        }
    }
}

/// One user of BAA-T.
#[derive(Debug, Clone, PartialEq)]
struct Member {
    /// Its demand per unit of work, fractions of capacity.
    demand: Vec<f64>,
    /// Its bottleneck set.
    set: usize,
    /// The most of its bottleneck it can use per unit of time (∞: infinitely many tasks).
    cap: f64,
    /// What it received of its bottleneck so far, and its water-filling key.
    received: f64,
    key: f64,
    present: bool,
}

/// What one epoch gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Epoch {
    /// Each resource's level (0 for an empty set).
    pub level: Vec<f64>,
    /// Each user's allocation per unit of time (fractions of capacity; zero when absent).
    pub allocations: Vec<Vec<f64>>,
    /// How much of the water-filled allocation was kept (1: all of it; less when it had to be
    /// blended with the level allocation to fit the capacities).
    pub kept: f64,
}

/// BAA with the time constraint, over a sequence of joins, departures and epochs.
#[derive(Debug, Clone, PartialEq)]
pub struct BaaTime {
    settings: TimeSettings,
    capacity: Vec<f64>,
    members: Vec<Member>,
    sums: SetSums,
}

impl BaaTime {
    /// No users yet, over `resources` resources each of capacity `scale` per unit of time
    /// (fractions of a reference capacity: BAA's floors and sets assume every resource scales
    /// alike).
    pub fn new(resources: usize, scale: f64, settings: TimeSettings) -> Result<BaaTime, BaaError> {
        let capacity = vec![scale; resources];
        let catch_up = settings.catch_up;
        if resources == 0
            || !(scale.is_normal() && scale > 0.0)
            || catch_up.is_nan()
            || catch_up < 1.0
        {
            return Err(BaaError::Capacity(capacity));
        }
        Ok(BaaTime {
            sums: SetSums::new(resources),
            settings,
            capacity,
            members: Vec::new(),
        })
    }

    /// A user of `demand` (fractions of capacity, all positive) in bottleneck set `set`
    /// (classified by the caller, [`super::bottleneck`]) that can use at most `cap` of its
    /// bottleneck per unit of time joins; its index. O(m) besides the set's lowest key.
    pub fn join(&mut self, demand: Vec<f64>, set: usize, cap: f64) -> Result<usize, BaaError> {
        let user = self.members.len();
        let m = self.capacity.len();
        let valid = demand.len() == m && demand.iter().all(|d| d.is_finite() && *d > 0.0);
        if !valid || set >= m {
            return Err(BaaError::Demand { user, demand });
        }
        let key = match self.settings.origin {
            Origin::Global => 0.0,
            Origin::Arrival => (self.members.iter())
                .filter(|o| o.present && o.set == set)
                .map(|o| o.key)
                .fold(None, |low: Option<f64>, k| {
                    Some(low.map_or(k, |l| l.min(k)))
                })
                .unwrap_or(0.0),
        };
        self.sums.add(set, &demand);
        self.members.push(Member {
            demand,
            set,
            cap: cap.max(0.0),
            received: 0.0,
            key,
            present: true,
        });
        Ok(user)
    }

    /// A user leaves; the sets' sums are rebuilt from the users still present (O(n m)).
    pub fn leave(&mut self, user: usize) {
        if let Some(member) = self.members.get_mut(user) {
            member.present = false;
        }
        self.sums = SetSums::new(self.capacity.len());
        for member in self.members.iter().filter(|o| o.present) {
            self.sums.add(member.set, &member.demand);
        }
    }

    /// A user's cap from now on: the most of its bottleneck it can use per unit of time.
    pub fn set_cap(&mut self, user: usize, cap: f64) {
        if let Some(member) = self.members.get_mut(user) {
            member.cap = cap.max(0.0);
        }
    }

    /// Every resource's capacity per unit of time from now on (as users who each bring a
    /// share join).
    pub fn set_scale(&mut self, scale: f64) -> Result<(), BaaError> {
        if !(scale.is_normal() && scale > 0.0) {
            return Err(BaaError::Capacity(vec![scale; self.capacity.len()]));
        }
        self.capacity.iter_mut().for_each(|c| *c = scale);
        Ok(())
    }

    /// User `user`'s bottleneck set.
    pub fn set_of(&self, user: usize) -> Option<usize> {
        self.members.get(user).map(|o| o.set)
    }

    /// The within-set spread of the keys, `(max K − min K) / max K` over each set's present
    /// members, the largest over the sets (0 when every set's members are even).
    pub fn spread(&self) -> f64 {
        let mut low = vec![f64::INFINITY; self.capacity.len()];
        let mut high = vec![0.0f64; self.capacity.len()];
        for o in self.members.iter().filter(|o| o.present) {
            low[o.set] = low[o.set].min(o.key);
            high[o.set] = high[o.set].max(o.key);
        }
        (low.iter().zip(&high))
            .filter(|(_, h)| **h > 0.0)
            .map(|(l, h)| (h - l) / h)
            .fold(0.0, f64::max)
    }

    /// What each user received of its bottleneck so far.
    pub fn received(&self) -> Vec<f64> {
        self.members.iter().map(|o| o.received).collect()
    }

    /// Each user's bottleneck set.
    pub fn sets(&self) -> Vec<usize> {
        self.members.iter().map(|o| o.set).collect()
    }

    /// One epoch of length `dt`: levels for the users present, each set's budget water-filled
    /// over its members' keys, blended back to fit the capacities when needed.
    pub fn epoch(&mut self, dt: f64) -> Result<Epoch, BaaError> {
        if !(dt.is_normal() && dt > 0.0) {
            return Err(BaaError::Infeasible(format!(
                "an epoch must last a positive time, found {dt}"
            )));
        }
        let m = self.capacity.len();
        let present = self.members.iter().filter(|o| o.present).count();
        let omega = vec![1.0; m];
        let level = self
            .sums
            .levels(&self.capacity, present, &omega, self.settings.solver)?;
        let even: Vec<Vec<f64>> = (self.members.iter())
            .map(|o| match o.present {
                true => at_level(&o.demand, o.set, level[o.set].min(o.cap)),
                false => vec![0.0; m],
            })
            .collect();
        let filled = self.water_filled(&level, dt);
        let kept = blend(&even, &filled, &self.capacity);
        let allocations: Vec<Vec<f64>> = (even.iter().zip(&filled))
            .map(|(e, f)| {
                e.iter()
                    .zip(f)
                    .map(|(e, f)| (1.0 - kept) * e + kept * f)
                    .collect()
            })
            .collect();
        for (member, a) in self.members.iter_mut().zip(&allocations) {
            member.received += a[member.set] * dt;
            member.key += a[member.set] * dt;
        }
        Ok(Epoch {
            level,
            allocations,
            kept,
        })
    }

    /// Each user's allocation per unit of time when every set's budget is water-filled over
    /// its members' keys.
    fn water_filled(&self, level: &[f64], dt: f64) -> Vec<Vec<f64>> {
        let m = self.capacity.len();
        let mut allocations = vec![vec![0.0; m]; self.members.len()];
        for (r, &p) in level.iter().enumerate() {
            let members: Vec<usize> = (0..self.members.len())
                .filter(|&i| self.members[i].present && self.members[i].set == r)
                .collect();
            let keys: Vec<f64> = members.iter().map(|&i| self.members[i].key).collect();
            let caps: Vec<f64> = (members.iter())
                .map(|&i| (self.members[i].cap * dt).min(self.settings.catch_up * p * dt))
                .collect();
            let budget = members.len() as f64 * p * dt;
            for (&i, y) in members.iter().zip(water_fill(&keys, &caps, budget)) {
                allocations[i] = at_level(&self.members[i].demand, r, y / dt);
            }
        }
        allocations
    }
}

/// The amounts `y_i = clamp(L − key_i, 0, cap_i)` whose sum is `budget` (or every cap, when
/// the caps add up to less), found exactly by walking the breakpoints of the sum in `L`.
pub fn water_fill(keys: &[f64], caps: &[f64], budget: f64) -> Vec<f64> {
    let total: f64 = caps.iter().filter(|c| **c > 0.0).sum();
    let target = budget.min(total);
    if target.is_nan() || target <= 0.0 {
        return vec![0.0; keys.len()];
    }
    let mut events: Vec<(f64, f64)> = Vec::with_capacity(2 * keys.len());
    for (&k, &c) in keys.iter().zip(caps).filter(|(_, c)| **c > 0.0) {
        events.push((k, 1.0));
        if c.is_finite() {
            events.push((k + c, -1.0));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut level, mut filled, mut slope, mut next) = (events[0].0, 0.0, 0.0, 0);
    let level = loop {
        while next < events.len() && events[next].0 <= level {
            slope += events[next].1;
            next += 1;
        }
        let until = events.get(next).map_or(f64::INFINITY, |e| e.0);
        if slope > 0.0 && filled + slope * (until - level) >= target {
            break level + (target - filled) / slope;
        }
        if next >= events.len() {
            break level;
        }
        filled += slope * (until - level);
        level = until;
    };
    keys.iter()
        .zip(caps)
        .map(|(k, c)| (level - k).clamp(0.0, c.max(0.0)))
        .collect()
}

/// How much of `filled` can be kept, blended with `even` (which fits), so that no capacity
/// is exceeded: 1 when `filled` fits, else the largest θ with `(1−θ)·even + θ·filled` within
/// every capacity.
fn blend(even: &[Vec<f64>], filled: &[Vec<f64>], capacity: &[f64]) -> f64 {
    let used = |a: &[Vec<f64>], k: usize| a.iter().map(|x| x[k]).sum::<f64>();
    (0..capacity.len())
        .filter_map(|k| {
            let (e, f) = (used(even, k), used(filled, k));
            (f > capacity[k] * (1.0 + 1e-12) && f > e)
                .then(|| ((capacity[k] - e) / (f - e)).clamp(0.0, 1.0))
        })
        .fold(1.0, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    /// Spec §5.1: one resource of 100, two users; the first can use only 40 in epoch 1 and
    /// is repaid in epoch 2: (40, 60), (60, 40), then (50, 50).
    #[test]
    fn the_seeds_example_repays_a_shortfall() {
        let settings = TimeSettings {
            catch_up: 1.2,
            ..TimeSettings::default()
        };
        let mut baa = BaaTime::new(1, 100.0, settings).unwrap();
        let first = baa.join(vec![1.0], 0, 40.0).unwrap();
        baa.join(vec![1.0], 0, f64::INFINITY).unwrap();
        let bottleneck = |e: &Epoch| e.allocations.iter().map(|a| a[0]).collect::<Vec<_>>();
        assert!(close(&bottleneck(&baa.epoch(1.0).unwrap()), &[40.0, 60.0]));
        baa.set_cap(first, f64::INFINITY);
        assert!(close(&bottleneck(&baa.epoch(1.0).unwrap()), &[60.0, 40.0]));
        assert!(close(&baa.received(), &[100.0, 100.0]));
        assert!(close(&bottleneck(&baa.epoch(1.0).unwrap()), &[50.0, 50.0]));
    }

    /// Spec §5.1's late joiner: two users for two epochs, a third joins.
    #[test]
    fn a_late_joiner_catches_up_as_its_origin_says() {
        let run = |origin, catch_up| {
            let settings = TimeSettings {
                origin,
                catch_up,
                ..TimeSettings::default()
            };
            let mut baa = BaaTime::new(1, 100.0, settings).unwrap();
            baa.join(vec![1.0], 0, f64::INFINITY).unwrap();
            baa.join(vec![1.0], 0, f64::INFINITY).unwrap();
            baa.epoch(1.0).unwrap();
            baa.epoch(1.0).unwrap();
            baa.join(vec![1.0], 0, f64::INFINITY).unwrap();
            let third = baa.epoch(1.0).unwrap();
            let fourth = baa.epoch(1.0).unwrap();
            let shares = |e: &Epoch| e.allocations.iter().map(|a| a[0]).collect::<Vec<_>>();
            (shares(&third), shares(&fourth), baa.received())
        };
        let (third, fourth, _) = run(Origin::Global, f64::INFINITY);
        assert!(close(&third, &[0.0, 0.0, 100.0]), "{third:?}");
        let t = 100.0 / 3.0;
        assert!(close(&fourth, &[t, t, t]), "{fourth:?}");
        let (third, fourth, received) = run(Origin::Global, 2.0);
        let (a, b) = (50.0 / 3.0, 200.0 / 3.0);
        assert!(
            close(&third, &[a, a, b]) && close(&fourth, &[a, a, b]),
            "{third:?} {fourth:?}"
        );
        assert!(close(&received, &[400.0 / 3.0; 3]), "{received:?}");
        let (third, _, _) = run(Origin::Arrival, 2.0);
        assert!(close(&third, &[t, t, t]), "{third:?}");
    }

    #[test]
    fn water_filling_fills_the_lowest_first_within_caps() {
        assert!(close(
            &water_fill(&[0.0, 10.0], &[f64::INFINITY; 2], 30.0),
            &[20.0, 10.0]
        ));
        assert!(close(
            &water_fill(&[0.0, 10.0], &[5.0, 100.0], 30.0),
            &[5.0, 25.0]
        ));
        assert!(close(
            &water_fill(&[0.0, 0.0], &[1.0, 2.0], 30.0),
            &[1.0, 2.0]
        ));
        assert!(close(
            &water_fill(&[0.0, 50.0], &[10.0, 10.0], 15.0),
            &[10.0, 5.0]
        ));
        assert!(close(&water_fill(&[3.0], &[1.0], 0.0), &[0.0]));
    }

    /// Without catch-up a shortfall stays: keys 40 and 50 after one epoch, a spread of 0.2.
    #[test]
    fn the_spread_measures_what_is_not_repaid() {
        let settings = TimeSettings {
            catch_up: 1.0,
            ..TimeSettings::default()
        };
        let mut baa = BaaTime::new(1, 100.0, settings).unwrap();
        let first = baa.join(vec![1.0], 0, 40.0).unwrap();
        baa.join(vec![1.0], 0, f64::INFINITY).unwrap();
        baa.epoch(1.0).unwrap();
        assert!((baa.spread() - 0.2).abs() < 1e-12);
        baa.set_cap(first, f64::INFINITY);
        baa.epoch(1.0).unwrap();
        assert!((baa.spread() - 0.1).abs() < 1e-12, "keys 90 and 100");
    }

    /// A user that leaves stops receiving, and the others share its part from then on.
    #[test]
    fn a_departure_frees_its_share() {
        let mut baa = BaaTime::new(1, 90.0, TimeSettings::default()).unwrap();
        for _ in 0..3 {
            baa.join(vec![1.0], 0, f64::INFINITY).unwrap();
        }
        assert_eq!(baa.spread(), 0.0);
        let shares = |e: Epoch| e.allocations.iter().map(|a| a[0]).collect::<Vec<_>>();
        assert!(close(&shares(baa.epoch(1.0).unwrap()), &[30.0, 30.0, 30.0]));
        baa.leave(1);
        assert!(close(&shares(baa.epoch(1.0).unwrap()), &[45.0, 0.0, 45.0]));
        assert!(close(&baa.received(), &[75.0, 30.0, 75.0]));
        // The two present members are even: the one who left does not count.
        assert_eq!(baa.spread(), 0.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Water-filling hands out exactly the budget (or every cap, when they add up to
        /// less), never more than a cap, and tops nobody up above the level of a member that
        /// is below its cap (a common water level).
        #[test]
        fn water_filling_is_exact_and_fills_the_lowest_first(
            members in prop::collection::vec((0.0..100.0f64, prop_oneof![Just(f64::INFINITY), 0.0..50.0f64]), 1..10),
            budget in 0.0..300.0f64,
        ) {
            let (keys, caps): (Vec<f64>, Vec<f64>) = members.into_iter().unzip();
            let y = water_fill(&keys, &caps, budget);
            let total: f64 = caps.iter().sum();
            let given: f64 = y.iter().sum();
            prop_assert!((given - budget.min(total)).abs() < 1e-6 * (1.0 + budget), "{given} of {budget}");
            for i in 0..y.len() {
                prop_assert!(y[i] >= 0.0 && y[i] <= caps[i] + 1e-9);
                for j in 0..y.len() {
                    if y[j] > 1e-9 && y[i] < caps[i] - 1e-9 {
                        prop_assert!(keys[i] + y[i] >= keys[j] + y[j] - 1e-6, "{keys:?} {caps:?} {y:?}");
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Over random joins (two resources, demands far above capacity): no epoch exceeds a
        /// capacity, whatever the origin and catch-up; under `Arrival` with unlimited demands
        /// every epoch is static BAA (every member of a set at its level) and members of a set
        /// present since the same epoch have received the same (envy-freeness over time).
        #[test]
        fn capacity_holds_and_arrival_is_static_baa(
            joins in prop::collection::vec((prop::collection::vec(0.01..1.0f64, 2), 0usize..3), 1..12),
            global in any::<bool>(),
            unlimited_catch_up in any::<bool>(),
        ) {
            let settings = TimeSettings {
                origin: if global { Origin::Global } else { Origin::Arrival },
                catch_up: if unlimited_catch_up { f64::INFINITY } else { 2.0 },
                ..TimeSettings::default()
            };
            let mut baa = BaaTime::new(2, 1.0, settings).unwrap();
            let mut joined_at = Vec::new();
            for (epoch, (demand, wait)) in joins.iter().enumerate() {
                let set = super::super::bottleneck(demand, &[1.0, 1.0], super::super::Classification::Capacity).unwrap();
                baa.join(demand.clone(), set, f64::INFINITY).unwrap();
                joined_at.push(epoch);
                for _ in 0..=*wait {
                    let e = baa.epoch(1.0).unwrap();
                    for k in 0..2 {
                        let used: f64 = e.allocations.iter().map(|a| a[k]).sum();
                        prop_assert!(used <= 1.0 + 1e-9, "resource {k}: {used}");
                    }
                    if !global {
                        for (a, &r) in e.allocations.iter().zip(&baa.sets()) {
                            prop_assert!((a[r] - e.level[r]).abs() < 1e-9);
                        }
                    }
                }
            }
            if !global {
                let (received, sets) = (baa.received(), baa.sets());
                for i in 0..received.len() {
                    for j in 0..received.len() {
                        if sets[i] == sets[j] && joined_at[i] == joined_at[j] {
                            prop_assert!((received[i] - received[j]).abs() < 1e-9);
                        }
                    }
                }
            }
        }
    }
}
