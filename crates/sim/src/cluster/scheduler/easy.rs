//! EASY backfilling: one reservation per pass.

use super::{Reservations, Scheduler, SchedulerEntry, SchedulingPass};
use std::sync::Arc;

/// `--scheduler easy`.
pub(super) const EASY: SchedulerEntry = SchedulerEntry {
    name: "easy",
    about:
        "EASY backfilling: the first blocked job is reserved a start, later jobs may not delay it",
    build: |_| Arc::new(Easy),
};

/// EASY backfilling (Lifka's, as Slurm, Maui and the Alea simulator run it): jobs start in the
/// policy's order while they fit; the first that does not gets a reservation at the earliest
/// time enough resources free up by the running jobs' walltimes; every later job may start now
/// only if it does not delay that reservation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Easy;

impl Scheduler for Easy {
    fn reservations(&self) -> Reservations {
        Reservations::ForThePass
    }

    fn pass(&self, pass: &mut dyn SchedulingPass) {
        let mut reserved = false;
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            if !reserved {
                reserved = pass.reserve(user);
            }
            if pass.full() {
                break;
            }
            pass.pass_over(user);
        }
    }
}
