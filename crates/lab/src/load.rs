//! The load a trace put on its own cluster: the SDRF paper's R, the time-weighted mean of the
//! resources requested by running tasks in the trace's original timing (docs/mechanisms.md, SDRF §8.2).
//! Simulated capacities are set as fractions of it.

use fairshare_core::model::{Task, Time};
use fairshare_sim::cluster::{bounded_slowdown, mean, percentile, quantiles, ShareSeries};
use serde::{Deserialize, Serialize};

/// The entries of `values` at the indices `keep`.
pub(crate) fn project<T: Clone>(values: &[T], keep: &[usize]) -> Vec<T> {
    keep.iter().map(|&r| values[r].clone()).collect()
}

/// What a trace records of its jobs' requests and of the schedule its own scheduler made:
/// every replay is read beside it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Recorded {
    /// Jobs read.
    pub jobs: u64,
    /// Jobs without a requested walltime: planned with their runtime, a perfect estimate.
    pub walltime_missing: u64,
    /// Jobs that ran longer than they requested: killed at their request under
    /// [`Overrun::Kill`](fairshare_sim::cluster::Overrun::Kill) (the default), replayed whole with their request
    /// raised to their runtime under [`Overrun::Extend`](fairshare_sim::cluster::Overrun::Extend).
    pub walltime_exceeded: u64,
    /// Jobs whose start the trace records.
    pub started: u64,
    /// Their mean wait, seconds.
    pub mean_wait_s: f64,
    /// The 95th percentile of their waits, seconds.
    pub p95_wait_s: f64,
    /// Their mean bounded slowdown.
    pub mean_slowdown: f64,
    /// Their mean response time (wait + run), seconds.
    pub mean_response_s: f64,
    /// Their waits' 0th, 5th, …, 100th percentiles, seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_quantiles_s: Vec<f64>,
    /// Their bounded slowdowns' 0th, 5th, …, 100th percentiles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowdown_quantiles: Vec<f64>,
    /// The dominant share over time of the replays' top users in the recorded schedule, over
    /// the replay's capacity ([`recorded_shares`]); empty when no start is recorded.
    #[serde(default, skip_serializing_if = "RecordedShares::is_empty")]
    pub shares: RecordedShares,
}

/// Users' dominant shares over time in a trace's recorded schedule, sampled as a replay's
/// timeline is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RecordedShares {
    /// Sample times, seconds from the first event.
    pub times_s: Vec<f64>,
    /// One series per user, its dominant share at each sample time.
    pub dominant_share: Vec<ShareSeries>,
}

impl RecordedShares {
    /// Whether it has no series.
    pub fn is_empty(&self) -> bool {
        self.dominant_share.is_empty()
    }
}

/// A task as a trace records that it ran, for [`recorded_shares`]: whose, from when, for how
/// long, holding what.
#[derive(Debug, Clone, Copy)]
pub struct RecordedRun<'a> {
    /// Its user, an index into the trace's users.
    pub user: u32,
    /// When it started, when the trace records it.
    pub start: Option<Time>,
    /// How long it ran, microseconds.
    pub runtime: u64,
    /// What it held of each resource, over the trace's resources.
    pub demand: &'a [f64],
    /// Which of the trace's resources each of the totals is, an index into `demand` each;
    /// empty when the totals are the trace's resources in order.
    pub keep: &'a [usize],
}

impl<'a> RecordedRun<'a> {
    /// How `task` ran, over all of its resources.
    pub fn of(task: &'a Task) -> RecordedRun<'a> {
        RecordedRun {
            user: task.user,
            start: task.start,
            runtime: task.runtime,
            demand: &task.demand,
            keep: &[],
        }
    }
}

/// The dominant share, at each of `times_s` seconds after `origin`, of each user named in
/// `ids` (by `users`, the trace's names) in the schedule `tasks` record: what the tasks
/// started and not yet ended at that moment held, over `totals`. A task without a recorded
/// start holds nothing; a task ending at a sample time is no longer held then.
pub fn recorded_shares<'a>(
    tasks: impl Iterator<Item = RecordedRun<'a>>,
    users: &[String],
    ids: &[String],
    origin: Time,
    times_s: &[f64],
    totals: &[f64],
) -> RecordedShares {
    let series: Vec<Option<usize>> = (users.iter())
        .map(|name| ids.iter().position(|id| id == name))
        .collect();
    let series_of = |user: u32| series.get(user as usize).copied().flatten();
    let seconds = |t: Time| t.as_micros().saturating_sub(origin.as_micros()) as f64 / 1e6;
    // What each series gains at each sample (a task counts from the first sample at or after
    // its start to the first at or after its end), summed over the samples afterwards: one
    // pass over the tasks, none over events in time order.
    let width = totals.len();
    let first_at = |s: f64| first_at_or_after(times_s, s);
    let mut gained = vec![vec![0.0; (times_s.len() + 1) * width]; ids.len()];
    for task in tasks {
        let (Some(start), Some(k)) = (task.start, series_of(task.user)) else {
            continue;
        };
        let from = first_at(seconds(start));
        let to = first_at(seconds(start.plus_micros(task.runtime)));
        if from == to {
            continue;
        }
        let resource = |r: usize| task.keep.get(r).copied().unwrap_or(r);
        let demand = (0..width).map(|r| task.demand.get(resource(r)).copied().unwrap_or(0.0));
        for (r, d) in demand.enumerate() {
            gained[k][from * width + r] += d;
            gained[k][to * width + r] -= d;
        }
    }
    let values = gained.iter().map(|gains| {
        let mut held = vec![0.0; width];
        (0..times_s.len())
            .map(|i| {
                let gain = &gains[i * width..][..width];
                held.iter_mut().zip(gain).for_each(|(h, g)| *h += g);
                dominant_share_of(&held, totals)
            })
            .collect::<Vec<_>>()
    });
    RecordedShares {
        times_s: times_s.to_vec(),
        dominant_share: (ids.iter().zip(values))
            .map(|(id, values)| ShareSeries {
                id: id.clone(),
                values,
            })
            .collect(),
    }
}

/// The first index of `times` (ascending) whose time is at or after `s`, as
/// `times.partition_point(|t| *t < s)`: guessed as if the times were evenly spaced (a
/// replay's samples are) and then walked to, so that other spacings are still answered right.
fn first_at_or_after(times: &[f64], s: f64) -> usize {
    let (Some(first), Some(last)) = (times.first(), times.last()) else {
        return 0;
    };
    let step = (last - first) / (times.len() - 1).max(1) as f64;
    let guess = match step > 0.0 {
        true => ((s - first) / step).ceil().clamp(0.0, times.len() as f64) as usize,
        false => 0,
    };
    let mut i = guess;
    while i > 0 && times[i - 1] >= s {
        i -= 1;
    }
    while i < times.len() && times[i] < s {
        i += 1;
    }
    i
}

/// The largest of `held`'s shares of `totals` (a resource of total 0 counts for nothing).
fn dominant_share_of(held: &[f64], totals: &[f64]) -> f64 {
    let shares = held.iter().zip(totals).filter(|(_, t)| **t > 0.0);
    shares.map(|(h, t)| (h / t).max(0.0)).fold(0.0, f64::max)
}

/// Accumulates R over a stream of tasks, without holding them.
#[derive(Debug, Clone, Default)]
pub struct Load {
    /// Σ demand × runtime per resource, resource-microseconds.
    area: Vec<f64>,
    /// Per resource, whether any task asked for a positive amount of it.
    requested: Vec<bool>,
    first: Option<Time>,
    last: Option<Time>,
    first_submit: Option<Time>,
    last_submit: Option<Time>,
    /// Σ demand × runtime per user and resource.
    by_user: Vec<Vec<f64>>,
}

impl Load {
    /// An empty accumulator for `resources` resources.
    pub fn new(resources: usize) -> Self {
        Load {
            area: vec![0.0; resources],
            requested: vec![false; resources],
            ..Load::default()
        }
    }

    /// Adds a task of `user` to the user's own load, besides [`Load::add`].
    pub fn add_to_user(&mut self, user: u32, runtime: u64, demand: &[f64]) {
        let user = user as usize;
        if self.by_user.len() <= user {
            self.by_user.resize(user + 1, vec![0.0; self.area.len()]);
        }
        let area = self.by_user[user].iter_mut().zip(demand);
        area.for_each(|(a, d)| *a += d * runtime as f64);
    }

    /// A user's own R: its tasks' mean requested amount of each resource over the trace's span
    /// (zero for a user without tasks).
    pub fn user_mean_demand(&self, user: usize) -> Vec<f64> {
        let span = match (self.first, self.last) {
            (Some(f), Some(l)) if l > f => (l.as_micros() - f.as_micros()) as f64,
            _ => return vec![0.0; self.area.len()],
        };
        match self.by_user.get(user) {
            Some(area) => area.iter().map(|a| a / span).collect(),
            None => vec![0.0; self.area.len()],
        }
    }

    /// Adds a task that arrived at `submit`, ran from `start` for `runtime` µs, requesting `demand`.
    pub fn add(&mut self, submit: Time, start: Time, runtime: u64, demand: &[f64]) {
        self.area
            .iter_mut()
            .zip(demand)
            .for_each(|(a, d)| *a += d * runtime as f64);
        self.requested
            .iter_mut()
            .zip(demand)
            .for_each(|(r, d)| *r |= *d > 0.0);
        let end = start.plus_micros(runtime);
        self.first = Some(self.first.map_or(start, |f| f.min(start)));
        self.last = Some(self.last.map_or(end, |l| l.max(end)));
        self.first_submit = Some(self.first_submit.map_or(submit, |f| f.min(submit)));
        self.last_submit = Some(self.last_submit.map_or(submit, |l| l.max(submit)));
    }

    /// R per resource: the mean requested amount over the span from the first start to the last
    /// finish (zero for an empty trace).
    pub fn mean_demand(&self) -> Vec<f64> {
        let span = match (self.first, self.last) {
            (Some(f), Some(l)) if l > f => (l.as_micros() - f.as_micros()) as f64,
            _ => return vec![0.0; self.area.len()],
        };
        self.area.iter().map(|a| a / span).collect()
    }

    /// The resources some task asked for a positive amount of, in order: a resource nobody
    /// requests is not a resource of a replay.
    pub fn requested(&self) -> Vec<usize> {
        (0..self.requested.len())
            .filter(|&r| self.requested[r])
            .collect()
    }

    /// The same load over the resources `keep` only (indices, in the order given).
    pub fn project(&self, keep: &[usize]) -> Load {
        Load {
            area: keep.iter().map(|&r| self.area[r]).collect(),
            requested: keep.iter().map(|&r| self.requested[r]).collect(),
            by_user: self
                .by_user
                .iter()
                .map(|area| keep.iter().map(|&r| area[r]).collect())
                .collect(),
            ..self.clone()
        }
    }

    /// The first arrival (simulations start there).
    pub fn first_submit(&self) -> Option<Time> {
        self.first_submit
    }

    /// The last arrival.
    pub fn last_submit(&self) -> Option<Time> {
        self.last_submit
    }

    /// The trace's last event: the latest original finish.
    pub fn last_event(&self) -> Option<Time> {
        self.last
    }
}

/// The most of each resource a trace's own schedule ran at once: the smallest pool on which
/// the recorded schedule fits, what an SWF log that declares no machine tells of it.
#[derive(Debug, Clone, Default)]
pub struct RecordedPeak {
    /// (time, +1 start or −1 end, the task's demand), one pair per task with a recorded start.
    events: Vec<(Time, i8, Vec<f64>)>,
}

impl RecordedPeak {
    /// Adds a task that ran from `start` for `runtime` µs with `demand`.
    pub fn add(&mut self, start: Time, runtime: u64, demand: &[f64]) {
        self.events.push((start, 1, demand.to_vec()));
        self.events
            .push((start.plus_micros(runtime), -1, demand.to_vec()));
    }

    /// Per resource, the most in use at once (ends before starts at the same instant) and the
    /// mean in use from the first start to the last end; `None` when no task recorded a start.
    pub fn finish(mut self) -> Option<RecordedUse> {
        let resources = self.events.first()?.2.len();
        self.events.sort_by_key(|a| (a.0, a.1));
        let (mut used, mut peak) = (vec![0.0; resources], vec![0.0f64; resources]);
        let mut area = vec![0.0; resources];
        let first = self.events[0].0;
        let mut last = first;
        for (at, sign, demand) in &self.events {
            let held_s = (at.as_micros() - last.as_micros()) as f64 / 1e6;
            for (a, u) in area.iter_mut().zip(&used) {
                *a += u * held_s;
            }
            last = *at;
            for ((u, p), d) in used.iter_mut().zip(&mut peak).zip(demand) {
                *u += f64::from(*sign) * d;
                *p = p.max(*u);
            }
        }
        let span_s = (last.as_micros() - first.as_micros()) as f64 / 1e6;
        let mean = area.iter().map(|a| a / span_s.max(1e-6)).collect();
        Some(RecordedUse { peak, mean })
    }
}

/// What a trace's own schedule held of each resource: the most at once and the mean.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedUse {
    /// The most in use at once, per resource.
    pub peak: Vec<f64>,
    /// The mean in use from the first recorded start to the last recorded end, per resource.
    pub mean: Vec<f64>,
}

impl RecordedUse {
    /// This use over the resources `keep` (indices into the reader's resources).
    pub fn project(&self, keep: &[usize]) -> RecordedUse {
        RecordedUse {
            peak: project(&self.peak, keep),
            mean: project(&self.mean, keep),
        }
    }
}

/// Accumulates what a trace records of its own schedule and of its jobs' walltimes, task by
/// task, into a [`Recorded`] (one number per started task is kept, for the percentile).
#[derive(Debug, Clone, Default)]
pub struct AsRecorded {
    recorded: Recorded,
    waits: Vec<f32>,
    slowdowns: Vec<f32>,
    responses: f64,
}

impl AsRecorded {
    /// Counts one task.
    pub fn add(&mut self, task: &Task) {
        let r = &mut self.recorded;
        r.jobs += 1;
        match task.walltime.filter(|w| *w > 0) {
            None => r.walltime_missing += 1,
            Some(w) if w < task.runtime => r.walltime_exceeded += 1,
            Some(_) => {}
        }
        if let Some(start) = task.start {
            let wait = start.as_micros().saturating_sub(task.submit.as_micros()) as f64 / 1e6;
            let run = task.runtime as f64 / 1e6;
            r.started += 1;
            self.waits.push(wait as f32);
            self.slowdowns.push(bounded_slowdown(wait, run) as f32);
            self.responses += wait + run;
        }
    }

    /// What was recorded.
    pub fn finish(self) -> Recorded {
        let started = self.recorded.started.max(1) as f64;
        Recorded {
            mean_wait_s: mean(self.waits.iter().map(|w| f64::from(*w))),
            p95_wait_s: percentile(self.waits.clone(), 0.95),
            mean_slowdown: mean(self.slowdowns.iter().map(|s| f64::from(*s))),
            mean_response_s: self.responses / started,
            wait_quantiles_s: quantiles(self.waits),
            slowdown_quantiles: quantiles(self.slowdowns),
            ..self.recorded
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two users on 8 CPUs and 100 memory: `a` holds 2 CPUs from 0 to 10 s and 4 from 5 to
    /// 15 s; `b` holds 50 memory from 10 to 20 s; a task of `c` (not asked for) and one without
    /// a recorded start hold nothing.
    #[test]
    fn recorded_shares_by_hand() {
        let task = |user: u32, start: Option<f64>, run: f64, demand: Vec<f64>| {
            let mut t = Task::new(
                0,
                user,
                Time::ZERO,
                Time::from_secs_f64(run).as_micros(),
                demand,
            );
            t.start = start.map(Time::from_secs_f64);
            t
        };
        let tasks = [
            task(0, Some(0.0), 10.0, vec![2.0, 0.0]),
            task(0, Some(5.0), 10.0, vec![4.0, 0.0]),
            task(1, Some(10.0), 10.0, vec![0.0, 50.0]),
            task(2, Some(0.0), 20.0, vec![8.0, 100.0]),
            task(1, None, 10.0, vec![8.0, 100.0]),
        ];
        let users = ["a", "b", "c"].map(String::from);
        let ids = ["b", "a"].map(String::from);
        let times = [0.0, 5.0, 10.0, 15.0, 20.0];
        let shares = recorded_shares(
            tasks.iter().map(RecordedRun::of),
            &users,
            &ids,
            Time::ZERO,
            &times,
            &[8.0, 100.0],
        );
        assert_eq!(shares.times_s, times);
        let [b, a] = &shares.dominant_share[..] else {
            panic!()
        };
        assert_eq!((a.id.as_str(), b.id.as_str()), ("a", "b"));
        assert_eq!(a.values, [0.25, 0.75, 0.5, 0.0, 0.0]);
        assert_eq!(b.values, [0.0, 0.0, 0.5, 0.5, 0.0]);
    }

    #[test]
    fn the_first_sample_at_or_after_a_time_is_found_on_any_spacing() {
        let grids: [&[f64]; 4] = [
            &[0.0, 10.0, 20.0, 30.0],
            &[0.0, 1.0, 1.0, 50.0, 51.0],
            &[5.0],
            &[],
        ];
        for times in grids {
            for s in [
                -1.0,
                0.0,
                0.5,
                1.0,
                5.0,
                9.999,
                10.0,
                25.0,
                30.0,
                50.0,
                60.0,
                f64::NAN,
            ] {
                let expected = times.partition_point(|t| *t < s);
                assert_eq!(first_at_or_after(times, s), expected, "{s} in {times:?}");
            }
        }
    }

    proptest::proptest! {
        /// On any ascending times, even or not, it answers as a binary search does.
        #[test]
        fn the_guess_and_walk_answers_as_a_binary_search(
            mut times in proptest::collection::vec(-1e3f64..1e3, 0..40),
            even in proptest::bool::ANY,
            s in -2e3f64..2e3,
        ) {
            if even {
                times = (0..times.len()).map(|i| i as f64 * 7.5).collect();
            }
            times.sort_by(f64::total_cmp);
            proptest::prop_assert_eq!(
                first_at_or_after(&times, s),
                times.partition_point(|t| *t < s)
            );
        }
    }

    #[test]
    fn mean_demand_by_hand() {
        // Two tasks: 2 CPUs for 10 s from t = 0, 4 CPUs for 5 s from t = 15: area 40 over 20 s.
        let mut load = Load::new(1);
        load.add(Time::ZERO, Time::ZERO, 10_000_000, &[2.0]);
        load.add(
            Time::from_secs_f64(1.0),
            Time::from_secs_f64(15.0),
            5_000_000,
            &[4.0],
        );
        assert_eq!(load.mean_demand(), vec![2.0]);
        assert_eq!(load.last_event(), Some(Time::from_secs_f64(20.0)));
        assert_eq!(load.first_submit(), Some(Time::ZERO));
        assert_eq!(Load::new(2).mean_demand(), vec![0.0, 0.0]);
    }

    #[test]
    fn recorded_peak_by_hand() {
        let mut peak = RecordedPeak::default();
        assert_eq!(peak.clone().finish(), None);
        let t = Time::from_micros;
        peak.add(t(0), 10, &[2.0, 1.0]);
        peak.add(t(5), 10, &[3.0, 1.0]);
        peak.add(t(10), 10, &[4.0, 5.0]);
        // 2 + 3 at 5; at 10 the first ends as the third starts: 3 + 4 = 7 processors, 6 memory.
        let used = peak.finish().unwrap();
        assert_eq!(used.peak, [7.0, 6.0]);
        // Processors 2, 5, 7, 4 and memory 1, 2, 6, 5 for 5 µs each, over 20 µs.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(used.mean[0], 4.5) && close(used.mean[1], 3.5),
            "{used:?}"
        );
    }

    #[test]
    fn as_recorded_by_hand() {
        let mut recorded = AsRecorded::default();
        let mut late = Task::new(0, 0, Time::ZERO, 20_000_000, vec![1.0]);
        late.start = Some(Time::from_secs_f64(20.0));
        late.walltime = Some(10_000_000);
        let mut prompt = Task::new(1, 0, Time::ZERO, 5_000_000, vec![1.0]);
        prompt.start = Some(Time::ZERO);
        recorded.add(&late);
        recorded.add(&prompt);
        recorded.add(&Task::new(2, 0, Time::ZERO, 1, vec![1.0]));
        let r = recorded.finish();
        assert_eq!((r.jobs, r.started), (3, 2));
        assert_eq!((r.walltime_missing, r.walltime_exceeded), (2, 1));
        assert_eq!(r.mean_wait_s, 10.0);
        // (20 + 20) / 20 = 2 and max(1, 5 / 10) = 1.
        assert_eq!(r.mean_slowdown, 1.5);
        assert_eq!(r.mean_response_s, 22.5);
    }

    #[test]
    fn resources_nobody_requests_can_be_left_out() {
        let mut load = Load::new(3);
        load.add(Time::ZERO, Time::ZERO, 10_000_000, &[2.0, 0.0, 1.0]);
        load.add(Time::ZERO, Time::ZERO, 10_000_000, &[4.0, 0.0, 0.0]);
        assert_eq!(load.requested(), vec![0, 2]);
        let kept = load.project(&load.requested());
        assert_eq!(kept.mean_demand(), vec![6.0, 1.0]);
        assert_eq!(kept.requested(), vec![0, 1]);
        assert_eq!(kept.last_event(), load.last_event());
    }
}
