//! `commlab._native`: the simulator and the command line's operations for the Python package
//! (`python/commlab`). Everything goes through `commlab_cli::embed`, so checks, records and
//! messages are the command line's. Records cross as JSON text (`json.loads` gives the object
//! `commlab run --json` prints); the simulator runs with the GIL released.

use commlab_cli::embed::{self, Failure, Report, RunRequest, SweepRequest, Task};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;

create_exception!(commlab, CommlabError, PyException, "An error of commlab.");
create_exception!(commlab, InputError, CommlabError, "Bad input: the command line's exit status 2.");
create_exception!(commlab, RunError, CommlabError, "A run or a write failed: the command line's exit status 1.");

/// The command line's one-line message, as `InputError` (exit status 2) or `RunError`.
fn raise(f: Failure) -> PyErr {
    if f.status == 2 {
        InputError::new_err(f.message)
    } else {
        RunError::new_err(f.message)
    }
}

/// The preset names.
#[pyfunction]
fn machines() -> Vec<&'static str> {
    embed::machines()
}

/// A resolved machine as the JSON text of `commlab machine show --json`.
#[pyfunction]
#[pyo3(signature = (machine, sets, procs=None))]
fn machine(machine: &str, sets: Vec<String>, procs: Option<usize>) -> PyResult<String> {
    embed::machine(machine, &sets, procs).map(|v| v.to_string()).map_err(raise)
}

/// A resolved machine as the documented TOML of `commlab machine show`.
#[pyfunction]
#[pyo3(signature = (machine, sets, procs=None))]
fn machine_toml(machine: &str, sets: Vec<String>, procs: Option<usize>) -> PyResult<String> {
    embed::machine_toml(machine, &sets, procs).map_err(raise)
}

/// Every application as JSON text: a list of `commlab apps --json` objects.
#[pyfunction]
fn apps() -> String {
    serde_json::Value::Array(embed::apps()).to_string()
}

/// `commlab run --json`: one JSON line per variant, in variant order.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (app, machine, sets, procs, variant, params, seed, jobs=None, latencies=false))]
fn run(
    py: Python<'_>,
    app: String,
    machine: String,
    sets: Vec<String>,
    procs: Option<usize>,
    variant: String,
    params: Vec<String>,
    seed: u64,
    jobs: Option<usize>,
    latencies: bool,
) -> PyResult<Vec<String>> {
    let req = RunRequest { app, machine, set: sets, procs, variant, params, seed, jobs, latencies };
    let records = py.detach(|| embed::run(&req)).map_err(raise)?;
    Ok(records.iter().map(|r| r.to_json_line()).collect())
}

/// The arguments of `commlab sweep`.
#[allow(clippy::too_many_arguments)]
fn sweep_request(
    app: String,
    vary: Vec<String>,
    variant: String,
    params: Vec<String>,
    sets: Vec<String>,
    machine: String,
    procs: Option<usize>,
    seed: u64,
    jobs: usize,
    out: PathBuf,
    resume: bool,
    progress: bool,
    stats: Vec<String>,
) -> SweepRequest {
    SweepRequest { app, vary, variant, params, set: sets, machine, procs, seed, jobs, out, resume, progress, stats }
}

/// (the line `commlab sweep` prints, its summary text, the failed runs and checks)
type ReportTuple = (String, String, Vec<String>);

fn report(r: Report) -> ReportTuple {
    (r.line, r.text, r.problems)
}

/// `commlab sweep` on `jobs` threads (`progress`: on stderr, as the command line shows it): appends to OUT/results.jsonl, writes OUT/summary.json.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (app, vary, variant, params, sets, machine, procs, seed, jobs, out, resume, progress=false, stats=Vec::new()))]
fn sweep(
    py: Python<'_>,
    app: String,
    vary: Vec<String>,
    variant: String,
    params: Vec<String>,
    sets: Vec<String>,
    machine: String,
    procs: Option<usize>,
    seed: u64,
    jobs: usize,
    out: PathBuf,
    resume: bool,
    progress: bool,
    stats: Vec<String>,
) -> PyResult<ReportTuple> {
    let req = sweep_request(app, vary, variant, params, sets, machine, procs, seed, jobs, out, resume, progress, stats);
    py.detach(|| embed::sweep(&req)).map(report).map_err(raise)
}

/// A sweep in pieces: (results file, runs in the grid, the runs left as JSON tasks, a note on
/// what the file already held).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (app, vary, variant, params, sets, machine, procs, seed, out, resume, stats=Vec::new()))]
fn sweep_plan(
    py: Python<'_>,
    app: String,
    vary: Vec<String>,
    variant: String,
    params: Vec<String>,
    sets: Vec<String>,
    machine: String,
    procs: Option<usize>,
    seed: u64,
    out: PathBuf,
    resume: bool,
    stats: Vec<String>,
) -> PyResult<(String, usize, Vec<String>, Option<String>)> {
    let req = sweep_request(app, vary, variant, params, sets, machine, procs, seed, 1, out, resume, false, stats);
    let plan = py.detach(|| embed::sweep_plan(&req)).map_err(raise)?;
    let tasks = plan.tasks.iter().map(|t| serde_json::to_string(t).expect("a task serializes")).collect();
    Ok((plan.results.display().to_string(), plan.total_runs, tasks, plan.note))
}

/// Run one task of `sweep_plan`: the JSON line to append to the results file.
#[pyfunction]
fn run_task(py: Python<'_>, task: &str) -> PyResult<String> {
    let task: Task =
        serde_json::from_str(task).map_err(|e| InputError::new_err(format!("not a commlab sweep task: {e}")))?;
    py.detach(|| embed::run_task(&task)).map(|r| r.to_json_line()).map_err(raise)
}

/// The summary of a sweep whose tasks were run elsewhere; `failures`: "what: message" of each
/// failed run.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (app, vary, variant, params, sets, machine, procs, seed, out, failures))]
fn sweep_finish(
    py: Python<'_>,
    app: String,
    vary: Vec<String>,
    variant: String,
    params: Vec<String>,
    sets: Vec<String>,
    machine: String,
    procs: Option<usize>,
    seed: u64,
    out: PathBuf,
    failures: Vec<String>,
) -> PyResult<ReportTuple> {
    let req = sweep_request(app, vary, variant, params, sets, machine, procs, seed, 1, out, true, false, Vec::new());
    py.detach(|| embed::sweep_finish(&req, failures)).map(report).map_err(raise)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CommlabError", m.py().get_type::<CommlabError>())?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(machines, m)?)?;
    m.add_function(wrap_pyfunction!(machine, m)?)?;
    m.add_function(wrap_pyfunction!(machine_toml, m)?)?;
    m.add_function(wrap_pyfunction!(apps, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(run_task, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_finish, m)?)?;
    Ok(())
}
