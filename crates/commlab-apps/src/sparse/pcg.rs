//! Sequential preconditioned conjugate gradients, the reference the parallel ICCG is checked
//! against.

use super::matrix::SymMatrix;

/// Outcome of [`pcg`].
#[derive(Clone, Debug, PartialEq)]
pub struct PcgResult {
    pub x: Vec<f64>,
    /// CG steps taken (matrix-vector products with `A`, not counting the final residual check).
    pub iterations: usize,
    /// True relative residual `||b - A x|| / ||b||` of the returned `x` (0 when `b == 0`).
    pub rel_residual: f64,
    /// `rel_residual <= rtol`.
    pub converged: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn true_residual(a: &SymMatrix, b: &[f64], x: &[f64], r: &mut [f64]) {
    a.mul_vec(x, r);
    for (ri, bi) in r.iter_mut().zip(b) {
        *ri = bi - *ri;
    }
}

/// Preconditioned CG for SPD `a`, from `x0 = 0`, until `||b - A x|| / ||b|| <= rtol` or
/// `max_iter` steps. `precond(r, z)` must set `z = M^{-1} r` for an SPD `M` (identity:
/// `|r, z| z.copy_from_slice(r)`; IC(0): `|r, z| l.apply(r, z)`).
///
/// The recurrence's residual decides when to stop; the true residual is then computed, and if
/// rounding has left it above `rtol` the iteration restarts from the true residual (still within
/// `max_iter`). Stops early, unconverged, if `p^T A p <= 0`, `r^T z <= 0` or anything becomes non-finite (the
/// matrix or preconditioner is not SPD). Deterministic: all sums run in index order.
pub fn pcg(
    a: &SymMatrix,
    b: &[f64],
    mut precond: impl FnMut(&[f64], &mut [f64]),
    rtol: f64,
    max_iter: usize,
) -> PcgResult {
    let n = a.n;
    assert_eq!(b.len(), n, "pcg: b has the wrong length");
    let mut x = vec![0.0; n];
    let bnorm = dot(b, b).sqrt();
    if bnorm == 0.0 {
        return PcgResult { x, iterations: 0, rel_residual: 0.0, converged: true };
    }
    let mut r = b.to_vec();
    let mut z = vec![0.0; n];
    let mut q = vec![0.0; n];
    let mut iterations = 0;
    'restart: while iterations < max_iter {
        precond(&r, &mut z);
        let mut p = z.clone();
        let mut rz = dot(&r, &z);
        while iterations < max_iter {
            a.mul_vec(&p, &mut q);
            iterations += 1;
            let pq = dot(&p, &q);
            if !(pq > 0.0 && pq.is_finite() && rz > 0.0 && rz.is_finite()) {
                break 'restart;
            }
            let alpha = rz / pq;
            for i in 0..n {
                x[i] += alpha * p[i];
                r[i] -= alpha * q[i];
            }
            if dot(&r, &r).sqrt() / bnorm <= rtol {
                true_residual(a, b, &x, &mut r);
                if dot(&r, &r).sqrt() / bnorm <= rtol {
                    break 'restart;
                }
                continue 'restart;
            }
            precond(&r, &mut z);
            let rz_new = dot(&r, &z);
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
        }
    }
    true_residual(a, b, &x, &mut r);
    let rel_true = dot(&r, &r).sqrt() / bnorm;
    let rel = if rel_true.is_finite() { rel_true } else { f64::INFINITY };
    PcgResult { x, iterations, rel_residual: rel, converged: rel <= rtol }
}

#[cfg(test)]
mod tests {
    use super::super::{fe_stiffness, ichol0};
    use super::*;

    #[test]
    fn zero_rhs_is_immediate() {
        let a = fe_stiffness(2, 2).unwrap();
        let r = pcg(&a, &[0.0; 9], |r, z| z.copy_from_slice(r), 1e-8, 10);
        assert_eq!(r, PcgResult { x: vec![0.0; 9], iterations: 0, rel_residual: 0.0, converged: true });
    }

    #[test]
    fn cg_is_exact_in_n_steps_on_small_spd() {
        let a = fe_stiffness(2, 2).unwrap();
        let b: Vec<f64> = (0..9).map(|i| i as f64 - 3.0).collect();
        let r = pcg(&a, &b, |r, z| z.copy_from_slice(r), 1e-12, 100);
        assert!(r.converged && r.iterations <= 9, "{r:?}");
        assert!(r.rel_residual <= 1e-12);
    }

    #[test]
    fn ic0_beats_identity() {
        let a = fe_stiffness(2, 30).unwrap();
        let b = vec![1.0; a.n];
        let plain = pcg(&a, &b, |r, z| z.copy_from_slice(r), 1e-8, 10_000);
        let l = ichol0(&a).unwrap();
        let pre = pcg(&a, &b, |r, z| l.apply(r, z), 1e-8, 10_000);
        assert!(plain.converged && pre.converged);
        assert!(pre.iterations < plain.iterations, "{} vs {}", pre.iterations, plain.iterations);
        for (u, v) in plain.x.iter().zip(&pre.x) {
            assert!((u - v).abs() < 1e-5 * u.abs().max(1.0));
        }
    }

    #[test]
    fn gives_up_unconverged() {
        let a = fe_stiffness(2, 20).unwrap();
        let b = vec![1.0; a.n];
        let r = pcg(&a, &b, |r, z| z.copy_from_slice(r), 1e-12, 3);
        assert_eq!(r.iterations, 3);
        assert!(!r.converged && r.rel_residual > 1e-12);
        // An indefinite "preconditioner" breaks down rather than looping.
        let r = pcg(&a, &b, |r, z| z.iter_mut().zip(r).for_each(|(z, r)| *z = -r), 1e-8, 100);
        assert!(!r.converged);
    }
}
