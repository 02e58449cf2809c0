//! The simulations a study needs: each one a [`RunSpec`] (machine, overrides, processors, app,
//! variant, parameters), run on `--jobs` threads and appended to `DIR/runs.jsonl` as each
//! finishes, so an interrupted reproduction loses nothing and `--resume` skips what is there.
//! The report is computed from [`Results`], looked up by spec, never from the order runs
//! finished in, so it does not depend on `--jobs`.

use super::progress::Progress;
use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::record::{ResultRecord, RunMeta};
use commlab_apps::AppError;
use commlab_sim::Simulator;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

/// One simulation: `app [variant]` with `params` on `machine` changed by `set`, resized to
/// `procs` processors when given.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RunSpec {
    pub machine: String,
    pub set: Vec<String>,
    pub procs: Option<usize>,
    pub app: String,
    pub variant: String,
    pub params: Vec<String>,
}

impl RunSpec {
    pub fn new(machine: &str, app: &str, variant: &str) -> RunSpec {
        RunSpec {
            machine: machine.to_string(),
            set: Vec::new(),
            procs: None,
            app: app.to_string(),
            variant: variant.to_string(),
            params: Vec::new(),
        }
    }

    pub fn set(mut self, kv: impl Into<String>) -> RunSpec {
        self.set.push(kv.into());
        self
    }

    pub fn param(mut self, kv: impl Into<String>) -> RunSpec {
        self.params.push(kv.into());
        self
    }

    pub fn params(mut self, kvs: &[String]) -> RunSpec {
        self.params.extend(kvs.iter().cloned());
        self
    }

    pub fn procs(mut self, n: usize) -> RunSpec {
        self.procs = Some(n);
        self
    }

    /// As a command line: what a user types to rerun it alone.
    pub fn command(&self) -> String {
        let mut c = format!("commlab run {} --machine {} --variant {}", self.app, self.machine, self.variant);
        if let Some(n) = self.procs {
            c.push_str(&format!(" --procs {n}"));
        }
        for s in &self.set {
            c.push_str(&format!(" --set {s}"));
        }
        for p in &self.params {
            c.push_str(&format!(" --param {p}"));
        }
        c
    }

    /// The key that identifies the run in `runs.jsonl` (its command line).
    fn key(&self) -> String {
        self.command()
    }
}

/// What a run gave: its record, or why it has none.
pub(crate) type Outcome = Result<ResultRecord, String>;

/// Every run's outcome, by spec.
#[derive(Default)]
pub(crate) struct Results {
    runs: BTreeMap<RunSpec, Outcome>,
}

impl Results {
    /// The run's record, or why there is none ("not run" when the plan did not include it).
    pub fn get(&self, spec: &RunSpec) -> Result<&ResultRecord, String> {
        match self.runs.get(spec) {
            Some(Ok(r)) => Ok(r),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("not run: {}", spec.command())),
        }
    }

    /// Runs that failed or whose answer check failed, with why.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (spec, o) in &self.runs {
            match o {
                Err(e) => out.push(format!("{}: {e}", spec.command())),
                Ok(r) if !r.check.ok => {
                    out.push(format!("{}: answer check failed: {}", spec.command(), r.check.detail))
                }
                Ok(_) => {}
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn insert(&mut self, spec: RunSpec, o: Outcome) {
        self.runs.insert(spec, o);
    }
}

/// A run's machine fingerprint (what a resumed record must match) or the error that stops the
/// plan: every run's machine is built before anything runs, so a bad key is found at once.
fn fingerprint(spec: &RunSpec, user_set: &[String]) -> Result<String, Failure> {
    let set: Vec<String> = user_set.iter().chain(&spec.set).cloned().collect();
    machine_arg::load(&spec.machine, &set, spec.procs).map(|c| c.fingerprint())
}

/// One line of `runs.jsonl`.
fn line(spec: &RunSpec, fingerprint: &str, o: &Outcome) -> String {
    let v = match o {
        Ok(r) => json!({ "run": spec.key(), "fingerprint": fingerprint, "record": r }),
        Err(e) => json!({ "run": spec.key(), "fingerprint": fingerprint, "error": e }),
    };
    v.to_string() + "\n"
}

/// The records of an earlier, interrupted reproduction in `path` that still match (same run,
/// same machine fingerprint): a torn last line is dropped, failed runs are run again.
fn read_done(path: &Path, want: &BTreeMap<String, (RunSpec, String)>) -> Result<Vec<(RunSpec, ResultRecord)>, Failure> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(input(format!("cannot read `{}`: {e}", path.display()))),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let v: Value = match serde_json::from_str(l) {
            Ok(v) => v,
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break, // torn by an interruption
            Err(e) => return Err(input(format!("`{}` line {}: not a reproduce run: {e}", path.display(), i + 1))),
        };
        let (Some(key), Some(fp)) = (v["run"].as_str(), v["fingerprint"].as_str()) else {
            return Err(input(format!("`{}` line {}: not a reproduce run (no `run`)", path.display(), i + 1)));
        };
        let Some((spec, want_fp)) = want.get(key) else { continue };
        if want_fp != fp || v.get("record").is_none() {
            continue;
        }
        let r: ResultRecord = serde_json::from_value(v["record"].clone())
            .map_err(|e| input(format!("`{}` line {}: bad record: {e}", path.display(), i + 1)))?;
        out.push((spec.clone(), r));
    }
    Ok(out)
}

/// Run one spec (the user's `--set` first, then the run's own).
fn run_one(spec: &RunSpec, user_set: &[String]) -> Outcome {
    let set: Vec<String> = user_set.iter().chain(&spec.set).cloned().collect();
    let cfg = machine_arg::load(&spec.machine, &set, spec.procs).map_err(|f| f.message)?;
    let sim = Simulator::new(cfg.clone());
    let r = commlab_apps::run_app(&sim, &spec.app, &spec.variant, &spec.params, 1).map_err(|e| match e {
        AppError::Input(m) | AppError::Run(m) => m,
    })?;
    let (name, fp) = (cfg.spec.name.clone(), cfg.fingerprint());
    let meta = RunMeta { machine: &name, fingerprint: &fp, overrides: &set, procs: cfg.nprocs(), seed: 1 };
    Ok(ResultRecord::of_run(&r, &meta))
}

/// Run `specs` (duplicates once) on `jobs` threads, appending each to `DIR/runs.jsonl`;
/// with `resume`, records already there for the same run and machine are reused.
pub(crate) fn execute(
    specs: &[RunSpec],
    user_set: &[String],
    dir: &Path,
    resume: bool,
    jobs: usize,
    progress: &mut Progress,
) -> Result<Results, Failure> {
    let unique: BTreeSet<&RunSpec> = specs.iter().collect();
    let mut want = BTreeMap::new();
    for s in &unique {
        want.insert(s.key(), ((*s).clone(), fingerprint(s, user_set)?));
    }
    let path = dir.join("runs.jsonl");
    let done = if resume { read_done(&path, &want)? } else { Vec::new() };
    let mut results = Results::default();
    for (spec, r) in done {
        results.insert(spec, Ok(r));
    }
    // The records kept are written anew, so that runs.jsonl holds exactly this plan's runs.
    let mut file =
        std::fs::File::create(&path).map_err(|e| input(format!("cannot write `{}`: {e}", path.display())))?;
    for (spec, o) in &results.runs {
        file.write_all(line(spec, &want[&spec.key()].1, o).as_bytes())
            .map_err(|e| failed(format!("writing `{}`: {e}", path.display())))?;
    }
    let todo: Vec<(RunSpec, String)> = want.into_values().filter(|(s, _)| !results.runs.contains_key(s)).collect();
    progress.start(todo.len(), results.len());
    let todo = Arc::new(todo);
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
    let threads = jobs.clamp(1, todo.len().max(1));
    let user: Arc<Vec<String>> = Arc::new(user_set.to_vec());
    let mut handles = Vec::new();
    for _ in 0..threads {
        let (todo, next, tx, user) = (Arc::clone(&todo), Arc::clone(&next), tx.clone(), Arc::clone(&user));
        handles.push(std::thread::spawn(move || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((spec, _)) = todo.get(i) else { break };
            let o = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_one(spec, &user)))
                .unwrap_or_else(|_| Err("the simulation panicked (a bug: please report it)".to_string()));
            if tx.send((i, o)).is_err() {
                break;
            }
        }));
    }
    drop(tx);
    let mut write_error = None;
    for (i, o) in rx {
        let (spec, fp) = &todo[i];
        if write_error.is_none() {
            if let Err(e) = file.write_all(line(spec, fp, &o).as_bytes()).and_then(|_| file.flush()) {
                write_error = Some(failed(format!("writing `{}`: {e}", path.display())));
            }
        }
        progress.done(&spec.command());
        results.insert(spec.clone(), o);
    }
    for h in handles {
        let _ = h.join();
    }
    progress.finish();
    match write_error {
        Some(e) => Err(e),
        None => Ok(results),
    }
}
