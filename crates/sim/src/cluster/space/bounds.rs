//! What the searches of one scheduling pass have already learnt: before which time a request
//! cannot start. A backfill cycle asks the same question for job after job (a site's users
//! submit the same shape by the dozen), and while the availability profile only gains use, no
//! answer can come earlier than one already found for a request asking no more for no longer.

use super::*;

/// Lower bounds on starts, valid while the availability profile only gains use and the fences
/// stay up: [`Space`] forgets them when either stops holding.
#[derive(Debug, Clone, Default)]
pub(super) struct Bounds {
    /// Each request and length searched, with the time no start of it comes before.
    known: Vec<(Request, u64, Time)>,
}

impl Bounds {
    /// The latest time before which no request asking no more than `request` for no longer
    /// than `length` can start, by what is known (`Time::ZERO` when nothing is).
    pub(super) fn start_at_least(&self, request: &Request, length: u64) -> Time {
        self.known
            .iter()
            .filter(|(known, l, _)| *l <= length && request.asks_at_least(known))
            .map(|(_, _, at)| *at)
            .max()
            .unwrap_or(Time::ZERO)
    }

    /// Learns that `request` cannot start for `length` before `at`.
    pub(super) fn learn(&mut self, request: &Request, length: u64, at: Time) {
        let same = |(known, l, _): &&mut (Request, u64, Time)| *l == length && known == request;
        match self.known.iter_mut().find(same) {
            Some((_, _, known_at)) => *known_at = (*known_at).max(at),
            None => self.known.push((request.clone(), length, at)),
        }
    }

    /// Forgets every bound: the profile lost use, or a fence came down.
    pub(super) fn forget(&mut self) {
        self.known.clear();
    }
}
