//! `commlab experiment copy-transfer`: the copy-transfer surfaces of a simulated machine (issue
//! 15), as `commlab characterize` draws the host's. One sweep of the copy-transfer app over
//! working sets x strides (`DIR/results.jsonl`, appended as runs finish, resumable), for
//! `local` and each remote variant the machine has: `fetch` (coherent shared memory, which every
//! simulated machine has: the T3D and T3E presets model theirs as coherent, which the real
//! machines' remote memory was not) and, with one-sided access, `get` and `put`. Then a heat map
//! per variant (`DIR/heatmap-VARIANT.png`/`.svg`, by [`bandwidth_heatmap`]), and the summary
//! (`DIR/experiment.json`, `DIR/experiment.txt`): per cache level the median MB/s of the
//! working sets well inside it (characterize's rule: above the level inside it, at most half of
//! it; memory: beyond twice the last level) at stride 1 and 16, and each remote variant's MB/s
//! over local's.
//!
//! Then the large transfers (the copy-transfer study's Figs. 9-14): a second sweep into
//! `DIR/large/` at a working set beyond the last cache level (`copy_study::large_bytes`: 8 MiB
//! on the DEC 8400, 1 MiB on the T3D and T3E; `--quick` 64 KB) over the
//! study's strides with both copy kernels (strided loads, `copy-sload`; strided stores,
//! `copy-sstore`) for every variant, drawn as MB/s against stride, one curve per way of
//! copying ([`copy_study`]'s, as `reproduce copy-transfer` draws them): `DIR/large-local`
//! (local copies) and `DIR/large-remote` (each remote variant, either side strided); the
//! summary lists each way at stride 1 and 16.

use super::args::{sweep_args, ExperimentArgs};
use super::rows::{read_rows, write_summary};
use crate::characterize::{bandwidth_heatmap, geomean, median, size_text};
use crate::chart::{self, LineChart, XKind};
use crate::copy_study::{self, levels, stride_series, Way};
use crate::failure::{failed, input, Failure};
use crate::sweep;
use commlab_api::Backend;
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use serde_json::{json, Map, Value};
use std::path::Path;

/// Strides in 64-bit words: contiguous, small, odd, even, prime, powers of two to 64.
const STRIDES: [usize; 10] = [1, 2, 3, 4, 7, 8, 16, 17, 32, 64];
const QUICK_STRIDES: [usize; 4] = [1, 2, 3, 16];
const QUICK_SIZES: [u64; 3] = [4 << 10, 16 << 10, 64 << 10];
/// The app's largest working set.
const MAX_BYTES: u64 = 16 << 20;
/// The stride the summary calls strided (the study's: every reference a new line).
const STRIDED: usize = 16;

/// Working sets: 4 KB doubling to 4 x the last cache level, at least 1 MB, at most 16 MB.
fn working_sets(last: u64) -> Vec<u64> {
    let top = (4 * last).clamp(1 << 20, MAX_BYTES);
    std::iter::successors(Some(4096u64), |w| Some(w * 2)).take_while(|&w| w <= top).collect()
}

/// Bands of working sets, one per level then memory: (name, cache bytes, working sets).
fn bands(levels: &[(String, u64)], sizes: &[u64]) -> Vec<(String, Option<u64>, Vec<u64>)> {
    let mut out = Vec::new();
    let mut inside = 0;
    for (name, bytes) in levels {
        let ws = sizes.iter().copied().filter(|&w| w > inside && w <= bytes / 2).collect();
        out.push((name.clone(), Some(*bytes), ws));
        inside = *bytes;
    }
    out.push(("memory".to_string(), None, sizes.iter().copied().filter(|&w| w > 2 * inside).collect()));
    out
}

fn mb(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

pub(super) fn run(a: &ExperimentArgs, dir: &Path, base: &MachineConfig) -> Result<(), Failure> {
    let info = commlab_apps::app_info("copy-transfer").map_err(|e| input(e.to_string()))?;
    for key in ["stride", "bytes"] {
        if a.param.iter().any(|p| p.split('=').next().map(str::trim) == Some(key)) {
            return Err(input(format!("experiment copy-transfer varies --param {key} itself: drop it")));
        }
    }
    let one_sided = Simulator::new(base.clone()).one_sided();
    let variants = sweep::select_variants(info, &a.variant, base).map_err(|e| input(e.to_string()))?;
    if let Some(v) = variants.iter().find(|v| !one_sided && matches!(**v, "get" | "put")) {
        return Err(input(format!(
            "copy-transfer {v} moves data by one-sided gets and puts, and machine {} has no one-sided remote access (no [remote] section); leave --variant out to run the variants it has",
            base.spec.name
        )));
    }
    let levels = levels(base);
    let (strides, sizes): (Vec<usize>, Vec<u64>) = if a.quick {
        (QUICK_STRIDES.to_vec(), QUICK_SIZES.to_vec())
    } else {
        (STRIDES.to_vec(), working_sets(levels.last().map_or(0, |l| l.1)))
    };
    std::fs::create_dir_all(dir).map_err(|e| input(format!("cannot create `{}`: {e}", dir.display())))?;
    let join = |v: Vec<String>| v.join(",");
    // Working sets outermost: the small (fast) points first.
    let mut args = sweep_args(a, format!("bytes={}", join(sizes.iter().map(u64::to_string).collect())), dir);
    args.vary.push(format!("stride={}", join(strides.iter().map(usize::to_string).collect())));
    args.variant = variants.join(",");
    let mut outcome = sweep::run(args);
    if let Err(f) = &outcome {
        if f.status == 2 {
            return outcome;
        }
    }

    let rows = read_rows(&dir.join("results.jsonl"), None, info.variants)?;
    let at = |v: &str, s: usize, w: u64| -> Option<f64> {
        rows.iter()
            .find(|r| {
                r.record.variant == v
                    && r.record.vary_number("stride") == s as f64
                    && r.record.vary_number("bytes") == w as f64
            })
            .map(|r| r.record.counter(commlab_apps::copy_transfer::MBYTES_PER_S.name))
            .filter(|x| x.is_finite())
    };
    let kernel = rows.first().and_then(|r| r.record.params.get("kernel").cloned()).unwrap_or_default();
    let machine = &base.spec.name;
    let mut files = Vec::new();
    for v in &variants {
        if rows.iter().any(|r| r.record.variant == *v) {
            let title = format!("{machine}: copy-transfer {kernel} [{v}]");
            let of = |s: usize, w: u64| at(v, s, w);
            files.extend(
                bandwidth_heatmap(&dir.join(format!("heatmap-{v}")), &title, &strides, &sizes, &of).map_err(failed)?,
            );
        }
    }

    // Plateaus per level, and remote over local.
    let sizes_text = |ws: &[u64]| ws.iter().map(|&w| size_text(w)).collect::<Vec<_>>().join(" ");
    let mut text = format!(
        "copy-transfer: {kernel} on {machine} ({} processors), variants {}\n  strides (words): {}\n  working sets: {}\n",
        base.nprocs(),
        variants.join(", "),
        strides.iter().map(usize::to_string).collect::<Vec<_>>().join(" "),
        sizes_text(&sizes)
    );
    let at: &dyn Fn(&str, usize, u64) -> Option<f64> = &at;
    let (plateau_text, plateaus) = plateaus(&levels, &sizes, &strides, &variants, at);
    text.push_str(&plateau_text);
    let (ratio_text, ratios) = remote_over_local(&sizes, &strides, &variants, at);
    text.push_str(&ratio_text);
    let surfaces: Map<String, Value> = variants
        .iter()
        .map(|v| {
            let grid: Vec<Vec<Option<f64>>> =
                sizes.iter().map(|&w| strides.iter().map(|&s| at(v, s, w)).collect()).collect();
            (v.to_string(), json!(grid))
        })
        .collect();
    // The large transfers (Figs. 9-14).
    let (large_bytes, large_strides, large_outcome) = run_large(a, dir, base, &variants)?;
    if outcome.is_ok() {
        outcome = large_outcome;
    }
    let large_dir = dir.join("large");
    let large_rows = read_rows(&large_dir.join("results.jsonl"), None, info.variants)?;
    let large_at = |w: &Way, s: usize| -> Option<f64> {
        large_rows
            .iter()
            .find(|r| {
                r.record.variant == w.variant
                    && r.record.vary_number("stride") == s as f64
                    && r.record.params.get("kernel").map(String::as_str) == Some(w.kernel)
            })
            .map(|r| r.record.counter(commlab_apps::copy_transfer::MBYTES_PER_S.name))
            .filter(|x| x.is_finite())
    };
    let (large_text, large) =
        large_figures(dir, machine, &variants, large_bytes, &large_strides, &large_at, &mut files)?;
    text.push_str(&large_text);
    let summary = json!({
        "experiment": "copy-transfer", "app": info.name, "machine": machine, "procs": base.nprocs(),
        "large_transfers": { "bytes": large_bytes, "strides": large_strides, "ways": large },
        "kernel": kernel, "variants": variants, "strides": strides, "working_sets": sizes,
        "levels": levels.iter().map(|(l, b)| json!({ "level": l, "bytes": b })).collect::<Vec<_>>(),
        "surfaces_mb_per_s": surfaces,
        "plateaus": plateaus,
        "remote_over_local": ratios,
        "plots": super::rows::plot_names(&files),
    });
    print!("{}", write_summary(dir, &summary, text, &files)?);
    if outcome.is_ok() && (rows.is_empty() || large_rows.is_empty()) {
        outcome = Err(failed("experiment copy-transfer: no runs finished".to_string()));
    }
    outcome
}

/// The plateaus: per cache level, each variant's median MB/s at stride 1 and at the strided
/// stride over the working sets well inside the level.
fn plateaus(
    levels: &[(String, u64)],
    sizes: &[u64],
    strides: &[usize],
    variants: &[&str],
    at: &dyn Fn(&str, usize, u64) -> Option<f64>,
) -> (String, Vec<Value>) {
    let sizes_text = |ws: &[u64]| ws.iter().map(|&w| size_text(w)).collect::<Vec<_>>().join(" ");
    let mut text = String::new();
    text.push_str(&format!(
        "  plateaus (median MB/s at stride 1 / stride {STRIDED} of the working sets well inside each level):\n"
    ));
    let mut plateaus = Vec::new();
    for (level, bytes, ws) in bands(levels, sizes) {
        let mut per = Map::new();
        let mut parts = Vec::new();
        for v in variants {
            let med = |s: usize| median(ws.iter().filter_map(|&w| at(v, s, w)).collect());
            let (c, st) = (med(1), if strides.contains(&STRIDED) { med(STRIDED) } else { None });
            per.insert(v.to_string(), json!({ "stride_1": c, format!("stride_{STRIDED}"): st }));
            parts.push(format!("{v} {}/{}", mb(c), mb(st)));
        }
        let size = bytes.map_or_else(|| "beyond the caches".to_string(), size_text);
        if ws.is_empty() {
            text.push_str(&format!("    {level} ({size}): no working set well inside it\n"));
        } else {
            text.push_str(&format!("    {level} ({size}; {}): {}\n", sizes_text(&ws), parts.join(", ")));
        }
        plateaus.push(json!({ "level": level, "cache_bytes": bytes, "working_sets": ws, "mb_per_s": per }));
    }
    (text, plateaus)
}

/// Each remote variant's MB/s over the local copy's: the geometric mean over the surface and
/// the ratios at the largest working set.
fn remote_over_local(
    sizes: &[u64],
    strides: &[usize],
    variants: &[&str],
    at: &dyn Fn(&str, usize, u64) -> Option<f64>,
) -> (String, Map<String, Value>) {
    let mut text = String::new();
    let largest = sizes.last().copied().unwrap_or(0);
    let mut ratios = Map::new();
    for v in variants.iter().filter(|v| **v != "local") {
        let all: Vec<f64> = strides
            .iter()
            .flat_map(|&s| sizes.iter().map(move |&w| (s, w)))
            .filter_map(|(s, w)| Some(at(v, s, w)? / at("local", s, w)?))
            .collect();
        let ratio = |s: usize| Some(at(v, s, largest)? / at("local", s, largest)?);
        let (g, r1, rs) = (geomean(&all), ratio(1), ratio(STRIDED));
        if all.is_empty() {
            continue;
        }
        if ratios.is_empty() {
            text.push_str(&format!(
                "  remote / local MB/s (geometric mean over the surface; at {} stride 1 and {STRIDED}):\n",
                size_text(largest)
            ));
        }
        let f = |x: Option<f64>| x.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
        text.push_str(&format!("    {v}: {} ({}, {})\n", f(g), f(r1), f(rs)));
        ratios.insert(
            v.to_string(),
            json!({ "geomean": g, "stride_1_largest": r1, format!("stride_{STRIDED}_largest"): rs }),
        );
    }
    (text, ratios)
}

/// The large transfers' figures (Figs. 9-14): MB/s by stride of every local and remote way,
/// as text, JSON and one line chart per kind (added to `files`).
fn large_figures(
    dir: &Path,
    machine: &str,
    variants: &[&str],
    large_bytes: u64,
    large_strides: &[usize],
    large_at: &dyn Fn(&Way, usize) -> Option<f64>,
    files: &mut Vec<std::path::PathBuf>,
) -> Result<(String, Map<String, Value>), Failure> {
    let mut text = String::new();
    let mut large = Map::new();
    text.push_str(&format!(
        "  large transfers ({}; MB/s at stride 1 / stride {STRIDED}; all strides in experiment.json):\n",
        size_text(large_bytes)
    ));
    for (kind, ways) in [
        ("local", copy_study::ways_of("local")),
        ("remote", variants.iter().filter(|v| **v != "local").flat_map(|v| copy_study::ways_of(v)).collect()),
    ] {
        if ways.is_empty() {
            continue;
        }
        let series = stride_series(&ways, large_strides, large_at);
        for (w, s) in ways.iter().zip(&series) {
            let y = |x: usize| s.points.iter().find(|p| p.0 == x as f64).map(|p| p.1);
            text.push_str(&format!("    {}: {}/{}\n", w.label, mb(y(1)), mb(y(STRIDED))));
            large.insert(w.label.to_string(), json!({ "variant": w.variant, "kernel": w.kernel, "points": s.points }));
        }
        if series.iter().any(|s| !s.points.is_empty()) {
            let title = format!("{machine}: large {kind} copies ({}) by stride", size_text(large_bytes));
            let chart = LineChart {
                title: &title,
                x_label: "stride (64-bit words)",
                y_label: "MB/s",
                series: &series,
                crossovers: &[],
                markers: &[],
                log_x: true,
                x_kind: XKind::Plain,
            };
            files.extend(chart::line_chart(&dir.join(format!("large-{kind}")), &chart).map_err(failed)?);
        }
    }
    Ok((text, large))
}

/// A sweep's outcome: an error (not of the input) once the points that ran are written.
type Outcome = Result<(), Failure>;

/// The large-transfer sweep (Figs. 9-14) into `dir/large`: its size, its strides and its
/// outcome (an error with status 2 is returned at once).
fn run_large(
    a: &ExperimentArgs,
    dir: &Path,
    base: &MachineConfig,
    variants: &[&str],
) -> Result<(u64, Vec<usize>, Outcome), Failure> {
    let join = |v: Vec<String>| v.join(",");
    let (large_bytes, large_strides) = if a.quick {
        (copy_study::QUICK_LARGE_BYTES, copy_study::QUICK_LARGE_STRIDES.to_vec())
    } else {
        (copy_study::large_bytes(copy_study::last_cache(base)), copy_study::LARGE_STRIDES.to_vec())
    };
    let large_dir = dir.join("large");
    std::fs::create_dir_all(&large_dir).map_err(|e| input(format!("cannot create `{}`: {e}", large_dir.display())))?;
    let mut large_args =
        sweep_args(a, format!("stride={}", join(large_strides.iter().map(usize::to_string).collect())), &large_dir);
    large_args.param.retain(|p| p.split('=').next().map(str::trim) != Some("kernel"));
    large_args.param.push(format!("bytes={large_bytes}"));
    large_args.vary.push("kernel=copy-sload,copy-sstore".to_string());
    large_args.variant = variants.join(",");
    match sweep::run(large_args) {
        Err(f) if f.status == 2 => Err(f),
        large_outcome => Ok((large_bytes, large_strides, large_outcome)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_sets_reach_beyond_the_last_level_and_bands_split_them() {
        let w = working_sets(4 << 20);
        assert_eq!((w[0], *w.last().unwrap()), (4096, 16 << 20));
        assert_eq!(*working_sets(8192).last().unwrap(), 1 << 20);
        let levels = vec![("L1".to_string(), 8192), ("L2".to_string(), 98304)];
        let b = bands(&levels, &working_sets(98304));
        assert_eq!(b[0].2, [4096]);
        assert_eq!(b[1].2, [16384, 32768]);
        assert_eq!(b[2].0, "memory");
        assert_eq!(b[2].2, [262144, 524288, 1048576]);
    }
}
