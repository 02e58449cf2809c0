//! A rough, deliberately simple estimate of the host memory an application's own data needs
//! (its graph, plans, private arrays, the shared memory it allocates and the messages it keeps),
//! from its parameters alone, so the CLI can refuse a run that cannot fit before building it.
//! The machine's own state (processor coroutines, caches) is estimated by `commlab-sim`.
//!
//! Each figure is bytes per unit of the parameter that drives it, measured against the peak
//! resident size of real runs (`/usr/bin/time -v`) and rounded up; parameters that only set
//! how long a run takes (iterations, rounds) cost nothing here. Applications whose sizes are
//! already capped by their parameter checks (unstruc) count 0.

use crate::app::AppError;
use crate::params::Params;
use crate::registry::app_info;

/// ICCG, per nonzero of the matrix (the matrix, its compressed graph, partition, colouring,
/// IC(0) factor, PCG vectors, DAGs and the sequential solves): the generated 2-D matrix of 400
/// elements per side (1.4 million nonzeros) peaked at 191 MB and the 3-D one of 50 (3.6
/// million) at 309 MB, every variant one after another on 32 processors: 130 and 86 B per
/// nonzero; rounded up. A generated matrix has (k+1)^dim rows of 3^dim nonzeros.
const ICCG_BYTES_PER_NONZERO: u64 = 160;
/// A matrix file: its bytes on disk times this (a text nonzero is 25-40 bytes, so 8 is at
/// least 160 B per nonzero; a gzipped file holds up to 5 times its size).
const ICCG_BYTES_PER_FILE_BYTE: u64 = 8;
const ICCG_BYTES_PER_GZIP_BYTE: u64 = 40;

/// EM3D: the graph, plans, private arrays and the sequential reference. Peak RSS of 200000
/// nodes, one iteration, degree 2 and 30, was 63 and 499 MB (any variant): about 78 B per
/// edge and 110 B per node; rounded up.
const EM3D_BYTES_PER_EDGE: u64 = 96;
const EM3D_BYTES_PER_NODE: u64 = 160;
/// A bulk transfer's bytes live in the sender's array, the message, and the receiver's copy
/// (bulk-bw of 64 MiB peaked at 3.1 times its bytes; bisection-bw of 1 MiB on 32 processors
/// at 3.3 times bytes x processors).
const BULK_COPIES: u64 = 4;
/// Shared memory per word: the backing word and its share of the line's directory entry and
/// tags (mem-refs with 1M words on 32 processors peaked at 1.45 GB, 45 B per word).
const SHARED_BYTES_PER_WORD: u64 = 48;
/// MOLDYN, per molecule: coordinates, velocities, forces and ~37 interaction pairs at the
/// default density and list radius (pairs grow with density x radius^3, so scale by that).
/// 8192 and 32768 molecules peaked at 29 and 83 MB: 2.2 KB per molecule.
const MOLDYN_BYTES_PER_PAIR: u64 = 48;
const MOLDYN_BYTES_PER_MOLECULE: u64 = 512;
/// JACOBI, per grid point: two copies in shared or private memory with their lines' directory
/// entries, the sequential reference's two copies and the gathered answer. n=1024 on 64
/// processors, one iteration, peaked at 90 MB (sm) and 85 MB (mp): about 88 B per point.
const JACOBI_BYTES_PER_POINT: u64 = 96;
/// DSMC, per particle: its record in the owner's array (shared or private) and inboxes sized
/// by the sequential reference, the reference's and the baseline's copies. 131072 particles,
/// one step, 16 processors of blizzard-s peaked 86 MB (stache) and 89 MB (custom) above 8192
/// particles: 714 and 745 B per particle; rounded up.
const DSMC_BYTES_PER_PARTICLE: u64 = 768;
/// Barnes-Hut, per body, plus per body and processor: `stache` allocates a pool of the
/// reference tree's cells on every processor, `custom` builds the whole tree on every
/// processor. 16384 bodies, two steps, peaked 28 and 47 MB (stache) and 40 and 101 MB
/// (custom) on 4 and 16 processors of blizzard-s: per processor 96 B (stache) and 310 B
/// (custom) a body, and about 740 and 620 B a body besides (less the binary's 10 MB); the
/// larger of each, rounded up.
const BARNES_BYTES_PER_BODY: u64 = 768;
const BARNES_BYTES_PER_BODY_AND_PROC: u64 = 320;
/// APPBT, per grid point: the values and right-hand side in shared or private memory, each
/// point's forward-elimination result (30 words), the reference's and the baseline's copies.
/// 32 x 32 x 64 points, one iteration, 16 processors of blizzard-s, peaked 95 MB (both
/// variants) above 16^3 points: 1540 B a point; rounded up.
const APPBT_BYTES_PER_POINT: u64 = 1600;

/// Estimated bytes of `app`'s data with `params` on `nprocs` processors (saturating: an
/// estimate beyond any machine is what the caller refuses). A value that does not parse counts
/// as nothing here: the application's own check names it when the run is built.
pub fn data_bytes_estimate(app: &str, params: &[String], nprocs: usize) -> Result<u64, AppError> {
    let info = app_info(app)?;
    let p = Params::parse(info, params)?;
    let int = |name: &str| p.raw(name).parse::<u64>().unwrap_or(0);
    let real = |name: &str| p.raw(name).parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0).unwrap_or(0.0);
    let n = nprocs as u64;
    let bytes = match info.name {
        "em3d" => int("nodes")
            .saturating_mul(int("degree").saturating_mul(EM3D_BYTES_PER_EDGE).saturating_add(EM3D_BYTES_PER_NODE)),
        "bulk-bw" => int("bytes").saturating_mul(BULK_COPIES),
        // The local buffer, the remote one (strided) and the words in flight.
        "remote-bw" => int("bytes").saturating_mul(int("stride").saturating_add(2)),
        "bisection-bw" => int("bytes").saturating_mul(BULK_COPIES).saturating_mul(n),
        "mem-refs" => int("words").max(16384).saturating_mul(SHARED_BYTES_PER_WORD).saturating_mul(n),
        "moldyn" => {
            // Neighbours within the list radius, counted once per pair.
            let pairs = (real("density") * 4.0 / 3.0 * std::f64::consts::PI * real("list_radius").powi(3) / 2.0).ceil();
            let per = MOLDYN_BYTES_PER_MOLECULE as f64 + pairs * MOLDYN_BYTES_PER_PAIR as f64;
            (int("molecules") as f64 * per).min(u64::MAX as f64) as u64
        }
        // The source and destination arrays and the consumer's functional copy, word by word.
        "copy-transfer" => (int("bytes") / 8).saturating_mul(SHARED_BYTES_PER_WORD).saturating_mul(3),
        "jacobi" => int("n").saturating_mul(int("n")).saturating_mul(JACOBI_BYTES_PER_POINT),
        "dsmc" => int("particles").saturating_mul(DSMC_BYTES_PER_PARTICLE),
        "barnes" => int("bodies")
            .saturating_mul(BARNES_BYTES_PER_BODY.saturating_add(BARNES_BYTES_PER_BODY_AND_PROC.saturating_mul(n))),
        "iccg" => match p.raw("matrix") {
            "fe" => {
                let dim = int("fe_dim").clamp(2, 3) as u32;
                let rows = int("fe_elements").saturating_add(1).saturating_pow(dim);
                rows.saturating_mul(3u64.pow(dim)).saturating_mul(ICCG_BYTES_PER_NONZERO)
            }
            path => {
                let per = if path.ends_with(".gz") { ICCG_BYTES_PER_GZIP_BYTE } else { ICCG_BYTES_PER_FILE_BYTE };
                std::fs::metadata(path).map_or(0, |m| m.len().saturating_mul(per))
            }
        },
        "appbt" => int("nx").saturating_mul(int("ny")).saturating_mul(int("nz")).saturating_mul(APPBT_BYTES_PER_POINT),
        _ => 0,
    };
    Ok(bytes)
}
