//! `commlab reproduce STUDY`: regenerate a study's tables and figures with numbers and check its
//! findings.
//!
//! Flow: the study's module lists every simulation it needs ([`RunSpec`]s: machine, overrides,
//! processors, app, variant, parameters) ─▶ every run's machine is built first (a bad key is
//! found before anything runs) ─▶ the runs, on `--jobs` threads, each appended to
//! `DIR/runs.jsonl` as it finishes (`--resume` reuses them) ─▶ the study's module turns the
//! results into rows (published | measured | ratio, input or prediction), findings (each an
//! exact test of the study's words) and figures (`DIR/ID.png|svg|csv|json`) ─▶
//! `DIR/report.txt` and `DIR/report.json`, the text printed. The exit status is 1 when a
//! finding fails, an input row is out of its tolerance or a run fails, 0 otherwise (2 for bad
//! input). Nothing depends on the order runs finish in.
//!
//! One module per study: `alewife` (seed 000), `alewife_runtime` (seed 001), `copy_transfer`
//! (seed 002), `blizzard_cow` (seed 003), `iccg` (seed 004).

mod alewife;
mod alewife_runtime;
mod blizzard_cow;
mod copy_transfer;
mod ctx;
mod figure;
mod iccg;
mod measure;
mod progress;
mod report;
mod runs;

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
pub(crate) use ctx::Ctx;
use figure::Figure;
use progress::Progress;
use report::Report;
pub(crate) use runs::{Results, RunSpec};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `commlab reproduce --help`.
pub const LONG_ABOUT: &str = "Reproduce a study: run its applications on its machine, regenerate every table and \
figure of the study that has numbers, and check each of its findings.\n\n\
STUDY is one of:\n  \
alewife          seed 000: the Alewife mechanism study (EM3D, ICCG, UNSTRUC, MOLDYN; volume, bisection, latency)\n  \
iccg             seed 004: ICCG's sparse triangular solve on Alewife (six matrices, aggregation, overheads)\n  \
alewife-runtime  seed 001: the Alewife runtime study (barrier, remote thread invocation, copies, accum, grain, aq, jacobi on the simulated 64-processor Alewife)\n  \
copy-transfer    seed 002: the copy-transfer study of the DEC 8400, Cray T3D and T3E (load and copy bandwidth over stride x working set, fetch vs deposit, large copies, the 2-D FFT)\n  \
blizzard-cow     seed 003: the Blizzard COW study (Blizzard-S, -E, -T: instrumentation levels, polling mechanisms, remote miss times, five applications in transparent and custom protocols at 2-16 processors)\n  \
all              every study built\n\n\
Into DIR (default reproduce-STUDY) it writes: report.txt and report.json (every published figure beside \
commlab's: published | measured | ratio, each marked as an input the preset is calibrated from or a prediction; \
withheld figures show the measured value only; every finding as a check that holds or fails, with the figures \
it used), each figure as ID.png and ID.svg and its data as ID.csv and ID.json, and runs.jsonl (every run's \
record, appended as it finishes: --resume continues an interrupted reproduction). Exit status 0 when every \
finding holds, every input row is within 10% and every run passes its answer check; 1 otherwise; 2 for bad \
input.\n\n\
--quick runs reduced inputs (each study in about a minute): the report says so, and the findings, which are \
about the study's sizes, may not hold there.\n\n\
Examples:\n  \
commlab reproduce alewife --quick\n  \
commlab reproduce iccg --jobs 2 --out iccg-report\n  \
commlab reproduce alewife --resume\n  \
commlab reproduce all --quick --out reports";

#[derive(clap::Args)]
pub struct ReproduceArgs {
    /// alewife (000), alewife-runtime (001), iccg (004), copy-transfer (002), blizzard-cow (003), or all.
    study: String,
    /// Reduced inputs that run in about a minute (the report says so).
    #[arg(long)]
    quick: bool,
    /// Output directory [default: reproduce-STUDY].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Continue an interrupted reproduction in DIR, reusing its finished runs.
    #[arg(long)]
    resume: bool,
    /// Override a machine key in every run (a what-if; the report records it).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The directory of the studies' matrices (Matrix Market).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_MATRICES)]
    matrices: PathBuf,
    /// Runs in parallel (the report does not depend on it) [default: the cores available].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
    /// Print report.json instead of the text report.
    #[arg(long)]
    json: bool,
}

/// Where the README's commands find the studies' matrices.
pub const DEFAULT_MATRICES: &str = "../shared/data/matrices";

/// A study commlab reproduces.
pub(crate) struct Study {
    pub name: &'static str,
    pub seed: &'static str,
    pub title: &'static str,
    /// Whether it reads the studies' matrices (`--matrices` must then be a directory).
    pub matrices: bool,
    /// Every run the report needs.
    pub plan: fn(&Ctx) -> Result<Vec<RunSpec>, Failure>,
    /// Rows, findings, notes (into the report) and the figures to draw.
    pub report: fn(&Ctx, &Results, &mut Report) -> Vec<Figure>,
}

const STUDIES: &[Study] = &[
    Study {
        name: "alewife",
        seed: "000",
        title: "The Sensitivity of Communication Mechanisms to Bandwidth and Latency (Alewife)",
        matrices: true,
        plan: alewife::plan,
        report: alewife::report,
    },
    Study {
        name: "iccg",
        seed: "004",
        title: "Shared Memory versus Message Passing for Iterative Solution of Sparse, Irregular Problems (ICCG)",
        matrices: true,
        plan: iccg::plan,
        report: iccg::report,
    },
    Study {
        name: "alewife-runtime",
        seed: "001",
        title: "Integrating Message-Passing and Shared-Memory: Early Experience (the Alewife runtime)",
        matrices: false,
        plan: alewife_runtime::plan,
        report: alewife_runtime::report,
    },
    Study {
        name: "copy-transfer",
        seed: "002",
        title: "Global Address Space, Non-Uniform Bandwidth: A Memory System Performance Characterization of Parallel Systems (DEC 8400, Cray T3D, Cray T3E)",
        matrices: false,
        plan: copy_transfer::plan,
        report: copy_transfer::report,
    },
    Study {
        name: "blizzard-cow",
        seed: "003",
        title: "Implementing Fine-Grain Distributed Shared Memory On Commodity SMP Workstations (Blizzard on the COW)",
        matrices: false,
        plan: blizzard_cow::plan,
        report: blizzard_cow::report,
    },
];

fn names() -> String {
    let mut v: Vec<&str> = STUDIES.iter().map(|s| s.name).collect();
    v.push("all");
    v.join(", ")
}

pub fn run(args: ReproduceArgs) -> Result<(), Failure> {
    let chosen: Vec<&Study> = if args.study == "all" {
        STUDIES.iter().collect()
    } else if let Some(s) = STUDIES.iter().find(|s| s.name == args.study) {
        vec![s]
    } else {
        return Err(input(format!("unknown study `{}` (valid: {})", args.study, names())));
    };
    if chosen.iter().any(|s| s.matrices) && !args.matrices.is_dir() {
        return Err(input(format!(
            "--matrices {}: no such directory (the studies' matrices; default {DEFAULT_MATRICES})",
            args.matrices.display()
        )));
    }
    // Every --set is checked against the default machine before anything runs.
    machine_arg::load("alewife", &args.set, None)?;
    let ctx = Ctx { quick: args.quick, matrices: args.matrices.clone(), set: args.set.clone() };
    let top = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", args.study)));
    let jobs = args.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
    let mut statuses = Vec::new();
    for s in &chosen {
        let dir = if args.study == "all" { top.join(s.name) } else { top.clone() };
        let report = reproduce(s, &ctx, &args, &dir, jobs)?;
        let mut out = std::io::stdout().lock();
        let shown =
            if args.json { serde_json::to_string_pretty(&report.json()).expect("json") + "\n" } else { report.text() };
        if out.write_all(shown.as_bytes()).and_then(|_| out.flush()).is_err() {
            return Ok(()); // a closed pipe: the reader has what it wanted
        }
        statuses.push((report.status(), report.verdict()));
    }
    let failing: Vec<String> = statuses.iter().filter(|s| s.0 != 0).map(|s| s.1.clone()).collect();
    if failing.is_empty() {
        Ok(())
    } else {
        Err(failed(failing.join(" | ")))
    }
}

/// One study into `dir`.
fn reproduce(s: &Study, ctx: &Ctx, args: &ReproduceArgs, dir: &Path, jobs: usize) -> Result<Report, Failure> {
    let specs = (s.plan)(ctx)?;
    let runs_file = dir.join("runs.jsonl");
    if !args.resume && std::fs::metadata(&runs_file).is_ok_and(|m| m.len() > 0) {
        return Err(input(format!(
            "`{}` already holds a reproduction: --resume to continue it (its finished runs are reused), or --out \
             another directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| input(format!("cannot create `{}`: {e}", dir.display())))?;
    let what = format!("reproduce {}", s.name);
    let mut progress = Progress::new(&what, false);
    let results = runs::execute(&specs, &args.set, dir, args.resume, jobs, &mut progress)?;
    let mut report = Report {
        study: s.name.to_string(),
        seed: s.seed.to_string(),
        title: s.title.to_string(),
        machine: "alewife".to_string(),
        quick: ctx.quick,
        runs: results.len(),
        ..Report::default()
    };
    if ctx.quick {
        report
            .notes
            .push("--quick: reduced inputs; the findings are about the study's sizes and may not hold here".into());
    }
    if !args.set.is_empty() {
        report.notes.push(format!("every run with --set {} (a what-if, not the preset)", args.set.join(" --set ")));
    }
    let figures = (s.report)(ctx, &results, &mut report);
    for f in &figures {
        report.figures.push(figure::draw(dir, f)?);
    }
    report.problems = results.problems();
    report.wall_seconds = progress.elapsed().as_secs_f64();
    let write = |name: &str, text: String| -> Result<(), Failure> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| failed(format!("writing `{}`: {e}", p.display())))
    };
    write("report.txt", report.text())?;
    write("report.json", serde_json::to_string_pretty(&report.json()).expect("json") + "\n")?;
    if !args.json {
        eprintln!("{what}: {} in {}", dir.display(), progress::duration(progress.elapsed()));
    }
    Ok(report)
}
