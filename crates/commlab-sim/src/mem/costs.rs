//! The cost model of coherence: one interface (`CostModel`) with two implementations, the
//! hardware controller's (`Hardware`, here) and software DSM's (`dsm::SoftwareDsm`). The
//! protocol (`mod.rs`, driving the tables of `protocol.rs`) is the same for both; the points
//! where the two machines differ are this trait's methods: the access check before a load or
//! store, the miss trap (and upgrade fault), sending a request, where protocol handlers run,
//! the home's reply, an invalidation's send, a forward's send, a cache's answer to an
//! invalidation or forward, a handler's writeback, the requester's fill handler, and the access
//! tags software DSM keeps (the home's own tag on its blocks, Blizzard-E's page protection).
//!
//! `Memory` owns one of the two as an enum (`mod.rs`'s `Model`, static dispatch, no `dyn` in
//! the hot path). What a cost model needs to know of the memory (a line's home, directory
//! state, whether a processor is engaged with it) it asks through `LineView`, which `mod.rs`
//! implements over its own fields, so this file and `dsm.rs` never name `Memory`.

use super::cache::Line;
use super::protocol::{CacheEvent, CacheState, DirEvent, DirState};

/// What a cost model may ask of the memory about a line.
pub(crate) trait LineView {
    /// The node whose memory holds `line`.
    fn home_of(&self, line: Line) -> usize;
    /// Whether `line` is some processor's private memory.
    fn is_private(&self, line: Line) -> bool;
    /// `line`'s directory state at its home.
    fn dir_state(&self, line: Line) -> DirState;
    /// Whether processor `p` has a request in flight for `line` or holds it pinned.
    fn engaged_with(&self, p: usize, line: Line) -> bool;
}

/// Where protocol handlers run (the controller's machinery times them; the model says where).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Handlers {
    /// A hardware controller: no handler, no processor time.
    Hardware,
    /// Software DSM on the compute processor: interrupt entry, the handler's body, exit.
    Compute { entry_ps: u64, body_ps: u64, exit_ps: u64 },
    /// Software DSM on a dedicated protocol processor: the body, queued behind its earlier work.
    ProtocolProcessor { body_ps: u64 },
}

/// The costs where hardware coherence and software DSM differ (see the module doc). Every
/// method returns picoseconds of the processor (or handler) that does the work.
pub(crate) trait CostModel {
    /// The access check before a load or store.
    fn access_check_ps(&self, write: bool) -> u64;
    /// A miss traps to its handler (`upgrade`: a write to a readable block, which may fault
    /// differently); charged to the requester.
    fn miss_trap_ps(&self, upgrade: bool) -> u64;
    /// Sending a request to a remote home, beyond the miss's issue.
    fn request_send_ps(&self) -> u64;
    /// Where protocol handlers run.
    fn handlers(&self) -> Handlers;
    /// The home's work answering `requester` after directory event `ev` (data copied out and
    /// sent; for an `exclusive` reply the home's own tag made invalid).
    fn reply_ps(&mut self, home: usize, requester: usize, ev: DirEvent, exclusive: bool, had_copy: bool) -> u64;
    /// Sending one invalidation from the home.
    fn invalidation_send_ps(&self) -> u64;
    /// Sending a forward from the home to the owner.
    fn forward_send_ps(&self) -> u64;
    /// A cache at `p` answers `ev` on `line` (its state becoming `next`): what it costs before
    /// the answer leaves, and after it (a downgrade's page change).
    fn answer_ps<V: LineView>(&mut self, p: usize, line: Line, ev: CacheEvent, next: CacheState, v: &V) -> (u64, u64);
    /// A handler evicting a dirty line copies it out and sends it.
    fn writeback_send_ps(&self) -> u64;
    /// The requester's reply handler at a fill of shared `line` at `p` (`with_data`: the block
    /// came, not only permission), beyond the tag change `retag` charges.
    fn fill_ps<V: LineView>(&mut self, p: usize, line: Line, with_data: bool, v: &V) -> u64;
    /// Bring `p`'s record of `line`'s access tag up to date, its cache state being `cs`: what
    /// `p` pays, and whether it lost all access.
    fn retag<V: LineView>(&mut self, p: usize, line: Line, cs: CacheState, v: &V) -> (u64, bool);
    /// Whether home `p`'s own access to `line` performs on its memory with no cached copy.
    fn resident_at_home<V: LineView>(&self, p: usize, line: Line, write: bool, v: &V) -> bool;
    /// Whether `home` loses access to its own block when `requester` takes it exclusive (a home
    /// spinning on it must be woken).
    fn home_loses_access(&self, home: usize, requester: usize) -> bool;
    /// The timed region starts: counts start from zero.
    fn reset_counts(&mut self);
}

/// A hardware coherence controller: no checks, traps or handlers; an invalidation costs the
/// controller's `memory.inv_send_cycles`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hardware {
    pub inv_send_ps: u64,
}

impl CostModel for Hardware {
    #[inline]
    fn access_check_ps(&self, _write: bool) -> u64 {
        0
    }
    #[inline]
    fn miss_trap_ps(&self, _upgrade: bool) -> u64 {
        0
    }
    #[inline]
    fn request_send_ps(&self) -> u64 {
        0
    }
    #[inline]
    fn handlers(&self) -> Handlers {
        Handlers::Hardware
    }
    #[inline]
    fn reply_ps(&mut self, _: usize, _: usize, _: DirEvent, _: bool, _: bool) -> u64 {
        0
    }
    #[inline]
    fn invalidation_send_ps(&self) -> u64 {
        self.inv_send_ps
    }
    #[inline]
    fn forward_send_ps(&self) -> u64 {
        0
    }
    #[inline]
    fn answer_ps<V: LineView>(&mut self, _: usize, _: Line, _: CacheEvent, _: CacheState, _: &V) -> (u64, u64) {
        (0, 0)
    }
    #[inline]
    fn writeback_send_ps(&self) -> u64 {
        0
    }
    #[inline]
    fn fill_ps<V: LineView>(&mut self, _: usize, _: Line, _: bool, _: &V) -> u64 {
        0
    }
    #[inline]
    fn retag<V: LineView>(&mut self, _: usize, _: Line, _: CacheState, _: &V) -> (u64, bool) {
        (0, false)
    }
    #[inline]
    fn resident_at_home<V: LineView>(&self, _: usize, _: Line, _: bool, _: &V) -> bool {
        false
    }
    #[inline]
    fn home_loses_access(&self, _: usize, _: usize) -> bool {
        false
    }
    fn reset_counts(&mut self) {}
}
