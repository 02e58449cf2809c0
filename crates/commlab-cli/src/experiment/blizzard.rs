//! `commlab experiment blizzard`: the Blizzard study's applications on its three machines
//! (issue 18). The study's five apps (`APPS`), each in its `stache` and `custom` variants on
//! `blizzard-s`, `blizzard-e` and `blizzard-t` (or the `--machine` given) at 1, 2, 4, 8 and 16
//! processors, each run the sweep's unit of work ([`sweep::run_task`] of a [`Task`]), `--jobs`
//! at a time, its record appended to `DIR/results.jsonl` as it finishes (`--resume` skips
//! the runs already there). Then one speedup plot per app (`DIR/speedup-APP.png`/`.svg`: a
//! curve per variant x machine; the speedup is the app's `counters.speedup`, over the
//! sequential program on one processor of the same machine) and the summary
//! (`DIR/experiment.json`, `DIR/experiment.txt`): the run times at the largest processor
//! count.
//!
//! Each app runs the study's input (§9, `study_params`: appbt 32x32x32 for 30 iterations, barnes
//! 8192 bodies for 8 steps, dsmc 300 steps, em3d 32K nodes with 10% of edges remote for 100
//! iterations, moldyn 8722 molecules for 60 steps) and em3d's custom protocol the study's
//! 128-byte blocks (custom128, Table 9), on the presets' configuration: the study's SMP nodes
//! with the protocol thread polling Typhoon-0. `--quick`: small parameters (`quick_params`) at
//! 1, 2 and 4 processors, in seconds, said so in the summary.

use super::args::ExperimentArgs;
use super::rows::{read_rows, write_summary, Row};
use crate::chart::{self, LineChart, Series, XKind};

/// The speedup plots' line of linear speedup.
const IDEAL: &str = "ideal (speedup = processors)";
use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::record::{self, ResultRecord};
use crate::sweep::{self, Task};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// The study's applications, in the order the summary lists them (em3d last: it came last, and
/// the runs' numbering in an existing results file stays as it was).
const APPS: [&str; 5] = ["dsmc", "barnes", "appbt", "moldyn", "em3d"];
const MACHINES: [&str; 3] = ["blizzard-s", "blizzard-e", "blizzard-t"];
const VARIANTS: [&str; 2] = ["stache", "custom"];
const PROCS: [usize; 5] = [1, 2, 4, 8, 16];
const QUICK_PROCS: [usize; 3] = [1, 2, 4];

/// `--quick` parameters of each app: a fraction of a second a run (also `reproduce blizzard-cow --quick`'s).
pub(crate) fn quick_params(app: &str) -> Vec<String> {
    let p: &[&str] = match app {
        "dsmc" => &["particles=600", "cells_x=8", "cells_y=4", "cells_z=4", "iterations=4"],
        "barnes" => &["bodies=192", "iterations=3"],
        "appbt" => &["nx=8", "ny=4", "nz=4", "iterations=2"],
        "moldyn" => &["molecules=256", "iterations=3", "rebuild=2", "list_radius=2.6"],
        "em3d" => &["nodes=640", "remote=0.1", "iterations=3"],
        _ => &[],
    };
    p.iter().map(|s| s.to_string()).collect()
}

/// The study's input of each app (§9; also `reproduce blizzard-cow`'s): appbt's 32^3 grid for
/// 30 iterations, barnes's 8192 bodies for 8 steps, dsmc's 300 steps (the study does not give
/// its particle count: commlab's default), em3d's 32K nodes with 10% of the edges remote for 100
/// iterations, moldyn's 8722 molecules for 60 steps.
pub(crate) fn study_params(app: &str) -> Vec<String> {
    let p: &[&str] = match app {
        "appbt" => &["nx=32", "ny=32", "nz=32", "iterations=30"],
        "barnes" => &["bodies=8192", "iterations=8"],
        "dsmc" => &["iterations=300"],
        "em3d" => &["nodes=32768", "remote=0.1", "iterations=100"],
        "moldyn" => &["molecules=8722", "iterations=60"],
        _ => &[],
    };
    p.iter().map(|s| s.to_string()).collect()
}

/// A variant's own parameters: em3d's custom protocol runs the study's 128-byte blocks
/// (custom128, Table 9); every other protocol its block size as the app defines it.
pub(crate) fn variant_params(app: &str, variant: &str) -> &'static [&'static str] {
    match (app, variant) {
        ("em3d", "custom") => &["block_bytes=128"],
        _ => &[],
    }
}

/// The identity of a run in the results file.
fn key(app: &str, machine: &str, procs: usize, variant: &str) -> String {
    format!("{app} [{variant}] {machine} {procs}")
}

pub(super) fn run(a: &ExperimentArgs, dir: &Path) -> Result<(), Failure> {
    if let Some(app) = &a.app {
        return Err(input(format!(
            "experiment blizzard runs {} itself, not `{app}` (leave the app out)",
            APPS.join(", ")
        )));
    }
    if !a.param.is_empty() {
        return Err(input(
            "experiment blizzard runs each app at the study's size (or --quick sizes): drop --param, or run one app with `commlab run`",
        ));
    }
    if a.procs.is_some() {
        return Err(input(format!(
            "experiment blizzard runs {} processors itself: drop --procs",
            PROCS.map(|p| p.to_string()).join(", ")
        )));
    }
    let variants = selected_variants(&a.variant)?;
    let machines: Vec<String> = match &a.machine {
        Some(m) => vec![m.clone()],
        None => MACHINES.map(String::from).to_vec(),
    };
    let procs: &[usize] = if a.quick { &QUICK_PROCS } else { &PROCS };
    crate::sweep::stats::parse_kinds(&a.stats)?;

    let tasks = plan(a, &machines, procs, &variants, dir)?;
    let (path, mut file, todo) = open_results(dir, a.resume, &tasks)?;
    let largest = procs.iter().copied().max().unwrap_or(1);
    let problems = run_tasks(&todo, a.jobs, largest, &mut file, &path)?;
    summarize(dir, &path, &machines, &variants, procs, a.quick, &a.set)?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failed(format!("{} runs failed: {}", problems.len(), problems.join("; "))))
    }
}

/// The variants asked for (`all`: stache and custom), in the experiment's order.
fn selected_variants(asked: &str) -> Result<Vec<&'static str>, Failure> {
    Ok(if asked == "all" {
        VARIANTS.to_vec()
    } else {
        let named: Vec<&str> = asked.split(',').map(str::trim).collect();
        if let Some(bad) = named.iter().find(|v| !VARIANTS.contains(v)) {
            return Err(input(format!("experiment blizzard runs variants stache and custom, not `{bad}`")));
        }
        VARIANTS.iter().copied().filter(|v| named.contains(v)).collect()
    })
}

/// Every run, checked now (machines build, parameters parse, memory fits), each with the
/// machine's name and the processor count, as its record will carry them.
fn plan(
    a: &ExperimentArgs,
    machines: &[String],
    procs: &[usize],
    variants: &[&str],
    dir: &Path,
) -> Result<Vec<(Task, String, usize)>, Failure> {
    let mut tasks: Vec<(Task, String, usize)> = Vec::new();
    for app in APPS {
        let info = commlab_apps::app_info(app).map_err(|e| input(e.to_string()))?;
        let params = if a.quick { quick_params(app) } else { study_params(app) };
        commlab_apps::Params::parse(info, &params).map_err(|e| input(e.to_string()))?;
        for m in machines {
            for &p in procs {
                let cfg = machine_arg::load(m, &a.set, Some(p))?;
                crate::memory_check::check(app, &params, &commlab_sim::Simulator::new(cfg.clone()), None)?;
                for v in variants {
                    let mut params = params.clone();
                    params.extend(variant_params(app, v).iter().map(|s| s.to_string()));
                    let mut vary = Map::new();
                    vary.insert("procs".into(), json!(p));
                    let task = Task {
                        app: app.to_string(),
                        machine_toml: cfg.spec.to_toml(),
                        machine_fingerprint: cfg.fingerprint(),
                        overrides: a.set.clone(),
                        params,
                        variant: v.to_string(),
                        seed: a.seed,
                        point: tasks.len(),
                        vary,
                        what: key(app, &cfg.spec.name, p, v),
                        stats: a.stats.clone(),
                        out: Some(dir.to_path_buf()),
                    };
                    tasks.push((task, cfg.spec.name.clone(), p));
                }
            }
        }
    }

    Ok(tasks)
}

/// The results file, opened to append (a torn last line cut off), and the runs it does not
/// hold yet; refused if it holds runs of another machine or other overrides, or any run
/// without --resume.
fn open_results<'t>(
    dir: &Path,
    resume: bool,
    tasks: &'t [(Task, String, usize)],
) -> Result<(std::path::PathBuf, std::fs::File, Vec<&'t Task>), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| input(format!("cannot create `{}`: {e}", dir.display())))?;
    let path = dir.join("results.jsonl");
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(input(format!("cannot read `{}`: {e}", path.display()))),
    };
    if !text.iter().all(u8::is_ascii_whitespace) && !resume {
        return Err(input(format!(
            "`{}` already holds results; use --resume to continue, or --out DIR to start another",
            path.display()
        )));
    }
    let existing = record::read_appendable(&text).map_err(|bad| {
        input(format!("{}; the file is damaged (repair or move it, or use another --out)", bad.message(&path)))
    })?;
    let mut todo: Vec<&Task> = Vec::new();
    for (t, machine, p) in tasks {
        let found = existing.records.iter().map(|n| &n.record).find(|r| {
            r.app == t.app && r.variant == t.variant && r.procs == *p && r.seed == t.seed && r.machine == *machine
        });
        match found {
            Some(r) if r.machine_fingerprint.as_deref() != Some(t.machine_fingerprint.as_str()) => {
                return Err(input(format!(
                    "`{}` holds {} run on a different machine (fingerprint {}, this run's {}); resuming would mix two machines, use another --out",
                    path.display(),
                    t.what,
                    json!(r.machine_fingerprint),
                    t.machine_fingerprint
                )));
            }
            Some(r) if r.overrides.as_deref() != Some(t.overrides.as_slice()) => {
                return Err(input(format!(
                    "`{}` holds {} run with --set {}; this run has --set {}; use another --out",
                    path.display(),
                    t.what,
                    json!(r.overrides),
                    json!(t.overrides)
                )));
            }
            Some(_) => {}
            None => todo.push(t),
        }
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| input(format!("cannot write `{}`: {e}", path.display())))?;
    if existing.torn {
        file.set_len(existing.complete_len).map_err(|e| failed(format!("writing `{}`: {e}", path.display())))?;
    }
    if resume && todo.len() < tasks.len() {
        eprintln!("resuming: {} of {} runs already in {}", tasks.len() - todo.len(), tasks.len(), path.display());
    }

    Ok((path, file, todo))
}

/// Runs `todo` on up to `jobs` workers in order, appending each record to `file` as it comes;
/// the runs that failed or failed their answer check.
fn run_tasks(
    todo: &[&Task],
    jobs: Option<u64>,
    largest: usize,
    file: &mut std::fs::File,
    path: &Path,
) -> Result<Vec<String>, Failure> {
    let mut problems: Vec<String> = Vec::new();
    let mut fatal: Option<Failure> = None;
    let jobs =
        crate::run::jobs_asked(jobs).min(todo.len()).min(crate::memory_check::runs_by_host_mappings(largest)).max(1);
    let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Result<ResultRecord, Failure>)>();
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(t) = todo.get(k) else { break };
                if tx.send((k, sweep::run_task(t))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut lines = crate::progress::Lines::start("experiment blizzard", todo.len());
        for (k, outcome) in rx {
            let what = &todo[k].what;
            match outcome {
                Ok(r) => {
                    if let Err(e) = file.write_all(r.to_json_line().as_bytes()).and_then(|_| file.flush()) {
                        fatal.get_or_insert(failed(format!("writing `{}`: {e}", path.display())));
                        stop.store(true, Ordering::Relaxed);
                        continue;
                    }
                    if !r.check.ok {
                        problems.push(format!("{what}: answer check failed: {}", r.check.detail));
                    }
                    lines.done(&format!(
                        "{what}: {:.0} cycles, speedup {:.2}",
                        r.cycles,
                        r.counter(commlab_apps::shared_counters::SPEEDUP.name)
                    ));
                }
                Err(f) if f.status == 2 => {
                    fatal.get_or_insert(f);
                    stop.store(true, Ordering::Relaxed);
                }
                Err(f) => {
                    eprintln!("{what}: FAILED: {}", f.message);
                    lines.done(&format!("{what}: FAILED"));
                    problems.push(f.message);
                }
            }
        }
        lines.finish();
    });
    if let Some(f) = fatal {
        return Err(f);
    }

    Ok(problems)
}

/// The plots and the summary, from everything in the results file.
fn summarize(
    dir: &Path,
    path: &Path,
    machines: &[String],
    variants: &[&str],
    procs: &[usize],
    quick: bool,
    set: &[String],
) -> Result<(), Failure> {
    let rows = read_rows(path, Some("procs"), &VARIANTS)?;
    let largest = procs.iter().copied().max().unwrap_or(1);
    // Machines as their records name them (a --machine file's own name).
    let names: Vec<String> = machines
        .iter()
        .map(|m| machine_arg::load(m, &[], None).map(|c| c.spec.name.clone()).unwrap_or_else(|_| m.clone()))
        .collect();
    let of = |app: &str, v: &str, m: &str| -> Vec<&Row> {
        rows.iter()
            .filter(|r| r.record.app == app && r.record.variant == v && r.record.machine == m)
            .filter(|r| procs.contains(&(r.vary as usize)))
            .collect()
    };
    let mut files = Vec::new();
    let mut speedups = Map::new();
    let mut text = format!(
        "blizzard: {} x {} x {} at {} processors{}\n",
        APPS.join(", "),
        variants.join(", "),
        names.join(", "),
        procs.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
        if quick { " (--quick: small parameters)" } else { "" }
    );
    if !set.is_empty() {
        text.push_str(&format!("  every machine with --set {}\n", set.join(" --set ")));
    }
    for app in APPS {
        let mut series = Vec::new();
        let mut per = Map::new();
        for v in variants {
            for m in &names {
                let pts: Vec<(f64, f64)> = of(app, v, m)
                    .iter()
                    .map(|r| (r.vary, r.record.counter(commlab_apps::shared_counters::SPEEDUP.name)))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                per.insert(format!("{v} {m}"), json!(pts));
                series.push(Series { name: format!("{v} {m}"), points: pts });
            }
        }
        if !series.is_empty() {
            files.extend(speedup_plot(dir, app, series)?);
        }
        speedups.insert(app.to_string(), Value::Object(per));
    }

    // Run times at the largest processor count.
    text.push_str(&format!(
        "  run times at {largest} processors: cycles (milliseconds at the machine's clock; speedup)\n"
    ));
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(36);
    let mut head = format!("  {:<8} {:<8}", "app", "variant");
    for m in &names {
        head.push_str(&format!(" {m:<width$}"));
    }
    text.push_str(head.trim_end());
    text.push('\n');
    let mut table = Vec::new();
    for app in APPS {
        for v in variants {
            let mut line = format!("  {app:<8} {v:<8}");
            for m in &names {
                let cell = of(app, v, m).into_iter().find(|r| r.vary as usize == largest).map(|r| {
                    let mhz = machine_arg::load(m, &r.record.overrides.clone().unwrap_or_default(), Some(largest))
                        .map_or(f64::NAN, |c| c.spec.processor.clock_mhz);
                    let ms = r.record.cycles / (mhz * 1e3);
                    let speedup = r.record.counter(commlab_apps::shared_counters::SPEEDUP.name);
                    table.push(json!({
                        "app": app, "variant": v, "machine": m, "procs": largest,
                        "cycles": r.record.cycles, "milliseconds": ms, "speedup": speedup,
                        "check_ok": r.record.check.ok,
                    }));
                    format!("{:.0} ({ms:.1} ms; {speedup:.2}x)", r.record.cycles)
                });
                line.push_str(&format!(" {:<width$}", cell.unwrap_or_else(|| "-".to_string())));
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
    }
    let summary = json!({
        "experiment": "blizzard",
        "apps": APPS, "variants": variants, "machines": names, "procs": procs, "quick": quick, "set": set,
        "speedup": speedups,
        "table_procs": largest,
        "table": table,
        "plots": super::rows::plot_names(&files),
    });
    print!("{}", write_summary(dir, &summary, text, &files)?);
    Ok(())
}

/// One application's speedup plot: each variant on each machine by processors, and the ideal.
fn speedup_plot(dir: &Path, app: &str, mut series: Vec<Series>) -> Result<Vec<PathBuf>, Failure> {
    // The ideal, speedup = processors, at the processor counts run (plots had none).
    let mut procs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    procs.sort_by(f64::total_cmp);
    procs.dedup();
    series.push(Series { name: IDEAL.to_string(), points: procs.iter().map(|&p| (p, p)).collect() });
    let title = format!("{app}: speedup over the sequential program");
    chart::line_chart(
        &dir.join(format!("speedup-{app}")),
        &LineChart {
            title: &title,
            x_label: "processors",
            y_label: "speedup (sequential program's cycles / run's cycles)",
            series: &series,
            crossovers: &[],
            markers: &[],
            log_x: true,
            x_kind: XKind::Plain,
        },
    )
    .map_err(failed)
}
