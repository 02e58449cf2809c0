//! The event queue: events ordered by (time, priority, insertion sequence), so that
//! equal-time events run in a fixed, documented order and every run is reproducible.
//!
//! Most events (a packet header reaching the next router) are scheduled a fixed latency after
//! the current time. Since the current time never decreases, such events arrive already in
//! order, so they go into FIFO *delay lines* (O(1)) instead of the heap; `pop` takes the
//! smallest key among the heap top and the line fronts. The order is exactly that of a
//! single heap.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// Same-time ordering: network progress first, then handler completion, then processor wake-ups
/// (so a processor woken at `t` sees every packet and handler that finished at `t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Priority {
    Network = 0,
    HandlerDone = 1,
    Wake = 2,
}

struct Entry<E> {
    /// time (64 bits) | priority (8 bits) | sequence (56 bits): one integer compare per step.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key) // reversed: BinaryHeap is a max-heap
    }
}

/// Events say whether they keep a run alive; background events (cross-traffic) do not.
pub(crate) trait Liveness {
    fn background(&self) -> bool;
}

/// Number of delay lines (one per fixed latency: router hop, NI link).
pub(crate) const LINES: usize = 2;

pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    lines: [VecDeque<Entry<E>>; LINES],
    seq: u64,
    live: u64,
}

impl<E: Liveness> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), lines: Default::default(), seq: 0, live: 0 }
    }

    /// Queued events that are not background.
    pub fn live(&self) -> u64 {
        self.live
    }

    #[inline]
    fn entry(&mut self, time_ps: u64, prio: Priority, event: E) -> Entry<E> {
        self.live += u64::from(!event.background());
        debug_assert!(self.seq < 1 << 56);
        let key = ((time_ps as u128) << 64) | ((prio as u128) << 56) | self.seq as u128;
        self.seq += 1;
        Entry { key, event }
    }

    pub fn push(&mut self, time_ps: u64, prio: Priority, event: E) {
        let e = self.entry(time_ps, prio, event);
        self.heap.push(e);
    }

    /// Push an event due a fixed latency after the current time onto delay line `line`. The
    /// caller guarantees that every event on one line comes at a time no earlier than the
    /// previous one (true for `now + constant` since `now` never decreases).
    pub fn push_line(&mut self, line: usize, time_ps: u64, prio: Priority, event: E) {
        let e = self.entry(time_ps, prio, event);
        debug_assert!(self.lines[line].back().is_none_or(|b| b.key < e.key), "delay line {line} out of order");
        self.lines[line].push_back(e);
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        // The source holding the smallest key: the heap (usize::MAX) or a delay line.
        let mut best = usize::MAX;
        let mut best_key = self.heap.peek().map_or(u128::MAX, |e| e.key);
        for (i, line) in self.lines.iter().enumerate() {
            if let Some(front) = line.front() {
                if front.key < best_key {
                    best = i;
                    best_key = front.key;
                }
            }
        }
        let e = if best == usize::MAX { self.heap.pop()? } else { self.lines[best].pop_front().expect("front") };
        self.live -= u64::from(!e.event.background());
        Some(((e.key >> 64) as u64, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.lines.iter().map(|l| l.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Liveness for &str {
        fn background(&self) -> bool {
            self.starts_with("bg")
        }
    }

    #[test]
    fn counts_live_events() {
        let mut q = EventQueue::new();
        q.push(1, Priority::Network, "bg a");
        q.push(2, Priority::Network, "b");
        assert_eq!(q.live(), 1);
        q.pop();
        assert_eq!(q.live(), 1);
        q.pop();
        assert_eq!(q.live(), 0);
    }

    #[test]
    fn delay_lines_merge_with_the_heap_in_key_order() {
        // Events pushed at now + fixed latencies on lines, others on the heap, popped in the
        // same order as a sort of (time, priority, sequence).
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u8, u64)> = Vec::new();
        let mut x: u64 = 99;
        let mut now = 0;
        for step in 0..30_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || reference.is_empty() {
                let (t, prio) = match x % 4 {
                    0 => {
                        q.push_line(0, now + 40, Priority::Network, "line0");
                        (now + 40, Priority::Network)
                    }
                    1 => {
                        q.push_line(1, now + 50, Priority::Network, "line1");
                        (now + 50, Priority::Network)
                    }
                    _ => {
                        let p = [Priority::Network, Priority::HandlerDone, Priority::Wake][(x >> 20) as usize % 3];
                        q.push(now + x % 100, p, "heap");
                        (now + x % 100, p)
                    }
                };
                reference.push((t, prio as u8, step));
                reference.sort();
                reference.reverse();
            } else {
                let (t, _) = q.pop().unwrap();
                let (rt, _, _) = reference.pop().unwrap();
                assert_eq!(t, rt);
                now = t;
            }
        }
        assert_eq!(q.len(), reference.len());
    }

    #[test]
    fn orders_by_time_then_priority_then_insertion() {
        let mut q = EventQueue::new();
        q.push(10, Priority::Wake, "t10 wake");
        q.push(10, Priority::Network, "t10 net a");
        q.push(5, Priority::Wake, "t5");
        q.push(10, Priority::Network, "t10 net b");
        q.push(10, Priority::HandlerDone, "t10 done");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["t5", "t10 net a", "t10 net b", "t10 done", "t10 wake"]);
    }
}
