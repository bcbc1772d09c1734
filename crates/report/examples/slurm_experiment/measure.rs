//! What the tables measure of a run's jobs: order agreement between two runs or a run and
//! its prediction, start errors, waits, shares, utilisation and start orders, apart from how
//! the tables lay them out.

use crate::{Job, Overlaps, Run, TIE_S};
use std::collections::BTreeMap;

/// The least and the greatest of `values` (non-negative here: times, waits, percentages).
pub(super) fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, 0.0), |(low, high), v| {
        (low.min(v), high.max(v))
    })
}

/// The jobs that ran in both of two runs of one workload, paired by their rank in the dump.
pub(super) fn ran_in_both(a: &[Job], b: &[Job]) -> (Vec<Job>, Vec<Job>) {
    let by_rank: BTreeMap<usize, &Job> = b.iter().map(|j| (j.rank, j)).collect();
    a.iter()
        .filter_map(|x| Some((x.clone(), (*by_rank.get(&x.rank)?).clone())))
        .unzip()
}

/// How many jobs `predicted` put on as many nodes as `real` ran on.
pub(super) fn same_nodes(real: &[Job], predicted: &[Job]) -> usize {
    let pairs = real.iter().zip(predicted);
    pairs.filter(|(r, p)| r.nodes == p.nodes).count()
}

pub(super) fn first_submit(jobs: &[Job]) -> f64 {
    jobs.iter().map(|j| j.submit).fold(f64::INFINITY, f64::min)
}

pub(super) fn last_end(jobs: &[Job]) -> f64 {
    jobs.iter().map(|j| j.end).fold(f64::NEG_INFINITY, f64::max)
}

pub(super) fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// `user`'s CPU-seconds within `[from, to)` over the processors' (`cpus` × the length).
pub(super) fn share(jobs: &[Job], user: &str, from: f64, to: f64, cpus: f64) -> f64 {
    let held: f64 = jobs
        .iter()
        .filter(|j| j.user == user)
        .map(|j| (j.end.min(to) - j.start.max(from)).max(0.0) * j.cpus)
        .sum();
    held / (cpus * (to - from))
}

/// `user`'s mean wait among `jobs` (NaN when the user has none).
pub(super) fn mean_wait(jobs: &[Job], user: &str) -> f64 {
    mean(jobs.iter().filter(|j| j.user == user).map(Job::wait))
}

/// The value below which 90 % of `values` fall (nearest rank).
pub(super) fn p90(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = (0.9 * values.len() as f64).ceil() as usize;
    values[rank.max(1) - 1]
}

/// The fraction of `cpus` the jobs held from the first submission to the last end.
pub(super) fn utilisation(jobs: &[Job], cpus: f64) -> f64 {
    let (from, to) = (first_submit(jobs), last_end(jobs));
    let held: f64 = jobs.iter().map(|j| (j.end - j.start) * j.cpus).sum();
    held / (cpus * (to - from))
}

/// How many users' mean waits the prediction gets within 10 % or 30 s, of the users with jobs.
pub(super) fn users_within(run: &Run) -> (usize, usize) {
    let users: std::collections::BTreeSet<&str> =
        run.real.iter().map(|j| j.user.as_str()).collect();
    let close = users.iter().filter(|u| {
        let (real, predicted) = (mean_wait(&run.real, u), mean_wait(&run.predicted, u));
        (real - predicted).abs() <= (0.1 * real).max(30.0)
    });
    (close.count(), users.len())
}

pub(super) fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// How far one run's starts are from another's (or from the prediction), job by job.
pub(super) fn start_gaps(a: &[Job], b: &[Job]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x.start - y.start).abs())
        .collect()
}

/// How the prediction orders the pairs of jobs of different users beside the real order.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Agreement {
    /// Pairs not tied in the real order.
    pub(super) pairs: usize,
    /// Of those, ordered alike (a tie in the prediction counts half).
    pub(super) alike: f64,
    /// Pairs whose jobs both waited at once in the real run.
    pub(super) contested: usize,
    /// Of those, ordered alike.
    pub(super) contested_alike: f64,
}

pub(super) fn agreement(real: &[Job], predicted: &[Job], overlaps: &Overlaps) -> Agreement {
    let mut a = Agreement::default();
    for i in 0..real.len() {
        for j in i + 1..real.len() {
            if real[i].user == real[j].user {
                continue;
            }
            let order = |x: f64, y: f64| match x - y {
                d if d.abs() < TIE_S => 0,
                d if d < 0.0 => -1,
                _ => 1,
            };
            let r = order(real[i].start, real[j].start);
            if r == 0 {
                continue;
            }
            let p = order(predicted[i].start, predicted[j].start);
            let score = match p {
                0 => 0.5,
                p if p == r => 1.0,
                _ => 0.0,
            };
            a.pairs += 1;
            a.alike += score;
            let first_start = real[i].start.min(real[j].start);
            let waited_together = real[i].submit < first_start && real[j].submit < first_start;
            if waited_together && overlaps.contend(&real[i].partition, &real[j].partition) {
                a.contested += 1;
                a.contested_alike += score;
            }
        }
    }
    a
}

/// The jobs' users in the order they started (ties by job order), one letter each.
fn start_order(jobs: &[Job]) -> Vec<char> {
    let mut order: Vec<(f64, usize)> = jobs.iter().enumerate().map(|(i, j)| (j.start, i)).collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order.iter().map(|&(_, i)| initial(&jobs[i].user)).collect()
}

/// Two start orders line by line, 60 jobs a line in groups of ten.
pub(super) fn start_orders(real: &[Job], predicted: &[Job]) -> String {
    let groups = |letters: &[char]| {
        letters
            .chunks(10)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (real, predicted) = (start_order(real), start_order(predicted));
    real.chunks(60)
        .zip(predicted.chunks(60))
        .map(|(r, p)| format!("real    {}\nreplay  {}\n", groups(r), groups(p)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether Slurm started the contested pairs of jobs of different users (in one partition) in
/// the order of the priorities it held for them (at the last sample in which both waited; pairs whose
/// priorities were equal there, or that started together, left out).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct FactorOrder {
    /// Pairs whose first start was by the main scheduler.
    pub(super) main: usize,
    /// Of those, started in priority order.
    pub(super) main_alike: usize,
    /// Pairs whose first start was a backfill.
    pub(super) backfill: usize,
    /// Of those, started in priority order.
    pub(super) backfill_alike: usize,
}

pub(super) fn factor_order(run: &Run) -> FactorOrder {
    let real = &run.real;
    let mut f = FactorOrder::default();
    for i in 0..real.len() {
        for j in i + 1..real.len() {
            let (x, y) = (&real[i], &real[j]);
            let first_start = x.start.min(y.start);
            if x.user == y.user
                || !run.overlaps.contend(&x.partition, &y.partition)
                || (x.start - y.start).abs() < TIE_S
                || x.submit >= first_start
                || y.submit >= first_start
            {
                continue;
            }
            let both = run
                .samples
                .iter()
                .rev()
                .find_map(|s| Some((*s.get(&x.id)?, *s.get(&y.id)?)));
            let Some((px, py)) = both else { continue };
            if px == py {
                continue;
            }
            let alike = usize::from((px > py) == (x.start < y.start));
            let first = if x.start < y.start { x } else { y };
            if first.backfilled {
                f.backfill += 1;
                f.backfill_alike += alike;
            } else {
                f.main += 1;
                f.main_alike += alike;
            }
        }
    }
    f
}

/// A user's letter in the start orders.
pub(super) fn initial(user: &str) -> char {
    user.chars().next().unwrap_or('?').to_ascii_uppercase()
}
