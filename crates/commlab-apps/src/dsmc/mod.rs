//! `dsmc`: direct-simulation Monte Carlo of a hard-sphere gas in a closed 3-D box, after the
//! DSMC program of the Blizzard/Tempest studies (Wisconsin).
//!
//! The box is `cells_x x cells_y x cells_z` cells of side 1, numbered x-major and divided
//! among the processors in blocks (slabs across x); a processor owns the particles in its
//! cells. Each step moves every particle ballistically for `dt` (walls reflect specularly),
//! hands the particles that left a processor's cells to their new owner, and collides
//! particles within each cell: `n / 2` candidate pairs drawn from a random stream seeded by
//! `(seed, step, cell)` over the cell's particles sorted by id, each accepted with probability
//! `min(1, |v_rel| / vr_max)`, an accepted pair turning its relative velocity to a random
//! direction (momentum and energy conserved). Nothing a step computes depends on the
//! partition, so every variant on any processor count must give the sequential program's
//! particles bit for bit.
//!
//! - Physics, random streams and the sequential reference: `physics.rs`.
//! - The variants and the speedup baseline: `kernel.rs`. `stache`: the transparent
//!   shared-memory program (particles and inboxes in shared memory, migration by writing
//!   into the destination's inbox under its lock, a barrier a step); `custom`: particles
//!   private, migration in one bulk message per neighbouring processor a step.
//!
//! Size: the Blizzard papers' DSMC input could not be found (the search tool returned no
//! source giving it), so the default is a documented choice: 8192 particles in 16 x 16 x 8
//! cells (4 a cell; a slab of 16 x 8 cells per processor on 16 processors), 300 steps as the
//! issue asks, `dt` 0.1 (a particle of the thermal speed, 1 per component, crosses a tenth of
//! a cell a step). A step may move a particle by at most one cell along each axis (the
//! `custom` variant exchanges with neighbouring processors only); the run is refused if the
//! sequential reference sees a larger jump (a larger `dt`).
//!
//! Set-up (untimed): the generator, the sequential reference (which also sizes every
//! processor's array and inboxes exactly: the most particles it ever owns and receives in a
//! step), the initial records written to each owner's memory. Timed: all `iterations` steps.
//!
//! Check: every particle's id, position and velocity equal to the reference's (exactly:
//! the same operations in the same order), the particle count, and conservation: the
//! collisions' total momentum change summed over every processor and step, and the kinetic
//! energy's change over the run (walls reflect, so total momentum itself is not conserved),
//! both within 1e-9 relative (rounding).
//!
//! `counters.speedup` divides the cycles of the sequential program (the `custom` program on
//! one processor of the same machine: private data, no access checks, no messages or
//! barriers; `counters.serial_cycles`) by this run's.
//!
//! Work costs (machine `[costs]`): `dsmc_move` per particle moved (the record's loads and
//! stores are simulated), `dsmc_index` per particle sorted into the cell order,
//! `dsmc_cell` per cell collided, `dsmc_candidate` per candidate pair, `dsmc_collision` per
//! accepted pair, `dsmc_direction_draw` per draw of a collision's random direction.

mod kernel;
mod physics;

use crate::app::common::{
    APP_MESSAGES, CYCLES_PER_ITERATION, LOCK_ACQUISITIONS, LOCK_RELEASES, REMOTE_MISSES, SERIAL_CYCLES, SPEEDUP,
    SYNCHRONIZATION_CYCLES_MEAN,
};
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::{Params, POSITIVE};
use commlab_api::SetCounter;
use commlab_api::{Backend, Category, RunOutput};
use kernel::{Costs, Kernel, Mode};
use physics::{Grid, Particle, RECORD_WORDS};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters dsmc`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [APP_MESSAGES, LOCK_ACQUISITIONS, LOCK_RELEASES, CYCLES_PER_ITERATION, SERIAL_CYCLES, SPEEDUP, SYNCHRONIZATION_CYCLES_MEAN, REMOTE_MISSES];
    PARTICLES = "particles", "count",
        "particles in the box";
    CELLS = "cells", "count",
        "cells of the box";
    PARTICLE_STEPS = "particle_steps", "count",
        "particle moves over all steps, all processors";
    PARTICLES_SENT = "particles_sent", "count",
        "particles that left a processor's cells for another processor's, all processors";
    PARTICLES_RECEIVED = "particles_received", "count",
        "migrated particles received, all processors";
    MIGRATION_FRACTION = "migration_fraction", "fraction",
        "`particles_sent` over `particle_steps`";
    REFERENCE_MIGRATIONS = "reference_migrations", "count",
        "migrations the sequential reference makes over the same steps";
    CANDIDATES = "candidates", "count",
        "collision candidate pairs drawn, all processors";
    COLLISIONS = "collisions", "count",
        "collisions accepted, all processors";
    REFERENCE_COLLISIONS = "reference_collisions", "count",
        "collisions the sequential reference makes";
    ENERGY_DRIFT = "energy_drift", "fraction",
        "(final energy - initial energy) / initial energy of the particles (conserved up to rounding)";
    COLLISION_MOMENTUM_CHANGE = "collision_momentum_change", "fraction",
        "the collisions' change of their cells' total momentum, summed over cells and steps, over the initial velocities' sum (conserved up to rounding)";
}

pub const INFO: AppInfo = AppInfo {
    name: "dsmc",
    summary: "DSMC: Monte Carlo gas in a box of cells, particles migrate between processors; transparent shared memory (stache) or bulk messages (custom); counters.speedup",
    variants: &["stache", "custom"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "particles", default: "8192", doc: "simulated particles" },
        ParamDoc { name: "cells_x", default: "16", doc: "cells along x (the axis the processors' slabs cut)" },
        ParamDoc { name: "cells_y", default: "16", doc: "cells along y" },
        ParamDoc { name: "cells_z", default: "8", doc: "cells along z" },
        ParamDoc { name: "iterations", default: "300", doc: "time steps (all timed)" },
        ParamDoc { name: "dt", default: "0.1", doc: "time step, in cell sides per unit speed (a particle may cross at most one cell per axis a step)" },
        ParamDoc { name: "vr_max", default: "4.0", doc: "relative speed at which a candidate pair always collides (acceptance min(1, |v_rel| / vr_max))" },
    ],
};

/// Particle-steps the sequential reference may take (it runs first, natively).
const MAX_WORK: f64 = 2e8;
/// Relative rounding the conservation check allows.
const CONSERVATION: f64 = 1e-9;

fn positive_real(what: &'static str) -> (&'static str, fn(f64) -> bool) {
    (what, |v: f64| v.is_finite() && v > 0.0)
}

/// dsmc's inputs, checked against each other and the machine.
struct Inputs {
    dims: [usize; 3],
    cells: usize,
    particles: usize,
    iterations: usize,
    dt: f64,
    vr_max: f64,
    mode: Mode,
}

fn inputs<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<Inputs, AppError> {
    let procs = backend.nprocs();
    let side: (&str, fn(usize) -> bool) = ("a whole number from 1 to 1000", |v| (1..=1000).contains(&v));
    let dims = [params.get("cells_x", side)?, params.get("cells_y", side)?, params.get("cells_z", side)?];
    let cells: usize = Grid { dims, dt: 0.0, vr_max: 0.0, seed }.cells();
    if cells < procs {
        return Err(AppError::Input(format!(
            "--param cells_x={} cells_y={} cells_z={}: dsmc needs at least one cell per processor ({cells} cells for {procs} processors)",
            dims[0], dims[1], dims[2]
        )));
    }
    if cells > 1_000_000 {
        return Err(AppError::Input(format!(
            "--param cells_x={} cells_y={} cells_z={}: dsmc allows at most 1000000 cells ({cells} given)",
            dims[0], dims[1], dims[2]
        )));
    }
    let particles: usize = params.get("particles", POSITIVE)?;
    let iterations: usize =
        params.get("iterations", ("a whole number from 1 to 100000", |v: usize| (1..=100_000).contains(&v)))?;
    if particles as f64 * iterations as f64 > MAX_WORK {
        return Err(AppError::Input(format!(
            "--param particles={particles}: dsmc allows at most {MAX_WORK:e} particle-steps (particles x iterations = {}; the sequential reference runs first)",
            particles as f64 * iterations as f64
        )));
    }
    let dt: f64 = params.get("dt", positive_real("a number > 0"))?;
    let vr_max: f64 = params.get("vr_max", positive_real("a number > 0"))?;
    let mode = if variant == "stache" { Mode::Stache } else { Mode::Custom };
    Ok(Inputs { dims, cells, particles, iterations, dt, vr_max, mode })
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let Inputs { dims, cells, particles, iterations, dt, vr_max, mode } = inputs(backend, variant, params, seed)?;
    let procs = backend.nprocs();
    let costs = Costs::of(backend)?;
    let grid = Grid { dims, dt, vr_max, seed };

    // Partition: blocks of the x-major cell numbering.
    let first_cell: Vec<usize> = (0..=procs).map(|p| p * cells / procs).collect();
    let mut owner = vec![0usize; cells];
    for p in 0..procs {
        owner[first_cell[p]..first_cell[p + 1]].fill(p);
    }
    let initial = physics::generate(&grid, particles);
    let reference = physics::reference(&grid, &initial, iterations, &owner);
    if reference.max_jump > 1 {
        return Err(AppError::Input(format!(
            "--param dt={dt}: a particle crossed {} cells along one axis in one step; dsmc needs at most 1 (use a smaller dt)",
            reference.max_jump
        )));
    }
    let mut by_proc: Vec<Vec<Particle>> = vec![Vec::new(); procs];
    for p in &initial {
        by_proc[owner[grid.cell_of(&p.x)]].push(*p);
    }
    let line_bytes = backend.line_bytes();
    let kernel = Arc::new(Kernel {
        mode,
        grid,
        iterations,
        costs,
        owner: owner.clone(),
        first_cell: first_cell.clone(),
        initial: by_proc,
        capacity: reference.max_owned.clone(),
        inbox_capacity: reference.max_incoming.clone(),
        neighbours: kernel::neighbours(&grid, &owner, procs),
        line_bytes,
    });
    let out = backend.run(Arc::clone(&kernel)).map_err(run_err)?;

    // The sequential baseline: the private-data program on one processor.
    let one = backend.with_nprocs(1).map_err(run_err)?;
    let serial = one
        .run(Arc::new(Kernel {
            mode: Mode::Custom,
            grid,
            iterations,
            costs,
            owner: vec![0; cells],
            first_cell: vec![0, cells],
            initial: vec![initial.clone()],
            capacity: vec![particles],
            inbox_capacity: vec![0],
            neighbours: vec![Vec::new()],
            line_bytes,
        }))
        .map_err(run_err)?;

    let answer = check_answer(&out, &serial, &reference, &initial, dims, iterations);
    let c = counters(&out, &serial, &reference, &answer, cells, particles, iterations);
    Ok(result(out.stats, c, answer.check))
}

/// The answer's check, and the conservation figures it rests on.
struct Answer {
    check: Check,
    energy_drift: f64,
    momentum_change: f64,
}

/// Every particle against the sequential reference (the run's and the one-processor
/// baseline's), and energy and momentum conserved by the collisions.
fn check_answer(
    out: &RunOutput<kernel::State>,
    serial: &RunOutput<kernel::State>,
    reference: &physics::Reference,
    initial: &[Particle],
    dims: [usize; 3],
    iterations: usize,
) -> Answer {
    let particles = initial.len();
    // Gather the answer.
    let gather = |states: &[kernel::State], memory: Option<&dyn Fn(commlab_api::Addr) -> u64>| {
        let mut all: Vec<Particle> = Vec::new();
        for s in states {
            match (s.array, memory) {
                (Some(a), Some(load)) => {
                    for i in 0..s.count {
                        let w: Vec<u64> = (0..RECORD_WORDS).map(|k| load(a.word(RECORD_WORDS * i + k))).collect();
                        all.push(Particle::from_words(&w));
                    }
                }
                _ => all.extend_from_slice(&s.parts[..s.count]),
            }
        }
        all.sort_by_key(|p| p.id);
        all
    };
    let load = |a: commlab_api::Addr| out.load(a);
    let got = gather(&out.states, Some(&load));
    let serial_got = gather(&serial.states, None);
    let want = &reference.particles;
    let vmax = want.iter().flat_map(|p| p.v).fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    let compare = |got: &[Particle]| -> (usize, f64) {
        if got.len() != want.len() {
            return (want.len().abs_diff(got.len()).max(1), f64::INFINITY);
        }
        let mut wrong = 0;
        let mut err = 0.0f64;
        for (g, w) in got.iter().zip(want) {
            if g != w {
                wrong += 1;
            }
            if g.id != w.id {
                err = f64::INFINITY;
                continue;
            }
            for (d, side) in dims.iter().enumerate() {
                let e = ((g.x[d] - w.x[d]).abs() / *side as f64).max((g.v[d] - w.v[d]).abs() / vmax);
                err = if e.is_nan() { f64::INFINITY } else { err.max(e) };
            }
        }
        (wrong, err)
    };
    let (wrong, max_error) = compare(&got);
    let (serial_wrong, _) = compare(&serial_got);
    let (_, e0) = physics::moments(initial);
    let (_, e1) = physics::moments(&got);
    let energy_drift = (e1 - e0) / e0;
    let vscale: f64 = initial.iter().flat_map(|p| p.v).map(f64::abs).sum::<f64>().max(f64::MIN_POSITIVE);
    let momentum_change: f64 = out.states.iter().map(|s| s.tally.collision_momentum_change).sum::<f64>() / vscale;
    let conserved = energy_drift.abs() <= CONSERVATION && momentum_change <= CONSERVATION;
    let ok = wrong == 0 && serial_wrong == 0 && conserved;
    let check = Check {
        ok,
        max_error: if wrong > 0 { max_error.max(wrong as f64) } else { max_error },
        detail: format!(
            "{particles} particles after {iterations} steps vs the sequential program: {wrong} differ (baseline: {serial_wrong}), max difference {max_error:.2e}; collisions' momentum change {momentum_change:.1e}, energy change {energy_drift:.1e} relative (limit {CONSERVATION:.0e})"
        ),
    };

    Answer { check, energy_drift, momentum_change }
}

/// The run's counters: migrations, collisions, messages, locks, conservation and speedup.
fn counters(
    out: &RunOutput<kernel::State>,
    serial: &RunOutput<kernel::State>,
    reference: &physics::Reference,
    answer: &Answer,
    cells: usize,
    particles: usize,
    iterations: usize,
) -> BTreeMap<String, f64> {
    let Answer { energy_drift, momentum_change, .. } = *answer;
    let mut t = kernel::Tally::default();
    for s in &out.states {
        let a = &s.tally;
        t.moved += a.moved;
        t.sent += a.sent;
        t.received += a.received;
        t.messages += a.messages;
        t.lock_acquisitions += a.lock_acquisitions;
        t.lock_releases += a.lock_releases;
        t.candidates += a.candidates;
        t.collisions += a.collisions;
    }
    let mut c = BTreeMap::new();
    c.set(&PARTICLES, particles as f64);
    c.set(&CELLS, cells as f64);
    c.set(&PARTICLE_STEPS, t.moved as f64);
    c.set(&PARTICLES_SENT, t.sent as f64);
    c.set(&PARTICLES_RECEIVED, t.received as f64);
    c.set(&MIGRATION_FRACTION, t.sent as f64 / t.moved.max(1) as f64);
    c.set(&REFERENCE_MIGRATIONS, reference.migrations as f64);
    c.set(&CANDIDATES, t.candidates as f64);
    c.set(&COLLISIONS, t.collisions as f64);
    c.set(&REFERENCE_COLLISIONS, reference.collisions as f64);
    c.set(&APP_MESSAGES, t.messages as f64);
    c.set(&LOCK_ACQUISITIONS, t.lock_acquisitions as f64);
    c.set(&LOCK_RELEASES, t.lock_releases as f64);
    c.set(&ENERGY_DRIFT, energy_drift);
    c.set(&COLLISION_MOMENTUM_CHANGE, momentum_change);
    c.set(&CYCLES_PER_ITERATION, out.stats.cycles / iterations as f64);
    c.set(&SERIAL_CYCLES, serial.stats.cycles);
    c.set(&SPEEDUP, serial.stats.cycles / out.stats.cycles);
    c.set(&SYNCHRONIZATION_CYCLES_MEAN, out.stats.mean(Category::Synchronization));
    let s = &out.stats.counters;
    if let (Some(all), Some(local)) = (s.get("cache_misses"), s.get("local_misses")) {
        c.set(&REMOTE_MISSES, all - local);
    }
    c
}
