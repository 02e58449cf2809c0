//! Processors' caches: set-associative, LRU, line-granular. Holds tags and protocol states
//! only; data lives in the single backing store (functional-first).
//!
//! Every processor's cache is one flat array of ways (tag, state and prefetch flag in one 8-byte
//! word, so a lookup is one host miss; a set-associative cache's LRU stamps after its set's
//! ways) that starts as zeros (an empty way is tag 0), so the OS maps only the pages of sets a
//! run touches: host memory grows with what the processors cache, not with their number (the
//! memory estimate, `engine::machine_bytes`, counts [`way_bytes`] per way). `paged` gives
//! physically indexed caches their page colours (`hierarchy.page_bytes`, see `hier.rs`).

use super::protocol::CacheState;
use std::collections::HashMap;

/// Line number: byte address / line size.
pub(crate) type Line = u64;

/// What a way holds: `line + 1`, or `EMPTY`. Every array of [`Caches`] starts as zeros, so it
/// can come from zeroed memory, which the OS maps on first write: a machine's caches cost host
/// memory only for the pages of sets its processors touch (a 20,000-processor run whose
/// processors touch a few lines each otherwise writes every tag array at start-up, about 73 KB
/// per processor for Alewife's 64 KB cache).
type Tag = u64;
const EMPTY: Tag = 0;

#[inline]
fn tag_of(line: Line) -> Tag {
    line + 1
}

#[inline]
fn line_of(tag: Tag) -> Line {
    tag - 1
}

/// A state as stored: 0 is Invalid, so the zeroed array is a cache of invalid ways.
#[inline]
fn encode(s: CacheState) -> u8 {
    match s {
        CacheState::Invalid => 0,
        CacheState::Shared => 1,
        CacheState::Modified => 2,
    }
}

#[inline]
fn decode(b: u8) -> CacheState {
    match b {
        0 => CacheState::Invalid,
        1 => CacheState::Shared,
        _ => CacheState::Modified,
    }
}

/// Host bytes of one cache way at associativity `ways` (what the memory estimate counts per
/// line): the way's word, and its LRU stamp when the cache has a choice of victim.
pub(crate) const fn way_bytes(ways: u64) -> u64 {
    if ways > 1 {
        16
    } else {
        8
    }
}

/// One way of a set, packed in one word so that a lookup at scale, where the ways of a thousand
/// caches do not fit in the host's caches, costs one host miss, and a direct-mapped cache (most
/// presets') takes 8 host bytes per line: 1024 Alewife caches are 32 MB of ways, not 64. The
/// low [`TAG_BITS`] bits are the tag (`line + 1`, or `EMPTY`), then the protocol state
/// (`encode`d, two bits), then the unused-prefetch flag (the top bit: a prefetch brought the
/// line in and no access has used it yet). All-zero is an empty way (Invalid, never used, not
/// prefetched). A line number needs at most 61 bits (`memory.line_bytes` >= 8 and addresses are
/// 64-bit); `Way::new` checks it.
///
/// The LRU stamps are not in the way: only a cache with more than one way reads them, so each
/// set of such a cache keeps its ways' stamps right after its ways (`Caches::block`), which
/// leaves a 4-way set's ways and stamps in 64 bytes, as before, and a direct-mapped set with
/// its one word. A stamp is the processor's count of cache touches and installs.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Way(u64);

const TAG_BITS: u32 = 61;
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
const STATE_MASK: u64 = 0b11 << TAG_BITS;
const PREFETCH_BIT: u64 = 1 << 63;

impl Way {
    #[inline]
    fn tag(self) -> Tag {
        self.0 & TAG_MASK
    }
    #[inline]
    fn state(self) -> u8 {
        ((self.0 & STATE_MASK) >> TAG_BITS) as u8
    }
    #[inline]
    fn set_state(&mut self, state: u8) {
        self.0 = (self.0 & !STATE_MASK) | (u64::from(state) << TAG_BITS);
    }
    /// Empties the way (tag and prefetch flag cleared), keeping its state bits.
    #[inline]
    fn clear_tag(&mut self) {
        self.0 &= STATE_MASK;
    }
    /// Clears the unused-prefetch flag, returning what it was.
    #[inline]
    fn take_unused_prefetch(&mut self) -> bool {
        let was = self.0 & PREFETCH_BIT != 0;
        self.0 &= !PREFETCH_BIT;
        was
    }
    #[inline]
    fn new(line: Line, state: u8, prefetched: bool) -> Way {
        let tag = tag_of(line);
        assert!(tag <= TAG_MASK, "line {line} does not fit a cache tag's {TAG_BITS} bits");
        let flag = if prefetched { PREFETCH_BIT } else { 0 };
        Way(tag | (u64::from(state) << TAG_BITS) | flag)
    }
}

/// `n` processors' caches of one geometry, each set-associative with LRU replacement, in one
/// flat array of words: set `set` of processor `p` is the block at `(p * sets + set) * block`,
/// its ways first and then, when there is more than one, their LRU stamps (one zeroed
/// allocation, large enough to be mapped lazily).
#[derive(Clone)]
pub(crate) struct Caches {
    sets: u64,
    /// `sets - 1` when `sets` is a power of two (the set is then a mask, not a division).
    set_mask: Option<u64>,
    ways: usize,
    /// Words per set: its ways, and their stamps when `ways > 1`.
    block: usize,
    /// Words per processor: sets x block.
    slots: usize,
    /// Pages at physical frames the OS chose (`hierarchy.page_bytes`): log2 of the lines per
    /// page and the page colours (sets / lines per page). A line's set is its place in its
    /// page plus its page's colour.
    pages: Option<(u32, u64)>,
    /// Per processor: the frame number (modulo the colours, its colour) each page got, in the
    /// order the processor's cache first held a line of it (bin hopping), and the next one.
    frames: Vec<HashMap<u64, u64>>,
    next_frame: Vec<u64>,
    /// Ways ([`Way`]'s word) and stamps, by block.
    word: Vec<u64>,
    /// Each processor's LRU clock.
    clock: Vec<u64>,
}

impl Caches {
    pub fn new(n: usize, lines: u64, ways: usize) -> Caches {
        let sets = (lines / ways as u64).max(1);
        // The way's word, and its stamp when there is a choice of victim (`way_bytes`).
        let block = ways * (way_bytes(ways as u64) / 8) as usize;
        let slots = (sets as usize) * block;
        let all = slots * n;
        Caches {
            sets,
            set_mask: sets.is_power_of_two().then(|| sets - 1),
            ways,
            block,
            slots,
            pages: None,
            frames: Vec::new(),
            next_frame: Vec::new(),
            word: bytemuck::zeroed_vec(all),
            clock: vec![0; n],
        }
    }

    /// Index by physical frames: pages of `page_lines` lines (a power of two) get frames in
    /// the order they are first touched, one colour after the other (bin hopping), not at
    /// their virtual address: two arrays a cache size apart in virtual memory, touched
    /// together, do not share sets. Only a cache whose sets are a whole number of pages (more
    /// than one) is affected; a cache of one page or less is indexed within the page anyway.
    pub fn paged(mut self, page_lines: u64) -> Caches {
        debug_assert!(page_lines.is_power_of_two());
        if self.sets > page_lines && self.sets.is_multiple_of(page_lines) {
            self.pages = Some((page_lines.trailing_zeros(), self.sets / page_lines));
            self.frames = vec![HashMap::new(); self.clock.len()];
            self.next_frame = vec![0; self.clock.len()];
        }
        self
    }

    /// The frame of `line`'s page at processor `p`: the one it got, or the one it would get now.
    #[inline]
    fn frame(&self, p: usize, page: u64) -> u64 {
        self.frames[p].get(&page).copied().unwrap_or(self.next_frame[p])
    }

    /// The number of caches.
    pub fn len(&self) -> usize {
        self.clock.len()
    }

    /// The ways of `line`'s set at processor `p` (indices of their words; way `i`'s stamp is
    /// word `i + ways`).
    #[inline]
    fn set_of(&self, p: usize, line: Line) -> std::ops::Range<usize> {
        let set = match (self.pages, self.set_mask) {
            (Some((shift, colours)), _) => {
                (self.frame(p, line >> shift) % colours) << shift | (line & ((1 << shift) - 1))
            }
            (None, Some(mask)) => line & mask,
            (None, None) => line % self.sets,
        };
        let base = p * self.slots + set as usize * self.block;
        base..base + self.ways
    }

    #[inline]
    fn way(&self, i: usize) -> Way {
        Way(self.word[i])
    }

    /// The LRU stamp of way `i` (0 in a direct-mapped cache, which keeps none).
    #[inline]
    fn stamp(&self, i: usize) -> u64 {
        if self.ways > 1 {
            self.word[i + self.ways]
        } else {
            0
        }
    }

    #[inline]
    fn slot(&self, p: usize, line: Line) -> Option<usize> {
        let tag = tag_of(line);
        self.set_of(p, line).find(|&i| self.way(i).tag() == tag)
    }

    /// The line's state at processor `p` (Invalid when absent).
    #[inline]
    pub fn state(&self, p: usize, line: Line) -> CacheState {
        self.slot(p, line).map_or(CacheState::Invalid, |i| decode(self.way(i).state()))
    }

    /// Mark a use of a present line (LRU); returns whether this is the first use of a line a
    /// prefetch brought in (a useful prefetch).
    #[inline]
    pub fn touch(&mut self, p: usize, line: Line) -> bool {
        let Some(i) = self.slot(p, line) else { return false };
        if self.ways > 1 {
            self.clock[p] += 1;
            self.word[i + self.ways] = self.clock[p];
        }
        let mut w = self.way(i);
        let useful = w.take_unused_prefetch();
        self.word[i] = w.0;
        useful
    }

    /// Change the state of a present line; Invalid removes it.
    pub fn set_state(&mut self, p: usize, line: Line, s: CacheState) {
        if let Some(i) = self.slot(p, line) {
            let mut w = self.way(i);
            if !s.valid() {
                w.clear_tag();
            }
            w.set_state(encode(s));
            self.word[i] = w.0;
        }
    }

    /// What installing `line` at processor `p` needs: `Ok(None)` if a way is free or `line` is
    /// present, `Ok(Some(victim))` for the least recently used line that `keep` does not
    /// protect, or `Err(())` if every way holds a protected line (a conflict with lines that
    /// must stay).
    #[allow(clippy::result_unit_err)]
    pub fn victim(&self, p: usize, line: Line, keep: impl Fn(Line) -> bool) -> Result<Option<(Line, CacheState)>, ()> {
        if self.slot(p, line).is_some() {
            return Ok(None);
        }
        let ways = self.set_of(p, line);
        if ways.clone().any(|i| self.way(i).tag() == EMPTY) {
            return Ok(None);
        }
        let i = ways.filter(|&i| !keep(line_of(self.way(i).tag()))).min_by_key(|&i| self.stamp(i)).ok_or(())?;
        Ok(Some((line_of(self.way(i).tag()), decode(self.way(i).state()))))
    }

    /// Install `line` at processor `p` in state `s` (the victim, if any, must have been dealt
    /// with); `prefetched` when a prefetch brought it.
    pub fn install(&mut self, p: usize, line: Line, s: CacheState, prefetched: bool) {
        if let Some((shift, _)) = self.pages {
            if let std::collections::hash_map::Entry::Vacant(e) = self.frames[p].entry(line >> shift) {
                e.insert(self.next_frame[p]);
                self.next_frame[p] += 1;
            }
        }
        let ways = self.set_of(p, line);
        let i = self
            .slot(p, line)
            .or_else(|| ways.clone().find(|&i| self.way(i).tag() == EMPTY))
            .unwrap_or_else(|| ways.min_by_key(|&i| self.stamp(i)).expect("at least one way"));
        self.clock[p] += 1;
        self.word[i] = Way::new(line, encode(s), prefetched).0;
        if self.ways > 1 {
            self.word[i + self.ways] = self.clock[p];
        }
    }
}

/// One cache (the hierarchy's inner levels keep one per processor).
#[derive(Clone)]
pub(crate) struct Cache(Caches);

impl Cache {
    pub fn new(lines: u64, ways: usize, page_lines: Option<u64>) -> Cache {
        let c = Caches::new(1, lines, ways);
        Cache(match page_lines {
            Some(n) => c.paged(n),
            None => c,
        })
    }

    #[inline]
    pub fn state(&self, line: Line) -> CacheState {
        self.0.state(0, line)
    }

    #[inline]
    pub fn touch(&mut self, line: Line) -> bool {
        self.0.touch(0, line)
    }

    pub fn install(&mut self, line: Line, s: CacheState, prefetched: bool) {
        self.0.install(0, line, s, prefetched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_mapped_conflicts_evict() {
        let mut c = Caches::new(2, 4, 1);
        c.install(1, 1, CacheState::Shared, false);
        assert_eq!(c.state(1, 1), CacheState::Shared);
        assert_eq!(c.state(0, 1), CacheState::Invalid, "another processor's cache is separate");
        assert_eq!(c.victim(1, 5, |_| false), Ok(Some((1, CacheState::Shared))));
        assert_eq!(c.victim(0, 5, |_| false), Ok(None), "processor 0's set is empty");
        assert_eq!(c.victim(1, 5, |l| l == 1), Err(()), "the only way holds a line that must stay");
        c.install(1, 5, CacheState::Modified, false);
        assert_eq!(c.state(1, 1), CacheState::Invalid);
        assert_eq!(c.state(1, 5), CacheState::Modified);
    }

    /// Sets by mask (a power of two) and by remainder (three sets): lines a set count apart
    /// conflict, neighbours do not.
    #[test]
    fn lines_map_to_sets_by_mask_or_remainder() {
        for sets in [4u64, 3] {
            let mut c = Caches::new(1, sets, 1);
            assert_eq!(c.set_mask.is_some(), sets.is_power_of_two());
            c.install(0, 7, CacheState::Shared, false);
            assert_eq!(c.victim(0, 7 + sets, |_| false), Ok(Some((7, CacheState::Shared))), "{sets} sets");
            assert_eq!(c.victim(0, 8, |_| false), Ok(None), "{sets} sets");
            assert_eq!(c.set_of(0, 7 + 5 * sets), c.set_of(0, 7));
        }
    }

    /// With frames given in first-touch order, two arrays a cache size apart (the same
    /// `line % sets`) touched together hold each other's lines (a plain cache evicts), one
    /// array touched in order fills the cache without conflict, lines within a page keep their
    /// order, and a cache of one page is indexed as before.
    #[test]
    fn paged_sets_follow_first_touch_order() {
        let (sets, page_lines) = (64u64, 8u64);
        let mut c = Caches::new(1, sets, 1).paged(page_lines);
        let mut plain = Caches::new(1, sets, 1);
        for l in 0..sets {
            for line in [l, l + sets] {
                c.install(0, line, CacheState::Shared, false);
                plain.install(0, line, CacheState::Shared, false);
            }
            assert_eq!(plain.state(0, l), CacheState::Invalid, "line {l}: the plain cache conflicts");
        }
        // Pages alternate between the arrays: 16 pages of 8 sets each in 8 colours, so the
        // second half of the touches evicts the first, but never a page its twin.
        for l in sets / 2..sets {
            assert_eq!(c.state(0, l), CacheState::Shared, "line {l}");
            assert_eq!(c.state(0, l + sets), CacheState::Shared, "line {}", l + sets);
        }
        let mut one = Caches::new(1, sets, 1).paged(page_lines);
        for l in 1000..1000 + sets {
            one.install(0, l, CacheState::Shared, false);
        }
        assert!((1000..1000 + sets).all(|l| one.state(0, l) == CacheState::Shared), "one array fills the cache");
        for l in 1000..1000 + page_lines - 1 {
            assert_eq!(
                one.set_of(0, l + 1).start,
                one.set_of(0, l).start + 1,
                "within a page the sets are consecutive"
            );
        }
        let one_page = Caches::new(1, page_lines, 1).paged(page_lines);
        assert!(one_page.pages.is_none());
        assert_eq!(one_page.set_of(0, 3 + page_lines), one_page.set_of(0, 3));
    }

    #[test]
    fn line_zero_is_held_like_any_other() {
        // The empty way is stored as 0, so line 0 must not read as empty.
        let mut c = Caches::new(1, 4, 1);
        assert_eq!(c.state(0, 0), CacheState::Invalid);
        c.install(0, 0, CacheState::Modified, false);
        assert_eq!(c.state(0, 0), CacheState::Modified);
        assert_eq!(c.victim(0, 4, |_| false), Ok(Some((0, CacheState::Modified))));
        c.set_state(0, 0, CacheState::Invalid);
        assert_eq!(c.state(0, 0), CacheState::Invalid);
        assert_eq!(c.victim(0, 4, |_| false), Ok(None));
    }

    #[test]
    fn lru_picks_least_recently_used_way() {
        let mut c = Caches::new(3, 4, 2); // 2 sets x 2 ways each
        c.install(2, 0, CacheState::Shared, false);
        c.install(2, 2, CacheState::Shared, false);
        c.touch(2, 0);
        assert_eq!(c.victim(2, 4, |_| false), Ok(Some((2, CacheState::Shared))));
        assert_eq!(c.victim(2, 4, |l| l == 2), Ok(Some((0, CacheState::Shared))), "a kept line is skipped");
        c.set_state(2, 2, CacheState::Invalid);
        assert_eq!(c.victim(2, 4, |_| false), Ok(None), "a freed way takes the new line");
    }

    /// A 4-way cache keeps each set's stamps after its ways: filling every set of two
    /// processors leaves every line present in its state, and each set's LRU victim is its own
    /// least recently used line (a stamp written over a neighbour's way would lose a line or
    /// pick another victim).
    #[test]
    fn every_set_keeps_its_ways_and_its_own_lru_order() {
        let (sets, ways) = (3u64, 4usize);
        let mut c = Caches::new(2, sets * ways as u64, ways);
        assert_eq!(way_bytes(ways as u64), 16);
        assert_eq!(way_bytes(1), 8);
        let state = |l: u64| if l.is_multiple_of(2) { CacheState::Shared } else { CacheState::Modified };
        for p in 0..2 {
            for l in 0..sets * ways as u64 {
                c.install(p, l + 100 * p as u64, state(l), false);
            }
        }
        for p in 0..2 {
            // Touch all but the second line of each set, so that it is the least recent.
            for l in 0..sets * ways as u64 {
                if l / sets != 1 {
                    c.touch(p, l + 100 * p as u64);
                }
            }
        }
        for p in 0..2 {
            let base = 100 * p as u64;
            for l in 0..sets * ways as u64 {
                assert_eq!(c.state(p, l + base), state(l), "processor {p} line {l}");
            }
            for set in 0..sets {
                let victim = c.victim(p, base + set + 1000 * sets, |_| false);
                assert_eq!(victim, Ok(Some((base + set + sets, state(set + sets)))), "processor {p} set {set}");
            }
        }
    }

    #[test]
    fn a_prefetched_line_is_useful_once_and_only_until_lost() {
        let mut c = Cache::new(4, 1, None);
        c.install(1, CacheState::Shared, true);
        assert!(c.touch(1), "the first use of a prefetched line");
        assert!(!c.touch(1), "later uses are ordinary hits");
        c.install(2, CacheState::Shared, true);
        c.0.set_state(0, 2, CacheState::Invalid);
        c.install(2, CacheState::Shared, false);
        assert!(!c.touch(2), "a prefetch lost before use was not useful");
        assert!(!c.touch(3), "an absent line");
    }
}
