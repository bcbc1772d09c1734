//! Conservative backfilling: a reservation for every waiting job, kept until it starts.

use super::{Reservations, Scheduler, SchedulerEntry, SchedulingPass};
use std::sync::Arc;

/// `--scheduler conservative`.
pub(super) const CONSERVATIVE: SchedulerEntry = SchedulerEntry {
    name: "conservative",
    about: "Conservative backfilling: every waiting job holds a reservation none may delay",
    build: |_| Arc::new(Conservative),
};

/// Conservative backfilling (Mu'alem and Feitelson): every waiting job holds a reservation,
/// made in the policy's order when it is first met and only ever moved earlier; a job may start
/// now only if it delays no reservation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conservative;

impl Scheduler for Conservative {
    fn reservations(&self) -> Reservations {
        Reservations::UntilStart
    }

    fn pass(&self, pass: &mut dyn SchedulingPass) {
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            pass.reserve(user);
            if pass.full() && pass.unreserved() == 0 {
                break;
            }
            pass.pass_over(user);
        }
    }
}
