//! `appbt`: the NAS block-tridiagonal (BT) ADI solver kernel on a 3-D grid, after the APPBT
//! program of the Blizzard/Tempest studies (Wisconsin).
//!
//! Every point of an `nx x ny x nz` grid carries five unknowns. An iteration computes a
//! right-hand side from each point's values and its six neighbours' (a 7-point stencil), then
//! solves the implicit operator by three directional sweeps (x, y, z): along every grid line
//! of the sweep's direction a block-tridiagonal system of 5x5 blocks, whose blocks depend on
//! the points' values, by forward elimination (block multiply, LU factor, solves) and back
//! substitution; then adds the solution to the values. The numbers and the sequential
//! reference: `math.rs`.
//!
//! The grid is cut into slabs across x, one per processor (at least one x-plane each), so the
//! x sweep's lines cross every processor and are pipelined: the lines go in groups (one per
//! y, the `nz` lines of an x-z plane), a processor eliminates a group once its predecessor
//! has handed it that group's last forward results, and the back substitution runs the same
//! pipeline the other way. The y and z sweeps are local. The variants, in `kernel.rs`:
//! `stache`, data in shared memory and the hand-offs through shared buffers and a shared
//! array of counters the consumer spin-waits on; `custom`, data private, each hand-off one
//! bulk message whose arrival the consumer waits for with the signal/wait primitive of
//! `runtime::signal`, and the planes the stencil needs from the neighbours pushed to them in
//! one message each after the update (producer-consumer), with no barrier.
//!
//! Size: the study's grid, 32^3 points, with 3 iterations. A run at that size takes about
//! 3 seconds of simulation a variant on `blizzard-s` at 16 processors (each processor's
//! slab is 2 planes, and the pipeline has 32 groups), so no reduction of the grid was
//! needed; the iteration count is a choice (the study's could not be found; every iteration
//! does the same work, so the speedup hardly depends on it beyond the first). Smaller grids
//! (`--param nx=16 ny=16 nz=16`) for quick runs.
//!
//! Set-up (untimed): the initial values written to each owner's slab. Timed: all
//! `iterations` iterations.
//!
//! Check: every final value equal to the sequential reference's (exactly: the same
//! operations in the same order), in the run and in the one-processor baseline.
//!
//! `counters.speedup` divides the cycles of the sequential program (the `custom` program on
//! one processor of the same machine: private data, no access checks, no messages or
//! barriers; `counters.serial_cycles`) by this run's.
//!
//! Work costs (machine `[costs]`): `appbt_rhs` per point's right-hand side, `appbt_form` per
//! point's off-diagonal block formed from its values, and per block operation of the
//! elimination `appbt_block_multiply` (`B - A C'`), `appbt_block_matvec` (`r - A r'` forward,
//! `r' - C' x` backward), `appbt_block_factor` (LU), `appbt_block_solve` (one right-hand side
//! column; six a point: the five of `C'` and `r'`), `appbt_add` per point's update.

mod kernel;
mod math;

use crate::app::common::{
    APP_MESSAGES, CYCLES_PER_ITERATION, REMOTE_MISSES, SERIAL_CYCLES, SPEEDUP, SYNCHRONIZATION_CYCLES_MEAN,
};
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Category};
use kernel::{Costs, Kernel, Mode};
use math::{Grid, COMP};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters appbt`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [APP_MESSAGES, CYCLES_PER_ITERATION, SERIAL_CYCLES, SPEEDUP, SYNCHRONIZATION_CYCLES_MEAN, REMOTE_MISSES];
    POINTS = "points", "count",
        "grid points";
    POINTS_SOLVED = "points_solved", "count",
        "point solves (one backward-substitution step each), all processors and sweeps";
    HANDOFFS_SENT = "handoffs_sent", "count",
        "pipeline handoffs of the x sweep a processor passed on, all processors";
    HANDOFFS_RECEIVED = "handoffs_received", "count",
        "pipeline handoffs received (a signal or a counter seen)";
    PLANES_SENT = "planes_sent", "count",
        "boundary planes sent to neighbours, all processors";
    SPIN_WAITS = "spin_waits", "count",
        "waits spinning on a shared pipeline counter, all processors";
}

pub const INFO: AppInfo = AppInfo {
    name: "appbt",
    summary: "NAS BT ADI kernel: 5x5 block-tridiagonal sweeps on a 3-D grid, the x sweep pipelined across processors; shared counters (stache) or signal/wait messages (custom); counters.speedup",
    variants: &["stache", "custom"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "nx", default: "32", doc: "grid points along x (the axis the processors' slabs cut; at least one per processor)" },
        ParamDoc { name: "ny", default: "32", doc: "grid points along y (the pipeline's groups)" },
        ParamDoc { name: "nz", default: "32", doc: "grid points along z (lines per pipeline group)" },
        ParamDoc { name: "iterations", default: "3", doc: "ADI iterations (all timed)" },
    ],
};

/// Point-iterations the sequential reference may take (it runs first, natively).
const MAX_WORK: f64 = 2e6;

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let procs = backend.nprocs();
    let side: (&str, fn(usize) -> bool) = ("a whole number from 1 to 256", |v| (1..=256).contains(&v));
    let dims = [params.get("nx", side)?, params.get("ny", side)?, params.get("nz", side)?];
    if dims[0] < procs {
        return Err(AppError::Input(format!(
            "--param nx={}: appbt needs at least one x-plane per processor ({procs} processors)",
            dims[0]
        )));
    }
    let iterations: usize =
        params.get("iterations", ("a whole number from 1 to 1000", |v: usize| (1..=1000).contains(&v)))?;
    let grid = Grid { dims };
    let points = grid.points();
    if points as f64 * iterations as f64 > MAX_WORK {
        return Err(AppError::Input(format!(
            "--param nx={} ny={} nz={}: appbt allows at most {MAX_WORK:e} point-iterations (points x iterations = {}; the sequential reference runs first)",
            dims[0],
            dims[1],
            dims[2],
            points as f64 * iterations as f64
        )));
    }
    let mode = if variant == "stache" { Mode::Stache } else { Mode::Custom };
    let costs = Costs::of(backend)?;
    let x0: Vec<usize> = (0..=procs).map(|p| p * dims[0] / procs).collect();
    let mut owner = vec![0; dims[0]];
    for p in 0..procs {
        owner[x0[p]..x0[p + 1]].fill(p);
    }
    let reference = math::reference(&grid, iterations);
    let line_bytes = backend.line_bytes();
    let out = backend
        .run(Arc::new(Kernel { mode, grid, iterations, costs, x0: x0.clone(), owner, line_bytes }))
        .map_err(run_err)?;
    let one = backend.with_nprocs(1).map_err(run_err)?;
    let serial = one
        .run(Arc::new(Kernel {
            mode: Mode::Custom,
            grid,
            iterations,
            costs,
            x0: vec![0, dims[0]],
            owner: vec![0; dims[0]],
            line_bytes,
        }))
        .map_err(run_err)?;

    // Gather the answer.
    let mut got: Vec<f64> = Vec::with_capacity(COMP * points);
    for (p, s) in out.states.iter().enumerate() {
        match s.array {
            Some(a) => {
                let words = COMP * (x0[p + 1] - x0[p]) * dims[1] * dims[2];
                got.extend((0..words).map(|k| f64::from_bits(out.load(a.word(k)))));
            }
            None => got.extend_from_slice(&s.u),
        }
    }
    let serial_got = &serial.states[0].u;
    let compare = |got: &[f64]| -> (usize, f64) {
        if got.len() != reference.len() {
            return (reference.len().abs_diff(got.len()).max(1), f64::INFINITY);
        }
        let mut wrong = 0;
        let mut err = 0.0f64;
        for (g, w) in got.iter().zip(&reference) {
            if g.to_bits() != w.to_bits() {
                wrong += 1;
                let e = (g - w).abs();
                err = if e.is_nan() { f64::INFINITY } else { err.max(e) };
            }
        }
        (wrong, err)
    };
    let (wrong, max_error) = compare(&got);
    let (serial_wrong, _) = compare(serial_got);
    let finite = reference.iter().all(|v| v.is_finite());
    let check = Check {
        ok: wrong == 0 && serial_wrong == 0 && finite,
        max_error: if wrong > 0 { max_error.max(wrong as f64) } else { max_error },
        detail: format!(
            "{} values after {iterations} iterations vs the sequential program: {wrong} differ (baseline: {serial_wrong}), max difference {max_error:.2e}{}",
            reference.len(),
            if finite { "" } else { "; the reference is not finite" }
        ),
    };

    let mut t = kernel::Tally::default();
    for s in &out.states {
        let a = &s.tally;
        t.handoffs_sent += a.handoffs_sent;
        t.handoffs_received += a.handoffs_received;
        t.messages += a.messages;
        t.planes_sent += a.planes_sent;
        t.spin_waits += a.spin_waits;
        t.points_solved += a.points_solved;
    }
    let mut c = BTreeMap::new();
    c.set(&POINTS, points as f64);
    c.set(&POINTS_SOLVED, t.points_solved as f64);
    c.set(&HANDOFFS_SENT, t.handoffs_sent as f64);
    c.set(&HANDOFFS_RECEIVED, t.handoffs_received as f64);
    c.set(&APP_MESSAGES, t.messages as f64);
    c.set(&PLANES_SENT, t.planes_sent as f64);
    c.set(&SPIN_WAITS, t.spin_waits as f64);
    c.set(&CYCLES_PER_ITERATION, out.stats.cycles / iterations as f64);
    c.set(&SERIAL_CYCLES, serial.stats.cycles);
    c.set(&SPEEDUP, serial.stats.cycles / out.stats.cycles);
    c.set(&SYNCHRONIZATION_CYCLES_MEAN, out.stats.mean(Category::Synchronization));
    let s = &out.stats.counters;
    if let (Some(all), Some(local)) = (s.get("cache_misses"), s.get("local_misses")) {
        c.set(&REMOTE_MISSES, all - local);
    }
    Ok(result(out.stats, c, check))
}
