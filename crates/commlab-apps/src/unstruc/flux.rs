//! The numerics of one UNSTRUC iteration, shared by every variant and the sequential
//! reference: the edge flux, the face term, and the coefficients they use.
//!
//! Every node carries three values `u`. An iteration computes, from the previous iteration's
//! values only (double buffering), for every edge `(a, b)` three results
//! `f = w (d + 0.25 (n . d) n)` with `d = u_b - u_a` and `n` the unit vector from `a` to `b`,
//! added to `a` and subtracted from `b`; and for every face of `k` nodes three results
//! `t = c (g - mean of u over its nodes)` added to each of its nodes, `g` the face's boundary
//! state. Then `u_new = u_old + (sum of what was added)`. It is a damped, anisotropic
//! diffusion with boundary relaxation: values stay bounded over any number of iterations.
//!
//! The study's program did about 75 single-precision flops per edge for its 3 results; this
//! computation has the same data flow (both endpoints' values and the edge's coefficients in,
//! 3 results into both endpoints) with fewer flops, and is done in double precision, the
//! precision of the simulator's 64-bit words. Its time is the machine's `costs.unstruc_edge`,
//! `costs.unstruc_face` and `costs.unstruc_node`, not the host's.
//!
//! Coefficients, from the mesh: `w = 0.25 / max(deg a, deg b) / max(|x_b - x_a|, 0.5)`;
//! `c = 0.05 min(area, 1) / k` with the face's area (a quadrilateral's from its two
//! diagonals) and `g = (1, 0.5 |m_x|, 0.25 + 0.25 |m_z|)` from its unit normal `m`.
//! Initial values: `u = (1 + 0.5 sin(0.7 x), 0.3 cos(0.5 y + 0.3 z), 0.2 sin(0.4 z))` plus
//! a uniform draw in `[-0.1, 0.1)` per value from the node's stream
//! (`component_seed(seed, 1 << 40 | node)`).

use super::mesh::Mesh;
use crate::app::component_seed;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub type Value = [f64; 3];

/// Coefficients of one edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeCoef {
    pub w: f64,
    pub n: [f64; 3],
}

/// Coefficients of one face.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceCoef {
    pub c: f64,
    pub g: [f64; 3],
}

/// The three results of edge `(a, b)`: added to `a`, subtracted from `b`.
#[inline]
pub fn edge_flux(c: &EdgeCoef, ua: &Value, ub: &Value) -> Value {
    let d = [ub[0] - ua[0], ub[1] - ua[1], ub[2] - ua[2]];
    let p = 0.25 * (c.n[0] * d[0] + c.n[1] * d[1] + c.n[2] * d[2]);
    [c.w * (d[0] + p * c.n[0]), c.w * (d[1] + p * c.n[1]), c.w * (d[2] + p * c.n[2])]
}

/// The three results of a face, added to each of its nodes; `vals` are its nodes' values in
/// the face's node order.
#[inline]
pub fn face_term(c: &FaceCoef, vals: &[Value]) -> Value {
    let k = vals.len() as f64;
    let mut s = [0.0; 3];
    for v in vals {
        for a in 0..3 {
            s[a] += v[a];
        }
    }
    [c.c * (c.g[0] - s[0] / k), c.c * (c.g[1] - s[1] / k), c.c * (c.g[2] - s[2] / k)]
}

#[inline]
pub fn add(acc: &mut Value, f: &Value, sign: f64) {
    for a in 0..3 {
        acc[a] += sign * f[a];
    }
}

/// A mesh with its coefficients and initial values.
pub struct Problem {
    pub mesh: Mesh,
    pub edge_coef: Vec<EdgeCoef>,
    pub face_coef: Vec<FaceCoef>,
    pub init: Vec<Value>,
}

fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn norm(a: &[f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

impl Problem {
    pub fn new(mesh: Mesh, seed: u64) -> Problem {
        let deg = mesh.degrees();
        let edge_coef = mesh
            .edges
            .iter()
            .map(|&[a, b]| {
                let d = sub(&mesh.pos[b as usize], &mesh.pos[a as usize]);
                let len = norm(&d);
                let n = if len > 0.0 { [d[0] / len, d[1] / len, d[2] / len] } else { [0.0; 3] };
                let w = 0.25 / deg[a as usize].max(deg[b as usize]) as f64 / len.max(0.5);
                EdgeCoef { w, n }
            })
            .collect();
        let face_coef = mesh
            .faces
            .iter()
            .map(|f| {
                let p: Vec<[f64; 3]> = f.nodes().iter().map(|&v| mesh.pos[v as usize]).collect();
                // Twice the area vector: of a triangle, or of a quadrilateral from its diagonals.
                let twice = if p.len() == 3 {
                    cross(&sub(&p[1], &p[0]), &sub(&p[2], &p[0]))
                } else {
                    cross(&sub(&p[2], &p[0]), &sub(&p[3], &p[1]))
                };
                let area = 0.5 * norm(&twice);
                let m = if area > 0.0 { twice.map(|x| 0.5 * x / area) } else { [0.0; 3] };
                FaceCoef {
                    c: 0.05 * area.min(1.0) / p.len() as f64,
                    g: [1.0, 0.5 * m[0].abs(), 0.25 + 0.25 * m[2].abs()],
                }
            })
            .collect();
        let init = mesh
            .pos
            .iter()
            .enumerate()
            .map(|(v, x)| {
                let mut rng = ChaCha8Rng::seed_from_u64(component_seed(seed, 1 << 40 | v as u64));
                let mut noise = || rng.random_range(-0.1..0.1);
                [
                    1.0 + 0.5 * (0.7 * x[0]).sin() + noise(),
                    0.3 * (0.5 * x[1] + 0.3 * x[2]).cos() + noise(),
                    0.2 * (0.4 * x[2]).sin() + noise(),
                ]
            })
            .collect();
        Problem { mesh, edge_coef, face_coef, init }
    }

    /// Values after `iterations` sequential iterations: edges in order, then faces in order.
    pub fn sequential(&self, iterations: usize) -> Vec<Value> {
        let mut u = self.init.clone();
        let mut acc = vec![[0.0; 3]; u.len()];
        for _ in 0..iterations {
            for (e, &[a, b]) in self.mesh.edges.iter().enumerate() {
                let f = edge_flux(&self.edge_coef[e], &u[a as usize], &u[b as usize]);
                add(&mut acc[a as usize], &f, 1.0);
                add(&mut acc[b as usize], &f, -1.0);
            }
            for (i, face) in self.mesh.faces.iter().enumerate() {
                let vals: Vec<Value> = face.nodes().iter().map(|&v| u[v as usize]).collect();
                let t = face_term(&self.face_coef[i], &vals);
                for &v in face.nodes() {
                    add(&mut acc[v as usize], &t, 1.0);
                }
            }
            for (x, r) in u.iter_mut().zip(acc.iter_mut()) {
                add(x, r, 1.0);
                *r = [0.0; 3];
            }
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_bounded_and_change() {
        let p = Problem::new(super::super::mesh::generate(800, 2), 2);
        let after = p.sequential(200);
        let max = after.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(max < 3.0, "values grew to {max}");
        let moved = after.iter().zip(&p.init).map(|(a, b)| (a[0] - b[0]).abs()).fold(0.0, f64::max);
        assert!(moved > 1e-3, "the iteration changes the values ({moved})");
    }

    #[test]
    fn edges_conserve_their_sum() {
        // Without faces, the edge fluxes only move values between nodes.
        let mut mesh = super::super::mesh::generate(300, 1);
        mesh.faces.clear();
        let p = Problem::new(mesh, 1);
        let total = |u: &[Value]| u.iter().map(|x| x[0] + x[1] + x[2]).sum::<f64>();
        let (before, after) = (total(&p.init), total(&p.sequential(10)));
        assert!((before - after).abs() < 1e-9 * before.abs(), "{before} vs {after}");
    }
}
