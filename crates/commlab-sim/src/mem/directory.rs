//! The directory: per line of shared memory its state, owner and sharers, in 16 bytes.
//!
//! Four entries share a host cache line. At scale the directory does not fit in the host's
//! caches and a home's lookup is a host miss, so the entry is as small as the common case
//! allows: two sharers inline; a line with more keeps its list in a chunk of one flat arena
//! (`arena`), in the order the sharers were added, and the entry holds the chunk's offset and
//! the list's length. A chunk holds `capacity(len)` sharers (4, 8, 16, ...); a list that
//! outgrows its chunk moves to one twice as large, and a chunk no longer used (outgrown, or
//! its line's sharers cleared) goes to a free list of its size for the next list that needs
//! one. So reading a long list is one access beside the entry's, and the arena holds, for each
//! chunk size, only as many chunks as were ever in use at once.
//!
//! The order of the sharers is part of the result (invalidations go out in it), so both
//! representations keep it: `sharers` returns the same sequence whichever holds it. A line's
//! sharers are distinct (a sharer is listed only if it is not already), so whether anyone but
//! the requester shares the line follows from the count and, for one sharer, the inline slot:
//! the home's commonest question reads only the entry (`others_share`).

use super::protocol::DirState;

/// One line's directory entry (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(super) struct DirEntry {
    /// The state (bits 28 to 30), whether the sharers are in the arena (bit 27), how
    /// many are inline (bits 25 and 26), the overflowed flag (bit 24) and the hardware
    /// pointers in use (the low 24 bits) in one word (see the accessors).
    meta: u32,
    pub owner: u32,
    /// The inline sharers (the first `inline` of them), or the arena chunk's offset and the
    /// list's length.
    slots: [u32; 2],
}

const POINTERS_MASK: u32 = (1 << 24) - 1;
const OVERFLOWED_BIT: u32 = 1 << 24;
const INLINE_SHIFT: u32 = 25;
const INLINE_MASK: u32 = 0b11 << INLINE_SHIFT;
const SPILLED_BIT: u32 = 1 << 27;
const STATE_SHIFT: u32 = 28;
const _: () = assert!(crate::topology::MAX_PROCS <= POINTERS_MASK as usize, "a pointer count fits its 24 bits");

impl DirEntry {
    /// An entry with no sharers, owner 0, in the first state.
    pub fn new() -> DirEntry {
        DirEntry { meta: 0, owner: 0, slots: [0; 2] }
    }

    #[inline]
    pub fn state(&self) -> DirState {
        DirState::ALL[(self.meta >> STATE_SHIFT) as usize]
    }

    #[inline]
    pub fn set_state(&mut self, s: DirState) {
        self.meta = (self.meta & !(0b111 << STATE_SHIFT)) | (s as u32) << STATE_SHIFT;
    }

    /// LimitLESS: remote sharers held in the hardware pointers (below `topology::MAX_PROCS`).
    /// The home's own copy is not one of them (Alewife keeps it in a separate local bit).
    #[inline]
    pub fn hw_pointers_used(&self) -> usize {
        (self.meta & POINTERS_MASK) as usize
    }

    #[inline]
    pub fn set_hw_pointers_used(&mut self, n: usize) {
        debug_assert!(n <= POINTERS_MASK as usize);
        self.meta = (self.meta & !POINTERS_MASK) | n as u32;
    }

    /// LimitLESS: the sharer set overflowed into a list in memory since the line was last
    /// owned, so a write must trap to software to invalidate it.
    #[inline]
    pub fn overflowed(&self) -> bool {
        self.meta & OVERFLOWED_BIT != 0
    }

    #[inline]
    pub fn mark_overflowed(&mut self) {
        self.meta |= OVERFLOWED_BIT;
    }

    /// The arena chunk's offset and the list's length, when the sharers are in the arena.
    #[inline]
    fn spilled(&self) -> Option<(usize, usize)> {
        (self.meta & SPILLED_BIT != 0).then_some((self.slots[0] as usize, self.slots[1] as usize))
    }

    /// How many sharers are listed.
    #[inline]
    fn len(&self) -> usize {
        match self.spilled() {
            Some((_, len)) => len,
            None => self.inline_len(),
        }
    }

    #[inline]
    fn inline_len(&self) -> usize {
        ((self.meta & INLINE_MASK) >> INLINE_SHIFT) as usize
    }

    #[inline]
    fn set_inline_len(&mut self, n: usize) {
        debug_assert!(n <= self.slots.len());
        self.meta = (self.meta & !INLINE_MASK) | (n as u32) << INLINE_SHIFT;
    }
}

/// The sharers an arena chunk holds for a list of `len` (at least 3): 4, 8, 16, ...
#[inline]
fn capacity(len: usize) -> usize {
    len.next_power_of_two().max(4)
}

/// The free list a chunk of `capacity` goes to.
#[inline]
fn size_class(capacity: usize) -> usize {
    (capacity.trailing_zeros() - 2) as usize
}

/// Every line's entry, and the arena of the sharer lists too long to keep inline.
#[derive(Default)]
pub(super) struct Directory {
    entries: Vec<DirEntry>,
    arena: Vec<u32>,
    /// Per size class (`size_class`): offsets of arena chunks not in use.
    free: Vec<Vec<u32>>,
}

impl std::ops::Index<usize> for Directory {
    type Output = DirEntry;
    #[inline]
    fn index(&self, line: usize) -> &DirEntry {
        &self.entries[line]
    }
}

impl std::ops::IndexMut<usize> for Directory {
    #[inline]
    fn index_mut(&mut self, line: usize) -> &mut DirEntry {
        &mut self.entries[line]
    }
}

impl Directory {
    /// Add the next line's entry.
    pub fn push(&mut self, e: DirEntry) {
        debug_assert!(e.len() == 0, "a new line has no sharers");
        self.entries.push(e);
    }

    /// Every entry (their sharers through [`Directory::sharers`]).
    #[inline]
    pub fn entries(&self) -> &[DirEntry] {
        &self.entries
    }

    /// `line`'s sharers in the order they were added (may hold stale entries after a silent
    /// replacement).
    #[inline]
    pub fn sharers(&self, line: usize) -> &[u32] {
        let e = &self.entries[line];
        match e.spilled() {
            Some((at, len)) => &self.arena[at..at + len],
            None => &e.slots[..e.inline_len()],
        }
    }

    /// Whether anyone but `p` is listed as sharing `line`: what [`Directory::sharers`] would
    /// say, read from the entry alone (the sharers are distinct).
    #[inline]
    pub fn others_share(&self, line: usize, p: u32) -> bool {
        let e = &self.entries[line];
        match e.len() {
            0 => false,
            1 => e.slots[0] != p,
            _ => true,
        }
    }

    /// A free chunk of `capacity` sharers: its offset.
    fn chunk(&mut self, capacity: usize) -> usize {
        let class = size_class(capacity);
        if let Some(at) = self.free.get_mut(class).and_then(Vec::pop) {
            return at as usize;
        }
        let at = self.arena.len();
        self.arena.resize(at + capacity, 0);
        at
    }

    /// Return the chunk at `at`, which holds `capacity` sharers.
    fn free_chunk(&mut self, at: usize, capacity: usize) {
        let class = size_class(capacity);
        if self.free.len() <= class {
            self.free.resize_with(class + 1, Vec::new);
        }
        self.free[class].push(u32::try_from(at).expect("an arena of fewer than 2^32 sharers"));
    }

    /// List `p` after `line`'s other sharers; `p` must not be listed already.
    pub fn add_sharer(&mut self, line: usize, p: u32) {
        debug_assert!(!self.sharers(line).contains(&p), "line {line}: sharer {p} listed twice");
        let e = self.entries[line];
        let (at, len) = match e.spilled() {
            Some(spilled) => spilled,
            None => {
                let n = e.inline_len();
                if n < e.slots.len() {
                    let e = &mut self.entries[line];
                    e.slots[n] = p;
                    e.set_inline_len(n + 1);
                    return;
                }
                // The inline slots are full: the list moves to the arena, in order.
                let at = self.chunk(capacity(n + 1));
                self.arena[at..at + n].copy_from_slice(&e.slots);
                let e = &mut self.entries[line];
                e.set_inline_len(0);
                e.meta |= SPILLED_BIT;
                (at, n)
            }
        };
        let at = if len == capacity(len) {
            // The chunk is full: the list moves to one twice as large.
            let to = self.chunk(capacity(len + 1));
            self.arena.copy_within(at..at + len, to);
            self.free_chunk(at, capacity(len));
            to
        } else {
            at
        };
        self.arena[at + len] = p;
        let len = u32::try_from(len + 1).expect("fewer than 2^32 sharers");
        self.entries[line].slots = [at as u32, len];
    }

    /// Forget every sharer of `line` (hardware pointers and the software list alike); its
    /// state and owner stay.
    pub fn clear_sharers(&mut self, line: usize) {
        if let Some((at, len)) = self.entries[line].spilled() {
            self.free_chunk(at, capacity(len));
        }
        let e = &mut self.entries[line];
        e.slots = [0; 2];
        e.meta &= !(POINTERS_MASK | OVERFLOWED_BIT | INLINE_MASK | SPILLED_BIT);
    }

    /// Make `line`'s entry new: no sharers, owner 0, the first state.
    pub fn reset(&mut self, line: usize) {
        self.clear_sharers(line);
        self.entries[line] = DirEntry::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Four entries to a host cache line, none straddling two.
    #[test]
    fn a_directory_entry_is_16_bytes() {
        assert_eq!(std::mem::size_of::<DirEntry>(), 16);
    }

    /// The packed fields keep their values independently: every state with the largest
    /// pointer count and either flag, with sharers inline and in the arena, and clearing the sharers
    /// keeps the state and the owner.
    #[test]
    fn a_directory_entrys_packed_fields_are_independent() {
        let most = crate::topology::MAX_PROCS - 1;
        for s in DirState::ALL {
            for (n, flag) in [(0, false), (most, false), (most, true), (1, true)] {
                for sharers in [0u32, 1, 2, 3, 7] {
                    let mut d = Directory::default();
                    d.push(DirEntry::new());
                    d[0].set_hw_pointers_used(n);
                    if flag {
                        d[0].mark_overflowed();
                    }
                    d[0].set_state(s);
                    d[0].owner = 9;
                    for p in 0..sharers {
                        d.add_sharer(0, most as u32 - p);
                    }
                    let e = d[0];
                    assert_eq!((e.state(), e.hw_pointers_used(), e.overflowed(), e.owner), (s, n, flag, 9));
                    let want: Vec<u32> = (0..sharers).map(|p| most as u32 - p).collect();
                    assert_eq!(d.sharers(0), &want[..]);
                    d[0].set_hw_pointers_used(n / 2);
                    let e = d[0];
                    assert_eq!((e.state(), e.hw_pointers_used(), e.overflowed()), (s, n / 2, flag));
                    d.clear_sharers(0);
                    let e = d[0];
                    assert_eq!((e.state(), e.hw_pointers_used(), e.overflowed(), e.owner), (s, 0, false, 9));
                    assert!(d.sharers(0).is_empty());
                }
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add(usize, u32),
        Clear(usize),
        Reset(usize),
    }

    fn op(lines: usize) -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0..lines, 0..40u32).prop_map(|(l, p)| Op::Add(l, p)),
            1 => (0..lines).prop_map(Op::Clear),
            1 => (0..lines).prop_map(Op::Reset),
        ]
    }

    /// Every chunk of the arena, in use by a line or free, as (offset, capacity), sorted.
    fn chunks(d: &Directory) -> Vec<(usize, usize)> {
        let used = d.entries.iter().filter_map(|e| e.spilled()).map(|(at, len)| (at, capacity(len)));
        let free = d.free.iter().enumerate().flat_map(|(class, f)| f.iter().map(move |&at| (at as usize, 4 << class)));
        let mut all: Vec<(usize, usize)> = used.chain(free).collect();
        all.sort_unstable();
        all
    }

    proptest! {
        /// Against a plain `Vec` per line: every line's sharers come back in the order they
        /// were added, across moves to the arena and to larger chunks, clears and resets, with
        /// chunks reused between lines; `others_share` says what the list says; and the
        /// chunks in use and the free ones tile the arena exactly (none lost, none shared).
        #[test]
        fn sharers_come_back_in_the_order_they_were_added(ops in prop::collection::vec(op(6), 0..400)) {
            let lines = 6;
            let mut d = Directory::default();
            for _ in 0..lines {
                d.push(DirEntry::new());
            }
            let mut reference: Vec<Vec<u32>> = vec![Vec::new(); lines];
            for o in ops {
                match o {
                    // A sharer is listed only once (as the protocol lists them).
                    Op::Add(l, p) if reference[l].contains(&p) => {}
                    Op::Add(l, p) => {
                        d.add_sharer(l, p);
                        reference[l].push(p);
                    }
                    Op::Clear(l) => {
                        d.clear_sharers(l);
                        reference[l].clear();
                    }
                    Op::Reset(l) => {
                        d.reset(l);
                        reference[l].clear();
                    }
                }
                for (l, want) in reference.iter().enumerate() {
                    prop_assert_eq!(d.sharers(l), &want[..]);
                    for p in 0..41 {
                        prop_assert_eq!(d.others_share(l, p), want.iter().any(|&s| s != p));
                    }
                }
                let mut next = 0;
                for (at, cap) in chunks(&d) {
                    prop_assert_eq!(at, next, "chunks tile the arena");
                    next = at + cap;
                }
                prop_assert_eq!(next, d.arena.len());
            }
        }
    }
}
