//! `commlab run`: an application's variants on one machine, reported as text, JSON Lines or
//! CSV, on standard output or in a file. With `--jobs` the variants run on threads and are
//! written back in variant order (`in_variant_order`, which `embed::run` uses too); `--max-wall`
//! and the progress line work through the run's `RunControl` (a timer thread sets its stop flag;
//! the engine reads it every 4096 events). `--machine host` goes to `host.rs`.

use crate::detail_stats;
use crate::failure::{failed, input, Failure};
use crate::machine_arg;
use crate::memory_check;
use crate::output;
use crate::record::{ResultRecord, RunMeta};
use commlab_apps::{AppError, AppInfo, AppResult};
use commlab_sim::machine::MachineConfig;
use commlab_sim::{RunControl, Simulator};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct RunArgs {
    /// Application name (see `commlab apps`).
    app: String,
    /// Preset name or path to a machine TOML file, or `host`: this computer's cores (one
    /// pinned thread per processor; --procs defaults to the cores).
    #[arg(long, default_value = "alewife")]
    machine: String,
    /// Resize the machine to N processors (a mesh or torus becomes as square as it can).
    #[arg(long)]
    procs: Option<usize>,
    /// Variants to run, separated by commas (e.g. sm,mp-int), or `all`.
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
    /// Variants run at once, on as many threads [default: the number of cores]. Output is in
    /// variant order and the same as with --jobs 1; fewer run at once if memory is short.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
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
    /// Stop after SECONDS of wall-clock time (exit 1, saying the simulated cycle and events
    /// reached); checked inside the simulation every few thousand events.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    max_wall: Option<f64>,
    /// Refuse a run whose estimated memory exceeds SIZE (bytes, or with K, M, G, T: powers of
    /// 1024; P too), e.g. 2G. Without it the limit is the memory available (MemAvailable).
    #[arg(long, value_name = "SIZE", value_parser = crate::memory_check::parse_size)]
    max_memory: Option<u64>,
    /// Also write per-processor or per-link statistics of every run: per-node=FILE (each
    /// processor's time breakdown, messages sent and received, misses, LimitLESS traps) or
    /// per-link=FILE (each network link's kind, ends, utilisation and bytes over the timed
    /// region) or latency=FILE (distributions over the timed region, in cycles: count, sum,
    /// min, p50/p90/p99, max and log-spaced buckets of each miss stall by where the line lives,
    /// one-way message latency by kind, NI output and credit waits, lock waits; recorded only
    /// when asked, and then also in --json's `latencies`) or interval=CYCLES,FILE (every
    /// CYCLES of the timed region: each processor's breakdown in it, traffic by class, each
    /// link's utilisation, NI queue depths; `commlab plot timeline FILE` draws it); JSON Lines,
    /// or CSV when FILE ends in .csv (repeatable).
    #[arg(long = "stats", value_name = "KIND=FILE")]
    stats: Vec<String>,
    /// Also write the run as a timeline to FILE: Chrome trace-event JSON that Perfetto's UI
    /// (ui.perfetto.dev) or chrome://tracing opens. One track per processor with its compute,
    /// memory/NI wait, message overhead (handlers) and synchronization spans, and arrows from
    /// each message's send to its handler and from each miss's stall to its access. With
    /// several variants, one file each: FILE's stem + .VARIANT.
    #[arg(long, value_name = "FILE")]
    trace: Option<std::path::PathBuf>,
    /// Trace only cycles START to END of the timed region (END may be empty: to the end).
    #[arg(long, value_name = "START:END", requires = "trace")]
    trace_window: Option<String>,
    /// The most spans and arrows a trace keeps (about 100 bytes of JSON each); a trace that
    /// reaches it stops there and says so.
    #[arg(long, value_name = "N", requires = "trace", default_value_t = crate::trace_out::DEFAULT_MAX_EVENTS)]
    trace_max_events: usize,
}

/// `--max-wall`: a positive number of seconds.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds > 0 (e.g. 60 or 0.5)")),
    }
}

/// The CLI's side of a run's [`RunControl`]: one thread that stops the run at `--max-wall` and,
/// when standard error is a terminal, shows the simulated cycle, events per second and, when
/// the program says how far it is (`Node::progress`: iterations done of total), the estimated
/// time left (elapsed wall time x steps left / steps done); off a terminal, the same as a line
/// at [`crate::progress::every`] once the run has taken that long. The engine only publishes
/// progress and reads the stop flag, so nothing here changes a simulated number.
struct Watch {
    control: Arc<RunControl>,
    done: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// `what`: the run, e.g. "run em3d", for the lines off a terminal.
    fn start(what: String, max_wall: Option<f64>, cycle_ps: f64) -> Watch {
        let control = Arc::new(RunControl::default());
        let show = std::io::stderr().is_terminal();
        let every = crate::progress::every();
        let (tx, rx) = mpsc::channel::<()>();
        let c = Arc::clone(&control);
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut deadline = max_wall.map(|s| start + Duration::from_secs_f64(s));
            let bar = show.then(|| {
                let bar = indicatif::ProgressBar::new_spinner();
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar
            });
            let (mut last_events, mut last_t) = (0u64, start);
            let mut last_line = start;
            loop {
                let tick = Duration::from_millis(250);
                let wait = deadline.map_or(tick, |d| d.saturating_duration_since(Instant::now()).min(tick));
                match rx.recv_timeout(wait) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    c.stop();
                    deadline = None; // from now on only the progress ticks
                }
                if bar.is_none() && last_line.elapsed() >= every {
                    last_line = Instant::now();
                    let (events, now_ps) = c.progress();
                    let (done, total) = c.work();
                    let eta = if done > 0 && total >= done {
                        let left = start.elapsed().mul_f64((total - done) as f64 / done as f64);
                        format!(", step {done} of {total}, ETA {}", crate::progress::duration(left))
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "{what}: simulated cycle {:.0}, {events} events, {} elapsed{eta}",
                        now_ps as f64 / cycle_ps,
                        crate::progress::duration(start.elapsed())
                    );
                }
                if let Some(bar) = &bar {
                    let (events, now_ps) = c.progress();
                    let (done, total) = c.work();
                    let now = Instant::now();
                    let dt = now.duration_since(last_t).as_secs_f64();
                    let rate = if events >= last_events && dt > 0.0 { (events - last_events) as f64 / dt } else { 0.0 };
                    (last_events, last_t) = (events, now);
                    let elapsed = now.duration_since(start).as_secs_f64();
                    let eta = if done > 0 && total >= done {
                        format!(
                            ", step {done} of {total}, about {:.0} s left",
                            elapsed * (total - done) as f64 / done as f64
                        )
                    } else {
                        String::new()
                    };
                    bar.set_message(format!(
                        "simulated cycle {:.0}, {events} events, {:.2} M events/s, {elapsed:.0} s{eta}",
                        now_ps as f64 / cycle_ps,
                        rate / 1e6,
                    ));
                    bar.tick();
                }
            }
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
        });
        Watch { control, done: Some(tx), thread: Some(thread) }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Where results go: standard output, or a file that is created at the first result (so a
/// run that fails on its input leaves an existing file untouched). Each write is flushed, so
/// results of a long `--variant all` are on disk as soon as each variant finishes.
struct Sink<'a> {
    path: Option<&'a std::path::Path>,
    file: Option<std::fs::File>,
}

impl<'a> Sink<'a> {
    /// `path` was checked by [`crate::outputs::check_run_outputs`].
    fn new(path: Option<&'a std::path::Path>) -> Self {
        Sink { path, file: None }
    }

    fn write(&mut self, text: &str) -> Result<(), Failure> {
        let err = |e: std::io::Error| match self.path {
            Some(p) => failed(format!("writing --out `{}`: {e}", p.display())),
            None => failed(format!("writing standard output: {e}")),
        };
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
    if args.machine == crate::host::MACHINE {
        let sim_only = [
            (!args.set.is_empty(), "--set"),
            (args.max_wall.is_some(), "--max-wall"),
            (args.max_memory.is_some(), "--max-memory"),
            (args.trace.is_some(), "--trace"),
        ];
        return crate::host::run(crate::host::Args {
            app: args.app,
            variant: args.variant,
            procs: args.procs,
            params: args.param,
            seed: args.seed,
            json: args.json,
            csv: args.csv,
            out: args.out,
            stats: args.stats,
            sim_only,
        });
    }
    let (info, variants, cfg) =
        checked_inputs(&args.app, &args.variant, &args.param, &args.machine, &args.set, args.procs)?;
    let detail: Vec<detail_stats::Request> =
        args.stats.iter().map(|s| detail_stats::Request::parse(s)).collect::<Result<_, _>>()?;
    let trace = match &args.trace {
        None => None,
        Some(_) => {
            let window_cycles = args.trace_window.as_deref().map(crate::trace_out::parse_window).transpose()?;
            if args.trace_max_events == 0 {
                return Err(input("--trace-max-events 0: give at least 1"));
            }
            Some(commlab_sim::TraceOptions { window_cycles, max_events: args.trace_max_events })
        }
    };
    let trace_files: Vec<std::path::PathBuf> = args
        .trace
        .iter()
        .flat_map(|f| variants.iter().map(|v| crate::trace_out::path_for(f, v, variants.len() > 1)))
        .collect();
    let intervals = detail_stats::interval_cycles(&detail)?;
    crate::outputs::check_run_outputs(args.out.as_deref(), &detail, &trace_files)?;
    let mut sink = Sink::new(args.out.as_deref());
    let (name, fingerprint) = (cfg.spec.name.clone(), cfg.fingerprint());
    let meta = RunMeta {
        machine: &name,
        fingerprint: &fingerprint,
        overrides: &args.set,
        procs: cfg.nprocs(),
        seed: args.seed,
    };
    let cycle_ps = cfg.cycle_ps;
    let sim =
        Simulator::new(cfg).record_latencies(detail_stats::wants_latencies(&detail)).trace(trace).intervals(intervals);
    let clock_mhz = sim.config().spec.processor.clock_mhz;
    let jobs =
        jobs_that_fit(&args.app, &args.param, &sim, args.max_memory, args.jobs.map(|j| j as usize), variants.len())?;
    // One control for every run: --max-wall stops them all; the progress line follows
    // whichever run reported last.
    let watch = Watch::start(format!("run {}", info.name), args.max_wall, cycle_ps);
    let mut records = Vec::new();
    let mut results = Vec::new();
    let mut failed_checks = Vec::new();
    in_variant_order(&sim, info.name, &variants, &args.param, args.seed, jobs, &watch.control, |v, r| {
        let r = r.map_err(|e| match e {
            AppError::Input(m) => input(m),
            AppError::Run(m) => match (watch.control.stop_requested(), args.max_wall) {
                (true, Some(s)) => failed(format!("{} [{v}]: stopped at --max-wall {s} s: {m}", info.name)),
                _ => failed(format!("{} [{v}]: {m}", info.name)),
            },
        })?;
        if !r.check.ok {
            failed_checks.push(format!("{} [{v}]: answer check failed: {}", info.name, r.check.detail));
        }
        let record = ResultRecord::of_run(&r, &meta);
        if let (Some(file), Some(t)) = (&args.trace, &r.stats.trace) {
            let path = crate::trace_out::path_for(file, v, variants.len() > 1);
            let about = serde_json::json!({
                "app": r.app, "variant": v, "machine": meta.machine, "procs": meta.procs, "seed": meta.seed,
                "clock_mhz": clock_mhz, "cycles": r.stats.cycles, "window_cycles": args.trace_window,
            });
            crate::trace_out::write(&path, t, &r.stats.links, clock_mhz, about, args.trace_max_events)?;
        }
        if args.json {
            sink.write(&record.to_json_line())?;
        } else if !args.csv {
            sink.write(&output::to_text(&record))?;
        }
        records.push(record);
        if !detail.is_empty() {
            results.push(r);
        }
        Ok(())
    })?;
    if args.csv {
        sink.write(&output::to_csv(&records))?;
    }
    detail_stats::write(&detail, &results)?;
    if failed_checks.is_empty() {
        Ok(())
    } else {
        Err(failed(failed_checks.join("; ")))
    }
}

/// The checked inputs of a run: the app, its selected variants and the resolved machine
/// (errors in the order `commlab run` reports them).
pub(crate) fn checked_inputs(
    app: &str,
    variant: &str,
    params: &[String],
    machine: &str,
    set: &[String],
    procs: Option<usize>,
) -> Result<(&'static AppInfo, Vec<&'static str>, MachineConfig), Failure> {
    let info = commlab_apps::app_info(app).map_err(|e| input(e.to_string()))?;
    crate::variant_arg::check_variant_names(info, variant)?;
    commlab_apps::Params::parse(info, params).map_err(|e| input(e.to_string()))?;
    let cfg = machine_arg::load(machine, set, procs)?;
    let variants = crate::variant_arg::listed_variants(&Simulator::new(cfg.clone()), info, variant)?;
    Ok((info, variants, cfg))
}

/// Refuse a run that does not fit in memory; then how many of its `variants` variants run at
/// once: `jobs` (default: the cores), fewer if memory or memory mappings are short.
pub(crate) fn jobs_that_fit(
    app: &str,
    params: &[String],
    sim: &Simulator,
    max_memory: Option<u64>,
    jobs: Option<usize>,
    variants: usize,
) -> Result<usize, Failure> {
    memory_check::check(app, params, sim, max_memory)?;
    crate::alloc_failure::running(&memory_check::describe(app, params, sim));
    let jobs = jobs_asked(jobs.map(|j| j as u64));
    Ok(memory_check::runs_that_fit(app, params, sim, max_memory, jobs.min(variants)))
}

/// Runs at once as `--jobs` asks: the number given, or the cores (the default of run, sweep,
/// experiment and reproduce alike).
pub(crate) fn jobs_asked(jobs: Option<u64>) -> usize {
    jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j.max(1) as usize)
}

/// Run `variants` of `app` on `jobs` threads and hand each result to `each` in variant order, as
/// soon as every earlier variant's has been handed over. The first error `each` returns stops
/// the runs still going (through `control`) and is returned; nothing after it is handed over,
/// so the output is that of `jobs = 1` whatever the threads' timing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn in_variant_order(
    template: &Simulator,
    app: &'static str,
    variants: &[&'static str],
    params: &[String],
    seed: u64,
    jobs: usize,
    control: &Arc<RunControl>,
    mut each: impl FnMut(&'static str, Result<AppResult, AppError>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut fatal: Option<Failure> = None;
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Result<AppResult, AppError>)>();
        for _ in 0..jobs.max(1) {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(v) = variants.get(k) else { break };
                let sim = template.clone().with_control(Arc::clone(control));
                let r = commlab_apps::run_app(&sim, app, v, params, seed);
                if tx.send((k, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Results come back in any order.
        let mut waiting: BTreeMap<usize, Result<AppResult, AppError>> = BTreeMap::new();
        let mut written = 0;
        for (k, r) in rx {
            waiting.insert(k, r);
            while fatal.is_none() {
                let Some(r) = waiting.remove(&written) else { break };
                let v = variants[written];
                written += 1;
                if let Err(f) = each(v, r) {
                    fatal = Some(f);
                    // The runs still going are not reported: stop them.
                    stop.store(true, Ordering::Relaxed);
                    control.stop();
                }
            }
        }
    });
    fatal.map_or(Ok(()), Err)
}
