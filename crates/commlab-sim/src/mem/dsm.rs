//! Software DSM (Blizzard) as a cost model: `SoftwareDsm`, the `costs::CostModel` the memory
//! owns on a software-DSM machine (its costs, Blizzard-E's `Pages`, and what the home's answer to
//! itself leaves for its fill). It asks what it needs of the memory through `costs::LineView`
//! and never names `Memory`: `mod.rs` depends on it, one way.
//!
//! At a block's home the home's pages are the data, not a cached
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
//! `resident_at_home`; a home spinning there is woken when a remote writer takes the
//! block, `home_loses_access`); a forbidden one runs the protocol with `reply_ps` and
//! `fill_ps` charging no copy; an exclusive reply invalidates the home's tag only if it
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
use super::costs::{CostModel, Handlers, LineView};
use super::protocol::{home_tag_allows, CacheEvent, CacheState, DirEvent};
use crate::machine::{DsmCosts, PageCosts};
use commlab_api::AccessTag;

/// Software DSM as a cost model (`costs::CostModel`): its costs, Blizzard-E's page protection,
/// and what a home's answer to itself leaves for its fill handler.
pub(crate) struct SoftwareDsm {
    c: DsmCosts,
    /// Blizzard-E's page protection (`dsm.page_bytes`).
    pages: Option<Pages>,
    /// The home answers itself with data an owner just returned (`reply_ps`, then `fill_ps`).
    home_fill_from_owner: bool,
}

impl SoftwareDsm {
    pub(crate) fn new(c: DsmCosts, nprocs: usize) -> SoftwareDsm {
        SoftwareDsm { c, pages: c.pages.map(|pc| Pages::new(pc, nprocs)), home_fill_from_owner: false }
    }

    /// The costs (the engine times faults and handlers with them).
    pub(crate) fn costs(&self) -> DsmCosts {
        self.c
    }

    /// Blizzard-E's page protection, if this machine has it.
    pub(crate) fn pages(&self) -> Option<&Pages> {
        self.pages.as_ref()
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
    /// block on it is): the kernel performs it. Returns its cost (0 otherwise, and for a
    /// `private` line).
    #[inline]
    pub(crate) fn emulated_write_ps(&mut self, p: usize, line: Line, private: impl FnOnce() -> bool) -> u64 {
        let Some(pages) = &mut self.pages else { return 0 };
        if !pages.page_read_only(p, line) || private() {
            return 0;
        }
        pages.emulated_writes += 1;
        pages.costs.emulated_write_ps
    }

    /// Blizzard-E: `line`'s tag at `p` now. A block in `p`'s cache is read-only if Shared,
    /// writable if Modified; at its home otherwise the directory says (read-write while no
    /// remote node holds it, read-only while remote nodes read it, invalid while one owns it
    /// or a transaction is in progress), except that a home with its own request in flight
    /// keeps the tag it faulted on until the fill.
    fn page_tag<V: LineView>(p: usize, line: Line, cs: CacheState, recorded: AccessTag, v: &V) -> AccessTag {
        match cs {
            CacheState::Shared => AccessTag::ReadOnly,
            CacheState::Modified => AccessTag::Writable,
            CacheState::Invalid if v.home_of(line) != p => AccessTag::Invalid,
            CacheState::Invalid if v.engaged_with(p, line) => recorded,
            CacheState::Invalid => {
                let s = v.dir_state(line);
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
}

impl CostModel for SoftwareDsm {
    #[inline]
    fn access_check_ps(&self, write: bool) -> u64 {
        if write {
            self.c.store_check_ps
        } else {
            self.c.load_check_ps
        }
    }

    #[inline]
    fn miss_trap_ps(&self, upgrade: bool) -> u64 {
        self.c.miss_trap_ps + if upgrade { self.c.upgrade_fault_ps } else { 0 }
    }

    /// The miss handler sends the request as an active message.
    #[inline]
    fn request_send_ps(&self) -> u64 {
        self.c.send_small_ps
    }

    #[inline]
    fn handlers(&self) -> Handlers {
        if self.c.on_compute() {
            Handlers::Compute { entry_ps: self.c.entry_ps, body_ps: self.c.handler_ps, exit_ps: self.c.exit_ps }
        } else {
            Handlers::ProtocolProcessor { body_ps: self.c.handler_ps }
        }
    }

    /// The home handler's work answering `requester` (after directory event `ev`): the data
    /// copied out and sent, and for an exclusive reply the home's own tag made invalid. The
    /// home's tag changes only if it allowed access (the block was not already away at an
    /// owner, whose data `ev` = `OwnerData` brings back). Answering itself, the home sends
    /// nothing and copies nothing out of its own memory (`fill_ps` charges the rest).
    fn reply_ps(&mut self, home: usize, requester: usize, ev: DirEvent, exclusive: bool, had_copy: bool) -> u64 {
        let sw = &self.c;
        let from_owner = ev == DirEvent::OwnerData;
        if requester == home {
            self.home_fill_from_owner = from_owner;
            return 0;
        }
        // With page protection, `retag` charges the home's own tag change.
        let invalidate = if exclusive && !from_owner && self.pages.is_none() { sw.tag_invalidate_ps } else { 0 };
        let send = if had_copy { sw.send_small_ps } else { sw.copy_block_ps + sw.send_data_ps };
        invalidate + send
    }

    #[inline]
    fn invalidation_send_ps(&self) -> u64 {
        self.c.send_small_ps
    }

    #[inline]
    fn forward_send_ps(&self) -> u64 {
        self.c.send_small_ps
    }

    /// The handler's tag change (the invalidation's cost, or with Blizzard-E's pages what
    /// `retag` charges: bad ECC only if the block was accessible, a protection change only if
    /// its page's protection flips; a downgrade's after the answer) and its answer: an
    /// acknowledgement, or the block copied out and sent back.
    fn answer_ps<V: LineView>(&mut self, p: usize, line: Line, ev: CacheEvent, next: CacheState, v: &V) -> (u64, u64) {
        let loses_access = matches!(ev, CacheEvent::Invalidate | CacheEvent::ForwardRead | CacheEvent::ForwardWrite);
        let mut after_ps = 0;
        let tag_ps = match (loses_access, self.pages.is_some()) {
            (false, _) => 0,
            (true, false) => self.c.tag_invalidate_ps,
            (true, true) => match self.retag(p, line, next, v) {
                (ps, true) => ps,
                (ps, false) => {
                    after_ps = ps;
                    0
                }
            },
        };
        let send = match ev {
            CacheEvent::Invalidate => self.c.send_small_ps,
            CacheEvent::ForwardRead | CacheEvent::ForwardWrite => self.c.copy_block_ps + self.c.send_data_ps,
            _ => 0,
        };
        (tag_ps + send, after_ps)
    }

    #[inline]
    fn writeback_send_ps(&self) -> u64 {
        self.c.copy_block_ps + self.c.send_data_ps
    }

    /// The requester's reply handler at a fill of `line` at `p`: copy the block in (unless only
    /// permission came), open its tag, return from the miss handler. At the home the block is
    /// its memory: data comes in only from an owner (and its tag opens from invalid); otherwise
    /// the tag opens from read-only, a permission change.
    fn fill_ps<V: LineView>(&mut self, p: usize, line: Line, with_data: bool, v: &V) -> u64 {
        let sw = &self.c;
        let tag = if v.home_of(line) == p {
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
    fn retag<V: LineView>(&mut self, p: usize, line: Line, cs: CacheState, v: &V) -> (u64, bool) {
        let Some(pages) = &mut self.pages else { return (0, false) };
        if v.is_private(line) {
            return (0, false);
        }
        let initial = if v.home_of(line) == p { AccessTag::Writable } else { AccessTag::Invalid };
        let old = pages.recorded(p, line, initial);
        let new = SoftwareDsm::page_tag(p, line, cs, old, v);
        let lost = old != new && new == AccessTag::Invalid;
        (pages.change(p, line, old, new, self.c.tag_invalidate_ps), lost)
    }

    /// Whether home `p`'s own access to shared `line` performs at once on its memory (its
    /// tag allows it): not a private line, and the directory says no other node holds the
    /// block exclusive (or, for a write, holds it at all). A block the home itself holds
    /// exclusive after a fault is in its cache and hits there.
    #[inline]
    fn resident_at_home<V: LineView>(&self, p: usize, line: Line, write: bool, v: &V) -> bool {
        !v.is_private(line) && v.home_of(line) == p && home_tag_allows(v.dir_state(line), write)
    }

    /// A remote requester taking the block exclusive makes the home's tag invalid.
    #[inline]
    fn home_loses_access(&self, home: usize, requester: usize) -> bool {
        requester != home
    }

    fn reset_counts(&mut self) {
        if let Some(pages) = &mut self.pages {
            pages.reset_counts();
        }
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
