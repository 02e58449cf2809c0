//! The numbers of `appbt`: the grid, its initial values, the right-hand side's stencil, the
//! 5x5 blocks of the implicit operator and their block operations (multiply, LU factor,
//! solve), and the sequential reference program over the whole grid.
//!
//! The system solved along a line of `n` points is `A_i x_(i-1) + B_i x_i + C_i x_(i+1) =
//! r_i` with, at every point, `A_i = C_i = -c (I + w u u^T)`, `w = 0.1 / (1 + |u|^2)` (a
//! Jacobian-like block that depends on the point's five values `u`) and `B_i = (1 + 2.2 c) I`:
//! block diagonally dominant (`|A_i| + |C_i| <= 2.2 c`), so the block Thomas algorithm needs no
//! pivoting. Forward elimination: `B'_i = B_i - A_i C'_(i-1)`, `r'_i = r_i - A_i r'_(i-1)`,
//! factor `B'_i = LU`, `C'_i = B'_i^-1 C_i`, `r'_i = B'_i^-1 r'_i`; back substitution:
//! `x_i = r'_i - C'_i x_(i+1)`. Every point, the last of a line included, computes its
//! `C'_i` (a processor does not know whether the line continues on its successor).

/// Unknowns per grid point.
pub const COMP: usize = 5;
/// Words of a point's forward-elimination result: `C'` (25) and `r'` (5).
pub const FWD_WORDS: usize = COMP * COMP + COMP;

pub type Block = [[f64; COMP]; COMP];
pub type Vec5 = [f64; COMP];

/// Coupling of neighbouring points along a line (`c` above).
const COUPLING: f64 = 0.5;
/// Weight of the stencil in the right-hand side.
const STENCIL: f64 = 0.1;

/// The grid: `dims[0] x dims[1] x dims[2]` points (x, y, z), numbered x-major.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub dims: [usize; 3],
}

impl Grid {
    pub fn points(&self) -> usize {
        self.dims.iter().product()
    }
    /// Index of point `(x, y, z)`.
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        (x * self.dims[1] + y) * self.dims[2] + z
    }
}

/// The initial values: small integers mod 7, scaled, different per component.
pub fn initial(g: &Grid) -> Vec<f64> {
    let mut u = vec![0.0; COMP * g.points()];
    for x in 0..g.dims[0] {
        for y in 0..g.dims[1] {
            for z in 0..g.dims[2] {
                for j in 0..COMP {
                    let k = ((x + 1) * (j + 1) + 2 * (y + 1) + 3 * (z + 1) + j) % 7;
                    u[COMP * g.index(x, y, z) + j] = k as f64 / 7.0 - 0.5;
                }
            }
        }
    }
    u
}

/// The right-hand side at a point from its value and its six neighbours' (zero beyond the
/// grid's faces), in the order -x, +x, -y, +y, -z, +z: `STENCIL (sum - 6 u) + f`, with a
/// constant forcing `f_j = 0.01 (j + 1)`.
pub fn rhs_point(u: &Vec5, nbrs: &[Vec5; 6]) -> Vec5 {
    let mut r = [0.0; COMP];
    for j in 0..COMP {
        let mut s = 0.0;
        for nb in nbrs {
            s += nb[j];
        }
        r[j] = STENCIL * (s - 6.0 * u[j]) + 0.01 * (j + 1) as f64;
    }
    r
}

/// `A_i = C_i` of a point with values `u`.
pub fn off_diagonal(u: &Vec5) -> Block {
    let norm: f64 = u.iter().map(|v| v * v).sum();
    let w = 0.1 / (1.0 + norm);
    let mut a = [[0.0; COMP]; COMP];
    for j in 0..COMP {
        for k in 0..COMP {
            let id = if j == k { 1.0 } else { 0.0 };
            a[j][k] = -COUPLING * (id + w * u[j] * u[k]);
        }
    }
    a
}

/// `B_i`.
pub fn diagonal() -> Block {
    let mut b = [[0.0; COMP]; COMP];
    for (j, row) in b.iter_mut().enumerate() {
        row[j] = 1.0 + 2.2 * COUPLING;
    }
    b
}

/// `b -= a c` (a block multiply).
pub fn mul_sub(b: &mut Block, a: &Block, c: &Block) {
    for j in 0..COMP {
        for k in 0..COMP {
            let mut s = b[j][k];
            for m in 0..COMP {
                s -= a[j][m] * c[m][k];
            }
            b[j][k] = s;
        }
    }
}

/// `r -= a x` (a block times a vector).
pub fn matvec_sub(r: &mut Vec5, a: &Block, x: &Vec5) {
    for j in 0..COMP {
        let mut s = r[j];
        for m in 0..COMP {
            s -= a[j][m] * x[m];
        }
        r[j] = s;
    }
}

/// LU factorisation in place without pivoting: `L` (unit diagonal) below, `U` above, the
/// diagonal holding the reciprocals of `U`'s pivots.
pub fn factor(b: &mut Block) {
    for k in 0..COMP {
        let inv = 1.0 / b[k][k];
        b[k][k] = inv;
        let pivot_row = b[k];
        for row in b.iter_mut().skip(k + 1) {
            row[k] *= inv;
            let l = row[k];
            for (m, v) in row.iter_mut().enumerate().skip(k + 1) {
                *v -= l * pivot_row[m];
            }
        }
    }
}

/// Solve `LU x = r` in place for one right-hand side, with `lu` from [`factor`].
pub fn solve(lu: &Block, r: &mut Vec5) {
    for j in 1..COMP {
        for m in 0..j {
            r[j] -= lu[j][m] * r[m];
        }
    }
    for j in (0..COMP).rev() {
        for m in j + 1..COMP {
            r[j] -= lu[j][m] * r[m];
        }
        r[j] *= lu[j][j];
    }
}

/// Solve for each of the five columns of `c` in place (`C' = B'^-1 C`).
pub fn solve_block(lu: &Block, c: &mut Block) {
    for k in 0..COMP {
        let mut col = c.map(|row| row[k]);
        solve(lu, &mut col);
        for (row, v) in c.iter_mut().zip(col) {
            row[k] = v;
        }
    }
}

/// One point's forward elimination: its values `u`, its right-hand side `r` and the previous
/// point's result (none at the start of a line) give its `C'` and `r'`.
pub fn forward_point(u: &Vec5, r: &Vec5, prev: Option<(&Block, &Vec5)>) -> (Block, Vec5) {
    let a = off_diagonal(u);
    let mut b = diagonal();
    let mut rr = *r;
    if let Some((cp, rp)) = prev {
        mul_sub(&mut b, &a, cp);
        matvec_sub(&mut rr, &a, rp);
    }
    factor(&mut b);
    let mut c = a;
    solve_block(&b, &mut c);
    solve(&b, &mut rr);
    (c, rr)
}

/// One point's back substitution: `x_i = r'_i - C'_i x_(i+1)`.
pub fn backward_point(c: &Block, r: &Vec5, next: Option<&Vec5>) -> Vec5 {
    let mut x = *r;
    if let Some(n) = next {
        matvec_sub(&mut x, c, n);
    }
    x
}

/// A forward result as words (`C'` row by row, then `r'`), and back.
pub fn fwd_to_words(c: &Block, r: &Vec5) -> [u64; FWD_WORDS] {
    let mut w = [0u64; FWD_WORDS];
    for j in 0..COMP {
        for k in 0..COMP {
            w[COMP * j + k] = c[j][k].to_bits();
        }
        w[COMP * COMP + j] = r[j].to_bits();
    }
    w
}

pub fn fwd_from_words(w: &[u64]) -> (Block, Vec5) {
    let mut c = [[0.0; COMP]; COMP];
    let mut r = [0.0; COMP];
    for j in 0..COMP {
        for k in 0..COMP {
            c[j][k] = f64::from_bits(w[COMP * j + k]);
        }
        r[j] = f64::from_bits(w[COMP * COMP + j]);
    }
    (c, r)
}

/// Solve one line of the system in place: `r` holds the line's right-hand sides in order and
/// `u` its points' values.
fn solve_line(u: &[Vec5], r: &mut [Vec5]) {
    let mut fwd: Vec<(Block, Vec5)> = Vec::with_capacity(r.len());
    for i in 0..r.len() {
        let prev = fwd.last().map(|(c, rp)| (c, rp));
        let f = forward_point(&u[i], &r[i], prev);
        fwd.push(f);
    }
    let mut next: Option<Vec5> = None;
    for i in (0..r.len()).rev() {
        let x = backward_point(&fwd[i].0, &fwd[i].1, next.as_ref());
        r[i] = x;
        next = Some(x);
    }
}

fn get(v: &[f64], i: usize) -> Vec5 {
    [v[COMP * i], v[COMP * i + 1], v[COMP * i + 2], v[COMP * i + 3], v[COMP * i + 4]]
}

/// The sequential program over the whole grid: `iterations` times, the right-hand side, the
/// x, y and z sweeps (each line's block-tridiagonal system, the blocks from `u`), `u += du`.
/// Returns the final `u`.
pub fn reference(g: &Grid, iterations: usize) -> Vec<f64> {
    let [nx, ny, nz] = g.dims;
    let mut u = initial(g);
    let zero = [0.0; COMP];
    for _ in 0..iterations {
        let mut r = vec![0.0; u.len()];
        for x in 0..nx {
            for y in 0..ny {
                for z in 0..nz {
                    let at = |xx: usize, yy: usize, zz: usize| get(&u, g.index(xx, yy, zz));
                    let nbrs = [
                        if x > 0 { at(x - 1, y, z) } else { zero },
                        if x + 1 < nx { at(x + 1, y, z) } else { zero },
                        if y > 0 { at(x, y - 1, z) } else { zero },
                        if y + 1 < ny { at(x, y + 1, z) } else { zero },
                        if z > 0 { at(x, y, z - 1) } else { zero },
                        if z + 1 < nz { at(x, y, z + 1) } else { zero },
                    ];
                    let v = rhs_point(&at(x, y, z), &nbrs);
                    r[COMP * g.index(x, y, z)..COMP * g.index(x, y, z) + COMP].copy_from_slice(&v);
                }
            }
        }
        for axis in 0..3 {
            let n = g.dims[axis];
            let (o1, o2) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            for a in 0..g.dims[o1] {
                for b in 0..g.dims[o2] {
                    let idx: Vec<usize> = (0..n)
                        .map(|i| {
                            let mut c = [0; 3];
                            c[axis] = i;
                            c[o1] = a;
                            c[o2] = b;
                            g.index(c[0], c[1], c[2])
                        })
                        .collect();
                    let uu: Vec<Vec5> = idx.iter().map(|&i| get(&u, i)).collect();
                    let mut rr: Vec<Vec5> = idx.iter().map(|&i| get(&r, i)).collect();
                    solve_line(&uu, &mut rr);
                    for (k, &i) in idx.iter().enumerate() {
                        r[COMP * i..COMP * i + COMP].copy_from_slice(&rr[k]);
                    }
                }
            }
        }
        for (ui, ri) in u.iter_mut().zip(&r) {
            *ui += ri;
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block Thomas algorithm solves the line's system: the residual of the original
    /// (unfactored) equations is at rounding level.
    #[test]
    fn a_line_solve_satisfies_its_block_tridiagonal_system() {
        let g = Grid { dims: [9, 1, 1] };
        let u0 = initial(&g);
        let u: Vec<Vec5> = (0..9).map(|i| get(&u0, i)).collect();
        let r0: Vec<Vec5> = (0..9).map(|i| [i as f64, 1.0, -2.0, 0.5 * i as f64, 3.0]).collect();
        let mut x = r0.clone();
        solve_line(&u, &mut x);
        let b = diagonal();
        for i in 0..9 {
            let a = off_diagonal(&u[i]);
            let mut res = r0[i];
            matvec_sub(&mut res, &b, &x[i]);
            if i > 0 {
                matvec_sub(&mut res, &a, &x[i - 1]);
            }
            if i + 1 < 9 {
                matvec_sub(&mut res, &a, &x[i + 1]);
            }
            for v in res {
                assert!(v.abs() < 1e-12, "point {i}: residual {v}");
            }
        }
    }

    #[test]
    fn factor_and_solve_invert_a_block() {
        let mut b = diagonal();
        mul_sub(&mut b, &off_diagonal(&[0.3, -0.2, 0.1, 0.4, -0.5]), &off_diagonal(&[0.1, 0.2, 0.3, 0.4, 0.5]));
        let orig = b;
        let mut lu = b;
        factor(&mut lu);
        let want = [1.0, -2.0, 3.0, -4.0, 5.0];
        let mut r = [0.0; COMP];
        matvec_sub(&mut r, &orig, &want);
        let mut x = r.map(|v| -v);
        solve(&lu, &mut x);
        for j in 0..COMP {
            assert!((x[j] - want[j]).abs() < 1e-12, "{x:?}");
        }
    }

    #[test]
    fn the_reference_stays_finite_and_moves() {
        let g = Grid { dims: [4, 3, 5] };
        let u0 = initial(&g);
        let u = reference(&g, 3);
        assert!(u.iter().all(|v| v.is_finite()));
        assert!(u.iter().zip(&u0).any(|(a, b)| a != b));
    }
}
