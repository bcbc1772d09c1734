//! Measuring a cluster replay as it runs: every event, start, finish and share change is
//! folded into running tallies, so nothing needs the whole trace in memory except one number
//! per task for the wait percentiles; the timeline keeps a bounded number of samples.

use super::result::{PolicyResult, ShareSeries, Timeline, UserResult};
use super::statistics::{bounded_slowdown, jain, mean, percentile, quantiles};
use fairshare_core::model::Time;
use fairshare_core::priority::dominant_share;
use fairshare_core::rank::livetree::LiveTreeCounters;

/// The most timeline samples a run keeps. When a run outlasts them (a long `--horizon`, a long
/// drain), every other sample is dropped and the step doubles, so the timeline always covers
/// the whole run with between half and all of this many samples, whatever its length.
pub const MOST_SAMPLES: usize = 1024;

/// Per-user accumulators.
#[derive(Debug, Clone, Default)]
struct UserTally {
    submitted: u64,
    never_fit: u64,
    started: u64,
    completed: u64,
    wait_sum: f64,
    slowdown_sum: f64,
    response_sum: f64,
    share_integral: f64,
    share: f64,
    since: f64,
    /// What the user holds of each resource, and its integral over time.
    held: Vec<f64>,
    held_integral: Vec<f64>,
}

impl UserTally {
    /// The processor-seconds (fractions of the cluster's processors × seconds) the user has
    /// received from the start until `at`, which is not before its last change.
    fn received_until(&self, at: f64) -> f64 {
        let before = self.held_integral.first().copied().unwrap_or(0.0);
        let now = self.held.first().copied().unwrap_or(0.0);
        before + now * (at - self.since).max(0.0)
    }
}

/// Accumulates metrics while the engine runs.
#[derive(Debug, Clone)]
pub struct Recorder {
    origin: Time,
    resources: Vec<String>,
    users: Vec<UserTally>,
    waits: Vec<f32>,
    slowdowns: Vec<f32>,
    slowdown_sum: f64,
    response_sum: f64,
    last_finish: f64,
    use_integral: Vec<f64>,
    used: Vec<f64>,
    last: f64,
    sample_every: f64,
    next_sample: f64,
    timeline: Timeline,
    samples_by_user: Vec<Vec<f64>>,
    /// Per user, the processor-seconds received so far at each sample.
    received_by_user: Vec<Vec<f64>>,
    beyond_horizon: u64,
    killed_at_walltime: u64,
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
            slowdowns: Vec::new(),
            slowdown_sum: 0.0,
            response_sum: 0.0,
            last_finish: 0.0,
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
            received_by_user: vec![Vec::new(); users],
            beyond_horizon: 0,
            killed_at_walltime: 0,
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
            .chain(&mut self.received_by_user)
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
        for (series, tally) in self.received_by_user.iter_mut().zip(&self.users) {
            series.push(tally.received_until(at));
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

    /// A submitted task ran longer than its walltime request and is killed at it.
    pub fn killed_at_walltime(&mut self) {
        self.killed_at_walltime += 1;
    }

    /// A task started after waiting `wait` seconds; it will run `run` seconds.
    pub fn started(&mut self, user: u32, wait: f64, run: f64) {
        let tally = &mut self.users[user as usize];
        tally.started += 1;
        tally.wait_sum += wait;
        self.waits.push(wait as f32);
        let slowdown = bounded_slowdown(wait, run);
        tally.slowdown_sum += slowdown;
        tally.response_sum += wait + run;
        self.slowdown_sum += slowdown;
        self.slowdowns.push(slowdown as f32);
        self.response_sum += wait + run;
    }

    /// A task finished.
    pub fn completed(&mut self, user: u32) {
        self.last_finish = self.last;
        self.users[user as usize].completed += 1;
    }

    /// A user's allocation changed at `t` (normalised shares).
    pub fn allocation(&mut self, user: u32, t: Time, allocation: &[f64]) {
        let now = self.secs(t);
        let tally = &mut self.users[user as usize];
        let dt = now - tally.since;
        tally.share_integral += tally.share * dt;
        tally.share = dominant_share(allocation);
        tally.held_integral.resize(allocation.len(), 0.0);
        let held = tally.held_integral.iter_mut().zip(&tally.held);
        held.for_each(|(i, h)| *i += h * dt);
        tally.held = allocation.to_vec();
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
            let dt = span - tally.since;
            tally.share_integral += tally.share * dt;
            let held = tally.held_integral.iter_mut().zip(&tally.held);
            held.for_each(|(i, h)| *i += h * dt);
            tally.since = span;
        }
        self.result(span, names, top)
    }

    fn result(mut self, span: f64, names: &[String], top: usize) -> PolicyResult {
        let received_by_user = std::mem::take(&mut self.received_by_user);
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
                mean_slowdown: if u.started > 0 {
                    u.slowdown_sum / u.started as f64
                } else {
                    0.0
                },
                mean_response_s: if u.started > 0 {
                    u.response_sum / u.started as f64
                } else {
                    0.0
                },
                mean_held: u
                    .held_integral
                    .iter()
                    .map(|i| if span > 0.0 { i / span } else { 0.0 })
                    .collect(),
                charged: None,
            })
            .collect::<Vec<_>>();
        let mut timeline = self.top_series(names, top);
        timeline.received_by_user = received_by_user;
        PolicyResult {
            policy: String::new(),
            tasks_priced_system_wide: 0,
            tasks_submitted: submitted,
            tasks_started: started,
            tasks_completed: completed,
            tasks_unfinished: submitted - completed - never_fit,
            tasks_never_fit: never_fit,
            tasks_beyond_horizon: self.beyond_horizon,
            tasks_killed_at_walltime: self.killed_at_walltime,
            mean_wait_s: mean(self.waits.iter().map(|w| *w as f64)),
            p95_wait_s: percentile(self.waits.clone(), 0.95),
            wait_quantiles_s: quantiles(self.waits.clone()),
            slowdown_quantiles: quantiles(self.slowdowns.clone()),
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
            mean_response_s: if started > 0 {
                self.response_sum / started as f64
            } else {
                0.0
            },
            makespan_s: self.last_finish,
            tasks_with_unknown_properties: 0,
            accounts: Vec::new(),
            jobs: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
