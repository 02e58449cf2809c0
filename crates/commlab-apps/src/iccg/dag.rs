//! The sparse triangular solve as a DAG of nodes and weighted edges, distributed over
//! processors.
//!
//! Forward solve `L y = b`: node `j` is ready once every `i < j` with `L[j][i] != 0` has sent
//! `L[j][i] * y[i]`; then `y[j] = (b[j] - sum) / L[j][j]`. Backward solve `L^T x = y`: node `i`
//! waits for every `j > i` with `L[j][i] != 0` and computes `x[i] = (y[i] - sum) / L[i][i]`.
//! Both are the same shape: a node's *out-edges* carry `coef * value` to consumers; a node
//! starts from `rhs` and subtracts what arrives.

use crate::sparse::LowerFactor;

/// One triangular solve's DAG.
pub struct Dag {
    pub n: usize,
    pub diag: Vec<f64>,
    /// Incoming edges per node (the presence counter's start).
    pub indeg: Vec<u32>,
    /// Out-edges of each node (CSR): consumer and coefficient.
    pub out_ptr: Vec<usize>,
    pub out_dst: Vec<u32>,
    pub out_coef: Vec<f64>,
    /// Each processor's nodes in the order it completes them (a topological order).
    pub order: Vec<Vec<u32>>,
}

/// Which solve.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    Forward,
    Backward,
}

impl Dag {
    /// The DAG of the forward or backward solve with `l`, each node owned by `owner[node]`.
    /// Processors complete their nodes in increasing index order (forward) or decreasing
    /// (backward); with multicolour numbering that is colour order.
    pub fn new(l: &LowerFactor, owner: &[usize], procs: usize, dir: Direction) -> Dag {
        let n = l.n;
        let mut diag = Vec::with_capacity(n);
        let mut indeg = vec![0u32; n];
        let mut outdeg = vec![0usize; n];
        for j in 0..n {
            let (lo, hi) = (l.row_ptr[j], l.row_ptr[j + 1]);
            diag.push(l.val[hi - 1]);
            for &i in &l.col[lo..hi - 1] {
                match dir {
                    // Edge i -> j.
                    Direction::Forward => {
                        indeg[j] += 1;
                        outdeg[i as usize] += 1;
                    }
                    // Edge j -> i.
                    Direction::Backward => {
                        indeg[i as usize] += 1;
                        outdeg[j] += 1;
                    }
                }
            }
        }
        let mut out_ptr = Vec::with_capacity(n + 1);
        out_ptr.push(0);
        for d in &outdeg {
            out_ptr.push(out_ptr.last().expect("non-empty") + d);
        }
        let mut fill = out_ptr[..n].to_vec();
        let mut out_dst = vec![0u32; out_ptr[n]];
        let mut out_coef = vec![0.0; out_ptr[n]];
        for j in 0..n {
            let (lo, hi) = (l.row_ptr[j], l.row_ptr[j + 1]);
            for k in lo..hi - 1 {
                let i = l.col[k] as usize;
                let (src, dst) = match dir {
                    Direction::Forward => (i, j),
                    Direction::Backward => (j, i),
                };
                out_dst[fill[src]] = dst as u32;
                out_coef[fill[src]] = l.val[k];
                fill[src] += 1;
            }
        }
        let mut order = vec![Vec::new(); procs];
        for v in 0..n {
            order[owner[v]].push(v as u32);
        }
        if dir == Direction::Backward {
            for o in &mut order {
                o.reverse();
            }
        }
        Dag { n, diag, indeg, out_ptr, out_dst, out_coef, order }
    }

    pub fn edges(&self) -> usize {
        self.out_dst.len()
    }
}

impl Dag {
    /// The solve done functionally in DAG form: nodes in increasing (forward) or decreasing
    /// (backward) index order, each subtracting its contributions from its consumers, as the
    /// distributed kernel does. `base` is added to what a node accumulated before dividing.
    pub fn solve(&self, dir: Direction, rhs: &[f64]) -> Vec<f64> {
        let mut acc = rhs.to_vec();
        let mut x = vec![0.0; self.n];
        let mut visit = |v: usize| {
            x[v] = acc[v] / self.diag[v];
            for e in self.out_ptr[v]..self.out_ptr[v + 1] {
                acc[self.out_dst[e] as usize] -= self.out_coef[e] * x[v];
            }
        };
        match dir {
            Direction::Forward => (0..self.n).for_each(&mut visit),
            Direction::Backward => (0..self.n).rev().for_each(&mut visit),
        }
        x
    }
}
