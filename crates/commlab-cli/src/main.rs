//! `commlab`: the command line of the communication-mechanisms laboratory.
//!
//! Only this crate reads files, writes files and talks to the terminal. Exit status: 0 when
//! every run completed and every answer check passed; 1 when a run failed (deadlock, limit)
//! or a check failed; 2 for bad input (with one line naming it and what would be valid).
//!
//! This file only parses arguments and dispatches to the subcommands' modules in the library
//! (`lib.rs`), which the Python package (`python/`) calls too.

use clap::{Parser, Subcommand};
use commlab_cli::{
    apps, bench, characterize, experiment, machine_table, machines, plot, reproduce, run, sweep, validate,
};
use std::process::ExitCode;

/// An allocation that fails is one `commlab: ` line and exit status 1, not an abort.
#[global_allocator]
static ALLOCATOR: commlab_cli::alloc_failure::ReportingAllocator = commlab_cli::alloc_failure::ReportingAllocator;

#[derive(Parser)]
#[command(
    name = "commlab",
    version,
    about = "A laboratory for multiprocessor communication mechanisms: shared memory, active messages and DMA on simulated machines",
    long_about = "commlab runs applications written once per communication mechanism on a deterministic \
simulator of a multiprocessor, and reports time breakdowns, traffic and answer checks.\n\n\
Examples:\n  commlab run am-latency --param hops=4\n  commlab run alltoall-stress --procs 64 --variant all --json\n  \
commlab run am-throughput --set network.ni_input_queue_packets=2 --param handler_cycles=500\n  \
commlab machine show alewife"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the machine presets; `--table` measures and compares them.
    #[command(long_about = machine_table::HELP)]
    Machines {
        /// One row per preset: bisection, network latency, remote and local miss, and the
        /// bisection and latency normalised by the local miss time (see the long help, --help).
        #[arg(long)]
        table: bool,
        /// With --table: one JSON object per machine (JSON Lines).
        #[arg(long, requires = "table")]
        json: bool,
    },
    /// Machine descriptions.
    Machine {
        #[command(subcommand)]
        action: MachineAction,
    },
    /// List applications, their variants and parameters.
    Apps {
        /// One JSON object per application (JSON Lines), numeric defaults as numbers.
        #[arg(long)]
        json: bool,
    },
    /// List the counters results report, with unit and meaning: the engine's and each app's.
    Counters {
        /// Only this application's counters (after the engine's).
        app: Option<String>,
        /// One JSON object per table (JSON Lines): {"table", "counters": [{name, unit, meaning}]}.
        #[arg(long)]
        json: bool,
    },
    /// Run an application on a simulated machine.
    Run(run::RunArgs),
    /// Run an application over a range or grid of machine keys and app parameters; find crossovers.
    #[command(long_about = sweep::LONG_ABOUT)]
    Sweep(sweep::SweepArgs),
    /// Draw runtime curves or breakdown/volume bars (PNG and SVG) from saved results.
    #[command(long_about = plot::LONG_ABOUT)]
    Plot(plot::PlotArgs),
    /// Run a classic experiment (bisection, latency, overhead, aggregation, volume, grain, memcpy, copy-transfer, fft2d, blizzard): results, summary, plots.
    #[command(long_about = experiment::LONG_ABOUT)]
    Experiment(experiment::ExperimentArgs),
    /// Reproduce a study: its tables and figures regenerated, published vs measured, its findings checked.
    #[command(long_about = reproduce::LONG_ABOUT)]
    Reproduce(reproduce::ReproduceArgs),
    /// Measure this host's copy and transfer bandwidth, latencies and caches; derive a machine file.
    #[command(long_about = characterize::LONG_ABOUT)]
    Characterize(characterize::Args),
    /// Measure every published primitive cost of a machine and compare (exit 0 if all within 10%).
    Validate {
        /// Preset name or path to a machine TOML file.
        #[arg(long, default_value = "alewife")]
        machine: String,
        /// Override a machine key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// One JSON object per row.
        #[arg(long)]
        json: bool,
    },
    /// Measure simulator speed (events/s) on fixed workloads.
    Bench {
        /// Repetitions per workload (the median is reported).
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Run only this workload.
        #[arg(long)]
        only: Option<String>,
        /// One JSON object per workload.
        #[arg(long)]
        json: bool,
        /// Network model for every workload (`network.model`: hop or fold); default: the presets' (`fold`; `hop` is the reference, which queues every hop).
        #[arg(long)]
        model: Option<String>,
        /// Another commlab binary (an older build) to measure side by side: each repetition
        /// of each workload runs it (`PATH bench --only W --repeat 1 --json`) and then this
        /// build, alternately, and the rows add its median wall time, the ratio new/baseline
        /// and whether the two counted the same events (a refactoring must) or, where not, this
        /// build's events over the baseline's (`x0.794`).
        #[arg(long, value_name = "PATH")]
        baseline: Option<std::path::PathBuf>,
        /// Also count each workload's host instructions, once, under Valgrind's cachegrind
        /// (`valgrind` must be on PATH; about 50 times slower than the run). Unlike wall time
        /// the count is the same every time for the same build and workload (to about one part
        /// in ten million), so a change of a percent in the simulator's cost shows. Rows add
        /// millions of instructions and instructions per event; with --baseline, the
        /// baseline's count and the ratio new/baseline, and the summary their geometric mean.
        #[arg(long)]
        instructions: bool,
    },
}

#[derive(Subcommand)]
enum MachineAction {
    /// Print the keys two machines (presets or files) differ in, with both values and the unit.
    Diff {
        /// Preset name or path to a machine TOML file.
        a: String,
        /// Preset name or path to a machine TOML file.
        b: String,
        /// Override a machine key of both (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Resize both machines to N processors.
        #[arg(long)]
        procs: Option<usize>,
    },
    /// Print a machine's resolved parameters as TOML, each key with its unit and meaning.
    Show {
        /// Preset name or path to a machine TOML file.
        machine: String,
        /// Override a machine key, e.g. network.link_bytes_per_ns=0.09 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Resize the machine to N processors.
        #[arg(long)]
        procs: Option<usize>,
        /// Print one JSON object: name, processors, network, bisection, fingerprint and the
        /// resolved spec.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    restore_sigpipe();
    let words: Vec<String> = std::env::args().skip(1).collect();
    commlab_cli::alloc_failure::running(&format!("`commlab {}`", words.join(" ")));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let started = std::time::Instant::now();
    let name = command_name(&cli.command);
    let result = match cli.command {
        Command::Machines { table, json } => machines::list(table, json),
        Command::Machine { action: MachineAction::Show { machine, set, procs, json } } => {
            machines::show(&machine, &set, procs, json)
        }
        Command::Machine { action: MachineAction::Diff { a, b, set, procs } } => machines::diff(&a, &b, &set, procs),
        Command::Apps { json } => apps::list(json),
        Command::Counters { app, json } => apps::counters(app.as_deref(), json),
        Command::Run(args) => run::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Experiment(args) => experiment::run(args),
        Command::Bench { repeat, only, json, model, baseline, instructions } => {
            bench::run(repeat, json, only.as_deref(), model.as_deref(), baseline.as_deref(), instructions)
        }
        Command::Validate { machine, set, json } => validate::run(&machine, &set, json),
        Command::Reproduce(args) => reproduce::run(args),
        Command::Characterize(args) => characterize::run(args),
    };
    match result {
        Ok(()) => {
            // On stderr: stdout stays the command's output. A failure stays its one line.
            if let Some(line) = commlab_cli::progress::took_line(name, started) {
                eprintln!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("commlab: {}", f.message);
            ExitCode::from(f.status)
        }
    }
}

/// The command's name as typed (`machine show`, `sweep`), for its closing line.
fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Machines { .. } => "machines",
        Command::Machine { action: MachineAction::Show { .. } } => "machine show",
        Command::Machine { action: MachineAction::Diff { .. } } => "machine diff",
        Command::Apps { .. } => "apps",
        Command::Counters { .. } => "counters",
        Command::Run(_) => "run",
        Command::Sweep(_) => "sweep",
        Command::Plot(_) => "plot",
        Command::Experiment(_) => "experiment",
        Command::Bench { .. } => "bench",
        Command::Validate { .. } => "validate",
        Command::Reproduce(_) => "reproduce",
        Command::Characterize(_) => "characterize",
    }
}

/// Rust ignores SIGPIPE, so a print to a closed pipe (`commlab apps | head -1`) is an error
/// that `println!` turns into a panic. Restore the default action, as command-line tools
/// have it: the process ends quietly when its reader has gone. Files are unaffected.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread exists; it only resets a signal
    // disposition to its default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A command-line syntax error: help and version print as clap prints them; any other error
/// becomes the one `commlab: ` line of the exit-status-2 contract.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let text = text.trim().strip_prefix("error:").unwrap_or(&text);
    let parts: Vec<String> = text
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    eprintln!("commlab: {}", parts.join("; "));
    ExitCode::from(2)
}
