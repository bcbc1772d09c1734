//! A window cut from a site's life: the machine as it stood when the window opened. No
//! production window starts on an empty machine, so a replay of one starts the jobs the log
//! started before the window exactly as the log did (their usage charged, as the site's
//! fairshare remembered it), and holds the jobs that waited at its opening until then, with
//! their own submissions so that their age is right.

use super::Engine;
use crate::cluster::{Opened, SimError};
use fairshare_core::model::{Task, Time};

/// What the window makes of an arrival.
pub(super) enum Opening {
    /// The log started it before the window opened, or records what the replay does not
    /// model ([`Task::pinned`]): it starts then, as it did.
    Pinned(Time),
    /// It waited when the window opened: it reaches the scheduler then.
    Held(Time),
    /// It is the run's to schedule from its submission.
    Free,
}

impl Engine {
    /// What the window makes of `task`.
    pub(super) fn opening(&self, task: &Task) -> Opening {
        match (self.opens, task.start) {
            (Some(opens), Some(start)) if start < opens => Opening::Pinned(start),
            (_, Some(start)) if task.pinned.is_some() => Opening::Pinned(start),
            (Some(opens), _) if task.submit < opens => Opening::Held(opens),
            _ => Opening::Free,
        }
    }

    /// Keeps `task` until its recorded `start`.
    pub(super) fn pin(&mut self, task: Task, start: Time) {
        // Every pin kept so far, started or not: one more at each call.
        let arrival = self.pins.len() as u64 + self.pinned;
        self.pins.insert((start, arrival), task);
    }

    /// When the next pinned job starts.
    pub(super) fn next_pin(&self) -> Option<Time> {
        self.pins.first_key_value().map(|((at, _), _)| *at)
    }

    /// Starts every pinned job due at `t` on the nodes the log names; where they cannot hold
    /// it, where it fits now, and where nothing can, it waits in its queue (both counted).
    pub(super) fn start_pins(&mut self, t: Time) -> Result<(), SimError> {
        while let Some(mut entry) = self.pins.first_entry().filter(|e| e.key().0 <= t) {
            let hosts = std::mem::take(&mut entry.get_mut().hosts);
            let task = entry.remove();
            let user = task.user;
            self.pinned += 1;
            let before = self.seq;
            self.queue(task, true)?;
            if self.seq == before {
                continue; // It can never fit, and was settled so.
            }
            let queue = &self.queues[user as usize];
            let Some(index) = queue.iter().position(|p| p.seq == self.seq) else {
                continue;
            };
            let request = queue[index].request.clone();
            let placed = match self.space.on_hosts(&hosts, &request) {
                Some(placed) => Some(placed),
                None => {
                    self.pinned_elsewhere += 1;
                    self.space.fit_now(&request)
                }
            };
            if let Some(placed) = placed {
                self.launch(user, index, placed);
                self.rerank(user);
            }
        }
        Ok(())
    }

    /// When the machine is to be taken as it stands at the window's opening, until it is.
    pub(super) fn next_opening(&self) -> Option<Time> {
        // An opening before the run's first event is taken at that event.
        self.opens
            .filter(|o| self.opened.is_none() && *o > self.now)
    }

    /// Takes the machine as it stood at an opening before `t`, the first instant after it,
    /// before that instant's events change it.
    pub(super) fn take_opening_before(&mut self, t: Time) {
        if self.opens.is_some_and(|opens| opens < t) {
            self.take_opening(t);
        }
    }

    /// Takes the machine as it stands, once, at the first instant at or after the opening
    /// (after the ends, arrivals, pinned starts and cancellations of the opening's instant).
    pub(super) fn take_opening(&mut self, t: Time) {
        if self.opened.is_some() || self.opens.is_none_or(|opens| t < opens) {
            return;
        }
        let held = (self.space.used().iter().zip(&self.totals)).map(|(u, t)| u * t);
        self.opened = Some(Opened {
            jobs_running: self.running.iter().flatten().count() as u64,
            jobs_waiting: self.queues.iter().map(|q| q.len() as u64).sum(),
            held: held.collect(),
            capacity: self.totals.clone(),
        });
    }
}
