//! The EM3D graph: generator, sequential reference, and each processor's view of it.
//!
//! # Generator
//!
//! `nodes` nodes are split into `ceil(nodes/2)` E nodes and `floor(nodes/2)` H nodes. Each
//! kind is block-distributed: processor `p` of `P` owns the nodes `[p*n/P, (p+1)*n/P)` of that
//! kind. Every node draws its values from its own random stream, seeded by
//! `component_seed(seed, kind << 40 | index)`, in this order:
//! 1. its initial value, uniform in `[0, 1)`;
//! 2. for each of its `degree` in-edges: `u` uniform in `[0, 1)`; if `P > 1`, `span > 0` and
//!    `u < remote`, the edge is *remote*: the source processor is drawn uniformly from the
//!    processors `q != p` with `|q - p| <= span` that exist (no wrap-around at the ends),
//!    otherwise the source processor is `p`; then the source node is drawn uniformly from that
//!    processor's nodes of the other kind; then the coefficient, uniform in
//!    `[-0.5/degree, 0.5/degree)` (so values stay bounded over many iterations).
//!
//! Edges may repeat (two edges from the same source): the graph is a multigraph, as in the
//! original Split-C generator.
//!
//! # Iteration
//!
//! `e <- e - sum(c * h)` over each E node's in-edges, in edge order, then the same for H nodes
//! from E values. Every variant accumulates in that order with separate multiply and subtract,
//! so every variant's answer equals the sequential one bit for bit.

use crate::app::component_seed;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// E or H: the two node kinds, also used as an index (`E = 0`, `H = 1`).
pub const E: usize = 0;
pub const H: usize = 1;

/// Generator parameters.
#[derive(Clone, Copy, Debug)]
pub struct GraphParams {
    pub nodes: usize,
    pub degree: usize,
    pub remote: f64,
    pub span: usize,
    pub procs: usize,
    pub seed: u64,
}

/// The nodes of one kind: values and in-edges (CSR), all in global numbering.
#[derive(Clone)]
pub struct Half {
    pub n: usize,
    pub init: Vec<f64>,
    pub edge_ptr: Vec<usize>,
    /// Global index of the source node (of the other kind) of each in-edge.
    pub src: Vec<u32>,
    pub coef: Vec<f64>,
}

/// The whole graph. `half[E]` holds E nodes with edges from H nodes, and vice versa.
pub struct Graph {
    pub procs: usize,
    pub half: [Half; 2],
}

/// First node of processor `p` among `n` block-distributed nodes.
pub fn block_first(n: usize, procs: usize, p: usize) -> usize {
    n * p / procs
}

/// Owner of node `i` among `n` block-distributed nodes.
pub fn block_owner(n: usize, procs: usize, i: usize) -> usize {
    // The largest p with p*n/P <= i; start from the estimate and correct.
    let mut p = ((i + 1) * procs).saturating_sub(1) / n;
    while p + 1 < procs && block_first(n, procs, p + 1) <= i {
        p += 1;
    }
    while block_first(n, procs, p) > i {
        p -= 1;
    }
    p
}

impl Graph {
    pub fn generate(g: GraphParams) -> Graph {
        let counts = [g.nodes.div_ceil(2), g.nodes / 2];
        let half = [E, H].map(|kind| {
            let (n, n_src) = (counts[kind], counts[1 - kind]);
            let mut init = Vec::with_capacity(n);
            let mut edge_ptr = Vec::with_capacity(n + 1);
            let mut src = Vec::with_capacity(n * g.degree);
            let mut coef = Vec::with_capacity(n * g.degree);
            edge_ptr.push(0);
            for v in 0..n {
                let mut rng = ChaCha8Rng::seed_from_u64(component_seed(g.seed, ((kind as u64) << 40) | v as u64));
                init.push(rng.random::<f64>());
                let p = block_owner(n, g.procs, v);
                let lo = p.saturating_sub(g.span);
                let hi = (p + g.span).min(g.procs - 1);
                let others = hi - lo; // candidate remote processors (p itself excluded)
                for _ in 0..g.degree {
                    let u: f64 = rng.random();
                    let q = if others > 0 && u < g.remote {
                        let k = rng.random_range(0..others);
                        let q = lo + k;
                        if q >= p {
                            q + 1
                        } else {
                            q
                        }
                    } else {
                        p
                    };
                    let (first, last) = (block_first(n_src, g.procs, q), block_first(n_src, g.procs, q + 1));
                    src.push(rng.random_range(first..last) as u32);
                    coef.push((rng.random::<f64>() - 0.5) / g.degree as f64);
                }
                edge_ptr.push(src.len());
            }
            Half { n, init, edge_ptr, src, coef }
        });
        Graph { procs: g.procs, half }
    }

    /// Owner of node `i` of `kind`.
    pub fn owner(&self, kind: usize, i: usize) -> usize {
        block_owner(self.half[kind].n, self.procs, i)
    }

    /// Global nodes of `kind` owned by `p`.
    pub fn range(&self, kind: usize, p: usize) -> std::ops::Range<usize> {
        let n = self.half[kind].n;
        block_first(n, self.procs, p)..block_first(n, self.procs, p + 1)
    }

    /// The same graph with every node on one processor (the sequential program's).
    pub fn on_one_processor(&self) -> Graph {
        Graph { procs: 1, half: self.half.clone() }
    }

    /// Edges whose source lives on another processor than the node they update.
    pub fn remote_edges(&self) -> usize {
        [E, H]
            .iter()
            .map(|&k| {
                let h = &self.half[k];
                (0..h.n)
                    .map(|v| {
                        let p = self.owner(k, v);
                        h.src[h.edge_ptr[v]..h.edge_ptr[v + 1]]
                            .iter()
                            .filter(|&&s| self.owner(1 - k, s as usize) != p)
                            .count()
                    })
                    .sum::<usize>()
            })
            .sum()
    }

    pub fn edges(&self) -> usize {
        self.half[E].src.len() + self.half[H].src.len()
    }

    /// Update every node of `kind` from `vals[1 - kind]`, in place.
    pub fn update(&self, kind: usize, vals: &mut [Vec<f64>; 2]) {
        let h = &self.half[kind];
        let [e_vals, h_vals] = vals;
        let (dst, src) = if kind == E { (e_vals, &*h_vals) } else { (h_vals, &*e_vals) };
        for (v, value) in dst.iter_mut().enumerate() {
            let mut acc = *value;
            for e in h.edge_ptr[v]..h.edge_ptr[v + 1] {
                acc -= h.coef[e] * src[h.src[e] as usize];
            }
            *value = acc;
        }
    }

    /// Values after `iterations` sequential iterations.
    pub fn sequential(&self, iterations: usize) -> [Vec<f64>; 2] {
        let mut vals = [self.half[E].init.clone(), self.half[H].init.clone()];
        for _ in 0..iterations {
            self.update(E, &mut vals);
            self.update(H, &mut vals);
        }
        vals
    }
}

/// One processor's part of one phase (updating its nodes of one kind).
pub struct PhasePlan {
    /// Local nodes updated: global indices `first..first + count`.
    pub first: usize,
    pub count: usize,
    pub edge_ptr: Vec<usize>,
    /// Source of each in-edge as a word index into the shared array of the other kind (sm).
    pub src_word: Vec<u32>,
    /// Source of each in-edge as an index into this processor's local-then-ghost array of the
    /// other kind (message variants).
    pub src_local: Vec<u32>,
    pub coef: Vec<f64>,
}

/// Values of one kind that processor `p` sends to one reader each phase.
pub struct GhostSend {
    pub dest: usize,
    /// Position of the first value in the reader's ghost area.
    pub offset: usize,
    /// Local indices (into `p`'s own nodes of the kind) of the values, in ghost order.
    pub local: Vec<u32>,
}

/// Everything processor `p` needs, per kind.
pub struct ProcPlan {
    /// `phase[k]`: updating the nodes of kind `k`.
    pub phase: [PhasePlan; 2],
    /// `sends[k]`: values of kind `k` this processor owns that others read.
    pub sends: [Vec<GhostSend>; 2],
    /// `ghosts[k]`: number of ghost values of kind `k` this processor receives per phase.
    pub ghosts: [usize; 2],
}

/// Word index of every node in the shared arrays: each processor's block starts on a
/// `align_words` boundary, so no cache line is shared by two owners.
pub struct SharedLayout {
    pub word: [Vec<u32>; 2],
    pub words: [usize; 2],
    pub owners: [Vec<usize>; 2],
}

impl SharedLayout {
    pub fn new(g: &Graph, align_words: usize) -> SharedLayout {
        let mut word = [Vec::new(), Vec::new()];
        let mut words = [0, 0];
        let mut owners = [Vec::new(), Vec::new()];
        for k in [E, H] {
            let mut next = 0usize;
            for p in 0..g.procs {
                let r = g.range(k, p);
                for _ in r.clone() {
                    word[k].push(next as u32);
                    next += 1;
                }
                let padded = next.div_ceil(align_words) * align_words;
                owners[k].resize(padded, p);
                next = padded;
            }
            words[k] = next;
        }
        SharedLayout { word, words, owners }
    }
}

/// Build every processor's plan.
pub fn plans(g: &Graph, layout: &SharedLayout) -> Vec<ProcPlan> {
    let procs = g.procs;
    // ghost_lists[k][p]: owner q -> sorted global indices of kind-k nodes owned by q that p
    // reads, for the owners p reads from only (a processor reads from a few within `span`, so
    // a full procs x procs table would be quadratic in memory and time: 13 GB at 16384).
    let mut ghost_lists: [Vec<BTreeMap<usize, Vec<u32>>>; 2] =
        [vec![BTreeMap::new(); procs], vec![BTreeMap::new(); procs]];
    for k in [E, H] {
        let h = &g.half[1 - k]; // nodes updated from kind k
        for v in 0..h.n {
            let p = g.owner(1 - k, v);
            for &s in &h.src[h.edge_ptr[v]..h.edge_ptr[v + 1]] {
                let q = g.owner(k, s as usize);
                if q != p {
                    ghost_lists[k][p].entry(q).or_default().push(s);
                }
            }
        }
        for lists in ghost_lists[k].iter_mut() {
            for l in lists.values_mut() {
                l.sort_unstable();
                l.dedup();
            }
        }
    }
    // readers[k][q]: the processors that read kind-k nodes owned by q, ascending.
    let mut readers: [Vec<Vec<usize>>; 2] = [vec![Vec::new(); procs], vec![Vec::new(); procs]];
    for k in [E, H] {
        for (reader, lists) in ghost_lists[k].iter().enumerate() {
            for &q in lists.keys() {
                readers[k][q].push(reader);
            }
        }
    }
    let mut out: Vec<ProcPlan> = Vec::with_capacity(procs);
    for p in 0..procs {
        let phase = [E, H].map(|k| {
            let h = &g.half[k];
            let src_kind = 1 - k;
            let r = g.range(k, p);
            let own = g.range(src_kind, p);
            // Ghost index of a remote source: local count + position in (owner, index) order.
            let mut ghost_base: BTreeMap<usize, usize> = BTreeMap::new();
            let mut base = own.len();
            for (&q, list) in &ghost_lists[src_kind][p] {
                ghost_base.insert(q, base);
                base += list.len();
            }
            let mut edge_ptr = vec![0];
            let (mut src_word, mut src_local, mut coef) = (Vec::new(), Vec::new(), Vec::new());
            for v in r.clone() {
                for e in h.edge_ptr[v]..h.edge_ptr[v + 1] {
                    let s = h.src[e] as usize;
                    src_word.push(layout.word[src_kind][s]);
                    let q = g.owner(src_kind, s);
                    let local = if q == p {
                        s - own.start
                    } else {
                        let list = &ghost_lists[src_kind][p][&q];
                        ghost_base[&q] + list.binary_search(&(s as u32)).expect("listed ghost")
                    };
                    src_local.push(local as u32);
                    coef.push(h.coef[e]);
                }
                edge_ptr.push(src_word.len());
            }
            PhasePlan { first: r.start, count: r.len(), edge_ptr, src_word, src_local, coef }
        });
        let ghosts = [E, H].map(|k| ghost_lists[k][p].values().map(Vec::len).sum());
        let sends = [E, H].map(|k| {
            let own_first = g.range(k, p).start;
            readers[k][p]
                .iter()
                .map(|&reader| {
                    let lists = &ghost_lists[k][reader];
                    let offset: usize = lists.range(..p).map(|(_, l)| l.len()).sum();
                    let local = lists[&p].iter().map(|&s| s - own_first as u32).collect();
                    GhostSend { dest: reader, offset, local }
                })
                .collect()
        });
        out.push(ProcPlan { phase, sends, ghosts });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(procs: usize) -> GraphParams {
        GraphParams { nodes: 1000, degree: 5, remote: 0.3, span: 2, procs, seed: 9 }
    }

    #[test]
    fn owners_match_blocks() {
        for (n, procs) in [(10, 3), (7, 7), (1000, 32), (5001, 13)] {
            for p in 0..procs {
                for i in block_first(n, procs, p)..block_first(n, procs, p + 1) {
                    assert_eq!(block_owner(n, procs, i), p, "n {n} procs {procs} node {i}");
                }
            }
        }
    }

    #[test]
    fn remote_fraction_and_span_are_respected() {
        let g = Graph::generate(params(16));
        let frac = g.remote_edges() as f64 / g.edges() as f64;
        assert!((frac - 0.3).abs() < 0.04, "remote fraction {frac}");
        for k in [E, H] {
            let h = &g.half[k];
            for v in 0..h.n {
                let p = g.owner(k, v);
                for &s in &h.src[h.edge_ptr[v]..h.edge_ptr[v + 1]] {
                    let q = g.owner(1 - k, s as usize);
                    assert!(q.abs_diff(p) <= 2, "edge from processor {q} to {p} beyond span 2");
                }
            }
        }
        let local = Graph::generate(GraphParams { remote: 0.0, ..params(16) });
        assert_eq!(local.remote_edges(), 0);
        let one = Graph::generate(params(1));
        assert_eq!(one.remote_edges(), 0);
    }

    #[test]
    fn plans_send_exactly_what_readers_read() {
        let g = Graph::generate(params(8));
        let layout = SharedLayout::new(&g, 8);
        let plans = plans(&g, &layout);
        for k in [E, H] {
            // Deliver every processor's sends into its readers' ghost areas, then check that
            // every edge resolves to its source's value.
            let vals: Vec<f64> = (0..g.half[k].n).map(|i| i as f64).collect();
            let mut arrays: Vec<Vec<f64>> = (0..8)
                .map(|p| {
                    let own = g.range(k, p);
                    let mut a: Vec<f64> = own.clone().map(|i| vals[i]).collect();
                    a.resize(own.len() + plans[p].ghosts[k], f64::NAN);
                    a
                })
                .collect();
            for (q, plan) in plans.iter().enumerate() {
                let first = g.range(k, q).start;
                for s in &plan.sends[k] {
                    let base = g.range(k, s.dest).len() + s.offset;
                    for (i, &l) in s.local.iter().enumerate() {
                        arrays[s.dest][base + i] = vals[first + l as usize];
                    }
                }
            }
            for p in 0..8 {
                let ph = &plans[p].phase[1 - k];
                let h = &g.half[1 - k];
                for (j, v) in (ph.first..ph.first + ph.count).enumerate() {
                    for (e, ge) in (ph.edge_ptr[j]..ph.edge_ptr[j + 1]).zip(h.edge_ptr[v]..) {
                        assert_eq!(arrays[p][ph.src_local[e] as usize], vals[h.src[ge] as usize]);
                        assert_eq!(layout.word[k][h.src[ge] as usize], ph.src_word[e]);
                    }
                }
            }
        }
    }

    #[test]
    fn generation_is_deterministic_and_seeded() {
        let a = Graph::generate(params(4));
        let b = Graph::generate(params(4));
        let c = Graph::generate(GraphParams { seed: 10, ..params(4) });
        assert_eq!(a.half[E].src, b.half[E].src);
        assert_eq!(a.half[H].coef, b.half[H].coef);
        assert_ne!(a.half[E].src, c.half[E].src);
    }
}
