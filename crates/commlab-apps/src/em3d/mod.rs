//! `em3d`: electromagnetic wave propagation on an irregular bipartite graph (after the
//! Split-C EM3D benchmark). Each iteration updates every E node from its H neighbours,
//! barrier, then every H node from its E neighbours, barrier. The graph generator is
//! documented in `graph.rs`.
//!
//! Variants:
//! - `sm`: node values live in shared memory, each homed at its owner; updates are plain
//!   loads of neighbour values and a store of the node's new value; shared-memory barrier.
//! - `sm-pf`: as `sm`, plus a write-prefetch of each node as its update starts and a
//!   read-prefetch of the neighbour value two edges ahead.
//! - `mp-int` / `mp-poll`: before each phase, the owner of every value read remotely sends it
//!   to each reader in active messages of `values_per_message` values (5, as the study's
//!   program sent, after one word naming the ghost slot), gathering each value by an indirect
//!   load (its index from the send list, then the value) straight into the message; the
//!   handler stores them into the reader's ghost copies; the reader waits until all its
//!   ghosts of the phase have arrived. Receive by interrupt, or by polling: `mp-poll` polls
//!   after every message it sends and receives while it waits; message barrier.
//! - `bulk`: the owner gathers the values for each reader into a contiguous buffer (charged
//!   `costs.bulk_copy_line` per cache line copied, as message overhead) and sends one DMA
//!   message per reader per phase; the reader uses the payload in place as its ghost copies.
//! - `stache` and `custom`, the Blizzard study's pair (Falsafi et al., "Application-specific
//!   protocols for user-level shared memory", SC'94): `stache` is `sm` under the study's name
//!   (the default invalidation protocol of a software-DSM machine); `custom` keeps the node
//!   values in a Tempest user region run by the update protocol ([`crate::update`]): a reader
//!   faults on a remote block once and registers at its home, and after each phase every owner
//!   pushes its updated blocks to their registered readers ([`crate::update::publish`], which
//!   waits for the acknowledgements) before the barrier, so readers never miss again. Blocks
//!   of `block_bytes` (512 by default, the study's custom block; `stache` keeps the machine's
//!   128-byte line), each owner's values padded to whole blocks. `custom` needs fine-grain
//!   access control (software-DSM machines only) and synchronises with the message barrier
//!   (as dsmc, barnes and appbt's `custom` do). Both report `counters.speedup`:
//!   the cycles of the sequential program (`bulk` on one processor of the same machine and
//!   graph: private data, no access checks, no messages; `counters.serial_cycles`) over the
//!   run's.
//!
//! Private data: every processor keeps its part of the graph in its own memory, as the
//! program did, and every variant references it through the cache (see `private.rs`): per
//! edge a coefficient (8 bytes) and a neighbour index (4 bytes: a pointer in shared memory,
//! a local-or-ghost index with messages), per node an edge count (4 bytes); with messages also
//! the local-then-ghost value arrays (8 bytes a value) and the send lists (4-byte indices).
//! So every variant pays for the same references: per edge the coefficient, the index and the
//! neighbour's value (a shared load, or a private read of a local or ghost copy); per node the
//! edge count and the node's value, read and written.
//!
//! Work costs (machine `[costs]`): `em3d_edge` per edge (the multiply-add and loop; its three
//! loads are simulated), `em3d_node` per node (loop control; its loads and store are
//! simulated), `em3d_ghost_value` per ghost value a handler stores.

mod graph;
mod private;

use crate::app::common::{CYCLES_PER_ITERATION, SERIAL_CYCLES, SPEEDUP};
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::app::{ParamDoc, Variant};
use crate::params::Params;
use crate::params::POSITIVE;
use crate::private::{Arrays, Shape};
use crate::runtime::update::{self, HasUpdate, UpdateState};
use commlab_api::SetCounter;
use commlab_api::{
    Addr, Backend, BarrierKind, FaultHandler, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId,
    Program, ReceiveMode, RunOutput,
};
use graph::{Graph, GraphParams, ProcPlan, SharedLayout, E, H};
use private::Array;
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters em3d`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [CYCLES_PER_ITERATION, SERIAL_CYCLES, SPEEDUP];
    EDGES = "edges", "count",
        "edges of the E/H graph";
    REMOTE_EDGE_FRACTION = "remote_edge_fraction", "fraction",
        "edges whose two ends live on different processors, over all edges";
    GHOST_VALUES_PER_ITERATION = "ghost_values_per_iteration", "count",
        "remote values the processors need each iteration, all processors";
    VALUES_PER_MESSAGE = "values_per_message", "count",
        "values one fine-grain message carries (mp-int and mp-poll)";
    GHOST_VALUES_RECEIVED = "ghost_values_received", "count",
        "ghost E and H values the processors received, all processors";
    UPDATES_PUSHED = "updates_pushed", "count",
        "acknowledgements of pushed updates the writers received (custom, Tempest's update protocol)";
}

pub const INFO: AppInfo = AppInfo {
    name: "em3d",
    summary: "EM3D: bipartite E/H graph relaxation; shared memory, prefetch, fine-grain messages, bulk DMA, Tempest update protocol",
    variants: &["sm", "sm-pf", "mp-int", "mp-poll", "bulk", "stache", "custom"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "nodes", default: "10000", doc: "total E and H nodes (at least 2 per processor)" },
        ParamDoc { name: "degree", default: "10", doc: "in-edges per node" },
        ParamDoc { name: "remote", default: "0.2", doc: "fraction of edges whose source is on another processor" },
        ParamDoc { name: "span", default: "3", doc: "remote sources lie on processors within this id distance" },
        ParamDoc { name: "iterations", default: "50", doc: "E-then-H iterations timed" },
        ParamDoc {
            name: "block_bytes",
            default: "512",
            doc: "custom: the user region's block size in bytes (512 as the study's custom protocol; a power of two from the machine's line to 64 lines)",
        },
        ParamDoc {
            name: "values_per_message",
            default: "5",
            doc: "most ghost values per fine-grain message (mp-int, mp-poll): 5 as in the study; fewer where the argument cap (less one slot word) is smaller",
        },
    ],
};

/// Work costs from the machine's `[costs]` table (see the module documentation).
#[derive(Clone, Copy, Debug)]
struct Costs {
    edge: u64,
    node: u64,
    ghost_value: u64,
    bulk_copy_line: u64,
}

impl Costs {
    fn of<B: Backend>(b: &B) -> Result<Costs, AppError> {
        Ok(Costs {
            edge: crate::app::cost(b, "em3d_edge")?,
            node: crate::app::cost(b, "em3d_node")?,
            ghost_value: crate::app::cost(b, "em3d_ghost_value")?,
            bulk_copy_line: crate::app::cost(b, "bulk_copy_line")?,
        })
    }
}
const GHOSTS: HandlerId = HandlerId(0);
const GHOSTS_BULK: HandlerId = HandlerId(1);
/// The update protocol's handlers follow the program's own (`custom`).
const UPDATE_FIRST: u32 = 2;

/// The Blizzard study's pair of variants (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Study {
    Stache,
    Custom,
}

/// Private state of one processor (message variants): `vals[k]` holds this processor's own
/// nodes of kind `k`, then its ghost copies of remote ones.
pub struct State {
    vals: [Vec<f64>; 2],
    own: [usize; 2],
    /// Ghost values of each kind received so far (all phases).
    received: [u64; 2],
    /// Shared arrays of E and H values (shared-memory variants).
    arrays: Option<[Addr; 2]>,
    /// `costs.em3d_ghost_value`, for the handlers.
    ghost_value_cycles: u64,
    /// The update protocol over the user region of node values (`custom`).
    up: UpdateState,
}

impl HasUpdate for State {
    fn update_state(&self) -> &UpdateState {
        &self.up
    }
    fn update_state_mut(&mut self) -> &mut UpdateState {
        &mut self.up
    }
}

struct Em3d {
    variant: Variant,
    study: Option<Study>,
    iterations: usize,
    plans: Vec<ProcPlan>,
    layout: SharedLayout,
    init: [Vec<f64>; 2],
    /// Values per fine-grain message (`values_per_message`).
    per_message: usize,
    /// Where each processor's private data lives.
    private: Vec<Shape>,
    line_bytes: usize,
    /// The user region's block size (`custom`).
    block_bytes: usize,
    costs: Costs,
}

/// Ghost-slot word of a message: kind in bit 0, first slot above.
fn slot_word(kind: usize, offset: usize) -> u64 {
    kind as u64 | (offset as u64) << 1
}

fn store_ghosts(s: &mut State, ctx: &mut dyn HandlerCtx, slot: u64, values: &[u64]) {
    let (kind, offset) = ((slot & 1) as usize, (slot >> 1) as usize);
    let base = s.own[kind] + offset;
    for (i, &v) in values.iter().enumerate() {
        s.vals[kind][base + i] = f64::from_bits(v);
    }
    s.received[kind] += values.len() as u64;
    ctx.compute(s.ghost_value_cycles * values.len() as u64);
}

fn on_ghosts(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    store_ghosts(s, ctx, m.args[0], &m.args[1..]);
}

/// A bulk message's payload is used in place: no per-value handler work.
fn on_ghosts_bulk(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (slot, count) = (m.args[0], m.args[1] as usize);
    let (kind, offset) = ((slot & 1) as usize, (slot >> 1) as usize);
    let base = s.own[kind] + offset;
    for (i, &v) in m.payload[..count].iter().enumerate() {
        s.vals[kind][base + i] = f64::from_bits(v);
    }
    s.received[kind] += count as u64;
}

impl Em3d {
    /// The shared-memory kernel: update this processor's nodes of `kind`.
    fn phase_sm<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, arrays: [Addr; 2], kind: usize) {
        let plan = &self.plans[node.id()].phase[kind];
        let (dst, src) = (arrays[kind], arrays[1 - kind]);
        let (edge_cost, node_cost) = (self.costs.edge, self.costs.node);
        let prefetch = self.variant == Variant::SmPrefetch;
        let words = &self.layout.word[kind];
        if prefetch {
            for e in 0..plan.src_word.len().min(2) {
                node.prefetch_read(src.word(plan.src_word[e] as usize));
            }
        }
        for j in 0..plan.count {
            let me = dst.word(words[plan.first + j] as usize);
            if prefetch {
                node.prefetch_write(me);
            }
            mine.read(node, Array::Count(kind).index(), j);
            let mut acc = node.load_f64(me);
            for e in plan.edge_ptr[j]..plan.edge_ptr[j + 1] {
                if prefetch && e + 2 < plan.src_word.len() {
                    node.prefetch_read(src.word(plan.src_word[e + 2] as usize));
                }
                mine.read(node, Array::Coef(kind).index(), e);
                mine.read(node, Array::Src(kind).index(), e);
                acc -= plan.coef[e] * node.load_f64(src.word(plan.src_word[e] as usize));
                node.compute(edge_cost);
            }
            node.store_f64(me, acc);
            node.compute(node_cost);
        }
    }

    /// Send this processor's values of `kind` to every reader (message variants).
    fn send_ghosts<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, kind: usize) {
        let plan = &self.plans[node.id()];
        let own: Vec<u64> = node.state(|s| s.vals[kind][..s.own[kind]].iter().map(|v| v.to_bits()).collect());
        let mut listed = 0;
        for send in &plan.sends[kind] {
            let values: Vec<u64> = send.local.iter().map(|&l| own[l as usize]).collect();
            if self.variant != Variant::Bulk {
                // The indirect loads that gather each value into the message (the bulk
                // gather's copy is charged by `bulk_copy_line`).
                for (i, &l) in send.local.iter().enumerate() {
                    mine.read(node, Array::Sends(kind).index(), listed + i);
                    mine.read(node, Array::Vals(kind).index(), l as usize);
                }
            }
            listed += send.local.len();
            if self.variant == Variant::Bulk {
                let lines = (8 * values.len()).div_ceil(self.line_bytes) as u64;
                node.message_work(lines * self.costs.bulk_copy_line);
                let args = [slot_word(kind, send.offset), values.len() as u64];
                node.send_bulk(send.dest, GHOSTS_BULK, &args, &[&values]);
            } else {
                for (c, chunk) in values.chunks(self.per_message).enumerate() {
                    let mut args = Vec::with_capacity(chunk.len() + 1);
                    args.push(slot_word(kind, send.offset + c * self.per_message));
                    args.extend_from_slice(chunk);
                    node.send_am(send.dest, GHOSTS, &args);
                    if self.variant == Variant::MpPoll {
                        // Take arriving ghost values while sending, so they do not back up
                        // into the network behind a processor that is busy sending.
                        node.poll();
                    }
                }
            }
        }
    }

    /// The message-passing kernel: update this processor's nodes of `kind` from its own and
    /// ghost values of the other kind.
    fn phase_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, kind: usize, round: u64) {
        let id = node.id();
        let plan = &self.plans[id];
        let src = 1 - kind;
        let want = plan.ghosts[src] as u64 * round;
        node.wait_until(if src == E { "em3d ghost E values" } else { "em3d ghost H values" }, |s| {
            s.received[src] >= want
        });
        let ph = &plan.phase[kind];
        let (edge_cost, node_cost) = (self.costs.edge, self.costs.node);
        for j in 0..ph.count {
            mine.read(node, Array::Count(kind).index(), j);
            mine.read(node, Array::Vals(kind).index(), j);
            for e in ph.edge_ptr[j]..ph.edge_ptr[j + 1] {
                mine.read(node, Array::Coef(kind).index(), e);
                mine.read(node, Array::Src(kind).index(), e);
                mine.read(node, Array::Vals(src).index(), ph.src_local[e] as usize);
            }
            mine.write(node, Array::Vals(kind).index(), j);
            node.state(|s| {
                let mut acc = s.vals[kind][j];
                for e in ph.edge_ptr[j]..ph.edge_ptr[j + 1] {
                    acc -= ph.coef[e] * s.vals[src][ph.src_local[e] as usize];
                }
                s.vals[kind][j] = acc;
            });
            node.compute(edge_cost * (ph.edge_ptr[j + 1] - ph.edge_ptr[j]) as u64 + node_cost);
        }
    }
}

impl Em3d {
    /// `custom`: one user region holding the E values then the H values (each owner's on
    /// blocks of its own, as the shared layout pads them), run by the update protocol.
    fn user_region<N: Node<State = State>>(&self, node: &mut N) -> [Addr; 2] {
        let owners: Vec<ProcId> = [E, H].iter().flat_map(|&k| self.layout.owners[k].iter().copied()).collect();
        let base = match node.alloc_user_region(owners.len(), Placement::Owners(owners.clone()), self.block_bytes) {
            Ok(base) => base,
            // `run` has checked the machine has access control and the block size.
            Err(e) => unreachable!("em3d custom: {e}"),
        };
        let block_words = self.block_bytes / 8;
        let homes = owners.iter().step_by(block_words).copied().collect();
        node.state(|s| s.up = UpdateState::new(base, self.block_bytes as u64, homes, UPDATE_FIRST));
        [base, base.word(self.layout.words[E])]
    }

    /// The blocks of each kind processor `id` homes, which it publishes after updating them
    /// (`custom`; empty otherwise).
    fn published_blocks(&self, id: ProcId, arrays: [Addr; 2]) -> [Vec<u64>; 2] {
        if self.study != Some(Study::Custom) {
            return [Vec::new(), Vec::new()];
        }
        let block_words = self.block_bytes / 8;
        [E, H].map(|k| {
            (0..self.layout.words[k] / block_words)
                .filter(|b| self.layout.owners[k][b * block_words] == id)
                .map(|b| arrays[k].word(b * block_words).0)
                .collect()
        })
    }
}

impl Program for Em3d {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        let mut h: Vec<Handler<State>> = vec![on_ghosts, on_ghosts_bulk];
        if self.study == Some(Study::Custom) {
            h.extend(update::handlers::<State>());
        }
        h
    }
    fn fault_handler(&self) -> Option<FaultHandler<State>> {
        (self.study == Some(Study::Custom)).then_some(update::on_fault::<State> as FaultHandler<State>)
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.private[id].words()
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.variant.receive_mode()
    }
    fn barrier_kind(&self) -> BarrierKind {
        // `custom` synchronises by messages, as the other Blizzard apps' `custom` variants do;
        // a shared-memory barrier would run on the default protocol it replaces.
        if self.study == Some(Study::Custom) {
            BarrierKind::Messages
        } else {
            self.variant.barrier_kind()
        }
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let plan = &self.plans[id];
        let vals = [E, H].map(|k| {
            let ph = &plan.phase[k];
            let mut v = self.init[k][ph.first..ph.first + ph.count].to_vec();
            v.resize(ph.count + plan.ghosts[k], 0.0);
            v
        });
        State {
            vals,
            own: [plan.phase[E].count, plan.phase[H].count],
            received: [0, 0],
            arrays: None,
            ghost_value_cycles: self.costs.ghost_value,
            up: UpdateState::default(),
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let mine = Arrays::set_up(node, &self.private[node.id()], self.line_bytes);
        if self.variant.shared_memory() {
            let arrays = if self.study == Some(Study::Custom) {
                self.user_region(node)
            } else {
                [E, H]
                    .map(|k| node.alloc_shared(self.layout.words[k], Placement::Owners(self.layout.owners[k].clone())))
            };
            node.state(|s| s.arrays = Some(arrays));
            let published = self.published_blocks(node.id(), arrays);
            // Set-up: each owner stores its initial values (untimed).
            for k in [E, H] {
                let ph = &self.plans[node.id()].phase[k];
                for j in 0..ph.count {
                    let v = ph.first + j;
                    node.store_f64(arrays[k].word(self.layout.word[k][v] as usize), self.init[k][v]);
                }
            }
            node.barrier();
            node.begin_timing();
            for i in 0..self.iterations {
                node.progress(i as u64, self.iterations as u64);
                for k in [E, H] {
                    self.phase_sm(node, &mine, arrays, k);
                    if self.study == Some(Study::Custom) {
                        update::publish(node, &published[k]);
                    }
                    node.barrier();
                }
            }
        } else {
            node.barrier();
            node.begin_timing();
            for round in 1..=self.iterations as u64 {
                node.progress(round - 1, self.iterations as u64);
                for k in [E, H] {
                    self.send_ghosts(node, &mine, 1 - k);
                    self.phase_mp(node, &mine, k, round);
                    node.barrier();
                }
            }
        }
    }
}

/// em3d's inputs, checked against each other and the machine.
struct Inputs {
    nodes: usize,
    degree: usize,
    remote: f64,
    span: usize,
    iterations: usize,
    variant: Variant,
    study: Option<Study>,
    per_message: usize,
    block_bytes: usize,
}

fn inputs<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<Inputs, AppError> {
    let procs = backend.nprocs();
    // Node and word indices are 32-bit (`graph.rs`); half the range leaves room for padding.
    let nodes: usize =
        params.get("nodes", ("a whole number from 1 to 2147483648 (2^31)", |v: usize| (1..=1 << 31).contains(&v)))?;
    if nodes < 2 * procs {
        return Err(AppError::Input(format!(
            "--param nodes={nodes}: em3d needs at least 2 nodes per processor ({} on {procs} processors)",
            2 * procs
        )));
    }
    let degree: usize = params.get("degree", POSITIVE)?;
    let remote: f64 = params.get("remote", ("a fraction in [0, 1]", |r: f64| (0.0..=1.0).contains(&r)))?;
    let span: usize = params.get("span", ("a whole number >= 0", |_: usize| true))?;
    // Contradictions that would be measured as something else than what is recorded.
    if degree > nodes / 2 {
        return Err(AppError::Input(format!(
            "--param degree={degree} with --param nodes={nodes}: a node's sources are nodes of the other kind, of which there are {}; give a degree at most that",
            nodes / 2
        )));
    }
    if span == 0 && remote > 0.0 && procs > 1 {
        return Err(AppError::Input(format!(
            "--param span=0 with --param remote={remote}: remote sources lie within `span` processors, so span 0 allows none; give span >= 1 or remote=0"
        )));
    }
    let iterations: usize = params.get("iterations", crate::params::ITERATIONS)?;
    if variant == "custom" && !backend.access_control() {
        return Err(AppError::Input(format!("em3d custom {}; this machine has none", crate::app::NEEDS_TEMPEST)));
    }
    let (variant, study) = match variant {
        "stache" => (Variant::Sm, Some(Study::Stache)),
        "custom" => (Variant::Sm, Some(Study::Custom)),
        v => (Variant::from_name(v), None),
    };
    let cap = backend.max_am_args().saturating_sub(1);
    if cap == 0 && matches!(variant, Variant::MpInt | Variant::MpPoll) {
        return Err(AppError::Input(
            "em3d message variants need at least 2 argument words per active message (messaging.max_arg_words >= 4)"
                .into(),
        ));
    }
    let asked = params.get::<usize>("values_per_message", POSITIVE)?;
    // The default is lowered to what a message carries; a value given above that is refused
    // (it used to be capped without a word while the record said the value given).
    if params.given("values_per_message") && asked > cap.max(1) {
        return Err(AppError::Input(format!(
            "--param values_per_message={asked}: an active message on this machine carries at most {} values (messaging.max_arg_words = {}: {} argument words, one for the slot)",
            cap.max(1),
            2 * backend.max_am_args(),
            backend.max_am_args()
        )));
    }
    let per_message = asked.min(cap.max(1));
    let line_bytes = backend.line_bytes();
    let block_bytes: usize = params.get("block_bytes", ("a power of two, in bytes", |b: usize| b.is_power_of_two()))?;
    if study == Some(Study::Custom) && !(line_bytes..=64 * line_bytes).contains(&block_bytes) {
        return Err(AppError::Input(format!(
            "--param block_bytes={block_bytes}: em3d custom's blocks run from the machine's line (memory.line_bytes = {line_bytes}) to 64 lines ({} bytes)",
            64 * line_bytes
        )));
    }
    Ok(Inputs { nodes, degree, remote, span, iterations, variant, study, per_message, block_bytes })
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let Inputs { nodes, degree, remote, span, iterations, variant, study, per_message, block_bytes } =
        inputs(backend, variant, params)?;
    let procs = backend.nprocs();
    let line_bytes = backend.line_bytes();
    let g = Graph::generate(GraphParams { nodes, degree, remote, span, procs, seed });
    // Blocks of 16 words (128 bytes) keep each owner's values on lines of its own; `custom`'s
    // on blocks of its own.
    let align = if study == Some(Study::Custom) { block_bytes / 8 } else { 16 };
    let layout = SharedLayout::new(&g, align.max(16).max(line_bytes / 8));
    let plans = graph::plans(&g, &layout);
    let ghost_values: usize = plans.iter().map(|p| p.ghosts[E] + p.ghosts[H]).sum();
    let private = plans.iter().map(|p| private::shape(p, !variant.shared_memory())).collect();
    let costs = Costs::of(backend)?;
    let prog = Arc::new(Em3d {
        variant,
        study,
        iterations,
        plans,
        init: [g.half[E].init.clone(), g.half[H].init.clone()],
        layout,
        per_message,
        private,
        line_bytes,
        block_bytes,
        costs,
    });
    let out = backend.run(Arc::clone(&prog)).map_err(run_err)?;

    // The sequential baseline of the study's pair: `bulk` on one processor, same graph.
    let serial = match study {
        None => None,
        Some(_) => Some(serial_baseline(backend, &g, &prog)?),
    };
    let (ok, max_error) = check_answer(&g, &out, &prog);
    let edges = g.edges();
    let mut counters = BTreeMap::new();
    counters.set(&EDGES, edges as f64);
    counters.set(&REMOTE_EDGE_FRACTION, g.remote_edges() as f64 / edges as f64);
    counters.set(&GHOST_VALUES_PER_ITERATION, ghost_values as f64);
    if matches!(variant, Variant::MpInt | Variant::MpPoll) {
        counters.set(&VALUES_PER_MESSAGE, prog.per_message as f64);
    }
    counters.set(&CYCLES_PER_ITERATION, out.stats.cycles / iterations as f64);
    let received: u64 = out.states.iter().map(|s| s.received[E] + s.received[H]).sum();
    counters.set(&GHOST_VALUES_RECEIVED, received as f64);
    if let Some(serial) = serial {
        counters.set(&SERIAL_CYCLES, serial);
        counters.set(&SPEEDUP, serial / out.stats.cycles);
    }
    if study == Some(Study::Custom) {
        let acks: u64 = out.states.iter().map(|s| s.up.acks).sum();
        counters.set(&UPDATES_PUSHED, acks as f64);
    }
    let check = Check {
        ok,
        max_error,
        detail: format!(
            "{} E and {} H values after {iterations} iterations vs sequential: max relative difference {max_error:.2e} (limit 1e-12)",
            g.half[E].n, g.half[H].n
        ),
    };
    Ok(result(out.stats, counters, check))
}

/// The one-processor `bulk` run of the same graph (the study pair's sequential baseline), its
/// answer checked against the sequential reference: its cycles.
fn serial_baseline<B: Backend>(backend: &B, g: &Graph, prog: &Em3d) -> Result<f64, AppError> {
    let Em3d { iterations, per_message, line_bytes, block_bytes, costs, .. } = *prog;
    let one = backend.with_nprocs(1).map_err(run_err)?;
    let g1 = g.on_one_processor();
    let layout1 = SharedLayout::new(&g1, 16.max(backend.line_bytes() / 8));
    let plans1 = graph::plans(&g1, &layout1);
    let private1 = plans1.iter().map(|p| private::shape(p, true)).collect();
    let base = Em3d {
        variant: Variant::Bulk,
        study: None,
        iterations,
        plans: plans1,
        init: prog.init.clone(),
        layout: layout1,
        per_message,
        private: private1,
        line_bytes,
        block_bytes,
        costs,
    };
    let r = one.run(Arc::new(base)).map_err(run_err)?;
    let want = g.sequential(iterations);
    let same = [E, H].iter().all(|&k| r.states[0].vals[k][..g.half[k].n] == want[k][..]);
    if !same {
        return Err(AppError::Run(
            "em3d: the sequential baseline (bulk on one processor) disagrees with the sequential reference".into(),
        ));
    }
    Ok(r.stats.cycles)
}

/// Whether every node's final value matches the sequential computation, and the largest
/// relative difference.
fn check_answer(g: &Graph, out: &RunOutput<State>, prog: &Em3d) -> (bool, f64) {
    let iterations = prog.iterations;
    let want = g.sequential(iterations);
    let got: [Vec<f64>; 2] = [E, H].map(|k| {
        (0..g.half[k].n)
            .map(|v| {
                if let Some(arrays) = out.states[0].arrays {
                    f64::from_bits(out.load(arrays[k].word(prog.layout.word[k][v] as usize)))
                } else {
                    let p = g.owner(k, v);
                    out.states[p].vals[k][v - prog.plans[p].phase[k].first]
                }
            })
            .collect()
    });
    let scale = want.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    let max_error = want.iter().flatten().zip(got.iter().flatten()).fold(0.0f64, |m, (w, g)| {
        let e = (w - g).abs() / scale;
        if e.is_nan() {
            f64::INFINITY
        } else {
            m.max(e)
        }
    });
    let ok = max_error <= 1e-12;
    (ok, max_error)
}
