//! DSMC physics: the box and its cells, the particle generator, the random streams, the move
//! with specular walls, the hard-sphere collisions of one cell, and the sequential reference.
//!
//! Everything a step does to a particle depends only on that particle (the move) or on the
//! contents of its cell sorted by particle id and a random stream drawn from
//! `(seed, step, cell)` (the collisions), so any partition of the cells onto processors gives
//! bit-for-bit the answer of the sequential program.

use crate::app::component_seed;

/// A particle: its id, position and velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    pub id: u64,
    pub x: [f64; 3],
    pub v: [f64; 3],
}

/// Words of a particle record in memory and messages: id, x, y, z, vx, vy, vz, and a spare
/// word (the cell) so a record is 64 bytes.
pub const RECORD_WORDS: usize = 8;

impl Particle {
    pub fn to_words(self, cell: usize) -> [u64; RECORD_WORDS] {
        let [x, y, z] = self.x.map(f64::to_bits);
        let [a, b, c] = self.v.map(f64::to_bits);
        [self.id, x, y, z, a, b, c, cell as u64]
    }
    pub fn from_words(w: &[u64]) -> Particle {
        Particle {
            id: w[0],
            x: [f64::from_bits(w[1]), f64::from_bits(w[2]), f64::from_bits(w[3])],
            v: [f64::from_bits(w[4]), f64::from_bits(w[5]), f64::from_bits(w[6])],
        }
    }
}

/// The box: `dims` cells of side 1 along x, y, z; cells numbered x-major
/// (`(cx * ny + cy) * nz + cz`).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub dims: [usize; 3],
    pub dt: f64,
    /// Acceptance of a candidate pair: `min(1, |v_rel| / vr_max)`.
    pub vr_max: f64,
    pub seed: u64,
}

impl Grid {
    pub fn cells(&self) -> usize {
        self.dims.iter().product()
    }

    /// The cell coordinates of a position.
    pub fn coords(&self, x: &[f64; 3]) -> [usize; 3] {
        [0, 1, 2].map(|d| (x[d].floor().max(0.0) as usize).min(self.dims[d] - 1))
    }

    pub fn cell_of(&self, x: &[f64; 3]) -> usize {
        let [a, b, c] = self.coords(x);
        (a * self.dims[1] + b) * self.dims[2] + c
    }

    /// Move one particle for a step, reflecting specularly at the walls. Returns whether it
    /// hit a wall.
    pub fn advance(&self, p: &mut Particle) -> bool {
        let mut hit = false;
        for d in 0..3 {
            let side = self.dims[d] as f64;
            let mut x = p.x[d] + p.v[d] * self.dt;
            if x < 0.0 {
                x = -x;
                p.v[d] = -p.v[d];
                hit = true;
            } else if x > side {
                x = 2.0 * side - x;
                p.v[d] = -p.v[d];
                hit = true;
            }
            p.x[d] = x;
        }
        hit
    }

    /// The random stream of `cell` at `step`.
    pub fn stream(&self, step: usize, cell: usize) -> Rng {
        Rng(component_seed(self.seed, (step as u64) << 32 | cell as u64))
    }
}

/// SplitMix64: a small, fast generator whose streams are seeded independently.
pub struct Rng(u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// What the collisions of one cell did (the work the kernels charge).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CellWork {
    pub candidates: u64,
    pub collisions: u64,
    /// Draws of the isotropic direction's rejection loop (each 2 random numbers).
    pub direction_draws: u64,
}

/// Collide the particles of one cell (sorted by id) at `step`: `n / 2` candidate pairs, each
/// two distinct particles drawn uniformly, accepted with probability `min(1, |v_rel| / vr_max)`;
/// an accepted pair keeps its centre-of-mass velocity and the magnitude of its relative
/// velocity, which turns to a uniformly random direction (equal masses: momentum and energy
/// are conserved). Returns the work done and marks the particles whose velocity changed.
pub fn collide_cell(grid: &Grid, step: usize, cell: usize, ps: &mut [Particle], changed: &mut [bool]) -> CellWork {
    let n = ps.len();
    let mut work = CellWork::default();
    if n < 2 {
        return work;
    }
    let mut rng = grid.stream(step, cell);
    for _ in 0..n / 2 {
        work.candidates += 1;
        let i = rng.below(n);
        let mut j = rng.below(n - 1);
        if j >= i {
            j += 1;
        }
        let vr: [f64; 3] = [0, 1, 2].map(|d| ps[i].v[d] - ps[j].v[d]);
        let speed = (vr[0] * vr[0] + vr[1] * vr[1] + vr[2] * vr[2]).sqrt();
        if rng.uniform() * grid.vr_max >= speed {
            continue;
        }
        work.collisions += 1;
        // A uniform direction on the sphere (Marsaglia 1972).
        let (u, w, s) = loop {
            work.direction_draws += 1;
            let u = 2.0 * rng.uniform() - 1.0;
            let w = 2.0 * rng.uniform() - 1.0;
            let s = u * u + w * w;
            if s < 1.0 {
                break (u, w, s);
            }
        };
        let r = 2.0 * (1.0 - s).sqrt();
        let dir = [u * r, w * r, 1.0 - 2.0 * s];
        for (d, e) in dir.iter().enumerate() {
            let cm = 0.5 * (ps[i].v[d] + ps[j].v[d]);
            let half = 0.5 * speed * e;
            ps[i].v[d] = cm + half;
            ps[j].v[d] = cm - half;
        }
        changed[i] = true;
        changed[j] = true;
    }
    work
}

/// Normal deviate by Box-Muller (set-up only).
fn normal(rng: &mut Rng) -> f64 {
    let u = 1.0 - rng.uniform();
    let w = rng.uniform();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * w).cos()
}

/// `n` particles uniform in the box with Maxwellian velocities of unit variance per component
/// (temperature 1, mass 1), particle `i` from its own stream.
pub fn generate(grid: &Grid, n: usize) -> Vec<Particle> {
    (0..n as u64)
        .map(|id| {
            let mut rng = Rng(component_seed(grid.seed ^ 0xD5C0_0000, id));
            let x = [0, 1, 2].map(|d| rng.uniform() * grid.dims[d] as f64);
            let v = [0, 1, 2].map(|_| normal(&mut rng));
            Particle { id, x, v }
        })
        .collect()
}

/// Total momentum and kinetic energy (unit masses; energy = sum v^2 / 2).
pub fn moments(ps: &[Particle]) -> ([f64; 3], f64) {
    let mut m = [0.0; 3];
    let mut e = 0.0;
    for p in ps {
        for (md, v) in m.iter_mut().zip(p.v) {
            *md += v;
            e += 0.5 * v * v;
        }
    }
    (m, e)
}

/// The sequential program's result, and what the parallel runs need to size their buffers.
pub struct Reference {
    /// The final particles, by id.
    pub particles: Vec<Particle>,
    pub candidates: u64,
    pub collisions: u64,
    /// Particles that changed processor, over the run.
    pub migrations: u64,
    /// Per processor: the most particles it ever owns, and the most it receives in one step.
    pub max_owned: Vec<usize>,
    pub max_incoming: Vec<usize>,
    /// The largest number of cells a particle crossed along one axis in one step.
    pub max_jump: usize,
}

/// Run the sequential algorithm for `iterations` steps; `owner[c]` is the processor of cell
/// `c` (for the buffer sizes and migration counts only).
pub fn reference(grid: &Grid, initial: &[Particle], iterations: usize, owner: &[usize]) -> Reference {
    let procs = owner.iter().max().map_or(1, |m| m + 1);
    let mut ps = initial.to_vec();
    let mut cell: Vec<usize> = ps.iter().map(|p| grid.cell_of(&p.x)).collect();
    let mut r = Reference {
        particles: Vec::new(),
        candidates: 0,
        collisions: 0,
        migrations: 0,
        max_owned: vec![0; procs],
        max_incoming: vec![0; procs],
        max_jump: 0,
    };
    let mut owned = vec![0usize; procs];
    for &c in &cell {
        owned[owner[c]] += 1;
    }
    r.max_owned.clone_from(&owned);
    let mut order: Vec<usize> = Vec::with_capacity(ps.len());
    for step in 0..iterations {
        let mut incoming = vec![0usize; procs];
        for (k, p) in ps.iter_mut().enumerate() {
            let before = grid.coords(&p.x);
            grid.advance(p);
            let after = grid.coords(&p.x);
            for d in 0..3 {
                r.max_jump = r.max_jump.max(before[d].abs_diff(after[d]));
            }
            let c = grid.cell_of(&p.x);
            let (from, to) = (owner[cell[k]], owner[c]);
            if from != to {
                r.migrations += 1;
                incoming[to] += 1;
                owned[from] -= 1;
                owned[to] += 1;
            }
            cell[k] = c;
        }
        for q in 0..procs {
            r.max_owned[q] = r.max_owned[q].max(owned[q]);
            r.max_incoming[q] = r.max_incoming[q].max(incoming[q]);
        }
        order.clear();
        order.extend(0..ps.len());
        order.sort_unstable_by_key(|&k| (cell[k], ps[k].id));
        let mut at = 0;
        while at < order.len() {
            let c = cell[order[at]];
            let end = at + order[at..].iter().take_while(|&&k| cell[k] == c).count();
            let mut members: Vec<Particle> = order[at..end].iter().map(|&k| ps[k]).collect();
            let mut changed = vec![false; members.len()];
            let w = collide_cell(grid, step, c, &mut members, &mut changed);
            r.candidates += w.candidates;
            r.collisions += w.collisions;
            for (m, &k) in members.iter().zip(&order[at..end]) {
                ps[k] = *m;
            }
            at = end;
        }
    }
    ps.sort_by_key(|p| p.id);
    r.particles = ps;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collisions_conserve_momentum_and_energy() {
        let grid = Grid { dims: [2, 2, 2], dt: 0.1, vr_max: 1.0, seed: 5 };
        let mut ps = generate(&grid, 40);
        let (m0, e0) = moments(&ps);
        let mut changed = vec![false; ps.len()];
        let w = collide_cell(&grid, 3, 1, &mut ps, &mut changed);
        assert_eq!(w.candidates, 20);
        assert!(w.collisions > 10, "vr_max 1 accepts most pairs: {w:?}");
        let (m1, e1) = moments(&ps);
        for d in 0..3 {
            assert!((m1[d] - m0[d]).abs() < 1e-12, "{m0:?} -> {m1:?}");
        }
        assert!((e1 - e0).abs() < 1e-12 * e0);
    }

    #[test]
    fn walls_reflect_and_keep_particles_inside() {
        let grid = Grid { dims: [4, 3, 2], dt: 1.0, vr_max: 1.0, seed: 0 };
        let mut p = Particle { id: 0, x: [0.5, 2.5, 1.0], v: [-1.0, 1.0, 0.25] };
        assert!(grid.advance(&mut p));
        assert_eq!(p.x, [0.5, 2.5, 1.25]);
        assert_eq!(p.v, [1.0, -1.0, 0.25]);
        assert_eq!(grid.cell_of(&[4.0, 3.0, 2.0]), grid.cells() - 1);
    }

    #[test]
    fn the_reference_does_not_depend_on_the_partition_it_counts_for() {
        let grid = Grid { dims: [6, 4, 2], dt: 0.2, vr_max: 4.0, seed: 9 };
        let ps = generate(&grid, 300);
        let one = reference(&grid, &ps, 10, &vec![0; grid.cells()]);
        let owner: Vec<usize> = (0..grid.cells()).map(|c| c * 3 / grid.cells()).collect();
        let three = reference(&grid, &ps, 10, &owner);
        assert_eq!(one.particles, three.particles);
        assert_eq!(one.migrations, 0);
        assert!(three.migrations > 0 && one.collisions > 0);
        assert_eq!(three.max_owned.len(), 3);
    }
}
