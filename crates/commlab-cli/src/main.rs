//! `commlab`: the command line of the communication-mechanisms laboratory.
//!
//! Only this crate reads files, writes files and talks to the terminal. Exit status: 0 when
//! every run completed and every answer check passed; 1 when a run failed (deadlock, limit)
//! or a check failed; 2 for bad input (with one line naming it and what would be valid).

mod bench;
mod crossover;
mod experiment;
mod output;
mod plot;
mod sweep;

use clap::{Parser, Subcommand};
use commlab_apps::{AppError, APPS};
use commlab_sim::machine::{self, MachineConfig};
use commlab_sim::Simulator;
use output::RunMeta;
use std::io::Write;
use std::process::ExitCode;

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
    #[command(long_about = MACHINES_TABLE_HELP)]
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
    Apps,
    /// Run an application on a simulated machine.
    Run(RunArgs),
    /// Run an application over a range or grid of machine keys and app parameters; find crossovers.
    #[command(long_about = sweep::LONG_ABOUT)]
    Sweep(sweep::SweepArgs),
    /// Draw runtime curves or breakdown/volume bars (PNG and SVG) from saved results.
    #[command(long_about = plot::LONG_ABOUT)]
    Plot(plot::PlotArgs),
    /// Run a classic experiment (bisection, latency, overhead, aggregation, volume): results, summary, plots.
    #[command(long_about = experiment::LONG_ABOUT)]
    Experiment(experiment::ExperimentArgs),
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
    },
}

#[derive(Subcommand)]
enum MachineAction {
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
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Application name (see `commlab apps`).
    app: String,
    /// Preset name or path to a machine TOML file.
    #[arg(long, default_value = "alewife")]
    machine: String,
    /// Resize the machine to N processors (a mesh or torus becomes as square as it can).
    #[arg(long)]
    procs: Option<usize>,
    /// Variant to run, or `all`.
    #[arg(long, default_value = "all")]
    variant: String,
    /// Override a machine key, e.g. messaging.send_overhead_cycles=62 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Set an application parameter, e.g. hops=4 (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    param: Vec<String>,
    /// Seed of every pseudo-random choice (same seed, same results).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object per run (JSON Lines).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV: a header, then one row per run.
    #[arg(long)]
    csv: bool,
    /// Write the output to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

/// A failure and the exit status it maps to.
struct Failure {
    status: u8,
    message: String,
}

fn input(message: impl Into<String>) -> Failure {
    Failure { status: 2, message: message.into() }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match cli.command {
        Command::Machines { table, json } => list_machines(table, json),
        Command::Machine { action: MachineAction::Show { machine, set, procs } } => show_machine(&machine, &set, procs),
        Command::Apps => list_apps(),
        Command::Run(args) => run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Experiment(args) => experiment::run(args),
        Command::Bench { repeat, only, json } => bench::run(repeat, json, only.as_deref()),
        Command::Validate { machine, set, json } => validate(&machine, &set, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("commlab: {}", f.message);
            ExitCode::from(f.status)
        }
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

/// Load a preset by name or a machine file by path.
fn load_machine(machine: &str, set: &[String], procs: Option<usize>) -> Result<MachineConfig, Failure> {
    let is_file = machine.ends_with(".toml") || machine.contains('/');
    let cfg = if is_file {
        let text = std::fs::read_to_string(machine).map_err(|e| {
            input(format!(
                "cannot read machine file `{machine}`: {e} (give a readable machine .toml file, or a preset: {})",
                machine::preset_names().join(", ")
            ))
        })?;
        MachineConfig::load(&text, machine, set, procs)
    } else {
        MachineConfig::preset(machine, set, procs)
    };
    cfg.map_err(|e| input(e.to_string()))
}

/// Long help of `commlab machines`: how every column of `--table` is obtained.
const MACHINES_TABLE_HELP: &str = "List the machine presets (name, processors, network, summary).

With --table, one row per preset, each figure taken from the preset's own configuration or
measured on the simulator:
  MHz             processor.clock_mhz
  bisection       bytes per processor cycle across the bisection, both directions
                  (links crossing the cut x link bandwidth; as `commlab machine show` prints)
  net latency     one-way latency of a lone 24-byte packet (header included) in processor
                  cycles, between two processors at the mean distance: injection + ejection
                  NI latency + mean router hops (over all ordered pairs of distinct
                  processors) x router latency + the packet's serialization once (cut-through)
  remote miss     mean of the best and worst write miss to a clean remote line, measured
                  with `miss-latency` kind=store-remote: the home at the nearest distance
                  from the requester (processor 0), and at the farthest
  local miss      measured with `miss-latency` kind=load-local
  bisection per local miss   bisection x local miss (bytes per local-miss time)
  latency in local misses    net latency / local miss

--json prints the same as one JSON object per machine, with the best and worst write misses
and the mean hops as well.";

/// One row of `commlab machines --table`.
struct MachineRow {
    name: String,
    mhz: f64,
    topology: String,
    procs: usize,
    mean_hops: f64,
    bisection: f64,
    latency: f64,
    remote_best: f64,
    remote_worst: f64,
    local: f64,
}

impl MachineRow {
    fn remote(&self) -> f64 {
        (self.remote_best + self.remote_worst) / 2.0
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "machine": self.name,
            "clock_mhz": self.mhz,
            "topology": self.topology,
            "procs": self.procs,
            "mean_hops": self.mean_hops,
            "bisection_bytes_per_cycle": self.bisection,
            "net_latency_cycles": self.latency,
            "remote_miss_cycles": self.remote(),
            "remote_miss_best_cycles": self.remote_best,
            "remote_miss_worst_cycles": self.remote_worst,
            "local_miss_cycles": self.local,
            "bisection_bytes_per_local_miss": self.bisection * self.local,
            "net_latency_local_misses": self.latency / self.local,
        })
    }
}

/// Measure one preset for the machine table (see `MACHINES_TABLE_HELP`).
fn machine_row(name: &str) -> Result<MachineRow, Failure> {
    let cfg = load_machine(name, &[], None)?;
    let n = cfg.nprocs();
    let near = (1..n).map(|p| cfg.topology.hops(0, p)).min().unwrap_or(0);
    let far = cfg.topology.max_hops_from(0);
    let mut row = MachineRow {
        name: name.to_string(),
        mhz: cfg.spec.processor.clock_mhz,
        topology: cfg.topology.describe(),
        procs: n,
        mean_hops: cfg.mean_hops(),
        bisection: cfg.bisection_bytes_per_cycle(),
        latency: cfg.packet_latency_cycles(24),
        remote_best: 0.0,
        remote_worst: 0.0,
        local: 0.0,
    };
    let sim = Simulator::new(cfg);
    let miss = |kind: &str, hops: usize| -> Result<f64, Failure> {
        let params = [format!("kind={kind}"), format!("hops={hops}")];
        let fail =
            |m: String| Failure { status: 1, message: format!("machine table, {name}, miss-latency {kind}: {m}") };
        let r = commlab_apps::run_app(&sim, "miss-latency", "sm", &params, 1).map_err(|e| fail(e.to_string()))?;
        if !r.check.ok {
            return Err(fail(format!("answer check failed: {}", r.check.detail)));
        }
        Ok(r.counters["miss_cycles"])
    };
    row.remote_best = miss("store-remote", near)?;
    row.remote_worst = miss("store-remote", far)?;
    row.local = miss("load-local", 0)?;
    Ok(row)
}

fn list_machines(table: bool, json: bool) -> Result<(), Failure> {
    if table {
        return machine_table(json);
    }
    println!("{:<12} {:>6}  {:<28} summary", "name", "procs", "network");
    for name in machine::preset_names() {
        let cfg = load_machine(name, &[], None)?;
        println!("{:<12} {:>6}  {:<28} {}", name, cfg.nprocs(), cfg.topology.describe(), cfg.spec.summary);
    }
    Ok(())
}

fn machine_table(json: bool) -> Result<(), Failure> {
    if !json {
        println!(
            "{:<12} {:>6}  {:<36} {:>5} {:>11} {:>11} {:>11} {:>10} {:>14} {:>14}",
            "", "clock", "", "", "bisection", "net lat.", "remote", "local", "bisection", "net lat."
        );
        println!(
            "{:<12} {:>6}  {:<36} {:>5} {:>11} {:>11} {:>11} {:>10} {:>14} {:>14}",
            "name",
            "(MHz)",
            "topology",
            "procs",
            "(B/cycle)",
            "(cycles)",
            "miss (cyc)",
            "miss (cyc)",
            "(B/local miss)",
            "(local misses)"
        );
    }
    for name in machine::preset_names() {
        let r = machine_row(name)?;
        if json {
            println!("{}", r.json());
        } else {
            println!(
                "{:<12} {:>6.1}  {:<36} {:>5} {:>11.1} {:>11.1} {:>11.1} {:>10.1} {:>14.1} {:>14.2}",
                r.name,
                r.mhz,
                r.topology,
                r.procs,
                r.bisection,
                r.latency,
                r.remote(),
                r.local,
                r.bisection * r.local,
                r.latency / r.local
            );
        }
    }
    Ok(())
}

fn show_machine(machine: &str, set: &[String], procs: Option<usize>) -> Result<(), Failure> {
    let cfg = load_machine(machine, set, procs)?;
    println!("# {} processors; network: {}", cfg.nprocs(), cfg.topology.describe());
    println!("# bisection: {:.2} bytes per processor cycle", cfg.bisection_bytes_per_cycle());
    print!("{}", cfg.spec.to_documented_toml());
    Ok(())
}

fn list_apps() -> Result<(), Failure> {
    for a in APPS {
        println!("{}\n  {}\n  variants: {}", a.name, a.summary, a.variants.join(", "));
        for p in a.params {
            println!("  --param {}={:<8} {}", p.name, p.default, p.doc);
        }
        println!();
    }
    Ok(())
}

/// Where results go: standard output, or a file that is created at the first result (so a
/// run that fails on its input leaves an existing file untouched). Each write is flushed, so
/// results of a long `--variant all` are on disk as soon as each variant finishes.
struct Sink<'a> {
    path: Option<&'a std::path::Path>,
    file: Option<std::fs::File>,
}

impl<'a> Sink<'a> {
    fn new(path: Option<&'a std::path::Path>) -> Result<Self, Failure> {
        if let Some(p) = path {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
            if !dir.is_dir() || p.is_dir() {
                return Err(input(format!(
                    "cannot write --out `{}`: {} (give a writable file in an existing directory)",
                    p.display(),
                    if p.is_dir() { "it is a directory" } else { "its directory does not exist" }
                )));
            }
        }
        Ok(Sink { path, file: None })
    }

    fn write(&mut self, text: &str) -> Result<(), Failure> {
        let err = |e: std::io::Error| Failure { status: 1, message: format!("writing output: {e}") };
        match self.path {
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(err)
            }
            Some(p) => {
                if self.file.is_none() {
                    let f = std::fs::File::create(p).map_err(|e| {
                        input(format!(
                            "cannot write --out `{}`: {e} (give a writable file in an existing directory)",
                            p.display()
                        ))
                    })?;
                    self.file = Some(f);
                }
                let f = self.file.as_mut().expect("opened");
                f.write_all(text.as_bytes()).and_then(|_| f.flush()).map_err(err)
            }
        }
    }
}

fn validate(machine: &str, set: &[String], json: bool) -> Result<(), Failure> {
    let name = load_machine(machine, set, None)?.spec.name.clone();
    let make = |extra: &[String]| {
        let all: Vec<String> = set.iter().chain(extra).cloned().collect();
        load_machine(machine, &all, None).map(Simulator::new).map_err(|f| AppError::Input(f.message))
    };
    let rows = commlab_apps::validate::validate(&name, make).map_err(|e| match e {
        AppError::Input(m) => input(m),
        AppError::Run(m) => Failure { status: 1, message: format!("validate: {m}") },
    })?;
    if json {
        for r in &rows {
            let j = serde_json::json!({
                "machine": name, "row": r.name, "unit": r.unit, "published": r.published,
                "measured": r.measured, "error_pct": 100.0 * r.error(), "ok": r.ok(), "how": r.how,
            });
            println!("{j}");
        }
    } else {
        println!("{:<52} {:>10} {:>10} {:>8}", format!("{name}: primitive"), "published", "measured", "error");
        for r in &rows {
            println!(
                "{:<52} {:>10.2} {:>10.2} {:>7.1}%  {}",
                r.name,
                r.published,
                r.measured,
                100.0 * r.error(),
                if r.ok() { "ok" } else { "OUT OF TOLERANCE" }
            );
        }
    }
    let bad: Vec<&str> = rows.iter().filter(|r| !r.ok()).map(|r| r.name.as_str()).collect();
    if bad.is_empty() {
        if !json {
            println!("all {} rows within {:.0}%", rows.len(), 100.0 * commlab_apps::validate::TOLERANCE);
        }
        Ok(())
    } else {
        Err(Failure { status: 1, message: format!("{} rows out of tolerance: {}", bad.len(), bad.join("; ")) })
    }
}

fn run(args: RunArgs) -> Result<(), Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    let variants = info.select_variants(&args.variant).map_err(|e| input(e.to_string()))?;
    commlab_apps::Params::parse(info, &args.param).map_err(|e| input(e.to_string()))?;
    let cfg = load_machine(&args.machine, &args.set, args.procs)?;
    let mut sink = Sink::new(args.out.as_deref())?;
    let meta = RunMeta { machine: &cfg.spec.name.clone(), procs: cfg.nprocs(), seed: args.seed };
    let sim = Simulator::new(cfg);
    let mut results = Vec::new();
    let mut failed_checks = Vec::new();
    for v in variants {
        let r = match commlab_apps::run_app(&sim, info.name, v, &args.param, args.seed) {
            Ok(r) => r,
            Err(AppError::Input(m)) => return Err(input(m)),
            Err(AppError::Run(m)) => return Err(Failure { status: 1, message: format!("{} [{v}]: {m}", info.name) }),
        };
        if !r.check.ok {
            failed_checks.push(format!("{} [{v}]: answer check failed: {}", info.name, r.check.detail));
        }
        let j = output::to_json(&r, &meta);
        if args.json {
            sink.write(&format!("{j}\n"))?;
        } else if !args.csv {
            sink.write(&output::to_text(&r, &meta))?;
        }
        results.push((r, j));
    }
    if args.csv {
        sink.write(&output::to_csv(&results))?;
    }
    if failed_checks.is_empty() {
        Ok(())
    } else {
        Err(Failure { status: 1, message: failed_checks.join("; ") })
    }
}
