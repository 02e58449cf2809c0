//! The event queue: events ordered by (time, priority, tie), so that equal-time events run in
//! a fixed, documented order and every run is reproducible. The tie is chosen by
//! `simulation.tie_order` ([`TieOrder`]):
//! - `creation` (the order results were computed in before `key` became the default): the
//!   insertion sequence, so equal (time, priority) events run in the order they were pushed;
//! - `key` (default): a key the pusher computes from the event itself (its kind, then the stable identity
//!   of what it concerns: `engine::state::Event::tie_key`), which does not depend on when the
//!   event was pushed. Two distinct events due at the same time and priority get equal keys
//!   only when they are identical values (same kind and fields), whose order cannot matter:
//!   handling either first gives the same sequence of handled values.
//!
//! The full key is one `u128`: time (64 bits) | priority (2 bits) | tie (62 bits).
//!
//! Most events (a packet header reaching the next router) are scheduled a fixed latency after
//! the current time. Since the current time never decreases, such events arrive in time order,
//! so they go into *delay lines* (O(1)) instead of the heap (a packet that ran `k` hops ahead,
//! `net/mod.rs`, queues its next hop `1 + k` router hops after the current time: a line per
//! `k`); `pop` takes the smallest key among
//! the heap top and the line fronts. Under `creation` a line is a FIFO (later pushes have larger
//! sequence numbers). Under `key` an event may be pushed at the same time as the line's last
//! ones with a smaller tie: it is inserted in key order among those (a short walk back over the
//! equal-time tail), so each line stays sorted by full key. Either way the order is exactly that
//! of a single heap.
//!
//! ## No held events
//! `network.model = "fold"` once also held pushed events outside the heap and the lines until
//! the next pop, and returned the earliest without filing it when nothing queued preceded it
//! (exact in either tie order). It was removed: it cost more host instructions than the filing
//! it skipped, because every folded event still passed through `pop` (cachegrind instructions
//! with it and without: `bench --only em3d-sm` 29.55 G and 28.34 G, `bench --only
//! mem-misses-32` 9.36 G and 9.00 G, `run barrier --procs 2048 --variant sm` 9.05 G and
//! 8.82 G). Folding now means only that the network runs hops ahead (`net/mod.rs`); every
//! event handled is queued.

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

/// How events due at the same time and priority are ordered (`simulation.tie_order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieOrder {
    /// By insertion sequence: the order they were pushed (the default before `key`; every
    /// number before then was computed in it).
    Creation,
    /// By a key computed from the event itself (kind, then identity): independent of when it
    /// was pushed. The default.
    Key,
}

/// Bits of the tie: the low part of the 64-bit (priority, tie) half of a full key.
pub(crate) const TIE_BITS: u32 = 62;

/// Bits of a tie key's identity part (below its 4-bit kind rank).
const IDENTITY_BITS: u32 = TIE_BITS - 4;
/// Bits of an identity's per-source count ([`identity`]); the source takes the 21 above
/// (`topology::MAX_PROCS` processors plus I/O nodes).
const COUNT_BITS: u32 = 37;

/// A tie key (`TieOrder::Key`): the kind's rank (below 16), then an identity (below 2^58).
#[inline]
pub(crate) fn tie(rank: u64, identity: u64) -> u64 {
    debug_assert!(rank < 16 && identity < 1 << IDENTITY_BITS, "tie key out of range: rank {rank}, identity {identity}");
    rank << IDENTITY_BITS | identity
}

/// The stable identity of the `count`th thing (packet, message) that `src` made: independent
/// of how its making interleaves with other sources'. Unique while `count` stays below 2^37
/// (137 G packets or messages from one endpoint).
#[inline]
pub(crate) fn identity(src: usize, count: u64) -> u64 {
    debug_assert!(src < 1 << (IDENTITY_BITS - COUNT_BITS) && count < 1 << COUNT_BITS);
    (src as u64) << COUNT_BITS | (count & ((1 << COUNT_BITS) - 1))
}

/// Two fields of at most 21 and 37 bits as one identity (as [`identity`]; `b` keeps its low
/// 37 bits).
#[inline]
pub(crate) fn pair(a: u32, b: u64) -> u64 {
    identity(a as usize, b & ((1 << COUNT_BITS) - 1))
}

/// Events say whether they keep a run alive; background events (cross-traffic) do not.
pub(crate) trait Liveness {
    fn background(&self) -> bool;
}

/// Number of delay lines: one per fixed latency after the current time (a router hop, an NI
/// link), and one per number of router hops a packet ran ahead (`net/mod.rs`: its next hop is
/// due `1 + k` router hops after the current time), up to [`AHEAD_LINES`].
pub(crate) const LINES: usize = 2 + AHEAD_LINES;
/// Delay lines for hops queued by packets that ran 1, 2, ... hops ahead (beyond: the heap).
pub(crate) const AHEAD_LINES: usize = 3;

/// time | priority | tie as one integer (smaller first).
#[inline]
fn full_key(time_ps: u64, prio: Priority, tie: u64) -> u128 {
    debug_assert!(tie < 1 << TIE_BITS);
    ((time_ps as u128) << 64) | ((prio as u128) << TIE_BITS) | tie as u128
}

pub(crate) struct EventQueue<E> {
    heap: QuadHeap<E>,
    lines: [VecDeque<Entry<E>>; LINES],
    seq: u64,
    live: u64,
    /// `TieOrder::Key`: ties are the keys pushers give, not the insertion sequence.
    keyed: bool,
}

impl<E: Liveness> EventQueue<E> {
    /// A queue whose ties are broken by `order`.
    pub fn new(order: TieOrder) -> Self {
        EventQueue {
            heap: QuadHeap::with_capacity(1024),
            lines: Default::default(),
            seq: 0,
            live: 0,
            keyed: order == TieOrder::Key,
        }
    }

    /// Whether ties are broken by the pushers' keys (`TieOrder::Key`): pushers compute a key
    /// only then.
    #[inline]
    pub fn keyed(&self) -> bool {
        self.keyed
    }

    /// Queued events that are not background.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// `full_key`, with the tie under `creation` the next insertion sequence number.
    #[inline]
    fn key(&mut self, time_ps: u64, prio: Priority, tie: u64) -> u128 {
        let tie = if self.keyed {
            tie
        } else {
            let seq = self.seq;
            self.seq += 1;
            seq
        };
        full_key(time_ps, prio, tie)
    }

    /// Push an event with its tie key (used under `TieOrder::Key` only, ignored otherwise; it
    /// must be below 2^62).
    #[inline]
    pub fn push(&mut self, time_ps: u64, prio: Priority, tie: u64, event: E) {
        self.live += u64::from(!event.background());
        let key = self.key(time_ps, prio, tie);
        self.heap.push(Entry { key, event });
    }

    /// Push an event due a fixed latency after the current time onto delay line `line`. The
    /// caller guarantees that every event on one line comes at a time no earlier than the
    /// previous one (true for `now + constant` since `now` never decreases).
    #[inline]
    pub fn push_line(&mut self, line: usize, time_ps: u64, prio: Priority, tie: u64, event: E) {
        debug_assert!(line < LINES);
        self.live += u64::from(!event.background());
        let e = Entry { key: self.key(time_ps, prio, tie), event };
        let l = &mut self.lines[line];
        if self.keyed && l.back().is_some_and(|b| b.key > e.key) {
            // An equal-time event with a smaller tie: walk back over the line's equal-time
            // tail (times on a line never decrease).
            let at = l.iter().rposition(|b| b.key < e.key).map_or(0, |i| i + 1);
            debug_assert!(l.get(at).is_some_and(|b| b.key >> 64 == e.key >> 64), "delay line {line} out of time order");
            l.insert(at, e);
        } else {
            debug_assert!(l.back().is_none_or(|b| b.key <= e.key), "delay line {line} out of order");
            l.push_back(e);
        }
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let (best, _) = self.earliest_queued();
        let e = if best == usize::MAX { self.heap.pop()? } else { self.lines[best].pop_front().expect("front") };
        self.live -= u64::from(!e.event.background());
        Some(((e.key >> 64) as u64, e.event))
    }

    /// The source holding the smallest key (the heap, `usize::MAX`, or a delay line) and that
    /// key (`u128::MAX` when nothing is queued).
    #[inline]
    fn earliest_queued(&self) -> (usize, u128) {
        let mut best = (usize::MAX, self.heap.peek_key().unwrap_or(u128::MAX));
        for (i, line) in self.lines.iter().enumerate() {
            if let Some(front) = line.front() {
                if front.key < best.1 {
                    best = (i, front.key);
                }
            }
        }
        best
    }

    /// The time of the earliest pending event, `u64::MAX` when none is.
    #[inline]
    pub fn next_time(&self) -> u64 {
        (self.earliest_queued().1 >> 64) as u64
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.lines.iter().map(|l| l.len()).sum::<usize>()
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
        let mut q = EventQueue::new(TieOrder::Creation);
        q.push(1, Priority::Network, 0, "bg a");
        q.push(2, Priority::Network, 0, "b");
        assert_eq!(q.live(), 1);
        q.pop();
        assert_eq!(q.live(), 1);
        q.pop();
        assert_eq!(q.live(), 0);
    }

    #[test]
    fn delay_lines_merge_with_the_heap_in_key_order() {
        for order in [TieOrder::Creation, TieOrder::Key] {
            // A long queue (two pushes per pop) and a short one (as many pops as pushes).
            merge_in_key_order(2, order);
            merge_in_key_order(1, order);
        }
    }

    /// A tie key for step `step` that is unique and unrelated to the push order (a bijection of
    /// the step modulo 2^40).
    fn scrambled(step: u64) -> u64 {
        step.wrapping_mul(0x9E37_79B9_7F4A_7C15) & ((1 << 40) - 1)
    }

    /// Events pushed at now + fixed latencies on lines, others on the heap, popped in the same
    /// order as a sort of (time, priority, tie), where the tie is the push order under
    /// `creation` and an unrelated key under `key` (so that events pushed onto a line at the
    /// same time often come with a smaller key than the line's last); `pushes` pushes for each
    /// pop on average.
    fn merge_in_key_order(pushes: u64, order: TieOrder) {
        let mut q = EventQueue::new(order);
        let mut reference: Vec<(u64, u8, u64, u64)> = Vec::new();
        let mut x: u64 = 99;
        let mut now = 0;
        for step in 0..30_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let tie = match order {
                TieOrder::Creation => step,
                TieOrder::Key => scrambled(step),
            };
            if !x.is_multiple_of(pushes + 1) || reference.is_empty() {
                let (t, prio) = match x % 4 {
                    0 => {
                        q.push_line(0, now + 40, Priority::Network, tie, Step(step));
                        (now + 40, Priority::Network)
                    }
                    1 => {
                        q.push_line(1, now + 50, Priority::Network, tie, Step(step));
                        (now + 50, Priority::Network)
                    }
                    _ => {
                        let p = [Priority::Network, Priority::HandlerDone, Priority::Wake][(x >> 20) as usize % 3];
                        q.push(now + x % 100, p, tie, Step(step));
                        (now + x % 100, p)
                    }
                };
                reference.push((t, prio as u8, tie, step));
                reference.sort();
                reference.reverse();
            } else {
                let (t, ev) = q.pop().unwrap();
                let (rt, rprio, _, rstep) = reference.pop().unwrap();
                assert_eq!((t, ev.0), (rt, rstep), "{order:?}: pop at step {step} (priority {rprio})");
                now = t;
            }
        }
        assert_eq!(q.len(), reference.len());
    }

    #[test]
    fn orders_by_time_then_priority_then_insertion() {
        let mut q = EventQueue::new(TieOrder::Creation);
        q.push(10, Priority::Wake, 0, "t10 wake");
        q.push(10, Priority::Network, 0, "t10 net a");
        q.push(5, Priority::Wake, 0, "t5");
        q.push(10, Priority::Network, 0, "t10 net b");
        q.push(10, Priority::HandlerDone, 0, "t10 done");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["t5", "t10 net a", "t10 net b", "t10 done", "t10 wake"]);
    }

    /// The same equal-time events (named by their tie key), pushed in a given order (some on a
    /// delay line, some on the heap), with a pop after the first push; the order they come out
    /// in.
    fn pops(order: TieOrder, pushes: &[(u64, bool)]) -> Vec<u64> {
        let mut q = EventQueue::new(order);
        let mut out = Vec::new();
        q.push(5, Priority::Network, 999, Step(999));
        for (i, &(tie, on_line)) in pushes.iter().enumerate() {
            if on_line {
                q.push_line(0, 10, Priority::Network, tie, Step(tie));
            } else {
                q.push(10, Priority::Network, tie, Step(tie));
            }
            if i == 0 {
                out.push(q.pop().unwrap().1 .0);
            }
        }
        q.push(10, Priority::Wake, 1, Step(1000));
        out.extend(std::iter::from_fn(|| q.pop().map(|(_, e)| e.0)));
        out
    }

    #[test]
    fn key_order_does_not_depend_on_push_order() {
        let a = [(7, true), (3, false), (5, true), (1, true), (4, false), (2, true)];
        let mut b = a;
        b.reverse();
        let mut c = a;
        c.rotate_left(2);
        let key = pops(TieOrder::Key, &a);
        assert_eq!(key, [999, 1, 2, 3, 4, 5, 7, 1000]);
        assert_eq!(pops(TieOrder::Key, &b), key);
        assert_eq!(pops(TieOrder::Key, &c), key);
        // The test can fail: under `creation` the same pushes come out in push order.
        assert_eq!(pops(TieOrder::Creation, &a), [999, 7, 3, 5, 1, 4, 2, 1000]);
        assert_ne!(pops(TieOrder::Creation, &b), pops(TieOrder::Creation, &a));
    }
}
