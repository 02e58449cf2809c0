//! Software DSM at a block's home (Blizzard): the home's pages are the data, not a cached
//! copy. A block starts read-write at its home; a remote reader's copy makes it read-only
//! there, a remote writer's exclusive copy invalid. So the home's own load of a block no remote
//! node holds exclusive, or its store to a block no remote node holds at all, is an
//! access-checked reference with no fault and no message (Blizzard COW study, §8.1: "Both nodes
//! set the block's access tag to read-only (from read-write and invalid, respectively)"; "The
//! home node changes the block's access tag from read-write to invalid"). Only when its tag
//! forbids the access does the home fault and run the protocol on itself, with no data copied
//! out of its own memory and no message sent to itself.

use super::cache::Line;
use super::protocol::{home_tag_allows, DirEvent};
use super::{MemEffect, Memory};
use crate::machine::DsmCosts;

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
        let invalidate = if exclusive && !from_owner { sw.tag_invalidate_ps } else { 0 };
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
