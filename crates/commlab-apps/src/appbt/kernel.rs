//! The timed `appbt` program in both variants (one [`Program`]), and the sequential baseline
//! (the `custom` program on one processor).
//!
//! Processor `p` owns the x-planes `x0[p]..x0[p + 1]` (slabs across x) and every point in
//! them. An iteration, on every processor:
//! 1. *Right-hand side*: every own point's five values and its six neighbours' (the planes
//!    either side of the slab are the neighbouring processors'), `costs.rhs`, the result
//!    stored at the point.
//! 2. *x sweep*, pipelined: the lines along x cross every processor. The lines are taken in
//!    groups, one per y (the `nz` lines of an x-z plane); for group `g` a processor waits for
//!    its predecessor's forward results at the group's last points (`C'`, `r'`: 30 words a
//!    line), eliminates forward through its planes, and hands its own last results on; then
//!    the back substitution runs the other way, a processor waiting for its successor's
//!    solutions at the group's first points (5 words a line). Each point's forward result
//!    (30 words) goes to the private scratch array the back substitution reads.
//! 3. *y and z sweeps*: every line lies in one slab, so they are local.
//! 4. *Update*: `u += du` at every own point.
//!
//! `stache`: `u` and the right-hand side in shared memory, each slab homed at its owner (the
//! rhs stencil reads the neighbouring planes by remote misses); the pipeline's hand-offs go
//! through shared buffers homed at the producer and a shared array of counters (one per
//! processor and direction, each on its own line): the producer writes a group's results and
//! then its counter, the consumer spin-waits on the counter (`Node::spin_until`) and reads the
//! results by misses. A barrier ends each iteration (the next right-hand side reads the
//! neighbours' updated planes). `custom`: all data private; each hand-off is one bulk message
//! to the consumer, whose handler deposits the payload and bumps the signal table of
//! [`crate::runtime::signal`] under a tag naming the iteration and group; the consumer
//! [`signal::wait`]s for it. After the update each processor sends its edge planes to its
//! neighbours (one bulk message each, tagged with the next iteration), which is all the
//! synchronisation between iterations: no barrier.

use super::math::{self, Block, Grid, Vec5, COMP, FWD_WORDS};
use crate::private::{Arrays, Shape};
use crate::runtime::signal::{self, HasSignals, Signals};
use commlab_api::{
    Addr, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use std::collections::BTreeMap;

/// Work costs from the machine's `[costs]` table (see [`super`]).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub rhs: u64,
    pub form: u64,
    pub multiply: u64,
    pub matvec: u64,
    pub factor: u64,
    pub solve: u64,
    pub add: u64,
}

impl Costs {
    pub fn of<B: commlab_api::Backend>(b: &B) -> Result<Costs, crate::app::AppError> {
        let c = |n: &str| crate::app::cost(b, n);
        Ok(Costs {
            rhs: c("appbt_rhs")?,
            form: c("appbt_form")?,
            multiply: c("appbt_block_multiply")?,
            matvec: c("appbt_block_matvec")?,
            factor: c("appbt_block_factor")?,
            solve: c("appbt_block_solve")?,
            add: c("appbt_add")?,
        })
    }

    /// One point's forward elimination (with or without a previous point).
    fn forward(&self, first: bool) -> u64 {
        let coupled = if first { 0 } else { self.multiply + self.matvec };
        self.form + coupled + self.factor + (COMP as u64 + 1) * self.solve
    }
}

/// Transparent shared memory, or signal/wait and producer-consumer messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Stache,
    Custom,
}

/// The one handler: a payload for the consumer (forward or backward hand-off, or an edge
/// plane), `args = [tag, words]`.
const DATA: HandlerId = HandlerId(0);

/// Tag kinds (the top byte of a tag).
const FWD: u64 = 1;
const BWD: u64 = 2;
/// The plane below the slab (from `p - 1`) and above it (from `p + 1`).
const GHOST_LO: u64 = 3;
const GHOST_HI: u64 = 4;

fn tag(kind: u64, t: usize, g: usize) -> u64 {
    (kind << 56) | ((t as u64) << 24) | g as u64
}

/// What a processor counted.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub handoffs_sent: u64,
    pub handoffs_received: u64,
    pub messages: u64,
    pub planes_sent: u64,
    pub spin_waits: u64,
    pub points_solved: u64,
}

/// Private state of one processor.
pub struct State {
    signals: Signals,
    /// `custom`: the slab's values and right-hand side (`stache`: in shared memory).
    pub u: Vec<f64>,
    r: Vec<f64>,
    /// `custom`: the planes either side of the slab for this iteration (empty at a grid face).
    ghost: [Vec<f64>; 2],
    /// Forward results of every slab point (the values of the private scratch array).
    fwd: Vec<(Block, Vec5)>,
    /// `custom`: arrived payloads by tag.
    inbox: BTreeMap<u64, Vec<u64>>,
    /// `stache`: the slab's `u` in shared memory.
    pub array: Option<Addr>,
    pub tally: Tally,
}

impl HasSignals for State {
    fn signals(&self) -> &Signals {
        &self.signals
    }
    fn signals_mut(&mut self) -> &mut Signals {
        &mut self.signals
    }
}

fn on_data(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (t, words) = (m.args[0], m.args[1] as usize);
    s.inbox.insert(t, m.payload[..words].to_vec());
    s.signals.bump(t);
    if t >> 56 == FWD || t >> 56 == BWD {
        s.tally.handoffs_received += 1;
    }
}

/// Private arrays: `u`, the right-hand side (`custom`), the forward results, the two edge
/// planes (`custom`), the buffer a hand-off is gathered into or read from.
const U: usize = 0;
const R: usize = 1;
const SCRATCH: usize = 2;
const GHOST: usize = 3;
const BUF: usize = 4;

/// The distributed program.
pub struct Kernel {
    pub mode: Mode,
    pub grid: Grid,
    pub iterations: usize,
    pub costs: Costs,
    /// First x-plane of every processor, and `nx` at the end.
    pub x0: Vec<usize>,
    /// Processor of every x-plane.
    pub owner: Vec<usize>,
    pub line_bytes: usize,
}

/// The shared data (`stache`) and the private arrays of one processor.
struct Ctx {
    mine: Arrays,
    /// Every processor's `u` and right-hand side slabs, hand-off buffers and counters.
    u: Vec<Addr>,
    r: Vec<Addr>,
    fwd_buf: Vec<Addr>,
    bwd_buf: Vec<Addr>,
    fwd_flag: Vec<Addr>,
    bwd_flag: Vec<Addr>,
}

impl Kernel {
    fn plane(&self) -> usize {
        self.grid.dims[1] * self.grid.dims[2]
    }
    fn slab_points(&self, p: usize) -> usize {
        (self.x0[p + 1] - self.x0[p]) * self.plane()
    }
    /// Index of `(x, y, z)` within its owner's slab.
    fn local(&self, x: usize, y: usize, z: usize) -> usize {
        let p = self.owner[x];
        ((x - self.x0[p]) * self.grid.dims[1] + y) * self.grid.dims[2] + z
    }

    fn shape(&self, p: usize) -> Shape {
        let custom = self.mode == Mode::Custom;
        let sp = self.slab_points(p);
        let mut s = Shape::default();
        s.push(if custom { COMP * sp } else { 0 }, 8);
        s.push(if custom { COMP * sp } else { 0 }, 8);
        s.push(FWD_WORDS * sp, 8);
        s.push(if custom { 2 * COMP * self.plane() } else { 0 }, 8);
        s.push(FWD_WORDS * self.grid.dims[2], 8);
        s
    }

    fn load_u<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, x: usize, y: usize, z: usize) -> Vec5 {
        let p = self.owner[x];
        let li = self.local(x, y, z);
        let mut v = [0.0; COMP];
        match self.mode {
            Mode::Stache => {
                for (j, vj) in v.iter_mut().enumerate() {
                    *vj = node.load_f64(cx.u[p].word(COMP * li + j));
                }
            }
            Mode::Custom if p == node.id() => {
                for (j, vj) in v.iter_mut().enumerate() {
                    cx.mine.read(node, U, COMP * li + j);
                    *vj = node.state(|s| s.u[COMP * li + j]);
                }
            }
            Mode::Custom => {
                let side = usize::from(p > node.id());
                let gi = y * self.grid.dims[2] + z;
                for (j, vj) in v.iter_mut().enumerate() {
                    cx.mine.read(node, GHOST, side * COMP * self.plane() + COMP * gi + j);
                    *vj = node.state(|s| s.ghost[side][COMP * gi + j]);
                }
            }
        }
        v
    }

    fn load_r<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, li: usize) -> Vec5 {
        let mut v = [0.0; COMP];
        for (j, vj) in v.iter_mut().enumerate() {
            *vj = match self.mode {
                Mode::Stache => node.load_f64(cx.r[node.id()].word(COMP * li + j)),
                Mode::Custom => {
                    cx.mine.read(node, R, COMP * li + j);
                    node.state(|s| s.r[COMP * li + j])
                }
            };
        }
        v
    }

    fn store_r<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, li: usize, v: &Vec5) {
        for (j, &vj) in v.iter().enumerate() {
            match self.mode {
                Mode::Stache => node.store_f64(cx.r[node.id()].word(COMP * li + j), vj),
                Mode::Custom => {
                    cx.mine.write(node, R, COMP * li + j);
                    node.state(|s| s.r[COMP * li + j] = vj);
                }
            }
        }
    }

    fn write_fwd<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, li: usize, f: (Block, Vec5)) {
        for k in 0..FWD_WORDS {
            cx.mine.write(node, SCRATCH, FWD_WORDS * li + k);
        }
        node.state(|s| s.fwd[li] = f);
    }

    fn read_fwd<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, li: usize) -> (Block, Vec5) {
        for k in 0..FWD_WORDS {
            cx.mine.read(node, SCRATCH, FWD_WORDS * li + k);
        }
        node.state(|s| s.fwd[li])
    }

    /// Forward elimination of one point; returns its result.
    fn forward<N: Node<State = State>>(
        &self,
        node: &mut N,
        cx: &Ctx,
        [x, y, z]: [usize; 3],
        prev: Option<&(Block, Vec5)>,
    ) -> (Block, Vec5) {
        let u = self.load_u(node, cx, x, y, z);
        let li = self.local(x, y, z);
        let r = self.load_r(node, cx, li);
        node.compute(self.costs.forward(prev.is_none()));
        let f = math::forward_point(&u, &r, prev.map(|(c, rp)| (c, rp)));
        self.write_fwd(node, cx, li, f);
        f
    }

    /// Back substitution of one point; returns its solution (stored as its right-hand side).
    fn backward<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, li: usize, next: Option<&Vec5>) -> Vec5 {
        let (c, r) = self.read_fwd(node, cx, li);
        if next.is_some() {
            node.compute(self.costs.matvec);
        }
        let x = math::backward_point(&c, &r, next);
        self.store_r(node, cx, li, &x);
        node.state(|s| s.tally.points_solved += 1);
        x
    }

    /// Wait for the hand-off `kind` of iteration `t`, group `g`, and read its `words`.
    fn receive<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, kind: u64, t: usize, g: usize) -> Vec<u64> {
        let me = node.id();
        let nz = self.grid.dims[2];
        match self.mode {
            Mode::Stache => {
                let (from, flag, buf, per) = if kind == FWD {
                    (me - 1, cx.fwd_flag[me - 1], cx.fwd_buf[me - 1], FWD_WORDS)
                } else {
                    (me + 1, cx.bwd_flag[me + 1], cx.bwd_buf[me + 1], COMP)
                };
                let _ = from;
                let target = (t * self.grid.dims[1] + g + 1) as u64;
                node.spin_until("appbt pipeline counter", flag, move |v| v >= target);
                node.state(|s| {
                    s.tally.spin_waits += 1;
                    s.tally.handoffs_received += 1;
                });
                (0..per * nz).map(|k| node.load(buf.word(per * nz * g + k))).collect()
            }
            Mode::Custom => {
                let tg = tag(kind, t, g);
                signal::wait(node, tg, 1);
                let words = node.state(|s| s.inbox.remove(&tg).expect("the payload of a signalled hand-off"));
                for k in 0..words.len() {
                    cx.mine.read(node, BUF, k);
                }
                words
            }
        }
    }

    /// Hand the words of iteration `t`, group `g` on to `dest`.
    fn hand_off<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, kind: u64, t: usize, g: usize, words: &[u64]) {
        let me = node.id();
        let dest = if kind == FWD { me + 1 } else { me - 1 };
        match self.mode {
            Mode::Stache => {
                let (flag, buf) =
                    if kind == FWD { (cx.fwd_flag[me], cx.fwd_buf[me]) } else { (cx.bwd_flag[me], cx.bwd_buf[me]) };
                for (k, &w) in words.iter().enumerate() {
                    node.store(buf.word(words.len() * g + k), w);
                }
                node.store(flag, (t * self.grid.dims[1] + g + 1) as u64);
            }
            Mode::Custom => {
                for k in 0..words.len() {
                    cx.mine.write(node, BUF, k);
                }
                node.send_bulk(dest, DATA, &[tag(kind, t, g), words.len() as u64], &[words]);
                node.state(|s| s.tally.messages += 1);
            }
        }
        node.state(|s| s.tally.handoffs_sent += 1);
    }

    /// The pipelined sweep along x.
    fn x_sweep<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, t: usize) {
        let (me, procs) = (node.id(), node.nprocs());
        let [_, ny, nz] = self.grid.dims;
        let (x0, x1) = (self.x0[me], self.x0[me + 1]);
        for g in 0..ny {
            let prevs: Vec<Option<(Block, Vec5)>> = if me > 0 {
                let w = self.receive(node, cx, FWD, t, g);
                w.chunks(FWD_WORDS).map(|c| Some(math::fwd_from_words(c))).collect()
            } else {
                vec![None; nz]
            };
            let mut out = Vec::with_capacity(FWD_WORDS * nz);
            for (z, prev) in prevs.into_iter().enumerate() {
                let mut prev = prev;
                for x in x0..x1 {
                    prev = Some(self.forward(node, cx, [x, g, z], prev.as_ref()));
                }
                let (c, r) = prev.expect("a slab has a plane");
                out.extend_from_slice(&math::fwd_to_words(&c, &r));
            }
            if me + 1 < procs {
                self.hand_off(node, cx, FWD, t, g, &out);
            }
        }
        for g in 0..ny {
            let nexts: Vec<Option<Vec5>> = if me + 1 < procs {
                let w = self.receive(node, cx, BWD, t, g);
                w.chunks(COMP).map(|c| Some([0, 1, 2, 3, 4].map(|j| f64::from_bits(c[j])))).collect()
            } else {
                vec![None; nz]
            };
            let mut out = Vec::with_capacity(COMP * nz);
            for (z, next) in nexts.into_iter().enumerate() {
                let mut next = next;
                for x in (x0..x1).rev() {
                    next = Some(self.backward(node, cx, self.local(x, g, z), next.as_ref()));
                }
                out.extend(next.expect("a slab has a plane").map(f64::to_bits));
            }
            if me > 0 {
                self.hand_off(node, cx, BWD, t, g, &out);
            }
        }
    }

    /// A sweep along y (`axis` 1) or z (2): every line in the slab.
    fn local_sweep<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx, axis: usize) {
        let me = node.id();
        let [_, ny, nz] = self.grid.dims;
        let (n, other) = if axis == 1 { (ny, nz) } else { (nz, ny) };
        for x in self.x0[me]..self.x0[me + 1] {
            for o in 0..other {
                let at = |i: usize| if axis == 1 { [x, i, o] } else { [x, o, i] };
                let mut prev: Option<(Block, Vec5)> = None;
                for i in 0..n {
                    prev = Some(self.forward(node, cx, at(i), prev.as_ref()));
                }
                let mut next: Option<Vec5> = None;
                for i in (0..n).rev() {
                    let [a, b, c] = at(i);
                    next = Some(self.backward(node, cx, self.local(a, b, c), next.as_ref()));
                }
            }
        }
    }

    fn rhs<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx) {
        let me = node.id();
        let [nx, ny, nz] = self.grid.dims;
        let zero = [0.0; COMP];
        for x in self.x0[me]..self.x0[me + 1] {
            for y in 0..ny {
                for z in 0..nz {
                    let c = self.load_u(node, cx, x, y, z);
                    let mut nbrs = [zero; 6];
                    if x > 0 {
                        nbrs[0] = self.load_u(node, cx, x - 1, y, z);
                    }
                    if x + 1 < nx {
                        nbrs[1] = self.load_u(node, cx, x + 1, y, z);
                    }
                    if y > 0 {
                        nbrs[2] = self.load_u(node, cx, x, y - 1, z);
                    }
                    if y + 1 < ny {
                        nbrs[3] = self.load_u(node, cx, x, y + 1, z);
                    }
                    if z > 0 {
                        nbrs[4] = self.load_u(node, cx, x, y, z - 1);
                    }
                    if z + 1 < nz {
                        nbrs[5] = self.load_u(node, cx, x, y, z + 1);
                    }
                    node.compute(self.costs.rhs);
                    let r = math::rhs_point(&c, &nbrs);
                    self.store_r(node, cx, self.local(x, y, z), &r);
                }
            }
        }
    }

    fn update<N: Node<State = State>>(&self, node: &mut N, cx: &Ctx) {
        let me = node.id();
        for li in 0..self.slab_points(me) {
            let r = self.load_r(node, cx, li);
            node.compute(self.costs.add);
            for (j, rj) in r.iter().enumerate() {
                match self.mode {
                    Mode::Stache => {
                        let a = cx.u[me].word(COMP * li + j);
                        let v = node.load_f64(a);
                        node.store_f64(a, v + rj);
                    }
                    Mode::Custom => {
                        cx.mine.read(node, U, COMP * li + j);
                        cx.mine.write(node, U, COMP * li + j);
                        node.state(|s| s.u[COMP * li + j] += rj);
                    }
                }
            }
        }
    }

    /// `custom`: send the edge planes to the neighbours for iteration `t`.
    fn send_planes<N: Node<State = State>>(&self, node: &mut N, t: usize) {
        let (me, procs) = (node.id(), node.nprocs());
        let pw = COMP * self.plane();
        let sp = COMP * self.slab_points(me);
        if me > 0 {
            let w: Vec<u64> = node.state(|s| s.u[..pw].iter().map(|v| v.to_bits()).collect());
            node.send_bulk(me - 1, DATA, &[tag(GHOST_HI, t, 0), pw as u64], &[&w]);
        }
        if me + 1 < procs {
            let w: Vec<u64> = node.state(|s| s.u[sp - pw..].iter().map(|v| v.to_bits()).collect());
            node.send_bulk(me + 1, DATA, &[tag(GHOST_LO, t, 0), pw as u64], &[&w]);
        }
        let n = u64::from(me > 0) + u64::from(me + 1 < procs);
        node.state(|s| {
            s.tally.messages += n;
            s.tally.planes_sent += n;
        });
    }

    /// `custom`: wait for the edge planes of iteration `t`.
    fn receive_planes<N: Node<State = State>>(&self, node: &mut N, t: usize) {
        let (me, procs) = (node.id(), node.nprocs());
        for (side, kind, there) in [(0, GHOST_LO, me > 0), (1, GHOST_HI, me + 1 < procs)] {
            if there {
                let tg = tag(kind, t, 0);
                signal::wait(node, tg, 1);
                node.state(|s| {
                    let w = s.inbox.remove(&tg).expect("the payload of a signalled plane");
                    s.ghost[side] = w.into_iter().map(f64::from_bits).collect();
                });
            }
        }
    }
}

impl Program for Kernel {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_data]
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.shape(id).words()
    }
    fn receive_mode(&self) -> ReceiveMode {
        crate::app::receive_mode_of(false)
    }
    fn barrier_kind(&self) -> BarrierKind {
        crate::app::barrier_kind_of(self.mode == Mode::Stache)
    }
    fn init_state(&self, id: ProcId, nprocs: usize) -> State {
        let custom = self.mode == Mode::Custom;
        let u0 = if custom { math::initial(&self.grid) } else { Vec::new() };
        let pw = COMP * self.plane();
        let plane_at = |x: usize| u0[COMP * self.grid.index(x, 0, 0)..COMP * self.grid.index(x, 0, 0) + pw].to_vec();
        let (x0, x1) = (self.x0[id], self.x0[id + 1]);
        State {
            signals: Signals::default(),
            u: if custom {
                u0[COMP * self.grid.index(x0, 0, 0)..COMP * self.grid.index(x1, 0, 0)].to_vec()
            } else {
                Vec::new()
            },
            r: if custom { vec![0.0; COMP * self.slab_points(id)] } else { Vec::new() },
            ghost: if custom {
                [
                    if id > 0 { plane_at(x0 - 1) } else { Vec::new() },
                    if id + 1 < nprocs { plane_at(x1) } else { Vec::new() },
                ]
            } else {
                [Vec::new(), Vec::new()]
            },
            fwd: vec![([[0.0; COMP]; COMP], [0.0; COMP]); self.slab_points(id)],
            inbox: BTreeMap::new(),
            array: None,
            tally: Tally::default(),
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let me = node.id();
        let procs = node.nprocs();
        let mine = Arrays::set_up(node, &self.shape(me), self.line_bytes);
        let mut cx =
            Ctx { mine, u: vec![], r: vec![], fwd_buf: vec![], bwd_buf: vec![], fwd_flag: vec![], bwd_flag: vec![] };
        if self.mode == Mode::Stache {
            let [_, ny, nz] = self.grid.dims;
            let flag_words = (self.line_bytes / 8).max(1);
            for p in 0..procs {
                let sp = self.slab_points(p);
                let at = Placement::OnNode(p);
                cx.u.push(node.alloc_shared(COMP * sp, at.clone()));
                cx.r.push(node.alloc_shared(COMP * sp, at.clone()));
                cx.fwd_buf.push(node.alloc_shared(FWD_WORDS * ny * nz, at.clone()));
                cx.bwd_buf.push(node.alloc_shared(COMP * ny * nz, at.clone()));
                cx.fwd_flag.push(node.alloc_shared(flag_words, at.clone()));
                cx.bwd_flag.push(node.alloc_shared(flag_words, at));
            }
            // Set-up (untimed): each owner writes its slab's initial values.
            let u0 = math::initial(&self.grid);
            let first = COMP * self.grid.index(self.x0[me], 0, 0);
            for k in 0..COMP * self.slab_points(me) {
                node.store_f64(cx.u[me].word(k), u0[first + k]);
            }
            let a = cx.u[me];
            node.state(|s| s.array = Some(a));
        }
        node.barrier();
        node.begin_timing();
        for t in 0..self.iterations {
            node.progress(t as u64, self.iterations as u64);
            if self.mode == Mode::Custom && t > 0 {
                self.receive_planes(node, t);
            }
            self.rhs(node, &cx);
            self.x_sweep(node, &cx, t);
            self.local_sweep(node, &cx, 1);
            self.local_sweep(node, &cx, 2);
            self.update(node, &cx);
            if t + 1 < self.iterations {
                match self.mode {
                    Mode::Stache => node.barrier(),
                    Mode::Custom => self.send_planes(node, t + 1),
                }
            }
        }
    }
}
