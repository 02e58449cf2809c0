//! `MachineSpec`: the machine description as written in a TOML preset, before validation.
//!
//! Every key is listed in [`KEYS`] with its unit and meaning; that table is the single source of
//! the documentation printed by `commlab machine show` and of the valid-key lists in errors.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String,
    pub summary: String,
    pub processor: ProcessorSpec,
    pub network: NetworkSpec,
    pub cross_traffic: CrossTrafficSpec,
    pub messaging: MessagingSpec,
    pub memory: MemorySpec,
    /// Software fine-grain DSM costs (required when `memory.model = "software"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsm: Option<DsmSpec>,
    /// The memory hierarchy below each processor, true to bandwidth (opt-in: absent, a
    /// machine has today's one-level model and its TOML, fingerprint and results are unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hierarchy: Option<HierarchySpec>,
    /// One-sided remote memory access (get/put); absent: the machine has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteSpec>,
    /// The node's processors (`[node]`); absent: one processor per node, as every preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeSpec>,
    #[serde(default)]
    pub costs: BTreeMap<String, u64>,
    pub limits: LimitsSpec,
}

/// The memory hierarchy (`[hierarchy]`): cache levels inside the coherent cache
/// (`memory.cache_bytes`, the outermost cache, the one the protocol keeps coherent), a banked
/// DRAM, optional stream read-ahead, and how many misses a processor may have outstanding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HierarchySpec {
    pub outstanding_misses: u64,
    /// Bandwidth of the coherent cache toward the inner levels.
    pub cache_bytes_per_cycle: f64,
    /// The innermost level (first looked in), if the coherent cache is not the innermost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1: Option<LevelSpec>,
    /// A level between `l1` and the coherent cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2: Option<LevelSpec>,
    pub dram: DramSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamSpec>,
    /// Stores write through the innermost cache without allocating in it, merged in a write
    /// buffer (`[hierarchy.write_buffer]`); absent: a store is timed as a load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_buffer: Option<WriteBufferSpec>,
    /// The OS places virtual pages of this size at arbitrary physical frames: a cache larger
    /// than a page indexes by a hash of the page (absent: by the address, `line % sets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bytes: Option<u64>,
}

/// A merging write buffer between the innermost cache (write-through, no write-allocate) and
/// the next level (`[hierarchy.write_buffer]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WriteBufferSpec {
    pub entries: u64,
    pub block_bytes: u64,
}

/// One cache level inside the coherent cache (`[hierarchy.l1]`, `[hierarchy.l2]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LevelSpec {
    pub bytes: u64,
    pub line_bytes: u64,
    pub associativity: u64,
    pub hit_cycles: u64,
    pub bytes_per_cycle: f64,
}

/// Each node's DRAM (`[hierarchy.dram]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    pub banks: u64,
    pub interleave_bytes: u64,
    pub bank_busy_cycles: u64,
    pub bytes_per_cycle: f64,
    /// One memory for all processors (a bus-based SMP's memory modules on the system bus):
    /// its banks and bus are shared. Absent or false: each node has its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
}

/// Stream read-ahead between the DRAM and the coherent cache (`[hierarchy.stream]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    pub buffers: u64,
    pub depth: u64,
    pub hit_cycles: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProcessorSpec {
    pub clock_mhz: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub topology: String,
    #[serde(default)]
    pub dims: Vec<usize>,
    #[serde(default = "default_arity")]
    pub arity: usize,
    #[serde(default)]
    pub nprocs: usize,
    #[serde(default)]
    pub io_nodes: bool,
    pub link_bytes_per_ns: f64,
    pub router_latency_ns: f64,
    pub ni_latency_ns: f64,
    pub header_bytes: u64,
    pub max_packet_payload_bytes: u64,
    pub ni_input_queue_packets: u32,
    pub ni_output_queue_packets: u32,
    /// How the simulator drives the network (`hop` or `fold`); not part of the machine's
    /// timing, which both give identically. Absent means `hop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

fn default_arity() -> usize {
    4
}

fn default_model() -> String {
    "hardware".to_string()
}

/// Software fine-grain distributed shared memory (Blizzard): access checks on every shared
/// reference, and protocol handlers that exchange active messages.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DsmSpec {
    pub handlers: String,
    /// Blizzard-S's inserted access checks (`none`, `no-opt`, `cc-reg`, `slice`, `sentinel`):
    /// required; the level gives the per-reference check costs (`machine::Instrumentation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrumentation: Option<String>,
    /// Optional overrides of the level's per-load and per-store check costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_check_cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_check_cycles: Option<u64>,
    pub miss_trap_cycles: u64,
    pub upgrade_fault_cycles: u64,
    pub resume_cycles: u64,
    pub handler_cycles: u64,
    pub copy_bytes_per_cycle: f64,
    pub tag_granule_bytes: u64,
    pub tag_valid_cycles: u64,
    pub tag_valid_per_granule_cycles: u64,
    pub tag_invalidate_cycles: u64,
    pub tag_invalidate_per_granule_cycles: u64,
}

/// The processors of a node (`[node]`). With two, the second is a protocol processor: it runs
/// the node's dispatch loop (every message handler, the default protocol's and the program's),
/// and the compute processor is never interrupted by them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    #[serde(default = "one")]
    pub procs_per_node: u64,
    /// A lock both processors of an SMP node take around each access-tag change (software DSM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_lock_cycles: Option<u64>,
}

fn one() -> u64 {
    1
}

/// One-sided remote memory access, SHMEM-like get and put (the T3D's remote loads and stores
/// through its prefetch queue, the T3E's E-registers): requests go to the memory that holds the
/// data and are served there without its processor and without coherence.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RemoteSpec {
    pub issue_cycles: u64,
    pub max_outstanding_words: u64,
    pub words_per_request: u64,
    pub request_bytes: u64,
    pub service_cycles: u64,
    pub service_line_cycles: u64,
    pub service_word_cycles: u64,
    /// Injection and ejection latency of one-sided packets instead of `network.ni_latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ni_latency_cycles: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CrossTrafficSpec {
    pub rate_bytes_per_cycle: f64,
    pub message_bytes: u64,
    /// How cross-traffic waits for a link: `fifo` (in arrival order with the application's
    /// packets, the default) or `priority` (ahead of them). Always written out.
    #[serde(default = "default_arbitration")]
    pub arbitration: String,
}

fn default_arbitration() -> String {
    "fifo".to_string()
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MessagingSpec {
    pub send_overhead_cycles: u64,
    pub send_per_arg_word_cycles: u64,
    pub max_arg_words: u64,
    pub interrupt_entry_cycles: u64,
    pub interrupt_exit_cycles: u64,
    /// Reading one 32-bit argument word of an arrived message (0 where reading the arguments
    /// is part of entry or dispatch; left out of the TOML when 0, so older machines keep their
    /// fingerprints).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub receive_per_arg_word_cycles: u64,
    /// Polls at loop back-edges: cycles of computation between two (0, left out of the TOML:
    /// none, messages interrupt).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub backedge_interval_cycles: u64,
    pub poll_cycles: u64,
    pub poll_dispatch_cycles: u64,
    pub dma_setup_cycles: u64,
    pub dma_per_region_cycles: u64,
    pub dma_bytes_per_cycle: f64,
    pub dma_align_bytes: u64,
    pub barrier_arity: u64,
    /// The body of the message barrier's handler, an arrival (count and compare) or a wakeup,
    /// on top of its entry and argument reads (0, left out of the TOML: free).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub barrier_handler_cycles: u64,
    /// A processor waiting in the message barrier takes its messages by interrupt, as anywhere
    /// else (false, left out of the TOML: it polls, at `poll_dispatch_cycles`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub barrier_wait_interrupts: bool,
    /// Overhead-experiment knob: multiplies every send and receive overhead above.
    #[serde(default = "default_scale")]
    pub overhead_scale: f64,
    /// Credit-based flow control: messages one processor may have unacknowledged at another
    /// (0, the default and left out of the TOML: off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_window_messages: u64,
    /// Flow control: copying a message into the sender's software queue (left out when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_buffer_cycles: u64,
    /// The network overflow trap (Alewife): how long a node's NI input queue must stay full with
    /// packets waiting for its ejection link before its processor traps (0, left out of the
    /// TOML: never). The trap's costs below are required when it is on, ignored when off.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub overflow_timeout_cycles: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_trap_entry_cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_drain_per_message_cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_drain_per_word_cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_trap_exit_cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_dispatch_cycles: Option<u64>,
}

fn default_sm_barrier_arity() -> u64 {
    2
}

fn default_scale() -> f64 {
    1.0
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    #[serde(default = "default_model")]
    pub model: String,
    pub line_bytes: u64,
    pub cache_bytes: u64,
    pub associativity: u64,
    pub hit_cycles: u64,
    pub local_miss_cycles: u64,
    pub miss_issue_cycles: u64,
    pub fill_cycles: u64,
    pub dir_cycles: u64,
    pub dir_occupancy_cycles: u64,
    pub home_cache_cycles: u64,
    pub owner_cycles: u64,
    pub forward_reply_cycles: u64,
    pub inv_send_cycles: u64,
    pub ack_cycles: u64,
    pub hw_pointers: u64,
    pub sw_read_cycles: u64,
    pub sw_write_cycles: u64,
    pub rmw_cycles: u64,
    pub lock_overhead_cycles: u64,
    pub prefetch_buffer_entries: u64,
    pub prefetch_issue_cycles: u64,
    pub max_run_ahead_cycles: u64,
    /// Fan-in of the shared-memory combining-tree barrier (its own shape: the best
    /// shared-memory and message barriers differ).
    #[serde(default = "default_sm_barrier_arity")]
    pub barrier_arity: u64,
    /// Latency-emulation knob: extra cycles before every remote miss's request leaves.
    #[serde(default)]
    pub remote_miss_delay_cycles: u64,
    /// A snooping bus: a dirty owner is asked as the memory starts its read, and supplies the
    /// line when both are done (false, the default, and absent from the TOML: a directory that
    /// forwards after its memory access).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snooping: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    pub max_events: u64,
    pub max_sim_time_ms: f64,
}

/// One documented key: dotted path, unit, meaning.
pub struct KeyDoc {
    pub key: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// Every machine key, its unit and its meaning. `costs.*` entries are free-form names in cycles.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc { key: "name", unit: "text", doc: "preset name" },
    KeyDoc { key: "summary", unit: "text", doc: "one-line description" },
    KeyDoc {
        key: "processor.clock_mhz",
        unit: "MHz",
        doc: "processor clock; the network is timed independently in ns",
    },
    KeyDoc { key: "network.topology", unit: "mesh|torus|fat-tree|hypercube|ring|crossbar", doc: "network topology" },
    KeyDoc {
        key: "network.dims",
        unit: "routers per dimension",
        doc: "mesh [x, y] or torus [k0, k1, ...]; x is the longest and is the bisection cut",
    },
    KeyDoc { key: "network.arity", unit: "ports", doc: "fat-tree switch arity (children per switch)" },
    KeyDoc {
        key: "network.nprocs",
        unit: "processors",
        doc: "processor count for fat-tree, hypercube, ring and crossbar",
    },
    KeyDoc {
        key: "network.io_nodes",
        unit: "bool",
        doc: "mesh only: one I/O node per row on both x edges (sources of cross-traffic)",
    },
    KeyDoc { key: "network.link_bytes_per_ns", unit: "bytes/ns", doc: "bandwidth of every link, per direction" },
    KeyDoc { key: "network.router_latency_ns", unit: "ns", doc: "latency of one router-to-router hop" },
    KeyDoc {
        key: "network.ni_latency_ns",
        unit: "ns",
        doc: "latency of the injection link and of the ejection link, each",
    },
    KeyDoc { key: "network.header_bytes", unit: "bytes", doc: "header carried by every packet" },
    KeyDoc {
        key: "network.max_packet_payload_bytes",
        unit: "bytes",
        doc: "largest payload per packet; longer messages are split",
    },
    KeyDoc {
        key: "network.ni_input_queue_packets",
        unit: "packets",
        doc: "NI input queue; when full, arriving packets wait in the network holding their link",
    },
    KeyDoc {
        key: "network.ni_output_queue_packets",
        unit: "packets",
        doc: "NI output queue; a sender whose queue is full stalls (memory_ni_wait)",
    },
    KeyDoc {
        key: "network.model",
        unit: "hop|fold",
        doc: "how the simulator runs the network, not a machine property: `hop` (default, the reference) \
              schedules every hop, delivery and wake-up through the event queue; `fold` runs an event at \
              once, without queueing it, when it is due before everything queued (nothing can come \
              between), which gives identical cycles, statistics and event order with fewer queued events \
              (the run's `events` and `limits.max_events` count queued events)",
    },
    KeyDoc {
        key: "cross_traffic.rate_bytes_per_cycle",
        unit: "bytes/processor cycle",
        doc: "total cross-traffic the I/O nodes send across the bisection (0 = off)",
    },
    KeyDoc {
        key: "cross_traffic.message_bytes",
        unit: "bytes",
        doc: "size of one cross-traffic message, header included",
    },
    KeyDoc {
        key: "cross_traffic.arbitration",
        unit: "fifo|priority",
        doc: "how a cross-traffic packet waits for a link: `fifo` (default) in arrival order with the application's packets, as real I/O nodes' packets do (it may get less than its rate: counters.cross_traffic_bytes_per_cycle says what it got; an I/O node's NI output queue holds network.ni_output_queue_packets and its sender waits while it is full); `priority` ahead of every waiting application packet, so it takes its configured rate (an I/O node's output queue is unbounded)",
    },
    KeyDoc {
        key: "messaging.overhead_scale",
        unit: "factor",
        doc: "multiplies send, per-argument (sent and received), interrupt entry/exit, poll and poll-dispatch costs, and the network overflow trap's costs (overhead experiments; 1 on real machines)",
    },
    KeyDoc {
        key: "messaging.send_overhead_cycles",
        unit: "cycles",
        doc: "describe + launch of a message with no arguments",
    },
    KeyDoc {
        key: "messaging.send_per_arg_word_cycles",
        unit: "cycles",
        doc: "extra send cost per 32-bit argument word",
    },
    KeyDoc {
        key: "messaging.max_arg_words",
        unit: "32-bit words",
        doc: "active-message argument cap (a u64 argument is two words)",
    },
    KeyDoc {
        key: "messaging.interrupt_entry_cycles",
        unit: "cycles",
        doc: "from message arrival to handler entry when receiving by interrupt",
    },
    KeyDoc {
        key: "messaging.interrupt_exit_cycles",
        unit: "cycles",
        doc: "from handler return to resuming the interrupted thread",
    },
    KeyDoc {
        key: "messaging.receive_per_arg_word_cycles",
        unit: "cycles",
        doc: "a handler reading one 32-bit argument word of its message (e.g. through an NI window); default 0: reading is part of entry or dispatch",
    },
    KeyDoc { key: "messaging.poll_cycles", unit: "cycles", doc: "one poll of the NI, whether or not a message waits (an explicit poll(), or a failed poll at a loop back-edge)" },
    KeyDoc {
        key: "messaging.backedge_interval_cycles",
        unit: "cycles",
        doc: "polling at loop back-edges, as executable editing inserts it: the program's computation passes a back-edge every this many cycles, each a poll (messaging.poll_cycles when it finds nothing, charged as message overhead); a message that would interrupt (either receive mode, or a software-DSM handler on the compute processor) waits for the next back-edge instead and is dispatched there (messaging.poll_dispatch_cycles, no interrupt entry or exit), one per back-edge; a waiting processor takes it at once, polled; 0 or absent: interrupts",
    },
    KeyDoc {
        key: "messaging.poll_dispatch_cycles",
        unit: "cycles",
        doc: "dispatch of one polled message to its handler",
    },
    KeyDoc { key: "messaging.dma_setup_cycles", unit: "cycles", doc: "extra send cost of a bulk (DMA) message" },
    KeyDoc {
        key: "messaging.dma_per_region_cycles",
        unit: "cycles",
        doc: "extra send cost per (address, length) region",
    },
    KeyDoc {
        key: "messaging.dma_bytes_per_cycle",
        unit: "bytes/cycle",
        doc: "DMA engine rate reading the sender's memory",
    },
    KeyDoc {
        key: "messaging.dma_align_bytes",
        unit: "bytes",
        doc: "each DMA region is padded to a multiple of this (power of two, >= 8)",
    },
    KeyDoc {
        key: "messaging.flow_window_messages",
        unit: "messages",
        doc: "credit-based flow control: application messages a processor may have unacknowledged at one destination; a full window waits for credit, or (handlers, or a sender itself holding a window of unacknowledged receipts) buffers in a software queue; default 0: off",
    },
    KeyDoc {
        key: "messaging.flow_buffer_cycles",
        unit: "cycles",
        doc: "flow control: copying one message into the sender's software queue (it pays its send overhead again when injected); default 0",
    },
    KeyDoc {
        key: "messaging.overflow_timeout_cycles",
        unit: "cycles",
        doc: "the network overflow trap (Alewife): a processor node whose NI input queue is full while a packet waits for its ejection link, continuously this long, takes the trap on its processor (an interrupt in either receive mode, after any running handler): it copies every program message waiting in its NI input queue, and those that arrive meanwhile, into a buffer in memory, freeing their slots, then the buffered messages are handled in arrival order at messaging.overflow_dispatch_cycles each; default 0: no trap. The next five keys are required when it is on",
    },
    KeyDoc {
        key: "messaging.overflow_trap_entry_cycles",
        unit: "cycles",
        doc: "network overflow trap: from the trap to the first copy",
    },
    KeyDoc {
        key: "messaging.overflow_drain_per_message_cycles",
        unit: "cycles",
        doc: "network overflow trap: copying one message out of the NI input queue into the buffer, besides its words (its NI slot is freed when the copy ends)",
    },
    KeyDoc {
        key: "messaging.overflow_drain_per_word_cycles",
        unit: "cycles",
        doc: "network overflow trap: copying one 32-bit argument or payload word",
    },
    KeyDoc {
        key: "messaging.overflow_trap_exit_cycles",
        unit: "cycles",
        doc: "network overflow trap: from the last copy to resuming the interrupted work",
    },
    KeyDoc {
        key: "messaging.overflow_dispatch_cycles",
        unit: "cycles",
        doc: "network overflow trap: dispatching one buffered message to its handler from memory (instead of interrupt entry and exit, or poll dispatch)",
    },
    KeyDoc {
        key: "messaging.barrier_arity",
        unit: "children",
        doc: "fan-in of the message combining-tree barrier (a processor waiting in it receives by polling, unless messaging.barrier_wait_interrupts)",
    },
    KeyDoc {
        key: "messaging.barrier_handler_cycles",
        unit: "cycles",
        doc: "the body of the message barrier's handler (an arrival: count and compare; a wakeup: release the waiting thread), on top of entry and argument reads; default 0",
    },
    KeyDoc {
        key: "messaging.barrier_wait_interrupts",
        unit: "true|false",
        doc: "a processor waiting in the message barrier takes its messages by interrupt (entry and exit), as it would anywhere else; default false: it polls (messaging.poll_dispatch_cycles)",
    },
    KeyDoc {
        key: "memory.barrier_arity",
        unit: "children",
        doc: "fan-in of the shared-memory combining-tree barrier (counters and flags homed at their processors); default 2",
    },
    KeyDoc { key: "memory.model", unit: "hardware|software", doc: "coherence in hardware (directory controller) or in software (Blizzard-style fine-grain DSM, see [dsm])" },
    KeyDoc { key: "memory.line_bytes", unit: "bytes", doc: "cache line (coherence unit), a power of two >= 8" },
    KeyDoc { key: "memory.cache_bytes", unit: "bytes", doc: "per-processor cache size" },
    KeyDoc {
        key: "memory.associativity",
        unit: "ways",
        doc: "cache associativity (1 = direct-mapped), LRU replacement",
    },
    KeyDoc {
        key: "memory.hit_cycles",
        unit: "cycles",
        doc: "a load or store that hits in the cache (counted as compute)",
    },
    KeyDoc {
        key: "memory.local_miss_cycles",
        unit: "cycles",
        doc: "miss served by the local memory with no other cache involved",
    },
    KeyDoc {
        key: "memory.remote_miss_delay_cycles",
        unit: "cycles",
        doc: "fixed delay added to every remote miss (latency emulation; 0 on real machines)",
    },
    KeyDoc {
        key: "memory.miss_issue_cycles",
        unit: "cycles",
        doc: "from a remote miss to its request leaving the node",
    },
    KeyDoc { key: "memory.fill_cycles", unit: "cycles", doc: "from data arriving to the processor resuming" },
    KeyDoc { key: "memory.dir_cycles", unit: "cycles", doc: "home directory lookup + memory access for a request" },
    KeyDoc {
        key: "memory.dir_occupancy_cycles",
        unit: "cycles",
        doc: "home controller busy per request (requests queue behind it)",
    },
    KeyDoc {
        key: "memory.home_cache_cycles",
        unit: "cycles",
        doc: "extra to take a dirty line from the home node's own cache",
    },
    KeyDoc { key: "memory.owner_cycles", unit: "cycles", doc: "a cache answering a forward or an invalidation" },
    KeyDoc { key: "memory.forward_reply_cycles", unit: "cycles", doc: "home turning an owner's data into the reply" },
    KeyDoc {
        key: "memory.snooping",
        unit: "bool",
        doc: "a snooping bus instead of a directory (default false): a request reaches the owning cache as it reaches memory, so a dirty owner is asked at once, in parallel with the memory's read (dir_cycles, or local_miss_cycles for the home's own miss), and the data leaves when both are done; the memory's copy is not used. Hardware coherence only",
    },
    KeyDoc {
        key: "memory.inv_send_cycles",
        unit: "cycles",
        doc: "home sending one invalidation (invalidations go out one after another)",
    },
    KeyDoc { key: "memory.ack_cycles", unit: "cycles", doc: "home processing one invalidation ack" },
    KeyDoc {
        key: "memory.hw_pointers",
        unit: "sharers",
        doc: "remote sharers the directory tracks in hardware (the home's own copy is a separate local bit); the next one traps once to software, which empties the pointers into a list in memory (LimitLESS)",
    },
    KeyDoc {
        key: "memory.sw_read_cycles",
        unit: "cycles",
        doc: "body of the LimitLESS trap handler for a read that finds the pointers full (the home processor also pays interrupt entry and exit)",
    },
    KeyDoc {
        key: "memory.sw_write_cycles",
        unit: "cycles",
        doc: "body of the LimitLESS trap handler for a write to a line whose sharers overflowed to software (it invalidates them)",
    },
    KeyDoc {
        key: "memory.rmw_cycles",
        unit: "cycles",
        doc: "the read-modify-write of fetch_add / compare_swap once the line is owned",
    },
    KeyDoc {
        key: "memory.lock_overhead_cycles",
        unit: "cycles",
        doc: "instructions of one lock acquire + release besides its memory accesses",
    },
    KeyDoc {
        key: "memory.prefetch_buffer_entries",
        unit: "lines",
        doc: "outstanding prefetches per processor; one more stalls (memory_ni_wait)",
    },
    KeyDoc { key: "memory.prefetch_issue_cycles", unit: "cycles", doc: "issuing one prefetch" },
    KeyDoc {
        key: "memory.max_run_ahead_cycles",
        unit: "cycles",
        doc: "cache hits accumulate locally (no events) up to this much time before the processor syncs",
    },
    KeyDoc { key: "remote.issue_cycles", unit: "cycles", doc: "processor time to issue one get or put request (a section absent: no one-sided access)" },
    KeyDoc { key: "remote.max_outstanding_words", unit: "words", doc: "words of get/put requests a processor may have in flight (the T3D's prefetch queue, the T3E's E-registers); a request needing more waits" },
    KeyDoc { key: "remote.words_per_request", unit: "words", doc: "most 64-bit words one request moves (a vector get/put); a transfer is split into requests of this many" },
    KeyDoc { key: "remote.request_bytes", unit: "bytes", doc: "a request's addresses (base, stride or list) on the wire, beyond the packet header" },
    KeyDoc { key: "remote.service_cycles", unit: "cycles", doc: "the target memory's latency to take a request (overlapped with the previous request's transfer)" },
    KeyDoc { key: "remote.service_line_cycles", unit: "cycles", doc: "the target memory's occupancy per distinct line a request's words are in (strided requests open more); requests occupy it one after another" },
    KeyDoc { key: "remote.service_word_cycles", unit: "cycles", doc: "the target memory's occupancy per word of a request" },
    KeyDoc { key: "remote.ni_latency_cycles", unit: "cycles", doc: "optional: injection and ejection latency of one-sided packets (their own interface) instead of network.ni_latency_ns" },
    KeyDoc { key: "dsm.handlers", unit: "compute|protocol-processor", doc: "where the default protocol's handlers run on a one-processor node: on its compute processor (stealing its time) or a dedicated protocol processor (the program's handlers stay on the compute processor); an SMP node (node.procs_per_node = 2) runs every handler on its second processor, whatever this says" },
    KeyDoc { key: "node.procs_per_node", unit: "1|2", doc: "processors per node; 2: an SMP node whose second processor runs the protocol dispatch loop (every message handler, polled, never interrupting the compute processor; a block-access fault still runs on the processor that took it). Absent: 1" },
    KeyDoc { key: "node.tag_lock_cycles", unit: "cycles", doc: "on an SMP node of a software-DSM machine: the lock both processors take around each access-tag change (acquire and release), added to every tag change; required there" },
    KeyDoc { key: "dsm.instrumentation", unit: "none|no-opt|cc-reg|slice|sentinel", doc: "Blizzard-S's access checks inserted before every load and store the program makes, shared and private (compute() is register work, never checked), at the Blizzard COW study's optimisation level (§4.1, Table 1): each level's per-load and per-store cost is built in; none for hardware access control; required on a software-DSM machine" },
    KeyDoc { key: "dsm.load_check_cycles", unit: "cycles", doc: "optional: replaces the instrumentation level's access check before every load (refused with instrumentation none)" },
    KeyDoc { key: "dsm.store_check_cycles", unit: "cycles", doc: "optional: replaces the instrumentation level's access check before every store (refused with instrumentation none)" },
    KeyDoc { key: "dsm.miss_trap_cycles", unit: "cycles", doc: "from a failed access check to the protocol handler sending its request" },
    KeyDoc { key: "dsm.upgrade_fault_cycles", unit: "cycles", doc: "extra when a write finds its block readable only (e.g. a page-protection fault and change)" },
    KeyDoc { key: "dsm.resume_cycles", unit: "cycles", doc: "from the reply handler to the faulting access resuming" },
    KeyDoc { key: "dsm.handler_cycles", unit: "cycles", doc: "body of one protocol handler (directory work)" },
    KeyDoc { key: "dsm.copy_bytes_per_cycle", unit: "bytes/cycle", doc: "copying a block into or out of a message, at each end" },
    KeyDoc { key: "dsm.tag_granule_bytes", unit: "bytes", doc: "granularity of access tags (a block is block_bytes / granule tags)" },
    KeyDoc { key: "dsm.tag_valid_cycles", unit: "cycles", doc: "making a block accessible (base)" },
    KeyDoc { key: "dsm.tag_valid_per_granule_cycles", unit: "cycles", doc: "making a block accessible, per tag granule" },
    KeyDoc { key: "dsm.tag_invalidate_cycles", unit: "cycles", doc: "making a block inaccessible (base; e.g. writing bad ECC)" },
    KeyDoc { key: "dsm.tag_invalidate_per_granule_cycles", unit: "cycles", doc: "making a block inaccessible, per tag granule" },
    KeyDoc {
        key: "hierarchy.outstanding_misses",
        unit: "misses",
        doc: "misses a processor may have in flight on its private references (timing-only, so non-blocking; e.g. the 21164's miss address file); one more stalls (memory_ni_wait). Shared loads and stores block. [hierarchy] absent: today's one-level model",
    },
    KeyDoc {
        key: "hierarchy.cache_bytes_per_cycle",
        unit: "bytes/cycle",
        doc: "bandwidth of the coherent cache (memory.*, the outermost cache) filling the inner levels; with a hierarchy memory.hit_cycles is an access the coherent cache serves",
    },
    KeyDoc { key: "hierarchy.l1.bytes", unit: "bytes", doc: "innermost cache level (inside the coherent cache, kept a subset of it)" },
    KeyDoc { key: "hierarchy.l1.line_bytes", unit: "bytes", doc: "its line (a power of two, at most the next level's)" },
    KeyDoc { key: "hierarchy.l1.associativity", unit: "ways", doc: "its associativity, LRU" },
    KeyDoc { key: "hierarchy.l1.hit_cycles", unit: "cycles", doc: "an access it serves (processor time; the issue slot of every access)" },
    KeyDoc { key: "hierarchy.l1.bytes_per_cycle", unit: "bytes/cycle", doc: "its bandwidth (unused for the innermost: nothing is filled from it)" },
    KeyDoc { key: "hierarchy.l2.bytes", unit: "bytes", doc: "a level between l1 and the coherent cache (needs l1)" },
    KeyDoc { key: "hierarchy.l2.line_bytes", unit: "bytes", doc: "its line (at least l1's, at most memory.line_bytes)" },
    KeyDoc { key: "hierarchy.l2.associativity", unit: "ways", doc: "its associativity, LRU" },
    KeyDoc { key: "hierarchy.l2.hit_cycles", unit: "cycles", doc: "latency of an access it serves (an l1 miss)" },
    KeyDoc { key: "hierarchy.l2.bytes_per_cycle", unit: "bytes/cycle", doc: "its bandwidth filling l1 (one l1 line occupies it line/bandwidth)" },
    KeyDoc { key: "hierarchy.dram.banks", unit: "banks", doc: "independent DRAM banks per node" },
    KeyDoc { key: "hierarchy.dram.interleave_bytes", unit: "bytes", doc: "consecutive blocks of this size go to consecutive banks" },
    KeyDoc {
        key: "hierarchy.dram.bank_busy_cycles",
        unit: "cycles",
        doc: "a bank is busy this long per access (strides that hit one bank wait for it); the latency is memory.local_miss_cycles",
    },
    KeyDoc { key: "hierarchy.dram.bytes_per_cycle", unit: "bytes/cycle", doc: "the node's memory bus: one line occupies it line/bandwidth" },
    KeyDoc {
        key: "hierarchy.dram.shared",
        unit: "true/false",
        doc: "one memory for all processors (a bus-based SMP): every processor's DRAM accesses share its banks and bus, granted first come first served in simulated time",
    },
    KeyDoc {
        key: "hierarchy.stream.buffers",
        unit: "streams",
        doc: "stream read-ahead buffers (T3D read-ahead, T3E stream buffers); a miss to the line after a recent miss starts one (LRU)",
    },
    KeyDoc { key: "hierarchy.stream.depth", unit: "lines", doc: "lines each stream fetches ahead (coherent-cache lines)" },
    KeyDoc { key: "hierarchy.stream.hit_cycles", unit: "cycles", doc: "latency of a coherent-cache miss a stream buffer serves" },
    KeyDoc {
        key: "hierarchy.write_buffer.entries",
        unit: "entries",
        doc: "with [hierarchy.write_buffer] private stores write through the innermost cache without allocating in it, into this many buffer entries (a store to a new block when all are taken stalls); each entry is written to the next level (write-allocate there) or, with no inner level, to the DRAM",
    },
    KeyDoc { key: "hierarchy.write_buffer.block_bytes", unit: "bytes", doc: "an entry: stores to the same aligned block merge into it" },
    KeyDoc {
        key: "hierarchy.page_bytes",
        unit: "bytes",
        doc: "pages the OS maps to arbitrary physical frames: a cache larger than a page picks a page's sets by a hash of its number (absent: line % sets)",
    },
    KeyDoc { key: "costs.*", unit: "cycles", doc: "named work costs applications charge (e.g. costs.iccg_edge)" },
    KeyDoc { key: "limits.max_events", unit: "events", doc: "a run that executes more events stops with an error" },
    KeyDoc {
        key: "limits.max_sim_time_ms",
        unit: "ms of simulated time",
        doc: "a run that simulates longer stops with an error",
    },
];

/// The documentation entry of a dotted key, if it is one.
pub fn key_doc(key: &str) -> Option<&'static KeyDoc> {
    if let Some(name) = key.strip_prefix("costs.") {
        if !name.is_empty() {
            return KEYS.iter().find(|k| k.key == "costs.*");
        }
    }
    KEYS.iter().find(|k| k.key == key)
}

/// All settable keys, comma separated, for error messages.
pub fn key_list() -> String {
    KEYS.iter().map(|k| k.key).collect::<Vec<_>>().join(", ")
}
