//! Barnes-Hut physics shared by the kernels and the sequential reference: the Plummer-model
//! generator, the octree's geometry, the centre-of-mass sum, the opening test, the
//! interaction and the leapfrog step. The kernels and the reference call these same functions
//! in the same order, so their answers agree bit for bit.
//!
//! The octree has at most one body per leaf and its root is a fixed cube; such a tree is
//! determined by the set of bodies alone (a cell is split exactly when it holds two or more),
//! whatever order they are inserted in. So a tree built concurrently under locks has the
//! sequential program's shape, and summing children in octant order 0..7 and walking them in
//! that order gives the same sums.

use crate::app::component_seed;

pub type V3 = [f64; 3];

/// Run constants.
#[derive(Clone, Copy, Debug)]
pub struct Sim {
    pub dt: f64,
    pub eps2: f64,
    pub theta2: f64,
    /// Half the side of the root cube, centred at the origin.
    pub root_half: f64,
}

/// The octant of `x` in the cell centred at `c`: bit 0 x, bit 1 y, bit 2 z (1 = upper half).
pub fn octant(x: &V3, c: &V3) -> usize {
    (x[0] >= c[0]) as usize | ((x[1] >= c[1]) as usize) << 1 | ((x[2] >= c[2]) as usize) << 2
}

/// The centre of child `k` of the cell centred at `c` with half side `half`.
pub fn child_center(c: &V3, half: f64, k: usize) -> V3 {
    let q = half / 2.0;
    [0, 1, 2].map(|d| if k >> d & 1 == 1 { c[d] + q } else { c[d] - q })
}

/// Running centre-of-mass sum of a cell's children.
#[derive(Clone, Copy, Default)]
pub struct ComSum {
    m: f64,
    s: V3,
}

impl ComSum {
    pub fn add(&mut self, m: f64, x: &V3) {
        self.m += m;
        for (s, c) in self.s.iter_mut().zip(x) {
            *s += m * c;
        }
    }
    pub fn finish(&self) -> (f64, V3) {
        (self.m, self.s.map(|v| v / self.m))
    }
}

/// Add the pull of mass `m` at `x` on a body at `at` to `acc`; returns `|x - at|^2`.
pub fn interact(acc: &mut V3, at: &V3, x: &V3, m: f64, eps2: f64) {
    let dx = [0, 1, 2].map(|d| x[d] - at[d]);
    let r2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + eps2;
    let inv = 1.0 / r2.sqrt();
    let f = m * inv * inv * inv;
    for d in 0..3 {
        acc[d] += f * dx[d];
    }
}

/// Whether a cell of half side `half` whose centre of mass is at `com` must be opened for a
/// body at `at`: `(2 half)^2 >= theta^2 d^2`.
pub fn opens(sim: &Sim, half: f64, com: &V3, at: &V3) -> bool {
    let dx = [0, 1, 2].map(|d| com[d] - at[d]);
    let d2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
    4.0 * half * half >= sim.theta2 * d2
}

/// Leapfrog (kick, then drift).
pub fn step(x: &mut V3, v: &mut V3, a: &V3, dt: f64) {
    for d in 0..3 {
        v[d] += a[d] * dt;
        x[d] += v[d] * dt;
    }
}

/// A body: position, velocity, mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    pub x: V3,
    pub v: V3,
    pub m: f64,
}

/// `n` bodies of a Plummer sphere (Aarseth, Henon and Wielen 1974, as SPLASH-2's `barnes`
/// generates them), total mass 1, radii capped at 10, then numbered in Morton order of their
/// positions so a block of numbers is a compact region (standing in for SPLASH-2's cost zones).
pub fn generate(n: usize, seed: u64) -> Vec<Body> {
    let mut bodies: Vec<Body> = (0..n as u64)
        .map(|i| {
            let mut s = component_seed(seed ^ 0xBA27_E500, i);
            let mut u = move || {
                s = component_seed(s, 1);
                (s >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
            };
            let r = loop {
                let m = u() * 0.999;
                let r = 1.0 / (m.powf(-2.0 / 3.0) - 1.0).sqrt();
                if r < 10.0 && r.is_finite() {
                    break r;
                }
            };
            let dir = |u: &mut dyn FnMut() -> f64| {
                let z = 2.0 * u() - 1.0;
                let phi = 2.0 * std::f64::consts::PI * u();
                let s = (1.0 - z * z).sqrt();
                [s * phi.cos(), s * phi.sin(), z]
            };
            let x = dir(&mut u).map(|c| c * r);
            let q = loop {
                let (a, b) = (u(), u() * 0.1);
                if b < a * a * (1.0 - a * a).powf(3.5) {
                    break a;
                }
            };
            let speed = q * std::f64::consts::SQRT_2 * (1.0 + r * r).powf(-0.25);
            let v = dir(&mut u).map(|c| c * speed);
            Body { x, v, m: 1.0 / n as f64 }
        })
        .collect();
    let key = |x: &V3| {
        let q = x.map(|c| (((c + 16.0) / 32.0 * 1024.0).clamp(0.0, 1023.0)) as u64);
        let mut k = 0u64;
        for bit in (0..10).rev() {
            for v in q {
                k = k << 1 | (v >> bit & 1);
            }
        }
        k
    };
    bodies.sort_by_key(|b| key(&b.x));
    bodies
}

/// A sequential octree: cells with 8 child slots (`None`, a body, a cell).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Slot {
    Empty,
    Body(usize),
    Cell(usize),
}

pub struct Cell {
    pub child: [Slot; 8],
    pub center: V3,
    pub half: f64,
    pub m: f64,
    pub com: V3,
}

/// Deepest level a body may be inserted at (bodies closer than the root side / 2^50 are
/// refused at set-up).
pub const MAX_DEPTH: usize = 50;

pub struct Tree {
    pub cells: Vec<Cell>,
    pub depth: usize,
}

impl Tree {
    /// Insert every body in order (the shape does not depend on the order).
    pub fn build(sim: &Sim, x: &[V3]) -> Tree {
        let empty = |center: V3, half: f64| Cell { child: [Slot::Empty; 8], center, half, m: 0.0, com: [0.0; 3] };
        let mut t = Tree { cells: vec![empty([0.0; 3], sim.root_half)], depth: 0 };
        for (b, xb) in x.iter().enumerate() {
            let mut c = 0;
            let mut depth = 0;
            loop {
                depth += 1;
                let k = octant(xb, &t.cells[c].center);
                match t.cells[c].child[k] {
                    Slot::Cell(n) => c = n,
                    Slot::Empty => {
                        t.cells[c].child[k] = Slot::Body(b);
                        break;
                    }
                    Slot::Body(b2) => {
                        let center = child_center(&t.cells[c].center, t.cells[c].half, k);
                        let mut cell = empty(center, t.cells[c].half / 2.0);
                        cell.child[octant(&x[b2], &center)] = Slot::Body(b2);
                        t.cells.push(cell);
                        let n = t.cells.len() - 1;
                        t.cells[c].child[k] = Slot::Cell(n);
                        c = n;
                    }
                }
                if depth > MAX_DEPTH {
                    break;
                }
            }
            t.depth = t.depth.max(depth);
        }
        t
    }

    /// Centres of mass, children before parents, each cell's children in octant order.
    pub fn centers_of_mass(&mut self, x: &[V3], m: &[f64]) {
        // Cells are created after their parents: summing in reverse creation order is bottom-up.
        for c in (0..self.cells.len()).rev() {
            let mut s = ComSum::default();
            for k in 0..8 {
                match self.cells[c].child[k] {
                    Slot::Empty => {}
                    Slot::Body(b) => s.add(m[b], &x[b]),
                    Slot::Cell(n) => s.add(self.cells[n].m, &self.cells[n].com),
                }
            }
            let (mm, com) = s.finish();
            self.cells[c].m = mm;
            self.cells[c].com = com;
        }
    }

    /// The acceleration of body `b` by the tree walk.
    pub fn accel(&self, sim: &Sim, x: &[V3], m: &[f64], b: usize) -> V3 {
        let mut acc = [0.0; 3];
        self.walk(sim, x, m, b, 0, &mut acc);
        acc
    }

    fn walk(&self, sim: &Sim, x: &[V3], m: &[f64], b: usize, c: usize, acc: &mut V3) {
        let cell = &self.cells[c];
        if !opens(sim, cell.half, &cell.com, &x[b]) {
            interact(acc, &x[b], &cell.com, cell.m, sim.eps2);
            return;
        }
        for k in 0..8 {
            match cell.child[k] {
                Slot::Empty => {}
                Slot::Body(o) => {
                    if o != b {
                        interact(acc, &x[b], &x[o], m[o], sim.eps2);
                    }
                }
                Slot::Cell(n) => self.walk(sim, x, m, b, n, acc),
            }
        }
    }
}

/// The sequential program's result.
pub struct Reference {
    pub x: Vec<V3>,
    pub v: Vec<V3>,
    /// The most cells a tree had, and the deepest insertion.
    pub max_cells: usize,
    pub max_depth: usize,
    /// Whether every body stayed in the root cube.
    pub inside: bool,
    /// RMS of |a_tree - a_direct| / RMS |a_direct| on the initial positions.
    pub force_error: f64,
}

/// Run `iterations` steps sequentially.
pub fn reference(sim: &Sim, bodies: &[Body], iterations: usize) -> Reference {
    let mut x: Vec<V3> = bodies.iter().map(|b| b.x).collect();
    let mut v: Vec<V3> = bodies.iter().map(|b| b.v).collect();
    let m: Vec<f64> = bodies.iter().map(|b| b.m).collect();
    let inside = |x: &[V3]| x.iter().flatten().all(|c| *c >= -sim.root_half && *c < sim.root_half);
    let mut r = Reference { x: Vec::new(), v: Vec::new(), max_cells: 0, max_depth: 0, inside: true, force_error: 0.0 };
    for it in 0..iterations {
        if !inside(&x) {
            r.inside = false;
            break;
        }
        let mut tree = Tree::build(sim, &x);
        r.max_cells = r.max_cells.max(tree.cells.len());
        r.max_depth = r.max_depth.max(tree.depth);
        if tree.depth > MAX_DEPTH {
            break;
        }
        tree.centers_of_mass(&x, &m);
        let acc: Vec<V3> = (0..x.len()).map(|b| tree.accel(sim, &x, &m, b)).collect();
        if it == 0 {
            let (mut num, mut den) = (0.0, 0.0);
            for b in 0..x.len() {
                let mut direct = [0.0; 3];
                for o in 0..x.len() {
                    if o != b {
                        interact(&mut direct, &x[b], &x[o], m[o], sim.eps2);
                    }
                }
                for d in 0..3 {
                    num += (acc[b][d] - direct[d]).powi(2);
                    den += direct[d].powi(2);
                }
            }
            r.force_error = (num / den.max(f64::MIN_POSITIVE)).sqrt();
        }
        for b in 0..x.len() {
            step(&mut x[b], &mut v[b], &acc[b], sim.dt);
        }
    }
    r.inside &= inside(&x);
    r.x = x;
    r.v = v;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_does_not_depend_on_insertion_order_and_approximates_direct_forces() {
        let bodies = generate(300, 4);
        let sim = Sim { dt: 0.025, eps2: 0.0025, theta2: 1.0, root_half: 16.0 };
        let x: Vec<V3> = bodies.iter().map(|b| b.x).collect();
        let m: Vec<f64> = bodies.iter().map(|b| b.m).collect();
        let mut a = Tree::build(&sim, &x);
        let rev: Vec<V3> = x.iter().rev().copied().collect();
        let b = Tree::build(&sim, &rev);
        assert_eq!(a.cells.len(), b.cells.len(), "same number of cells in any order");
        a.centers_of_mass(&x, &m);
        assert!((a.cells[0].m - 1.0).abs() < 1e-12);
        let r = reference(&sim, &bodies, 1);
        assert!(r.inside);
        assert!(r.force_error > 0.0 && r.force_error < 0.05, "theta 1 error {}", r.force_error);
        let exact = reference(&Sim { theta2: 1e-12, ..sim }, &bodies, 1);
        assert!(exact.force_error < 1e-12, "theta 0 is the direct sum: {}", exact.force_error);
    }
}
