//! Machine configuration: TOML presets, `--set` overrides, `--procs` resizing and validation
//! into a checked [`MachineConfig`] whose fields are in the simulator's units (picoseconds).
//!
//! Flow: preset text ─parse─▶ `toml::Table` ─`--set`─▶ table ─deserialize─▶ [`MachineSpec`]
//! ─`--procs`─▶ spec ─[`MachineConfig::from_spec`]─▶ checked config. Every error names the key.
//!
//! The keys themselves are declared once, in `spec.rs` (its module documentation says what comes
//! from that table). [`MachineConfig::from_spec`] is the one place machine keys are converted:
//! network times to picoseconds, [`MessagingCosts`] in cycles (`*_cycles`, the send and receive
//! overheads scaled by `messaging.overhead_scale`), [`MemoryConfig`] (geometry, and every latency
//! in `*_ps`), [`Coherence`]`::{Hardware, Software(DsmCosts)}` with [`DsmHandlers`] an enum, and
//! [`MachineConfig::cost_cycles`] for the applications' `[costs]` entries. It checks the table's
//! bounds (`check_bounds`) and that no implied time (a latency, a cost in cycles as scaled, the
//! largest packet's serialization or DMA, a DSM block copy) outlasts `limits.max_sim_time_ms`
//! (`check_times_fit`, naming the key and the largest accepted value), so no conversion to
//! picoseconds saturates, overflows or silently becomes zero. [`PRESETS`] embeds `machines/*.toml`;
//! [`MachineConfig::fingerprint`] (FNV-1a of the resolved machine's TOML) is what results records
//! carry. `poll.rs` holds the polling techniques' cost tables; [`Instrumentation`] the Blizzard COW
//! study's access-check levels.

mod poll;
mod spec;

pub use poll::{PollCosts, PollMechanism, PollTable};

pub use spec::{
    key_doc, key_list, keys, Bound, Conv, DramSpec, DsmSpec, HierarchySpec, KeyDoc, Kind, LevelSpec, MachineSpec,
    MemorySpec, StreamSpec,
};

use crate::topology::{resize, Topology, TopologyKind};
use commlab_api::BarrierKind;
use std::fmt;

/// Presets shipped with commlab (the files in `machines/`), compiled into the binary.
pub const PRESETS: &[(&str, &str)] = &[
    ("alewife", include_str!("../../../../machines/alewife.toml")),
    ("alewife-sim", include_str!("../../../../machines/alewife-sim.toml")),
    ("blizzard-s", include_str!("../../../../machines/blizzard-s.toml")),
    ("blizzard-e", include_str!("../../../../machines/blizzard-e.toml")),
    ("blizzard-t", include_str!("../../../../machines/blizzard-t.toml")),
    ("cm5", include_str!("../../../../machines/cm5.toml")),
    ("ksr2", include_str!("../../../../machines/ksr2.toml")),
    ("jmachine", include_str!("../../../../machines/jmachine.toml")),
    ("mmachine", include_str!("../../../../machines/mmachine.toml")),
    ("delta", include_str!("../../../../machines/delta.toml")),
    ("paragon", include_str!("../../../../machines/paragon.toml")),
    ("dash", include_str!("../../../../machines/dash.toml")),
    ("flash", include_str!("../../../../machines/flash.toml")),
    ("t0", include_str!("../../../../machines/t0.toml")),
    ("t1", include_str!("../../../../machines/t1.toml")),
    ("t3d", include_str!("../../../../machines/t3d.toml")),
    ("t3e", include_str!("../../../../machines/t3e.toml")),
    ("origin", include_str!("../../../../machines/origin.toml")),
    ("dec8400", include_str!("../../../../machines/dec8400.toml")),
];

/// An invalid machine description: which input, and what would be valid.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub message: String,
}

impl ConfigError {
    fn key(key: &str, msg: impl fmt::Display) -> Self {
        ConfigError { message: format!("machine key `{key}`: {msg}") }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Names of the shipped presets.
/// [`MachineConfig::mean_hops`] is exact (every ordered pair) up to this many processors.
const EXACT_MEAN_HOPS_PROCS: usize = 16384;
/// Above [`EXACT_MEAN_HOPS_PROCS`], sources and destinations sampled for the mean hops.
const MEAN_HOPS_SAMPLES: usize = 1024;

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The TOML text of a shipped preset.
pub fn preset_text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Parse machine TOML text (`origin` names it in errors) and apply `key=value` overrides.
pub fn parse_spec(text: &str, origin: &str, overrides: &[String]) -> Result<MachineSpec, ConfigError> {
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| ConfigError {
        message: format!("{origin}: malformed TOML: {}", one_line(&e.to_string())),
    })?;
    for ov in overrides {
        apply_override(&mut table, ov)?;
    }
    // I/O nodes are a mesh's: asking for them on another topology is a contradiction (a
    // preset's `io_nodes = true` is left alone when only the topology is changed).
    let asked_io = overrides.iter().any(|ov| ov.split_once('=').is_some_and(|(k, _)| k.trim() == "network.io_nodes"));
    let network = table.get("network").and_then(toml::Value::as_table);
    let io = network.and_then(|n| n.get("io_nodes")).and_then(toml::Value::as_bool) == Some(true);
    let topology = network.and_then(|n| n.get("topology")).and_then(toml::Value::as_str).unwrap_or("mesh");
    if asked_io && io && topology != "mesh" {
        return Err(ConfigError {
            message: format!(
                "--set network.io_nodes=true: I/O nodes sit at the x edges of a mesh, and {origin}'s network.topology is `{topology}` (set network.topology=mesh too, or leave io_nodes off)"
            ),
        });
    }
    MachineSpec::deserialize_table(table, origin)
}

impl MachineSpec {
    fn deserialize_table(table: toml::Table, origin: &str) -> Result<MachineSpec, ConfigError> {
        let text = toml::to_string(&table).expect("a toml table serializes");
        toml::from_str(&text).map_err(|e: toml::de::Error| {
            let msg = plain_range(&one_line(e.message()));
            let hint =
                if msg.contains("unknown field") { format!(" (valid keys: {})", key_list()) } else { String::new() };
            // Name the offending key: the error's span points into `text` (at the whole table for
            // a missing field).
            let table_only = msg.starts_with("missing field");
            let mut at = e.span().and_then(|s| key_at(&text, s.start, table_only));
            // The span of a missing top-level key can be that of the file's first table: name
            // the key where it belongs (a file with only `[processor]` lacks `name`, not
            // `processor.name`).
            if let Some(field) = msg.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
                let in_table = at.as_ref().is_some_and(|t| key_doc(&format!("{t}.{field}")).is_some());
                if !in_table && key_doc(field).is_some() {
                    at = Some(field.to_string());
                }
            }
            let at = at.map(|k| format!(" machine key `{k}`:"));
            ConfigError { message: format!("{origin}:{} {msg}{hint}", at.unwrap_or_default()) }
        })
    }

    /// The spec as TOML (what [`MachineConfig::fingerprint`] hashes); loading it back gives the
    /// same machine.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a spec serializes")
    }

    /// The spec as TOML with every key's unit and meaning as a comment.
    pub fn to_documented_toml(&self) -> String {
        let text = toml::to_string(self).expect("a spec serializes");
        let mut out = String::new();
        let mut section = String::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                section = trimmed.trim_matches(|c| c == '[' || c == ']').to_string();
                out.push('\n');
                out.push_str(line);
                out.push('\n');
                continue;
            }
            if let Some((k, _)) = trimmed.split_once(" = ") {
                let full = if section.is_empty() { k.to_string() } else { format!("{section}.{k}") };
                if let Some(doc) = key_doc(&full) {
                    out.push_str(&format!("{line:<44} # [{}] {}\n", doc.unit, doc.doc));
                    continue;
                }
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// serde's words for a negative number given to a whole-number key (`invalid value: integer
/// `-1`, expected u64`) in the words `--set` uses (`must be a non-negative whole number, got
/// `-1``); any other message as it is.
fn plain_range(msg: &str) -> String {
    let unsigned = ["u8", "u16", "u32", "u64", "usize"].iter().any(|t| msg.ends_with(&format!(", expected {t}")));
    match msg.strip_prefix("invalid value: integer `").and_then(|m| m.split_once('`')) {
        Some((v, _)) if unsigned && v.starts_with('-') => format!("must be a non-negative whole number, got `{v}`"),
        _ => msg.to_string(),
    }
}

/// The dotted key (or table) at byte `offset` of serialized TOML `text`; only a table header
/// if `table_only`.
fn key_at(text: &str, offset: usize, table_only: bool) -> Option<String> {
    let mut section = String::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let is_header = trimmed.starts_with('[');
        if is_header {
            section = trimmed.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        }
        if offset < start + line.len() {
            if is_header {
                return Some(section);
            }
            if table_only {
                return None;
            }
            let key = trimmed.split_once('=')?.0.trim();
            return Some(if section.is_empty() { key.to_string() } else { format!("{section}.{key}") });
        }
        start += line.len();
    }
    None
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Apply one `key=value` override to the raw table, checking that the key exists (or is a
/// `costs.*` entry) and that the value has the key's type (its [`Kind`] in [`keys`]).
fn apply_override(table: &mut toml::Table, ov: &str) -> Result<(), ConfigError> {
    let (key, raw) = ov.split_once('=').ok_or_else(|| ConfigError {
        message: format!("--set `{ov}`: expected key=value, e.g. network.link_bytes_per_ns=0.09"),
    })?;
    let key = key.trim();
    let raw = raw.trim();
    let Some(doc) = key_doc(key).filter(|_| key != "costs.*") else {
        return Err(ConfigError {
            message: format!("--set `{key}`: unknown machine key (valid keys: {})", key_list()),
        });
    };
    // Parse the value as a TOML value; a bare word is taken as a string.
    let value: toml::Value = match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("parsed key"),
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let path: Vec<&str> = key.split('.').collect();
    let (last, parents) = path.split_last().expect("non-empty key");
    let mut cur = &mut *table;
    for p in parents {
        cur = cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| ConfigError::key(key, format!("`{p}` is not a table in this machine")))?;
    }
    let value = match doc.kind {
        Kind::Whole | Kind::Number => number(key, raw, doc, value)?,
        kind => coerce(key, kind, value)?,
    };
    cur.insert(last.to_string(), value);
    Ok(())
}

/// Check an override of a numeric key: every numeric key takes a finite, non-negative number
/// (a whole one where the key is whole), and `-1`, `NaN`, `nan` and `inf` are all refused with
/// the same words ("positive" for a key whose [`Bound`] is positive), naming the key and the
/// value as given. (Zero for a positive key, and other ranges, are checked after, by
/// [`MachineConfig::from_spec`], in the same words.)
fn number(key: &str, raw: &str, doc: &KeyDoc, new: toml::Value) -> Result<toml::Value, ConfigError> {
    use toml::Value as V;
    let whole = doc.kind == Kind::Whole;
    let sign = if doc.bound == Bound::Positive { "positive" } else { "non-negative" };
    match (whole, new) {
        (true, V::Integer(i)) if i >= 0 => Ok(V::Integer(i)),
        (false, V::Integer(i)) if i >= 0 => Ok(V::Float(i as f64)),
        (false, V::Float(f)) if f.is_finite() && f >= 0.0 => Ok(V::Float(f)),
        _ => Err(ConfigError::key(
            key,
            format!("must be a {sign} {}, got `{raw}`", if whole { "whole number" } else { "number" }),
        )),
    }
}

/// Check an override of a key that is not a number against its kind.
fn coerce(key: &str, kind: Kind, new: toml::Value) -> Result<toml::Value, ConfigError> {
    use toml::Value as V;
    let ok =
        matches!((kind, &new), (Kind::Bool, V::Boolean(_)) | (Kind::Text, V::String(_)) | (Kind::List, V::Array(_)));
    if ok {
        Ok(new)
    } else {
        Err(ConfigError::key(key, format!("expected {}, got `{new}`", kind.type_str())))
    }
}

/// Checked machine configuration, in simulator units. Built once per run by
/// [`MachineConfig::from_spec`], the one place where machine keys are converted: every cost
/// is a typed field whose name ends in its unit (`_ps` or `_cycles`), and every closed set of
/// words (`network.topology`, `memory.model`, `dsm.handlers`) is an enum.
#[derive(Clone, Debug)]
pub struct MachineConfig {
    /// The resolved description this config was built from (for `machine show` and output).
    pub spec: MachineSpec,
    pub topology: Topology,
    /// Picoseconds per processor cycle (not necessarily whole: 66 MHz is 15151.5 ps).
    pub cycle_ps: f64,
    /// Picoseconds to serialize one byte on a link.
    pub link_ps_per_byte: f64,
    pub router_latency_ps: u64,
    pub ni_latency_ps: u64,
    pub header_bytes: u64,
    pub max_packet_payload_bytes: u64,
    pub ni_input_queue_packets: u32,
    pub ni_output_queue_packets: u32,
    pub cross_traffic_bytes_per_cycle: f64,
    pub cross_traffic_message_bytes: u64,
    /// `cross_traffic.arbitration`: how cross-traffic waits for a link.
    pub cross_traffic_arbitration: CrossArbitration,
    pub msg: MessagingCosts,
    pub mem: MemoryConfig,
    /// Hardware directory coherence, or software fine-grain DSM with its costs.
    pub coherence: Coherence,
    /// One-sided remote access (get/put), if the machine has it (`[remote]`).
    pub remote: Option<RemoteConfig>,
    pub max_events: u64,
    pub max_time_ps: u64,
    /// `network.model = "fold"`: events due before everything queued run without being queued
    /// (see [`crate::queue::EventQueue::new`]); `false` is the per-hop reference.
    pub fold_events: bool,
    /// `node.procs_per_node = 2`: every message handler runs on the node's second processor.
    pub smp_nodes: bool,
    /// `messaging.poll_mechanism` on an SMP node: how its protocol processor polls (None: the
    /// generic poll, or a one-processor node).
    pub poll: Option<PollCosts>,
}

/// Messaging costs in processor cycles (see [`keys`] for meanings), already multiplied by
/// `messaging.overhead_scale` where the key is a send or receive overhead. They stay in cycles
/// because a handler's cycles are summed before they are converted to picoseconds.
#[derive(Clone, Debug)]
pub struct MessagingCosts {
    pub send_overhead_cycles: u64,
    pub send_per_arg_word_cycles: u64,
    pub max_arg_words: u64,
    pub interrupt_entry_cycles: u64,
    pub interrupt_exit_cycles: u64,
    /// A handler reading one 32-bit argument word (`messaging.receive_per_arg_word_cycles`).
    pub receive_per_arg_word_cycles: u64,
    pub poll_cycles: u64,
    pub poll_dispatch_cycles: u64,
    pub dma_setup_cycles: u64,
    pub dma_per_region_cycles: u64,
    pub dma_bytes_per_cycle: f64,
    pub dma_align_bytes: u64,
    pub barrier_arity: u64,
    /// The message barrier handler's body (`messaging.barrier_handler_cycles`).
    pub barrier_handler_cycles: u64,
    /// A processor waiting in the message barrier takes its messages by interrupt.
    pub barrier_wait_interrupts: bool,
    /// Flow-control window in messages (0: off).
    pub flow_window_messages: u64,
    /// Copying a message into the software queue of flow control.
    pub flow_buffer_cycles: u64,
    /// Polls at loop back-edges, one per this many cycles of computation (0: messages interrupt).
    pub backedge_interval_cycles: u64,
    /// The network overflow trap (`messaging.overflow_*`), if the machine has one.
    pub overflow: Option<OverflowCosts>,
}

/// The network overflow trap's timeout and costs in processor cycles (the costs scaled by
/// `messaging.overhead_scale`, as the receive overheads they are; the timeout is not a cost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverflowCosts {
    pub timeout_cycles: u64,
    pub entry_cycles: u64,
    pub drain_per_message_cycles: u64,
    pub drain_per_word_cycles: u64,
    pub exit_cycles: u64,
    pub dispatch_cycles: u64,
}

impl OverflowCosts {
    /// Copying a message of `words64` u64 arguments and payload words into the buffer.
    pub fn drain_cycles(&self, words64: usize) -> u64 {
        self.drain_per_message_cycles + self.drain_per_word_cycles * 2 * words64 as u64
    }
}

/// How a cross-traffic packet waits for a link (`cross_traffic.arbitration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrossArbitration {
    /// In arrival order with every other packet, as the study's I/O nodes' packets did; its
    /// sources have an NI output queue of the machine's size and wait while it is full.
    Fifo,
    /// Ahead of every waiting application packet (behind earlier cross-traffic), with unbounded
    /// source queues: it always takes its configured rate.
    Priority,
}

impl MessagingCosts {
    /// Send cost of a message with `arg_words64` u64 arguments and `regions` DMA regions
    /// (`None` for a plain active message).
    pub fn send_cost_cycles(&self, arg_words64: usize, regions: Option<usize>) -> u64 {
        let mut c = self.send_overhead_cycles + self.send_per_arg_word_cycles * 2 * arg_words64 as u64;
        if let Some(r) = regions {
            c += self.dma_setup_cycles + self.dma_per_region_cycles * r as u64;
        }
        c
    }

    /// Receive cost of reading a message's `arg_words64` u64 arguments.
    pub fn receive_cost_cycles(&self, arg_words64: usize) -> u64 {
        self.receive_per_arg_word_cycles * 2 * arg_words64 as u64
    }
}

/// The memory system: cache geometry, directory size, and every latency in picoseconds
/// (converted once; the miss path is hot).
#[derive(Clone, Copy, Debug)]
pub struct MemoryConfig {
    pub line_bytes: u64,
    /// Cache lines per processor.
    pub cache_lines: u64,
    pub associativity: u64,
    /// Remote sharers the directory tracks in hardware.
    pub hw_pointers: usize,
    pub prefetch_buffer_entries: usize,
    /// Fan-in of the shared-memory combining-tree barrier.
    pub barrier_arity: usize,
    /// A cache hit (`memory.hit_cycles`).
    pub hit_ps: u64,
    /// How far a processor may run ahead of the global clock on hits.
    pub max_run_ahead_ps: u64,
    pub prefetch_issue_ps: u64,
    /// Extra time of a read-modify-write over a hit.
    pub rmw_ps: u64,
    pub lock_overhead_ps: u64,
    /// A local miss before its fill (`local_miss_cycles - fill_cycles`).
    pub local_memory_ps: u64,
    /// Before a remote miss's request leaves (`miss_issue_cycles + remote_miss_delay_cycles`).
    pub miss_issue_ps: u64,
    pub fill_ps: u64,
    pub dir_ps: u64,
    pub dir_occupancy_ps: u64,
    pub home_cache_ps: u64,
    pub owner_ps: u64,
    pub forward_reply_ps: u64,
    /// `memory.snooping`: a forward to a dirty owner leaves as the memory's read starts, and
    /// the reply waits for both.
    pub snooping: bool,
    pub inv_send_ps: u64,
    pub ack_ps: u64,
    /// LimitLESS trap handler body for a read beyond the hardware pointers (the home
    /// processor also pays interrupt entry and exit).
    pub sw_read_ps: u64,
    /// LimitLESS trap handler body for a write to a line whose sharers overflowed to software.
    pub sw_write_ps: u64,
    /// Interrupt entry of a LimitLESS trap (`messaging.interrupt_entry_cycles`): the
    /// directory's answer leaves after entry and body.
    pub trap_entry_ps: u64,
    /// The memory hierarchy true to bandwidth (`[hierarchy]`), if the machine opts in.
    pub hierarchy: Option<HierarchyConfig>,
}

/// The memory hierarchy in simulator units (`[hierarchy]`, see [`keys`]). Levels are numbered
/// from the processor: `levels[..inner]` are the inner caches (l1, l2), `levels[inner]` is the
/// coherent cache (`memory.*`), and the DRAM lies beyond.
#[derive(Clone, Copy, Debug)]
pub struct HierarchyConfig {
    pub outstanding_misses: usize,
    /// Stall on use: reads whose data may still be arriving (0: no stall on use).
    pub loads_before_use: usize,
    /// How many inner levels (0, 1 or 2).
    pub inner: usize,
    /// The inner levels then the coherent cache (entries after `inner + 1` are unused).
    pub levels: [LevelConfig; 3],
    pub dram: DramConfig,
    pub stream: Option<StreamConfig>,
    /// Stores through a merging write buffer (`[hierarchy.write_buffer]`).
    pub write_buffer: Option<WriteBufferConfig>,
    /// Lines per page when pages sit at arbitrary frames (`hierarchy.page_bytes`), in the
    /// coherent cache's lines.
    pub page_bytes: Option<u64>,
}

/// A merging write buffer: entries of `block_bytes`.
#[derive(Clone, Copy, Debug)]
pub struct WriteBufferConfig {
    pub entries: usize,
    pub block_bytes: u64,
}

impl HierarchyConfig {
    /// The levels a processor looks in, innermost first (the coherent cache last).
    pub fn caches(&self) -> &[LevelConfig] {
        &self.levels[..=self.inner]
    }
}

/// One cache level: geometry, the processor time of an access it serves, and its bandwidth.
#[derive(Clone, Copy, Debug, Default)]
pub struct LevelConfig {
    pub lines: u64,
    pub line_bytes: u64,
    pub ways: usize,
    pub hit_ps: u64,
    /// Picoseconds per byte it delivers to the level inside it.
    pub ps_per_byte: f64,
}

/// A node's DRAM: banks, interleaving, bank busy time, latency and bus bandwidth.
#[derive(Clone, Copy, Debug)]
pub struct DramConfig {
    pub banks: u64,
    pub interleave_bytes: u64,
    pub bank_busy_ps: u64,
    /// A line from DRAM to the processor (`memory.local_miss_cycles`).
    pub latency_ps: u64,
    pub ps_per_byte: f64,
    /// One DRAM (banks and bus) shared by every processor.
    pub shared: bool,
    /// With `shared`: the protocol's line transfers hold its bus too.
    pub bus_coherent: bool,
}

impl DramConfig {
    /// Picoseconds `bytes` hold the DRAM's bus.
    pub fn bus_ps(&self, bytes: u64) -> u64 {
        round_to_u64(bytes as f64 * self.ps_per_byte)
    }
}

/// Stream read-ahead buffers.
#[derive(Clone, Copy, Debug)]
pub struct StreamConfig {
    pub buffers: usize,
    pub depth: usize,
    pub hit_ps: u64,
}

/// One-sided remote access in simulator units (`[remote]`).
#[derive(Clone, Copy, Debug)]
pub struct RemoteConfig {
    pub issue_ps: u64,
    pub max_outstanding_words: u32,
    pub words_per_request: usize,
    pub request_bytes: u64,
    pub service_ps: u64,
    pub service_line_ps: u64,
    pub service_word_ps: u64,
    pub ni_latency_ps: Option<u64>,
    /// Processor time per word of a get beyond `issue_ps`.
    pub get_word_ps: u64,
    /// Puts pass the write buffer: words per merged block (0: puts are requests as gets).
    pub put_block_words: usize,
}

/// How shared memory is kept coherent (`memory.model`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Coherence {
    /// A directory controller in hardware (`memory.model = "hardware"`).
    Hardware,
    /// Software fine-grain DSM, Blizzard-style (`memory.model = "software"`, `[dsm]`).
    Software(DsmCosts),
}

impl Coherence {
    /// The software DSM costs, if coherence is in software.
    pub fn software(&self) -> Option<DsmCosts> {
        match *self {
            Coherence::Hardware => None,
            Coherence::Software(d) => Some(d),
        }
    }
}

/// Where software-DSM protocol handlers run (`dsm.handlers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsmHandlers {
    /// On the node's compute processor, stealing its time.
    Compute,
    /// On a dedicated protocol processor.
    ProtocolProcessor,
}

/// Blizzard-S's access-check instrumentation (`dsm.instrumentation`): the optimisation levels
/// of the Blizzard COW study (§4.1, Table 1), applied cumulatively. EEL inserts a check before
/// every load and store of the program; commlab checks every shared and private reference
/// (`load`, `store`, atomics, `private_read`, `private_write`). `compute()` stands for register
/// work (the apps count flops and loop control there, their loads and stores are simulated as
/// references) and is never checked. "Slice" removes checks before references whose address
/// the register-only backward slice traces to the stack pointer or a static address: in commlab
/// those references (spills, locals, scalars) are inside `compute()`; its private arrays stand
/// for the programs' heap and pointer-indexed arrays, which slicing cannot prove, so they stay
/// checked, and "slice" charges what "cc-reg" does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instrumentation {
    /// No inserted checks (hardware access control: Blizzard-E, Blizzard-T; or the study's
    /// uninstrumented sequential program).
    None,
    /// The original snippet, which leaves the condition codes alone.
    NoOpt,
    /// A test-and-branch snippet where the condition codes are dead, the original where live.
    CcReg,
    /// As cc-reg, without checks before references slicing proves non-shared.
    Slice,
    /// As slice, full-word loads tested against a sentinel value after loading.
    Sentinel,
}

/// The fraction of loads and stores at which the condition codes are live, so the original
/// 14-cycle snippet stays (assumed: 2.5%, the middle of the published "1-4%, measured
/// dynamically", §4.1).
const CC_LIVE_FRACTION: f64 = 0.025;
/// The original (no-opt) snippet on the HyperSPARC (published, §4.1: "the original snippet
/// which required 14 cycles on the HyperSparc CPU"; its 18 cycles are the CM-5's [33]).
const NO_OPT_CHECK_CYCLES: f64 = 14.0;

impl Instrumentation {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "none" => Self::None,
            "no-opt" => Self::NoOpt,
            "cc-reg" => Self::CcReg,
            "slice" => Self::Slice,
            "sentinel" => Self::Sentinel,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::NoOpt => "no-opt",
            Self::CcReg => "cc-reg",
            Self::Slice => "slice",
            Self::Sentinel => "sentinel",
        }
    }

    /// The cycles of the check before one load and one store (multiprocessor snippets, the
    /// study's counts; best case, no cache misses in the tag table).
    pub fn check_cycles(self) -> (f64, f64) {
        // A level with a condition-code test pays the original snippet where they are live.
        let with_live = |c: f64| c + CC_LIVE_FRACTION * (NO_OPT_CHECK_CYCLES - c);
        match self {
            Self::None => (0.0, 0.0),
            Self::NoOpt => (NO_OPT_CHECK_CYCLES, NO_OPT_CHECK_CYCLES),
            // Published (§4.1): "a 15 instruction (10 cycles) sequence that uses test and
            // branch instructions", before loads and stores alike.
            Self::CcReg | Self::Slice => (with_live(10.0), with_live(10.0)),
            // Published (§4.1): "3 instructions (3 cycles) at most loads and 8 instructions (9
            // cycles) at most stores". The sentinel test applies to word and double-word loads;
            // every commlab load is of a 64-bit word, so it covers them all.
            Self::Sentinel => (with_live(3.0), with_live(9.0)),
        }
    }
}

/// Software DSM (Blizzard) costs in picoseconds: protocol handlers exchange active messages,
/// copy blocks and change access tags.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DsmCosts {
    pub handlers: DsmHandlers,
    /// `dsm.instrumentation`: the access checks before every load and store, shared and
    /// private (`load_check_ps`, `store_check_ps`: its costs, or the keys that replace them).
    pub instrumentation: Instrumentation,
    pub load_check_ps: u64,
    pub store_check_ps: u64,
    pub miss_trap_ps: u64,
    pub upgrade_fault_ps: u64,
    pub resume_ps: u64,
    pub handler_ps: u64,
    /// Copying one block (`memory.line_bytes / dsm.copy_bytes_per_cycle`).
    pub copy_block_ps: u64,
    /// Making a block accessible: base only (an upgrade of a readable block).
    pub tag_valid_base_ps: u64,
    /// Making a block accessible with every granule's tag (a block that arrives with data).
    pub tag_valid_ps: u64,
    pub tag_invalidate_ps: u64,
    /// Invalidating a block: base only (the part that does not grow with its granules).
    pub tag_invalidate_base_ps: u64,
    /// Blizzard-E's page protection (`dsm.page_bytes`); None: the tags alone.
    pub pages: Option<PageCosts>,
    /// Sending a protocol message of two argument words (line, requester).
    pub send_small_ps: u64,
    /// The same with the block appended by DMA from one region.
    pub send_data_ps: u64,
    /// Interrupt entry and exit around a handler.
    pub entry_ps: u64,
    pub exit_ps: u64,
}

/// Blizzard-E: read-only blocks enforced by page protection (`mem/dsm.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageCosts {
    /// log2 of the blocks (lines) on one page.
    pub lines_shift: u32,
    /// Changing a page's protection (`dsm.protect_cycles`).
    pub protect_ps: u64,
    /// Invalidating a block and changing its page in one call saves this (`dsm.protect_saving_cycles`).
    pub saving_ps: u64,
    /// A store to a writable block on a read-only page (`dsm.emulated_write_cycles`).
    pub emulated_write_ps: u64,
}

impl DsmCosts {
    /// Whether handlers run on the compute processor.
    pub fn on_compute(&self) -> bool {
        self.handlers == DsmHandlers::Compute
    }
}

fn topology_kind(n: &spec::NetworkSpec) -> Result<TopologyKind, ConfigError> {
    let need_dims = |want: Option<usize>| -> Result<(), ConfigError> {
        if n.dims.is_empty() || n.dims.contains(&0) || want.is_some_and(|w| n.dims.len() != w) {
            let shape = want.map_or("one or more".to_string(), |w| w.to_string());
            return Err(ConfigError::key(
                "network.dims",
                format!("{} needs {shape} positive sizes, got {:?}", n.topology, n.dims),
            ));
        }
        Ok(())
    };
    let need_nprocs = || -> Result<usize, ConfigError> {
        if n.nprocs == 0 {
            return Err(ConfigError::key("network.nprocs", format!("{} needs nprocs >= 1", n.topology)));
        }
        Ok(n.nprocs)
    };
    Ok(match n.topology.as_str() {
        "mesh" => {
            need_dims(Some(2))?;
            TopologyKind::Mesh { dims: [n.dims[0], n.dims[1]], io_nodes: n.io_nodes }
        }
        "torus" => {
            need_dims(None)?;
            TopologyKind::Torus { dims: n.dims.clone() }
        }
        "fat-tree" => {
            if n.arity < 2 {
                return Err(ConfigError::key("network.arity", format!("must be at least 2, got {}", n.arity)));
            }
            TopologyKind::FatTree { arity: n.arity, nprocs: need_nprocs()? }
        }
        "hypercube" => {
            let p = need_nprocs()?;
            if !p.is_power_of_two() {
                return Err(ConfigError::key("network.nprocs", format!("a hypercube needs a power of two, got {p}")));
            }
            TopologyKind::Hypercube { dim: p.trailing_zeros() as usize }
        }
        "ring" => TopologyKind::Ring { nprocs: need_nprocs()? },
        "crossbar" => TopologyKind::Crossbar { nprocs: need_nprocs()? },
        other => {
            return Err(ConfigError::key(
                "network.topology",
                format!("unknown topology `{other}` (valid: mesh, torus, fat-tree, hypercube, ring, crossbar)"),
            ))
        }
    })
}

/// The network overflow trap's costs, when `messaging.overflow_timeout_cycles` turns it on
/// (each of them is then required, naming the first missing one); `None` when it is off.
fn overflow_costs(m: &spec::MessagingSpec, scaled: &dyn Fn(u64) -> u64) -> Result<Option<OverflowCosts>, ConfigError> {
    if m.overflow_timeout_cycles == 0 {
        return Ok(None);
    }
    let need = |key: &str, v: Option<u64>| {
        v.map(scaled).ok_or_else(|| {
            ConfigError::key(
                &format!("messaging.{key}"),
                format!(
                    "the network overflow trap is on (messaging.overflow_timeout_cycles = {}) and needs this cost; \
                     give it, e.g. --set messaging.{key}=10, or turn the trap off with messaging.overflow_timeout_cycles=0",
                    m.overflow_timeout_cycles
                ),
            )
        })
    };
    Ok(Some(OverflowCosts {
        timeout_cycles: m.overflow_timeout_cycles,
        entry_cycles: need("overflow_trap_entry_cycles", m.overflow_trap_entry_cycles)?,
        drain_per_message_cycles: need("overflow_drain_per_message_cycles", m.overflow_drain_per_message_cycles)?,
        drain_per_word_cycles: need("overflow_drain_per_word_cycles", m.overflow_drain_per_word_cycles)?,
        exit_cycles: need("overflow_trap_exit_cycles", m.overflow_trap_exit_cycles)?,
        dispatch_cycles: need("overflow_dispatch_cycles", m.overflow_dispatch_cycles)?,
    }))
}

/// Check every key's [`Bound`] as declared in [`keys`] (keys of absent sections are not
/// checked): a positive key must be a finite number above zero, an `at_least` key at least its
/// minimum. The first key out of range, in the TOML's order, is named.
fn check_bounds(spec: &MachineSpec) -> Result<(), ConfigError> {
    for (key, v, k) in key_values(spec) {
        match k.bound {
            Bound::Any => {}
            Bound::Positive => {
                let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN);
                if !(x.is_finite() && x > 0.0) {
                    return Err(ConfigError::key(&key, format!("must be a positive number, got {x:?}")));
                }
            }
            Bound::AtLeast(min) => {
                let n = v.as_integer().unwrap_or(0);
                if n < 0 || (n as u64) < min {
                    return Err(ConfigError::key(&key, format!("must be at least {min}, got {n}")));
                }
            }
        }
    }
    Ok(())
}

fn ns_to_ps(key: &str, ns: f64) -> Result<u64, ConfigError> {
    if !ns.is_finite() || ns < 0.0 {
        return Err(ConfigError::key(key, format!("must be a non-negative number, got {ns}")));
    }
    Ok((ns * 1000.0).round() as u64)
}

/// Check `[hierarchy]` and convert it (the coherent cache is `memory.*`, already checked).
fn hierarchy_config(h: &HierarchySpec, mem: &MemorySpec, cycle_ps: f64) -> Result<HierarchyConfig, ConfigError> {
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    let per_byte = |bpc: f64| cycle_ps / bpc;
    if h.l2.is_some() && h.l1.is_none() {
        return Err(ConfigError::key("hierarchy.l2", "needs hierarchy.l1 (l1 is the innermost level)"));
    }
    let mut levels = [LevelConfig::default(); 3];
    let mut inner = 0;
    for (name, level) in [("l1", &h.l1), ("l2", &h.l2)] {
        let Some(l) = level else { continue };
        let key = |k: &str| format!("hierarchy.{name}.{k}");
        if l.line_bytes < 8 || !l.line_bytes.is_power_of_two() || l.line_bytes > mem.line_bytes {
            return Err(ConfigError::key(
                &key("line_bytes"),
                format!(
                    "must be a power of two from 8 to memory.line_bytes ({}), got {}",
                    mem.line_bytes, l.line_bytes
                ),
            ));
        }
        if inner > 0 && l.line_bytes < levels[inner - 1].line_bytes {
            return Err(ConfigError::key(&key("line_bytes"), "must be at least the inner level's line"));
        }
        let set = l.line_bytes * l.associativity;
        if l.bytes < set || !l.bytes.is_multiple_of(set) {
            return Err(ConfigError::key(
                &key("bytes"),
                format!("must be a whole number of sets (line_bytes x associativity = {set} bytes), got {}", l.bytes),
            ));
        }
        levels[inner] = LevelConfig {
            lines: l.bytes / l.line_bytes,
            line_bytes: l.line_bytes,
            ways: l.associativity as usize,
            hit_ps: ps(l.hit_cycles),
            ps_per_byte: per_byte(l.bytes_per_cycle),
        };
        inner += 1;
    }
    levels[inner] = LevelConfig {
        lines: mem.cache_bytes / mem.line_bytes,
        line_bytes: mem.line_bytes,
        ways: mem.associativity as usize,
        hit_ps: ps(mem.hit_cycles),
        ps_per_byte: per_byte(h.cache_bytes_per_cycle),
    };
    let d = &h.dram;
    if d.interleave_bytes < 8 || !d.interleave_bytes.is_power_of_two() {
        return Err(ConfigError::key(
            "hierarchy.dram.interleave_bytes",
            format!("must be a power of two >= 8, got {}", d.interleave_bytes),
        ));
    }
    if d.bus_coherent && !d.shared {
        return Err(ConfigError::key(
            "hierarchy.dram.bus_coherent",
            "needs hierarchy.dram.shared = true (one memory bus for every processor)".to_string(),
        ));
    }
    let dram = DramConfig {
        banks: d.banks,
        interleave_bytes: d.interleave_bytes,
        bank_busy_ps: ps(d.bank_busy_cycles),
        latency_ps: ps(mem.local_miss_cycles),
        ps_per_byte: per_byte(d.bytes_per_cycle),
        shared: d.shared,
        bus_coherent: d.bus_coherent,
    };
    let stream = h.stream.as_ref().map(|s| StreamConfig {
        buffers: s.buffers as usize,
        depth: s.depth as usize,
        hit_ps: ps(s.hit_cycles),
    });
    let write_buffer = match &h.write_buffer {
        None => None,
        Some(w) => {
            let block = w.block_bytes;
            if block < 8 || !block.is_power_of_two() || block > levels[0].line_bytes {
                return Err(ConfigError::key(
                    "hierarchy.write_buffer.block_bytes",
                    format!(
                        "must be a power of two from 8 to the innermost cache's line ({}), got {block}",
                        levels[0].line_bytes
                    ),
                ));
            }
            Some(WriteBufferConfig { entries: w.entries as usize, block_bytes: block })
        }
    };
    // A loop holds at most this many loads ahead of their uses (its unrolling); the pending
    // reads are kept per processor, so an unbounded value would grow them without end.
    const MAX_LOADS_BEFORE_USE: u64 = 1024;
    if let Some(u) = h.loads_before_use.filter(|&u| u > MAX_LOADS_BEFORE_USE) {
        return Err(ConfigError::key(
            "hierarchy.loads_before_use",
            format!("must be at most {MAX_LOADS_BEFORE_USE} (the reads a loop issues ahead of their uses), got {u}"),
        ));
    }
    if let Some(pb) = h.page_bytes {
        if !pb.is_power_of_two() || pb < mem.line_bytes {
            return Err(ConfigError::key(
                "hierarchy.page_bytes",
                format!("must be a power of two of at least memory.line_bytes ({}), got {pb}", mem.line_bytes),
            ));
        }
    }
    Ok(HierarchyConfig {
        outstanding_misses: h.outstanding_misses as usize,
        loads_before_use: h.loads_before_use.unwrap_or(0) as usize,
        inner,
        levels,
        dram,
        stream,
        write_buffer,
        page_bytes: h.page_bytes,
    })
}

/// Every key a spec has, with its value and conversion, in the key table's order (each
/// `costs.NAME` as itself).
fn key_values(spec: &MachineSpec) -> Vec<(String, toml::Value, &'static KeyDoc)> {
    let table = toml::Table::try_from(spec).expect("a spec serializes");
    let mut out = Vec::new();
    for k in keys() {
        let mut parts = k.key.split('.');
        let first = parts.next().and_then(|p| table.get(p));
        let Some(v) = parts.try_fold(first, |v, part| Some(v?.get(part))).flatten() else {
            if let Some(section) = k.key.strip_suffix(".*") {
                if let Some(t) = table.get(section).and_then(toml::Value::as_table) {
                    out.extend(t.iter().map(|(name, v)| (format!("{section}.{name}"), v.clone(), k)));
                }
            }
            continue;
        };
        out.push((k.key.to_string(), v.clone(), k));
    }
    out
}

/// Every time a machine key implies must fit the simulated-time limit (so no conversion to
/// picoseconds saturates or overflows, and a value is never silently lost): each latency in
/// ns, each cost in cycles (send and receive overheads as scaled), the serialization of the
/// largest packet, a DMA transfer of it, and a software-DSM block copy. The error names the key
/// and the largest (or smallest) value accepted.
fn check_times_fit(spec: &MachineSpec, cycle_ps: f64, max_time_ps: f64) -> Result<(), ConfigError> {
    let limit = format!("limits.max_sim_time_ms = {}", spec.limits.max_sim_time_ms);
    let show = |v: f64| if v != 0.0 && !(1e-3..1e9).contains(&v.abs()) { format!("{v:e}") } else { format!("{v}") };
    let too_large = |key: &str, value: f64, largest: f64| {
        ConfigError::key(
            key,
            format!(
                "{} outlasts the simulated-time limit ({limit}); the largest accepted value is {largest:.0}",
                show(value)
            ),
        )
    };
    if cycle_ps < 1.0 {
        return Err(ConfigError::key(
            "processor.clock_mhz",
            format!("must be at most 1000000 (a cycle of at least 1 ps), got {}", show(spec.processor.clock_mhz)),
        ));
    }
    // The clock first: every cost in cycles depends on it, so a clock too slow for even one
    // cycle is the clock's fault, not the first cost's.
    if cycle_ps > max_time_ps {
        return Err(ConfigError::key(
            "processor.clock_mhz",
            format!(
                "must be at least {} (one cycle within {limit}), got {}",
                show(1e6 / max_time_ps),
                show(spec.processor.clock_mhz)
            ),
        ));
    }
    for (key, ns, k) in key_values(spec) {
        let ns = ns.as_float().unwrap_or(0.0);
        if k.conv == Conv::Ns && ns * 1000.0 > max_time_ps {
            return Err(too_large(&key, ns, (max_time_ps / 1000.0).floor()));
        }
    }
    let n = &spec.network;
    let packet_bytes = (n.header_bytes as f64) + n.max_packet_payload_bytes as f64;
    let too_slow = |key: &str, value: f64, smallest: f64| {
        ConfigError::key(
            key,
            format!(
                "{} makes one transfer outlast the simulated-time limit ({limit}); the smallest accepted value is {smallest:e}",
                show(value)
            ),
        )
    };
    if packet_bytes * 1000.0 / n.link_bytes_per_ns > max_time_ps {
        return Err(too_slow("network.link_bytes_per_ns", n.link_bytes_per_ns, packet_bytes * 1000.0 / max_time_ps));
    }
    let per_cycle_limit = max_time_ps / cycle_ps;
    let m = &spec.messaging;
    if n.max_packet_payload_bytes as f64 / m.dma_bytes_per_cycle > per_cycle_limit {
        let smallest = n.max_packet_payload_bytes as f64 / per_cycle_limit;
        return Err(too_slow("messaging.dma_bytes_per_cycle", m.dma_bytes_per_cycle, smallest));
    }
    if let Some(d) = &spec.dsm {
        if spec.memory.line_bytes as f64 / d.copy_bytes_per_cycle > per_cycle_limit {
            let smallest = spec.memory.line_bytes as f64 / per_cycle_limit;
            return Err(too_slow("dsm.copy_bytes_per_cycle", d.copy_bytes_per_cycle, smallest));
        }
    }
    // Every key in cycles, as declared in the key table (overheads as scaled).
    for (key, cycles, k) in key_values(spec) {
        let Some(cycles) = cycles.as_integer() else { continue };
        let factor = match k.conv {
            Conv::Overhead => m.overhead_scale,
            Conv::Cycles => 1.0,
            _ => continue,
        };
        if cycles as f64 * factor > per_cycle_limit {
            return Err(too_large(&key, cycles as f64, (per_cycle_limit / factor).floor()));
        }
    }
    Ok(())
}

/// The cross-traffic keys checked against each other and the topology; its arbitration.
fn cross_traffic_arbitration(spec: &MachineSpec, topology: &Topology) -> Result<CrossArbitration, ConfigError> {
    let n = &spec.network;
    let ct = &spec.cross_traffic;
    if !ct.rate_bytes_per_cycle.is_finite() || ct.rate_bytes_per_cycle < 0.0 {
        return Err(ConfigError::key(
            "cross_traffic.rate_bytes_per_cycle",
            format!("must be >= 0, got {}", ct.rate_bytes_per_cycle),
        ));
    }
    if ct.rate_bytes_per_cycle > 0.0 && topology.io_pairs().is_empty() {
        return Err(ConfigError::key(
            "cross_traffic.rate_bytes_per_cycle",
            "cross-traffic needs I/O nodes: set network.topology = \"mesh\" and network.io_nodes = true",
        ));
    }
    let cross_traffic_arbitration = match ct.arbitration.as_str() {
        "fifo" => CrossArbitration::Fifo,
        "priority" => CrossArbitration::Priority,
        other => {
            return Err(ConfigError::key(
                "cross_traffic.arbitration",
                format!("must be \"fifo\" or \"priority\", got \"{other}\""),
            ))
        }
    };
    if ct.message_bytes <= n.header_bytes {
        return Err(ConfigError::key(
            "cross_traffic.message_bytes",
            format!("must exceed network.header_bytes ({}), got {}", n.header_bytes, ct.message_bytes),
        ));
    }
    Ok(cross_traffic_arbitration)
}

/// The cache's geometry checked (a power-of-two line, whole sets, snooping only in hardware);
/// its number of lines.
fn check_cache(spec: &MachineSpec) -> Result<u64, ConfigError> {
    let mem = &spec.memory;
    if mem.line_bytes < 8 || !mem.line_bytes.is_power_of_two() {
        return Err(ConfigError::key(
            "memory.line_bytes",
            format!("must be a power of two >= 8, got {}", mem.line_bytes),
        ));
    }
    // A line larger than a set's share of the cache is the line's fault.
    if mem.line_bytes.saturating_mul(mem.associativity) > mem.cache_bytes {
        return Err(ConfigError::key(
            "memory.line_bytes",
            format!(
                "must be at most memory.cache_bytes / memory.associativity ({}), got {}",
                mem.cache_bytes / mem.associativity,
                mem.line_bytes
            ),
        ));
    }
    let cache_lines = mem.cache_bytes / mem.line_bytes;
    if cache_lines < mem.associativity || !mem.cache_bytes.is_multiple_of(mem.line_bytes * mem.associativity) {
        return Err(ConfigError::key(
            "memory.cache_bytes",
            format!(
                "must be a whole number of sets (line_bytes x associativity = {} bytes), got {}",
                mem.line_bytes * mem.associativity,
                mem.cache_bytes
            ),
        ));
    }
    if mem.snooping && mem.model != "hardware" {
        return Err(ConfigError::key(
            "memory.snooping",
            "a snooping bus is hardware coherence; it needs memory.model = \"hardware\"",
        ));
    }
    Ok(cache_lines)
}

/// Whether nodes are SMPs (a compute and a protocol processor), and the cost of the access-tag
/// lock their software DSM takes.
fn node_kind(spec: &MachineSpec) -> Result<(bool, u64), ConfigError> {
    let mem = &spec.memory;
    let (smp_nodes, tag_lock_cycles) = match &spec.node {
        None => (false, 0),
        Some(nd) => {
            if !(1..=2).contains(&nd.procs_per_node) {
                return Err(ConfigError::key(
                    "node.procs_per_node",
                    format!(
                        "must be 1 or 2 (2: a compute processor and a protocol processor), got {}",
                        nd.procs_per_node
                    ),
                ));
            }
            let smp = nd.procs_per_node == 2;
            match (smp, nd.tag_lock_cycles, mem.model.as_str()) {
                (true, None, "software") => {
                    return Err(ConfigError::key(
                        "node.tag_lock_cycles",
                        "an SMP node of a software-DSM machine takes a lock around each access-tag change; \
                         give its cost, e.g. --set node.tag_lock_cycles=20",
                    ))
                }
                // Inert on a one-processor node, as messaging.poll_mechanism: a preset of
                // SMP nodes runs on one-processor nodes with only node.procs_per_node = 1.
                (false, Some(_), _) => (false, 0),
                (true, Some(_), model) if model != "software" => {
                    return Err(ConfigError::key(
                        "node.tag_lock_cycles",
                        "locks access tags, which only a software-DSM machine (memory.model = \"software\") has",
                    ))
                }
                (_, lock, _) => (smp, lock.unwrap_or(0)),
            }
        }
    };
    Ok((smp_nodes, tag_lock_cycles))
}

/// A software-DSM machine's `[dsm]` section checked: the section, its instrumentation level and
/// who runs its handlers (`None` on a hardware-coherent machine).
fn software_dsm(
    spec: &MachineSpec,
    smp_nodes: bool,
) -> Result<Option<(&spec::DsmSpec, Instrumentation, DsmHandlers)>, ConfigError> {
    let mem = &spec.memory;
    let software = match (mem.model.as_str(), &spec.dsm) {
        ("hardware", _) => None,
        ("software", None) => {
            return Err(ConfigError::key(
                "memory.model",
                "\"software\" needs a [dsm] section with the software protocol's costs",
            ))
        }
        ("software", Some(d)) => {
            let handlers = match d.handlers.as_str() {
                "compute" => DsmHandlers::Compute,
                "protocol-processor" => DsmHandlers::ProtocolProcessor,
                other => {
                    return Err(ConfigError::key(
                        "dsm.handlers",
                        format!("must be compute or protocol-processor, got `{other}`"),
                    ))
                }
            };
            let levels = "none (hardware access control), no-opt, cc-reg, slice or sentinel";
            let Some(level) = d.instrumentation.as_deref() else {
                return Err(ConfigError::key(
                    "dsm.instrumentation",
                    format!("is required on a software-DSM machine: {levels}"),
                ));
            };
            let Some(level) = Instrumentation::parse(level) else {
                return Err(ConfigError::key("dsm.instrumentation", format!("must be {levels}, got `{level}`")));
            };
            if level == Instrumentation::None && (d.load_check_cycles.is_some() || d.store_check_cycles.is_some()) {
                return Err(ConfigError::key(
                    "dsm.load_check_cycles",
                    "dsm.instrumentation = none inserts no checks: give a level to charge checks",
                ));
            }
            if d.tag_granule_bytes < 8 || !d.tag_granule_bytes.is_power_of_two() || d.tag_granule_bytes > mem.line_bytes
            {
                return Err(ConfigError::key(
                    "dsm.tag_granule_bytes",
                    format!(
                        "must be a power of two from 8 to memory.line_bytes ({}), got {}",
                        mem.line_bytes, d.tag_granule_bytes
                    ),
                ));
            }
            let page_keys = [d.protect_cycles, d.protect_saving_cycles, d.emulated_write_cycles];
            match d.page_bytes {
                None if page_keys.iter().any(Option::is_some) => {
                    return Err(ConfigError::key(
                        "dsm.page_bytes",
                        "dsm.protect_cycles, dsm.protect_saving_cycles and dsm.emulated_write_cycles need a page size",
                    ))
                }
                Some(_) if page_keys.iter().any(Option::is_none) => return Err(ConfigError::key(
                    "dsm.page_bytes",
                    "page protection needs dsm.protect_cycles, dsm.protect_saving_cycles and dsm.emulated_write_cycles",
                )),
                Some(b) if b < 8 || !b.is_power_of_two() => {
                    return Err(ConfigError::key(
                        "dsm.page_bytes",
                        format!("must be a power of two of at least 8, got {b}"),
                    ))
                }
                _ => {}
            }
            // An SMP node's second processor runs the protocol, whatever `dsm.handlers` says.
            Some((d, level, if smp_nodes { DsmHandlers::ProtocolProcessor } else { handlers }))
        }
        (other, _) => {
            return Err(ConfigError::key("memory.model", format!("must be hardware or software, got `{other}`")))
        }
    };
    Ok(software)
}

/// The messaging costs (send and receive overheads scaled by `messaging.overhead_scale`).
fn messaging_costs(
    m: &spec::MessagingSpec,
    scaled: &dyn Fn(u64) -> u64,
    smp_nodes: bool,
) -> Result<MessagingCosts, ConfigError> {
    let msg = MessagingCosts {
        send_overhead_cycles: scaled(m.send_overhead_cycles),
        send_per_arg_word_cycles: scaled(m.send_per_arg_word_cycles),
        max_arg_words: m.max_arg_words,
        interrupt_entry_cycles: scaled(m.interrupt_entry_cycles),
        interrupt_exit_cycles: scaled(m.interrupt_exit_cycles),
        receive_per_arg_word_cycles: scaled(m.receive_per_arg_word_cycles),
        poll_cycles: scaled(m.poll_cycles),
        poll_dispatch_cycles: scaled(m.poll_dispatch_cycles),
        dma_setup_cycles: m.dma_setup_cycles,
        dma_per_region_cycles: m.dma_per_region_cycles,
        dma_bytes_per_cycle: m.dma_bytes_per_cycle,
        dma_align_bytes: m.dma_align_bytes,
        barrier_arity: m.barrier_arity,
        barrier_handler_cycles: m.barrier_handler_cycles,
        barrier_wait_interrupts: m.barrier_wait_interrupts,
        flow_window_messages: m.flow_window_messages,
        flow_buffer_cycles: m.flow_buffer_cycles,
        backedge_interval_cycles: m.backedge_interval_cycles,
        overflow: overflow_costs(m, scaled)?,
    };
    if msg.backedge_interval_cycles > 0 && smp_nodes {
        return Err(ConfigError::key(
            "messaging.backedge_interval_cycles",
            "an SMP node's protocol processor takes its messages, so its compute processor does not poll at \
             back-edges; use one or the other (node.procs_per_node = 1 for back-edge polling)",
        ));
    }
    Ok(msg)
}

/// The polling mechanism of an SMP node's protocol processor (`None` without one, or on
/// one-processor nodes, where the key is inert).
fn poll_costs(
    m: &spec::MessagingSpec,
    clock: f64,
    scaled: &dyn Fn(u64) -> u64,
    smp_nodes: bool,
) -> Result<Option<PollCosts>, ConfigError> {
    let poll = match m.poll_mechanism.as_deref().map(|s| (s, PollMechanism::parse(s))) {
        None | Some((_, Some(None))) => None,
        Some((other, None)) => {
            return Err(ConfigError::key(
                "messaging.poll_mechanism",
                format!("must be none, lanai, dma, interrupt or typhoon0, got `{other}`"),
            ))
        }
        Some((_, Some(Some(mechanism)))) => {
            let Some(receive) = m.poll_receive_cycles else {
                return Err(ConfigError::key(
                    "messaging.poll_receive_cycles",
                    "is required with messaging.poll_mechanism: the protocol thread's receive path after its poll sees a message",
                ));
            };
            // Inert on a one-processor node (its messages interrupt, or wait for a back-edge).
            smp_nodes.then(|| {
                let mut pc = PollCosts::new(mechanism, clock, scaled(receive));
                if let Some(seen) = m.poll_seen_cycles {
                    pc.seen_cycles = scaled(seen);
                    if !pc.burst {
                        pc.seen_in_burst_cycles = scaled(seen);
                    }
                }
                pc
            })
        }
    };
    Ok(poll)
}

/// The memory system's times in picoseconds, with its hierarchy.
fn memory_config(
    spec: &MachineSpec,
    cache_lines: u64,
    msg: &MessagingCosts,
    cycle_ps: f64,
) -> Result<MemoryConfig, ConfigError> {
    let mem = &spec.memory;
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    let memory = MemoryConfig {
        line_bytes: mem.line_bytes,
        cache_lines,
        associativity: mem.associativity,
        hw_pointers: mem.hw_pointers as usize,
        prefetch_buffer_entries: mem.prefetch_buffer_entries as usize,
        barrier_arity: mem.barrier_arity as usize,
        hit_ps: ps(mem.hit_cycles),
        max_run_ahead_ps: ps(mem.max_run_ahead_cycles),
        prefetch_issue_ps: ps(mem.prefetch_issue_cycles),
        rmw_ps: ps(mem.rmw_cycles),
        lock_overhead_ps: ps(mem.lock_overhead_cycles),
        local_memory_ps: ps(mem.local_miss_cycles.saturating_sub(mem.fill_cycles)),
        miss_issue_ps: ps(mem.miss_issue_cycles + mem.remote_miss_delay_cycles),
        fill_ps: ps(mem.fill_cycles),
        dir_ps: ps(mem.dir_cycles),
        dir_occupancy_ps: ps(mem.dir_occupancy_cycles),
        home_cache_ps: ps(mem.home_cache_cycles),
        owner_ps: ps(mem.owner_cycles),
        forward_reply_ps: ps(mem.forward_reply_cycles),
        snooping: mem.snooping,
        inv_send_ps: ps(mem.inv_send_cycles),
        ack_ps: ps(mem.ack_cycles),
        sw_read_ps: ps(mem.sw_read_cycles),
        sw_write_ps: ps(mem.sw_write_cycles),
        trap_entry_ps: ps(msg.interrupt_entry_cycles),
        hierarchy: match &spec.hierarchy {
            None => None,
            Some(h) => Some(hierarchy_config(h, mem, cycle_ps)?),
        },
    };
    Ok(memory)
}

/// Hardware coherence, or the software DSM's costs in picoseconds.
fn coherence_model(
    spec: &MachineSpec,
    software: Option<(&spec::DsmSpec, Instrumentation, DsmHandlers)>,
    tag_lock_cycles: u64,
    msg: &MessagingCosts,
    cycle_ps: f64,
) -> Coherence {
    let mem = &spec.memory;
    let ps = |cycles: u64| cycles_to_ps(cycle_ps, cycles as f64);
    let coherence = match software {
        None => Coherence::Hardware,
        Some((d, instrumentation, handlers)) => {
            let granules = mem.line_bytes / d.tag_granule_bytes;
            let (load_check, store_check) = instrumentation.check_cycles();
            let check_ps = |key: Option<u64>, level: f64| cycles_to_ps(cycle_ps, key.map_or(level, |c| c as f64));
            Coherence::Software(DsmCosts {
                handlers,
                instrumentation,
                load_check_ps: check_ps(d.load_check_cycles, load_check),
                store_check_ps: check_ps(d.store_check_cycles, store_check),
                miss_trap_ps: ps(d.miss_trap_cycles),
                upgrade_fault_ps: ps(d.upgrade_fault_cycles),
                resume_ps: ps(d.resume_cycles),
                handler_ps: ps(d.handler_cycles),
                copy_block_ps: cycles_to_ps(cycle_ps, mem.line_bytes as f64 / d.copy_bytes_per_cycle),
                // Every tag change on an SMP node is made under the node's tag lock (its
                // base part: once per block, however many granules it sets).
                tag_valid_base_ps: ps(d.tag_valid_cycles + tag_lock_cycles),
                tag_valid_ps: ps(d.tag_valid_cycles + granules * d.tag_valid_per_granule_cycles + tag_lock_cycles),
                tag_invalidate_ps: ps(d.tag_invalidate_cycles
                    + d.ecc_stop_cycles.unwrap_or(0)
                    + granules * d.tag_invalidate_per_granule_cycles
                    + tag_lock_cycles),
                tag_invalidate_base_ps: ps(d.tag_invalidate_cycles + d.ecc_stop_cycles.unwrap_or(0) + tag_lock_cycles),
                pages: d.page_bytes.map(|page| PageCosts {
                    // A block larger than a page protects its pages together (one group).
                    lines_shift: (page / mem.line_bytes).max(1).trailing_zeros(),
                    protect_ps: ps(d.protect_cycles.unwrap_or(0)),
                    saving_ps: ps(d.protect_saving_cycles.unwrap_or(0)),
                    emulated_write_ps: ps(d.emulated_write_cycles.unwrap_or(0)),
                }),
                send_small_ps: ps(msg.send_cost_cycles(2, None)),
                send_data_ps: ps(msg.send_cost_cycles(2, Some(1))),
                // Handlers on the compute processor are entered by interrupt, or, with
                // back-edge polling, dispatched by the poll that found their message.
                entry_ps: ps(if msg.backedge_interval_cycles > 0 {
                    msg.poll_dispatch_cycles
                } else {
                    msg.interrupt_entry_cycles
                }),
                exit_ps: if msg.backedge_interval_cycles > 0 { 0 } else { ps(msg.interrupt_exit_cycles) },
            })
        }
    };
    coherence
}

/// The one-sided access costs (`None` without a `[remote]` section).
fn remote_config(spec: &MachineSpec, cycle_ps: f64) -> Result<Option<RemoteConfig>, ConfigError> {
    let remote = match &spec.remote {
        None => None,
        Some(r) => {
            if let Some(b) = r.put_block_bytes {
                if b == 0 || b % 8 != 0 || b > 1 << 20 {
                    return Err(ConfigError::key(
                        "remote.put_block_bytes",
                        format!("must be a multiple of 8 from 8 to 1048576, got {b}"),
                    ));
                }
            }
            if r.max_outstanding_words > u32::MAX as u64 || r.words_per_request > 1 << 20 {
                return Err(ConfigError::key(
                    "remote",
                    "max_outstanding_words and words_per_request must be at most 4294967295 and 1048576",
                ));
            }
            let ps = |c: u64| (c as f64 * cycle_ps).round() as u64;
            Some(RemoteConfig {
                issue_ps: ps(r.issue_cycles),
                max_outstanding_words: r.max_outstanding_words as u32,
                words_per_request: r.words_per_request as usize,
                request_bytes: r.request_bytes,
                service_ps: ps(r.service_cycles),
                service_line_ps: ps(r.service_line_cycles),
                service_word_ps: ps(r.service_word_cycles),
                ni_latency_ps: r.ni_latency_cycles.map(ps),
                get_word_ps: ps(r.get_word_cycles.unwrap_or(0)),
                put_block_words: (r.put_block_bytes.unwrap_or(0) / 8) as usize,
            })
        }
    };
    Ok(remote)
}

/// Whether the network folds a packet's hops into one event (`network.model = "fold"`).
fn network_model_folds(n: &spec::NetworkSpec) -> Result<bool, ConfigError> {
    let fold_events = match n.model.as_deref() {
        None | Some("hop") => false,
        Some("fold") => true,
        Some(other) => {
            return Err(ConfigError::key("network.model", format!("must be \"hop\" or \"fold\", got \"{other}\"")))
        }
    };
    Ok(fold_events)
}

/// The cross-traffic rate checked against what the I/O nodes' links carry.
fn check_cross_traffic_carried(cfg: &MachineConfig) -> Result<(), ConfigError> {
    // Each I/O pair sends its share of the cross-traffic along its own row of links; more
    // than those links carry piles up in the NI queues without bound (the run grew until
    // memory ran out). On a mesh with I/O nodes this is the bisection bandwidth (one row's
    // link each way per pair), and it stays defined on a one-processor copy (a baseline).
    let carried = cfg.topology.io_pairs().len() as f64 * cfg.cycle_ps / cfg.link_ps_per_byte;
    if cfg.cross_traffic_bytes_per_cycle > carried {
        return Err(ConfigError::key(
            "cross_traffic.rate_bytes_per_cycle",
            format!(
                "must be at most {carried} bytes per cycle on this machine (what the I/O nodes' rows of links carry; the bisection bandwidth of a mesh with I/O nodes), got {}",
                cfg.cross_traffic_bytes_per_cycle
            ),
        ));
    }
    Ok(())
}

impl MachineConfig {
    /// Load a preset or TOML text, apply overrides and an optional processor count.
    pub fn load(
        text: &str,
        origin: &str,
        overrides: &[String],
        procs: Option<usize>,
    ) -> Result<MachineConfig, ConfigError> {
        let mut spec = parse_spec(text, origin, overrides)?;
        // A range error names the machine (the file, or the preset) as well as the key.
        let named = |e: ConfigError| ConfigError { message: format!("{origin}: {}", e.message) };
        if let Some(p) = procs {
            spec = resize_spec(spec, p).map_err(named)?;
        }
        MachineConfig::from_spec(spec).map_err(named)
    }

    /// A shipped preset by name, with overrides.
    pub fn preset(name: &str, overrides: &[String], procs: Option<usize>) -> Result<MachineConfig, ConfigError> {
        let text = preset_text(name).ok_or_else(|| ConfigError {
            message: format!(
                "unknown machine `{name}` (presets: {}; or give a path to a .toml file)",
                preset_names().join(", ")
            ),
        })?;
        MachineConfig::load(text, name, overrides, procs)
    }

    /// Validate a spec into simulator units: each key's range, then each part of the machine in
    /// turn (the order of the checks is the order errors are reported in).
    pub fn from_spec(spec: MachineSpec) -> Result<MachineConfig, ConfigError> {
        let n = &spec.network;
        let m = &spec.messaging;
        // Every key's own range first (so the checks below divide by no zero).
        check_bounds(&spec)?;
        let clock = spec.processor.clock_mhz;
        let scale = m.overhead_scale;
        let scaled = |cycles: u64| (cycles as f64 * scale).round() as u64;
        let bw = n.link_bytes_per_ns;
        let topology = Topology::new(topology_kind(n)?).map_err(|e| ConfigError::key("network", e))?;
        let ct = &spec.cross_traffic;
        let cross_traffic_arbitration = cross_traffic_arbitration(&spec, &topology)?;
        if m.dma_align_bytes < 8 || !m.dma_align_bytes.is_power_of_two() {
            return Err(ConfigError::key(
                "messaging.dma_align_bytes",
                format!("must be a power of two >= 8, got {}", m.dma_align_bytes),
            ));
        }
        let cache_lines = check_cache(&spec)?;
        let (smp_nodes, tag_lock_cycles) = node_kind(&spec)?;
        let software = software_dsm(&spec, smp_nodes)?;
        let max_time_ps = spec.limits.max_sim_time_ms * 1e9;
        if max_time_ps >= u64::MAX as f64 / 4.0 {
            return Err(ConfigError::key(
                "limits.max_sim_time_ms",
                format!("must be at most {:.0} (the picoseconds must fit in 62 bits)", u64::MAX as f64 / 4.0 / 1e9),
            ));
        }
        check_times_fit(&spec, 1e6 / clock, max_time_ps)?;
        let cycle_ps = 1e6 / clock;
        let msg = messaging_costs(m, &scaled, smp_nodes)?;
        let poll = poll_costs(m, clock, &scaled, smp_nodes)?;
        let memory = memory_config(&spec, cache_lines, &msg, cycle_ps)?;
        let coherence = coherence_model(&spec, software, tag_lock_cycles, &msg, cycle_ps);
        let remote = remote_config(&spec, cycle_ps)?;
        let fold_events = network_model_folds(n)?;
        let cfg = MachineConfig {
            cycle_ps,
            link_ps_per_byte: 1000.0 / bw,
            router_latency_ps: ns_to_ps("network.router_latency_ns", n.router_latency_ns)?,
            ni_latency_ps: ns_to_ps("network.ni_latency_ns", n.ni_latency_ns)?,
            header_bytes: n.header_bytes,
            max_packet_payload_bytes: n.max_packet_payload_bytes,
            ni_input_queue_packets: n.ni_input_queue_packets,
            ni_output_queue_packets: n.ni_output_queue_packets,
            cross_traffic_bytes_per_cycle: ct.rate_bytes_per_cycle,
            cross_traffic_message_bytes: ct.message_bytes,
            cross_traffic_arbitration,
            msg,
            mem: memory,
            coherence,
            remote,
            max_events: spec.limits.max_events,
            max_time_ps: max_time_ps as u64,
            fold_events,
            smp_nodes,
            poll,
            topology,
            spec,
        };
        check_cross_traffic_carried(&cfg)?;
        Ok(cfg)
    }

    /// A fingerprint of the resolved machine: 16 hex digits of the FNV-1a hash of its TOML
    /// (every key, after overrides and resizing). Two configs with the same fingerprint
    /// describe the same machine; results records carry it so a run can be reproduced.
    pub fn fingerprint(&self) -> String {
        let text = toml::to_string(&self.spec).expect("a spec serializes");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// Cycles of the application work cost `costs.NAME`; the error names the entry and the
    /// ones this machine has.
    pub fn cost_cycles(&self, name: &str) -> Result<u64, ConfigError> {
        self.spec.costs.get(name).copied().ok_or_else(|| {
            let have: Vec<&str> = self.spec.costs.keys().map(|s| s.as_str()).collect();
            ConfigError {
                message: format!(
                    "the program needs cost entry `costs.{name}`, which machine `{}` does not define (it has: {}); add it with --set costs.{name}=CYCLES",
                    self.spec.name,
                    have.join(", ")
                ),
            }
        })
    }

    pub fn nprocs(&self) -> usize {
        self.topology.nprocs()
    }

    /// Cycles of a cache hit in the first level a processor looks in: `hierarchy.l1.hit_cycles`
    /// when the machine has inner levels, `memory.hit_cycles` otherwise.
    pub fn first_hit_cycles(&self) -> u64 {
        match self.spec.hierarchy.as_ref().and_then(|h| h.l1.as_ref()) {
            Some(l1) => l1.hit_cycles,
            None => self.spec.memory.hit_cycles,
        }
    }

    /// Fan-in of the machine's combining-tree barrier of `kind` (`messaging.barrier_arity` or
    /// `memory.barrier_arity`).
    pub fn barrier_arity(&self, kind: BarrierKind) -> usize {
        match kind {
            BarrierKind::Messages => self.msg.barrier_arity as usize,
            BarrierKind::SharedMemory => self.mem.barrier_arity,
        }
    }

    /// Picoseconds of `cycles` processor cycles.
    #[inline]
    pub fn cycles_to_ps(&self, cycles: f64) -> u64 {
        cycles_to_ps(self.cycle_ps, cycles)
    }

    /// Processor cycles of `ps` picoseconds.
    #[inline]
    pub fn ps_to_cycles(&self, ps: u64) -> f64 {
        ps as f64 / self.cycle_ps
    }

    /// Bisection bandwidth of the network in bytes per processor cycle (both directions).
    pub fn bisection_bytes_per_cycle(&self) -> f64 {
        self.topology.bisection_links().len() as f64 * self.cycle_ps / self.link_ps_per_byte
    }

    /// Mean router hops between two distinct processors (0 with fewer than two processors): over
    /// all ordered pairs up to [`EXACT_MEAN_HOPS_PROCS`] processors; above, over the pairs of
    /// [`MEAN_HOPS_SAMPLES`] evenly spaced sources and as many evenly spaced destinations (all
    /// pairs is quadratic: 100000 processors took minutes).
    pub fn mean_hops(&self) -> f64 {
        let n = self.nprocs();
        if n <= EXACT_MEAN_HOPS_PROCS {
            self.mean_hops_over(n)
        } else {
            self.mean_hops_over(MEAN_HOPS_SAMPLES)
        }
    }

    /// Mean hops over the distinct pairs of `samples` evenly spaced sources and destinations
    /// (every processor when `samples` is the processor count).
    fn mean_hops_over(&self, samples: usize) -> f64 {
        let n = self.nprocs();
        let samples = samples.min(n);
        if samples < 2 {
            return 0.0;
        }
        let at = |i: usize| ((i as u128 * n as u128) / samples as u128) as usize;
        let (mut total, mut pairs) = (0u64, 0u64);
        for a in (0..samples).map(at) {
            for b in (0..samples).map(at).filter(|&b| b != a) {
                total += self.topology.hops(a, b) as u64;
                pairs += 1;
            }
        }
        total as f64 / pairs as f64
    }

    /// Uncontended one-way network latency of a `bytes`-byte packet (header included) between two
    /// processors at the mean distance, in processor cycles: injection and ejection NI latency,
    /// [`Self::mean_hops`] router hops, and the packet's serialization once (cut-through). This is
    /// what the network model charges a lone packet; NI queueing and message overheads are not in it.
    pub fn packet_latency_cycles(&self, bytes: u64) -> f64 {
        let ps = 2.0 * self.ni_latency_ps as f64
            + self.mean_hops() * self.router_latency_ps as f64
            + bytes as f64 * self.link_ps_per_byte;
        ps / self.cycle_ps
    }
}

/// Picoseconds of `cycles` cycles of `cycle_ps` each, rounded to the nearest picosecond.
#[inline]
fn cycles_to_ps(cycle_ps: f64, cycles: f64) -> u64 {
    round_to_u64(cycles * cycle_ps)
}

/// `x.round() as u64` (half away from zero, NaN and negatives 0, saturating), without the
/// call to libm's `round` that `f64::round` compiles to on baseline x86-64 (no SSE4.1): the
/// hot paths convert cycles and bytes to picoseconds on every event. Exact: below 2^53 the
/// fraction `x - trunc(x)` is computed without rounding, and from 2^53 up every `f64` is an
/// integer.
#[inline]
pub(crate) fn round_to_u64(x: f64) -> u64 {
    let whole = x as u64; // truncates; NaN and negatives give 0, too large u64::MAX
    let frac = x - whole as f64;
    whole.saturating_add(u64::from(frac >= 0.5))
}

/// Resize the spec's network to `nprocs` processors, keeping per-link and per-node parameters.
pub fn resize_spec(mut spec: MachineSpec, nprocs: usize) -> Result<MachineSpec, ConfigError> {
    // A topology sized by `network.nprocs` that a `--set` just chose has no size yet: the
    // requested count is its size (so `--set network.topology=crossbar --procs 6` works).
    if spec.network.nprocs == 0 && !matches!(spec.network.topology.as_str(), "mesh" | "torus") {
        spec.network.nprocs = nprocs;
    }
    let kind = topology_kind(&spec.network)?;
    let new = resize(&kind, nprocs).map_err(|e| ConfigError { message: format!("--procs {nprocs}: {e}") })?;
    match new {
        TopologyKind::Mesh { dims, .. } => spec.network.dims = dims.to_vec(),
        TopologyKind::Torus { dims } => spec.network.dims = dims,
        _ => spec.network.nprocs = nprocs,
    }
    Ok(spec)
}

#[cfg(test)]
mod mean_hops_tests {
    use super::*;

    #[test]
    fn mean_hops_samples_a_large_machine_quickly_and_closely() {
        // Regression (issue 36): `experiment bisection --procs 100000` spent minutes here.
        let big = MachineConfig::preset("alewife", &[], Some(100_000)).unwrap();
        let t = std::time::Instant::now();
        let sampled = big.mean_hops();
        assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
        // A 16384-processor mesh: the exact mean and the sampled one agree within 1%.
        let m = MachineConfig::preset("alewife", &[], Some(EXACT_MEAN_HOPS_PROCS)).unwrap();
        let (exact, approx) = (m.mean_hops(), m.mean_hops_over(MEAN_HOPS_SAMPLES));
        assert!((approx - exact).abs() < 0.01 * exact, "exact {exact}, sampled {approx}");
        // A square-ish mesh of 100000 has a mean distance of about 2 x 316 / 3 hops.
        assert!((150.0..260.0).contains(&sampled), "{sampled}");
        assert_eq!(MachineConfig::preset("alewife", &[], Some(1)).unwrap().mean_hops(), 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::round_to_u64;
    use proptest::prelude::*;

    /// What `round_to_u64` replaces, exactly.
    fn reference(x: f64) -> u64 {
        x.round() as u64
    }

    #[test]
    fn rounding_to_picoseconds_agrees_with_f64_round_at_the_edges() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            -0.5,
            -0.7,
            4503599627370495.5, // 2^52 - 0.5
            9007199254740993.0, // above 2^53
            9.3e18,
            1.8446744073709552e19, // 2^64
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        for x in edges {
            assert_eq!(round_to_u64(x), reference(x), "{x:e}");
        }
    }

    proptest! {
        #[test]
        fn rounding_to_picoseconds_agrees_with_f64_round(x in any::<f64>(), cycles in 0.0f64..1e12, ps in 1.0f64..1e6) {
            prop_assert_eq!(round_to_u64(x), reference(x));
            prop_assert_eq!(round_to_u64(cycles * ps), reference(cycles * ps));
        }
    }
}

/// The key table is the one declaration of every key: a machine with every key given (a value
/// of each key's kind) deserializes, its documented TOML names every key with its unit and
/// meaning and nothing undeclared, and `--set` accepts every key.
#[cfg(test)]
mod key_table_tests {
    use super::*;

    /// A value of `kind` that `--set` and the spec's types accept.
    fn sample(kind: Kind) -> &'static str {
        match kind {
            Kind::Whole => "3",
            Kind::Number => "1.5",
            Kind::Bool => "true",
            Kind::Text => "\"mesh\"",
            Kind::List => "[2, 2]",
            Kind::Section | Kind::Map => unreachable!("flattened"),
        }
    }

    /// TOML text giving every key of the table a sample value (`costs.*` as `costs.sample`).
    fn full_toml() -> String {
        let mut sections: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
        for k in keys() {
            let (section, name) = match k.key.rsplit_once('.') {
                Some((s, "*")) => (s.to_string(), "sample"),
                Some((s, n)) => (s.to_string(), n),
                None => (String::new(), k.key),
            };
            let line = format!("{name} = {}", sample(k.kind));
            match sections.iter_mut().find(|(s, _)| *s == section) {
                Some((_, lines)) => lines.push(line),
                None => sections.push((section, vec![line])),
            }
        }
        let mut text = String::new();
        for (section, lines) in sections {
            if !section.is_empty() {
                text.push_str(&format!("[{section}]\n"));
            }
            for l in lines {
                text.push_str(&l);
                text.push('\n');
            }
        }
        text
    }

    #[test]
    fn machine_key_table_declares_every_key_of_the_spec_once() {
        let spec = parse_spec(&full_toml(), "full", &[]).expect("every key of the table deserializes");
        let doc = spec.to_documented_toml();
        let mut section = String::new();
        let mut seen = Vec::new();
        for line in doc.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if line.starts_with('[') {
                section = line.trim_matches(|c| c == '[' || c == ']').to_string();
                continue;
            }
            let (k, _) = line.split_once(" = ").expect("key = value");
            let full = if section.is_empty() { k.to_string() } else { format!("{section}.{k}") };
            let d = key_doc(&full).unwrap_or_else(|| panic!("`{full}` is in the spec but not in the key table"));
            assert!(line.ends_with(&format!("# [{}] {}", d.unit, d.doc)), "{full}: {line}");
            seen.push(if full.starts_with("costs.") { "costs.*".to_string() } else { full });
        }
        // Every key once (a section's plain keys come before its sub-tables in TOML).
        let mut table: Vec<&str> = keys().iter().map(|k| k.key).collect();
        table.sort();
        seen.sort();
        assert_eq!(seen, table, "the documented TOML lists every key of the table, once");
        table.dedup();
        assert_eq!(table.len(), keys().len(), "a key is declared twice");
    }

    #[test]
    fn set_accepts_every_key_of_the_table_with_its_type() {
        let full = full_toml();
        for k in keys() {
            let key = k.key.replace(".*", ".other");
            let ov = [format!("{key}={}", sample(k.kind))];
            let spec = parse_spec(&full, "full", &ov).unwrap_or_else(|e| panic!("--set {}: {e}", ov[0]));
            assert!(spec.to_documented_toml().contains(&format!("# [{}] {}", k.unit, k.doc)), "{key}");
            // A value of another kind is refused, naming the key.
            let wrong = if k.kind == Kind::Bool { "[1]" } else { "true" };
            let e = parse_spec(&full, "full", &[format!("{key}={wrong}")]).expect_err(&key);
            assert!(e.message.contains(&format!("`{key}`")), "{key}: {e}");
        }
        assert!(parse_spec(&full, "full", &["no.such_key=1".into()])
            .unwrap_err()
            .message
            .contains("unknown machine key"));
    }

    #[test]
    fn key_bounds_come_from_the_table() {
        // A bound declared on a key is checked by from_spec, in --set's words.
        for (key, value, want) in [
            ("messaging.max_arg_words", "1", "must be at least 2, got 1"),
            ("hierarchy.l1.associativity", "0", "must be at least 1, got 0"),
            ("network.link_bytes_per_ns", "0", "must be a positive number, got 0.0"),
            ("node.procs_per_node", "3", "must be 1 or 2"),
        ] {
            let machine = if key.starts_with("hierarchy") { "t3e" } else { "alewife" };
            let e = MachineConfig::preset(machine, &[format!("{key}={value}")], None).unwrap_err();
            assert!(e.message.contains(&format!("`{key}`: {want}")), "{key}: {e}");
        }
        let positive: Vec<&str> = keys().iter().filter(|k| k.bound == Bound::Positive).map(|k| k.key).collect();
        assert!(positive.contains(&"hierarchy.l2.bytes_per_cycle") && positive.contains(&"processor.clock_mhz"));
        // Every overhead the scale multiplies is in messaging and in cycles.
        for k in keys().iter().filter(|k| k.conv == Conv::Overhead) {
            assert!(k.key.starts_with("messaging.") && k.unit == "cycles", "{}", k.key);
        }
    }
}
