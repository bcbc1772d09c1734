//! When Slurm's schedulers run, as the module above describes: the main scheduler at the
//! background loop's turns, spaced by `batch_sched_delay`, and down the whole queue every
//! `sched_interval`; the backfill every `bf_interval`; a job's nodes completing after its end.
//!
//! A log of whole seconds cannot say whether a submission came before or after the loop's turn
//! in its second; the loop's fraction creeps through the whole second over a run. By default a
//! submission is served at the next second, or by a pass already due in its own. With turns
//! drawn (`turn_seed`), each second's submissions came before the turn or after it as a hash
//! of the second and the seed says (half the seconds each way): before, the loop may serve
//! them in their own second; after, they arrive half a second late, unseen by a pass of their
//! second, and ask for the next. Replays with several seeds show how far what the log cannot
//! tell moves a prediction.

use super::{LoopTurns, SlurmParameters, TIME_LIMIT_CHECK_S};
use crate::cluster::scheduler::timing::{
    Arrival, EndRelease, Happened, PassKind, Standing, Timing,
};
use fairshare_core::model::Time;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How late a submission that came after the loop's turn in its second arrives.
const AFTER_THE_TURN_US: u64 = 500_000;

/// Whether the submissions of the second holding `t` came before the background loop's turn
/// in that second, under `seed`: a bit of a hash of the two (SplitMix64's finaliser).
fn before_the_turn(t: Time, seed: u64) -> bool {
    let second = t.as_micros() / 1_000_000;
    let mut z =
        (second ^ seed.wrapping_mul(0x2545_f491_4f6c_dd1d)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & 1 == 1
}

/// Slurm's timing for one run.
#[derive(Debug, Clone)]
pub(super) struct SlurmTiming {
    /// When the backfill's cycles fall, when it runs.
    cycles: Option<Cycles>,
    /// The least whole seconds between two passes events ask for (`batch_sched_delay`),
    /// when they are spaced.
    spacing_s: Option<u64>,
    /// Where those passes stand.
    asked: Asked,
    /// The passes down the whole queue every `sched_interval`, when the background loop's
    /// starts are known.
    whole_queue: Option<WholeQueueTimer>,
    /// The background loop's turns, where a log shows them; `None`: on the whole seconds.
    turns: Option<LoopTurns>,
    /// Whether the loop wakes on whole seconds and reads each turn twice (23.11 on): its
    /// clock, the kernel's coarse one, still reads the second before when it wakes, and
    /// the loop, whose next wake is that reading plus one, runs again at once until the
    /// clock reads the turn's own second, some 2 ms later ([`SlurmTiming::reading_at`]).
    reads_twice: bool,
    /// The seed drawing each second's submissions before or after the loop's turn, with
    /// spaced passes.
    drawn: Option<u64>,
    /// The turns set for passes asked and waiting, which wake the engine.
    wakeups: BinaryHeap<Reverse<Time>>,
    /// Microseconds past its limit a job runs before it is killed (`None`: never).
    kill_grace_us: Option<u64>,
    /// How an end reaches the schedulers: one that ended by itself, one killed.
    end_release: [EndRelease; 2],
    /// Whether the nodes' answer to the terminate request of a job that ended by itself is
    /// taken at the next whole second
    /// ([`Release::answers_on_whole_seconds`](super::Release::answers_on_whole_seconds)).
    answers_on_whole_seconds: bool,
}

impl SlurmTiming {
    /// The timing of `parameters` for a run that begins at `origin`.
    pub(super) fn new(parameters: &SlurmParameters, origin: Time) -> SlurmTiming {
        let spacing_s = Some(parameters.batch_sched_delay_s).filter(|&s| s > 0);
        let cycles = parameters.backfill.then(|| match &parameters.bf_cycles {
            Some(shown) => Cycles::Shown(LoopTurns::clone(shown)),
            None => Cycles::Grid(Period::new(
                parameters.bf_interval_s,
                parameters.bf_phase_s,
                origin,
            )),
        });
        let reads_twice = parameters.release.loop_on_whole_seconds();
        let starts = &parameters.loop_starts;
        let whole_queue =
            (!starts.is_empty()).then(|| WholeQueueTimer::new(parameters.sched_interval_s, starts));
        let mut timing = SlurmTiming {
            cycles,
            spacing_s,
            asked: Asked::default(),
            whole_queue,
            // Where no log shows them, a loop that wakes on whole seconds turns on them; the
            // seconds its clock reads there are `reading_at`'s.
            turns: (parameters.loop_turns.as_deref().cloned())
                .or_else(|| reads_twice.then(LoopTurns::default)),
            reads_twice,
            drawn: spacing_s.and(parameters.turn_seed),
            wakeups: BinaryHeap::new(),
            // `OverTimeLimit` past the limit, and then until the next check of time limits.
            kill_grace_us: (parameters.over_time_s)
                .map(|over| (over + TIME_LIMIT_CHECK_S).saturating_mul(1_000_000)),
            end_release: [
                EndRelease {
                    after_us: parameters.completing_us,
                    passes_at_once: false,
                },
                EndRelease {
                    after_us: parameters.killed_completing_us,
                    passes_at_once: true,
                },
            ],
            answers_on_whole_seconds: parameters.release.answers_on_whole_seconds(),
        };
        timing.start_whole_queue_timer();
        timing
    }

    /// Whether an instant that `asks` for a pass runs one, `periodic` saying whether the
    /// backfill's cycle falls now. Under spaced passes such a pass runs at the loop's first
    /// turn after the event at which the spacing has passed since the last: the next whole
    /// second (or now, `in_this_turn`, for a submission that came before the loop's turn in
    /// its second), or, where a log shows the turns, the first at or after the event, whose
    /// time the log gave to the millisecond. Until then a wake-up is set (a periodic pass runs
    /// now whatever was asked, and what was asked waits for the next turn).
    fn passes_now(&mut self, now: Time, asks: bool, in_this_turn: bool, periodic: bool) -> bool {
        let Some(spacing_s) = self.spacing_s else {
            return asks || periodic;
        };
        let woken = self.asked.woken_at == Some(now);
        self.asked.pending |= asks;
        if !self.asked.pending {
            return periodic;
        }
        let next_turn = self.turn_at_or_after(now.plus_micros(1));
        let earliest = if in_this_turn || self.turns.is_some() {
            self.turn_at_or_after(now)
        } else {
            next_turn
        };
        let spaced_to = self.spaced_to(now, spacing_s);
        let due = match (woken, spaced_to) {
            (true, _) => now,
            (false, Some(second)) => self.first_turn_reading(second).max(earliest),
            (false, None) => earliest,
        };
        if due <= now && !periodic {
            self.asked = Asked {
                last: Some(self.reading_at(now, spaced_to)),
                ..Asked::default()
            };
            return true;
        }
        let due = due.max(next_turn);
        if self.asked.woken_at.is_none_or(|w| w <= now) {
            self.asked.woken_at = Some(due);
            self.wakeups.push(Reverse(due));
        }
        periodic
    }

    /// The second from which the loop's clock lets a pass run at `now`, `spacing_s` after the
    /// last pass asked for. From 23.11 the loop's start counts as one too: the nodes
    /// registering again ask for a pass, which runs once the spacing has passed since the
    /// start, and serves what is asked before it (in both 24.11 runs looked at, the first
    /// pass after the workload's first submission fell 6 s after the controller's start).
    fn spaced_to(&self, now: Time, spacing_s: u64) -> Option<u64> {
        let asked = self.asked.last.map(|last| last + spacing_s);
        let timer = self.whole_queue.as_ref().filter(|_| self.reads_twice);
        let start = timer.and_then(|t| t.restarts.iter().rev().find(|&&s| s <= now));
        let restarted = start.map(|start| {
            let its_pass = start.whole_secs() + spacing_s;
            match self.first_turn_reading(its_pass) > now {
                true => its_pass,
                false => its_pass + spacing_s,
            }
        });
        asked.max(restarted)
    }

    /// Sets the first pass down the whole queue, from the timer's first start.
    fn start_whole_queue_timer(&mut self) {
        let first = (self.whole_queue.as_ref()).and_then(|t| t.restarts.first().copied());
        let next = first.and_then(|start| self.next_whole_queue(start.whole_secs(), start));
        if let Some(timer) = &mut self.whole_queue {
            timer.next = next;
        }
    }

    /// Whether a pass down the whole queue falls at `now`: the timer's pass, which the passes
    /// events ask for are spaced from and which serves what they asked. Those it passed while
    /// no job waited ran too, and count.
    fn whole_queue_due(&mut self, now: Time) -> bool {
        loop {
            let Some((next, due)) = self.whole_queue.as_ref().and_then(|t| t.next) else {
                return false;
            };
            if next > now {
                return false;
            }
            let second = self.reading_at(next, Some(due));
            let after = self.next_whole_queue(second, next);
            if let Some(timer) = &mut self.whole_queue {
                timer.next = after;
            }
            self.asked = Asked {
                last: Some(second),
                ..Asked::default()
            };
            if next == now {
                return true;
            }
        }
    }

    /// The next pass down the whole queue once the loop's clock read `second` at `from`:
    /// the first turn whose clock reads `every_s` seconds on, and that second, unless the
    /// timer restarts before it.
    fn next_whole_queue(&self, mut second: u64, mut from: Time) -> Option<(Time, u64)> {
        let timer = self.whole_queue.as_ref()?;
        loop {
            let due = second + timer.every_s;
            let next = self.first_turn_reading(due);
            match timer.restarts.iter().find(|&&s| s > from && s < next) {
                Some(&restart) => (second, from) = (restart.whole_secs(), restart),
                None => return Some((next, due)),
            }
        }
    }

    /// The loop's first turn at or after `t`: from the log's turns, else the whole seconds.
    fn turn_at_or_after(&self, t: Time) -> Time {
        self.loop_turns().at_or_after(t)
    }

    /// The loop's first turn at which its clock reads `second` or later (`slurmctld` spaces
    /// its passes by the `difftime` of two `time_t`). A loop that reads each turn twice reads
    /// the turn's own second at its second reading.
    fn first_turn_reading(&self, second: u64) -> Time {
        match self.reads_twice {
            true => self.turn_at_or_after(Time::from_whole_secs(second)),
            false => self.loop_turns().first_turn_in(second),
        }
    }

    /// The second the loop's clock read when it ran a pass at its turn `turn`, the pass due
    /// once the clock read `due` (`None`: at any reading). A loop that reads each turn twice
    /// runs the pass at the first of its two readings that is due: the second before the
    /// turn's when the pass was due by then, else the turn's own.
    fn reading_at(&self, turn: Time, due: Option<u64>) -> u64 {
        if !self.reads_twice {
            return self.loop_turns().second_of(turn);
        }
        let first = turn.whole_secs().saturating_sub(1);
        due.map_or(first, |due| due.clamp(first, first + 1))
    }

    /// The background loop's turns: the log's, else the whole seconds (as 23.11 on turns,
    /// when it ran).
    fn loop_turns(&self) -> Cow<'_, LoopTurns> {
        match &self.turns {
            Some(turns) => Cow::Borrowed(turns),
            None => Cow::Owned(LoopTurns::default()),
        }
    }
}

impl Timing for SlurmTiming {
    fn kill_grace_us(&self) -> Option<u64> {
        self.kill_grace_us
    }

    /// A job's end frees its nodes once they answer `slurmctld`'s terminate request
    /// (`node_did_resp`), which queues the main scheduler for the background loop's next
    /// turn; until then they are completing, and neither scheduler starts a job there. A job
    /// killed at its limit or cancelled while it ran still has processes to end: its nodes
    /// report their epilog complete, which runs the main scheduler at once
    /// (`_slurm_rpc_epilog_complete`), unspaced.
    ///
    /// From 24.11 the answer waits for the thread that takes the nodes' answers, which wakes
    /// on whole seconds: a job that ends by itself frees its nodes at the next one.
    fn end_release(&self, killed: bool, end: Time) -> EndRelease {
        let release = self.end_release[usize::from(killed)];
        if killed || !self.answers_on_whole_seconds {
            return release;
        }
        let answered = end.plus_micros(release.after_us);
        let taken = LoopTurns::default().at_or_after(answered);
        EndRelease {
            after_us: taken.as_micros() - end.as_micros(),
            ..release
        }
    }

    fn arrival(&self, submit: Time) -> Arrival {
        match self.drawn {
            None => Arrival::Now,
            Some(seed) if before_the_turn(submit, seed) => Arrival::InThisTurn,
            Some(_) => Arrival::Late(submit.plus_micros(AFTER_THE_TURN_US)),
        }
    }

    /// The backfill's next cycle while jobs wait and something changed since the last
    /// (Slurm's backfill waits for new work, `_more_work`), the next pass down the whole queue
    /// while jobs wait and some run, and the turn set for a pass asked.
    fn next_wakeup(&self, now: Time, standing: Standing) -> Option<Time> {
        let cycle = (self.cycles.as_ref())
            .filter(|_| standing.waiting && standing.changed)
            .map(|cycles| cycles.next_after(now));
        let whole_queue = (self.whole_queue.as_ref())
            .and_then(|t| t.next)
            .map(|(turn, _)| turn)
            .filter(|_| standing.waiting && standing.running);
        let asked = self.wakeups.peek().map(|Reverse(t)| *t);
        cycle.into_iter().chain(whole_queue).chain(asked).min()
    }

    /// Cancelling a pending job queues none of the schedulers (`job_signal` does not call
    /// `queue_job_scheduler`), and, under spaced passes, a planned start asks for nothing:
    /// Slurm runs no pass where a plan of its backfill begins.
    fn pass_at(&mut self, happened: &Happened) -> Option<PassKind> {
        let now = happened.now;
        while self.wakeups.peek().is_some_and(|Reverse(w)| *w <= now) {
            self.wakeups.pop();
        }
        let woken = happened.reserved_start && self.spacing_s.is_none();
        let periodic = (self.cycles.as_ref()).is_some_and(|cycles| cycles.falls_on(now));
        let whole_queue = self.whole_queue_due(now);
        let asks = (happened.asked || woken) && !whole_queue;
        let passes = self.passes_now(now, asks, happened.in_this_turn, periodic);
        (passes || happened.at_once || whole_queue).then_some(PassKind {
            periodic,
            whole_queue,
        })
    }
}

/// When the backfill's cycles fall: on a grid, or at the cycles a log shows.
#[derive(Debug, Clone)]
enum Cycles {
    /// Every so often from an anchor.
    Grid(Period),
    /// At the cycles a log shows and the ones between them (`bf_cycles`).
    Shown(LoopTurns),
}

impl Cycles {
    /// Whether a cycle falls at `t`.
    fn falls_on(&self, t: Time) -> bool {
        match self {
            Cycles::Grid(period) => period.falls_on(t),
            Cycles::Shown(turns) => turns.at_or_after(t) == t,
        }
    }

    /// The first cycle after `t`.
    fn next_after(&self, t: Time) -> Time {
        match self {
            Cycles::Grid(period) => period.next_after(t),
            Cycles::Shown(turns) => turns.at_or_after(t.plus_micros(1)),
        }
    }
}

/// Cycles every `every` microseconds from `anchor`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Period {
    every: u64,
    anchor: Time,
}

impl Period {
    /// Cycles every `every_s` seconds, on the multiples of it counted from `origin`, or, given
    /// `phase_s`, at that many seconds past each multiple counted from the epoch (Slurm's
    /// backfill timer runs from `slurmctld`'s start, not from the workload's); the first at
    /// or after `origin`.
    fn new(every_s: u64, phase_s: Option<u64>, origin: Time) -> Period {
        let every = every_s.max(1).saturating_mul(1_000_000);
        let anchor = match phase_s {
            None => origin,
            Some(phase_s) => {
                let phase = phase_s.saturating_mul(1_000_000) % every;
                Time(origin.0 + (phase + every - origin.0 % every) % every)
            }
        };
        Period { every, anchor }
    }

    /// Whether a cycle falls at `t`.
    fn falls_on(self, t: Time) -> bool {
        t >= self.anchor && (t.0 - self.anchor.0).is_multiple_of(self.every)
    }

    /// The first cycle after `t`.
    fn next_after(self, t: Time) -> Time {
        match t.0.checked_sub(self.anchor.0) {
            None => self.anchor,
            Some(since) => Time(self.anchor.0 + (since / self.every + 1) * self.every),
        }
    }
}

/// The passes events ask for, under spaced passes.
#[derive(Debug, Clone, Copy, Default)]
struct Asked {
    /// Whether an event asked for a pass since the last one.
    pending: bool,
    /// The second the loop's clock read at the last such pass.
    last: Option<u64>,
    /// The wake-up set for the next one.
    woken_at: Option<Time>,
}

/// The timer of the passes down the whole queue: one at the loop's first turn `every_s` whole
/// seconds after the last, the timer started afresh at each start of the controller's
/// background loop, on the whole second it fell in.
#[derive(Debug, Clone)]
struct WholeQueueTimer {
    every_s: u64,
    /// When the timer started afresh, in order; none run before the first.
    restarts: Vec<Time>,
    /// Its next pass, and the second the loop's clock reads there that it is due at.
    next: Option<(Time, u64)>,
}

impl WholeQueueTimer {
    /// The timer of a pass every `every_s` seconds from each of `starts`, its first pass not
    /// yet set.
    fn new(every_s: u64, starts: &[Time]) -> WholeQueueTimer {
        WholeQueueTimer {
            every_s: every_s.max(1),
            restarts: starts.to_vec(),
            next: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Release;
    use super::*;

    #[test]
    fn a_period_falls_on_its_multiples_and_a_phase_moves_them_from_the_epoch() {
        let s = |secs: u64| Time(secs * 1_000_000);
        let grid = Period::new(30, None, s(100));
        assert!(grid.falls_on(s(130)) && !grid.falls_on(s(120)));
        assert_eq!(grid.next_after(s(50)), s(100));
        assert_eq!(grid.next_after(s(130)), s(160));
        let phased = Period::new(30, Some(7), s(100));
        assert_eq!(phased.anchor, s(127));
        assert!(phased.falls_on(s(157)) && !phased.falls_on(s(130)));
    }

    #[test]
    fn from_24_11_an_end_frees_its_nodes_at_the_next_whole_second_and_a_kill_as_before() {
        let s = |secs: f64| Time((secs * 1e6) as u64);
        let timing = |version: &str| {
            let parameters = SlurmParameters {
                release: Release::of(Some(version)),
                ..SlurmParameters::default()
            };
            SlurmTiming::new(&parameters, s(0.0))
        };
        let (old, new) = (timing("22.05.8"), timing("24.11.5"));
        // 22.05: 5 ms after the end, whenever it falls.
        assert_eq!(old.end_release(false, s(10.2)).after_us, 5_000);
        // 24.11: at the next whole second, the answer's 5 ms counted first.
        assert_eq!(new.end_release(false, s(10.2)).after_us, 800_000);
        assert_eq!(new.end_release(false, s(10.997)).after_us, 1_003_000);
        assert_eq!(new.end_release(false, s(10.0)).after_us, 1_000_000);
        // A kill's epilog complete runs a pass at once, on either.
        assert_eq!(
            new.end_release(true, s(10.2)),
            old.end_release(true, s(10.2))
        );
        assert!(new.end_release(true, s(10.2)).passes_at_once);
    }

    /// The turns at which `timing` runs passes for jobs submitted at `submissions`, each
    /// pass asked for and run at the wake-up it sets.
    fn passes_for(mut timing: SlurmTiming, submissions: &[Time]) -> Vec<Time> {
        let standing = Standing {
            waiting: true,
            running: false,
            changed: true,
        };
        let mut passes = Vec::new();
        for &now in submissions {
            let asked = Happened {
                now,
                asked: true,
                at_once: false,
                reserved_start: false,
                cancelled: false,
                in_this_turn: false,
            };
            if timing.pass_at(&asked).is_some() {
                passes.push(now);
                continue;
            }
            let turn = timing
                .next_wakeup(now, standing)
                .expect("a pass is asked for");
            let woken = Happened {
                now: turn,
                asked: false,
                ..asked
            };
            assert!(timing.pass_at(&woken).is_some(), "no pass at {turn:?}");
            passes.push(turn);
        }
        passes
    }

    #[test]
    fn from_23_11_a_pass_after_a_quiet_spell_reads_the_second_before_and_the_next_comes_2_s_on() {
        let s = |secs: f64| Time((secs * 1e6) as u64);
        let parameters = SlurmParameters {
            release: Release::of(Some("24.11.5")),
            backfill: false,
            ..SlurmParameters::default()
        };
        let timing = SlurmTiming::new(&parameters, s(0.0));
        // The first pass, at 11.0, runs while the clock still reads 10; the clock reads 13 at
        // the turn 13.0, 3 s on, once it has turned; from then on passes are 3 s apart.
        let passes = passes_for(timing, &[s(10.3), s(12.5), s(14.5), s(20.5)]);
        assert_eq!(passes, [s(11.0), s(13.0), s(16.0), s(21.0)]);
        // 22.05's loop reads each turn once: the same submissions 3 s apart from the first.
        let parameters = SlurmParameters {
            release: Release::of(Some("22.05.8")),
            ..parameters
        };
        let passes = passes_for(SlurmTiming::new(&parameters, s(0.0)), &[s(10.3), s(12.5)]);
        assert_eq!(passes, [s(11.0), s(14.0)]);
    }

    #[test]
    fn drawn_turns_put_about_half_the_seconds_before_the_turn() {
        let before = (0..10_000u64)
            .filter(|&second| before_the_turn(Time(second * 1_000_000), 7))
            .count();
        assert!((4_800..5_200).contains(&before), "{before}");
    }
}
