//! When `slurmctld`'s loops take their turns, as its log shows them.
//!
//! The background loop sleeps a second after its work, so its turns fall about a second
//! apart at a fraction of the second that creeps by the work's time and restarts now and
//! then; a pass of the main scheduler that an event asks for runs at its next turn. The
//! backfill thread's cycles fall `bf_interval` apart, each timed from the end of the last,
//! so they creep by the cycles' time. The log shows a turn wherever the loop started a job;
//! between two such turns the loop took a whole number of turns, evenly spaced, and before
//! the first or after the last it takes one a period. Without a log the background loop's
//! turns fall on the whole seconds.

use fairshare_core::model::Time;

const SECOND_US: u64 = 1_000_000;

/// How long after the background loop reads the clock for a turn the log shows the jobs its
/// pass started, in microseconds: 2.5 ms, between the 1 and 4 ms that a `debug` log of a
/// 16-node Slurm on one host bounds it to (a pass logged at 20.001 s counted as second 19,
/// one at 22.004 s as 22).
const LOGGED_AFTER_THE_CLOCK_US: u64 = 2_500;

/// A loop's turns: those a log shows, and the ones between them that it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopTurns {
    /// The turns the log shows, in order, each once.
    shown: Vec<Time>,
    /// About how far apart the loop's turns fall, in microseconds.
    period: u64,
    /// How long before a shown turn the loop read the clock for it, in microseconds.
    clock_lead: u64,
}

impl Default for LoopTurns {
    /// None shown, a second apart: the whole seconds.
    fn default() -> LoopTurns {
        LoopTurns::every_second(Vec::new())
    }
}

impl LoopTurns {
    /// The background loop's turns around `shown`, the instants the log shows the main
    /// scheduler starting jobs (in any order, repeats allowed), about a second apart.
    pub fn every_second(shown: Vec<Time>) -> LoopTurns {
        LoopTurns::new(shown, SECOND_US)
    }

    /// The background loop's turns around `shown`, as [`LoopTurns::every_second`], each
    /// shown turn logged 2.5 ms (`LOGGED_AFTER_THE_CLOCK_US`) after the loop read the clock
    /// for it.
    pub fn logged_every_second(shown: Vec<Time>) -> LoopTurns {
        LoopTurns {
            clock_lead: LOGGED_AFTER_THE_CLOCK_US,
            ..LoopTurns::every_second(shown)
        }
    }

    /// The turns around `shown` (in any order, repeats allowed) of a loop that turns about
    /// every `period` microseconds (at least one). Instants within half a period of an
    /// earlier one are the same turn (the jobs one pass started, logged a millisecond or so
    /// apart): the first of them counts.
    pub fn new(mut shown: Vec<Time>, period: u64) -> LoopTurns {
        let period = period.max(1);
        shown.sort_unstable();
        shown.dedup_by(|later, kept| later.0 - kept.0 < period / 2);
        LoopTurns {
            shown,
            period,
            clock_lead: 0,
        }
    }

    /// The whole second the loop's clock read at its turn `turn`, which `slurmctld`'s spacing
    /// of passes counts in (`difftime` of two `time_t`).
    pub fn second_of(&self, turn: Time) -> u64 {
        Time::from_micros(turn.as_micros().saturating_sub(self.clock_lead)).whole_secs()
    }

    /// The loop's first turn whose clock reads `second` or later.
    pub fn first_turn_in(&self, second: u64) -> Time {
        self.at_or_after(Time::from_whole_secs(second).plus_micros(self.clock_lead))
    }

    /// How many turns the log shows.
    pub fn shown(&self) -> usize {
        self.shown.len()
    }

    /// The loop's first turn at or after `t`: between two shown turns `g` periods apart the
    /// loop took `g` rounded turns, evenly spaced (right while its creep over the gap stays
    /// under half a period: for the background loop, gaps under about four minutes at the
    /// 2 ms a second measured); outside them, one a period; with none shown, the multiples
    /// of the period.
    pub fn at_or_after(&self, t: Time) -> Time {
        let every = self.period;
        let i = self.shown.partition_point(|&turn| turn < t);
        let t = t.as_micros();
        let next = self.shown.get(i).map(|turn| turn.as_micros());
        let previous = i.checked_sub(1).map(|i| self.shown[i].as_micros());
        let turn = match (previous, next) {
            (_, Some(next)) if next == t => t,
            (Some(previous), Some(next)) => {
                let gap = next - previous;
                let turns = (gap + every / 2) / every;
                let turns = turns.max(1);
                // The k-th turn after `previous` is at previous + k·gap/turns; the first at
                // or after t has k = ⌈(t − previous)·turns / gap⌉.
                let k = ((t - previous) as u128 * turns as u128).div_ceil(gap as u128);
                previous + (k * gap as u128 / turns as u128) as u64
            }
            (Some(previous), None) => previous + (t - previous).div_ceil(every) * every,
            (None, Some(next)) => next - (next - t) / every * every,
            (None, None) => t.div_ceil(every) * every,
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
        let turns = LoopTurns::every_second(vec![s(14.608), s(10.6), s(10.6), s(10.601)]);
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

    /// Every turn from 0 to `until` of a loop of `period`, listed one by one: the shown ones,
    /// `round(gap / period)` evenly spaced in each gap between them, one a period before the
    /// first and after the last.
    fn every_turn(shown: &[Time], period: u64, until: u64) -> Vec<u64> {
        let kept = LoopTurns::new(shown.to_vec(), period).shown;
        let shown: Vec<u64> = kept.iter().map(|t| t.0).collect();
        let Some((&first, &last)) = shown.first().zip(shown.last()) else {
            return (0..=until / period + 1).map(|k| k * period).collect();
        };
        let mut turns: Vec<u64> = (0..=first / period).map(|k| first - k * period).collect();
        for pair in shown.windows(2) {
            let (a, gap) = (pair[0], pair[1] - pair[0]);
            let n = ((gap as f64 / period as f64).round() as u64).max(1);
            turns.extend((0..n).map(|k| a + (k as u128 * gap as u128 / n as u128) as u64));
        }
        turns.extend((0..=until / period + 1).map(|k| last + k * period));
        turns.sort_unstable();
        turns
    }

    proptest::proptest! {
        #[test]
        fn the_first_turn_at_or_after_matches_every_turn_listed(
            shown in proptest::collection::vec(0u64..60_000_000, 0..6),
            t in 0u64..80_000_000,
            period in proptest::sample::select(vec![1_000_000u64, 30_000_000, 7_300_000]),
        ) {
            let shown: Vec<Time> = shown.into_iter().map(Time).collect();
            let expected = every_turn(&shown, period, t).into_iter().find(|&turn| turn >= t);
            let found = LoopTurns::new(shown, period).at_or_after(Time(t));
            proptest::prop_assert_eq!(Some(found.0), expected);
        }
    }

    #[test]
    fn a_longer_period_spaces_the_turns_between_and_beyond_the_shown_ones() {
        // Backfill cycles shown at 100.5 and 160.54 s, 30 s apart: one more at 130.52.
        let cycles = LoopTurns::new(vec![s(100.5), s(160.54)], 30_000_000);
        assert_eq!(cycles.at_or_after(s(101.0)), s(130.52));
        assert_eq!(cycles.at_or_after(s(161.0)), s(190.54));
        assert_eq!(cycles.at_or_after(s(80.0)), s(100.5));
        assert_eq!(cycles.at_or_after(s(60.0)), s(70.5));
    }

    #[test]
    fn a_logged_turns_clock_read_its_second_a_little_before() {
        // Shown at 20.001 and 30.011: turns 1.001 s apart, each read 2.5 ms before.
        let turns = LoopTurns::logged_every_second(vec![s(20.001), s(30.011)]);
        assert_eq!(turns.second_of(s(20.001)), 19);
        assert_eq!(turns.second_of(s(22.003)), 22);
        assert_eq!(turns.first_turn_in(22), s(22.003));
        assert_eq!(turns.first_turn_in(21), s(22.003));
        assert_eq!(turns.first_turn_in(20), s(21.002));
        // Without a log the turns are the whole seconds, each its own.
        let none = LoopTurns::default();
        assert_eq!(none.second_of(s(7.0)), 7);
        assert_eq!(none.first_turn_in(7), s(7.0));
    }

    #[test]
    fn shown_instants_within_half_a_period_are_one_turn() {
        let turns = LoopTurns::every_second(vec![s(3.9), s(4.2), s(3.901), s(5.0)]);
        assert_eq!(turns.shown(), 2);
        assert_eq!(turns.at_or_after(s(3.95)), s(5.0));
        assert_eq!(turns.at_or_after(s(2.95)), s(3.9));
    }
}
