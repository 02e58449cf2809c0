//! The event queue: events ordered by (time, priority, insertion sequence), so that
//! equal-time events run in a fixed, documented order and every run is reproducible.
//!
//! Most events (a packet header reaching the next router) are scheduled a fixed latency after
//! the current time. Since the current time never decreases, such events arrive already in
//! order, so they go into FIFO *delay lines* (O(1)) instead of the heap; `pop` takes the
//! smallest key among the heap top and the line fronts. The order is exactly that of a
//! single heap.
//!
//! ## Folding (`network.model = "fold"`)
//! With folding on, pushed events are first *held* outside the heap and the lines, in push order,
//! until the next pop. When the queue is popped and the earliest held event (by time and priority,
//! the first pushed among equals) is strictly earlier in (time, priority) than every queued event,
//! it is the event a single heap would return: it precedes the other held events by key, and it
//! cannot lose a tie to a queued event because its sequence number would be larger. `pop` returns
//! it at once, marked *folded*: it never entered the heap or a line and took no sequence number.
//! Every other held event is filed then, in push order, with the next sequence numbers (before the
//! folded event pushes anything), which orders them as the reference does: every queued event was
//! pushed before every held one. Events are therefore processed in exactly the reference's order;
//! sequence numbers differ only by the numbers folded events did not take, which leaves every
//! comparison between the others unchanged. `RunStats::events` counts queued events only, so a
//! folded run reports fewer events for the same simulation (see `net/mod.rs` for how many).

mod heap;

use heap::{Entry, QuadHeap};
use std::collections::VecDeque;

/// Same-time ordering: network progress first, then handler completion, then processor wake-ups
/// (so a processor woken at `t` sees every packet and handler that finished at `t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Priority {
    Network = 0,
    HandlerDone = 1,
    Wake = 2,
}

/// Events say whether they keep a run alive; background events (cross-traffic) do not.
pub(crate) trait Liveness {
    fn background(&self) -> bool;
}

/// Number of delay lines (one per fixed latency: router hop, NI link).
pub(crate) const LINES: usize = 2;

/// An event pushed but not yet filed (folding only).
struct Held<E> {
    time_ps: u64,
    prio: Priority,
    /// The delay line it goes on, or `None` for the heap.
    line: Option<usize>,
    event: E,
}

pub(crate) struct EventQueue<E> {
    heap: QuadHeap<E>,
    lines: [VecDeque<Entry<E>>; LINES],
    seq: u64,
    live: u64,
    /// Whether pushed events are held back (see the module documentation).
    fold: bool,
    held: Vec<Held<E>>,
}

impl<E: Liveness> EventQueue<E> {
    /// A queue; with `fold`, an event due before everything queued is popped without having
    /// been queued (see the module documentation).
    pub fn new(fold: bool) -> Self {
        EventQueue {
            heap: QuadHeap::with_capacity(1024),
            lines: Default::default(),
            seq: 0,
            live: 0,
            fold,
            held: Vec::new(),
        }
    }

    /// Queued events that are not background.
    pub fn live(&self) -> u64 {
        self.live
    }

    #[inline]
    fn entry(&mut self, time_ps: u64, prio: Priority, event: E) -> Entry<E> {
        debug_assert!(self.seq < 1 << 56);
        let key = ((time_ps as u128) << 64) | ((prio as u128) << 56) | self.seq as u128;
        self.seq += 1;
        Entry { key, event }
    }

    #[inline]
    fn file(&mut self, line: Option<usize>, time_ps: u64, prio: Priority, event: E) {
        let e = self.entry(time_ps, prio, event);
        match line {
            None => self.heap.push(e),
            Some(line) => {
                debug_assert!(self.lines[line].back().is_none_or(|b| b.key < e.key), "delay line {line} out of order");
                self.lines[line].push_back(e);
            }
        }
    }

    #[inline]
    fn add(&mut self, line: Option<usize>, time_ps: u64, prio: Priority, event: E) {
        self.live += u64::from(!event.background());
        if self.fold {
            self.held.push(Held { time_ps, prio, line, event });
        } else {
            self.file(line, time_ps, prio, event);
        }
    }

    pub fn push(&mut self, time_ps: u64, prio: Priority, event: E) {
        self.add(None, time_ps, prio, event);
    }

    /// Push an event due a fixed latency after the current time onto delay line `line`. The
    /// caller guarantees that every event on one line comes at a time no earlier than the
    /// previous one (true for `now + constant` since `now` never decreases).
    pub fn push_line(&mut self, line: usize, time_ps: u64, prio: Priority, event: E) {
        self.add(Some(line), time_ps, prio, event);
    }

    /// The earliest event, its time, and whether it was folded (popped without having been
    /// queued; see the module documentation).
    pub fn pop(&mut self) -> Option<(u64, E, bool)> {
        // The source holding the smallest key: the heap (usize::MAX) or a delay line.
        let mut best = usize::MAX;
        let mut best_key = self.heap.peek_key().unwrap_or(u128::MAX);
        for (i, line) in self.lines.iter().enumerate() {
            if let Some(front) = line.front() {
                if front.key < best_key {
                    best = i;
                    best_key = front.key;
                }
            }
        }
        if !self.held.is_empty() {
            let time_prio = |h: &Held<E>| ((h.time_ps as u128) << 8) | h.prio as u128;
            let (first, tp) = self
                .held
                .iter()
                .enumerate()
                .min_by_key(|&(i, h)| (time_prio(h), i))
                .map(|(i, h)| (i, time_prio(h)))
                .expect("non-empty");
            // Folded if strictly first in (time, priority): a tie goes to the queued event,
            // whose sequence number is smaller than the one the held event would take.
            let folded = (tp < best_key >> 56).then(|| self.held.remove(first));
            // The others are filed now, before the folded event pushes anything.
            let mut held = std::mem::take(&mut self.held);
            for h in held.drain(..) {
                self.file(h.line, h.time_ps, h.prio, h.event);
            }
            self.held = held;
            if let Some(h) = folded {
                self.live -= u64::from(!h.event.background());
                return Some((h.time_ps, h.event, true));
            }
            // Their keys are all larger than `best_key` (a tie in (time, priority) is broken by
            // their new, larger sequence numbers), so the earliest event is where it was.
        }
        let e = if best == usize::MAX { self.heap.pop()? } else { self.lines[best].pop_front().expect("front") };
        debug_assert!(e.key == best_key || best_key == u128::MAX);
        self.live -= u64::from(!e.event.background());
        Some(((e.key >> 64) as u64, e.event, false))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.lines.iter().map(|l| l.len()).sum::<usize>() + self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test event: the step that pushed it.
    #[derive(Debug)]
    struct Step(u64);

    impl Liveness for Step {
        fn background(&self) -> bool {
            false
        }
    }

    impl Liveness for &str {
        fn background(&self) -> bool {
            self.starts_with("bg")
        }
    }

    #[test]
    fn counts_live_events() {
        let mut q = EventQueue::new(false);
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
        merge_in_key_order(false, 2);
    }

    #[test]
    fn folding_pops_in_the_same_order() {
        // A long queue (two pushes per pop) and a short one (as many pops as pushes), where
        // the last events pushed are often the earliest.
        merge_in_key_order(true, 2);
        let folded = merge_in_key_order(true, 1);
        assert!(folded > 200, "only {folded} events folded");
    }

    /// Events pushed at now + fixed latencies on lines, others on the heap, popped in the same
    /// order as a sort of (time, priority, sequence), `pushes` pushes for each pop on average;
    /// returns how many pops were folded.
    fn merge_in_key_order(fold: bool, pushes: u64) -> u64 {
        let mut q = EventQueue::new(fold);
        let mut folded = 0;
        let mut reference: Vec<(u64, u8, u64)> = Vec::new();
        let mut x: u64 = 99;
        let mut now = 0;
        for step in 0..30_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(pushes + 1) || reference.is_empty() {
                let (t, prio) = match x % 4 {
                    0 => {
                        q.push_line(0, now + 40, Priority::Network, Step(step));
                        (now + 40, Priority::Network)
                    }
                    1 => {
                        q.push_line(1, now + 50, Priority::Network, Step(step));
                        (now + 50, Priority::Network)
                    }
                    _ => {
                        let p = [Priority::Network, Priority::HandlerDone, Priority::Wake][(x >> 20) as usize % 3];
                        q.push(now + x % 100, p, Step(step));
                        (now + x % 100, p)
                    }
                };
                reference.push((t, prio as u8, step));
                reference.sort();
                reference.reverse();
            } else {
                let (t, ev, was_folded) = q.pop().unwrap();
                let (rt, rprio, rstep) = reference.pop().unwrap();
                assert_eq!((t, ev.0), (rt, rstep), "pop at step {step} (priority {rprio})");
                folded += u64::from(was_folded);
                now = t;
            }
        }
        assert_eq!(q.len(), reference.len());
        assert!(fold || folded == 0);
        folded
    }

    #[test]
    fn orders_by_time_then_priority_then_insertion() {
        let mut q = EventQueue::new(false);
        q.push(10, Priority::Wake, "t10 wake");
        q.push(10, Priority::Network, "t10 net a");
        q.push(5, Priority::Wake, "t5");
        q.push(10, Priority::Network, "t10 net b");
        q.push(10, Priority::HandlerDone, "t10 done");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e, _)| e)).collect();
        assert_eq!(order, ["t5", "t10 net a", "t10 net b", "t10 done", "t10 wake"]);
    }
}
