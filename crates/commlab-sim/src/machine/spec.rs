//! `MachineSpec`: the machine description as written in a TOML preset, before validation.
//!
//! **Every machine key is declared once, here**, on its field: `pub field: type = key(unit,
//! meaning)` with its bounds (`.positive()`, `.at_least(n)`) and how it converts to simulator
//! units ([`Conv`]). The [`keyed!`] macro turns each section into the serde struct and its
//! [`Field`] table; [`keys`] flattens them into the dotted keys from which come `--set` parsing
//! (the key's type and sign), the bounds [`super::MachineConfig::from_spec`] checks, the
//! per-key comments of `commlab machine show` and the documented TOML, the valid-key lists in
//! errors, and the names the CLI (`sweep --vary`, `plot`, `machine diff`) and Python use.
//! Adding a key is one field line in its section (and, if it changes the simulation, reading
//! it in `from_spec`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// What a key holds: its TOML type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A non-negative whole number.
    Whole,
    /// A finite non-negative number.
    Number,
    Bool,
    Text,
    /// An array of whole numbers (`network.dims`).
    List,
    /// A table of keys (a section).
    Section,
    /// A table of free-form names, each a whole number (`costs.*`).
    Map,
}

impl Kind {
    /// The type's name in TOML's words (as `toml::Value::type_str` gives it).
    pub fn type_str(self) -> &'static str {
        match self {
            Kind::Whole => "integer",
            Kind::Number => "float",
            Kind::Bool => "boolean",
            Kind::Text => "string",
            Kind::List => "array",
            Kind::Section | Kind::Map => "table",
        }
    }
}

/// The range a key's value must lie in, beyond its type (checked by `from_spec`, in the same
/// words as `--set`'s). Ranges that depend on other keys are checked in `from_spec` itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Any value of the type (every number is non-negative).
    Any,
    /// Greater than zero (and finite).
    Positive,
    /// A whole number of at least this.
    AtLeast(u64),
}

/// How a key's value becomes simulator units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// Used as it is: a count, a size, a flag, a word.
    Plain,
    /// Processor cycles: picoseconds are `cycles x 1e6 / processor.clock_mhz`.
    Cycles,
    /// A send or receive overhead in cycles: multiplied by `messaging.overhead_scale` (and
    /// rounded) first.
    Overhead,
    /// Nanoseconds: picoseconds are `ns x 1000`, rounded.
    Ns,
    /// The clock: a cycle is `1e6 / MHz` picoseconds.
    Mhz,
    /// Milliseconds of simulated time: `ms x 1e9` picoseconds.
    Ms,
    /// Link bandwidth: `1000 / (bytes/ns)` picoseconds per byte.
    BytesPerNs,
    /// A bandwidth in bytes per processor cycle: `cycle_ps / value` picoseconds per byte.
    BytesPerCycle,
}

/// A key's declaration: unit, meaning, bound and conversion.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub unit: &'static str,
    pub doc: &'static str,
    /// The meaning in a section's second place (`hierarchy.l2` for `LevelSpec`'s keys), if it
    /// differs from the first (`hierarchy.l1`).
    pub second_doc: Option<&'static str>,
    pub bound: Bound,
    pub conv: Conv,
    /// For a section field: which of its keys' meanings apply (0 first, 1 second).
    pub place: usize,
}

/// A key with this unit and meaning, used as it is.
pub const fn key(unit: &'static str, doc: &'static str) -> Key {
    Key { unit, doc, second_doc: None, bound: Bound::Any, conv: Conv::Plain, place: 0 }
}

/// A key in processor cycles.
pub const fn cycles(doc: &'static str) -> Key {
    key("cycles", doc).conv(Conv::Cycles)
}

/// A key in nanoseconds.
pub const fn ns(doc: &'static str) -> Key {
    key("ns", doc).conv(Conv::Ns)
}

/// A field that is a section of keys.
pub const fn section() -> Key {
    key("", "")
}

impl Key {
    pub const fn conv(self, conv: Conv) -> Key {
        Key { conv, ..self }
    }
    pub const fn positive(self) -> Key {
        Key { bound: Bound::Positive, ..self }
    }
    pub const fn at_least(self, min: u64) -> Key {
        Key { bound: Bound::AtLeast(min), ..self }
    }
    /// A send or receive overhead (scaled by `messaging.overhead_scale`).
    pub const fn overhead(self) -> Key {
        self.conv(Conv::Overhead)
    }
    /// The meaning in the section's second place.
    pub const fn or(self, doc: &'static str) -> Key {
        Key { second_doc: Some(doc), ..self }
    }
    /// A section field in its type's second place.
    pub const fn second(self) -> Key {
        Key { place: 1, ..self }
    }
}

/// One field of a section: its name, TOML type and declaration.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    /// A section's own fields (empty for a key).
    pub fields: &'static [Field],
    pub key: Key,
}

/// The TOML type of a field's Rust type (and, for a section, its fields).
pub trait KeyType {
    const KIND: Kind;
    const FIELDS: &'static [Field] = &[];
}

macro_rules! key_type {
    ($kind:ident: $($t:ty),*) => { $(impl KeyType for $t { const KIND: Kind = Kind::$kind; })* };
}
key_type!(Whole: u64, u32, usize);
key_type!(Number: f64);
key_type!(Bool: bool);
key_type!(Text: String);
key_type!(List: Vec<usize>);
key_type!(Map: BTreeMap<String, u64>);

impl<T: KeyType> KeyType for Option<T> {
    const KIND: Kind = T::KIND;
    const FIELDS: &'static [Field] = T::FIELDS;
}

/// A section of the machine description: the struct as written, each field followed by
/// `= ` its key's declaration; gives the struct (without the declarations) and its
/// [`KeyType`] with the [`Field`] table.
macro_rules! keyed {
    (
        $(#[$sm:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* pub $f:ident : $t:ty = $key:expr ),* $(,)?
        }
    ) => {
        $(#[$sm])*
        pub struct $name {
            $( $(#[$fm])* pub $f: $t, )*
        }
        impl KeyType for $name {
            const KIND: Kind = Kind::Section;
            const FIELDS: &'static [Field] = &[
                $( Field { name: stringify!($f), kind: <$t as KeyType>::KIND, fields: <$t as KeyType>::FIELDS, key: $key }, )*
            ];
        }
    };
}

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String = key("text", "preset name"),
    pub summary: String = key("text", "one-line description"),
    pub processor: ProcessorSpec = section(),
    pub network: NetworkSpec = section(),
    pub cross_traffic: CrossTrafficSpec = section(),
    pub messaging: MessagingSpec = section(),
    pub memory: MemorySpec = section(),
    /// Software fine-grain DSM costs (required when `memory.model = "software"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsm: Option<DsmSpec> = section(),
    /// The memory hierarchy below each processor, true to bandwidth (opt-in: absent, a
    /// machine has today's one-level model and its TOML, fingerprint and results are unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hierarchy: Option<HierarchySpec> = section(),
    /// One-sided remote memory access (get/put); absent: the machine has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteSpec> = section(),
    /// The node's processors (`[node]`); absent: one processor per node, as every preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeSpec> = section(),
    #[serde(default)]
    pub costs: BTreeMap<String, u64> = cycles("named work costs applications charge (e.g. costs.iccg_edge)"),
    pub limits: LimitsSpec = section(),
    /// How the simulator orders what it simulates (`[simulation]`), not a machine property;
    /// absent: the reference settings, and the machine's TOML and fingerprint are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<SimulationSpec> = section(),
}
}

keyed! {
/// Settings of the simulation itself (`[simulation]`), not of the machine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// The order of events due at the same picosecond and priority. Absent means `key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie_order: Option<String> = key("creation|key", "how the simulator runs, not a machine property: the order of events due at the same picosecond \
              and priority; `creation` (the order results were computed in before `key` became the default) runs them in the order they were \
              scheduled; `key` (default) by the event's kind, then the identity of what it concerns (packet, message, link, processor, \
              each packet and message numbered by its source in its own order), which does not depend on when the event was \
              scheduled (exact with network.model = \"fold\" too); results differ slightly between the two, as with any \
              different tie order"),
}
}

keyed! {
/// The memory hierarchy (`[hierarchy]`): cache levels inside the coherent cache
/// (`memory.cache_bytes`, the outermost cache, the one the protocol keeps coherent), a banked
/// DRAM, optional stream read-ahead, and how many misses a processor may have outstanding.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HierarchySpec {
    pub outstanding_misses: u64 = key("misses", "misses a processor may have in flight on its private references (timing-only, so non-blocking; e.g. the 21164's miss address file); one more stalls (memory_ni_wait). Shared loads and stores block. [hierarchy] absent: today's one-level model").at_least(1),
    /// Stall on use: a read's data is needed before the read this many reads later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loads_before_use: Option<u64> = key("reads", "optional: stall on use (in-order processors): a private read's data must have arrived before the read this many reads later issues (the loop's loads issued ahead of their uses: its unrolling); absent or 0: reads run ahead until a miss slot is needed"),
    /// Bandwidth of the coherent cache toward the inner levels.
    pub cache_bytes_per_cycle: f64 = key("bytes/cycle", "bandwidth of the coherent cache (memory.*, the outermost cache) filling the inner levels; with a hierarchy memory.hit_cycles is an access the coherent cache serves").conv(Conv::BytesPerCycle).positive(),
    /// The innermost level (first looked in), if the coherent cache is not the innermost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1: Option<LevelSpec> = section(),
    /// A level between `l1` and the coherent cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2: Option<LevelSpec> = section().second(),
    pub dram: DramSpec = section(),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamSpec> = section(),
    /// Stores write through the innermost cache without allocating in it, merged in a write
    /// buffer (`[hierarchy.write_buffer]`); absent: a store is timed as a load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_buffer: Option<WriteBufferSpec> = section(),
    /// The OS places virtual pages of this size at arbitrary physical frames: a cache larger
    /// than a page indexes by a hash of the page (absent: by the address, `line % sets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bytes: Option<u64> = key("bytes", "pages the OS maps to arbitrary physical frames: a cache larger than a page picks a page's sets by a hash of its number (absent: line % sets)"),
}
}

keyed! {
/// A merging write buffer between the innermost cache (write-through, no write-allocate) and
/// the next level (`[hierarchy.write_buffer]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WriteBufferSpec {
    pub entries: u64 = key("entries", "with [hierarchy.write_buffer] private stores write through the innermost cache without allocating in it, into this many buffer entries (a store to a new block when all are taken stalls); each entry is written to the next level (write-allocate there) or, with no inner level, to the DRAM").at_least(1),
    pub block_bytes: u64 = key("bytes", "an entry: stores to the same aligned block merge into it"),
}
}

keyed! {
/// One cache level inside the coherent cache (`[hierarchy.l1]`, `[hierarchy.l2]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LevelSpec {
    pub bytes: u64 = key("bytes", "innermost cache level (inside the coherent cache, kept a subset of it)")
        .or("a level between l1 and the coherent cache (needs l1)"),
    pub line_bytes: u64 = key("bytes", "its line (a power of two, at most the next level's)")
        .or("its line (at least l1's, at most memory.line_bytes)"),
    pub associativity: u64 = key("ways", "its associativity, LRU").at_least(1),
    pub hit_cycles: u64 = cycles("an access it serves (processor time; the issue slot of every access)")
        .or("latency of an access it serves (an l1 miss)"),
    pub bytes_per_cycle: f64 = key("bytes/cycle", "its bandwidth (unused for the innermost: nothing is filled from it)").conv(Conv::BytesPerCycle)
        .or("its bandwidth filling l1 (one l1 line occupies it line/bandwidth)").positive(),
}
}

keyed! {
/// Each node's DRAM (`[hierarchy.dram]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    pub banks: u64 = key("banks", "independent DRAM banks per node").at_least(1),
    pub interleave_bytes: u64 = key("bytes", "consecutive blocks of this size go to consecutive banks"),
    pub bank_busy_cycles: u64 = cycles("a bank is busy this long per access, the processor's misses and write-backs and each line a one-sided request reads or writes here (strides that hit one bank wait for it); the latency is memory.local_miss_cycles"),
    pub bytes_per_cycle: f64 = key("bytes/cycle", "the node's memory bus: one line occupies it line/bandwidth").conv(Conv::BytesPerCycle).positive(),
    /// One memory for all processors (a bus-based SMP's memory modules on the system bus):
    /// its banks and bus are shared. Absent or false: each node has its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool = key("true/false", "one memory for all processors (a bus-based SMP): every processor's DRAM accesses share its banks and bus, granted first come first served in simulated time"),
    /// With `shared`: the coherence protocol's data transfers hold the same bus (one system
    /// bus for every transfer). Absent or false: they cross the network only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bus_coherent: bool = key("true/false", "with shared: every data transfer of the coherence protocol (a line to a cache or back to memory) also holds the memory's bus for the line's transfer time, first come first served with the DRAM's own transfers, so a line waits while another transfer holds the bus"),
}
}

keyed! {
/// Stream read-ahead between the DRAM and the coherent cache (`[hierarchy.stream]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    pub buffers: u64 = key("streams", "stream read-ahead buffers (T3D read-ahead, T3E stream buffers); a miss to the line after a recent miss starts one (LRU)").at_least(1),
    pub depth: u64 = key("lines", "lines each stream fetches ahead (coherent-cache lines)").at_least(1),
    pub hit_cycles: u64 = cycles("latency of a coherent-cache miss a stream buffer serves"),
}
}

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProcessorSpec {
    pub clock_mhz: f64 = key("MHz", "processor clock; the network is timed independently in ns").conv(Conv::Mhz).positive(),
}
}

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub topology: String = key("mesh|torus|fat-tree|hypercube|ring|crossbar", "network topology"),
    #[serde(default)]
    pub dims: Vec<usize> = key("routers per dimension", "mesh [x, y] or torus [k0, k1, ...]; x is the longest and is the bisection cut"),
    #[serde(default = "default_arity")]
    pub arity: usize = key("ports", "fat-tree switch arity (children per switch)"),
    #[serde(default)]
    pub nprocs: usize = key("processors", "processor count for fat-tree, hypercube, ring and crossbar"),
    #[serde(default)]
    pub io_nodes: bool = key("bool", "mesh only: one I/O node per row on both x edges (sources of cross-traffic)"),
    #[serde(default = "default_procs_per_router")]
    pub procs_per_router: usize = key("processors", "torus only: processors sharing each router and its links (consecutive ids; the Cray T3D's two per node); dims counts routers"),
    pub link_bytes_per_ns: f64 = key("bytes/ns", "bandwidth of every link, per direction").conv(Conv::BytesPerNs).positive(),
    pub router_latency_ns: f64 = ns("latency of one router-to-router hop"),
    pub ni_latency_ns: f64 = ns("latency of the injection link and of the ejection link, each"),
    pub header_bytes: u64 = key("bytes", "header carried by every packet"),
    pub max_packet_payload_bytes: u64 = key("bytes", "largest payload per packet; longer messages are split").at_least(8),
    pub ni_input_queue_packets: u32 = key("packets", "NI input queue; when full, arriving packets wait in the network holding their link").at_least(1),
    pub ni_output_queue_packets: u32 = key("packets", "NI output queue; a sender whose queue is full stalls (memory_ni_wait)").at_least(1),
    /// How the simulator drives the network (`hop` or `fold`); not part of the machine's
    /// timing, which both give identically. Absent means `fold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String> = key("fold|hop", "how the simulator runs the network, not a machine property: `hop` (the reference) \
              schedules every hop through the event queue; `fold` (default), under the key tie order, runs a \
              packet's hops ahead of their time where nothing due in between can touch their links, which gives \
              identical cycles, statistics and event order with fewer events (the run's `events` and \
              `limits.max_events` count queued events; a hop run ahead is not one)"),
}
}

fn default_arity() -> usize {
    4
}

fn default_procs_per_router() -> usize {
    1
}

fn default_model() -> String {
    "hardware".to_string()
}

keyed! {
/// Software fine-grain distributed shared memory (Blizzard): access checks on every shared
/// reference, and protocol handlers that exchange active messages.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DsmSpec {
    pub handlers: String = key("compute|protocol-processor", "where the default protocol's handlers run on a one-processor node: on its compute processor (stealing its time) or a dedicated protocol processor (the program's handlers stay on the compute processor); an SMP node (node.procs_per_node = 2) runs every handler on its second processor, whatever this says"),
    /// Blizzard-S's inserted access checks (`none`, `no-opt`, `cc-reg`, `slice`, `sentinel`):
    /// required; the level gives the per-reference check costs (`machine::Instrumentation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrumentation: Option<String> = key("none|no-opt|cc-reg|slice|sentinel", "Blizzard-S's access checks inserted before every load and store the program makes, shared and private (compute() is register work, never checked), at the Blizzard COW study's optimisation level (§4.1, Table 1): each level's per-load and per-store cost is built in; none for hardware access control; required on a software-DSM machine"),
    /// Optional overrides of the level's per-load and per-store check costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_check_cycles: Option<u64> = cycles("optional: replaces the instrumentation level's access check before every load (refused with instrumentation none)"),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_check_cycles: Option<u64> = cycles("optional: replaces the instrumentation level's access check before every store (refused with instrumentation none)"),
    pub miss_trap_cycles: u64 = cycles("from a failed access check to the protocol handler sending its request"),
    pub upgrade_fault_cycles: u64 = cycles("extra when a write finds its block readable only (e.g. a page-protection fault and change)"),
    pub resume_cycles: u64 = cycles("from the reply handler to the faulting access resuming"),
    pub handler_cycles: u64 = cycles("body of one protocol handler (directory work)"),
    pub copy_bytes_per_cycle: f64 = key("bytes/cycle", "copying a block into or out of a message, at each end").conv(Conv::BytesPerCycle).positive(),
    pub tag_granule_bytes: u64 = key("bytes", "granularity of access tags (a block is block_bytes / granule tags)"),
    pub tag_valid_cycles: u64 = cycles("making a block accessible (base)"),
    pub tag_valid_per_granule_cycles: u64 = cycles("making a block accessible, per tag granule"),
    pub tag_invalidate_cycles: u64 = cycles("making a block inaccessible (base; e.g. writing bad ECC)"),
    pub tag_invalidate_per_granule_cycles: u64 = cycles("making a block inaccessible, per tag granule"),
    /// Blizzard-E: the rest of making a block invalid by bad ECC (optional, 0 if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc_stop_cycles: Option<u64> = cycles("optional: added to every tag invalidation (base part): on Blizzard-E the part of setting bad ECC from a protocol handler beyond the ioctl's own time (§7.2: every other bus master of the node stops while the memory controller writes it); absent: 0"),
    /// Blizzard-E: read-only access control by virtual-memory page protection (all four or none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bytes: Option<u64> = key("bytes", "optional (Blizzard-E): the page whose protection enforces read-only blocks; per node a page is read-only while any block on it is read-only there, else read-write (absent: no page protection, the tags alone; then also absent: protect_cycles, protect_saving_cycles, emulated_write_cycles)"),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_cycles: Option<u64> = cycles("with page_bytes: changing a page's protection (mprotect), charged only when a node's page actually changes"),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_saving_cycles: Option<u64> = cycles("with page_bytes: what invalidating a block and changing its page's protection in one call saves over two calls"),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated_write_cycles: Option<u64> = cycles("with page_bytes: a store to a writable block on a read-only page, trapped and performed by the kernel"),
}
}

keyed! {
/// The processors of a node (`[node]`). With two, the second is a protocol processor: it runs
/// the node's dispatch loop (every message handler, the default protocol's and the program's),
/// and the compute processor is never interrupted by them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    #[serde(default = "one")]
    pub procs_per_node: u64 = key("1|2", "processors per node; 2: an SMP node whose second processor runs the protocol dispatch loop (every message handler, polled, never interrupting the compute processor; a block-access fault still runs on the processor that took it). Absent: 1"),
    /// A lock both processors of an SMP node take around each access-tag change (software DSM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_lock_cycles: Option<u64> = cycles("on an SMP node of a software-DSM machine: the lock both processors take around each access-tag change (acquire and release), added to every tag change; required there; inert on one-processor nodes"),
}
}

fn one() -> u64 {
    1
}

keyed! {
/// One-sided remote memory access, SHMEM-like get and put (the T3D's remote loads and stores
/// through its prefetch queue, the T3E's E-registers): requests go to the memory that holds the
/// data and are served there without its processor and without coherence.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RemoteSpec {
    pub issue_cycles: u64 = cycles("processor time to issue one get or put request (a section absent: no one-sided access)"),
    pub max_outstanding_words: u64 = key("words", "words of get/put requests a processor may have in flight (the T3D's prefetch queue, the T3E's E-registers); a request needing more waits").at_least(1),
    pub words_per_request: u64 = key("words", "most 64-bit words one request moves (a vector get/put); a transfer is split into requests of this many").at_least(1),
    pub request_bytes: u64 = key("bytes", "a request's addresses (base, stride or list) on the wire, beyond the packet header"),
    pub service_cycles: u64 = cycles("the target memory's latency to take a request (overlapped with the previous request's transfer)"),
    pub service_line_cycles: u64 = cycles("the target memory's occupancy per distinct line a request's words are in (strided requests open more); requests occupy it one after another"),
    pub service_word_cycles: u64 = cycles("the target memory's occupancy per word of a request"),
    /// Injection and ejection latency of one-sided packets instead of `network.ni_latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ni_latency_cycles: Option<u64> = cycles("optional: injection and ejection latency of one-sided packets (their own interface) instead of network.ni_latency_ns"),
    /// Processor time per word of a get beyond `issue_cycles` (the T3D's pop and local store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_word_cycles: Option<u64> = cycles("optional: processor time per word of a get beyond issue_cycles (the T3D pops each word off its prefetch queue with an off-chip load and stores it locally); absent: 0, the data lands in memory without the processor"),
    /// Puts leave through the processor's write buffer, merged in blocks of this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put_block_bytes: Option<u64> = key("bytes", "optional: puts are the processor's stores through its write buffer: issue_cycles per word, and consecutive words in one aligned block of this many bytes leave as one request (strided words one each); absent: issue_cycles per request of up to words_per_request words"),
}
}

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CrossTrafficSpec {
    pub rate_bytes_per_cycle: f64 = key("bytes/processor cycle", "total cross-traffic the I/O nodes send across the bisection (0 = off)"),
    pub message_bytes: u64 = key("bytes", "size of one cross-traffic message, header included"),
    /// How cross-traffic waits for a link: `fifo` (in arrival order with the application's
    /// packets, the default) or `priority` (ahead of them). Always written out.
    #[serde(default = "default_arbitration")]
    pub arbitration: String = key("fifo|priority", "how a cross-traffic packet waits for a link: `fifo` (default) in arrival order with the application's packets, as real I/O nodes' packets do (it may get less than its rate: counters.cross_traffic_bytes_per_cycle says what it got; an I/O node's NI output queue holds network.ni_output_queue_packets and its sender waits while it is full); `priority` ahead of every waiting application packet, so it takes its configured rate (an I/O node's output queue is unbounded)"),
}
}

fn default_arbitration() -> String {
    "fifo".to_string()
}

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MessagingSpec {
    pub send_overhead_cycles: u64 = cycles("describe + launch of a message with no arguments").overhead(),
    pub send_per_arg_word_cycles: u64 = cycles("extra send cost per 32-bit argument word").overhead(),
    pub max_arg_words: u64 = key("32-bit words", "active-message argument cap (a u64 argument is two words)").at_least(2),
    pub interrupt_entry_cycles: u64 = cycles("from message arrival to handler entry when receiving by interrupt").overhead(),
    pub interrupt_exit_cycles: u64 = cycles("from handler return to resuming the interrupted thread").overhead(),
    /// Reading one 32-bit argument word of an arrived message (0 where reading the arguments
    /// is part of entry or dispatch; left out of the TOML when 0, so older machines keep their
    /// fingerprints).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub receive_per_arg_word_cycles: u64 = cycles("a handler reading one 32-bit argument word of its message (e.g. through an NI window); default 0: reading is part of entry or dispatch").overhead(),
    /// Polls at loop back-edges: cycles of computation between two (0, left out of the TOML:
    /// none, messages interrupt).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub backedge_interval_cycles: u64 = cycles("polling at loop back-edges, as executable editing inserts it: the program's computation passes a back-edge every this many cycles, each a poll (messaging.poll_cycles when it finds nothing, charged as message overhead); a message that would interrupt (either receive mode, or a software-DSM handler on the compute processor) waits for the next back-edge instead and is dispatched there (messaging.poll_dispatch_cycles, no interrupt entry or exit), one per back-edge; a waiting processor takes it at once, polled; 0 or absent: interrupts"),
    /// A software look for a waiting message on every operation in interrupt receive mode (0,
    /// left out of the TOML: machines whose interrupts are hardware pay nothing per operation).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupt_look_cycles: u64 = cycles("what every operation of a processor's main thread (a load, store, private reference, compute or message_work call, send, barrier, one-sided request) costs while it receives by interrupt: a look in software for a waiting message where no hardware interrupts (the native backend's stand-in for one; `characterize --emit-machine` measures it); charged as the operation's own time; default 0").overhead(),
    pub poll_cycles: u64 = cycles("one poll of the NI, whether or not a message waits (an explicit poll(), or a failed poll at a loop back-edge)").overhead(),
    pub poll_dispatch_cycles: u64 = cycles("dispatch of one polled message to its handler").overhead(),
    /// How an SMP node's protocol processor polls for messages (the Blizzard COW study's four
    /// techniques, §6.4; `machine::PollMechanism`): absent or `none`, today's generic poll.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_mechanism: Option<String> = key("none|lanai|dma|interrupt|typhoon0", "on an SMP node (node.procs_per_node = 2): how the protocol processor's dispatch loop polls for messages, as the Blizzard COW study's four techniques (§6.4, Table 2), each with its built-in costs: lanai polls the NI's receive queue head (an uncached access across the I/O bridge, 0.38 us a poll, which also slows the DMA of bulk data); dma and interrupt poll a cachable flag the NI sets by a one-word DMA (4 us) or through an interrupted processor (14 us), only for the first message of a burst; typhoon0 polls a cachable status register (1.3 us a message); every message the protocol processor takes (the program's and the default protocol's) waits for its poll, then pays messaging.poll_receive_cycles, and a compute thread waiting on a condition a protocol handler satisfies is notified at the mechanism's cost; needs messaging.poll_receive_cycles; absent or none: handlers start as soon as the protocol processor is free, at messaging.poll_dispatch_cycles; inert on one-processor nodes"),
    /// With a poll mechanism: the protocol thread's receive path after its poll sees a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_receive_cycles: Option<u64> = cycles("with messaging.poll_mechanism: the protocol thread's receive path after the poll that sees a message (reading it out of the NI's receive queue, locking the shared network structures, dispatch to its handler), instead of messaging.poll_dispatch_cycles; required with a mechanism").overhead(),
    /// Optional override of the technique's successful poll (what-if runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_seen_cycles: Option<u64> = cycles("optional, with messaging.poll_mechanism: replaces the technique's built-in cost of the poll that sees a message (for dma and interrupt, the first of a burst; for typhoon0 every message's miss and handshake); what-if runs; without a mechanism it does nothing").overhead(),
    pub dma_setup_cycles: u64 = cycles("extra send cost of a bulk (DMA) message"),
    pub dma_per_region_cycles: u64 = cycles("extra send cost per (address, length) region"),
    pub dma_bytes_per_cycle: f64 = key("bytes/cycle", "DMA engine rate reading the sender's memory").conv(Conv::BytesPerCycle).positive(),
    pub dma_align_bytes: u64 = key("bytes", "each DMA region is padded to a multiple of this (power of two, >= 8)"),
    pub barrier_arity: u64 = key("children", "fan-in of the message combining-tree barrier (a processor waiting in it receives by polling, unless messaging.barrier_wait_interrupts)").at_least(2),
    /// The body of the message barrier's handler, an arrival (count and compare) or a wakeup,
    /// on top of its entry and argument reads (0, left out of the TOML: free).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub barrier_handler_cycles: u64 = cycles("the body of the message barrier's handler (an arrival: count and compare; a wakeup: release the waiting thread), on top of entry and argument reads; default 0"),
    /// A processor waiting in the message barrier takes its messages by interrupt, as anywhere
    /// else (false, left out of the TOML: it polls, at `poll_dispatch_cycles`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub barrier_wait_interrupts: bool = key("true|false", "a processor waiting in the message barrier takes its messages by interrupt (entry and exit), as it would anywhere else; default false: it polls (messaging.poll_dispatch_cycles)"),
    /// Overhead-experiment knob: multiplies every send and receive overhead above.
    #[serde(default = "default_scale")]
    pub overhead_scale: f64 = key("factor", "multiplies send, per-argument (sent and received), interrupt entry/exit and look, poll and poll-dispatch costs, and the network overflow trap's costs (overhead experiments; 1 on real machines)").positive(),
    /// Credit-based flow control: messages one processor may have unacknowledged at another
    /// (0, the default and left out of the TOML: off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_window_messages: u64 = key("messages", "credit-based flow control: application messages a processor may have unacknowledged at one destination; a full window waits for credit, or (handlers, or a sender itself holding a window of unacknowledged receipts) buffers in a software queue; default 0: off"),
    /// Flow control: copying a message into the sender's software queue (left out when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flow_buffer_cycles: u64 = cycles("flow control: copying one message into the sender's software queue (it pays its send overhead again when injected); default 0"),
    /// The network overflow trap (Alewife): how long a node's NI input queue must stay full with
    /// packets waiting for its ejection link before its processor traps (0, left out of the
    /// TOML: never). The trap's costs below are required when it is on, ignored when off.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub overflow_timeout_cycles: u64 = cycles("the network overflow trap (Alewife): a processor node whose NI input queue is full while a packet waits for its ejection link, continuously this long, takes the trap on its processor (an interrupt in either receive mode, after any running handler): it copies every program message waiting in its NI input queue, and those that arrive meanwhile, into a buffer in memory, freeing their slots, then the buffered messages are handled in arrival order at messaging.overflow_dispatch_cycles each; default 0: no trap. The next five keys are required when it is on"),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_trap_entry_cycles: Option<u64> = cycles("network overflow trap: from the trap to the first copy").overhead(),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_drain_per_message_cycles: Option<u64> = cycles("network overflow trap: copying one message out of the NI input queue into the buffer, besides its words (its NI slot is freed when the copy ends)").overhead(),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_drain_per_word_cycles: Option<u64> = cycles("network overflow trap: copying one 32-bit argument or payload word").overhead(),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_trap_exit_cycles: Option<u64> = cycles("network overflow trap: from the last copy to resuming the interrupted work").overhead(),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_dispatch_cycles: Option<u64> = cycles("network overflow trap: dispatching one buffered message to its handler from memory (instead of interrupt entry and exit, or poll dispatch)").overhead(),
}
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

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    #[serde(default = "default_model")]
    pub model: String = key("hardware|software", "coherence in hardware (directory controller) or in software (Blizzard-style fine-grain DSM, see [dsm])"),
    pub line_bytes: u64 = key("bytes", "cache line (coherence unit), a power of two >= 8"),
    pub cache_bytes: u64 = key("bytes", "per-processor cache size"),
    pub associativity: u64 = key("ways", "cache associativity (1 = direct-mapped), LRU replacement").at_least(1),
    pub hit_cycles: u64 = cycles("a load or store that hits in the cache (counted as compute)"),
    pub local_miss_cycles: u64 = cycles("miss served by the local memory with no other cache involved"),
    pub miss_issue_cycles: u64 = cycles("from a remote miss to its request leaving the node"),
    pub fill_cycles: u64 = cycles("from data arriving to the processor resuming"),
    pub dir_cycles: u64 = cycles("home directory lookup + memory access for a request"),
    pub dir_occupancy_cycles: u64 = cycles("home controller busy per request (requests queue behind it)"),
    pub home_cache_cycles: u64 = cycles("extra to take a dirty line from the home node's own cache"),
    pub owner_cycles: u64 = cycles("a cache answering a forward or an invalidation"),
    pub forward_reply_cycles: u64 = cycles("home turning an owner's data into the reply"),
    pub inv_send_cycles: u64 = cycles("home sending one invalidation (invalidations go out one after another)"),
    pub ack_cycles: u64 = cycles("home processing one invalidation ack"),
    pub hw_pointers: u64 = key("sharers", "remote sharers the directory tracks in hardware (the home's own copy is a separate local bit); the next one traps once to software, which empties the pointers into a list in memory (LimitLESS)").at_least(1),
    pub sw_read_cycles: u64 = cycles("body of the LimitLESS trap handler for a read that finds the pointers full (the home processor also pays interrupt entry and exit)"),
    pub sw_write_cycles: u64 = cycles("body of the LimitLESS trap handler for a write to a line whose sharers overflowed to software (it invalidates them)"),
    pub rmw_cycles: u64 = cycles("the read-modify-write of fetch_add / compare_swap once the line is owned"),
    pub lock_overhead_cycles: u64 = cycles("instructions of one lock acquire + release besides its memory accesses"),
    pub prefetch_buffer_entries: u64 = key("lines", "outstanding prefetches per processor; one more stalls (memory_ni_wait)").at_least(1),
    pub prefetch_issue_cycles: u64 = cycles("issuing one prefetch"),
    pub max_run_ahead_cycles: u64 = cycles("cache hits accumulate locally (no events) up to this much time before the processor syncs"),
    /// Fan-in of the shared-memory combining-tree barrier (its own shape: the best
    /// shared-memory and message barriers differ).
    #[serde(default = "default_sm_barrier_arity")]
    pub barrier_arity: u64 = key("children", "fan-in of the shared-memory combining-tree barrier (counters and flags homed at their processors); default 2").at_least(2),
    /// Latency-emulation knob: extra cycles before every remote miss's request leaves.
    #[serde(default)]
    pub remote_miss_delay_cycles: u64 = cycles("fixed delay added to every remote miss (latency emulation; 0 on real machines)"),
    /// A snooping bus: a dirty owner is asked as the memory starts its read, and supplies the
    /// line when both are done (false, the default, and absent from the TOML: a directory that
    /// forwards after its memory access).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snooping: bool = key("bool", "a snooping bus instead of a directory (default false): a request reaches the owning cache as it reaches memory, so a dirty owner is asked at once, in parallel with the memory's read (dir_cycles, or local_miss_cycles for the home's own miss), and the data leaves when both are done; the memory's copy is not used. Hardware coherence only"),
}
}

keyed! {
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    pub max_events: u64 = key("events", "a run that handles more events (queued events; see network.model) stops with an error").at_least(1),
    pub max_sim_time_ms: f64 = key("ms of simulated time", "a run that simulates longer stops with an error").conv(Conv::Ms).positive(),
}
}

/// One machine key as the CLI and Python name it: dotted path, TOML type, unit, meaning,
/// bound and conversion (`costs.*` stands for every `costs.NAME`).
#[derive(Debug)]
pub struct KeyDoc {
    pub key: &'static str,
    pub kind: Kind,
    pub unit: &'static str,
    pub doc: &'static str,
    pub bound: Bound,
    pub conv: Conv,
}

static KEYS: LazyLock<Vec<KeyDoc>> = LazyLock::new(|| {
    let mut out = Vec::new();
    flatten("", MachineSpec::FIELDS, 0, &mut out);
    out
});

fn flatten(prefix: &str, fields: &'static [Field], place: usize, out: &mut Vec<KeyDoc>) {
    for f in fields {
        let path = if prefix.is_empty() { f.name.to_string() } else { format!("{prefix}.{}", f.name) };
        let k = &f.key;
        let (path, kind) = match f.kind {
            Kind::Section => {
                flatten(&path, f.fields, k.place, out);
                continue;
            }
            Kind::Map => (format!("{path}.*"), Kind::Whole),
            kind => (path, kind),
        };
        let doc = if place == 1 { k.second_doc.unwrap_or(k.doc) } else { k.doc };
        let key = Box::leak(path.into_boxed_str());
        out.push(KeyDoc { key, kind, unit: k.unit, doc, bound: k.bound, conv: k.conv });
    }
}

/// Every machine key, in the order of the machine TOML (sections in order, each section's keys
/// in order).
pub fn keys() -> &'static [KeyDoc] {
    &KEYS
}

/// The declaration of a dotted key, if it is one (`costs.NAME` gives `costs.*`'s).
pub fn key_doc(key: &str) -> Option<&'static KeyDoc> {
    if let Some(name) = key.strip_prefix("costs.") {
        if !name.is_empty() {
            return keys().iter().find(|k| k.key == "costs.*");
        }
    }
    keys().iter().find(|k| k.key == key)
}

/// All settable keys, comma separated, for error messages.
pub fn key_list() -> String {
    keys().iter().map(|k| k.key).collect::<Vec<_>>().join(", ")
}
