//! Kernighan-Lin refinement of a bisection, in the Fiduccia-Mattheyses form (single-vertex
//! moves, each vertex moved at most once per pass, the best prefix of a pass kept).

use super::graph::WGraph;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Moves made past the best state before a pass gives up (the KL "hill-climbing" allowance).
const PATIENCE: usize = 100;
/// Passes at most; a pass that improves nothing ends refinement earlier.
const MAX_PASSES: usize = 8;

/// Balance constraint of a bisection: side 0 should weigh `target0`, give or take `tol`.
#[derive(Clone, Copy, Debug)]
pub struct Balance {
    pub target0: u64,
    pub tol: u64,
}

impl Balance {
    /// How far side 0's weight `w0` lies outside the allowed window.
    pub fn excess(&self, w0: u64) -> u64 {
        w0.abs_diff(self.target0).saturating_sub(self.tol)
    }
}

/// Improves the bisection `side` (0 or 1 per vertex) of `g` in place. A state is better when it
/// is closer to the balance window, then when it cuts less edge weight. Each pass: every
/// vertex's gain (the cut reduction if it alone changed side) is computed; vertices are taken
/// highest gain first (ties by the seeded rank `tiebreak`, lower first) and moved unless the
/// move would take the partition further out of balance; a moved vertex is locked for the pass
/// and its neighbours' gains are updated; after `PATIENCE` moves without a new best state the
/// moves after the best state are undone. Returns the final cut.
pub fn refine(g: &WGraph, side: &mut [u8], balance: Balance, tiebreak: &[u32]) -> u64 {
    let n = g.n();
    let mut w = [0u64; 2];
    for v in 0..n {
        w[side[v] as usize] += g.vwgt[v];
    }
    let mut gain = vec![0i64; n];
    let mut cut = 0i64;
    for v in 0..n {
        let (nb, ew) = g.edges(v);
        for (&u, &x) in nb.iter().zip(ew) {
            if side[u as usize] == side[v] {
                gain[v] -= x as i64;
            } else {
                gain[v] += x as i64;
                cut += x as i64;
            }
        }
    }
    cut /= 2;
    let mut locked = vec![false; n];
    for _ in 0..MAX_PASSES {
        let start = (balance.excess(w[0]), cut);
        let mut heap: BinaryHeap<(i64, Reverse<u32>, u32)> = BinaryHeap::new();
        for v in 0..n {
            locked[v] = false;
            // Interior vertices enter when a neighbour's move makes them boundary vertices; when
            // out of balance every vertex is a candidate.
            if gain[v] > -(g.edges(v).1.iter().sum::<u64>() as i64) || start.0 > 0 {
                heap.push((gain[v], Reverse(tiebreak[v]), v as u32));
            }
        }
        let mut moves: Vec<u32> = Vec::new();
        let (mut best, mut best_len) = (start, 0);
        while let Some((gv, _, v)) = heap.pop() {
            let v = v as usize;
            if locked[v] || gv != gain[v] {
                continue;
            }
            let from = side[v] as usize;
            let w0 = if from == 0 { w[0] - g.vwgt[v] } else { w[0] + g.vwgt[v] };
            if balance.excess(w0) > balance.excess(w[0]) {
                continue;
            }
            side[v] = 1 - side[v];
            locked[v] = true;
            w[from] -= g.vwgt[v];
            w[1 - from] += g.vwgt[v];
            cut -= gain[v];
            gain[v] = -gain[v];
            let (nb, ew) = g.edges(v);
            for (&u, &x) in nb.iter().zip(ew) {
                let u = u as usize;
                gain[u] += if side[u] == side[v] { -2 } else { 2 } * x as i64;
                if !locked[u] {
                    heap.push((gain[u], Reverse(tiebreak[u]), u as u32));
                }
            }
            moves.push(v as u32);
            let now = (balance.excess(w[0]), cut);
            if now < best {
                best = now;
                best_len = moves.len();
            } else if moves.len() - best_len >= PATIENCE {
                break;
            }
        }
        // Undo the moves after the best state.
        for &v in moves[best_len..].iter().rev() {
            let v = v as usize;
            let from = side[v] as usize;
            side[v] = 1 - side[v];
            w[from] -= g.vwgt[v];
            w[1 - from] += g.vwgt[v];
            cut -= gain[v];
            gain[v] = -gain[v];
            let (nb, ew) = g.edges(v);
            for (&u, &x) in nb.iter().zip(ew) {
                gain[u as usize] += if side[u as usize] == side[v] { -2 } else { 2 } * x as i64;
            }
        }
        debug_assert_eq!((balance.excess(w[0]), cut), best);
        if best >= start {
            break;
        }
    }
    cut as u64
}

#[cfg(test)]
mod tests {
    use super::super::{fe_stiffness, WGraph};
    use super::*;

    #[test]
    fn repairs_a_bad_grid_bisection() {
        // 2-D 9-point grid, 11 x 11; start from an interleaved (terrible) balanced bisection.
        let g = WGraph::of_matrix(&fe_stiffness(2, 10).unwrap());
        let n = g.n();
        let mut side: Vec<u8> = (0..n).map(|v| (v % 2) as u8).collect();
        let before = g.cut(&side.iter().map(|&s| s as usize).collect::<Vec<_>>());
        let tiebreak: Vec<u32> = (0..n as u32).collect();
        let balance = Balance { target0: 61, tol: 3 };
        let cut = refine(&g, &mut side, balance, &tiebreak);
        let part: Vec<usize> = side.iter().map(|&s| s as usize).collect();
        assert_eq!(cut, g.cut(&part), "reported cut is the real cut");
        let w0 = side.iter().filter(|&&s| s == 0).count() as u64;
        assert_eq!(balance.excess(w0), 0, "side 0 weighs {w0}");
        assert!(cut * 3 < before, "cut {cut}, was {before}");
    }

    #[test]
    fn restores_balance() {
        let g = WGraph::of_matrix(&fe_stiffness(2, 10).unwrap());
        // Everything on side 0: the only way to get better is to move vertices to side 1.
        let mut side = vec![0u8; g.n()];
        let tiebreak: Vec<u32> = (0..g.n() as u32).collect();
        let balance = Balance { target0: 60, tol: 2 };
        refine(&g, &mut side, balance, &tiebreak);
        let w0 = side.iter().filter(|&&s| s == 0).count() as u64;
        assert_eq!(balance.excess(w0), 0, "side 0 weighs {w0}");
    }
}
