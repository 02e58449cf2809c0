//! `barnes`: Barnes-Hut gravitational N-body simulation with an oct-tree rebuilt every
//! iteration, after SPLASH-2's `barnes` as the Blizzard/Tempest studies ran it.
//!
//! - Physics, generator, sequential tree and reference: `physics.rs`.
//! - The variants and the speedup baseline: `kernel.rs`. `stache`: one shared tree built
//!   cooperatively under per-cell locks (SPLASH-2's algorithm) in transparent shared memory;
//!   `custom`: every processor receives every body's position and mass in bulk messages and
//!   builds the whole tree privately (no shared tree).
//!
//! Bodies are a Plummer sphere numbered in Morton order of their initial positions, split in
//! equal blocks of numbers among the processors (a static stand-in for SPLASH-2's cost
//! zones). The root cell is a fixed cube centred at the origin: the smallest power-of-two
//! half side holding every body at every step of the sequential run.
//!
//! Check: every body's final position and velocity equal to the sequential program's. They
//! must be equal exactly, not within a tolerance: a tree with at most one body per leaf in a
//! fixed root cube has the same shape whatever order bodies are inserted in (and whichever
//! processor creates which cell), centres of mass sum children in octant order, and walks
//! visit them in that order, so every variant does the reference's floating-point
//! operations in the reference's order. `counters.force_error` reports the tree's
//! approximation: the RMS difference from the direct O(N^2) sum on the initial positions,
//! relative to the RMS acceleration (about 1e-2 at theta = 1).
//!
//! Size: the study ran 8192 bodies for 8 iterations with the first excluded from timing. The
//! default here is 2048 bodies and 4 iterations (3 timed), so that `--variant all` on
//! blizzard-s with 16 processors takes well under a minute of host time; both are parameters.
//! `theta` 1.0, `dt` 0.025 and `eps` 0.05 are SPLASH-2's defaults.
//!
//! `counters.speedup` divides the cycles of the sequential program (the `custom` program on
//! one processor of the same machine: private data, no access checks, no messages; its first
//! iteration excluded as well) by this run's.
//!
//! Work costs (machine `[costs]`): `barnes_insert_level` per tree level an insertion descends,
//! `barnes_subdivide` per cell created, `barnes_com_child` per child summed and
//! `barnes_com_cell` per cell finished in the centre-of-mass pass, `barnes_open` per cell
//! visited by a walk, `barnes_interact` per body-cell or body-body interaction,
//! `barnes_update` per body's leapfrog step. The tree's and the bodies' loads and stores are
//! simulated.

mod kernel;
mod physics;

use crate::app::common::{
    APP_MESSAGES, CYCLES_PER_ITERATION, LOCK_ACQUISITIONS, LOCK_RELEASES, REMOTE_MISSES, SERIAL_CYCLES, SPEEDUP,
    SYNCHRONIZATION_CYCLES_MEAN,
};
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Category, RunOutput};
pub(crate) use kernel::BODIES_ARGS;
use kernel::{Costs, Kernel, Mode};
use physics::{Sim, V3};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters barnes`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [LOCK_ACQUISITIONS, LOCK_RELEASES, APP_MESSAGES, CYCLES_PER_ITERATION, SERIAL_CYCLES, SPEEDUP, SYNCHRONIZATION_CYCLES_MEAN, REMOTE_MISSES];
    BODIES = "bodies", "count",
        "bodies simulated";
    TREE_CELLS_MAX = "tree_cells_max", "count",
        "the most cells any of the sequential reference's trees had";
    TREE_DEPTH_MAX = "tree_depth_max", "count",
        "the deepest insertion in the sequential reference's trees";
    ROOT_HALF_SIDE = "root_half_side", "length",
        "half the side of the root cell";
    FORCE_ERROR = "force_error", "fraction",
        "RMS of |a_tree - a_direct| over RMS |a_direct| on the initial positions (the reference's tree approximation)";
    CELLS_CREATED = "cells_created", "count",
        "tree cells the processors created, all steps";
    INTERACTIONS = "interactions", "count",
        "body-body and body-cell interactions computed, all processors";
    INTERACTIONS_PER_BODY = "interactions_per_body", "count",
        "`interactions` over bodies times steps";
    CELLS_OPENED = "cells_opened", "count",
        "cells opened in the force walks, all processors";
    BODIES_SENT = "bodies_sent", "count",
        "bodies sent in bulk messages (custom)";
    BODIES_RECEIVED = "bodies_received", "count",
        "bodies received in bulk messages (custom)";
}

pub const INFO: AppInfo = AppInfo {
    name: "barnes",
    summary: "Barnes-Hut N-body: a shared oct-tree built under per-cell locks (stache), or the tree built privately from bodies exchanged in bulk messages (custom); counters.speedup",
    variants: &["stache", "custom"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "bodies", default: "2048", doc: "bodies of the Plummer sphere (at least 2, and 1 per processor); the study ran 8192" },
        ParamDoc { name: "iterations", default: "4", doc: "time steps, the first not timed (at least 2); the study ran 8" },
        ParamDoc { name: "theta", default: "1.0", doc: "opening criterion: a cell of side s at distance d is used whole when s < theta d" },
        ParamDoc { name: "dt", default: "0.025", doc: "time step" },
        ParamDoc { name: "eps", default: "0.05", doc: "gravitational softening length" },
    ],
};

/// Body-iterations the sequential reference may take (it runs first, with a direct O(N^2)
/// sum on the initial positions).
const MAX_BODIES: usize = 16_384;
const MAX_WORK: f64 = 1e6;

fn positive_real(what: &'static str) -> (&'static str, fn(f64) -> bool) {
    (what, |v: f64| v.is_finite() && v > 0.0)
}

/// barnes's inputs, checked against each other and the machine.
struct Inputs {
    n: usize,
    iterations: usize,
    theta: f64,
    dt: f64,
    eps: f64,
    mode: Mode,
}

fn inputs<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<Inputs, AppError> {
    let procs = backend.nprocs();
    let n: usize =
        params.get("bodies", ("a whole number from 2 to 16384", |v: usize| (2..=MAX_BODIES).contains(&v)))?;
    if n < procs {
        return Err(AppError::Input(format!(
            "--param bodies={n}: barnes needs at least one body per processor ({procs} processors)"
        )));
    }
    let iterations: usize = params.get(
        "iterations",
        ("a whole number from 2 to 1000 (the first is not timed)", |v: usize| (2..=1000).contains(&v)),
    )?;
    if n as f64 * iterations as f64 > MAX_WORK {
        return Err(AppError::Input(format!(
            "--param iterations={iterations}: barnes allows at most {MAX_WORK:e} body-iterations (bodies x iterations = {}; the sequential reference runs first)",
            n as f64 * iterations as f64
        )));
    }
    let theta: f64 = params.get("theta", positive_real("a number > 0"))?;
    let dt: f64 = params.get("dt", ("a number > 0 and at most 1", |v: f64| v.is_finite() && v > 0.0 && v <= 1.0))?;
    let eps: f64 =
        params.get("eps", ("a number >= 0 and at most 10", |v: f64| v.is_finite() && (0.0..=10.0).contains(&v)))?;
    let mode = if variant == "stache" { Mode::Stache } else { Mode::Custom };
    if mode == Mode::Custom && procs > 1 && backend.max_am_args() < BODIES_ARGS {
        return Err(AppError::Input(format!(
            "barnes custom sends each processor's bodies in a message of {} arguments (parity, first body, count), but this machine's messages carry at most {} (messaging.max_arg_words = {})",
            BODIES_ARGS,
            backend.max_am_args(),
            2 * backend.max_am_args()
        )));
    }
    Ok(Inputs { n, iterations, theta, dt, eps, mode })
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let Inputs { n, iterations, theta, dt, eps, mode } = inputs(backend, variant, params)?;
    let procs = backend.nprocs();
    let costs = Costs::of(backend)?;

    let bodies = physics::generate(n, seed);
    let (sim, reference) =
        sized_reference(&bodies, Sim { dt, eps2: eps * eps, theta2: theta * theta, root_half: 1.0 }, iterations)?;
    let first: Vec<usize> = (0..=procs).map(|p| p * n / procs).collect();
    let mut owner = vec![0usize; n];
    for p in 0..procs {
        owner[first[p]..first[p + 1]].fill(p);
    }
    let x0: Vec<V3> = bodies.iter().map(|b| b.x).collect();
    let v0: Vec<V3> = bodies.iter().map(|b| b.v).collect();
    let m: Vec<f64> = bodies.iter().map(|b| b.m).collect();
    let line_bytes = backend.line_bytes();
    let kernel = |mode, first: Vec<usize>, owner: Vec<usize>| Kernel {
        mode,
        sim,
        iterations,
        costs,
        first,
        owner,
        x0: x0.clone(),
        v0: v0.clone(),
        m: m.clone(),
        cap: reference.max_cells,
        line_bytes,
    };
    let prog = Arc::new(kernel(mode, first.clone(), owner));
    let out = backend.run(Arc::clone(&prog)).map_err(run_err)?;
    let one = backend.with_nprocs(1).map_err(run_err)?;
    let serial = one.run(Arc::new(kernel(Mode::Custom, vec![0, n], vec![0; n]))).map_err(run_err)?;

    let check = check_answer(&out, &serial, &reference, &sim, &first, iterations);
    let c = counters(&out, &serial, &reference, &sim, n, iterations);
    Ok(result(out.stats, c, check))
}

/// The sequential reference, with the root cell grown (by doubling) until every body stays
/// inside it for the whole run; the simulation with that root.
fn sized_reference(
    bodies: &[physics::Body],
    mut sim: Sim,
    iterations: usize,
) -> Result<(Sim, physics::Reference), AppError> {
    let (n, dt) = (bodies.len(), sim.dt);
    let extent = bodies.iter().flat_map(|b| b.x).fold(0.0f64, |m, c| m.max(c.abs()));
    while sim.root_half <= extent {
        sim.root_half *= 2.0;
    }
    // Double the root until every body stays inside it for the whole run.
    let reference = loop {
        let r = physics::reference(&sim, bodies, iterations);
        if r.max_depth > physics::MAX_DEPTH {
            return Err(AppError::Input(format!(
                "--param bodies={n}: two bodies came closer than the root side / 2^{} (the deepest tree barnes builds); use other bodies, dt or seed",
                physics::MAX_DEPTH
            )));
        }
        if r.inside {
            break r;
        }
        if sim.root_half > 1e12 {
            return Err(AppError::Input(format!(
                "--param dt={dt}: bodies escape beyond 1e12 in {iterations} steps; use a smaller dt"
            )));
        }
        sim.root_half *= 2.0;
    };
    Ok((sim, reference))
}

/// Every body's final position and velocity (the run's and the one-processor baseline's)
/// against the sequential Barnes-Hut: equal exactly.
fn check_answer(
    out: &RunOutput<kernel::State>,
    serial: &RunOutput<kernel::State>,
    reference: &physics::Reference,
    sim: &Sim,
    first: &[usize],
    iterations: usize,
) -> Check {
    let n = reference.x.len();
    // Gather every body's final position and velocity.
    let gather = |states: &[kernel::State], memory: &dyn Fn(commlab_api::Addr) -> u64, first: &[usize]| {
        let mut x: Vec<V3> = Vec::with_capacity(n);
        let mut v: Vec<V3> = Vec::with_capacity(n);
        for (p, s) in states.iter().enumerate() {
            if s.arrays.is_empty() {
                x.extend_from_slice(&s.x);
                v.extend_from_slice(&s.v);
            } else {
                for i in 0..first[p + 1] - first[p] {
                    let a = s.arrays[p].word(8 * i);
                    x.push([0, 1, 2].map(|d| f64::from_bits(memory(a.word(d)))));
                    v.push([0, 1, 2].map(|d| f64::from_bits(memory(a.word(4 + d)))));
                }
            }
        }
        (x, v)
    };
    let (x, v) = gather(&out.states, &|a| out.load(a), first);
    let (sx, sv) = gather(&serial.states, &|a| serial.load(a), &[0, n]);
    let vmax = reference.v.iter().flatten().fold(0.0f64, |m, c| m.max(c.abs())).max(f64::MIN_POSITIVE);
    let compare = |x: &[V3], v: &[V3]| -> (usize, f64) {
        let mut wrong = 0;
        let mut err = 0.0f64;
        for b in 0..n {
            if x[b] != reference.x[b] || v[b] != reference.v[b] {
                wrong += 1;
            }
            for d in 0..3 {
                let e = ((x[b][d] - reference.x[b][d]).abs() / sim.root_half)
                    .max((v[b][d] - reference.v[b][d]).abs() / vmax);
                err = if e.is_nan() { f64::INFINITY } else { err.max(e) };
            }
        }
        (wrong, err)
    };
    let (wrong, max_error) = compare(&x, &v);
    let (serial_wrong, _) = compare(&sx, &sv);
    let check = Check {
        ok: wrong == 0 && serial_wrong == 0,
        max_error,
        detail: format!(
            "{n} bodies after {iterations} steps vs the sequential Barnes-Hut (same tree, same order: must be equal exactly): {wrong} differ (baseline: {serial_wrong}), max difference {max_error:.2e} of the root half side / largest speed"
        ),
    };

    check
}

/// The run's counters: the tree, the interactions, locks, messages and speedup.
fn counters(
    out: &RunOutput<kernel::State>,
    serial: &RunOutput<kernel::State>,
    reference: &physics::Reference,
    sim: &Sim,
    n: usize,
    iterations: usize,
) -> BTreeMap<String, f64> {
    let mut t = kernel::Tally::default();
    for s in &out.states {
        let a = &s.tally;
        t.cells += a.cells;
        t.interactions += a.interactions;
        t.opened += a.opened;
        t.lock_acquisitions += a.lock_acquisitions;
        t.lock_releases += a.lock_releases;
        t.messages += a.messages;
        t.bodies_sent += a.bodies_sent;
        t.bodies_received += a.bodies_received;
    }
    let timed = (iterations - 1) as f64;
    let mut c = BTreeMap::new();
    c.set(&BODIES, n as f64);
    c.set(&TREE_CELLS_MAX, reference.max_cells as f64);
    c.set(&TREE_DEPTH_MAX, reference.max_depth as f64);
    c.set(&ROOT_HALF_SIDE, sim.root_half);
    c.set(&FORCE_ERROR, reference.force_error);
    c.set(&CELLS_CREATED, t.cells as f64);
    c.set(&INTERACTIONS, t.interactions as f64);
    c.set(&INTERACTIONS_PER_BODY, t.interactions as f64 / (n * iterations) as f64);
    c.set(&CELLS_OPENED, t.opened as f64);
    c.set(&LOCK_ACQUISITIONS, t.lock_acquisitions as f64);
    c.set(&LOCK_RELEASES, t.lock_releases as f64);
    c.set(&APP_MESSAGES, t.messages as f64);
    c.set(&BODIES_SENT, t.bodies_sent as f64);
    c.set(&BODIES_RECEIVED, t.bodies_received as f64);
    c.set(&CYCLES_PER_ITERATION, out.stats.cycles / timed);
    c.set(&SERIAL_CYCLES, serial.stats.cycles);
    c.set(&SPEEDUP, serial.stats.cycles / out.stats.cycles);
    c.set(&SYNCHRONIZATION_CYCLES_MEAN, out.stats.mean(Category::Synchronization));
    let s = &out.stats.counters;
    if let (Some(all), Some(local)) = (s.get("cache_misses"), s.get("local_misses")) {
        c.set(&REMOTE_MISSES, all - local);
    }
    c
}
