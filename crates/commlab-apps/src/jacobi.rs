//! `jacobi`: block-partitioned Jacobi relaxation on an `n` x `n` grid (after the Jacobi solver
//! of the study of runtime primitives on an integrated shared-memory and message machine).
//!
//! The grid: `n` x `n` unknowns inside a fixed boundary ring. At padded coordinates `(r, c)`,
//! `0..=n+1` each, with `x = c / (n+1)` and `y = r / (n+1)`, the boundary holds
//! `1 + x^2 - y^2` (harmonic, so the relaxation converges towards it); the unknowns start at 0.
//! Every iteration gives each unknown the average of its four neighbours' previous values,
//! `0.25 * (((up + down) + left) + right)`, in that order in every variant and in the
//! sequential reference, so the answer is checked bit for bit.
//!
//! The processors form a `pr` x `pc` grid of blocks, the most square factoring of their number
//! with `pr >= pc` (more block rows than columns, so blocks are at least as wide as tall and
//! the longer borders are the contiguous rows); processor `id` owns block row `id / pc`,
//! column `id % pc`. A prime count gives strips (`p` x 1). Block sizes differ by at most one
//! row or column; `n` must give every block at least one of each.
//!
//! Variants (each iteration: border exchange with the four neighbours, then the update):
//! - `sm`: two copies of the grid (old and new, alternating) in shared memory: each block's
//!   two copies stored row-major side by side in a region of its own lines homed at its owner
//!   (`Placement::Block` over equal, line-padded regions). The update reads the neighbours' border words with
//!   plain shared loads (no prefetching) and stores into the new copy; then a shared-memory
//!   barrier. The fixed boundary values a block touches are kept in its owner's private
//!   memory (they never change and only the owner reads them).
//! - `mp`: each processor keeps its block (old and new copies) and ghost borders in private
//!   memory, and every border moves by one DMA message. `--param exchange=copy` (the default,
//!   the study's: "all communication is accomplished through the message-based memory-to-memory
//!   copy mechanism described in Section 4.4"): each iteration is a message barrier, then each
//!   neighbour's border fetched as `memcpy mp` copies a block (a request active message, the
//!   neighbour's handler replies with the border in one DMA message, whose handler deposits it
//!   in the ghost cells and makes the waiting thread runnable, `costs.sched_wake`; the
//!   scheduler resumes it, `costs.sched_dequeue` + `costs.sched_thread_start`), one border
//!   after another, then the update. `exchange=push`: at the start of an iteration each
//!   processor sends each border to the neighbour as ONE DMA memory-to-memory copy
//!   (`send_bulk` with the border as the single region); the handler (interrupt receive)
//!   deposits it in the ghost cells of that iteration's parity, and the processor waits until
//!   all its neighbours' borders of the iteration are in. A neighbour can be at most one
//!   iteration ahead (it needs this processor's next border to go further), so two sets of
//!   ghost cells, by iteration parity, suffice; a border that finds its set not yet consumed is
//!   counted as a fault and fails the check. No barrier per iteration: the border waits
//!   synchronize.
//!
//!   Ghost cells are four contiguous arrays per parity (top and bottom rows, left and right
//!   columns), so the DMA at the receiver deposits each border in place. A row border is
//!   contiguous in the row-major block and is sent straight from it. A column border is not:
//!   the program first copies it into a contiguous send buffer (one private read and one
//!   private write per element, simulated references of the main thread; with `copy`, before
//!   the iteration's barrier), then sends that buffer by one DMA, rather than naming one DMA
//!   region per element.
//!
//! Work cost (machine `[costs]`): `jacobi_point` per point updated (three adds, a multiply
//! and the loop); its four loads and its store are simulated references.
//!
//! `counters.speedup`: the sequential program's time (the same sweeps on one node of the same
//! machine: `mp` with one block, so private data, no border and no barrier; counter
//! `sequential_cycles`) over the run's.

use crate::app::common::{CYCLES_PER_ITERATION, SEQUENTIAL_CYCLES, SPEEDUP};
use crate::app::{cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::{Params, ITERATIONS};
use crate::private::{Arrays, Shape};
use crate::runtime::sched::Sched;
use commlab_api::SetCounter;
use commlab_api::{
    Addr, Backend, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters jacobi`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [CYCLES_PER_ITERATION, SEQUENTIAL_CYCLES, SPEEDUP];
    PROC_ROWS = "proc_rows", "count",
        "rows of the processor grid";
    PROC_COLS = "proc_cols", "count",
        "columns of the processor grid";
    BLOCK_ROWS_MAX = "block_rows_max", "count",
        "grid rows in the tallest block";
    BLOCK_COLS_MAX = "block_cols_max", "count",
        "grid columns in the widest block";
    POINTS_PER_PROCESSOR_MAX = "points_per_processor_max", "count",
        "grid points in the largest block";
    CYCLES_PER_POINT = "cycles_per_point", "cycles",
        "`cycles_per_iteration` over `points_per_processor_max`";
    BORDERS_PER_ITERATION = "borders_per_iteration", "count",
        "block borders exchanged each iteration, all processors";
    BORDER_WORDS_PER_ITERATION = "border_words_per_iteration", "words",
        "words of those borders";
    BORDER_MESSAGES = "border_messages", "messages",
        "border messages sent, all processors (mp)";
    BORDER_MESSAGES_RECEIVED = "border_messages_received", "messages",
        "border messages received, all processors (mp)";
    BORDER_BYTES = "border_bytes", "bytes",
        "bytes of border data sent (mp)";
    BORDER_BYTES_RECEIVED = "border_bytes_received", "bytes",
        "bytes of border data received (mp)";
}

pub const INFO: AppInfo = AppInfo {
    name: "jacobi",
    summary: "Jacobi relaxation on an n x n grid in blocks; shared-memory border reads (sm) vs one DMA copy per border (mp)",
    variants: &["sm", "mp"],
    counters: COUNTERS,
    params: &[
        ParamDoc {
            name: "n",
            default: "64",
            doc: "grid side: n x n unknowns inside a fixed boundary, 8 to 4096, at least one row and column per processor block",
        },
        ParamDoc { name: "iterations", default: "10", doc: "iterations timed" },
        ParamDoc {
            name: "exchange",
            default: "copy",
            doc: "mp's border exchange: copy (the study's: a barrier, then each neighbour's border fetched by the memory-to-memory copy of memcpy mp, one after another) or push (each border sent by one DMA message as soon as it is computed; the border waits synchronize, no barrier)",
        },
    ],
};

/// Sides of a block, as the block sees them.
const TOP: usize = 0;
const BOTTOM: usize = 1;
const LEFT: usize = 2;
const RIGHT: usize = 3;
const SIDES: [usize; 4] = [TOP, BOTTOM, LEFT, RIGHT];

/// The side facing `side` from the neighbour.
fn opposite(side: usize) -> usize {
    side ^ 1
}

/// The fixed boundary value at padded coordinates `(r, c)` of an `n` x `n` grid.
fn boundary(n: usize, r: usize, c: usize) -> f64 {
    let h = 1.0 / (n + 1) as f64;
    let (x, y) = (c as f64 * h, r as f64 * h);
    1.0 + x * x - y * y
}

/// One point's new value from its four neighbours (the order every variant uses).
#[inline]
fn average(up: f64, down: f64, left: f64, right: f64) -> f64 {
    0.25 * (((up + down) + left) + right)
}

/// The sequential reference: `iterations` sweeps over the padded `(n+2)` x `(n+2)` grid;
/// returns the `n` x `n` unknowns row-major.
fn sequential(n: usize, iterations: usize) -> Vec<f64> {
    let w = n + 2;
    let mut old = vec![0.0; w * w];
    for r in 0..w {
        for c in 0..w {
            if r == 0 || c == 0 || r == w - 1 || c == w - 1 {
                old[r * w + c] = boundary(n, r, c);
            }
        }
    }
    let mut new = old.clone();
    for _ in 0..iterations {
        for r in 1..=n {
            for c in 1..=n {
                new[r * w + c] =
                    average(old[(r - 1) * w + c], old[(r + 1) * w + c], old[r * w + c - 1], old[r * w + c + 1]);
            }
        }
        std::mem::swap(&mut old, &mut new);
    }
    (1..=n).flat_map(|r| old[r * w + 1..r * w + 1 + n].to_vec()).collect()
}

/// The processors as a grid of blocks over the `n` x `n` unknowns.
#[derive(Clone, Debug)]
struct Blocks {
    n: usize,
    /// Block rows and columns.
    pr: usize,
    pc: usize,
    /// First unknown row of each block row, then `n`.
    row_start: Vec<usize>,
    /// First unknown column of each block column, then `n`.
    col_start: Vec<usize>,
}

impl Blocks {
    /// The most square `pr` x `pc = nprocs` with `pr >= pc`, or an error naming why `n` does
    /// not fit.
    fn new(n: usize, nprocs: usize) -> Result<Blocks, AppError> {
        let pc = (1..=nprocs).take_while(|d| d * d <= nprocs).filter(|d| nprocs.is_multiple_of(*d)).last().unwrap_or(1);
        let pr = nprocs / pc;
        if pr > n {
            return Err(AppError::Input(format!(
                "--param n={n}: jacobi divides the grid among {nprocs} processors as {pr} x {pc} blocks (the most square factoring{}), so n must be at least {pr} to give every block at least one row",
                if pc == 1 && nprocs > 1 { "; the count is prime" } else { "" }
            )));
        }
        let split = |parts: usize| (0..=parts).map(|k| k * n / parts).collect();
        Ok(Blocks { n, pr, pc, row_start: split(pr), col_start: split(pc) })
    }

    fn nprocs(&self) -> usize {
        self.pr * self.pc
    }

    /// Processor `id`'s block: first row, rows, first column, columns.
    fn block(&self, id: ProcId) -> (usize, usize, usize, usize) {
        let (bi, bj) = (id / self.pc, id % self.pc);
        let (r0, c0) = (self.row_start[bi], self.col_start[bj]);
        (r0, self.row_start[bi + 1] - r0, c0, self.col_start[bj + 1] - c0)
    }

    /// The neighbour of `id` across `side`, if the side is not the grid's boundary.
    fn neighbour(&self, id: ProcId, side: usize) -> Option<ProcId> {
        let (bi, bj) = (id / self.pc, id % self.pc);
        match side {
            TOP => (bi > 0).then(|| id - self.pc),
            BOTTOM => (bi + 1 < self.pr).then(|| id + self.pc),
            LEFT => (bj > 0).then(|| id - 1),
            _ => (bj + 1 < self.pc).then(|| id + 1),
        }
    }

    /// Words of `id`'s border on `side` (a row's columns or a column's rows).
    fn border_len(&self, id: ProcId, side: usize) -> usize {
        let (_, rows, _, cols) = self.block(id);
        if side <= BOTTOM {
            cols
        } else {
            rows
        }
    }

    /// Processor `id`'s fixed boundary values on `side` (empty if a neighbour is there).
    fn boundary_values(&self, id: ProcId, side: usize) -> Vec<f64> {
        if self.neighbour(id, side).is_some() {
            return Vec::new();
        }
        let (r0, rows, c0, cols) = self.block(id);
        let n = self.n;
        // Padded coordinates: unknown (r, c) is at (r + 1, c + 1).
        match side {
            TOP => (0..cols).map(|j| boundary(n, r0, c0 + j + 1)).collect(),
            BOTTOM => (0..cols).map(|j| boundary(n, r0 + rows + 1, c0 + j + 1)).collect(),
            LEFT => (0..rows).map(|i| boundary(n, r0 + i + 1, c0)).collect(),
            _ => (0..rows).map(|i| boundary(n, r0 + i + 1, c0 + cols + 1)).collect(),
        }
    }

    /// Border words crossing between blocks in one iteration (both directions).
    fn border_words(&self) -> usize {
        (0..self.nprocs())
            .map(|id| {
                SIDES
                    .iter()
                    .filter(|&&s| self.neighbour(id, s).is_some())
                    .map(|&s| self.border_len(id, s))
                    .sum::<usize>()
            })
            .sum()
    }

    /// Borders crossing between blocks in one iteration (both directions).
    fn border_count(&self) -> usize {
        2 * (self.pr * (self.pc - 1) + self.pc * (self.pr - 1))
    }
}

const BORDER: HandlerId = HandlerId(0);
const BORDER_REQUEST: HandlerId = HandlerId(1);

/// Private state of one processor. `sm` uses only `base`; `mp` the rest.
#[derive(Default)]
pub struct State {
    /// The shared grid (`sm`): both copies of every block, see [`copy_offset`].
    base: Option<Addr>,
    /// The block, row-major, in two copies: copy `t % 2` holds iteration `t`'s values.
    block: [Vec<f64>; 2],
    /// Ghost cells per iteration parity and side; a boundary side holds the fixed values.
    ghost: [[Vec<f64>; 4]; 2],
    /// Per parity and side: 1 + the iteration whose border was last deposited (0: none).
    tag: [[u64; 4]; 2],
    borders_sent: u64,
    words_sent: u64,
    borders_received: u64,
    words_received: u64,
    /// Borders that arrived while their parity's ghost cells still held an unused border.
    faults: u64,
    /// The block's rows and columns (`mp`), for the border a request asks for.
    rows: usize,
    cols: usize,
    /// `exchange=copy`: what a border's handler pays to make the waiting thread runnable.
    wake_cycles: u64,
}

/// `exchange=copy`: a neighbour asks for this block's border on `side` (`args[0]`) of
/// iteration `args[1]`; reply with it in one DMA message (a column from its contiguous send
/// buffer, gathered before the iteration's barrier).
fn on_border_request(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (side, t) = (m.args[0] as usize, m.args[1]);
    let (rows, cols) = (s.rows, s.cols);
    let blk = &s.block[(t % 2) as usize];
    let v: Vec<u64> = match side {
        TOP => blk[..cols].iter().map(|x| x.to_bits()).collect(),
        BOTTOM => blk[(rows - 1) * cols..].iter().map(|x| x.to_bits()).collect(),
        LEFT => (0..rows).map(|i| blk[i * cols].to_bits()).collect(),
        _ => (0..rows).map(|i| blk[i * cols + cols - 1].to_bits()).collect(),
    };
    ctx.send_bulk(m.src, BORDER, &[opposite(side) as u64, t], &[&v]);
    s.borders_sent += 1;
    s.words_sent += v.len() as u64;
}

fn on_border(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.compute(s.wake_cycles);
    let (side, t) = (m.args[0] as usize, m.args[1]);
    let p = (t % 2) as usize;
    let before = if t < 2 { 0 } else { t - 1 };
    if s.tag[p][side] != before {
        s.faults += 1;
    }
    let len = s.ghost[p][side].len();
    for (g, &v) in s.ghost[p][side].iter_mut().zip(&m.payload[..len]) {
        *g = f64::from_bits(v);
    }
    s.tag[p][side] = t + 1;
    s.borders_received += 1;
    s.words_received += len as u64;
}

/// Private arrays of `mp`, in declaration order: the two block copies, the ghost cells
/// (parity-major, then side), the left and right column send buffers.
const MP_BLOCK: usize = 0;
fn mp_ghost(p: usize, side: usize) -> usize {
    2 + 4 * p + side
}
fn mp_send(side: usize) -> usize {
    10 + side - LEFT
}

/// Word offset of copy `copy` of processor `p`'s block in the shared grid (`sm`): each
/// processor's region holds its two copies side by side, `stride` words each, so they are
/// homed together and do not map onto each other in a direct-mapped cache (two separate grid
/// allocations of a power-of-two size would put a block's old and new copies on the same
/// cache lines and make every store evict the values being read).
fn copy_offset(stride: usize, p: ProcId, copy: usize) -> usize {
    (2 * p + copy) * stride
}

struct Jacobi {
    mp: bool,
    /// `mp`: the study's exchange (a barrier, then a blocking copy per border) or a push.
    copy: bool,
    /// The runtime's costs of waiting blocked for a copy (`exchange=copy`).
    sched: Sched,
    iterations: usize,
    blocks: Blocks,
    /// Words of one copy of a block in the shared grid (`sm`): the largest block, padded to
    /// whole lines.
    stride: usize,
    line_bytes: usize,
    point_cycles: u64,
}

impl Jacobi {
    /// A program with `p`'s costs and iterations (the caller sets the rest).
    fn clone_costs(p: &Jacobi) -> Jacobi {
        Jacobi {
            mp: p.mp,
            copy: p.copy,
            sched: p.sched,
            iterations: p.iterations,
            blocks: p.blocks.clone(),
            stride: p.stride,
            line_bytes: p.line_bytes,
            point_cycles: p.point_cycles,
        }
    }

    fn shape(&self, id: ProcId) -> Shape {
        let b = &self.blocks;
        let (_, rows, _, cols) = b.block(id);
        let mut s = Shape::default();
        if self.mp {
            s.push(rows * cols, 8);
            s.push(rows * cols, 8);
            for _ in 0..2 {
                for side in SIDES {
                    s.push(b.border_len(id, side), 8);
                }
            }
            for side in [LEFT, RIGHT] {
                s.push(if b.neighbour(id, side).is_some() { rows } else { 0 }, 8);
            }
        } else {
            for side in SIDES {
                s.push(b.boundary_values(id, side).len(), 8);
            }
        }
        s
    }

    fn main_sm<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let id = node.id();
        let b = &self.blocks;
        let (_, rows, _, cols) = b.block(id);
        let base = node.alloc_shared(2 * self.stride * b.nprocs(), Placement::Block);
        node.state(|s| s.base = Some(base));
        let at = |copy: usize, p: ProcId, i: usize, j: usize| {
            let pcols = b.block(p).3;
            base.word(copy_offset(self.stride, p, copy) + i * pcols + j)
        };
        let nb = SIDES.map(|s| b.neighbour(id, s));
        let nb_rows = nb[TOP].map_or(0, |p| b.block(p).1);
        let bnd = SIDES.map(|s| b.boundary_values(id, s));
        // Set-up (untimed): the owner writes its block's initial values into both copies.
        for copy in 0..2 {
            for i in 0..rows {
                for j in 0..cols {
                    node.store_f64(at(copy, id, i, j), 0.0);
                }
            }
        }
        node.barrier();
        node.begin_timing();
        for t in 0..self.iterations {
            if id == 0 {
                node.progress(t as u64, self.iterations as u64);
            }
            let (old, new) = (t % 2, 1 - t % 2);
            for i in 0..rows {
                for j in 0..cols {
                    let up = if i > 0 {
                        node.load_f64(at(old, id, i - 1, j))
                    } else if let Some(p) = nb[TOP] {
                        node.load_f64(at(old, p, nb_rows - 1, j))
                    } else {
                        mine.read(node, TOP, j);
                        bnd[TOP][j]
                    };
                    let down = if i + 1 < rows {
                        node.load_f64(at(old, id, i + 1, j))
                    } else if let Some(p) = nb[BOTTOM] {
                        node.load_f64(at(old, p, 0, j))
                    } else {
                        mine.read(node, BOTTOM, j);
                        bnd[BOTTOM][j]
                    };
                    let left = if j > 0 {
                        node.load_f64(at(old, id, i, j - 1))
                    } else if let Some(p) = nb[LEFT] {
                        node.load_f64(at(old, p, i, b.block(p).3 - 1))
                    } else {
                        mine.read(node, LEFT, i);
                        bnd[LEFT][i]
                    };
                    let right = if j + 1 < cols {
                        node.load_f64(at(old, id, i, j + 1))
                    } else if let Some(p) = nb[RIGHT] {
                        node.load_f64(at(old, p, i, 0))
                    } else {
                        mine.read(node, RIGHT, i);
                        bnd[RIGHT][i]
                    };
                    node.store_f64(at(new, id, i, j), average(up, down, left, right));
                    node.compute(self.point_cycles);
                }
            }
            node.barrier();
        }
    }

    fn main_mp<N: Node<State = State>>(&self, node: &mut N, mine: &Arrays) {
        let id = node.id();
        let b = &self.blocks;
        let (_, rows, _, cols) = b.block(id);
        let nb = SIDES.map(|s| b.neighbour(id, s));
        node.barrier();
        node.begin_timing();
        for t in 0..self.iterations {
            if id == 0 {
                node.progress(t as u64, self.iterations as u64);
            }
            let p = t % 2;
            let (cur, next) = (MP_BLOCK + p, MP_BLOCK + 1 - p);
            if self.copy {
                // The study's exchange: the columns into their contiguous buffers, a barrier
                // (every block's values of this iteration are final), then each neighbour's
                // border fetched by the memory-to-memory copy, one at a time, the thread
                // waiting blocked for each.
                for side in [LEFT, RIGHT] {
                    if nb[side].is_none() {
                        continue;
                    }
                    let j = if side == LEFT { 0 } else { cols - 1 };
                    for i in 0..rows {
                        mine.read(node, cur, i * cols + j);
                        mine.write(node, mp_send(side), i);
                    }
                }
                node.barrier();
                for side in SIDES {
                    let Some(src) = nb[side] else { continue };
                    node.send_am(src, BORDER_REQUEST, &[opposite(side) as u64, t as u64]);
                    let want = t as u64 + 1;
                    node.wait_until("a jacobi border copy", |s| s.tag[p][side] == want);
                    node.compute(self.sched.resume_cycles());
                }
            } else {
                // Border exchange: one DMA copy per border.
                for side in SIDES {
                    let Some(dest) = nb[side] else { continue };
                    let values: Vec<u64> = node.state(|s| {
                        let blk = &s.block[p];
                        let v: Vec<f64> = match side {
                            TOP => blk[..cols].to_vec(),
                            BOTTOM => blk[(rows - 1) * cols..].to_vec(),
                            LEFT => (0..rows).map(|i| blk[i * cols]).collect(),
                            _ => (0..rows).map(|i| blk[i * cols + cols - 1]).collect(),
                        };
                        v.into_iter().map(f64::to_bits).collect()
                    });
                    if side >= LEFT {
                        // Gather the column into its contiguous send buffer.
                        let j = if side == LEFT { 0 } else { cols - 1 };
                        for i in 0..rows {
                            mine.read(node, cur, i * cols + j);
                            mine.write(node, mp_send(side), i);
                        }
                    }
                    node.send_bulk(dest, BORDER, &[opposite(side) as u64, t as u64], &[&values]);
                    node.state(|s| {
                        s.borders_sent += 1;
                        s.words_sent += values.len() as u64;
                    });
                }
                let want = t as u64 + 1;
                node.wait_until("jacobi borders of this iteration", |s| {
                    SIDES.iter().all(|&side| nb[side].is_none() || s.tag[p][side] == want)
                });
            }
            // The update: the references and work of every point, then its values.
            for i in 0..rows {
                for j in 0..cols {
                    if i > 0 {
                        mine.read(node, cur, (i - 1) * cols + j);
                    } else {
                        mine.read(node, mp_ghost(p, TOP), j);
                    }
                    if i + 1 < rows {
                        mine.read(node, cur, (i + 1) * cols + j);
                    } else {
                        mine.read(node, mp_ghost(p, BOTTOM), j);
                    }
                    if j > 0 {
                        mine.read(node, cur, i * cols + j - 1);
                    } else {
                        mine.read(node, mp_ghost(p, LEFT), i);
                    }
                    if j + 1 < cols {
                        mine.read(node, cur, i * cols + j + 1);
                    } else {
                        mine.read(node, mp_ghost(p, RIGHT), i);
                    }
                    mine.write(node, next, i * cols + j);
                    node.compute(self.point_cycles);
                }
            }
            node.state(|s| {
                let [b0, b1] = &mut s.block;
                let (old, new) = if p == 0 { (&*b0, b1) } else { (&*b1, b0) };
                let g = &s.ghost[p];
                for i in 0..rows {
                    for j in 0..cols {
                        let up = if i > 0 { old[(i - 1) * cols + j] } else { g[TOP][j] };
                        let down = if i + 1 < rows { old[(i + 1) * cols + j] } else { g[BOTTOM][j] };
                        let left = if j > 0 { old[i * cols + j - 1] } else { g[LEFT][i] };
                        let right = if j + 1 < cols { old[i * cols + j + 1] } else { g[RIGHT][i] };
                        new[i * cols + j] = average(up, down, left, right);
                    }
                }
            });
        }
    }
}

impl Program for Jacobi {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_border, on_border_request]
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.shape(id).words()
    }
    fn receive_mode(&self) -> ReceiveMode {
        ReceiveMode::Interrupt
    }
    fn barrier_kind(&self) -> BarrierKind {
        if self.mp {
            BarrierKind::Messages
        } else {
            BarrierKind::SharedMemory
        }
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        if !self.mp {
            return State::default();
        }
        let b = &self.blocks;
        let (_, rows, _, cols) = b.block(id);
        // A side with a neighbour gets its ghost cells zeroed until a border arrives; a
        // boundary side holds the fixed values in both parities.
        let ghosts = SIDES.map(|side| {
            if b.neighbour(id, side).is_some() {
                vec![0.0; b.border_len(id, side)]
            } else {
                b.boundary_values(id, side)
            }
        });
        State {
            block: [vec![0.0; rows * cols], vec![0.0; rows * cols]],
            ghost: [ghosts.clone(), ghosts],
            rows,
            cols,
            wake_cycles: if self.copy { self.sched.wake } else { 0 },
            ..State::default()
        }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let mine = Arrays::set_up(node, &self.shape(node.id()), self.line_bytes);
        if self.mp {
            self.main_mp(node, &mine);
        } else {
            self.main_sm(node, &mine);
        }
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let n: usize = params.get("n", ("a whole number from 8 to 4096", |v: usize| (8..=4096).contains(&v)))?;
    let iterations: usize = params.get("iterations", ITERATIONS)?;
    let mp = match variant {
        "sm" => false,
        "mp" => true,
        other => unreachable!("jacobi variant `{other}` is listed but not handled"),
    };
    let copy = match params.raw("exchange") {
        "copy" => true,
        "push" => false,
        other => return Err(AppError::Input(format!("--param exchange={other}: jacobi needs copy or push"))),
    };
    let nprocs = backend.nprocs();
    let blocks = Blocks::new(n, nprocs)?;
    let line_words = (backend.line_bytes() / 8).max(1);
    let largest = (0..nprocs).map(|id| blocks.block(id)).map(|(_, r, _, c)| r * c).max().unwrap_or(0);
    let stride = largest.div_ceil(line_words) * line_words;
    let prog = Arc::new(Jacobi {
        mp,
        copy,
        sched: Sched::of(backend)?,
        iterations,
        blocks: blocks.clone(),
        stride,
        line_bytes: backend.line_bytes(),
        point_cycles: cost(backend, "jacobi_point")?,
    });
    let out = backend.run(Arc::clone(&prog)).map_err(run_err)?;
    // The sequential program: the same sweeps on one node (the `mp` program with no
    // neighbours: private data, no border, no barrier), the speedup's baseline.
    let seq_backend = backend.with_nprocs(1).map_err(run_err)?;
    let seq = Jacobi { mp: true, blocks: Blocks::new(n, 1)?, stride: n * n, ..Jacobi::clone_costs(&prog) };
    let sequential_cycles = seq_backend.run(Arc::new(seq)).map_err(run_err)?.stats.cycles;

    // The answer: every unknown after `iterations` sweeps, against the sequential solver.
    let want = sequential(n, iterations);
    let mut got = vec![f64::NAN; n * n];
    for id in 0..nprocs {
        let (r0, rows, c0, cols) = blocks.block(id);
        for i in 0..rows {
            for j in 0..cols {
                got[(r0 + i) * n + c0 + j] = match out.states[0].base {
                    Some(base) => {
                        f64::from_bits(out.load(base.word(copy_offset(stride, id, iterations % 2) + i * cols + j)))
                    }
                    None => out.states[id].block[iterations % 2][i * cols + j],
                };
            }
        }
    }
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    let differing = want.iter().zip(&got).filter(|(w, g)| w.to_bits() != g.to_bits()).count();
    let max_error = want.iter().zip(&got).fold(0.0f64, |m, (w, g)| {
        let e = (w - g).abs() / scale;
        if e.is_nan() {
            f64::INFINITY
        } else {
            m.max(e)
        }
    });
    let sum = |f: fn(&State) -> u64| out.states.iter().map(f).sum::<u64>();
    let (sent, received, faults) = (sum(|s| s.borders_sent), sum(|s| s.borders_received), sum(|s| s.faults));
    let expected = if mp { (blocks.border_count() * iterations) as u64 } else { 0 };
    let ok = differing == 0 && faults == 0 && sent == expected && received == expected;

    let mut counters = BTreeMap::new();
    let cycles_per_iteration = out.stats.cycles / iterations as f64;
    counters.set(&CYCLES_PER_ITERATION, cycles_per_iteration);
    counters.set(&SEQUENTIAL_CYCLES, sequential_cycles);
    counters.set(&SPEEDUP, sequential_cycles / out.stats.cycles);
    counters.set(&PROC_ROWS, blocks.pr as f64);
    counters.set(&PROC_COLS, blocks.pc as f64);
    let max_rows = (0..nprocs).map(|id| blocks.block(id).1).max().unwrap_or(0);
    let max_cols = (0..nprocs).map(|id| blocks.block(id).3).max().unwrap_or(0);
    counters.set(&BLOCK_ROWS_MAX, max_rows as f64);
    counters.set(&BLOCK_COLS_MAX, max_cols as f64);
    counters.set(&POINTS_PER_PROCESSOR_MAX, largest as f64);
    counters.set(&CYCLES_PER_POINT, cycles_per_iteration / largest as f64);
    counters.set(&BORDERS_PER_ITERATION, blocks.border_count() as f64);
    counters.set(&BORDER_WORDS_PER_ITERATION, blocks.border_words() as f64);
    if mp {
        counters.set(&BORDER_MESSAGES, sent as f64);
        counters.set(&BORDER_MESSAGES_RECEIVED, received as f64);
        counters.set(&BORDER_BYTES, (8 * sum(|s| s.words_sent)) as f64);
        counters.set(&BORDER_BYTES_RECEIVED, (8 * sum(|s| s.words_received)) as f64);
    }
    let mut detail = format!(
        "{n} x {n} grid on {} x {} blocks after {iterations} iterations vs sequential: {differing} of {} values differ in any bit, max relative difference {max_error:.2e}",
        blocks.pr,
        blocks.pc,
        n * n
    );
    if mp {
        detail += &format!(
            "; {sent} borders sent, {received} received, {expected} expected; {faults} arrived over an unused border"
        );
    }
    Ok(result(out.stats, counters, Check { ok, max_error, detail }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_the_most_square_factoring_and_cover_the_grid() {
        for (p, pr, pc) in [(1, 1, 1), (7, 7, 1), (32, 8, 4), (64, 8, 8), (12, 4, 3), (2, 2, 1)] {
            let b = Blocks::new(16, p).unwrap();
            assert_eq!((b.pr, b.pc), (pr, pc), "{p} processors");
            let points: usize = (0..p).map(|id| b.block(id)).map(|(_, r, _, c)| r * c).sum();
            assert_eq!(points, 256);
            assert!((0..p).all(|id| b.block(id).1 >= 1 && b.block(id).3 >= 1));
        }
        assert!(
            matches!(Blocks::new(8, 11), Err(AppError::Input(m)) if m.contains("prime") && m.contains("at least 11"))
        );
    }

    #[test]
    fn borders_are_counted_both_ways() {
        let b = Blocks::new(16, 6).unwrap(); // 3 x 2 blocks of 5-6 rows and 8 columns
                                             // 3 block rows of 1 vertical boundary each, 2 block columns of 2 horizontal ones.
        assert_eq!(b.border_count(), 2 * (3 + 2 * 2));
        // Vertical adjacencies (3 of them, 5 or 6 rows each: 16 rows in all, both ways) and
        // horizontal ones (4, 8 columns each, both ways).
        assert_eq!(b.border_words(), 2 * 16 + 2 * 4 * 8);
    }

    #[test]
    fn the_sequential_solver_converges_to_the_harmonic_boundary() {
        // 1 + x^2 - y^2 is harmonic, and its five-point discretisation is exact, so many
        // sweeps approach it everywhere.
        let n = 8;
        let u = sequential(n, 2000);
        for r in 1..=n {
            for c in 1..=n {
                let exact = boundary(n, r, c);
                assert!((u[(r - 1) * n + c - 1] - exact).abs() < 1e-9, "({r}, {c})");
            }
        }
    }
}
