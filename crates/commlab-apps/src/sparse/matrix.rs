//! [`SymMatrix`]: the symmetric CSR matrix every other part of `sparse` works on, and its
//! packed (row, column) keys.

/// Largest matrix order accepted (memory for a garbled size line stays bounded).
pub const MAX_ORDER: usize = 50_000_000;

/// Symmetric matrix, both triangles stored, CSR; column indices strictly increasing within each
/// row; every diagonal entry present (possibly as an explicit 0.0).
///
/// Invariants (checked by [`SymMatrix::check`], upheld by every constructor here): `n >= 1`,
/// `row_ptr.len() == n + 1`, `row_ptr[0] == 0`, `row_ptr` non-decreasing, `row_ptr[n] ==
/// col.len() == val.len()`, columns `< n`, and the stored pattern and values exactly symmetric.
#[derive(Clone, Debug, PartialEq)]
pub struct SymMatrix {
    pub n: usize,
    pub row_ptr: Vec<usize>,
    pub col: Vec<u32>,
    pub val: Vec<f64>,
}

impl SymMatrix {
    /// Stored entries, both triangles (the "full nonzeros" of a symmetric matrix).
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// Columns and values of row `i`, columns increasing.
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.row_ptr[i]..self.row_ptr[i + 1];
        (&self.col[r.clone()], &self.val[r])
    }

    /// Off-diagonal entries in row `i` (the node's degree in the matrix graph).
    pub fn degree(&self, i: usize) -> usize {
        self.row_ptr[i + 1] - self.row_ptr[i] - 1
    }

    /// The diagonal entry of row `i`.
    pub fn diag(&self, i: usize) -> f64 {
        let (c, v) = self.row(i);
        match c.binary_search(&(i as u32)) {
            Ok(p) => v[p],
            Err(_) => 0.0,
        }
    }

    /// `y = A x`. Panics if `x` or `y` is not of length `n`.
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.n, "mul_vec: x has the wrong length");
        assert_eq!(y.len(), self.n, "mul_vec: y has the wrong length");
        for (i, yi) in y.iter_mut().enumerate() {
            let (c, v) = self.row(i);
            *yi = c.iter().zip(v).map(|(&j, &a)| a * x[j as usize]).sum();
        }
    }

    /// `P A P^T`, where `new_of_old[i]` is the new index of old row `i`: entry `(i, j)` moves to
    /// `(new_of_old[i], new_of_old[j])`. Panics unless `new_of_old` is a permutation of `0..n`.
    pub fn permuted(&self, new_of_old: &[usize]) -> SymMatrix {
        let old_of_new = match invert_permutation(new_of_old) {
            Ok(p) if p.len() == self.n => p,
            Ok(_) => panic!("permuted: permutation has length {}, matrix order is {}", new_of_old.len(), self.n),
            Err(e) => panic!("permuted: {e}"),
        };
        let mut row_ptr = Vec::with_capacity(self.n + 1);
        row_ptr.push(0);
        let mut col = Vec::with_capacity(self.nnz());
        let mut val = Vec::with_capacity(self.nnz());
        let mut buf: Vec<(u32, f64)> = Vec::new();
        for &old in &old_of_new {
            let (c, v) = self.row(old);
            buf.clear();
            buf.extend(c.iter().zip(v).map(|(&j, &a)| (new_of_old[j as usize] as u32, a)));
            buf.sort_unstable_by_key(|e| e.0);
            col.extend(buf.iter().map(|e| e.0));
            val.extend(buf.iter().map(|e| e.1));
            row_ptr.push(col.len());
        }
        SymMatrix { n: self.n, row_ptr, col, val }
    }

    /// Builds a matrix from one triangle's worth of entries. Each `(i, j, v)` (0-based) sets both
    /// `A[i][j]` and `A[j][i]` to `v`; entries may be given from either triangle but each
    /// unordered position at most once. Diagonal entries not given are stored as explicit 0.0.
    /// Errors: `n == 0`, an index `>= n`, a repeated position, a non-finite value, or `n` beyond
    /// [`MAX_ORDER`].
    pub fn from_triplets(n: usize, lower: &[(usize, usize, f64)]) -> Result<SymMatrix, String> {
        if n == 0 {
            return Err("matrix order must be at least 1".into());
        }
        if n > MAX_ORDER {
            return Err(format!("matrix order {n} exceeds the supported maximum {MAX_ORDER}"));
        }
        let mut e: Vec<(u64, f64)> = Vec::with_capacity(lower.len());
        for (k, &(i, j, v)) in lower.iter().enumerate() {
            if i >= n || j >= n {
                return Err(format!("triplet {k}: index ({i}, {j}) out of range for order {n}"));
            }
            if !v.is_finite() {
                return Err(format!("triplet {k}: value {v} at ({i}, {j}) is not finite"));
            }
            let (r, c) = if i >= j { (i, j) } else { (j, i) };
            e.push((key(r as u32, c as u32), v));
        }
        e.sort_unstable_by_key(|a| a.0);
        if let Some(w) = e.windows(2).find(|w| w[0].0 == w[1].0) {
            let (r, c) = unkey(w[0].0);
            return Err(format!("position ({r}, {c}) given more than once (counting its mirror)"));
        }
        Ok(from_sorted_lower(n, || e.iter().map(|&(k, v)| (unkey(k).0, unkey(k).1, v))))
    }

    /// The same pattern with values that make it symmetric positive definite: off-diagonal -1,
    /// diagonal = (off-diagonal entries in the row) + 1. This is what pattern-only Matrix Market
    /// files get; useful too for files such as can_1072 whose values are all 1.
    pub fn with_laplacian_values(&self) -> SymMatrix {
        let mut m = self.clone();
        for i in 0..m.n {
            let d = m.degree(i) as f64 + 1.0;
            for p in m.row_ptr[i]..m.row_ptr[i + 1] {
                m.val[p] = if m.col[p] as usize == i { d } else { -1.0 };
            }
        }
        m
    }

    /// Checks every invariant listed on the type, including exact symmetry of values.
    pub fn check(&self) -> Result<(), String> {
        let n = self.n;
        if n == 0 {
            return Err("order 0".into());
        }
        if self.row_ptr.len() != n + 1 || self.row_ptr[0] != 0 {
            return Err("row_ptr must have n + 1 entries starting at 0".into());
        }
        if self.row_ptr[n] != self.col.len() || self.col.len() != self.val.len() {
            return Err("row_ptr[n], col.len() and val.len() differ".into());
        }
        for i in 0..n {
            if self.row_ptr[i] > self.row_ptr[i + 1] {
                return Err(format!("row_ptr decreases at row {i}"));
            }
            let (c, v) = self.row(i);
            if c.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("row {i}: columns not strictly increasing"));
            }
            if c.last().is_some_and(|&j| j as usize >= n) {
                return Err(format!("row {i}: column out of range"));
            }
            if c.binary_search(&(i as u32)).is_err() {
                return Err(format!("row {i}: no diagonal entry"));
            }
            for (&j, &a) in c.iter().zip(v) {
                let (cj, vj) = self.row(j as usize);
                match cj.binary_search(&(i as u32)) {
                    Ok(p) if vj[p] == a || (a.is_nan() && vj[p].is_nan()) => {}
                    Ok(_) => return Err(format!("A[{i}][{j}] != A[{j}][{i}]")),
                    Err(_) => return Err(format!("A[{i}][{j}] stored but A[{j}][{i}] is not")),
                }
            }
        }
        Ok(())
    }
}

/// Inverse of a permutation: `old_of_new[new_of_old[i]] == i`. Errors if `p` is not a
/// permutation of `0..p.len()`.
pub fn invert_permutation(p: &[usize]) -> Result<Vec<usize>, String> {
    let mut inv = vec![usize::MAX; p.len()];
    for (i, &x) in p.iter().enumerate() {
        if x >= p.len() {
            return Err(format!("entry {i} is {x}, out of range for length {}", p.len()));
        }
        if inv[x] != usize::MAX {
            return Err(format!("{x} appears twice (entries {} and {i})", inv[x]));
        }
        inv[x] = i;
    }
    Ok(inv)
}

/// Sort key of a lower-triangle position: row-major order.
pub(crate) fn key(r: u32, c: u32) -> u64 {
    ((r as u64) << 32) | c as u64
}

pub(crate) fn unkey(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// Builds the full CSR from lower-triangle entries `(row, col, value)` with `row >= col`, sorted
/// row-major and without repeats (the caller guarantees this). No sorting is needed: row `i` is
/// its lower entries (in order), then its diagonal (0.0 if absent), then the entries of column `i`
/// below the diagonal, which a row-major walk visits in increasing row order. `entries` is
/// called twice (a counting pass and a filling pass).
pub(crate) fn from_sorted_lower<I, F>(n: usize, entries: F) -> SymMatrix
where
    F: Fn() -> I,
    I: Iterator<Item = (u32, u32, f64)>,
{
    let mut lower_count = vec![0usize; n];
    let mut upper_count = vec![0usize; n];
    for (r, c, _) in entries() {
        debug_assert!(r >= c && (r as usize) < n);
        if r != c {
            lower_count[r as usize] += 1;
            upper_count[c as usize] += 1;
        }
    }
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0usize);
    for i in 0..n {
        row_ptr.push(row_ptr[i] + lower_count[i] + 1 + upper_count[i]);
    }
    let nnz = row_ptr[n];
    let mut col = vec![0u32; nnz];
    let mut val = vec![0.0f64; nnz];
    // Next free slot of each row's lower part; its upper part starts after the diagonal.
    let mut low_next: Vec<usize> = row_ptr[..n].to_vec();
    let mut up_next = upper_count; // reused as storage
    for i in 0..n {
        let d = row_ptr[i] + lower_count[i];
        col[d] = i as u32;
        up_next[i] = d + 1;
    }
    for (r, c, v) in entries() {
        let (ru, cu) = (r as usize, c as usize);
        if r == c {
            val[row_ptr[ru] + lower_count[ru]] = v;
        } else {
            col[low_next[ru]] = c;
            val[low_next[ru]] = v;
            low_next[ru] += 1;
            col[up_next[cu]] = r;
            val[up_next[cu]] = v;
            up_next[cu] += 1;
        }
    }
    SymMatrix { n, row_ptr, col, val }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SymMatrix {
        // 4x4: diag 4, a path 0-1-2-3 with -1, plus (3,0) = -0.5.
        SymMatrix::from_triplets(
            4,
            &[
                (0, 0, 4.0),
                (1, 1, 4.0),
                (2, 2, 4.0),
                (3, 3, 4.0),
                (1, 0, -1.0),
                (2, 1, -1.0),
                (3, 2, -1.0),
                (0, 3, -0.5),
            ],
        )
        .unwrap()
    }

    #[test]
    fn from_triplets_builds_both_triangles_sorted() {
        let a = small();
        a.check().unwrap();
        assert_eq!(a.nnz(), 4 + 2 * 4);
        assert_eq!(a.row(0), (&[0u32, 1, 3][..], &[4.0, -1.0, -0.5][..]));
        assert_eq!(a.row(3), (&[0u32, 2, 3][..], &[-0.5, -1.0, 4.0][..]));
        assert_eq!(a.degree(1), 2);
        assert_eq!(a.diag(2), 4.0);
    }

    #[test]
    fn from_triplets_inserts_missing_diagonal_and_rejects_bad_input() {
        let a = SymMatrix::from_triplets(3, &[(2, 0, 1.0)]).unwrap();
        a.check().unwrap();
        assert_eq!(a.nnz(), 5);
        assert_eq!(a.diag(1), 0.0);
        assert!(SymMatrix::from_triplets(0, &[]).is_err());
        assert!(SymMatrix::from_triplets(2, &[(2, 0, 1.0)]).unwrap_err().contains("out of range"));
        assert!(SymMatrix::from_triplets(2, &[(1, 0, 1.0), (0, 1, 1.0)]).unwrap_err().contains("more than once"));
        assert!(SymMatrix::from_triplets(2, &[(1, 1, f64::NAN)]).unwrap_err().contains("not finite"));
    }

    #[test]
    fn mul_vec_matches_dense() {
        let a = small();
        let x = [1.0, 2.0, 3.0, 4.0];
        let mut y = [0.0; 4];
        a.mul_vec(&x, &mut y);
        assert_eq!(y, [4.0 - 2.0 - 2.0, -1.0 + 8.0 - 3.0, -2.0 + 12.0 - 4.0, -0.5 - 3.0 + 16.0]);
    }

    #[test]
    fn permuted_moves_entries_and_inverse_restores() {
        let a = small();
        let p = [2, 0, 3, 1];
        let b = a.permuted(&p);
        b.check().unwrap();
        for i in 0..4 {
            let (c, v) = a.row(i);
            for (&j, &x) in c.iter().zip(v) {
                let (cb, vb) = b.row(p[i]);
                let k = cb.binary_search(&(p[j as usize] as u32)).unwrap();
                assert_eq!(vb[k], x);
            }
        }
        let inv = invert_permutation(&p).unwrap();
        assert_eq!(b.permuted(&inv), a);
    }

    #[test]
    #[should_panic(expected = "appears twice")]
    fn permuted_rejects_non_permutation() {
        small().permuted(&[0, 0, 1, 2]);
    }

    #[test]
    fn laplacian_values_are_diagonally_dominant() {
        let a = small().with_laplacian_values();
        a.check().unwrap();
        assert_eq!(a.row(0).1, &[3.0, -1.0, -1.0]);
        assert_eq!(a.row(1).1, &[-1.0, 3.0, -1.0]);
    }

    #[test]
    fn check_catches_asymmetry() {
        let mut a = small();
        a.val[1] = 7.0;
        assert!(a.check().unwrap_err().contains("!="));
    }
}
