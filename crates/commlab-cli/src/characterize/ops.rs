//! The per-operation and message figures `--emit-machine` takes from this host, each a
//! micro-measurement (never an application's own run): what an entry and a row of a sparse
//! update cost, an indexed gather and a copy per value, memcpy's rate (plain Rust on one
//! pinned core, [`kernels`]); what the native runtime's steps cost (a private and a shared
//! reference, a poll, a send and its argument words, a dispatch, a bulk send's extra:
//! [`NativeBackend::operation_ns`] and [`NativeBackend::message_path_ns`], on the same core);
//! and the null message's one-way latency between two cores (`am-latency` natively, the
//! median of [`ONE_WAY_RUNS`] runs).

use super::kernels;
use crate::failure::{failed, Failure};
use commlab_api::Backend;
use commlab_native::{MessagePathNs, NativeBackend, OperationNs};

/// Rows of the sparse-update kernel: its arrays (12 bytes an entry at degree 10, 240 KB)
/// stay in a private cache of 256 KB or more, so the figure is the work, not misses (the
/// simulator charges those).
pub const SPARSE_ROWS: usize = 2048;
/// The two degrees the sparse update is timed at (entries a row).
pub const DEGREES: (usize, usize) = (2, 10);
/// Values of the gather and copy kernels (32 KB each array: in the first-level cache).
pub const GATHER_VALUES: usize = 4096;
/// Bytes of the memcpy whose rate is a bulk message's per-byte cost.
pub const MEMCPY_BYTES: usize = 65536;
/// Native `am-latency` runs (mp-poll, `rounds=1000`) whose median is the null one-way latency.
pub const ONE_WAY_RUNS: usize = 5;

/// The figures, in nanoseconds (per operation) unless named otherwise.
#[derive(Clone, Debug)]
pub struct Ops {
    /// An entry of the sparse update (the load of its coefficient, index and source value,
    /// the multiply-add).
    pub edge_ns: f64,
    /// A row of the sparse update beside its entries (its value loaded and stored, the loop).
    pub node_ns: f64,
    /// One value of an indexed gather.
    pub gather_ns: f64,
    /// One value of a contiguous copy (memcpy of 32 KB, per 8 bytes).
    pub copy_value_ns: f64,
    /// memcpy's rate for [`MEMCPY_BYTES`] (MB/s, 10^6 bytes).
    pub memcpy_mb_per_s: f64,
    /// The runtime's per-operation steps.
    pub op: OperationNs,
    /// The null message path's pieces on one core.
    pub path: MessagePathNs,
    /// The native `am-latency` runs' one-way latencies (ns), in run order; empty with one core.
    pub one_way_ns: Vec<f64>,
}

impl Ops {
    /// The median of the one-way runs.
    pub fn one_way_median_ns(&self) -> Option<f64> {
        super::summary::median(self.one_way_ns.clone())
    }
}

/// Measure every figure: the kernels and the runtime's steps on OS core `home`, the one-way
/// latency between the native backend's first two processors.
pub fn measure(home: usize) -> Result<Ops, Failure> {
    let backend = NativeBackend::new();
    let (sparse, gather, copy, memcpy, op, path) = std::thread::scope(|s| {
        s.spawn(|| {
            kernels::pin(home);
            let rows = SPARSE_ROWS;
            let t = |d: usize| kernels::sparse_update_secs(rows, d, 7) * 1e9 / rows as f64;
            let (lo, hi) = (t(DEGREES.0), t(DEGREES.1));
            let gather = kernels::gather_secs(GATHER_VALUES, 7) * 1e9 / GATHER_VALUES as f64;
            let copy = kernels::memcpy_secs(8 * GATHER_VALUES, 7) * 1e9 / GATHER_VALUES as f64;
            let memcpy = MEMCPY_BYTES as f64 / kernels::memcpy_secs(MEMCPY_BYTES, 7) / 1e6;
            ((lo, hi), gather, copy, memcpy, backend.operation_ns(), backend.message_path_ns())
        })
        .join()
        .expect("operations thread")
    });
    let edge_ns = ((sparse.1 - sparse.0) / (DEGREES.1 - DEGREES.0) as f64).max(0.0);
    let node_ns = (sparse.0 - DEGREES.0 as f64 * edge_ns).max(0.0);
    let mut one_way_ns = Vec::new();
    if backend.cores() >= 2 {
        let two = backend.with_nprocs(2).map_err(|e| failed(format!("the native backend on 2 cores: {e}")))?;
        let params = ["rounds=1000".to_string()];
        for _ in 0..ONE_WAY_RUNS {
            let r = commlab_apps::run_app(&two, "am-latency", "mp-poll", &params, 1)
                .map_err(|e| failed(format!("am-latency on the host: {e}")))?;
            if !r.check.ok {
                return Err(failed(format!("am-latency on the host: answer check failed: {}", r.check.detail)));
            }
            let cycles = r.counters[commlab_apps::micro::am_latency::ONE_WAY_CYCLES.name];
            one_way_ns.push(cycles * 1e3 / two.cycles_per_us());
        }
    }
    Ok(Ops { edge_ns, node_ns, gather_ns: gather, copy_value_ns: copy, memcpy_mb_per_s: memcpy, op, path, one_way_ns })
}
