//! One coarsening step of the multilevel partitioner: heavy-edge matching and contraction.

use super::graph::WGraph;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// A coarser graph and, for each vertex of the finer one, the coarse vertex it became.
pub struct Coarse {
    pub graph: WGraph,
    pub map: Vec<u32>,
}

/// Heavy-edge matching: vertices are visited in an order drawn from `rng`; an unmatched vertex
/// is matched with the unmatched neighbour joined to it by the heaviest edge (ties: the lighter
/// neighbour, then the lower index), provided their weights together stay within `max_vwgt`.
/// If that merges fewer than a tenth of the vertices (a graph of many small components, or of
/// heavy vertices), the remaining unmatched vertices are paired in visit order regardless of
/// adjacency (still within `max_vwgt`), so that coarsening always makes progress when it can.
/// Matched pairs are contracted: weights of vertices and of parallel edges add; an edge inside
/// a pair disappears. Coarse vertices are numbered by their smallest fine vertex.
pub fn coarsen(g: &WGraph, rng: &mut ChaCha8Rng, max_vwgt: u64) -> Coarse {
    let n = g.n();
    let mut visit: Vec<u32> = (0..n as u32).collect();
    visit.shuffle(rng);
    let mut mate = vec![u32::MAX; n];
    let mut merged = 0;
    for &v in &visit {
        let v = v as usize;
        if mate[v] != u32::MAX {
            continue;
        }
        let (nb, w) = g.edges(v);
        let mut best: Option<(u64, u64, u32)> = None;
        for (&u, &ew) in nb.iter().zip(w) {
            if mate[u as usize] != u32::MAX || g.vwgt[v] + g.vwgt[u as usize] > max_vwgt {
                continue;
            }
            let better = match best {
                None => true,
                Some((bw, bv, bu)) => {
                    ew > bw || (ew == bw && (g.vwgt[u as usize] < bv || (g.vwgt[u as usize] == bv && u < bu)))
                }
            };
            if better {
                best = Some((ew, g.vwgt[u as usize], u));
            }
        }
        match best {
            Some((_, _, u)) => {
                mate[v] = u;
                mate[u as usize] = v as u32;
                merged += 1;
            }
            None => mate[v] = v as u32,
        }
    }
    if merged * 10 < n {
        // Pair leftover singletons in visit order.
        let mut waiting: Option<usize> = None;
        for &v in &visit {
            let v = v as usize;
            if mate[v] != v as u32 {
                continue;
            }
            match waiting {
                Some(u) if g.vwgt[u] + g.vwgt[v] <= max_vwgt => {
                    mate[u] = v as u32;
                    mate[v] = u as u32;
                    waiting = None;
                }
                _ => waiting = Some(v),
            }
        }
    }
    let mut map = vec![u32::MAX; n];
    let mut vwgt = Vec::new();
    for v in 0..n {
        if map[v] == u32::MAX {
            let c = vwgt.len() as u32;
            let m = mate[v] as usize;
            map[v] = c;
            map[m] = c;
            vwgt.push(if m == v { g.vwgt[v] } else { g.vwgt[v] + g.vwgt[m] });
        }
    }
    let nc = vwgt.len();
    let mut graph = WGraph { xadj: Vec::with_capacity(nc + 1), adj: Vec::new(), ewgt: Vec::new(), vwgt };
    graph.xadj.push(0);
    let mut slot = vec![usize::MAX; nc];
    for v in 0..n {
        let c = map[v] as usize;
        if v != (mate[v] as usize).min(v) {
            continue; // the pair is built from its smaller member
        }
        let start = graph.adj.len();
        let m = mate[v] as usize;
        let members: &[usize] = if m == v { &[v][..] } else { &[v, m][..] };
        for &x in members {
            let (nb, w) = g.edges(x);
            for (&u, &ew) in nb.iter().zip(w) {
                let cu = map[u as usize] as usize;
                if cu == c {
                    continue;
                }
                if slot[cu] == usize::MAX {
                    slot[cu] = graph.adj.len();
                    graph.adj.push(cu as u32);
                    graph.ewgt.push(0);
                }
                graph.ewgt[slot[cu]] += ew;
            }
        }
        for &u in &graph.adj[start..] {
            slot[u as usize] = usize::MAX;
        }
        graph.xadj.push(graph.adj.len());
    }
    Coarse { graph, map }
}

#[cfg(test)]
mod tests {
    use super::super::{fe_stiffness, WGraph};
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn contraction_conserves_weights_and_halves_a_grid() {
        let g = WGraph::of_matrix(&fe_stiffness(2, 9).unwrap());
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let c = coarsen(&g, &mut rng, 4);
        c.graph.check().unwrap();
        assert_eq!(c.graph.total_vwgt(), g.total_vwgt());
        assert!(c.graph.n() < g.n() * 6 / 10, "{} of {}", c.graph.n(), g.n());
        // Fine edge weight = coarse edge weight + weight of edges inside pairs (counted twice).
        let inside: u64 = (0..g.n())
            .map(|v| {
                let (nb, w) = g.edges(v);
                nb.iter().zip(w).filter(|(&u, _)| c.map[u as usize] == c.map[v]).map(|(_, &w)| w).sum::<u64>()
            })
            .sum();
        assert_eq!(c.graph.ewgt.iter().sum::<u64>() + inside, g.ewgt.iter().sum::<u64>());
        // Same seed, same result.
        let again = coarsen(&g, &mut ChaCha8Rng::seed_from_u64(3), 4);
        assert_eq!((again.graph, again.map), (c.graph, c.map));
    }

    #[test]
    fn isolated_vertices_are_still_paired() {
        let g = WGraph { xadj: vec![0; 9], adj: vec![], ewgt: vec![], vwgt: vec![1; 8] };
        let c = coarsen(&g, &mut ChaCha8Rng::seed_from_u64(1), 2);
        assert_eq!(c.graph.n(), 4);
        assert!(c.graph.vwgt.iter().all(|&w| w == 2));
    }
}
