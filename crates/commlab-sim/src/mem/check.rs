//! The coherence invariant checker (switched on in tests). After every protocol event it checks
//! the touched line:
//! - one writer or many readers: at most one cache holds the line Modified, and then no other
//!   cache holds it at all;
//! - the directory agrees with the caches: when the line is not in a transaction, a Modified
//!   copy is the directory's owner, a Shared copy is in its sharer set, and an Uncached line is
//!   in no cache;
//! - every load returns the last value stored: each cache keeps a shadow copy of the data it
//!   was filled with and updates it on its own stores; every load compares the shadow word
//!   with memory. A cache that kept a copy it should have lost would return a stale value.
//!
//! The checker is a component `Memory` owns (when switched on). It is handed what it checks as
//! arguments (each line's states, data and directory entry: `Memory::check_line`; a fill's data,
//! a load's or store's word) and never reads `Memory`. Tempest user blocks are checked at
//! barriers (`tempest_at_barrier`, handed the regions and the memory by
//! `Memory::check_tempest_at_barrier`): when a barrier's root sees every processor arrive, every readable non-home copy of a user block equals the home's, so a
//! reader never sees a value older than the last write before the barrier it synchronised with;
//! protocols that keep stale readable copies on purpose must run unchecked.

use super::cache::Line;
use super::protocol::{CacheState, DirState};
use super::tempest::Tempest;
use std::collections::BTreeMap;

/// A line's directory entry as the checker sees it (outside a transaction).
pub(crate) struct DirView<'a> {
    pub state: DirState,
    pub owner: u32,
    pub sharers: &'a [u32],
}

pub(crate) struct Checker {
    /// Per processor: line -> the data its cached copy holds.
    shadow: Vec<BTreeMap<Line, Vec<u64>>>,
}

impl Checker {
    pub fn new(nprocs: usize) -> Checker {
        Checker { shadow: vec![BTreeMap::new(); nprocs] }
    }

    pub fn fill(&mut self, p: usize, line: Line, data: &[u64], line_words: u64) {
        let lw = line_words as usize;
        let at = line as usize * lw;
        self.shadow[p].insert(line, data[at..at + lw].to_vec());
    }

    pub fn drop_copy(&mut self, p: usize, line: Line) {
        self.shadow[p].remove(&line);
    }

    /// `p` performed a store of `value` to word `word` of `line` (it must own the line).
    pub fn store(&mut self, p: usize, line: Line, word: usize, value: u64) -> Result<(), String> {
        match self.shadow[p].get_mut(&line) {
            Some(copy) => {
                copy[word] = value;
                Ok(())
            }
            None => Err(format!("processor {p} stored to line {line} without a copy")),
        }
    }

    /// `p` performed a load that returned `value` from word `word` of `line`.
    pub fn load(&self, p: usize, line: Line, word: usize, value: u64) -> Result<(), String> {
        match self.shadow[p].get(&line) {
            Some(copy) if copy[word] == value => Ok(()),
            Some(copy) => Err(format!(
                "processor {p} read {value:#x} from line {line} word {word}, but its copy holds {:#x}: a stale copy survived",
                copy[word]
            )),
            None => Err(format!("processor {p} loaded from line {line} without a copy")),
        }
    }

    /// Check `line`, given every cache's state of it (in processor order), memory's copy
    /// `data`, and its directory entry `dir` (None in the middle of a transaction, when the
    /// directory runs ahead of the caches).
    pub fn check_line(
        &self,
        line: Line,
        states: impl Iterator<Item = CacheState>,
        data: &[u64],
        dir: Option<DirView>,
    ) -> Result<(), String> {
        let mut modified = Vec::new();
        let mut shared = Vec::new();
        for (p, state) in states.enumerate() {
            match state {
                CacheState::Modified => modified.push(p),
                CacheState::Shared => shared.push(p),
                CacheState::Invalid => {}
            }
        }
        if modified.len() > 1 || (modified.len() == 1 && !shared.is_empty()) {
            return Err(format!("line {line}: Modified at {modified:?} and Shared at {shared:?}"));
        }
        for &p in modified.iter().chain(&shared) {
            if self.shadow[p].get(&line).map(|c| c.as_slice()) != Some(data) {
                return Err(format!("line {line}: the copy at processor {p} differs from memory"));
            }
        }
        let Some(e) = dir else {
            return Ok(()); // mid-transaction: the directory runs ahead of the caches
        };
        match e.state {
            DirState::Uncached if !modified.is_empty() || !shared.is_empty() => {
                Err(format!("line {line}: directory says Uncached but cached at {modified:?} {shared:?}"))
            }
            DirState::Shared if !modified.is_empty() => {
                Err(format!("line {line}: directory says Shared but Modified at {modified:?}"))
            }
            DirState::Shared => match shared.iter().find(|&&p| !e.sharers.contains(&(p as u32))) {
                Some(p) => Err(format!("line {line}: cached at {p} but not in the sharer set {:?}", e.sharers)),
                None => Ok(()),
            },
            // The new owner may still hold a Shared copy while its upgrade permission travels.
            DirState::Exclusive if shared.iter().chain(&modified).any(|&p| p as u32 != e.owner) => Err(format!(
                "line {line}: directory owner {} but Modified at {modified:?}, Shared at {shared:?}",
                e.owner
            )),
            DirState::BusyInvalidating | DirState::BusyForwarding => {
                Err(format!("line {line}: busy state {:?} without a transaction", e.state))
            }
            _ => Ok(()),
        }
    }
}

/// Tempest's invariant at a barrier every processor has entered: every readable copy of a user
/// block equals its home's copy (`data` is the backing store, which holds the homes' copies;
/// `home_of` gives a line's home), so no reader can see a value older than the last write
/// before the barrier it synchronised with. This is what the update protocol promises (the
/// writer waits for its updates to be acknowledged before synchronising); a user protocol that
/// lets readers keep stale copies on purpose must run unchecked.
pub(crate) fn tempest_at_barrier(
    tempest: &Tempest,
    data: &[u64],
    nprocs: usize,
    line_words: usize,
    home_of: impl Fn(Line) -> usize,
) -> Result<(), String> {
    for (line, block_lines) in tempest.blocks() {
        let home = home_of(line);
        for p in (0..nprocs).filter(|&p| p != home && tempest.readable(p, line, home)) {
            for w in 0..line_words * block_lines as usize {
                let mine = tempest.read(data, p, line, home, w);
                let theirs = tempest.read(data, home, line, home, w);
                if mine != theirs {
                    return Err(format!(
                        "at a barrier P{p}'s readable copy of user block {line} has word {w} = {mine}, its home P{home} has {theirs}"
                    ));
                }
            }
        }
    }
    Ok(())
}
