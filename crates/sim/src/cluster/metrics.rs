//! What a cluster replay measures: waits, slowdowns and completions per user and overall,
//! utilisation and dominant shares over time, Jain's index, and the live tree's work.
//!
//! Everything is accumulated while the engine runs, so nothing needs the whole trace in memory
//! except one number per task for the wait percentiles.

use fairshare_core::livetree::LiveTreeCounters;
use fairshare_core::model::Time;
use fairshare_core::policy::dominant_share;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The most timeline samples a run keeps. When a run outlasts them (a long `--horizon`, a long
/// drain), every other sample is dropped and the step doubles, so the timeline always covers
/// the whole run with between half and all of this many samples, whatever its length.
pub const MOST_SAMPLES: usize = 1024;

/// Users whose dominant share over time a replay keeps by default, and the report draws (one
/// palette colour each).
pub const TOP_USERS: usize = 8;

/// Below this runtime, slowdown is computed as if the task ran this long (bounded slowdown).
pub const SLOWDOWN_FLOOR_S: f64 = 10.0;

/// One user's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserResult {
    /// The user's name in the trace.
    pub id: String,
    /// Tasks that arrived within the horizon.
    pub tasks_submitted: u64,
    /// Tasks started within the horizon.
    pub tasks_started: u64,
    /// Tasks finished within the horizon.
    pub tasks_completed: u64,
    /// Tasks larger than the whole capacity (or than every machine), which can never start;
    /// they are left out of the waits.
    #[serde(default)]
    pub tasks_never_fit: u64,
    /// Mean wait of the user's tasks that can fit, seconds (a task still waiting counts its
    /// wait so far).
    pub mean_wait_s: f64,
    /// Time-averaged dominant share.
    pub mean_dominant_share: f64,
}

/// A user's dominant share sampled over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareSeries {
    /// The user's name.
    pub id: String,
    /// Dominant share at each sample time.
    pub values: Vec<f64>,
}

/// Samples of the cluster's state at regular times, for plots.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Timeline {
    /// Sample times, seconds from the first event.
    pub times_s: Vec<f64>,
    /// Per resource, the fraction in use at each sample time.
    pub utilization: Vec<Vec<f64>>,
    /// Dominant share over time of the users with the most tasks.
    pub dominant_share: Vec<ShareSeries>,
}

/// The results of replaying one trace under one policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyResult {
    /// The policy, as specified.
    pub policy: String,
    /// Tasks that arrived within the horizon.
    pub tasks_submitted: u64,
    /// Tasks started within the horizon.
    pub tasks_started: u64,
    /// Tasks finished within the horizon.
    pub tasks_completed: u64,
    /// Submitted, able to fit, but not finished within the horizon
    /// (submitted = completed + unfinished + never fit).
    pub tasks_unfinished: u64,
    /// Submitted tasks larger than the whole capacity (or than every machine), which can never
    /// start: not unfinished, and left out of every wait and slowdown.
    pub tasks_never_fit: u64,
    /// Tasks that arrive after the horizon (not submitted).
    pub tasks_beyond_horizon: u64,
    /// Mean wait over submitted tasks that can fit, seconds (a task still waiting counts its
    /// wait so far).
    pub mean_wait_s: f64,
    /// 95th percentile of the waits of the submitted tasks that can fit, seconds.
    pub p95_wait_s: f64,
    /// Mean over users of each user's mean wait, seconds (SDRF paper, Figure 4).
    pub user_mean_wait_s: f64,
    /// Mean bounded slowdown of started tasks: (wait + run) / max(run, 10 s).
    pub mean_slowdown: f64,
    /// Mean fraction of each resource in use, by resource name.
    pub utilization: IndexMap<String, f64>,
    /// Jain's fairness index of the time-averaged dominant shares of the users with a task
    /// that can fit.
    pub jain_index: f64,
    /// Swap events the live tree processed (SDRF only).
    pub livetree_events: Option<u64>,
    /// Live-tree events per 1,000 tasks started (SDRF only).
    pub livetree_events_per_1000_tasks: Option<f64>,
    /// All live-tree counters (SDRF only).
    pub livetree: Option<LiveTreeCounters>,
    /// Simulated span, seconds from the first event to the end of the run.
    pub simulated_s: f64,
    /// Engine events (arrivals and finishes) processed.
    pub events: u64,
    /// Per user, in order of first appearance.
    pub users: Vec<UserResult>,
    /// Regular samples for plots.
    pub timeline: Timeline,
}

/// Per-user accumulators.
#[derive(Debug, Clone, Default)]
struct UserTally {
    submitted: u64,
    never_fit: u64,
    started: u64,
    completed: u64,
    wait_sum: f64,
    share_integral: f64,
    share: f64,
    since: f64,
}

/// Accumulates metrics while the engine runs.
#[derive(Debug, Clone)]
pub struct Recorder {
    origin: Time,
    resources: Vec<String>,
    users: Vec<UserTally>,
    waits: Vec<f32>,
    slowdown_sum: f64,
    use_integral: Vec<f64>,
    used: Vec<f64>,
    last: f64,
    sample_every: f64,
    next_sample: f64,
    timeline: Timeline,
    samples_by_user: Vec<Vec<f64>>,
    beyond_horizon: u64,
    events: u64,
}

impl Recorder {
    /// A recorder for `users` users and the named resources; time counts from `origin` and the
    /// state is sampled every `sample_every` seconds.
    pub fn new(users: usize, names: &[String], origin: Time, sample_every: f64) -> Self {
        let resources = names.len();
        Recorder {
            origin,
            resources: names.to_vec(),
            users: vec![UserTally::default(); users],
            waits: Vec::new(),
            slowdown_sum: 0.0,
            use_integral: vec![0.0; resources],
            used: vec![0.0; resources],
            last: 0.0,
            sample_every: sample_every.max(1e-6),
            next_sample: 0.0,
            timeline: Timeline {
                utilization: vec![Vec::new(); resources],
                ..Timeline::default()
            },
            samples_by_user: vec![Vec::new(); users],
            beyond_horizon: 0,
            events: 0,
        }
    }

    fn secs(&self, t: Time) -> f64 {
        t.as_micros().saturating_sub(self.origin.as_micros()) as f64 / 1e6
    }

    /// Moves the clock to `t`: integrates utilisation and takes the samples due before `t`.
    pub fn advance(&mut self, t: Time) {
        let now = self.secs(t);
        while self.next_sample <= now {
            self.sample(self.next_sample);
            if self.timeline.times_s.len() >= MOST_SAMPLES {
                self.thin();
            }
            self.next_sample = self.timeline.times_s.len() as f64 * self.sample_every;
        }
        let dt = now - self.last;
        self.use_integral
            .iter_mut()
            .zip(&self.used)
            .for_each(|(i, u)| *i += u * dt);
        self.last = now;
    }

    /// Keeps every other sample (the first, third, …) and doubles the step between samples.
    fn thin(&mut self) {
        let series = self.timeline.utilization.iter_mut();
        series
            .chain(&mut self.samples_by_user)
            .chain([&mut self.timeline.times_s])
            .for_each(every_other);
        self.sample_every *= 2.0;
    }

    fn sample(&mut self, at: f64) {
        self.timeline.times_s.push(at);
        for (series, u) in self.timeline.utilization.iter_mut().zip(&self.used) {
            series.push(*u);
        }
        for (series, tally) in self.samples_by_user.iter_mut().zip(&self.users) {
            series.push(tally.share);
        }
    }

    /// Counts an engine event.
    pub fn event(&mut self) {
        self.events += 1;
    }

    /// A task arrived.
    pub fn submitted(&mut self, user: u32) {
        self.users[user as usize].submitted += 1;
    }

    /// A task of `user` arrived that can never fit.
    pub fn never_fits(&mut self, user: u32) {
        self.users[user as usize].never_fit += 1;
    }

    /// A task arrived after the horizon.
    pub fn beyond_horizon(&mut self) {
        self.beyond_horizon += 1;
    }

    /// A task started after waiting `wait` seconds; it will run `run` seconds.
    pub fn started(&mut self, user: u32, wait: f64, run: f64) {
        let tally = &mut self.users[user as usize];
        tally.started += 1;
        tally.wait_sum += wait;
        self.waits.push(wait as f32);
        self.slowdown_sum += (wait + run) / run.max(SLOWDOWN_FLOOR_S);
    }

    /// A task finished.
    pub fn completed(&mut self, user: u32) {
        self.users[user as usize].completed += 1;
    }

    /// A user's allocation changed at `t` (normalised shares).
    pub fn allocation(&mut self, user: u32, t: Time, allocation: &[f64]) {
        let now = self.secs(t);
        let tally = &mut self.users[user as usize];
        tally.share_integral += tally.share * (now - tally.since);
        tally.share = dominant_share(allocation);
        tally.since = now;
    }

    /// The cluster's use changed (normalised, per resource).
    pub fn used(&mut self, used: &[f64]) {
        self.used.copy_from_slice(used);
    }

    /// Ends the run at `end`, with `waiting` the submit times and users of tasks still waiting.
    pub fn finish(
        mut self,
        end: Time,
        waiting: impl Iterator<Item = (u32, Time)>,
        names: &[String],
        top: usize,
    ) -> PolicyResult {
        self.advance(end);
        let span = self.secs(end);
        for (user, submit) in waiting {
            let wait = span - self.secs(submit);
            self.users[user as usize].wait_sum += wait;
            self.waits.push(wait as f32);
        }
        for tally in &mut self.users {
            tally.share_integral += tally.share * (span - tally.since);
            tally.since = span;
        }
        self.result(span, names, top)
    }

    fn result(self, span: f64, names: &[String], top: usize) -> PolicyResult {
        let sum = |f: fn(&UserTally) -> u64| self.users.iter().map(f).sum::<u64>();
        let (submitted, started, completed, never_fit) = (
            sum(|u| u.submitted),
            sum(|u| u.started),
            sum(|u| u.completed),
            sum(|u| u.never_fit),
        );
        // Users with a task that fits; one whose every task is too large is at share 0 under
        // every policy, which says nothing about the policy's fairness.
        let active: Vec<&UserTally> = self
            .users
            .iter()
            .filter(|u| u.submitted > u.never_fit)
            .collect();
        let mean_share = |u: &UserTally| {
            if span > 0.0 {
                u.share_integral / span
            } else {
                0.0
            }
        };
        let users = self
            .users
            .iter()
            .enumerate()
            .filter(|(_, u)| u.submitted > 0)
            .map(|(i, u)| UserResult {
                id: names.get(i).cloned().unwrap_or_else(|| i.to_string()),
                tasks_submitted: u.submitted,
                tasks_started: u.started,
                tasks_completed: u.completed,
                tasks_never_fit: u.never_fit,
                mean_wait_s: match u.submitted - u.never_fit {
                    0 => 0.0,
                    fit => u.wait_sum / fit as f64,
                },
                mean_dominant_share: mean_share(u),
            })
            .collect::<Vec<_>>();
        let timeline = self.top_series(names, top);
        PolicyResult {
            policy: String::new(),
            tasks_submitted: submitted,
            tasks_started: started,
            tasks_completed: completed,
            tasks_unfinished: submitted - completed - never_fit,
            tasks_never_fit: never_fit,
            tasks_beyond_horizon: self.beyond_horizon,
            mean_wait_s: mean(self.waits.iter().map(|w| *w as f64)),
            p95_wait_s: percentile(self.waits.clone(), 0.95),
            user_mean_wait_s: mean(
                users
                    .iter()
                    .filter(|u| u.tasks_submitted > u.tasks_never_fit)
                    .map(|u| u.mean_wait_s),
            ),
            mean_slowdown: if started > 0 {
                self.slowdown_sum / started as f64
            } else {
                0.0
            },
            utilization: self
                .resources
                .iter()
                .cloned()
                .zip(
                    self.use_integral
                        .iter()
                        .map(|i| if span > 0.0 { i / span } else { 0.0 }),
                )
                .collect(),
            jain_index: jain(active.iter().map(|u| mean_share(u))),
            livetree_events: None,
            livetree_events_per_1000_tasks: None,
            livetree: None,
            simulated_s: span,
            events: self.events,
            users,
            timeline,
        }
    }

    /// The timeline with the dominant-share series of the `top` users with the most tasks.
    fn top_series(&self, names: &[String], top: usize) -> Timeline {
        let mut by_tasks: Vec<usize> = (0..self.users.len())
            .filter(|u| self.users[*u].submitted > 0)
            .collect();
        by_tasks.sort_by_key(|u| (std::cmp::Reverse(self.users[*u].submitted), *u));
        let dominant_share = by_tasks
            .into_iter()
            .take(top)
            .map(|u| ShareSeries {
                id: names.get(u).cloned().unwrap_or_else(|| u.to_string()),
                values: self.samples_by_user[u].clone(),
            })
            .collect();
        Timeline {
            dominant_share,
            ..self.timeline.clone()
        }
    }

    /// Fills in the live-tree figures.
    pub fn with_livetree(result: &mut PolicyResult, counters: Option<LiveTreeCounters>) {
        if let Some(c) = counters {
            result.livetree_events = Some(c.events);
            result.livetree_events_per_1000_tasks = Some(if result.tasks_started > 0 {
                1000.0 * c.events as f64 / result.tasks_started as f64
            } else {
                0.0
            });
            result.livetree = Some(c);
        }
    }
}

/// Keeps the first, third, fifth, … of `values`.
fn every_other(values: &mut Vec<f64>) {
    let mut keep = false;
    values.retain(|_| {
        keep = !keep;
        keep
    });
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
    if n > 0 {
        sum / n as f64
    } else {
        0.0
    }
}

/// The `q` quantile (nearest rank) of `values`.
fn percentile(mut values: Vec<f32>, q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    let (_, v, _) = values.select_nth_unstable_by(rank, f32::total_cmp);
    *v as f64
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes everything.
pub fn jain(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, squares, n) =
        values.fold((0.0, 0.0, 0usize), |(s, q, n), v| (s + v, q + v * v, n + 1));
    if squares > 0.0 {
        sum * sum / (n as f64 * squares)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_by_hand() {
        assert_eq!(jain([1.0, 1.0, 1.0].into_iter()), 1.0);
        assert!((jain([1.0, 0.0, 0.0, 0.0].into_iter()) - 0.25).abs() < 1e-15);
        assert!((jain([1.0, 2.0].into_iter()) - 0.9).abs() < 1e-15);
    }

    #[test]
    fn a_long_run_keeps_a_bounded_timeline_over_its_whole_length() {
        let names = ["cpu".to_owned()];
        let mut recorder = Recorder::new(1, &names, Time::ZERO, 1.0);
        let year = 365.0 * 86_400.0;
        recorder.advance(Time::from_secs_f64(1_000.0 * year));
        let times = &recorder.timeline.times_s;
        assert!(
            (MOST_SAMPLES / 2..MOST_SAMPLES).contains(&times.len()),
            "{}",
            times.len()
        );
        assert_eq!(times.len(), recorder.timeline.utilization[0].len());
        assert_eq!(times.len(), recorder.samples_by_user[0].len());
        let step = times[1] - times[0];
        assert!(
            times.windows(2).all(|w| w[1] - w[0] == step),
            "evenly spaced"
        );
        assert!(
            *times.last().unwrap() + step > 1_000.0 * year,
            "covers the run"
        );
        assert_eq!(times[0], 0.0);
    }

    #[test]
    fn users_none_of_whose_tasks_fit_are_left_out_of_jain() {
        let names = ["cpu".to_owned()];
        let users = ["fits".to_owned(), "too large".to_owned()];
        let mut recorder = Recorder::new(2, &names, Time::ZERO, 1.0);
        recorder.submitted(0);
        recorder.started(0, 0.0, 10.0);
        recorder.allocation(0, Time::ZERO, &[0.5]);
        recorder.submitted(1);
        recorder.never_fits(1);
        let result = recorder.finish(Time::from_secs_f64(10.0), std::iter::empty(), &users, 2);
        assert_eq!(result.users.len(), 2, "both users are reported");
        assert_eq!(
            result.jain_index, 1.0,
            "only the user with a task that fits"
        );
    }

    #[test]
    fn nearest_rank_percentile() {
        let v: Vec<f32> = (1..=100).map(|x| x as f32).collect();
        assert_eq!(percentile(v.clone(), 0.95), 95.0);
        assert_eq!(percentile(v, 1.0), 100.0);
        assert_eq!(percentile(vec![], 0.95), 0.0);
    }
}
