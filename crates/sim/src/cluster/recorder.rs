//! Measuring a cluster replay as it runs: every event, start, finish and share change is
//! folded into running tallies, so nothing needs the whole trace in memory except two numbers
//! per task for the wait and slowdown percentiles; the timeline keeps a bounded number of
//! samples.

use super::result::{PolicyResult, ShareSeries, Timeline, UserResult};
use super::statistics::{bounded_slowdown, jain, mean, percentile, percentiles, quantiles};
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
    /// Its jobs cancelled while they waited, left out of the waits.
    cancelled: u64,
    started: u64,
    completed: u64,
    wait_sum: f64,
    slowdown_sum: f64,
    response_sum: f64,
    /// The waits of its tasks that can fit and the slowdowns of its started ones.
    waits: Vec<f32>,
    slowdowns: Vec<f32>,
    share_integral: f64,
    share: f64,
    since: f64,
    /// Its entitlement (the fraction of the cluster its shares give it).
    entitlement: f64,
    /// Its jobs waiting that can fit.
    queued: u64,
    /// Seconds with a job waiting, the integral of its dominant share over them, and the
    /// seconds of them during which that share was below its entitlement.
    waiting_s: f64,
    share_while_waiting: f64,
    below_share_s: f64,
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

    /// Folds the time from its last change until `now` into the integrals.
    fn settle(&mut self, now: f64) {
        let dt = now - self.since;
        self.share_integral += self.share * dt;
        let held = self.held_integral.iter_mut().zip(&self.held);
        held.for_each(|(i, h)| *i += h * dt);
        if self.queued > 0 {
            self.waiting_s += dt;
            self.share_while_waiting += self.share * dt;
            if self.share < self.entitlement - 1e-9 {
                self.below_share_s += dt;
            }
        }
        self.since = now;
    }

    /// How many of its tasks count in its waits: those that fit and were not cancelled.
    fn waited(&self) -> u64 {
        self.submitted - self.never_fit - self.cancelled
    }

    /// Its mean of `sum` over `count` things (0 over none).
    fn per(sum: f64, count: u64) -> f64 {
        if count > 0 {
            sum / count as f64
        } else {
            0.0
        }
    }
}

/// Accumulates metrics while the engine runs.
#[derive(Debug, Clone)]
pub struct Recorder {
    origin: Time,
    resources: Vec<String>,
    users: Vec<UserTally>,
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
    /// A recorder for users entitled to `entitlements` (one each) and the named resources;
    /// time counts from `origin` and the state is sampled every `sample_every` seconds.
    pub fn new(entitlements: &[f64], names: &[String], origin: Time, sample_every: f64) -> Self {
        let resources = names.len();
        let users = entitlements.len();
        let tally = |&entitlement| UserTally {
            entitlement,
            ..UserTally::default()
        };
        Recorder {
            origin,
            resources: names.to_vec(),
            users: entitlements.iter().map(tally).collect(),
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

    /// A task of `user` that can fit joined its queue, now.
    pub fn queued(&mut self, user: u32) {
        let now = self.last;
        let tally = &mut self.users[user as usize];
        tally.settle(now);
        tally.queued += 1;
    }

    /// A waiting task of `user` was cancelled by its owner, now.
    pub fn withdrawn(&mut self, user: u32) {
        let now = self.last;
        let tally = &mut self.users[user as usize];
        tally.settle(now);
        tally.queued -= 1;
        tally.cancelled += 1;
    }

    /// A task arrived after the horizon.
    pub fn beyond_horizon(&mut self) {
        self.beyond_horizon += 1;
    }

    /// A submitted task ran longer than its walltime request and is killed at it.
    pub fn killed_at_walltime(&mut self) {
        self.killed_at_walltime += 1;
    }

    /// A task started now, after waiting `wait` seconds in its queue; it will run `run`
    /// seconds.
    pub fn started(&mut self, user: u32, wait: f64, run: f64) {
        let now = self.last;
        let tally = &mut self.users[user as usize];
        tally.settle(now);
        tally.queued -= 1;
        tally.started += 1;
        tally.wait_sum += wait;
        tally.waits.push(wait as f32);
        let slowdown = bounded_slowdown(wait, run);
        tally.slowdown_sum += slowdown;
        tally.slowdowns.push(slowdown as f32);
        tally.response_sum += wait + run;
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
        tally.held_integral.resize(allocation.len(), 0.0);
        tally.settle(now);
        tally.share = dominant_share(allocation);
        tally.held = allocation.to_vec();
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
            let tally = &mut self.users[user as usize];
            tally.wait_sum += wait;
            tally.waits.push(wait as f32);
        }
        for tally in &mut self.users {
            tally.settle(span);
        }
        self.result(span, names, top)
    }

    fn result(mut self, span: f64, names: &[String], top: usize) -> PolicyResult {
        let received_by_user = std::mem::take(&mut self.received_by_user);
        let sum = |f: fn(&UserTally) -> u64| self.users.iter().map(f).sum::<u64>();
        let (submitted, started, completed, never_fit, cancelled) = (
            sum(|u| u.submitted),
            sum(|u| u.started),
            sum(|u| u.completed),
            sum(|u| u.never_fit),
            sum(|u| u.cancelled),
        );
        let total = |f: fn(&UserTally) -> f64| self.users.iter().map(f).sum::<f64>();
        let waits: Vec<f32> = self
            .users
            .iter()
            .flat_map(|u| u.waits.iter().copied())
            .collect();
        let slowdowns: Vec<f32> = self
            .users
            .iter()
            .flat_map(|u| u.slowdowns.iter().copied())
            .collect();
        let users: Vec<UserResult> = (self.users.iter().enumerate())
            .filter(|(_, u)| u.submitted > 0)
            .map(|(i, u)| user_result(u, names.get(i).cloned(), i, span))
            .collect();
        // Users with a task that fits; one whose every task is too large is at share 0 under
        // every policy, which says nothing about the policy's fairness.
        let fitting = || {
            users
                .iter()
                .filter(|u| u.tasks_submitted > u.tasks_never_fit)
        };
        let waited = || users.iter().filter_map(|u| u.service_while_waiting);
        let mut timeline = self.top_series(names, top);
        timeline.received_by_user = received_by_user;
        PolicyResult {
            policy: String::new(),
            tasks_priced_system_wide: 0,
            tasks_pinned: 0,
            tasks_pinned_elsewhere: 0,
            opened: None,
            held_by_limits: Default::default(),
            tasks_submitted: submitted,
            tasks_started: started,
            tasks_completed: completed,
            tasks_unfinished: submitted - completed - never_fit - cancelled,
            tasks_never_fit: never_fit,
            tasks_cancelled: cancelled,
            tasks_beyond_horizon: self.beyond_horizon,
            tasks_killed_at_walltime: self.killed_at_walltime,
            mean_wait_s: UserTally::per(total(|u| u.wait_sum), sum(UserTally::waited)),
            p95_wait_s: percentile(waits.clone(), 0.95),
            wait_quantiles_s: quantiles(waits),
            slowdown_quantiles: quantiles(slowdowns),
            user_mean_wait_s: mean(fitting().map(|u| u.mean_wait_s)),
            mean_slowdown: UserTally::per(total(|u| u.slowdown_sum), started),
            utilization: (self.resources.iter().cloned())
                .zip(self.use_integral.iter().map(|i| per_second(*i, span)))
                .collect(),
            jain_dominant_share: jain(fitting().map(|u| u.mean_dominant_share)),
            jain_slowdown: jain(
                (users.iter().filter(|u| u.tasks_started > 0)).map(|u| 1.0 / u.mean_slowdown),
            ),
            jain_service: jain(waited().map(|s| s.min(1.0))),
            time_below_share: match total(|u| u.waiting_s) {
                0.0 => 0.0,
                waiting => total(|u| u.below_share_s) / waiting,
            },
            livetree_events: None,
            livetree_events_per_1000_tasks: None,
            livetree: None,
            simulated_s: span,
            events: self.events,
            users,
            timeline,
            mean_response_s: UserTally::per(total(|u| u.response_sum), started),
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

/// One user's results from its tally, over a run of `span` seconds.
fn user_result(u: &UserTally, name: Option<String>, index: usize, span: f64) -> UserResult {
    let waits = percentiles(u.waits.clone(), &[0.5, 0.95]);
    let slowdowns = percentiles(u.slowdowns.clone(), &[0.5, 0.95]);
    UserResult {
        id: name.unwrap_or_else(|| index.to_string()),
        tasks_submitted: u.submitted,
        tasks_started: u.started,
        tasks_completed: u.completed,
        tasks_never_fit: u.never_fit,
        tasks_cancelled: u.cancelled,
        mean_wait_s: UserTally::per(u.wait_sum, u.waited()),
        median_wait_s: waits[0],
        p95_wait_s: waits[1],
        mean_dominant_share: per_second(u.share_integral, span),
        mean_slowdown: UserTally::per(u.slowdown_sum, u.started),
        median_slowdown: slowdowns[0],
        p95_slowdown: slowdowns[1],
        mean_response_s: UserTally::per(u.response_sum, u.started),
        mean_held: (u.held_integral.iter())
            .map(|i| per_second(*i, span))
            .collect(),
        waiting_s: u.waiting_s,
        below_share_s: u.below_share_s,
        service_while_waiting: (u.waiting_s > 0.0 && u.entitlement > 0.0)
            .then(|| u.share_while_waiting / (u.waiting_s * u.entitlement)),
        charged: None,
    }
}

/// `integral` over a run of `span` seconds, per second (0 over no time).
fn per_second(integral: f64, span: f64) -> f64 {
    if span > 0.0 {
        integral / span
    } else {
        0.0
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
        let mut recorder = Recorder::new(&[1.0], &names, Time::ZERO, 1.0);
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
        let mut recorder = Recorder::new(&[0.5, 0.5], &names, Time::ZERO, 1.0);
        recorder.submitted(0);
        recorder.queued(0);
        recorder.started(0, 0.0, 10.0);
        recorder.allocation(0, Time::ZERO, &[0.5]);
        recorder.submitted(1);
        recorder.never_fits(1);
        let result = recorder.finish(Time::from_secs_f64(10.0), std::iter::empty(), &users, 2);
        assert_eq!(result.users.len(), 2, "both users are reported");
        assert_eq!(
            result.jain_dominant_share, 1.0,
            "only the user with a task that fits"
        );
    }

    /// Two users entitled to half the one processor each; A's two 10-s jobs and B's one all
    /// need the whole processor and arrive at 0; A1 runs over [0, 10), B1 over [10, 20), A2
    /// over [20, 30).
    #[test]
    fn fairness_measures_by_hand() {
        let names = ["cpu".to_owned()];
        let users = ["A".to_owned(), "B".to_owned()];
        let mut r = Recorder::new(&[0.5, 0.5], &names, Time::ZERO, 1.0);
        let at = |s: f64| Time::from_secs_f64(s);
        r.advance(at(0.0));
        for user in [0, 0, 1] {
            r.submitted(user);
            r.queued(user);
        }
        r.started(0, 0.0, 10.0);
        r.allocation(0, at(0.0), &[1.0]);
        r.advance(at(10.0));
        r.completed(0);
        r.allocation(0, at(10.0), &[0.0]);
        r.started(1, 10.0, 10.0);
        r.allocation(1, at(10.0), &[1.0]);
        r.advance(at(20.0));
        r.completed(1);
        r.allocation(1, at(20.0), &[0.0]);
        r.started(0, 20.0, 10.0);
        r.allocation(0, at(20.0), &[1.0]);
        r.advance(at(30.0));
        r.completed(0);
        r.allocation(0, at(30.0), &[0.0]);
        let result = r.finish(at(30.0), std::iter::empty(), &users, 2);
        let (a, b) = (&result.users[0], &result.users[1]);
        // A waited over [0, 20) (A2 queued), holding the processor for the first 10 s.
        assert_eq!((a.waiting_s, a.below_share_s), (20.0, 10.0));
        assert_eq!(a.service_while_waiting, Some(10.0 / (20.0 * 0.5)));
        // B waited over [0, 10) holding nothing.
        assert_eq!((b.waiting_s, b.below_share_s), (10.0, 10.0));
        assert_eq!(b.service_while_waiting, Some(0.0));
        assert_eq!((a.median_wait_s, a.p95_wait_s), (0.0, 20.0));
        // Slowdowns: A1 1, A2 (20 + 10) / 10 = 3, B1 2; both users' means are 2.
        assert_eq!(
            (a.mean_slowdown, a.median_slowdown, a.p95_slowdown),
            (2.0, 1.0, 3.0)
        );
        assert_eq!(b.mean_slowdown, 2.0);
        assert_eq!(result.jain_slowdown, 1.0);
        // min(1, 1.0) and 0.0: (1 + 0)² / (2 × (1² + 0²)).
        assert_eq!(result.jain_service, 0.5);
        assert_eq!(result.time_below_share, 20.0 / 30.0);
        assert_eq!(result.mean_wait_s, 10.0);
        // Mean shares 2/3 and 1/3: (1)² / (2 × (4/9 + 1/9)) = 0.9.
        assert!((result.jain_dominant_share - 0.9).abs() < 1e-12);
    }

    #[test]
    fn nearest_rank_percentile() {
        let v: Vec<f32> = (1..=100).map(|x| x as f32).collect();
        assert_eq!(percentile(v.clone(), 0.95), 95.0);
        assert_eq!(percentile(v, 1.0), 100.0);
        assert_eq!(percentile(vec![], 0.95), 0.0);
    }
}
