//! A 4-ary min-heap of events by their `u128` key: the event queue's heap.
//!
//! Why not `std::collections::BinaryHeap`: the queue holds about one event per processor, and
//! a pop is most of an event's cost. A 4-ary heap is half as deep as a binary one, and a
//! node's four children are adjacent (two 64-byte lines of 32-byte entries), so a pop takes
//! about half the dependent memory accesses. Sifting moves a hole instead of swapping. Keys
//! are unique (they end in the insertion sequence, or under `simulation.tie_order = "key"` in a
//! key only identical events share), so the order is the same total order any correct heap
//! gives: replacing the heap changes no simulated number.

/// One queued event and its key (smaller first).
pub(crate) struct Entry<E> {
    /// time (64 bits) | priority (2 bits) | tie (62 bits): one integer compare per step.
    pub key: u128,
    pub event: E,
}

const ARITY: usize = 4;

pub(crate) struct QuadHeap<E> {
    v: Vec<Entry<E>>,
}

impl<E> QuadHeap<E> {
    pub fn with_capacity(n: usize) -> Self {
        QuadHeap { v: Vec::with_capacity(n) }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// The smallest key, if any.
    #[inline]
    pub fn peek_key(&self) -> Option<u128> {
        self.v.first().map(|e| e.key)
    }

    #[inline]
    pub fn push(&mut self, e: Entry<E>) {
        let mut i = self.v.len();
        let key = e.key;
        self.v.push(e);
        // Sift up: move parents down into the hole until the new entry's place is found.
        // SAFETY: every index used is below `len` (i > 0 and parent < i), and the entry
        // taken out is written back exactly once.
        unsafe {
            let base = self.v.as_mut_ptr();
            let item = std::ptr::read(base.add(i));
            while i > 0 {
                let parent = (i - 1) / ARITY;
                if (*base.add(parent)).key <= key {
                    break;
                }
                std::ptr::copy_nonoverlapping(base.add(parent), base.add(i), 1);
                i = parent;
            }
            std::ptr::write(base.add(i), item);
        }
    }

    /// Remove and return the entry with the smallest key.
    #[inline]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.v.pop()?;
        let n = self.v.len();
        if n == 0 {
            return Some(last);
        }
        // Sift the last entry down from the root through a hole; the root is returned.
        // SAFETY: indices are checked against `n` (the length after the pop); the root is read
        // out once and every slot of the hole's path is written before it is read again.
        unsafe {
            let base = self.v.as_mut_ptr();
            let top = std::ptr::read(base);
            let key = last.key;
            let mut i = 0;
            loop {
                let first = ARITY * i + 1;
                if first >= n {
                    break;
                }
                let mut best = first;
                let mut best_key = (*base.add(first)).key;
                let mut look = |c: usize| {
                    let k = (*base.add(c)).key;
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                };
                if first + ARITY <= n {
                    // All four children (most levels): unrolled.
                    look(first + 1);
                    look(first + 2);
                    look(first + 3);
                } else {
                    (first + 1..n).for_each(look);
                }
                if key <= best_key {
                    break;
                }
                std::ptr::copy_nonoverlapping(base.add(best), base.add(i), 1);
                i = best;
            }
            std::ptr::write(base.add(i), last);
            Some(top)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random pushes and pops against a sorted reference, with keys that repeat in their high
    /// bits (equal times) as the queue's do; events own heap memory, so a slot dropped twice
    /// or leaked shows under Miri or a leak checker.
    #[test]
    fn pops_in_key_order_and_drops_what_is_left() {
        let mut h: QuadHeap<Box<u64>> = QuadHeap::with_capacity(4);
        let mut reference: Vec<u128> = Vec::new();
        let mut x: u64 = 7;
        for seq in 0..20_000u128 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || reference.is_empty() {
                let key = (((x % 64) as u128) << 64) | seq;
                h.push(Entry { key, event: Box::new(key as u64) });
                reference.push(key);
                reference.sort_unstable_by(|a, b| b.cmp(a));
            } else {
                let e = h.pop().expect("non-empty");
                assert_eq!(e.key, reference.pop().unwrap());
                assert_eq!(*e.event, e.key as u64);
                assert_eq!(h.peek_key(), reference.last().copied());
            }
            assert_eq!(h.len(), reference.len());
        }
        assert!(h.len() > 100, "the test leaves entries to drop");
    }
}
