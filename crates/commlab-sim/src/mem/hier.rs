//! The memory hierarchy true to bandwidth (`[hierarchy]`, opt-in): inner cache levels inside
//! the coherent cache, a banked DRAM behind it with a bus, stream read-ahead, and a limit on
//! the misses a processor may have in flight.
//!
//! Where the coherent cache sits: it is the *outermost* cache (`memory.*`, e.g. the DEC 8400's
//! 4 MB board cache, the T3E's on-chip 96 KB second level, the T3D's only cache), the one the
//! protocol keeps coherent. Inner levels (`l1`, `l2`) are tags only and are kept subsets of it
//! lazily: an inner tag counts only while the coherent cache holds the line, so a line the
//! protocol took away misses everywhere, and a fill installs it in every level inside the one
//! that served it.
//!
//! Timing is analytic (no events): each level that serves an access has a latency (its
//! `hit_cycles`) and a port whose bandwidth spaces the fills it delivers; the DRAM has banks
//! (busy `bank_busy_cycles` per access), a latency (`memory.local_miss_cycles`) and a bus.
//! Private references are timing-only, so they do not block: a miss takes one of
//! `outstanding_misses` slots until its data arrives, and the processor stalls only when all
//! are taken (later references to a line in flight merge with its miss). With one slot the
//! processor waits for each miss: an in-order processor stalls at the first use of the data,
//! and with a single miss in flight nothing overlaps it. Shared loads and
//! stores block as they always have: a coherent-cache miss goes through the protocol, and a
//! coherent-cache hit costs the latency of the level that serves it (with a hierarchy,
//! `memory.hit_cycles` is an access the coherent cache serves). Stream buffers start on a miss
//! to the line after a recent miss. Without `[hierarchy]` nothing is serialized and every path
//! is the one-level model's (`commlab-apps/tests/copy_transfer.rs`, fingerprints). The engine
//! calls this for private references and for the hit time of shared ones (`engine/node.rs`),
//! through `Memory::hier_private` and `Memory::hier_shared`. [`Hierarchy`] is a component
//! `Memory` owns: it reaches the coherent cache, whose tags `Memory` keeps, and the hit and miss
//! counts only through [`Outer`].
//!
//! Stall on use (`loads_before_use = U`, issue 33, the in-order Alphas; `Hierarchy::private`): a
//! private read's data must have arrived once the `U - 1` reads after it have issued (the
//! loop's loads hoisted ahead of their uses; 1: every miss waited for).
//!
//! Stores (`[hierarchy.write_buffer]`, issue 33): private stores write through the innermost
//! cache without allocating in it (the 21064/21164 L1) into a merging write buffer of `entries`
//! blocks; a store to a new block closes the youngest entry, which drains (one at a time) into
//! the next level, write-allocate there (a miss is filled as a read, taking a miss slot, and the
//! line becomes dirty; a dirty private line evicted from the coherent cache is written back to
//! the DRAM), or, with no inner level (the T3D), straight to the DRAM by the write path, never
//! through the read-ahead.
//!
//! `hierarchy.page_bytes`: physically indexed caches larger than a page take a page's colour
//! from its frame, given in first-touch order (bin hopping, `Caches::paged` in `cache.rs`), so
//! two arrays a cache size apart touched together do not collide.
//!
//! `hierarchy.dram.shared` (the DEC 8400): one DRAM for all processors, its banks and bus kept as
//! calendars of busy intervals (`Calendar`), so a processor behind the others in simulated time
//! takes a gap before their reservations (first come, first served in simulated time);
//! copy-transfer's `loaders=N` runs the local kernel on N processors at once.
//! `hierarchy.dram.bus_coherent` (with `shared`; the DEC 8400's one TLSB data bus): every
//! protocol message carrying a line (a dirty line to a requester, a write-back) also reserves the
//! shared bus calendar for a line's transfer time before it leaves (`Memory::coherent_bus`,
//! called from `send_proto` and the write-back), so it waits while another processor's DRAM or
//! coherent transfer holds the bus; an uncontended transfer is timed as before (the network
//! still carries it). Off on every other preset. The DRAM bus time of a transfer is
//! `DramConfig::bus_ps`.

use super::cache::{Cache, Line};
use super::protocol::CacheState;
use crate::machine::{HierarchyConfig, LevelConfig};
use std::collections::{HashSet, VecDeque};

/// One processor's hierarchy state.
pub(crate) struct ProcHier {
    /// Tags of the inner levels (a present line is `Shared`).
    inner: Vec<Cache>,
    /// Per level (inner levels, then the coherent cache): its port is free from this time.
    port_free: Vec<u64>,
    /// Arrival times of this processor's misses in flight (at most `outstanding_misses`).
    slots: VecDeque<u64>,
    /// Lines whose fill is in flight: (level, line at that level, arrival).
    arriving: Vec<(usize, Line, u64)>,
    /// When the data of the last `loads_before_use` private reads is there (stall on use).
    uses: VecDeque<u64>,
    streams: Vec<Stream>,
    /// Recent coherent-cache lines that missed to DRAM (stream detection).
    recent: VecDeque<Line>,
    stamp: u64,
    /// The write buffer's youngest entry (a block), still open to merging stores.
    wb_open: Option<u64>,
    /// When each closed entry still draining is written (in order: they drain one at a time).
    wb_done: VecDeque<u64>,
    /// The write buffer's path to the next level is free from this time.
    wb_free: u64,
    /// Coherent-cache lines of private data that stores made dirty: evicted, they are written
    /// back to the DRAM.
    dirty: HashSet<Line>,
}

/// One stream buffer: the lines it fetched ahead, and the next one it will fetch.
struct Stream {
    lines: VecDeque<(Line, u64)>,
    next: Line,
    used: u64,
}

/// One node's DRAM: banks and the memory bus.
pub(crate) struct NodeDram {
    bank_free: Vec<u64>,
    bus_free: u64,
    /// A DRAM shared by every processor (`hierarchy.dram.shared`): busy intervals of each bank
    /// and of the bus, so a request from a processor behind the others in simulated time
    /// (processors run ahead of each other) takes a gap before their reservations instead of
    /// queueing after them.
    bank_cal: Vec<Calendar>,
    bus_cal: Calendar,
}

/// Busy intervals of a resource, sorted and disjoint; the oldest are forgotten beyond
/// `CALENDAR_LEN` (no request comes that far behind).
#[derive(Default)]
struct Calendar {
    busy: VecDeque<(u64, u64)>,
}

const CALENDAR_LEN: usize = 256;

impl Calendar {
    /// Reserve `dur` at the earliest time from `t` that is free; returns its start.
    fn reserve(&mut self, t: u64, dur: u64) -> u64 {
        let mut s = t;
        let mut at = self.busy.len();
        for (i, &(a, b)) in self.busy.iter().enumerate() {
            if b <= s {
                continue;
            }
            if a >= s + dur {
                at = i;
                break;
            }
            s = b;
        }
        self.busy.insert(at, (s, s + dur));
        if self.busy.len() > CALENDAR_LEN {
            self.busy.pop_front();
        }
        s
    }
}

impl ProcHier {
    pub fn new(h: &HierarchyConfig) -> ProcHier {
        ProcHier {
            inner: h.levels[..h.inner]
                .iter()
                .map(|l| Cache::new(l.lines, l.ways, h.page_bytes.map(|pb| pb / l.line_bytes)))
                .collect(),
            port_free: vec![0; h.inner + 1],
            slots: VecDeque::new(),
            arriving: Vec::new(),
            uses: VecDeque::new(),
            streams: Vec::new(),
            recent: VecDeque::new(),
            stamp: 0,
            wb_open: None,
            wb_done: VecDeque::new(),
            wb_free: 0,
            dirty: HashSet::new(),
        }
    }
}

impl NodeDram {
    pub fn new(h: &HierarchyConfig) -> NodeDram {
        let banks = h.dram.banks as usize;
        let bank_cal = if h.dram.shared { (0..banks).map(|_| Calendar::default()).collect() } else { Vec::new() };
        NodeDram { bank_free: vec![0; banks], bus_free: 0, bank_cal, bus_cal: Calendar::default() }
    }
}

/// Picoseconds to move `bytes` at `ps_per_byte`.
fn xfer_ps(level: &LevelConfig, bytes: u64) -> u64 {
    crate::machine::round_to_u64(bytes as f64 * level.ps_per_byte)
}

/// What the hierarchy needs of the memory it serves: the coherent cache it sits under (its
/// outermost level, whose tags `Memory` keeps) and the memory's hit and miss counts.
pub(crate) trait Outer {
    /// Whether `p`'s coherent cache holds `line`.
    fn holds(&self, p: usize, line: Line) -> bool;
    /// A reference to `line` in `p`'s coherent cache (its LRU stamp).
    fn touch(&mut self, p: usize, line: Line);
    /// A reference that found its line in the coherent cache.
    fn count_hit(&mut self);
    /// A private reference of `p` that missed the coherent cache (served by `p`'s DRAM).
    fn count_private_miss(&mut self, p: usize);
}

/// The memory hierarchy of every processor and node (`[hierarchy]`; empty without it): inner
/// caches, miss slots, stream buffers, the write buffer and the DRAMs. A private line that
/// misses to memory is put in the coherent cache by `Memory` after the call that timed it
/// (`take_install`): nothing later in that call reads the coherent cache or reserves the
/// DRAM, so the order of every reservation is the same as installing it on the spot.
pub(crate) struct Hierarchy {
    cfg: Option<HierarchyConfig>,
    line_bytes: u64,
    line_shift: u32,
    /// Per processor.
    per_proc: Vec<ProcHier>,
    /// Per node (one with `hierarchy.dram.shared`, used by all).
    drams: Vec<NodeDram>,
    /// A private line to put in a coherent cache: (processor, line, when its fill was asked).
    install: Option<(usize, Line, u64)>,
}

impl Hierarchy {
    pub(crate) fn new(cfg: Option<HierarchyConfig>, line_bytes: u64, nprocs: usize) -> Hierarchy {
        Hierarchy {
            cfg,
            line_bytes,
            line_shift: line_bytes.trailing_zeros(),
            per_proc: cfg.iter().flat_map(|h| (0..nprocs).map(|_| ProcHier::new(h))).collect(),
            drams: cfg.iter().flat_map(|h| (0..nprocs).map(|_| NodeDram::new(h))).collect(),
            install: None,
        }
    }

    /// The private line the last call left to put in a coherent cache, if any.
    pub(crate) fn take_install(&mut self) -> Option<(usize, Line, u64)> {
        self.install.take()
    }

    fn line_of(&self, addr: u64) -> Line {
        addr >> self.line_shift
    }

    /// Whether `victim`, leaving `p`'s coherent cache, was made dirty by a private store; if
    /// so it is written back to `p`'s DRAM at `t` (and is clean from then on).
    pub(crate) fn write_back_private(&mut self, p: usize, victim: Line, t: u64) {
        let h = self.hier_cfg();
        if self.per_proc[p].dirty.remove(&victim) {
            let bytes = self.line_bytes;
            self.dram_write(p, victim * bytes, bytes, t, &h);
        }
    }
    fn hier_cfg(&self) -> HierarchyConfig {
        self.cfg.expect("called only on a machine with a hierarchy")
    }

    /// The level that serves `addr` for `p` (0 = innermost; `inner` = the coherent cache;
    /// `inner + 1` = memory), given whether the coherent cache holds its line.
    fn serving_level(&self, p: usize, addr: u64, coherent: bool, h: &HierarchyConfig) -> usize {
        if !coherent {
            return h.inner + 1;
        }
        let hp = &self.per_proc[p];
        (0..h.inner).find(|&i| hp.inner[i].state(addr / h.levels[i].line_bytes).valid()).unwrap_or(h.inner)
    }

    /// Install `addr`'s lines in the inner levels inside `level` (tags only).
    fn fill_inner(&mut self, p: usize, addr: u64, level: usize, h: &HierarchyConfig) {
        for i in 0..level.min(h.inner) {
            let line = addr / h.levels[i].line_bytes;
            let c = &mut self.per_proc[p].inner[i];
            if !c.state(line).valid() {
                c.install(line, CacheState::Shared, false);
            } else {
                c.touch(line);
            }
        }
    }

    /// Arrival of a fill in flight of `addr`'s line at `level`, if any.
    fn arriving(&self, p: usize, level: usize, addr: u64, h: &HierarchyConfig) -> Option<u64> {
        let line = addr / h.levels[level].line_bytes;
        self.per_proc[p].arriving.iter().find(|&&(l, ln, _)| l == level && ln == line).map(|&(_, _, t)| t)
    }

    /// When a fill served by cache `level` (1..=inner) issued at `t` arrives: its latency, after
    /// its port is free, no earlier than the line itself arrives there.
    fn cache_fill(&mut self, p: usize, addr: u64, level: usize, t: u64, h: &HierarchyConfig) -> u64 {
        let l = h.levels[level];
        let xfer = xfer_ps(&l, h.levels[level - 1].line_bytes);
        let start = t.max(self.per_proc[p].port_free[level]);
        self.per_proc[p].port_free[level] = start + xfer;
        let ready = start + l.hit_ps.max(xfer);
        ready.max(self.arriving(p, level, addr, h).unwrap_or(0))
    }

    /// When a coherent-cache line of `p`'s own memory, asked for at `t`, arrives: from a
    /// stream buffer, or from the DRAM (which may start a stream).
    fn memory_fill(&mut self, p: usize, line: Line, t: u64, h: &HierarchyConfig) -> u64 {
        let Some(s) = h.stream else { return self.dram(p, line, t, h) };
        let hp = &mut self.per_proc[p];
        hp.stamp += 1;
        let stamp = hp.stamp;
        if let Some(i) = hp.streams.iter().position(|st| st.lines.iter().any(|&(l, _)| l == line)) {
            let st = &mut hp.streams[i];
            st.used = stamp;
            let mut at = t;
            while let Some((l, r)) = st.lines.pop_front() {
                if l == line {
                    at = r;
                    break;
                }
            }
            self.stream_top_up(p, i, t, s.depth, h);
            return at.max(t + s.hit_ps);
        }
        let ready = self.dram(p, line, t, h);
        let hp = &mut self.per_proc[p];
        if line > 0 && hp.recent.contains(&(line - 1)) {
            let fresh = Stream { lines: VecDeque::new(), next: line + 1, used: stamp };
            let i = if hp.streams.len() < s.buffers {
                hp.streams.push(fresh);
                hp.streams.len() - 1
            } else {
                let i = (0..hp.streams.len()).min_by_key(|&i| hp.streams[i].used).expect("a stream");
                hp.streams[i] = fresh;
                i
            };
            self.stream_top_up(p, i, t, s.depth, h);
        }
        let hp = &mut self.per_proc[p];
        hp.recent.push_back(line);
        if hp.recent.len() > 2 * s.buffers {
            hp.recent.pop_front();
        }
        ready
    }

    /// Fetch ahead until stream `i` holds `depth` lines.
    fn stream_top_up(&mut self, p: usize, i: usize, t: u64, depth: usize, h: &HierarchyConfig) {
        while self.per_proc[p].streams[i].lines.len() < depth {
            let next = self.per_proc[p].streams[i].next;
            let r = self.dram(p, next, t, h);
            let st = &mut self.per_proc[p].streams[i];
            st.lines.push_back((next, r));
            st.next += 1;
        }
    }

    /// When coherent-cache `line` of node `p`'s DRAM (the one shared DRAM with
    /// `hierarchy.dram.shared`), asked for at `t`, arrives: its bank starts when free (and
    /// stays busy `bank_busy`), the data comes after the latency, over the bus when the bus is
    /// free.
    fn dram(&mut self, p: usize, line: Line, t: u64, h: &HierarchyConfig) -> u64 {
        let d = h.dram;
        let bytes = self.line_bytes;
        let xfer = d.bus_ps(bytes);
        let start = self.bank_start(p, line * bytes, t, h);
        if d.shared {
            // One memory on the system bus: the bank and then the bus, each granted at its
            // first free interval (first come, first served in simulated time).
            let want = (start + d.latency_ps).saturating_sub(xfer);
            return self.drams[0].bus_cal.reserve(want, xfer) + xfer;
        }
        let node = &mut self.drams[p];
        let bus_start = (start + d.latency_ps).saturating_sub(xfer).max(node.bus_free);
        node.bus_free = bus_start + xfer;
        bus_start + xfer
    }

    /// When a protocol message carrying a line, ready to leave at `t`, may start: with
    /// `hierarchy.dram.bus_coherent`, the line's transfer holds the one memory bus (the first
    /// free interval from `t`, as a DRAM transfer is granted), so it waits while another
    /// processor's transfer holds it; the network then carries it as before. Otherwise `t`.
    pub(crate) fn coherent_bus(&mut self, t: u64) -> u64 {
        let Some(h) = self.cfg else { return t };
        if !(h.dram.shared && h.dram.bus_coherent) {
            return t;
        }
        let xfer = h.dram.bus_ps(self.line_bytes);
        self.drams[0].bus_cal.reserve(t, xfer)
    }

    /// An access by node `p`'s memory for a one-sided request (a get's read, a put's write) to
    /// the bank holding `addr`, offered at `t`: it starts when the bank is free and holds it
    /// `bank_busy`, as the processor's own misses do (the same banks). Returns when it started;
    /// `t` on a machine without a hierarchy.
    pub(crate) fn one_sided_bank(&mut self, p: usize, addr: u64, t: u64) -> u64 {
        let Some(h) = self.cfg else { return t };
        self.bank_start(p, addr, t, &h)
    }

    /// When the bank of node `p`'s DRAM (the one shared DRAM with `hierarchy.dram.shared`)
    /// holding `addr`, asked for at `t`, starts an access; it is then busy `bank_busy`.
    fn bank_start(&mut self, p: usize, addr: u64, t: u64, h: &HierarchyConfig) -> u64 {
        let d = h.dram;
        let bank = ((addr / d.interleave_bytes) % d.banks) as usize;
        if d.shared {
            return self.drams[0].bank_cal[bank].reserve(t, d.bank_busy_ps);
        }
        let node = &mut self.drams[p];
        let start = t.max(node.bank_free[bank]);
        node.bank_free[bank] = start + d.bank_busy_ps;
        start
    }

    /// A write of `bytes` at `addr` into node `p`'s DRAM at `t` (a write-buffer entry or a
    /// dirty line written back): its bank is busy `bank_busy`, the data crosses the bus as the
    /// bank starts (no read latency). Returns when the bus has taken it.
    fn dram_write(&mut self, p: usize, addr: u64, bytes: u64, t: u64, h: &HierarchyConfig) -> u64 {
        let xfer = h.dram.bus_ps(bytes);
        let start = self.bank_start(p, addr, t, h);
        if h.dram.shared {
            return self.drams[0].bus_cal.reserve(start, xfer) + xfer;
        }
        let node = &mut self.drams[p];
        let bus_start = start.max(node.bus_free);
        node.bus_free = bus_start + xfer;
        bus_start + xfer
    }

    /// A private store by `p` to `addr` at `t` through the write buffer: the innermost cache
    /// is write-through without write-allocate (a copy there is updated, a miss allocates
    /// nothing), and the store merges into the buffer's youngest entry if it is to the same
    /// block. Otherwise that entry closes and drains, and the store opens a new one, waiting
    /// for the oldest draining entry when all are taken. Returns (stall, issue).
    fn store(&mut self, outer: &mut impl Outer, p: usize, addr: u64, t: u64, h: &HierarchyConfig) -> (u64, u64) {
        let wb = h.write_buffer.expect("called with a write buffer");
        let issue = h.levels[0].hit_ps;
        if h.inner > 0 {
            self.per_proc[p].inner[0].touch(addr / h.levels[0].line_bytes);
        } else {
            let line = self.line_of(addr);
            outer.touch(p, line);
        }
        let block = addr / wb.block_bytes;
        if self.per_proc[p].wb_open == Some(block) {
            return (0, issue);
        }
        let mut t = t;
        let mut stall = 0;
        if let Some(old) = self.per_proc[p].wb_open.take() {
            let done = self.drain(outer, p, old * wb.block_bytes, wb.block_bytes, t, h);
            self.per_proc[p].wb_done.push_back(done);
        }
        let hp = &mut self.per_proc[p];
        hp.wb_done.retain(|&d| d > t);
        while hp.wb_done.len() >= wb.entries {
            let first = hp.wb_done.pop_front().expect("a draining entry");
            stall += first - t;
            t = first;
            hp.wb_done.retain(|&d| d > t);
        }
        hp.wb_open = Some(block);
        (stall, issue)
    }

    /// Write a closed write-buffer entry (`bytes` at `addr`), ready at `t`, after the entries
    /// before it: into the next level (write-back and write-allocate: a miss there is filled
    /// first, as a read would fill it, and the line becomes dirty), or, with no level inside
    /// the coherent cache (the T3D's 21064), straight to the DRAM by the write path (not
    /// through the read-ahead logic). Returns when it is written.
    fn drain(&mut self, outer: &mut impl Outer, p: usize, addr: u64, bytes: u64, t: u64, h: &HierarchyConfig) -> u64 {
        let start = t.max(self.per_proc[p].wb_free);
        let done = if h.inner == 0 {
            self.dram_write(p, addr, bytes, start, h)
        } else {
            let line = self.line_of(addr);
            let coherent = outer.holds(p, line);
            let s = if coherent {
                (1..h.inner)
                    .find(|&i| self.per_proc[p].inner[i].state(addr / h.levels[i].line_bytes).valid())
                    .unwrap_or(h.inner)
            } else {
                h.inner + 1
            };
            // A fill for the write takes a miss slot as a read miss does (the 21164's miss
            // address file and bus interface serve both), so it waits for one and holds it.
            let start = if s > 1 { self.take_slot(p, start, h) } else { start };
            let ready = if s == 1 {
                if h.inner == 1 {
                    outer.touch(p, line);
                } else {
                    self.per_proc[p].inner[1].touch(addr / h.levels[1].line_bytes);
                }
                start
            } else if s <= h.inner {
                if s == h.inner {
                    outer.touch(p, line);
                } else {
                    self.per_proc[p].inner[s].touch(addr / h.levels[s].line_bytes);
                }
                self.cache_fill(p, addr, s, start, h)
            } else {
                outer.count_private_miss(p);
                let r = self.memory_fill(p, line, start, h);
                self.defer_install(p, line, start);
                r
            };
            if s > 1 {
                self.per_proc[p].slots.push_back(ready);
            }
            // Allocate in the levels from the next one to the one inside the server (never the
            // innermost: it does not allocate on a write).
            for i in 1..s.min(h.inner) {
                let l = addr / h.levels[i].line_bytes;
                let c = &mut self.per_proc[p].inner[i];
                if !c.state(l).valid() {
                    c.install(l, CacheState::Shared, false);
                }
            }
            self.per_proc[p].dirty.insert(line);
            let hp = &mut self.per_proc[p];
            let w = ready.max(hp.port_free[1]);
            hp.port_free[1] = w + xfer_ps(&h.levels[1], bytes);
            hp.port_free[1]
        };
        self.per_proc[p].wb_free = done;
        done
    }

    /// Leave private `line` to be put in `p`'s coherent cache after this call (see [`Hierarchy`]).
    fn defer_install(&mut self, p: usize, line: Line, t: u64) {
        debug_assert!(self.install.is_none(), "one install per call");
        self.install = Some((p, line, t));
    }

    /// When a miss wanting to start at `t` gets one of `p`'s miss slots (at `t` if one is free,
    /// else when the earliest in flight arrives).
    fn take_slot(&mut self, p: usize, t: u64, h: &HierarchyConfig) -> u64 {
        let hp = &mut self.per_proc[p];
        hp.slots.retain(|&r| r > t);
        if hp.slots.len() < h.outstanding_misses {
            return t;
        }
        let first = hp.slots.iter().copied().min().expect("full");
        hp.slots.retain(|&r| r > first);
        first
    }

    /// A private reference by `p` to `addr` at `t` (the processor's own clock), a store if
    /// `write`: returns (stall, busy) in picoseconds: how long it waited for a miss slot (or a
    /// write-buffer entry), and its issue time. The coherent cache gets the line at once (its
    /// data arrives later; references to it before then merge with the miss). Without a write
    /// buffer a store is timed as a load.
    pub(crate) fn private(&mut self, outer: &mut impl Outer, p: usize, addr: u64, t: u64, write: bool) -> (u64, u64) {
        let h = self.hier_cfg();
        if write && h.write_buffer.is_some() {
            return self.store(outer, p, addr, t, &h);
        }
        if h.loads_before_use == 0 {
            return self.read(outer, p, addr, t, &h);
        }
        // Stall on use: the loop uses a read's data right after issuing the reads that follow
        // it in its unrolled body, so after this read issues, the one `loads_before_use - 1`
        // reads back must have its data (with 1, this one's own: every miss is waited for).
        let (stall, busy) = self.read(outer, p, addr, t, &h);
        let issued = t + stall + busy;
        // This read's data: at once for a hit; when the line arrives for a miss or a read
        // merged with a miss in flight.
        let ready = (0..=h.inner).filter_map(|i| self.arriving(p, i, addr, &h)).max().unwrap_or(issued);
        let hp = &mut self.per_proc[p];
        hp.uses.push_back(ready);
        let mut wait = 0;
        while hp.uses.len() >= h.loads_before_use {
            let used = hp.uses.pop_front().expect("not empty");
            wait = wait.max(used.saturating_sub(issued));
        }
        (stall + wait, busy)
    }

    /// A private read (or a store without a write buffer) at `t`: (stall, busy) as above.
    fn read(&mut self, outer: &mut impl Outer, p: usize, addr: u64, t: u64, h: &HierarchyConfig) -> (u64, u64) {
        let h = *h;
        let line = self.line_of(addr);
        let coherent = outer.holds(p, line);
        if coherent {
            // Counted as the one-level model counts: a hit or miss in the coherent cache.
            outer.count_hit();
        }
        let hp = &mut self.per_proc[p];
        hp.arriving.retain(|&(_, _, r)| r > t);
        let s = self.serving_level(p, addr, coherent, &h);
        let issue = h.levels[0].hit_ps;
        if s == 0 {
            if h.inner > 0 {
                self.per_proc[p].inner[0].touch(addr / h.levels[0].line_bytes);
            } else {
                outer.touch(p, line);
            }
            return (0, issue);
        }
        // A miss in the innermost level: it needs a slot.
        let start = self.take_slot(p, t, &h);
        let stall = start - t;
        let t = start;
        let ready = if s <= h.inner {
            if s == h.inner {
                outer.touch(p, line);
            } else {
                self.per_proc[p].inner[s].touch(addr / h.levels[s].line_bytes);
            }
            self.cache_fill(p, addr, s, t, &h)
        } else {
            outer.count_private_miss(p);
            let r = self.memory_fill(p, line, t, &h);
            self.defer_install(p, line, t);
            r
        };
        self.fill_inner(p, addr, s, &h);
        let hp = &mut self.per_proc[p];
        for i in 0..s.min(h.inner + 1) {
            hp.arriving.push((i, addr / h.levels[i].line_bytes, ready));
        }
        hp.slots.push_back(ready);
        if h.outstanding_misses == 1 {
            // One miss slot: the processor waits for its miss (in order, it stalls at the first
            // use of the data), so nothing overlaps it.
            return (stall + (ready - t), issue);
        }
        (stall, issue)
    }

    /// The time of a shared load or store of `addr` by `p` at `t` whose line the coherent
    /// cache now holds: after a protocol miss (`missed`), the innermost hit (the fill already
    /// waited for the data); otherwise the latency of the level that serves it (blocking).
    pub(crate) fn shared(&mut self, p: usize, addr: u64, t: u64, missed: bool) -> u64 {
        let h = self.hier_cfg();
        let s = if missed { h.inner } else { self.serving_level(p, addr, true, &h) };
        self.fill_inner(p, addr, s, &h);
        if missed || s == 0 {
            return h.levels[0].hit_ps;
        }
        if s == h.inner {
            return h.levels[s].hit_ps;
        }
        self.cache_fill(p, addr, s, t, &h) - t
    }
}
