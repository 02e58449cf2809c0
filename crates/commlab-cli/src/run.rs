//! `commlab run`: an application's variants on one machine, reported as text, JSON Lines or
//! CSV, on standard output or in a file.

use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::output;
use crate::record::{ResultRecord, RunMeta};
use commlab_apps::AppError;
use commlab_sim::Simulator;
use std::io::Write;

#[derive(clap::Args)]
pub struct RunArgs {
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
    /// Print CSV: a header, then one row per run (whole numbers exact, others rounded to 9
    /// significant digits; --json keeps every digit).
    #[arg(long)]
    csv: bool,
    /// Write the output to FILE instead of standard output (a missing directory is created).
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
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
            let fail = |why: String| {
                input(format!(
                    "cannot write --out `{}`: {why} (give a writable file; a missing directory is created)",
                    p.display()
                ))
            };
            if p.is_dir() {
                return Err(fail("it is a directory".to_string()));
            }
            // A missing directory is created, as `sweep --out` and `plot --out` do.
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                if dir.exists() && !dir.is_dir() {
                    return Err(fail(format!("`{}` is not a directory", dir.display())));
                }
                std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create its directory: {e}")))?;
            }
        }
        Ok(Sink { path, file: None })
    }

    fn write(&mut self, text: &str) -> Result<(), Failure> {
        let err = |e: std::io::Error| failed(format!("writing output: {e}"));
        match self.path {
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(err)
            }
            Some(p) => {
                if self.file.is_none() {
                    let f = std::fs::File::create(p).map_err(|e| {
                        input(format!(
                            "cannot write --out `{}`: {e} (give a writable file; a missing directory is created)",
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

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    let variants = info.select_variants(&args.variant).map_err(|e| input(e.to_string()))?;
    commlab_apps::Params::parse(info, &args.param).map_err(|e| input(e.to_string()))?;
    let cfg = machine_arg::load(&args.machine, &args.set, args.procs)?;
    let mut sink = Sink::new(args.out.as_deref())?;
    let (name, fingerprint) = (cfg.spec.name.clone(), cfg.fingerprint());
    let meta = RunMeta {
        machine: &name,
        fingerprint: &fingerprint,
        overrides: &args.set,
        procs: cfg.nprocs(),
        seed: args.seed,
    };
    let sim = Simulator::new(cfg);
    let mut records = Vec::new();
    let mut failed_checks = Vec::new();
    for v in variants {
        let r = match commlab_apps::run_app(&sim, info.name, v, &args.param, args.seed) {
            Ok(r) => r,
            Err(AppError::Input(m)) => return Err(input(m)),
            Err(AppError::Run(m)) => return Err(failed(format!("{} [{v}]: {m}", info.name))),
        };
        if !r.check.ok {
            failed_checks.push(format!("{} [{v}]: answer check failed: {}", info.name, r.check.detail));
        }
        let record = ResultRecord::of_run(&r, &meta);
        if args.json {
            sink.write(&record.to_json_line())?;
        } else if !args.csv {
            sink.write(&output::to_text(&record))?;
        }
        records.push(record);
    }
    if args.csv {
        sink.write(&output::to_csv(&records))?;
    }
    if failed_checks.is_empty() {
        Ok(())
    } else {
        Err(failed(failed_checks.join("; ")))
    }
}
