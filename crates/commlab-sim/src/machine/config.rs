//! [`MachineConfig`]: a checked machine in the simulator's units, and the configuration of each
//! of its parts (messaging, memory and its hierarchy, coherence, one-sided access).

use super::error::ConfigError;
use super::poll::PollCosts;
use super::spec::MachineSpec;
use crate::queue::TieOrder;
use crate::topology::Topology;
use commlab_api::BarrierKind;

/// [`MachineConfig::mean_hops`] is exact (every ordered pair) up to this many processors.
const EXACT_MEAN_HOPS_PROCS: usize = 16384;
/// Above `EXACT_MEAN_HOPS_PROCS`, sources and destinations sampled for the mean hops.
const MEAN_HOPS_SAMPLES: usize = 1024;

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
    /// `network.model = "fold"`: under the key tie order the network runs a packet's hops ahead
    /// of their time where nothing in between can touch them (`net::Network::hop_ahead`);
    /// `false` is the per-hop reference.
    pub fold_events: bool,
    /// `simulation.tie_order`: how events due at the same picosecond and priority are ordered
    /// (`Key`, the default; `Creation` is the order results were computed in before).
    pub tie_order: TieOrder,
    /// `node.procs_per_node = 2`: every message handler runs on the node's second processor.
    pub smp_nodes: bool,
    /// `messaging.poll_mechanism` on an SMP node: how its protocol processor polls (None: the
    /// generic poll, or a one-processor node).
    pub poll: Option<PollCosts>,
}

/// Messaging costs in picoseconds (see [`keys`](super::keys) for meanings: each key is in
/// cycles, converted here once, after `messaging.overhead_scale` multiplies the send and receive
/// overheads), so nothing that charges them converts.
#[derive(Clone, Debug)]
pub struct MessagingCosts {
    pub send_overhead_ps: u64,
    pub send_per_arg_word_ps: u64,
    pub max_arg_words: u64,
    pub interrupt_entry_ps: u64,
    pub interrupt_exit_ps: u64,
    /// Every main-thread operation in interrupt receive mode (`messaging.interrupt_look_cycles`).
    pub interrupt_look_ps: u64,
    /// A handler reading one 32-bit argument word (`messaging.receive_per_arg_word_cycles`).
    pub receive_per_arg_word_ps: u64,
    pub poll_ps: u64,
    pub poll_dispatch_ps: u64,
    pub dma_setup_ps: u64,
    pub dma_per_region_ps: u64,
    /// The DMA engine's time per byte (`messaging.dma_bytes_per_cycle`'s inverse).
    pub dma_ps_per_byte: f64,
    pub dma_align_bytes: u64,
    pub barrier_arity: u64,
    /// The message barrier handler's body (`messaging.barrier_handler_cycles`).
    pub barrier_handler_ps: u64,
    /// A processor waiting in the message barrier takes its messages by interrupt.
    pub barrier_wait_interrupts: bool,
    /// Flow-control window in messages (0: off).
    pub flow_window_messages: u64,
    /// Copying a message into the software queue of flow control.
    pub flow_buffer_ps: u64,
    /// Polls at loop back-edges, one per this much computation (0: messages interrupt).
    pub backedge_interval_ps: u64,
    /// The network overflow trap (`messaging.overflow_*`), if the machine has one.
    pub overflow: Option<OverflowCosts>,
}

/// The network overflow trap's timeout and costs in picoseconds (the costs scaled by
/// `messaging.overhead_scale`, as the receive overheads they are; the timeout is not a cost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverflowCosts {
    pub timeout_ps: u64,
    pub entry_ps: u64,
    pub drain_per_message_ps: u64,
    pub drain_per_word_ps: u64,
    pub exit_ps: u64,
    pub dispatch_ps: u64,
}

impl OverflowCosts {
    /// Copying a message of `words64` u64 arguments and payload words into the buffer.
    pub fn drain_ps(&self, words64: usize) -> u64 {
        self.drain_per_message_ps + self.drain_per_word_ps * 2 * words64 as u64
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
    pub fn send_cost_ps(&self, arg_words64: usize, regions: Option<usize>) -> u64 {
        let mut c = self.send_overhead_ps + self.send_per_arg_word_ps * 2 * arg_words64 as u64;
        if let Some(r) = regions {
            c += self.dma_setup_ps + self.dma_per_region_ps * r as u64;
        }
        c
    }

    /// The DMA engine's time for `bytes` of bulk data.
    pub fn dma_ps(&self, bytes: u64) -> u64 {
        round_to_u64(bytes as f64 * self.dma_ps_per_byte)
    }

    /// Receive cost of reading a message's `arg_words64` u64 arguments.
    pub fn receive_cost_ps(&self, arg_words64: usize) -> u64 {
        self.receive_per_arg_word_ps * 2 * arg_words64 as u64
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

/// The memory hierarchy in simulator units (`[hierarchy]`, see [`keys`](super::keys)). Levels are numbered
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

impl MachineConfig {
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

    /// A cache hit in the first level a processor looks in: the innermost level's when the
    /// machine has a hierarchy (`hierarchy.l1.hit_cycles`), `memory.hit_cycles` otherwise.
    pub fn first_hit_ps(&self) -> u64 {
        self.mem.hierarchy.as_ref().map_or(self.mem.hit_ps, |h| h.levels[0].hit_ps)
    }

    /// Fan-in of the machine's combining-tree barrier of `kind` (`messaging.barrier_arity` or
    /// `memory.barrier_arity`).
    pub fn barrier_arity(&self, kind: BarrierKind) -> usize {
        match kind {
            BarrierKind::Messages => self.msg.barrier_arity as usize,
            BarrierKind::SharedMemory => self.mem.barrier_arity,
        }
    }

    /// Between two cross-traffic messages of one I/O pair (0: no cross-traffic): the configured
    /// rate shared equally by the pairs.
    pub fn cross_traffic_interval_ps(&self) -> u64 {
        if self.cross_traffic_bytes_per_cycle > 0.0 {
            let per_pair = self.cross_traffic_bytes_per_cycle / self.topology.io_pairs().len() as f64;
            self.cycles_to_ps(self.cross_traffic_message_bytes as f64 / per_pair).max(1)
        } else {
            0
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
    /// all ordered pairs up to `EXACT_MEAN_HOPS_PROCS` processors; above, over the pairs of
    /// `MEAN_HOPS_SAMPLES` evenly spaced sources and as many evenly spaced destinations (all
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
pub(super) fn cycles_to_ps(cycle_ps: f64, cycles: f64) -> u64 {
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

    #[test]
    fn the_t3d_pairs_processors_on_routers_and_runs_one_alone() {
        // 32 processors on 16 routers: 64/31 mean hops, from which ni_latency_ns is derived to
        // give the published 15-cycle 24-byte latency.
        let t3d = MachineConfig::preset("t3d", &[], None).unwrap();
        assert_eq!((t3d.nprocs(), t3d.topology.nrouters()), (32, 16));
        assert!((t3d.mean_hops() - 64.0 / 31.0).abs() < 1e-12, "{}", t3d.mean_hops());
        assert!((t3d.packet_latency_cycles(24) - 15.0).abs() < 0.01, "{}", t3d.packet_latency_cycles(24));
        // Regression: a one-processor reference run (iccg's speedup) was refused as "not a
        // multiple of 2"; it is one router with one processor.
        let one = MachineConfig::preset("t3d", &[], Some(1)).unwrap();
        assert_eq!((one.nprocs(), one.topology.nrouters()), (1, 1));
        assert!(MachineConfig::preset("t3d", &[], Some(3)).is_err());
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
