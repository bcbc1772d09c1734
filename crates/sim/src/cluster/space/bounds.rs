//! What the searches of one scheduling pass have already learnt: before which time a request
//! cannot start. A backfill cycle asks the same question for job after job (a site's users
//! submit the same shape by the dozen), and while the availability profile only gains use, no
//! answer can come earlier than one already found for the same request for no longer.

use super::*;
use rustc_hash::{FxHashMap, FxHasher};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

/// Lower bounds on starts, valid while the availability profile only gains use and the fences
/// stay up: [`Space`] forgets them when either stops holding.
#[derive(Debug, Clone, Default)]
pub(super) struct Bounds {
    /// By a hash of the request, each request searched with its staircase.
    known: FxHashMap<u64, Vec<(Request, Staircase)>>,
}

/// What is known of one request: by length, the time no start of it for that long or longer
/// comes before. Only bounds no shorter length already beats are kept, so lengths and times
/// rise together and a length's bound is that of the longest length kept no longer than it.
type Staircase = BTreeMap<u64, Time>;

impl Bounds {
    /// The latest time before which `request` cannot start for `length` or longer, by what is
    /// known (`Time::ZERO` when nothing is).
    pub(super) fn start_at_least(&self, request: &Request, length: u64) -> Time {
        let mut known = self.known.get(&key(request)).into_iter().flatten();
        let Some((_, stairs)) = known.find(|(known, _)| known == request) else {
            return Time::ZERO;
        };
        bound(stairs, length)
    }

    /// Learns that `request` cannot start for `length` before `at`.
    pub(super) fn learn(&mut self, request: &Request, length: u64, at: Time) {
        let known = self.known.entry(key(request)).or_default();
        let stairs = match known.iter().position(|(known, _)| known == request) {
            Some(i) => &mut known[i].1,
            None => {
                known.push((request.clone(), Staircase::new()));
                &mut known.last_mut().expect("just pushed").1
            }
        };
        if bound(stairs, length) >= at {
            return;
        }
        // Longer lengths whose bounds this one now beats are dropped.
        let beaten: Vec<u64> = (stairs.range(length..))
            .take_while(|(_, known_at)| **known_at <= at)
            .map(|(l, _)| *l)
            .collect();
        for l in &beaten {
            stairs.remove(l);
        }
        stairs.insert(length, at);
    }

    /// Forgets every bound: the profile lost use, or a fence came down.
    pub(super) fn forget(&mut self) {
        self.known.clear();
    }
}

/// The bound `stairs` gives a start for `length`.
fn bound(stairs: &Staircase, length: u64) -> Time {
    (stairs.range(..=length).next_back()).map_or(Time::ZERO, |(_, at)| *at)
}

/// A hash of everything a request asks ([`Request::key`]), the same for equal ones.
fn key(request: &Request) -> u64 {
    let mut hasher = FxHasher::default();
    request.key().hash(&mut hasher);
    hasher.finish()
}
