//! `fft2d`: an `n` x `n` complex 2-D FFT distributed by rows, with the global transpose done
//! by each of the machine's mechanisms (after the 2-D FFT of the copy-transfer study of the
//! DEC 8400, Cray T3D and Cray T3E, where the right way to program the transpose depended on
//! the machine).
//!
//! The algorithm: every processor owns a block of consecutive rows (`n / P` each when `P`
//! divides `n`; otherwise the counts differ by at most one: processor `p` owns rows
//! `p n / P .. (p + 1) n / P`). Four phases, a barrier after each:
//! 1. row FFTs of its rows of matrix `A`;
//! 2. the transpose `B[j][i] = A[i][j]`: processor `q`'s rows of `B` are columns of `A`, so
//!    block `(p, q)` (`p`'s rows, `q`'s columns) moves from `p` to `q` transposed;
//! 3. row FFTs of its rows of `B` (the columns of the original);
//! 4. the transpose back, `A[k1][k2] = B[k2][k1]`: `A` then holds the 2-D transform in natural
//!    order.
//!
//! Data: a complex value is two 64-bit words (re, im as `f64` bits). Except in `bulk`, `A` and
//! `B` live in simulated shared memory, each processor's rows in its own region of whole lines
//! homed at it (`Placement::Block` over equal, line-padded regions), so the transposes move real
//! values through the machine. In `bulk` (messages), each processor keeps its rows of `A` and
//! `B` in private memory (its `State`, declared as private arrays so their references cost
//! what they cost on the machine).
//!
//! What is simulated and what is charged in a local FFT: the processor reads its row's `2 n`
//! words once (shared loads, or private reads in `bulk`), transforms them for real with
//! `rustfft` in a row buffer, and writes the `2 n` words back once (shared stores or private
//! writes); the transform is charged `n/2 log2 n` radix-2 butterflies x `costs.fft_butterfly`,
//! which covers each butterfly's flops and its references to the row buffer and twiddles as
//! cache hits (the buffer, `16 n` bytes, is taken to stay in the first-level cache: an
//! undercharge for rows larger than the cache).
//!
//! In `sm` and `bulk` the diagonal block (`p = q`) is transposed locally by loads and stores
//! (private reads and writes in `bulk`); the one-sided variants move it like every other block,
//! by gets or puts to the processor's own memory (served there without the network), so that
//! no coherent store races a one-sided write on a line two blocks share (with uneven blocks a
//! line of a row can hold values of two processors' columns). Blocks go in the order
//! `q + 1, q + 2, ...` (mod `P`, a processor's own last) so that processors start on different
//! partners:
//! - `fetch`: processor `q` pulls each column of block `(p, q)` by two strided one-sided gets
//!   (re and im, source stride `2 n` words) straight into its row of `B`; then `quiet`.
//! - `deposit`: processor `p` pushes each of its rows' slice of block `(p, q)` by two strided
//!   one-sided puts into column `i` of `q`'s rows of `B` (destination stride `2 n`); `quiet`.
//! - `pack-fetch`: each processor first transposes every block of its rows (its own included) by local loads and
//!   stores into a contiguous pack buffer (shared, homed at it: block `(p, q)` as `q`'s rows of
//!   `B` restricted to `p`'s columns); a barrier; then `q` pulls each row of the packed block
//!   `(p, q)` by one contiguous get (`2 x rows(p)` words) into its row of `B`; `quiet`.
//! - `pack-deposit`: the same packing, then `p` pushes each packed row by one contiguous put
//!   into `q`'s row of `B`; `quiet` (no barrier between: each pushes its own buffer).
//! - `sm`: processor `q` reads block `(p, q)` by coherent shared loads along `p`'s rows (so a
//!   line brings several consecutive values) and stores each value into its own row of `B`;
//!   shared-memory barrier.
//! - `bulk`: processor `p` sends block `(p, q)` as one DMA message whose regions are the block's
//!   `rows(p)` row slices (the DMA engine gathers them); the receiver's handler stores each value
//!   of the payload into its transposed place in its rows of `B` (charged a private hit for the
//!   payload word read and one for the word written); the receiver waits for its `P - 1` blocks.
//!
//! Receiving: `bulk` takes its blocks by interrupt; the one-sided variants, whose only messages
//! are the barrier's, by polling (a processor takes them when it reaches the barrier).
//!
//! The one-sided variants need a machine with one-sided access (`Backend::one_sided`, a
//! `[remote]` section); elsewhere they are refused with an input error.
//!
//! Figures: `mflops` = `5 n^2 log2(n^2)` flops over the timed region at the machine's clock;
//! `fft_cycles` and `transpose_cycles` are each processor's time in the two FFT phases and in
//! the two transpose phases (from the barrier that starts a phase to the barrier that ends it,
//! so they include waiting for the slowest processor), the maximum over processors. The answer
//! is checked against a sequential 2-D FFT (rows, then columns) of the same input.
//!
//! Input: every word uniform in `[-1, 1)`, from a ChaCha8 stream seeded by the run seed.
//! Work cost (machine `[costs]`): `fft_butterfly` per radix-2 butterfly.

use crate::app::{barrier_kind_of, cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use crate::private::{Arrays, Shape};
use commlab_api::SetCounter;
use commlab_api::{
    Addr, Backend, BarrierKind, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program, ReceiveMode,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters fft2d`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    FLOPS = "flops", "flops",
        "floating-point operations of the 2-D FFT: 5 n^2 log2(n^2)";
    MFLOPS = "mflops", "Mflop/s",
        "`flops` over the run's time in microseconds";
    FFT_CYCLES = "fft_cycles", "cycles",
        "the longest processor's time in the row FFTs";
    TRANSPOSE_CYCLES = "transpose_cycles", "cycles",
        "the longest processor's time in the transposes";
    ROWS_PER_PROCESSOR_MAX = "rows_per_processor_max", "count",
        "rows of the largest processor's share";
    BUTTERFLIES_PER_PROCESSOR_MAX = "butterflies_per_processor_max", "count",
        "butterflies the largest share computes over both passes";
    BLOCKS_SENT = "blocks_sent", "count",
        "transpose blocks sent as bulk messages, all processors (bulk)";
    BLOCKS_RECEIVED = "blocks_received", "count",
        "transpose blocks received (bulk)";
    BLOCK_BYTES = "block_bytes", "bytes",
        "bytes of the blocks sent (bulk)";
    BLOCK_BYTES_RECEIVED = "block_bytes_received", "bytes",
        "bytes of the blocks received (bulk)";
}

pub const INFO: AppInfo = AppInfo {
    name: "fft2d",
    summary: "2-D complex FFT by rows with two global transposes: coherent loads, DMA blocks, one-sided fetch/deposit, packed or strided",
    variants: &["sm", "bulk", "fetch", "deposit", "pack-fetch", "pack-deposit"],
    counters: COUNTERS,
    params: &[ParamDoc {
        name: "n",
        default: "256",
        doc: "matrix side (n x n complex values): a power of two from 4 to 1024, at least the number of processors",
    }],
};

/// How the transposes move the blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Sm,
    Bulk,
    Fetch,
    Deposit,
    PackFetch,
    PackDeposit,
}

impl Kind {
    fn from_name(v: &str) -> Kind {
        match v {
            "sm" => Kind::Sm,
            "bulk" => Kind::Bulk,
            "fetch" => Kind::Fetch,
            "deposit" => Kind::Deposit,
            "pack-fetch" => Kind::PackFetch,
            "pack-deposit" => Kind::PackDeposit,
            other => unreachable!("fft2d variant `{other}` is listed but not handled"),
        }
    }

    fn one_sided(self) -> bool {
        matches!(self, Kind::Fetch | Kind::Deposit | Kind::PackFetch | Kind::PackDeposit)
    }

    fn packed(self) -> bool {
        matches!(self, Kind::PackFetch | Kind::PackDeposit)
    }
}

/// The rows each processor owns: processor `p` has rows `start[p] .. start[p + 1]`.
#[derive(Clone, Debug)]
struct Rows {
    start: Vec<usize>,
}

impl Rows {
    fn new(n: usize, nprocs: usize) -> Rows {
        Rows { start: (0..=nprocs).map(|p| p * n / nprocs).collect() }
    }
    fn of(&self, p: ProcId) -> usize {
        self.start[p + 1] - self.start[p]
    }
    fn max(&self) -> usize {
        (0..self.start.len() - 1).map(|p| self.of(p)).max().unwrap_or(0)
    }
}

/// Radix-2 butterflies of one length-`n` FFT.
fn butterflies(n: usize) -> u64 {
    (n / 2) as u64 * n.trailing_zeros() as u64
}

const BLOCK: HandlerId = HandlerId(0);

/// Private state of one processor.
#[derive(Default)]
pub struct State {
    n: usize,
    start: Vec<usize>,
    /// The shared matrix `A` (all variants but `bulk`), where the answer ends.
    a: Option<Addr>,
    /// `bulk`: this processor's rows of `A` (0) and `B` (1), `2 n` words a row.
    mat: [Vec<u64>; 2],
    /// `bulk`: blocks received into `mat[k]`.
    received: [u64; 2],
    blocks_sent: u64,
    words_sent: u64,
    words_received: u64,
    /// Time in the two FFT phases and the two transpose phases, barrier to barrier.
    fft_cycles: f64,
    transpose_cycles: f64,
}

fn on_block(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (k, p) = (m.args[0] as usize, m.args[1] as usize);
    let q = ctx.id();
    let (n, rows_p, rows_q) = (s.n, s.start[p + 1] - s.start[p], s.start[q + 1] - s.start[q]);
    // One region per row of `p`, each padded alike to the DMA alignment.
    let len = m.payload.len() / rows_p;
    let col = 2 * s.start[p];
    let mat = &mut s.mat[k];
    for i in 0..rows_p {
        let region = &m.payload[i * len..i * len + 2 * rows_q];
        for j in 0..rows_q {
            let at = j * 2 * n + col + 2 * i;
            mat[at] = region[2 * j];
            mat[at + 1] = region[2 * j + 1];
        }
    }
    let words = 2 * rows_p * rows_q;
    ctx.private_hits(2 * words as u64);
    s.received[k] += 1;
    s.words_received += words as u64;
}

struct Fft2d {
    kind: Kind,
    n: usize,
    rows: Rows,
    /// Words of one processor's region of a shared matrix (its rows, padded to whole lines).
    region: usize,
    /// The input, row-major, `2 n` words a row.
    input: Vec<u64>,
    fft: Arc<dyn Fft<f64>>,
    butterfly_cycles: u64,
    line_bytes: usize,
}

/// The shared matrices of the shared-memory and one-sided variants.
struct Shared {
    mat: [Addr; 2],
    /// The pack buffers (`pack-*`).
    pack: Option<Addr>,
}

impl Fft2d {
    /// Address of word `w` of local row `r` of processor `p` in matrix `base`.
    fn at(&self, base: Addr, p: ProcId, r: usize, w: usize) -> Addr {
        base.word(p * self.region + r * 2 * self.n + w)
    }

    fn shape(&self, id: ProcId) -> Shape {
        let mut s = Shape::default();
        if self.kind == Kind::Bulk {
            for _ in 0..2 {
                s.push(self.rows.of(id) * 2 * self.n, 8);
            }
        }
        s
    }

    /// Transform one row in place.
    fn transform(&self, row: &mut [u64], buf: &mut [Complex<f64>], scratch: &mut [Complex<f64>]) {
        for (c, w) in buf.iter_mut().zip(row.chunks_exact(2)) {
            *c = Complex::new(f64::from_bits(w[0]), f64::from_bits(w[1]));
        }
        self.fft.process_with_scratch(buf, scratch);
        for (c, w) in buf.iter().zip(row.chunks_exact_mut(2)) {
            w[0] = c.re.to_bits();
            w[1] = c.im.to_bits();
        }
    }

    /// Phases 1 and 3: the FFTs of this processor's rows of matrix `k`.
    fn row_ffts<N: Node<State = State>>(&self, node: &mut N, k: usize, sh: Option<&Shared>, mine: &Arrays) {
        let id = node.id();
        let words = 2 * self.n;
        let work = butterflies(self.n) * self.butterfly_cycles;
        let mut buf = vec![Complex::new(0.0, 0.0); self.n];
        let mut scratch = vec![Complex::new(0.0, 0.0); self.fft.get_inplace_scratch_len()];
        let mut row = vec![0u64; words];
        for r in 0..self.rows.of(id) {
            match sh {
                Some(sh) => {
                    for (w, v) in row.iter_mut().enumerate() {
                        *v = node.load(self.at(sh.mat[k], id, r, w));
                    }
                    node.compute(work);
                    self.transform(&mut row, &mut buf, &mut scratch);
                    for (w, &v) in row.iter().enumerate() {
                        node.store(self.at(sh.mat[k], id, r, w), v);
                    }
                }
                None => {
                    for w in 0..words {
                        mine.read(node, k, r * words + w);
                    }
                    node.compute(work);
                    node.state(|s| self.transform(&mut s.mat[k][r * words..(r + 1) * words], &mut buf, &mut scratch));
                    for w in 0..words {
                        mine.write(node, k, r * words + w);
                    }
                }
            }
        }
    }

    /// Phases 2 and 4: `mat[1 - k] = transpose(mat[k])`.
    fn transpose<N: Node<State = State>>(&self, node: &mut N, k: usize, sh: Option<&Shared>, mine: &Arrays) {
        let (me, nprocs) = (node.id(), node.nprocs());
        let (n, rows) = (self.n, &self.rows);
        let (mr, m0) = (rows.of(me), rows.start[me]);
        let others = || (1..nprocs).map(move |s| (me + s) % nprocs);
        let Some(sh) = sh else {
            self.transpose_bulk(node, k, mine);
            return;
        };
        let (src, dst) = (sh.mat[k], sh.mat[1 - k]);
        // One-sided variants move every block, their own last, by gets and puts (a request
        // to the processor's own memory is served there without the network).
        let blocks = || (1..=nprocs).map(move |s| (me + s) % nprocs);
        if self.kind == Kind::Sm {
            // The diagonal block, by local loads and stores.
            for i in 0..mr {
                for j in 0..mr {
                    for h in 0..2 {
                        let v = node.load(self.at(src, me, i, 2 * (m0 + j) + h));
                        node.store(self.at(dst, me, j, 2 * (m0 + i) + h), v);
                    }
                }
            }
        }
        match self.kind {
            Kind::Sm => {
                for p in others() {
                    for i in 0..rows.of(p) {
                        for j in 0..mr {
                            for h in 0..2 {
                                let v = node.load(self.at(src, p, i, 2 * (m0 + j) + h));
                                node.store(self.at(dst, me, j, 2 * (rows.start[p] + i) + h), v);
                            }
                        }
                    }
                }
            }
            Kind::Fetch => {
                for p in blocks() {
                    for j in 0..mr {
                        for h in 0..2 {
                            let from = self.at(src, p, 0, 2 * (m0 + j) + h);
                            let to = self.at(dst, me, j, 2 * rows.start[p] + h);
                            node.get(to, 2, from, 2 * n, rows.of(p));
                        }
                    }
                }
                node.quiet();
            }
            Kind::Deposit => {
                for q in blocks() {
                    for i in 0..mr {
                        for h in 0..2 {
                            let from = self.at(src, me, i, 2 * rows.start[q] + h);
                            let to = self.at(dst, q, 0, 2 * (m0 + i) + h);
                            node.put(to, 2 * n, from, 2, rows.of(q));
                        }
                    }
                }
                node.quiet();
            }
            Kind::PackFetch | Kind::PackDeposit => self.transpose_packed(node, k, sh),
            Kind::Bulk => unreachable!("bulk has no shared matrices"),
        }
    }

    /// The bulk transpose: one DMA message per block to its owner, then the diagonal block locally.
    fn transpose_bulk<N: Node<State = State>>(&self, node: &mut N, k: usize, mine: &Arrays) {
        let (me, nprocs) = (node.id(), node.nprocs());
        let (n, rows) = (self.n, &self.rows);
        let (mr, m0) = (rows.of(me), rows.start[me]);
        let others = || (1..nprocs).map(move |s| (me + s) % nprocs);
        // bulk: one DMA message per block, then the diagonal block locally.
        for q in others() {
            let (c0, cw) = (2 * rows.start[q], 2 * rows.of(q));
            let block: Vec<Vec<u64>> =
                node.state(|s| (0..mr).map(|i| s.mat[k][i * 2 * n + c0..i * 2 * n + c0 + cw].to_vec()).collect());
            let regions: Vec<&[u64]> = block.iter().map(Vec::as_slice).collect();
            node.send_bulk(q, BLOCK, &[(1 - k) as u64, me as u64], &regions);
            node.state(|s| {
                s.blocks_sent += 1;
                s.words_sent += (mr * cw) as u64;
            });
        }
        for i in 0..mr {
            for j in 0..mr {
                for h in 0..2 {
                    mine.read(node, k, i * 2 * n + 2 * (m0 + j) + h);
                    mine.write(node, 1 - k, j * 2 * n + 2 * (m0 + i) + h);
                }
                node.state(|s| {
                    for h in 0..2 {
                        s.mat[1 - k][j * 2 * n + 2 * (m0 + i) + h] = s.mat[k][i * 2 * n + 2 * (m0 + j) + h];
                    }
                });
            }
        }
        let want = (nprocs - 1) as u64;
        node.wait_until("fft2d blocks of this transpose", |s| s.received[1 - k] == want);
    }

    /// The packing transposes: each block packed by local copies, then fetched or deposited contiguously.
    fn transpose_packed<N: Node<State = State>>(&self, node: &mut N, k: usize, sh: &Shared) {
        let (me, nprocs) = (node.id(), node.nprocs());
        let rows = &self.rows;
        let (mr, m0) = (rows.of(me), rows.start[me]);
        let (src, dst) = (sh.mat[k], sh.mat[1 - k]);
        let blocks = || (1..=nprocs).map(move |s| (me + s) % nprocs);
        let pack = sh.pack.expect("pack buffers allocated");
        // Block (me, q) transposed: q's rows of B over my columns, `2 mr` words a row,
        // at word `2 mr start[q]` of my region (read along my rows, stored strided).
        let packed = |p: ProcId, q: ProcId, j: usize| pack.word(p * self.region + 2 * rows.of(p) * (rows.start[q] + j));
        for q in blocks() {
            for i in 0..mr {
                for j in 0..rows.of(q) {
                    for h in 0..2 {
                        let v = node.load(self.at(src, me, i, 2 * (rows.start[q] + j) + h));
                        node.store(packed(me, q, j).word(2 * i + h), v);
                    }
                }
            }
        }
        if self.kind == Kind::PackFetch {
            node.barrier();
            for p in blocks() {
                for j in 0..mr {
                    let to = self.at(dst, me, j, 2 * rows.start[p]);
                    node.get(to, 1, packed(p, me, j), 1, 2 * rows.of(p));
                }
            }
        } else {
            for q in blocks() {
                for j in 0..rows.of(q) {
                    let to = self.at(dst, q, j, 2 * m0);
                    node.put(to, 1, packed(me, q, j), 1, 2 * mr);
                }
            }
        }
        node.quiet();
    }
}

impl Program for Fft2d {
    type State = State;

    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_block]
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        self.shape(id).words()
    }
    fn receive_mode(&self) -> ReceiveMode {
        // The one-sided variants' only messages are the barrier's: the study's programs keep
        // synchronization apart from the data, which lands "without involvement of the
        // processor at the receiver node (... no requirement to generate an interrupt)"
        // (002 §3), so a barrier message is taken when its receiver reaches the barrier.
        // `bulk`'s blocks are handled as they arrive.
        if self.kind.one_sided() {
            ReceiveMode::Polling
        } else {
            ReceiveMode::Interrupt
        }
    }
    fn barrier_kind(&self) -> BarrierKind {
        barrier_kind_of(self.kind == Kind::Sm)
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let n = self.n;
        let mut s = State { n, start: self.rows.start.clone(), ..State::default() };
        if self.kind == Kind::Bulk {
            let rows = self.rows.start[id]..self.rows.start[id + 1];
            s.mat = [self.input[2 * n * rows.start..2 * n * rows.end].to_vec(), vec![0; 2 * n * rows.len()]];
        }
        s
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let id = node.id();
        let nprocs = node.nprocs();
        let mine = Arrays::set_up(node, &self.shape(id), self.line_bytes);
        let sh = (self.kind != Kind::Bulk).then(|| {
            let words = self.region * nprocs;
            let mat = [node.alloc_shared(words, Placement::Block), node.alloc_shared(words, Placement::Block)];
            let pack = self.kind.packed().then(|| node.alloc_shared(words, Placement::Block));
            // Set-up (untimed): the owner stores its rows of the input.
            let r0 = self.rows.start[id];
            for r in 0..self.rows.of(id) {
                for w in 0..2 * self.n {
                    node.store(self.at(mat[0], id, r, w), self.input[(r0 + r) * 2 * self.n + w]);
                }
            }
            node.state(|s| s.a = Some(mat[0]));
            Shared { mat, pack }
        });
        node.barrier();
        node.begin_timing();
        let mut t = node.now_cycles();
        let (mut fft, mut transpose) = (0.0, 0.0);
        for (phase, k) in [0usize, 1].into_iter().enumerate() {
            if id == 0 {
                node.progress(2 * phase as u64, 4);
            }
            self.row_ffts(node, k, sh.as_ref(), &mine);
            node.barrier();
            let now = node.now_cycles();
            fft += now - t;
            t = now;
            if id == 0 {
                node.progress(2 * phase as u64 + 1, 4);
            }
            self.transpose(node, k, sh.as_ref(), &mine);
            node.barrier();
            let now = node.now_cycles();
            transpose += now - t;
            t = now;
        }
        node.state(|s| {
            s.fft_cycles = fft;
            s.transpose_cycles = transpose;
        });
    }
}

/// The sequential reference: row FFTs, then column FFTs, of the `n` x `n` input (row-major,
/// re and im words); the transform row-major as complex values.
fn sequential(n: usize, input: &[u64]) -> Vec<Complex<f64>> {
    let fft = FftPlanner::new().plan_fft_forward(n);
    let mut x: Vec<Complex<f64>> =
        input.chunks_exact(2).map(|w| Complex::new(f64::from_bits(w[0]), f64::from_bits(w[1]))).collect();
    for row in x.chunks_exact_mut(n) {
        fft.process(row);
    }
    let mut col = vec![Complex::new(0.0, 0.0); n];
    for j in 0..n {
        for (i, c) in col.iter_mut().enumerate() {
            *c = x[i * n + j];
        }
        fft.process(&mut col);
        for (i, c) in col.iter().enumerate() {
            x[i * n + j] = *c;
        }
    }
    x
}

/// The input: `2 n^2` words, each an `f64` uniform in `[-1, 1)`.
fn input(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..2 * n * n).map(|_| rng.random_range(-1.0f64..1.0).to_bits()).collect()
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let n: usize = params
        .get("n", ("a power of two from 4 to 1024", |v: usize| v.is_power_of_two() && (4..=1024).contains(&v)))?;
    let kind = Kind::from_name(variant);
    let nprocs = backend.nprocs();
    if n < nprocs {
        return Err(AppError::Input(format!(
            "--param n={n}: fft2d gives every processor at least one row, so n must be at least the {nprocs} processors"
        )));
    }
    if kind.one_sided() && !backend.one_sided() {
        return Err(AppError::Input(format!(
            "fft2d variant `{variant}` transposes by one-sided gets and puts, and this machine has no one-sided remote access (no [remote] section in its machine file); variants that run here: sm, bulk"
        )));
    }
    let rows = Rows::new(n, nprocs);
    let line_words = (backend.line_bytes() / 8).max(1);
    let region = (rows.max() * 2 * n).div_ceil(line_words) * line_words;
    let prog = Arc::new(Fft2d {
        kind,
        n,
        rows: rows.clone(),
        region,
        input: input(n, seed),
        fft: FftPlanner::new().plan_fft_forward(n),
        butterfly_cycles: cost(backend, "fft_butterfly")?,
        line_bytes: backend.line_bytes(),
    });
    let out = backend.run(Arc::clone(&prog)).map_err(run_err)?;

    // The answer: A after the transpose back, against the sequential transform.
    let want = sequential(n, &prog.input);
    let mut got = vec![Complex::new(f64::NAN, f64::NAN); n * n];
    for p in 0..nprocs {
        for r in 0..rows.of(p) {
            for c in 0..n {
                let (re, im) = if kind == Kind::Bulk {
                    let m = &out.states[p].mat[0];
                    (m[r * 2 * n + 2 * c], m[r * 2 * n + 2 * c + 1])
                } else {
                    let a = out.states[0].a.expect("the shared matrix A");
                    (out.load(prog.at(a, p, r, 2 * c)), out.load(prog.at(a, p, r, 2 * c + 1)))
                };
                got[(rows.start[p] + r) * n + c] = Complex::new(f64::from_bits(re), f64::from_bits(im));
            }
        }
    }
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.norm())).max(f64::MIN_POSITIVE);
    let max_error = want.iter().zip(&got).fold(0.0f64, |m, (w, g)| {
        let e = (w - g).norm() / scale;
        if e.is_nan() {
            f64::INFINITY
        } else {
            m.max(e)
        }
    });
    let sum = |f: fn(&State) -> u64| out.states.iter().map(f).sum::<u64>();
    let (sent, received) = (sum(|s| s.blocks_sent), sum(|s| s.received[0] + s.received[1]));
    let expected = if kind == Kind::Bulk { (2 * nprocs * (nprocs - 1)) as u64 } else { 0 };
    const TOLERANCE: f64 = 1e-10;
    let ok = max_error <= TOLERANCE && sent == expected && received == expected;

    let mut counters = BTreeMap::new();
    let flops = 5.0 * (n * n) as f64 * (2.0 * n.trailing_zeros() as f64);
    let us = out.stats.cycles / backend.cycles_per_us();
    counters.set(&FLOPS, flops);
    counters.set(&MFLOPS, if us > 0.0 { flops / us } else { 0.0 });
    let max = |f: fn(&State) -> f64| out.states.iter().map(f).fold(0.0, f64::max);
    counters.set(&FFT_CYCLES, max(|s| s.fft_cycles));
    counters.set(&TRANSPOSE_CYCLES, max(|s| s.transpose_cycles));
    counters.set(&ROWS_PER_PROCESSOR_MAX, rows.max() as f64);
    counters.set(&BUTTERFLIES_PER_PROCESSOR_MAX, (2 * rows.max() as u64 * butterflies(n)) as f64);
    if kind == Kind::Bulk {
        counters.set(&BLOCKS_SENT, sent as f64);
        counters.set(&BLOCKS_RECEIVED, received as f64);
        counters.set(&BLOCK_BYTES, (8 * sum(|s| s.words_sent)) as f64);
        counters.set(&BLOCK_BYTES_RECEIVED, (8 * sum(|s| s.words_received)) as f64);
    }
    let mut detail = format!(
        "{n} x {n} 2-D FFT on {nprocs} processors vs sequential rustfft rows-then-columns: max error {max_error:.2e} relative to the largest magnitude (tolerance {TOLERANCE:.0e})"
    );
    if kind == Kind::Bulk {
        detail += &format!("; {sent} blocks sent, {received} received, {expected} expected");
    }
    Ok(result(out.stats, counters, Check { ok, max_error, detail }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFT by its definition, `X[k1][k2] = sum x[a][b] e^{-2 pi i (a k1 + b k2) / n}`.
    fn naive(n: usize, input: &[u64]) -> Vec<Complex<f64>> {
        let x: Vec<Complex<f64>> =
            input.chunks_exact(2).map(|w| Complex::new(f64::from_bits(w[0]), f64::from_bits(w[1]))).collect();
        let mut out = vec![Complex::new(0.0, 0.0); n * n];
        for k1 in 0..n {
            for k2 in 0..n {
                let mut s = Complex::new(0.0, 0.0);
                for a in 0..n {
                    for b in 0..n {
                        let angle = -2.0 * std::f64::consts::PI * ((a * k1 + b * k2) % n) as f64 / n as f64;
                        s += x[a * n + b] * Complex::new(angle.cos(), angle.sin());
                    }
                }
                out[k1 * n + k2] = s;
            }
        }
        out
    }

    #[test]
    fn the_sequential_reference_is_the_2d_dft() {
        for n in [4, 8, 16] {
            let x = input(n, 5);
            let (fast, slow) = (sequential(n, &x), naive(n, &x));
            for (f, s) in fast.iter().zip(&slow) {
                assert!((f - s).norm() < 1e-10 * n as f64 * n as f64, "n={n}: {f} vs {s}");
            }
        }
    }

    #[test]
    fn rows_cover_the_matrix_and_differ_by_at_most_one() {
        for (n, p) in [(16, 4), (16, 12), (32, 32), (8, 3)] {
            let r = Rows::new(n, p);
            assert_eq!((0..p).map(|q| r.of(q)).sum::<usize>(), n);
            let min = (0..p).map(|q| r.of(q)).min().unwrap();
            assert!(r.max() - min <= 1 && min >= 1, "n={n} p={p}");
        }
        assert_eq!(butterflies(256), 128 * 8);
    }
}
