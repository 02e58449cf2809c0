//! Shared memory: one arena of 64-bit atomic words, grown in segments so that an address never
//! moves, and the collective allocation of regions in it.
//!
//! Word `w` lives in segment `k = log2(w + 2^S) - S`, of `2^(k+S)` words: segment 0 holds the
//! first `2^S` words, segment 1 the next `2^(S+1)`, and so on, so forty segments cover more
//! memory than any host has while a lookup is a few instructions. A segment is allocated
//! zeroed by the processor whose allocation first reaches it; large zeroed allocations are
//! fresh pages that the operating system places where they are first written (see
//! [`Arena::first_touch`]).

use commlab_api::Placement;
use std::alloc::Layout;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// log2 of the words in segment 0 (64 Ki words, 512 KiB).
const S: u32 = 16;
const NSEG: usize = 40;
/// Words of a cache line (the backend's line is 64 bytes).
pub(crate) const LINE_WORDS: usize = 8;
/// Words of a 4 KiB page.
const PAGE_WORDS: usize = 512;

/// One shared allocation, for checking that every processor makes the same ones.
struct Region {
    base: usize,
    words: usize,
    placement: Placement,
}

/// A segment's allocation, kept to free it.
struct Raw {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: `Raw` is only an owned allocation's address and layout, freed once in `Drop`.
unsafe impl Send for Raw {}

struct Inner {
    regions: Vec<Region>,
    /// First word not yet allocated.
    next: usize,
    raw: Vec<Raw>,
}

pub(crate) struct Arena {
    /// Segment `k`'s first word (null until allocated), 64-byte aligned.
    segs: [AtomicPtr<AtomicU64>; NSEG],
    /// Words allocated so far: every word below is valid and zero until stored.
    words: AtomicUsize,
    inner: Mutex<Inner>,
}

#[inline]
fn seg_of(w: usize) -> (usize, usize) {
    let s = w + (1 << S);
    let k = (usize::BITS - 1 - s.leading_zeros() - S) as usize;
    (k, s - (1 << (k as u32 + S)))
}

/// First word of segment `k`.
fn seg_start(k: usize) -> usize {
    (1usize << (k as u32 + S)) - (1 << S)
}

impl Arena {
    pub fn new() -> Arena {
        Arena {
            segs: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            words: AtomicUsize::new(0),
            inner: Mutex::new(Inner { regions: Vec::new(), next: 0, raw: Vec::new() }),
        }
    }

    /// Words allocated so far.
    pub fn len(&self) -> usize {
        self.words.load(Ordering::Acquire)
    }

    /// The word at index `w`, if allocated.
    #[inline]
    pub fn word(&self, w: usize) -> Option<&AtomicU64> {
        if w >= self.words.load(Ordering::Acquire) {
            return None;
        }
        let (k, off) = seg_of(w);
        // The segment was published before `words` grew past `w` (release/acquire).
        let base = self.segs[k].load(Ordering::Relaxed);
        // SAFETY: segment `k` holds `2^(k+S)` initialized atomics from `base`, `off` is below
        // that, and segments live as long as the arena.
        Some(unsafe { &*base.add(off) })
    }

    /// Processor `p`'s allocation number `k` of `words` words (collective: the first
    /// processor to make its `k`-th allocation creates the region, the others get the same
    /// base word). Regions start on a line.
    pub fn alloc(
        &self,
        p: usize,
        k: usize,
        words: usize,
        placement: &Placement,
        nprocs: usize,
    ) -> Result<usize, String> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = inner.regions.get(k) {
            if r.words != words || r.placement != *placement {
                return Err(format!(
                    "processor {p}'s shared allocation #{k} ({words} words, {placement:?}) differs from the one other processors made ({} words, {:?}); allocations are collective",
                    r.words, r.placement
                ));
            }
            return Ok(r.base);
        }
        if let Placement::Owners(o) = placement {
            if o.len() != words || o.iter().any(|&h| h >= nprocs) {
                return Err(format!(
                    "Placement::Owners needs one owner in 0..{nprocs} per word ({words} words, got {} owners)",
                    o.len()
                ));
            }
        }
        if let Placement::OnNode(h) = placement {
            if *h >= nprocs {
                return Err(format!("Placement::OnNode({h}) but there are {nprocs} processors"));
            }
        }
        let base = inner.next.div_ceil(LINE_WORDS) * LINE_WORDS;
        let lines = words.div_ceil(LINE_WORDS).max(1);
        let end = lines
            .checked_mul(LINE_WORDS)
            .and_then(|w| w.checked_add(base))
            .filter(|&e| e <= seg_start(NSEG))
            .ok_or_else(|| format!("a shared allocation of {words} words is larger than the arena"))?;
        for k in 0..NSEG {
            if seg_start(k) >= end {
                break;
            }
            if !self.segs[k].load(Ordering::Relaxed).is_null() {
                continue;
            }
            let seg_words = 1usize << (k as u32 + S);
            // Alignment 8 keeps this a calloc (fresh, untouched pages when large); the extra
            // line lets the segment start on a 64-byte boundary.
            let layout = Layout::array::<AtomicU64>(seg_words + LINE_WORDS)
                .map_err(|_| format!("a shared allocation of {words} words is larger than the arena"))?;
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
            if ptr.is_null() {
                return Err(format!(
                    "cannot allocate {} MiB of host memory for a shared allocation of {words} words",
                    layout.size() >> 20
                ));
            }
            inner.raw.push(Raw { ptr, layout });
            let skip = ptr.align_offset(64);
            // SAFETY: `skip < 64` bytes and the allocation has a spare line; zeroed memory is a
            // valid `AtomicU64`.
            let first = unsafe { ptr.add(skip) } as *mut AtomicU64;
            self.segs[k].store(first, Ordering::Relaxed);
        }
        inner.next = end;
        self.words.store(end, Ordering::Release);
        inner.regions.push(Region { base, words, placement: placement.clone() });
        Ok(base)
    }

    /// Write (without changing it) one word in each page of the region at `base` whose first
    /// line is homed at `p`: a page not yet written is then placed on `p`'s memory node
    /// (first touch). A page someone already wrote stays where it is.
    pub fn first_touch(&self, p: usize, base: usize, words: usize, placement: &Placement, nprocs: usize) {
        let lines = words.div_ceil(LINE_WORDS).max(1);
        let end = base + lines * LINE_WORDS;
        let mut w = base;
        while w < end {
            let line = (w - base) / LINE_WORDS;
            if home(placement, line, lines, words, nprocs) == p {
                // A chunk of one page's size spans at most two pages: touch its two ends.
                let last = (w + PAGE_WORDS).min(end) - 1;
                for x in [w, last] {
                    if let Some(a) = self.word(x) {
                        a.fetch_or(0, Ordering::Relaxed);
                    }
                }
            }
            w += PAGE_WORDS;
        }
    }

    /// Every allocated word (after the run: no thread writes any more).
    pub fn snapshot(&self) -> Vec<u64> {
        (0..self.len()).map(|w| self.word(w).map_or(0, |a| a.load(Ordering::SeqCst))).collect()
    }
}

/// The home of line `line` of a region of `lines` lines and `words` words (as the simulator
/// places it).
fn home(placement: &Placement, line: usize, lines: usize, words: usize, nprocs: usize) -> usize {
    match placement {
        Placement::Block => line * nprocs / lines,
        Placement::Cyclic => line % nprocs,
        Placement::OnNode(h) => *h,
        Placement::Owners(o) => o[(line * LINE_WORDS).min(words.saturating_sub(1))],
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        for r in inner.raw.drain(..) {
            // SAFETY: allocated in `alloc` with this layout, freed once.
            unsafe { std::alloc::dealloc(r.ptr, r.layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_tile_the_word_space() {
        for k in 0..6 {
            let start = seg_start(k);
            assert_eq!(seg_of(start), (k, 0));
            assert_eq!(seg_of(seg_start(k + 1) - 1), (k, (1 << (k as u32 + S)) - 1));
        }
    }

    #[test]
    fn allocations_are_collective_line_aligned_and_zeroed() {
        let a = Arena::new();
        let x = a.alloc(0, 0, 3, &Placement::Block, 2).unwrap();
        let y = a.alloc(0, 1, (1 << S) + 5, &Placement::Cyclic, 2).unwrap();
        assert_eq!(a.alloc(1, 0, 3, &Placement::Block, 2).unwrap(), x);
        assert_eq!(a.alloc(1, 1, (1 << S) + 5, &Placement::Cyclic, 2).unwrap(), y);
        assert!(a.alloc(1, 1, 7, &Placement::Cyclic, 2).unwrap_err().contains("collective"));
        assert_eq!(y % LINE_WORDS, 0);
        assert_eq!(y, LINE_WORDS);
        // Words across the segment boundary are distinct and start at zero.
        let last = y + (1 << S) + 4;
        a.word(last).unwrap().store(9, Ordering::SeqCst);
        a.word(y).unwrap().store(4, Ordering::SeqCst);
        a.first_touch(1, y, (1 << S) + 5, &Placement::Cyclic, 2);
        let m = a.snapshot();
        assert_eq!((m[y], m[last], m[y + 1]), (4, 9, 0));
        assert!(a.word(m.len()).is_none());
        assert!(a.alloc(0, 2, 4, &Placement::OnNode(2), 2).unwrap_err().contains("OnNode(2)"));
    }
}
