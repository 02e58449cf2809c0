//! An undirected graph with vertex and edge weights, the common input of colouring and
//! partitioning (the scalar matrix graph, or the quotient graph of a compression, or a
//! coarsened graph inside the multilevel partitioner).

use super::matrix::SymMatrix;

/// Undirected weighted graph in CSR form: each edge is stored in both endpoints' lists, no
/// self-loops, at most one entry per neighbour. Weights are positive integers (counts of
/// scalar unknowns and of scalar edges), so sums are exact and order-independent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WGraph {
    /// Neighbours of `v` are `adj[xadj[v]..xadj[v + 1]]`, with weights `ewgt[..]` alike.
    pub xadj: Vec<usize>,
    pub adj: Vec<u32>,
    pub ewgt: Vec<u64>,
    pub vwgt: Vec<u64>,
}

impl WGraph {
    /// The graph of a matrix: a vertex per row, an edge per stored off-diagonal position
    /// (explicit zeros included), every weight 1.
    pub fn of_matrix(a: &SymMatrix) -> WGraph {
        let mut xadj = Vec::with_capacity(a.n + 1);
        xadj.push(0);
        let mut adj = Vec::with_capacity(a.nnz().saturating_sub(a.n));
        for i in 0..a.n {
            adj.extend(a.row(i).0.iter().filter(|&&j| j as usize != i));
            xadj.push(adj.len());
        }
        let ewgt = vec![1; adj.len()];
        WGraph { xadj, adj, ewgt, vwgt: vec![1; a.n] }
    }

    pub fn n(&self) -> usize {
        self.vwgt.len()
    }

    /// Neighbours of `v` and the weights of the edges to them.
    pub fn edges(&self, v: usize) -> (&[u32], &[u64]) {
        let r = self.xadj[v]..self.xadj[v + 1];
        (&self.adj[r.clone()], &self.ewgt[r])
    }

    pub fn total_vwgt(&self) -> u64 {
        self.vwgt.iter().sum()
    }

    /// Sum of the weights of edges whose endpoints lie in different parts (each edge once).
    pub fn cut(&self, part: &[usize]) -> u64 {
        (0..self.n())
            .map(|v| {
                let (nb, w) = self.edges(v);
                nb.iter().zip(w).filter(|(&u, _)| part[u as usize] != part[v]).map(|(_, &w)| w).sum::<u64>()
            })
            .sum::<u64>()
            / 2
    }

    /// The subgraph induced by the vertices with `keep[v]`, numbered in increasing order of
    /// their index here; returns it and the original index of each of its vertices.
    pub fn induced(&self, keep: &[bool]) -> (WGraph, Vec<u32>) {
        let mut local = vec![u32::MAX; self.n()];
        let mut orig = Vec::new();
        for v in 0..self.n() {
            if keep[v] {
                local[v] = orig.len() as u32;
                orig.push(v as u32);
            }
        }
        let mut g = WGraph { xadj: vec![0], adj: Vec::new(), ewgt: Vec::new(), vwgt: Vec::with_capacity(orig.len()) };
        for &v in &orig {
            let (nb, w) = self.edges(v as usize);
            for (&u, &w) in nb.iter().zip(w) {
                if local[u as usize] != u32::MAX {
                    g.adj.push(local[u as usize]);
                    g.ewgt.push(w);
                }
            }
            g.xadj.push(g.adj.len());
            g.vwgt.push(self.vwgt[v as usize]);
        }
        (g, orig)
    }

    /// Checks the representation: CSR shape, neighbours in range, no self-loop or repeated
    /// neighbour, every edge present in both directions with the same weight, positive weights.
    pub fn check(&self) -> Result<(), String> {
        let n = self.n();
        if self.xadj.len() != n + 1 || self.xadj[0] != 0 || self.xadj[n] != self.adj.len() {
            return Err("xadj has the wrong shape".into());
        }
        if self.ewgt.len() != self.adj.len() {
            return Err("ewgt and adj differ in length".into());
        }
        let mut seen = vec![usize::MAX; n];
        for v in 0..n {
            if self.xadj[v] > self.xadj[v + 1] {
                return Err(format!("xadj decreases at {v}"));
            }
            if self.vwgt[v] == 0 {
                return Err(format!("vertex {v} has weight 0"));
            }
            let (nb, w) = self.edges(v);
            for (&u, &w) in nb.iter().zip(w) {
                let u = u as usize;
                if u >= n || u == v || seen[u] == v || w == 0 {
                    return Err(format!("bad edge {v}-{u} (weight {w})"));
                }
                seen[u] = v;
                let (nu, wu) = self.edges(u);
                if !nu.iter().zip(wu).any(|(&x, &y)| x as usize == v && y == w) {
                    return Err(format!("edge {v}-{u} is not mirrored with weight {w}"));
                }
            }
        }
        Ok(())
    }
}
