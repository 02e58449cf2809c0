//! A partition whose cut is a given fraction of the edges, for running on a published
//! partition's locality when the partition itself is not available (the ICCG study's Table 4
//! gives only its percentages of non-local edges).
//!
//! [`raise_cut`] starts from a partition (ICCG: `rsb`'s) that cuts less than the target and
//! raises its cut by swapping pairs of vertices between parts, which keeps every part's weight
//! exactly as it was:
//! 1. Passes (at most [`MAX_PASSES`]) over the vertices in a seeded random order (a ChaCha8
//!    permutation per pass, from [`SEED`] and the part count). Each vertex is paired with the
//!    last unpaired vertex of the same weight seen in the pass: if that one is in another part,
//!    the two form a candidate swap (and both leave the waiting slot), else the vertex waits in
//!    its place.
//! 2. A candidate swap is made if it raises the cut and leaves it at most `hi` (the target plus
//!    the tolerance, [`TOLERANCE`]); its change of cut is computed from the two vertices'
//!    edges (the edge between them, if any, stays cut).
//! 3. The procedure stops at the first swap after which the cut reaches the target
//!    `fraction x total_edges` (or at once if the start already does, within the tolerance).
//!
//! The cut is counted in edge weight against `total_edges`: on a matrix's graph each edge
//! weighs 1 and `total_edges` is the matrix's off-diagonal pairs, so the fraction is the
//! fraction of the triangular solve's DAG edges that join two processors, exactly what ICCG's
//! `nonlocal_edge_fraction` counts. On a compressed (quotient) graph a vertex is a group of
//! unknowns weighing its size and an edge weighs the scalar edges between two groups, while
//! `total_edges` also counts the edges inside groups (never cut): only groups of equal size
//! are swapped, so every part keeps its number of unknowns, and the cut moves in steps of
//! whole group-to-group edges, which the tolerance absorbs (a step that would pass it is not
//! taken). Deterministic: no hashing, the order comes from the seeded stream only.

use super::graph::WGraph;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// How far the final fraction may lie above the target: half a percentage point.
pub const TOLERANCE: f64 = 0.005;
/// Seed of the swap order (xored with the part count).
pub const SEED: u64 = 0x0c07_0f4a;
/// Passes over the vertices before giving up.
pub const MAX_PASSES: usize = 32;

/// Why a cut cannot be raised to the target.
#[derive(Clone, Debug, PartialEq)]
pub enum CutError {
    /// The start already cuts more than the target plus the tolerance: its fraction.
    Below { start: f64 },
    /// Swaps stopped short of the target (no pass made progress, or the passes ran out): the
    /// fraction reached.
    Unreachable { reached: f64 },
}

/// The result of [`raise_cut`]: the partition, the swaps made and the fraction it cuts.
#[derive(Clone, Debug, PartialEq)]
pub struct Raised {
    pub part: Vec<usize>,
    pub swaps: usize,
    pub fraction: f64,
}

/// Raises the cut of `start` (a part in `0..nparts` per vertex of `g`) to `fraction` of
/// `total_edges`, within `+ TOLERANCE` (see the module documentation).
pub fn raise_cut(
    g: &WGraph,
    start: &[usize],
    nparts: usize,
    total_edges: u64,
    fraction: f64,
) -> Result<Raised, CutError> {
    let total = total_edges.max(1) as f64;
    let target = fraction * total;
    let hi = ((fraction + TOLERANCE) * total).floor() as u64;
    let mut part = start.to_vec();
    let mut cut = g.cut(&part);
    let frac = |c: u64| c as f64 / total;
    if cut > hi {
        return Err(CutError::Below { start: frac(cut) });
    }
    let mut swaps = 0;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ nparts as u64);
    let mut order: Vec<u32> = (0..g.n() as u32).collect();
    for _ in 0..MAX_PASSES {
        if cut as f64 >= target {
            break;
        }
        order.shuffle(&mut rng);
        let before = swaps;
        let mut waiting: BTreeMap<u64, usize> = BTreeMap::new();
        for &u in &order {
            let u = u as usize;
            let w = g.vwgt[u];
            match waiting.get(&w).copied() {
                Some(v) if part[v] != part[u] => {
                    waiting.remove(&w);
                    let delta = swap_delta(g, &part, v, u);
                    if delta > 0 && cut + delta as u64 <= hi {
                        part.swap(u, v);
                        cut += delta as u64;
                        swaps += 1;
                        if cut as f64 >= target {
                            break;
                        }
                    }
                }
                _ => {
                    waiting.insert(w, u);
                }
            }
        }
        if swaps == before {
            break;
        }
    }
    if (cut as f64) < target {
        return Err(CutError::Unreachable { reached: frac(cut) });
    }
    debug_assert_eq!(cut, g.cut(&part));
    Ok(Raised { part, swaps, fraction: frac(cut) })
}

/// Change of the cut if `u` and `v` (in different parts) exchange parts.
fn swap_delta(g: &WGraph, part: &[usize], u: usize, v: usize) -> i64 {
    let (a, b) = (part[u], part[v]);
    // A neighbour of `u` in `a` becomes cut, one in `b` uncut; `v` itself stays cut.
    let side = |x: usize, from: usize, to: usize, other: usize| {
        let (nb, ew) = g.edges(x);
        nb.iter()
            .zip(ew)
            .filter(|(&y, _)| y as usize != other)
            .map(|(&y, &w)| {
                let p = part[y as usize];
                if p == from {
                    w as i64
                } else if p == to {
                    -(w as i64)
                } else {
                    0
                }
            })
            .sum::<i64>()
    };
    side(u, a, b, v) + side(v, b, a, u)
}

#[cfg(test)]
mod tests {
    use super::super::{fe_stiffness, rsb, WGraph};
    use super::*;

    fn sizes(part: &[usize], g: &WGraph, nparts: usize) -> Vec<u64> {
        let mut s = vec![0; nparts];
        part.iter().zip(&g.vwgt).for_each(|(&p, &w)| s[p] += w);
        s
    }

    #[test]
    fn reaches_the_fraction_keeping_part_weights() {
        let g = WGraph::of_matrix(&fe_stiffness(2, 30).unwrap());
        let edges = g.adj.len() as u64 / 2;
        for nparts in [2, 4, 32] {
            let start = rsb(&g, nparts);
            let have = g.cut(&start) as f64 / edges as f64;
            for want in [have + 0.01, 0.3, 0.6] {
                let r = raise_cut(&g, &start, nparts, edges, want).unwrap();
                assert!(r.fraction >= want && r.fraction <= want + TOLERANCE, "{nparts}: {want} -> {}", r.fraction);
                assert_eq!(r.fraction, g.cut(&r.part) as f64 / edges as f64);
                assert_eq!(sizes(&r.part, &g, nparts), sizes(&start, &g, nparts), "{nparts}");
                assert_eq!(r, raise_cut(&g, &start, nparts, edges, want).unwrap(), "deterministic");
            }
            // At or just below the start's own fraction: nothing to do.
            assert_eq!(raise_cut(&g, &start, nparts, edges, have - 0.001).unwrap().swaps, 0);
            assert!(matches!(raise_cut(&g, &start, nparts, edges, have / 2.0), Err(CutError::Below { .. })));
        }
        // One part cuts nothing, ever; two parts cannot cut every edge.
        let one = vec![0; g.n()];
        assert_eq!(raise_cut(&g, &one, 1, edges, 0.1), Err(CutError::Unreachable { reached: 0.0 }));
        assert!(matches!(raise_cut(&g, &rsb(&g, 2), 2, edges, 0.99), Err(CutError::Unreachable { .. })));
    }

    #[test]
    fn weighted_vertices_swap_with_their_own_weight_only() {
        // Vertices of weights 1 and 3 alternate along a grid; edges weigh 2.
        let mut g = WGraph::of_matrix(&fe_stiffness(2, 20).unwrap());
        g.vwgt = (0..g.n()).map(|v| if v % 2 == 0 { 1 } else { 3 }).collect();
        g.ewgt.iter_mut().for_each(|w| *w = 2);
        let edges = g.ewgt.iter().sum::<u64>() / 2 + 500;
        let start = rsb(&g, 4);
        let r = raise_cut(&g, &start, 4, edges, 0.4).unwrap();
        assert!(r.fraction >= 0.4 && r.fraction <= 0.4 + TOLERANCE);
        assert_eq!(sizes(&r.part, &g, 4), sizes(&start, &g, 4));
        let moved = |w: u64| (0..g.n()).filter(|&v| g.vwgt[v] == w && r.part[v] != start[v]).count();
        assert!(moved(1) > 0 && moved(3) > 0);
    }
}
