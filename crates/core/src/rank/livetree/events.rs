//! The event queue: at most one pending swap per slot, earliest first.
//!
//! An event of slot s means "s and its current successor swap at this time". Whenever a slot's
//! successor changes, its event is replaced or dropped, so the queue is an indexed binary heap:
//! set, clear and pop by slot in O(log n), ties broken by client id for determinism.

use super::order::NIL;

/// One queued swap.
#[derive(Debug, Clone, Copy)]
struct Event {
    time: f64,
    id: u32,
    slot: u32,
}

impl Event {
    /// Whether `self` is due strictly before `other` (by time, then id).
    fn earlier(&self, other: &Event) -> bool {
        self.time
            .total_cmp(&other.time)
            .then(self.id.cmp(&other.id))
            .is_lt()
    }
}

/// An indexed min-heap of events keyed by slot.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events {
    heap: Vec<Event>,
    /// Position of each slot's event in `heap` (`NIL` if none).
    pos: Vec<u32>,
}

impl Events {
    /// The earliest event as `(time, slot)`.
    pub(crate) fn peek(&self) -> Option<(f64, u32)> {
        self.heap.first().map(|e| (e.time, e.slot))
    }

    /// Queue (or move) the event of `slot` (client `id`) at `time`.
    pub(crate) fn set(&mut self, slot: u32, id: u32, time: f64) {
        if self.pos.len() <= slot as usize {
            self.pos.resize(slot as usize + 1, NIL);
        }
        let event = Event { time, id, slot };
        match self.pos[slot as usize] {
            NIL => {
                self.heap.push(event);
                self.sift_up(self.heap.len() - 1);
            }
            i => {
                self.heap[i as usize] = event;
                self.sift(i as usize);
            }
        }
    }

    /// Drop the event of `slot`, if any.
    pub(crate) fn clear(&mut self, slot: u32) {
        let Some(&i) = self.pos.get(slot as usize).filter(|&&i| i != NIL) else {
            return;
        };
        self.pos[slot as usize] = NIL;
        let Some(last) = self.heap.pop() else {
            return;
        };
        if (i as usize) < self.heap.len() {
            self.heap[i as usize] = last;
            self.sift(i as usize);
        }
    }

    /// Restore the heap around position `i` after its event changed.
    fn sift(&mut self, i: usize) {
        if i > 0 && self.heap[i].earlier(&self.heap[(i - 1) / 2]) {
            self.sift_up(i);
        } else {
            self.sift_down(i);
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        let event = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if !event.earlier(&self.heap[parent]) {
                break;
            }
            self.place(i, self.heap[parent]);
            i = parent;
        }
        self.place(i, event);
    }

    fn sift_down(&mut self, mut i: usize) {
        let event = self.heap[i];
        loop {
            let left = 2 * i + 1;
            let Some(mut child) = (left < self.heap.len()).then_some(left) else {
                break;
            };
            if left + 1 < self.heap.len() && self.heap[left + 1].earlier(&self.heap[left]) {
                child = left + 1;
            }
            if !self.heap[child].earlier(&event) {
                break;
            }
            self.place(i, self.heap[child]);
            i = child;
        }
        self.place(i, event);
    }

    /// Put `event` at heap position `i` and record where it is.
    fn place(&mut self, i: usize, event: Event) {
        self.heap[i] = event;
        self.pos[event.slot as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_id_and_clears_by_slot() {
        let mut events = Events::default();
        for (slot, time) in [(0u32, 5.0), (1, 1.0), (2, 3.0), (3, 1.0), (4, 9.0)] {
            events.set(slot, 10 - slot, time);
        }
        events.set(4, 6, 0.5); // moved earlier
        events.clear(2);
        events.clear(2); // twice is harmless
        let mut popped = Vec::new();
        while let Some((_, slot)) = events.peek() {
            popped.push(slot);
            events.clear(slot);
        }
        // Slots 1 and 3 tie at t = 1; slot 3 has the smaller id (7 < 9).
        assert_eq!(popped, vec![4, 3, 1, 0]);
    }
}
