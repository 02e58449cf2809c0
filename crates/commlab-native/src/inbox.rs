//! Active messages in flight: one single-producer single-consumer channel per (sender,
//! receiver) pair, the receiver polling the message slots themselves.
//!
//! A channel is a chain of blocks of [`BLOCK_SLOTS`] slots, each slot one 64-byte-aligned
//! record whose first line holds the slot's sequence number, the message's header and its
//! first two argument words. The sender writes a message into its next slot and then stores the
//! slot's sequence number (release); the receiver, which knows the number it expects next,
//! loads that one word (acquire). A null or short message thus crosses between the two cores
//! as one cache line, as a bare cache-line ping-pong does: nothing else is written per message
//! by both sides (no shared head or tail index, no count in another line). The sender and the
//! receiver each keep their place in the chain in their own memory.
//!
//! Channels are unbounded, so a send never waits (a sender waiting for room while its receiver
//! waits for room the other way would deadlock): when a block is full the sender links a new
//! one (the block the receiver last finished, kept as the pair's spare, else a fresh one), so a
//! steady stream allocates nothing. Sequence numbers only grow, so a reused block's old numbers
//! never look like the next message.
//!
//! For the watchdog every processor publishes how many messages it has sent and how many it
//! has handled (counted after the handler returned), each on its own line: equal sums over all
//! processors mean no message is waiting or being handled.

use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// The most argument words one active message carries natively.
pub(crate) const MAX_ARGS: usize = 16;

/// Slots per block (a block is 32 x 192 bytes, 6 KB; at most a few per pair in use).
const BLOCK_SLOTS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Application handler `HandlerId(i)`.
    App(u32),
    /// A child reached the message barrier.
    BarrierArrive,
    /// The message barrier of this epoch is complete.
    BarrierRelease(u64),
}

impl Target {
    fn encode(self) -> (u8, u64) {
        match self {
            Target::App(h) => (0, h as u64),
            Target::BarrierArrive => (1, 0),
            Target::BarrierRelease(e) => (2, e),
        }
    }

    fn decode(kind: u8, value: u64) -> Target {
        match kind {
            0 => Target::App(value as u32),
            1 => Target::BarrierArrive,
            _ => Target::BarrierRelease(value),
        }
    }
}

/// A message's fields besides its arguments (all plain integers, so a zeroed block is valid).
#[derive(Clone, Copy)]
#[repr(C)]
struct Header {
    kind: u8,
    /// Sent after the timed region began (counted by sender and receiver alike).
    timed: bool,
    nargs: u8,
    value: u64,
    /// The bulk payload's `Vec` as raw parts (capacity 0: none).
    payload_ptr: *mut u64,
    payload_len: usize,
    payload_cap: usize,
}

/// One message slot: the sequence number, header and first two argument words in the first
/// cache line (what a null or short message touches), the other arguments in the next two.
#[repr(C, align(64))]
pub(crate) struct Slot {
    /// The pair's message number (from 1) once the message is written; older numbers (or 0)
    /// before.
    seq: AtomicU64,
    header: UnsafeCell<Header>,
    args: UnsafeCell<[u64; MAX_ARGS]>,
}

#[repr(C)]
struct Block {
    slots: [Slot; BLOCK_SLOTS],
    next: CachePadded<AtomicPtr<Block>>,
}

fn new_block() -> *mut Block {
    let layout = std::alloc::Layout::new::<Block>();
    // SAFETY: the layout is not zero-sized; every field of a block (atomics, plain integers,
    // raw pointers) is valid when all its bytes are zero.
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Block;
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    p
}

/// # Safety
/// `b` came from [`new_block`] and nothing uses it any more.
unsafe fn free_block(b: *mut Block) {
    unsafe { std::alloc::dealloc(b as *mut u8, std::alloc::Layout::new::<Block>()) }
}

/// The receiver's side of a pair, on its own line.
#[derive(Default)]
struct RxShared {
    /// The block the receiver reads (for dropping what is left when the run ends).
    head: AtomicPtr<Block>,
    /// Messages taken (their handlers returned).
    taken: AtomicU64,
}

/// What sender and receiver of one pair share.
#[derive(Default)]
struct Pair {
    /// The first block, linked by the sender's first message (null before).
    first: AtomicPtr<Block>,
    /// A finished block the receiver hands back for reuse.
    spare: AtomicPtr<Block>,
    rx: CachePadded<RxShared>,
}

/// Every pair's channel and every processor's published counts.
pub(crate) struct Channels {
    n: usize,
    /// Indexed `dst * n + src` (a receiver's channels side by side).
    pairs: Vec<CachePadded<Pair>>,
    sent: Vec<CachePadded<AtomicU64>>,
    handled: Vec<CachePadded<AtomicU64>>,
}

// SAFETY: the raw block pointers are handed between threads only through the atomics, with
// release/acquire orderings that make the blocks' contents visible (see `push` and `look`).
unsafe impl Send for Channels {}
unsafe impl Sync for Channels {}

/// A sender's place in its channel to one receiver (the sender's own memory).
pub(crate) struct TxEnd {
    tail: *mut Block,
    idx: usize,
    count: u64,
}

/// A receiver's place in its channel from one sender (the receiver's own memory).
pub(crate) struct RxEnd {
    block: *mut Block,
    idx: usize,
    count: u64,
}

/// A message taken from its slot: the header's copy and the payload, owned now.
pub(crate) struct Incoming<'a> {
    pub target: Target,
    pub timed: bool,
    pub args: &'a [u64],
    pub payload: Vec<u64>,
}

impl Channels {
    pub fn new(n: usize) -> Channels {
        Channels {
            n,
            pairs: (0..n * n).map(|_| CachePadded::new(Pair::default())).collect(),
            sent: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            handled: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
        }
    }

    /// A processor's ends: to every receiver, from every sender.
    pub fn ends(&self) -> (Vec<TxEnd>, Vec<RxEnd>) {
        let tx = (0..self.n).map(|_| TxEnd { tail: ptr::null_mut(), idx: 0, count: 0 }).collect();
        let rx = (0..self.n).map(|_| RxEnd { block: ptr::null_mut(), idx: 0, count: 0 }).collect();
        (tx, rx)
    }

    /// Deliver a message from `src` to `dst` (on `src`'s thread, through its end `tx` to
    /// `dst`); `sent` is `src`'s count of messages sent, published.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push(
        &self,
        tx: &mut TxEnd,
        src: usize,
        dst: usize,
        target: Target,
        timed: bool,
        args: &[u64],
        payload: Vec<u64>,
        sent: &mut u64,
    ) {
        debug_assert!(args.len() <= MAX_ARGS);
        let pair = &self.pairs[dst * self.n + src];
        if tx.tail.is_null() {
            let b = new_block();
            pair.first.store(b, Ordering::Release);
            (tx.tail, tx.idx) = (b, 0);
        } else if tx.idx == BLOCK_SLOTS {
            let mut b = pair.spare.swap(ptr::null_mut(), Ordering::Acquire);
            if b.is_null() {
                b = new_block();
            }
            // SAFETY: `tx.tail` is this sender's current block, alive until the receiver has
            // moved past it, which it cannot before this link.
            unsafe { (*tx.tail).next.store(b, Ordering::Release) };
            (tx.tail, tx.idx) = (b, 0);
        }
        // SAFETY: slot `idx` of the sender's block is written only by this sender and read by
        // the receiver only after the sequence number below says it is written.
        unsafe {
            let slot = &(*tx.tail).slots[tx.idx];
            let (kind, value) = target.encode();
            let mut payload = std::mem::ManuallyDrop::new(payload);
            *slot.header.get() = Header {
                kind,
                timed,
                nargs: args.len() as u8,
                value,
                payload_ptr: payload.as_mut_ptr(),
                payload_len: payload.len(),
                payload_cap: payload.capacity(),
            };
            // Only the words the message has: a null message writes nothing past the first line
            // (and calls no memcpy).
            if !args.is_empty() {
                ptr::copy_nonoverlapping(args.as_ptr(), slot.args.get() as *mut u64, args.len());
            }
            tx.count += 1;
            slot.seq.store(tx.count, Ordering::Release);
        }
        tx.idx += 1;
        *sent += 1;
        self.sent[src].store(*sent, Ordering::Release);
    }

    /// The next message from `src` to `dst`, if it has come (on `dst`'s thread; it stays in its
    /// slot until [`Channels::take`]).
    #[inline]
    pub fn look<'a>(&'a self, rx: &mut RxEnd, src: usize, dst: usize) -> Option<&'a Slot> {
        let pair = &self.pairs[dst * self.n + src];
        if rx.block.is_null() {
            let b = pair.first.load(Ordering::Acquire);
            if b.is_null() {
                return None;
            }
            (rx.block, rx.idx) = (b, 0);
            pair.rx.head.store(b, Ordering::Relaxed);
        }
        if rx.idx == BLOCK_SLOTS {
            // SAFETY: the receiver's block stays alive until the receiver gives it back here.
            let next = unsafe { (*rx.block).next.load(Ordering::Acquire) };
            if next.is_null() {
                return None;
            }
            let old = std::mem::replace(&mut rx.block, next);
            rx.idx = 0;
            pair.rx.head.store(next, Ordering::Relaxed);
            // SAFETY: every slot of `old` was taken and the sender has moved on to `next`:
            // nobody uses `old` any more.
            unsafe {
                (*old).next.store(ptr::null_mut(), Ordering::Relaxed);
                if pair.spare.compare_exchange(ptr::null_mut(), old, Ordering::Release, Ordering::Relaxed).is_err() {
                    free_block(old);
                }
            }
        }
        // SAFETY: as above, the block is alive.
        let slot: &'a Slot = unsafe { &(*rx.block).slots[rx.idx] };
        (slot.seq.load(Ordering::Acquire) == rx.count + 1).then_some(slot)
    }

    /// Take the message `look` found: its header, arguments (in the slot, untouched until
    /// [`Channels::done`]) and payload.
    #[inline]
    pub fn take<'a>(&self, slot: &'a Slot) -> Incoming<'a> {
        // SAFETY: the acquire load in `look` saw the sequence number the sender stored after
        // writing these; the sender does not write this slot again before `done` (and the
        // block's return).
        unsafe {
            let h = *slot.header.get();
            let payload = if h.payload_cap == 0 {
                Vec::new()
            } else {
                Vec::from_raw_parts(h.payload_ptr, h.payload_len, h.payload_cap)
            };
            let args = std::slice::from_raw_parts(slot.args.get() as *const u64, h.nargs as usize);
            Incoming { target: Target::decode(h.kind, h.value), timed: h.timed, args, payload }
        }
    }

    /// The handler of the message taken from `src` returned; `handled` is `dst`'s count of
    /// messages handled, published.
    #[inline]
    pub fn done(&self, rx: &mut RxEnd, src: usize, dst: usize, handled: &mut u64) {
        rx.idx += 1;
        rx.count += 1;
        self.pairs[dst * self.n + src].rx.taken.store(rx.count, Ordering::Relaxed);
        *handled += 1;
        self.handled[dst].store(*handled, Ordering::Release);
    }

    /// Every processor's (messages sent, messages handled) as published.
    pub fn counts(&self) -> Vec<(u64, u64)> {
        self.sent.iter().zip(&self.handled).map(|(s, h)| (s.load(Ordering::SeqCst), h.load(Ordering::SeqCst))).collect()
    }
}

impl Drop for Channels {
    /// Free every block, and the payloads of messages never taken (a failed run's).
    fn drop(&mut self) {
        for pair in &self.pairs {
            let taken = pair.rx.taken.load(Ordering::Relaxed);
            let mut b = pair.rx.head.load(Ordering::Relaxed);
            if b.is_null() {
                b = pair.first.load(Ordering::Relaxed);
            }
            // SAFETY: the threads have ended; the chain from the receiver's block holds every
            // block in use, the spare none of them.
            unsafe {
                while !b.is_null() {
                    for slot in &(*b).slots {
                        let h = *slot.header.get();
                        if slot.seq.load(Ordering::Relaxed) > taken && h.payload_cap > 0 {
                            drop(Vec::from_raw_parts(h.payload_ptr, h.payload_len, h.payload_cap));
                        }
                    }
                    let next = (*b).next.load(Ordering::Relaxed);
                    free_block(b);
                    b = next;
                }
                let spare = pair.spare.load(Ordering::Relaxed);
                if !spare.is_null() {
                    free_block(spare);
                }
            }
        }
    }
}

/// Bulk payload buffers: one pool per sending processor (by processor number), kept for the
/// life of the process and shared by its runs. Class `k` of a pool holds empty `Vec`s of
/// capacity `2^k` words. A send takes a buffer of the size it needs from its *own* pool (or
/// allocates one) and copies the regions into it with a plain memcpy; the receiver puts it back
/// in the sender's pool after the handler. Each processor's thread fills its pool before the
/// program starts ([`BufferPool::prefault`]), so a transfer lands in memory that was set up
/// once, as a DMA engine's buffers are, not in fresh pages the operating system must fault in
/// and zero (which made a first 4 MB transfer 10 to 30 times slower than memcpy).
///
/// Why the sender's pool and not the receiver's: on a coherent host the payload is in the
/// sender's caches after its copy whatever buffer it went to, and the handler's reads fetch it
/// from there. A buffer the receiver touched last (its pool's) makes the sender's copy take
/// every line from the receiver's caches first, so the lines cross between the cores twice;
/// a buffer of the sender's crosses once, when the handler reads it. The consequence for the
/// figures: a transfer's time (send start to handler entry) is the sender's local copy and the
/// notification, and moving the lines to the receiver's core is handler time (message
/// overhead), paid as the handler reads them.
pub(crate) struct BufferPool {
    classes: [SegQueue<Vec<u64>>; 48],
}

/// Buffers kept per size class and receiver (more are freed when given back).
const POOL_PER_CLASS: usize = 8;

/// The classes [`BufferPool::prefault`] fills, in words: 4 KiB (2^9 words) to 4 MiB (2^19
/// words), one buffer each. Memory cost: just under 8 MiB per processor number used in the
/// process, resident for the process's life (a 64-processor run: 512 MiB), and about 2048 page
/// faults (a few milliseconds) per processor the first time that processor number runs.
/// Larger transfers pay their page faults the first time a buffer of their class is used.
const PREFAULT_CLASSES: std::ops::RangeInclusive<usize> = 9..=19;

/// Buffers of the largest transfer's class the receive reserve holds: two, so that a sender
/// whose previous transfer is still being handled takes the other one (double buffering, as a
/// runtime with a pair of receive buffers per channel alternates between them) instead of
/// allocating and faulting a third; the pool's queues are first in, first out, so transfers one
/// at a time alternate between the two as well. More in flight at once than that allocate (a
/// native send never waits for a buffer).
pub(crate) const RESERVE_COPIES: usize = 2;

/// The size class (power of two of words) a buffer of `words` words comes from.
fn class_of(words: usize) -> usize {
    words.next_power_of_two().trailing_zeros() as usize
}

impl BufferPool {
    fn new() -> BufferPool {
        BufferPool { classes: [const { SegQueue::new() }; 48] }
    }

    /// Processor `p`'s pool (made on first use).
    pub fn of(p: usize) -> std::sync::Arc<BufferPool> {
        static POOLS: std::sync::Mutex<Vec<std::sync::Arc<BufferPool>>> = std::sync::Mutex::new(Vec::new());
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        while pools.len() <= p {
            pools.push(std::sync::Arc::new(BufferPool::new()));
        }
        pools[p].clone()
    }

    /// Make sure the pool has a buffer of every class in [`PREFAULT_CLASSES`] and, when the
    /// program declared its largest transfer from this processor (`largest_words` > 0, from
    /// [`commlab_api::Program::largest_transfer_words`]), [`RESERVE_COPIES`] buffers of that
    /// transfer's class (the *receive reserve*), all of it written (zeroed) once, on the owning
    /// processor's thread before its program starts: its pages are that processor's (first
    /// touch) and no page of a transfer up to that size is faulted in during the run.
    pub fn prefault(&self, largest_words: usize) {
        for k in PREFAULT_CLASSES {
            self.fill(k, 1);
        }
        if largest_words > 0 {
            self.fill(class_of(largest_words), RESERVE_COPIES);
        }
    }

    /// Add pre-faulted buffers of class `k` until it holds `count`.
    fn fill(&self, k: usize, count: usize) {
        while self.classes[k].len() < count {
            let mut v: Vec<u64> = Vec::with_capacity(1 << k);
            // Through `black_box`: a fresh allocation followed by a zeroing memset is otherwise
            // turned into a zeroed allocation (calloc), which maps fresh pages untouched, and
            // the first transfer into the buffer paid every page fault (4 MB: 2 GB/s).
            let p = std::hint::black_box(v.as_mut_ptr());
            // SAFETY: the capacity is `2^k` words; writing the spare capacity is allowed (the
            // length stays 0).
            unsafe { std::ptr::write_bytes(p, 0, 1 << k) };
            v.clear();
            self.classes[k].push(v);
        }
    }

    /// An empty buffer with room for `words` words.
    pub fn take(&self, words: usize) -> Vec<u64> {
        if words == 0 {
            return Vec::new();
        }
        match self.classes.get(class_of(words)).and_then(|q| q.pop()) {
            Some(v) => v,
            None => Vec::with_capacity(words.next_power_of_two()),
        }
    }

    /// Give a payload's buffer back.
    pub fn give(&self, mut v: Vec<u64>) {
        let cap = v.capacity();
        if cap == 0 || !cap.is_power_of_two() {
            return;
        }
        if let Some(q) = self.classes.get(cap.trailing_zeros() as usize) {
            if q.len() < POOL_PER_CLASS {
                v.clear();
                q.push(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_prefaulted_for_every_class_and_reuses_its_buffers() {
        let pool = BufferPool::new();
        pool.prefault(0);
        for k in PREFAULT_CLASSES {
            assert_eq!(pool.classes[k].len(), 1, "class {k}");
        }
        // A prefaulted buffer of the class a size needs, handed back and taken again.
        let v = pool.take(1000);
        assert_eq!((v.len(), v.capacity()), (0, 1024));
        let at = v.as_ptr();
        pool.give(v);
        let again = pool.take(600);
        assert_eq!(again.as_ptr(), at);
        // Beyond the prefaulted classes: allocated, then kept.
        let big = pool.take((1 << 20) + 1);
        assert_eq!(big.capacity(), 1 << 21);
        pool.give(big);
        assert_eq!(pool.classes[21].len(), 1);
        // At most POOL_PER_CLASS kept.
        for _ in 0..2 * POOL_PER_CLASS {
            pool.give(Vec::with_capacity(8));
        }
        assert_eq!(pool.classes[3].len(), POOL_PER_CLASS);
        assert!(pool.take(0).capacity() == 0);
    }

    #[test]
    fn the_receive_reserve_holds_two_buffers_of_the_largest_transfer_and_they_alternate() {
        let pool = BufferPool::new();
        // Inside the prefaulted classes (class 12 has one already) and beyond them (class 20).
        for words in [3000usize, (1 << 19) + 5] {
            pool.prefault(words);
            let k = class_of(words);
            assert_eq!(pool.classes[k].len(), RESERVE_COPIES, "{words} words");
            // A second prefault (the next run in the process) adds nothing.
            pool.prefault(words);
            assert_eq!(pool.classes[k].len(), RESERVE_COPIES, "{words} words");
            // Two transfers in flight at once take two different buffers, allocating nothing.
            let (a, b) = (pool.take(words), pool.take(words));
            assert!(a.capacity() >= words && b.capacity() >= words);
            assert_ne!(a.as_ptr(), b.as_ptr());
            assert_eq!(pool.classes[k].len(), 0);
            let (pa, pb) = (a.as_ptr(), b.as_ptr());
            pool.give(a);
            pool.give(b);
            // One at a time, given back after each: they alternate.
            let c = pool.take(words);
            assert_eq!(c.as_ptr(), pa);
            pool.give(c);
            let d = pool.take(words);
            assert_eq!(d.as_ptr(), pb);
            pool.give(d);
        }
        // Nothing declared: only the prefaulted classes.
        let plain = BufferPool::new();
        plain.prefault(0);
        assert!(plain.classes[20].is_empty());
    }
}
