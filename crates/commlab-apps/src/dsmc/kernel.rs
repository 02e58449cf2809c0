//! The timed DSMC program in both variants (one [`Program`]), and the sequential baseline
//! (the `custom` program on one processor).
//!
//! Processor `p` owns the cells `first_cell[p]..first_cell[p + 1]` (a block of the x-major
//! numbering: slabs across x) and the particles in them. A step, on every processor:
//! 1. *Move*: each own particle record is read (id, position, velocity: 7 words), moved
//!    (`costs.dsmc_move`), and either written back into the processor's array, compacted
//!    (position, the velocity if it hit a wall, its cell), or, if its new cell belongs to
//!    another processor, copied into a private outgoing buffer (8 words).
//! 2. *Migrate*: `stache` writes each destination's outgoing particles into that
//!    destination's shared inbox for this step's parity, under the inbox's lock (read the
//!    count, write the records, write the new count, unlock), then takes a barrier and
//!    appends its own inbox to its array (the two inboxes alternate by step so a fast sender
//!    never writes an inbox its owner is still reading). `custom` sends every neighbour (every
//!    processor owning a cell next to one of its cells, the only ones a particle can reach in
//!    a step) one bulk message with its particles (possibly none), and waits for one from
//!    each neighbour; the handler keeps the payload in place and the main thread appends it.
//! 3. *Index*: each particle's cell and id are read (2 words) and a counting sort by cell,
//!    ids increasing within a cell, builds the private order array (`costs.dsmc_index` a
//!    particle, one private write).
//! 4. *Collide*: per own cell (`costs.dsmc_cell`), the members' velocities are read (3 words
//!    each), the candidate pairs tried (`costs.dsmc_candidate` each, `costs.dsmc_collision`
//!    per accepted pair, `costs.dsmc_direction_draw` per draw of its random direction) and the
//!    changed velocities written back.
//!
//! `stache` keeps each processor's particle array and inboxes in shared memory homed at that
//! processor, so its own references are local (on Blizzard they still pay the access
//! checks) and only the migration's inbox writes and lock take remote misses. `custom` keeps
//! them private (referenced through the cache). The baseline of the speedup is the `custom`
//! program on one processor of the same machine: private data, no access checks, no
//! messages, no barrier.

use super::physics::{collide_cell, Grid, Particle, RECORD_WORDS};
use crate::private::{Arrays, Shape};
use commlab_api::{
    Addr, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};

/// Work costs from the machine's `[costs]` table (see [`super`]).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub move_particle: u64,
    pub index: u64,
    pub cell: u64,
    pub candidate: u64,
    pub collision: u64,
    pub direction_draw: u64,
}

impl Costs {
    pub fn of<B: commlab_api::Backend>(b: &B) -> Result<Costs, crate::app::AppError> {
        let c = |n: &str| crate::app::cost(b, n);
        Ok(Costs {
            move_particle: c("dsmc_move")?,
            index: c("dsmc_index")?,
            cell: c("dsmc_cell")?,
            candidate: c("dsmc_candidate")?,
            collision: c("dsmc_collision")?,
            direction_draw: c("dsmc_direction_draw")?,
        })
    }
}

/// Transparent shared memory, or explicit bulk messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Stache,
    Custom,
}

const PARTICLES: HandlerId = HandlerId(0);

/// What a processor counted.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub moved: u64,
    pub sent: u64,
    pub received: u64,
    pub messages: u64,
    pub lock_acquisitions: u64,
    pub lock_releases: u64,
    pub candidates: u64,
    pub collisions: u64,
    /// Sum over cells and steps of |total momentum after - before| of the cell's collisions.
    pub collision_momentum_change: f64,
}

/// Private state of one processor.
pub struct State {
    /// `custom`: the own particles (`stache`: in shared memory, this stays empty).
    pub parts: Vec<Particle>,
    /// Own particles now.
    pub count: usize,
    /// Each own particle's cell (the program's value; `stache` reads it from the record).
    cell: Vec<usize>,
    /// `custom`: particles received for each step parity, and from how many neighbours.
    incoming: [Vec<Particle>; 2],
    got: [usize; 2],
    /// `stache`: the own particle array.
    pub array: Option<Addr>,
    pub tally: Tally,
}

fn on_particles(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (parity, k) = (m.args[0] as usize, m.args[1] as usize);
    for r in 0..k {
        s.incoming[parity].push(Particle::from_words(&m.payload[RECORD_WORDS * r..RECORD_WORDS * (r + 1)]));
    }
    s.got[parity] += 1;
    s.tally.received += k as u64;
}

/// Private arrays: the particles (`custom`), the outgoing buffer, the order array, the
/// cells' starts.
const PARTS: usize = 0;
const OUT: usize = 1;
const ORDER: usize = 2;
const START: usize = 3;

/// The distributed program.
pub struct Kernel {
    pub mode: Mode,
    pub grid: Grid,
    pub iterations: usize,
    pub costs: Costs,
    /// Processor of every cell, and the first cell of every processor.
    pub owner: Vec<usize>,
    pub first_cell: Vec<usize>,
    /// Initial particles of every processor.
    pub initial: Vec<Vec<Particle>>,
    /// Per processor: array capacity and inbox capacity (particles).
    pub capacity: Vec<usize>,
    pub inbox_capacity: Vec<usize>,
    /// `custom`: the processors each processor exchanges particles with.
    pub neighbours: Vec<Vec<usize>>,
    pub line_bytes: usize,
}

/// Words before an inbox's records: the lock, the count, padding to a line.
fn inbox_header(line_bytes: usize) -> usize {
    16.max(line_bytes / 8)
}

/// Every processor's neighbours: the owners of cells adjacent (26-neighbourhood) to its own.
pub fn neighbours(grid: &Grid, owner: &[usize], procs: usize) -> Vec<Vec<usize>> {
    let [nx, ny, nz] = grid.dims;
    let mut set = vec![std::collections::BTreeSet::new(); procs];
    for cx in 0..nx {
        for cy in 0..ny {
            for cz in 0..nz {
                let p = owner[(cx * ny + cy) * nz + cz];
                for dx in cx.saturating_sub(1)..=(cx + 1).min(nx - 1) {
                    for dy in cy.saturating_sub(1)..=(cy + 1).min(ny - 1) {
                        for dz in cz.saturating_sub(1)..=(cz + 1).min(nz - 1) {
                            let q = owner[(dx * ny + dy) * nz + dz];
                            if q != p {
                                set[p].insert(q);
                            }
                        }
                    }
                }
            }
        }
    }
    set.into_iter().map(|s| s.into_iter().collect()).collect()
}

/// Where one processor's particle records are.
enum Records {
    Shared(Addr),
    Private,
}

impl Records {
    /// Read a whole record (id, position, velocity).
    fn read<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, i: usize) -> Particle {
        match *self {
            Records::Shared(a) => {
                let w: Vec<u64> = (0..7).map(|k| node.load(a.word(RECORD_WORDS * i + k))).collect();
                Particle::from_words(&w)
            }
            Records::Private => {
                for k in 0..7 {
                    mine.read(node, PARTS, RECORD_WORDS * i + k);
                }
                node.state(|s| s.parts[i])
            }
        }
    }

    /// Write record words `words` of `p` (in cell `cell`) at slot `i`.
    fn write<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        i: usize,
        p: &Particle,
        cell: usize,
        words: &[usize],
    ) {
        match *self {
            Records::Shared(a) => {
                let w = p.to_words(cell);
                for &k in words {
                    node.store(a.word(RECORD_WORDS * i + k), w[k]);
                }
            }
            Records::Private => {
                for &k in words {
                    mine.write(node, PARTS, RECORD_WORDS * i + k);
                }
                node.state(|s| {
                    if i == s.parts.len() {
                        s.parts.push(*p);
                    } else {
                        s.parts[i] = *p;
                    }
                });
            }
        }
        node.state(|s| {
            if i == s.cell.len() {
                s.cell.push(cell);
            } else {
                s.cell[i] = cell;
            }
        });
    }

    /// Read words `k` of record `i` and return them (`custom`: from the private particles).
    fn word<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, i: usize, k: usize) -> u64 {
        match *self {
            Records::Shared(a) => node.load(a.word(RECORD_WORDS * i + k)),
            Records::Private => {
                mine.read(node, PARTS, RECORD_WORDS * i + k);
                node.state(|s| match k {
                    0 => s.parts[i].id,
                    7 => s.cell[i] as u64,
                    1..=3 => s.parts[i].x[k - 1].to_bits(),
                    _ => s.parts[i].v[k - 4].to_bits(),
                })
            }
        }
    }

    fn set_velocity<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, i: usize, v: &[f64; 3]) {
        match *self {
            Records::Shared(a) => {
                for (d, x) in v.iter().enumerate() {
                    node.store_f64(a.word(RECORD_WORDS * i + 4 + d), *x);
                }
            }
            Records::Private => {
                for d in 0..3 {
                    mine.write(node, PARTS, RECORD_WORDS * i + 4 + d);
                }
                node.state(|s| s.parts[i].v = *v);
            }
        }
    }
}

const ALL_WORDS: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

impl Kernel {
    fn shape(&self, p: usize) -> Shape {
        let mut s = Shape::default();
        let cap = self.capacity[p];
        s.push(if self.mode == Mode::Custom { RECORD_WORDS * cap } else { 0 }, 8);
        s.push(RECORD_WORDS * cap, 8);
        s.push(cap, 4);
        s.push(self.first_cell[p + 1] - self.first_cell[p] + 1, 4);
        s
    }

    /// The shared inbox of processor `q` for `parity` (`stache`).
    fn inbox(&self, inboxes: &[[Addr; 2]], q: usize, parity: usize) -> Addr {
        inboxes[q][parity]
    }

    fn step<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        recs: &Records,
        inboxes: &[[Addr; 2]],
        t: usize,
    ) {
        let parity = t % 2;
        let (out, kept) = self.move_particles(node, mine, recs);
        let arrived = match self.mode {
            Mode::Stache => self.migrate_stache(node, mine, recs, inboxes, parity, &out, kept),
            Mode::Custom => self.migrate_custom(node, mine, recs, parity, &out, kept),
        };
        let n = kept + arrived.len();
        node.state(|s| s.count = n);
        let keys = self.index(node, mine, recs, n);
        self.collide(node, mine, recs, t, &keys);
    }

    /// Step 1, move: every particle advanced; those still in this processor's cells kept
    /// (compacted in place), the others' records gathered per destination. The records to
    /// send, and how many were kept.
    fn move_particles<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        recs: &Records,
    ) -> (Vec<Vec<u64>>, usize) {
        let me = node.id();
        let n = node.state(|s| s.count);
        let mut out: Vec<Vec<u64>> = vec![Vec::new(); node.nprocs()];
        let mut out_words = 0;
        let mut kept = 0;
        for i in 0..n {
            let mut p = recs.read(node, mine, i);
            let hit = self.grid.advance(&mut p);
            let cell = self.grid.cell_of(&p.x);
            node.compute(self.costs.move_particle);
            let dest = self.owner[cell];
            if dest == me {
                if kept == i {
                    let words: &[usize] = if hit { &[1, 2, 3, 4, 5, 6, 7] } else { &[1, 2, 3, 7] };
                    recs.write(node, mine, kept, &p, cell, words);
                } else {
                    recs.write(node, mine, kept, &p, cell, &ALL_WORDS);
                }
                kept += 1;
            } else {
                for k in 0..RECORD_WORDS {
                    mine.write(node, OUT, out_words + k);
                }
                out_words += RECORD_WORDS;
                out[dest].extend_from_slice(&p.to_words(cell));
            }
        }
        node.state(|s| {
            s.count = kept;
            s.cell.truncate(kept);
            s.parts.truncate(kept.min(s.parts.len()));
            s.tally.moved += n as u64;
            s.tally.sent += (out_words / RECORD_WORDS) as u64;
        });
        (out, kept)
    }

    /// Step 2, migrate through shared memory (`stache`): each record appended to its
    /// destination's inbox under the inbox's lock; after a barrier, this processor's inbox
    /// read, emptied and its particles stored after the kept ones.
    #[allow(clippy::too_many_arguments)]
    fn migrate_stache<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        recs: &Records,
        inboxes: &[[Addr; 2]],
        parity: usize,
        out: &[Vec<u64>],
        kept: usize,
    ) -> Vec<Particle> {
        let me = node.id();
        let header = inbox_header(self.line_bytes);
        for (dest, words) in out.iter().enumerate() {
            if words.is_empty() {
                continue;
            }
            let inbox = self.inbox(inboxes, dest, parity);
            node.lock(inbox);
            let c = node.load(inbox.word(1)) as usize;
            for (k, &w) in words.iter().enumerate() {
                node.store(inbox.word(header + RECORD_WORDS * c + k), w);
            }
            node.store(inbox.word(1), (c + words.len() / RECORD_WORDS) as u64);
            node.unlock(inbox);
            node.state(|s| {
                s.tally.lock_acquisitions += 1;
                s.tally.lock_releases += 1;
            });
        }
        node.barrier();
        let inbox = self.inbox(inboxes, me, parity);
        let c = node.load(inbox.word(1)) as usize;
        let mut got = Vec::with_capacity(c);
        for r in 0..c {
            let w: Vec<u64> = (0..RECORD_WORDS).map(|k| node.load(inbox.word(header + RECORD_WORDS * r + k))).collect();
            got.push((Particle::from_words(&w), w[7] as usize));
        }
        node.store(inbox.word(1), 0);
        node.state(|s| s.tally.received += c as u64);
        let base = kept;
        for (r, (p, cell)) in got.iter().enumerate() {
            recs.write(node, mine, base + r, p, *cell, &ALL_WORDS);
        }
        got.into_iter().map(|(p, _)| p).collect()
    }

    /// Step 2, migrate by messages (`custom`): one bulk message to every neighbour (empty
    /// ones too, so each knows when all have arrived), then the arrivals stored after the kept
    /// particles.
    fn migrate_custom<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        recs: &Records,
        parity: usize,
        out: &[Vec<u64>],
        kept: usize,
    ) -> Vec<Particle> {
        let me = node.id();
        let out_words: usize = out.iter().map(Vec::len).sum();
        let mut at = 0;
        for &dest in &self.neighbours[me] {
            let words = &out[dest];
            node.send_bulk(dest, PARTICLES, &[parity as u64, (words.len() / RECORD_WORDS) as u64], &[words]);
            node.state(|s| s.tally.messages += 1);
            at += words.len();
        }
        debug_assert_eq!(at, out_words, "a particle left for a processor that is not a neighbour");
        let expect = self.neighbours[me].len();
        node.wait_until("dsmc particles from every neighbour", |s| s.got[parity] == expect);
        let got = node.state(|s| {
            s.got[parity] = 0;
            std::mem::take(&mut s.incoming[parity])
        });
        for (r, p) in got.iter().enumerate() {
            let cell = self.grid.cell_of(&p.x);
            recs.write(node, mine, kept + r, p, cell, &ALL_WORDS);
        }
        got
    }

    /// Step 3, index: the particles ordered by (cell, id), as (cell, id, record).
    fn index<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        recs: &Records,
        n: usize,
    ) -> Vec<(usize, u64, usize)> {
        let me = node.id();
        let mut keys: Vec<(usize, u64, usize)> = Vec::with_capacity(n);
        for i in 0..n {
            let cell = recs.word(node, mine, i, 7) as usize;
            let id = recs.word(node, mine, i, 0);
            node.compute(self.costs.index);
            mine.write(node, ORDER, i);
            keys.push((cell, id, i));
        }
        keys.sort_unstable();
        let (c0, c1) = (self.first_cell[me], self.first_cell[me + 1]);
        for c in c0..=c1 {
            mine.write(node, START, c - c0);
        }
        keys
    }

    /// Step 4, collide: in each cell with two particles or more, candidate pairs drawn and
    /// collided, and the changed velocities written back.
    fn collide<N: Node<State = State>>(
        &self,
        node: &mut N,
        mine: &Arrays,
        recs: &Records,
        t: usize,
        keys: &[(usize, u64, usize)],
    ) {
        let me = node.id();
        let (c0, c1) = (self.first_cell[me], self.first_cell[me + 1]);
        let n = keys.len();
        let mut at = 0;
        for c in c0..c1 {
            node.compute(self.costs.cell);
            mine.read(node, START, c - c0 + 1);
            let end = at + keys[at..].iter().take_while(|k| k.0 == c).count();
            if end - at >= 2 {
                let mut members: Vec<Particle> = Vec::with_capacity(end - at);
                for &(_, id, i) in &keys[at..end] {
                    mine.read(node, ORDER, i);
                    let v = [4, 5, 6].map(|k| f64::from_bits(recs.word(node, mine, i, k)));
                    members.push(Particle { id, x: [0.0; 3], v });
                }
                let momentum = |ms: &[Particle]| [0, 1, 2].map(|d| ms.iter().map(|m| m.v[d]).sum::<f64>());
                let before = momentum(&members);
                let mut changed = vec![false; members.len()];
                let w = collide_cell(&self.grid, t, c, &mut members, &mut changed);
                node.compute(
                    w.candidates * self.costs.candidate
                        + w.collisions * self.costs.collision
                        + w.direction_draws * self.costs.direction_draw,
                );
                for (k, &(_, _, i)) in keys[at..end].iter().enumerate() {
                    if changed[k] {
                        recs.set_velocity(node, mine, i, &members[k].v);
                    }
                }
                let after = momentum(&members);
                let dp: f64 = (0..3).map(|d| (after[d] - before[d]).abs()).sum();
                node.state(|s| {
                    s.tally.collision_momentum_change += dp;
                    s.tally.candidates += w.candidates;
                    s.tally.collisions += w.collisions;
                });
            }
            at = end;
        }
        debug_assert_eq!(at, n, "every particle is in an own cell");
    }
}

impl Program for Kernel {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_particles]
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
        State {
            parts: if custom { self.initial[id].clone() } else { Vec::new() },
            count: self.initial[id].len(),
            cell: self.initial[id].iter().map(|p| self.grid.cell_of(&p.x)).collect(),
            incoming: [Vec::new(), Vec::new()],
            got: [0, 0],
            array: None,
            tally: Tally::default(),
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let me = node.id();
        let procs = node.nprocs();
        let mine = Arrays::set_up(node, &self.shape(me), self.line_bytes);
        let (recs, inboxes) = match self.mode {
            Mode::Stache => {
                let arrays: Vec<Addr> = (0..procs)
                    .map(|p| node.alloc_shared(RECORD_WORDS * self.capacity[p].max(1), Placement::OnNode(p)))
                    .collect();
                let header = inbox_header(self.line_bytes);
                let inboxes: Vec<[Addr; 2]> = (0..procs)
                    .map(|p| {
                        [0, 1].map(|_| {
                            node.alloc_shared(header + RECORD_WORDS * self.inbox_capacity[p], Placement::OnNode(p))
                        })
                    })
                    .collect();
                // Set-up (untimed): each owner writes its initial particles.
                for (i, p) in self.initial[me].iter().enumerate() {
                    let w = p.to_words(self.grid.cell_of(&p.x));
                    for (k, &x) in w.iter().enumerate() {
                        node.store(arrays[me].word(RECORD_WORDS * i + k), x);
                    }
                }
                node.state(|s| s.array = Some(arrays[me]));
                (Records::Shared(arrays[me]), inboxes)
            }
            Mode::Custom => (Records::Private, Vec::new()),
        };
        node.barrier();
        node.begin_timing();
        for t in 0..self.iterations {
            node.progress(t as u64, self.iterations as u64);
            self.step(node, &mine, &recs, &inboxes, t);
        }
    }
}
