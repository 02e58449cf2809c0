//! # commlab-api: the interface applications program against
//!
//! An application is written once, as plain sequential Rust per processor, against the
//! [`Node`] trait. A backend (the simulator in `commlab-sim`, later the native host runtime)
//! runs one copy of [`Program::main`] per processor and supplies the `Node`.
//!
//! ```text
//!   Program ──(handlers, init_state, main)──▶ Backend::run ──▶ RunOutput { states, stats }
//!                                              │
//!                        per processor: main(&mut impl Node) ── calls ──▶ compute / send_am /
//!                                                                         send_bulk / poll /
//!                                                                         wait_until / barrier
//! ```
//!
//! Per-processor private state (`Program::State`) is owned by the backend. The main thread
//! reaches it through [`Node::state`] with a closure that cannot call back into the node, and
//! message handlers receive it as `&mut State`. Because a handler can only run while the main
//! thread is inside a `Node` call, the two never alias: handlers are atomic with respect to the
//! main thread, as on Alewife.
//!
//! Nothing in this crate knows about time, caches or networks; those are the backend's.

mod counter;

pub use counter::{Counter, SetCounter, BACKEND_COUNTERS, MESSAGES};

use std::collections::BTreeMap;

/// Index of a processor, `0..nprocs`.
pub type ProcId = usize;

/// A shared-memory byte address (always a multiple of 8: memory is accessed in 64-bit words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Addr(pub u64);

impl Addr {
    /// The address `words` 64-bit words further on.
    pub fn word(self, words: usize) -> Addr {
        Addr(self.0 + 8 * words as u64)
    }
}

/// Where the words of a shared allocation live (their home node). Homes are per cache line:
/// a line's home is the home of its first word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Contiguous blocks of lines, one block per processor in id order.
    Block,
    /// Line `k` of the allocation on processor `k mod nprocs`.
    Cyclic,
    /// Every line on one processor.
    OnNode(ProcId),
    /// An explicit home for every word (the line takes its first word's home).
    Owners(Vec<ProcId>),
}

/// How `Node::barrier` synchronizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    /// A combining tree of active messages.
    Messages,
    /// A combining tree of shared counters and flags (fetch-and-add and spinning).
    SharedMemory,
}

/// A registered message handler: the index of the handler in [`Program::handlers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HandlerId(pub u32);

/// How a node takes delivery of active messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveMode {
    /// The handler runs as soon as the message arrives, preempting the main thread and paying
    /// the interrupt entry and exit overheads.
    Interrupt,
    /// Messages wait in the network interface until the main thread calls [`Node::poll`] or
    /// waits in [`Node::wait_until`] / [`Node::barrier`] (which poll while they wait).
    Polling,
}

/// An arrived active message, as its handler sees it.
#[derive(Debug)]
pub struct Message<'a> {
    /// The sending processor.
    pub src: ProcId,
    /// The argument words (at most the machine's argument cap).
    pub args: &'a [u64],
    /// The bulk payload moved by DMA (empty for a plain active message); the regions the sender
    /// named, concatenated, each padded to the machine's DMA alignment with zero words.
    pub payload: &'a [u64],
}

/// Tempest's fine-grain access tag of one block at one node (software-DSM machines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessTag {
    /// Any access faults.
    Invalid,
    /// Loads perform on the node's copy; stores fault.
    ReadOnly,
    /// Loads and stores perform on the node's copy.
    Writable,
}

/// A block-access fault on a user-protocol region ([`Node::alloc_user_region`]), as the
/// program's [`Program::fault_handler`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The faulting block's first word (blocks are the region's block size, counted from the
    /// region's start).
    pub block: Addr,
    /// A store (to a block tagged read-only or invalid) rather than a load.
    pub write: bool,
}

/// A user protocol's block-access fault handler: runs on the faulting node like a message
/// handler (atomically, with a [`HandlerCtx`]); the faulting access retries whenever a handler
/// on that node has run, until the block's tag allows it.
pub type FaultHandler<S> = fn(&mut S, &mut dyn HandlerCtx, &Fault);

/// What a running handler may do. Handlers are atomic: they never block.
pub trait HandlerCtx {
    /// The processor the handler runs on.
    fn id(&self) -> ProcId;
    /// Number of processors in the run.
    fn nprocs(&self) -> usize;
    /// Simulated time at this point of the handler, in processor cycles since the run began.
    fn now_cycles(&self) -> f64;
    /// Charge `cycles` of handler work (counted as message overhead).
    fn compute(&mut self, cycles: u64);
    /// Charge `words` references to this node's private data (its queues, frames, tables)
    /// that hit in the cache: the machine's `memory.hit_cycles` each. A handler cannot make
    /// simulated references, so this is how it pays for the words it reads and writes.
    fn private_hits(&mut self, words: u64);
    /// Send an active message from inside the handler.
    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]);
    /// Send a bulk (DMA) message from inside the handler: as [`Node::send_bulk`], the
    /// handler pays the send and DMA set-up costs and the DMA engine moves `regions`.
    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]);

    /// Tempest: copy this node's copy of the user-region block at `block` into `out` (one word
    /// per word of the block), paying the machine's block copy cost. Only reachable on backends
    /// whose [`Node::alloc_user_region`] succeeds; the default refuses.
    fn block_read(&mut self, _block: Addr, _out: &mut [u64]) {
        unreachable!("this backend has no Tempest user regions (alloc_user_region refuses)")
    }
    /// Tempest: overwrite this node's copy of a user-region block, paying the block copy cost.
    fn block_write(&mut self, _block: Addr, _data: &[u64]) {
        unreachable!("this backend has no Tempest user regions (alloc_user_region refuses)")
    }
    /// Tempest: change the access tag of a user-region block at this node, paying the
    /// machine's tag-change cost.
    fn set_tag(&mut self, _block: Addr, _tag: AccessTag) {
        unreachable!("this backend has no Tempest user regions (alloc_user_region refuses)")
    }
    /// Tempest: this node's tag of a user-region block (free: the handler reads its own table).
    fn tag(&mut self, _block: Addr) -> AccessTag {
        unreachable!("this backend has no Tempest user regions (alloc_user_region refuses)")
    }
}

/// A message handler: plain function over the node's private state.
pub type Handler<S> = fn(&mut S, &mut dyn HandlerCtx, &Message<'_>);

/// What an application's main thread sees on every processor.
///
/// Calls that take simulated time or block are the only places where the backend may switch
/// to another processor or run this node's message handlers.
pub trait Node {
    /// The program's per-processor private state.
    type State;

    /// This processor.
    fn id(&self) -> ProcId;
    /// Number of processors in the run.
    fn nprocs(&self) -> usize;
    /// Simulated time now, in processor cycles since the run began.
    fn now_cycles(&self) -> f64;
    /// Cycles this processor has spent since the run began in the handlers of the program's
    /// messages (`send_am`, `send_bulk`; not barrier or protocol messages): each handler's
    /// entry, argument reads, body and exit, counted in full when it starts. A handler that
    /// interrupts the main thread lengthens what it was doing by as much, so the difference
    /// over a stretch of `now_cycles` less the difference of this is the main thread's own
    /// time. Handlers on an SMP node's protocol processor take none of this processor's time
    /// and are not counted. Backends that do not measure it (the native one) report 0.
    fn handler_cycles(&self) -> f64 {
        0.0
    }

    /// Run `f` on this node's private state. `f` cannot call the node, so it takes no time.
    fn state<R>(&mut self, f: impl FnOnce(&mut Self::State) -> R) -> R;

    /// Spend `cycles` processor cycles of computation.
    fn compute(&mut self, cycles: u64);
    /// Spend `cycles` on message work done by the main thread itself (buffering values for a
    /// later message, gathering a bulk buffer): counted as message overhead, not compute.
    fn message_work(&mut self, cycles: u64);

    /// Switch how this node receives messages (the default is [`Program::receive_mode`]).
    fn set_receive_mode(&mut self, mode: ReceiveMode);
    /// Send an active message: `args` must not exceed the machine's argument cap.
    fn send_am(&mut self, dest: ProcId, handler: HandlerId, args: &[u64]);
    /// Send an active message with a bulk payload gathered by DMA from `regions`.
    fn send_bulk(&mut self, dest: ProcId, handler: HandlerId, args: &[u64], regions: &[&[u64]]);
    /// Run the handlers of every message waiting in the network interface (polling mode);
    /// costs a poll even when nothing is waiting.
    fn poll(&mut self);

    /// Wait (spinning; polling if the node polls) until `cond` holds on the private state.
    /// `what` names the wait in deadlock reports.
    fn wait_until(&mut self, what: &'static str, cond: impl FnMut(&Self::State) -> bool);
    /// Global barrier over all processors (message or shared-memory tree: [`Program::barrier_kind`]).
    fn barrier(&mut self);

    /// Tempest: allocate `words` words of shared memory, zeroed, in blocks of `block_bytes` (a
    /// power of two from the machine's line, [`Backend::line_bytes`], up to 64 lines; `words`
    /// a whole number of blocks, `placement` giving all of a block's lines one home) kept by a
    /// user protocol instead of the default one (`stache`): each node has its own copy of each
    /// block and an access tag, `Writable` at the block's home and `Invalid` elsewhere; loads
    /// and stores perform on the node's copy when its tag allows and otherwise call
    /// [`Program::fault_handler`]. Collective, as [`Node::alloc_shared`]. Only on software-DSM
    /// machines; elsewhere an error naming the machine (the default).
    fn alloc_user_region(&mut self, _words: usize, _placement: Placement, _block_bytes: usize) -> Result<Addr, String> {
        Err("this backend has no fine-grain access control (Tempest user regions need the simulator's memory.model = \"software\")".to_string())
    }

    /// Allocate `words` 64-bit words of shared memory, zeroed, homed by `placement`.
    /// Collective: every processor makes the same allocations in the same order and gets the
    /// same addresses (the first to arrive creates the region).
    fn alloc_shared(&mut self, words: usize, placement: Placement) -> Addr;
    /// Coherent, sequentially consistent load of a 64-bit word (blocks on a miss).
    fn load(&mut self, addr: Addr) -> u64;
    /// Coherent store of a 64-bit word (blocks until the line is owned).
    fn store(&mut self, addr: Addr, value: u64);
    fn load_f64(&mut self, addr: Addr) -> f64 {
        f64::from_bits(self.load(addr))
    }
    fn store_f64(&mut self, addr: Addr, value: f64) {
        self.store(addr, value.to_bits())
    }
    /// Base address of this processor's private array `k`, as [`Program::private_arrays`]
    /// declared it.
    fn private_array(&mut self, k: usize) -> Addr;
    /// A load from this processor's private memory (`addr` within one of its private arrays).
    /// The value stays in the program's own data; the backend times the reference, which goes
    /// through the same cache as shared data (a hit, or a miss to local memory that may evict
    /// shared lines).
    fn private_read(&mut self, addr: Addr);
    /// A store to this processor's private memory (timed like [`Node::private_read`]).
    fn private_write(&mut self, addr: Addr);
    /// Non-binding prefetch of a line for reading (does not block unless the prefetch buffer is full).
    fn prefetch_read(&mut self, addr: Addr);
    /// Non-binding prefetch of a line with ownership.
    fn prefetch_write(&mut self, addr: Addr);
    /// Atomically add `value` to a word; returns the previous value.
    fn fetch_add(&mut self, addr: Addr, value: u64) -> u64;
    /// Atomically replace the word with `new` if it equals `expected`; returns the previous value.
    fn compare_swap(&mut self, addr: Addr, expected: u64, new: u64) -> u64;
    /// One-sided remote read, as SHMEM's `iget`: copy `words` 64-bit words of shared memory
    /// from `src` (every `src_stride` words) to `dst` (every `dst_stride` words), served by the
    /// memory that holds the source, without its processor. Non-blocking: the values are at
    /// `dst` once [`Node::quiet`] returns. Only on machines with one-sided access
    /// ([`Backend::one_sided`]); elsewhere the run fails naming the machine.
    fn get(&mut self, dst: Addr, dst_stride: usize, src: Addr, src_stride: usize, words: usize);
    /// One-sided remote write, as SHMEM's `iput`: copy `words` words from `src` (every
    /// `src_stride` words) to `dst` (every `dst_stride` words), written by the memory that holds
    /// the destination. Non-blocking: written once [`Node::quiet`] returns.
    fn put(&mut self, dst: Addr, dst_stride: usize, src: Addr, src_stride: usize, words: usize);
    /// A gather by one-sided reads: `dst[i] = src[i]` for every address in `src`.
    fn get_indexed(&mut self, dst: Addr, src: &[Addr]);
    /// A scatter by one-sided writes: `dst[i] = src[i]` for every address in `dst`.
    fn put_indexed(&mut self, dst: &[Addr], src: Addr);
    /// Wait until every get and put this processor issued has completed.
    fn quiet(&mut self);
    /// Acquire a test-and-test-and-set spin lock on a shared word (0 = free).
    fn lock(&mut self, addr: Addr);
    /// Release a lock taken with [`Node::lock`].
    fn unlock(&mut self, addr: Addr);
    /// Spin on a shared word until `cond` holds for its value; returns that value. Spinning
    /// hits in the cache and costs nothing until the line is invalidated.
    fn spin_until(&mut self, what: &'static str, addr: Addr, cond: impl FnMut(u64) -> bool) -> u64;

    /// Mark the start of the timed region on this processor: statistics before this point
    /// (set-up) are discarded. Call it on every processor, normally right after a barrier.
    fn begin_timing(&mut self);

    /// Say how far the program is (`done` of `total` steps, e.g. iterations), for a progress
    /// display with an estimate of the time left. It takes no simulated time and changes no
    /// result; one processor calling it is enough.
    fn progress(&mut self, _done: u64, _total: u64) {}
}

/// One variant of one application, as the backend runs it.
pub trait Program: Send + Sync + 'static {
    /// Per-processor private state, reachable from the main thread and from handlers.
    type State: Send + 'static;

    /// Message handlers; `HandlerId(i)` names `handlers()[i]` (none by default).
    fn handlers(&self) -> Vec<Handler<Self::State>> {
        Vec::new()
    }
    /// Sizes in 64-bit words of the private arrays processor `id` keeps in its own node's
    /// memory: the data a real program would keep there (graph structure, coefficients,
    /// indices, ghost copies). [`Node::private_array`] numbers them in this order. Declaring
    /// them makes their references ([`Node::private_read`], [`Node::private_write`]) cost what
    /// they cost on the machine: cache space, conflict misses with shared data, local misses.
    /// None by default.
    fn private_arrays(&self, _id: ProcId) -> Vec<usize> {
        Vec::new()
    }
    /// The most 64-bit words processor `id` sends in one bulk message ([`Node::send_bulk`]),
    /// when the program knows it before it starts (0, the default: not known, or none). A
    /// backend may set receive buffers of that size aside before the program starts (the
    /// native backend's pre-faulted reserve); it changes no result and costs no simulated
    /// time.
    fn largest_transfer_words(&self, _id: ProcId) -> usize {
        0
    }
    /// Receive mode every node starts in.
    fn receive_mode(&self) -> ReceiveMode {
        ReceiveMode::Interrupt
    }
    /// How [`Node::barrier`] synchronizes.
    fn barrier_kind(&self) -> BarrierKind {
        BarrierKind::Messages
    }
    /// Fan-in of the combining tree [`Node::barrier`] builds (at least 2; processor `p`'s
    /// children are `k p + 1 ..= k p + k`). `None` (the default): the machine's own for the
    /// barrier kind ([`Backend::barrier_arity`]).
    fn barrier_arity(&self) -> Option<usize> {
        None
    }
    /// The user protocol's block-access fault handler for regions from
    /// [`Node::alloc_user_region`] (none by default: a fault is then a program error).
    fn fault_handler(&self) -> Option<FaultHandler<Self::State>> {
        None
    }
    /// The initial private state of processor `id`.
    fn init_state(&self, id: ProcId, nprocs: usize) -> Self::State;
    /// The code every processor runs.
    fn main<N: Node<State = Self::State>>(&self, node: &mut N);
}

/// Where processor time goes. Every processor's timed interval is split exactly into these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// `compute()` work and cache hits.
    Compute,
    /// Stalled on memory misses, prefetch-buffer space or network-interface queue space.
    MemoryNiWait,
    /// Sending, receiving (interrupt entry, polls, handler bodies) and bulk gather/scatter.
    MessageOverhead,
    /// Barriers, lock spinning, waiting for flags and counters.
    Synchronization,
}

impl Category {
    pub const ALL: [Category; 4] =
        [Category::Compute, Category::MemoryNiWait, Category::MessageOverhead, Category::Synchronization];
    /// The name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Category::Compute => "compute",
            Category::MemoryNiWait => "memory_ni_wait",
            Category::MessageOverhead => "message_overhead",
            Category::Synchronization => "synchronization",
        }
    }
    /// The name for people, e.g. in a chart legend (`memory & NI wait`).
    pub fn label(self) -> &'static str {
        match self {
            Category::Compute => "compute",
            Category::MemoryNiWait => "memory & NI wait",
            Category::MessageOverhead => "message overhead",
            Category::Synchronization => "synchronization",
        }
    }
}

/// Classes of bytes injected into the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrafficClass {
    Invalidates,
    Requests,
    Headers,
    Data,
    CrossTraffic,
}

impl TrafficClass {
    pub const ALL: [TrafficClass; 5] = [
        TrafficClass::Invalidates,
        TrafficClass::Requests,
        TrafficClass::Headers,
        TrafficClass::Data,
        TrafficClass::CrossTraffic,
    ];
    /// The name used in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            TrafficClass::Invalidates => "invalidates",
            TrafficClass::Requests => "requests",
            TrafficClass::Headers => "headers",
            TrafficClass::Data => "data",
            TrafficClass::CrossTraffic => "cross_traffic",
        }
    }
    /// The name for people, e.g. in a chart legend (`cross-traffic`).
    pub fn label(self) -> &'static str {
        match self {
            TrafficClass::Invalidates => "invalidates",
            TrafficClass::Requests => "requests",
            TrafficClass::Headers => "headers",
            TrafficClass::Data => "data",
            TrafficClass::CrossTraffic => "cross-traffic",
        }
    }
}

/// Time of one processor over the timed region, in processor cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcTimes {
    /// Cycles per [`Category`], indexed as `Category::ALL`.
    pub by_category: [f64; 4],
    /// From `begin_timing` to the moment this processor's main thread returned.
    pub busy: f64,
    /// Cycle (since run start) at which `begin_timing` was called.
    pub start: f64,
}

impl ProcTimes {
    pub fn get(&self, c: Category) -> f64 {
        self.by_category[c as usize]
    }
    pub fn sum(&self) -> f64 {
        self.by_category.iter().sum()
    }
}

/// Backend-neutral statistics of one run. Backends that cannot measure a figure leave it zero.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Timed region: from the first `begin_timing` to the last processor's finish, in cycles.
    pub cycles: f64,
    /// Per-processor time breakdown.
    pub procs: Vec<ProcTimes>,
    /// Bytes injected per [`TrafficClass`], indexed as `TrafficClass::ALL`.
    pub volume_bytes: [u64; 5],
    /// Further named figures (message counts, link utilisation, ...).
    pub counters: BTreeMap<String, f64>,
    /// Per-processor counters, indexed by processor (empty when the backend has none).
    pub nodes: Vec<NodeCounters>,
    /// Per-link figures of the network over the timed region (empty without a network).
    pub links: Vec<LinkStats>,
    /// Simulator events executed (0 for native runs).
    pub events: u64,
    /// Those events by kind, in a fixed order of kinds (`hop`, `grant`, `deliver`, `inject`,
    /// ..., and a processor's wake-ups: `wake_timed` at the end of its own computation, hits or
    /// overheads, `wake_blocked` at the end of a wait, `wake_superseded` where a later one had
    /// replaced it); they sum to `events`. Empty for native runs.
    pub events_by_kind: Vec<(&'static str, u64)>,
    /// Wall-clock seconds the run took.
    pub wall_seconds: f64,
    /// Latency distributions over the timed region, one per metric and class; empty unless the
    /// backend was asked to record them (the simulator's `Simulator::record_latencies`).
    pub latencies: Vec<LatencyStats>,
    /// The run as a timeline, when the backend was asked to trace it (the simulator's
    /// `Simulator::trace`).
    pub trace: Option<TraceData>,
    /// The run cut into equal stretches of time, when the backend was asked for them (the
    /// simulator's `Simulator::intervals`).
    pub intervals: Option<IntervalData>,
}

/// Interval statistics: the timed region cut into stretches of `length` cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalData {
    pub length: f64,
    pub rows: Vec<IntervalRow>,
}

/// One stretch of time.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRow {
    /// Cycles from the start of the timed region.
    pub start: f64,
    /// Per processor, the cycles of each category in this stretch (indexed as
    /// `Category::ALL`); over the stretches they sum to the run's breakdown.
    pub breakdown: Vec<[f64; 4]>,
    /// Bytes injected in this stretch per traffic class (indexed as `TrafficClass::ALL`).
    pub traffic: [u64; 5],
    /// Per link, the busy time reserved in this stretch over its length.
    pub link_utilization: Vec<f64>,
    /// NI queue depths (packets) at the stretch's end: mean and largest over the NIs.
    pub ni_output_mean: f64,
    pub ni_output_max: u32,
    pub ni_input_mean: f64,
    pub ni_input_max: u32,
}

/// A run's timeline, in cycles from the start of the timed region.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceData {
    /// Each processor's time account as spans, one per stretch of one category: a processor's
    /// spans do not overlap and cover its timed region (within the window).
    pub spans: Vec<TraceSpan>,
    /// Arrows: `message` kinds from the send to the handler's entry, `miss` from the stall to
    /// the access.
    pub flows: Vec<TraceFlow>,
    /// Packets on links: each link's serialization of each packet (injection links are the
    /// NIs' output side, ejection links their input side; `RunStats::links` names every link).
    pub packets: Vec<TracePacket>,
    /// Where the trace stopped because it reached its size cap (None: complete).
    pub truncated_at: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpan {
    pub proc: u32,
    pub category: Category,
    pub start: f64,
    pub end: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceFlow {
    /// `miss`, or the message's kind (`active`, `bulk`, `barrier`, `flow_ack`).
    pub name: &'static str,
    pub from: u32,
    pub from_cycle: f64,
    pub to: u32,
    pub to_cycle: f64,
}

/// One packet crossing one link: the link busy serializing it from `start` to `end`.
#[derive(Clone, Debug, PartialEq)]
pub struct TracePacket {
    pub link: u32,
    /// What the packet carries: a message kind (`active`, `bulk`, `barrier`, `flow_ack`,
    /// `cross`, `get`, `put`, `get_reply`, `put_ack`) or a coherence message (`read_request`,
    /// `data_shared`, ...).
    pub name: &'static str,
    /// The message's sending and receiving endpoints.
    pub src: u32,
    pub dst: u32,
    pub start: f64,
    pub end: f64,
}

/// The distribution of one latency over the timed region: `metric` is `miss` (a processor's
/// stall on a demand miss, from the miss to the access), `message` (one-way: from the send
/// to the handler's entry), `ni_wait` (a sender's stall for NI output space or flow-control
/// credit) or `lock_wait` (from `lock` to holding the lock); `class` says which kind (a miss's
/// home, a message's kind). All times in processor cycles.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyStats {
    pub metric: &'static str,
    pub class: String,
    pub count: u64,
    /// Exact sum of the samples (not from the buckets).
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// Percentiles (p50, p90, p99), each within 0.1% of the exact sample (the histogram
    /// keeps three significant digits).
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    /// Log-spaced buckets (each twice the one before), the empty ones left out.
    pub buckets: Vec<LatencyBucket>,
}

/// Samples `lo < x <= hi` (cycles); the first bucket starts at 0.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyBucket {
    pub lo: f64,
    pub hi: f64,
    pub count: u64,
}

/// One processor's counts over the timed region.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeCounters {
    /// Messages this processor sent (application, barrier and runtime messages).
    pub messages_sent: u64,
    /// Message handlers that ran on this processor.
    pub messages_received: u64,
    /// Shared-memory and private misses this processor took.
    pub cache_misses: u64,
    /// LimitLESS traps this processor took as a home.
    pub software_traps: u64,
}

/// One network link over the timed region.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkStats {
    pub link: u32,
    /// `injection`, `ejection` or `router`.
    pub kind: &'static str,
    /// Where the link starts and ends: `router R` or `endpoint E` (processors first, then
    /// I/O nodes).
    pub from: String,
    pub to: String,
    /// Fraction of the timed region the link spent serializing packets.
    pub utilization: f64,
    /// Bytes that crossed it.
    pub bytes: u64,
}

impl RunStats {
    /// Mean cycles per processor in category `c`.
    pub fn mean(&self, c: Category) -> f64 {
        if self.procs.is_empty() {
            return 0.0;
        }
        self.procs.iter().map(|p| p.get(c)).sum::<f64>() / self.procs.len() as f64
    }
}

/// The final private states, shared memory and statistics of a run.
pub struct RunOutput<S> {
    pub states: Vec<S>,
    /// Final contents of shared memory, one entry per 64-bit word (`Addr(a)` is `memory[a / 8]`).
    pub memory: Vec<u64>,
    pub stats: RunStats,
}

impl<S> RunOutput<S> {
    /// A word of final shared memory.
    pub fn load(&self, addr: Addr) -> u64 {
        self.memory[(addr.0 / 8) as usize]
    }
}

/// Something that can run a [`Program`]: the simulator, later the host.
pub trait Backend {
    type Error: std::error::Error + Send + Sync + 'static;
    /// Number of processors this backend will run.
    fn nprocs(&self) -> usize;
    /// Processor cycles per microsecond (clock rate in MHz), to convert published figures.
    fn cycles_per_us(&self) -> f64;
    /// Network hop distance between two processors (0 when the backend has no network).
    fn hops(&self, a: ProcId, b: ProcId) -> usize;
    /// A processor on the other side of the network's bisection whose route to `p` crosses it
    /// once, if the network has a natural cut (None natively).
    fn bisection_partner(&self, p: ProcId) -> Option<ProcId>;
    /// Bisection bandwidth in bytes per processor cycle, both directions (0 when unknown).
    fn bisection_bytes_per_cycle(&self) -> f64;
    /// The most 64-bit argument words one active message may carry.
    fn max_am_args(&self) -> usize;
    /// Cycles of the application work cost `costs.NAME` in the machine's `[costs]` table.
    /// Applications resolve every cost they charge once, before building their program (a
    /// missing entry fails there, naming it), and keep the values in typed fields: no cost is
    /// looked up by name while a program runs.
    fn cost_cycles(&self, name: &str) -> Result<u64, Self::Error>;
    /// The machine's fan-in of the combining-tree barrier of `kind` (what a program whose
    /// [`Program::barrier_arity`] is `None` gets).
    fn barrier_arity(&self, kind: BarrierKind) -> usize;
    /// Whether processors can use one-sided remote access ([`Node::get`], [`Node::put`]).
    fn one_sided(&self) -> bool;
    /// Whether [`Node::alloc_user_region`] works: Tempest fine-grain access control, on
    /// software-DSM machines only (none by default).
    fn access_control(&self) -> bool {
        false
    }
    /// Coherence (cache line) size in bytes, the unit of shared-memory transfers and of
    /// bulk gather/scatter copy costs.
    fn line_bytes(&self) -> usize;
    /// The same machine with `nprocs` processors (a mesh or torus reshaped, per-node and
    /// per-link parameters kept), e.g. for a one-processor baseline of a parallel kernel (with
    /// one processor, the simulator drops cross-traffic and software access checks: the
    /// sequential program alone).
    fn with_nprocs(&self, nprocs: usize) -> Result<Self, Self::Error>
    where
        Self: Sized;
    /// Run `program` on every processor.
    fn run<P: Program>(&self, program: std::sync::Arc<P>) -> Result<RunOutput<P::State>, Self::Error>;
}
