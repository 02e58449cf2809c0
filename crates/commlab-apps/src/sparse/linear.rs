//! Chaco's *linear* global method with Kernighan-Lin local refinement (Hendrickson and
//! Leland's Chaco, the partitioner the ICCG study names in §4.3, with its global method set to
//! "linear" and its local method to KL), by recursive bisection.
//!
//! One bisection of a graph towards a weight `target0` for side 0: the vertices in their
//! order (the file's order for a matrix read from a file; the subgraph of a recursion keeps
//! it) go to side 0 while the midpoint of their weight falls below `target0`, the rest to side
//! 1; then KL/FM ([`super::refine`]) improves the cut within the balance window
//! `target0 ± max(total / 200, heaviest vertex)`, as each level of [`super::rsb`] does.
//! Recursion, targets and the numbering of parts are [`super::rsb`]'s, so without the
//! refinement the parts would be `nparts` contiguous blocks of the order of about equal
//! weight; with it, each block boundary is moved to cut fewer edges. Deterministic: KL's
//! tie-break ranks come from the same seeded stream as [`super::rsb`]'s.

use super::graph::WGraph;
use super::refine::refine;
use super::rsb::{balance_of, ranks, recursive};
use rand_chacha::ChaCha8Rng;

/// Partitions `g` into `nparts` parts (`nparts >= 1`) by recursive linear bisection refined by
/// KL (see the module documentation).
pub fn linear_kl(g: &WGraph, nparts: usize) -> Vec<usize> {
    recursive(g, nparts, bisect)
}

/// Side 0: the vertices, in order, whose weight's midpoint falls below `target0`; then KL.
fn bisect(g: &WGraph, target0: u64, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut before = 0u64;
    let mut side: Vec<u8> = g
        .vwgt
        .iter()
        .map(|&w| {
            let s = u8::from(2 * before + w > 2 * target0);
            before += w;
            s
        })
        .collect();
    refine(g, &mut side, balance_of(g, target0, g.total_vwgt()), &ranks(g.n(), rng));
    side
}

#[cfg(test)]
mod tests {
    use super::super::{fe_stiffness, natural, WGraph};
    use super::*;

    #[test]
    fn refines_the_blocks_of_the_order() {
        // A 31 x 31 grid numbered row by row: blocks of the order are strips. KL keeps the
        // partition balanced and cuts no more than the strips do.
        let g = WGraph::of_matrix(&fe_stiffness(2, 30).unwrap());
        for nparts in [2, 4, 7, 16] {
            let part = linear_kl(&g, nparts);
            assert_eq!(part, linear_kl(&g, nparts), "deterministic");
            let mut size = vec![0usize; nparts];
            part.iter().for_each(|&p| size[p] += 1);
            let ideal = g.n() as f64 / nparts as f64;
            assert!(size.iter().all(|&x| (x as f64 - ideal).abs() <= 0.05 * ideal + 2.0), "{nparts}: {size:?}");
            let (cut, strips) = (g.cut(&part), g.cut(&natural(&g, nparts)));
            assert!(cut <= strips, "{nparts}: linear-kl cuts {cut}, strips {strips}");
        }
    }

    #[test]
    fn kl_repairs_the_blocks_of_a_scrambled_order() {
        // The grid numbered in a scrambled order: blocks of the order are random halves,
        // cutting about half the edges; KL moves the boundary to cut far fewer.
        let a = fe_stiffness(2, 20).unwrap();
        let n = a.n;
        let new_of_old: Vec<usize> = (0..n).map(|i| (i * 97) % n).collect();
        let g = WGraph::of_matrix(&a.permuted(&new_of_old));
        let (cut, blocks) = (g.cut(&linear_kl(&g, 2)), g.cut(&natural(&g, 2)));
        assert!(3 * cut < blocks, "linear-kl cuts {cut}, the blocks {blocks}");
    }
}
