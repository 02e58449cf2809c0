//! Spectral bisection of a small graph: the Fiedler vector (eigenvector of the second
//! smallest eigenvalue of the weighted Laplacian `L = D - W`) ranks the vertices, and the
//! ranking is cut where the first side reaches its target weight (the weighted median when the
//! target is half). Meant for the coarsest graph of the multilevel partitioner
//! ([`super::rsb`]), a few hundred vertices at most: the Laplacian is formed densely and
//! solved completely with `nalgebra`'s symmetric eigensolver (Householder tridiagonalisation
//! and implicit QR), which is deterministic.

use super::graph::WGraph;
use nalgebra::{DMatrix, SymmetricEigen};

/// The Fiedler vector of `g`, its sign fixed so that its first clearly non-zero entry is
/// positive. For a disconnected graph the second eigenvalue is 0 too and the vector separates
/// components. A graph of fewer than 2 vertices gives zeros.
pub fn fiedler(g: &WGraph) -> Vec<f64> {
    let n = g.n();
    if n < 2 {
        return vec![0.0; n];
    }
    let mut l = DMatrix::<f64>::zeros(n, n);
    for v in 0..n {
        let (nb, w) = g.edges(v);
        for (&u, &w) in nb.iter().zip(w) {
            l[(v, u as usize)] -= w as f64;
            l[(v, v)] += w as f64;
        }
    }
    let eig = SymmetricEigen::new(l);
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]).then(a.cmp(&b)));
    let col = eig.eigenvectors.column(idx[1]);
    let mut x: Vec<f64> = col.iter().copied().collect();
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if let Some(first) = x.iter().find(|v| v.abs() > 1e-8 * scale) {
        if *first < 0.0 {
            x.iter_mut().for_each(|v| *v = -*v);
        }
    }
    x
}

/// Spectral bisection: side 0 is the prefix of the vertices sorted by Fiedler value (ties by
/// index) whose weight comes closest to `target0`; the rest is side 1.
pub fn spectral_bisect(g: &WGraph, target0: u64) -> Vec<u8> {
    let x = fiedler(g);
    let mut order: Vec<usize> = (0..g.n()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(a.cmp(&b)));
    let mut side = vec![1u8; g.n()];
    let mut w0 = 0u64;
    for v in order {
        let w = g.vwgt[v];
        if (w0 + w).abs_diff(target0) > w0.abs_diff(target0) {
            break;
        }
        side[v] = 0;
        w0 += w;
    }
    side
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: usize) -> WGraph {
        let mut g = WGraph { xadj: vec![0], adj: Vec::new(), ewgt: Vec::new(), vwgt: vec![1; n] };
        for v in 0..n {
            if v > 0 {
                g.adj.push(v as u32 - 1);
            }
            if v + 1 < n {
                g.adj.push(v as u32 + 1);
            }
            g.xadj.push(g.adj.len());
        }
        g.ewgt = vec![1; g.adj.len()];
        g
    }

    #[test]
    fn path_fiedler_vector_is_the_cosine_mode() {
        // The path's Laplacian has eigenvectors cos(pi k (v + 1/2) / n); k = 1 is monotone.
        let n = 12;
        let x = fiedler(&path(n));
        let norm = (2.0 / n as f64).sqrt();
        for (v, &xv) in x.iter().enumerate() {
            let want = norm * (std::f64::consts::PI * (v as f64 + 0.5) / n as f64).cos();
            assert!((xv - want).abs() < 1e-10, "{v}: {xv} vs {want}");
        }
    }

    #[test]
    fn bisects_a_path_in_the_middle_and_honours_the_target() {
        let g = path(10);
        let s = spectral_bisect(&g, 5);
        assert!(s[..5].iter().all(|&x| x == s[0]) && s[5..].iter().all(|&x| x == 1 - s[0]), "{s:?}");
        let s = spectral_bisect(&g, 3);
        assert_eq!(s.iter().filter(|&&x| x == 0).count(), 3);
        assert_eq!(g.cut(&s.iter().map(|&x| x as usize).collect::<Vec<_>>()), 1);
    }

    #[test]
    fn two_components_are_separated() {
        // Two triangles, no edge between them.
        let mut g = WGraph { xadj: vec![0], adj: Vec::new(), ewgt: Vec::new(), vwgt: vec![1; 6] };
        for v in 0..6u32 {
            let base = v / 3 * 3;
            g.adj.extend((base..base + 3).filter(|&u| u != v));
            g.xadj.push(g.adj.len());
        }
        g.ewgt = vec![1; g.adj.len()];
        g.check().unwrap();
        let s = spectral_bisect(&g, 3);
        assert_eq!(g.cut(&s.iter().map(|&x| x as usize).collect::<Vec<_>>()), 0);
    }
}
