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

use crate::crossover::{crossovers, Crossover};
use crate::failure::{input, Failure};
use crate::machine_arg;
use crate::record::{self, ResultRecord, RunMeta};
use commlab_apps::{AppError, AppInfo, Params};
use commlab_sim::machine::{self, MachineConfig};
use commlab_sim::Simulator;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
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
    /// Experiments print their own summary instead of the sweep's.
    #[arg(skip)]
    pub(crate) quiet: bool,
}

/// The type of a varied key's values.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Float,
    Text,
}

/// One value of a varied key.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Val {
    /// As given to `--set` / `--param`.
    fn arg(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Float(f) => format!("{f:?}"),
            Val::Text(s) => s.clone(),
        }
    }

    fn json(&self) -> Value {
        match self {
            Val::Int(i) => json!(i),
            Val::Float(f) => json!(f),
            Val::Text(s) => json!(s),
        }
    }

    fn x(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            Val::Text(_) => None,
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Int(i) => write!(f, "{i}"),
            Val::Float(x) => f.write_str(&num(*x)),
            Val::Text(s) => f.write_str(s),
        }
    }
}

/// A number for people: up to 4 decimals (trailing zeros dropped), or scientific when tiny or huge.
fn num(x: f64) -> String {
    if x == 0.0 || (x.abs() >= 1e-3 && x.abs() < 1e12) {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".to_string()
        } else {
            s.to_string()
        }
    } else {
        format!("{x:.4e}")
    }
}

/// Where a varied key goes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Param,
    Machine,
}

/// One `--vary`.
#[derive(Debug)]
struct Axis {
    key: String,
    target: Target,
    values: Vec<Val>,
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

/// Decide whether `key` is an app parameter or a machine key, and the type of its values.
fn resolve(key: &str, info: &AppInfo, spec: &Value) -> Result<(Target, Kind), Failure> {
    if let Some(p) = info.params.iter().find(|p| p.name == key) {
        let kind = if p.default.parse::<i64>().is_ok() {
            Kind::Int
        } else if p.default.parse::<f64>().is_ok() {
            Kind::Float
        } else {
            Kind::Text
        };
        return Ok((Target::Param, kind));
    }
    if key == "costs.*" || machine::key_doc(key).is_none() {
        let params = if info.params.is_empty() {
            "none".to_string()
        } else {
            info.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        };
        return Err(input(format!(
            "--vary `{key}`: unknown key: not a parameter of {} (parameters: {params}) nor a machine key (valid: {}, costs.NAME)",
            info.name,
            machine::key_list().replace(", costs.*", "")
        )));
    }
    let current = key.split('.').try_fold(spec, |v, part| v.get(part));
    let kind = match current {
        None if key.starts_with("costs.") => Kind::Int,
        None => Kind::Float,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Kind::Int,
        Some(Value::Number(_)) => Kind::Float,
        Some(Value::String(_)) | Some(Value::Bool(_)) => Kind::Text,
        Some(_) => {
            return Err(input(format!(
            "--vary `{key}`: a list-valued machine key cannot be swept (set it with --set, or sweep --procs by hand)"
        )))
        }
    };
    Ok((Target::Machine, kind))
}

/// Values of `SPEC` for a key of type `kind`.
fn parse_values(key: &str, kind: Kind, spec: &str) -> Result<Vec<Val>, Failure> {
    let bad = |why: String| input(format!("--vary {key}={spec}: {why}"));
    let number = |s: &str| -> Result<f64, Failure> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| bad(format!("`{}` is not a number", s.trim())))
    };
    let whole = |x: f64, s: &str| -> Result<i64, Failure> {
        if x.fract() == 0.0 && x.abs() < 9e15 {
            Ok(x as i64)
        } else {
            Err(bad(format!("`{}` is not a whole number (`{key}` takes whole numbers)", s.trim())))
        }
    };
    if spec.contains(':') {
        if kind == Kind::Text {
            return Err(bad(format!("`{key}` takes text values, not a range; list them: v1,v2,...")));
        }
        let parts: Vec<&str> = spec.split(':').collect();
        if !(3..=4).contains(&parts.len()) {
            return Err(bad("a range is a:b:steps or a:b:steps:log".to_string()));
        }
        let (a, b) = (number(parts[0])?, number(parts[1])?);
        let steps: usize =
            parts[2].trim().parse().map_err(|_| bad(format!("steps `{}` is not a whole number", parts[2].trim())))?;
        let log = match parts.get(3).map(|s| s.trim()) {
            None | Some("lin") => false,
            Some("log") => true,
            Some(o) => {
                return Err(bad(format!("unknown spacing `{o}` (write a:b:steps:log, or a:b:steps for linear)")))
            }
        };
        if steps == 0 {
            return Err(bad("empty range (0 steps); give at least 2 steps".to_string()));
        }
        if steps < 2 {
            return Err(bad(format!("a range needs at least 2 steps, got {steps} (for one value write {key}=VALUE)")));
        }
        if a == b {
            return Err(bad("the range's ends are equal (for one value write KEY=VALUE)".to_string()));
        }
        if log && (a <= 0.0 || b <= 0.0) {
            return Err(bad("a log range needs ends greater than 0".to_string()));
        }
        if kind == Kind::Int {
            whole(a, parts[0])?;
            whole(b, parts[1])?;
        }
        let mut out: Vec<Val> = Vec::new();
        for i in 0..steps {
            let t = i as f64 / (steps - 1) as f64;
            let x = if i == 0 {
                a
            } else if i == steps - 1 {
                b
            } else if log {
                a * (b / a).powf(t)
            } else {
                a + (b - a) * t
            };
            let v = match kind {
                Kind::Int => Val::Int(x.round() as i64),
                // 12 significant digits: 0.30000000000000004 becomes 0.3.
                _ => Val::Float(format!("{x:.11e}").parse().expect("a formatted float parses")),
            };
            if !out.contains(&v) {
                out.push(v);
            }
        }
        return Ok(out);
    }
    if spec.trim().is_empty() {
        return Err(bad("empty list of values".to_string()));
    }
    let mut out: Vec<Val> = Vec::new();
    for item in spec.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad("empty value in the list".to_string()));
        }
        let v = match kind {
            Kind::Int => Val::Int(match item.parse::<i64>() {
                Ok(i) => i,
                Err(_) => whole(number(item)?, item)?,
            }),
            Kind::Float => Val::Float(number(item)?),
            Kind::Text => Val::Text(item.to_string()),
        };
        if out.contains(&v) {
            return Err(bad(format!("`{item}` is listed twice")));
        }
        out.push(v);
    }
    Ok(out)
}

/// Parse every `--vary`.
fn axes(args: &SweepArgs, info: &AppInfo, spec: &Value) -> Result<Vec<Axis>, Failure> {
    let mut out: Vec<Axis> = Vec::new();
    for v in &args.vary {
        let (key, values) = v.split_once('=').ok_or_else(|| {
            input(format!(
                "--vary `{v}`: expected KEY=SPEC, e.g. cross_traffic.rate_bytes_per_cycle=0:8:9 or nodes=320,640"
            ))
        })?;
        let key = key.trim();
        if out.iter().any(|a| a.key == key) {
            return Err(input(format!("--vary `{key}` is given twice (give each key once, with all its values)")));
        }
        let (target, kind) = resolve(key, info, spec)?;
        let values = parse_values(key, kind, values)?;
        out.push(Axis { key: key.to_string(), target, values });
    }
    Ok(out)
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
/// machine, processor count and seed.
fn read_existing(path: &Path, text: &[u8], app: &str, want: &RunMeta) -> Result<Existing, Failure> {
    let file = record::read_appendable(text).map_err(|line_no| {
        input(format!(
            "{} line {line_no} is not a result object; the file is damaged (repair or move it, or use another --out)",
            path.display()
        ))
    })?;
    let mut done = HashMap::new();
    for record::Numbered { line: line_no, record: r } in file.records {
        let same = r.app == app && r.machine == want.machine && r.procs == want.procs && r.seed == want.seed;
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

/// Progress on stderr: a bar with ETA on a terminal, plain lines otherwise.
enum Progress {
    Bar(indicatif::ProgressBar),
    Lines { total: usize, done: usize },
}

impl Progress {
    fn new(total: usize) -> Progress {
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} runs, ETA {eta_precise} {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> ");
            bar.set_style(style);
            Progress::Bar(bar)
        } else {
            Progress::Lines { total, done: 0 }
        }
    }

    fn done(&mut self, what: &str) {
        match self {
            Progress::Bar(b) => {
                b.inc(1);
                b.set_message(what.to_string());
            }
            Progress::Lines { total, done } => {
                *done += 1;
                eprintln!("point {done}/{total} done: {what}");
            }
        }
    }

    fn note(&self, what: &str) {
        match self {
            Progress::Bar(b) => b.println(what),
            Progress::Lines { .. } => eprintln!("{what}"),
        }
    }

    fn finish(&self) {
        if let Progress::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}

/// What a worker sends back for one run.
type Outcome = Result<(ResultRecord, bool, String, f64), AppError>;

pub fn run(args: SweepArgs) -> Result<(), Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    let variants = info.select_variants(&args.variant).map_err(|e| input(e.to_string()))?;
    Params::parse(info, &args.param).map_err(|e| input(e.to_string()))?;
    let base = machine_arg::load(&args.machine, &args.set, args.procs)?;
    let spec = serde_json::to_value(&base.spec).expect("a machine spec serializes");
    let axes = axes(&args, info, &spec)?;

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
    let meta = RunMeta { machine: &machine_name, procs: base.nprocs(), seed: args.seed };
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
    let io_err =
        |e: std::io::Error| Failure { status: 1, message: format!("writing `{}`: {e}", results_path.display()) };
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
    let jobs = (args.jobs as usize).min(todo.len()).max(1);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop, todo, points, variants) = (&next, &stop, &todo, &points, &variants);
            let seed = args.seed;
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, vi)) = todo.get(k) else { break };
                let pt = &points[p];
                let sim = Simulator::new(pt.cfg.clone());
                let outcome = commlab_apps::run_app(&sim, info.name, variants[vi], &pt.params, seed).map(|r| {
                    let name = pt.cfg.spec.name.clone();
                    let meta = RunMeta { machine: &name, procs: pt.cfg.nprocs(), seed };
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
    let summary = summarize(&args, info.name, &meta, &axes, &points, &variants, &cycles, &failed_runs);
    let summary_path = dir.join("summary.json");
    let text = serde_json::to_string_pretty(&summary.json).expect("summary serializes");
    std::fs::write(&summary_path, text + "\n")
        .map_err(|e| Failure { status: 1, message: format!("writing `{}`: {e}", summary_path.display()) })?;
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
        Err(Failure { status: 1, message: format!("{} runs failed: {}", problems.len(), problems.join("; ")) })
    }
}

struct Summary {
    json: Value,
    text: String,
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    args: &SweepArgs,
    app: &str,
    meta: &RunMeta,
    axes: &[Axis],
    points: &[Point],
    variants: &[&'static str],
    cycles: &BTreeMap<(usize, usize), f64>,
    failed: &[String],
) -> Summary {
    let first = &axes[0];
    let inner: usize = axes[1..].iter().map(|a| a.values.len()).product();
    let numeric = first.values.iter().all(|v| v.x().is_some());
    let mut groups = Vec::new();
    let mut text = String::new();
    for g in 0..inner {
        // Points of this group, in order of the first key's values as given.
        let members: Vec<usize> = (0..first.values.len()).map(|i| i * inner + g).collect();
        let fixed: Map<String, Value> =
            axes[1..].iter().enumerate().map(|(k, a)| (a.key.clone(), points[g].vals[k + 1].json())).collect();
        let fixed_desc: Vec<String> =
            axes[1..].iter().enumerate().map(|(k, a)| format!("{}={}", a.key, points[g].vals[k + 1])).collect();
        // Order the x values (a range may run downwards).
        let mut order = members.clone();
        if numeric {
            order.sort_by(|&p, &q| points[p].vals[0].x().unwrap().total_cmp(&points[q].vals[0].x().unwrap()));
        }
        let mut fastest = Vec::new();
        for &p in &order {
            let best = variants
                .iter()
                .enumerate()
                .filter_map(|(vi, v)| cycles.get(&(p, vi)).filter(|c| c.is_finite()).map(|c| (*v, *c)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((v, c)) = best {
                fastest.push((p, v, c));
            }
        }
        let curves_json: Map<String, Value> = variants
            .iter()
            .enumerate()
            .map(|(vi, v)| {
                let pts: Vec<Value> = order
                    .iter()
                    .filter_map(|&p| cycles.get(&(p, vi)).map(|c| json!([points[p].vals[0].json(), c])))
                    .collect();
                (v.to_string(), Value::Array(pts))
            })
            .collect();
        let found: Vec<Crossover> = if numeric {
            let curves: Vec<(String, Vec<(f64, f64)>)> = variants
                .iter()
                .enumerate()
                .map(|(vi, v)| {
                    let pts = order
                        .iter()
                        .filter_map(|&p| cycles.get(&(p, vi)).map(|c| (points[p].vals[0].x().unwrap(), *c)))
                        .collect();
                    (v.to_string(), pts)
                })
                .collect();
            crossovers(&curves)
        } else {
            Vec::new()
        };

        if !fixed_desc.is_empty() {
            text.push_str(&format!("{}:\n", fixed_desc.join(" ")));
        }
        match (fastest.first(), fastest.last()) {
            (Some(lo), Some(hi)) => text.push_str(&format!(
                "  fastest at {}={}: {} ({} cycles); at {}={}: {} ({} cycles)\n",
                first.key,
                points[lo.0].vals[0],
                lo.1,
                num(lo.2),
                first.key,
                points[hi.0].vals[0],
                hi.1,
                num(hi.2)
            )),
            _ => text.push_str("  no results\n"),
        }
        if !numeric {
            text.push_str(&format!("  (no crossovers: `{}` is not numeric)\n", first.key));
        } else if found.is_empty() {
            text.push_str("  no crossovers in cycles\n");
        } else {
            for c in &found {
                text.push_str(&format!(
                    "  crossover: {} and {} change order at {}={} ({} cycles)\n",
                    c.a,
                    c.b,
                    first.key,
                    num(c.x),
                    num(c.y)
                ));
            }
        }
        groups.push(json!({
            "fixed": fixed,
            "curves": curves_json,
            "fastest": fastest.iter().map(|(p, v, c)| json!({"x": points[*p].vals[0].json(), "variant": v, "cycles": c})).collect::<Vec<_>>(),
            "crossovers": found,
        }));
    }
    let json = json!({
        "app": app,
        "machine": meta.machine,
        "procs": meta.procs,
        "seed": meta.seed,
        "params": args.param,
        "set": args.set,
        "variants": variants,
        "vary": axes.iter().map(|a| json!({"key": a.key, "values": a.values.iter().map(Val::json).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "x": first.key,
        "metric": "cycles",
        "groups": groups,
        "failed": failed,
    });
    Summary { json, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(kind: Kind, spec: &str) -> Result<Vec<Val>, String> {
        parse_values("k", kind, spec).map_err(|f| f.message)
    }

    #[test]
    fn linear_and_log_ranges() {
        assert_eq!(vals(Kind::Float, "0:1:5").unwrap(), [0.0, 0.25, 0.5, 0.75, 1.0].map(Val::Float).to_vec());
        assert_eq!(vals(Kind::Float, "0:1:11").unwrap()[3], Val::Float(0.3));
        assert_eq!(vals(Kind::Float, "1:100:3:log").unwrap(), [1.0, 10.0, 100.0].map(Val::Float).to_vec());
        assert_eq!(vals(Kind::Float, "8:0:3").unwrap(), [8.0, 4.0, 0.0].map(Val::Float).to_vec());
    }

    #[test]
    fn integer_ranges_round_and_dedupe() {
        assert_eq!(vals(Kind::Int, "1:2:4").unwrap(), vec![Val::Int(1), Val::Int(2)]);
        assert_eq!(vals(Kind::Int, "1:16:5:log").unwrap(), [1, 2, 4, 8, 16].map(Val::Int).to_vec());
        assert_eq!(vals(Kind::Int, "10,20,1e2").unwrap(), [10, 20, 100].map(Val::Int).to_vec());
        assert!(vals(Kind::Int, "1,2.5").unwrap_err().contains("whole number"));
        assert!(vals(Kind::Int, "0.5:4:3").unwrap_err().contains("whole number"));
    }

    #[test]
    fn bad_specs() {
        for (spec, needle) in [
            ("1:2:0", "empty range"),
            ("1:2:1", "at least 2 steps"),
            ("", "empty list"),
            ("1,,2", "empty value"),
            ("0:4:3:log", "greater than 0"),
            ("a:2:3", "not a number"),
            ("1:2:x", "not a whole number"),
            ("1:2", "a:b:steps"),
            ("1:2:3:cubic", "unknown spacing"),
            ("3:3:4", "equal"),
            ("1,2,1", "twice"),
        ] {
            let e = vals(Kind::Float, spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
        assert!(vals(Kind::Text, "1:2:3").unwrap_err().contains("text"));
        assert_eq!(vals(Kind::Text, "mesh, torus").unwrap(), vec![Val::Text("mesh".into()), Val::Text("torus".into())]);
    }

    #[test]
    fn floats_pass_to_set_and_param_as_toml_numbers() {
        assert_eq!(Val::Float(2.0).arg(), "2.0");
        assert_eq!(Val::Float(1e-7).arg(), "1e-7");
        assert_eq!(Val::Int(62).arg(), "62");
        assert_eq!(num(0.30000000000000004), "0.3");
        assert_eq!(num(12345.0), "12345");
    }
}
