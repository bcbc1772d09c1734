//! A process moving through its program: a grant ends, the process goes on to its next
//! request, and enters or leaves a resource's queue.

use super::*;

impl Engine<'_> {
    pub(super) fn end_grant(&mut self, j: usize) {
        let Some(i) = self.res[j].holder.take() else {
            return;
        };
        let since = std::mem::replace(&mut self.res[j].since, self.now);
        log_grant(&mut self.grants[j], since, self.now, i);
        self.consumption[i].stop(self.now).expect(FORWARD);
        self.busy[j].stop(self.now).expect(FORWARD);
        let p = &mut self.procs[i];
        p.remaining = p
            .remaining
            .saturating_sub(self.now.as_micros() - since.as_micros());
        if p.remaining > 0 {
            self.enqueue(i, j);
        } else {
            self.proceed(i);
        }
    }

    /// Issues the process's next request: a queue, an idle delay, or the end of its program.
    pub(super) fn proceed(&mut self, i: usize) {
        let left = self.procs[i].state;
        if let State::Queued(j) | State::Serving(j) = left {
            self.leave_resource(i, j);
        }
        loop {
            let p = &mut self.procs[i];
            let Some((resource, length)) = p.program.next() else {
                p.state = State::Done;
                p.finish = Some(self.now);
                self.live -= 1;
                self.deactivate(i, None);
                return;
            };
            if length == 0 {
                // Completes at once; counted as an event, so that a program of countless empty
                // requests meets the limit on events too.
                self.handled += 1;
                if self.handled > MAX_EVENTS_PER_RUN {
                    return;
                }
                continue;
            }
            p.remaining = length;
            match resource {
                None => {
                    p.state = if p.arrived {
                        State::Idle
                    } else {
                        State::Waiting
                    };
                    let (arrived, at) = (p.arrived, self.now.plus_micros(length));
                    self.schedule(at, Event::IdleEnd(i));
                    if arrived {
                        self.start_grace(i, None);
                    }
                }
                Some(j) => {
                    p.arrived = true;
                    self.activate(i, None);
                    self.enqueue(i, j);
                }
            }
            return;
        }
    }

    fn enqueue(&mut self, i: usize, j: usize) {
        self.res[j].queue.push(Waiting {
            entered: self.now.as_micros(),
            process: i,
            priority: 0.0,
            valid_before: 0,
            epoch: 0,
            at: 0,
            bounds: 0,
            served_until: 0,
        });
        self.procs[i].state = State::Queued(j);
        self.activate(i, Some(j));
    }

    /// The process left resource `j` for good (for now): per-resource grace starts.
    fn leave_resource(&mut self, i: usize, j: usize) {
        if self.allocation.len() > 1 {
            self.start_grace(i, Some(j));
        }
    }
}
