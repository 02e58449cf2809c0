//! `iccg`: conjugate gradient preconditioned by incomplete Cholesky, whose parallel kernel is
//! the sparse triangular solve as a DAG.
//!
//! Pipeline (untimed, done once per matrix, parameters and processor count, and shared by the
//! variants of one command), as the Alewife study (Chong et al., HPCA 1998) prepared it with
//! BlockSolve95 and Chaco:
//! 1. Read a Matrix Market file (`--param matrix=PATH`) or generate a finite-element matrix
//!    ([`crate::sparse::fe_stiffness`]).
//! 2. Compress (`compress=on`, the default): group the unknowns whose rows have identical
//!    patterns ([`crate::sparse::compress`]; `off`: every unknown its own group), giving the
//!    quotient graph whose vertices weigh their group's size and whose edges weigh the scalar
//!    edges they stand for.
//! 3. Partition the quotient graph onto the processors (`partition=rsb`, the default:
//!    multilevel recursive spectral bisection with KL refinement as Chaco does it, which the
//!    study used; `metis`; `natural`: contiguous blocks of the original numbering, groups
//!    whole; or `linear-kl`: Chaco's linear global method with KL local refinement, the
//!    original numbering's blocks by recursive bisection with each bisection refined by KL,
//!    [`crate::sparse::linear_kl`]); or `cut` with `nonlocal=F`: `rsb`'s partition with
//!    pairs of groups of equal size swapped between processors in a seeded random order,
//!    each swap raising the cut, until the fraction of the DAG's edges that are non-local (as
//!    `counters.nonlocal_edge_fraction` counts them) reaches F, within +0.005
//!    ([`crate::sparse::raise_cut`]; every processor keeps rsb's number of unknowns). It is
//!    for running on a published partition's locality (the study's Table 4) when the
//!    partition itself is not available. F below rsb's own fraction, or beyond what the swaps
//!    reach, is an input error naming the fraction rsb gives or the swaps reached.
//!    `counters.cut_swaps` is the number of swaps. A group's unknowns all go to its group's
//!    processor.
//! 4. Colour the quotient graph greedily (groups in order of their smallest unknown, each
//!    taking the smallest colour none of its lower-numbered neighbours has) and renumber the
//!    unknowns colour by colour; within a colour, group by group (in order of smallest
//!    unknown); within a group, its unknowns consecutively in increasing original order
//!    ([`crate::sparse::group_colour_ordering`]). `counters.colours` is this colouring's count.
//!    A colour's diagonal block is then block diagonal, one dense block per group, so the
//!    unknowns of a group depend on each other in a chain, on one processor.
//! 5. Factor the reordered matrix with IC(0) (scalar, the pattern of `A`), and solve
//!    `A x = b` (`b = A x_true` for a fixed uneven `x_true`) with PCG to a relative residual of
//!    1e-8, functionally.
//!
//! Timed (the run's `cycles`): the forward triangular solve with the factor (`solves=both`:
//! then the backward one too), distributed as in `kernel.rs`, each processor completing its
//! unknowns in the new numbering's order. The check compares the kernel's vectors, and the
//! baseline's, with a sequential solve (relative difference at most 1e-10), and the PCG
//! solution with a separate sequential PCG in the original numbering (at most 1e-10) whose
//! residual must meet the tolerance. `counters.serial_cycles` is the time of one common
//! sequential program (`baseline.rs`) on one processor of the same machine, and
//! `counters.speedup` is that divided by this run's cycles, for every variant alike.
//!
//! `counters.nonlocal_edge_cycles` is the study's "non-local computation" (§5.1: "the average
//! time spent on computation and communication overhead on each non-local edge"): the cycles
//! the processors spend on the non-local edges' own work, summed over processors and solves,
//! divided by the solves times `nonlocal_edges` (0 when no edge is non-local). An edge's own
//! work is, at its producer, the stretch from reading its coefficient and target to the end of
//! its communication: the two private reads, its `iccg_edge` computation, and then
//! - `sm`/`sm-pf`: the producer-computes update of the consumer's record, lock taken and
//!   released, misses and spinning on the lock included;
//! - message variants: the send of its message (`mp-*`), or its buffering
//!   (`iccg_buffer_edge`) and, for an edge that fills its buffer, the buffer's send
//!   (`buffer-N`), with waits for NI output space; buffers sent before a wait or at the end
//!   count whole;
//!
//! and at its consumer the handler that applies it (entry, argument reads, body, exit;
//! `Node::handler_cycles`), all handlers of the program being edges'. Not counted: the node's
//! own work (`iccg_node`) and local edges, polls (`mp-poll` pays them whether or not an edge
//! has come), waits for inputs (`idle_cycles_per_node`, which includes the handlers that ran
//! while waiting: the two overlap by that much), barriers, and prefetches. Each processor
//! cycle counts once: a handler that interrupts a measured stretch, or runs while it waits
//! (for a miss or NI output space), is counted as the handler's and taken out of the stretch.
//! On backends that do not time handlers (native) the receive side is missing.

mod baseline;
mod dag;
mod kernel;

use crate::app::common::{APP_MESSAGES, SERIAL_CYCLES, SPEEDUP};
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use crate::sparse::{self, Compression, LowerFactor, Partitioner, SymMatrix};
use commlab_api::Backend;
use commlab_api::SetCounter;
use dag::{Dag, Direction};
use kernel::{Costs, Kernel, Variant};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters iccg`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [SERIAL_CYCLES, SPEEDUP, APP_MESSAGES];
    MATRIX_ORDER = "matrix_order", "count",
        "unknowns of the matrix";
    MATRIX_NONZEROS = "matrix_nonzeros", "count",
        "nonzeros of the matrix";
    COLOURS = "colours", "count",
        "colours of the matrix's reordering";
    GROUPS = "groups", "count",
        "groups of unknowns colouring and partitioning treat as one (identical rows with compress=on, else one unknown each)";
    LARGEST_GROUP = "largest_group", "count",
        "unknowns in the largest group";
    PARTITION_IMBALANCE = "partition_imbalance", "ratio",
        "the largest part's unknowns times the processors over all unknowns";
    DAG_EDGES = "dag_edges", "count",
        "edges of the triangular solve's dependence DAG";
    NONLOCAL_EDGE_FRACTION = "nonlocal_edge_fraction", "fraction",
        "DAG edges between unknowns on different processors, over all edges";
    PCG_ITERATIONS = "pcg_iterations", "count",
        "iterations of the sequential PCG check to meet its tolerance";
    PCG_REL_RESIDUAL = "pcg_rel_residual", "ratio",
        "the sequential PCG's final relative residual";
    NONLOCAL_EDGES = "nonlocal_edges", "count",
        "DAG edges between unknowns on different processors";
    EDGES_SENT = "edges_sent", "count",
        "DAG edge values sent to other processors, all processors";
    EDGES_RECEIVED = "edges_received", "count",
        "DAG edge values received, all processors";
    EDGES_PER_MESSAGE = "edges_per_message", "count",
        "`edges_sent` over `app_messages` (0 without messages)";
    IDLE_CYCLES_PER_NODE = "idle_cycles_per_node", "cycles",
        "processors' idle time summed, over the DAG nodes solved (unknowns times solves)";
    NONLOCAL_EDGE_CYCLES = "nonlocal_edge_cycles", "cycles",
        "time of non-local computation and its handlers summed, per non-local edge and solve (the study's non-local computation)";
    PATTERN_VALUES = "pattern_values", "flag",
        "1 when the matrix file gave only its pattern (values made up), else 0";
    CUT_SWAPS = "cut_swaps", "count",
        "swaps of groups between processors that raised the non-local edge fraction to `nonlocal` (partition=cut only)";
}

pub const INFO: AppInfo = AppInfo {
    name: "iccg",
    summary: "ICCG: sparse triangular solve as a DAG; producer-computes shared memory, messages, buffered messages",
    variants: &[
        "sm",
        "sm-pf",
        "mp-int",
        "mp-poll",
        "buffer-1",
        "buffer-2",
        "buffer-3",
        "buffer-4",
        "buffer-8",
        "buffer-16",
    ],
    counters: COUNTERS,
    params: &[
        ParamDoc {
            name: "matrix",
            default: "fe",
            doc: "Matrix Market file (.mtx or .mtx.gz, symmetric), or `fe` for a generated finite-element matrix",
        },
        ParamDoc {
            name: "values",
            default: "file",
            doc: "`file`: the file's values; `spd`: replace them by off-diagonal -1, diagonal = row degree + 1",
        },
        ParamDoc {
            name: "fe_dim",
            default: "2",
            doc: "generated matrix: 2 (9-point, Q1 quads) or 3 (27-point, Q1 hexes)",
        },
        ParamDoc {
            name: "fe_elements",
            default: "40",
            doc: "generated matrix: elements per side ((k+1)^dim unknowns)",
        },
        ParamDoc {
            name: "compress",
            default: "on",
            doc: "`on`: group unknowns with identical rows before colouring and partitioning (BlockSolve95); `off`: scalar graph",
        },
        ParamDoc {
            name: "partition",
            default: "rsb",
            doc: "`rsb`: multilevel recursive spectral bisection with KL (Chaco, as the study); `metis`; `natural`: contiguous blocks of the original numbering; `linear-kl`: Chaco's linear method with KL (blocks of the original numbering by recursive bisection, each refined by KL); `cut`: rsb's partition with pairs of unknowns (groups) swapped between processors until the fraction of non-local edges is --param nonlocal",
        },
        ParamDoc {
            name: "nonlocal",
            default: "0.0",
            doc: "with partition=cut (and only then; required): the fraction of the DAG's edges to make non-local, 0 < F < 1, e.g. a study's published figure; reached within +0.005 (0.0: not given)",
        },
        ParamDoc {
            name: "solves",
            default: "forward",
            doc: "triangular solves timed: `forward` (as the study) or `both` (forward, then backward)",
        },
    ],
};

/// PCG stopping rule: relative residual.
const PCG_RTOL: f64 = 1e-8;
/// Tolerance to which the two PCGs whose solutions are compared are run.
const COMPARE_RTOL: f64 = 1e-14;
/// Largest relative difference allowed between a computed vector and its sequential reference.
const TOLERANCE: f64 = 1e-10;

/// The problem after the untimed pipeline.
struct Prepared {
    describe: String,
    pattern: bool,
    n: usize,
    nnz: usize,
    colours: usize,
    /// Groups of the compression and the largest group's size.
    groups: usize,
    largest_group: usize,
    /// Largest processor's unknowns over the mean.
    imbalance: f64,
    partitioner: &'static str,
    /// `partition=cut`: the swaps made from rsb's partition.
    cut_swaps: Option<usize>,
    /// The factor of the reordered matrix.
    l: LowerFactor,
    /// Owner of every node (new numbering).
    owner: Vec<u32>,
    /// Right-hand side of the kernel's forward solve (new numbering).
    rhs: Vec<f64>,
    /// Sequential forward and backward solves of `rhs`.
    y_ref: Vec<f64>,
    x_ref: Vec<f64>,
    pcg_iterations: usize,
    pcg_rel_residual: f64,
    /// Relative difference between the reordered PCG's solution and the sequential one.
    pcg_difference: f64,
    pcg_ok: bool,
}

type CacheKey = (String, usize);

/// The last prepared problem: `--variant all` prepares once.
static CACHE: Mutex<Option<(CacheKey, Arc<Prepared>)>> = Mutex::new(None);

/// The cache slot. The slot is only ever replaced whole, so a worker thread that panicked
/// while holding the lock cannot have left it half-written: a poisoned lock is taken as it
/// is, and one failed run of a parallel sweep does not fail all the others.
fn cache_slot() -> MutexGuard<'static, Option<(CacheKey, Arc<Prepared>)>> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn input(e: impl std::fmt::Display) -> AppError {
    AppError::Input(e.to_string())
}

/// The value of parameter `name`, which must be one of `valid`.
fn choice(params: &Params, name: &str, valid: &[&'static str]) -> Result<&'static str, AppError> {
    let raw = params.resolved()[name].clone();
    valid.iter().copied().find(|v| *v == raw).ok_or_else(|| {
        let list = match valid {
            [a, b] => format!("`{a}` or `{b}`"),
            _ => format!("one of {}", valid.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")),
        };
        input(format!("--param {name}={raw}: iccg needs {list}"))
    })
}

/// Values of `--param partition`: the partitioners, and `cut`.
const PARTITIONS: [&str; 5] = {
    let [a, b, c, d] = Partitioner::NAMES;
    [a, b, c, d, "cut"]
};

/// `--param nonlocal`: the target fraction with `partition=cut` (where it is required), and
/// refused with any other partition.
fn cut_target(params: &Params, partition: &str) -> Result<Option<f64>, AppError> {
    match (partition == "cut", params.given("nonlocal")) {
        (true, true) => Ok(Some(params.get("nonlocal", ("a fraction F with 0 < F < 1", |f: f64| f > 0.0 && f < 1.0))?)),
        (true, false) => Err(input(
            "--param partition=cut needs --param nonlocal=F, the fraction of the DAG's edges to make non-local (0 < F < 1)",
        )),
        (false, true) => Err(input(format!(
            "--param nonlocal={} applies to partition=cut only, not to partition={partition}",
            params.raw("nonlocal")
        ))),
        (false, false) => Ok(None),
    }
}

/// Number of triangular solves timed (`--param solves`).
fn solves_of(params: &Params) -> Result<usize, AppError> {
    Ok(if choice(params, "solves", &["forward", "both"])? == "forward" { 1 } else { 2 })
}

/// Largest `|a - b|` relative to the largest `|b|` (NaN counts as infinitely wrong).
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(f64::MIN_POSITIVE);
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| {
        let e = (x - y).abs() / scale;
        if e.is_nan() {
            f64::INFINITY
        } else {
            m.max(e)
        }
    })
}

fn load_matrix(params: &Params) -> Result<(SymMatrix, String, bool), AppError> {
    let given = params.resolved()["matrix"].clone();
    let replace = match params.resolved()["values"].as_str() {
        "file" => false,
        "spd" => true,
        other => return Err(input(format!("--param values={other}: iccg needs `file` or `spd`"))),
    };
    if given != "fe" {
        for p in ["fe_dim", "fe_elements"] {
            if params.given(p) {
                return Err(input(format!(
                    "--param {p}={} applies to a generated matrix (matrix=fe), not to --param matrix={given}",
                    params.raw(p)
                )));
            }
        }
    }
    // Generated matrices are SPD as generated; `values` only concerns files.
    if given == "fe" && params.given("values") {
        return Err(input(format!(
            "--param values={} applies to a matrix file (--param matrix=PATH); the generated matrix (matrix=fe) is SPD as generated",
            params.raw("values")
        )));
    }
    if given == "fe" {
        let dim: usize = params.get("fe_dim", ("2 or 3", |d: usize| d == 2 || d == 3))?;
        let k: usize = params.get("fe_elements", ("a whole number >= 1", |k: usize| k >= 1))?;
        let a = sparse::fe_stiffness(dim, k).map_err(|e| input(format!("--param fe_elements={k}: {e}")))?;
        Ok((a, format!("generated {dim}-D finite-element matrix, {k} elements per side"), false))
    } else {
        let (a, info) = sparse::read_matrix_market(std::path::Path::new(&given))
            .map_err(|e| input(format!("--param matrix: {e}")))?;
        // The reader already gives pattern-only files these values.
        let note = |why: &str| format!("{given} ({why}: given values off-diagonal -1, diagonal = row degree + 1)");
        if info.pattern {
            Ok((a, note("pattern only"), true))
        } else if replace {
            Ok((a.with_laplacian_values(), note("values=spd"), true))
        } else {
            Ok((a, given.clone(), false))
        }
    }
}

fn prepare(params: &Params, procs: usize) -> Result<Arc<Prepared>, AppError> {
    // Everything but the number of solves timed shapes the prepared problem.
    let mut shaping = params.resolved();
    shaping.remove("solves");
    let key: CacheKey = (format!("{shaping:?}"), procs);
    if let Some((k, p)) = cache_slot().as_ref() {
        if *k == key {
            return Ok(Arc::clone(p));
        }
    }
    let (a, describe, pattern) = load_matrix(params)?;
    let prepared = Arc::new(prepare_matrix(a, describe, pattern, params, procs)?);
    *cache_slot() = Some((key, Arc::clone(&prepared)));
    Ok(prepared)
}

/// The untimed pipeline on a loaded matrix (see the module documentation).
fn prepare_matrix(
    a: SymMatrix,
    describe: String,
    pattern: bool,
    params: &Params,
    procs: usize,
) -> Result<Prepared, AppError> {
    let n = a.n;
    if n < procs {
        return Err(input(format!("the matrix has order {n}, fewer rows than the {procs} processors")));
    }
    let groups = if choice(params, "compress", &["on", "off"])? == "on" {
        sparse::compress(&a)
    } else {
        Compression::singletons(n)
    };
    let partition = choice(params, "partition", &PARTITIONS)?;
    let cut_target = cut_target(params, partition)?;
    let quotient = groups.quotient(&a);
    if quotient.n() < procs {
        return Err(input(format!(
            "--param compress=on: the matrix's {} unknowns form only {} groups of identical rows, fewer than the {procs} processors (try --param compress=off)",
            n,
            quotient.n()
        )));
    }
    let partitioner = Partitioner::from_name(if partition == "cut" { "rsb" } else { partition })
        .expect("every listed partitioner but cut has a name");
    let mut group_part =
        partitioner.partition(&quotient, procs).map_err(|e| AppError::Run(format!("partitioning: {e}")))?;
    // Every off-diagonal pair of A is one edge of each solve's DAG (L has A's pattern).
    let dag_edges = ((a.nnz() - n) / 2) as u64;
    let mut cut_swaps = None;
    if let Some(f) = cut_target {
        let raised = raise_cut(&quotient, &group_part, procs, dag_edges, f)?;
        group_part = raised.part;
        cut_swaps = Some(raised.swaps);
    }
    let part: Vec<usize> = groups.group_of.iter().map(|&g| group_part[g as usize]).collect();
    let mut sizes = vec![0usize; procs];
    part.iter().for_each(|&q| sizes[q] += 1);
    let imbalance = sizes.iter().copied().max().unwrap_or(0) as f64 * procs as f64 / n as f64;
    let group_colours = sparse::colour_graph(&quotient);
    let ordering = sparse::group_colour_ordering(&groups, &group_colours);
    let new_of_old = &ordering.new_of_old;
    let ap = a.permuted(new_of_old);
    let l = sparse::ichol0(&ap).map_err(|e| {
        input(format!("{describe}: {e} (for a matrix whose values are placeholders, try --param values=spd)"))
    })?;
    let mut owner = vec![0u32; n];
    for (old, &new) in new_of_old.iter().enumerate() {
        owner[new] = part[old] as u32;
    }
    if let Some(f) = cut_target {
        check_cut(&l, &owner, dag_edges, f)?;
    }
    // b = A * x_true for an uneven x_true (with Laplacian values A * ones is ones, too easy).
    let x_true: Vec<f64> = (0..n).map(|i| 1.0 + ((i * 37) % 101) as f64 / 101.0).collect();
    let mut b = vec![0.0; n];
    a.mul_vec(&x_true, &mut b);
    let mut rhs = vec![0.0; n];
    for (old, &new) in new_of_old.iter().enumerate() {
        rhs[new] = b[old];
    }
    let y_ref = sparse::forward_solve(&l, &rhs);
    let x_ref = sparse::backward_solve(&l, &y_ref);
    let pcg = pcg_against_sequential(&a, &ap, &l, &rhs, &b, new_of_old);
    Ok(Prepared {
        describe,
        pattern,
        n,
        nnz: a.nnz(),
        colours: ordering.colour_ptr.len() - 1,
        groups: groups.groups(),
        largest_group: groups.largest(),
        imbalance,
        partitioner: partition,
        cut_swaps,
        l,
        owner,
        rhs,
        y_ref,
        x_ref,
        pcg_iterations: pcg.iterations,
        pcg_rel_residual: pcg.rel_residual,
        pcg_difference: pcg.difference,
        pcg_ok: pcg.ok,
    })
}

/// partition=cut: rsb's partition of the groups with unknowns swapped until `f` of the DAG's
/// `dag_edges` edges are non-local.
fn raise_cut(
    quotient: &sparse::WGraph,
    group_part: &[usize],
    procs: usize,
    dag_edges: u64,
    f: f64,
) -> Result<sparse::Raised, AppError> {
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    sparse::raise_cut(quotient, group_part, procs, dag_edges, f).map_err(|e| {
        input(match e {
            sparse::CutError::Below { start } => format!(
                "--param nonlocal={f}: partition=cut raises rsb's cut, but rsb already makes {} of the edges non-local on {procs} processors; give nonlocal >= {} (or use partition=rsb)",
                pct(start),
                ((start - sparse::CUT_TOLERANCE) * 1000.0).ceil().max(1.0) / 1000.0
            ),
            sparse::CutError::Unreachable { reached } => format!(
                "--param nonlocal={f}: swapping unknowns between the {procs} processors of rsb's partition reached only {} non-local edges; give a smaller fraction",
                pct(reached)
            ),
        })
    })
}

/// partition=cut: the fraction of non-local edges the run will report, counted on the
/// factor's edges as the counter is, must be the one asked for.
fn check_cut(l: &LowerFactor, owner: &[u32], dag_edges: u64, f: f64) -> Result<(), AppError> {
    let n = owner.len();
    let cut = (0..n).map(|i| l.row(i).0.iter().filter(|&&j| owner[j as usize] != owner[i]).count()).sum::<usize>();
    let got = cut as f64 / dag_edges.max(1) as f64;
    if !(f..=f + sparse::CUT_TOLERANCE + 1e-12).contains(&got) {
        return Err(AppError::Run(format!(
            "partition=cut: {got} of the DAG's edges are non-local, not {f} (+{})",
            sparse::CUT_TOLERANCE
        )));
    }
    Ok(())
}

/// The untimed PCG runs and how they agree.
struct PcgCheck {
    iterations: usize,
    rel_residual: f64,
    difference: f64,
    ok: bool,
}

/// The full PCG in the reordered numbering with DAG-form triangular solves (its iteration
/// count), against a textbook sequential PCG in the original numbering.
fn pcg_against_sequential(
    a: &SymMatrix,
    ap: &SymMatrix,
    l: &LowerFactor,
    rhs: &[f64],
    b: &[f64],
    new_of_old: &[usize],
) -> PcgCheck {
    let n = a.n;

    // The full PCG, functionally, in the reordered numbering, with the triangular solves done
    // as the distributed kernel does them (DAG form): this gives the iteration count.
    let owner0 = vec![0; n];
    let dags = [Direction::Forward, Direction::Backward].map(|d| Dag::new(l, &owner0, 1, d));
    let dag_precond = |r: &[f64], z: &mut [f64]| {
        z.copy_from_slice(&dags[1].solve(Direction::Backward, &dags[0].solve(Direction::Forward, r)))
    };
    let max_iter = 10 * n + 100;
    let reordered = sparse::pcg(ap, rhs, dag_precond, PCG_RTOL, max_iter);
    // The reference: a textbook sequential PCG in the original numbering, the same
    // preconditioner applied through the permutation with row-oriented solves.
    let seq_precond = |r: &[f64], z: &mut [f64]| {
        let mut rp = vec![0.0; n];
        for (old, &new) in new_of_old.iter().enumerate() {
            rp[new] = r[old];
        }
        let zp = sparse::backward_solve(l, &sparse::forward_solve(l, &rp));
        for (old, &new) in new_of_old.iter().enumerate() {
            z[old] = zp[new];
        }
    };
    // Two summation orders stopped at 1e-8 differ by up to about cond(A) x 1e-8 (1.5e-9 on
    // 1138_bus, cond ~ 1e7); both are therefore also run on to COMPARE_RTOL, where they agree
    // to better than the 1e-10 the check demands (1e-12 on 1138_bus).
    let compare = sparse::pcg(ap, rhs, dag_precond, COMPARE_RTOL, max_iter);
    let sequential = sparse::pcg(a, b, seq_precond, COMPARE_RTOL, max_iter);
    let mut x_back = vec![0.0; n];
    for (old, &new) in new_of_old.iter().enumerate() {
        x_back[old] = compare.x[new];
    }
    let pcg_difference = rel_diff(&x_back, &sequential.x);
    PcgCheck {
        iterations: reordered.iterations,
        rel_residual: reordered.rel_residual,
        difference: pcg_difference,
        ok: reordered.converged && compare.converged && sequential.converged && pcg_difference <= TOLERANCE,
    }
}

/// The kernel for `variant` with the prepared partition on `procs` processors.
fn build_kernel(
    p: &Prepared,
    procs: usize,
    variant: Variant,
    max_args: usize,
    line_bytes: usize,
    costs: Costs,
    solves: usize,
) -> Kernel {
    let owner = p.owner.clone();
    let owner_usize: Vec<usize> = owner.iter().map(|&o| o as usize).collect();
    let dags = [Direction::Forward, Direction::Backward].map(|d| Dag::new(&p.l, &owner_usize, procs, d));
    let mut local = vec![0u32; p.n];
    for nodes in &dags[0].order {
        for (i, &v) in nodes.iter().enumerate() {
            local[v as usize] = i as u32;
        }
    }
    // Shared records: two words per node, each owner's block on lines of its own.
    let align = 16.max(line_bytes / 8);
    let (mut record_word, mut record_owners) = (vec![0u32; p.n], Vec::new());
    for (q, nodes) in dags[0].order.iter().enumerate() {
        for &v in nodes {
            record_word[v as usize] = record_owners.len() as u32;
            record_owners.extend([q, q]);
        }
        let padded = record_owners.len().div_ceil(align) * align;
        record_owners.resize(padded, q);
    }
    let record_words = record_owners.len();
    let private = kernel::Private::new(&dags, solves, !matches!(variant, Variant::Sm | Variant::SmPrefetch));
    Kernel {
        variant,
        dags,
        owner,
        local,
        rhs: p.rhs.clone(),
        record_word,
        record_words,
        record_owners,
        max_args,
        costs,
        line_bytes,
        private,
        solves,
    }
}

pub fn run<B: Backend>(backend: &B, variant_name: &str, params: &Params) -> Result<AppResult, AppError> {
    let procs = backend.nprocs();
    let variant = Variant::from_name(variant_name);
    let p = prepare(params, procs)?;
    let (max_args, line_bytes) = (backend.max_am_args(), backend.line_bytes());
    if max_args < 2 && !matches!(variant, Variant::Sm | Variant::SmPrefetch) {
        return Err(input(
            "iccg message variants need 2 argument words per active message (messaging.max_arg_words >= 4)",
        ));
    }
    let costs = Costs::of(backend)?;
    let solves = solves_of(params)?;
    let kernel = Arc::new(build_kernel(&p, procs, variant, max_args, line_bytes, costs, solves));
    let out = backend.run(Arc::clone(&kernel)).map_err(run_err)?;

    // The speedup's baseline: one sequential program, the same for every variant.
    let one = backend.with_nprocs(1).map_err(run_err)?;
    let serial =
        one.run(Arc::new(baseline::Baseline::new(&p.l, &p.rhs, solves, costs, line_bytes))).map_err(run_err)?;
    let serial_cycles = serial.stats.cycles;

    // Gather the distributed results into the new numbering and check them.
    let mut y = vec![f64::NAN; p.n];
    let mut x = vec![f64::NAN; p.n];
    for (q, nodes) in kernel.dags[0].order.iter().enumerate() {
        for (i, &v) in nodes.iter().enumerate() {
            y[v as usize] = out.states[q].result[0][i];
            x[v as usize] = out.states[q].result[1][i];
        }
    }
    let both = solves == 2;
    let ey = rel_diff(&y, &p.y_ref);
    let ex = if both { rel_diff(&x, &p.x_ref) } else { 0.0 };
    let [sy, sx] = &serial.states[0].result;
    let eb = rel_diff(sy, &p.y_ref).max(if both { rel_diff(sx, &p.x_ref) } else { 0.0 });
    let kernel_error = ey.max(ex).max(eb);
    let ok = kernel_error <= TOLERANCE && p.pcg_ok;
    let max_error = kernel_error.max(p.pcg_difference);

    let edges = kernel.dags[0].edges();
    let nonlocal = (0..p.n)
        .map(|v| {
            kernel.dags[0].out_dst[kernel.dags[0].out_ptr[v]..kernel.dags[0].out_ptr[v + 1]]
                .iter()
                .filter(|&&d| kernel.owner[d as usize] != kernel.owner[v])
                .count()
        })
        .sum::<usize>();
    let sum = |f: fn(&kernel::State) -> f64| out.states.iter().map(f).sum::<f64>();
    let (messages, edges_sent) = (sum(|s| s.messages as f64), sum(|s| s.edges_sent as f64));
    let mut counters = BTreeMap::new();
    counters.set(&MATRIX_ORDER, p.n as f64);
    counters.set(&MATRIX_NONZEROS, p.nnz as f64);
    counters.set(&COLOURS, p.colours as f64);
    counters.set(&GROUPS, p.groups as f64);
    counters.set(&LARGEST_GROUP, p.largest_group as f64);
    counters.set(&PARTITION_IMBALANCE, p.imbalance);
    counters.set(&DAG_EDGES, edges as f64);
    counters.set(&NONLOCAL_EDGE_FRACTION, nonlocal as f64 / edges.max(1) as f64);
    counters.set(&SERIAL_CYCLES, serial_cycles);
    counters.set(&SPEEDUP, serial_cycles / out.stats.cycles);
    counters.set(&PCG_ITERATIONS, p.pcg_iterations as f64);
    counters.set(&PCG_REL_RESIDUAL, p.pcg_rel_residual);
    counters.set(&APP_MESSAGES, messages);
    counters.set(&NONLOCAL_EDGES, nonlocal as f64);
    counters.set(&EDGES_SENT, edges_sent);
    counters.set(&EDGES_RECEIVED, sum(|s| s.edges_received as f64));
    counters.set(&EDGES_PER_MESSAGE, if messages > 0.0 { edges_sent / messages } else { 0.0 });
    counters.set(&IDLE_CYCLES_PER_NODE, sum(|s| s.idle_cycles) / (solves * p.n) as f64);
    let nonlocal_work = sum(|s| s.nonlocal_cycles + s.handler_cycles);
    counters.set(&NONLOCAL_EDGE_CYCLES, if nonlocal > 0 { nonlocal_work / (solves * nonlocal) as f64 } else { 0.0 });
    counters.set(&PATTERN_VALUES, if p.pattern { 1.0 } else { 0.0 });
    if let Some(swaps) = p.cut_swaps {
        counters.set(&CUT_SWAPS, swaps as f64);
    }
    let check = Check {
        ok,
        max_error,
        detail: format!(
            "{}: order {}, {} groups, {} colours, partition {}; {} vs sequential: {}, baseline {eb:.1e}; PCG {} iterations to {:.1e}; solution vs sequential PCG (both to {COMPARE_RTOL:.0e}): {:.1e} (limits 1e-10){}",
            p.describe,
            p.n,
            p.groups,
            p.colours,
            p.partitioner,
            if both { "forward/backward solve" } else { "forward solve" },
            if both { format!("{ey:.1e}/{ex:.1e}") } else { format!("{ey:.1e}") },
            p.pcg_iterations,
            p.pcg_rel_residual,
            p.pcg_difference,
            if p.pcg_ok { "" } else { ": PCG did not agree or converge" }
        ),
    };
    Ok(result(out.stats, counters, check))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a thread that panicked while holding the cache lock poisoned it, and every
    /// later ICCG run in the process failed on `lock().expect(..)`.
    #[test]
    fn a_panic_while_holding_the_cache_does_not_fail_later_runs() {
        let poisoner = std::thread::spawn(|| {
            let _slot = cache_slot();
            panic!("a worker fails while holding the cache");
        });
        assert!(poisoner.join().is_err());
        assert!(CACHE.is_poisoned());
        let params = Params::parse(&INFO, &["fe_elements=6".to_string()]).unwrap();
        let first = prepare(&params, 4).expect("prepares despite the poisoned lock");
        let again = prepare(&params, 4).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the second call is served from the cache");
    }

    #[test]
    fn a_cut_partition_swaps_whole_groups_keeping_each_processors_unknowns() {
        let procs = 4;
        let a = three_unknowns_per_node(10);
        let nonlocal = |p: &Prepared| {
            let cut = (0..p.n).map(|i| p.l.row(i).0.iter().filter(|&&j| p.owner[j as usize] != p.owner[i]).count());
            cut.sum::<usize>() as f64 / ((p.l.nnz() - p.n) as f64)
        };
        let sizes = |p: &Prepared| {
            let mut s = vec![0; procs];
            p.owner.iter().for_each(|&o| s[o as usize] += 1);
            s
        };
        for compress in ["on", "off"] {
            let params = |extra: &[&str]| {
                let mut v = vec![format!("compress={compress}")];
                v.extend(extra.iter().map(|s| s.to_string()));
                Params::parse(&INFO, &v).unwrap()
            };
            let rsb = prepare_matrix(a.clone(), "test".into(), true, &params(&[]), procs).unwrap();
            let f = 0.4;
            let cut =
                prepare_matrix(a.clone(), "test".into(), true, &params(&["partition=cut", "nonlocal=0.4"]), procs)
                    .unwrap();
            assert!(cut.pcg_ok, "{compress}");
            let got = nonlocal(&cut);
            assert!(nonlocal(&rsb) < f && got >= f && got <= f + sparse::CUT_TOLERANCE, "{compress}: {got}");
            assert_eq!(sizes(&cut), sizes(&rsb), "{compress}: the swaps keep every processor's unknowns");
            assert!(cut.cut_swaps.unwrap() > 0 && rsb.cut_swaps.is_none());
            if compress == "on" {
                // Groups (a node's 3 unknowns, consecutive in the new numbering) stay whole.
                assert!((0..cut.n / 3)
                    .all(|m| cut.owner[3 * m + 1] == cut.owner[3 * m] && cut.owner[3 * m + 2] == cut.owner[3 * m]));
            }
        }
    }

    /// A 2-D FE grid with 3 unknowns per node (as an elasticity model has): unknown `3p + d` of
    /// node `p` couples to every unknown of every node `p` couples to.
    fn three_unknowns_per_node(k: usize) -> SymMatrix {
        let s = sparse::fe_stiffness(2, k).unwrap();
        let mut t = Vec::new();
        for i in 0..s.n {
            for &j in s.row(i).0.iter().filter(|&&j| j as usize <= i) {
                for a in 0..3 {
                    for b in 0..3 {
                        let (r, c) = (3 * i + a, 3 * j as usize + b);
                        if r >= c && (i != j as usize || a >= b) {
                            t.push((r, c, 1.0));
                        }
                    }
                }
            }
        }
        SymMatrix::from_triplets(3 * s.n, &t).unwrap().with_laplacian_values()
    }

    #[test]
    fn compression_colours_the_nodes_and_keeps_each_nodes_unknowns_on_one_processor() {
        let procs = 4;
        for partition in Partitioner::NAMES {
            let a = three_unknowns_per_node(6);
            let on = Params::parse(&INFO, &[format!("partition={partition}")]).unwrap();
            let p = prepare_matrix(a.clone(), "test".into(), true, &on, procs).unwrap();
            assert!(p.pcg_ok, "{partition}: PCG with the compressed ordering");
            assert_eq!((p.groups, p.largest_group), (49, 3));
            // The quotient is the 9-point grid: its classic 4 colours.
            assert_eq!(p.colours, 4, "{partition}");
            // Groups are whole within colours, so new indices 3m..3m+3 are one node's unknowns:
            // on one processor, and coupled to each other (a dense triangle in L).
            for m in 0..p.n / 3 {
                let o = p.owner[3 * m];
                assert!(p.owner[3 * m + 1] == o && p.owner[3 * m + 2] == o, "{partition}: node {m} split");
                for (r, c) in [(3 * m + 1, 3 * m), (3 * m + 2, 3 * m), (3 * m + 2, 3 * m + 1)] {
                    assert!(p.l.row(r).0.contains(&(c as u32)), "{partition}: L[{r}][{c}] missing");
                }
            }
            let off = Params::parse(&INFO, &[format!("partition={partition}"), "compress=off".into()]).unwrap();
            let q = prepare_matrix(a, "test".into(), true, &off, procs).unwrap();
            assert!(q.pcg_ok);
            // An element's 4 nodes x 3 unknowns form a 12-clique of the scalar graph.
            assert!(q.colours >= 12, "{partition}: {} scalar colours", q.colours);
            assert_eq!(q.groups, q.n);
        }
    }
}
