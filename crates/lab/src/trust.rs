//! How far a replay of a Slurm dump can be trusted: the site's own policy replayed (the
//! baseline) set beside what really happened, job by job. A what-if is worth reading only as
//! far as its baseline reproduces the record, so these figures come first.
//!
//! The main figure is the *contested order*: of the pairs of jobs of different users that
//! really waited at once for the same nodes (so their order was the scheduler's choice), the
//! fraction the replay starts in the real order. On a 16-node Slurm, two real runs of one
//! workload agree with each other on 90–95 % of these pairs (docs/slurm-prediction.md): that
//! is the most a prediction can be asked for.

use fairshare_core::model::Time;
use fairshare_sim::cluster::{JobOutcome, JobState};
use serde::Serialize;

/// Starts closer than this, in seconds, are a tie: sacct records whole seconds.
pub const TIE_S: f64 = 0.5;

/// Pair comparisons made at most; past it, the pairs of one first-started job in every few
/// are compared, and the figure says so.
pub const MOST_PAIRS: u64 = 100_000_000;

/// One job as it ran and as the baseline replayed it, times in seconds of the dump's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compared {
    /// Its user's index.
    pub user: u32,
    /// Its partition's index, when the dump names one.
    pub partition: Option<u32>,
    /// When it was submitted.
    pub submit: f64,
    /// When it really started.
    pub recorded: f64,
    /// When the replay started it.
    pub predicted: f64,
}

impl Compared {
    /// `job` when it both really started and started in the replay (a job cancelled while it
    /// waited, or one the replay never started, has no start to compare).
    pub fn of(job: &JobOutcome) -> Option<Compared> {
        let seconds = |t: Time| t.as_micros() as f64 / 1e6;
        let started = matches!(job.state, JobState::Finished | JobState::Unfinished);
        let (recorded, _) = job.recorded.filter(|_| started)?;
        Some(Compared {
            user: job.user,
            partition: job.partition,
            submit: seconds(job.submit),
            recorded: seconds(recorded),
            predicted: seconds(job.start?),
        })
    }
}

/// One user's mean wait, as recorded and as predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserWait {
    /// The user.
    pub user: String,
    /// Its jobs compared.
    pub jobs: usize,
    /// Mean wait in the record, seconds.
    pub recorded_mean_wait_s: f64,
    /// Mean wait in the baseline's replay, seconds.
    pub predicted_mean_wait_s: f64,
    /// Whether the prediction is within 10 % or 30 s of the record.
    pub within: bool,
}

/// The baseline against the record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trust {
    /// Jobs that started both in the record and in the replay, which every figure counts.
    pub jobs: usize,
    /// Jobs of the dump left out: cancelled while they waited, still waiting when the dump was
    /// taken, or never started by the replay.
    pub left_out: usize,
    /// Contested pairs compared: jobs of different users that waited at once in partitions
    /// sharing nodes, not started in the same second.
    pub contested_pairs: u64,
    /// Of those, the fraction the replay starts in the real order (a tie in the replay counts
    /// half); `None` without a contested pair.
    pub contested_order: Option<f64>,
    /// When the pairs were too many to compare all: the pairs of one first-started job in
    /// this many were compared.
    pub sampled_one_in: Option<u64>,
    /// Median |predicted − real start|, seconds.
    pub median_start_error_s: f64,
    /// 90th percentile of |predicted − real start|, seconds (nearest rank).
    pub p90_start_error_s: f64,
    /// Each user's mean wait, recorded and predicted, by user name.
    pub users: Vec<UserWait>,
    /// The machine as it stood when the bundle's window opened, when it opens one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowStart>,
    /// The jobs of the window the replay started as the record did, because the record says
    /// what the model does not replay, by what it says: left out of every figure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<PinnedJobs>,
}

/// The jobs a replay started as the record did for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinnedJobs {
    /// What the record says of them (`ran in a reservation`).
    pub why: String,
    /// How many.
    pub jobs: usize,
    /// The first few, by their ids in the record.
    pub named: Vec<String>,
}

impl PinnedJobs {
    /// How many jobs a reason names at most.
    pub const NAMED: usize = 5;
}

/// The machine as it stood when a bundle's window opened, and the history before it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowStart {
    /// When it opened (the manifest's `since`), UTC.
    pub opens: String,
    /// Jobs running then.
    pub jobs_running: u64,
    /// The processors they held.
    pub processors_held: f64,
    /// The cluster's processors.
    pub processors: f64,
    /// Jobs waiting then.
    pub jobs_waiting: u64,
    /// Jobs eligible before it opened (running or waiting then, or ended before it): replayed
    /// as the record has them, or held until it opened, and left out of every figure.
    pub jobs_before: usize,
    /// The jobs the record started before it opened, charged to the accounting as they ran.
    pub history_jobs: usize,
    /// Their processor-hours before it opened.
    pub history_processor_hours: f64,
    /// Where the bundle's history begins (the manifest's `history_since`), when it holds one.
    pub history_since: Option<String>,
}

impl Trust {
    /// The figures of `jobs`, whose users are named by `users`; `contend` says whether jobs of
    /// two partitions compete for nodes.
    pub fn of(
        jobs: &[Compared],
        left_out: usize,
        users: &[String],
        contend: &dyn Fn(Option<u32>, Option<u32>) -> bool,
    ) -> Trust {
        let mut errors: Vec<f64> = jobs
            .iter()
            .map(|j| (j.predicted - j.recorded).abs())
            .collect();
        let contested = contested_order(jobs, contend);
        Trust {
            jobs: jobs.len(),
            left_out,
            contested_pairs: contested.pairs,
            contested_order: (contested.pairs > 0)
                .then(|| contested.alike / contested.pairs as f64),
            sampled_one_in: (contested.stride > 1).then_some(contested.stride),
            median_start_error_s: rank(&mut errors, 0.5),
            p90_start_error_s: rank(&mut errors, 0.9),
            users: user_waits(jobs, users),
            window: None,
            pinned: Vec::new(),
        }
    }

    /// How many users' mean waits are predicted within 10 % or 30 s.
    pub fn users_within(&self) -> usize {
        self.users.iter().filter(|u| u.within).count()
    }
}

/// The value at fraction `q` of `values` by nearest rank (NaN when empty).
fn rank(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let at = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    *values.select_nth_unstable_by(at, f64::total_cmp).1
}

/// Each user's mean waits, in the order of `users`, users without a compared job left out.
fn user_waits(jobs: &[Compared], users: &[String]) -> Vec<UserWait> {
    let mut sums = vec![(0usize, 0.0, 0.0); users.len()];
    for job in jobs {
        let sum = &mut sums[job.user as usize];
        *sum = (
            sum.0 + 1,
            sum.1 + (job.recorded - job.submit),
            sum.2 + (job.predicted - job.submit),
        );
    }
    let waits = users.iter().zip(sums).filter(|(_, (n, ..))| *n > 0);
    waits
        .map(|(user, (n, recorded, predicted))| {
            let (recorded, predicted) = (recorded / n as f64, predicted / n as f64);
            UserWait {
                user: user.clone(),
                jobs: n,
                recorded_mean_wait_s: recorded,
                predicted_mean_wait_s: predicted,
                within: (recorded - predicted).abs() <= (0.1 * recorded).max(30.0),
            }
        })
        .collect()
}

/// The contested pairs counted and how many the replay orders alike.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Contested {
    pairs: u64,
    alike: f64,
    /// The pairs of one first-started job in this many were compared.
    stride: u64,
}

/// Sweeps the jobs in the order they really started, keeping the set of jobs waiting then:
/// each job that waited is paired with the jobs still waiting when it started (the later
/// starts of the pairs that waited at once), so the cost is the pairs themselves, not all
/// pairs. When they are more than [`MOST_PAIRS`], only every `stride`th first start's pairs
/// are compared.
fn contested_order(
    jobs: &[Compared],
    contend: &dyn Fn(Option<u32>, Option<u32>) -> bool,
) -> Contested {
    let total = sweep(jobs, &mut |_, _| {});
    let stride = total.div_ceil(MOST_PAIRS).max(1);
    let mut c = Contested {
        stride,
        ..Contested::default()
    };
    let mut first = 0u64;
    sweep(jobs, &mut |x, waiting| {
        first += 1;
        if !(first - 1).is_multiple_of(stride) {
            return;
        }
        let x = &jobs[x];
        for y in waiting.iter().map(|&y| &jobs[y]) {
            if y.user == x.user
                || y.recorded - x.recorded < TIE_S
                || !contend(x.partition, y.partition)
            {
                continue;
            }
            c.pairs += 1;
            c.alike += match y.predicted - x.predicted {
                d if d.abs() < TIE_S => 0.5,
                d if d > 0.0 => 1.0,
                _ => 0.0,
            };
        }
    });
    c
}

/// Calls `visit` with each job that waited, in the order of the real starts (ties by
/// submission, then by place), and the jobs waiting when it started; returns the sum of the
/// waiting sets' sizes.
fn sweep(jobs: &[Compared], visit: &mut dyn FnMut(usize, &[usize])) -> u64 {
    let order = |key: fn(&Compared) -> (f64, f64)| {
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by(|&a, &b| {
            let (ka, kb) = (key(&jobs[a]), key(&jobs[b]));
            (ka.0.total_cmp(&kb.0))
                .then(ka.1.total_cmp(&kb.1))
                .then(a.cmp(&b))
        });
        order
    };
    let by_start = order(|j| (j.recorded, j.submit));
    let by_submit = order(|j| (j.submit, j.recorded));
    let mut waiting: Vec<usize> = Vec::new();
    // Where each job is in `waiting`: NOT_YET before its submission, DONE once started.
    const NOT_YET: usize = usize::MAX;
    const DONE: usize = usize::MAX - 1;
    let mut place = vec![NOT_YET; jobs.len()];
    let (mut next, mut total) = (0, 0u64);
    for &x in &by_start {
        let now = jobs[x].recorded;
        while next < by_submit.len() && jobs[by_submit[next]].submit < now {
            let y = by_submit[next];
            if place[y] == NOT_YET {
                place[y] = waiting.len();
                waiting.push(y);
            }
            next += 1;
        }
        if place[x] == NOT_YET {
            place[x] = DONE;
            continue;
        }
        let at = place[x];
        waiting.swap_remove(at);
        if let Some(&moved) = waiting.get(at) {
            place[moved] = at;
        }
        place[x] = DONE;
        total += waiting.len() as u64;
        visit(x, &waiting);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every pair, as the experiment's first version counted them: the obviously right one.
    fn all_pairs(
        jobs: &[Compared],
        contend: &dyn Fn(Option<u32>, Option<u32>) -> bool,
    ) -> (u64, f64) {
        let (mut pairs, mut alike) = (0, 0.0);
        for i in 0..jobs.len() {
            for j in i + 1..jobs.len() {
                let (a, b) = (&jobs[i], &jobs[j]);
                let real = b.recorded - a.recorded;
                if a.user == b.user || real.abs() < TIE_S || !contend(a.partition, b.partition) {
                    continue;
                }
                let first = a.recorded.min(b.recorded);
                if !(a.submit < first && b.submit < first) {
                    continue;
                }
                let predicted = b.predicted - a.predicted;
                pairs += 1;
                alike += match predicted {
                    d if d.abs() < TIE_S => 0.5,
                    d if (d > 0.0) == (real > 0.0) => 1.0,
                    _ => 0.0,
                };
            }
        }
        (pairs, alike)
    }

    fn job() -> impl Strategy<Value = Compared> {
        (
            0u32..4,
            prop::option::of(0u32..3),
            0u32..40,
            0u32..40,
            0u32..80,
        )
            .prop_map(|(user, partition, submit, wait, predicted)| Compared {
                user,
                partition,
                submit: f64::from(submit),
                recorded: f64::from(submit + wait),
                predicted: f64::from(submit + predicted),
            })
    }

    proptest! {
        /// The sweep counts the same contested pairs, ordered alike as often, as a comparison of
        /// every pair.
        #[test]
        fn the_sweep_counts_what_every_pair_counts(jobs in prop::collection::vec(job(), 0..60)) {
            let contend = |a: Option<u32>, b: Option<u32>| a == b || a.zip(b) == Some((0, 1)) || a.zip(b) == Some((1, 0));
            let c = contested_order(&jobs, &contend);
            prop_assert_eq!(c.stride, 1);
            prop_assert_eq!((c.pairs, c.alike), all_pairs(&jobs, &contend));
        }
    }

    #[test]
    fn a_prediction_equal_to_the_record_agrees_fully() {
        let job = |user, submit: f64, start: f64| Compared {
            user,
            partition: None,
            submit,
            recorded: start,
            predicted: start,
        };
        let jobs = [
            job(0, 0.0, 10.0),
            job(1, 1.0, 20.0),
            job(0, 2.0, 30.0),
            job(1, 40.0, 41.0),
        ];
        let users = ["a".to_owned(), "b".to_owned()];
        let trust = Trust::of(&jobs, 1, &users, &|a, b| a == b);
        // (0,1), (1,2): the others did not wait together or share a user.
        assert_eq!(
            (trust.contested_pairs, trust.contested_order),
            (2, Some(1.0))
        );
        assert_eq!(
            (trust.median_start_error_s, trust.p90_start_error_s),
            (0.0, 0.0)
        );
        assert_eq!(trust.users_within(), 2);
        assert_eq!(trust.users[0].recorded_mean_wait_s, 19.0);
        let swapped = [
            jobs[0],
            Compared {
                predicted: 5.0,
                ..jobs[1]
            },
            jobs[2],
            jobs[3],
        ];
        let trust = Trust::of(&swapped, 0, &users, &|a, b| a == b);
        assert_eq!(trust.contested_order, Some(0.5));
        assert_eq!(trust.p90_start_error_s, 15.0);
    }
}
