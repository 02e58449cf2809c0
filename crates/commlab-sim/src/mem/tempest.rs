//! Tempest user-protocol regions (software-DSM machines only): per node, an access tag and a
//! copy of each block; the default protocol (`stache`, the rest of `mem/`) never sees them.
//!
//! A region's blocks are a whole number of lines (its own block size, fixed when it is
//! allocated); a block is named by its first line, and all its lines share one home. The
//! home's copy of a block *is* the backing store (`Memory::data`, so a run's final memory
//! shows what the homes hold); every other node's copy is kept here, created (zeroed) on its
//! first write. Tags start `Writable` at the home and `Invalid` elsewhere. Nothing here takes
//! time: the engine charges tag changes (`dsm.tag_valid*` / `dsm.tag_invalidate*`, per line of
//! the block), block copies (`dsm.copy_bytes_per_cycle`) and faults (`dsm.miss_trap_cycles`,
//! plus `dsm.upgrade_fault_cycles` for a store to a read-only block, `dsm.resume_cycles`
//! after), the costs the default protocol pays for the same operations.
//!
//! Regions (`Node::alloc_user_region`) exist on software DSM only: hardware-coherent machines
//! and the native backend return an error naming `memory.model = "software"`. A block size is a
//! power of two from the line to 64 lines, given at allocation; whole blocks, each on one
//! home, or an error. Tag changes and copies cost per line of the block (the
//! `dsm.tag_*_per_granule` part and `dsm.copy_bytes_per_cycle`; the base part once). The
//! default protocol never sees these lines (atomics, locks, spins and prefetches on them are
//! program errors).
//!
//! The engine's side (`engine/node.rs`, `engine/mod.rs`): `load`/`store` perform on the node's
//! copy when the tag allows (paying the `[dsm]` load/store check as any shared reference);
//! otherwise the main thread queues a `Target::Fault` (not a network message) that runs
//! `Program::fault_handler` on that node at once, entered at `dsm.miss_trap_cycles` (plus
//! `dsm.upgrade_fault_cycles` for a store to a read-only block) and left at
//! `dsm.resume_cycles`, and waits in `Wait::Tag`, retrying after every handler on the node, with
//! one fault outstanding per access: a tag change that allows the access serves the fault
//! (`Tempest::set_tag` clears it), so a block taken away again before the retry faults anew.
//! Handlers use `HandlerCtx::{block_read, block_write, set_tag, tag}`: a block copy costs
//! `line_bytes / dsm.copy_bytes_per_cycle`, a tag change `dsm.tag_valid*` (to read-only or
//! writable from invalid; `dsm.tag_valid_cycles` alone from read-only to writable) or
//! `dsm.tag_invalidate*` (to invalid), so blizzard-e's kernel protection changes are expensive
//! and blizzard-t's hardware tags cheap with no new key. Counters `tempest_faults`,
//! `tempest_tag_changes`, `tempest_block_copies` (timed region; present whenever the program
//! allocated a region). The barrier-time invariant is in `check.rs`; the update protocol built
//! on these is `commlab-apps/src/runtime/update.rs`; `commlab-sim/tests/tempest.rs` tests the
//! costs and refusals.

use super::cache::Line;
use commlab_api::AccessTag;
use std::collections::HashMap;
use std::ops::Range;

/// One user region: its lines and the lines per block.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Region {
    lines: Range<Line>,
    block_lines: u64,
}

#[derive(Default)]
pub(crate) struct Tempest {
    /// 64-bit words per line.
    line_words: usize,
    /// The user regions.
    regions: Vec<Region>,
    /// Tags that differ from the initial ones, by (node, block).
    tags: HashMap<(u32, Line), AccessTag>,
    /// Non-home nodes' copies, by (node, block).
    copies: HashMap<(u32, Line), Vec<u64>>,
    /// Per node: the block (and whether a store) of its main thread's outstanding fault.
    pub pending: Vec<Option<(Line, bool)>>,
    pub faults: u64,
    pub tag_changes: u64,
    pub block_copies: u64,
}

impl Tempest {
    pub fn new(n: usize, line_words: usize) -> Tempest {
        Tempest { line_words, pending: vec![None; n], ..Tempest::default() }
    }

    /// A region of `lines` in blocks of `block_lines` lines (every processor allocates it;
    /// it is recorded once).
    pub fn add_region(&mut self, lines: Range<Line>, block_lines: u64) {
        let r = Region { lines, block_lines };
        if !self.regions.contains(&r) {
            self.regions.push(r);
        }
    }

    /// Whether the program allocated any user region.
    pub fn in_use(&self) -> bool {
        !self.regions.is_empty()
    }

    /// Start the timed region's counts (the regions, tags and copies stay).
    pub fn reset_counts(&mut self) {
        (self.faults, self.tag_changes, self.block_copies) = (0, 0, 0);
    }

    /// Whether `line` belongs to a user region.
    #[inline]
    pub fn is_user(&self, line: Line) -> bool {
        !self.regions.is_empty() && self.regions.iter().any(|r| r.lines.contains(&line))
    }

    /// The block holding user line `line`: its first line and its length in lines.
    pub fn block_of(&self, line: Line) -> (Line, u64) {
        let r = self.regions.iter().find(|r| r.lines.contains(&line)).expect("a user line");
        (line - (line - r.lines.start) % r.block_lines, r.block_lines)
    }

    pub fn tag(&self, node: usize, line: Line, home: usize) -> AccessTag {
        match self.tags.get(&(node as u32, line)) {
            Some(&t) => t,
            None if node == home => AccessTag::Writable,
            None => AccessTag::Invalid,
        }
    }

    /// Set `node`'s tag of the block starting at line `line`. A tag that allows the node's
    /// outstanding faulted access serves that fault: should the block be taken away again
    /// before the access retries, the retry faults anew (as a real access would) rather than
    /// wait for a fault never raised.
    pub fn set_tag(&mut self, node: usize, line: Line, tag: AccessTag) {
        self.tag_changes += 1;
        self.tags.insert((node as u32, line), tag);
        if let Some((l, write)) = self.pending[node] {
            let allows = tag == AccessTag::Writable || (tag == AccessTag::ReadOnly && !write);
            if l == line && allows {
                self.pending[node] = None;
            }
        }
    }

    /// Word `word` (counted from the block's start) of `node`'s copy of the block starting at
    /// line `block` (`data`: the backing store, the home's copy).
    pub fn read(&self, data: &[u64], node: usize, block: Line, home: usize, word: usize) -> u64 {
        if node == home {
            return data[block as usize * self.line_words + word];
        }
        self.copies.get(&(node as u32, block)).map_or(0, |c| c[word])
    }

    pub fn write(&mut self, data: &mut [u64], node: usize, block: Line, home: usize, word: usize, v: u64) {
        if node == home {
            data[block as usize * self.line_words + word] = v;
        } else if let Some(copy) = self.copies.get_mut(&(node as u32, block)) {
            copy[word] = v;
        } else {
            // The node's first write to the block: its copy, zeroed, the block's length.
            let mut copy = vec![0; self.block_of(block).1 as usize * self.line_words];
            copy[word] = v;
            self.copies.insert((node as u32, block), copy);
        }
    }

    /// Whether `node` holds a readable copy of `line`.
    pub fn readable(&self, node: usize, line: Line, home: usize) -> bool {
        self.tag(node, line, home) != AccessTag::Invalid
    }

    /// Every user block: its first line and its length in lines (for the checker).
    pub fn blocks(&self) -> impl Iterator<Item = (Line, u64)> + '_ {
        self.regions.iter().flat_map(|r| r.lines.clone().step_by(r.block_lines as usize).map(|b| (b, r.block_lines)))
    }
}
