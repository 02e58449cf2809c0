//! `SimNode`: the [`Node`] interface as seen from inside a processor's coroutine.
//!
//! *`SimNode`*: `timed` and `block` are the only yields; hits accumulate in `pending_ps` (at most
//! `max_run_ahead_cycles`) and are handed over before anything others can observe; an access
//! performs the moment its line is confirmed present. Locks (TAS then TTAS), `spin_until` and the
//! shared-memory barrier block until the cached line is taken away. `dsm.instrumentation` charges
//! the study's per-load/per-store check before every program load and store, shared (`charge_hit`)
//! and private (`private_ref`), never `compute()`; "slice" checks what "cc-reg" does (apps keep
//! stack references inside `compute()`); `with_nprocs(1)` baselines are uninstrumented. Counters
//! `access_checked_loads`/`_stores`, `access_check_cycles`.

use super::error::SimError;
use super::state::{MainState, Wait};
use super::world::World;
use crate::mem::protocol::{ProcAction, ProcEvent};
use crate::msg::flow::{Buffered, Decision};
use crate::msg::{self, MessageRecord, Target};
use commlab_api::{Addr, BarrierKind, Category, HandlerId, Node, Placement, ProcId, ReceiveMode};
use corosensei::Yielder;

pub(crate) struct SimNode<'y, S> {
    pub(super) id: usize,
    wp: *mut World<S>,
    yielder: &'y Yielder<*mut World<S>, ()>,
    /// Time of cache hits not yet given to the scheduler (hits create no events: the processor
    /// runs ahead of the global clock by at most `max_run_ahead`).
    pending_ps: u64,
    pending_cat: Category,
    hit_ps: u64,
    max_run_ahead_ps: u64,
    /// `messaging.interrupt_look_cycles`: charged on every operation while receiving by interrupt.
    look_ps: u64,
    /// Inside a lock, barrier or spin: waiting counts as synchronization.
    sync_depth: u32,
    /// The address of the access `access` just made present and whether it missed (for the
    /// memory hierarchy's hit time).
    last_access: Option<(u64, bool)>,
    /// The machine has a memory hierarchy (`[hierarchy]`), read once: hits ask it for their time.
    hierarchy: bool,
    /// The access `access` just made present is a software-DSM home's own block, performed on
    /// its memory with no cached copy (`Memory::resident_at_home`): the checker has no copy.
    at_home: bool,
}

impl<'y, S> SimNode<'y, S> {
    pub fn new(id: usize, wp: *mut World<S>, yielder: &'y Yielder<*mut World<S>, ()>) -> Self {
        // SAFETY: as in `w`.
        let cfg = unsafe { &(*wp).cfg };
        SimNode {
            id,
            wp,
            yielder,
            pending_ps: 0,
            pending_cat: Category::Compute,
            hit_ps: cfg.mem.hit_ps,
            max_run_ahead_ps: cfg.mem.max_run_ahead_ps,
            look_ps: cfg.msg.interrupt_look_ps,
            sync_depth: 0,
            last_access: None,
            hierarchy: cfg.mem.hierarchy.is_some(),
            at_home: false,
        }
    }

    /// Give accumulated hit time to the scheduler (before anything other processors can see).
    pub fn flush(&mut self) {
        if self.pending_ps > 0 {
            let ps = std::mem::take(&mut self.pending_ps);
            let cat = self.pending_cat;
            self.timed(ps, cat);
        }
    }

    /// The category memory waits and hits are charged to right now.
    pub(super) fn mem_cat(&self, wait: bool) -> Category {
        match (self.sync_depth > 0, wait) {
            (true, _) => Category::Synchronization,
            (false, true) => Category::MemoryNiWait,
            (false, false) => Category::Compute,
        }
    }

    /// Add local (event-free) time in category `cat`.
    #[inline]
    fn run_ahead(&mut self, ps: u64, cat: Category) {
        if self.pending_cat != cat {
            self.flush();
            self.pending_cat = cat;
        }
        self.pending_ps += ps;
        if self.pending_ps >= self.max_run_ahead_ps {
            self.flush();
        }
    }

    /// An operation of the main thread begins: while receiving by interrupt on a machine that
    /// looks for messages in software (`messaging.interrupt_look_cycles`), it pays one look, as
    /// part of its own time (`cat`). Called once per `Node` operation, never from inside another.
    #[inline]
    fn look(&mut self, cat: Category) {
        let id = self.id;
        if self.look_ps > 0 && self.w().procs[id].mode == ReceiveMode::Interrupt {
            let ps = self.look_ps;
            self.run_ahead(ps, cat);
        }
    }

    /// Spin on `addr` until `cond` holds (the body of `Node::spin_until`, also used by locks and
    /// the shared-memory barrier).
    fn spin_word(&mut self, what: &'static str, addr: Addr, mut cond: impl FnMut(u64) -> bool) -> u64 {
        self.sync_depth += 1;
        let id = self.id;
        let v = loop {
            let v = self.load_word(addr);
            if cond(v) {
                break v;
            }
            // Spinning hits in the cache (or the home's own memory) and changes nothing until
            // the line is taken away.
            self.flush();
            let line = self.w().mem.line_of(addr.0);
            let w = self.w();
            if w.mem.load_hits(id, line) {
                self.block(Wait::Spin(what, line), Category::Synchronization);
            }
        };
        self.sync_depth -= 1;
        v
    }

    /// A shared-memory load (the body of `Node::load`, also used by spinning).
    fn load_word(&mut self, addr: Addr) -> u64 {
        self.check_addr(addr, "load");
        if self.is_user(addr) {
            return self.user_access(addr, None);
        }
        let line = self.access(addr, false);
        let (id, at_home) = (self.id, self.at_home);
        let w = self.w();
        let (v, checked) = w.mem.load_word(id, line, addr.0, !at_home);
        if let Err(e) = checked {
            w.fail(SimError::Internal(format!("coherence invariant: {e}")));
        }
        self.charge_hit(0, false);
        v
    }

    /// A shared-memory store (the body of `Node::store`, also used by `unlock`).
    fn store_word(&mut self, addr: Addr, value: u64) {
        self.check_addr(addr, "store");
        if self.is_user(addr) {
            self.user_access(addr, Some(value));
            return;
        }
        let line = self.access(addr, true);
        let (id, at_home) = (self.id, self.at_home);
        let w = self.w();
        if let Err(e) = w.mem.store_word(id, line, addr.0, value, !at_home) {
            w.fail(SimError::Internal(format!("coherence invariant: {e}")));
        }
        // Blizzard-E: a writable block on a read-only page is written by the kernel.
        let emulated = self.w().mem.emulated_write_ps(id, line);
        self.charge_hit(emulated, true);
    }

    pub(super) fn check_addr(&mut self, addr: Addr, what: &str) {
        if !self.w().mem.valid(addr.0) {
            let (id, words) = (self.id, self.w().mem.words());
            self.fail(format!(
                "processor {id}: {what} of address {:#x}, which is not an aligned word of shared memory (allocated: {} bytes)",
                addr.0,
                words * 8
            ));
        }
        if let Some(owner) = self.w().mem.private_owner(addr.0) {
            let id = self.id;
            self.fail(format!(
                "processor {id}: {what} of address {:#x}, which is private memory of processor {owner} (use private_read/private_write)",
                addr.0
            ));
        }
    }

    /// Bring `addr`'s line into the cache (owned if `write`), blocking on misses; returns the
    /// line, which is present *now*: the caller must perform the access before anything can
    /// yield, then charge its time with `charge_hit` (a hit takes `hit_cycles` and no event).
    fn access(&mut self, addr: Addr, write: bool) -> u64 {
        let id = self.id;
        let mut missed = false;
        let mut stalled_since = None;
        if self.is_user(addr) {
            self.fail(format!(
                "processor {id}: an atomic, lock, spin or prefetch on address {:#x} of a Tempest user region (only load and store reach user blocks)",
                addr.0
            ));
        }
        let ev = if write { ProcEvent::Store } else { ProcEvent::Load };
        let w = self.w();
        let line = w.mem.line_of(addr.0);
        if w.mem.try_hit(id, line, write) {
            // The common case, as the loop below handles a `Hit` the first time round.
            self.last_access = Some((addr.0, false));
            self.at_home = false;
            return line;
        }
        loop {
            let w = self.w();
            let action = match w.mem.proc_access(id, line, ev) {
                Ok(a) => a,
                Err(why) => self.fail_internal(format!("protocol: processor {id}, line {line}, {ev:?}: {}", why.0)),
            };
            let w = self.w();
            if let ProcAction::Hit | ProcAction::HitAtHome = action {
                // Software DSM: a home block its tag lets the home access is its memory, no copy.
                let at_home = action == ProcAction::HitAtHome;
                w.mem.performed(id, line, missed);
                self.last_access = Some((addr.0, missed));
                self.at_home = at_home;
                if let Some(since) = stalled_since {
                    self.record_miss(addr, line, since);
                }
                return line;
            }
            // A miss: issue it at the right time (after the hits before it), unless one is
            // already in flight for the line. Flushing yields, so look at the line again after.
            if self.pending_ps > 0 {
                self.flush();
                continue;
            }
            if let Some(request) = action.request() {
                self.w().mem_call(|m| m.demand_miss(id, line, request));
            }
            missed = true;
            let cat = self.mem_cat(true);
            stalled_since.get_or_insert(self.w().now);
            self.block(Wait::Miss(line), cat);
        }
    }

    /// Record a demand miss's stall (`Simulator::record_latencies`): by where the line lives
    /// (this processor's private memory, its node's memory, another node's), or `sync` for a
    /// miss inside a synchronization operation (charged to synchronization, not memory).
    fn record_miss(&mut self, addr: Addr, line: u64, since: u64) {
        let id = self.id;
        let sync = self.sync_depth > 0;
        let w = self.w();
        if let Some(f) = w.flows.as_mut() {
            f.push("miss", id, since, id, w.now);
        }
        if w.lat.is_none() {
            return;
        }
        let class = if sync {
            "sync"
        } else if w.mem.is_private_of(id, addr.0) {
            "private"
        } else if w.mem.home_of(line) == id {
            "local"
        } else {
            "remote"
        };
        w.record_latency(("miss", class), since);
    }

    /// Charge the time of a shared access that just performed (plus `extra_ps`), releasing a
    /// line held for this access.
    fn charge_hit(&mut self, extra_ps: u64, write: bool) {
        // Software DSM checks the access tag before every reference (private ones too).
        let check = self.check_ps(write);
        self.charge_access(extra_ps + check);
    }

    /// Charge the time of an access that just performed, plus `extra_ps`, releasing a line
    /// held for this access.
    fn charge_access(&mut self, extra_ps: u64) {
        let id = self.id;
        let stolen = if self.w().mem.has_pinned(id) { self.w().unpin(id) } else { 0 };
        let cat = self.mem_cat(false);
        let hit = self.hit_time();
        self.run_ahead(hit + extra_ps, cat);
        if stolen > 0 {
            // Software handlers for requests that waited on this line run now, on this processor.
            self.flush();
            self.timed(stolen, Category::MessageOverhead);
        }
    }

    /// The time of the access `access` just made present: a hit (`memory.hit_cycles`), or with
    /// a memory hierarchy the latency of the level that serves it.
    fn hit_time(&mut self) -> u64 {
        let last = self.last_access.take();
        match last {
            Some((addr, missed)) if self.hierarchy => {
                let (id, t) = (self.id, self.w().now + self.pending_ps);
                self.w().mem_call(|m| m.hier_shared(id, addr, t, missed))
            }
            _ => self.hit_ps,
        }
    }

    /// A private reference on a machine with a memory hierarchy: timing-only, so it does not
    /// block; it waits only for a free miss slot (see `mem/hier.rs`).
    fn private_hier(&mut self, addr: Addr, write: bool) {
        let (id, t) = (self.id, self.w().now + self.pending_ps);
        let (stall, busy) = self.w().mem_call(|m| m.hier_private(id, addr.0, t, write));
        if stall > 0 {
            let cat = self.mem_cat(true);
            self.run_ahead(stall, cat);
        }
        let cat = self.mem_cat(false);
        self.run_ahead(busy, cat);
    }

    fn prefetch(&mut self, addr: Addr, write: bool) {
        self.check_addr(addr, "prefetch");
        let id = self.id;
        let issue_ps = self.w().cfg.mem.prefetch_issue_ps;
        self.run_ahead(issue_ps, Category::Compute);
        let line = self.w().mem.line_of(addr.0);
        let cap = self.w().cfg.mem.prefetch_buffer_entries;
        // Every yield (flushing, a full buffer) can change the line's state: look again after.
        let ev = if write { ProcEvent::PrefetchStore } else { ProcEvent::PrefetchLoad };
        loop {
            let request = match self.w().mem.proc_access(id, line, ev) {
                Ok(ProcAction::PrefetchNotNeeded) => return,
                Ok(a) => a.request(),
                Err(why) => self.fail_internal(format!("protocol: processor {id}, line {line}, {ev:?}: {}", why.0)),
            };
            let Some(request) = request else {
                self.fail_internal(format!("protocol: processor {id}, line {line}, {ev:?}: not a prefetch's action"))
            };
            if self.pending_ps > 0 {
                self.flush();
                continue;
            }
            if self.w().mem.prefetches_in_flight(id) >= cap {
                self.block(Wait::PrefetchBuffer, Category::MemoryNiWait);
                continue;
            }
            self.w().mem_call(|m| m.prefetch(id, line, request));
            return;
        }
    }

    /// Atomic read-modify-write of a word: `f(old) -> new`; returns the old value.
    fn rmw(&mut self, addr: Addr, f: impl FnOnce(u64) -> u64) -> u64 {
        self.check_addr(addr, "read-modify-write");
        let line = self.access(addr, true);
        let (id, at_home) = (self.id, self.at_home);
        let w = self.w();
        let (old, checked) = w.mem.rmw_word(id, line, addr.0, f, !at_home);
        if let Err(e) = checked {
            w.fail(SimError::Internal(format!("coherence invariant: {e}")));
        }
        let rmw_ps = self.w().cfg.mem.rmw_ps + self.w().mem.emulated_write_ps(id, line);
        self.charge_hit(rmw_ps, true);
        old
    }

    /// The world, valid until the next yield.
    #[inline]
    pub(super) fn w(&mut self) -> &mut World<S> {
        // SAFETY: the scheduler is suspended in `resume` while this coroutine runs and holds
        // no reference into the world; callers never keep this borrow across `suspend`.
        unsafe { &mut *self.wp }
    }

    #[inline]
    fn suspend(&mut self) {
        self.wp = self.yielder.suspend(());
    }

    /// Be busy for `ps` in category `cat` (extended by any handler that interrupts).
    pub(super) fn timed(&mut self, ps: u64, cat: Category) {
        if ps == 0 {
            return;
        }
        let id = self.id;
        let w = self.w();
        let end = w.now + ps;
        let backedges = w.cfg.msg.backedge_interval_ps > 0 && cat == Category::Compute;
        let proc = &mut w.procs[id];
        proc.main = MainState::Timed { end, cat };
        proc.acct.switch(cat, w.now);
        w.wake_at(id, end);
        if backedges {
            let proc = &mut w.procs[id];
            proc.edge_at = w.now + proc.edge_left_ps;
            // A message that waited for this computation is taken at its first back-edge.
            w.try_dispatch(id);
        }
        self.suspend();
        if backedges {
            self.end_of_computation();
        }
    }

    /// Back-edge polling: a computation ended (now): count its back-edges since the last
    /// message as failed polls, keep what is left before the next, and spend the polls.
    fn end_of_computation(&mut self) {
        let id = self.id;
        let w = self.w();
        let (now, k) = (w.now, w.backedge_ps());
        let poll_ps = w.cfg.msg.poll_ps;
        let proc = &mut w.procs[id];
        if now >= proc.edge_at {
            proc.polls_to_charge += (now - proc.edge_at) / k + 1;
            proc.edge_left_ps = k - (now - proc.edge_at) % k;
        } else {
            proc.edge_left_ps = proc.edge_at - now;
        }
        let polls = std::mem::take(&mut proc.polls_to_charge);
        proc.failed_polls += polls;
        self.timed(polls * poll_ps, Category::MessageOverhead);
    }

    /// Block until something wakes this processor (a handler finishing, NI space, ...).
    pub(super) fn block(&mut self, wait: Wait, cat: Category) {
        let id = self.id;
        let w = self.w();
        let now = w.now;
        let proc = &mut w.procs[id];
        proc.main = MainState::Blocked { wait, cat, since: now };
        proc.acct.switch(cat, now);
        proc.gen = proc.gen.wrapping_add(1); // nothing stale may resume us
        w.try_dispatch(id);
        self.suspend();
    }

    /// Report a program error and stop this processor for good.
    /// Stop the run on a simulator bug (an impossible protocol state).
    fn fail_internal(&mut self, msg: String) -> ! {
        self.w().fail(SimError::Internal(msg));
        loop {
            self.suspend();
        }
    }

    pub(super) fn fail(&mut self, msg: String) -> ! {
        self.w().fail(SimError::Program(msg));
        loop {
            self.suspend();
        }
    }

    fn check_dest(&mut self, dest: ProcId) {
        let n = self.w().procs.len();
        if dest >= n {
            let id = self.id;
            self.fail(format!("processor {id} sent to processor {dest}, but the machine has {n} (0..{})", n - 1));
        }
    }

    fn check_handler(&mut self, call: &str, handler: HandlerId) {
        let registered = self.w().handlers.len();
        if handler.0 as usize >= registered {
            self.fail(format!("{call} names handler {} but the program registered {registered}", handler.0));
        }
    }

    /// Enter the next barrier: its epoch, and this processor's parent and children in the
    /// combining tree of fan-in `arity` (the program's, or the machine's for the kind).
    fn enter_barrier(&mut self, arity: usize) -> (u64, Option<usize>, std::ops::Range<usize>) {
        let id = self.id;
        let w = self.w();
        let n = w.procs.len();
        let b = &mut w.procs[id].barrier;
        b.epoch += 1;
        let (parent, children) = msg::barrier_tree(id, n, arity);
        (b.epoch, parent, children)
    }

    /// The message barrier: a combining tree of active messages.
    fn barrier_messages(&mut self) {
        let id = self.id;
        let arity = self.w().barrier_arity;
        let (epoch, parent, children) = self.enter_barrier(arity);
        let nchildren = children.len() as u64;
        while self.w().procs[id].barrier.arrivals < nchildren {
            self.block(Wait::Barrier(epoch), Category::Synchronization);
        }
        self.w().procs[id].barrier.arrivals -= nchildren;
        match parent {
            Some(parent) => {
                self.send(parent, Target::BarrierArrive, &[], Vec::new(), None, Category::Synchronization);
                while self.w().procs[id].barrier.released < epoch {
                    self.block(Wait::Barrier(epoch), Category::Synchronization);
                }
            }
            None => {
                self.check_tempest();
                self.w().procs[id].barrier.released = epoch
            }
        }
        for c in children {
            self.send(c, Target::BarrierRelease, &[epoch], Vec::new(), None, Category::Synchronization);
        }
    }

    /// The shared-memory barrier: a combining tree of counters (children fetch-and-add their
    /// parent's) and release flags (parents store their children's), each on its own line homed
    /// at its processor, so every wait spins in the local cache.
    fn barrier_shared_memory(&mut self) {
        let id = self.id;
        let (base, line_bytes) = {
            let w = self.w();
            (w.barrier_region, w.cfg.mem.line_bytes)
        };
        let counter = |p: usize| Addr(base + (2 * p as u64) * line_bytes);
        let flag = |p: usize| Addr(base + (2 * p as u64 + 1) * line_bytes);
        let arity = self.w().barrier_arity;
        let (epoch, parent, children) = self.enter_barrier(arity);
        let nchildren = children.len() as u64;
        self.sync_depth += 1;
        if nchildren > 0 {
            self.spin_word("barrier (children arriving)", counter(id), |v| v >= epoch * nchildren);
        }
        if parent.is_none() {
            self.check_tempest();
        }
        if let Some(parent) = parent {
            self.rmw(counter(parent), |old| old.wrapping_add(1));
            self.spin_word("barrier (release)", flag(id), |v| v >= epoch);
        }
        for c in children {
            self.store_word(flag(c), epoch);
        }
        self.sync_depth -= 1;
    }

    /// Pay the send cost, wait for NI output space, and launch.
    fn send(
        &mut self,
        dest: ProcId,
        target: Target,
        args: &[u64],
        payload: Vec<u64>,
        regions: Option<usize>,
        cat: Category,
    ) {
        self.flush();
        self.check_dest(dest);
        if let Err(e) = msg::check_args(&self.w().cfg, args.len()) {
            self.fail(e);
        }
        let ps = self.w().cfg.msg.send_cost_ps(args.len(), regions);
        self.timed(ps, cat);
        let id = self.id;
        let max_payload = self.w().cfg.max_packet_payload_bytes;
        let npackets = (8 * (args.len() + payload.len()) as u64).div_ceil(max_payload).max(1) as u32;
        let flow = self.w().flow.applies(id, dest, target);
        let mut waited = false;
        loop {
            if !self.w().net.output_has_room(id, npackets) {
                let since = self.w().now;
                self.block(Wait::NiOutput, Category::MemoryNiWait);
                self.w().record_latency(("ni_wait", "output"), since);
                continue;
            }
            if flow {
                match self.w().flow.decide(id, dest, true) {
                    Decision::Send => {}
                    Decision::Wait => {
                        if !waited {
                            waited = true;
                            self.w().flow.stats.credit_waits += 1;
                        }
                        let since = self.w().now;
                        self.block(Wait::Credit(dest as u32), Category::MemoryNiWait);
                        self.w().record_latency(("ni_wait", "credit"), since);
                        continue;
                    }
                    Decision::Buffer => {
                        let b = Buffered { target, args: args.to_vec(), payload, regions };
                        self.w().flow.buffer(id, dest, b);
                        let ps = self.w().cfg.msg.flow_buffer_ps;
                        self.timed(ps, cat);
                        return;
                    }
                }
            }
            break;
        }
        let w = self.w();
        let now = w.now;
        w.launch(id, dest, target, args.to_vec(), payload, now);
    }

    /// A reference to this processor's private memory: through the cache like any access
    /// (a private line is always held owned). On software DSM it pays the instrumentation's
    /// access check (`dsm.instrumentation`): slicing cannot prove these arrays non-shared.
    fn private_ref(&mut self, addr: Addr, write: bool) {
        let id = self.id;
        if !addr.0.is_multiple_of(8) || !self.w().mem.is_private_of(id, addr.0) {
            let what = if write { "private_write" } else { "private_read" };
            self.fail(format!(
                "processor {id}: {what} of address {:#x}, which is not an aligned word of its private arrays",
                addr.0
            ));
        }
        let check = self.check_ps(write);
        if self.hierarchy {
            self.private_hier(addr, write);
            if check > 0 {
                let cat = self.mem_cat(false);
                self.run_ahead(check, cat);
            }
            return;
        }
        self.access(addr, true);
        self.charge_access(check);
    }

    /// The software access check before a load or store (`dsm.instrumentation`; 0 without).
    fn check_ps(&mut self, write: bool) -> u64 {
        let id = self.id;
        let w = self.w();
        let ps = w.mem.access_check_ps(write);
        if ps > 0 {
            w.procs[id].checked[usize::from(write)] += 1;
        }
        ps
    }

    /// A load (`store: None`) or store of a word of a Tempest user region: performs on this
    /// node's copy once the block's tag allows it; until then the program's fault handler runs
    /// (once per fault) and the access waits, retrying after every handler on this node.
    fn user_access(&mut self, addr: Addr, store: Option<u64>) -> u64 {
        let id = self.id;
        let write = store.is_some();
        loop {
            // `line`: the block's first line (tags, copies and faults are per block).
            let line = match self.w().mem.user_access(id, addr.0, store) {
                Ok(v) => {
                    // Blizzard-E: a writable block on a read-only page is written by the kernel.
                    let emulated = if write {
                        let w = self.w();
                        let line = w.mem.line_of(addr.0);
                        w.mem.emulated_write_ps(id, line)
                    } else {
                        0
                    };
                    self.last_access = Some((addr.0, false));
                    self.charge_hit(emulated, write);
                    return v;
                }
                Err(line) => line,
            };
            if self.pending_ps > 0 {
                self.flush();
                continue;
            }
            let w = self.w();
            if w.mem.user_fault(id, line, write) {
                if w.cfg.smp_nodes {
                    // The faulting processor runs its fault handler itself, then waits.
                    let ps = w.run_fault_on_compute(id, line, write);
                    self.timed(ps, Category::MessageOverhead);
                    continue;
                }
                let msg =
                    w.alloc_msg(MessageRecord::new(id as u32, Target::Fault { line, write }, Vec::new(), Vec::new()));
                w.procs[id].inbox.push_back(msg);
            }
            let cat = self.mem_cat(true);
            self.block(Wait::Tag(line), cat);
        }
    }

    /// Whether `addr` lies in a Tempest user region.
    #[inline]
    fn is_user(&mut self, addr: Addr) -> bool {
        self.w().mem.is_user(addr.0)
    }

    /// At a barrier every processor has entered: with the checker on, Tempest's invariant.
    fn check_tempest(&mut self) {
        let w = self.w();
        if let Err(e) = w.mem.check_tempest_at_barrier(w.procs.len()) {
            w.fail(SimError::Internal(format!("Tempest invariant: {e}")));
        }
    }

    /// Wait (running handlers as they come) until no message waits for this processor.
    fn drain(&mut self) {
        let id = self.id;
        while {
            let p = &self.w().procs[id];
            p.handler_active || !p.inbox.is_empty()
        } {
            self.block(Wait::Drain, Category::MessageOverhead);
        }
    }
}

impl<S> Node for SimNode<'_, S> {
    type State = S;

    fn id(&self) -> ProcId {
        self.id
    }

    fn nprocs(&self) -> usize {
        // SAFETY: as in `w`; shared read only.
        unsafe { (*self.wp).procs.len() }
    }

    fn now_cycles(&self) -> f64 {
        // SAFETY: as in `w`; shared read only.
        let w = unsafe { &*self.wp };
        w.cfg.ps_to_cycles(w.now + self.pending_ps)
    }

    fn handler_cycles(&self) -> f64 {
        // SAFETY: as in `w`; shared read only.
        let w = unsafe { &*self.wp };
        w.cfg.ps_to_cycles(w.procs[self.id].app_handler_ps)
    }

    fn state<R>(&mut self, f: impl FnOnce(&mut S) -> R) -> R {
        let id = self.id;
        f(&mut self.w().procs[id].state)
    }

    fn compute(&mut self, cycles: u64) {
        self.look(Category::Compute);
        let ps = self.w().cfg.cycles_to_ps(cycles as f64);
        self.run_ahead(ps, Category::Compute);
        self.flush();
    }

    fn message_work(&mut self, cycles: u64) {
        self.look(Category::MessageOverhead);
        let ps = self.w().cfg.cycles_to_ps(cycles as f64);
        self.run_ahead(ps, Category::MessageOverhead);
        self.flush();
    }

    fn set_receive_mode(&mut self, mode: ReceiveMode) {
        self.look(Category::MessageOverhead);
        self.flush();
        let id = self.id;
        self.w().procs[id].mode = mode;
        if mode == ReceiveMode::Interrupt && !self.w().cfg.smp_nodes {
            // Messages that waited for a poll are taken now, as the interrupt would.
            self.drain();
        }
    }

    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]) {
        self.look(Category::MessageOverhead);
        self.check_handler("send_am", handler);
        self.send(dest, Target::App(handler), args, Vec::new(), None, Category::MessageOverhead);
    }

    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]) {
        self.look(Category::MessageOverhead);
        self.check_handler("send_bulk", handler);
        let payload = msg::gather_regions(regions, self.w().cfg.msg.dma_align_bytes);
        self.send(dest, Target::App(handler), args, payload, Some(regions.len()), Category::MessageOverhead);
    }

    fn poll(&mut self) {
        self.flush();
        let ps = self.w().cfg.msg.poll_ps;
        self.timed(ps, Category::MessageOverhead);
        let id = self.id;
        // (An SMP node's handlers are its protocol processor's: a poll finds nothing to run.)
        if self.w().procs[id].mode == ReceiveMode::Polling && !self.w().cfg.smp_nodes {
            self.drain();
        }
    }

    fn wait_until(&mut self, what: &'static str, mut cond: impl FnMut(&S) -> bool) {
        self.flush();
        let id = self.id;
        while !cond(&self.w().procs[id].state) {
            self.block(Wait::Cond(what), Category::Synchronization);
        }
    }

    fn barrier(&mut self) {
        self.look(Category::Synchronization);
        self.flush();
        match self.w().barrier_kind {
            BarrierKind::Messages => self.barrier_messages(),
            BarrierKind::SharedMemory => self.barrier_shared_memory(),
        }
    }

    fn alloc_user_region(&mut self, words: usize, placement: Placement, block_bytes: usize) -> Result<Addr, String> {
        let (id, n) = (self.id, self.nprocs());
        self.w().mem.alloc_user(id, words, placement, n, block_bytes).map(Addr)
    }

    fn alloc_shared(&mut self, words: usize, placement: Placement) -> Addr {
        self.look(Category::Compute);
        let (id, n) = (self.id, self.nprocs());
        match self.w().mem.alloc(id, words, placement, n) {
            Ok(base) => Addr(base),
            Err(e) => self.fail(e),
        }
    }

    fn load(&mut self, addr: Addr) -> u64 {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.load_word(addr)
    }

    fn store(&mut self, addr: Addr, value: u64) {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.store_word(addr, value);
    }

    fn private_array(&mut self, k: usize) -> Addr {
        let id = self.id;
        match self.w().mem.private_array(id, k) {
            Ok(base) => Addr(base),
            Err(have) => {
                self.fail(format!("processor {id} asked for private array {k}, but its program declared {have}"))
            }
        }
    }

    fn private_read(&mut self, addr: Addr) {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.private_ref(addr, false);
    }

    fn private_write(&mut self, addr: Addr) {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.private_ref(addr, true);
    }

    fn prefetch_read(&mut self, addr: Addr) {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.prefetch(addr, false);
    }

    fn prefetch_write(&mut self, addr: Addr) {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.prefetch(addr, true);
    }

    fn fetch_add(&mut self, addr: Addr, value: u64) -> u64 {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.rmw(addr, |old| old.wrapping_add(value))
    }

    fn get(&mut self, dst: Addr, dst_stride: usize, src: Addr, src_stride: usize, words: usize) {
        let cat = self.mem_cat(false);
        self.look(cat);
        let mut pairs = (0..words).map(|i| (dst.word(i * dst_stride), src.word(i * src_stride)));
        self.one_sided(false, "get", &mut pairs);
    }

    fn put(&mut self, dst: Addr, dst_stride: usize, src: Addr, src_stride: usize, words: usize) {
        let cat = self.mem_cat(false);
        self.look(cat);
        let mut pairs = (0..words).map(|i| (dst.word(i * dst_stride), src.word(i * src_stride)));
        self.one_sided(true, "put", &mut pairs);
    }

    fn get_indexed(&mut self, dst: Addr, src: &[Addr]) {
        let cat = self.mem_cat(false);
        self.look(cat);
        let mut pairs = src.iter().enumerate().map(|(i, &s)| (dst.word(i), s));
        self.one_sided(false, "get_indexed", &mut pairs);
    }

    fn put_indexed(&mut self, dst: &[Addr], src: Addr) {
        let cat = self.mem_cat(false);
        self.look(cat);
        let mut pairs = dst.iter().enumerate().map(|(i, &d)| (d, src.word(i)));
        self.one_sided(true, "put_indexed", &mut pairs);
    }

    fn quiet(&mut self) {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.one_sided_quiet();
    }

    fn compare_swap(&mut self, addr: Addr, expected: u64, new: u64) -> u64 {
        let cat = self.mem_cat(false);
        self.look(cat);
        self.rmw(addr, |old| if old == expected { new } else { old })
    }

    fn lock(&mut self, addr: Addr) {
        self.look(Category::Synchronization);
        // Times as the processor sees them (hits not yet given to the scheduler included), so
        // that recording changes nothing.
        let since = self.w().now + self.pending_ps;
        self.sync_depth += 1;
        // Test-and-set first (one write miss when the lock is free), then spin with loads
        // in the cache until it looks free (test-and-test-and-set).
        while self.rmw(addr, |_| 1) != 0 {
            self.spin_word("lock", addr, |v| v == 0);
        }
        let held = self.w().now + self.pending_ps;
        self.w().record_latency_between(("lock_wait", "lock"), since, held);
        let overhead = self.w().cfg.mem.lock_overhead_ps;
        self.run_ahead(overhead, Category::Synchronization);
        self.sync_depth -= 1;
        let id = self.id;
        self.w().mem.lock_taken(addr.0, id);
    }

    fn unlock(&mut self, addr: Addr) {
        self.look(Category::Synchronization);
        self.sync_depth += 1;
        self.store_word(addr, 0);
        self.sync_depth -= 1;
        self.w().mem.lock_released(addr.0);
    }

    fn spin_until(&mut self, what: &'static str, addr: Addr, cond: impl FnMut(u64) -> bool) -> u64 {
        self.look(Category::Synchronization);
        self.spin_word(what, addr, cond)
    }

    fn progress(&mut self, done: u64, total: u64) {
        self.w().work = (done, total);
    }

    fn begin_timing(&mut self) {
        self.flush();
        let id = self.id;
        let w = self.w();
        let now = w.now;
        w.procs[id].acct.begin(now);
        if w.timing_start.is_none() {
            w.timing_start = Some(now);
            w.traffic = Default::default();
            w.mem.reset_counts(w.procs.len());
            // A message already launched was sent before the timed region: its receipt is not
            // counted either.
            w.uncount_messages();
            for p in &mut w.procs {
                p.sent = 0;
                p.received = 0;
                p.failed_polls = 0;
                p.edge_dispatches = 0;
                p.checked = [0; 2];
            }
            w.overflow = Default::default();
            w.net.reset_link_stats(now);
            if let Some(l) = w.lat.as_mut() {
                l.clear();
            }
            if let Some(s) = w.sampler.as_mut() {
                s.restart(now);
                for p in &mut w.procs {
                    if let Some(a) = p.acct.intervals.as_mut() {
                        a.restart(now);
                    }
                }
            }
            if let Some(t) = w.trace {
                let (a, b) = w.trace_window_ps(t, now);
                for p in &mut w.procs {
                    if let Some(log) = p.acct.spans.as_mut() {
                        log.set_window(a, b);
                    }
                }
                if let Some(f) = w.flows.as_mut() {
                    f.clear();
                    f.set_window(a, b);
                }
                if let Some(log) = w.net.packet_log.as_mut() {
                    log.clear();
                    log.set_window(a, b);
                }
            }
        }
    }
}
