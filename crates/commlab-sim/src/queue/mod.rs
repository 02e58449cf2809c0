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
//! ## Folding (`network.model = "fold"`)
//! With folding on, pushed events are first *held* outside the heap and the lines, in push order,
//! until the next pop.
//!
//! Under `creation`: when the queue is popped and the earliest held event (by time and priority,
//! the first pushed among equals) is strictly earlier in (time, priority) than every queued event,
//! it is the event a single heap would return: it precedes the other held events by key, and it
//! cannot lose a tie to a queued event because its sequence number would be larger. `pop` returns
//! it at once, marked *folded*: it never entered the heap or a line and took no sequence number.
//! Every other held event is filed then, in push order, with the next sequence numbers (before the
//! folded event pushes anything), which orders them as the reference does: every queued event was
//! pushed before every held one. Events are therefore processed in exactly the reference's order;
//! sequence numbers differ only by the numbers folded events did not take, which leaves every
//! comparison between the others unchanged.
//!
//! Under `key` the argument is simpler, because an event's key is fixed when it is pushed and
//! does not depend on where it is kept: the reference pops the smallest key among all pending
//! events. The held event with the smallest full key is returned, folded, when its key is
//! strictly smaller than every queued event's; it is then the smallest of all pending events,
//! the one the reference pops. (On an equal key, which only identical events share, it is filed
//! and the queued one is popped: the same value either way.) The other held events are filed
//! with their own keys. So fold under `key` pops exactly the `key` reference's order, and may
//! fold events that tie in (time, priority) with queued ones, which `creation` cannot.
//!
//! `RunStats::events` counts queued events only, so a folded run reports fewer events for the
//! same simulation (see `net/mod.rs` for how many).

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

/// The delay line number that stands for the heap in [`Held::line`].
const HEAP: u8 = u8::MAX;

/// An event pushed but not yet filed (folding only).
struct Held<E> {
    /// Its full key under `key`; under `creation`, its time and priority with a zero tie (the
    /// sequence number is given when it is filed).
    key: u128,
    /// The delay line it goes on, or [`HEAP`].
    line: u8,
    event: E,
}

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
    /// Whether pushed events are held back (see the module documentation).
    fold: bool,
    held: Vec<Held<E>>,
    /// The earliest time among `held` (`u64::MAX` when empty).
    held_time: u64,
}

impl<E: Liveness> EventQueue<E> {
    /// A queue whose ties are broken by `order`; with `fold`, an event due before everything
    /// queued is popped without having been queued (see the module documentation).
    pub fn new(fold: bool, order: TieOrder) -> Self {
        EventQueue {
            heap: QuadHeap::with_capacity(1024),
            lines: Default::default(),
            seq: 0,
            live: 0,
            keyed: order == TieOrder::Key,
            fold,
            held: Vec::new(),
            held_time: u64::MAX,
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

    /// `full_key`, with the tie left zero under `creation` (`file` gives the sequence number).
    #[inline]
    fn key(&self, time_ps: u64, prio: Priority, tie: u64) -> u128 {
        full_key(time_ps, prio, if self.keyed { tie } else { 0 })
    }

    /// Queue an event with its key from `key` on delay line `line` or the heap ([`HEAP`]).
    #[inline]
    fn file(&mut self, line: u8, key: u128, event: E) {
        let key = if self.keyed {
            key
        } else {
            let seq = self.seq;
            self.seq += 1;
            key | seq as u128
        };
        let e = Entry { key, event };
        if line == HEAP {
            return self.heap.push(e);
        }
        let l = &mut self.lines[line as usize];
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

    #[inline]
    fn add(&mut self, line: u8, key: u128, event: E) {
        self.live += u64::from(!event.background());
        if self.fold {
            self.held_time = self.held_time.min((key >> 64) as u64);
            self.held.push(Held { key, line, event });
        } else {
            self.file(line, key, event);
        }
    }

    /// Push an event with its tie key (used under `TieOrder::Key` only, ignored otherwise; it
    /// must be below 2^62).
    pub fn push(&mut self, time_ps: u64, prio: Priority, tie: u64, event: E) {
        self.add(HEAP, self.key(time_ps, prio, tie), event);
    }

    /// Push an event due a fixed latency after the current time onto delay line `line`. The
    /// caller guarantees that every event on one line comes at a time no earlier than the
    /// previous one (true for `now + constant` since `now` never decreases).
    pub fn push_line(&mut self, line: usize, time_ps: u64, prio: Priority, tie: u64, event: E) {
        debug_assert!(line < LINES);
        self.add(line as u8, self.key(time_ps, prio, tie), event);
    }

    /// The earliest event, its time, and whether it was folded (popped without having been
    /// queued; see the module documentation).
    pub fn pop(&mut self) -> Option<(u64, E, bool)> {
        let (best, best_key) = self.earliest_queued();
        if self.held.len() == 1 {
            // The common case (one event pushed since the last pop): the general path below
            // for a single held event, without moving the held list.
            let h = self.held.pop().expect("one held event");
            self.held_time = u64::MAX;
            if self.folds_before(h.key, best_key) {
                self.live -= u64::from(!h.event.background());
                return Some(((h.key >> 64) as u64, h.event, true));
            }
            self.file(h.line, h.key, h.event);
        } else if !self.held.is_empty() {
            let folded = self.fold_first(best_key);
            // The others are filed now, before the folded event pushes anything.
            let mut held = std::mem::take(&mut self.held);
            for h in held.drain(..) {
                self.file(h.line, h.key, h.event);
            }
            self.held = held;
            self.held_time = u64::MAX;
            if let Some(h) = folded {
                self.live -= u64::from(!h.event.background());
                return Some(((h.key >> 64) as u64, h.event, true));
            }
            // Their keys are all larger than `best_key` (`creation`: a tie in (time, priority)
            // is broken by their new, larger sequence numbers; `key`: none was smaller), or
            // equal to it (`key`: an identical event), so the earliest event is where it was.
        }
        let e = if best == usize::MAX { self.heap.pop()? } else { self.lines[best].pop_front().expect("front") };
        debug_assert!(e.key == best_key || best_key == u128::MAX);
        self.live -= u64::from(!e.event.background());
        Some(((e.key >> 64) as u64, e.event, false))
    }

    /// Whether a held event with key `key` (from `add`) is popped before every queued one,
    /// whose smallest key is `best_key`: under `key`, when its key is strictly smaller; under
    /// `creation`, when it is strictly earlier in (time, priority) (a tie goes to the queued
    /// event, whose sequence number is smaller than the one the held event would take).
    #[inline]
    fn folds_before(&self, key: u128, best_key: u128) -> bool {
        if self.keyed {
            key < best_key
        } else {
            key >> TIE_BITS < best_key >> TIE_BITS
        }
    }

    /// The held event to fold, if any: the first by key (under `creation`, by time and
    /// priority, the first pushed among equals), if it `folds_before` every queued event.
    fn fold_first(&mut self, best_key: u128) -> Option<Held<E>> {
        // `min_by_key` returns the first of equal minima: the first pushed.
        let (first, key) =
            self.held.iter().enumerate().map(|(i, h)| (i, h.key)).min_by_key(|&(_, k)| k).expect("non-empty");
        self.folds_before(key, best_key).then(|| self.held.remove(first))
    }

    /// The queued source holding the smallest key (the heap, `usize::MAX`, or a delay line) and
    /// that key (`u128::MAX` when nothing is queued); held events are not looked at.
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

    /// The time of the earliest pending event (queued or held), `u64::MAX` when none is.
    #[inline]
    pub fn next_time(&self) -> u64 {
        ((self.earliest_queued().1 >> 64) as u64).min(self.held_time)
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
        let mut q = EventQueue::new(false, TieOrder::Creation);
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
        merge_in_key_order(false, 2, TieOrder::Creation);
        merge_in_key_order(false, 2, TieOrder::Key);
    }

    #[test]
    fn folding_pops_in_the_same_order() {
        // A long queue (two pushes per pop) and a short one (as many pops as pushes), where
        // the last events pushed are often the earliest.
        for order in [TieOrder::Creation, TieOrder::Key] {
            merge_in_key_order(true, 2, order);
            let folded = merge_in_key_order(true, 1, order);
            assert!(folded > 200, "{order:?}: only {folded} events folded");
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
    /// pop on average; returns how many pops were folded.
    fn merge_in_key_order(fold: bool, pushes: u64, order: TieOrder) -> u64 {
        let mut q = EventQueue::new(fold, order);
        let mut folded = 0;
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
                let (t, ev, was_folded) = q.pop().unwrap();
                let (rt, rprio, _, rstep) = reference.pop().unwrap();
                assert_eq!((t, ev.0), (rt, rstep), "{order:?}: pop at step {step} (priority {rprio})");
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
        let mut q = EventQueue::new(false, TieOrder::Creation);
        q.push(10, Priority::Wake, 0, "t10 wake");
        q.push(10, Priority::Network, 0, "t10 net a");
        q.push(5, Priority::Wake, 0, "t5");
        q.push(10, Priority::Network, 0, "t10 net b");
        q.push(10, Priority::HandlerDone, 0, "t10 done");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e, _)| e)).collect();
        assert_eq!(order, ["t5", "t10 net a", "t10 net b", "t10 done", "t10 wake"]);
    }

    /// The same equal-time events (named by their tie key), pushed in a given order (some on a
    /// delay line, some on the heap), with a pop after the first push so that folding has
    /// something to fold; the order they come out in.
    fn pops(order: TieOrder, fold: bool, pushes: &[(u64, bool)]) -> Vec<u64> {
        let mut q = EventQueue::new(fold, order);
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
        out.extend(std::iter::from_fn(|| q.pop().map(|(_, e, _)| e.0)));
        out
    }

    #[test]
    fn key_order_does_not_depend_on_push_order() {
        let a = [(7, true), (3, false), (5, true), (1, true), (4, false), (2, true)];
        let mut b = a;
        b.reverse();
        let mut c = a;
        c.rotate_left(2);
        for fold in [false, true] {
            let key = pops(TieOrder::Key, fold, &a);
            assert_eq!(key, [999, 1, 2, 3, 4, 5, 7, 1000], "fold {fold}");
            assert_eq!(pops(TieOrder::Key, fold, &b), key, "fold {fold}");
            assert_eq!(pops(TieOrder::Key, fold, &c), key, "fold {fold}");
            // The test can fail: under `creation` the same pushes come out in push order.
            assert_eq!(pops(TieOrder::Creation, fold, &a), [999, 7, 3, 5, 1, 4, 2, 1000], "fold {fold}");
            assert_ne!(pops(TieOrder::Creation, fold, &b), pops(TieOrder::Creation, fold, &a));
        }
    }
}
