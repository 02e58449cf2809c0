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

pub(crate) mod cache;
pub(crate) mod check;
pub mod protocol;

use crate::engine::queue::Priority;
use crate::engine::{Event, MainState, Wait, World};
use crate::machine::MachineConfig;
use crate::msg::{MessageRecord, Target};
use cache::{Cache, Line};
use commlab_api::{Placement, TrafficClass};
use protocol::{
    cache_transition, dir_transition, CacheAction, CacheEvent, CacheState, DirAction, DirEvent, DirGuard, DirState,
};
use std::collections::{BTreeMap, VecDeque};

/// Protocol messages between caches and homes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProtoKind {
    ReadRequest,
    WriteRequest,
    /// A write request from a cache that holds the line Shared: only ownership is needed.
    UpgradeRequest,
    Invalidate,
    InvalidationAck,
    ForwardRead,
    ForwardWrite,
    OwnerData,
    DataShared,
    DataExclusive,
    /// Ownership granted to a requester that already holds the data (an upgrade).
    PermissionExclusive,
    Writeback,
}

impl ProtoKind {
    /// Whether the message carries a cache line of data.
    pub fn carries_line(self) -> bool {
        matches!(self, ProtoKind::OwnerData | ProtoKind::DataShared | ProtoKind::DataExclusive | ProtoKind::Writeback)
    }

    /// Traffic class of a message without data (with data: header + data).
    pub fn class(self) -> TrafficClass {
        match self {
            ProtoKind::ReadRequest
            | ProtoKind::WriteRequest
            | ProtoKind::UpgradeRequest
            | ProtoKind::ForwardRead
            | ProtoKind::ForwardWrite => TrafficClass::Requests,
            ProtoKind::Invalidate | ProtoKind::InvalidationAck => TrafficClass::Invalidates,
            _ => TrafficClass::Headers,
        }
    }
}

#[derive(Clone, Debug)]
struct DirEntry {
    state: DirState,
    owner: u32,
    /// Sharers in the order they were added (deterministic; may hold stale entries after a
    /// silent replacement).
    sharers: Vec<u32>,
}

/// A transaction in progress on a busy line.
struct Txn {
    req: Req,
    acks_left: u32,
    /// Requests that arrived while the line was busy.
    queue: VecDeque<Req>,
}

/// A request at the home.
#[derive(Clone, Copy, Debug)]
struct Req {
    requester: u32,
    write: bool,
    /// The requester held the line Shared when it asked (it needs ownership, not data).
    upgrade: bool,
}

/// One shared allocation, for checking that every processor allocates the same regions.
struct Region {
    base: u64,
    words: usize,
    placement: Placement,
}

/// Per-processor memory-side state.
#[derive(Default, Clone)]
pub(crate) struct ProcMem {
    /// Line of this processor's outstanding demand miss.
    pub waiting: Option<Line>,
    /// Lines with a prefetch in flight.
    pub prefetches: Vec<Line>,
    /// Allocations this processor has made (its index into the region list).
    pub allocs: usize,
    /// A line filled for a demand miss, held until the processor has performed its access
    /// (otherwise a forward arriving before the processor resumes could take it away, again
    /// and again: a livelock). Invalidations and forwards for it wait in `deferred`.
    pub pinned: Option<Line>,
    pub deferred: Vec<(CacheEvent, usize)>,
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
    pub prefetches: u64,
}

/// Memory-system costs in picoseconds, converted once (the miss path is hot).
#[derive(Clone, Copy, Debug)]
struct Timing {
    local_miss: u64,
    miss_issue: u64,
    fill: u64,
    dir: u64,
    dir_occupancy: u64,
    home_cache: u64,
    owner: u64,
    forward_reply: u64,
    inv_send: u64,
    ack: u64,
    sw_read: u64,
    sw_write: u64,
    hw_pointers: usize,
}

impl Timing {
    fn new(cfg: &MachineConfig) -> Timing {
        let m = &cfg.mem;
        let ps = |c: u64| cfg.cycles_to_ps(c as f64);
        Timing {
            local_miss: ps(m.local_miss_cycles.saturating_sub(m.fill_cycles)),
            miss_issue: ps(m.miss_issue_cycles + m.remote_miss_delay_cycles),
            fill: ps(m.fill_cycles),
            dir: ps(m.dir_cycles),
            dir_occupancy: ps(m.dir_occupancy_cycles),
            home_cache: ps(m.home_cache_cycles),
            owner: ps(m.owner_cycles),
            forward_reply: ps(m.forward_reply_cycles),
            inv_send: ps(m.inv_send_cycles),
            ack: ps(m.ack_cycles),
            sw_read: ps(m.sw_read_cycles),
            sw_write: ps(m.sw_write_cycles),
            hw_pointers: m.hw_pointers as usize,
        }
    }
}

/// Software DSM (Blizzard) costs in picoseconds: protocol handlers exchange active messages,
/// copy blocks and change access tags.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SwTiming {
    pub on_compute: bool,
    pub load_check: u64,
    pub store_check: u64,
    miss_trap: u64,
    upgrade_fault: u64,
    resume: u64,
    pub handler: u64,
    copy_block: u64,
    /// Making a block accessible: base only (an upgrade of a readable block), and with every
    /// granule's tag (a block that arrives with its data).
    tag_valid_base: u64,
    tag_valid: u64,
    tag_invalidate: u64,
    send_small: u64,
    send_data: u64,
    pub entry: u64,
    pub exit: u64,
}

impl SwTiming {
    fn new(cfg: &MachineConfig) -> Option<SwTiming> {
        let d = cfg.spec.dsm.as_ref().filter(|_| cfg.mem.model == "software")?;
        let ps = |c: u64| cfg.cycles_to_ps(c as f64);
        let granules = cfg.mem.line_bytes / d.tag_granule_bytes;
        let m = &cfg.msg;
        Some(SwTiming {
            on_compute: d.handlers == "compute",
            load_check: ps(d.load_check_cycles),
            store_check: ps(d.store_check_cycles),
            miss_trap: ps(d.miss_trap_cycles),
            upgrade_fault: ps(d.upgrade_fault_cycles),
            resume: ps(d.resume_cycles),
            handler: ps(d.handler_cycles),
            copy_block: cfg.cycles_to_ps(cfg.mem.line_bytes as f64 / d.copy_bytes_per_cycle),
            tag_valid_base: ps(d.tag_valid_cycles),
            tag_valid: ps(d.tag_valid_cycles + granules * d.tag_valid_per_granule_cycles),
            tag_invalidate: ps(d.tag_invalidate_cycles + granules * d.tag_invalidate_per_granule_cycles),
            // A protocol message carries two words of arguments (line, requester); data goes by
            // DMA from one region (the block).
            send_small: ps(crate::msg::send_cost_cycles(cfg, 2, None)),
            send_data: ps(crate::msg::send_cost_cycles(cfg, 2, Some(1))),
            entry: ps(m.interrupt_entry),
            exit: ps(m.interrupt_exit),
        })
    }
}

pub(crate) struct Memory {
    t: Timing,
    /// Software DSM costs (None: coherence in hardware).
    pub sw: Option<SwTiming>,
    /// While a software protocol handler runs: its clock (handler start + entry + body, plus
    /// what its actions have cost so far); protocol actions are timed from it.
    handler_clock: Option<u64>,
    /// The latest time a software handler's actions reached (its end).
    pub handler_end: u64,
    /// Per node: its dedicated protocol processor is busy until this time.
    pp_busy: Vec<u64>,
    /// Whether the fill being installed carried the block (not just permission).
    fill_has_data: bool,
    /// Per node: when its last message to itself arrives (they arrive in order).
    local_fifo: Vec<u64>,
    pub data: Vec<u64>,
    line_words: u64,
    home: Vec<u32>,
    dir: Vec<DirEntry>,
    txns: BTreeMap<Line, Txn>,
    pub caches: Vec<Cache>,
    pub procs: Vec<ProcMem>,
    /// Per node: the directory controller is busy until this time.
    ctrl_busy: Vec<u64>,
    regions: Vec<Region>,
    pub stats: MemStats,
    /// Lock word holders, for deadlock reports.
    pub lock_holders: BTreeMap<u64, usize>,
    /// Invariant checker (tests switch it on).
    pub checker: Option<check::Checker>,
}

impl Memory {
    pub fn new(cfg: &MachineConfig, checked: bool) -> Memory {
        let n = cfg.nprocs();
        Memory {
            t: Timing::new(cfg),
            sw: SwTiming::new(cfg),
            handler_clock: None,
            handler_end: 0,
            pp_busy: vec![0; n],
            fill_has_data: true,
            local_fifo: vec![0; n],
            data: Vec::new(),
            line_words: cfg.mem.line_bytes / 8,
            home: Vec::new(),
            dir: Vec::new(),
            txns: BTreeMap::new(),
            caches: (0..n).map(|_| Cache::new(cfg.cache_lines, cfg.mem.associativity as usize)).collect(),
            procs: vec![ProcMem::default(); n],
            ctrl_busy: vec![0; n],
            regions: Vec::new(),
            stats: MemStats::default(),
            lock_holders: BTreeMap::new(),
            checker: checked.then(|| check::Checker::new(n)),
        }
    }

    /// The line holding byte address `addr`.
    #[inline]
    pub fn line_of(&self, addr: u64) -> Line {
        addr / 8 / self.line_words
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
            self.dir.push(DirEntry { state: DirState::Uncached, owner: 0, sharers: Vec::new() });
        }
        self.data.resize((first_line + homes.len()) * lw, 0);
        (first_line * lw * 8) as u64
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
            self.dir.push(DirEntry { state: DirState::Uncached, owner: 0, sharers: Vec::new() });
        }
        self.data.resize((first_line + lines) * lw, 0);
        let base = (first_line * lw * 8) as u64;
        self.regions.push(Region { base, words, placement });
        Ok(base)
    }
}

impl<S> World<S> {
    /// Send a protocol message from node `from` to node `to`, leaving at `at`.
    fn send_proto(&mut self, from: usize, to: usize, kind: ProtoKind, line: Line, requester: usize, at: u64) {
        // A software handler sends one message after another: later actions start after it.
        if let Some(clock) = &mut self.mem.handler_clock {
            *clock = (*clock).max(at);
            self.mem.handler_end = self.mem.handler_end.max(at);
        }
        if from == to && self.mem.handler_clock.is_some() {
            // Inside a software protocol handler, a step on the node itself (invalidating its
            // own copy, taking back its own dirty line) is more of that handler's work.
            let clock = self.mem.handler_clock;
            self.mem_handle(to, from, kind, line, requester);
            // The handler goes on after the local step (its clock may have moved on).
            self.mem.handler_clock = clock.map(|c| c.max(self.mem.handler_end));
            return;
        }
        if from == to {
            // Messages a node sends itself arrive in the order sent, as the NI output queue
            // keeps them for the network (a data reply must not be overtaken by a later
            // invalidation of the same line).
            let at = at.max(self.mem.local_fifo[from]);
            self.mem.local_fifo[from] = at;
            let msg = self.alloc_msg(MessageRecord {
                src: from as u32,
                target: Target::Protocol { kind, line, requester: requester as u32 },
                args: Vec::new(),
                payload: Vec::new(),
            });
            self.push(at, Priority::Network, Event::Proto { msg, dst: to as u32 });
        } else {
            self.launch_protocol(from, to, kind, line, requester, at);
        }
    }

    /// A processor starts a miss (demand or prefetch) on `line`.
    pub(crate) fn mem_issue(&mut self, p: usize, line: Line, write: bool) {
        let home = self.mem.home_of(line);
        self.mem.stats.misses += 1;
        let upgrade = write && self.mem.caches[p].state(line) == CacheState::Shared;
        let kind = match (write, upgrade) {
            (false, _) => ProtoKind::ReadRequest,
            (true, false) => ProtoKind::WriteRequest,
            (true, true) => ProtoKind::UpgradeRequest,
        };
        // Software DSM: the failed check traps to a handler (a write to a readable block may
        // fault differently), which then sends the request as an active message.
        let trap = self.mem.sw.map_or(0, |sw| sw.miss_trap + if upgrade { sw.upgrade_fault } else { 0 });
        if home == p {
            self.mem.stats.local_misses += 1;
            self.send_proto(p, p, kind, line, p, self.now + trap);
        } else {
            let send = self.mem.sw.map_or(0, |sw| sw.send_small);
            let at = self.now + self.mem.t.miss_issue + trap + send;
            self.send_proto(p, home, kind, line, p, at);
        }
    }

    /// A protocol message arrives at node `at_node`.
    pub(crate) fn mem_receive(&mut self, at_node: usize, msg: u32) {
        let rec = self.take_msg(msg);
        let Target::Protocol { kind, line, requester } = rec.target else { unreachable!("not a protocol message") };
        match self.mem.sw {
            // Software DSM with protocol processors: handlers queue for the node's processor.
            Some(sw) if !sw.on_compute => {
                let start = self.now.max(self.mem.pp_busy[at_node]);
                self.run_software_handler(
                    at_node,
                    rec.src as usize,
                    kind,
                    line,
                    requester as usize,
                    start + sw.handler,
                );
                self.mem.pp_busy[at_node] = self.mem.handler_end;
            }
            // Local protocol steps of software DSM (the requester is its own home).
            Some(sw) => self.run_software_handler(
                at_node,
                rec.src as usize,
                kind,
                line,
                requester as usize,
                self.now + sw.handler,
            ),
            None => self.mem_handle(at_node, rec.src as usize, kind, line, requester as usize),
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
        self.mem.handler_clock = Some(clock);
        self.mem.handler_end = clock;
        self.mem_handle(at, from, kind, line, requester);
        self.mem.handler_clock = None;
    }

    /// The time protocol actions start from: now, or the running software handler's clock.
    #[inline]
    fn action_time(&self) -> u64 {
        self.mem.handler_clock.unwrap_or(self.now).max(self.now)
    }

    /// Note that a software handler's actions reach `t`.
    #[inline]
    fn handler_reaches(&mut self, t: u64) {
        if self.mem.handler_clock.is_some() {
            self.mem.handler_end = self.mem.handler_end.max(t);
        }
    }

    /// Perform one protocol message at node `at_node`.
    pub(crate) fn mem_handle(&mut self, at_node: usize, from: usize, kind: ProtoKind, line: Line, requester: usize) {
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
            ProtoKind::DataShared | ProtoKind::DataExclusive | ProtoKind::PermissionExclusive => {
                self.mem.fill_has_data = kind != ProtoKind::PermissionExclusive;
                if !self.mem.fill_has_data && self.mem.caches[at_node].state(line) != CacheState::Shared {
                    return self.fail_internal(format!(
                        "protocol: ownership without data for line {line} reached cache {at_node}, which does not hold it"
                    ));
                }
                let ev = if kind == ProtoKind::DataShared { CacheEvent::FillShared } else { CacheEvent::FillExclusive };
                self.cache_event(at_node, line, ev, from)
            }
        }
        self.check_line(line);
    }

    /// A request reaches the home: serve it, or queue it behind the line's transaction.
    fn home_request(&mut self, home: usize, line: Line, requester: usize, write: bool, upgrade: bool) {
        let req = Req { requester: requester as u32, write, upgrade };
        if let Some(t) = self.mem.txns.get_mut(&line) {
            t.queue.push_back(req);
            return;
        }
        self.mem.txns.insert(line, Txn { req, acks_left: 0, queue: VecDeque::new() });
        let ev = if write { DirEvent::WriteRequest } else { DirEvent::ReadRequest };
        self.home_event(home, line, ev, requester);
    }

    /// Run one directory transition at `home` and perform its actions.
    fn home_event(&mut self, home: usize, line: Line, ev: DirEvent, from: usize) {
        let m = self.mem.t;
        let sw = self.mem.sw;
        let now = self.action_time();
        // The controller handles one message at a time.
        let start = now.max(self.mem.ctrl_busy[home]);
        self.mem.ctrl_busy[home] = start + m.dir_occupancy;
        let entry = &self.mem.dir[line as usize];
        let state = entry.state;
        let txn = self.mem.txns.get(&line);
        let (requester, write, upgrade) =
            txn.map_or((from, false, false), |t| (t.req.requester as usize, t.req.write, t.req.upgrade));
        let guard = DirGuard {
            others_share: entry.sharers.iter().any(|&s| s as usize != requester),
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
        let mut t = start + if local { m.local_miss } else { m.dir };
        if matches!(ev, DirEvent::InvalidationAck) {
            t = start + m.ack;
        }
        if matches!(ev, DirEvent::OwnerData) {
            t = start + m.forward_reply;
        }
        // Only an upgrade from a listed sharer gets ownership without the data (a sharer entry
        // may be stale: the cache dropped its clean copy silently).
        let requester_had_copy = upgrade && self.mem.dir[line as usize].sharers.contains(&(requester as u32));
        self.mem.dir[line as usize].state = next;
        for &a in actions {
            match a {
                DirAction::AddRequesterToSharers => {
                    let e = &mut self.mem.dir[line as usize];
                    if !e.sharers.contains(&(requester as u32)) {
                        e.sharers.push(requester as u32);
                    }
                    if e.sharers.len() > m.hw_pointers {
                        // LimitLESS: the pointer overflow is handled in software at the home.
                        self.mem.stats.software_traps += 1;
                        t += m.sw_read;
                        self.mem.ctrl_busy[home] = self.mem.ctrl_busy[home].max(t);
                    }
                }
                DirAction::MakeRequesterOwner => {
                    let e = &mut self.mem.dir[line as usize];
                    e.owner = requester as u32;
                    e.sharers.clear();
                }
                DirAction::ReplySharedData => {
                    if let Some(sw) = sw {
                        t += sw.copy_block + sw.send_data;
                    }
                    self.send_proto(home, requester, ProtoKind::DataShared, line, requester, t)
                }
                DirAction::ReplyExclusiveData => {
                    let kind =
                        if requester_had_copy { ProtoKind::PermissionExclusive } else { ProtoKind::DataExclusive };
                    if let Some(sw) = sw {
                        // The home's own copy becomes inaccessible; the data (if any) is copied out.
                        t += sw.tag_invalidate;
                        t += if requester_had_copy { sw.send_small } else { sw.copy_block + sw.send_data };
                    }
                    self.send_proto(home, requester, kind, line, requester, t)
                }
                DirAction::InvalidateOtherSharers => {
                    let others: Vec<u32> = self.mem.dir[line as usize]
                        .sharers
                        .iter()
                        .copied()
                        .filter(|&s| s as usize != requester)
                        .collect();
                    if others.len() > m.hw_pointers {
                        self.mem.stats.software_traps += 1;
                        t += m.sw_write;
                        self.mem.ctrl_busy[home] = self.mem.ctrl_busy[home].max(t);
                    }
                    // Invalidations go out after a full directory lookup, even for a local requester.
                    t = t.max(start + m.dir);
                    self.mem.txns.get_mut(&line).expect("write transaction").acks_left = others.len() as u32;
                    for s in others {
                        t += sw.map_or(m.inv_send, |sw| sw.send_small);
                        self.mem.stats.invalidations += 1;
                        self.send_proto(home, s as usize, ProtoKind::Invalidate, line, requester, t);
                    }
                    self.mem.ctrl_busy[home] = self.mem.ctrl_busy[home].max(t);
                }
                DirAction::CountAck => {
                    let txn = self.mem.txns.get_mut(&line).expect("acks belong to a transaction");
                    txn.acks_left -= 1;
                }
                DirAction::ForwardToOwner => {
                    let owner = self.mem.dir[line as usize].owner as usize;
                    let kind = if write { ProtoKind::ForwardWrite } else { ProtoKind::ForwardRead };
                    self.mem.stats.forwards += 1;
                    t += sw.map_or(0, |sw| sw.send_small);
                    self.send_proto(home, owner, kind, line, requester, t);
                }
                DirAction::WriteDataToMemory => {} // functional data is already in memory
                DirAction::KeepOwnerAsSharer => {
                    let e = &mut self.mem.dir[line as usize];
                    let owner = e.owner;
                    e.sharers.clear();
                    e.sharers.push(owner);
                }
                DirAction::ClearOwner => {
                    let e = &mut self.mem.dir[line as usize];
                    e.sharers.clear();
                }
                DirAction::QueueUntilIdle => {
                    // Only requests are queued, in `home_request`; a busy line never sees one here.
                    return self.fail_internal(format!("protocol: request reached busy line {line} unqueued"));
                }
                DirAction::ServeNextQueued => {
                    let txn = self.mem.txns.remove(&line).expect("a transaction ends");
                    let mut queue = txn.queue;
                    if let Some(req) = queue.pop_front() {
                        self.mem.txns.insert(line, Txn { req, acks_left: 0, queue });
                        let ev = if req.write { DirEvent::WriteRequest } else { DirEvent::ReadRequest };
                        self.home_event(home, line, ev, req.requester as usize);
                    }
                }
                DirAction::IgnoreCrossedWriteback => {}
            }
        }
        self.handler_reaches(t);
        // Transactions that complete in one step leave no busy state behind.
        if matches!(next, DirState::Uncached | DirState::Shared | DirState::Exclusive)
            && matches!(ev, DirEvent::ReadRequest | DirEvent::WriteRequest)
        {
            let txn = self.mem.txns.remove(&line).expect("request transaction");
            let mut queue = txn.queue;
            if let Some(req) = queue.pop_front() {
                self.mem.txns.insert(line, Txn { req, acks_left: 0, queue });
                let ev = if req.write { DirEvent::WriteRequest } else { DirEvent::ReadRequest };
                self.home_event(home, line, ev, req.requester as usize);
            }
        }
    }

    /// Run one cache transition at node `p` and perform its actions.
    fn cache_event(&mut self, p: usize, line: Line, ev: CacheEvent, from: usize) {
        if self.mem.procs[p].pinned == Some(line)
            && matches!(ev, CacheEvent::Invalidate | CacheEvent::ForwardRead | CacheEvent::ForwardWrite)
        {
            self.mem.procs[p].deferred.push((ev, from));
            return;
        }
        let state = self.mem.caches[p].state(line);
        let (next, actions) = match cache_transition(state, ev) {
            Ok(t) => t,
            Err(why) => {
                return self.fail_internal(format!("protocol: cache {p}, line {line}: {state:?} + {ev:?}: {}", why.0))
            }
        };
        let home = self.mem.home_of(line);
        let mut respond = self.action_time() + if p == home { self.mem.t.home_cache } else { self.mem.t.owner };
        if let Some(sw) = self.mem.sw {
            respond += match ev {
                CacheEvent::Invalidate => sw.tag_invalidate + sw.send_small,
                CacheEvent::ForwardRead | CacheEvent::ForwardWrite => sw.copy_block + sw.tag_invalidate + sw.send_data,
                _ => 0,
            };
        }
        for &a in actions {
            match a {
                CacheAction::SendInvalidationAck => {
                    self.mem.caches[p].set_state(line, next);
                    self.send_proto(p, from, ProtoKind::InvalidationAck, line, p, respond);
                    self.line_lost(p, line);
                }
                CacheAction::SendOwnerDataToHome => {
                    self.mem.caches[p].set_state(line, next);
                    self.send_proto(p, from, ProtoKind::OwnerData, line, p, respond);
                    if next == CacheState::Invalid {
                        self.line_lost(p, line);
                    }
                }
                CacheAction::InstallAndResume => self.install(p, line, next, self.mem.fill_has_data),
                CacheAction::HitInCache
                | CacheAction::SendReadRequest
                | CacheAction::SendWriteRequest
                | CacheAction::DropSilently
                | CacheAction::SendWritebackToHome => {
                    return self.fail_internal(format!("protocol: {a:?} from a network event at cache {p}"));
                }
            }
        }
        if matches!(ev, CacheEvent::Invalidate | CacheEvent::ForwardRead | CacheEvent::ForwardWrite) {
            self.handler_reaches(respond);
        }
    }

    /// Data (or ownership) for `line` arrived at `p`: make room, install, resume the processor.
    fn install(&mut self, p: usize, line: Line, state: CacheState, with_data: bool) {
        // Lines with a request in flight (an upgrade keeps its Shared copy) and the line held
        // for a demand access may not be evicted.
        let pm = &self.mem.procs[p];
        let keep = |l: Line| pm.pinned == Some(l) || pm.waiting == Some(l) || pm.prefetches.contains(&l);
        let placed = match self.mem.caches[p].victim(line, keep) {
            Ok(Some((victim, vstate))) => {
                self.evict(p, victim, vstate);
                true
            }
            Ok(None) => true,
            // Only a prefetch can conflict with the line held for a demand access: the
            // prefetched line is given up as soon as it arrives (written back if owned).
            Err(()) => false,
        };
        if placed {
            self.mem.caches[p].install(line, state);
            if let Some(c) = &mut self.mem.checker {
                c.fill(p, line, &self.mem.data, self.mem.line_words);
            }
        } else if state == CacheState::Modified {
            self.write_back(p, line);
        }
        let pm = &mut self.mem.procs[p];
        pm.prefetches.retain(|&l| l != line);
        if pm.waiting == Some(line) {
            // A demand fill that could not be placed is simply missed again.
            pm.waiting = None;
            if placed {
                pm.pinned = Some(line);
            }
        }
        let mut resume = self.action_time() + self.mem.t.fill;
        if let Some(sw) = self.mem.sw {
            // Copy the block in (unless only permission came), open its access tag, return from
            // the miss handler.
            resume += if with_data { sw.copy_block + sw.tag_valid } else { sw.tag_valid_base } + sw.resume;
            self.handler_reaches(resume);
        }
        // Anyone blocked on this line (a demand miss, a full prefetch buffer) re-checks.
        if let MainState::Blocked { wait: Wait::Miss(_) | Wait::PrefetchBuffer, .. } = self.procs[p].main {
            if !self.procs[p].handler_active {
                self.wake_at(p, resume);
            }
        }
    }

    /// `p` performed its access on its pinned line: let deferred requests for it through.
    /// Returns the processor time their software handlers take (0 in hardware, or when a
    /// protocol processor runs them): the caller spends it right after the access.
    pub(crate) fn unpin(&mut self, p: usize) -> u64 {
        let Some(line) = self.mem.procs[p].pinned.take() else { return 0 };
        let mut stolen = 0;
        for (ev, from) in std::mem::take(&mut self.mem.procs[p].deferred) {
            match self.mem.sw {
                None => self.cache_event(p, line, ev, from),
                Some(sw) => {
                    let start = if sw.on_compute { self.now + stolen } else { self.now.max(self.mem.pp_busy[p]) };
                    let body = start + if sw.on_compute { sw.entry } else { 0 } + sw.handler;
                    self.mem.handler_clock = Some(body);
                    self.mem.handler_end = body;
                    self.cache_event(p, line, ev, from);
                    self.mem.handler_clock = None;
                    if sw.on_compute {
                        stolen = self.mem.handler_end + sw.exit - self.now;
                    } else {
                        self.mem.pp_busy[p] = self.mem.handler_end;
                    }
                }
            }
            self.check_line(line);
        }
        stolen
    }

    /// Replace `victim` at `p` (its state `vstate`).
    pub(crate) fn evict(&mut self, p: usize, victim: Line, vstate: CacheState) {
        let Ok((next, actions)) = cache_transition(vstate, CacheEvent::Evict) else {
            return self.fail_internal(format!("protocol: evicting line {victim} in {vstate:?}"));
        };
        self.mem.caches[p].set_state(victim, next);
        self.line_lost(p, victim);
        if actions.contains(&CacheAction::SendWritebackToHome) {
            self.write_back(p, victim);
        }
    }

    /// `p` gives up its dirty `line`. The directory learns of it at once (so no forward is
    /// sent to a cache that no longer has the line); the writeback's bytes still cross the
    /// network.
    fn write_back(&mut self, p: usize, line: Line) {
        let home = self.mem.home_of(line);
        // The directory update is the home's, not part of this node's handler.
        let clock = self.mem.handler_clock.take();
        self.home_event(home, line, DirEvent::OwnerWriteback, p);
        self.mem.handler_clock = clock;
        if home != p {
            // In software DSM the evicting handler copies the block out and sends it.
            let mut at = self.action_time();
            if let Some(sw) = self.mem.sw {
                at += sw.copy_block + sw.send_data;
                self.handler_reaches(at);
                if let Some(c) = &mut self.mem.handler_clock {
                    *c = (*c).max(at);
                }
            }
            self.launch_protocol(p, home, ProtoKind::Writeback, line, p, at);
        }
    }

    /// `p` lost `line`: wake it if it spins on that line.
    fn line_lost(&mut self, p: usize, line: Line) {
        if let Some(c) = &mut self.mem.checker {
            c.drop_copy(p, line);
        }
        if let MainState::Blocked { wait: Wait::Spin(_, l), .. } = self.procs[p].main {
            if l == line && !self.procs[p].handler_active {
                self.wake_at(p, self.now);
            }
        }
    }

    fn fail_internal(&mut self, msg: String) {
        self.fail(crate::engine::SimError::Internal(msg));
    }

    /// Run the invariant checker (when on) over one line.
    pub(crate) fn check_line(&mut self, line: Line) {
        if let Some(c) = self.mem.checker.take() {
            if let Err(e) = c.check_line(&self.mem, line) {
                self.fail_internal(format!("coherence invariant at cycle {:.1}: {e}", self.cfg.ps_to_cycles(self.now)));
            }
            self.mem.checker = Some(c);
        }
    }
}
