//! Progressive filling, the SDRF paper's simulator: no reservations.

use super::{Reservations, Scheduler, SchedulerEntry, SchedulingPass};
use fairshare_core::alloc::tasks::FillRule;
use std::sync::Arc;

/// `--scheduler fill`.
pub(super) const FILL: SchedulerEntry = SchedulerEntry {
    name: "fill",
    about: "Progressive filling in the policy's order (the SDRF paper's simulator; --rule says what a blocked job does)",
    build: |settings| Arc::new(Fill {
        rule: settings.rule,
    }),
};

/// Progressive filling (SDRF's Algorithm 1): serve the first user's next task while it fits;
/// when it does not, stop (head-of-line, the paper's rule) or skip that user for the pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill {
    /// What happens when the chosen user's task does not fit.
    pub rule: FillRule,
}

impl Scheduler for Fill {
    fn reservations(&self) -> Reservations {
        Reservations::None
    }

    fn pass(&self, pass: &mut dyn SchedulingPass) {
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            match self.rule {
                FillRule::HeadOfLine => break,
                FillRule::Skip => pass.set_aside(user),
            }
        }
    }
}
