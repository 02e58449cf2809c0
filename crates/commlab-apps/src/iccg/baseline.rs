//! The common sequential baseline of ICCG's `speedup`: the plain triangular solve on one
//! processor, as the study's optimised sequential kernel, with no locks, messages or presence
//! counters. Every variant's speedup divides this program's cycles by its own.
//!
//! Row-oriented ("pull") form in the colour-ordered numbering: the forward solve visits rows
//! `i = 0..n` and computes `y[i] = (b[i] - sum_j L[i][j] y[j]) / L[i][i]` over the row's
//! strictly-lower entries; the backward solve (with `solves=both`) visits `i = n-1..=0` and
//! computes `x[i] = (y[i] - sum_j L[j][i] x[j]) / L[i][i]` over column `i` below the diagonal.
//! Work: `costs.iccg_node` per row and `costs.iccg_edge` per off-diagonal entry, the same
//! named costs the parallel kernel charges per node and per edge.
//!
//! Data: the solution vectors live in shared memory homed on the one processor ([`Vectors`]),
//! so every load is local: a cache hit, or a local miss. The matrix and the right-hand side
//! are private arrays referenced through the cache as in the parallel kernel: the diagonal
//! and right-hand side (8 bytes a row), and per solve the row's entry count (4 bytes), and per
//! entry its column (4 bytes) and coefficient (8 bytes).

use super::kernel::Costs;
use crate::private::{Arrays, Shape};
use crate::sparse::LowerFactor;
use commlab_api::{Addr, BarrierKind, Node, Placement, ProcId, Program};

/// The baseline program for one factor and right-hand side. Run it on one processor.
pub struct Baseline {
    n: usize,
    /// 1: forward solve; 2: forward, then backward.
    solves: usize,
    diag: Vec<f64>,
    /// Entries each row needs, per solve (CSR): the other unknown and the coefficient.
    /// Forward: row `i` of `L` (columns increasing); backward: column `i` of `L` below the
    /// diagonal (rows increasing).
    ptr: [Vec<usize>; 2],
    idx: [Vec<u32>; 2],
    coef: [Vec<f64>; 2],
    rhs: Vec<f64>,
    costs: Costs,
    line_bytes: usize,
}

/// The baseline's private arrays: `DIAG`, `RHS`, then per solve `COUNT`, `COLUMN`, `COEF`.
const DIAG: usize = 0;
const RHS: usize = 1;
fn per_solve(solve: usize, which: usize) -> usize {
    2 + 3 * solve + which
}
const COUNT: usize = 0;
const COLUMN: usize = 1;
const COEF: usize = 2;

/// The computed `y` (forward) and `x` (backward, if run), in the colour-ordered numbering.
pub struct State {
    pub result: [Vec<f64>; 2],
}

impl Baseline {
    pub fn new(l: &LowerFactor, rhs: &[f64], solves: usize, costs: Costs, line_bytes: usize) -> Baseline {
        let n = l.n;
        let mut diag = Vec::with_capacity(n);
        let (mut fptr, mut fidx, mut fcoef) = (vec![0usize], Vec::new(), Vec::new());
        let mut below = vec![0usize; n + 1];
        for i in 0..n {
            let (c, v, d) = l.row(i);
            diag.push(d);
            fidx.extend_from_slice(c);
            fcoef.extend_from_slice(v);
            fptr.push(fidx.len());
            for &j in c {
                below[j as usize + 1] += 1;
            }
        }
        for i in 0..n {
            below[i + 1] += below[i];
        }
        let mut next = below[..n].to_vec();
        let (mut bidx, mut bcoef) = (vec![0u32; fidx.len()], vec![0.0; fidx.len()]);
        for i in 0..n {
            let (c, v, _) = l.row(i);
            for (&j, &x) in c.iter().zip(v) {
                bidx[next[j as usize]] = i as u32;
                bcoef[next[j as usize]] = x;
                next[j as usize] += 1;
            }
        }
        Baseline {
            n,
            solves,
            diag,
            ptr: [fptr, below],
            idx: [fidx, bidx],
            coef: [fcoef, bcoef],
            rhs: rhs.to_vec(),
            costs,
            line_bytes,
        }
    }
}

/// The baseline's solution vectors in shared memory, one per solve, homed on processor 0.
struct Vectors {
    base: Vec<Addr>,
}

impl Vectors {
    fn alloc<N: Node>(node: &mut N, n: usize, solves: usize) -> Vectors {
        Vectors { base: (0..solves).map(|_| node.alloc_shared(n, Placement::OnNode(0))).collect() }
    }
    fn read<N: Node>(&self, node: &mut N, solve: usize, i: usize) -> f64 {
        node.load_f64(self.base[solve].word(i))
    }
    fn write<N: Node>(&self, node: &mut N, solve: usize, i: usize, value: f64) {
        node.store_f64(self.base[solve].word(i), value)
    }
}

impl Baseline {
    fn shape(&self) -> Shape {
        let mut s = Shape::default();
        s.push(self.n, 8);
        s.push(self.n, 8);
        for solve in 0..self.solves {
            let entries = self.idx[solve].len();
            s.push(self.n, 4);
            s.push(entries, 4);
            s.push(entries, 8);
        }
        s
    }
}

impl Program for Baseline {
    type State = State;

    fn private_arrays(&self, _: ProcId) -> Vec<usize> {
        self.shape().words()
    }
    fn barrier_kind(&self) -> BarrierKind {
        crate::app::barrier_kind_of(true)
    }
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State { result: [vec![0.0; self.n], vec![0.0; self.n]] }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        assert_eq!(node.nprocs(), 1, "the ICCG baseline runs on one processor");
        let vectors = Vectors::alloc(node, self.n, self.solves);
        let mine = Arrays::set_up(node, &self.shape(), self.line_bytes);
        node.barrier();
        node.begin_timing();
        for solve in 0..self.solves {
            let rows: Box<dyn Iterator<Item = usize>> =
                if solve == 0 { Box::new(0..self.n) } else { Box::new((0..self.n).rev()) };
            for i in rows {
                mine.read(node, per_solve(solve, COUNT), i);
                let mut s = if solve == 0 {
                    mine.read(node, RHS, i);
                    self.rhs[i]
                } else {
                    vectors.read(node, 0, i)
                };
                for e in self.ptr[solve][i]..self.ptr[solve][i + 1] {
                    mine.read(node, per_solve(solve, COLUMN), e);
                    mine.read(node, per_solve(solve, COEF), e);
                    node.compute(self.costs.edge);
                    s -= self.coef[solve][e] * vectors.read(node, solve, self.idx[solve][e] as usize);
                }
                mine.read(node, DIAG, i);
                node.compute(self.costs.node);
                let x = s / self.diag[i];
                vectors.write(node, solve, i, x);
                node.state(|st| st.result[solve][i] = x);
            }
        }
    }
}
