//! Active messages in flight: one lock-free multi-producer queue per receiving processor.
//!
//! A sender pushes the message (arguments inline, the bulk payload already copied into a
//! `Vec` it hands over) and then counts it in the receiver's `pushed`; the receiver compares
//! `pushed` with its own count of messages taken, so a look at an empty inbox is one load of
//! a line nobody writes until the next message comes. `popped` is published after the handler
//! has run, so `pushed == popped` means no message is waiting or being handled (what the
//! watchdog needs to tell a deadlock from a slow run).

use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most argument words one active message carries natively.
pub(crate) const MAX_ARGS: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Application handler `HandlerId(i)`.
    App(u32),
    /// A child reached the message barrier.
    BarrierArrive,
    /// The message barrier of this epoch is complete.
    BarrierRelease(u64),
}

pub(crate) struct Msg {
    pub src: u32,
    pub target: Target,
    /// Sent after the timed region began (counted by sender and receiver alike).
    pub timed: bool,
    pub nargs: u8,
    pub args: [u64; MAX_ARGS],
    pub payload: Vec<u64>,
}

impl Msg {
    pub fn args(&self) -> &[u64] {
        &self.args[..self.nargs as usize]
    }
}

#[derive(Default)]
pub(crate) struct Inbox {
    queue: SegQueue<Msg>,
    pushed: CachePadded<AtomicU64>,
    popped: CachePadded<AtomicU64>,
}

impl Inbox {
    /// Deliver `m` (any thread).
    pub fn push(&self, m: Msg) {
        self.queue.push(m);
        self.pushed.fetch_add(1, Ordering::SeqCst);
    }

    /// Messages delivered so far.
    #[inline]
    pub fn pushed(&self) -> u64 {
        self.pushed.load(Ordering::SeqCst)
    }

    /// Messages handled so far (published by the receiver after each handler).
    pub fn popped(&self) -> u64 {
        self.popped.load(Ordering::SeqCst)
    }

    /// Take the next message (the receiving thread only, after `pushed` said one is there).
    pub fn pop(&self) -> Msg {
        loop {
            if let Some(m) = self.queue.pop() {
                return m;
            }
            // Counted after its push completed, so it is there: this only waits out a
            // reordering of the two that cannot happen with these orderings.
            std::hint::spin_loop();
        }
    }

    /// The receiver has handled `n` messages in all.
    pub fn set_popped(&self, n: u64) {
        self.popped.store(n, Ordering::SeqCst);
    }
}

/// Buffers of bulk payloads, recycled across messages and runs of the process: class `k`
/// holds empty `Vec`s of capacity `2^k`. A send takes one of the size it needs, or allocates
/// it; the receiver gives it back after the handler. Reuse keeps a transfer from paying the
/// operating system's page faults for fresh memory every time (a real DMA engine writes into
/// buffers that were set up once); the first transfer of a size in a process still pays them.
static POOL: [SegQueue<Vec<u64>>; 48] = [const { SegQueue::new() }; 48];

/// Buffers kept per size class.
const POOL_PER_CLASS: usize = 8;

/// An empty buffer with room for `words` words.
pub(crate) fn buffer(words: usize) -> Vec<u64> {
    if words == 0 {
        return Vec::new();
    }
    let class = words.next_power_of_two().trailing_zeros() as usize;
    match POOL.get(class).and_then(|q| q.pop()) {
        Some(v) => v,
        None => Vec::with_capacity(words.next_power_of_two()),
    }
}

/// Give a payload's buffer back.
pub(crate) fn recycle(mut v: Vec<u64>) {
    let cap = v.capacity();
    if cap == 0 || !cap.is_power_of_two() {
        return;
    }
    if let Some(q) = POOL.get(cap.trailing_zeros() as usize) {
        if q.len() < POOL_PER_CLASS {
            v.clear();
            q.push(v);
        }
    }
}
