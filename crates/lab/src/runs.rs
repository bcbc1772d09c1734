//! Many runs at once, as every experiment of the lab runs its policies (a replay's, a
//! what-if's, a sweep's cells, the cloud's): each on a thread of its own, each telling its lane
//! how far it got, each timed; the results in the order asked. The command line shows the
//! lanes as progress bars, the Python package as one callback; a run is the caller's.

use crate::jobs::JobParts;
use crate::{LabError, ReplayPlan};
use fairshare_sim::stats::timed;
use rayon::prelude::*;

/// Where one run tells how far it got.
pub trait Lane: Send {
    /// It has reached `at` (simulated seconds, or steps).
    fn at(&mut self, at: u64);

    /// It has ended.
    fn done(self: Box<Self>);
}

/// Where every run's progress goes: a lane for each, opened as the run starts.
pub trait Lanes: Sync {
    /// The lane of run `i`.
    fn open(&self, i: usize) -> Box<dyn Lane + '_>;
}

/// Runs that must run one after another on one thread, and what that thread's work runs
/// within (a state kept for the thread's whole length, as a Python thread state is).
pub struct OneThread<'a> {
    /// The runs, in the order they run.
    pub runs: Vec<usize>,
    /// Runs the work it is given, on the calling thread.
    pub within: &'a (dyn Fn(&mut (dyn FnMut() + Send)) + Sync),
}

/// Runs `run(i, progress)` for each `i` of `0..count` in parallel, `progress` the lane
/// `lanes` opens for it, each timed: every result with the wall-clock seconds it took, in the
/// order of `i`, or the error of the first run (in that order) that failed.
pub fn run_all<R: Send>(
    count: usize,
    lanes: &dyn Lanes,
    run: impl Fn(usize, &mut dyn FnMut(u64)) -> Result<R, LabError> + Sync,
) -> Result<Vec<(R, f64)>, LabError> {
    run_all_with(count, lanes, None, run)
}

/// One run's place, and its result with the seconds it took, or its error.
type Ran<R> = (usize, Result<(R, f64), LabError>);

/// [`run_all`], the runs of `one_thread` (those of `0..count`, each once) one after another on
/// one thread within its work, beside the others; refused when its work leaves one undone.
pub fn run_all_with<R: Send>(
    count: usize,
    lanes: &dyn Lanes,
    one_thread: Option<OneThread<'_>>,
    run: impl Fn(usize, &mut dyn FnMut(u64)) -> Result<R, LabError> + Sync,
) -> Result<Vec<(R, f64)>, LabError> {
    let one = |i: usize| {
        let mut lane = lanes.open(i);
        let (result, wall_s) = timed(|| run(i, &mut |at| lane.at(at)));
        lane.done();
        (i, result.map(|result| (result, wall_s)))
    };
    let mut together = Vec::new();
    let mut within = None;
    if let Some(OneThread { runs, within: work }) = one_thread {
        let mut seen = vec![false; count];
        together = (runs.into_iter())
            .filter(|&i| i < count && !std::mem::replace(&mut seen[i], true))
            .collect();
        within = Some(work).filter(|_| !together.is_empty());
    }
    let mut groups: Vec<Vec<usize>> = (0..count)
        .filter(|i| !together.contains(i))
        .map(|i| vec![i])
        .collect();
    groups.extend((!together.is_empty()).then_some(together));
    let last = groups.len().saturating_sub(1);
    let done: Vec<Vec<Ran<R>>> = (groups.par_iter().enumerate())
        .map(|(g, group)| {
            let mut results = Vec::with_capacity(group.len());
            let mut work = || results = group.iter().map(|&i| one(i)).collect();
            match within.filter(|_| g == last) {
                Some(within) => within(&mut work),
                None => work(),
            }
            results
        })
        .collect();
    let mut done: Vec<Ran<R>> = done.into_iter().flatten().collect();
    if done.len() != count {
        return Err(LabError::Unusable(format!(
            "{} of {count} runs were left undone by the work of their thread",
            count - done.len()
        )));
    }
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, ran)| ran).collect()
}

/// [`run_all_with`] of runs of `plan` that list their jobs in `parts`, when given (`run` is
/// handed them); once every run is done, the per-job table is joined from the parts, in the
/// runs' order.
pub fn run_all_listing<R: Send>(
    plan: &ReplayPlan,
    count: usize,
    lanes: &dyn Lanes,
    one_thread: Option<OneThread<'_>>,
    parts: Option<JobParts>,
    run: impl Fn(usize, Option<&JobParts>, &mut dyn FnMut(u64)) -> Result<R, LabError> + Sync,
) -> Result<Vec<(R, f64)>, LabError> {
    let ran = run_all_with(count, lanes, one_thread, |i, progress| {
        run(i, parts.as_ref(), progress)
    })?;
    if let Some(parts) = parts {
        parts.join(plan, count)?;
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Lanes that write down what each run told them.
    struct Written(Mutex<Vec<(usize, Option<u64>)>>);

    struct Writing<'a>(usize, &'a Written);

    impl Lane for Writing<'_> {
        fn at(&mut self, at: u64) {
            self.1 .0.lock().unwrap().push((self.0, Some(at)));
        }

        fn done(self: Box<Self>) {
            self.1 .0.lock().unwrap().push((self.0, None));
        }
    }

    impl Lanes for Written {
        fn open(&self, i: usize) -> Box<dyn Lane + '_> {
            Box::new(Writing(i, self))
        }
    }

    #[test]
    fn results_come_in_order_and_every_lane_hears_its_run_then_its_end() {
        let written = Written(Mutex::new(Vec::new()));
        let ran = run_all(5, &written, |i, progress| {
            progress(i as u64 * 10);
            Ok(i * i)
        })
        .unwrap();
        let squares: Vec<usize> = ran.iter().map(|(r, _)| *r).collect();
        assert_eq!(squares, [0, 1, 4, 9, 16]);
        assert!(ran.iter().all(|(_, wall_s)| *wall_s >= 0.0));
        let mut told = written.0.into_inner().unwrap();
        told.sort();
        let each = |i: usize| [(i, None), (i, Some(i as u64 * 10))];
        assert_eq!(told, (0..5).flat_map(each).collect::<Vec<_>>());
    }

    #[test]
    fn the_runs_of_one_thread_run_in_order_on_one_thread_within_its_work() {
        let written = Written(Mutex::new(Vec::new()));
        let entered = Mutex::new(Vec::new());
        let within = |work: &mut (dyn FnMut() + Send)| {
            entered.lock().unwrap().push(std::thread::current().id());
            work();
        };
        let one_thread = OneThread {
            runs: vec![3, 1],
            within: &within,
        };
        let threads = Mutex::new(Vec::new());
        let ran = run_all_with(5, &written, Some(one_thread), |i, _| {
            threads
                .lock()
                .unwrap()
                .push((i, std::thread::current().id()));
            Ok(i * 10)
        })
        .unwrap();
        let results: Vec<usize> = ran.iter().map(|(r, _)| *r).collect();
        assert_eq!(results, [0, 10, 20, 30, 40]);
        let entered = entered.into_inner().unwrap();
        assert_eq!(
            entered.len(),
            1,
            "the work of the one thread is entered once"
        );
        let threads = threads.into_inner().unwrap();
        let of = |run: usize| threads.iter().position(|(i, _)| *i == run).unwrap();
        assert!(of(3) < of(1), "3 then 1: {threads:?}");
        assert_eq!(threads[of(3)].1, entered[0]);
        assert_eq!(threads[of(1)].1, entered[0]);
    }

    #[test]
    fn the_first_failed_run_in_order_is_the_answer() {
        for _ in 0..20 {
            let written = Written(Mutex::new(Vec::new()));
            let failed = run_all(6, &written, |i, _| match i {
                1 | 4 => Err(LabError::Unusable(format!("run {i} failed"))),
                _ => Ok(i),
            });
            assert_eq!(failed.unwrap_err().to_string(), "run 1 failed");
        }
    }

    #[test]
    fn work_that_leaves_its_runs_undone_is_refused() {
        let written = Written(Mutex::new(Vec::new()));
        let idle = |_: &mut (dyn FnMut() + Send)| {};
        let one_thread = OneThread {
            runs: vec![2],
            within: &idle,
        };
        let refused = run_all_with(3, &written, Some(one_thread), |i, _| Ok(i));
        let message = refused.unwrap_err().to_string();
        assert_eq!(
            message,
            "1 of 3 runs were left undone by the work of their thread"
        );
    }
}
