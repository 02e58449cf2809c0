//! Software DSM at a block's home (Blizzard): the home's pages are the data, not a cached
//! copy. A block starts read-write at its home; a remote reader's copy makes it read-only
//! there, a remote writer's exclusive copy invalid. So the home's own load of a block no remote
//! node holds exclusive, or its store to a block no remote node holds at all, is an
//! access-checked reference with no fault and no message (Blizzard COW study, §8.1: "Both nodes
//! set the block's access tag to read-only (from read-write and invalid, respectively)"; "The
//! home node changes the block's access tag from read-write to invalid"). Only when its tag
//! forbids the access does the home fault and run the protocol on itself, with no data copied
//! out of its own memory and no message sent to itself.
//!
//! Where it happens: the home's tag-allowed access performs on its memory as a checked
//! reference with no cached copy, fault or message (`engine/node.rs`'s `access`, asking
//! `Memory::resident_at_home`; a home spinning there is woken when a remote writer takes the
//! block, `home_access_lost`); a forbidden one runs the protocol with `dsm_reply_ps` and
//! `dsm_fill_ps` charging no copy; an exclusive reply invalidates the home's tag only if it
//! allowed access (`commlab-sim/tests/home_blocks.rs`).
//!
//! ## Blizzard-E's access control (`Pages`)
//! `dsm.page_bytes` and its three keys; absent on -S and -T, whose costs are unchanged. `Pages`
//! records each node's tag per shared line and each page's read-only blocks per node; `retag`
//! runs where a node's tag can change (the home's directory transitions, a cache's invalidation
//! or forward, a fill) and charges bad ECC (`dsm.tag_invalidate*` + `dsm.ecc_stop_cycles`) only
//! when an accessible block becomes invalid, mprotect (`dsm.protect_cycles`) only when a page's
//! protection flips (read-only while any block on it is read-only there), both in one call
//! less `dsm.protect_saving_cycles`. Bad ECC is set before the handler's answer leaves, a
//! downgrade's page change after it (the handler's cost either way). A store to a writable block
//! on a read-only page adds `dsm.emulated_write_cycles` to the access (`emulated_write_ps`,
//! charged as the hit is). Tempest's `set_tag` on user blocks and stores to them go through the
//! same record (`user_retag`; a block longer than a page counts on its first line's page). A
//! replacement updates the record but is not charged. Counters `page_protection_changes`,
//! `page_protection_changes_with_ecc`, `ecc_invalidations`, `emulated_writes`
//! (`commlab-sim/tests/page_protection.rs`). Table 3's rows are measured as the study's
//! benchmark ran (every block of two whole pages in turn: `miss-latency --param stride=B
//! --param align=4096`).

use super::cache::Line;
use super::protocol::{home_tag_allows, CacheState, DirEvent};
use super::{MemEffect, Memory};
use crate::machine::{DsmCosts, PageCosts};
use commlab_api::AccessTag;

impl Memory {
    /// Whether home `p`'s own access to shared `line` performs at once on its memory (its
    /// tag allows it): software DSM only, not a private line, and the directory says no other
    /// node holds the block exclusive (or, for a write, holds it at all). A block the home
    /// itself holds exclusive after a fault is in its cache and hits there.
    pub(crate) fn resident_at_home(&self, p: usize, line: Line, write: bool) -> bool {
        if self.sw.is_none() || self.is_private(line) || self.home_of(line) != p {
            return false;
        }
        home_tag_allows(self.dir[line as usize].state, write)
    }

    /// A remote `requester` takes `line` exclusive at its home: the home's tag becomes invalid,
    /// so a home spinning on it (reading its own memory) is woken to fault.
    pub(super) fn home_access_lost(&mut self, home: usize, line: Line, requester: usize) {
        if self.sw.is_some() && requester != home {
            self.outbox.push(MemEffect::LineLost { p: home, line });
        }
    }
}

impl Memory {
    /// The home handler's work answering `requester` (after directory event `ev`): the data
    /// copied out and sent, and for an exclusive reply the home's own tag made invalid. The
    /// home's tag changes only if it allowed access (the block was not already away at an
    /// owner, whose data `ev` = `OwnerData` brings back). Answering itself, the home sends
    /// nothing and copies nothing out of its own memory (`dsm_fill_ps` charges the rest).
    pub(super) fn dsm_reply_ps(
        &mut self,
        sw: &DsmCosts,
        home: usize,
        requester: usize,
        ev: DirEvent,
        exclusive: bool,
        requester_had_copy: bool,
    ) -> u64 {
        let from_owner = ev == DirEvent::OwnerData;
        if requester == home {
            self.home_fill_from_owner = from_owner;
            return 0;
        }
        // With page protection, `retag` charges the home's own tag change.
        let invalidate = if exclusive && !from_owner && self.pages.is_none() { sw.tag_invalidate_ps } else { 0 };
        let send = if requester_had_copy { sw.send_small_ps } else { sw.copy_block_ps + sw.send_data_ps };
        invalidate + send
    }

    /// The requester's reply handler at a fill of `line` at `p`: copy the block in (unless only
    /// permission came), open its tag, return from the miss handler. At the home the block is
    /// its memory: data comes in only from an owner (and its tag opens from invalid); otherwise
    /// the tag opens from read-only, a permission change.
    pub(super) fn dsm_fill_ps(&mut self, sw: &DsmCosts, p: usize, line: Line, with_data: bool) -> u64 {
        let tag = if self.home_of(line) == p {
            if std::mem::take(&mut self.home_fill_from_owner) {
                sw.copy_block_ps + sw.tag_valid_ps
            } else {
                sw.tag_valid_base_ps
            }
        } else if with_data {
            sw.copy_block_ps + sw.tag_valid_ps
        } else {
            sw.tag_valid_base_ps
        };
        tag + sw.resume_ps
    }
}

/// Blizzard-E's access control (Blizzard COW study §4.2, §5.3): invalid blocks carry bad ECC,
/// and read-only ones rely on the page's protection. Per node, a page is read-only while any
/// block on it is read-only there, else read-write; its protection changes (mprotect) only when
/// that flips, and a store to a writable block on a read-only page is performed by the kernel.
/// Bad ECC is set only when a block a node could access becomes invalid there.
pub(crate) struct Pages {
    costs: PageCosts,
    /// Per node: each shared line's tag as last seen (0: never changed, its initial tag;
    /// 1 + `AccessTag as u8` otherwise), grown on demand.
    tags: Vec<Vec<u8>>,
    /// Per node: the read-only blocks on each page, grown on demand.
    read_only: Vec<Vec<u32>>,
    pub protection_changes: u64,
    /// Protection changes made in the same call as an invalidation (the combined ioctl).
    pub combined_changes: u64,
    pub ecc_invalidations: u64,
    pub emulated_writes: u64,
}

impl Pages {
    pub(crate) fn new(costs: PageCosts, nprocs: usize) -> Pages {
        Pages {
            costs,
            tags: vec![Vec::new(); nprocs],
            read_only: vec![Vec::new(); nprocs],
            protection_changes: 0,
            combined_changes: 0,
            ecc_invalidations: 0,
            emulated_writes: 0,
        }
    }

    pub(crate) fn reset_counts(&mut self) {
        self.protection_changes = 0;
        self.combined_changes = 0;
        self.ecc_invalidations = 0;
        self.emulated_writes = 0;
    }

    /// Whether `line`'s page is read-only at node `p`.
    #[inline]
    fn page_read_only(&self, p: usize, line: Line) -> bool {
        self.read_only[p].get((line >> self.costs.lines_shift) as usize).is_some_and(|&n| n > 0)
    }

    /// `line`'s tag at `p` as last recorded (`initial` if it never changed).
    fn recorded(&self, p: usize, line: Line, initial: AccessTag) -> AccessTag {
        match self.tags[p].get(line as usize).copied().unwrap_or(0) {
            0 => initial,
            1 => AccessTag::Invalid,
            2 => AccessTag::ReadOnly,
            _ => AccessTag::Writable,
        }
    }

    /// `line`'s tag at `p` becomes `new` (from `old`): returns what the node pays, with
    /// `ecc_ps` the cost of setting bad ECC on the block.
    fn change(&mut self, p: usize, line: Line, old: AccessTag, new: AccessTag, ecc_ps: u64) -> u64 {
        if old == new {
            return 0;
        }
        let tags = &mut self.tags[p];
        if tags.len() <= line as usize {
            tags.resize(line as usize + 1, 0);
        }
        tags[line as usize] = 1 + new as u8;
        let page = (line >> self.costs.lines_shift) as usize;
        let counts = &mut self.read_only[p];
        if counts.len() <= page {
            counts.resize(page + 1, 0);
        }
        let was = counts[page] > 0;
        if old == AccessTag::ReadOnly {
            counts[page] -= 1;
        }
        if new == AccessTag::ReadOnly {
            counts[page] += 1;
        }
        let flips = was != (counts[page] > 0);
        let ecc = new == AccessTag::Invalid;
        self.protection_changes += u64::from(flips);
        self.ecc_invalidations += u64::from(ecc);
        match (ecc, flips) {
            (true, true) => {
                self.combined_changes += 1;
                (ecc_ps + self.costs.protect_ps).saturating_sub(self.costs.saving_ps)
            }
            (true, false) => ecc_ps,
            (false, true) => self.costs.protect_ps,
            (false, false) => 0,
        }
    }
}

impl Memory {
    /// Blizzard-E: `line`'s tag at `p` now. A block in `p`'s cache is read-only if Shared,
    /// writable if Modified; at its home otherwise the directory says (read-write while no
    /// remote node holds it, read-only while remote nodes read it, invalid while one owns it
    /// or a transaction is in progress), except that a home with its own request in flight
    /// keeps the tag it faulted on until the fill.
    fn page_tag(&self, p: usize, line: Line, cs: CacheState, recorded: AccessTag) -> AccessTag {
        match cs {
            CacheState::Shared => AccessTag::ReadOnly,
            CacheState::Modified => AccessTag::Writable,
            CacheState::Invalid if self.home_of(line) != p => AccessTag::Invalid,
            CacheState::Invalid if self.procs[p].engaged_with(line) => recorded,
            CacheState::Invalid => {
                let s = self.dir[line as usize].state;
                if home_tag_allows(s, true) {
                    AccessTag::Writable
                } else if home_tag_allows(s, false) {
                    AccessTag::ReadOnly
                } else {
                    AccessTag::Invalid
                }
            }
        }
    }

    /// Blizzard-E: bring `p`'s record of `line`'s tag up to date, its cache state being (or
    /// about to be) `cs`; returns what `p` pays for the change (bad ECC, a protection change,
    /// or both in one call; 0 without page protection, and for private lines) and whether `p`
    /// lost all access (bad ECC was set).
    ///
    /// Where a handler answers another node, a lost block's bad ECC (with any protection change)
    /// is set before the answer leaves, as the study's write miss shows (its ioctl "more than
    /// doubles the total miss time", §8.1), while a downgrade to read-only changes the page
    /// after the answer has left: the handler's processor cannot write the block before the
    /// handler ends, and the study's read miss, the same on -E as on -S, carries no page change
    /// at the home (Table 3). Either way the node's processor pays it.
    pub(super) fn retag(&mut self, p: usize, line: Line, cs: CacheState) -> (u64, bool) {
        let Some(sw) = self.sw else { return (0, false) };
        if self.pages.is_none() || self.is_private(line) {
            return (0, false);
        }
        let initial = if self.home_of(line) == p { AccessTag::Writable } else { AccessTag::Invalid };
        let pages = self.pages.as_ref().expect("checked above");
        let old = pages.recorded(p, line, initial);
        let new = self.page_tag(p, line, cs, old);
        let lost = old != new && new == AccessTag::Invalid;
        (self.pages.as_mut().expect("checked above").change(p, line, old, new, sw.tag_invalidate_ps), lost)
    }

    /// Blizzard-E: a Tempest handler at `p` changes user block `line`'s tag from `old` to
    /// `new` (`ecc_ps`: setting bad ECC on the whole block); returns what `p` pays (bad ECC
    /// only if the block was accessible, mprotect only if its page flips; a block longer than
    /// a page is counted on its first line's page).
    pub(crate) fn user_retag(&mut self, p: usize, line: Line, old: AccessTag, new: AccessTag, ecc_ps: u64) -> u64 {
        match &mut self.pages {
            Some(pages) => pages.change(p, line, old, new, ecc_ps),
            None => 0,
        }
    }

    /// Blizzard-E: a store by `p` to `line`, writable there, whose page is read-only (another
    /// block on it is): the kernel performs it. Returns its cost (0 otherwise).
    #[inline]
    pub(crate) fn emulated_write_ps(&mut self, p: usize, line: Line) -> u64 {
        let Some(pages) = &self.pages else { return 0 };
        if !pages.page_read_only(p, line) || self.is_private(line) {
            return 0;
        }
        let pages = self.pages.as_mut().expect("checked above");
        pages.emulated_writes += 1;
        pages.costs.emulated_write_ps
    }
}
