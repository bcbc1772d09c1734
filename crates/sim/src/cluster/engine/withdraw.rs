//! Jobs their owners cancelled while they waited. A log records when (a dump's `End` of a job
//! that never started), not how long the job would have run: the replay keeps such a job
//! in its queue, where it counts for every plan and every order, until that moment, and then
//! withdraws it; a job the replay started before then ends then, at the latest
//! ([`Engine::launch`]), since its owner's cancellation comes at the same moment.

use super::{free_until, Engine};
use crate::cluster::JobState;
use fairshare_core::model::Time;
use std::cmp::Reverse;

impl Engine {
    /// When the next job that still waits is cancelled; the cancellations of jobs that have
    /// started since are dropped, so that they make no event of their own.
    pub(super) fn next_withdrawal(&mut self) -> Option<Time> {
        while let Some(&Reverse((at, seq, _))) = self.withdrawals.peek() {
            if self.cancellable.contains(&seq) {
                return Some(at);
            }
            self.withdrawals.pop();
        }
        None
    }

    /// Withdraws, at `t`, every job whose cancellation has come and that still waits.
    pub(super) fn withdraw_until(&mut self, t: Time) {
        while let Some(&Reverse((at, seq, user))) = self.withdrawals.peek() {
            if at > t {
                break;
            }
            self.withdrawals.pop();
            if self.cancellable.remove(&seq) {
                self.withdraw(user, seq);
            }
        }
    }

    /// A job that was to be cancelled has started: its cancellation no longer withdraws it.
    pub(super) fn started_before_cancellation(&mut self, seq: u64) {
        self.cancellable.remove(&seq);
    }

    /// Takes the job `seq` of `user` out of its queue, if it still waits there (one started
    /// already ends by itself).
    fn withdraw(&mut self, user: u32, seq: u64) {
        let Some(index) = self.queues[user as usize].iter().position(|j| j.seq == seq) else {
            return;
        };
        self.news = true;
        self.recorder.event();
        if let Some((t, placed)) = self.unreserve(user, index) {
            // Its reserved slot is free again: later reservations may move into it.
            let (_, end) = self.held_span(t, self.queues[user as usize][index].walltime);
            for &(node, _) in &placed {
                free_until(&mut self.freed, node, end);
            }
        }
        let Some(job) = self.queues[user as usize].remove(index) else {
            return;
        };
        self.unreserved -= 1;
        self.smallest.remove(&job.request);
        if !job.pinned {
            self.recorder.withdrawn(user);
        }
        if let Some(mut outcome) = job.outcome {
            outcome.state = JobState::Cancelled;
            outcome.waited_until = self.now;
            self.settled.push(*outcome);
        }
        if index == 0 {
            self.rerank(user);
        }
    }
}
