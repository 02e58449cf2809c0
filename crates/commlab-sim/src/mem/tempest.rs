//! Tempest user-protocol regions (software-DSM machines only): per node, an access tag and a
//! copy of each block; the default protocol (`stache`, the rest of `mem/`) never sees them.
//!
//! The home's copy of a block *is* the backing store (`Memory::data`, so a run's final memory
//! shows what the homes hold); every other node's copy is kept here, created (zeroed) on its
//! first write. Tags start `Writable` at the home and `Invalid` elsewhere. Nothing here takes
//! time: the engine charges tag changes (`dsm.tag_valid*` / `dsm.tag_invalidate*`), block
//! copies (`dsm.copy_bytes_per_cycle`) and faults (`dsm.miss_trap_cycles` on an invalid block,
//! `dsm.upgrade_fault_cycles` for a store to a read-only one, `dsm.resume_cycles` after), the
//! costs the default protocol pays for the same operations.

use super::cache::Line;
use commlab_api::AccessTag;
use std::collections::HashMap;
use std::ops::Range;

#[derive(Default)]
pub(crate) struct Tempest {
    /// 64-bit words per block (the line size).
    line_words: usize,
    /// The user regions' lines.
    regions: Vec<Range<Line>>,
    /// Tags that differ from the initial ones, by (node, line).
    tags: HashMap<(u32, Line), AccessTag>,
    /// Non-home nodes' copies, by (node, line).
    copies: HashMap<(u32, Line), Vec<u64>>,
    /// Per node: the line (and whether a store) of its main thread's outstanding fault.
    pub pending: Vec<Option<(Line, bool)>>,
    pub faults: u64,
    pub tag_changes: u64,
    pub block_copies: u64,
}

impl Tempest {
    pub fn new(n: usize, line_words: usize) -> Tempest {
        Tempest { line_words, pending: vec![None; n], ..Tempest::default() }
    }

    pub fn add_region(&mut self, lines: Range<Line>) {
        if !self.regions.contains(&lines) {
            self.regions.push(lines);
        }
    }

    /// Whether `line` belongs to a user region.
    #[inline]
    pub fn is_user(&self, line: Line) -> bool {
        !self.regions.is_empty() && self.regions.iter().any(|r| r.contains(&line))
    }

    pub fn tag(&self, node: usize, line: Line, home: usize) -> AccessTag {
        match self.tags.get(&(node as u32, line)) {
            Some(&t) => t,
            None if node == home => AccessTag::Writable,
            None => AccessTag::Invalid,
        }
    }

    /// Set `node`'s tag of `line`. A tag that allows the node's outstanding faulted access
    /// serves that fault: should the block be taken away again before the access retries, the
    /// retry faults anew (as a real access would) rather than wait for a fault never raised.
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

    /// Word `word` of `node`'s copy of `line` (`data`: the backing store, the home's copy).
    pub fn read(&self, data: &[u64], node: usize, line: Line, home: usize, word: usize) -> u64 {
        let line_words = self.line_words;
        if node == home {
            return data[line as usize * line_words + word];
        }
        self.copies.get(&(node as u32, line)).map_or(0, |c| c[word])
    }

    pub fn write(&mut self, data: &mut [u64], node: usize, line: Line, home: usize, word: usize, v: u64) {
        let line_words = self.line_words;
        if node == home {
            data[line as usize * line_words + word] = v;
        } else {
            self.copies.entry((node as u32, line)).or_insert_with(|| vec![0; line_words])[word] = v;
        }
    }

    /// Whether `node` holds a readable copy of `line`.
    pub fn readable(&self, node: usize, line: Line, home: usize) -> bool {
        self.tag(node, line, home) != AccessTag::Invalid
    }

    /// Every user line (for the checker).
    pub fn lines(&self) -> impl Iterator<Item = Line> + '_ {
        self.regions.iter().flat_map(|r| r.clone())
    }
}
