//! Progress of long work, told to a Python callable (which moves a tqdm bar) from the threads
//! that do the work: they take the GIL only every 1/200 of the whole, so a replay's speed does
//! not depend on whether anyone watches.

use fairshare_lab::runs::{Lane, Lanes};
use pyo3::prelude::*;
use std::sync::Mutex;

/// Where progress goes, and how much of it has not been told yet.
pub struct Progress {
    callback: Option<PyObject>,
    total: u64,
    step: u64,
    state: Mutex<State>,
}

/// What has been done and not yet told, and the first error the callback raised.
#[derive(Default)]
struct State {
    untold: u64,
    error: Option<String>,
}

impl Progress {
    /// Progress towards `total` units, told to `callback` (called with the units done since
    /// its last call and the total).
    pub fn new(callback: Option<PyObject>, total: u64) -> Progress {
        Progress {
            callback,
            total,
            step: total.div_ceil(200).max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// `done` more units are done.
    pub fn advance(&self, done: u64) {
        if self.callback.is_none() || done == 0 {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.untold += done;
        if state.untold >= self.step {
            self.tell(&mut state);
        }
    }

    /// Tells what is left; the callback's first error, if it raised one.
    pub fn finish(&self) -> Result<(), String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.tell(&mut state);
        state.error.take().map_or(Ok(()), Err)
    }

    /// Calls the callback with what is untold, unless it raised before.
    fn tell(&self, state: &mut State) {
        let (Some(callback), None) = (&self.callback, &state.error) else {
            return;
        };
        let untold = std::mem::take(&mut state.untold);
        if untold == 0 {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = callback.call1(py, (untold, self.total)) {
                state.error = Some(format!("progress callback: {e}"));
            }
        });
    }
}

/// [`Progress`] as the lanes of [`run_all`](fairshare_lab::runs::run_all): each run counts the
/// simulated seconds it reaches, up to `span`, as units; with a `span` of 0, one unit when it
/// ends.
pub struct ProgressLanes<'a> {
    /// Where the units go.
    pub progress: &'a Progress,
    /// A run's seconds; 0: a run is one unit.
    pub span: u64,
}

impl Lanes for ProgressLanes<'_> {
    fn open(&self, _: usize) -> Box<dyn Lane + '_> {
        Box::new(ProgressLane {
            progress: self.progress,
            span: self.span,
            seen: 0,
        })
    }
}

/// One run of [`ProgressLanes`], and the units it told.
struct ProgressLane<'a> {
    progress: &'a Progress,
    span: u64,
    seen: u64,
}

impl Lane for ProgressLane<'_> {
    fn at(&mut self, at: u64) {
        let at = at.min(self.span);
        self.progress.advance(at.saturating_sub(self.seen));
        self.seen = self.seen.max(at);
    }

    fn done(self: Box<Self>) {
        let rest = self.span.saturating_sub(self.seen);
        self.progress.advance(rest.max(u64::from(self.span == 0)));
    }
}
