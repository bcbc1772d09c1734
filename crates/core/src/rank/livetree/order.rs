//! The element order: a treap over arena slots, threaded by a doubly-linked list.
//!
//! Priorities drift with time, so they cannot be stored as keys. Instead the tree only stores
//! the shape, and every insertion walks down from the root asking the caller "does the new
//! element go before this one?", evaluated at the tree's current time. Slots are stable handles:
//! removal by slot is O(log n) through parent links, and neighbours (for events) and the first
//! element are O(1) through the list.

/// Marks a missing link.
pub(crate) const NIL: u32 = u32::MAX;

/// The links of one slot.
#[derive(Debug, Clone, Copy)]
struct Node {
    left: u32,
    right: u32,
    parent: u32,
    prev: u32,
    next: u32,
    /// Heap priority of the treap (a deterministic pseudo-random number).
    heap: u32,
}

const DETACHED: Node = Node {
    left: NIL,
    right: NIL,
    parent: NIL,
    prev: NIL,
    next: NIL,
    heap: 0,
};

/// A sequence of slots with O(log n) insertion and removal and O(1) neighbours.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    nodes: Vec<Node>,
    root: u32,
    head: u32,
    /// State of the generator of heap priorities.
    seed: u64,
}

impl Order {
    /// An empty order.
    pub(crate) fn new() -> Self {
        Order {
            nodes: Vec::new(),
            root: NIL,
            head: NIL,
            seed: 0,
        }
    }

    /// The first slot, if any.
    pub(crate) fn first(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// The slot after `s` (`NIL` if last).
    pub(crate) fn next(&self, s: u32) -> u32 {
        self.nodes[s as usize].next
    }

    /// The slot before `s` (`NIL` if first).
    pub(crate) fn prev(&self, s: u32) -> u32 {
        self.nodes[s as usize].prev
    }

    /// The slots in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.first(), |&s| Some(self.next(s)).filter(|&n| n != NIL))
    }

    /// Insert the detached slot `s`, which goes before a slot `n` when `before(n)` holds.
    pub(crate) fn insert(&mut self, s: u32, mut before: impl FnMut(u32) -> bool) {
        let (mut parent, mut cur, mut left) = (NIL, self.root, false);
        while cur != NIL {
            parent = cur;
            left = before(cur);
            let node = &self.nodes[cur as usize];
            cur = if left { node.left } else { node.right };
        }
        self.attach(s, parent, left);
    }

    /// Insert the detached slot `s` like [`Order::insert`], but by walking the list from
    /// `finger` (a slot in the order) when its place is at most `reach` steps away; returns
    /// false, having done nothing, when it is farther. O(1) expected besides the walk.
    pub(crate) fn insert_near(
        &mut self,
        s: u32,
        finger: u32,
        reach: usize,
        mut before: impl FnMut(u32) -> bool,
    ) -> bool {
        let mut f = finger;
        let backwards = before(f);
        for _ in 0..reach {
            let (p, n) = (self.prev(f), self.next(f));
            if backwards && (p == NIL || !before(p)) {
                self.attach_after(s, p);
                return true;
            }
            if !backwards && (n == NIL || before(n)) {
                self.attach_after(s, f);
                return true;
            }
            f = if backwards { p } else { n };
        }
        false
    }

    /// Whether slot `s` is in the order.
    pub(crate) fn contains(&self, s: u32) -> bool {
        self.nodes
            .get(s as usize)
            .is_some_and(|n| n.parent != NIL || self.root == s)
    }

    /// Attach the detached slot `s` right after `p` (first if `p` is `NIL`): as `p`'s right
    /// child if it has none, else as the left child of `p`'s successor, which then has none.
    fn attach_after(&mut self, s: u32, p: u32) {
        if p != NIL && self.nodes[p as usize].right == NIL {
            self.attach(s, p, false);
        } else {
            let n = if p == NIL { self.head } else { self.next(p) };
            self.attach(s, n, true);
        }
    }

    /// Attach the detached slot `s` as the left or right child of the leaf position under
    /// `parent` (the root if `NIL`), then restore the heap order.
    fn attach(&mut self, s: u32, mut parent: u32, left: bool) {
        if self.nodes.len() <= s as usize {
            self.nodes.resize(s as usize + 1, DETACHED);
        }
        let heap = self.draw();
        let (prev, next) = match (parent, left) {
            (NIL, _) => (NIL, NIL),
            (p, true) => (self.nodes[p as usize].prev, p),
            (p, false) => (p, self.nodes[p as usize].next),
        };
        self.nodes[s as usize] = Node {
            parent,
            prev,
            next,
            heap,
            ..DETACHED
        };
        self.set_child(parent, left, s);
        self.link(prev, s);
        self.link(s, next);
        while parent != NIL && self.nodes[parent as usize].heap < heap {
            self.rotate_up(s);
            parent = self.nodes[s as usize].parent;
        }
    }

    /// Remove the slot `s`, which must be in the order.
    pub(crate) fn remove(&mut self, s: u32) {
        loop {
            let Node { left, right, .. } = self.nodes[s as usize];
            let child = match (left, right) {
                (NIL, c) | (c, NIL) => c,
                (l, r) if self.nodes[l as usize].heap > self.nodes[r as usize].heap => l,
                (_, r) => r,
            };
            if left == NIL || right == NIL {
                self.replace(s, child);
                break;
            }
            self.rotate_up(child);
        }
        let Node { prev, next, .. } = self.nodes[s as usize];
        self.link(prev, next);
        self.nodes[s as usize] = DETACHED;
    }

    /// Put `child` in the place of `s` under `s`'s parent.
    fn replace(&mut self, s: u32, child: u32) {
        let parent = self.nodes[s as usize].parent;
        let left = parent != NIL && self.nodes[parent as usize].left == s;
        self.set_child(parent, left, child);
        if child != NIL {
            self.nodes[child as usize].parent = parent;
        }
    }

    /// Make `child` the left or right child of `parent` (the root if `parent` is `NIL`).
    fn set_child(&mut self, parent: u32, left: bool, child: u32) {
        match (parent, left) {
            (NIL, _) => self.root = child,
            (p, true) => self.nodes[p as usize].left = child,
            (p, false) => self.nodes[p as usize].right = child,
        }
    }

    /// Link `a` → `b` in the list; either may be `NIL`.
    fn link(&mut self, a: u32, b: u32) {
        if a == NIL {
            self.head = b;
        } else {
            self.nodes[a as usize].next = b;
        }
        if b != NIL {
            self.nodes[b as usize].prev = a;
        }
    }

    /// Rotate `x` above its parent, keeping the in-order sequence.
    fn rotate_up(&mut self, x: u32) {
        let p = self.nodes[x as usize].parent;
        let grand = self.nodes[p as usize].parent;
        let x_is_left = self.nodes[p as usize].left == x;
        let grand_left = grand != NIL && self.nodes[grand as usize].left == p;
        let inner = if x_is_left {
            let inner = self.nodes[x as usize].right;
            self.nodes[p as usize].left = inner;
            self.nodes[x as usize].right = p;
            inner
        } else {
            let inner = self.nodes[x as usize].left;
            self.nodes[p as usize].right = inner;
            self.nodes[x as usize].left = p;
            inner
        };
        if inner != NIL {
            self.nodes[inner as usize].parent = p;
        }
        self.nodes[p as usize].parent = x;
        self.nodes[x as usize].parent = grand;
        self.set_child(grand, grand_left, x);
    }

    /// The next heap priority (SplitMix64: deterministic, well spread).
    fn draw(&mut self) -> u32 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Insert slots keyed by `keys[slot]`, ties by slot.
    fn insert(order: &mut Order, keys: &[u32], s: u32) {
        order.insert(s, |n| (keys[s as usize], s) < (keys[n as usize], n));
    }

    /// The depth of the deepest slot, checking parent links on the way.
    fn depth(order: &Order, s: u32, parent: u32) -> usize {
        if s == NIL {
            return 0;
        }
        let node = order.nodes[s as usize];
        assert_eq!(node.parent, parent);
        1 + depth(order, node.left, s).max(depth(order, node.right, s))
    }

    #[test]
    fn keeps_slots_sorted_and_balanced() {
        let keys: Vec<u32> = (0..2000u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 1000)
            .collect();
        let mut order = Order::new();
        for s in 0..2000 {
            insert(&mut order, &keys, s);
        }
        for s in (0..2000).step_by(3) {
            order.remove(s);
        }
        let got: Vec<u32> = order.iter().collect();
        let mut want: Vec<u32> = (0..2000).filter(|s| s % 3 != 0).collect();
        want.sort_by_key(|&s| (keys[s as usize], s));
        assert_eq!(got, want);
        let backwards: Vec<u32> = std::iter::successors(got.last().copied(), |&s| {
            Some(order.prev(s)).filter(|&p| p != NIL)
        })
        .collect();
        assert!(backwards.iter().rev().eq(got.iter()));
        assert!(depth(&order, order.root, NIL) < 40);
    }

    #[test]
    fn inserts_near_a_finger() {
        let keys: Vec<u32> = (0..100).collect();
        let mut order = Order::new();
        for s in (0..100).step_by(2) {
            insert(&mut order, &keys, s);
        }
        let before = |s: u32| move |n: u32| s < n;
        assert!(order.insert_near(41, 40, 2, before(41)));
        assert!(order.insert_near(37, 40, 2, before(37)));
        assert!(order.insert_near(99, 98, 1, before(99)));
        assert!(order.insert_near(1, 0, 1, before(1)));
        assert!(!order.insert_near(61, 40, 3, before(61)));
        assert!(!order.contains(61));
        let got: Vec<u32> = order.iter().collect();
        let mut want: Vec<u32> = (0..100).step_by(2).chain([1, 37, 41, 99]).collect();
        want.sort_unstable();
        assert_eq!(got, want);
        assert!(depth(&order, order.root, NIL) < 20);
    }

    #[test]
    fn empties_cleanly() {
        let keys = [3, 1, 2];
        let mut order = Order::new();
        for s in 0..3 {
            insert(&mut order, &keys, s);
        }
        for s in [1, 0, 2] {
            order.remove(s);
        }
        assert_eq!(order.first(), None);
        assert_eq!(order.root, NIL);
    }
}
