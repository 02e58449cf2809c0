//! commlab as functions, for a program that embeds it (the Python package, `python/`): the
//! same checks, runs, records and sweep files as the command line, returned as values instead
//! of printed. Errors are [`Failure`]s carrying the command line's one-line message and its
//! exit status (2: bad input, 1: a run failed).
//!
//! A sweep can also be handed out in pieces: [`sweep_plan`] checks it, prepares its results
//! file and returns the runs left to do as self-contained [`Task`]s; anyone with commlab runs a
//! task ([`run_task`]) into the record to append; [`sweep_finish`] writes the summary. The
//! records are those `commlab sweep` writes for the same grid, so the command line and a
//! distributed sweep can continue each other's results files. A `Task` carries its resolved
//! machine as TOML, so a Dask worker needs nothing but commlab; `run_task` refuses a task whose
//! rebuilt machine's fingerprint differs from the task's. `run` returns records in variant
//! order, through `run::in_variant_order` as `commlab run` does. Nothing here prints.

pub use crate::failure::Failure;
pub use crate::record::ResultRecord;
pub use crate::sweep::{run_task, Report, Task};

use crate::failure::{failed, input};
use crate::record::RunMeta;
use crate::sweep::SweepArgs;
use crate::{machine_arg, run};
use commlab_apps::AppError;
use commlab_sim::{RunControl, Simulator};
use std::path::PathBuf;
use std::sync::Arc;

/// The preset names.
pub fn machines() -> Vec<&'static str> {
    commlab_sim::machine::preset_names()
}

/// A machine resolved as `--machine`, `--set` and `--procs` resolve it, as the object
/// `commlab machine show --json` prints.
pub fn machine(machine: &str, set: &[String], procs: Option<usize>) -> Result<serde_json::Value, Failure> {
    crate::machines::to_json(&machine_arg::load(machine, set, procs)?)
}

/// A resolved machine as documented TOML (`commlab machine show`).
pub fn machine_toml(machine: &str, set: &[String], procs: Option<usize>) -> Result<String, Failure> {
    Ok(machine_arg::load(machine, set, procs)?.spec.to_documented_toml())
}

/// Every application as `commlab apps --json` prints it.
pub fn apps() -> Vec<serde_json::Value> {
    commlab_apps::APPS.iter().map(crate::apps::to_json).collect()
}

/// What `commlab run` is given.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub app: String,
    pub machine: String,
    pub set: Vec<String>,
    pub procs: Option<usize>,
    /// A variant, or `all`.
    pub variant: String,
    pub params: Vec<String>,
    pub seed: u64,
    /// Variants at once [default: the cores], fewer if memory is short.
    pub jobs: Option<usize>,
    /// Record latency distributions (the records' `latencies`), as `--stats latency` does.
    pub latencies: bool,
}

/// `commlab run --json`: one record per variant, in variant order. A failed answer check is
/// in its record (`check.ok`), not an error; a failed run is.
pub fn run(req: &RunRequest) -> Result<Vec<ResultRecord>, Failure> {
    let (info, variants, cfg) =
        run::checked_inputs(&req.app, &req.variant, &req.params, &req.machine, &req.set, req.procs)?;
    let (name, fingerprint) = (cfg.spec.name.clone(), cfg.fingerprint());
    let meta =
        RunMeta { machine: &name, fingerprint: &fingerprint, overrides: &req.set, procs: cfg.nprocs(), seed: req.seed };
    let sim = Simulator::new(cfg).record_latencies(req.latencies);
    let jobs = run::jobs_that_fit(&req.app, &req.params, &sim, None, req.jobs, variants.len())?;
    let control = Arc::new(RunControl::default());
    let mut records = Vec::new();
    run::in_variant_order(&sim, info.name, &variants, &req.params, req.seed, jobs, &control, |v, r| {
        let r = r.map_err(|e| match e {
            AppError::Input(m) => input(m),
            AppError::Run(m) => failed(format!("{} [{v}]: {m}", info.name)),
        })?;
        records.push(ResultRecord::of_run(&r, &meta));
        Ok(())
    })?;
    Ok(records)
}

/// What `commlab sweep` is given.
#[derive(Clone, Debug)]
pub struct SweepRequest {
    pub app: String,
    /// `KEY=SPEC`, as `--vary`.
    pub vary: Vec<String>,
    pub variant: String,
    pub params: Vec<String>,
    pub set: Vec<String>,
    pub machine: String,
    pub procs: Option<usize>,
    pub seed: u64,
    pub jobs: usize,
    /// The directory of results.jsonl and summary.json.
    pub out: PathBuf,
    pub resume: bool,
    /// A line per finished run on stderr (a bar on a terminal), as `commlab sweep` shows.
    pub progress: bool,
    /// `--stats` kinds kept for every run (files under `out/stats`).
    pub stats: Vec<String>,
}

impl SweepRequest {
    fn args(&self) -> SweepArgs {
        SweepArgs {
            app: self.app.clone(),
            vary: self.vary.clone(),
            variant: self.variant.clone(),
            param: self.params.clone(),
            set: self.set.clone(),
            machine: self.machine.clone(),
            procs: self.procs,
            seed: self.seed,
            jobs: Some(self.jobs.max(1) as u64),
            out: Some(self.out.clone()),
            resume: self.resume,
            max_memory: None,
            stats: self.stats.clone(),
            quiet: true,
            silent: !self.progress,
        }
    }
}

/// `commlab sweep`, on `jobs` threads.
pub fn sweep(req: &SweepRequest) -> Result<Report, Failure> {
    crate::sweep::execute(&req.args())
}

/// A sweep handed out in pieces: where its results go and the runs left to do.
pub struct SweepPlan {
    pub results: PathBuf,
    pub total_runs: usize,
    pub tasks: Vec<Task>,
    /// What `--resume` says about the file, when it already holds runs.
    pub note: Option<String>,
}

/// Check a sweep, prepare its results file (an incomplete last line dropped) and list the
/// runs it has left: what `commlab sweep` does before it runs anything.
pub fn sweep_plan(req: &SweepRequest) -> Result<SweepPlan, Failure> {
    let args = req.args();
    let plan = crate::sweep::plan(&args)?;
    drop(plan.open_results(&args)?);
    let tasks = plan.tasks(&args)?;
    let note = plan.resume_note();
    Ok(SweepPlan { results: plan.results_path.clone(), total_runs: plan.total_runs(), tasks, note })
}

/// The summary of a sweep whose runs were done elsewhere and appended to its results file;
/// `failures` are the runs that failed, as "what: message" (left out of the file).
pub fn sweep_finish(req: &SweepRequest, failures: Vec<String>) -> Result<Report, Failure> {
    crate::sweep::finish(&req.args(), Some(failures))
}
