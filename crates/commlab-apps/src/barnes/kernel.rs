//! The timed Barnes-Hut program in both variants (one [`Program`]), and the sequential
//! baseline (the `custom` program on one processor).
//!
//! Processor `p` owns bodies `first[p]..first[p + 1]`. The tree is an array of 16-word cell
//! records (a lock word, 8 child words, the mass, the centre of mass, a done word) in pools;
//! a child word is 0 (empty), a body (`b << 2 | 1`) or a cell (`g << 2 | 2`, `g` a cell
//! number: processor `q`'s pool holds cells `q cap .. (q + 1) cap`). An iteration:
//! 1. *Build*: each processor inserts bodies: from the root, read the child word of the
//!    body's octant (`costs.barnes_insert_level` a level); descend into a cell; else lock the
//!    cell, re-read, and either store the body in the empty slot or split the slot's body
//!    into a new cell of its own pool (`costs.barnes_subdivide`; the new cell's words are
//!    written, the old body's position read, the new cell linked) and go on down.
//! 2. *Centres of mass*: each processor sums the cells it created, latest first, each
//!    cell's children in octant order (`costs.barnes_com_child` each, `costs.barnes_com_cell`
//!    a cell), waiting for a child cell another processor created until its done word says
//!    this iteration (cells are created after their parents, so waits always point to later
//!    cells and cannot cycle).
//! 3. *Forces*: each processor walks the tree for each of its bodies, octants in order: a
//!    cell visited costs `costs.barnes_open` (its mass and centre of mass read); one far
//!    enough is an interaction (`costs.barnes_interact`), else its child words are read and
//!    its children visited; a body is an interaction (its position and mass read).
//! 4. *Update*: a leapfrog step of each own body (`costs.barnes_update`).
//!
//! - `stache`, as SPLASH-2 barnes: the bodies (position, mass, velocity: 8 words) and the
//!   pools in shared memory, homed at their owners; every processor inserts its own bodies
//!   into the one shared tree under the cells' locks; barriers between the phases.
//! - `custom`: no shared tree. Each processor sends its bodies' positions and masses to every
//!   other in one bulk message (4 words a body) and builds the whole tree privately, then
//!   does the centres of mass and the walks for its bodies in private memory. Positions of
//!   the two iterations' exchanges alternate between two private arrays, so a processor one
//!   iteration ahead cannot overwrite positions still in use.
//!
//! Iteration 0 is not timed (as the study): a barrier and `begin_timing` start iteration 1.

use super::physics::{child_center, interact, octant, opens, step, ComSum, Sim, V3};
use crate::private::{Arrays, Shape};
use commlab_api::{
    Addr, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};

/// Work costs from the machine's `[costs]` table.
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub insert_level: u64,
    pub subdivide: u64,
    pub com_child: u64,
    pub com_cell: u64,
    pub open: u64,
    pub interact: u64,
    pub update: u64,
}

impl Costs {
    pub fn of<B: commlab_api::Backend>(b: &B) -> Result<Costs, crate::app::AppError> {
        let c = |n: &str| crate::app::cost(b, n);
        Ok(Costs {
            insert_level: c("barnes_insert_level")?,
            subdivide: c("barnes_subdivide")?,
            com_child: c("barnes_com_child")?,
            com_cell: c("barnes_com_cell")?,
            open: c("barnes_open")?,
            interact: c("barnes_interact")?,
            update: c("barnes_update")?,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Stache,
    Custom,
}

const BODIES: HandlerId = HandlerId(0);
/// The arguments of a `BODIES` message: the step's parity, the first body and the count.
pub(crate) const BODIES_ARGS: usize = 3;

/// Words of a cell record, and the offsets in it.
const CELL_WORDS: usize = 16;
const LOCK: usize = 0;
const CHILD: usize = 1;
const MASS: usize = 9;
const COM: usize = 10;
const DONE: usize = 13;
/// Words of a body record in shared memory (x, y, z, mass, vx, vy, vz, spare) and in a
/// custom exchange (x, y, z, mass).
const BODY_WORDS: usize = 8;
const SENT_WORDS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Empty,
    Body(usize),
    Cell(usize),
}

fn decode(w: u64) -> Slot {
    match w & 3 {
        0 => Slot::Empty,
        1 => Slot::Body((w >> 2) as usize),
        _ => Slot::Cell((w >> 2) as usize),
    }
}

fn body_word(b: usize) -> u64 {
    (b as u64) << 2 | 1
}

fn cell_word(g: usize) -> u64 {
    (g as u64) << 2 | 2
}

/// What a processor counted.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub cells: u64,
    pub interactions: u64,
    pub opened: u64,
    pub lock_acquisitions: u64,
    pub lock_releases: u64,
    pub messages: u64,
    pub bodies_sent: u64,
    pub bodies_received: u64,
}

/// Private state of one processor.
pub struct State {
    /// `custom`: the whole tree's words, and every body's (x, m) words for each parity.
    tree: Vec<u64>,
    bodies: [Vec<u64>; 2],
    got: [usize; 2],
    /// `custom`: own positions and velocities (`stache`: in shared memory).
    pub x: Vec<V3>,
    pub v: Vec<V3>,
    /// `stache`: each processor's body array.
    pub arrays: Vec<Addr>,
    pub tally: Tally,
}

fn on_bodies(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (parity, first, k) = (m.args[0] as usize, m.args[1] as usize, m.args[2] as usize);
    s.bodies[parity][SENT_WORDS * first..SENT_WORDS * (first + k)].copy_from_slice(&m.payload[..SENT_WORDS * k]);
    s.got[parity] += 1;
    s.tally.bodies_received += k as u64;
}

/// Private arrays.
const ACC: usize = 0;
const MINE: usize = 1;
const TREE: usize = 2;
const POS0: usize = 3;
const VEL: usize = 5;

pub struct Kernel {
    pub mode: Mode,
    pub sim: Sim,
    pub iterations: usize,
    pub costs: Costs,
    pub first: Vec<usize>,
    pub owner: Vec<usize>,
    pub x0: Vec<V3>,
    pub v0: Vec<V3>,
    pub m: Vec<f64>,
    /// Cells a pool holds (the most any tree of the reference run has).
    pub cap: usize,
    pub line_bytes: usize,
}

/// Where the tree and the bodies are.
struct Mem<'a> {
    mine: &'a Arrays,
    shared: Option<(Vec<Addr>, Vec<Addr>)>,
    parity: usize,
}

impl Kernel {
    fn own(&self, p: usize) -> usize {
        self.first[p + 1] - self.first[p]
    }

    fn shape(&self, p: usize) -> Shape {
        let custom = self.mode == Mode::Custom;
        let n = self.x0.len();
        let mut s = Shape::default();
        s.push(3 * self.own(p), 8);
        s.push(if custom { 0 } else { self.cap }, 4);
        s.push(if custom { CELL_WORDS * self.cap } else { 0 }, 8);
        s.push(if custom { SENT_WORDS * n } else { 0 }, 8);
        s.push(if custom { SENT_WORDS * n } else { 0 }, 8);
        s.push(if custom { 3 * self.own(p) } else { 0 }, 8);
        s
    }

    fn cell_addr(&self, pools: &[Addr], g: usize) -> Addr {
        pools[g / self.cap].word(CELL_WORDS * (g % self.cap))
    }

    fn body_addr(&self, arrays: &[Addr], b: usize) -> Addr {
        let p = self.owner[b];
        arrays[p].word(BODY_WORDS * (b - self.first[p]))
    }

    fn word<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, g: usize, w: usize) -> u64 {
        match &mem.shared {
            Some((_, pools)) => node.load(self.cell_addr(pools, g).word(w)),
            None => {
                mem.mine.read(node, TREE, CELL_WORDS * g + w);
                node.state(|s| s.tree[CELL_WORDS * g + w])
            }
        }
    }

    fn set_word<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, g: usize, w: usize, v: u64) {
        match &mem.shared {
            Some((_, pools)) => node.store(self.cell_addr(pools, g).word(w), v),
            None => {
                mem.mine.write(node, TREE, CELL_WORDS * g + w);
                node.state(|s| s.tree[CELL_WORDS * g + w] = v);
            }
        }
    }

    /// A body's position and mass (4 words).
    fn body<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, b: usize) -> (V3, f64) {
        let w: [u64; 4] = match &mem.shared {
            Some((arrays, _)) => {
                let a = self.body_addr(arrays, b);
                [0, 1, 2, 3].map(|k| node.load(a.word(k)))
            }
            None => {
                for k in 0..SENT_WORDS {
                    mem.mine.read(node, POS0 + mem.parity, SENT_WORDS * b + k);
                }
                let p = mem.parity;
                node.state(|s| [0, 1, 2, 3].map(|k| s.bodies[p][SENT_WORDS * b + k]))
            }
        };
        ([w[0], w[1], w[2]].map(f64::from_bits), f64::from_bits(w[3]))
    }

    fn lock<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, g: usize) {
        if let Some((_, pools)) = &mem.shared {
            node.lock(self.cell_addr(pools, g).word(LOCK));
            node.state(|s| s.tally.lock_acquisitions += 1);
        }
    }

    fn unlock<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, g: usize) {
        if let Some((_, pools)) = &mem.shared {
            node.unlock(self.cell_addr(pools, g).word(LOCK));
            node.state(|s| s.tally.lock_releases += 1);
        }
    }

    /// Clear a cell's lock, children and done words.
    fn init_cell<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, g: usize) {
        for w in [LOCK, CHILD, CHILD + 1, CHILD + 2, CHILD + 3, CHILD + 4, CHILD + 5, CHILD + 6, CHILD + 7, DONE] {
            self.set_word(node, mem, g, w, 0);
        }
    }

    /// Insert body `b` at `xb`; new cells come from `next` and are listed in `made`.
    #[allow(clippy::too_many_arguments)]
    fn insert<N: Node<State = State>>(
        &self,
        node: &mut N,
        mem: &Mem,
        b: usize,
        xb: &V3,
        next: &mut usize,
        made: &mut Vec<usize>,
    ) {
        let (mut g, mut center, mut half) = (0usize, [0.0; 3], self.sim.root_half);
        loop {
            node.compute(self.costs.insert_level);
            let k = octant(xb, &center);
            if let Slot::Cell(n) = decode(self.word(node, mem, g, CHILD + k)) {
                center = child_center(&center, half, k);
                half /= 2.0;
                g = n;
                continue;
            }
            self.lock(node, mem, g);
            match decode(self.word(node, mem, g, CHILD + k)) {
                Slot::Cell(n) => {
                    self.unlock(node, mem, g);
                    center = child_center(&center, half, k);
                    half /= 2.0;
                    g = n;
                }
                Slot::Empty => {
                    self.set_word(node, mem, g, CHILD + k, body_word(b));
                    self.unlock(node, mem, g);
                    return;
                }
                Slot::Body(b2) => {
                    node.compute(self.costs.subdivide);
                    let n = *next;
                    *next += 1;
                    let limit = if mem.shared.is_some() { (node.id() + 1) * self.cap } else { self.cap };
                    assert!(n < limit, "barnes cell pool overflow (the tree has more cells than the reference's)");
                    if mem.shared.is_some() {
                        mem.mine.write(node, MINE, made.len());
                    }
                    made.push(n);
                    node.state(|s| s.tally.cells += 1);
                    self.init_cell(node, mem, n);
                    let cc = child_center(&center, half, k);
                    let (x2, _) = self.body(node, mem, b2);
                    self.set_word(node, mem, n, CHILD + octant(&x2, &cc), body_word(b2));
                    self.set_word(node, mem, g, CHILD + k, cell_word(n));
                    self.unlock(node, mem, g);
                    g = n;
                    center = cc;
                    half /= 2.0;
                }
            }
        }
    }

    /// Centres of mass of the cells in `made`, latest first.
    fn centers_of_mass<N: Node<State = State>>(&self, node: &mut N, mem: &Mem, made: &[usize], generation: u64) {
        for (i, &g) in made.iter().enumerate().rev() {
            if mem.shared.is_some() {
                mem.mine.read(node, MINE, i);
            }
            let mut s = ComSum::default();
            for k in 0..8 {
                match decode(self.word(node, mem, g, CHILD + k)) {
                    Slot::Empty => continue,
                    Slot::Body(b) => {
                        let (x, m) = self.body(node, mem, b);
                        s.add(m, &x);
                    }
                    Slot::Cell(n) => {
                        match &mem.shared {
                            Some((_, pools)) => {
                                node.spin_until(
                                    "barnes child centre of mass",
                                    self.cell_addr(pools, n).word(DONE),
                                    |v| v == generation,
                                );
                            }
                            None => debug_assert_eq!(node.state(|s| s.tree[CELL_WORDS * n + DONE]), generation),
                        }
                        let m = f64::from_bits(self.word(node, mem, n, MASS));
                        let c = [0, 1, 2].map(|d| f64::from_bits(self.word(node, mem, n, COM + d)));
                        s.add(m, &c);
                    }
                }
                node.compute(self.costs.com_child);
            }
            node.compute(self.costs.com_cell);
            let (m, c) = s.finish();
            self.set_word(node, mem, g, MASS, m.to_bits());
            for (d, x) in c.iter().enumerate() {
                self.set_word(node, mem, g, COM + d, x.to_bits());
            }
            self.set_word(node, mem, g, DONE, generation);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn walk<N: Node<State = State>>(
        &self,
        node: &mut N,
        mem: &Mem,
        g: usize,
        half: f64,
        b: usize,
        xb: &V3,
        acc: &mut V3,
    ) {
        node.compute(self.costs.open);
        let m = f64::from_bits(self.word(node, mem, g, MASS));
        let c = [0, 1, 2].map(|d| f64::from_bits(self.word(node, mem, g, COM + d)));
        if !opens(&self.sim, half, &c, xb) {
            interact(acc, xb, &c, m, self.sim.eps2);
            node.compute(self.costs.interact);
            node.state(|s| s.tally.interactions += 1);
            return;
        }
        node.state(|s| s.tally.opened += 1);
        for k in 0..8 {
            match decode(self.word(node, mem, g, CHILD + k)) {
                Slot::Empty => {}
                Slot::Body(o) => {
                    if o != b {
                        let (xo, mo) = self.body(node, mem, o);
                        interact(acc, xb, &xo, mo, self.sim.eps2);
                        node.compute(self.costs.interact);
                        node.state(|s| s.tally.interactions += 1);
                    }
                }
                Slot::Cell(n) => self.walk(node, mem, n, half / 2.0, b, xb, acc),
            }
        }
    }

    /// Forces on the own bodies (positions read through `mem`), into `ACC`.
    fn forces<N: Node<State = State>>(&self, node: &mut N, mem: &Mem) -> Vec<V3> {
        let me = node.id();
        let mut out = Vec::with_capacity(self.own(me));
        for b in self.first[me]..self.first[me + 1] {
            let (xb, _) = self.body(node, mem, b);
            let mut acc = [0.0; 3];
            self.walk(node, mem, 0, self.sim.root_half, b, &xb, &mut acc);
            for d in 0..3 {
                mem.mine.write(node, ACC, 3 * (b - self.first[me]) + d);
            }
            out.push(acc);
        }
        out
    }

    fn main_stache<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let (me, procs) = (node.id(), node.nprocs());
        let arrays: Vec<Addr> =
            (0..procs).map(|p| node.alloc_shared(BODY_WORDS * self.own(p).max(1), Placement::OnNode(p))).collect();
        let pools: Vec<Addr> =
            (0..procs).map(|p| node.alloc_shared(CELL_WORDS * self.cap, Placement::OnNode(p))).collect();
        for b in self.first[me]..self.first[me + 1] {
            let a = self.body_addr(&arrays, b);
            for d in 0..3 {
                node.store_f64(a.word(d), self.x0[b][d]);
                node.store_f64(a.word(4 + d), self.v0[b][d]);
            }
            node.store_f64(a.word(3), self.m[b]);
        }
        node.state(|s| s.arrays.clone_from(&arrays));
        let mem = Mem { mine, shared: Some((arrays.clone(), pools)), parity: 0 };
        for t in 0..self.iterations {
            if t == 1 {
                node.barrier();
                node.begin_timing();
            }
            node.progress(t as u64, self.iterations as u64);
            let mut next = me * self.cap;
            let mut made = Vec::new();
            if me == 0 {
                self.init_cell(node, &mem, 0);
                next = 1;
                made.push(0);
                mine.write(node, MINE, 0);
            }
            node.barrier();
            for b in self.first[me]..self.first[me + 1] {
                let (xb, _) = self.body(node, &mem, b);
                self.insert(node, &mem, b, &xb, &mut next, &mut made);
            }
            node.barrier();
            self.centers_of_mass(node, &mem, &made, t as u64 + 1);
            node.barrier();
            let acc = self.forces(node, &mem);
            node.barrier();
            for (i, b) in (self.first[me]..self.first[me + 1]).enumerate() {
                let a = self.body_addr(&arrays, b);
                let mut x = [0, 1, 2].map(|d| node.load_f64(a.word(d)));
                let mut v = [0, 1, 2].map(|d| node.load_f64(a.word(4 + d)));
                for d in 0..3 {
                    mine.read(node, ACC, 3 * i + d);
                }
                step(&mut x, &mut v, &acc[i], self.sim.dt);
                node.compute(self.costs.update);
                for d in 0..3 {
                    node.store_f64(a.word(d), x[d]);
                    node.store_f64(a.word(4 + d), v[d]);
                }
            }
        }
    }

    fn main_custom<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let (me, procs) = (node.id(), node.nprocs());
        let (lo, hi) = (self.first[me], self.first[me + 1]);
        node.barrier();
        for t in 0..self.iterations {
            if t == 1 {
                node.barrier();
                node.begin_timing();
            }
            node.progress(t as u64, self.iterations as u64);
            let parity = t % 2;
            // Exchange: own positions and masses into this parity's array, then to everyone.
            let words: Vec<u64> = node.state(|s| {
                (0..hi - lo).flat_map(|i| [s.x[i][0], s.x[i][1], s.x[i][2], self.m[lo + i]].map(f64::to_bits)).collect()
            });
            for k in 0..words.len() {
                mine.write(node, POS0 + parity, SENT_WORDS * lo + k);
            }
            node.state(|s| s.bodies[parity][SENT_WORDS * lo..SENT_WORDS * hi].copy_from_slice(&words));
            for off in 1..procs {
                let dest = (me + off) % procs;
                let head: [u64; BODIES_ARGS] = [parity as u64, lo as u64, (hi - lo) as u64];
                node.send_bulk(dest, BODIES, &head, &[&words]);
                node.state(|s| {
                    s.tally.messages += 1;
                    s.tally.bodies_sent += (hi - lo) as u64;
                });
            }
            node.wait_until("barnes bodies from every processor", |s| s.got[parity] == procs - 1);
            node.state(|s| s.got[parity] = 0);
            let mem = Mem { mine, shared: None, parity };
            // Build the whole tree privately, bodies in order.
            self.init_cell(node, &mem, 0);
            let mut next = 1;
            let mut made = vec![0];
            for b in 0..self.x0.len() {
                let (xb, _) = self.body(node, &mem, b);
                self.insert(node, &mem, b, &xb, &mut next, &mut made);
            }
            self.centers_of_mass(node, &mem, &made, t as u64 + 1);
            let acc = self.forces(node, &mem);
            for (i, a) in acc.iter().enumerate() {
                for d in 0..3 {
                    mine.read(node, ACC, 3 * i + d);
                    mine.read(node, VEL, 3 * i + d);
                    mine.write(node, VEL, 3 * i + d);
                }
                node.state(|s| {
                    let (mut x, mut v) = (s.x[i], s.v[i]);
                    step(&mut x, &mut v, a, self.sim.dt);
                    s.x[i] = x;
                    s.v[i] = v;
                });
                node.compute(self.costs.update);
            }
        }
    }
}

impl Program for Kernel {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_bodies]
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
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let custom = self.mode == Mode::Custom;
        let n = self.x0.len();
        let own = self.first[id]..self.first[id + 1];
        State {
            tree: if custom { vec![0; CELL_WORDS * self.cap] } else { Vec::new() },
            bodies: if custom { [vec![0; SENT_WORDS * n], vec![0; SENT_WORDS * n]] } else { [Vec::new(), Vec::new()] },
            got: [0, 0],
            x: if custom { self.x0[own.clone()].to_vec() } else { Vec::new() },
            v: if custom { self.v0[own].to_vec() } else { Vec::new() },
            arrays: Vec::new(),
            tally: Tally::default(),
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let mine = Arrays::set_up(node, &self.shape(node.id()), self.line_bytes);
        match self.mode {
            Mode::Stache => self.main_stache(node, &mine),
            Mode::Custom => self.main_custom(node, &mine),
        }
    }
}
