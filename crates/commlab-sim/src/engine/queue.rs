//! The event queue: a min-heap ordered by (time, priority, insertion sequence), so that
//! equal-time events run in a fixed, documented order and every run is reproducible.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    live: u64,
}

impl<E: Liveness> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0, live: 0 }
    }

    /// Queued events that are not background.
    pub fn live(&self) -> u64 {
        self.live
    }

    pub fn push(&mut self, time_ps: u64, prio: Priority, event: E) {
        self.live += u64::from(!event.background());
        debug_assert!(self.seq < 1 << 56);
        let key = ((time_ps as u128) << 64) | ((prio as u128) << 56) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let e = self.heap.pop()?;
        self.live -= u64::from(!e.event.background());
        Some(((e.key >> 64) as u64, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
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
