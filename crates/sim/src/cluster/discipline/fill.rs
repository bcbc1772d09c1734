//! Progressive filling, the SDRF paper's simulator: no reservations.

use super::{Discipline, Pass, Reservations, Scheduler};
use fairshare_core::alloc::tasks::Blocking;
use std::sync::Arc;

/// `--scheduler fill`.
pub(super) const FILL: Scheduler = Scheduler {
    name: "fill",
    about: "Progressive filling in the policy's order (the SDRF paper's simulator; --rule says what a blocked job does)",
    build: |blocking| Arc::new(Fill { blocking }),
};

/// Progressive filling (SDRF's Algorithm 1): serve the first user's next task while it fits;
/// when it does not, stop (head-of-line, the paper's rule) or skip that user for the pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill {
    /// What happens when the chosen user's task does not fit.
    pub blocking: Blocking,
}

impl Discipline for Fill {
    fn reservations(&self) -> Reservations {
        Reservations::None
    }

    fn pass(&self, pass: &mut dyn Pass) {
        while let Some(user) = pass.first() {
            if pass.start(user) {
                continue;
            }
            match self.blocking {
                Blocking::HeadOfLine => break,
                Blocking::Skip => pass.set_aside(user),
            }
        }
    }
}
