//! Processors' caches: set-associative, LRU, line-granular. Holds tags and protocol states
//! only; data lives in the single backing store (functional-first).
//!
//! Every processor's cache is one flat array of ways (tag, state and prefetch flag in one
//! word, so a lookup is one host miss; a set-associative cache's LRU stamps after its set's
//! ways) that starts as zeros (an empty way is tag 0), so the OS maps only the pages of sets a
//! run touches: host memory grows with what the processors cache, not with their number (the
//! memory estimate, `engine::machine_bytes`, counts [`way_bytes`] per way). The words are the
//! narrowest that hold every tag and stamp so far (2 bytes, 4 with LRU stamps) and widen when
//! one does not fit ([`Words`]).
//! `paged` gives physically indexed caches their page colours (`hierarchy.page_bytes`, see
//! `hier.rs`).

use super::protocol::CacheState;
use std::collections::HashMap;
use std::marker::PhantomData;

/// Line number: byte address / line size.
pub(crate) type Line = u64;

/// What a way holds: its line's key within the set plus one, or `EMPTY`. The key is what
/// tells apart the lines that share a set: `line / sets` (the set is the remainder), or a
/// coloured cache's page number (the set is the page's colour and the line's place in its
/// page). Every array of [`Caches`] starts as zeros, so it can come from zeroed memory, which
/// the OS maps on first write: a machine's caches cost host memory only for the pages of sets
/// its processors touch (a 20,000-processor run whose processors touch a few lines each
/// otherwise writes every tag array at start-up).
type Tag = u64;
const EMPTY: Tag = 0;

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

/// Host bytes of one cache way at associativity `ways`, the most it can take (what the memory
/// estimate counts per line): a wide way's word, and its LRU stamp when the cache has a choice
/// of victim. A cache whose tags fit 2-byte words takes a quarter of it, and one whose tags and
/// stamps fit 4-byte words half.
pub(crate) const fn way_bytes(ways: u64) -> u64 {
    if ways > 1 {
        16
    } else {
        8
    }
}

/// The word a way and an LRU stamp are stored in: the narrowest of `u16`, `u32` and `u64` that
/// holds every tag and stamp so far.
trait Word: Copy + bytemuck::Zeroable {
    const BITS: u32;
    fn get(self) -> u64;
    /// `v` must fit (the caller checked).
    fn put(v: u64) -> Self;
}

/// `Word` for a word narrower than 64 bits: its values are the `u64`s below `2^BITS`.
macro_rules! narrow_word {
    ($t:ty) => {
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline]
            fn get(self) -> u64 {
                u64::from(self)
            }
            #[inline]
            fn put(v: u64) -> $t {
                debug_assert!(v <= u64::from(<$t>::MAX));
                v as $t
            }
        }
    };
}
narrow_word!(u16);
narrow_word!(u32);

impl Word for u64 {
    const BITS: u32 = 64;
    #[inline]
    fn get(self) -> u64 {
        self
    }
    #[inline]
    fn put(v: u64) -> u64 {
        v
    }
}

/// One way of a set, packed in one word of `W` so that a lookup at scale, where the ways of a
/// thousand caches do not fit in the host's caches, costs one host miss, and a direct-mapped
/// cache (most presets') takes 2 host bytes per line while its tags fit: 1024 Alewife caches
/// are 8 MB of ways (32 MB in 8-byte words).
/// The low `W::BITS - 3` bits are the tag (the key plus one, or `EMPTY`), then the protocol
/// state (`encode`d, two bits), then the unused-prefetch flag (the top bit: a prefetch brought
/// the line in and no access has used it yet). All-zero is an empty way (Invalid, never used,
/// not prefetched). Held in a register as a `u64` in `W`'s layout.
///
/// The LRU stamps are not in the way: only a cache with more than one way reads them, so each
/// set of such a cache keeps its ways' stamps right after its ways (`Shape::block`), which
/// leaves a 4-way set's ways and stamps in 32 bytes, and a direct-mapped set with its one
/// word. A stamp is the processor's count of cache touches and installs.
#[derive(Clone, Copy)]
struct Way<W>(u64, PhantomData<W>);

impl<W: Word> Way<W> {
    const TAG_BITS: u32 = W::BITS - 3;
    const TAG_MASK: u64 = (1 << Self::TAG_BITS) - 1;
    const STATE_MASK: u64 = 0b11 << Self::TAG_BITS;
    const PREFETCH_BIT: u64 = 1 << (W::BITS - 1);
    /// The largest LRU stamp a word of `W` holds.
    const STAMP_MAX: u64 = if W::BITS == 64 { u64::MAX } else { (1 << W::BITS) - 1 };

    #[inline]
    fn load(w: W) -> Self {
        Way(w.get(), PhantomData)
    }
    #[inline]
    fn word(self) -> W {
        W::put(self.0)
    }
    #[inline]
    fn fits(tag: Tag) -> bool {
        tag <= Self::TAG_MASK
    }
    #[inline]
    fn tag(self) -> Tag {
        self.0 & Self::TAG_MASK
    }
    #[inline]
    fn state(self) -> u8 {
        ((self.0 & Self::STATE_MASK) >> Self::TAG_BITS) as u8
    }
    #[inline]
    fn set_state(&mut self, state: u8) {
        self.0 = (self.0 & !Self::STATE_MASK) | (u64::from(state) << Self::TAG_BITS);
    }
    /// Empties the way (tag and prefetch flag cleared), keeping its state bits.
    #[inline]
    fn clear_tag(&mut self) {
        self.0 &= Self::STATE_MASK;
    }
    #[inline]
    fn prefetched(self) -> bool {
        self.0 & Self::PREFETCH_BIT != 0
    }
    /// Clears the unused-prefetch flag, returning what it was.
    #[inline]
    fn take_unused_prefetch(&mut self) -> bool {
        let was = self.prefetched();
        self.0 &= !Self::PREFETCH_BIT;
        was
    }
    #[inline]
    fn new(tag: Tag, state: u8, prefetched: bool) -> Self {
        debug_assert!(Self::fits(tag));
        let flag = if prefetched { Self::PREFETCH_BIT } else { 0 };
        Way(tag | (u64::from(state) << Self::TAG_BITS) | flag, PhantomData)
    }
}

/// Every processor's ways and stamps, in the narrowest words that hold them: a direct-mapped
/// cache starts with 2-byte words (13 tag bits: keys up to 2^13 - 2, a memory of fewer than
/// (2^13 - 1) x sets lines, about 512 MB for Alewife's cache), a set-associative one with
/// 4-byte words (its stamps: a processor's first 2^32 - 1 cache touches). The words widen, for
/// the rest of the run, when a tag or a stamp does not fit (a key of 2^13 - 1 or more, then of
/// 2^29 - 1 or more; a clock past 2^32 - 1).
/// Every width holds the same tags, states, flags and stamps, so which one a run uses changes
/// nothing it computes; narrower words put more of the caches of a thousand processors in the
/// host's caches.
#[derive(Clone)]
enum Words {
    Two(Vec<u16>),
    Four(Vec<u32>),
    Eight(Vec<u64>),
}

/// Calls `$body` with `$w` bound to the words, whichever their width.
macro_rules! with_words {
    ($words:expr, $w:ident => $body:expr) => {
        match $words {
            Words::Two($w) => $body,
            Words::Four($w) => $body,
            Words::Eight($w) => $body,
        }
    };
}

/// The words `from` in the wider `To`: each way re-packed (its tag, state and flag in `To`'s
/// layout), each stamp copied. Only nonzero words are written, so the pages of untouched sets
/// stay unmapped.
fn widened<From: Word, To: Word>(from: &[From], ways: usize, block: usize) -> Vec<To> {
    debug_assert!(To::BITS > From::BITS);
    let mut to: Vec<To> = bytemuck::zeroed_vec(from.len());
    for (i, &n) in from.iter().enumerate().filter(|&(_, n)| n.get() != 0) {
        to[i] = if i % block < ways {
            let w = Way::<From>::load(n);
            Way::<To>::new(w.tag(), w.state(), w.prefetched()).word()
        } else {
            To::put(n.get())
        };
    }
    to
}

/// Whether words like `_words` hold `tag` (if any) and the stamp `stamp` (if any).
#[inline]
fn holds<W: Word>(_words: &[W], tag: Option<Tag>, stamp: Option<u64>) -> bool {
    tag.is_none_or(Way::<W>::fits) && stamp.is_none_or(|s| s <= Way::<W>::STAMP_MAX)
}

/// `n` processors' caches of one geometry, each set-associative with LRU replacement, in one
/// flat array of words: set `set` of processor `p` is the block at `(p * sets + set) * block`,
/// its ways first and then, when there is more than one, their LRU stamps (one zeroed
/// allocation, large enough to be mapped lazily).
#[derive(Clone)]
pub(crate) struct Caches {
    shape: Shape,
    words: Words,
}

/// Where a line goes in the words (everything of [`Caches`] but the words themselves).
#[derive(Clone)]
struct Shape {
    sets: u64,
    /// `sets - 1` and log2 of `sets` when `sets` is a power of two (the set is then a mask and
    /// the key a shift, not a division).
    set_mask: Option<(u64, u32)>,
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
    /// Each processor's LRU clock.
    clock: Vec<u64>,
}

/// A line's place at one processor: its set's first word and its tag there.
#[derive(Clone, Copy)]
struct Place {
    base: usize,
    tag: Tag,
}

impl Shape {
    /// The frame of `line`'s page at processor `p`: the one it got, or the one it would get now.
    /// Out of line: only coloured caches (`hierarchy.page_bytes`) ask, and its hash lookup
    /// inlined into `place` kept `place` itself from being inlined into every access.
    #[inline(never)]
    fn frame(&self, p: usize, page: u64) -> u64 {
        self.frames[p].get(&page).copied().unwrap_or(self.next_frame[p])
    }

    /// `line`'s set at processor `p` (where its ways start) and its tag there.
    #[inline(always)]
    fn place(&self, p: usize, line: Line) -> Place {
        let (set, key) = match (self.pages, self.set_mask) {
            (Some((shift, colours)), _) => {
                let page = line >> shift;
                ((self.frame(p, page) % colours) << shift | (line & ((1 << shift) - 1)), page)
            }
            (None, Some((mask, bits))) => (line & mask, line >> bits),
            (None, None) => (line % self.sets, line / self.sets),
        };
        Place { base: p * self.slots + set as usize * self.block, tag: key + 1 }
    }

    /// The line whose tag is `tag` in the set whose first word is `base`.
    #[inline]
    fn line_at(&self, base: usize, tag: Tag) -> Line {
        let set = (base % self.slots / self.block) as u64;
        let key = tag - 1;
        match (self.pages, self.set_mask) {
            (Some((shift, _)), _) => key << shift | (set & ((1 << shift) - 1)),
            (None, Some((_, bits))) => key << bits | set,
            (None, None) => key * self.sets + set,
        }
    }

    /// The indices of the ways of the set at `base` (way `i`'s stamp is word `i + ways`).
    #[inline]
    fn ways_at(&self, base: usize) -> std::ops::Range<usize> {
        base..base + self.ways
    }

    #[inline]
    fn slot<W: Word>(&self, words: &[W], at: Place) -> Option<usize> {
        self.ways_at(at.base).find(|&i| Way::<W>::load(words[i]).tag() == at.tag)
    }

    /// The LRU stamp of way `i` (0 in a direct-mapped cache, which keeps none).
    #[inline]
    fn stamp<W: Word>(&self, words: &[W], i: usize) -> u64 {
        if self.ways > 1 {
            words[i + self.ways].get()
        } else {
            0
        }
    }

    #[inline]
    fn state<W: Word>(&self, words: &[W], at: Place) -> CacheState {
        self.slot(words, at).map_or(CacheState::Invalid, |i| decode(Way::<W>::load(words[i]).state()))
    }

    #[inline]
    fn touch<W: Word>(&mut self, words: &mut [W], p: usize, at: Place) -> bool {
        let Some(i) = self.slot(words, at) else { return false };
        self.use_way(words, p, i)
    }

    /// A use of way `i` by processor `p`: its LRU stamp, and whether it is the first use of a
    /// line a prefetch brought in (the flag is cleared).
    #[inline]
    fn use_way<W: Word>(&mut self, words: &mut [W], p: usize, i: usize) -> bool {
        if self.ways > 1 {
            self.clock[p] += 1;
            words[i + self.ways] = W::put(self.clock[p]);
        }
        let mut w = Way::<W>::load(words[i]);
        let useful = w.take_unused_prefetch();
        words[i] = w.word();
        useful
    }

    /// `touch` on a line held in a state that lets the access perform (Modified, or Shared for
    /// a load): `Some(useful)` as `touch` returns it; `None`, touching nothing, otherwise.
    #[inline]
    fn hit<W: Word>(&mut self, words: &mut [W], p: usize, at: Place, write: bool) -> Option<bool> {
        let i = self.slot(words, at)?;
        match decode(Way::<W>::load(words[i]).state()) {
            CacheState::Modified => {}
            CacheState::Shared if !write => {}
            _ => return None,
        }
        Some(self.use_way(words, p, i))
    }

    fn set_state<W: Word>(&self, words: &mut [W], at: Place, s: CacheState) {
        if let Some(i) = self.slot(words, at) {
            let mut w = Way::<W>::load(words[i]);
            if !s.valid() {
                w.clear_tag();
            }
            w.set_state(encode(s));
            words[i] = w.word();
        }
    }

    fn victim<W: Word>(
        &self,
        words: &[W],
        at: Place,
        keep: impl Fn(Line) -> bool,
    ) -> Result<Option<(Line, CacheState)>, ()> {
        if self.slot(words, at).is_some() {
            return Ok(None);
        }
        let way = |i: usize| Way::<W>::load(words[i]);
        let ways = self.ways_at(at.base);
        if ways.clone().any(|i| way(i).tag() == EMPTY) {
            return Ok(None);
        }
        let i = ways
            .filter(|&i| !keep(self.line_at(at.base, way(i).tag())))
            .min_by_key(|&i| self.stamp(words, i))
            .ok_or(())?;
        Ok(Some((self.line_at(at.base, way(i).tag()), decode(way(i).state()))))
    }

    fn install<W: Word>(&mut self, words: &mut [W], p: usize, at: Place, s: CacheState, prefetched: bool) {
        let ways = self.ways_at(at.base);
        let i = self
            .slot(words, at)
            .or_else(|| ways.clone().find(|&i| Way::<W>::load(words[i]).tag() == EMPTY))
            .unwrap_or_else(|| ways.min_by_key(|&i| self.stamp(words, i)).expect("at least one way"));
        self.clock[p] += 1;
        words[i] = Way::<W>::new(at.tag, encode(s), prefetched).word();
        if self.ways > 1 {
            words[i + self.ways] = W::put(self.clock[p]);
        }
    }
}

impl Caches {
    pub fn new(n: usize, lines: u64, ways: usize) -> Caches {
        let sets = (lines / ways as u64).max(1);
        // The way's word, and its stamp when there is a choice of victim.
        let block = if ways > 1 { 2 * ways } else { 1 };
        let slots = (sets as usize) * block;
        let all = slots * n;
        Caches {
            shape: Shape {
                sets,
                set_mask: sets.is_power_of_two().then(|| (sets - 1, sets.trailing_zeros())),
                ways,
                block,
                slots,
                pages: None,
                frames: Vec::new(),
                next_frame: Vec::new(),
                clock: vec![0; n],
            },
            words: if ways > 1 {
                Words::Four(bytemuck::zeroed_vec(all))
            } else {
                Words::Two(bytemuck::zeroed_vec(all))
            },
        }
    }

    /// Index by physical frames: pages of `page_lines` lines (a power of two) get frames in
    /// the order they are first touched, one colour after the other (bin hopping), not at
    /// their virtual address: two arrays a cache size apart in virtual memory, touched
    /// together, do not share sets. Only a cache whose sets are a whole number of pages (more
    /// than one) is affected; a cache of one page or less is indexed within the page anyway.
    pub fn paged(mut self, page_lines: u64) -> Caches {
        debug_assert!(page_lines.is_power_of_two());
        let s = &mut self.shape;
        if s.sets > page_lines && s.sets.is_multiple_of(page_lines) {
            s.pages = Some((page_lines.trailing_zeros(), s.sets / page_lines));
            s.frames = vec![HashMap::new(); s.clock.len()];
            s.next_frame = vec![0; s.clock.len()];
        }
        self
    }

    /// The number of caches.
    pub fn len(&self) -> usize {
        self.shape.clock.len()
    }

    /// Makes the words the next width up (the same ways, states, flags and stamps). Eight
    /// bytes hold every tag (a line number has at most 61 bits: `memory.line_bytes` >= 8) and
    /// stamp.
    fn widen(&mut self) {
        let (ways, block) = (self.shape.ways, self.shape.block);
        self.words = match &self.words {
            Words::Two(w) => Words::Four(widened(w, ways, block)),
            Words::Four(w) => Words::Eight(widened(w, ways, block)),
            Words::Eight(_) => unreachable!("a line of 2^61 or more, or a processor's 2^64th cache touch"),
        };
    }

    /// Widens the words until they hold `tag` (if any) and processor `p`'s next LRU stamp (if
    /// the cache keeps stamps).
    #[inline]
    fn make_room(&mut self, p: usize, tag: Option<Tag>) {
        let stamp = (self.shape.ways > 1).then(|| self.shape.clock[p] + 1);
        while !with_words!(&self.words, w => holds(w, tag, stamp)) {
            self.widen();
        }
    }

    /// The line's state at processor `p` (Invalid when absent).
    #[inline]
    pub fn state(&self, p: usize, line: Line) -> CacheState {
        let at = self.shape.place(p, line);
        with_words!(&self.words, w => self.shape.state(w, at))
    }

    /// Mark a use of a present line (LRU); returns whether this is the first use of a line a
    /// prefetch brought in (a useful prefetch).
    #[inline]
    pub fn touch(&mut self, p: usize, line: Line) -> bool {
        self.make_room(p, None);
        let at = self.shape.place(p, line);
        with_words!(&mut self.words, w => self.shape.touch(w, p, at))
    }

    /// A load (`write` false) or store that hits: `line` is Modified at `p`, or Shared and the
    /// access a load. Then it is touched as `touch` does, with one lookup for both, and
    /// `Some(useful)` is `touch`'s answer; otherwise nothing changes and the answer is `None`.
    #[inline]
    pub fn hit(&mut self, p: usize, line: Line, write: bool) -> Option<bool> {
        self.make_room(p, None);
        let at = self.shape.place(p, line);
        with_words!(&mut self.words, w => self.shape.hit(w, p, at, write))
    }

    /// Whether both hold the same lines, states, flags and LRU stamps (tests).
    #[cfg(test)]
    pub fn same_contents(&self, other: &Caches) -> bool {
        let words = match (&self.words, &other.words) {
            (Words::Two(a), Words::Two(b)) => a == b,
            (Words::Four(a), Words::Four(b)) => a == b,
            (Words::Eight(a), Words::Eight(b)) => a == b,
            _ => false,
        };
        words && self.shape.clock == other.shape.clock
    }

    /// Change the state of a present line; Invalid removes it.
    pub fn set_state(&mut self, p: usize, line: Line, s: CacheState) {
        let at = self.shape.place(p, line);
        with_words!(&mut self.words, w => self.shape.set_state(w, at, s))
    }

    /// What installing `line` at processor `p` needs: `Ok(None)` if a way is free or `line` is
    /// present, `Ok(Some(victim))` for the least recently used line that `keep` does not
    /// protect, or `Err(())` if every way holds a protected line (a conflict with lines that
    /// must stay).
    #[allow(clippy::result_unit_err)]
    pub fn victim(&self, p: usize, line: Line, keep: impl Fn(Line) -> bool) -> Result<Option<(Line, CacheState)>, ()> {
        let at = self.shape.place(p, line);
        with_words!(&self.words, w => self.shape.victim(w, at, keep))
    }

    /// Install `line` at processor `p` in state `s` (the victim, if any, must have been dealt
    /// with); `prefetched` when a prefetch brought it.
    pub fn install(&mut self, p: usize, line: Line, s: CacheState, prefetched: bool) {
        let shape = &mut self.shape;
        if let Some((shift, _)) = shape.pages {
            if let std::collections::hash_map::Entry::Vacant(e) = shape.frames[p].entry(line >> shift) {
                e.insert(shape.next_frame[p]);
                shape.next_frame[p] += 1;
            }
        }
        let at = self.shape.place(p, line);
        self.make_room(p, Some(at.tag));
        with_words!(&mut self.words, w => self.shape.install(w, p, at, s, prefetched))
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
            assert_eq!(c.shape.set_mask.is_some(), sets.is_power_of_two());
            c.install(0, 7, CacheState::Shared, false);
            assert_eq!(c.victim(0, 7 + sets, |_| false), Ok(Some((7, CacheState::Shared))), "{sets} sets");
            assert_eq!(c.victim(0, 8, |_| false), Ok(None), "{sets} sets");
            assert_eq!(c.shape.place(0, 7 + 5 * sets).base, c.shape.place(0, 7).base);
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
                one.shape.place(0, l + 1).base,
                one.shape.place(0, l).base + 1,
                "within a page the sets are consecutive"
            );
        }
        let one_page = Caches::new(1, page_lines, 1).paged(page_lines);
        assert!(one_page.shape.pages.is_none());
        assert_eq!(one_page.shape.place(0, 3 + page_lines).base, one_page.shape.place(0, 3).base);
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

    /// The bytes of the words `c` uses now.
    fn width(c: &Caches) -> u32 {
        with_words!(&c.words, w => size_of_val(&w[0]) as u32)
    }

    /// A line whose key needs more than the words' tag bits (13 in 2 bytes, 29 in 4) widens the
    /// words, and every line held before keeps its state, its unused-prefetch flag and its
    /// place in its set's LRU order; the wide line is found and given back as a victim.
    #[test]
    fn a_line_beyond_a_tag_widens_the_words_and_keeps_every_line() {
        let sets = 8u64;
        let state = |l: u64| if l.is_multiple_of(3) { CacheState::Modified } else { CacheState::Shared };
        for (ways, widths) in [(1usize, [2, 4, 8]), (2, [4, 4, 8])] {
            let mut c = Caches::new(2, sets * ways as u64, ways);
            for l in 0..sets * ways as u64 {
                c.install(1, l, state(l), l % 2 == 0);
            }
            if ways > 1 {
                c.touch(1, 3); // line 3 + sets is now its set's least recent
            }
            assert_eq!(width(&c), widths[0], "{ways} ways: small tags");
            for (key_bits, bytes) in [(13, widths[1]), (29, widths[2])] {
                // The key 2^k: its tag 2^k + 1 needs k + 1 bits.
                let far = (1u64 << key_bits) * sets + 5;
                c.install(0, far, CacheState::Shared, false);
                assert_eq!(width(&c), bytes, "{ways} ways: a key of 2^{key_bits}");
                assert_eq!(c.state(0, far), CacheState::Shared);
                assert_eq!(c.state(1, far), CacheState::Invalid);
                c.install(0, far + 4 * sets, CacheState::Modified, false);
                let victim = if ways == 1 { (far + 4 * sets, CacheState::Modified) } else { (far, CacheState::Shared) };
                assert_eq!(c.victim(0, far + 8 * sets, |_| false), Ok(Some(victim)), "{ways} ways: 2^{key_bits}");
                for l in 0..sets * ways as u64 {
                    assert_eq!(c.state(1, l), state(l), "{ways} ways: line {l} after 2^{key_bits}");
                }
                if ways > 1 {
                    assert_eq!(c.victim(1, 3 + 4 * sets, |_| false), Ok(Some((3 + sets, CacheState::Shared))));
                }
            }
            // The flag survives: line 4 was prefetched and never used, line 3 was not.
            assert!(c.touch(1, 4), "{ways} ways: line 4's prefetch is still unused");
            assert!(!c.touch(1, 4));
            assert!(!c.touch(1, 3));
        }
    }

    /// The bounds as documented on [`Words`]: a direct-mapped cache keeps 2-byte words up to key
    /// 2^13 - 2 and widens at 2^13 - 1; 4-byte words hold keys up to 2^29 - 2.
    #[test]
    fn the_words_widen_exactly_where_a_tag_stops_fitting() {
        let sets = 4u64;
        let mut c = Caches::new(1, sets, 1);
        c.install(0, ((1 << 13) - 2) * sets + 1, CacheState::Shared, false);
        assert_eq!(width(&c), 2, "key 2^13 - 2");
        c.install(0, ((1 << 13) - 1) * sets + 1, CacheState::Shared, false);
        assert_eq!(width(&c), 4, "key 2^13 - 1");
        c.install(0, ((1 << 29) - 2) * sets + 2, CacheState::Shared, false);
        assert_eq!(width(&c), 4, "key 2^29 - 2");
        c.install(0, ((1 << 29) - 1) * sets + 2, CacheState::Shared, false);
        assert_eq!(width(&c), 8, "key 2^29 - 1");
        assert_eq!(c.state(0, ((1 << 13) - 1) * sets + 1), CacheState::Shared);
    }

    /// A processor's LRU clock past 2^32 - 1 widens a set-associative cache's words (a stamp
    /// would not fit) and keeps the order: the stamp written before and the one after still
    /// compare as they were made. A direct-mapped cache keeps no stamps and stays at 2 bytes.
    #[test]
    fn a_stamp_beyond_four_bytes_widens_the_words_and_keeps_the_lru_order() {
        let mut c = Caches::new(1, 2, 2); // one set of two ways
        c.install(0, 10, CacheState::Shared, false);
        c.install(0, 11, CacheState::Shared, false);
        c.shape.clock[0] = Way::<u32>::STAMP_MAX - 1;
        c.touch(0, 10); // stamp 2^32 - 1: the last that fits
        assert_eq!(width(&c), 4);
        assert_eq!(c.victim(0, 12, |_| false), Ok(Some((11, CacheState::Shared))));
        c.touch(0, 11); // stamp 2^32
        assert_eq!(width(&c), 8);
        assert_eq!(c.victim(0, 12, |_| false), Ok(Some((10, CacheState::Shared))), "11 is now the more recent");
        let mut d = Caches::new(1, 2, 1);
        d.shape.clock[0] = u64::MAX / 2;
        d.install(0, 10, CacheState::Shared, false);
        d.touch(0, 10);
        assert_eq!(width(&d), 2, "a direct-mapped cache stores no stamps");
    }

    /// One operation on a cache: (kind, processor, line, state, prefetched).
    type Op = (u8, usize, u64, u8, bool);

    /// Applies `op` and returns what it observed, so two caches can be compared operation by
    /// operation.
    fn apply(c: &mut Caches, (kind, p, line, st, pf): Op) -> String {
        let st = decode(st);
        match kind % 5 {
            0 => format!("{:?}", c.state(p, line)),
            1 => format!("{}", c.touch(p, line)),
            2 => {
                c.set_state(p, line, st);
                String::new()
            }
            3 => format!("{:?}", c.victim(p, line, |l| l % 7 == 0)),
            _ => {
                if c.victim(p, line, |_| false).is_ok() {
                    c.install(p, line, st, pf);
                }
                String::new()
            }
        }
    }

    proptest::proptest! {
        /// The narrowest words, the next width from the start, 8 bytes from the start, and the
        /// narrowest widened part-way through observe the same states, useful prefetches and victims under any sequence of
        /// operations, on direct-mapped, set-associative, non-power-of-two and coloured caches.
        #[test]
        fn narrow_and_wide_words_hold_the_same_caches(
            geometry in 0usize..5,
            ops in proptest::collection::vec((0u8..5, 0usize..2, 0u64..200, 0u8..3, proptest::bool::ANY), 1..300),
            widen_at in 0usize..300,
        ) {
            let make = || match geometry {
                0 => Caches::new(2, 16, 1),
                1 => Caches::new(2, 16, 4),
                2 => Caches::new(2, 12, 1),
                3 => Caches::new(2, 12, 3),
                _ => Caches::new(2, 32, 2).paged(4),
            };
            let (mut narrow, mut next, mut wide, mut late) = (make(), make(), make(), make());
            let start = width(&narrow);
            next.widen();
            while width(&wide) < 8 {
                wide.widen();
            }
            for (k, &op) in ops.iter().enumerate() {
                if k == widen_at {
                    late.widen();
                }
                let seen = apply(&mut narrow, op);
                for other in [&mut next, &mut wide, &mut late] {
                    proptest::prop_assert_eq!(&seen, &apply(other, op), "op {} {:?}", k, op);
                }
            }
            proptest::prop_assert_eq!(width(&narrow), start, "small lines stay in the narrowest words");
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
