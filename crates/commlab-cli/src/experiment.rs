//! `commlab experiment NAME APP`: the classic studies as one command each. Every experiment
//! writes `DIR/results.jsonl` (resumable, as `commlab sweep` writes it), `DIR/experiment.json`
//! (the curves on the experiment's own x axis, crossovers, where real machines sit),
//! `DIR/experiment.txt` (the short summary it also prints) and PNG + SVG plots.
//!
//! - `bisection`: cross-traffic from 0 to 90% of the bisection; x = bisection bandwidth left
//!   to the application (bytes per processor cycle): the bisection less the cross-traffic the
//!   I/O nodes *achieved* in each run (`counters.cross_traffic_bytes_per_cycle`), which with
//!   FIFO arbitration (`cross_traffic.arbitration`, the study's) can be less than the configured
//!   rate, and differs by variant. Crossovers compare the curves at each other's x (linearly
//!   interpolated within each curve).
//! - `latency`: the processor clock scaled with the network's timing (ns) held fixed; x = the
//!   one-way latency of a 24-byte message in processor cycles. Also, in `DIR/delay/`, the
//!   second method: a fixed delay added to every remote miss (x = that delay).
//! - `overhead`: every send and receive overhead scaled from 1x to 10x.
//! - `aggregation` (iccg): one message per edge, then buffers of 2 to 16 edges: speedup and
//!   average edges per message.
//! - `volume`: bytes injected per traffic class, per variant.
//! - `grain` (the grain app): the leaf's delay `l` from 0 to 1000 cycles in log steps; y = the
//!   speedup of each variant over the sequential program (the runtime study's thread-grain
//!   figure). Default machine `alewife-sim`.
//! - `memcpy` (the memcpy app): block size from 16 to 16384 bytes; y = MB/s of each copy
//!   variant. Default machine `alewife-sim`.
//! - `copy-transfer` (the copy-transfer app, issue 15): strides 1 to 64 words x working sets
//!   from 4 KB in powers of two to beyond the machine's last cache level, for `local` and each
//!   remote variant the machine has (`fetch` through coherence, `get` and `put` where it has
//!   one-sided access); `--quick`: 4 strides x 3 small sets. A heat map per variant (stride
//!   across, working set up, colour = MB/s), drawn by the function `commlab characterize`
//!   draws the host's with; the summary: plateaus per cache level, remote/local ratios.
//!   Then the large transfers (16 MiB) by stride with strided loads and with strided stores,
//!   per variant (the copy-transfer study's Figs. 9-14). Default machine `t3e`.
//! - `fft2d` (the fft2d app): MFlop/s against the problem side (64 to 1024 on 4 processors)
//!   of each transpose variant: total, local computation and transposes (the study's Figs.
//!   15-17, drawn by the code `reproduce copy-transfer` draws them with). Default machine `t3e`.
//! - `blizzard` (issue 18): the Blizzard study's five applications (dsmc, barnes, appbt, moldyn,
//!   em3d) in their `stache` and `custom` variants on blizzard-s, -e and -t (or `--machine`) at 1
//!   to 16 processors at the study's inputs (em3d's custom protocol at 128-byte blocks): a speedup
//!   plot per app and a table of run times at 16 processors; `--quick`: small parameters at 1, 2
//!   and 4 processors. No app argument.
//!
//! Machines are placed on the bisection and latency axes by their figures normalised by
//! local-miss time (as `commlab machines --table` computes them), converted to this
//! machine's cycles: bisection bytes per local miss / this machine's local miss, and network
//! latency in local misses x this machine's local miss.
//!
//! Each experiment is a sweep (`sweep`) re-read and ordered by the app's variant order and x,
//! never by the order runs finished, so its files do not depend on `--jobs`. `--variant` (here
//! and in `sweep`) takes comma lists. Submodules: `blizzard`, `copy_transfer`, `fft2d`.

mod args;
mod blizzard;
pub(crate) use blizzard::{
    quick_params as blizzard_quick_params, study_params as blizzard_study_params,
    variant_params as blizzard_variant_params,
};
mod copy_transfer;
mod fft2d;
mod rows;

use crate::chart::runs::{self as chart_runs, RunBars, Stack};
use crate::chart::{self, Cross, LineChart, Marker, Series, XKind};
use crate::crossover::{crossovers, Crossover};
use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::machine_table::{self, MachineRow};
use crate::record::{ResultRecord, RunMeta};
use crate::sweep;
use args::{app_name, machine_name, sweep_args};
pub use args::{ExperimentArgs, Name, LONG_ABOUT};
use commlab_api::TrafficClass;
use commlab_sim::machine;
use commlab_sim::Simulator;
use rows::{read_rows, write_summary, Row};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The cross-traffic a run achieved (`counters.cross_traffic_bytes_per_cycle`, present when the
/// rate is not 0). Without the counter: no cross-traffic, or a record of an older version, which
/// gave cross-traffic priority at every link, so it took exactly its configured rate.
fn achieved_cross_traffic(r: &Row) -> f64 {
    r.record.counters.get(commlab_sim::counters::CROSS_TRAFFIC_BYTES_PER_CYCLE.name).copied().unwrap_or(r.vary)
}

/// Each curve also sampled, by linear interpolation, at the x of the other curves' points that
/// lie within its own range, so that `crossovers` (which compares samples at equal x) can
/// compare curves measured at different x (the bisection experiment's: each variant's runs
/// achieved their own cross-traffic). Curves that share their x gain nothing.
fn on_each_others_x(curves: &[(String, Vec<(f64, f64)>)]) -> Vec<(String, Vec<(f64, f64)>)> {
    let all: Vec<f64> = curves.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).filter(|x| x.is_finite()).collect();
    curves
        .iter()
        .map(|(name, pts)| {
            let own: Vec<(f64, f64)> = pts.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
            let mut out = pts.clone();
            for &x in &all {
                if own.iter().any(|q| q.0 == x) || out.iter().any(|q| q.0 == x) {
                    continue;
                }
                // The two samples around x (points are sorted by x).
                if let Some(w) = own.windows(2).find(|w| w[0].0 < x && x < w[1].0) {
                    let ((x0, y0), (x1, y1)) = (w[0], w[1]);
                    out.push((x, y0 + (x - x0) / (x1 - x0) * (y1 - y0)));
                }
            }
            out.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name.clone(), out)
        })
        .collect()
}

/// Curves of `metric` per variant over x, variants in the app's order (not the order runs
/// finished in, which depends on --jobs), x increasing.
fn curves(
    rows: &[Row],
    x_of: &dyn Fn(&Row) -> f64,
    metric: &dyn Fn(&ResultRecord) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows {
        let pt = (x_of(r), metric(&r.record));
        match out.iter_mut().find(|(v, _)| *v == r.record.variant) {
            Some((_, pts)) => pts.push(pt),
            None => out.push((r.record.variant.clone(), vec![pt])),
        }
    }
    for (_, pts) in &mut out {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let variants =
        rows.first().and_then(|r| commlab_apps::app_info(&r.record.app).ok()).map_or(&[][..], |info| info.variants);
    out.sort_by_key(|(v, _)| variants.iter().position(|x| x == v).unwrap_or(usize::MAX));
    out
}

fn series(curves: &[(String, Vec<(f64, f64)>)]) -> Vec<Series> {
    curves.iter().map(|(n, p)| Series { name: n.clone(), points: p.clone() }).collect()
}

/// Where the presets sit on an axis: `f(row, base local miss)`, each preset measured at the
/// run's processor count (`procs`, resized as `--procs` resizes; `None`: at its own size);
/// those outside `[lo, hi]` are listed apart, as are presets that cannot take that size.
fn markers(
    base_local: f64,
    lo: f64,
    hi: f64,
    procs: Option<usize>,
    f: &dyn Fn(&MachineRow, f64) -> Option<f64>,
) -> Result<(Vec<Marker>, Vec<Value>), Failure> {
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for name in machine::preset_names() {
        let row = match machine_table::measure_at(name, procs) {
            Ok(row) => row,
            Err(f) if f.status == 2 && procs.is_some() => {
                off.push(json!({ "machine": name, "x": null, "not_resizable": f.message }));
                continue;
            }
            Err(f) => return Err(f),
        };
        let Some(x) = f(&row, base_local) else { continue };
        if x >= lo && x <= hi {
            on.push(Marker { x, label: name.to_string() });
        } else {
            off.push(json!({ "machine": name, "x": x }));
        }
    }
    Ok((on, off))
}

/// The varied key, its values and how a point's x follows from them.
struct Axis {
    key: &'static str,
    spec: String,
    x_label: String,
    /// Point whose breakdown and volume are drawn (the unchanged machine).
    baseline: f64,
}

pub fn run(a: ExperimentArgs) -> Result<(), Failure> {
    let name = a.name.text();
    if a.quick && !matches!(a.name, Name::CopyTransfer | Name::Fft2d | Name::Blizzard) {
        return Err(input(format!("--quick is for experiments copy-transfer, fft2d and blizzard, not {name}")));
    }
    if a.name == Name::Blizzard {
        let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("experiment-blizzard"));
        return blizzard::run(&a, &dir);
    }
    match (a.name.own_app(), a.app.as_deref()) {
        (Some(own), Some(app)) if app != own => {
            return Err(input(format!("experiment {name} runs the {own} app, not `{app}` (leave the app out)")))
        }
        (None, None) => {
            return Err(input(format!("experiment {name} needs an app, e.g. `commlab experiment {name} em3d`")))
        }
        _ => {}
    }
    let info = commlab_apps::app_info(app_name(&a)).map_err(|e| input(e.to_string()))?;
    crate::variant_arg::check_variant_names(info, &a.variant)?;
    let base = machine_arg::load(machine_name(&a), &a.set, a.procs)?;
    sweep::select_variants(info, &a.variant, &base).map_err(|e| input(e.to_string()))?;
    let dir = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("experiment-{name}-{}", info.name)));
    match a.name {
        Name::Aggregation | Name::Volume => return run_variants(&a, &dir, &base),
        Name::Grain | Name::Memcpy => return run_param_curve(&a, &dir, &base),
        Name::CopyTransfer => return copy_transfer::run(&a, &dir, &base),
        Name::Fft2d => return fft2d::run(&a, &dir, &base),
        _ => {}
    }
    // The presets are placed by their figures at the run's processor count.
    let base_local = if a.no_marks { 0.0 } else { machine_table::measure_at(machine_name(&a), a.procs)?.local };
    let mut outcome = Ok(());
    let mut report = String::new();
    for (d, axis) in axes(&a, &base, &dir)? {
        let (text, r) = run_axis(&a, info, &base, base_local, &d, &axis)?;
        report.push_str(&text);
        if r.is_err() {
            outcome = r;
        }
    }
    print!("{report}");
    outcome
}

/// The keys a bisection, latency or overhead experiment varies, each with the directory its
/// sweep writes.
fn axes(a: &ExperimentArgs, base: &machine::MachineConfig, dir: &Path) -> Result<Vec<(PathBuf, Axis)>, Failure> {
    let points = a.points;
    let methods: Vec<(PathBuf, Axis)> = match a.name {
        Name::Bisection => {
            let b = base.bisection_bytes_per_cycle();
            if base.cross_traffic_bytes_per_cycle > 0.0 {
                return Err(input("experiment bisection sets the cross-traffic itself: drop --set cross_traffic.*"));
            }
            let axis = Axis {
                key: "cross_traffic.rate_bytes_per_cycle",
                spec: format!("0:{}:{points}", 0.9 * b),
                x_label: "bisection bandwidth left to the application: bisection less achieved cross-traffic (bytes per processor cycle)".into(),
                baseline: 0.0,
            };
            vec![(dir.to_path_buf(), axis)]
        }
        Name::Latency => {
            let mhz = base.spec.processor.clock_mhz;
            let clock = Axis {
                key: "processor.clock_mhz",
                spec: format!("{}:{}:{points}:log", mhz / 2.0, mhz * 8.0),
                x_label: "one-way network latency of a 24-byte message (processor cycles)".into(),
                baseline: mhz,
            };
            let delay = Axis {
                key: "memory.remote_miss_delay_cycles",
                spec: format!("0:{}:{points}", (20.0 * base.packet_latency_cycles(24)).round().max(points as f64)),
                x_label: "delay added to every remote miss (processor cycles)".into(),
                baseline: 0.0,
            };
            vec![(dir.to_path_buf(), clock), (dir.join("delay"), delay)]
        }
        Name::Overhead => {
            let axis = Axis {
                key: "messaging.overhead_scale",
                spec: format!("1:10:{}", points.max(2)),
                x_label: "send and receive overheads (multiple of the machine's)".into(),
                baseline: 1.0,
            };
            vec![(dir.to_path_buf(), axis)]
        }
        Name::Aggregation
        | Name::Volume
        | Name::Grain
        | Name::Memcpy
        | Name::CopyTransfer
        | Name::Fft2d
        | Name::Blizzard => {
            unreachable!("handled above")
        }
    };
    Ok(methods)
}

/// One axis of a bisection, latency or overhead experiment: its sweep, the run-time curves
/// with their crossovers and the presets placed on them, the breakdown and volume at the
/// unchanged machine; the summary text, and the sweep's outcome (an error only once the
/// points that ran are written).
fn run_axis(
    a: &ExperimentArgs,
    info: &commlab_apps::AppInfo,
    base: &machine::MachineConfig,
    base_local: f64,
    d: &Path,
    axis: &Axis,
) -> Result<(String, Result<(), Failure>), Failure> {
    let name = a.name.text();
    let mut outcome = Ok(());
    std::fs::create_dir_all(d).map_err(|e| input(format!("cannot create `{}`: {e}", d.display())))?;
    let r = sweep::run(sweep_args(a, format!("{}={}", axis.key, axis.spec), d));
    if let Err(f) = r {
        if f.status == 2 {
            return Err(f);
        }
        outcome = Err(f);
    }
    let rows = read_rows(&d.join("results.jsonl"), Some(axis.key), info.variants)?;
    // x of each point, from its machine: for clock scaling, the 24-byte latency at each
    // clock, computed once per clock.
    let mut latency_at: Vec<(f64, f64)> = Vec::new();
    if a.name == Name::Latency && axis.key == "processor.clock_mhz" {
        for r in &rows {
            if !latency_at.iter().any(|(mhz, _)| *mhz == r.vary) {
                let set: Vec<String> =
                    a.set.iter().cloned().chain([format!("processor.clock_mhz={:?}", r.vary)]).collect();
                let lat =
                    machine_arg::load(machine_name(a), &set, a.procs).map_or(f64::NAN, |c| c.packet_latency_cycles(24));
                latency_at.push((r.vary, lat));
            }
        }
    }
    let x_of = |r: &Row| -> f64 {
        match latency_at.iter().find(|(mhz, _)| *mhz == r.vary) {
            Some((_, lat)) => *lat,
            None if a.name == Name::Bisection => base.bisection_bytes_per_cycle() - achieved_cross_traffic(r),
            None => r.vary,
        }
    };
    let cycles = curves(&rows, &x_of, &|r| r.cycles);
    let found: Vec<Crossover> = crossovers(&on_each_others_x(&cycles));
    let (lo, hi) = cycles
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
    let (marks, off_axis) = match (a.no_marks, a.name, axis.key) {
        (false, Name::Bisection, _) => markers(base_local, lo, hi, a.procs, &|m, l0| Some(m.bisection * m.local / l0))?,
        (false, Name::Latency, "processor.clock_mhz") => {
            markers(base_local, lo, hi, a.procs, &|m, l0| Some(m.latency / m.local * l0))?
        }
        _ => (Vec::new(), Vec::new()),
    };
    let title = format!("{}: {} on {} ({} processors)", name, info.name, base.spec.name, base.nprocs());
    let crosses: Vec<Cross> =
        found.iter().map(|c| Cross { x: c.x, y: c.y, label: format!("{}/{}", c.a, c.b) }).collect();
    let s = series(&cycles);
    let mut files = chart::line_chart(
        &d.join("runtime"),
        &LineChart {
            title: &title,
            x_label: &axis.x_label,
            y_label: "run time (processor cycles)",
            series: &s,
            crossovers: &crosses,
            markers: &marks,
            log_x: false,
            x_kind: XKind::Plain,
        },
    )
    .map_err(failed)?;
    // Breakdown and volume at the unchanged machine.
    let at_base: Vec<&Row> = rows.iter().filter(|r| (r.vary - axis.baseline).abs() < 1e-9).collect();
    let point = format!("{}={}", axis.key, axis.baseline);
    files.extend(bars(d, &on_machine(info, base), Some(&point), &at_base)?);

    let mut text = format!("{title}\n  x: {}\n", axis.x_label);
    if a.name == Name::Bisection {
        text.push_str(&format!(
            "  (x = the bisection, {:.3}, less the cross-traffic each run achieved, counters.cross_traffic_bytes_per_cycle; configured {})\n",
            base.bisection_bytes_per_cycle(),
            axis.spec
        ));
    }
    text.push_str(&describe(&cycles, &found, &marks, &off_axis, base.nprocs()));
    let summary = json!({
        "experiment": name, "app": info.name, "machine": base.spec.name, "procs": base.nprocs(),
        "varied": axis.key, "x_label": axis.x_label,
        "series": cycles.iter().map(|(v, p)| (v.clone(), json!(p))).collect::<serde_json::Map<_, _>>(),
        "crossovers": found,
        "machines_on_axis": marks.iter().map(|m| json!({"machine": m.label, "x": m.x})).collect::<Vec<_>>(),
        "machines_off_axis": off_axis,
        "plots": rows::plot_names(&files),
    });
    Ok((write_summary(d, &summary, text, &files)?, outcome))
}

/// The curves in words: each variant's points, the fastest at each end, the crossovers and
/// where the presets sit.
fn describe(
    cycles: &[(String, Vec<(f64, f64)>)],
    found: &[Crossover],
    marks: &[Marker],
    off_axis: &[Value],
    procs: usize,
) -> String {
    let mut text = String::new();
    for (v, pts) in cycles {
        let desc: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.3}:{y:.0}")).collect();
        text.push_str(&format!("  {v}: {}\n", desc.join(" ")));
    }
    let n = cycles.first().map_or(0, |c| c.1.len());
    if n > 0 {
        for idx in [0, n - 1] {
            let best =
                cycles.iter().filter_map(|(v, p)| p.get(idx).map(|q| (v, q.0, q.1))).min_by(|p, q| p.2.total_cmp(&q.2));
            if let Some((v, x, y)) = best {
                text.push_str(&format!("  fastest at x = {x:.3}: {v} ({y:.0} cycles)\n"));
            }
        }
    }
    if found.is_empty() {
        text.push_str("  no crossovers: the order of the variants never changes\n");
    }
    for c in found {
        text.push_str(&format!(
            "  crossover: {} and {} change order at x = {:.3} ({:.0} cycles)\n",
            c.a, c.b, c.x, c.y
        ));
    }
    for m in marks {
        text.push_str(&format!("  machine {} sits at x = {:.3}\n", m.label, m.x));
    }
    let beyond: Vec<&Value> = off_axis.iter().filter(|o| o["x"].is_number()).collect();
    let not_resizable: Vec<&str> =
        off_axis.iter().filter(|o| !o["x"].is_number()).filter_map(|o| o["machine"].as_str()).collect();
    if !not_resizable.is_empty() {
        text.push_str(&format!(
            "  not marked (cannot be resized to {} processors): {}\n",
            procs,
            not_resizable.join(", ")
        ));
    }
    if !beyond.is_empty() {
        let names: Vec<String> = beyond
            .iter()
            .map(|o| format!("{} ({:.1})", o["machine"].as_str().unwrap_or(""), o["x"].as_f64().unwrap_or(f64::NAN)))
            .collect();
        text.push_str(&format!("  beyond this axis: {}\n", names.join(", ")));
    }
    text
}

/// "em3d on alewife (8 processors)".
fn on_machine(info: &commlab_apps::AppInfo, base: &machine::MachineConfig) -> String {
    format!("{} on {} ({} processors)", info.name, base.spec.name, base.nprocs())
}

/// Stacked bars of the time breakdown and the traffic volume, one bar per run in `rows`, in
/// that order; `point`: the point of a sweeping experiment they show, in their titles
/// ("time breakdown at cross_traffic.rate_bytes_per_cycle=0: em3d on ..."; they did not say).
fn bars(d: &Path, title: &str, point: Option<&str>, rows: &[&Row]) -> Result<Vec<PathBuf>, Failure> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = rows.iter().map(|r| r.record.variant.clone()).collect();
    let runs: Vec<&ResultRecord> = rows.iter().map(|r| &r.record).collect();
    let mut files = Vec::new();
    for (stem, stack, what) in
        [("breakdown", Stack::Time, "time breakdown"), ("volume", Stack::Traffic, "traffic volume")]
    {
        let title = match point {
            Some(p) => format!("{what} at {p}: {title}"),
            None => format!("{what}, {title}"),
        };
        let chart = RunBars { stack, title: &title, bars: &names, runs: &runs };
        files.extend(chart_runs::draw(&d.join(stem), &chart).map_err(failed)?);
    }
    Ok(files)
}

/// `aggregation` and `volume`: every variant once on the machine as given.
fn run_variants(a: &ExperimentArgs, dir: &Path, base: &machine::MachineConfig) -> Result<(), Failure> {
    let info = commlab_apps::app_info(app_name(a)).map_err(|e| input(e.to_string()))?;
    let variants: Vec<&str> = if a.name == Name::Aggregation {
        if info.name != "iccg" {
            return Err(input(format!("experiment aggregation is for iccg (buffered edges), not `{}`", info.name)));
        }
        vec!["mp-int", "buffer-2", "buffer-3", "buffer-4", "buffer-8", "buffer-16"]
    } else {
        sweep::select_variants(info, &a.variant, base).map_err(|e| input(e.to_string()))?
    };
    std::fs::create_dir_all(dir).map_err(|e| input(format!("cannot create `{}`: {e}", dir.display())))?;
    let path = dir.join("results.jsonl");
    let existing = if path.exists() { read_rows(&path, None, info.variants)? } else { Vec::new() };
    if !existing.is_empty() && !a.resume {
        return Err(input(format!(
            "`{}` already holds results; use --resume to continue, or --out DIR to start another",
            path.display()
        )));
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| input(format!("cannot write `{}`: {e}", path.display())))?;
    let sim = Simulator::new(base.clone());
    let fingerprint = base.fingerprint();
    let meta = RunMeta {
        machine: &base.spec.name,
        fingerprint: &fingerprint,
        overrides: &a.set,
        procs: base.nprocs(),
        seed: a.seed,
    };
    let mut problems = Vec::new();
    let todo: Vec<&str> =
        variants.iter().copied().filter(|v| !existing.iter().any(|r| r.record.variant == *v)).collect();
    let mut lines = crate::progress::Lines::start(&format!("experiment {} {}", a.name.text(), info.name), todo.len());
    for v in todo {
        match commlab_apps::run_app(&sim, info.name, v, &a.param, a.seed) {
            Ok(r) => {
                if !r.check.ok {
                    problems.push(format!("{} [{v}]: answer check failed: {}", info.name, r.check.detail));
                }
                file.write_all(ResultRecord::of_run(&r, &meta).to_json_line().as_bytes())
                    .and_then(|_| file.flush())
                    .map_err(|e| failed(format!("writing `{}`: {e}", path.display())))?;
                lines.done(&format!("{} [{v}]: {:.0} cycles", info.name, r.stats.cycles));
            }
            Err(commlab_apps::AppError::Input(m)) => return Err(input(m)),
            Err(commlab_apps::AppError::Run(m)) => problems.push(format!("{} [{v}]: {m}", info.name)),
        }
    }
    lines.finish();
    let rows: Vec<Row> = read_rows(&path, None, info.variants)?
        .into_iter()
        .filter(|r| variants.contains(&r.record.variant.as_str()))
        .collect();
    let row_refs: Vec<&Row> = rows.iter().collect();
    let title = format!("{} on {} ({} processors)", info.name, base.spec.name, base.nprocs());
    let mut files = bars(dir, &title, None, &row_refs)?;
    let mut text = String::new();
    if a.name == Name::Aggregation {
        let n_of = |r: &Row| r.record.variant.strip_prefix("buffer-").and_then(|n| n.parse().ok()).unwrap_or(1.0);
        let counter = |c: &'static str| move |r: &ResultRecord| r.counter(c);
        let speedup = curves(&rows, &|r| n_of(r), &counter(commlab_apps::shared_counters::SPEEDUP.name));
        let length = curves(&rows, &|r| n_of(r), &counter(commlab_apps::iccg::EDGES_PER_MESSAGE.name));
        let flatten = |c: &[(String, Vec<(f64, f64)>)], name: &str| {
            let mut pts: Vec<(f64, f64)> = c.iter().flat_map(|(_, p)| p.clone()).collect();
            pts.sort_by(|p, q| p.0.total_cmp(&q.0));
            vec![Series { name: name.to_string(), points: pts }]
        };
        for (stem, y_label, s) in [
            ("speedup", "speedup over one processor", flatten(&speedup, "speedup")),
            ("message-length", "average edges per message", flatten(&length, "edges per message")),
        ] {
            files.extend(
                chart::line_chart(
                    &dir.join(stem),
                    &LineChart {
                        title: &format!("aggregation: {title}"),
                        x_label: "edges buffered per message (N; 1 = one message per edge)",
                        y_label,
                        series: &s,
                        crossovers: &[],
                        markers: &[],
                        log_x: false,
                        x_kind: XKind::Plain,
                    },
                )
                .map_err(failed)?,
            );
            text.push_str(&format!("  {y_label}:"));
            for (x, y) in &s[0].points {
                text.push_str(&format!(" N={x}: {y:.2}"));
            }
            text.push('\n');
        }
    } else {
        for r in &rows {
            let parts: Vec<String> =
                TrafficClass::ALL.iter().map(|c| format!("{}={}", c.name(), r.record.bytes(*c).unwrap_or(0))).collect();
            text.push_str(&format!("  {}: {}\n", r.record.variant, parts.join(" ")));
        }
    }
    let name = a.name.text();
    let text = format!("{name}: {title}\n{text}");
    let summary = json!({
        "experiment": name, "app": info.name, "machine": base.spec.name, "procs": base.nprocs(),
        "runs": rows.iter().map(|r| &r.record).collect::<Vec<_>>(),
        "plots": rows::plot_names(&files),
    });
    print!("{}", write_summary(dir, &summary, text, &files)?);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failed(problems.join("; ")))
    }
}

/// What a parameter-curve experiment sweeps and draws.
struct ParamCurve {
    /// The app parameter varied, and its values.
    key: &'static str,
    values: Vec<u64>,
    x_label: &'static str,
    /// The counter drawn, and its label.
    counter: &'static str,
    y_label: &'static str,
}

fn param_curve(name: Name) -> ParamCurve {
    match name {
        // 0, then log steps from 1 to 1000 cycles (the runtime study's range of thread grain).
        Name::Grain => ParamCurve {
            key: "l",
            values: vec![0, 1, 3, 10, 30, 100, 300, 1000],
            x_label: "leaf delay l (cycles, log scale; l = 0 is in the summary)",
            counter: commlab_apps::shared_counters::SPEEDUP.name,
            y_label: "speedup over the sequential program",
        },
        Name::Memcpy => ParamCurve {
            key: "bytes",
            values: (4..=14).map(|k| 1u64 << k).collect(),
            x_label: "block size (bytes, log scale)",
            counter: commlab_apps::runtime::memcpy::MBYTES_PER_S.name,
            y_label: "copy bandwidth (MB/s at the machine's clock)",
        },
        other => unreachable!("{other:?} is not a parameter-curve experiment"),
    }
}

/// `grain` and `memcpy`: sweep one app parameter over fixed values and draw one counter of
/// every variant against it (log x), with crossovers.
fn run_param_curve(a: &ExperimentArgs, dir: &Path, base: &machine::MachineConfig) -> Result<(), Failure> {
    let name = a.name.text();
    let info = commlab_apps::app_info(app_name(a)).map_err(|e| input(e.to_string()))?;
    let c = param_curve(a.name);
    if a.param.iter().any(|p| p.split('=').next() == Some(c.key)) {
        return Err(input(format!("experiment {name} varies --param {} itself: drop it", c.key)));
    }
    std::fs::create_dir_all(dir).map_err(|e| input(format!("cannot create `{}`: {e}", dir.display())))?;
    let values: Vec<String> = c.values.iter().map(u64::to_string).collect();
    let mut outcome = sweep::run(sweep_args(a, format!("{}={}", c.key, values.join(",")), dir));
    if let Err(f) = &outcome {
        if f.status == 2 {
            return outcome;
        }
    }
    let rows = read_rows(&dir.join("results.jsonl"), Some(c.key), info.variants)?;
    let all = curves(&rows, &|r| r.vary, &|r| r.counter(c.counter));
    let drawn: Vec<(String, Vec<(f64, f64)>)> =
        all.iter().map(|(v, p)| (v.clone(), p.iter().copied().filter(|q| q.0 > 0.0).collect())).collect();
    let found: Vec<Crossover> = crossovers(&drawn);
    let title = format!("{name}: {} on {} ({} processors)", info.name, base.spec.name, base.nprocs());
    let crosses: Vec<Cross> =
        found.iter().map(|x| Cross { x: x.x, y: x.y, label: format!("{}/{}", x.a, x.b) }).collect();
    let mut files = chart::line_chart(
        &dir.join(c.counter),
        &LineChart {
            title: &title,
            x_label: c.x_label,
            y_label: c.y_label,
            series: &series(&drawn),
            crossovers: &crosses,
            markers: &[],
            log_x: true,
            x_kind: if c.key == "bytes" { XKind::Bytes } else { XKind::Plain },
        },
    )
    .map_err(failed)?;
    // Breakdown and volume at the largest value.
    let largest = *c.values.last().expect("values");
    let at_largest: Vec<&Row> = rows.iter().filter(|r| r.vary == largest as f64).collect();
    let point = format!("{}={largest}", c.key);
    files.extend(bars(dir, &on_machine(info, base), Some(&point), &at_largest)?);
    let mut text =
        format!("{title}\n  x: --param {} ({})\n  y: {} (counters.{})\n", c.key, c.x_label, c.y_label, c.counter);
    for (v, pts) in &all {
        let desc: Vec<String> = pts.iter().map(|(x, y)| format!("{x}:{y:.2}")).collect();
        text.push_str(&format!("  {v}: {}\n", desc.join(" ")));
    }
    for x in [c.values[0] as f64, *c.values.last().expect("values") as f64] {
        let best = all
            .iter()
            .filter_map(|(v, p)| p.iter().find(|q| q.0 == x).map(|q| (v, q.1)))
            .max_by(|p, q| p.1.total_cmp(&q.1));
        if let Some((v, y)) = best {
            text.push_str(&format!("  highest at {} = {x}: {v} ({y:.2})\n", c.key));
        }
    }
    if found.is_empty() {
        text.push_str("  no crossovers: the order of the variants never changes\n");
    }
    for x in &found {
        text.push_str(&format!(
            "  crossover: {} and {} change order at {} = {:.1} ({:.2})\n",
            x.a, x.b, c.key, x.x, x.y
        ));
    }
    let summary = json!({
        "experiment": name, "app": info.name, "machine": base.spec.name, "procs": base.nprocs(),
        "varied": c.key, "x_label": c.x_label, "metric": c.counter, "y_label": c.y_label,
        "series": all.iter().map(|(v, p)| (v.clone(), json!(p))).collect::<serde_json::Map<_, _>>(),
        "crossovers": found,
        "plots": rows::plot_names(&files),
    });
    print!("{}", write_summary(dir, &summary, text, &files)?);
    if outcome.is_ok() && rows.is_empty() {
        outcome = Err(failed(format!("experiment {name}: no runs finished")));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::on_each_others_x;

    #[test]
    fn curves_are_sampled_at_each_others_x_within_their_range() {
        let c = |n: &str, p: &[(f64, f64)]| (n.to_string(), p.to_vec());
        let got = on_each_others_x(&[c("a", &[(0.0, 0.0), (2.0, 4.0)]), c("b", &[(1.0, 5.0), (3.0, 1.0)])]);
        // a gains x = 1 (inside its range), not x = 3; b gains x = 2, not x = 0.
        assert_eq!(got[0].1, vec![(0.0, 0.0), (1.0, 2.0), (2.0, 4.0)]);
        assert_eq!(got[1].1, vec![(1.0, 5.0), (2.0, 3.0), (3.0, 1.0)]);
        // On their common range, a goes 2 -> 4 and b 5 -> 3: they cross at x = 1.75, which the
        // curves as measured (no x in common) could not show.
        let x = crate::crossover::crossovers(&got);
        assert_eq!(x.len(), 1, "{x:?}");
        assert!((x[0].x - 1.75).abs() < 1e-12, "{x:?}");
        // Curves on one set of x are unchanged.
        let same = [c("a", &[(0.0, 1.0), (1.0, 2.0)]), c("b", &[(0.0, 2.0), (1.0, 1.0)])];
        assert_eq!(on_each_others_x(&same), same.to_vec());
    }
}
