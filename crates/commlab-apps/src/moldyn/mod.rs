//! `moldyn`: molecular dynamics of Lennard-Jones molecules in a periodic box, with an
//! interaction list rebuilt every few iterations and the molecules partitioned by recursive
//! coordinate bisection (after the MOLDYN program of the Alewife mechanism studies).
//!
//! - Physics, generator, list and sequential reference: `physics.rs`.
//! - Partition: `partition.rs` (RCB on the initial positions; molecules are then numbered
//!   processor by processor, each processor's in generator order).
//! - Who computes which pair, ghosts and exports: `plan.rs`.
//! - The variants (`sm`, `sm-pf`, `mp-int`, `mp-poll`, `bulk`, and the Blizzard study's
//!   `stache` = `sm` and `custom` = shared coordinates with the force reduction in one bulk
//!   message per peer a step): `kernel.rs`. `stache` and `custom` also report
//!   `counters.speedup`: the cycles of the sequential program (the `bulk` program on one
//!   processor of the same machine: private data, no access checks, no messages or barriers
//!   but the list rebuilds'; `counters.serial_cycles`) over the run's; its answer is checked
//!   too.
//! - Private data (velocities, lists, and with messages coordinates, forces, ghosts and export
//!   lists), referenced through the cache by every variant: `private.rs`.
//!
//! Set-up (untimed): the generator, the partition, the sequential reference run (which also
//! gives the interaction lists: every variant uses the reference's lists, built from the
//! reference's positions at each rebuild; a variant's own positions differ from those by
//! rounding only, and a pair that rounding could move across the list radius lies far beyond
//! the cut-off, so it would contribute nothing either way), the initial forces (from a list of
//! the initial positions), and the initial data written to each owner's memory.
//!
//! Timed: `iterations` velocity-Verlet steps including the list rebuilds due in them (at
//! iterations 0, `rebuild`, `2 rebuild`, ...), as the study timed whole runs.
//!
//! Check: every molecule's final position and velocity against the sequential reference. The
//! variants sum each molecule's forces in other orders than the reference (remote
//! contributions in arrival order), so the answers differ by rounding, which the dynamics,
//! being chaotic, amplify with time. Measured (512 molecules on 8 processors, `bulk`): 1e-14
//! of the box side or largest speed after 40 steps, 3e-13 after 200, 1e-7 after 800; with the
//! defaults (2048 molecules, 40 steps, 32 processors) 2e-14. The check allows 1e-9: four
//! orders above rounding at the default length, and far below any real error (a lost or
//! doubled pair force moves a molecule by about dt² |F| ≈ 1e-4 of a unit in one step). Runs
//! of more than about 500 steps can exceed it with no error at all; the check's detail line
//! says so. The counter `energy_drift` (relative change of the total energy over the run,
//! from the variant's own final state; `reference_energy_drift` is the reference's) reports
//! the integration's quality.
//!
//! Work costs (machine `[costs]`): `moldyn_pair` per listed pair per iteration (the distance
//! test; its coordinate loads are simulated), `moldyn_force` per pair within the cut-off (the
//! force and the accumulation; the accumulators' loads and stores are simulated),
//! `moldyn_kick` and `moldyn_drift` per molecule (integration; its loads and stores are
//! simulated), `moldyn_rebuild_molecule` and `moldyn_rebuild_pair` (the list rebuild),
//! `moldyn_ghost_molecule` (a handler storing one molecule's coordinates),
//! `moldyn_recv_force` (a handler adding one molecule's force delta), `bulk_copy_line` (the
//! bulk gather).

mod kernel;
mod partition;
mod physics;
mod plan;
mod private;

use crate::app::common::{
    APP_MESSAGES, CYCLES_PER_ITERATION, LOCK_ACQUISITIONS, LOCK_RELEASES, PREFETCHES_ISSUED, REMOTE_MISSES,
    SERIAL_CYCLES, SPEEDUP, SYNCHRONIZATION_CYCLES_MEAN,
};
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc, Variant};
use crate::params::{Params, POSITIVE};
use crate::private::Shape;
use commlab_api::SetCounter;
use commlab_api::{Backend, Category, RunOutput};
use kernel::{Blizzard, Costs, Kernel, Layout, Tally};
use physics::{Pair, Setup, Vec3s};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters moldyn`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [CYCLES_PER_ITERATION, APP_MESSAGES, LOCK_ACQUISITIONS, LOCK_RELEASES, PREFETCHES_ISSUED, REMOTE_MISSES, SYNCHRONIZATION_CYCLES_MEAN, SERIAL_CYCLES, SPEEDUP];
    LIST_PAIRS = "list_pairs", "count",
        "pairs in a neighbour list, averaged over the list rebuilds";
    CROSS_PAIR_FRACTION = "cross_pair_fraction", "fraction",
        "pairs whose molecules live on different processors, over `list_pairs` (averaged over the rebuilds)";
    REBUILDS = "rebuilds", "count",
        "neighbour lists the run builds";
    PAIRS_TESTED = "pairs_tested", "count",
        "list pairs whose distance the processors tested";
    PAIRS_WITHIN_CUTOFF = "pairs_within_cutoff", "count",
        "tested pairs within the cutoff (forces computed)";
    ENERGY_START = "energy_start", "energy (reduced units)",
        "the system's total energy at the start";
    ENERGY_END = "energy_end", "energy (reduced units)",
        "the run's total energy at the end";
    ENERGY_DRIFT = "energy_drift", "fraction",
        "(energy_end - energy_start) / |energy_start|";
    REFERENCE_ENERGY_DRIFT = "reference_energy_drift", "fraction",
        "the sequential reference's relative energy drift over the same steps";
    COORDINATE_MESSAGES = "coordinate_messages", "messages",
        "messages carrying coordinates, all processors";
    DELTA_MESSAGES = "delta_messages", "messages",
        "messages carrying force deltas, all processors";
    MOLECULES_SENT = "molecules_sent", "count",
        "molecule coordinates sent, all processors";
    MOLECULES_RECEIVED = "molecules_received", "count",
        "molecule coordinates received, all processors";
    DELTAS_SENT = "deltas_sent", "count",
        "force deltas sent, all processors";
    DELTAS_RECEIVED = "deltas_received", "count",
        "force deltas received, all processors";
    APP_BYTES_PER_MESSAGE = "app_bytes_per_message", "bytes",
        "argument and payload bytes of the application's messages over their number";
    MOLECULES_PER_MESSAGE = "molecules_per_message", "count",
        "molecules one fine-grain message carries (mp-int and mp-poll)";
    LOCK_ACQUIRE_CYCLES_MEAN = "lock_acquire_cycles_mean", "cycles",
        "mean time from asking for a lock to holding it (the miss, and any wait for a holder)";
    LOCK_ACQUIRE_CYCLES_PER_PROC = "lock_acquire_cycles_per_proc", "cycles",
        "time asking for locks, summed over processors, over their number";
    LOCAL_SHARED_MISSES = "local_shared_misses", "count",
        "the engine's `local_misses` minus `private_misses`: shared lines served by the node's own memory";
}

pub const INFO: AppInfo = AppInfo {
    name: "moldyn",
    summary: "MOLDYN: Lennard-Jones molecular dynamics, RCB partition; locks in shared memory, prefetch, fine-grain messages, bulk DMA",
    variants: &["sm", "sm-pf", "mp-int", "mp-poll", "bulk", "stache", "custom"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "molecules", default: "2048", doc: "molecules in the box (at least 2 per processor)" },
        ParamDoc { name: "density", default: "0.8", doc: "molecules per unit volume (reduced units; the box side is (molecules/density)^(1/3))" },
        ParamDoc { name: "temperature", default: "1.0", doc: "initial temperature (Maxwellian velocities, reduced units)" },
        ParamDoc { name: "cutoff", default: "2.5", doc: "Lennard-Jones cut-off radius (force shifted to zero there)" },
        ParamDoc { name: "list_radius", default: "2.8", doc: "interaction-list radius (> cutoff; at most half the box side)" },
        ParamDoc { name: "rebuild", default: "20", doc: "iterations between interaction-list rebuilds" },
        ParamDoc { name: "iterations", default: "40", doc: "velocity-Verlet steps timed (including rebuilds)" },
        ParamDoc { name: "dt", default: "0.005", doc: "time step (reduced units)" },
        ParamDoc {
            name: "molecules_per_message",
            default: "2",
            doc: "most molecules per fine-grain message (mp-int, mp-poll): 2 fill Alewife's 14 argument words with a slot word; fewer where the cap is smaller",
        },
    ],
};

/// Largest relative difference from the reference the check allows (see above).
const TOLERANCE: f64 = 1e-9;

/// The most cells the interaction-list rebuild may divide the box into.
const MAX_CELLS: f64 = 1e8;

fn positive_real(what: &'static str) -> (&'static str, fn(f64) -> bool) {
    (what, |v: f64| v.is_finite() && v > 0.0)
}

/// moldyn's inputs, checked against each other and the machine.
struct Inputs {
    setup: Setup,
    variant: Variant,
    blizzard: Option<Blizzard>,
    /// Molecules per fine-grain message.
    per_message: usize,
}

fn inputs<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<Inputs, AppError> {
    let procs = backend.nprocs();
    let molecules: usize = params.get("molecules", POSITIVE)?;
    if molecules < 2 * procs {
        return Err(AppError::Input(format!(
            "--param molecules={molecules}: moldyn needs at least 2 molecules per processor ({} on {procs} processors)",
            2 * procs
        )));
    }
    let density: f64 = params.get("density", positive_real("a number > 0"))?;
    let temperature: f64 = params.get("temperature", positive_real("a number > 0"))?;
    let cutoff: f64 = params.get("cutoff", positive_real("a number > 0"))?;
    let list_radius: f64 = params.get("list_radius", positive_real("a number > 0"))?;
    let rebuild: usize = params.get("rebuild", POSITIVE)?;
    let iterations: usize = params.get("iterations", ("a whole number from 1 to 10000 (the sequential reference runs first, and chaos takes the check past its tolerance after about 500 steps)", |v: usize| (1..=10_000).contains(&v)))?;
    let dt: f64 = params.get("dt", positive_real("a number > 0"))?;
    let setup = Setup { molecules, density, temperature, cutoff, list_radius, dt, iterations, rebuild, seed };
    if list_radius <= cutoff {
        return Err(AppError::Input(format!(
            "--param list_radius={list_radius}: moldyn needs a list radius larger than the cut-off ({cutoff})"
        )));
    }
    let side = setup.box_side();
    if 2.0 * list_radius > side {
        return Err(AppError::Input(format!(
            "--param list_radius={list_radius}: moldyn needs at most half the box side ({:.3} for {molecules} molecules at density {density})",
            side / 2.0
        )));
    }
    // The list rebuild's cells are at least list_radius wide; a box of very many of them (a
    // tiny density) would not fit in memory.
    let cells_per_side = (side / list_radius).floor();
    if cells_per_side.powi(3) > MAX_CELLS {
        return Err(AppError::Input(format!(
            "--param density={}: the box would hold {cells_per_side:.3e}^3 cells of the list radius, more than moldyn allows ({MAX_CELLS:e}); use a higher density or a larger list_radius",
            params.raw("density")
        )));
    }
    let (variant, blizzard) = match variant {
        "stache" => (Variant::Sm, Some(Blizzard::Stache)),
        "custom" => (Variant::Sm, Some(Blizzard::Custom)),
        v => (Variant::from_name(v), None),
    };
    let cap = backend.max_am_args().saturating_sub(1) / 3;
    if cap == 0 && matches!(variant, Variant::MpInt | Variant::MpPoll) {
        return Err(AppError::Input(
            "moldyn message variants need at least 4 argument words per active message (a slot word and one molecule)"
                .into(),
        ));
    }
    let asked = params.get::<usize>("molecules_per_message", POSITIVE)?;
    // As em3d's values_per_message: the default is lowered to what a message carries, a value
    // given above that is refused.
    if params.given("molecules_per_message") && asked > cap.max(1) {
        return Err(AppError::Input(format!(
            "--param molecules_per_message={asked}: an active message on this machine carries at most {} molecules (3 words each besides the slot word; messaging.max_arg_words = {})",
            cap.max(1),
            2 * backend.max_am_args()
        )));
    }
    let per_message = asked.min(cap.max(1));
    Ok(Inputs { setup, variant, blizzard, per_message })
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let Inputs { setup, variant, blizzard, per_message } = inputs(backend, variant, params, seed)?;
    let procs = backend.nprocs();
    let Setup { molecules, cutoff, dt, iterations, rebuild, .. } = setup;
    let side = setup.box_side();
    let costs = Costs::of(backend)?;

    // Generate, partition, renumber processor by processor.
    let (gx, gv) = physics::generate(&setup);
    let owner = partition::rcb(&gx, procs);
    let mut order: Vec<usize> = (0..molecules).collect();
    order.sort_by_key(|&m| (owner[m], m));
    let x0: Vec3s = order.iter().map(|&m| gx[m]).collect();
    let v0: Vec3s = order.iter().map(|&m| gv[m]).collect();
    let mut first = vec![0usize; procs + 1];
    for &m in &order {
        first[owner[m] + 1] += 1;
    }
    for p in 0..procs {
        first[p + 1] += first[p];
    }
    let reference = physics::reference(&setup, &x0, &v0);
    let epochs: Vec<Vec<plan::ProcEpoch>> = reference.lists.iter().map(|l| plan::split(l, &first)).collect();
    let messages = !variant.shared_memory();
    let shapes: Vec<Shape> = (0..procs)
        .map(|p| {
            let parts: Vec<&plan::ProcEpoch> = epochs.iter().map(|e| &e[p]).collect();
            private::shape(first[p + 1] - first[p], &parts, messages, blizzard == Some(Blizzard::Custom))
        })
        .collect();
    let prog = Arc::new(Kernel {
        variant,
        blizzard,
        costs,
        pair: Pair::new(side, cutoff),
        dt,
        iterations,
        rebuild,
        first: first.clone(),
        epochs,
        x0,
        v0,
        f0: reference.initial_forces.clone(),
        shapes,
        line_bytes: backend.line_bytes(),
        per_message,
        coords: Layout::new(&first, 3, backend.line_bytes()),
        forces: Layout::new(&first, 4, backend.line_bytes()),
    });
    let out = backend.run(Arc::clone(&prog)).map_err(run_err)?;

    // The sequential baseline of the Blizzard variants: `bulk` on one processor.
    let serial = match blizzard {
        None => None,
        Some(_) => Some(serial_baseline(backend, &prog, &reference)?),
    };

    let (check, energy_end) = check_answer(&prog, &out, serial.as_ref(), &reference, &setup);
    let c = counters(&prog, &out, serial.as_ref(), &reference, energy_end, procs);
    Ok(result(out.stats, c, check))
}

/// The one-processor `bulk` run of the same steps: the Blizzard variants' sequential baseline.
fn serial_baseline<B: Backend>(
    backend: &B,
    prog: &Kernel,
    reference: &physics::Reference,
) -> Result<RunOutput<kernel::State>, AppError> {
    let molecules = prog.x0.len();
    let Kernel { costs, pair, dt, iterations, rebuild, per_message, .. } = *prog;
    let one = backend.with_nprocs(1).map_err(run_err)?;
    let first1 = vec![0, molecules];
    let epochs1: Vec<Vec<plan::ProcEpoch>> = reference.lists.iter().map(|l| plan::split(l, &first1)).collect();
    let parts: Vec<&plan::ProcEpoch> = epochs1.iter().map(|e| &e[0]).collect();
    let shapes1 = vec![private::shape(molecules, &parts, true, false)];
    let base = Kernel {
        variant: Variant::Bulk,
        blizzard: None,
        costs,
        pair,
        dt,
        iterations,
        rebuild,
        first: first1.clone(),
        epochs: epochs1,
        x0: prog.x0.clone(),
        v0: prog.v0.clone(),
        f0: reference.initial_forces.clone(),
        shapes: shapes1,
        line_bytes: one.line_bytes(),
        per_message,
        coords: Layout::new(&first1, 3, one.line_bytes()),
        forces: Layout::new(&first1, 4, one.line_bytes()),
    };
    one.run(Arc::new(base)).map_err(run_err)
}

/// The answer: every molecule's position and velocity against the sequential reference (and
/// the one-processor baseline's, when there is one); and the energy at the end.
fn check_answer(
    prog: &Kernel,
    out: &RunOutput<kernel::State>,
    serial: Option<&RunOutput<kernel::State>>,
    reference: &physics::Reference,
    setup: &Setup,
) -> (Check, f64) {
    let (first, molecules, iterations) = (&prog.first, setup.molecules, setup.iterations);
    let (side, cutoff, list_radius) = (setup.box_side(), setup.cutoff, setup.list_radius);

    // The answer: every molecule's position and velocity.
    let mut x: Vec3s = Vec::with_capacity(molecules);
    let mut v: Vec3s = Vec::with_capacity(molecules);
    for (p, s) in out.states.iter().enumerate() {
        v.extend_from_slice(&s.v);
        match s.shared {
            Some([coords, _]) => {
                for m in first[p]..first[p + 1] {
                    let w = prog.coords.word[m];
                    x.push([0, 1, 2].map(|d| f64::from_bits(out.load(coords.word(w + d)))));
                }
            }
            None => x.extend_from_slice(&s.x),
        }
    }
    let vmax = reference.v.iter().flatten().fold(0.0f64, |m, c| m.max(c.abs())).max(f64::MIN_POSITIVE);
    let error_of = |x: &Vec3s, v: &Vec3s| {
        let mut max_error = 0.0f64;
        for m in 0..molecules {
            for d in 0..3 {
                let ex = (x[m][d] - reference.x[m][d]).abs() / side;
                let ev = (v[m][d] - reference.v[m][d]).abs() / vmax;
                for e in [ex, ev] {
                    max_error = if e.is_nan() { f64::INFINITY } else { max_error.max(e) };
                }
            }
        }
        max_error
    };
    let mut max_error = error_of(&x, &v);
    if let Some(one) = serial {
        max_error = max_error.max(error_of(&one.states[0].x, &one.states[0].v));
    }
    let pair = Pair::new(side, cutoff);
    let energy_end = physics::energy(&x, &v, &pair, &physics::build_list(&x, &pair, list_radius));
    let mut check = Check {
        ok: max_error <= TOLERANCE,
        max_error,
        detail: format!(
            "{molecules} positions and velocities after {iterations} steps vs sequential: max difference {max_error:.2e} of the box side / largest speed (limit {TOLERANCE:.0e}; chaos amplifies rounding past it in runs of more than about 500 steps)"
        ),
    };

    if serial.is_some() {
        check.detail.push_str("; the maximum includes the one-processor baseline's (bulk)");
    }
    (check, energy_end)
}

/// The run's counters: the lists, energies, messages, locks and (with a baseline) speedup.
fn counters(
    prog: &Kernel,
    out: &RunOutput<kernel::State>,
    serial: Option<&RunOutput<kernel::State>>,
    reference: &physics::Reference,
    energy_end: f64,
    procs: usize,
) -> BTreeMap<String, f64> {
    let (variant, per_message, iterations) = (prog.variant, prog.per_message, prog.iterations);
    let mut t = Tally::default();
    for s in &out.states {
        let a = &s.tally;
        t.coord_messages += a.coord_messages;
        t.delta_messages += a.delta_messages;
        t.molecules_sent += a.molecules_sent;
        t.deltas_sent += a.deltas_sent;
        t.molecules_received += a.molecules_received;
        t.deltas_received += a.deltas_received;
        t.words_sent += a.words_sent;
        t.lock_acquisitions += a.lock_acquisitions;
        t.lock_releases += a.lock_releases;
        t.lock_acquire_cycles += a.lock_acquire_cycles;
        t.prefetches += a.prefetches;
        t.pairs_tested += a.pairs_tested;
        t.pairs_within_cutoff += a.pairs_within_cutoff;
    }
    let mut c = BTreeMap::new();
    let list_pairs: usize = reference.lists.iter().map(|l| l.pairs.len()).sum::<usize>() / reference.lists.len();
    let cross: usize = prog.epochs.iter().flatten().map(|e| e.cross_pairs()).sum::<usize>() / prog.epochs.len();
    c.set(&LIST_PAIRS, list_pairs as f64);
    c.set(&CROSS_PAIR_FRACTION, cross as f64 / list_pairs.max(1) as f64);
    c.set(&REBUILDS, reference.lists.len() as f64);
    c.set(&PAIRS_TESTED, t.pairs_tested as f64);
    c.set(&PAIRS_WITHIN_CUTOFF, t.pairs_within_cutoff as f64);
    c.set(&ENERGY_START, reference.energy_start);
    c.set(&ENERGY_END, energy_end);
    c.set(&ENERGY_DRIFT, (energy_end - reference.energy_start) / reference.energy_start.abs());
    c.set(&REFERENCE_ENERGY_DRIFT, (reference.energy_end - reference.energy_start) / reference.energy_start.abs());
    c.set(&CYCLES_PER_ITERATION, out.stats.cycles / iterations as f64);
    c.set(&APP_MESSAGES, (t.coord_messages + t.delta_messages) as f64);
    c.set(&COORDINATE_MESSAGES, t.coord_messages as f64);
    c.set(&DELTA_MESSAGES, t.delta_messages as f64);
    c.set(&MOLECULES_SENT, t.molecules_sent as f64);
    c.set(&MOLECULES_RECEIVED, t.molecules_received as f64);
    c.set(&DELTAS_SENT, t.deltas_sent as f64);
    c.set(&DELTAS_RECEIVED, t.deltas_received as f64);
    let app_messages = (t.coord_messages + t.delta_messages).max(1) as f64;
    c.set(&APP_BYTES_PER_MESSAGE, 8.0 * t.words_sent as f64 / app_messages);
    if matches!(variant, Variant::MpInt | Variant::MpPoll) {
        c.set(&MOLECULES_PER_MESSAGE, per_message as f64);
    }
    c.set(&LOCK_ACQUISITIONS, t.lock_acquisitions as f64);
    c.set(&LOCK_RELEASES, t.lock_releases as f64);
    c.set(
        &LOCK_ACQUIRE_CYCLES_MEAN,
        if t.lock_acquisitions > 0 { t.lock_acquire_cycles / t.lock_acquisitions as f64 } else { 0.0 },
    );
    c.set(&LOCK_ACQUIRE_CYCLES_PER_PROC, t.lock_acquire_cycles / procs as f64);
    c.set(&PREFETCHES_ISSUED, t.prefetches as f64);
    let s = &out.stats.counters;
    if let (Some(all), Some(local)) = (s.get("cache_misses"), s.get("local_misses")) {
        c.set(&REMOTE_MISSES, all - local);
        c.set(&LOCAL_SHARED_MISSES, local - s.get("private_misses").copied().unwrap_or(0.0));
    }
    c.set(&SYNCHRONIZATION_CYCLES_MEAN, out.stats.mean(Category::Synchronization));
    if let Some(one) = serial {
        c.set(&SERIAL_CYCLES, one.stats.cycles);
        c.set(&SPEEDUP, one.stats.cycles / out.stats.cycles);
    }
    c
}
