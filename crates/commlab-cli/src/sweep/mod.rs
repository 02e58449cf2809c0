//! `commlab sweep`: run an application over a grid of machine keys and app parameters.
//!
//! Flow: resolve each `--vary KEY=SPEC` (an app parameter first, else a machine key; its type comes
//! from the parameter's default or the machine's current value) ─▶ values ─▶ grid (cartesian
//! product, first `--vary` outermost; counted first, at most [`MAX_RUNS`] runs, and never
//! materialized: a point is an index) ─▶ the output directory ─▶ every point's machine is built and
//! checked, one at a time, before anything runs ─▶ (point, variant) runs, in parallel with
//! `--jobs`, each appended to `DIR/results.jsonl` (flushed per line) as it finishes ─▶
//! `DIR/summary.json` (per combination of the other keys: the curves of `cycles` along the first
//! key, the fastest variant at each x, and the crossovers) and a short text summary on stdout.
//!
//! Each run is an independent deterministic simulation, so results do not depend on `--jobs`
//! (only the `sim` wall-clock fields and the order of lines do).
//!
//! `plan` makes the grid (`Grid`), the checks and what the results file holds (the runs left);
//! `execute` runs them (`--jobs N` worker threads over a shared index) and `finish` writes only
//! the summary, so `embed` can hand the runs out elsewhere. A point is identified by its vary
//! values and variant, so `--resume` skips what is there and redoes a torn last line; a bad line
//! before the last is refused. The grid is recorded in `DIR/sweep.json`, and a resume whose grid
//! lacks a point already in the file is refused, naming both grids. Submodules: `axis` (the
//! `--vary` grammar), `summary`, `stats` (`--stats` per run), `progress`.

mod args;
mod axis;
mod grid;
mod progress;
pub mod stats;
mod summary;

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::record::{self, ResultRecord, RunMeta};
pub use args::{SweepArgs, LONG_ABOUT, MAX_RUNS};
use axis::{num, Axis, Target, Val};
use commlab_apps::{AppError, Params};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use grid::Grid;
use progress::Progress;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// One grid point built: what it means for the run.
struct Point {
    cfg: MachineConfig,
    params: Vec<String>,
    /// The "vary" object written with each result.
    vary: Map<String, Value>,
    /// `vary` as canonical text, to recognise the point in an existing results file.
    ident: String,
}

/// Count a grid before building it: refuse one of more than [`MAX_RUNS`] runs, naming the count.
fn check_size(axes: &[Axis], variants: usize) -> Result<(), Failure> {
    let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
    let points = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    let runs = points.and_then(|p| p.checked_mul(variants.max(1)));
    match runs {
        Some(r) if r <= MAX_RUNS => Ok(()),
        _ => {
            let count = |n: Option<usize>| n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
            Err(input(format!(
                "the --vary grid has {} = {} points x {variants} variants = {} runs, more than a sweep's limit of {MAX_RUNS} runs; give fewer steps or values (or several sweeps)",
                sizes.join(" x "),
                count(points),
                count(runs)
            )))
        }
    }
}

/// Build point `p` of the grid: its machine (checked), parameters and memory estimate.
fn build_point(
    args: &SweepArgs,
    info: &'static commlab_apps::AppInfo,
    grid: &Grid,
    p: usize,
) -> Result<Point, Failure> {
    let mut set = args.set.clone();
    let mut params = args.param.clone();
    let mut procs = args.procs;
    let mut vary = Map::new();
    for (k, a) in grid.axes.iter().enumerate() {
        let v = grid.val(p, k);
        let kv = format!("{}={}", a.key, v.arg());
        match (a.target, &v) {
            (Target::Machine, _) => set.push(kv),
            (Target::Param, _) => params.push(kv),
            (Target::Procs, Val::Int(n)) => procs = Some(*n as usize),
            (Target::Procs, _) => unreachable!("procs values are checked to be whole numbers"),
        }
        vary.insert(a.key.clone(), v.json());
    }
    let desc = grid.describe(p);
    let cfg = machine_arg::load(&args.machine, &set, procs)
        .map_err(|f| input(format!("--vary at point {p} ({desc}): {}", f.message)))?;
    Params::parse(info, &params).map_err(|e| input(format!("--vary at point {p} ({desc}): {e}")))?;
    crate::memory_check::check(info.name, &params, &Simulator::new(cfg.clone()), args.max_memory)
        .map_err(|f| input(format!("--vary at point {p} ({desc}): {}", f.message)))?;
    Ok(Point { cfg, params, ident: canonical(Some(&vary)), vary })
}

/// `vary` as text that is the same whether it was just built or read back from a file (floats
/// go through the same serialize-parse-serialize path either way).
fn canonical(v: Option<&Map<String, Value>>) -> String {
    let once = serde_json::to_string(&v).expect("JSON values serialize");
    serde_json::from_str::<Value>(&once).map(|v| v.to_string()).unwrap_or(once)
}

/// Check that `dir` is (or can be made) a writable directory, and create it; returns the
/// directories it made, innermost first (removed again if the sweep is refused before running).
fn prepare_dir(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let fail = |why: String| {
        input(format!(
            "cannot write --out `{}`: {why} (give a writable directory for results.jsonl and summary.json)",
            dir.display()
        ))
    };
    if dir.exists() && !dir.is_dir() {
        return Err(fail("it exists and is not a directory".to_string()));
    }
    let made: Vec<PathBuf> =
        dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).map(Path::to_path_buf).collect();
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create the directory: {e}")))?;
    let probe = dir.join(format!(".commlab-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(format!("the directory is not writable: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    let results = dir.join("results.jsonl");
    if results.is_dir() {
        return Err(fail(format!("`{}` is a directory", results.display())));
    }
    Ok(made)
}

/// Remove the directories `prepare_dir` made, innermost first, as long as they are empty.
fn unmake_dirs(made: &[PathBuf]) {
    for d in made {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}

/// What an existing results file already holds.
struct Existing {
    /// (canonical vary, variant) -> the run's record.
    done: HashMap<(String, String), ResultRecord>,
    /// Each point's "vary" in the file, with the first line it is on.
    points: BTreeMap<String, (usize, Option<Map<String, Value>>)>,
    /// Bytes of the file up to the end of its last complete line.
    good_len: u64,
    /// The file ended with an incomplete line (dropped and redone).
    truncated: bool,
}

/// Read an existing results file (`--resume`): every run in it must be of this sweep's app,
/// machine, processor count (unless `procs` is varied), seed and `--set` overrides (each
/// point's machine fingerprint, which the processor count changes, is checked where the point
/// is matched).
fn read_existing(path: &Path, text: &[u8], app: &str, want: &RunMeta, procs_varied: bool) -> Result<Existing, Failure> {
    let file = record::read_appendable(text).map_err(|bad| {
        input(format!("{}; the file is damaged (repair or move it, or use another --out)", bad.message(path)))
    })?;
    let mut done = HashMap::new();
    let mut points = BTreeMap::new();
    for record::Numbered { line: line_no, record: r } in file.records {
        let same =
            r.app == app && r.machine == want.machine && (procs_varied || r.procs == want.procs) && r.seed == want.seed;
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
        let ident = canonical(r.vary.as_ref());
        points.entry(ident.clone()).or_insert_with(|| (line_no, r.vary.clone()));
        done.insert((ident, r.variant.clone()), r);
    }
    Ok(Existing { done, points, good_len: file.complete_len, truncated: file.torn })
}

/// The file beside `results.jsonl` that records the sweep's grid.
const GRID_FILE: &str = "sweep.json";

/// The grid as recorded in `sweep.json`: each `--vary` as given and its values.
fn grid_json(grid: &Grid, vary: &[String]) -> Value {
    let axes: Vec<Value> = grid
        .axes
        .iter()
        .zip(vary)
        .map(|(a, given)| json!({"key": a.key, "vary": given, "values": a.values.iter().map(Val::json).collect::<Vec<_>>()}))
        .collect();
    json!({ "grid": axes })
}

/// The keys and values of a recorded or built grid, comparable as text.
fn grid_values(g: &Value) -> Vec<(String, Vec<String>)> {
    g["grid"]
        .as_array()
        .map(|axes| {
            axes.iter()
                .map(|a| {
                    let values = a["values"].as_array().map(|v| v.iter().map(canonical_value).collect());
                    (a["key"].as_str().unwrap_or("").to_string(), values.unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn canonical_value(v: &Value) -> String {
    let once = v.to_string();
    serde_json::from_str::<Value>(&once).map(|v| v.to_string()).unwrap_or(once)
}

/// `--resume` continues the same grid, or one that contains it (more values of the same keys):
/// every point in the results file must be a point of this grid, else the sweep is refused,
/// naming the grid the file was run with (from `sweep.json`) and this one. (A `10:1000:6:log`
/// sweep resumed as `10:1000:7:log` used to leave records of two grids, whose summary and plot
/// disagreed.)
fn same_grid(
    grid_path: &Path,
    results_path: &Path,
    grid: &Grid,
    vary: &[String],
    existing: &Existing,
) -> Result<(), Failure> {
    let this = grid_json(grid, vary);
    let given = |g: &Value| -> String {
        g["grid"]
            .as_array()
            .map(|a| {
                a.iter().map(|x| format!("--vary {}", x["vary"].as_str().unwrap_or("?"))).collect::<Vec<_>>().join(" ")
            })
            .unwrap_or_default()
    };
    let recorded: Option<Value> = match std::fs::read_to_string(grid_path) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
            input(format!(
                "`{}` is not a sweep's grid ({e}); repair or move it, or use another --out",
                grid_path.display()
            ))
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(input(format!("cannot read `{}`: {e}", grid_path.display()))),
    };
    let axes = grid_values(&this);
    let mut in_file: Vec<&(usize, Option<Map<String, Value>>)> = existing.points.values().collect();
    in_file.sort_by_key(|(line, _)| *line);
    for (line, vary) in in_file {
        let empty = Map::new();
        let vary = vary.as_ref().unwrap_or(&empty);
        let member = vary.len() == axes.len()
            && axes.iter().all(|(k, values)| vary.get(k).is_some_and(|v| values.contains(&canonical_value(v))));
        if member {
            continue;
        }
        let was = match &recorded {
            Some(g) => format!(" of {} ({})", given(g), grid_path.display()),
            None => String::new(),
        };
        return Err(input(format!(
            "`{}` holds a sweep{was} whose line {line} is at {}, not a point of this sweep's grid ({}); resuming would mix two grids: give the --vary it was run with (or more values of the same keys), or use another --out",
            results_path.display(),
            Value::Object(vary.clone()),
            given(&this)
        )));
    }
    Ok(())
}

/// A sweep's grid, checked, and what its results file already holds.
pub(crate) struct Plan {
    info: &'static commlab_apps::AppInfo,
    variants: Vec<&'static str>,
    grid: Grid,
    machine_name: String,
    fingerprint: String,
    procs: usize,
    /// The most processors of any point.
    largest_procs: usize,
    /// Runs at once: --jobs (default: the cores), fewer if the largest point's memory
    /// estimate times as many runs would not fit.
    jobs: usize,
    pub(crate) results_path: PathBuf,
    summary_path: PathBuf,
    /// `DIR/sweep.json`: the grid the results file holds points of.
    grid_path: PathBuf,
    existing: Existing,
    /// (point, variant) -> cycles of the runs already in the results file.
    cycles: BTreeMap<(usize, usize), f64>,
    /// The (point, variant) runs still to do, in grid order.
    todo: Vec<(usize, usize)>,
}

impl Plan {
    fn meta<'a>(&'a self, args: &'a SweepArgs) -> RunMeta<'a> {
        RunMeta {
            machine: &self.machine_name,
            fingerprint: &self.fingerprint,
            overrides: &args.set,
            procs: self.procs,
            seed: args.seed,
        }
    }

    pub(crate) fn total_runs(&self) -> usize {
        self.grid.len() * self.variants.len()
    }

    /// The results file opened for appending, an incomplete last line dropped, and the grid
    /// recorded beside it (`sweep.json`) for a later `--resume` to compare.
    pub(crate) fn open_results(&self, args: &SweepArgs) -> Result<std::fs::File, Failure> {
        let text = serde_json::to_string_pretty(&grid_json(&self.grid, &args.vary)).expect("a grid serializes") + "\n";
        std::fs::write(&self.grid_path, text)
            .map_err(|e| failed(format!("writing `{}`: {e}", self.grid_path.display())))?;
        let path = &self.results_path;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| input(format!("cannot write `{}`: {e}", path.display())))?;
        if self.existing.truncated {
            file.set_len(self.existing.good_len).map_err(|e| failed(format!("writing `{}`: {e}", path.display())))?;
        }
        Ok(file)
    }

    /// What a `--resume` notes before running.
    pub(crate) fn resume_note(&self) -> Option<String> {
        let resumed = self.total_runs() - self.todo.len();
        (resumed > 0 || self.existing.truncated).then(|| {
            format!(
                "resuming: {resumed} of {} runs already in {}{}",
                self.total_runs(),
                self.results_path.display(),
                if self.existing.truncated { " (an incomplete last line was dropped and will be redone)" } else { "" }
            )
        })
    }

    /// The runs still to do, each self-contained (the machine travels as its resolved TOML).
    pub(crate) fn tasks(&self, args: &SweepArgs) -> Result<Vec<Task>, Failure> {
        let mut out = Vec::with_capacity(self.todo.len());
        let mut built: Option<(usize, Point)> = None;
        // Absolute: a task may run in another process, elsewhere.
        let dir = self.results_path.parent().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()));
        for &(p, vi) in &self.todo {
            if built.as_ref().is_none_or(|(q, _)| *q != p) {
                built = Some((p, build_point(args, self.info, &self.grid, p)?));
            }
            let pt = &built.as_ref().expect("built").1;
            out.push(Task {
                app: self.info.name.to_string(),
                machine_toml: toml_of(&pt.cfg),
                machine_fingerprint: pt.cfg.fingerprint(),
                overrides: args.set.clone(),
                params: pt.params.clone(),
                variant: self.variants[vi].to_string(),
                seed: args.seed,
                point: p,
                vary: pt.vary.clone(),
                what: format!("{} [{}] {}", self.info.name, self.variants[vi], self.grid.describe(p)),
                stats: args.stats.clone(),
                out: dir.clone(),
            });
        }
        Ok(out)
    }
}

/// A resolved machine as TOML text that loads back into the same machine (same fingerprint).
fn toml_of(cfg: &MachineConfig) -> String {
    cfg.spec.to_toml()
}

/// One (point, variant) run of a sweep as plain data, so that another process or host (a Dask
/// worker) can run it with nothing but commlab installed: [`run_task`].
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Task {
    pub app: String,
    /// The point's resolved machine (overrides, resizing and varied keys applied).
    pub machine_toml: String,
    /// Its fingerprint: [`run_task`] checks the machine it rebuilds has the same.
    pub machine_fingerprint: String,
    /// The sweep's `--set` overrides, as its records carry them.
    pub overrides: Vec<String>,
    /// The point's app parameters, `--param` and varied ones.
    pub params: Vec<String>,
    pub variant: String,
    pub seed: u64,
    pub point: usize,
    pub vary: Map<String, Value>,
    /// "app [variant] key=value ...", for messages.
    pub what: String,
    /// `--stats` kinds to keep, and the sweep's directory their files go under (by the
    /// process that runs the task).
    #[serde(default)]
    pub stats: Vec<String>,
    #[serde(default)]
    pub out: Option<PathBuf>,
}

/// Run one task: the record `commlab sweep` appends for it. A failed answer check is in the
/// record (`check.ok`); a failed run is an error naming the point.
pub fn run_task(task: &Task) -> Result<ResultRecord, Failure> {
    let cfg = MachineConfig::load(&task.machine_toml, &task.what, &[], None)
        .map_err(|e| input(format!("{}: {e}", task.what)))?;
    if cfg.fingerprint() != task.machine_fingerprint {
        return Err(input(format!(
            "{}: the machine's fingerprint is {} where the task says {} (a different commlab version?)",
            task.what,
            cfg.fingerprint(),
            task.machine_fingerprint
        )));
    }
    let stats = match &task.out {
        Some(dir) if !task.stats.is_empty() => stats::PointStats::new(&task.stats, dir)?,
        _ => stats::PointStats::default(),
    };
    let run =
        PointRun { app: &task.app, params: &task.params, seed: task.seed, overrides: &task.overrides, stats: &stats };
    run.run(&cfg, &task.variant, task.point, &task.vary).map_err(|e| match e {
        AppError::Input(m) => input(format!("{}: {m}", task.what)),
        AppError::Run(m) => failed(format!("{}: {m}", task.what)),
    })
}

/// What every run of a sweep shares.
struct PointRun<'a> {
    app: &'a str,
    params: &'a [String],
    seed: u64,
    overrides: &'a [String],
    stats: &'a stats::PointStats,
}

impl PointRun<'_> {
    /// One (point, variant) run and its record; its `--stats` files written.
    fn run(
        &self,
        cfg: &MachineConfig,
        variant: &str,
        point: usize,
        vary: &Map<String, Value>,
    ) -> Result<ResultRecord, AppError> {
        let sim = self.stats.simulator(cfg.clone());
        let r = commlab_apps::run_app(&sim, self.app, variant, self.params, self.seed)?;
        self.stats.write(&r, point, vary).map_err(|f| AppError::Run(f.message))?;
        let (name, fingerprint) = (cfg.spec.name.clone(), cfg.fingerprint());
        let meta = RunMeta {
            machine: &name,
            fingerprint: &fingerprint,
            overrides: self.overrides,
            procs: cfg.nprocs(),
            seed: self.seed,
        };
        Ok(ResultRecord { point: Some(point), vary: Some(vary.clone()), ..ResultRecord::of_run(&r, &meta) })
    }
}

/// What a sweep did: the line and summary `commlab sweep` prints, and the runs that failed or
/// failed their check.
pub struct Report {
    pub line: String,
    pub text: String,
    pub problems: Vec<String>,
}

impl Report {
    /// Exit status 1 naming every problem, if there is one.
    pub fn outcome(&self) -> Result<(), Failure> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(failed(format!("{} runs failed: {}", self.problems.len(), self.problems.join("; "))))
        }
    }
}

pub fn run(args: SweepArgs) -> Result<(), Failure> {
    let report = execute(&args)?;
    println!("{}", report.line);
    if !args.quiet {
        print!("{}", report.text);
    }
    report.outcome()
}

/// The variants `spec` names: `all` (those the machine `cfg` can run), one variant or several
/// separated by commas; each once, in the app's order.
pub(crate) fn select_variants(
    info: &'static commlab_apps::AppInfo,
    spec: &str,
    cfg: &MachineConfig,
) -> Result<Vec<&'static str>, AppError> {
    let sim = Simulator::new(cfg.clone());
    let mut named = Vec::new();
    for v in spec.split(',') {
        named.extend(commlab_apps::variants_on(&sim, info, v.trim())?);
    }
    Ok(info.variants.iter().copied().filter(|v| named.contains(v)).collect())
}

/// Check a sweep and read what its results file holds, without running anything: the grid is
/// counted (and refused above [`MAX_RUNS`]) before anything is built, the output directory is
/// made, then every point's machine is built and checked, one point at a time.
pub(crate) fn plan(args: &SweepArgs) -> Result<Plan, Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    crate::variant_arg::check_variant_names(info, &args.variant)?;
    Params::parse(info, &args.param).map_err(|e| input(e.to_string()))?;
    stats::parse_kinds(&args.stats)?;
    let base = machine_arg::load(&args.machine, &args.set, args.procs)?;
    let variants = select_variants(info, &args.variant, &base).map_err(|e| input(e.to_string()))?;
    let axes = axis::axes(args, info)?;
    check_not_fixed(args, &axes)?;
    check_size(&axes, variants.len())?;
    let grid = Grid::new(axes);

    // The output directory and what it already holds.
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("sweep-{}", info.name)));
    let made = prepare_dir(&dir)?;
    let results_path = dir.join("results.jsonl");
    let existing_text = match crate::alloc_failure::fallible(|| std::fs::read(&results_path)) {
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
    let procs_varied = grid.axes.iter().any(|a| a.target == Target::Procs);
    let existing = read_existing(&results_path, &existing_text, info.name, &meta, procs_varied)?;
    let grid_path = dir.join(GRID_FILE);
    if !existing.points.is_empty() {
        same_grid(&grid_path, &results_path, &grid, &args.vary, &existing)?;
    }

    // Every point built and checked, one at a time; (point, variant) -> cycles from the file.
    let mut checking = progress::Checking::new(
        args.silent,
        &format!(
            "sweep {}: {} points x {} variants = {} runs",
            info.name,
            grid.len(),
            variants.len(),
            grid.len() * variants.len()
        ),
        grid.len(),
    );
    let mut cycles: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let mut todo: Vec<(usize, usize)> = Vec::new();
    let mut largest_procs = 1;
    let mut jobs = crate::run::jobs_asked(args.jobs);
    for p in 0..grid.len() {
        let pt = build_point(args, info, &grid, p).inspect_err(|_| unmake_dirs(&made))?;
        largest_procs = largest_procs.max(pt.cfg.nprocs());
        if jobs > 1 {
            let sim = Simulator::new(pt.cfg.clone());
            jobs = crate::memory_check::runs_that_fit(info.name, &pt.params, &sim, args.max_memory, jobs);
        }
        for (vi, v) in variants.iter().enumerate() {
            match existing.done.get(&(pt.ident.clone(), v.to_string())) {
                Some(r) => {
                    let expected = Params::parse(info, &pt.params).map_err(|e| input(e.to_string()))?.resolved();
                    if r.params != expected {
                        return Err(input(format!(
                            "`{}` holds point {} [{v}] run with params {}, but this sweep has {}; use another --out",
                            results_path.display(),
                            grid.describe(p),
                            json!(r.params),
                            json!(expected)
                        )));
                    }
                    let want = pt.cfg.fingerprint();
                    if r.machine_fingerprint.as_deref() != Some(want.as_str()) {
                        return Err(input(format!(
                            "`{}` holds point {} [{v}] run on machine {} (fingerprint {}), but this sweep's machine there has fingerprint {want} (the machine file or a key changed); resuming would mix two machines, use another --out",
                            results_path.display(),
                            grid.describe(p),
                            json!(r.machine),
                            json!(r.machine_fingerprint),
                        )));
                    }
                    cycles.insert((p, vi), r.cycles);
                }
                None => todo.push((p, vi)),
            }
        }
        checking.checked(p + 1);
    }

    let summary_path = dir.join("summary.json");
    Ok(Plan {
        grid_path,
        info,
        variants,
        grid,
        procs: base.nprocs(),
        largest_procs,
        jobs,
        machine_name,
        fingerprint,
        results_path,
        summary_path,
        existing,
        cycles,
        todo,
    })
}

/// A key both varied and fixed would silently take the varied values: refused.
fn check_not_fixed(args: &SweepArgs, axes: &[Axis]) -> Result<(), Failure> {
    for a in axes {
        let fixed = match a.target {
            Target::Param => &args.param,
            Target::Machine => &args.set,
            Target::Procs => match args.procs {
                Some(n) => {
                    return Err(input(format!(
                        "`procs` is both varied (--vary procs=...) and fixed (--procs {n}); give it in one place"
                    )))
                }
                None => continue,
            },
        };
        let flag = if a.target == Target::Param { "--param" } else { "--set" };
        if let Some(f) = fixed.iter().find(|kv| kv.split_once('=').is_some_and(|(k, _)| k.trim() == a.key)) {
            return Err(input(format!(
                "`{}` is both varied (--vary {}=...) and fixed ({flag} {f}); give it in one place",
                a.key, a.key
            )));
        }
    }
    Ok(())
}

/// Run what a sweep has left to do, appending each record to its results file, then write its
/// summary. `finished_elsewhere`: the runs were done by someone else (Dask workers) and are in
/// the file, except those that failed, given with their messages; nothing runs here.
pub(crate) fn execute(args: &SweepArgs) -> Result<Report, Failure> {
    finish(args, None)
}

pub(crate) fn finish(args: &SweepArgs, finished_elsewhere: Option<Vec<String>>) -> Result<Report, Failure> {
    let mut plan = plan(args)?;
    let mut cycles = std::mem::take(&mut plan.cycles);
    let Plan { info, ref variants, ref grid, ref results_path, ref todo, .. } = plan;
    let meta = plan.meta(args);
    let resumed = plan.total_runs() - todo.len();
    let point_stats = match results_path.parent() {
        Some(dir) if !args.stats.is_empty() => stats::PointStats::new(&args.stats, dir)?,
        _ => stats::PointStats::default(),
    };
    let mut failed_runs: Vec<String> = Vec::new();
    let mut failed_checks: Vec<String> = Vec::new();
    let ran_here = finished_elsewhere.is_none();
    match finished_elsewhere {
        Some(failures) => failed_runs = failures,
        None => run_todo(args, &plan, &point_stats, &mut cycles, &mut failed_runs, &mut failed_checks)?,
    }

    // Summary along the first key, per combination of the others.
    let summary = summary::summarize(args, info.name, &meta, grid, variants, &cycles, &failed_runs);
    let summary_path = &plan.summary_path;
    let text = serde_json::to_string_pretty(&summary.json).expect("summary serializes");
    std::fs::write(summary_path, text + "\n")
        .map_err(|e| failed(format!("writing `{}`: {e}", summary_path.display())))?;
    let done = if ran_here {
        format!("{} run now, {resumed} already done", todo.len())
    } else {
        format!("{resumed} in the results file")
    };
    let line = format!(
        "sweep {}: {} points x {} variants = {} runs ({done}); results: {}; summary: {}",
        info.name,
        grid.len(),
        variants.len(),
        plan.total_runs(),
        results_path.display(),
        summary_path.display()
    );
    let mut problems = failed_runs;
    problems.extend(failed_checks);
    Ok(Report { line, text: summary.text, problems })
}

/// Run a sweep's remaining (point, variant) pairs on `plan.jobs` threads, appending each record to the
/// results file as it finishes; failed runs and failed answer checks are collected, not fatal.
fn run_todo(
    args: &SweepArgs,
    plan: &Plan,
    point_stats: &stats::PointStats,
    cycles: &mut BTreeMap<(usize, usize), f64>,
    failed_runs: &mut Vec<String>,
    failed_checks: &mut Vec<String>,
) -> Result<(), Failure> {
    let Plan { info, ref variants, ref grid, ref results_path, ref todo, .. } = *plan;
    let mut file = plan.open_results(args)?;
    let io_err = |e: std::io::Error| failed(format!("writing `{}`: {e}", results_path.display()));
    let mut progress =
        if args.silent { Progress::Silent } else { Progress::new(&format!("sweep {}", info.name), todo.len()) };
    if args.resume {
        if let Some(note) = plan.resume_note() {
            progress.note(&note);
        }
    }

    // Run: workers take (point, variant) pairs in order; this thread writes each result.
    let mut fatal: Option<Failure> = None;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // No more at once than the largest point's processors' stacks leave memory mappings for.
    let jobs = plan.jobs.min(todo.len()).min(crate::memory_check::runs_by_host_mappings(plan.largest_procs)).max(1);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Result<ResultRecord, Failure>)>();
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            let point_stats = &point_stats;
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, vi)) = todo.get(k) else { break };
                // The point was checked by `plan`; it is built again here, so that
                // no point is kept in memory before its run.
                let outcome = build_point(args, info, grid, p).and_then(|pt| {
                    crate::alloc_failure::running(&format!(
                        "{} [{}] at point {p} of the sweep ({})",
                        info.name,
                        variants[vi],
                        grid.describe(p)
                    ));
                    let run = PointRun {
                        app: info.name,
                        params: &pt.params,
                        seed: args.seed,
                        overrides: &args.set,
                        stats: point_stats,
                    };
                    run.run(&pt.cfg, variants[vi], p, &pt.vary).map_err(|e| match e {
                        AppError::Input(m) => input(m),
                        AppError::Run(m) => failed(m),
                    })
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
            let what = format!("{} [{v}] {}", info.name, grid.describe(p));
            match outcome {
                Ok(record) => {
                    let line = record.to_json_line();
                    if let Err(e) = file.write_all(line.as_bytes()).and_then(|_| file.flush()) {
                        fatal.get_or_insert(io_err(e));
                        stop.store(true, Ordering::Relaxed);
                        continue;
                    }
                    let (c, ok) = (record.cycles, record.check.ok);
                    cycles.insert((p, vi), c);
                    if !ok {
                        failed_checks.push(format!("{what}: answer check failed: {}", record.check.detail));
                    }
                    progress.done(&format!("{what}: {} cycles{}", num(c), if ok { "" } else { ", CHECK FAILED" }));
                }
                Err(f) if f.status == 1 => {
                    let m = f.message;
                    progress.note(&format!("run failed: {what}: {m}"));
                    failed_runs.push(format!("{what}: {m}"));
                    progress.done(&format!("{what}: FAILED"));
                }
                Err(f) => {
                    fatal.get_or_insert(input(format!("{what}: {}", f.message)));
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    });
    progress.finish();
    if let Some(f) = fatal {
        return Err(f);
    }
    Ok(())
}
