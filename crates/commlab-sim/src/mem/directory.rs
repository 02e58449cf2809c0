//! The directory: per line of shared memory its state, owner and sharers, in 16 bytes.
//!
//! Four entries share a host cache line. At scale the directory does not fit in the host's
//! caches and a home's lookup is a host miss, so the entry is as small as the common case
//! allows: two sharers inline; a line with more keeps its whole list in a side table (`spill`),
//! in the order the sharers were added, and the entry holds the list's index. Clearing the
//! sharers returns the list to the table (emptied, its allocation kept for the next line that
//! needs one), so a run that shares lines widely allocates only as many lists as lines are
//! widely shared at once.
//!
//! The order of the sharers is part of the result (invalidations go out in it), so both
//! representations keep it: `sharers` returns the same sequence whichever holds it.

use super::protocol::DirState;

/// One line's directory entry (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(super) struct DirEntry {
    /// The state (bits 28 to 30), whether the sharers are in the side table (bit 27), how
    /// many are inline (bits 25 and 26), the overflowed flag (bit 24) and the hardware
    /// pointers in use (the low 24 bits) in one word (see the accessors).
    meta: u32,
    pub owner: u32,
    /// The inline sharers (the first `inline` of them), or in `slots[0]` the side table's
    /// index of the list.
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

    #[inline]
    fn spilled(&self) -> Option<usize> {
        (self.meta & SPILLED_BIT != 0).then_some(self.slots[0] as usize)
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

/// Every line's entry, and the side table of the sharer lists too long to keep inline.
#[derive(Default)]
pub(super) struct Directory {
    entries: Vec<DirEntry>,
    spill: Vec<Vec<u32>>,
    /// Indices of `spill`'s lists not in use (each empty).
    free: Vec<u32>,
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
        debug_assert!(e.spilled().is_none() && e.inline_len() == 0, "a new line has no sharers");
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
            Some(i) => &self.spill[i],
            None => &e.slots[..e.inline_len()],
        }
    }

    /// List `p` after `line`'s other sharers.
    pub fn add_sharer(&mut self, line: usize, p: u32) {
        let e = &mut self.entries[line];
        if let Some(i) = e.spilled() {
            self.spill[i].push(p);
            return;
        }
        let n = e.inline_len();
        if n < e.slots.len() {
            e.slots[n] = p;
            e.set_inline_len(n + 1);
            return;
        }
        // The inline slots are full: the list moves to the side table, in order.
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.spill.push(Vec::new());
                u32::try_from(self.spill.len() - 1).expect("fewer than 2^32 widely shared lines")
            }
        };
        let list = &mut self.spill[i as usize];
        debug_assert!(list.is_empty());
        list.extend_from_slice(&e.slots);
        list.push(p);
        e.slots = [i, 0];
        e.set_inline_len(0);
        e.meta |= SPILLED_BIT;
    }

    /// Forget every sharer of `line` (hardware pointers and the software list alike); its
    /// state and owner stay.
    pub fn clear_sharers(&mut self, line: usize) {
        let e = &mut self.entries[line];
        if let Some(i) = e.spilled() {
            self.spill[i].clear();
            self.free.push(i as u32);
        }
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
    /// pointer count and either flag, with sharers inline and spilled, and clearing the sharers
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

    proptest! {
        /// Against a plain `Vec` per line: every line's sharers come back in the order they
        /// were added, across spills, clears and resets, with lists reused between lines; and
        /// the side table never holds more lists than lines were spilled at once.
        #[test]
        fn sharers_come_back_in_the_order_they_were_added(ops in prop::collection::vec(op(6), 0..400)) {
            let lines = 6;
            let mut d = Directory::default();
            for _ in 0..lines {
                d.push(DirEntry::new());
            }
            let mut reference: Vec<Vec<u32>> = vec![Vec::new(); lines];
            let mut most_spilled = 0;
            for o in ops {
                match o {
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
                }
                most_spilled = most_spilled.max(reference.iter().filter(|r| r.len() > 2).count());
                prop_assert!(d.spill.len() <= most_spilled);
                prop_assert_eq!(d.spill.len() - d.free.len(), reference.iter().filter(|r| r.len() > 2).count());
            }
        }
    }
}
