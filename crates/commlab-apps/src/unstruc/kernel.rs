//! The timed UNSTRUC kernel in every variant, one `Program`.
//!
//! Every iteration computes every edge and face of the mesh from the previous iteration's node
//! values and then every node's new value (see [`super::flux`]). Each processor computes the
//! edges and faces the plan gave it ([`super::plan`]), in order, and updates its own nodes.
//!
//! - `sm` / `sm-pf`: node values live in shared memory, double-buffered: two arrays of 4-word
//!   records (three values and a pad word, 64-bit words), each node's record homed at its
//!   owner, each owner's block on lines of its own. Results accumulate into a third array of
//!   records `[lock, r0, r1, r2]`. An edge loads both endpoints' old values (remote ones by
//!   coherent misses), and adds its results into both endpoints' records: a *shared* node's
//!   (one other processors also add to) under its lock (test-and-test-and-set on the record's
//!   first word), any other plainly. Barrier; every owner writes its nodes' new values into
//!   the other array and clears their results; barrier. `sm-pf` adds the study's two
//!   write-prefetches, two edge computations ahead: before edge `i` it write-prefetches the
//!   result records (the lock's line) of both endpoints of edge `i + 2` (edges 0 and 1 are
//!   prefetched before the loop).
//! - `mp-int` / `mp-poll`: each processor keeps its own nodes' values (double-buffered), their
//!   results and its ghost copies privately. Before computing, each owner sends the old values
//!   of the nodes each other processor touches in pre-arranged active messages (a slot word
//!   and up to `(arguments - 1) / 3` nodes' three values each), with no request; a processor
//!   waits for all of its ghosts, computes, and sends every result for a remote node to its
//!   owner in one active message (node index and three values) as soon as it is produced; the
//!   handler adds it into the owner's results (handlers are atomic with respect to the main
//!   thread, so no lock). Each processor then waits for all the results its nodes receive
//!   and updates them. Counting replaces barriers: a processor can only receive an owner's
//!   next values after that owner has had all its results, which it only has once every
//!   reader is done with the old values. `mp-poll` receives by polling: every `poll_every`
//!   edges or faces of the compute loop, after every ghost message it sends, and while it
//!   waits.
//! - `bulk`: the same two exchanges with whole arrays: the owner gathers each reader's values
//!   into one buffer (charged `costs.bulk_copy_line` per line copied) and sends it in one DMA
//!   message, used in place by the reader as its ghosts; results for remote nodes are added
//!   into a private array laid out owner by owner, and after the loop each owner's part goes
//!   back in one DMA message, which the owner's handler scatters into its results.
//!
//! Work costs: `unstruc_edge` per edge (its 75 flops and loop: its loads are simulated),
//! `unstruc_face` per face, `unstruc_accumulate` per node a processor adds results into
//! itself (three adds; a remote node's in fine-grain messages is the handler's),
//! `unstruc_node` per node update, `unstruc_ghost_value` per value a fine-grain handler
//! stores, `unstruc_recv_result` per result a handler adds (fine-grain or bulk).

use super::flux::{self, Value};
use super::plan::Plan;
use super::private::{ACC, EDGE_COEF, EDGE_NODES, FACE_COEF, FACE_NODES, GHOSTS, OUT, SENDS, VALS};
use crate::app::{AppError, Variant};
use crate::private::{Arrays, Shape};
use commlab_api::{
    Addr, Backend, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};

/// Work costs from the machine's `[costs]` table (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub edge: u64,
    pub face: u64,
    pub accumulate: u64,
    pub node: u64,
    pub ghost_value: u64,
    pub recv_result: u64,
    pub bulk_copy_line: u64,
}

impl Costs {
    pub fn of<B: Backend>(b: &B) -> Result<Costs, AppError> {
        Ok(Costs {
            edge: crate::app::cost(b, "unstruc_edge")?,
            face: crate::app::cost(b, "unstruc_face")?,
            accumulate: crate::app::cost(b, "unstruc_accumulate")?,
            node: crate::app::cost(b, "unstruc_node")?,
            ghost_value: crate::app::cost(b, "unstruc_ghost_value")?,
            recv_result: crate::app::cost(b, "unstruc_recv_result")?,
            bulk_copy_line: crate::app::cost(b, "bulk_copy_line")?,
        })
    }
}

const GHOSTS_AM: HandlerId = HandlerId(0);
const GHOSTS_BULK: HandlerId = HandlerId(1);
const RESULT: HandlerId = HandlerId(2);
const RESULTS_BULK: HandlerId = HandlerId(3);

/// What a processor counted (see `run`'s counters).
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub messages: u64,
    pub values_sent: u64,
    pub values_received: u64,
    pub lock_acquires: u64,
    pub lock_releases: u64,
    /// Cycles spent inside `lock` (the acquiring miss, spinning, the lock overhead).
    pub lock_cycles: f64,
    /// Write-prefetches issued (`sm-pf`), whether or not the line was already held.
    pub prefetches: u64,
    /// References to a prefetched record (its lock, or its first result when unlocked) that
    /// took longer than the same reference to a line held exclusively (measured on this
    /// processor before timing): the prefetch was late, or the line was taken away first.
    pub prefetched_refs_waited: u64,
}

/// Private state of one processor.
pub struct State {
    /// Own nodes' values, double-buffered (message variants).
    pub vals: [Vec<Value>; 2],
    /// Own nodes' accumulated results (message variants).
    acc: Vec<Value>,
    /// Copies of the remote nodes' old values (message variants).
    ghosts: Vec<Value>,
    /// Results for remote nodes awaiting the bulk send, by ghost slot.
    out: Vec<Value>,
    /// For each source processor, the own nodes (indices) its bulk results are for, in order.
    recv_lists: Vec<Vec<u32>>,
    ghosts_received: u64,
    results_received: u64,
    pub counts: Counts,
    /// The shared arrays `[values 0, values 1, results]` (shared-memory variants).
    pub arrays: Option<[Addr; 3]>,
    ghost_value_cycles: u64,
    recv_result_cycles: u64,
}

fn bits(v: &Value) -> [u64; 3] {
    v.map(f64::to_bits)
}

fn value(w: &[u64]) -> Value {
    [f64::from_bits(w[0]), f64::from_bits(w[1]), f64::from_bits(w[2])]
}

fn store_ghosts(s: &mut State, first: usize, words: &[u64]) {
    let k = words.len() / 3;
    for (i, w) in words.chunks_exact(3).enumerate() {
        s.ghosts[first + i] = value(w);
    }
    s.ghosts_received += k as u64;
    s.counts.values_received += 3 * k as u64;
}

fn on_ghosts(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    store_ghosts(s, m.args[0] as usize, &m.args[1..]);
    ctx.compute(s.ghost_value_cycles * (m.args.len() as u64 - 1));
}

/// A bulk message's values are used in place: no per-value handler work.
fn on_ghosts_bulk(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (first, count) = (m.args[0] as usize, m.args[1] as usize);
    store_ghosts(s, first, &m.payload[..3 * count]);
}

fn on_result(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    flux::add(&mut s.acc[m.args[0] as usize], &value(&m.args[1..4]), 1.0);
    s.results_received += 1;
    s.counts.values_received += 3;
    ctx.compute(s.recv_result_cycles);
}

/// Scatter a bulk message's results into the own nodes they are for.
fn on_results_bulk(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let count = m.args[0] as usize;
    let list = &s.recv_lists[m.src];
    for (i, w) in m.payload[..3 * count].chunks_exact(3).enumerate() {
        flux::add(&mut s.acc[list[i] as usize], &value(w), 1.0);
    }
    s.results_received += count as u64;
    s.counts.values_received += 3 * count as u64;
    ctx.compute(s.recv_result_cycles * count as u64);
}

/// The message variants' view of one processor's work: endpoints as own-then-ghost slots.
pub struct Slots {
    pub edges: Vec<[u32; 2]>,
    pub faces: Vec<Vec<u32>>,
}

/// The distributed kernel for one variant.
pub struct Kernel {
    pub variant: Variant,
    pub iterations: usize,
    pub plan: Plan,
    /// Initial values, new numbering.
    pub init: Vec<Value>,
    pub costs: Costs,
    pub line_bytes: usize,
    pub private: Vec<Shape>,
    /// Nodes per fine-grain ghost message.
    pub per_message: usize,
    /// `mp-poll`: edges or faces between polls.
    pub poll_every: usize,
    /// Shared records: first word of each node's record (new numbering), words, homes.
    pub record_word: Vec<u32>,
    pub record_words: usize,
    pub record_owners: Vec<usize>,
    pub slots: Vec<Slots>,
}

/// Layout of the shared records: 4 words a node, each owner's block aligned to
/// `align_words`. Returns each node's first word and every word's home.
pub fn record_layout(plan: &Plan, align_words: usize) -> (Vec<u32>, Vec<usize>) {
    let mut word = vec![0u32; plan.owner.len()];
    let mut owners: Vec<usize> = Vec::new();
    for (q, pp) in plan.proc.iter().enumerate() {
        for w in &mut word[pp.first..pp.first + pp.count] {
            *w = owners.len() as u32;
            owners.extend([q; 4]);
        }
        let padded = owners.len().div_ceil(align_words) * align_words;
        owners.resize(padded, q);
    }
    (word, owners)
}

impl Kernel {
    fn record(&self, base: Addr, v: u32) -> Addr {
        base.word(self.record_word[v as usize] as usize)
    }

    fn load3<N: Node>(&self, node: &mut N, base: Addr, v: u32) -> Value {
        let r = self.record(base, v);
        [node.load_f64(r), node.load_f64(r.word(1)), node.load_f64(r.word(2))]
    }

    fn read_edge_data<N: Node>(&self, node: &mut N, mine: &Arrays, i: usize) {
        for k in 0..2 {
            mine.read(node, EDGE_NODES, 2 * i + k);
        }
        for k in 0..4 {
            mine.read(node, EDGE_COEF, 4 * i + k);
        }
    }

    fn read_face_data<N: Node>(&self, node: &mut N, mine: &Arrays, i: usize, len: usize) {
        for k in 0..=len {
            mine.read(node, FACE_NODES, 5 * i + k);
        }
        for k in 0..4 {
            mine.read(node, FACE_COEF, 4 * i + k);
        }
    }

    /// Add `sign * f` into node `v`'s result record, under its lock if it is shared.
    /// `prefetched`: the cycles a reference to an exclusively held line takes (lock, load),
    /// when the record was prefetched.
    fn add_sm<N: Node<State = State>>(
        &self,
        node: &mut N,
        acc: Addr,
        v: u32,
        f: &Value,
        sign: f64,
        prefetched: Option<(f64, f64)>,
    ) {
        let r = self.record(acc, v);
        let shared = self.plan.shared[v as usize];
        let t0 = node.now_cycles();
        if shared {
            node.lock(r);
            node.state(|s| s.counts.lock_acquires += 1);
        }
        let locked = node.now_cycles() - t0;
        let mut old = [node.load_f64(r.word(1)), 0.0, 0.0];
        let first_ref = node.now_cycles() - t0;
        old[1] = node.load_f64(r.word(2));
        old[2] = node.load_f64(r.word(3));
        node.compute(self.costs.accumulate);
        flux::add(&mut old, f, sign);
        for (k, x) in old.iter().enumerate() {
            node.store_f64(r.word(1 + k), *x);
        }
        if shared {
            node.unlock(r);
            node.state(|s| s.counts.lock_releases += 1);
        }
        node.state(|s| {
            if shared {
                s.counts.lock_cycles += locked;
            }
            if let Some((lock_hit, load_hit)) = prefetched {
                let hit = if shared { lock_hit + load_hit } else { load_hit };
                if first_ref > hit + 1e-6 {
                    s.counts.prefetched_refs_waited += 1;
                }
            }
        });
    }

    /// The edge and face phase in shared memory.
    fn flux_sm<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, cur: Addr, acc: Addr, hits: (f64, f64)) {
        let pp = &self.plan.proc[node.id()];
        let pf = self.variant == Variant::SmPrefetch;
        let prefetch = |node: &mut N, i: usize| {
            if let Some(e) = pp.edges.get(i) {
                node.prefetch_write(self.record(acc, e.a));
                node.prefetch_write(self.record(acc, e.b));
                node.state(|s| s.counts.prefetches += 2);
            }
        };
        if pf {
            prefetch(node, 0);
            prefetch(node, 1);
        }
        let covered = pf.then_some(hits);
        for (i, e) in pp.edges.iter().enumerate() {
            if pf {
                prefetch(node, i + 2);
            }
            self.read_edge_data(node, mine, i);
            let ua = self.load3(node, cur, e.a);
            let ub = self.load3(node, cur, e.b);
            node.compute(self.costs.edge);
            let f = flux::edge_flux(&e.coef, &ua, &ub);
            self.add_sm(node, acc, e.a, &f, 1.0, covered);
            self.add_sm(node, acc, e.b, &f, -1.0, covered);
        }
        for (i, face) in pp.faces.iter().enumerate() {
            self.read_face_data(node, mine, i, face.nodes().len());
            let vals: Vec<Value> = face.nodes().iter().map(|&v| self.load3(node, cur, v)).collect();
            node.compute(self.costs.face);
            let t = flux::face_term(&pp.face_coef[i], &vals);
            for &v in face.nodes() {
                self.add_sm(node, acc, v, &t, 1.0, None);
            }
        }
    }

    /// The update phase in shared memory: every own node's new value, and its results cleared.
    fn update_sm<N: Node<State = State>>(&self, node: &mut N, cur: Addr, nxt: Addr, acc: Addr) {
        let pp = &self.plan.proc[node.id()];
        for v in pp.first..pp.first + pp.count {
            let v = v as u32;
            let mut u = self.load3(node, cur, v);
            let r = self.record(acc, v);
            let sum = [node.load_f64(r.word(1)), node.load_f64(r.word(2)), node.load_f64(r.word(3))];
            node.compute(self.costs.node);
            flux::add(&mut u, &sum, 1.0);
            let w = self.record(nxt, v);
            for (k, x) in u.iter().enumerate() {
                node.store_f64(w.word(k), *x);
                node.store_f64(r.word(1 + k), 0.0);
            }
        }
    }

    /// The references of reading the three values at own-then-ghost `slot`.
    fn read_slot<N: Node>(&self, node: &mut N, mine: &Arrays, count: usize, cur: usize, slot: u32) {
        let slot = slot as usize;
        let (array, at) = if slot < count { (VALS[cur], slot) } else { (GHOSTS, slot - count) };
        for k in 0..3 {
            mine.read(node, array, 3 * at + k);
        }
    }

    fn touch3<N: Node>(node: &mut N, mine: &Arrays, array: usize, at: usize) {
        for k in 0..3 {
            mine.read(node, array, 3 * at + k);
            mine.write(node, array, 3 * at + k);
        }
    }

    /// Send this processor's old values to every processor that reads them.
    fn send_ghosts<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, cur: usize) {
        let pp = &self.plan.proc[node.id()];
        let own: Vec<Value> = node.state(|s| s.vals[cur].clone());
        let bulk = self.variant == Variant::Bulk;
        let mut listed = 0;
        for send in &pp.sends {
            let words: Vec<u64> = send.local.iter().flat_map(|&l| bits(&own[l as usize])).collect();
            if !bulk {
                // The indirect loads that gather each value into the message.
                for (i, &l) in send.local.iter().enumerate() {
                    mine.read(node, SENDS, listed + i);
                    for k in 0..3 {
                        mine.read(node, VALS[cur], 3 * l as usize + k);
                    }
                }
            }
            listed += send.local.len();
            if bulk {
                let lines = (8 * words.len()).div_ceil(self.line_bytes) as u64;
                node.message_work(lines * self.costs.bulk_copy_line);
                node.send_bulk(send.dest, GHOSTS_BULK, &[send.offset as u64, send.local.len() as u64], &[&words]);
                node.state(|s| {
                    s.counts.messages += 1;
                    s.counts.values_sent += words.len() as u64;
                });
            } else {
                for (c, chunk) in words.chunks(3 * self.per_message).enumerate() {
                    let mut args = Vec::with_capacity(chunk.len() + 1);
                    args.push((send.offset + c * self.per_message) as u64);
                    args.extend_from_slice(chunk);
                    node.send_am(send.dest, GHOSTS_AM, &args);
                    node.state(|s| {
                        s.counts.messages += 1;
                        s.counts.values_sent += chunk.len() as u64;
                    });
                    if self.variant == Variant::MpPoll {
                        node.poll();
                    }
                }
            }
        }
    }

    /// Add `sign * f` into own-then-ghost `slot`: an own node's results, a remote node's
    /// outgoing results (`bulk`), or a message to its owner.
    fn deliver<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, slot: u32, f: &Value, sign: f64) {
        let pp = &self.plan.proc[node.id()];
        let slot = slot as usize;
        if slot < pp.count {
            Self::touch3(node, mine, ACC, slot);
            node.compute(self.costs.accumulate);
            node.state(|s| flux::add(&mut s.acc[slot], f, sign));
            return;
        }
        let g = slot - pp.count;
        if self.variant == Variant::Bulk {
            Self::touch3(node, mine, OUT, g);
            node.compute(self.costs.accumulate);
            node.state(|s| flux::add(&mut s.out[g], f, sign));
        } else {
            let v = pp.ghosts[g] as usize;
            let q = self.plan.owner[v] as usize;
            let r = bits(&f.map(|x| sign * x));
            node.send_am(q, RESULT, &[(v - self.plan.proc[q].first) as u64, r[0], r[1], r[2]]);
            node.state(|s| {
                s.counts.messages += 1;
                s.counts.values_sent += 3;
            });
        }
    }

    /// The edge and face phase with messages.
    fn flux_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, cur: usize) {
        let me = node.id();
        let (pp, slots) = (&self.plan.proc[me], &self.slots[me]);
        let poll = self.variant == Variant::MpPoll;
        let mut items = 0usize;
        let mut tick = |node: &mut N| {
            items += 1;
            if poll && items.is_multiple_of(self.poll_every) {
                node.poll();
            }
        };
        for (i, e) in pp.edges.iter().enumerate() {
            let [sa, sb] = slots.edges[i];
            self.read_edge_data(node, mine, i);
            self.read_slot(node, mine, pp.count, cur, sa);
            self.read_slot(node, mine, pp.count, cur, sb);
            node.compute(self.costs.edge);
            let f = node.state(|s| flux::edge_flux(&e.coef, &s.slot(cur, sa), &s.slot(cur, sb)));
            self.deliver(node, mine, sa, &f, 1.0);
            self.deliver(node, mine, sb, &f, -1.0);
            tick(node);
        }
        for (i, fs) in slots.faces.iter().enumerate() {
            self.read_face_data(node, mine, i, fs.len());
            for &s in fs {
                self.read_slot(node, mine, pp.count, cur, s);
            }
            node.compute(self.costs.face);
            let vals: Vec<Value> = node.state(|s| fs.iter().map(|&x| s.slot(cur, x)).collect());
            let t = flux::face_term(&pp.face_coef[i], &vals);
            for &s in fs {
                self.deliver(node, mine, s, &t, 1.0);
            }
            tick(node);
        }
    }

    /// `bulk`: send each owner its nodes' accumulated results in one DMA message, straight
    /// from the owner's part of the outgoing array (no gather copy), and clear it.
    fn send_results_bulk<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let pp = &self.plan.proc[node.id()];
        for &(q, lo, hi) in &pp.ghost_owners {
            let words: Vec<u64> = node.state(|s| {
                let w = s.out[lo..hi].iter().flat_map(bits).collect();
                s.out[lo..hi].iter_mut().for_each(|x| *x = [0.0; 3]);
                w
            });
            node.send_bulk(q, RESULTS_BULK, &[(hi - lo) as u64], &[&words]);
            node.state(|s| {
                s.counts.messages += 1;
                s.counts.values_sent += words.len() as u64;
            });
            for g in lo..hi {
                for k in 0..3 {
                    mine.write(node, OUT, 3 * g + k);
                }
            }
        }
    }

    /// The update phase with messages.
    fn update_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, cur: usize) {
        let count = self.plan.proc[node.id()].count;
        let nxt = 1 - cur;
        for j in 0..count {
            for k in 0..3 {
                mine.read(node, VALS[cur], 3 * j + k);
                mine.read(node, ACC, 3 * j + k);
                mine.write(node, VALS[nxt], 3 * j + k);
                mine.write(node, ACC, 3 * j + k);
            }
            node.compute(self.costs.node);
            node.state(|s| {
                let mut u = s.vals[cur][j];
                flux::add(&mut u, &s.acc[j], 1.0);
                s.vals[nxt][j] = u;
                s.acc[j] = [0.0; 3];
            });
        }
    }

    /// Cycles of a lock acquisition and of a load on a line this processor holds exclusively,
    /// measured on its first own record (set-up, untimed).
    fn reference_hits<N: Node<State = State>>(&self, node: &mut N, acc: Addr) -> (f64, f64) {
        let pp = &self.plan.proc[node.id()];
        let r = self.record(acc, pp.first as u32);
        node.lock(r);
        node.unlock(r);
        let t = node.now_cycles();
        node.lock(r);
        let lock_hit = node.now_cycles() - t;
        node.unlock(r);
        let t = node.now_cycles();
        node.load(r.word(1));
        (lock_hit, node.now_cycles() - t)
    }
}

impl State {
    /// The value at own-then-ghost `slot` for buffer `cur`.
    fn slot(&self, cur: usize, slot: u32) -> Value {
        let slot = slot as usize;
        let own = self.vals[cur].len();
        if slot < own {
            self.vals[cur][slot]
        } else {
            self.ghosts[slot - own]
        }
    }
}

impl Program for Kernel {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_ghosts, on_ghosts_bulk, on_result, on_results_bulk]
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.private[id].words()
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.variant.receive_mode()
    }
    fn barrier_kind(&self) -> BarrierKind {
        self.variant.barrier_kind()
    }
    fn init_state(&self, id: ProcId, nprocs: usize) -> State {
        let pp = &self.plan.proc[id];
        let mut recv_lists = vec![Vec::new(); nprocs];
        for s in &pp.sends {
            recv_lists[s.dest] = s.local.clone();
        }
        let messages = !self.variant.shared_memory();
        let own = if messages { self.init[pp.first..pp.first + pp.count].to_vec() } else { Vec::new() };
        let zeros = |n: usize| if messages { vec![[0.0; 3]; n] } else { Vec::new() };
        State {
            vals: [own, zeros(pp.count)],
            acc: zeros(pp.count),
            ghosts: zeros(pp.ghosts.len()),
            out: if self.variant == Variant::Bulk { zeros(pp.ghosts.len()) } else { Vec::new() },
            recv_lists,
            ghosts_received: 0,
            results_received: 0,
            counts: Counts::default(),
            arrays: None,
            ghost_value_cycles: self.costs.ghost_value,
            recv_result_cycles: self.costs.recv_result,
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let me = node.id();
        let mine = Arrays::set_up(node, &self.private[me], self.line_bytes);
        let pp = &self.plan.proc[me];
        if self.variant.shared_memory() {
            let arrays =
                [0, 1, 2].map(|_| node.alloc_shared(self.record_words, Placement::Owners(self.record_owners.clone())));
            node.state(|s| s.arrays = Some(arrays));
            // Set-up (untimed): each owner stores its nodes' initial values.
            for v in pp.first..pp.first + pp.count {
                let r = self.record(arrays[0], v as u32);
                for k in 0..3 {
                    node.store_f64(r.word(k), self.init[v][k]);
                }
            }
            let hits = self.reference_hits(node, arrays[2]);
            node.barrier();
            node.begin_timing();
            for t in 0..self.iterations {
                node.progress(t as u64, self.iterations as u64);
                let (cur, nxt) = (arrays[t % 2], arrays[1 - t % 2]);
                self.flux_sm(node, &mine, cur, arrays[2], hits);
                node.barrier();
                self.update_sm(node, cur, nxt, arrays[2]);
                node.barrier();
            }
        } else {
            node.barrier();
            node.begin_timing();
            let bulk = self.variant == Variant::Bulk;
            let results_in = if bulk { pp.bulk_results_in() } else { pp.results_in };
            let ghosts = pp.ghosts.len() as u64;
            for t in 0..self.iterations {
                node.progress(t as u64, self.iterations as u64);
                let cur = t % 2;
                let round = t as u64 + 1;
                self.send_ghosts(node, &mine, cur);
                node.wait_until("unstruc ghost values", |s| s.ghosts_received >= ghosts * round);
                self.flux_mp(node, &mine, cur);
                if bulk {
                    self.send_results_bulk(node, &mine);
                }
                node.wait_until("unstruc results for own nodes", |s| s.results_received >= results_in * round);
                self.update_mp(node, &mine, cur);
            }
            node.barrier();
        }
    }
}
