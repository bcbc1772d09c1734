//! What the searches of one scheduling pass have already learnt: before which time a request
//! cannot start. A backfill cycle asks the same question for job after job (a site's users
//! submit the same shape by the dozen), and while the availability profile only gains use, no
//! answer can come earlier than one already found for the same request for no longer.

use super::*;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Lower bounds on starts, valid while the availability profile only gains use and the fences
/// stay up: [`Space`] forgets them when either stops holding.
#[derive(Debug, Clone, Default)]
pub(super) struct Bounds {
    /// By a hash of the request, each request and length searched, with the time no start of
    /// it comes before.
    known: HashMap<u64, Vec<(Request, u64, Time)>>,
}

impl Bounds {
    /// The latest time before which `request` cannot start for `length` or longer, by what is
    /// known (`Time::ZERO` when nothing is).
    pub(super) fn start_at_least(&self, request: &Request, length: u64) -> Time {
        let Some(known) = self.known.get(&key(request)) else {
            return Time::ZERO;
        };
        known
            .iter()
            .filter(|(known, l, _)| *l <= length && known == request)
            .map(|(_, _, at)| *at)
            .max()
            .unwrap_or(Time::ZERO)
    }

    /// Learns that `request` cannot start for `length` before `at`.
    pub(super) fn learn(&mut self, request: &Request, length: u64, at: Time) {
        let known = self.known.entry(key(request)).or_default();
        let same = |(known, l, _): &&mut (Request, u64, Time)| *l == length && known == request;
        match known.iter_mut().find(same) {
            Some((_, _, known_at)) => *known_at = (*known_at).max(at),
            None => known.push((request.clone(), length, at)),
        }
    }

    /// Forgets every bound: the profile lost use, or a fence came down.
    pub(super) fn forget(&mut self) {
        self.known.clear();
    }
}

/// A hash of everything a request asks (its amounts by their bits), the same for equal ones.
fn key(request: &Request) -> u64 {
    let mut hasher = DefaultHasher::new();
    let (kind, count) = match &request.shape {
        Shape::Nodes { nodes, .. } => (0u8, *nodes),
        Shape::Spread { units, .. } => (1u8, *units),
    };
    (kind, count, request.exclusive).hash(&mut hasher);
    request
        .piece()
        .iter()
        .for_each(|a| a.to_bits().hash(&mut hasher));
    request.eligible.hash(&mut hasher);
    hasher.finish()
}
