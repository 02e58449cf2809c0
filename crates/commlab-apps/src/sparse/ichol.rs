//! IC(0) incomplete Cholesky factorisation and the triangular solves that apply it.

use super::matrix::SymMatrix;

/// Lower-triangular factor by rows: row `i` holds its strictly-lower entries (sorted by column)
/// followed by the diagonal as the LAST entry of the row (so `val[row_ptr[i + 1] - 1]` is
/// `L[i][i]`).
#[derive(Clone, Debug, PartialEq)]
pub struct LowerFactor {
    pub n: usize,
    pub row_ptr: Vec<usize>,
    pub col: Vec<u32>,
    pub val: Vec<f64>,
}

impl LowerFactor {
    /// Strictly-lower columns and values of row `i`, and the diagonal `L[i][i]`.
    pub fn row(&self, i: usize) -> (&[u32], &[f64], f64) {
        let (s, e) = (self.row_ptr[i], self.row_ptr[i + 1] - 1);
        (&self.col[s..e], &self.val[s..e], self.val[e])
    }

    /// Stored entries including the diagonal.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// Solves `L y = b` in place (`x` holds `b` on entry, `y` on return).
    pub fn forward_in_place(&self, x: &mut [f64]) {
        assert_eq!(x.len(), self.n, "forward solve: wrong vector length");
        for i in 0..self.n {
            let (c, v, d) = self.row(i);
            let s: f64 = c.iter().zip(v).map(|(&j, &l)| l * x[j as usize]).sum();
            x[i] = (x[i] - s) / d;
        }
    }

    /// Solves `L^T x = y` in place (`x` holds `y` on entry), walking rows of `L` from the last:
    /// once `x[i]` is final, its column of `L^T` (row `i` of `L`) is subtracted from the rest.
    pub fn backward_in_place(&self, x: &mut [f64]) {
        assert_eq!(x.len(), self.n, "backward solve: wrong vector length");
        for i in (0..self.n).rev() {
            let (c, v, d) = self.row(i);
            let xi = x[i] / d;
            x[i] = xi;
            for (&j, &l) in c.iter().zip(v) {
                x[j as usize] -= l * xi;
            }
        }
    }

    /// `z = (L L^T)^{-1} r`, the IC preconditioner, as [`super::pcg`] wants it.
    pub fn apply(&self, r: &[f64], z: &mut [f64]) {
        z.copy_from_slice(r);
        self.forward_in_place(z);
        self.backward_in_place(z);
    }
}

/// IC(0): incomplete Cholesky `A ≈ L L^T` where `L` has exactly the pattern of the lower triangle
/// of `A` (fill outside it is dropped). Row-oriented: for each `j < i` in row `i`,
/// `L[i][j] = (A[i][j] - sum_{k<j} L[i][k] L[j][k]) / L[j][j]`, then
/// `L[i][i] = sqrt(A[i][i] - sum_{k<i} L[i][k]^2)`, the sums running over positions present in
/// both rows. Consequently `(L L^T)[i][j] == A[i][j]` on the pattern. Errors naming the row when
/// a pivot is not positive (or not finite).
pub fn ichol0(a: &SymMatrix) -> Result<LowerFactor, String> {
    let n = a.n;
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0usize);
    for i in 0..n {
        let lower = a.row(i).0.iter().take_while(|&&j| j as usize <= i).count();
        row_ptr.push(row_ptr[i] + lower);
    }
    let nnz = row_ptr[n];
    let mut col = Vec::with_capacity(nnz);
    let mut val = Vec::with_capacity(nnz);
    // pos[k] = index in `val` of L[i][k] for the row i being factored, or usize::MAX.
    let mut pos = vec![usize::MAX; n];
    for i in 0..n {
        let (c, v) = a.row(i);
        let start = col.len();
        let mut diag = None;
        for (&j, &x) in c.iter().zip(v) {
            if j as usize >= i {
                if j as usize == i {
                    diag = Some(x);
                }
                break;
            }
            pos[j as usize] = col.len();
            col.push(j);
            val.push(x);
        }
        let Some(aii) = diag else {
            return Err(format!("IC(0) failed at row {i}: no diagonal entry"));
        };
        for p in start..col.len() {
            let j = col[p] as usize;
            // Row j of L is complete; its strictly-lower part is [row_ptr[j], row_ptr[j+1]-1).
            let mut s = val[p];
            for q in row_ptr[j]..row_ptr[j + 1] - 1 {
                let k = col[q] as usize;
                if pos[k] != usize::MAX {
                    s -= val[pos[k]] * val[q];
                }
            }
            val[p] = s / val[row_ptr[j + 1] - 1];
        }
        let sq: f64 = val[start..].iter().map(|l| l * l).sum();
        let pivot = aii - sq;
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(format!(
                "IC(0) failed at row {i}: pivot {pivot:e} is not positive (A[{i}][{i}] = {aii:e}); \
                 the matrix is not positive definite enough for IC(0)"
            ));
        }
        for &k in &col[start..] {
            pos[k as usize] = usize::MAX;
        }
        col.push(i as u32);
        val.push(pivot.sqrt());
    }
    Ok(LowerFactor { n, row_ptr, col, val })
}

/// Solves `L y = b`.
pub fn forward_solve(l: &LowerFactor, b: &[f64]) -> Vec<f64> {
    let mut y = b.to_vec();
    l.forward_in_place(&mut y);
    y
}

/// Solves `L^T x = y`.
pub fn backward_solve(l: &LowerFactor, y: &[f64]) -> Vec<f64> {
    let mut x = y.to_vec();
    l.backward_in_place(&mut x);
    x
}

#[cfg(test)]
mod tests {
    use super::super::fe_stiffness;
    use super::*;

    fn dense_lower(l: &LowerFactor) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; l.n]; l.n];
        for (i, row) in d.iter_mut().enumerate() {
            for p in l.row_ptr[i]..l.row_ptr[i + 1] {
                row[l.col[p] as usize] = l.val[p];
            }
        }
        d
    }

    fn dense(a: &SymMatrix) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; a.n]; a.n];
        for (i, row) in d.iter_mut().enumerate() {
            let (c, v) = a.row(i);
            for (&j, &x) in c.iter().zip(v) {
                row[j as usize] = x;
            }
        }
        d
    }

    fn tridiagonal(n: usize) -> SymMatrix {
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0 + i as f64 * 0.1));
            if i > 0 {
                t.push((i, i - 1, -1.0));
            }
        }
        SymMatrix::from_triplets(n, &t).unwrap()
    }

    #[test]
    fn no_fill_matrix_is_factored_exactly() {
        // Tridiagonal plus an arrow into the last row: exact Cholesky has no fill.
        let n = 30;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 4.0 + (i % 3) as f64));
            if i > 0 && i < n - 1 {
                t.push((i, i - 1, -1.0));
            }
            if i < n - 1 {
                t.push((n - 1, i, 0.1));
            }
        }
        let a = SymMatrix::from_triplets(n, &t).unwrap();
        let l = ichol0(&a).unwrap();
        let ld = dense_lower(&l);
        let ad = dense(&a);
        for i in 0..n {
            for j in 0..n {
                let llt: f64 = (0..n).map(|k| ld[i][k] * ld[j][k]).sum();
                assert!((llt - ad[i][j]).abs() < 1e-12, "({i},{j}): {llt} vs {}", ad[i][j]);
            }
        }
        let lt = ichol0(&tridiagonal(50)).unwrap();
        assert_eq!(lt.nnz(), 99);
    }

    #[test]
    fn factor_layout_has_diagonal_last() {
        let a = fe_stiffness(2, 3).unwrap();
        let l = ichol0(&a).unwrap();
        for i in 0..l.n {
            let (c, _, d) = l.row(i);
            assert!(d > 0.0);
            assert_eq!(l.col[l.row_ptr[i + 1] - 1] as usize, i);
            assert!(c.windows(2).all(|w| w[0] < w[1]) && c.iter().all(|&j| (j as usize) < i));
            assert_eq!(c, &a.row(i).0[..c.len()]);
        }
    }

    #[test]
    fn ic0_matches_a_on_its_pattern() {
        let a = fe_stiffness(3, 3).unwrap();
        let l = ichol0(&a).unwrap();
        let ld = dense_lower(&l);
        for i in 0..a.n {
            let (c, v) = a.row(i);
            for (&j, &x) in c.iter().zip(v) {
                let llt: f64 = (0..a.n).map(|k| ld[i][k] * ld[j as usize][k]).sum();
                assert!((llt - x).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn solves_match_dense_reference() {
        let a = fe_stiffness(2, 4).unwrap();
        let l = ichol0(&a).unwrap();
        let ld = dense_lower(&l);
        let n = l.n;
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let y = forward_solve(&l, &b);
        for i in 0..n {
            let s: f64 = (0..n).map(|k| ld[i][k] * y[k]).sum();
            assert!((s - b[i]).abs() < 1e-12);
        }
        let x = backward_solve(&l, &y);
        for i in 0..n {
            let s: f64 = (0..n).map(|k| ld[k][i] * x[k]).sum();
            assert!((s - y[i]).abs() < 1e-12);
        }
        let mut z = vec![0.0; n];
        l.apply(&b, &mut z);
        assert_eq!(z, x);
    }

    #[test]
    fn reports_breakdown_row() {
        let a = SymMatrix::from_triplets(3, &[(0, 0, 1.0), (1, 1, 1.0), (1, 0, 2.0), (2, 2, 1.0)]).unwrap();
        let e = ichol0(&a).unwrap_err();
        assert!(e.contains("row 1") && e.contains("not positive definite enough"), "{e}");
        let z = SymMatrix::from_triplets(2, &[(0, 0, 1.0)]).unwrap();
        assert!(ichol0(&z).unwrap_err().contains("row 1"));
    }
}
