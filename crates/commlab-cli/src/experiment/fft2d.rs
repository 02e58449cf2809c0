//! `commlab experiment fft2d`: the 2-D FFT's MFlop/s against problem size on one machine, each
//! transpose variant the machine has, split as the copy-transfer study's Figs. 15-17 split it:
//! the whole run, the local computation (the row FFTs) and the transposes. One sweep of `fft2d`
//! over n = 64 to 1024 (`--quick`: 16 and 32) on 4 processors (the study's; `--procs` to
//! change), `DIR/results.jsonl` as every sweep writes it; then `DIR/total`, `DIR/local` and
//! `DIR/transposes` (PNG and SVG, a curve per variant, from [`copy_study::fft_series`], as
//! `reproduce copy-transfer` draws them) and the summary: per variant and n the three MFlop/s
//! and the transposes' MB/s per processor.

use super::args::{sweep_args, ExperimentArgs};
use super::rows::{read_rows, write_summary};
use crate::chart::{self, LineChart, Series, XKind};
use crate::copy_study::{self, fft_series, FftPoint};
use crate::failure::{failed, input, Failure};
use crate::sweep;
use commlab_sim::machine::MachineConfig;
use serde_json::{json, Map};
use std::path::Path;

pub(super) fn run(a: &ExperimentArgs, dir: &Path, base: &MachineConfig) -> Result<(), Failure> {
    let info = commlab_apps::app_info("fft2d").map_err(|e| input(e.to_string()))?;
    if a.param.iter().any(|p| p.split('=').next().map(str::trim) == Some("n")) {
        return Err(input("experiment fft2d varies --param n itself: drop it"));
    }
    let variants = sweep::select_variants(info, &a.variant, base).map_err(|e| input(e.to_string()))?;
    let sizes: Vec<usize> = if a.quick { copy_study::QUICK_FFT_SIZES.to_vec() } else { copy_study::FFT_SIZES.to_vec() };
    let procs = a.procs.unwrap_or(copy_study::FFT_PROCS);
    if let Some(n) = sizes.iter().find(|&&n| n < procs) {
        return Err(input(format!(
            "experiment fft2d: --procs {procs} is more than the smallest problem side ({n}); fft2d needs n >= processors"
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| input(format!("cannot create `{}`: {e}", dir.display())))?;
    let mut args =
        sweep_args(a, format!("n={}", sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",")), dir);
    args.procs = Some(procs);
    args.variant = variants.join(",");
    let mut outcome = sweep::run(args);
    if let Err(f) = &outcome {
        if f.status == 2 {
            return outcome;
        }
    }
    let rows = read_rows(&dir.join("results.jsonl"), Some("n"), info.variants)?;
    let machine = &base.spec.name;
    let point = |v: &str, n: usize| -> Option<FftPoint> {
        let r = rows.iter().find(|r| r.record.variant == v && r.vary == n as f64)?;
        let c = |k: &str| r.record.counters.get(k).copied().filter(|x| x.is_finite());
        Some(FftPoint {
            mflops: c(commlab_apps::fft2d::MFLOPS.name)?,
            cycles: r.record.cycles,
            fft_cycles: c(commlab_apps::fft2d::FFT_CYCLES.name)?,
            transpose_cycles: c(commlab_apps::fft2d::TRANSPOSE_CYCLES.name)?,
        })
    };
    let mut per: [Vec<Series>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut text = format!(
        "fft2d on {machine} ({procs} processors), variants {}: MFlop/s total / local computation / transposes (transposes' MB/s per processor)\n",
        variants.join(", ")
    );
    let mut table = Map::new();
    for v in &variants {
        let pts: Vec<(usize, FftPoint)> = sizes.iter().filter_map(|&n| point(v, n).map(|p| (n, p))).collect();
        if pts.is_empty() {
            continue;
        }
        let parts: Vec<String> = pts
            .iter()
            .map(|(n, p)| {
                format!(
                    "{n}: {:.1}/{:.1}/{:.1} ({:.1})",
                    p.total(),
                    p.local(),
                    p.transposes(),
                    p.transpose_mb_per_proc(*n, procs)
                )
            })
            .collect();
        text.push_str(&format!("  {v}: {}\n", parts.join(", ")));
        table.insert(
            v.to_string(),
            json!(pts
                .iter()
                .map(|(n, p)| json!({
                    "n": n, "total_mflops": p.total(), "local_mflops": p.local(),
                    "transposes_mflops": p.transposes(),
                    "transposes_mb_per_s_per_processor": p.transpose_mb_per_proc(*n, procs),
                }))
                .collect::<Vec<_>>()),
        );
        for (i, s) in fft_series(v, &pts).into_iter().enumerate() {
            per[i].push(s);
        }
    }
    let mut files = Vec::new();
    for (i, (id, what, y)) in [
        ("total", "total performance", "MFlop/s (all processors)"),
        ("local", "local computation (row FFTs)", "MFlop/s of the FFT phases"),
        ("transposes", "the transposes", "MFlop/s-equivalent: the FFT's flops / the transposes' time"),
    ]
    .into_iter()
    .enumerate()
    {
        if per[i].iter().all(|s| s.points.is_empty()) {
            continue;
        }
        let title = format!("{machine}: 2-D FFT on {procs} processors, {what}");
        let chart = LineChart {
            title: &title,
            x_label: "problem side n (n x n complex values)",
            y_label: y,
            series: &per[i],
            crossovers: &[],
            markers: &[],
            log_x: true,
            x_kind: XKind::Plain,
        };
        files.extend(chart::line_chart(&dir.join(id), &chart).map_err(failed)?);
    }
    let summary = json!({
        "experiment": "fft2d", "app": info.name, "machine": machine, "procs": procs,
        "variants": variants, "sizes": sizes, "points": table,
        "plots": super::rows::plot_names(&files),
    });
    print!("{}", write_summary(dir, &summary, text, &files)?);
    if outcome.is_ok() && rows.is_empty() {
        outcome = Err(failed("experiment fft2d: no runs finished".to_string()));
    }
    outcome
}
