//! When `slurmctld`'s background loop takes its turns, as its log shows them.
//!
//! The loop sleeps a second after its work, so its turns fall about a second apart at a
//! fraction of the second that creeps by the work's time and restarts now and then. A pass of
//! the main scheduler that an event asks for runs at the loop's next turn. The log shows a
//! turn wherever the main scheduler started a job; between two such turns the loop took a
//! whole number of turns, evenly spaced, and before the first or after the last it takes one
//! a second. Without a log the turns fall on the whole seconds.

use fairshare_core::model::Time;

const SECOND_US: u64 = 1_000_000;

/// The loop's turns: those a log shows, and the ones between them that it does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopTurns {
    /// The turns the log shows, in order, each once.
    shown: Vec<Time>,
}

impl LoopTurns {
    /// The turns around `shown`, the instants the log shows the main scheduler starting jobs
    /// (in any order, repeats allowed).
    pub fn new(mut shown: Vec<Time>) -> LoopTurns {
        shown.sort_unstable();
        shown.dedup();
        LoopTurns { shown }
    }

    /// How many turns the log shows.
    pub fn shown(&self) -> usize {
        self.shown.len()
    }

    /// The loop's first turn at or after `t`: between two shown turns `g` seconds apart the
    /// loop took `g` rounded turns, evenly spaced (right while its creep over the gap stays
    /// under half a second: gaps under about four minutes at the 2 ms a second measured);
    /// outside them, one a second; with none shown, the whole seconds.
    pub fn at_or_after(&self, t: Time) -> Time {
        let i = self.shown.partition_point(|&turn| turn < t);
        let t = t.as_micros();
        let next = self.shown.get(i).map(|turn| turn.as_micros());
        let previous = i.checked_sub(1).map(|i| self.shown[i].as_micros());
        let turn = match (previous, next) {
            (_, Some(next)) if next == t => t,
            (Some(previous), Some(next)) => {
                let gap = next - previous;
                let turns = (gap + SECOND_US / 2) / SECOND_US;
                let turns = turns.max(1);
                // The k-th turn after `previous` is at previous + k·gap/turns; the first at
                // or after t has k = ⌈(t − previous)·turns / gap⌉.
                let k = ((t - previous) as u128 * turns as u128).div_ceil(gap as u128);
                previous + (k * gap as u128 / turns as u128) as u64
            }
            (Some(previous), None) => previous + (t - previous).div_ceil(SECOND_US) * SECOND_US,
            (None, Some(next)) => next - (next - t) / SECOND_US * SECOND_US,
            (None, None) => t.div_ceil(SECOND_US) * SECOND_US,
        };
        Time::from_micros(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64) -> Time {
        Time::from_micros((secs * 1e6).round() as u64)
    }

    #[test]
    fn without_a_log_the_turns_are_the_whole_seconds() {
        let none = LoopTurns::default();
        assert_eq!(none.at_or_after(s(5.0)), s(5.0));
        assert_eq!(none.at_or_after(s(5.000_001)), s(6.0));
        assert_eq!(none.at_or_after(s(5.5)), s(6.0));
    }

    #[test]
    fn between_shown_turns_the_loop_takes_evenly_spaced_ones() {
        // Shown at 10.600 and 14.608: four turns 1.002 s apart.
        let turns = LoopTurns::new(vec![s(14.608), s(10.6), s(10.6)]);
        assert_eq!(turns.shown(), 2);
        assert_eq!(turns.at_or_after(s(10.6)), s(10.6));
        assert_eq!(turns.at_or_after(s(10.7)), s(11.602));
        assert_eq!(turns.at_or_after(s(12.0)), s(12.604));
        assert_eq!(turns.at_or_after(s(12.604)), s(12.604));
        assert_eq!(turns.at_or_after(s(12.605)), s(13.606));
        assert_eq!(turns.at_or_after(s(14.0)), s(14.608));
        // Before the first and after the last: one a second.
        assert_eq!(turns.at_or_after(s(8.9)), s(9.6));
        assert_eq!(turns.at_or_after(s(8.5)), s(8.6));
        assert_eq!(turns.at_or_after(s(14.7)), s(15.608));
        assert_eq!(turns.at_or_after(s(20.608)), s(20.608));
    }

    /// Every turn from 0 to `until`, listed one by one: the shown ones, `round(gap)` evenly
    /// spaced in each gap between them, one a second before the first and after the last.
    fn every_turn(shown: &[Time], until: u64) -> Vec<u64> {
        let shown: Vec<u64> = LoopTurns::new(shown.to_vec())
            .shown
            .iter()
            .map(|t| t.0)
            .collect();
        let Some((&first, &last)) = shown.first().zip(shown.last()) else {
            return (0..=until / SECOND_US + 1).map(|k| k * SECOND_US).collect();
        };
        let mut turns: Vec<u64> = (0..=first / SECOND_US)
            .map(|k| first - k * SECOND_US)
            .collect();
        for pair in shown.windows(2) {
            let (a, gap) = (pair[0], pair[1] - pair[0]);
            let n = ((gap as f64 / SECOND_US as f64).round() as u64).max(1);
            turns.extend((0..n).map(|k| a + (k as u128 * gap as u128 / n as u128) as u64));
        }
        turns.extend((0..=until / SECOND_US + 1).map(|k| last + k * SECOND_US));
        turns.sort_unstable();
        turns
    }

    proptest::proptest! {
        #[test]
        fn the_first_turn_at_or_after_matches_every_turn_listed(
            shown in proptest::collection::vec(0u64..60_000_000, 0..6),
            t in 0u64..80_000_000,
        ) {
            let shown: Vec<Time> = shown.into_iter().map(Time).collect();
            let expected = every_turn(&shown, t).into_iter().find(|&turn| turn >= t);
            let found = LoopTurns::new(shown).at_or_after(Time(t));
            proptest::prop_assert_eq!(Some(found.0), expected);
        }
    }

    #[test]
    fn shown_turns_closer_than_a_second_are_consecutive() {
        let turns = LoopTurns::new(vec![s(3.9), s(4.2)]);
        assert_eq!(turns.at_or_after(s(4.0)), s(4.2));
    }
}
