//! Coherent shared memory: caches, a directory at every home, and the protocol messages
//! between them.
//!
//! Functional-first: all data lives in one backing store (`Memory::data`); loads read it and
//! stores write it at the moment the access performs (sequential consistency: a processor
//! blocks on every miss). The caches and the directory decide *when* an access can perform
//! and *what traffic* it causes. Every state change is a transition of `protocol.rs`.
//!
//! A miss: the requester sends a request to the line's home (a network packet, or a local
//! event when it is its own home); the home serializes requests per line (a busy line queues
//! them) and per node (`dir_occupancy_cycles`), invalidates sharers or forwards to the owner,
//! and finally replies with data; the requester installs the line and resumes. Hits create no
//! events: the processor accumulates their time locally (see `engine/node.rs`).
//!
//! `Memory` also holds: each line's home and directory entry (a blocking directory: a busy line
//! queues requests, and the controller is busy `dir_occupancy_cycles` per message), LimitLESS
//! overflow beyond `hw_pointers`, the prefetch buffers, the pinned-line rule (a line filled for a
//! demand access is held until that access performs; requests that reach it meanwhile are deferred
//! and replayed right after the access), software DSM (`dsm.rs`: access checks, traps, handlers on
//! the compute or a protocol processor, block copies and tag changes, as a cost model: see
//! below), Tempest user regions (`tempest.rs`), the opt-in hierarchy (`hier.rs`) and the checker
//! (`check.rs`, handed each line's states, data and directory entry through `check_line`, and
//! the regions and memory at a barrier, rather than reading `Memory`).
//!
//! It never touches the event queue: what it needs done goes as `MemEffect`s into its outbox
//! (send a protocol message over the network, deliver one locally, in order; a processor may
//! retry its access; a processor lost a line it spins on; a LimitLESS trap; a fault), which the
//! engine carries out in order right after the call (`engine/effects.rs`, `mem_call`). The
//! engine calls methods (`proc_access`, `demand_miss`, `prefetch`, `performed`,
//! `load_word`/`store_word`/`rmw_word`, `unpin`, `receive`, `user_access`,
//! `write_one_sided`, `reset_counts`, ...) and accessors (`set_now`, `take_outbox`, `stats`,
//! `pp_busy`, `handler_end`, `word`, `software`, `pages`, `tempest`, ...); `Memory`'s fields are
//! private.
//!
//! ## Cost models
//! Hardware coherence and software DSM run the same protocol; where they differ is one trait,
//! `costs::CostModel`, with two implementations: `costs::Hardware` and `dsm::SoftwareDsm` (which
//! owns software DSM's costs, Blizzard-E's pages and the home's answer to itself). `Memory` owns
//! one as the enum `model::Model` (static dispatch) and asks it at each point (`access_check_ps`,
//! `miss_trap_ps`, `request_send_ps`, `handlers`, `reply_ps`, `invalidation_send_ps`,
//! `forward_send_ps`, `answer_ps`, `writeback_send_ps`, `fill_ps`, `retag`,
//! `resident_at_home`, `home_loses_access`); a model reads the memory only through
//! `costs::LineView` (`Lines`). Where a handler runs (`costs::Handlers`) decides how `receive`
//! and `unpin` time it; the machinery (a handler's clock, `handler_end`, `pp_busy`) is
//! `Memory`'s. `is_software()` remains only for what exists only under software DSM: Tempest
//! user regions (`alloc_user`) and the engine's fault and protocol-handler timing
//! (`software()`, the costs it times them with).
//!
//! ## Protocol choices
//! - Dirty data returns through the home (4-hop), matching Alewife's 3-party cost; a replaced
//!   dirty line updates the directory at once (its write-back packet only carries the bytes),
//!   so no forward is ever sent to a cache that gave the line up; clean lines are dropped
//!   silently (the sharer entry goes stale and an invalidation to it is simply acknowledged).
//! - A write from a cache holding the line Shared is an *upgrade* (ownership only); any other
//!   write gets the data, even if the directory still lists the cache (a stale entry). Lines
//!   with a request in flight are never chosen as victims.
//! - A node's protocol messages arrive in the order sent (network FIFO per path; local
//!   deliveries in order), so a reply is never overtaken by a later invalidation.
//! - LimitLESS (Alewife): `hw_pointers` count remote sharers only (the home's copy is a local
//!   bit). A read that finds them full traps once: the home processor is interrupted (entry,
//!   `sw_read_cycles` of handler body, exit: message overhead on it, counted per node), the
//!   pointers are emptied into a list in memory with the new sharer, and later reads use the
//!   pointers again. A write to a line that overflowed traps (`sw_write_cycles`). The
//!   directory's answer leaves after entry and body (`commlab-sim/tests/limitless.rs`).
//! - Software DSM reuses the same tables: only the costs and where handlers run differ. Data
//!   messages use the bulk path (DMA set-up), small ones the plain send; a handler's sends go
//!   out one after another; a handler's steps on its own node (invalidating or taking back its
//!   own copy) run inline as more of its work; requests deferred on a pinned line are replayed
//!   right after the access and their handlers' time is taken from the processor (or protocol
//!   processor) that runs them. Handler time on software-DSM machines
//!   (`MemStats::handler_ps_*`, counters `handler_cycles_compute` and `handler_cycles_protocol`,
//!   timed region only) counts every handler a processor's inbox runs (active messages, faults,
//!   protocol handlers on the compute processor), a requester's miss trap and reply handler,
//!   and handlers deferred behind a pinned line, each on the kind of processor that ran it
//!   (`dsm.handlers`).
//!
//! ## Private memory
//! What a program keeps in its node's memory is declared (`Program::private_arrays`) and referenced
//! (`Node::private_read/write`). Private arrays follow the shared memory, allocated processor by
//! processor, so each processor's private lines are one range (`private_first`), homed at it, whose
//! directory entry never changes (owned by it): a miss is a fill from local memory (no directory
//! transaction, no software protocol on a software-DSM machine, no tag check; an inserted check's
//! cost only where `dsm.instrumentation` charges one), an eviction writes nothing back through the
//! protocol, and the lines compete with shared data for the cache. A private reference is checked
//! against its own processor's range, not against the line's home (a host cache miss at scale)
//! (`commlab-sim/tests/private_memory.rs`).

pub(crate) mod cache;
pub(crate) mod check;
mod costs;
mod directory;
mod dsm;
pub(crate) mod hier;
mod model;
pub mod protocol;
pub(crate) mod tempest;

use crate::machine::{DsmCosts, MachineConfig, MemoryConfig};
use cache::{Caches, Line};
use commlab_api::{AccessTag, Placement};
use costs::{CostModel, Handlers, LineView};
use directory::{DirEntry, Directory};
use model::Model;
use protocol::{
    cache_transition, dir_transition, proc_transition, CacheAction, CacheEvent, CacheState, DirAction, DirEvent,
    DirGuard, DirState, Impossible, Pending, ProcAction, ProcEvent, ProcGuard, ProtoKind,
};
use smallvec::SmallVec;
use std::collections::{BTreeMap, VecDeque};

/// The memory's lines as the cost model sees them (`Lines`, a `costs::LineView`), borrowing
/// only the fields it reads, so the model (another field) can be borrowed mutably beside it.
macro_rules! lines {
    ($m:expr) => {
        Lines {
            home: &$m.home,
            dir: $m.dir.entries(),
            procs: &$m.procs,
            private: $m.private_first[0]..$m.private_first[$m.private_first.len() - 1],
        }
    };
}

/// A transaction in progress on a busy line.
struct Txn {
    req: Req,
    acks_left: u32,
    /// Requests that arrived while the line was busy.
    queue: VecDeque<Req>,
    /// Snooping (`memory.snooping`): when the memory's read that ran beside a forward to the
    /// owner is done; the reply leaves no earlier.
    memory_ready: u64,
}

/// A request at the home.
#[derive(Clone, Copy, Debug)]
struct Req {
    requester: u32,
    write: bool,
    /// The requester held the line Shared when it asked (it needs ownership, not data).
    upgrade: bool,
}

/// The facts of one directory transition its actions share.
struct DirStep {
    home: usize,
    line: Line,
    ev: DirEvent,
    /// The transaction's requester (or the message's sender outside a transaction).
    requester: usize,
    /// The transaction's request is a write.
    write: bool,
    /// An upgrade from a listed sharer: ownership without the data.
    requester_had_copy: bool,
    /// When the controller started on the message.
    start: u64,
}

/// One shared allocation, for checking that every processor allocates the same regions.
struct Region {
    base: u64,
    words: usize,
    placement: Placement,
}

/// Per-processor memory-side state.
#[derive(Default, Clone)]
struct ProcMem {
    /// Line of this processor's outstanding demand miss.
    waiting: Option<Line>,
    /// Lines with a prefetch in flight.
    prefetches: Vec<Line>,
    /// Lines whose demand request is still in flight although the access it was sent for has
    /// performed (software DSM: the home's own request, overtaken by another transaction that
    /// left the home's tag allowing the access). The fill is installed, not held for an access.
    outrun: Vec<Line>,
    /// Allocations this processor has made (its index into the region list).
    allocs: usize,
    /// A line filled for a demand miss, held until the processor has performed its access
    /// (otherwise a forward arriving before the processor resumes could take it away, again
    /// and again: a livelock). Invalidations and forwards for it wait in `deferred`.
    pinned: Option<Line>,
    deferred: Vec<(CacheEvent, usize)>,
}

impl ProcMem {
    /// Whether this processor has a request in flight for `line` or holds it for an access it
    /// has not performed yet.
    fn engaged_with(&self, line: Line) -> bool {
        self.pinned == Some(line) || self.requested(line)
    }

    /// Whether this processor has a request in flight for `line`: a demand miss, a prefetch,
    /// or a demand request its access has outrun.
    #[inline]
    fn requested(&self, line: Line) -> bool {
        self.waiting == Some(line) || self.prefetches.contains(&line) || self.outrun.contains(&line)
    }

    /// The transient part of `line`'s state here, as the processor's accesses see it: a request
    /// in flight (a demand miss or a prefetch), or nothing. (A line pinned for an access is
    /// performed on at once; the processor never sees it otherwise.)
    #[inline]
    fn access_pending(&self, line: Line) -> Pending {
        if self.requested(line) {
            Pending::Requested
        } else if self.pinned == Some(line) {
            Pending::Pinned
        } else {
            Pending::Idle
        }
    }

    /// The transient part of `line`'s state here, as requests from the home see it: pinned
    /// for an access, a request in flight, or nothing.
    #[inline]
    fn protocol_pending(&self, line: Line) -> Pending {
        if self.pinned == Some(line) {
            Pending::Pinned
        } else if self.requested(line) {
            Pending::Requested
        } else {
            Pending::Idle
        }
    }
}

impl MemStats {
    pub fn new(nprocs: usize) -> MemStats {
        MemStats { traps_by_node: vec![0; nprocs], misses_by_node: vec![0; nprocs], ..MemStats::default() }
    }
}

/// Counts of memory events over the run.
#[derive(Default, Clone, Debug)]
pub(crate) struct MemStats {
    pub hits: u64,
    pub misses: u64,
    pub local_misses: u64,
    pub forwards: u64,
    pub invalidations: u64,
    pub software_traps: u64,
    /// Misses on private data (also counted in `misses` and `local_misses`).
    pub private_misses: u64,
    /// LimitLESS traps taken by each home processor.
    pub traps_by_node: Vec<u64>,
    /// Misses each processor took.
    pub misses_by_node: Vec<u64>,
    pub prefetches: u64,
    /// Prefetched lines that an access used before they were lost.
    pub prefetches_useful: u64,
    /// Time in handlers on the compute processors and on the protocol processors (software
    /// DSM): every handler a processor's inbox runs (active messages, Tempest faults, protocol
    /// handlers on the compute processor), the requester's miss trap and reply handler, and
    /// the protocol handlers deferred behind a pinned line.
    pub handler_ps_compute: u64,
    pub handler_ps_protocol: u64,
}

/// What the memory system asks of the engine. The controller never touches the event queue,
/// the network or a processor itself: it appends effects to [`Memory::outbox`], in the order
/// it wants them carried out, and the engine carries them out when the call returns.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MemEffect {
    /// Send a protocol message from `from` to `to` over the network, ready to leave at `at`.
    Send { from: usize, to: usize, kind: ProtoKind, line: Line, requester: usize, at: u64 },
    /// A protocol message from a node to itself arrives at `at` (no network; in order).
    Deliver { node: usize, kind: ProtoKind, line: Line, requester: usize, at: u64 },
    /// `p` got a line it waited for: a processor blocked on a miss or a full prefetch buffer
    /// may retry at `at`.
    Retry { p: usize, at: u64 },
    /// `p` lost `line`: a processor spinning on it may go on.
    LineLost { p: usize, line: Line },
    /// A LimitLESS trap interrupts processor `node` at `at`: interrupt entry, a handler body
    /// of `body_ps`, interrupt exit, all charged to it as message overhead.
    Trap { node: usize, at: u64, body_ps: u64 },
    /// The protocol reached an impossible state (a simulator bug).
    Fault(String),
}

pub(crate) struct Memory {
    t: MemoryConfig,
    /// The cost model: the hardware controller's or software DSM's (`costs.rs`, `dsm.rs`).
    model: Model,
    /// Picoseconds per processor cycle (for messages that name a cycle).
    cycle_ps: f64,
    /// The simulated time of the call in progress (the engine sets it before every call).
    now: u64,
    /// Effects of the call in progress, for the engine to carry out in order.
    outbox: Vec<MemEffect>,
    /// While a software protocol handler runs: its clock (handler start + entry + body, plus
    /// what its actions have cost so far); protocol actions are timed from it.
    handler_clock: Option<u64>,
    /// The latest time a software handler's actions reached (its end).
    handler_end: u64,
    /// Per node: its dedicated protocol processor is busy until this time.
    pp_busy: Vec<u64>,
    /// Whether the fill being installed carried the block (not just permission).
    fill_has_data: bool,
    /// Per node: when its last message to itself arrives (they arrive in order).
    local_fifo: Vec<u64>,
    data: Vec<u64>,
    line_words: u64,
    /// log2 of the line in bytes (`memory.line_bytes` is a power of two): `line_of` shifts.
    line_shift: u32,
    home: Vec<u32>,
    dir: Directory,
    txns: BTreeMap<Line, Txn>,
    caches: Caches,
    procs: Vec<ProcMem>,
    /// Per node: the directory controller is busy until this time.
    ctrl_busy: Vec<u64>,
    regions: Vec<Region>,
    stats: MemStats,
    /// Private memory (every processor's private arrays, allocated together before the run,
    /// processor by processor; never shared, so no coherence traffic, see `alloc_private`):
    /// processor `p`'s lines are `private_first[p]..private_first[p + 1]`, all of it
    /// `private_first[0]..private_first[n]`. So a processor's check of its own private
    /// access reads two neighbouring words instead of the line's entry in `home`, which at a
    /// thousand processors is a host cache miss on every private reference.
    private_first: Vec<Line>,
    /// Per processor: its private arrays as (base address, words).
    private_arrays: Vec<Vec<(u64, usize)>>,
    /// Lock word holders, for deadlock reports.
    lock_holders: BTreeMap<u64, usize>,
    /// Invariant checker (tests switch it on).
    checker: Option<check::Checker>,
    /// The processors' memory hierarchies and the nodes' DRAMs (empty without `[hierarchy]`).
    hierarchy: hier::Hierarchy,
    /// Tempest user-protocol regions (software DSM only).
    tempest: tempest::Tempest,
}

impl Memory {
    pub fn new(cfg: &MachineConfig, checked: bool) -> Memory {
        let n = cfg.nprocs();
        Memory {
            t: cfg.mem,
            model: match cfg.coherence.software() {
                None => Model::Hardware(costs::Hardware { inv_send_ps: cfg.mem.inv_send_ps }),
                Some(sw) => Model::Software(dsm::SoftwareDsm::new(sw, n)),
            },
            cycle_ps: cfg.cycle_ps,
            now: 0,
            outbox: Vec::new(),
            handler_clock: None,
            handler_end: 0,
            pp_busy: vec![0; n],
            fill_has_data: true,
            local_fifo: vec![0; n],
            data: Vec::new(),
            line_words: cfg.mem.line_bytes / 8,
            line_shift: {
                assert!(
                    cfg.mem.line_bytes.is_power_of_two() && cfg.mem.line_bytes >= 8,
                    "memory.line_bytes is validated"
                );
                cfg.mem.line_bytes.trailing_zeros()
            },
            home: Vec::new(),
            dir: Directory::default(),
            txns: BTreeMap::new(),
            caches: {
                let c = Caches::new(n, cfg.mem.cache_lines, cfg.mem.associativity as usize);
                match cfg.mem.hierarchy.and_then(|h| h.page_bytes) {
                    Some(page) => c.paged(page / cfg.mem.line_bytes),
                    None => c,
                }
            },
            procs: vec![ProcMem::default(); n],
            ctrl_busy: vec![0; n],
            regions: Vec::new(),
            stats: MemStats::new(n),
            private_first: vec![0; n + 1],
            private_arrays: vec![Vec::new(); n],
            lock_holders: BTreeMap::new(),
            checker: checked.then(|| check::Checker::new(n)),
            hierarchy: hier::Hierarchy::new(cfg.mem.hierarchy, cfg.mem.line_bytes, n),
            tempest: tempest::Tempest::new(n, (cfg.mem.line_bytes / 8) as usize),
        }
    }

    /// The line holding byte address `addr`.
    #[inline]
    pub fn line_of(&self, addr: u64) -> Line {
        addr >> self.line_shift
    }

    /// Whether `addr` is an allocated, aligned word.
    pub fn valid(&self, addr: u64) -> bool {
        addr.is_multiple_of(8) && ((addr / 8) as usize) < self.data.len()
    }

    pub fn home_of(&self, line: Line) -> usize {
        self.home[line as usize] as usize
    }

    /// Lines for the runtime itself (the shared-memory barrier), one per entry of `homes`.
    pub fn alloc_system(&mut self, homes: &[usize]) -> u64 {
        let lw = self.line_words as usize;
        let first_line = self.home.len();
        for &h in homes {
            self.home.push(h as u32);
            self.dir.push(DirEntry::new());
        }
        self.data.resize((first_line + homes.len()) * lw, 0);
        (first_line * lw * 8) as u64
    }

    /// Every processor's private arrays (`sizes[p]`: words of each of `p`'s arrays), as lines
    /// homed at their processor, before anything runs. A private line is only ever cached by
    /// its processor: its directory entry says so (Exclusive, owned by it) and never changes,
    /// a miss is a fill from local memory with no directory transaction (and no software
    /// protocol on a software-DSM machine), and an eviction writes nothing back through the
    /// protocol.
    pub fn alloc_private(&mut self, sizes: &[Vec<usize>]) {
        let lw = self.line_words as usize;
        debug_assert!(self.private_lines().is_empty(), "private arrays are allocated once");
        for (p, arrays) in sizes.iter().enumerate() {
            self.private_first[p] = self.home.len() as Line;
            for &words in arrays {
                let first_line = self.home.len();
                let lines = words.div_ceil(lw).max(1);
                for _ in 0..lines {
                    self.home.push(p as u32);
                    let mut e = DirEntry::new();
                    e.set_state(DirState::Exclusive);
                    e.owner = p as u32;
                    self.dir.push(e);
                }
                self.private_arrays[p].push(((first_line * lw * 8) as u64, words));
            }
        }
        for f in &mut self.private_first[sizes.len()..] {
            *f = self.home.len() as Line;
        }
        self.data.resize(self.home.len() * lw, 0);
    }

    /// Every processor's private lines.
    #[inline]
    fn private_lines(&self) -> std::ops::Range<Line> {
        self.private_first[0]..self.private_first[self.private_first.len() - 1]
    }

    #[inline]
    fn is_private(&self, line: Line) -> bool {
        self.private_lines().contains(&line)
    }

    /// The processor whose private memory holds `addr`, if any.
    pub fn private_owner(&self, addr: u64) -> Option<usize> {
        let line = self.line_of(addr);
        self.is_private(line).then(|| self.home_of(line))
    }

    /// Whether `addr` is in processor `p`'s private memory (`private_owner(addr) == Some(p)`).
    #[inline]
    pub fn is_private_of(&self, p: usize, addr: u64) -> bool {
        let line = self.line_of(addr);
        (self.private_first[p]..self.private_first[p + 1]).contains(&line)
    }

    /// Processor `p`'s `k`-th allocation (collective: the first caller creates it).
    pub fn alloc(&mut self, p: usize, words: usize, placement: Placement, nprocs: usize) -> Result<u64, String> {
        let k = self.procs[p].allocs;
        self.procs[p].allocs += 1;
        if let Some(r) = self.regions.get(k) {
            if r.words != words || r.placement != placement {
                return Err(format!(
                    "processor {p}'s shared allocation #{k} ({words} words, {placement:?}) differs from the one other processors made ({} words, {:?}); allocations are collective",
                    r.words, r.placement
                ));
            }
            return Ok(r.base);
        }
        if let Placement::Owners(o) = &placement {
            if o.len() != words || o.iter().any(|&h| h >= nprocs) {
                return Err(format!(
                    "Placement::Owners needs one owner in 0..{nprocs} per word ({words} words, got {} owners)",
                    o.len()
                ));
            }
        }
        if let Placement::OnNode(h) = placement {
            if h >= nprocs {
                return Err(format!("Placement::OnNode({h}) but there are {nprocs} processors"));
            }
        }
        let lw = self.line_words as usize;
        let first_line = self.home.len();
        let lines = words.div_ceil(lw).max(1);
        for i in 0..lines {
            let h = match &placement {
                Placement::Block => i * nprocs / lines,
                Placement::Cyclic => i % nprocs,
                Placement::OnNode(h) => *h,
                Placement::Owners(o) => o[(i * lw).min(words - 1)],
            };
            self.home.push(h as u32);
            self.dir.push(DirEntry::new());
        }
        self.data.resize((first_line + lines) * lw, 0);
        let base = (first_line * lw * 8) as u64;
        self.regions.push(Region { base, words, placement });
        Ok(base)
    }

    /// A Tempest user-protocol region in blocks of `block_bytes` (a power-of-two multiple of
    /// the line): an allocation of whole blocks, each homed on one node, whose lines the default
    /// protocol never touches (collective, as `alloc`; refused under hardware coherence).
    pub fn alloc_user(
        &mut self,
        p: usize,
        words: usize,
        placement: Placement,
        nprocs: usize,
        block_bytes: usize,
    ) -> Result<u64, String> {
        if !self.is_software() {
            return Err("Tempest user regions need fine-grain access control in software (memory.model = \"software\", e.g. blizzard-s/e/t); this machine keeps coherence in hardware".to_string());
        }
        let line_bytes = self.line_words as usize * 8;
        if block_bytes < line_bytes || !block_bytes.is_power_of_two() || block_bytes > 64 * line_bytes {
            return Err(format!(
                "a user region's block of {block_bytes} bytes: give a power of two from the machine's line (memory.line_bytes = {line_bytes}) to {} bytes",
                64 * line_bytes
            ));
        }
        let block_lines = (block_bytes / line_bytes) as u64;
        let block_words = block_lines * self.line_words;
        if words == 0 || !(words as u64).is_multiple_of(block_words) {
            return Err(format!(
                "a user region of {words} words in {block_bytes}-byte blocks: give a positive whole number of blocks ({block_words} words each)"
            ));
        }
        let lines = words as u64 / self.line_words;
        let base = self.alloc(p, words, placement, nprocs)?;
        let first = self.line_of(base);
        for b in (first..first + lines).step_by(block_lines as usize) {
            let home = self.home_of(b);
            if let Some(l) = (b..b + block_lines).find(|&l| self.home_of(l) != home) {
                return Err(format!(
                    "the placement gives the lines of one {block_bytes}-byte user block two homes (P{home} and P{}, block {} of the region): place whole blocks",
                    self.home_of(l),
                    (b - first) / block_lines
                ));
            }
        }
        self.tempest.add_region(first..first + lines, block_lines);
        Ok(base)
    }

    /// 64-bit words per line (block).
    pub fn line_words(&self) -> usize {
        self.line_words as usize
    }
}

/// What a processor does with memory once `proc_access` said its access performs: the word
/// itself, the cache's bookkeeping, the checker's shadow copies.
impl Memory {
    /// Allocated shared and private words.
    pub fn words(&self) -> usize {
        self.data.len()
    }

    /// `p`'s access to `line` performs in its cache (or at home): mark the line used (a
    /// prefetched line's first use counts as a useful prefetch), and count a hit unless the
    /// access `missed` first.
    #[inline]
    pub(crate) fn performed(&mut self, p: usize, line: Line, missed: bool) {
        let pm = &mut self.procs[p];
        if pm.waiting == Some(line) {
            // Performed at home before the fill of its own request came: the request stays in
            // flight, but its fill no longer holds the line for this access.
            pm.waiting = None;
            pm.outrun.push(line);
        }
        if self.caches.touch(p, line) {
            self.stats.prefetches_useful += 1;
        }
        if !missed {
            self.stats.hits += 1;
        }
    }

    /// A demand load or store by `p` on `line` that the processor table answers `Hit` without
    /// looking further (the line is Modified there, or Shared and the access a load: those rows
    /// hold whatever is pending, `protocol::proc_transition`), performed as `performed` does
    /// after it, with the cache searched once. Returns false, changing nothing, for any other
    /// access, which takes `proc_access`.
    #[inline]
    pub(crate) fn try_hit(&mut self, p: usize, line: Line, write: bool) -> bool {
        let Some(useful) = self.caches.hit(p, line, write) else { return false };
        let pm = &mut self.procs[p];
        if pm.waiting == Some(line) {
            // As in `performed`.
            pm.waiting = None;
            pm.outrun.push(line);
        }
        self.stats.prefetches_useful += u64::from(useful);
        self.stats.hits += 1;
        true
    }

    /// The word of `line` that `addr` is (for the checker's shadow copies).
    #[inline]
    fn word_in_line(&self, addr: u64) -> usize {
        (addr / 8) as usize % self.line_words as usize
    }

    /// `p` loads `addr` of `line` (present now); with the checker on and the access in a
    /// cached copy (`cached`: not at home in its memory), the checker compares its copy.
    #[inline]
    pub(crate) fn load_word(&self, p: usize, line: Line, addr: u64, cached: bool) -> (u64, Result<(), String>) {
        let v = self.data[(addr / 8) as usize];
        let checked = match self.checker.as_ref().filter(|_| cached) {
            Some(c) => c.load(p, line, self.word_in_line(addr), v),
            None => Ok(()),
        };
        (v, checked)
    }

    /// `p` stores `value` to `addr` of `line` (owned now); see `load_word`.
    #[inline]
    pub(crate) fn store_word(
        &mut self,
        p: usize,
        line: Line,
        addr: u64,
        value: u64,
        cached: bool,
    ) -> Result<(), String> {
        self.data[(addr / 8) as usize] = value;
        let word = self.word_in_line(addr);
        match self.checker.as_mut().filter(|_| cached) {
            Some(c) => c.store(p, line, word, value),
            None => Ok(()),
        }
    }

    /// `p` performs an atomic read-modify-write `f` on `addr` of `line` (owned now); returns
    /// the old value. See `load_word`.
    #[inline]
    pub(crate) fn rmw_word(
        &mut self,
        p: usize,
        line: Line,
        addr: u64,
        f: impl FnOnce(u64) -> u64,
        cached: bool,
    ) -> (u64, Result<(), String>) {
        let i = (addr / 8) as usize;
        let old = self.data[i];
        let new = f(old);
        self.data[i] = new;
        let word = self.word_in_line(addr);
        let checked = match self.checker.as_mut().filter(|_| cached) {
            Some(c) => c.load(p, line, word, old).and_then(|_| c.store(p, line, word, new)),
            None => Ok(()),
        };
        (old, checked)
    }

    /// Whether `p` holds a line pinned for the access it just performed.
    #[inline]
    pub(crate) fn has_pinned(&self, p: usize) -> bool {
        self.procs[p].pinned.is_some()
    }

    /// Software DSM: the access check before a load or store (`dsm.instrumentation`; 0 in
    /// hardware).
    #[inline]
    pub(crate) fn access_check_ps(&self, write: bool) -> u64 {
        self.model.access_check_ps(write)
    }

    /// The base address of processor `p`'s `k`-th private array, or how many it has.
    pub(crate) fn private_array(&self, p: usize, k: usize) -> Result<u64, usize> {
        self.private_arrays[p].get(k).map(|&(base, _)| base).ok_or(self.private_arrays[p].len())
    }

    /// Processor `p` holds the lock at `addr` (for deadlock reports).
    pub(crate) fn lock_taken(&mut self, addr: u64, p: usize) {
        self.lock_holders.insert(addr, p);
    }

    /// The lock at `addr` is free again.
    pub(crate) fn lock_released(&mut self, addr: u64) {
        self.lock_holders.remove(&addr);
    }

    /// The timed region starts: counts start from zero.
    pub(crate) fn reset_counts(&mut self, nprocs: usize) {
        self.stats = MemStats::new(nprocs);
        self.tempest.reset_counts();
        self.model.reset_counts();
    }

    /// Whether `addr` lies in a Tempest user region.
    #[inline]
    pub(crate) fn is_user(&self, addr: u64) -> bool {
        self.tempest.is_user(self.line_of(addr))
    }

    /// `p`'s load (`store: None`) or store of `addr` in a Tempest user region: performs on its
    /// copy of the block if the block's tag allows it (returning the value), else returns the
    /// block (its first line) the access faults on.
    pub(crate) fn user_access(&mut self, p: usize, addr: u64, store: Option<u64>) -> Result<u64, Line> {
        let (line, _) = self.tempest.block_of(self.line_of(addr));
        let home = self.home_of(line);
        let allowed = match self.tempest.tag(p, line, home) {
            commlab_api::AccessTag::Writable => true,
            commlab_api::AccessTag::ReadOnly => store.is_none(),
            commlab_api::AccessTag::Invalid => false,
        };
        if !allowed {
            return Err(line);
        }
        self.tempest.pending[p] = None;
        let word = (addr / 8) as usize - line as usize * self.line_words();
        Ok(match store {
            Some(v) => {
                self.tempest.write(&mut self.data, p, line, home, word, v);
                v
            }
            None => self.tempest.read(&self.data, p, line, home, word),
        })
    }

    /// `p` faults on user block `line` (a `write` or not): true if this is a new fault (its
    /// handler is to run), false if `p` already waits for that fault's handler.
    pub(crate) fn user_fault(&mut self, p: usize, line: Line, write: bool) -> bool {
        if self.tempest.pending[p] == Some((line, write)) {
            return false;
        }
        self.tempest.pending[p] = Some((line, write));
        self.tempest.faults += 1;
        true
    }

    /// At a barrier every processor has entered, with the checker on: Tempest's invariant
    /// (`check::tempest_at_barrier`).
    pub(crate) fn check_tempest_at_barrier(&self, nprocs: usize) -> Result<(), String> {
        if self.checker.is_none() {
            return Ok(());
        }
        check::tempest_at_barrier(&self.tempest, &self.data, nprocs, self.line_words(), |l| self.home_of(l))
    }
}

impl Memory {
    /// Send a protocol message from node `from` to node `to`, leaving at `at`.
    fn send_proto(&mut self, from: usize, to: usize, kind: ProtoKind, line: Line, requester: usize, at: u64) {
        // A software handler sends one message after another: later actions start after it.
        if let Some(clock) = &mut self.handler_clock {
            *clock = (*clock).max(at);
            self.handler_end = self.handler_end.max(at);
        }
        if from == to && self.handler_clock.is_some() {
            // Inside a software protocol handler, a step on the node itself (invalidating its
            // own copy, taking back its own dirty line) is more of that handler's work.
            let clock = self.handler_clock;
            self.handle(to, from, kind, line, requester);
            // The handler goes on after the local step (its clock may have moved on).
            self.handler_clock = clock.map(|c| c.max(self.handler_end));
            return;
        }
        if from == to {
            // Messages a node sends itself arrive in the order sent, as the NI output queue
            // keeps them for the network (a data reply must not be overtaken by a later
            // invalidation of the same line).
            let at = at.max(self.local_fifo[from]);
            self.local_fifo[from] = at;
            self.outbox.push(MemEffect::Deliver { node: from, kind, line, requester, at });
        } else {
            let at = if kind.carries_line() { self.coherent_bus(at) } else { at };
            self.outbox.push(MemEffect::Send { from, to, kind, line, requester, at });
        }
    }

    /// Whether processor `p` holds `line` so a load of it hits (in its cache, or at home in
    /// its own memory): a processor spinning on it waits for it to be taken away.
    pub(crate) fn load_hits(&self, p: usize, line: Line) -> bool {
        matches!(self.proc_access(p, line, ProcEvent::Load), Ok(ProcAction::Hit | ProcAction::HitAtHome))
    }

    /// Processor `p`'s access `ev` to `line`: what the processor table says it does now.
    #[inline]
    pub(crate) fn proc_access(&self, p: usize, line: Line, ev: ProcEvent) -> Result<ProcAction, Impossible> {
        let state = self.caches.state(p, line);
        let write = matches!(ev, ProcEvent::Store | ProcEvent::PrefetchStore);
        // Software DSM: a home block its tag lets the home access is its memory, no copy.
        let home_tag_allows = !state.valid() && self.resident_at_home(p, line, write);
        proc_transition(state, self.procs[p].access_pending(line), ev, ProcGuard { home_tag_allows })
    }

    /// Processor `p` misses on `line` for a demand access: it sends `request` (from
    /// `proc_access`) and waits for the fill.
    pub(crate) fn demand_miss(&mut self, p: usize, line: Line, request: ProtoKind) {
        self.procs[p].waiting = Some(line);
        self.issue(p, line, request);
    }

    /// Processor `p` prefetches `line` with `request` (from `proc_access`).
    pub(crate) fn prefetch(&mut self, p: usize, line: Line, request: ProtoKind) {
        self.procs[p].prefetches.push(line);
        self.stats.prefetches += 1;
        self.issue(p, line, request);
    }

    /// How many prefetches processor `p` has in flight.
    pub(crate) fn prefetches_in_flight(&self, p: usize) -> usize {
        self.procs[p].prefetches.len()
    }

    /// A processor starts a miss (demand or prefetch) on `line`, sending `kind` (a read, write
    /// or upgrade request).
    fn issue(&mut self, p: usize, line: Line, kind: ProtoKind) {
        let home = self.home_of(line);
        self.stats.misses += 1;
        self.stats.misses_by_node[p] += 1;
        if self.is_private(line) {
            // A fill from the node's own memory; the line arrives owned.
            self.stats.local_misses += 1;
            self.stats.private_misses += 1;
            let at = self.now + self.t.local_memory_ps;
            return self.send_proto(p, p, ProtoKind::DataExclusive, line, p, at);
        }
        let upgrade = kind == ProtoKind::UpgradeRequest;
        // Software DSM: the failed check traps to a handler (a write to a readable block may
        // fault differently), which then sends the request as an active message.
        let trap = self.model.miss_trap_ps(upgrade);
        self.stats.handler_ps_compute += trap;
        if home == p {
            self.stats.local_misses += 1;
            self.send_proto(p, p, kind, line, p, self.now + trap);
        } else {
            let send = self.model.request_send_ps();
            let at = self.now + self.t.miss_issue_ps + trap + send;
            self.send_proto(p, home, kind, line, p, at);
        }
    }

    /// A protocol message arrives at node `at_node`.
    pub(crate) fn receive(&mut self, at_node: usize, from: usize, kind: ProtoKind, line: Line, requester: usize) {
        if self.is_private(line) {
            // A private fill is the cache's own business, also on a software-DSM machine.
            return self.handle(at_node, from, kind, line, requester);
        }
        match self.model.handlers() {
            // Software DSM with protocol processors: handlers queue for the node's processor.
            Handlers::ProtocolProcessor { body_ps } => {
                let start = self.now.max(self.pp_busy[at_node]);
                self.run_software_handler(at_node, from, kind, line, requester, start + body_ps);
                self.pp_busy[at_node] = self.handler_end;
                self.stats.handler_ps_protocol += self.handler_end - start;
            }
            // Local protocol steps of software DSM (the requester is its own home).
            Handlers::Compute { body_ps, .. } => {
                self.run_software_handler(at_node, from, kind, line, requester, self.now + body_ps)
            }
            Handlers::Hardware => self.handle(at_node, from, kind, line, requester),
        }
    }

    /// Run a software protocol handler whose body ends at `clock`; its actions are timed from
    /// there, and `handler_end` tells when the last of them is done.
    pub(crate) fn run_software_handler(
        &mut self,
        at: usize,
        from: usize,
        kind: ProtoKind,
        line: Line,
        requester: usize,
        clock: u64,
    ) {
        self.handler_clock = Some(clock);
        self.handler_end = clock;
        self.handle(at, from, kind, line, requester);
        self.handler_clock = None;
    }

    /// The time protocol actions start from: now, or the running software handler's clock.
    #[inline]
    fn action_time(&self) -> u64 {
        self.handler_clock.unwrap_or(self.now).max(self.now)
    }

    /// Note that a software handler's actions reach `t`.
    #[inline]
    fn handler_reaches(&mut self, t: u64) {
        if self.handler_clock.is_some() {
            self.handler_end = self.handler_end.max(t);
        }
    }

    /// Perform one protocol message at node `at_node`.
    pub(crate) fn handle(&mut self, at_node: usize, from: usize, kind: ProtoKind, line: Line, requester: usize) {
        match kind {
            ProtoKind::ReadRequest => self.home_request(at_node, line, requester, false, false),
            ProtoKind::WriteRequest => self.home_request(at_node, line, requester, true, false),
            ProtoKind::UpgradeRequest => self.home_request(at_node, line, requester, true, true),
            ProtoKind::InvalidationAck => self.home_event(at_node, line, DirEvent::InvalidationAck, from),
            ProtoKind::OwnerData => self.home_event(at_node, line, DirEvent::OwnerData, from),
            // The directory already applied the writeback when the line was replaced (see
            // `evict`); the packet only carries the bytes across the network.
            ProtoKind::Writeback => {}
            ProtoKind::Invalidate => self.cache_event(at_node, line, CacheEvent::Invalidate, from),
            ProtoKind::ForwardRead => self.cache_event(at_node, line, CacheEvent::ForwardRead, from),
            ProtoKind::ForwardWrite => self.cache_event(at_node, line, CacheEvent::ForwardWrite, from),
            ProtoKind::DataShared => self.fill(at_node, line, CacheEvent::FillShared, from),
            ProtoKind::DataExclusive => self.fill(at_node, line, CacheEvent::FillExclusive, from),
            ProtoKind::PermissionExclusive => self.fill(at_node, line, CacheEvent::FillPermission, from),
        }
        self.check_line(line);
    }

    /// A fill (`ev`: data shared, data exclusive, or ownership without data) reaches `p`.
    fn fill(&mut self, p: usize, line: Line, ev: CacheEvent, from: usize) {
        self.fill_has_data = ev != CacheEvent::FillPermission;
        self.cache_event(p, line, ev, from)
    }

    /// A request reaches the home: serve it, or queue it behind the line's transaction.
    fn home_request(&mut self, home: usize, line: Line, requester: usize, write: bool, upgrade: bool) {
        let req = Req { requester: requester as u32, write, upgrade };
        if let Some(t) = self.txns.get_mut(&line) {
            t.queue.push_back(req);
            return;
        }
        self.txns.insert(line, Txn { req, acks_left: 0, queue: VecDeque::new(), memory_ready: 0 });
        let ev = if write { DirEvent::WriteRequest } else { DirEvent::ReadRequest };
        self.home_event(home, line, ev, requester);
    }

    /// Run one directory transition at `home` and perform its actions.
    fn home_event(&mut self, home: usize, line: Line, ev: DirEvent, from: usize) {
        let m = self.t;
        let now = self.action_time();
        // The controller handles one message at a time.
        let start = now.max(self.ctrl_busy[home]);
        self.ctrl_busy[home] = start + m.dir_occupancy_ps;
        let state = self.dir[line as usize].state();
        let txn = self.txns.get(&line);
        let (requester, write, upgrade) =
            txn.map_or((from, false, false), |t| (t.req.requester as usize, t.req.write, t.req.upgrade));
        let guard = DirGuard {
            others_share: self.dir.others_share(line as usize, requester as u32),
            last_ack: txn.is_some_and(|t| t.acks_left == 1),
            pending_write: write,
        };
        let (next, actions) = match dir_transition(state, ev, guard) {
            Ok(t) => t,
            Err(why) => {
                return self.fail_internal(format!("protocol: home {home}, line {line}: {state:?} + {ev:?}: {}", why.0))
            }
        };
        let local = requester == home;
        // When the home's answer leaves: after the directory/memory access.
        let mut t = start + if local { m.local_memory_ps } else { m.dir_ps };
        if matches!(ev, DirEvent::InvalidationAck) {
            t = start + m.ack_ps;
        }
        if matches!(ev, DirEvent::OwnerData) {
            t = start + m.forward_reply_ps;
            if m.snooping {
                // The bus's data slot follows the memory's read, which ran beside the owner's;
                // the owner drives the data instead of the memory.
                t = t.max(txn.map_or(0, |x| x.memory_ready));
            }
        }
        // Only an upgrade from a listed sharer gets ownership without the data (a sharer entry
        // may be stale: the cache dropped its clean copy silently).
        let requester_had_copy = upgrade && self.dir.sharers(line as usize).contains(&(requester as u32));
        self.dir[line as usize].set_state(next);
        // Blizzard-E: the home's own tag follows the directory (bad ECC before the answer, a
        // downgrade's page change after it: `retag`).
        let (tag_ps, lost) = self.retag(home, line, self.caches.state(home, line));
        let after_ps = if lost { 0 } else { tag_ps };
        t += tag_ps - after_ps;
        let step = DirStep { home, line, ev, requester, write, requester_had_copy, start };
        for &a in actions {
            t = match a {
                DirAction::AddRequesterToSharers => self.add_requester_to_sharers(&step, t),
                DirAction::MakeRequesterOwner => {
                    self.dir[line as usize].owner = requester as u32;
                    self.dir.clear_sharers(line as usize);
                    t
                }
                DirAction::ReplySharedData => self.reply_shared_data(&step, t),
                DirAction::ReplyExclusiveData => self.reply_exclusive_data(&step, t),
                DirAction::InvalidateOtherSharers => self.invalidate_other_sharers(&step, t),
                DirAction::CountAck => {
                    self.txns.get_mut(&line).expect("acks belong to a transaction").acks_left -= 1;
                    t
                }
                DirAction::ForwardToOwner => self.forward_to_owner(&step, t),
                DirAction::WriteDataToMemory => t, // functional data is already in memory
                DirAction::KeepOwnerAsSharer => {
                    let owner = self.dir[line as usize].owner;
                    self.dir.clear_sharers(line as usize);
                    self.dir.add_sharer(line as usize, owner);
                    self.dir[line as usize].set_hw_pointers_used(usize::from(owner as usize != home));
                    t
                }
                DirAction::ClearOwner => {
                    self.dir.clear_sharers(line as usize);
                    t
                }
                DirAction::QueueUntilIdle => {
                    // Only requests are queued, in `home_request`; a busy line never sees one here.
                    return self.fail_internal(format!("protocol: request reached busy line {line} unqueued"));
                }
                DirAction::ServeNextQueued => {
                    self.serve_next_queued(home, line);
                    t
                }
                DirAction::IgnoreCrossedWriteback => t,
            };
        }
        self.handler_reaches(t + after_ps);
    }

    /// AddRequesterToSharers: list the requester (LimitLESS: trapping when the hardware
    /// pointers overflow); returns when the answer may leave.
    fn add_requester_to_sharers(&mut self, s: &DirStep, mut t: u64) -> u64 {
        let hw_pointers = self.t.hw_pointers;
        if !self.dir.sharers(s.line as usize).contains(&(s.requester as u32)) {
            self.dir.add_sharer(s.line as usize, s.requester as u32);
            let e = &mut self.dir[s.line as usize];
            if s.requester != s.home {
                if e.hw_pointers_used() == hw_pointers {
                    // LimitLESS pointer overflow: the home processor traps once, empties the
                    // pointers into the list in memory (with the new sharer), and later reads
                    // use the pointers again.
                    e.set_hw_pointers_used(0);
                    e.mark_overflowed();
                    t = self.limitless_trap(s.home, t, self.t.sw_read_ps);
                } else {
                    e.set_hw_pointers_used(e.hw_pointers_used() + 1);
                }
            }
        }
        t
    }

    /// ReplySharedData: send the requester a shared copy.
    fn reply_shared_data(&mut self, s: &DirStep, mut t: u64) -> u64 {
        t += self.model.reply_ps(s.home, s.requester, s.ev, false, false);
        self.send_proto(s.home, s.requester, ProtoKind::DataShared, s.line, s.requester, t);
        t
    }

    /// ReplyExclusiveData: send the requester ownership (with the data unless it holds a copy).
    fn reply_exclusive_data(&mut self, s: &DirStep, mut t: u64) -> u64 {
        let kind = if s.requester_had_copy { ProtoKind::PermissionExclusive } else { ProtoKind::DataExclusive };
        self.home_access_lost(s.home, s.line, s.requester);
        t += self.model.reply_ps(s.home, s.requester, s.ev, true, s.requester_had_copy);
        self.send_proto(s.home, s.requester, kind, s.line, s.requester, t);
        t
    }

    /// InvalidateOtherSharers: one invalidation per sharer but the requester (LimitLESS:
    /// trapping to software for sharers listed in memory), counted as acks to wait for.
    fn invalidate_other_sharers(&mut self, s: &DirStep, mut t: u64) -> u64 {
        let m = self.t;
        let others: SmallVec<[u32; 4]> =
            self.dir.sharers(s.line as usize).iter().copied().filter(|&x| x as usize != s.requester).collect();
        if self.dir[s.line as usize].overflowed() {
            // LimitLESS: sharers listed in memory are invalidated by software.
            t = self.limitless_trap(s.home, t, m.sw_write_ps);
        }
        // Invalidations go out after a full directory lookup, even for a local requester.
        t = t.max(s.start + m.dir_ps);
        self.txns.get_mut(&s.line).expect("write transaction").acks_left = others.len() as u32;
        for x in others {
            t += self.model.invalidation_send_ps();
            self.stats.invalidations += 1;
            self.send_proto(s.home, x as usize, ProtoKind::Invalidate, s.line, s.requester, t);
        }
        self.ctrl_busy[s.home] = self.ctrl_busy[s.home].max(t);
        t
    }

    /// ForwardToOwner: ask the owner for its dirty data (and ownership, for a write).
    fn forward_to_owner(&mut self, s: &DirStep, mut t: u64) -> u64 {
        let owner = self.dir[s.line as usize].owner as usize;
        let kind = if s.write { ProtoKind::ForwardWrite } else { ProtoKind::ForwardRead };
        self.stats.forwards += 1;
        t += self.model.forward_send_ps();
        if self.t.snooping {
            // A snooping bus: the owning cache sees the request as the memory does, so it is
            // asked now; the memory's read (up to `t`) goes on beside it and the reply waits
            // for both (at OwnerData). The forward may be sent before an earlier grant of the
            // line to that owner has left the home; it still reaches the owner after its data,
            // as both leave the home in the order sent (the NI output queue, `local_fifo`).
            self.txns.get_mut(&s.line).expect("a forward belongs to a transaction").memory_ready = t;
            t = s.start;
        }
        self.send_proto(s.home, owner, kind, s.line, s.requester, t);
        t
    }

    /// ServeNextQueued: the transaction on `line` ends; the next request queued behind it
    /// starts its own.
    fn serve_next_queued(&mut self, home: usize, line: Line) {
        let txn = self.txns.remove(&line).expect("a transaction ends");
        let mut queue = txn.queue;
        if let Some(req) = queue.pop_front() {
            self.txns.insert(line, Txn { req, acks_left: 0, queue, memory_ready: 0 });
            let ev = if req.write { DirEvent::WriteRequest } else { DirEvent::ReadRequest };
            self.home_event(home, line, ev, req.requester as usize);
        }
    }

    /// A LimitLESS trap at `home` whose handler body takes `body_ps`, entered when the
    /// directory reaches it at `t`: the home processor is interrupted (its time is charged to
    /// it, entry and exit included), and the directory's answer leaves after entry and body.
    /// Returns when the answer may leave.
    fn limitless_trap(&mut self, home: usize, t: u64, body_ps: u64) -> u64 {
        self.stats.software_traps += 1;
        self.stats.traps_by_node[home] += 1;
        self.outbox.push(MemEffect::Trap { node: home, at: t, body_ps });
        let done = t + self.t.trap_entry_ps + body_ps;
        self.ctrl_busy[home] = self.ctrl_busy[home].max(done);
        done
    }

    /// Run one cache transition at node `p` and perform its actions.
    fn cache_event(&mut self, p: usize, line: Line, ev: CacheEvent, from: usize) {
        let state = self.caches.state(p, line);
        let pending = self.procs[p].protocol_pending(line);
        let (next, actions) = match cache_transition(state, pending, ev) {
            Ok(t) => t,
            Err(why) => {
                return self.fail_internal(format!(
                    "protocol: cache {p}, line {line}: {state:?} ({pending:?}) + {ev:?}: {}",
                    why.0
                ))
            }
        };
        if actions == [CacheAction::DeferUntilAccess] {
            self.procs[p].deferred.push((ev, from));
            return;
        }
        let home = self.home_of(line);
        let mut respond = self.action_time() + if p == home { self.t.home_cache_ps } else { self.t.owner_ps };
        // Software DSM: the handler's tag change and its answer's send (`dsm.rs`, `answer_ps`).
        let view = lines!(self);
        let (before_ps, after_ps) = self.model.answer_ps(p, line, ev, next, &view);
        respond += before_ps;
        for &a in actions {
            match a {
                CacheAction::SendInvalidationAck => {
                    self.caches.set_state(p, line, next);
                    self.send_proto(p, from, ProtoKind::InvalidationAck, line, p, respond);
                }
                CacheAction::SendOwnerDataToHome => {
                    self.caches.set_state(p, line, next);
                    self.send_proto(p, from, ProtoKind::OwnerData, line, p, respond);
                }
                CacheAction::NotifyLineLost => self.line_lost(p, line),
                CacheAction::InstallAndResume => self.install(p, line, next, self.fill_has_data),
                CacheAction::DeferUntilAccess | CacheAction::DropSilently | CacheAction::SendWritebackToHome => {
                    return self.fail_internal(format!("protocol: {a:?} from a network event at cache {p}"));
                }
            }
        }
        if matches!(ev, CacheEvent::Invalidate | CacheEvent::ForwardRead | CacheEvent::ForwardWrite) {
            self.handler_reaches(respond + after_ps);
        }
    }

    /// Evict what `line` needs evicted from `p`'s cache; false if every way holds a line that
    /// must stay: one with a request in flight (an upgrade keeps its Shared copy) or held for a
    /// demand access.
    pub(crate) fn make_room(&mut self, p: usize, line: Line) -> bool {
        let pm = &self.procs[p];
        match self.caches.victim(p, line, |l| pm.engaged_with(l)) {
            Ok(Some((victim, vstate))) => {
                self.evict(p, victim, vstate);
                true
            }
            Ok(None) => true,
            Err(()) => false,
        }
    }

    /// Data (or ownership) for `line` arrived at `p`: make room, install, resume the processor.
    fn install(&mut self, p: usize, line: Line, state: CacheState, with_data: bool) {
        // Only a prefetch can conflict with the line held for a demand access: the prefetched
        // line is given up as soon as it arrives (written back if owned).
        let placed = self.make_room(p, line);
        if placed {
            let pm = &self.procs[p];
            let prefetched = pm.prefetches.contains(&line) && pm.waiting != Some(line);
            self.caches.install(p, line, state, prefetched);
            if let Some(c) = &mut self.checker {
                c.fill(p, line, &self.data, self.line_words);
            }
        } else if state.owned() && !self.is_private(line) {
            self.write_back(p, line);
        }
        let pm = &mut self.procs[p];
        pm.prefetches.retain(|&l| l != line);
        pm.outrun.retain(|&l| l != line);
        if pm.waiting == Some(line) {
            // A demand fill that could not be placed is simply missed again.
            pm.waiting = None;
            if placed {
                pm.pinned = Some(line);
            }
        }
        let mut resume = self.action_time() + self.t.fill_ps;
        if !self.is_private(line) {
            // Software DSM: copy the block in (unless only permission came), open its access
            // tag, return from the miss handler (0 in hardware, where no handler runs).
            let view = lines!(self);
            let fill = self.model.fill_ps(p, line, with_data, &view);
            let reply = fill + self.retag(p, line, self.caches.state(p, line)).0;
            self.stats.handler_ps_compute += reply;
            resume += reply;
            self.handler_reaches(resume);
        }
        // Anyone blocked on this line (a demand miss, a full prefetch buffer) re-checks.
        self.outbox.push(MemEffect::Retry { p, at: resume });
    }

    /// `p` performed its access on its pinned line: let deferred requests for it through.
    /// Returns the processor time their software handlers take (0 in hardware, or when a
    /// protocol processor runs them): the caller spends it right after the access.
    pub(crate) fn unpin(&mut self, p: usize) -> u64 {
        let Some(line) = self.procs[p].pinned.take() else { return 0 };
        let mut stolen = 0;
        for (ev, from) in std::mem::take(&mut self.procs[p].deferred) {
            match self.model.handlers() {
                Handlers::Hardware => self.cache_event(p, line, ev, from),
                Handlers::Compute { entry_ps, body_ps, exit_ps } => {
                    let start = self.now + stolen;
                    self.run_deferred_handler(p, line, ev, from, start + entry_ps + body_ps);
                    stolen = self.handler_end + exit_ps - self.now;
                    self.stats.handler_ps_compute += self.handler_end + exit_ps - start;
                }
                Handlers::ProtocolProcessor { body_ps } => {
                    let start = self.now.max(self.pp_busy[p]);
                    self.run_deferred_handler(p, line, ev, from, start + body_ps);
                    self.pp_busy[p] = self.handler_end;
                    self.stats.handler_ps_protocol += self.handler_end - start;
                }
            }
            self.check_line(line);
        }
        stolen
    }

    /// A software handler for request `ev` from `from`, deferred on `p`'s pinned `line`, whose
    /// body ends at `clock`; `handler_end` tells when its last action is done.
    fn run_deferred_handler(&mut self, p: usize, line: Line, ev: CacheEvent, from: usize, clock: u64) {
        self.handler_clock = Some(clock);
        self.handler_end = clock;
        self.cache_event(p, line, ev, from);
        self.handler_clock = None;
    }

    /// A one-sided write (a put at its target, a get's value at its requester): the memory
    /// word takes `value` and every cached copy of its line is invalidated at once, as the
    /// T3D's and T3E's memory keeps its node's cache coherent with remote writes; returns how
    /// many copies were dropped. A line in a coherence transaction (someone's miss in flight)
    /// is refused: mixing one-sided writes with coherent access to the same line without
    /// synchronisation is not modelled.
    pub(crate) fn write_one_sided(&mut self, addr: u64, value: u64) -> Result<u64, String> {
        let line = self.line_of(addr);
        // A miss on the line anywhere (in a transaction at its home, or a request to it still
        // on its way, e.g. the home's own local miss) would install a copy the reset directory
        // does not know of.
        let busy = self.procs.iter().any(|pm| pm.engaged_with(line));
        if self.txns.contains_key(&line) || busy {
            return Err(format!(
                "a one-sided write to address {addr:#x} (line {line}) while a coherent miss on that line is in flight; \
                 separate one-sided and coherent access to the same data by synchronisation"
            ));
        }
        let mut dropped = 0;
        for p in 0..self.caches.len() {
            let state = self.caches.state(p, line);
            if !state.valid() {
                continue;
            }
            let Ok((next, actions)) = cache_transition(state, Pending::Idle, CacheEvent::WrittenOneSided) else {
                self.fail_internal(format!("protocol: a one-sided write to line {line} at cache {p} in {state:?}"));
                continue;
            };
            debug_assert_eq!(actions, [CacheAction::NotifyLineLost]);
            self.caches.set_state(p, line, next);
            self.line_lost(p, line);
            dropped += 1;
        }
        self.dir.reset(line as usize);
        self.data[(addr / 8) as usize] = value;
        self.check_line(line);
        Ok(dropped)
    }

    /// Replace `victim` at `p` (its state `vstate`; a victim is never engaged with a request
    /// or an access, see `make_room`).
    pub(crate) fn evict(&mut self, p: usize, victim: Line, vstate: CacheState) {
        let Ok((next, actions)) = cache_transition(vstate, Pending::Idle, CacheEvent::Evict) else {
            return self.fail_internal(format!("protocol: evicting line {victim} in {vstate:?}"));
        };
        self.caches.set_state(p, victim, next);
        // Blizzard-E: the tag record follows; a replacement's own ECC and protection costs are
        // not charged (as a silent drop costs nothing).
        self.retag(p, victim, next);
        self.line_lost(p, victim);
        // Private data goes back to the node's own memory; the directory keeps it owned.
        if actions.contains(&CacheAction::SendWritebackToHome) && !self.is_private(victim) {
            self.write_back(p, victim);
        }
    }

    /// `p` gives up its dirty `line`. The directory learns of it at once (so no forward is
    /// sent to a cache that no longer has the line); the writeback's bytes still cross the
    /// network.
    fn write_back(&mut self, p: usize, line: Line) {
        let home = self.home_of(line);
        // The directory update is the home's, not part of this node's handler.
        let clock = self.handler_clock.take();
        self.home_event(home, line, DirEvent::OwnerWriteback, p);
        self.handler_clock = clock;
        if home != p {
            // In software DSM the evicting handler copies the block out and sends it.
            let at = self.action_time() + self.model.writeback_send_ps();
            self.handler_reaches(at);
            if let Some(c) = &mut self.handler_clock {
                *c = (*c).max(at);
            }
            let at = self.coherent_bus(at);
            self.outbox.push(MemEffect::Send { from: p, to: home, kind: ProtoKind::Writeback, line, requester: p, at });
        }
    }

    /// `p` lost `line`: wake it if it spins on that line.
    fn line_lost(&mut self, p: usize, line: Line) {
        if let Some(c) = &mut self.checker {
            c.drop_copy(p, line);
        }
        self.outbox.push(MemEffect::LineLost { p, line });
    }

    fn fail_internal(&mut self, msg: String) {
        self.outbox.push(MemEffect::Fault(msg));
    }

    /// Run the invariant checker (when on) over one line.
    pub(crate) fn check_line(&mut self, line: Line) {
        let Some(c) = &self.checker else { return };
        let lw = self.line_words as usize;
        let at = line as usize * lw;
        let dir = (!self.txns.contains_key(&line)).then(|| {
            let e = &self.dir[line as usize];
            check::DirView { state: e.state(), owner: e.owner, sharers: self.dir.sharers(line as usize) }
        });
        let states = (0..self.caches.len()).map(|p| self.caches.state(p, line));
        if let Err(e) = c.check_line(line, states, &self.data[at..at + lw], dir) {
            let cycle = self.now as f64 / self.cycle_ps;
            self.fail_internal(format!("coherence invariant at cycle {cycle:.1}: {e}"));
        }
    }
}

/// What the cost model reads of the memory (`costs::LineView`; see `lines!`).
struct Lines<'a> {
    home: &'a [u32],
    dir: &'a [DirEntry],
    procs: &'a [ProcMem],
    private: std::ops::Range<Line>,
}

impl LineView for Lines<'_> {
    #[inline]
    fn home_of(&self, line: Line) -> usize {
        self.home[line as usize] as usize
    }
    #[inline]
    fn is_private(&self, line: Line) -> bool {
        self.private.contains(&line)
    }
    #[inline]
    fn dir_state(&self, line: Line) -> DirState {
        self.dir[line as usize].state()
    }
    #[inline]
    fn engaged_with(&self, p: usize, line: Line) -> bool {
        self.procs[p].engaged_with(line)
    }
}

/// The cost model's queries for the protocol and the engine.
impl Memory {
    /// Whether coherence is software DSM: Tempest user regions and the engine's fault and
    /// protocol-handler timing exist only there.
    #[inline]
    pub(crate) fn is_software(&self) -> bool {
        self.model.is_software()
    }

    /// Software DSM's costs (None: coherence in hardware), for the engine's timing of faults
    /// and protocol handlers and for Tempest's handler operations.
    #[inline]
    pub(crate) fn software(&self) -> Option<DsmCosts> {
        self.model.software()
    }

    /// Blizzard-E's page protection and its counts, if this machine has it.
    pub(crate) fn pages(&self) -> Option<&dsm::Pages> {
        self.model.pages()
    }

    /// Whether home `p`'s own access to shared `line` performs at once on its memory (software
    /// DSM's home blocks, `dsm.rs`; never in hardware).
    #[inline]
    pub(crate) fn resident_at_home(&self, p: usize, line: Line, write: bool) -> bool {
        self.model.resident_at_home(p, line, write, &lines!(self))
    }

    /// A remote `requester` takes `line` exclusive at its home: under software DSM the home's
    /// tag becomes invalid, so a home spinning on it (reading its own memory) is woken to fault.
    fn home_access_lost(&mut self, home: usize, line: Line, requester: usize) {
        if self.model.home_loses_access(home, requester) {
            self.outbox.push(MemEffect::LineLost { p: home, line });
        }
    }

    /// Bring `p`'s record of `line`'s access tag up to date, its cache state being `cs`
    /// (Blizzard-E's pages; `(0, false)` elsewhere): what `p` pays, and whether it lost access.
    #[inline]
    fn retag(&mut self, p: usize, line: Line, cs: CacheState) -> (u64, bool) {
        let view = lines!(self);
        self.model.retag(p, line, cs, &view)
    }

    /// Blizzard-E: a Tempest handler at `p` changes user block `line`'s tag from `old` to `new`
    /// (`dsm::SoftwareDsm::user_retag`); 0 without page protection.
    pub(crate) fn user_retag(&mut self, p: usize, line: Line, old: AccessTag, new: AccessTag, ecc_ps: u64) -> u64 {
        self.model.user_retag(p, line, old, new, ecc_ps)
    }

    /// Blizzard-E: a store by `p` to `line` whose page is read-only is performed by the
    /// kernel; its cost (0 otherwise; `dsm::SoftwareDsm::emulated_write_ps`).
    #[inline]
    pub(crate) fn emulated_write_ps(&mut self, p: usize, line: Line) -> u64 {
        let private = self.private_lines();
        self.model.emulated_write_ps(p, line, || private.contains(&line))
    }
}

/// What the engine reads and sets of the memory besides its calls (`engine/`, `msg/mod.rs`).
impl Memory {
    /// The simulated time of the call about to be made.
    #[inline]
    pub(crate) fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// Whether the calls made leave effects to carry out.
    #[inline]
    pub(crate) fn has_effects(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// The effects of the call just made, in order (`restore_outbox` gives the buffer back).
    #[inline]
    pub(crate) fn take_outbox(&mut self) -> Vec<MemEffect> {
        std::mem::take(&mut self.outbox)
    }

    /// The outbox's buffer back, emptied, keeping its allocation for the next call.
    #[inline]
    pub(crate) fn restore_outbox(&mut self, outbox: Vec<MemEffect>) {
        debug_assert!(outbox.is_empty() && self.outbox.is_empty());
        self.outbox = outbox;
    }

    /// When the last software handler's actions were done.
    pub(crate) fn handler_end(&self) -> u64 {
        self.handler_end
    }

    /// When node `p`'s protocol processor is free.
    #[inline]
    pub(crate) fn pp_busy(&self, p: usize) -> u64 {
        self.pp_busy[p]
    }

    /// Node `p`'s protocol processor is busy until `t`.
    pub(crate) fn set_pp_busy(&mut self, p: usize, t: u64) {
        self.pp_busy[p] = t;
    }

    /// The counts of the run so far.
    pub(crate) fn stats(&self) -> &MemStats {
        &self.stats
    }

    /// A handler ran `ps` on a compute processor (`MemStats::handler_ps_compute`).
    pub(crate) fn add_handler_ps_compute(&mut self, ps: u64) {
        self.stats.handler_ps_compute += ps;
    }

    /// A handler ran `ps` on a protocol processor (`MemStats::handler_ps_protocol`).
    pub(crate) fn add_handler_ps_protocol(&mut self, ps: u64) {
        self.stats.handler_ps_protocol += ps;
    }

    /// The word at `addr` in memory (a one-sided access reads memory, not a cache).
    #[inline]
    pub(crate) fn word(&self, addr: u64) -> u64 {
        self.data[(addr / 8) as usize]
    }

    /// The final memory, at the end of the run.
    pub(crate) fn take_data(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.data)
    }

    /// The holder of a lock whose word lies in `addrs`, if any (for deadlock reports).
    pub(crate) fn lock_holder(&self, addrs: std::ops::Range<u64>) -> Option<usize> {
        self.lock_holders.range(addrs).next().map(|(_, &h)| h)
    }

    /// Tempest's user regions (tags, copies, counts).
    pub(crate) fn tempest(&self) -> &tempest::Tempest {
        &self.tempest
    }

    /// Word `w` of user block `line` (homed at `home`) in node `p`'s copy.
    pub(crate) fn user_read(&self, p: usize, line: Line, home: usize, w: usize) -> u64 {
        self.tempest.read(&self.data, p, line, home, w)
    }

    /// Word `w` of user block `line` (homed at `home`) in node `p`'s copy becomes `v`.
    pub(crate) fn user_write(&mut self, p: usize, line: Line, home: usize, w: usize, v: u64) {
        self.tempest.write(&mut self.data, p, line, home, w, v);
    }

    /// Node `p`'s tag of user block `line` becomes `tag`.
    pub(crate) fn set_user_tag(&mut self, p: usize, line: Line, tag: AccessTag) {
        self.tempest.set_tag(p, line, tag);
    }

    /// A handler copied a user block (counter `tempest_block_copies`).
    pub(crate) fn count_block_copy(&mut self) {
        self.tempest.block_copies += 1;
    }
}

/// The coherent cache under a hierarchy, and the counts the hierarchy adds to.
struct CoherentLevel<'a> {
    caches: &'a mut Caches,
    stats: &'a mut MemStats,
}

impl hier::Outer for CoherentLevel<'_> {
    fn holds(&self, p: usize, line: Line) -> bool {
        self.caches.state(p, line).valid()
    }
    fn touch(&mut self, p: usize, line: Line) {
        self.caches.touch(p, line);
    }
    fn count_hit(&mut self) {
        self.stats.hits += 1;
    }
    fn count_private_miss(&mut self, p: usize) {
        self.stats.misses += 1;
        self.stats.misses_by_node[p] += 1;
        self.stats.local_misses += 1;
        self.stats.private_misses += 1;
    }
}

/// The memory hierarchy's interface to the processor (`mem/hier.rs` times; the coherent cache
/// is this memory's).
impl Memory {
    /// A private reference by `p` to `addr` at `t` (the processor's own clock), a store if
    /// `write`: (stall, busy) in picoseconds (`hier::Hierarchy::private`). A line it brought
    /// from memory is put in the coherent cache at once.
    pub(crate) fn hier_private(&mut self, p: usize, addr: u64, t: u64, write: bool) -> (u64, u64) {
        let mut outer = CoherentLevel { caches: &mut self.caches, stats: &mut self.stats };
        let r = self.hierarchy.private(&mut outer, p, addr, t, write);
        if let Some((p, line, t)) = self.hierarchy.take_install() {
            self.install_private_now(p, line, t);
        }
        r
    }

    /// The time of a shared load or store whose line the coherent cache now holds
    /// (`hier::Hierarchy::shared`).
    pub(crate) fn hier_shared(&mut self, p: usize, addr: u64, t: u64, missed: bool) -> u64 {
        self.hierarchy.shared(p, addr, t, missed)
    }

    /// When node `p`'s memory, serving a one-sided request at `t`, starts its access to the
    /// DRAM bank holding `addr` (`hier::Hierarchy::one_sided_bank`).
    pub(crate) fn one_sided_bank(&mut self, p: usize, addr: u64, t: u64) -> u64 {
        self.hierarchy.one_sided_bank(p, addr, t)
    }

    /// When a protocol message carrying a line, ready at `t`, may leave (the DEC 8400's bus,
    /// `hier::Hierarchy::coherent_bus`).
    pub(crate) fn coherent_bus(&mut self, t: u64) -> u64 {
        self.hierarchy.coherent_bus(t)
    }

    /// Put private `line` in `p`'s coherent cache now (its fill, asked for at `t`, is timed by
    /// the hierarchy). A victim leaves through the protocol as on any fill; a private victim
    /// a store made dirty is written back to the DRAM. If every way holds a line that must
    /// stay, the line is simply not cached.
    fn install_private_now(&mut self, p: usize, line: Line, t: u64) {
        let pm = &self.procs[p];
        if let Ok(Some((victim, _))) = self.caches.victim(p, line, |l| pm.engaged_with(l)) {
            self.hierarchy.write_back_private(p, victim, t);
        }
        if self.make_room(p, line) {
            self.caches.install(p, line, CacheState::Modified, false);
            if let Some(c) = &mut self.checker {
                c.fill(p, line, &self.data, self.line_words);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::protocol::{ProcAction, ProcEvent};
    use super::{CacheState, Memory};
    use crate::machine::MachineConfig;

    /// `try_hit` performs exactly the accesses `proc_access` answers `Hit`, leaving what
    /// `performed` leaves (hit and prefetch counts, the pending request, the LRU order), and
    /// changes nothing for any other: over every cache state a line can be in, loads and
    /// stores, a line prefetched and not yet used, and with a demand request, a prefetch or
    /// nothing in flight for it; on a hardware machine, a software-DSM one and one with a
    /// coloured set-associative cache.
    #[test]
    fn try_hit_performs_exactly_the_table_s_hits() {
        for preset in ["alewife", "blizzard-s", "dec8400"] {
            let cfg = MachineConfig::preset(preset, &[], Some(2)).expect("preset");
            for state in [None, Some(CacheState::Shared), Some(CacheState::Modified)] {
                for prefetched in [false, true] {
                    for pending in 0..3 {
                        for write in [false, true] {
                            let setup = || {
                                let mut mem = Memory::new(&cfg, false);
                                mem.alloc(0, 4096, commlab_api::Placement::Block, 2).expect("shared words");
                                // A line whose home is processor 1.
                                let line = mem.line_of(4096 * 8 - 8);
                                if let Some(s) = state {
                                    mem.caches.install(0, line, s, prefetched);
                                }
                                match pending {
                                    1 => mem.procs[0].waiting = Some(line),
                                    2 => mem.procs[0].prefetches.push(line),
                                    _ => {}
                                }
                                (mem, line)
                            };
                            let what = format!(
                                "{preset}: {state:?}, prefetched {prefetched}, pending {pending}, write {write}"
                            );
                            let (mut reference, line) = setup();
                            let ev = if write { ProcEvent::Store } else { ProcEvent::Load };
                            let hit = reference.proc_access(0, line, ev) == Ok(ProcAction::Hit);
                            if hit {
                                reference.performed(0, line, false);
                            }
                            let (mut fast, _) = setup();
                            assert_eq!(fast.try_hit(0, line, write), hit, "{what}");
                            assert_eq!(fast.stats.hits, reference.stats.hits, "{what}");
                            assert_eq!(fast.stats.prefetches_useful, reference.stats.prefetches_useful, "{what}");
                            assert_eq!(fast.procs[0].waiting, reference.procs[0].waiting, "{what}");
                            assert_eq!(fast.procs[0].outrun, reference.procs[0].outrun, "{what}");
                            assert!(fast.caches.same_contents(&reference.caches), "{what}: caches differ");
                        }
                    }
                }
            }
        }
    }

    /// `is_private_of` (per-processor line ranges) says what `private_owner` (the home of each
    /// line) says, for every line, with arrays of uneven sizes, processors without arrays
    /// and the lines around every boundary, on 16- and 64-byte lines.
    #[test]
    fn a_processors_private_range_is_exactly_the_lines_it_owns() {
        for (preset, procs) in [("alewife", 5), ("t3e", 4)] {
            let cfg = MachineConfig::preset(preset, &[], Some(procs)).expect("preset");
            let mut mem = Memory::new(&cfg, false);
            mem.alloc(0, 100, commlab_api::Placement::Block, procs).expect("shared words");
            let sizes: Vec<Vec<usize>> =
                (0..procs).map(|p| [vec![1, 17], vec![], vec![64], vec![3, 0]][p % 4].clone()).collect();
            mem.alloc_private(&sizes);
            let words = mem.data.len() as u64;
            for addr in (0..words + 16).map(|w| w * 8) {
                for p in 0..procs {
                    assert_eq!(
                        mem.is_private_of(p, addr),
                        mem.private_owner(addr) == Some(p),
                        "{preset}: address {addr:#x}, processor {p}"
                    );
                }
            }
        }
    }
}
