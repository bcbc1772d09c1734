//! Smallest first (FIFO by size): the waiting user whose next task is smallest goes first —
//! size being the task's dominant share — and among equal sizes, the one that came first. A
//! user stands by its head's size, then arrival, then sequence number.

use super::{Head, KeyedRanker, Ranker, Share};
use crate::model::Time;
use crate::priority::PriorityKey;
use std::sync::Arc;

/// The ranker for `shares.len()` users; its priority is the size of a user's next task.
pub fn smallest_first(_resources: usize, shares: &[Share]) -> Box<dyn Ranker> {
    let key = |_: u32, _: &[f64], head: &Head| (PriorityKey(head.size), head.arrival, head.seq);
    let standing = |&(size, arrival, seq): &(PriorityKey, Time, u64)| (size.0, 0.0, (arrival, seq));
    let ranker = KeyedRanker::with_key(shares.len(), Arc::new(key), |k| k.0 .0);
    Box::new(ranker.with_standing(standing).on_heads_alone())
}
