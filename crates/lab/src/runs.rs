//! Many runs at once, as every experiment of the lab runs its policies (a replay's, a
//! what-if's, a sweep's cells, the cloud's): each on a thread of its own, each telling its lane
//! how far it got, each timed; the results in the order asked. The command line shows the
//! lanes as progress bars, the Python package as one callback; a run is the caller's.

use crate::LabError;
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

/// Runs `run(i, progress)` for each `i` of `0..count` in parallel, `progress` the lane
/// `lanes` opens for it, each timed: every result with the wall-clock seconds it took, in the
/// order of `i`, or an error one of them met (whichever the threads came to first).
pub fn run_all<R: Send>(
    count: usize,
    lanes: &dyn Lanes,
    run: impl Fn(usize, &mut dyn FnMut(u64)) -> Result<R, LabError> + Sync,
) -> Result<Vec<(R, f64)>, LabError> {
    (0..count)
        .into_par_iter()
        .map(|i| {
            let mut lane = lanes.open(i);
            let (result, wall_s) = timed(|| run(i, &mut |at| lane.at(at)));
            lane.done();
            Ok((result?, wall_s))
        })
        .collect()
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
    fn the_first_error_is_the_answer() {
        let written = Written(Mutex::new(Vec::new()));
        let failed = run_all(3, &written, |i, _| match i {
            1 => Err(LabError::Unusable("run 1 failed".into())),
            _ => Ok(i),
        });
        assert_eq!(failed.unwrap_err().to_string(), "run 1 failed");
    }
}
