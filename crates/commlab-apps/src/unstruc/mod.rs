//! `unstruc`: an explicit flow-style iteration over an unstructured 3-D mesh (after the
//! UNSTRUC program of the Alewife mechanism study). Every iteration computes, for every edge,
//! three results from its two endpoints' old values and adds them into both endpoints, adds a
//! smaller term of every boundary face into its nodes, and then gives every node its new value;
//! old values are double-buffered, so an iteration reads only the previous one's.
//!
//! - [`mesh`]: the mesh and its seeded generator (a jittered lattice in a duct with a
//!   spherical cavity, irregularly tetrahedralised; about 2000 nodes by default), or
//!   [`meshfile`]: a mesh read from a text file (`--param mesh=PATH`).
//! - `flux.rs`: the numerics and the sequential reference.
//! - `plan.rs`: the METIS partition, who computes each edge and face, and each processor's
//!   ghosts and sends.
//! - `kernel.rs`: the timed iteration in the variants `sm`, `sm-pf`, `mp-int`, `mp-poll` and
//!   `bulk`; `private.rs`: the data each processor keeps in its own memory.
//!
//! The check: every node's three final values against the sequential reference, largest
//! difference relative to the largest reference value at most 1e-12 (variants add the same
//! results in other orders, so they differ from it in the last bits).

mod flux;
mod kernel;
pub mod mesh;
pub mod meshfile;
mod plan;
mod private;

use crate::app::common::{APP_MESSAGES, CYCLES_PER_ITERATION, LOCK_RELEASES, PREFETCHES_ISSUED, REMOTE_MISSES};
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc, Variant};
use crate::params::{Params, POSITIVE};
use commlab_api::SetCounter;
use commlab_api::{Backend, TrafficClass};
use flux::{Problem, Value};
use kernel::{Costs, Kernel, Slots};
use plan::Plan;
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters unstruc`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [CYCLES_PER_ITERATION, APP_MESSAGES, LOCK_RELEASES, PREFETCHES_ISSUED, REMOTE_MISSES];
    MESH_NODES = "mesh_nodes", "count",
        "nodes of the mesh";
    MESH_EDGES = "mesh_edges", "count",
        "edges of the mesh";
    MESH_FACES = "mesh_faces", "count",
        "faces of the mesh";
    EDGES_PER_NODE = "edges_per_node", "ratio",
        "mesh edges over mesh nodes";
    CUT_EDGE_FRACTION = "cut_edge_fraction", "fraction",
        "edges whose ends the partition puts on different processors, over all edges";
    SHARED_NODES = "shared_nodes", "count",
        "mesh nodes more than one processor adds to (their updates take the node's lock in shared memory)";
    GHOST_NODES = "ghost_nodes", "count",
        "ghost copies of remote nodes the processors keep, all processors";
    EDGE_IMBALANCE = "edge_imbalance", "ratio",
        "the largest processor's edges over the mean per processor";
    VALUES_SENT = "values_sent", "count",
        "node values sent in the application's messages, all processors";
    VALUES_RECEIVED = "values_received", "count",
        "node values received, all processors";
    BYTES_PER_MESSAGE = "bytes_per_message", "bytes",
        "bytes of the headers and data traffic classes over the engine's `messages` (when any message was sent)";
    LOCK_ACQUIRES = "lock_acquires", "count",
        "locks acquired, all processors";
    LOCK_CYCLES_PER_PROC = "lock_cycles_per_proc", "cycles",
        "time inside `lock` (the acquiring miss, spinning, the lock overhead), summed over processors, over their number";
    LOCK_CYCLES_PER_ACQUIRE = "lock_cycles_per_acquire", "cycles",
        "that time over `lock_acquires` (0 without locks)";
    PREFETCHED_REFS_WAITED = "prefetched_refs_waited", "count",
        "references to a prefetched record that took longer than to a line held exclusively: the prefetch was late or the line taken away (sm-pf)";
    PREFETCHES_USEFUL = "prefetches_useful", "count",
        "the engine's `prefetches` minus `prefetched_refs_waited`, at least 0: a lower bound on useful prefetches (sm-pf; replaces the engine's counter of this name)";
}

pub const INFO: AppInfo = AppInfo {
    name: "unstruc",
    summary: "UNSTRUC: edge and face fluxes on an unstructured 3-D mesh; locked shared memory, prefetch, messages, bulk DMA",
    variants: Variant::NAMES,
    counters: COUNTERS,
    params: &[
        ParamDoc {
            name: "mesh",
            default: "generated",
            doc: "`generated` (a seeded mesh of about `nodes` nodes), or a mesh file (text: `nodes N`, N lines `x y z`, `edges M`, M lines `a b`, `faces F`, F lines `k n1..nk` with k 3 or 4; `#` comments)",
        },
        ParamDoc { name: "nodes", default: "2000", doc: "generated mesh: nodes requested (at least 8 per processor, at most 500000)" },
        ParamDoc { name: "iterations", default: "20", doc: "iterations timed" },
        ParamDoc {
            name: "poll_every",
            default: "4",
            doc: "mp-poll: edges or faces computed between polls in the compute loop",
        },
    ],
};

/// Largest difference from the sequential reference allowed, relative to its largest value.
const TOLERANCE: f64 = 1e-12;

fn input(e: impl std::fmt::Display) -> AppError {
    AppError::Input(e.to_string())
}

/// The mesh a run uses, and a description of it.
fn load_mesh(params: &Params, procs: usize, seed: u64) -> Result<(mesh::Mesh, String), AppError> {
    let given = params.resolved()["mesh"].clone();
    if given == "generated" {
        let nodes: usize = params
            .get("nodes", ("a whole number from 8 per processor to 500000", |n: usize| (1..=500_000).contains(&n)))?;
        if nodes < 8 * procs {
            return Err(input(format!(
                "--param nodes={nodes}: unstruc needs at least 8 nodes per processor ({} on {procs} processors)",
                8 * procs
            )));
        }
        Ok((mesh::generate(nodes, seed), format!("generated mesh (seed {seed})")))
    } else {
        let m = meshfile::read_mesh(std::path::Path::new(&given)).map_err(|e| input(format!("--param mesh: {e}")))?;
        if m.nodes() < procs {
            return Err(input(format!(
                "--param mesh: {given} has {} nodes, fewer than the {procs} processors",
                m.nodes()
            )));
        }
        Ok((m, given))
    }
}

/// Largest `|a - b|` over all values relative to the largest `|b|` (NaN counts as infinite).
fn rel_diff(a: &[Value], b: &[Value]) -> f64 {
    let scale = b.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    a.iter().flatten().zip(b.iter().flatten()).fold(0.0f64, |m, (x, y)| {
        let e = (x - y).abs() / scale;
        if e.is_nan() {
            f64::INFINITY
        } else {
            m.max(e)
        }
    })
}

pub fn run<B: Backend>(backend: &B, variant_name: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let procs = backend.nprocs();
    let variant = Variant::from_name(variant_name);
    let iterations: usize = params.get("iterations", crate::params::ITERATIONS)?;
    let poll_every: usize = params.get("poll_every", POSITIVE)?;
    let args = backend.max_am_args();
    if args < 4 && !variant.shared_memory() {
        return Err(input(
            "unstruc message variants need 4 argument words per active message (a node and its 3 results; messaging.max_arg_words >= 8)",
        ));
    }
    let costs = Costs::of(backend)?;
    let (m, describe) = load_mesh(params, procs, seed)?;
    let problem = Problem::new(m, seed);
    let plan = Plan::new(&problem, procs).map_err(|e| AppError::Run(format!("partitioning: {e}")))?;
    let line_bytes = backend.line_bytes();
    let (record_word, record_owners) = kernel::record_layout(&plan, 16.max(line_bytes / 8));
    let mut init = vec![[0.0; 3]; plan.owner.len()];
    for (new, &old) in plan.old_of_new.iter().enumerate() {
        init[new] = problem.init[old as usize];
    }
    let messages = !variant.shared_memory();
    let private = plan.proc.iter().map(|p| private::shape(p, messages, variant == Variant::Bulk)).collect();
    let slots = plan
        .proc
        .iter()
        .map(|p| Slots {
            edges: p.edges.iter().map(|e| [p.slot(e.a), p.slot(e.b)]).collect(),
            faces: p.faces.iter().map(|f| f.nodes().iter().map(|&v| p.slot(v)).collect()).collect(),
        })
        .collect();
    let kernel = Arc::new(Kernel {
        variant,
        iterations,
        plan,
        init,
        costs,
        line_bytes,
        private,
        per_message: ((args.saturating_sub(1)) / 3).max(1),
        poll_every,
        record_words: record_owners.len(),
        record_word,
        record_owners,
        slots,
    });
    let out = backend.run(Arc::clone(&kernel)).map_err(run_err)?;

    // The answer, in the original numbering.
    let plan = &kernel.plan;
    let n = plan.owner.len();
    let last = iterations % 2;
    let mut got = vec![[f64::NAN; 3]; n];
    for (new, &old) in plan.old_of_new.iter().enumerate() {
        got[old as usize] = if let Some(arrays) = out.states[0].arrays {
            let r = arrays[last].word(kernel.record_word[new] as usize);
            [0, 1, 2].map(|k| f64::from_bits(out.load(r.word(k))))
        } else {
            let q = plan.owner[new] as usize;
            out.states[q].vals[last][new - plan.proc[q].first]
        };
    }
    let want = problem.sequential(iterations);
    let max_error = rel_diff(&got, &want);
    let ok = max_error <= TOLERANCE;

    let mesh = &problem.mesh;
    let sum = |f: fn(&kernel::Counts) -> f64| out.states.iter().map(|s| f(&s.counts)).sum::<f64>();
    let mut counters = BTreeMap::new();
    counters.set(&MESH_NODES, n as f64);
    counters.set(&MESH_EDGES, mesh.edges.len() as f64);
    counters.set(&MESH_FACES, mesh.faces.len() as f64);
    counters.set(&EDGES_PER_NODE, mesh.edges.len() as f64 / n as f64);
    counters.set(&CUT_EDGE_FRACTION, plan.cut_edges as f64 / mesh.edges.len().max(1) as f64);
    counters.set(&SHARED_NODES, plan.shared.iter().filter(|&&s| s).count() as f64);
    counters.set(&GHOST_NODES, plan.ghosts() as f64);
    let most_edges = plan.proc.iter().map(|p| p.edges.len()).max().unwrap_or(0);
    counters.set(&EDGE_IMBALANCE, most_edges as f64 * procs as f64 / mesh.edges.len().max(1) as f64);
    counters.set(&CYCLES_PER_ITERATION, out.stats.cycles / iterations as f64);
    let app_messages = sum(|c| c.messages as f64);
    counters.set(&APP_MESSAGES, app_messages);
    counters.set(&VALUES_SENT, sum(|c| c.values_sent as f64));
    counters.set(&VALUES_RECEIVED, sum(|c| c.values_received as f64));
    let msgs = out.stats.counters.get("messages").copied().unwrap_or(0.0);
    if msgs > 0.0 {
        let v = &out.stats.volume_bytes;
        let bytes = v[TrafficClass::Headers as usize] + v[TrafficClass::Data as usize];
        counters.set(&BYTES_PER_MESSAGE, bytes as f64 / msgs);
    }
    let acquires = sum(|c| c.lock_acquires as f64);
    counters.set(&LOCK_ACQUIRES, acquires);
    counters.set(&LOCK_RELEASES, sum(|c| c.lock_releases as f64));
    let lock_cycles = sum(|c| c.lock_cycles);
    counters.set(&LOCK_CYCLES_PER_PROC, lock_cycles / procs as f64);
    counters.set(&LOCK_CYCLES_PER_ACQUIRE, if acquires > 0.0 { lock_cycles / acquires } else { 0.0 });
    if variant == Variant::SmPrefetch {
        // `prefetches` (the simulator's) counts those that fetched a line; a fetched line whose
        // reference still waited was late or lost, so the rest is a lower bound on the useful.
        let waited = sum(|c| c.prefetched_refs_waited as f64);
        let fetched = out.stats.counters.get("prefetches").copied().unwrap_or(0.0);
        counters.set(&PREFETCHES_ISSUED, sum(|c| c.prefetches as f64));
        counters.set(&PREFETCHED_REFS_WAITED, waited);
        counters.set(&PREFETCHES_USEFUL, (fetched - waited).max(0.0));
    }
    if let (Some(m), Some(l)) = (out.stats.counters.get("cache_misses"), out.stats.counters.get("local_misses")) {
        counters.set(&REMOTE_MISSES, m - l);
    }
    let check = Check {
        ok,
        max_error,
        detail: format!(
            "{describe}: {n} nodes, {} edges, {} faces; {} values after {iterations} iterations vs sequential: max relative difference {max_error:.2e} (limit {TOLERANCE:.0e})",
            mesh.edges.len(),
            mesh.faces.len(),
            3 * n
        ),
    };
    Ok(result(out.stats, counters, check))
}
