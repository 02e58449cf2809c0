//! # commlab-sim: the simulated machine
//!
//! A deterministic discrete-event model of a multiprocessor whose nodes integrate coherent
//! shared memory (a directory protocol with LimitLESS overflow, or Blizzard-style software
//! DSM), active messages and DMA bulk transfer, on a network with contention. Applications
//! written against [`commlab_api::Node`] run unchanged on it.
//!
//! ```text
//!  MachineConfig ──▶ Simulator (Backend) ──run(Program)──▶ engine: event queue (time, priority, seq)
//!   (machine/)                                                │  ▲          │  ▲
//!                                 processor coroutines ◀──────┘  │          │  │ notices
//!                                 (Program::main per node)       │ effects  ▼  │
//!                                                          mem: caches,   net: links, NI queues
//!                                                          directory      (NetEvent)
//! ```
//!
//! Imports go one way, down this list: `queue`, `topology`, `stats`, `machine`, `net`, `mem`,
//! `msg`, `engine` (checked by `commlab-cli/tests/module_graph.rs`). The network and the
//! memory controller never reach up into the engine: the network schedules its own
//! `NetEvent`s and reports through notices, the controller reports `MemEffect`s through an
//! outbox, and the engine carries both out.
//!
//! Public surface: [`machine`] (configuration: presets, `--set`, validation into typed,
//! unit-suffixed fields), [`topology`] (network shapes and routing), [`mem::protocol`] (the
//! coherence tables), [`Simulator`] (the backend) and [`SimError`]. Time is kept in
//! picoseconds (`u64`); results are reported in processor cycles.
//!
//! ```
//! use commlab_api::{Backend, Handler, Node, Program};
//! use commlab_sim::{machine::MachineConfig, Simulator};
//! use std::sync::Arc;
//!
//! struct Hello;
//! impl Program for Hello {
//!     type State = u64;
//!     fn handlers(&self) -> Vec<Handler<u64>> { vec![|s, _, m| *s += m.args[0]] }
//!     fn init_state(&self, _: usize, _: usize) -> u64 { 0 }
//!     fn main<N: Node<State = u64>>(&self, node: &mut N) {
//!         let next = (node.id() + 1) % node.nprocs();
//!         node.send_am(next, commlab_api::HandlerId(0), &[1]);
//!         node.wait_until("token", |s| *s == 1);
//!         node.barrier();
//!     }
//! }
//! let cfg = MachineConfig::preset("alewife", &[], Some(4)).unwrap();
//! let out = Simulator::new(cfg).run(Arc::new(Hello)).unwrap();
//! assert!(out.states.iter().all(|&s| s == 1));
//! assert!(out.stats.cycles > 100.0);
//! ```

mod engine;
pub mod machine;
pub mod mem;
mod msg;
mod net;
mod queue;
mod stats;
pub mod topology;

pub use engine::{RunControl, SimError, STACK_BYTES, STACK_USE_BYTES};
pub use stats::counters;
pub use stats::trace::TraceOptions;

use commlab_api::{Backend, BarrierKind, Program, RunOutput};
use machine::MachineConfig;
use std::sync::Arc;

/// The simulated machine as a [`Backend`].
#[derive(Clone)]
pub struct Simulator {
    cfg: Arc<MachineConfig>,
    checked: bool,
    recording: engine::Recording,
    control: Option<Arc<RunControl>>,
}

impl Simulator {
    pub fn new(cfg: MachineConfig) -> Self {
        Simulator { cfg: Arc::new(cfg), checked: false, recording: engine::Recording::default(), control: None }
    }

    /// Watch and stop this simulator's runs (and those of its resized copies) through `control`.
    pub fn with_control(mut self, control: Arc<RunControl>) -> Self {
        self.control = Some(control);
        self
    }

    /// Run the coherence invariant checker after every protocol event and on every access
    /// (slow; for tests).
    pub fn checked(mut self, on: bool) -> Self {
        self.checked = on;
        self
    }

    /// Record latency distributions (`RunStats::latencies`): miss stalls, one-way message
    /// latencies, NI and lock waits. Off by default; off, the engine records nothing.
    pub fn record_latencies(mut self, on: bool) -> Self {
        self.recording.latencies = on;
        self
    }

    /// Record the run as a timeline (`RunStats::trace`): each processor's time account as
    /// spans, messages and misses as flows, within the options' window and cap. Off by default.
    pub fn trace(mut self, options: Option<TraceOptions>) -> Self {
        self.recording.trace = options;
        self
    }

    /// Keep interval statistics every `cycles` cycles of the timed region
    /// (`RunStats::intervals`). Off by default.
    pub fn intervals(mut self, cycles: Option<f64>) -> Self {
        self.recording.interval_cycles = cycles;
        self
    }

    pub fn config(&self) -> &MachineConfig {
        &self.cfg
    }

    /// Estimated host bytes of the machine's own state for one run, before application data.
    pub fn machine_bytes_estimate(&self) -> MachineBytes {
        let (processors, caches) = engine::machine_bytes(&self.cfg);
        let stacks = (self.cfg.nprocs() as u64).saturating_mul(STACK_BYTES as u64 + GUARD_PAGE_BYTES);
        MachineBytes { processors, caches, stacks }
    }
}

/// The host memory a machine's own state needs (an estimate, saturating): what the CLI adds to
/// an application's data estimate to refuse a run that cannot fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineBytes {
    /// `nprocs x (32 KiB of coroutine stack in use + 8 KiB of per-processor state)`.
    pub processors: u64,
    /// `nprocs x cache lines x 16 bytes`: the cache's way record (a line's tag, and its LRU stamp,
    /// state and prefetch flag packed in one word; `mem/cache.rs`), what a fully touched cache maps.
    pub caches: u64,
    /// Address space, not memory: `nprocs x (STACK_BYTES + a guard page)`, the coroutine stacks
    /// mapped whole (only their touched pages, counted in `processors`, take memory); what an
    /// address-space limit (`ulimit -v`) must leave room for.
    pub stacks: u64,
}

/// The guard page below each coroutine stack (4 KiB pages).
const GUARD_PAGE_BYTES: u64 = 4096;

impl MachineBytes {
    pub fn total(&self) -> u64 {
        self.processors.saturating_add(self.caches)
    }
}

impl Backend for Simulator {
    type Error = SimError;

    fn nprocs(&self) -> usize {
        self.cfg.nprocs()
    }

    fn cycles_per_us(&self) -> f64 {
        self.cfg.spec.processor.clock_mhz
    }

    fn hops(&self, a: usize, b: usize) -> usize {
        self.cfg.topology.hops(a, b)
    }

    fn bisection_partner(&self, p: usize) -> Option<usize> {
        self.cfg.topology.bisection_partner(p)
    }

    fn bisection_bytes_per_cycle(&self) -> f64 {
        self.cfg.bisection_bytes_per_cycle()
    }

    fn max_am_args(&self) -> usize {
        (self.cfg.msg.max_arg_words / 2) as usize
    }

    fn cost_cycles(&self, name: &str) -> Result<u64, SimError> {
        self.cfg.cost_cycles(name).map_err(|e| SimError::Program(e.message))
    }

    fn barrier_arity(&self, kind: BarrierKind) -> usize {
        self.cfg.barrier_arity(kind)
    }

    fn line_bytes(&self) -> usize {
        self.cfg.mem.line_bytes as usize
    }

    fn one_sided(&self) -> bool {
        self.cfg.remote.is_some()
    }

    fn access_control(&self) -> bool {
        self.cfg.coherence.software().is_some()
    }

    fn with_nprocs(&self, nprocs: usize) -> Result<Self, SimError> {
        let mut spec =
            machine::resize_spec(self.cfg.spec.clone(), nprocs).map_err(|e| SimError::Program(e.to_string()))?;
        if nprocs == 1 {
            // A one-processor copy (a sequential baseline) has no bisection for cross-traffic
            // to cross: the baseline of a run under cross-traffic is the program alone.
            spec.cross_traffic.rate_bytes_per_cycle = 0.0;
            // Nor access checks: the Blizzard study's speedups are over the sequential program
            // as it ran on a workstation, uninstrumented (§9; Table 1's "none").
            if let Some(d) = &mut spec.dsm {
                d.instrumentation = Some("none".to_string());
                d.load_check_cycles = None;
                d.store_check_cycles = None;
            }
            // It does the work of all the machine's processors on one: its limit on simulated
            // time (a guard against a runaway run) is the machine's times its processors
            // (appbt's default baseline on alewife ran past 60 s simulated and failed the run).
            let n = self.cfg.nprocs() as f64;
            spec.limits.max_sim_time_ms *= n.max(1.0);
        }
        let cfg = MachineConfig::from_spec(spec).map_err(|e| SimError::Program(e.to_string()))?;
        Ok(Simulator {
            cfg: Arc::new(cfg),
            checked: self.checked,
            recording: self.recording,
            control: self.control.clone(),
        })
    }

    fn run<P: Program>(&self, program: Arc<P>) -> Result<RunOutput<P::State>, SimError> {
        engine::run(Arc::clone(&self.cfg), program, self.checked, self.recording, self.control.as_deref())
    }
}
