//! The physics of MOLDYN, sequential: the generator, the pair force, the interaction list and
//! the reference integration every variant is checked against.
//!
//! # Units and model
//!
//! Reduced Lennard-Jones units (σ = ε = mass = 1). Molecules interact by the Lennard-Jones
//! potential truncated at the cut-off radius `rc` with its force shifted so that it falls
//! continuously to zero there: the force on `i` from `j` is `(g(r²) - g(rc²)) d`, with
//! `d = x_i - x_j` (minimum image), `g(s) = 24 s⁻⁴ (2 s⁻³ - 1)` (so that `r g(r²)` is the
//! Lennard-Jones force), and the matching potential
//! `U(r) = 4(r⁻¹² - r⁻⁶) - 4(rc⁻¹² - rc⁻⁶) + g(rc²) (r² - rc²) / 2`. Shifting `F/r` rather
//! than `F` needs no square root, and a continuous force makes a pair that lies within
//! rounding of the cut-off in one run and outside it in another contribute (nearly) the same,
//! so summation-order differences between variants stay at rounding level.
//!
//! The box is a periodic cube of side `L = (molecules / density)^(1/3)`; coordinates are kept
//! unwrapped (a molecule that leaves the box is not moved back) and every distance takes the
//! minimum image, `d -= L round(d / L)`, so no variant can wrap a molecule that another does
//! not.
//!
//! # Generator
//!
//! "Uniform in a cubical box": the box is divided into `k³` cells, `k` the smallest whole
//! number with `k³ >= molecules`, and the molecules occupy `molecules` of those cells, chosen
//! by a seeded shuffle when there are more cells than molecules (stream
//! `component_seed(seed, SITES)`); each sits at its cell's centre displaced uniformly by up to
//! 5% of the cell side in each coordinate. (A purely random uniform placement puts pairs
//! arbitrarily close, whose r⁻¹² forces blow the first time steps up.) Molecule `m`, numbered
//! in increasing cell order, draws from its own stream `component_seed(seed, 1 << 40 | m)`:
//! its three displacements, then its three velocity components, each normal with variance
//! `temperature` (Box-Muller on two uniforms). The velocities are then shifted to zero total
//! momentum and scaled so that the kinetic energy is exactly `3/2 N T` (sums in molecule
//! order).
//!
//! # Interaction list
//!
//! The list holds every pair `i < j` closer than `list_radius` (> `rc`), found with cells of
//! side at least `list_radius`: the pairs within the radius are among those of a molecule and
//! the molecules of its own and the 26 neighbouring cells (with fewer than 3 cells a side,
//! every other molecule). A search that tests each such pair once (a half stencil) tests half
//! of them per molecule, which is the work the rebuild is charged (`List::candidates`). It is
//! built from the positions after the drift of every iteration that is a multiple of
//! `rebuild` (and, for the initial forces, from the initial positions), and sorted by `(i, j)`.
//!
//! # Integration
//!
//! Velocity Verlet, per iteration: `v += dt/2 f; x += dt v` for every molecule; the list is
//! rebuilt if due; forces from the list (pairs farther than `rc` contribute nothing); then
//! `v += dt/2 f`. The reference sums each molecule's force pair by pair in list order.

use crate::app::component_seed;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Stream id of the cell shuffle (molecule streams are `1 << 40 | m`).
const SITES: u64 = 1 << 41;

/// Model and run parameters (validated by the caller).
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub molecules: usize,
    pub density: f64,
    pub temperature: f64,
    pub cutoff: f64,
    pub list_radius: f64,
    pub dt: f64,
    pub iterations: usize,
    pub rebuild: usize,
    pub seed: u64,
}

impl Setup {
    pub fn box_side(&self) -> f64 {
        (self.molecules as f64 / self.density).cbrt()
    }
}

/// Three coordinates per molecule, molecule by molecule.
pub type Vec3s = Vec<[f64; 3]>;

/// The pair force law and the periodic box: what every variant computes a pair with.
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    pub side: f64,
    rc2: f64,
    /// `g(rc²)`.
    shift: f64,
    /// Potential at the cut-off.
    u_rc: f64,
}

fn g(s: f64) -> f64 {
    let inv2 = 1.0 / s;
    let inv6 = inv2 * inv2 * inv2;
    24.0 * inv2 * inv6 * (2.0 * inv6 - 1.0)
}

fn lj(s: f64) -> f64 {
    let inv6 = 1.0 / (s * s * s);
    4.0 * (inv6 * inv6 - inv6)
}

impl Pair {
    pub fn new(side: f64, cutoff: f64) -> Pair {
        let rc2 = cutoff * cutoff;
        Pair { side, rc2, shift: g(rc2), u_rc: lj(rc2) }
    }

    /// `x_i - x_j`, minimum image, and its squared length.
    #[inline]
    pub fn delta(&self, xi: &[f64; 3], xj: &[f64; 3]) -> ([f64; 3], f64) {
        let mut d = [0.0; 3];
        for k in 0..3 {
            let v = xi[k] - xj[k];
            d[k] = v - self.side * (v / self.side).round();
        }
        (d, d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    }

    /// The force on `i` from `j`, if they are within the cut-off.
    #[inline]
    pub fn force(&self, xi: &[f64; 3], xj: &[f64; 3]) -> Option<[f64; 3]> {
        let (d, r2) = self.delta(xi, xj);
        if r2 >= self.rc2 {
            return None;
        }
        let s = g(r2) - self.shift;
        Some([s * d[0], s * d[1], s * d[2]])
    }

    /// The pair's potential energy (zero beyond the cut-off).
    pub fn energy(&self, xi: &[f64; 3], xj: &[f64; 3]) -> f64 {
        let (_, r2) = self.delta(xi, xj);
        if r2 >= self.rc2 {
            return 0.0;
        }
        lj(r2) - self.u_rc + 0.5 * self.shift * (r2 - self.rc2)
    }
}

/// Initial positions and velocities (molecule order: increasing cell).
pub fn generate(s: &Setup) -> (Vec3s, Vec3s) {
    let n = s.molecules;
    let mut k = 1usize;
    while k * k * k < n {
        k += 1;
    }
    let cells = k * k * k;
    let mut sites: Vec<usize> = (0..cells).collect();
    if cells > n {
        let mut rng = ChaCha8Rng::seed_from_u64(component_seed(s.seed, SITES));
        // Fisher-Yates, first n positions only.
        for i in 0..n {
            let j = rng.random_range(i..cells);
            sites.swap(i, j);
        }
        sites.truncate(n);
        sites.sort_unstable();
    }
    let a = s.box_side() / k as f64;
    let sd = s.temperature.sqrt();
    let mut x = Vec::with_capacity(n);
    let mut v = Vec::with_capacity(n);
    for (m, &site) in sites.iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(component_seed(s.seed, 1 << 40 | m as u64));
        let cell = [site % k, site / k % k, site / (k * k)];
        let mut p = [0.0; 3];
        for d in 0..3 {
            let jitter: f64 = rng.random::<f64>() * 0.1 - 0.05;
            p[d] = (cell[d] as f64 + 0.5 + jitter) * a;
        }
        let mut u = [0.0; 3];
        for c in &mut u {
            let (u1, u2): (f64, f64) = (rng.random(), rng.random());
            *c = sd * (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        }
        x.push(p);
        v.push(u);
    }
    let mut mean = [0.0; 3];
    for u in &v {
        for d in 0..3 {
            mean[d] += u[d];
        }
    }
    let mut ke2 = 0.0;
    for u in &mut v {
        for d in 0..3 {
            u[d] -= mean[d] / n as f64;
            ke2 += u[d] * u[d];
        }
    }
    if n > 1 && ke2 > 0.0 {
        let scale = (3.0 * n as f64 * s.temperature / ke2).sqrt();
        for u in &mut v {
            for c in u.iter_mut() {
                *c *= scale;
            }
        }
    }
    (x, v)
}

/// The interaction list: pairs `i < j` within `radius`, sorted, and for each molecule the
/// number of candidate pairs a half-stencil cell search tests for it (the rebuild's work).
pub struct List {
    pub pairs: Vec<(u32, u32)>,
    pub candidates: Vec<u32>,
}

/// Build the interaction list of positions `x`.
pub fn build_list(x: &Vec3s, pair: &Pair, radius: f64) -> List {
    let n = x.len();
    let r2 = radius * radius;
    let m = (pair.side / radius).floor() as usize;
    let mut pairs = Vec::new();
    let mut candidates = vec![0u32; n];
    if m < 3 {
        for i in 0..n {
            candidates[i] = (n - 1).div_ceil(2) as u32;
            for j in i + 1..n {
                if pair.delta(&x[i], &x[j]).1 < r2 {
                    pairs.push((i as u32, j as u32));
                }
            }
        }
        return List { pairs, candidates };
    }
    let cell_of = |p: &[f64; 3]| -> [usize; 3] {
        let mut c = [0usize; 3];
        for d in 0..3 {
            let w = p[d] - pair.side * (p[d] / pair.side).floor();
            c[d] = ((w / pair.side * m as f64) as usize).min(m - 1);
        }
        c
    };
    let mut cells: Vec<Vec<u32>> = vec![Vec::new(); m * m * m];
    let index = |c: [usize; 3]| c[0] + m * (c[1] + m * c[2]);
    let home: Vec<[usize; 3]> = x.iter().map(cell_of).collect();
    for (i, c) in home.iter().enumerate() {
        cells[index(*c)].push(i as u32);
    }
    let mut near = Vec::new();
    for i in 0..n {
        near.clear();
        let c = home[i];
        for dz in [m - 1, 0, 1] {
            for dy in [m - 1, 0, 1] {
                for dx in [m - 1, 0, 1] {
                    let cc = [(c[0] + dx) % m, (c[1] + dy) % m, (c[2] + dz) % m];
                    near.extend(cells[index(cc)].iter().copied().filter(|&j| j as usize != i));
                }
            }
        }
        candidates[i] = near.len().div_ceil(2) as u32;
        near.sort_unstable();
        for &j in near.iter().filter(|&&j| j as usize > i) {
            if pair.delta(&x[i], &x[j as usize]).1 < r2 {
                pairs.push((i as u32, j));
            }
        }
    }
    List { pairs, candidates }
}

/// Forces of positions `x` over `list`, summed pair by pair in list order.
pub fn forces(x: &Vec3s, pair: &Pair, list: &List) -> Vec3s {
    let mut f = vec![[0.0; 3]; x.len()];
    for &(i, j) in &list.pairs {
        let (i, j) = (i as usize, j as usize);
        if let Some(p) = pair.force(&x[i], &x[j]) {
            for d in 0..3 {
                f[i][d] += p[d];
                f[j][d] -= p[d];
            }
        }
    }
    f
}

/// Kinetic plus potential energy (potential over the pairs of `list`).
pub fn energy(x: &Vec3s, v: &Vec3s, pair: &Pair, list: &List) -> f64 {
    let ke: f64 = v.iter().map(|u| 0.5 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2])).sum();
    let pe: f64 = list.pairs.iter().map(|&(i, j)| pair.energy(&x[i as usize], &x[j as usize])).sum();
    ke + pe
}

/// Half a kick then a drift, as every variant does it for one molecule.
#[inline]
pub fn kick_drift(x: &mut [f64; 3], v: &mut [f64; 3], f: &[f64; 3], dt: f64) {
    for d in 0..3 {
        v[d] += 0.5 * dt * f[d];
        x[d] += dt * v[d];
    }
}

/// The second half kick.
#[inline]
pub fn kick(v: &mut [f64; 3], f: &[f64; 3], dt: f64) {
    for d in 0..3 {
        v[d] += 0.5 * dt * f[d];
    }
}

/// The sequential run: initial forces from a list of the initial positions, then
/// `iterations` velocity-Verlet steps. Returns the final positions and velocities, the lists
/// of every epoch (epoch `e` built at iteration `e * rebuild`), and the energies before and
/// after (each over a list of the positions it is taken at).
pub struct Reference {
    pub x: Vec3s,
    pub v: Vec3s,
    pub initial_forces: Vec3s,
    pub lists: Vec<List>,
    pub energy_start: f64,
    pub energy_end: f64,
}

pub fn reference(s: &Setup, x0: &Vec3s, v0: &Vec3s) -> Reference {
    let pair = Pair::new(s.box_side(), s.cutoff);
    let list0 = build_list(x0, &pair, s.list_radius);
    let f0 = forces(x0, &pair, &list0);
    let energy_start = energy(x0, v0, &pair, &list0);
    let (mut x, mut v, mut f) = (x0.clone(), v0.clone(), f0.clone());
    let mut lists: Vec<List> = Vec::new();
    for t in 0..s.iterations {
        for m in 0..x.len() {
            kick_drift(&mut x[m], &mut v[m], &f[m], s.dt);
        }
        if t % s.rebuild == 0 {
            lists.push(build_list(&x, &pair, s.list_radius));
        }
        f = forces(&x, &pair, lists.last().expect("built at t = 0"));
        for m in 0..x.len() {
            kick(&mut v[m], &f[m], s.dt);
        }
    }
    let energy_end = energy(&x, &v, &pair, &build_list(&x, &pair, s.list_radius));
    Reference { x, v, initial_forces: f0, lists, energy_start, energy_end }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(n: usize) -> Setup {
        Setup {
            molecules: n,
            density: 0.8,
            temperature: 1.0,
            cutoff: 2.5,
            list_radius: 2.8,
            dt: 0.005,
            iterations: 10,
            rebuild: 5,
            seed: 1,
        }
    }

    #[test]
    fn force_is_zero_at_the_cutoff_and_antisymmetric() {
        let p = Pair::new(100.0, 2.5);
        let a = [1.0, 1.0, 1.0];
        let f = p.force(&a, &[1.0 + 2.5 - 1e-12, 1.0, 1.0]).unwrap();
        assert!(f[0].abs() < 1e-10);
        let f1 = p.force(&a, &[2.1, 1.3, 0.8]).unwrap();
        let f2 = p.force(&[2.1, 1.3, 0.8], &a).unwrap();
        for d in 0..3 {
            assert_eq!(f1[d], -f2[d]);
        }
        // The force is minus the potential's gradient.
        let h = 1e-6;
        let u = |x: f64| p.energy(&[x, 0.0, 0.0], &[0.0, 0.0, 0.0]);
        let fx = p.force(&[1.3, 0.0, 0.0], &[0.0, 0.0, 0.0]).unwrap()[0];
        assert!((fx + (u(1.3 + h) - u(1.3 - h)) / (2.0 * h)).abs() < 1e-5);
    }

    #[test]
    fn cell_list_equals_all_pairs() {
        let s = setup(500);
        let (x, _) = generate(&s);
        let pair = Pair::new(s.box_side(), s.cutoff);
        let cells = build_list(&x, &pair, s.list_radius);
        let mut all = Vec::new();
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                if pair.delta(&x[i], &x[j]).1 < s.list_radius * s.list_radius {
                    all.push((i as u32, j as u32));
                }
            }
        }
        assert!((pair.side / s.list_radius) >= 3.0);
        assert_eq!(cells.pairs, all);
    }

    #[test]
    fn generator_has_zero_momentum_the_temperature_and_no_close_pairs() {
        let s = setup(300);
        let (x, v) = generate(&s);
        let p: f64 = (0..3).map(|d| v.iter().map(|u| u[d]).sum::<f64>().abs()).sum();
        assert!(p < 1e-10);
        let ke: f64 = v.iter().map(|u| u.iter().map(|c| c * c).sum::<f64>()).sum();
        assert!((ke / (3.0 * 300.0) - 1.0).abs() < 1e-12);
        let pair = Pair::new(s.box_side(), s.cutoff);
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                assert!(pair.delta(&x[i], &x[j]).1 > 0.8);
            }
        }
    }

    #[test]
    fn reference_conserves_energy() {
        let s = setup(256);
        let (x, v) = generate(&s);
        let r = reference(&s, &x, &v);
        let drift = (r.energy_end - r.energy_start).abs() / r.energy_start.abs();
        assert!(drift < 1e-2, "energy drift {drift}");
        assert_eq!(r.lists.len(), 2);
    }
}
