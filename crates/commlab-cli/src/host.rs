//! `commlab run APP --machine host`: the application's variants on this computer's cores
//! (`commlab-native`), reported in the same records as simulated runs.
//!
//! Variants run one after another (at once they would share the cores they are measuring).
//! Machine options that only mean something on a simulated machine (`--set`, `--max-wall`,
//! `--max-memory`) are refused with a message naming them.

use crate::detail_stats;
use crate::failure::{failed, input, Failure};
use crate::output;
use crate::record::{ResultRecord, RunMeta};
use commlab_api::Backend;
use commlab_apps::AppError;
use commlab_native::NativeBackend;
use std::io::Write;

/// The `--machine` name of the host.
pub(crate) const MACHINE: &str = "host";

/// `commlab run`'s arguments that mean something natively (`--jobs` does not: variants run
/// one after another), and whether each simulator-only option was given.
pub(crate) struct Args {
    pub app: String,
    pub variant: String,
    pub procs: Option<usize>,
    pub params: Vec<String>,
    pub seed: u64,
    pub json: bool,
    pub csv: bool,
    pub out: Option<std::path::PathBuf>,
    pub stats: Vec<String>,
    pub sim_only: [(bool, &'static str); 3],
}

/// Why a simulator-only option means nothing natively.
fn why_not(option: &str) -> &'static str {
    match option {
        "--set" => "the host has no machine keys to set",
        "--max-wall" => "a native run cannot be stopped part-way",
        _ => "there is no estimate of a native run's memory",
    }
}

pub(crate) fn run(args: Args) -> Result<(), Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    let variants = info.select_variants(&args.variant).map_err(|e| input(e.to_string()))?;
    commlab_apps::Params::parse(info, &args.params).map_err(|e| input(e.to_string()))?;
    if let Some((_, option)) = args.sim_only.iter().find(|(given, _)| *given) {
        return Err(input(format!("--machine host does not take {option} ({})", why_not(option))));
    }
    let detail: Vec<detail_stats::Request> =
        args.stats.iter().map(|s| detail_stats::Request::parse(s)).collect::<Result<_, _>>()?;
    let host = NativeBackend::new();
    let cores = host.cores();
    let procs = args.procs.unwrap_or(cores);
    let backend = host.with_nprocs(procs).map_err(|e| input(format!("--procs {procs}: {e}")))?;
    if backend.oversubscribed() {
        eprintln!("commlab: warning: {procs} processors on {cores} cores: threads share cores, so times are not those of {procs} cores");
    }
    let clock = backend.clock();
    let fingerprint = format!("host:{cores}-cores:{:.0}-mhz-{}", clock.mhz, clock.source);
    let meta = RunMeta { machine: MACHINE, fingerprint: &fingerprint, overrides: &[], procs, seed: args.seed };
    let mut text = String::new();
    let mut records = Vec::new();
    let mut results = Vec::new();
    let mut failed_checks = Vec::new();
    for v in &variants {
        let r = commlab_apps::run_app(&backend, info.name, v, &args.params, args.seed).map_err(|e| match e {
            AppError::Input(m) => input(m),
            AppError::Run(m) => failed(format!("{} [{v}] on the host: {m}", info.name)),
        })?;
        if !r.check.ok {
            failed_checks.push(format!("{} [{v}]: answer check failed: {}", info.name, r.check.detail));
        }
        let record = ResultRecord::of_run(&r, &meta);
        if args.json {
            text.push_str(&record.to_json_line());
        } else if !args.csv {
            text.push_str(&output::to_text(&record));
        }
        records.push(record);
        if !detail.is_empty() {
            results.push(r);
        }
    }
    if args.csv {
        text.push_str(&output::to_csv(&records));
    }
    write(args.out.as_deref(), &text)?;
    detail_stats::write(&detail, &results)?;
    if failed_checks.is_empty() {
        Ok(())
    } else {
        Err(failed(failed_checks.join("; ")))
    }
}

/// Standard output, or `--out FILE` (its missing directory created).
fn write(path: Option<&std::path::Path>, text: &str) -> Result<(), Failure> {
    let Some(p) = path else {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| failed(format!("writing output: {e}")));
    };
    let fail = |e: std::io::Error| input(format!("cannot write --out `{}`: {e}", p.display()));
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(p, text).map_err(fail)
}
