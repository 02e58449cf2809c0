//! The cost model `Memory` owns (`mod.rs`): `Model`, one of the two `costs::CostModel`s, the
//! hardware controller's (`costs::Hardware`) or software DSM's (`dsm::SoftwareDsm`), forwarding
//! each of the trait's methods to the one it is, and software DSM's own queries (its costs,
//! Blizzard-E's pages) answered as "none" in hardware.

use super::cache::Line;
use super::costs::{self, CostModel, Handlers, LineView};
use super::dsm;
use super::protocol::{CacheEvent, CacheState, DirEvent};
use crate::machine::DsmCosts;
use commlab_api::AccessTag;

/// The cost model `Memory` owns: the hardware controller's or software DSM's, forwarding to
/// the one it is (static dispatch: one match per call, as the `Option` it replaces). There is
/// one per run, so the software variant's size costs nothing and stays unboxed (no indirection
/// on the hot path).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Model {
    Hardware(costs::Hardware),
    Software(dsm::SoftwareDsm),
}

/// `$e` with `$x` bound to whichever model `$m` is.
macro_rules! each {
    ($m:expr, $x:ident => $e:expr) => {
        match $m {
            Model::Hardware($x) => $e,
            Model::Software($x) => $e,
        }
    };
}

impl CostModel for Model {
    #[inline]
    fn access_check_ps(&self, write: bool) -> u64 {
        each!(self, m => m.access_check_ps(write))
    }
    #[inline]
    fn miss_trap_ps(&self, upgrade: bool) -> u64 {
        each!(self, m => m.miss_trap_ps(upgrade))
    }
    #[inline]
    fn request_send_ps(&self) -> u64 {
        each!(self, m => m.request_send_ps())
    }
    #[inline]
    fn handlers(&self) -> Handlers {
        each!(self, m => m.handlers())
    }
    #[inline]
    fn reply_ps(&mut self, home: usize, requester: usize, ev: DirEvent, exclusive: bool, had_copy: bool) -> u64 {
        each!(self, m => m.reply_ps(home, requester, ev, exclusive, had_copy))
    }
    #[inline]
    fn invalidation_send_ps(&self) -> u64 {
        each!(self, m => m.invalidation_send_ps())
    }
    #[inline]
    fn forward_send_ps(&self) -> u64 {
        each!(self, m => m.forward_send_ps())
    }
    #[inline]
    fn answer_ps<V: LineView>(&mut self, p: usize, line: Line, ev: CacheEvent, next: CacheState, v: &V) -> (u64, u64) {
        each!(self, m => m.answer_ps(p, line, ev, next, v))
    }
    #[inline]
    fn writeback_send_ps(&self) -> u64 {
        each!(self, m => m.writeback_send_ps())
    }
    #[inline]
    fn fill_ps<V: LineView>(&mut self, p: usize, line: Line, with_data: bool, v: &V) -> u64 {
        each!(self, m => m.fill_ps(p, line, with_data, v))
    }
    #[inline]
    fn retag<V: LineView>(&mut self, p: usize, line: Line, cs: CacheState, v: &V) -> (u64, bool) {
        each!(self, m => m.retag(p, line, cs, v))
    }
    #[inline]
    fn resident_at_home<V: LineView>(&self, p: usize, line: Line, write: bool, v: &V) -> bool {
        each!(self, m => m.resident_at_home(p, line, write, v))
    }
    #[inline]
    fn home_loses_access(&self, home: usize, requester: usize) -> bool {
        each!(self, m => m.home_loses_access(home, requester))
    }
    fn reset_counts(&mut self) {
        each!(self, m => m.reset_counts())
    }
}

/// Software DSM's own state, seen from the memory ("none" in hardware).
impl Model {
    /// Whether coherence is software DSM.
    #[inline]
    pub(crate) fn is_software(&self) -> bool {
        matches!(self, Model::Software(_))
    }

    /// Software DSM's costs (None: coherence in hardware).
    #[inline]
    pub(crate) fn software(&self) -> Option<DsmCosts> {
        match self {
            Model::Software(s) => Some(s.costs()),
            Model::Hardware(_) => None,
        }
    }

    /// Blizzard-E's page protection and its counts, if this machine has it.
    pub(crate) fn pages(&self) -> Option<&dsm::Pages> {
        match self {
            Model::Software(s) => s.pages(),
            Model::Hardware(_) => None,
        }
    }

    /// Blizzard-E: a Tempest handler at `p` changes user block `line`'s tag (0 elsewhere).
    pub(crate) fn user_retag(&mut self, p: usize, line: Line, old: AccessTag, new: AccessTag, ecc_ps: u64) -> u64 {
        match self {
            Model::Software(s) => s.user_retag(p, line, old, new, ecc_ps),
            Model::Hardware(_) => 0,
        }
    }

    /// Blizzard-E: a store by `p` to `line` on a read-only page, performed by the kernel; its
    /// cost (0 otherwise; `private` is asked only where pages are kept).
    #[inline]
    pub(crate) fn emulated_write_ps(&mut self, p: usize, line: Line, private: impl FnOnce() -> bool) -> u64 {
        match self {
            Model::Software(s) => s.emulated_write_ps(p, line, private),
            Model::Hardware(_) => 0,
        }
    }
}
