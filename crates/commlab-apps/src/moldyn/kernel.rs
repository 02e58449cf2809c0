//! The timed MOLDYN program in every communication variant (one [`Program`]).
//!
//! Every iteration, on every processor, for its own molecules: half a kick and a drift
//! (velocities private, coordinates written by the owner), the list rebuild when one is due,
//! the force phase over the pairs it computes (see [`super::plan`]), and the second half kick
//! once every force on its molecules has arrived.
//!
//! - `sm` / `sm-pf`: coordinates and forces live in shared memory, in two arrays of records
//!   homed at the molecule's owner (coordinates: x, y, z, 24 bytes; force: a lock word, then
//!   x, y, z, 32 bytes), each owner's records starting on a 128-byte boundary so no line has
//!   two homes. (Padding the coordinates to 32 bytes too would make both arrays 64 KB at
//!   2048 molecules, so every molecule's coordinates and force would collide in Alewife's
//!   direct-mapped 64 KB cache.)
//!   The owner zeroes its force records as it drifts; a barrier; each processor computes its
//!   local pairs, accumulating into a private array, then its cross pairs, reading the
//!   partner's coordinates from shared memory and adding the partner's force delta to its
//!   record under the record's lock, pair by pair; then it adds its accumulated forces into
//!   its own records (under the lock for the molecules others update, plainly for the rest);
//!   a barrier; the second half kick. `sm-pf` adds, one iteration of the cross-pair loop
//!   ahead, a read-prefetch of every line of the next partner's coordinates and a
//!   write-prefetch of every line of its force record.
//! - `mp-int` / `mp-poll`: coordinates and forces are private. After drifting, a processor
//!   sends each peer that computes pairs with its molecules their coordinates in active
//!   messages of a few molecules (`molecules_per_message`, after one slot word), reading each
//!   from its export list and coordinates; it then computes its local pairs while ghosts
//!   arrive, and each group of cross pairs as soon as that peer's ghosts are all in, sending
//!   the force deltas of the group back the same way. Handlers store ghost coordinates and add
//!   returned deltas to the owner's forces. A processor waits for every delta on its
//!   molecules before the second kick. Receive by interrupt, or by polling: `mp-poll` polls
//!   after every message it sends and after every molecule's pairs, and while it waits.
//! - `bulk`: as the message variants, but a processor gathers the coordinates of all its
//!   molecules a peer needs into one buffer (charged `costs.bulk_copy_line` per line, as
//!   message overhead) and sends them in one DMA message, which the receiver uses in place;
//!   the receiver returns the group's deltas, which it accumulated contiguously, in one DMA
//!   message, whose handler adds them to the forces (`costs.moldyn_recv_force` a molecule).
//!
//! - `stache` (the Blizzard study's transparent shared memory): the `sm` program.
//! - `custom` (the Blizzard study's): coordinates shared as in `sm`, but the force reduction
//!   by messages: a processor accumulates its cross pairs' deltas for each peer's molecules
//!   privately (by ghost slot) and, after each peer's group, sends them in one bulk message,
//!   whose handler adds them to the owner's private accumulator (`costs.moldyn_recv_force` a
//!   molecule); the owner waits for every delta on its molecules, then adds the accumulator
//!   into its own force records without locks (no one else writes them). That wait replaces
//!   the barrier after the force phase: a peer has read an owner's coordinates before it
//!   sends the owner its deltas, so the owner may move on to the next drift. Its barriers are
//!   the message barrier, as dsmc, barnes and appbt's `custom` use.
//!
//! The message variants need no barrier per iteration: a processor moves on once it has every
//! delta for its molecules, and no peer can send the next iteration's coordinates before it
//! has received this iteration's deltas from the processor that reads them. At each list
//! rebuild they take a barrier (the new lists change who sends what to whom).
//!
//! The list rebuild (every `rebuild` iterations, from iteration 0) is timed: each processor is
//! charged `costs.moldyn_rebuild_molecule` per molecule it owns (binning into cells) and
//! `costs.moldyn_rebuild_pair` per candidate pair the cell search tests for its molecules,
//! and it writes its new list (simulated private writes). The lists themselves are the
//! reference's (identical pairs, see the module documentation of [`super`]); the coordinate
//! reads of the cell search are not simulated.

use super::physics::{self, Pair, Vec3s};
use super::plan::ProcEpoch;
use super::private as pv;
use crate::app::Variant;
use crate::private::{Arrays, Shape};
use commlab_api::{
    Addr, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use std::collections::BTreeMap;

/// Work costs from the machine's `[costs]` table (see the module documentation of [`super`]).
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub pair: u64,
    pub force: u64,
    pub kick: u64,
    pub drift: u64,
    pub rebuild_molecule: u64,
    pub rebuild_pair: u64,
    pub ghost_molecule: u64,
    pub recv_force: u64,
    pub bulk_copy_line: u64,
}

impl Costs {
    pub fn of<B: commlab_api::Backend>(b: &B) -> Result<Costs, crate::app::AppError> {
        let c = |n: &str| crate::app::cost(b, n);
        Ok(Costs {
            pair: c("moldyn_pair")?,
            force: c("moldyn_force")?,
            kick: c("moldyn_kick")?,
            drift: c("moldyn_drift")?,
            rebuild_molecule: c("moldyn_rebuild_molecule")?,
            rebuild_pair: c("moldyn_rebuild_pair")?,
            ghost_molecule: c("moldyn_ghost_molecule")?,
            recv_force: c("moldyn_recv_force")?,
            bulk_copy_line: c("bulk_copy_line")?,
        })
    }
}

const COORDS: HandlerId = HandlerId(0);
const COORDS_BULK: HandlerId = HandlerId(1);
const DELTAS: HandlerId = HandlerId(2);
const DELTAS_BULK: HandlerId = HandlerId(3);

/// What a processor counted (summed over processors for the counters).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub coord_messages: u64,
    pub delta_messages: u64,
    pub molecules_sent: u64,
    pub deltas_sent: u64,
    pub molecules_received: u64,
    pub deltas_received: u64,
    /// Argument and payload words of the application's messages.
    pub words_sent: u64,
    pub lock_acquisitions: u64,
    pub lock_releases: u64,
    /// Cycles from asking for a lock to holding it (the miss, and any wait for a holder).
    pub lock_acquire_cycles: f64,
    pub prefetches: u64,
    pub pairs_tested: u64,
    pub pairs_within_cutoff: u64,
}

/// Private state of one processor.
pub struct State {
    /// Own coordinates (message variants).
    pub x: Vec3s,
    pub v: Vec3s,
    /// Own forces (message variants); the private accumulator (shared memory).
    f: Vec3s,
    ghost_x: Vec3s,
    ghost_f: Vec3s,
    /// Ghost molecules received from each processor that sends any, by iteration parity
    /// (maps of the peers, not tables of every processor: those were quadratic in memory).
    coords_in: [BTreeMap<ProcId, u32>; 2],
    /// Force deltas received this iteration.
    deltas_in: u64,
    /// This epoch's export lists by destination (for the delta handlers).
    exports: BTreeMap<ProcId, Vec<u32>>,
    /// Shared coordinate and force records (shared-memory variants).
    pub shared: Option<[Addr; 2]>,
    pub tally: Tally,
    ghost_molecule_cycles: u64,
    recv_force_cycles: u64,
}

/// Slot word of a coordinates message: iteration parity in bit 0, ghost slot above.
fn slot_word(parity: usize, slot: usize) -> u64 {
    parity as u64 | (slot as u64) << 1
}

fn store_coords(s: &mut State, src: ProcId, word: u64, values: &[u64]) -> u64 {
    let (parity, slot) = ((word & 1) as usize, (word >> 1) as usize);
    let k = values.len() / 3;
    for m in 0..k {
        s.ghost_x[slot + m] = [0, 1, 2].map(|d| f64::from_bits(values[3 * m + d]));
    }
    *s.coords_in[parity].entry(src).or_default() += k as u32;
    s.tally.molecules_received += k as u64;
    k as u64
}

fn on_coords(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let k = store_coords(s, m.src, m.args[0], &m.args[1..]);
    ctx.compute(s.ghost_molecule_cycles * k);
}

/// A bulk message's coordinates are used in place: no per-molecule handler work.
fn on_coords_bulk(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    let k = m.args[1] as usize;
    store_coords(s, m.src, m.args[0], &m.payload[..3 * k]);
}

fn add_deltas(s: &mut State, ctx: &mut dyn HandlerCtx, src: ProcId, offset: usize, values: &[u64]) {
    let k = values.len() / 3;
    for m in 0..k {
        let l = s.exports[&src][offset + m] as usize;
        for d in 0..3 {
            s.f[l][d] += f64::from_bits(values[3 * m + d]);
        }
    }
    s.deltas_in += k as u64;
    s.tally.deltas_received += k as u64;
    ctx.compute(s.recv_force_cycles * k as u64);
}

fn on_deltas(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    add_deltas(s, ctx, m.src, m.args[0] as usize, &m.args[1..]);
}

fn on_deltas_bulk(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let k = m.args[1] as usize;
    add_deltas(s, ctx, m.src, m.args[0] as usize, &m.payload[..3 * k]);
}

fn add3(a: &mut [f64; 3], b: &[f64; 3]) {
    for d in 0..3 {
        a[d] += b[d];
    }
}

fn sub3(a: &mut [f64; 3], b: &[f64; 3]) {
    for d in 0..3 {
        a[d] -= b[d];
    }
}

fn bits(v: &[f64; 3]) -> [u64; 3] {
    v.map(f64::to_bits)
}

/// The Blizzard study's pair of variants: `stache` is `sm` under the study's name; `custom`
/// replaces `sm`'s locked force updates by one bulk message of deltas per peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blizzard {
    Stache,
    Custom,
}

/// The distributed program for one variant on one processor count.
pub struct Kernel {
    pub variant: Variant,
    /// A Blizzard variant (then `variant` is `Sm`).
    pub blizzard: Option<Blizzard>,
    pub costs: Costs,
    pub pair: Pair,
    pub dt: f64,
    pub iterations: usize,
    pub rebuild: usize,
    /// Processor `p` owns molecules `first[p]..first[p + 1]`.
    pub first: Vec<usize>,
    /// Each list's parts: `epochs[e][p]`.
    pub epochs: Vec<Vec<ProcEpoch>>,
    pub x0: Vec3s,
    pub v0: Vec3s,
    pub f0: Vec3s,
    pub shapes: Vec<Shape>,
    pub line_bytes: usize,
    /// Molecules per fine-grain message.
    pub per_message: usize,
    /// Shared memory: the coordinate records (3 words) and the force records (a lock word and
    /// 3 words).
    pub coords: Layout,
    pub forces: Layout,
}

/// Where each molecule's record lies in a shared array of records, each owner's records in
/// a block of their own starting on a 128-byte (or line) boundary so no line has two homes.
pub struct Layout {
    pub word: Vec<usize>,
    /// The home of every word of the array.
    pub owners: Vec<usize>,
}

impl Layout {
    pub fn new(first: &[usize], words_per_record: usize, line_bytes: usize) -> Layout {
        let block = 16.max(line_bytes / 8);
        let mut word = vec![0usize; first[first.len() - 1]];
        let mut owners = Vec::new();
        for p in 0..first.len() - 1 {
            for (l, w) in word[first[p]..first[p + 1]].iter_mut().enumerate() {
                *w = owners.len() + words_per_record * l;
            }
            let words = (words_per_record * (first[p + 1] - first[p])).div_ceil(block) * block;
            owners.resize(owners.len() + words, p);
        }
        Layout { word, owners }
    }
}

impl Kernel {
    fn own(&self, p: usize) -> usize {
        self.first[p + 1] - self.first[p]
    }

    fn epoch(&self, t: usize, p: usize) -> &ProcEpoch {
        &self.epochs[t / self.rebuild][p]
    }

    fn messages(&self) -> bool {
        !self.variant.shared_memory()
    }

    fn custom(&self) -> bool {
        self.blizzard == Some(Blizzard::Custom)
    }

    /// Three private references to element `l` of a 3-word-per-molecule array.
    fn touch3<N: Node>(node: &mut N, mine: &Arrays, array: usize, l: usize, write: bool) {
        for d in 0..3 {
            if write {
                mine.write(node, array, 3 * l + d);
            } else {
                mine.read(node, array, 3 * l + d);
            }
        }
    }

    fn load3<N: Node>(node: &mut N, at: Addr) -> [f64; 3] {
        [0, 1, 2].map(|d| node.load_f64(at.word(d)))
    }

    fn store3<N: Node>(node: &mut N, at: Addr, v: &[f64; 3]) {
        for (d, x) in v.iter().enumerate() {
            node.store_f64(at.word(d), *x);
        }
    }

    /// One listed pair: its work (distance test, and the force within the cut-off) and the
    /// force on the first molecule.
    fn pair_work<N: Node<State = State>>(&self, node: &mut N, xi: &[f64; 3], xj: &[f64; 3]) -> Option<[f64; 3]> {
        let f = self.pair.force(xi, xj);
        node.compute(self.costs.pair + if f.is_some() { self.costs.force } else { 0 });
        node.state(|s| {
            s.tally.pairs_tested += 1;
            s.tally.pairs_within_cutoff += f.is_some() as u64;
        });
        f
    }

    /// The rebuild's work on processor `p` for list `e` (see the module documentation).
    fn rebuild_list<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, e: &ProcEpoch) {
        let n = self.own(node.id()) as u64;
        node.compute(self.costs.rebuild_molecule * n + self.costs.rebuild_pair * e.candidates);
        for i in 0..n as usize {
            mine.write(node, pv::COUNT, i);
        }
        for k in 0..e.local_dst.len() {
            mine.write(node, pv::LOCAL, k);
        }
        for k in 0..2 * e.cross_pairs() {
            mine.write(node, pv::CROSS, k);
        }
        if self.messages() || self.custom() {
            let array = if self.custom() { pv::DELTA_EXPORTS } else { pv::EXPORTS };
            for k in 0..e.exported() {
                mine.write(node, array, k);
            }
            let mut exports = BTreeMap::new();
            for x in &e.exports {
                exports.insert(x.dest, x.local.clone());
            }
            node.state(|s| s.exports = exports);
        }
    }

    /// Local pairs, accumulating into the private force array (`ACC` or `FORCE`); with
    /// shared memory the coordinates are loads of the records at `coords`.
    fn local_pairs<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, e: &ProcEpoch, coords: Option<Addr>) {
        let me = node.id();
        let (acc_array, pos) = if coords.is_some() { (pv::ACC, None) } else { (pv::FORCE, Some(pv::POS)) };
        let position = |node: &mut N, l: usize| -> [f64; 3] {
            match (coords, pos) {
                (Some(base), _) => Self::load3(node, base.word(self.coords.word[self.first[me] + l])),
                (None, Some(array)) => {
                    Self::touch3(node, mine, array, l, false);
                    node.state(|s| s.x[l])
                }
                _ => unreachable!(),
            }
        };
        for li in 0..self.own(me) {
            mine.read(node, pv::COUNT, li);
            let xi = position(node, li);
            let mut acc = [0.0; 3];
            for k in e.local_ptr[li] as usize..e.local_ptr[li + 1] as usize {
                mine.read(node, pv::LOCAL, k);
                let lj = e.local_dst[k] as usize;
                let xj = position(node, lj);
                if let Some(f) = self.pair_work(node, &xi, &xj) {
                    add3(&mut acc, &f);
                    Self::touch3(node, mine, acc_array, lj, false);
                    node.state(|s| sub3(&mut s.f[lj], &f));
                    Self::touch3(node, mine, acc_array, lj, true);
                }
            }
            Self::touch3(node, mine, acc_array, li, false);
            node.state(|s| add3(&mut s.f[li], &acc));
            Self::touch3(node, mine, acc_array, li, true);
            if self.variant == Variant::MpPoll {
                node.poll();
            }
        }
    }

    /// Add `delta` to the force record at `rec` under its lock.
    fn lock_add<N: Node<State = State>>(&self, node: &mut N, rec: Addr, delta: &[f64; 3]) {
        let t = node.now_cycles();
        node.lock(rec);
        let waited = node.now_cycles() - t;
        let mut f = Self::load3(node, rec.word(1));
        add3(&mut f, delta);
        Self::store3(node, rec.word(1), &f);
        node.unlock(rec);
        node.state(|s| {
            s.tally.lock_acquisitions += 1;
            s.tally.lock_releases += 1;
            s.tally.lock_acquire_cycles += waited;
        });
    }

    /// Prefetch every line of molecule `j`'s coordinates (read) and force record (write).
    fn prefetch_partner<N: Node<State = State>>(&self, node: &mut N, arrays: [Addr; 2], j: usize) {
        let step = (self.line_bytes / 8).max(1);
        let mut issued = 0;
        // The lines of words `from..from + 3` (coordinates) and `from..from + 4` (force).
        let lines = |from: usize, words: usize| {
            let (a, b) = (from / step, (from + words - 1) / step);
            (a..=b).map(move |l| (l * step).max(from))
        };
        for w in lines(self.coords.word[j], 3) {
            node.prefetch_read(arrays[0].word(w));
            issued += 1;
        }
        for w in lines(self.forces.word[j], 4) {
            node.prefetch_write(arrays[1].word(w));
            issued += 1;
        }
        node.state(|s| s.tally.prefetches += issued);
    }

    /// The shared-memory force phase (`sm`, `sm-pf`).
    fn forces_sm<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, e: &ProcEpoch, arrays: [Addr; 2]) {
        let me = node.id();
        let base = self.first[me];
        self.local_pairs(node, mine, e, Some(arrays[0]));
        let cross: Vec<(usize, usize)> = e
            .groups
            .iter()
            .flat_map(|g| {
                let peer_first = self.first[g.peer];
                g.pairs.iter().map(move |&(li, k)| (li as usize, peer_first + g.ghosts[k as usize] as usize))
            })
            .collect();
        // `custom`: each cross pair's group and ghost slot, and where each group's pairs end.
        let (slots, group_end): (Vec<(usize, usize)>, Vec<usize>) = if self.custom() {
            let mut ends = Vec::with_capacity(e.groups.len());
            let mut at = 0;
            let slots = e
                .groups
                .iter()
                .enumerate()
                .flat_map(|(gi, g)| {
                    at += g.pairs.len();
                    ends.push(at);
                    g.pairs.iter().map(move |&(_, k)| (gi, g.ghost_base + k as usize))
                })
                .collect();
            (slots, ends)
        } else {
            (Vec::new(), Vec::new())
        };
        let prefetch = self.variant == Variant::SmPrefetch;
        if prefetch {
            if let Some(&(_, j)) = cross.first() {
                self.prefetch_partner(node, arrays, j);
            }
        }
        let mut current: Option<(usize, [f64; 3])> = None;
        let mut acc = [0.0; 3];
        let flush = |node: &mut N, li: usize, acc: &mut [f64; 3]| {
            Self::touch3(node, mine, pv::ACC, li, false);
            let a = std::mem::take(acc);
            node.state(|s| add3(&mut s.f[li], &a));
            Self::touch3(node, mine, pv::ACC, li, true);
        };
        for (c, &(li, j)) in cross.iter().enumerate() {
            mine.read(node, pv::CROSS, 2 * c);
            mine.read(node, pv::CROSS, 2 * c + 1);
            let xi = match current {
                Some((l, x)) if l == li => x,
                _ => {
                    if let Some((l, _)) = current {
                        flush(node, l, &mut acc);
                    }
                    let x = Self::load3(node, arrays[0].word(self.coords.word[base + li]));
                    current = Some((li, x));
                    x
                }
            };
            if prefetch {
                if let Some(&(_, next)) = cross.get(c + 1) {
                    self.prefetch_partner(node, arrays, next);
                }
            }
            let xj = Self::load3(node, arrays[0].word(self.coords.word[j]));
            if let Some(f) = self.pair_work(node, &xi, &xj) {
                add3(&mut acc, &f);
                if self.custom() {
                    let slot = slots[c].1;
                    Self::touch3(node, mine, pv::DELTAS, slot, false);
                    node.state(|s| sub3(&mut s.ghost_f[slot], &f));
                    Self::touch3(node, mine, pv::DELTAS, slot, true);
                } else {
                    self.lock_add(node, arrays[1].word(self.forces.word[j]), &f.map(|x| -x));
                }
            }
            if self.custom() && group_end[slots[c].0] == c + 1 {
                self.send_deltas(node, mine, &e.groups[slots[c].0]);
            }
        }
        if let Some((l, _)) = current {
            flush(node, l, &mut acc);
        }
        if self.custom() {
            let expected = e.exported() as u64;
            node.wait_until("moldyn force deltas", |s| s.deltas_in >= expected);
            node.state(|s| s.deltas_in -= expected);
        }
        // Add the accumulated forces into the own records.
        for l in 0..self.own(me) {
            Self::touch3(node, mine, pv::ACC, l, false);
            let a = node.state(|s| std::mem::take(&mut s.f[l]));
            Self::touch3(node, mine, pv::ACC, l, true);
            let rec = arrays[1].word(self.forces.word[base + l]);
            if e.contended[l] && !self.custom() {
                self.lock_add(node, rec, &a);
            } else {
                let mut f = Self::load3(node, rec.word(1));
                add3(&mut f, &a);
                Self::store3(node, rec.word(1), &f);
            }
        }
    }

    /// `custom`: return a group's deltas to its peer in one bulk message (and clear them).
    fn send_deltas<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, g: &super::plan::Group) {
        let range = g.ghost_base..g.ghost_base + g.ghosts.len();
        for slot in range.clone() {
            Self::touch3(node, mine, pv::DELTAS, slot, false);
        }
        let deltas: Vec<u64> = node.state(|s| {
            let d = s.ghost_f[range.clone()].iter().flat_map(bits).collect();
            s.ghost_f[range.clone()].fill([0.0; 3]);
            d
        });
        node.send_bulk(g.peer, DELTAS_BULK, &[0, g.ghosts.len() as u64], &[&deltas]);
        for slot in range {
            Self::touch3(node, mine, pv::DELTAS, slot, true);
        }
        node.state(|s| {
            s.tally.delta_messages += 1;
            s.tally.words_sent += 2 + deltas.len() as u64;
            s.tally.deltas_sent += g.ghosts.len() as u64;
        });
    }

    /// Send this processor's coordinates to every peer that computes pairs with them.
    fn send_coords<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, e: &ProcEpoch, parity: usize) {
        let mut listed = 0;
        for x in &e.exports {
            let coords: Vec<u64> = node.state(|s| x.local.iter().flat_map(|&l| bits(&s.x[l as usize])).collect());
            let k = x.local.len();
            if self.variant == Variant::Bulk {
                let lines = (8 * coords.len()).div_ceil(self.line_bytes) as u64;
                node.message_work(lines * self.costs.bulk_copy_line);
                node.send_bulk(x.dest, COORDS_BULK, &[slot_word(parity, x.slot), k as u64], &[&coords]);
                node.state(|s| {
                    s.tally.coord_messages += 1;
                    s.tally.words_sent += 2 + coords.len() as u64;
                });
            } else {
                for (c, chunk) in coords.chunks(3 * self.per_message).enumerate() {
                    for m in 0..chunk.len() / 3 {
                        let i = c * self.per_message + m;
                        mine.read(node, pv::EXPORTS, listed + i);
                        Self::touch3(node, mine, pv::POS, x.local[i] as usize, false);
                    }
                    let mut args = Vec::with_capacity(chunk.len() + 1);
                    args.push(slot_word(parity, x.slot + c * self.per_message));
                    args.extend_from_slice(chunk);
                    node.send_am(x.dest, COORDS, &args);
                    node.state(|s| {
                        s.tally.coord_messages += 1;
                        s.tally.words_sent += args.len() as u64;
                    });
                    if self.variant == Variant::MpPoll {
                        node.poll();
                    }
                }
            }
            listed += k;
            node.state(|s| s.tally.molecules_sent += k as u64);
        }
    }

    /// One group of cross pairs with messages: compute, then return the deltas.
    fn group_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, e: &ProcEpoch, gi: usize, cross_at: usize) {
        let g = &e.groups[gi];
        let mut current: Option<(usize, [f64; 3])> = None;
        let mut acc = [0.0; 3];
        let flush = |node: &mut N, li: usize, acc: &mut [f64; 3]| {
            Self::touch3(node, mine, pv::FORCE, li, false);
            let a = std::mem::take(acc);
            node.state(|s| add3(&mut s.f[li], &a));
            Self::touch3(node, mine, pv::FORCE, li, true);
        };
        for (c, &(li, k)) in g.pairs.iter().enumerate() {
            let (li, slot) = (li as usize, g.ghost_base + k as usize);
            mine.read(node, pv::CROSS, 2 * (cross_at + c));
            mine.read(node, pv::CROSS, 2 * (cross_at + c) + 1);
            let xi = match current {
                Some((l, x)) if l == li => x,
                _ => {
                    if let Some((l, _)) = current {
                        flush(node, l, &mut acc);
                        if self.variant == Variant::MpPoll {
                            node.poll();
                        }
                    }
                    Self::touch3(node, mine, pv::POS, li, false);
                    let x = node.state(|s| s.x[li]);
                    current = Some((li, x));
                    x
                }
            };
            Self::touch3(node, mine, pv::GHOST_POS, slot, false);
            let xj = node.state(|s| s.ghost_x[slot]);
            if let Some(f) = self.pair_work(node, &xi, &xj) {
                add3(&mut acc, &f);
                Self::touch3(node, mine, pv::GHOST_FORCE, slot, false);
                node.state(|s| sub3(&mut s.ghost_f[slot], &f));
                Self::touch3(node, mine, pv::GHOST_FORCE, slot, true);
            }
        }
        if let Some((l, _)) = current {
            flush(node, l, &mut acc);
        }
        // Return the deltas (and clear them for the next iteration).
        let range = g.ghost_base..g.ghost_base + g.ghosts.len();
        let deltas: Vec<u64> = node.state(|s| {
            let d = s.ghost_f[range.clone()].iter().flat_map(bits).collect();
            s.ghost_f[range.clone()].fill([0.0; 3]);
            d
        });
        if self.variant == Variant::Bulk {
            node.send_bulk(g.peer, DELTAS_BULK, &[0, g.ghosts.len() as u64], &[&deltas]);
            node.state(|s| {
                s.tally.delta_messages += 1;
                s.tally.words_sent += 2 + deltas.len() as u64;
            });
        } else {
            for (c, chunk) in deltas.chunks(3 * self.per_message).enumerate() {
                for m in 0..chunk.len() / 3 {
                    Self::touch3(node, mine, pv::GHOST_FORCE, range.start + c * self.per_message + m, false);
                }
                let mut args = Vec::with_capacity(chunk.len() + 1);
                args.push((c * self.per_message) as u64);
                args.extend_from_slice(chunk);
                node.send_am(g.peer, DELTAS, &args);
                node.state(|s| {
                    s.tally.delta_messages += 1;
                    s.tally.words_sent += args.len() as u64;
                });
                if self.variant == Variant::MpPoll {
                    node.poll();
                }
            }
        }
        for slot in range {
            Self::touch3(node, mine, pv::GHOST_FORCE, slot, true);
        }
        node.state(|s| s.tally.deltas_sent += g.ghosts.len() as u64);
    }

    /// The message-passing force phase (`mp-int`, `mp-poll`, `bulk`) of iteration `t`.
    fn forces_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays, e: &ProcEpoch, t: usize) {
        let parity = t % 2;
        self.send_coords(node, mine, e, parity);
        self.local_pairs(node, mine, e, None);
        let mut cross_at = Vec::with_capacity(e.groups.len());
        let mut at = 0;
        for g in &e.groups {
            cross_at.push(at);
            at += g.pairs.len();
        }
        let mut done = vec![false; e.groups.len()];
        for _ in 0..e.groups.len() {
            let ready = |s: &State, done: &[bool]| {
                e.groups.iter().zip(done).position(|(g, &d)| {
                    !d && s.coords_in[parity].get(&g.peer).copied().unwrap_or(0) as usize == g.ghosts.len()
                })
            };
            node.wait_until("moldyn ghost coordinates", |s| ready(s, &done).is_some());
            let gi = node.state(|s| ready(s, &done)).expect("a group is ready");
            self.group_mp(node, mine, e, gi, cross_at[gi]);
            node.state(|s| s.coords_in[parity].remove(&e.groups[gi].peer));
            done[gi] = true;
        }
        let expected = e.exported() as u64;
        node.wait_until("moldyn force deltas", |s| s.deltas_in >= expected);
        node.state(|s| s.deltas_in -= expected);
    }

    fn main_sm<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let me = node.id();
        let base = self.first[me];
        let arrays = [&self.coords, &self.forces]
            .map(|a| node.alloc_shared(a.owners.len(), Placement::Owners(a.owners.clone())));
        node.state(|s| s.shared = Some(arrays));
        // Set-up (untimed): each owner writes its molecules' coordinates and initial forces.
        for l in 0..self.own(me) {
            let (x, f) = (self.coords.word[base + l], self.forces.word[base + l]);
            Self::store3(node, arrays[0].word(x), &self.x0[base + l]);
            Self::store3(node, arrays[1].word(f + 1), &self.f0[base + l]);
        }
        node.barrier();
        node.begin_timing();
        for t in 0..self.iterations {
            node.progress(t as u64, self.iterations as u64);
            let e = self.epoch(t, me);
            for l in 0..self.own(me) {
                let (xw, fw) = (self.coords.word[base + l], self.forces.word[base + l]);
                let f = Self::load3(node, arrays[1].word(fw + 1));
                let mut x = Self::load3(node, arrays[0].word(xw));
                Self::touch3(node, mine, pv::VEL, l, false);
                node.state(|s| physics::kick_drift(&mut x, &mut s.v[l], &f, self.dt));
                Self::touch3(node, mine, pv::VEL, l, true);
                Self::store3(node, arrays[0].word(xw), &x);
                Self::store3(node, arrays[1].word(fw + 1), &[0.0; 3]);
                node.compute(self.costs.kick + self.costs.drift);
            }
            if t % self.rebuild == 0 {
                self.rebuild_list(node, mine, e);
            }
            node.barrier();
            self.forces_sm(node, mine, e, arrays);
            if !self.custom() {
                node.barrier();
            }
            for l in 0..self.own(me) {
                let f = Self::load3(node, arrays[1].word(self.forces.word[base + l] + 1));
                Self::touch3(node, mine, pv::VEL, l, false);
                node.state(|s| physics::kick(&mut s.v[l], &f, self.dt));
                Self::touch3(node, mine, pv::VEL, l, true);
                node.compute(self.costs.kick);
            }
        }
    }

    fn main_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let me = node.id();
        node.barrier();
        node.begin_timing();
        for t in 0..self.iterations {
            node.progress(t as u64, self.iterations as u64);
            let e = self.epoch(t, me);
            for l in 0..self.own(me) {
                Self::touch3(node, mine, pv::POS, l, false);
                Self::touch3(node, mine, pv::VEL, l, false);
                Self::touch3(node, mine, pv::FORCE, l, false);
                node.state(|s| {
                    let f = std::mem::take(&mut s.f[l]);
                    physics::kick_drift(&mut s.x[l], &mut s.v[l], &f, self.dt);
                });
                Self::touch3(node, mine, pv::VEL, l, true);
                Self::touch3(node, mine, pv::POS, l, true);
                Self::touch3(node, mine, pv::FORCE, l, true);
                node.compute(self.costs.kick + self.costs.drift);
            }
            if t % self.rebuild == 0 {
                // Every delta of the old lists has arrived: switch lists together.
                self.rebuild_list(node, mine, e);
                node.barrier();
            }
            self.forces_mp(node, mine, e, t);
            for l in 0..self.own(me) {
                Self::touch3(node, mine, pv::FORCE, l, false);
                Self::touch3(node, mine, pv::VEL, l, false);
                node.state(|s| {
                    let f = s.f[l];
                    physics::kick(&mut s.v[l], &f, self.dt);
                });
                Self::touch3(node, mine, pv::VEL, l, true);
                node.compute(self.costs.kick);
            }
        }
    }
}

impl Program for Kernel {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_coords, on_coords_bulk, on_deltas, on_deltas_bulk]
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.shapes[id].words()
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.variant.receive_mode()
    }
    fn barrier_kind(&self) -> BarrierKind {
        // `custom` synchronises by messages, as the other Blizzard apps' `custom` variants do;
        // a shared-memory barrier would run on the default protocol.
        if self.blizzard == Some(Blizzard::Custom) {
            BarrierKind::Messages
        } else {
            self.variant.barrier_kind()
        }
    }
    fn init_state(&self, id: ProcId, _nprocs: usize) -> State {
        let own = self.first[id]..self.first[id + 1];
        let ghosts = self.epochs.iter().map(|e| e[id].ghosts).max().unwrap_or(0);
        let messages = self.messages();
        State {
            x: if messages { self.x0[own.clone()].to_vec() } else { Vec::new() },
            v: self.v0[own.clone()].to_vec(),
            f: if messages { self.f0[own.clone()].to_vec() } else { vec![[0.0; 3]; own.len()] },
            ghost_x: vec![[0.0; 3]; ghosts],
            ghost_f: vec![[0.0; 3]; ghosts],
            coords_in: [BTreeMap::new(), BTreeMap::new()],
            deltas_in: 0,
            exports: BTreeMap::new(),
            shared: None,
            tally: Tally::default(),
            ghost_molecule_cycles: self.costs.ghost_molecule,
            recv_force_cycles: self.costs.recv_force,
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let mine = Arrays::set_up(node, &self.shapes[node.id()], self.line_bytes);
        if self.variant.shared_memory() {
            self.main_sm(node, &mine);
        } else {
            self.main_mp(node, &mine);
        }
    }
}
