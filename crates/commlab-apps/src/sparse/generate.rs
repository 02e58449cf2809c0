//! Generated finite-element matrices, standing in for the Harwell-Boeing stiffness matrices
//! that are not available here.

use super::matrix::SymMatrix;
use super::matrix::MAX_ORDER;

/// Finite-element matrix of the reaction-diffusion problem `-Δu + u = f` on the unit square
/// (`dim == 2`) or unit cube (`dim == 3`) with natural (Neumann) boundary conditions.
///
/// Mesh: `k` equal elements per side, `h = 1/k`: bilinear quadrilaterals (Q1) in 2-D, trilinear
/// hexahedra (Q1) in 3-D. One unknown per node; all `(k+1)^dim` nodes are kept and numbered
/// lexicographically with x fastest: node `(x, y[, z])` is `x + (k+1)*(y + (k+1)*z)`.
///
/// Values: `A = K + M_L`, where `K` is the exact Q1 stiffness (Laplacian) matrix and `M_L` the
/// lumped mass matrix (each element adds `h^dim / 2^dim` to the diagonal of each of its
/// `2^dim` nodes). `K` alone is singular (constants); `M_L` is the documented positive diagonal
/// shift that makes `A` symmetric positive definite without removing boundary nodes, and keeps the
/// condition number growing like `1/h^2` as with Dirichlet conditions. Every off-diagonal of `K`
/// is `<= 0` and `A`'s row sums are positive, so `A` is a diagonally dominant M-matrix and IC(0)
/// cannot break down. Row sums of `A` are the lumped mass; all entries sum to 1 (the volume).
///
/// Element stiffness entries are assembled as exact integers (tensor products of the 1-D
/// stiffness `[1 -1; -1 1]/h` and mass `[2 1; 1 2] h/6`) and scaled once, so the result is
/// bit-for-bit deterministic and exactly symmetric. In 2-D the interior row is the 9-point
/// stencil `8/3` (centre), `-1/3` (all eight neighbours) plus `h^2`. In 3-D it is the 27-point
/// stencil `8h/3` (centre), `0` (the 6 neighbours along an axis), `-h/6` (12 face diagonals),
/// `-h/12` (8 body diagonals), plus `h^3`: the axis couplings are exactly zero for cubic
/// trilinear elements but kept as stored zeros, because the assembled FE pattern (node-element
/// adjacency) contains them and that pattern is what a real stiffness matrix has.
///
/// Pattern: node `p` couples to every node `q` with `|q_d - p_d| <= 1` in each coordinate, so a
/// row has `prod_d (2 or 3)` entries (2 on a boundary coordinate) and `nnz = (3k+1)^dim`.
/// Sizes like the missing BCSSTK18 (order 11,948, 12.5 entries per row): `fe_stiffness(2, 108)`
/// (11,881 nodes, 9 per row) or `fe_stiffness(3, 22)` (12,167 nodes, 27 per row).
///
/// Errors: `dim` not 2 or 3, `k == 0`, or more than [`MAX_ORDER`] nodes.
pub fn fe_stiffness(dim: usize, k: usize) -> Result<SymMatrix, String> {
    if dim != 2 && dim != 3 {
        return Err(format!("fe_stiffness: dim must be 2 or 3, not {dim}"));
    }
    if k == 0 {
        return Err("fe_stiffness: need at least 1 element per side (k >= 1)".into());
    }
    // (k + 1)^dim in u128, checked: a huge k must be refused, not wrap to a small order.
    let n = (k as u128 + 1).checked_pow(dim as u32).unwrap_or(u128::MAX);
    if n > MAX_ORDER as u128 {
        return Err(format!(
            "fe_stiffness: {k} elements per side give a matrix that exceeds the supported maximum of {MAX_ORDER} nodes"
        ));
    }
    let m = k + 1;
    let n = n as usize;
    let h = 1.0 / k as f64;
    // Element stiffness scale h^(dim-2) / 6^(dim-1); lumped mass per element-node h^dim / 2^dim.
    let (stiff_scale, mass) = if dim == 2 { (1.0 / 6.0, h * h / 4.0) } else { (h / 36.0, h * h * h / 8.0) };
    // Nodes per side in each of 3 coordinates; unused coordinates have one position.
    let ext = [m, m, if dim == 3 { m } else { 1 }];
    let active = |d: usize| d < dim;
    // 1-D element matrices times 1/h resp. 6/h, indexed by local node (0 or 1).
    let s1 = |a: usize, b: usize| if a == b { 1i64 } else { -1 };
    let m1 = |a: usize, b: usize| if a == b { 2i64 } else { 1 };

    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0usize);
    let mut col = Vec::with_capacity((3 * k + 1).pow(dim as u32));
    let mut val = Vec::with_capacity(col.capacity());
    for pz in 0..ext[2] {
        for py in 0..ext[1] {
            for px in 0..ext[0] {
                let p = [px, py, pz];
                // Neighbours in increasing index order: z slowest, x fastest.
                for oz in -1i64..=1 {
                    for oy in -1i64..=1 {
                        for ox in -1i64..=1 {
                            let o = [ox, oy, oz];
                            let mut q = [0usize; 3];
                            let mut ok = true;
                            for d in 0..3 {
                                let c = p[d] as i64 + o[d];
                                ok &= (0..ext[d] as i64).contains(&c) && (active(d) || o[d] == 0);
                                q[d] = c.max(0) as usize;
                            }
                            if !ok {
                                continue;
                            }
                            // Elements containing both p and q, per coordinate (element e_d spans
                            // nodes e_d and e_d + 1, 0 <= e_d < k).
                            let mut cand = [[0usize; 2]; 3];
                            let mut ncand = [1usize; 3];
                            for d in 0..dim {
                                let lo = p[d].min(q[d]);
                                if o[d] != 0 {
                                    cand[d][0] = lo;
                                } else {
                                    ncand[d] = 0;
                                    for e in [p[d].wrapping_sub(1), p[d]] {
                                        if e < k {
                                            cand[d][ncand[d]] = e;
                                            ncand[d] += 1;
                                        }
                                    }
                                }
                            }
                            let mut s = 0i64;
                            let mut elements = 0usize;
                            for &ez in &cand[2][..ncand[2]] {
                                for &ey in &cand[1][..ncand[1]] {
                                    for &ex in &cand[0][..ncand[0]] {
                                        let e = [ex, ey, ez];
                                        let la: [usize; 3] = std::array::from_fn(|d| p[d] - e[d]);
                                        let lb: [usize; 3] = std::array::from_fn(|d| q[d] - e[d]);
                                        for d in 0..dim {
                                            let mut t = s1(la[d], lb[d]);
                                            for f in (0..dim).filter(|&f| f != d) {
                                                t *= m1(la[f], lb[f]);
                                            }
                                            s += t;
                                        }
                                        elements += 1;
                                    }
                                }
                            }
                            let mut v = s as f64 * stiff_scale;
                            if o == [0, 0, 0] {
                                v += mass * elements as f64;
                            }
                            col.push((q[0] + m * (q[1] + m * q[2])) as u32);
                            val.push(v);
                        }
                    }
                }
                row_ptr.push(col.len());
            }
        }
    }
    let a = SymMatrix { n, row_ptr, col, val };
    debug_assert!(a.check().is_ok());
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coords(i: usize, m: usize) -> [f64; 3] {
        [(i % m) as f64, (i / m % m) as f64, (i / (m * m)) as f64]
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(fe_stiffness(1, 4).is_err());
        assert!(fe_stiffness(4, 4).is_err());
        assert!(fe_stiffness(2, 0).is_err());
        assert!(fe_stiffness(3, 1000).unwrap_err().contains("exceeds"));
        // A size whose (k + 1)^dim overflows is refused, not wrapped to a small order.
        assert!(fe_stiffness(2, usize::MAX).unwrap_err().contains("exceeds"));
    }

    #[test]
    fn order_pattern_and_row_lengths() {
        for (dim, k) in [(2, 1), (2, 5), (3, 1), (3, 4)] {
            let a = fe_stiffness(dim, k).unwrap();
            a.check().unwrap();
            let m = k + 1;
            assert_eq!(a.n, m.pow(dim as u32));
            assert_eq!(a.nnz(), (3 * k + 1).pow(dim as u32));
            for i in 0..a.n {
                let c = coords(i, m);
                let expect: usize = (0..dim).map(|d| if c[d] == 0.0 || c[d] == k as f64 { 2 } else { 3 }).product();
                assert_eq!(a.row(i).0.len(), expect, "dim {dim} k {k} row {i}");
            }
        }
    }

    #[test]
    fn interior_stencils_are_exact() {
        let k = 4;
        let h = 0.25;
        let a = fe_stiffness(2, k).unwrap();
        let centre = 1 + 5;
        let (c, v) = a.row(centre);
        for (&j, &x) in c.iter().zip(v) {
            let want = if j as usize == centre { 8.0 / 3.0 + h * h } else { -1.0 / 3.0 };
            assert!((x - want).abs() < 1e-15, "2-D ({centre},{j}) = {x}, want {want}");
        }
        let a = fe_stiffness(3, k).unwrap();
        let centre = 1 + 5 + 25;
        let (c, v) = a.row(centre);
        for (&j, &x) in c.iter().zip(v) {
            let (p, q) = (coords(centre, 5), coords(j as usize, 5));
            let differ = (0..3).filter(|&d| p[d] != q[d]).count();
            let want = [8.0 * h / 3.0 + h * h * h, 0.0, -h / 6.0, -h / 12.0][differ];
            assert!((x - want).abs() < 1e-15, "3-D ({centre},{j}) = {x}, want {want}");
            if differ == 1 {
                assert_eq!(x, 0.0);
            }
        }
    }

    /// Row sums are the lumped mass (K annihilates constants), they add up to the volume, and
    /// for a linear u the stiffness energy u^T K u equals the exact integral of |grad u|^2.
    #[test]
    fn reproduces_volume_and_linear_energy() {
        for (dim, k) in [(2, 1), (2, 7), (3, 1), (3, 5)] {
            let a = fe_stiffness(dim, k).unwrap();
            let m = k + 1;
            let h = 1.0 / k as f64;
            let rowsum: Vec<f64> = (0..a.n).map(|i| a.row(i).1.iter().sum()).collect();
            assert!(rowsum.iter().all(|&s| s > 0.0));
            assert!((rowsum.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            // u = x + 2y (+ 3z): energy 1 + 4 (+ 9).
            let u: Vec<f64> = (0..a.n)
                .map(|i| {
                    let c = coords(i, m);
                    h * (c[0] + 2.0 * c[1] + 3.0 * c[2])
                })
                .collect();
            let mut au = vec![0.0; a.n];
            a.mul_vec(&u, &mut au);
            let energy: f64 = (0..a.n).map(|i| u[i] * au[i] - rowsum[i] * u[i] * u[i]).sum();
            let want = if dim == 2 { 5.0 } else { 14.0 };
            assert!((energy - want).abs() < 1e-10, "dim {dim} k {k}: energy {energy}");
        }
    }

    #[test]
    fn deterministic() {
        assert_eq!(fe_stiffness(3, 3).unwrap(), fe_stiffness(3, 3).unwrap());
    }
}
