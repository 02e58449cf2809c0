//! `commlab sweep`: run an application over a grid of machine keys and app parameters.
//!
//! Flow: resolve each `--vary KEY=SPEC` (an app parameter first, else a machine key; its type
//! comes from the parameter's default or the machine's current value) ─▶ values ─▶ grid
//! (cartesian product, first `--vary` outermost) ─▶ every point's machine is built and checked
//! before anything runs ─▶ (point, variant) runs, in parallel with `--jobs`, each appended to
//! `DIR/results.jsonl` (flushed per line) as it finishes ─▶ `DIR/summary.json` (per combination
//! of the other keys: the curves of `cycles` along the first key, the fastest variant at each
//! x, and the crossovers) and a short text summary on stdout.
//!
//! Each run is an independent deterministic simulation, so results do not depend on `--jobs`
//! (only the `sim` wall-clock fields and the order of lines do).

mod axis;
mod progress;
mod summary;

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::record::{self, ResultRecord, RunMeta};
use axis::{num, Axis, Target, Val};
use commlab_apps::{AppError, Params};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use progress::Progress;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// `commlab sweep --help`.
pub const LONG_ABOUT: &str = "Run an application over a range or grid of machine keys and app parameters, one \
simulation per (point, variant), and find where the variants change order.\n\n\
KEY is an app parameter (see `commlab apps`) or any machine key `--set` accepts (see `commlab machine show`); \
parameters are looked up first. SPEC is one of:\n  \
a:b:steps        `steps` (>= 2) evenly spaced values from a to b, both included\n  \
a:b:steps:log    geometric spacing (a and b > 0)\n  \
v1,v2,...        exactly these values\n\
Keys whose values are whole numbers (e.g. messaging.send_overhead_cycles, nodes) take whole numbers: a range's \
inner values are rounded and repeated values dropped; a list must be whole numbers. Several --vary form a grid \
(cartesian product; the first --vary is the outermost and is the x axis of the summary).\n\n\
Results: each run is appended to DIR/results.jsonl as soon as it finishes (the object of `run --json` plus \
\"vary\" and \"point\"), so an interrupted sweep loses nothing: rerun it with --resume to skip the (point, variant) \
pairs already there (an incomplete last line is dropped and redone). Without --resume an existing non-empty \
results.jsonl is an error. At the end DIR/summary.json holds, for each combination of the other keys, the cycles \
of every variant along the first key, the fastest variant at each value and the crossovers (where two variants \
change order, interpolated linearly); a short summary is printed. Results are identical for any --jobs.\n\n\
Examples:\n  \
commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:9 --jobs 2\n  \
commlab sweep am-latency --vary messaging.send_overhead_cycles=10:1000:5:log --variant all\n  \
commlab sweep em3d --procs 8 --param iterations=2 --vary nodes=320,640,1280 --vary remote=0.1,0.5 --out em3d-grid\n  \
commlab sweep em3d --vary cross_traffic.rate_bytes_per_cycle=0:8:9 --resume";

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Application name (see `commlab apps`).
    pub(crate) app: String,
    /// A key to vary and its values: KEY=a:b:steps, KEY=a:b:steps:log or KEY=v1,v2,... (repeatable: a grid).
    #[arg(long = "vary", value_name = "KEY=SPEC", required = true)]
    pub(crate) vary: Vec<String>,
    /// Variant to run, or `all`.
    #[arg(long, default_value = "all")]
    pub(crate) variant: String,
    /// Set an application parameter for every point, e.g. iterations=2 (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) param: Vec<String>,
    /// Override a machine key for every point (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Preset name or path to a machine TOML file.
    #[arg(long, default_value = "alewife")]
    pub(crate) machine: String,
    /// Resize the machine to N processors.
    #[arg(long)]
    pub(crate) procs: Option<usize>,
    /// Seed of every pseudo-random choice.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Runs in parallel (results do not depend on it).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) jobs: u64,
    /// Directory for results.jsonl and summary.json [default: sweep-APP].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Continue the sweep in DIR: skip the (point, variant) runs already in results.jsonl.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Refuse a point whose estimated memory exceeds SIZE (as `commlab run --max-memory`);
    /// without it, the memory available. Each of the --jobs workers runs one point at a time.
    #[arg(long, value_name = "SIZE", value_parser = crate::run::parse_size)]
    pub(crate) max_memory: Option<u64>,
    /// Experiments print their own summary instead of the sweep's.
    #[arg(skip)]
    pub(crate) quiet: bool,
}

/// One grid point: a value index per axis, and what it means for the run.
struct Point {
    vals: Vec<Val>,
    cfg: MachineConfig,
    params: Vec<String>,
    /// The "vary" object written with each result.
    vary: Map<String, Value>,
    /// `vary` as canonical text, to recognise the point in an existing results file.
    ident: String,
}

impl Point {
    fn describe(&self, axes: &[Axis]) -> String {
        axes.iter().zip(&self.vals).map(|(a, v)| format!("{}={v}", a.key)).collect::<Vec<_>>().join(" ")
    }
}

/// `vary` as text that is the same whether it was just built or read back from a file (floats
/// go through the same serialize-parse-serialize path either way).
fn canonical(v: Option<&Map<String, Value>>) -> String {
    let once = serde_json::to_string(&v).expect("JSON values serialize");
    serde_json::from_str::<Value>(&once).map(|v| v.to_string()).unwrap_or(once)
}

/// Check that `dir` is (or can be made) a writable directory, and create it.
fn prepare_dir(dir: &Path) -> Result<(), Failure> {
    let fail = |why: String| {
        input(format!(
            "cannot write --out `{}`: {why} (give a writable directory for results.jsonl and summary.json)",
            dir.display()
        ))
    };
    if dir.exists() && !dir.is_dir() {
        return Err(fail("it exists and is not a directory".to_string()));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory: {e}")))?;
    let probe = dir.join(format!(".commlab-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(format!("the directory is not writable: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    let results = dir.join("results.jsonl");
    if results.is_dir() {
        return Err(fail(format!("`{}` is a directory", results.display())));
    }
    Ok(())
}

/// What an existing results file already holds.
struct Existing {
    /// (canonical vary, variant) -> the run's record.
    done: HashMap<(String, String), ResultRecord>,
    /// Bytes of the file up to the end of its last complete line.
    good_len: u64,
    /// The file ended with an incomplete line (dropped and redone).
    truncated: bool,
}

/// Read an existing results file (`--resume`): every run in it must be of this sweep's app,
/// machine, processor count, seed and `--set` overrides (each point's machine fingerprint is
/// checked where the point is matched).
fn read_existing(path: &Path, text: &[u8], app: &str, want: &RunMeta) -> Result<Existing, Failure> {
    let file = record::read_appendable(text).map_err(|bad| {
        input(format!("{}; the file is damaged (repair or move it, or use another --out)", bad.message(path)))
    })?;
    let mut done = HashMap::new();
    for record::Numbered { line: line_no, record: r } in file.records {
        let same = r.app == app && r.machine == want.machine && r.procs == want.procs && r.seed == want.seed;
        match &r.overrides {
            Some(o) if o.as_slice() == want.overrides => {}
            Some(o) if same => {
                return Err(input(format!(
                    "{} line {line_no} was run with --set {}, but this sweep has --set {}; resuming would mix two machines, use another --out",
                    path.display(),
                    json!(o),
                    json!(want.overrides)
                )))
            }
            None if same => {
                return Err(input(format!(
                    "{} line {line_no} was written by an older commlab that did not record the machine; it cannot be resumed safely, use another --out",
                    path.display()
                )))
            }
            _ => {}
        }
        if !same {
            return Err(input(format!(
                "{} line {line_no} is a run of {} on {} ({} procs, seed {}), not of this sweep ({} on {}, {} procs, seed {}); use another --out",
                path.display(),
                json!(r.app),
                json!(r.machine),
                r.procs,
                r.seed,
                app,
                want.machine,
                want.procs,
                want.seed
            )));
        }
        done.insert((canonical(r.vary.as_ref()), r.variant.clone()), r);
    }
    Ok(Existing { done, good_len: file.complete_len, truncated: file.torn })
}

/// What a worker sends back for one run.
type Outcome = Result<(ResultRecord, bool, String, f64), AppError>;

pub fn run(args: SweepArgs) -> Result<(), Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    let variants = info.select_variants(&args.variant).map_err(|e| input(e.to_string()))?;
    Params::parse(info, &args.param).map_err(|e| input(e.to_string()))?;
    let base = machine_arg::load(&args.machine, &args.set, args.procs)?;
    let spec = serde_json::to_value(&base.spec).expect("a machine spec serializes");
    let axes = axis::axes(&args, info, &spec)?;
    // A key both varied and fixed would silently take the varied values.
    for a in &axes {
        let fixed = match a.target {
            Target::Param => &args.param,
            Target::Machine => &args.set,
        };
        let flag = if a.target == Target::Param { "--param" } else { "--set" };
        if let Some(f) = fixed.iter().find(|kv| kv.split_once('=').is_some_and(|(k, _)| k.trim() == a.key)) {
            return Err(input(format!(
                "`{}` is both varied (--vary {}=...) and fixed ({flag} {f}); give it in one place",
                a.key, a.key
            )));
        }
    }

    // The grid, first axis outermost; every point's machine is built (and so checked) now.
    let total: usize = axes.iter().map(|a| a.values.len()).product();
    let mut points = Vec::with_capacity(total);
    for p in 0..total {
        let mut rest = p;
        let mut idx = vec![0; axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            idx[k] = rest % a.values.len();
            rest /= a.values.len();
        }
        let vals: Vec<Val> = axes.iter().zip(&idx).map(|(a, &i)| a.values[i].clone()).collect();
        let mut set = args.set.clone();
        let mut params = args.param.clone();
        let mut vary = Map::new();
        for (a, v) in axes.iter().zip(&vals) {
            let kv = format!("{}={}", a.key, v.arg());
            match a.target {
                Target::Machine => set.push(kv),
                Target::Param => params.push(kv),
            }
            vary.insert(a.key.clone(), v.json());
        }
        let desc = axes.iter().zip(&vals).map(|(a, v)| format!("{}={v}", a.key)).collect::<Vec<_>>().join(" ");
        let cfg = machine_arg::load(&args.machine, &set, args.procs)
            .map_err(|f| input(format!("--vary at point {p} ({desc}): {}", f.message)))?;
        Params::parse(info, &params).map_err(|e| input(format!("--vary at point {p} ({desc}): {e}")))?;
        crate::memory_check::check(info.name, &params, &Simulator::new(cfg.clone()), args.max_memory)
            .map_err(|f| input(format!("--vary at point {p} ({desc}): {}", f.message)))?;
        points.push(Point { vals, cfg, params, ident: canonical(Some(&vary)), vary });
    }

    // The output directory and what it already holds.
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("sweep-{}", info.name)));
    prepare_dir(&dir)?;
    let results_path = dir.join("results.jsonl");
    let existing_text = match std::fs::read(&results_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(input(format!("cannot read `{}`: {e}", results_path.display()))),
    };
    let machine_name = base.spec.name.clone();
    let fingerprint = base.fingerprint();
    let meta = RunMeta {
        machine: &machine_name,
        fingerprint: &fingerprint,
        overrides: &args.set,
        procs: base.nprocs(),
        seed: args.seed,
    };
    if !existing_text.iter().all(|b| b.is_ascii_whitespace()) && !args.resume {
        return Err(input(format!(
            "`{}` already holds results; use --resume to continue that sweep, or --out DIR to start another",
            results_path.display()
        )));
    }
    let existing = read_existing(&results_path, &existing_text, info.name, &meta)?;

    // (point, variant) -> cycles, from the file and then from the new runs.
    let mut cycles: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let mut todo: Vec<(usize, usize)> = Vec::new();
    for (p, pt) in points.iter().enumerate() {
        for (vi, v) in variants.iter().enumerate() {
            match existing.done.get(&(pt.ident.clone(), v.to_string())) {
                Some(r) => {
                    let expected = Params::parse(info, &pt.params).map_err(|e| input(e.to_string()))?.resolved();
                    if r.params != expected {
                        return Err(input(format!(
                            "`{}` holds point {} [{v}] run with params {}, but this sweep has {}; use another --out",
                            results_path.display(),
                            pt.describe(&axes),
                            json!(r.params),
                            json!(expected)
                        )));
                    }
                    let want = pt.cfg.fingerprint();
                    if r.machine_fingerprint.as_deref() != Some(want.as_str()) {
                        return Err(input(format!(
                            "`{}` holds point {} [{v}] run on machine {} (fingerprint {}), but this sweep's machine there has fingerprint {want} (the machine file or a key changed); resuming would mix two machines, use another --out",
                            results_path.display(),
                            pt.describe(&axes),
                            json!(r.machine),
                            json!(r.machine_fingerprint),
                        )));
                    }
                    cycles.insert((p, vi), r.cycles);
                }
                None => todo.push((p, vi)),
            }
        }
    }

    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results_path)
        .map_err(|e| input(format!("cannot write `{}`: {e}", results_path.display())))?;
    let io_err = |e: std::io::Error| failed(format!("writing `{}`: {e}", results_path.display()));
    if existing.truncated {
        file.set_len(existing.good_len).map_err(io_err)?;
    }

    let mut progress = Progress::new(todo.len());
    let resumed = variants.len() * points.len() - todo.len();
    if args.resume && (resumed > 0 || existing.truncated) {
        progress.note(&format!(
            "resuming: {resumed} of {} runs already in {}{}",
            variants.len() * points.len(),
            results_path.display(),
            if existing.truncated { " (an incomplete last line was dropped and will be redone)" } else { "" }
        ));
    }

    // Run: workers take (point, variant) pairs in order; this thread writes each result.
    let mut failed_runs: Vec<String> = Vec::new();
    let mut failed_checks: Vec<String> = Vec::new();
    let mut fatal: Option<Failure> = None;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // No more at once than the largest point's processors' stacks leave memory mappings for.
    let largest = todo.iter().map(|&(p, _)| points[p].cfg.nprocs()).max().unwrap_or(1);
    let jobs = (args.jobs as usize).min(todo.len()).min(crate::memory_check::runs_by_host_mappings(largest)).max(1);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop, todo, points, variants) = (&next, &stop, &todo, &points, &variants);
            let (seed, overrides) = (args.seed, &args.set);
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, vi)) = todo.get(k) else { break };
                let pt = &points[p];
                let sim = Simulator::new(pt.cfg.clone());
                let outcome = commlab_apps::run_app(&sim, info.name, variants[vi], &pt.params, seed).map(|r| {
                    let (name, fingerprint) = (pt.cfg.spec.name.clone(), pt.cfg.fingerprint());
                    let meta =
                        RunMeta { machine: &name, fingerprint: &fingerprint, overrides, procs: pt.cfg.nprocs(), seed };
                    let record =
                        ResultRecord { point: Some(p), vary: Some(pt.vary.clone()), ..ResultRecord::of_run(&r, &meta) };
                    (record, r.check.ok, r.check.detail.clone(), r.stats.cycles)
                });
                if tx.send((k, outcome)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (k, outcome) in rx {
            let (p, vi) = todo[k];
            let v = variants[vi];
            let what = format!("{} [{v}] {}", info.name, points[p].describe(&axes));
            match outcome {
                Ok((record, ok, detail, c)) => {
                    let line = record.to_json_line();
                    if let Err(e) = file.write_all(line.as_bytes()).and_then(|_| file.flush()) {
                        fatal.get_or_insert(io_err(e));
                        stop.store(true, Ordering::Relaxed);
                        continue;
                    }
                    cycles.insert((p, vi), c);
                    if !ok {
                        failed_checks.push(format!("{what}: answer check failed: {detail}"));
                    }
                    progress.done(&format!("{what}: {} cycles{}", num(c), if ok { "" } else { ", CHECK FAILED" }));
                }
                Err(AppError::Run(m)) => {
                    progress.note(&format!("run failed: {what}: {m}"));
                    failed_runs.push(format!("{what}: {m}"));
                    progress.done(&format!("{what}: FAILED"));
                }
                Err(AppError::Input(m)) => {
                    fatal.get_or_insert(input(format!("{what}: {m}")));
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    });
    progress.finish();
    if let Some(f) = fatal {
        return Err(f);
    }

    // Summary along the first key, per combination of the others.
    let summary = summary::summarize(&args, info.name, &meta, &axes, &points, &variants, &cycles, &failed_runs);
    let summary_path = dir.join("summary.json");
    let text = serde_json::to_string_pretty(&summary.json).expect("summary serializes");
    std::fs::write(&summary_path, text + "\n")
        .map_err(|e| failed(format!("writing `{}`: {e}", summary_path.display())))?;
    println!(
        "sweep {}: {} points x {} variants = {} runs ({} run now, {resumed} already done); results: {}; summary: {}",
        info.name,
        points.len(),
        variants.len(),
        points.len() * variants.len(),
        todo.len(),
        results_path.display(),
        summary_path.display()
    );
    if !args.quiet {
        print!("{}", summary.text);
    }

    let mut problems = failed_runs;
    problems.extend(failed_checks);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failed(format!("{} runs failed: {}", problems.len(), problems.join("; "))))
    }
}
