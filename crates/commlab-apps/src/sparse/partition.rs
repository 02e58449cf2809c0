//! Graph partitioners: the choice among them, METIS (the vendored copy built by the `metis`
//! crate), contiguous blocks of the numbering, ([`super::rsb`]) multilevel recursive
//! spectral bisection, and ([`super::linear`]) Chaco's linear method refined by KL.

use super::graph::WGraph;
use super::matrix::SymMatrix;
use std::sync::Mutex;

/// METIS keeps its random-number state in C globals (GKlib's `random.c`), so two calls running
/// at once on different threads would disturb each other's results. Every call holds this lock.
static METIS_LOCK: Mutex<()> = Mutex::new(());

/// METIS seed, fixed so that partitions are reproducible.
const METIS_SEED: i32 = 1;

/// A graph partitioner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partitioner {
    /// METIS k-way ([`partition_graph`]).
    Metis,
    /// Multilevel recursive spectral bisection with KL refinement, as Chaco ([`super::rsb`]).
    Rsb,
    /// Contiguous blocks of the vertex numbering ([`natural`]).
    Natural,
    /// Recursive bisection of the vertex numbering refined by KL, as Chaco's linear global
    /// method with KL local refinement (`linear.rs`).
    LinearKl,
}

impl Partitioner {
    /// Names accepted by [`Partitioner::from_name`], in documentation order.
    pub const NAMES: [&'static str; 4] = ["metis", "rsb", "natural", "linear-kl"];

    pub fn from_name(name: &str) -> Option<Partitioner> {
        match name {
            "metis" => Some(Partitioner::Metis),
            "rsb" => Some(Partitioner::Rsb),
            "natural" => Some(Partitioner::Natural),
            "linear-kl" => Some(Partitioner::LinearKl),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Partitioner::Metis => "metis",
            Partitioner::Rsb => "rsb",
            Partitioner::Natural => "natural",
            Partitioner::LinearKl => "linear-kl",
        }
    }

    /// The part (`0..nparts`) of every vertex of `g`, balancing vertex weight and keeping the
    /// cut edge weight small (except `natural`, which only balances). `nparts` must be in
    /// `1..=n`. A part may stay empty only when vertex weights make it unavoidable.
    pub fn partition(self, g: &WGraph, nparts: usize) -> Result<Vec<usize>, String> {
        let n = g.n();
        if nparts == 0 {
            return Err("partition: nparts must be at least 1".into());
        }
        if nparts > n {
            return Err(format!(
                "partition: {nparts} parts requested for only {n} vertices (at most one part per vertex)"
            ));
        }
        match self {
            Partitioner::Metis => partition_graph(g, nparts),
            Partitioner::Rsb => Ok(super::rsb::rsb(g, nparts)),
            Partitioner::Natural => Ok(natural(g, nparts)),
            Partitioner::LinearKl => Ok(super::linear::linear_kl(g, nparts)),
        }
    }
}

/// Contiguous blocks of the vertex numbering of about equal weight: vertex `v`, whose
/// predecessors weigh `before`, goes to part `floor((before + w_v / 2) * nparts / total)`, the
/// part its weight's midpoint falls in. With unit weights and `nparts <= n` no part is empty.
pub fn natural(g: &WGraph, nparts: usize) -> Vec<usize> {
    let total = g.total_vwgt().max(1) as u128;
    let mut before = 0u128;
    g.vwgt
        .iter()
        .map(|&w| {
            let p = ((2 * before + w as u128) * nparts as u128 / (2 * total)) as usize;
            before += w as u128;
            p.min(nparts - 1)
        })
        .collect()
}

/// METIS k-way partition (`METIS_PartGraphKway`, default options, fixed seed, minimising edge
/// cut with METIS's default 3% imbalance tolerance) of the matrix graph: nodes are rows, edges
/// the stored off-diagonal positions (explicit zeros included). Returns the part of each node,
/// in `0..nparts`.
///
/// `nparts == 1` gives all zeros without calling METIS; `nparts == 0` or `nparts > n` is an
/// error. METIS may leave a part empty when `nparts` is close to `n`; a deterministic fix-up
/// then moves the highest-numbered node of the largest part into each empty part, so every part
/// is non-empty. Deterministic: same matrix and `nparts` give the same answer, on any thread.
pub fn partition(a: &SymMatrix, nparts: usize) -> Result<Vec<usize>, String> {
    if nparts > a.n {
        return Err(format!("partition: {nparts} parts requested for only {} rows (at most one part per row)", a.n));
    }
    partition_graph(&WGraph::of_matrix(a), nparts)
}

/// METIS k-way partition of a weighted graph (vertex weights balanced, edge weights cut), as
/// [`partition`] describes.
pub fn partition_graph(g: &WGraph, nparts: usize) -> Result<Vec<usize>, String> {
    let n = g.n();
    if nparts == 0 {
        return Err("partition: nparts must be at least 1".into());
    }
    if nparts > n {
        return Err(format!("partition: {nparts} parts requested for only {n} vertices (at most one part per vertex)"));
    }
    if nparts == 1 {
        return Ok(vec![0; n]);
    }
    let too_big = || format!("partition: graph too large for METIS's 32-bit indices ({} edge entries)", g.adj.len());
    let fits = |x: u64| metis::Idx::try_from(x).is_ok();
    if !fits(g.adj.len() as u64) || !fits(n as u64) || !fits(g.total_vwgt()) || !g.ewgt.iter().all(|&w| fits(w)) {
        return Err(too_big());
    }
    let xadj: Vec<metis::Idx> = g.xadj.iter().map(|&x| x as metis::Idx).collect();
    let adjncy: Vec<metis::Idx> = g.adj.iter().map(|&u| u as metis::Idx).collect();
    let vwgt: Vec<metis::Idx> = g.vwgt.iter().map(|&w| w as metis::Idx).collect();
    let adjwgt: Vec<metis::Idx> = g.ewgt.iter().map(|&w| w as metis::Idx).collect();
    let mut part: Vec<metis::Idx> = vec![0; n];
    {
        let _guard = METIS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        metis::Graph::new(1, nparts as metis::Idx, &xadj, &adjncy)
            .map_err(|e| format!("partition: METIS rejected the graph: {e}"))?
            .set_vwgt(&vwgt)
            .set_adjwgt(&adjwgt)
            .set_option(metis::option::Seed(METIS_SEED))
            .part_kway(&mut part)
            .map_err(|e| format!("partition: METIS failed: {e}"))?;
    }
    let mut part: Vec<usize> = part.into_iter().map(|p| p as usize).collect();
    if let Some(bad) = part.iter().find(|&&p| p >= nparts) {
        return Err(format!("partition: METIS returned part {bad}, out of range 0..{nparts}"));
    }
    fill_empty_parts(&mut part, nparts);
    Ok(part)
}

/// Gives each empty part one node: the highest-numbered node of the currently largest part
/// (lowest part number on ties). Needs `nparts <= part.len()`.
fn fill_empty_parts(part: &mut [usize], nparts: usize) {
    let mut size = vec![0usize; nparts];
    for &p in part.iter() {
        size[p] += 1;
    }
    for empty in 0..nparts {
        if size[empty] > 0 {
            continue;
        }
        let largest = (0..nparts).max_by_key(|&p| (size[p], std::cmp::Reverse(p))).unwrap_or(0);
        if let Some(node) = part.iter().rposition(|&p| p == largest) {
            part[node] = empty;
            size[largest] -= 1;
            size[empty] += 1;
        }
    }
}

/// Number of edges (unordered off-diagonal positions) whose endpoints lie in different parts.
pub fn edge_cut(a: &SymMatrix, part: &[usize]) -> usize {
    (0..a.n).map(|i| a.row(i).0.iter().filter(|&&j| (j as usize) < i && part[j as usize] != part[i]).count()).sum()
}

#[cfg(test)]
mod tests {
    use super::super::fe_stiffness;
    use super::*;

    #[test]
    fn trivial_and_invalid_part_counts() {
        let a = fe_stiffness(2, 3).unwrap();
        assert_eq!(partition(&a, 1).unwrap(), vec![0; 16]);
        assert!(partition(&a, 0).is_err());
        assert!(partition(&a, 17).unwrap_err().contains("only 16 rows"));
        let p = partition(&a, 16).unwrap();
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn fe_grid_partition_is_balanced_with_small_cut() {
        let a = fe_stiffness(2, 40).unwrap();
        for nparts in [2, 4, 7, 16] {
            let p = partition(&a, nparts).unwrap();
            assert_eq!(p, partition(&a, nparts).unwrap(), "deterministic");
            let mut size = vec![0; nparts];
            for &x in &p {
                size[x] += 1;
            }
            let ideal = a.n as f64 / nparts as f64;
            assert!(size.iter().all(|&s| s > 0 && s as f64 <= 1.05 * ideal + 1.0), "{nparts}: {size:?}");
            // A k-way cut of an m x m 9-point grid is about 3 * m * sqrt(k) edges; random is ~4 * n.
            let cut = edge_cut(&a, &p);
            assert!(cut < a.nnz() / 10, "{nparts} parts: cut {cut}");
        }
    }

    #[test]
    fn edgeless_graph() {
        let a = SymMatrix::from_triplets(10, &[]).unwrap();
        let p = partition(&a, 3).unwrap();
        let mut size = [0; 3];
        for &x in &p {
            size[x] += 1;
        }
        assert!(size.iter().all(|&s| s > 0));
        assert_eq!(edge_cut(&a, &p), 0);
    }

    #[test]
    fn fill_empty_parts_is_deterministic() {
        let mut p = vec![0, 0, 0, 1, 1];
        fill_empty_parts(&mut p, 4);
        assert_eq!(p, vec![0, 3, 2, 1, 1]);
    }
}
