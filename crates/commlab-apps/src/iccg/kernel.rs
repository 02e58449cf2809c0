//! The timed ICCG kernel: the forward triangular solve (and with `solves=both` the backward
//! one after it), distributed as a DAG (see [`super::dag`]), in every communication variant.
//!
//! Each processor completes its nodes in order. A node waits until its presence counter
//! reaches zero (every incoming edge has arrived), computes its value, then sends
//! `coef * value` along each out-edge:
//! - `sm` / `sm-pf` (producer-computes): every node has a record in shared memory, homed at
//!   its owner, of two words on one cache line: the accumulated value, and a control word
//!   holding the presence counter (shifted left by one) and a lock bit. The producer takes the
//!   record's lock with a read-modify-write (test-and-set on the lock bit, spinning in its
//!   cache while it is held), subtracts its contribution, and decrements the counter and
//!   releases the lock with one store. The consumer spins on its control word until it reads
//!   zero. `sm-pf` adds the study's two write-prefetches two nodes ahead: when a processor is
//!   about to compute the node at position `k` of its order (its inputs have arrived), it
//!   write-prefetches the records of the first two out-edge targets of the node at position
//!   `k + 2`, local or remote, as the study's program did (the study found most of them
//!   useless because few references are remote: a prefetch of a local record costs an issue
//!   slot and a prefetch-buffer entry and hides at most a local miss). The first two nodes of
//!   an order get no prefetch (no prologue).
//! - `mp-int` / `mp-poll`: one active message per non-local edge; the handler subtracts the
//!   contribution and decrements the counter. Polling processors poll after every node.
//! - `buffer-N`: non-local edges are buffered per destination processor (charged
//!   `costs.iccg_buffer_edge` each, as message overhead) and a buffer is sent when it holds
//!   N edges or when the processor is about to wait; a buffer that does not fit in the
//!   arguments of one active message (more than 4 edges on Alewife) goes by DMA. `buffer-1` is
//!   the study's "buffered 1", short active messages with the overhead of buffering: every
//!   non-local edge pays `iccg_buffer_edge` and leaves at once, as a buffer of one edge through
//!   the buffers' handler (3 argument words: count, index, value; `mp-int` sends 2).
//!
//! Private data (see [`Private`]): each processor keeps its rows of the factor in its own
//! memory, as the program did, and every variant references them through the cache: per node
//! the diagonal, the out-edge count (4 bytes) and the result it writes, and the right-hand side
//! (shared memory) or its accumulator and presence counter (messages); per out-edge the
//! coefficient and the 4-byte target index.
//!
//! Work costs: `iccg_edge` per edge at the producer (the multiply and, for local edges, the
//! update; its two loads are simulated), `iccg_node` per node (the divide and loop; its loads
//! and store are simulated), `iccg_recv_edge` per edge a handler applies, `iccg_buffer_edge`
//! per buffered edge.

use super::dag::Dag;
use crate::private::{Arrays, Shape};
use commlab_api::{
    Addr, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use std::collections::BTreeMap;

/// Work costs from the machine's `[costs]` table (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub edge: u64,
    pub node: u64,
    pub recv_edge: u64,
    pub buffer_edge: u64,
}

impl Costs {
    pub fn of<B: commlab_api::Backend>(b: &B) -> Result<Costs, crate::app::AppError> {
        Ok(Costs {
            edge: crate::app::cost(b, "iccg_edge")?,
            node: crate::app::cost(b, "iccg_node")?,
            recv_edge: crate::app::cost(b, "iccg_recv_edge")?,
            buffer_edge: crate::app::cost(b, "iccg_buffer_edge")?,
        })
    }
}
const EDGE: HandlerId = HandlerId(0);
const EDGES: HandlerId = HandlerId(1);
const EDGES_BULK: HandlerId = HandlerId(2);

/// Communication variant of the kernel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variant {
    Sm,
    SmPrefetch,
    MpInt,
    MpPoll,
    /// Aggregate up to N non-local edges per message.
    Buffer(usize),
}

impl Variant {
    pub fn from_name(v: &str) -> Variant {
        match v {
            "sm" => Variant::Sm,
            "sm-pf" => Variant::SmPrefetch,
            "mp-int" => Variant::MpInt,
            "mp-poll" => Variant::MpPoll,
            other => match other.strip_prefix("buffer-").and_then(|n| n.parse().ok()) {
                Some(n) => Variant::Buffer(n),
                None => unreachable!("iccg variant `{other}` is listed but not handled"),
            },
        }
    }

    fn shared_memory(self) -> bool {
        matches!(self, Variant::Sm | Variant::SmPrefetch)
    }
}

/// Private state of one processor. Index 0 is the forward solve, 1 the backward (run only with
/// `solves=both`); node vectors are indexed by the node's local index on its owner.
pub struct State {
    /// Accumulated right-hand side minus the contributions received so far (message variants).
    acc: [Vec<f64>; 2],
    /// Incoming edges not yet received (message variants).
    pending: [Vec<u32>; 2],
    /// The computed `y` (forward) and `x` (backward) of this processor's nodes.
    pub result: [Vec<f64>; 2],
    /// Cycles spent waiting for nodes' inputs.
    pub idle_cycles: f64,
    /// Application messages sent and non-local edges they carried.
    pub messages: u64,
    pub edges_sent: u64,
    /// Edges applied by handlers (message variants).
    pub edges_received: u64,
    /// The main thread's own cycles on this processor's non-local out-edges (see
    /// [`Kernel::nonlocal_window`]), and the cycles its handlers took over the timed region.
    pub nonlocal_cycles: f64,
    pub handler_cycles: f64,
    /// `costs.iccg_recv_edge`, for the handlers.
    recv_edge_cycles: u64,
}

/// Each processor's private arrays: `DIAG` (8 bytes a node), then per solve a block of
/// `OUT_COUNT` (4 bytes a node), `COEF` (8 bytes an out-edge), `TARGET` (4 bytes an out-edge),
/// `RESULT` (8 bytes a node), and the solve's input: `RHS` (forward, shared memory; 8 bytes a
/// node) or `ACC` (messages; 8 bytes a node) with `PENDING` (messages; 4 bytes a node). Nodes
/// are in the processor's order (`Kernel::local`), edges node by node.
pub struct Private {
    pub shapes: Vec<Shape>,
    /// Per solve: where each node's out-edges start in its owner's edge arrays.
    pub edge_base: [Vec<u32>; 2],
}

impl Private {
    pub const DIAG: usize = 0;
    pub const OUT_COUNT: usize = 0;
    pub const COEF: usize = 1;
    pub const TARGET: usize = 2;
    pub const RESULT: usize = 3;
    /// `RHS` with shared memory, `ACC` with messages.
    pub const INPUT: usize = 4;
    pub const PENDING: usize = 5;
    const BLOCK: usize = 6;

    /// Array `which` of solve `phase`'s block.
    pub fn block(phase: usize, which: usize) -> usize {
        1 + phase * Self::BLOCK + which
    }

    /// The arrays of every processor for `dags` (the solves run: `solves`).
    pub fn new(dags: &[Dag; 2], solves: usize, messages: bool) -> Private {
        let procs = dags[0].order.len();
        let mut edge_base = [vec![0u32; dags[0].indeg.len()], vec![0u32; dags[0].indeg.len()]];
        let mut shapes = Vec::with_capacity(procs);
        for q in 0..procs {
            let nodes = &dags[0].order[q];
            let mut shape = Shape::default();
            shape.push(nodes.len(), 8);
            for (phase, dag) in dags.iter().enumerate().take(solves) {
                let mut edges = 0usize;
                for &v in nodes {
                    let v = v as usize;
                    edge_base[phase][v] = edges as u32;
                    edges += dag.out_ptr[v + 1] - dag.out_ptr[v];
                }
                shape.push(nodes.len(), 4);
                shape.push(edges, 8);
                shape.push(edges, 4);
                shape.push(nodes.len(), 8);
                if messages {
                    shape.push(nodes.len(), 8);
                    shape.push(nodes.len(), 4);
                } else {
                    shape.push(nodes.len(), 8);
                    shape.push(0, 4);
                }
            }
            shapes.push(shape);
        }
        Private { shapes, edge_base }
    }
}

/// The distributed kernel for one variant on one processor count.
pub struct Kernel {
    pub variant: Variant,
    pub dags: [Dag; 2],
    pub owner: Vec<u32>,
    /// Position of each node in its owner's (forward) order.
    pub local: Vec<u32>,
    /// Right-hand side of the forward solve.
    pub rhs: Vec<f64>,
    /// Shared-memory records: word index of each node's record, words per array, homes.
    pub record_word: Vec<u32>,
    pub record_words: usize,
    pub record_owners: Vec<usize>,
    pub max_args: usize,
    pub costs: Costs,
    pub line_bytes: usize,
    /// Where each processor's private data lives.
    pub private: Private,
    /// Solves timed: 1 (forward) or 2 (forward, then backward).
    pub solves: usize,
}

/// Word 0 of a message: solve (bit 0) and a count or local index above it.
fn tag(phase: usize, rest: usize) -> u64 {
    phase as u64 | (rest as u64) << 1
}

fn apply(s: &mut State, ctx: &mut dyn HandlerCtx, phase: usize, local: usize, value: f64) {
    s.acc[phase][local] -= value;
    s.pending[phase][local] -= 1;
    s.edges_received += 1;
    ctx.compute(s.recv_edge_cycles);
}

fn on_edge(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (phase, local) = ((m.args[0] & 1) as usize, (m.args[0] >> 1) as usize);
    apply(s, ctx, phase, local, f64::from_bits(m.args[1]));
}

/// Apply `count` edges packed as local indices (two 32-bit halves per word) then values.
fn apply_packed(s: &mut State, ctx: &mut dyn HandlerCtx, phase: usize, count: usize, words: &[u64]) {
    let idx_words = count.div_ceil(2);
    for k in 0..count {
        let local = (words[k / 2] >> (32 * (k % 2))) as u32 as usize;
        apply(s, ctx, phase, local, f64::from_bits(words[idx_words + k]));
    }
}

fn on_edges(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (phase, count) = ((m.args[0] & 1) as usize, (m.args[0] >> 1) as usize);
    apply_packed(s, ctx, phase, count, &m.args[1..]);
}

fn on_edges_bulk(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (phase, count) = ((m.args[0] & 1) as usize, (m.args[0] >> 1) as usize);
    apply_packed(s, ctx, phase, count, m.payload);
}

/// Per-destination buffers of (local index, value) edges (`buffer-N`), for the destinations
/// written to only (a table of every processor per processor was quadratic in memory).
struct Buffers {
    edges: BTreeMap<usize, Vec<(u32, f64)>>,
    /// Destinations with a non-empty buffer, in the order they became non-empty.
    dirty: Vec<usize>,
}

impl Kernel {
    fn layout_addr(&self, base: Addr, v: usize, word: usize) -> Addr {
        base.word(self.record_word[v] as usize + word)
    }

    /// Send one buffer of edges: in the arguments of an active message if they fit, else by DMA.
    fn send_buffer<N: Node<State = State>>(&self, node: &mut N, dest: usize, phase: usize, edges: &[(u32, f64)]) {
        let count = edges.len();
        let mut words = vec![0u64; count.div_ceil(2)];
        for (k, (local, _)) in edges.iter().enumerate() {
            words[k / 2] |= (*local as u64) << (32 * (k % 2));
        }
        words.extend(edges.iter().map(|(_, v)| v.to_bits()));
        // Header word plus packed indices and values must fit the argument cap.
        if words.len() < self.max_args && count <= 4 {
            let mut args = vec![tag(phase, count)];
            args.extend_from_slice(&words);
            node.send_am(dest, EDGES, &args);
        } else {
            node.send_bulk(dest, EDGES_BULK, &[tag(phase, count)], &[&words]);
        }
        node.state(|s| {
            s.messages += 1;
            s.edges_sent += count as u64;
        });
    }

    /// Send every non-empty buffer; returns the main thread's own cycles doing it.
    fn flush_all<N: Node<State = State>>(&self, node: &mut N, phase: usize, buf: &mut Buffers) -> f64 {
        if buf.dirty.is_empty() {
            return 0.0;
        }
        let start = Self::mark(node);
        for dest in std::mem::take(&mut buf.dirty) {
            let edges = buf.edges.remove(&dest).unwrap_or_default();
            self.send_buffer(node, dest, phase, &edges);
        }
        Self::nonlocal_window(node, start)
    }

    /// The start of a stretch of the main thread's work: the time and the handler time so far.
    fn mark<N: Node>(node: &N) -> (f64, f64) {
        (node.now_cycles(), node.handler_cycles())
    }

    /// The main thread's own cycles since `start` (from [`Kernel::mark`]): the time passed
    /// less the handlers that started meanwhile (an interrupting handler lengthens the work it
    /// interrupts by its own length, and is counted at its receiver instead). Reading the
    /// clocks takes no simulated time and creates no event.
    fn nonlocal_window<N: Node>(node: &N, start: (f64, f64)) -> f64 {
        let (t, h) = Self::mark(node);
        (t - start.0) - (h - start.1)
    }

    /// One solve with messages (`mp-*`, `buffer-N`).
    fn solve_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, phase: usize) {
        let me = node.id();
        let dag = &self.dags[phase];
        let (edge_cost, node_cost, buffer_cost) = (self.costs.edge, self.costs.node, self.costs.buffer_edge);
        let mut buf = Buffers { edges: BTreeMap::new(), dirty: Vec::new() };
        let mut nonlocal = 0.0;
        for &v in &dag.order[me] {
            let (v, lv) = (v as usize, self.local[v as usize] as usize);
            mine.read(node, Private::block(phase, Private::PENDING), lv);
            if node.state(|s| s.pending[phase][lv]) > 0 {
                if let Variant::Buffer(_) = self.variant {
                    nonlocal += self.flush_all(node, phase, &mut buf);
                }
                let t = node.now_cycles();
                node.wait_until("iccg node inputs (presence counter)", |s| s.pending[phase][lv] == 0);
                let waited = node.now_cycles() - t;
                node.state(|s| s.idle_cycles += waited);
            }
            self.read_node_data(node, mine, phase, lv);
            let x = node.state(|s| {
                let base = if phase == 0 { 0.0 } else { s.result[0][lv] };
                let x = (base + s.acc[phase][lv]) / dag.diag[v];
                s.result[phase][lv] = x;
                x
            });
            let mut work = node_cost;
            let first = self.private.edge_base[phase][v] as usize;
            for e in dag.out_ptr[v]..dag.out_ptr[v + 1] {
                let (dst, w) = (dag.out_dst[e] as usize, dag.out_coef[e] * x);
                let (q, lq) = (self.owner[dst] as usize, self.local[dst]);
                let start = Self::mark(node);
                self.read_edge_data(node, mine, phase, first + e - dag.out_ptr[v]);
                work += edge_cost;
                if q == me {
                    node.state(|s| {
                        s.acc[phase][lq as usize] -= w;
                        s.pending[phase][lq as usize] -= 1;
                    });
                    continue;
                }
                // The work carried into this computation from the node and its local edges
                // before this one is not this edge's.
                let carried = (work - edge_cost) as f64;
                node.compute(std::mem::take(&mut work));
                match self.variant {
                    Variant::Buffer(limit) => {
                        node.message_work(buffer_cost);
                        let pending = buf.edges.entry(q).or_default();
                        if pending.is_empty() {
                            buf.dirty.push(q);
                        }
                        pending.push((lq, w));
                        if pending.len() >= limit {
                            let edges = std::mem::take(pending);
                            buf.dirty.retain(|&d| d != q);
                            self.send_buffer(node, q, phase, &edges);
                        }
                    }
                    _ => {
                        node.send_am(q, EDGE, &[tag(phase, lq as usize), w.to_bits()]);
                        node.state(|s| {
                            s.messages += 1;
                            s.edges_sent += 1;
                        });
                    }
                }
                nonlocal += Self::nonlocal_window(node, start) - carried;
            }
            node.compute(work);
            if self.variant == Variant::MpPoll {
                node.poll();
            }
        }
        nonlocal += self.flush_all(node, phase, &mut buf);
        node.state(|s| s.nonlocal_cycles += nonlocal);
    }

    /// One solve in shared memory, producer-computes (`sm`, `sm-pf`).
    fn solve_sm<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, phase: usize, base: Addr) {
        let me = node.id();
        let dag = &self.dags[phase];
        let order = &dag.order[me];
        let (edge_cost, node_cost) = (self.costs.edge, self.costs.node);
        let prefetch = self.variant == Variant::SmPrefetch;
        let mut nonlocal = 0.0;
        for (k, &v) in order.iter().enumerate() {
            let (v, lv) = (v as usize, self.local[v as usize] as usize);
            let ctrl = self.layout_addr(base, v, 1);
            let t = node.now_cycles();
            node.spin_until("iccg node inputs (presence counter)", ctrl, |c| c == 0);
            let waited = node.now_cycles() - t;
            if prefetch {
                if let Some(&ahead) = order.get(k + 2) {
                    let ahead = ahead as usize;
                    for &dst in dag.out_dst[dag.out_ptr[ahead]..dag.out_ptr[ahead + 1]].iter().take(2) {
                        let dst = dst as usize;
                        node.prefetch_write(self.layout_addr(base, dst, 1));
                    }
                }
            }
            let sum = node.load_f64(self.layout_addr(base, v, 0));
            self.read_node_data(node, mine, phase, lv);
            let x = node.state(|s| {
                s.idle_cycles += waited;
                let rhs = if phase == 0 { self.rhs[v] } else { s.result[0][lv] };
                let x = (rhs - sum) / dag.diag[v];
                s.result[phase][lv] = x;
                x
            });
            node.compute(node_cost);
            let first = self.private.edge_base[phase][v] as usize;
            for e in dag.out_ptr[v]..dag.out_ptr[v + 1] {
                let dst = dag.out_dst[e] as usize;
                let start = Self::mark(node);
                self.read_edge_data(node, mine, phase, first + e - dag.out_ptr[v]);
                node.compute(edge_cost);
                self.producer_update(node, base, dst, dag.out_coef[e] * x);
                if self.owner[dst] as usize != me {
                    nonlocal += Self::nonlocal_window(node, start);
                }
            }
        }
        node.state(|s| s.nonlocal_cycles += nonlocal);
    }

    /// The private references of computing node `lv` in solve `phase`: its input (the
    /// right-hand side in shared memory, the accumulator with messages; the backward solve
    /// also reads the forward result), the diagonal, the out-edge count, and the result.
    fn read_node_data<N: Node>(&self, node: &mut N, mine: &Arrays, phase: usize, lv: usize) {
        if phase == 0 || !self.variant.shared_memory() {
            mine.read(node, Private::block(phase, Private::INPUT), lv);
        }
        if phase == 1 {
            mine.read(node, Private::block(0, Private::RESULT), lv);
        }
        mine.read(node, Private::DIAG, lv);
        mine.read(node, Private::block(phase, Private::OUT_COUNT), lv);
        mine.write(node, Private::block(phase, Private::RESULT), lv);
    }

    /// The private references of one out-edge (`i`: its place in this processor's edges of
    /// solve `phase`): the coefficient and the target index.
    fn read_edge_data<N: Node>(&self, node: &mut N, mine: &Arrays, phase: usize, i: usize) {
        mine.read(node, Private::block(phase, Private::COEF), i);
        mine.read(node, Private::block(phase, Private::TARGET), i);
    }

    /// Add `w` to a consumer's record and decrement its counter under the record's lock.
    fn producer_update<N: Node<State = State>>(&self, node: &mut N, base: Addr, dst: usize, w: f64) {
        let (sum, ctrl) = (self.layout_addr(base, dst, 0), self.layout_addr(base, dst, 1));
        loop {
            // Read the control word with ownership, then set the lock bit if it is clear.
            let c = node.fetch_add(ctrl, 0);
            if c & 1 == 0 && node.compare_swap(ctrl, c, c | 1) == c {
                let old = node.load_f64(sum);
                node.store_f64(sum, old + w);
                // Counter - 1, lock bit clear: one store releases and counts.
                node.store(ctrl, c - 2);
                return;
            }
            node.spin_until("iccg node lock", ctrl, |c| c & 1 == 0);
        }
    }
}

impl Program for Kernel {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_edge, on_edges, on_edges_bulk]
    }
    fn receive_mode(&self) -> ReceiveMode {
        crate::app::receive_mode_of(self.variant == Variant::MpPoll)
    }
    fn barrier_kind(&self) -> BarrierKind {
        crate::app::barrier_kind_of(self.variant.shared_memory())
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.private.shapes[id].words()
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let nodes = &self.dags[0].order[id];
        let acc0: Vec<f64> = nodes.iter().map(|&v| self.rhs[v as usize]).collect();
        let pending = [0, 1].map(|p| nodes.iter().map(|&v| self.dags[p].indeg[v as usize]).collect());
        State {
            acc: [acc0, vec![0.0; nodes.len()]],
            pending,
            result: [vec![0.0; nodes.len()], vec![0.0; nodes.len()]],
            idle_cycles: 0.0,
            messages: 0,
            edges_sent: 0,
            edges_received: 0,
            nonlocal_cycles: 0.0,
            handler_cycles: 0.0,
            recv_edge_cycles: self.costs.recv_edge,
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let mine = Arrays::set_up(node, &self.private.shapes[node.id()], self.line_bytes);
        if self.variant.shared_memory() {
            let me = node.id();
            let records: Vec<Addr> = (0..self.solves)
                .map(|_| node.alloc_shared(self.record_words, Placement::Owners(self.record_owners.clone())))
                .collect();
            // Set-up (untimed): each owner writes its records: no contribution yet, and the
            // presence counter.
            for (phase, &base) in records.iter().enumerate() {
                for &v in &self.dags[0].order[me] {
                    let v = v as usize;
                    node.store(self.layout_addr(base, v, 1), (self.dags[phase].indeg[v] as u64) << 1);
                }
            }
            node.barrier();
            node.begin_timing();
            for (phase, &base) in records.iter().enumerate() {
                self.solve_sm(node, &mine, phase, base);
                node.barrier();
            }
        } else {
            node.barrier();
            node.begin_timing();
            let handlers = node.handler_cycles();
            for phase in 0..self.solves {
                self.solve_mp(node, &mine, phase);
                node.barrier();
            }
            // Every handler of the program is an edge's: all ran before their receiver
            // completed its nodes, so before it left the last barrier.
            let took = node.handler_cycles() - handlers;
            node.state(|s| s.handler_cycles = took);
        }
    }
}
