//! Smallest first (FIFO by size): the waiting user whose next task is smallest goes first —
//! size being the task's dominant share — and among equal sizes, the one that came first.

use super::ordered::Ordered;
use super::{check_holdings, Head, RankError, Ranker, Share};
use crate::livetree::LiveTreeCounters;
use crate::model::Time;
use crate::policy::PriorityKey;

/// Waiting users by the size of their next task, then by its arrival.
#[derive(Debug, Clone)]
pub struct SmallestFirst {
    inner: Ordered<(PriorityKey, Time, u64)>,
}

/// The ranker for `shares.len()` users (sizes ignore holdings, resources and weights).
pub fn smallest_first(_resources: usize, shares: &[Share]) -> Box<dyn Ranker> {
    Box::new(SmallestFirst {
        inner: Ordered::new(shares.len()),
    })
}

/// The key: size, arrival, sequence.
fn size(_: u32, _: &[f64], head: &Head) -> (PriorityKey, Time, u64) {
    (PriorityKey(head.size), head.arrival, head.seq)
}

impl Ranker for SmallestFirst {
    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        self.inner.advance(now)
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        check_holdings(client, holdings, self.inner.clients(), None)?;
        self.inner.update(client, holdings, head, size);
        Ok(())
    }

    fn first(&self) -> Option<u32> {
        self.inner.first()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        self.inner.iter()
    }

    /// The size of the user's next task.
    fn priority(&self, client: u32) -> Option<f64> {
        Some(self.inner.key(client)?.0 .0)
    }

    fn set_aside(&mut self, client: u32) {
        self.inner.set_aside(client);
    }

    fn restore(&mut self) {
        self.inner.restore(size);
    }

    fn livetree(&self) -> Option<LiveTreeCounters> {
        None
    }
}
