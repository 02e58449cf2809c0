//! `commlab bench`: simulator speed on fixed workloads (events per second, messages per
//! second, shared references and misses per second, wall time), the median of several
//! repetitions. Wall time covers the whole run, set-up included; reference and miss counts
//! cover the timed region, so the rates are slight underestimates. Speed targets live here, not in
//! timed unit tests.
//!
//! Events per remote miss (events / (cache misses - local misses)) and per message (events /
//! (messages + protocol messages + one-sided requests)) divide the whole run's events by the
//! timed region's operations, so set-up events count too; they are blank when the workload has
//! none of those operations.
//!
//! `--baseline PATH` measures another build side by side, as speed claims on a noisy machine
//! need: every repetition of a workload runs the baseline binary (a child process running
//! that one workload once) and then this build, so drift in the machine's load falls on both.
//! Rows add the baseline's median wall time, the ratio of the medians (this / baseline; below
//! 1 is faster) and whether both counted the same events; a summary line gives the geometric
//! mean of the ratios and names any workload whose events differ.
//!
//! `--instructions` counts each workload's host instructions once under cachegrind (this
//! build's, as a child `bench --only W --repeat 1`, and the baseline's the same way; see
//! `instructions.rs`): a measure of the simulator's cost that does not vary from run to run.

use crate::failure::{failed, input, Failure};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use serde_json::json;

/// One benchmark workload: an app run with fixed machine and parameters.
struct Workload {
    name: &'static str,
    /// The preset it runs on.
    machine: &'static str,
    app: &'static str,
    variant: &'static str,
    procs: usize,
    set: &'static [&'static str],
    params: &'static [&'static str],
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "alltoall-256-int",
        machine: "alewife",
        app: "alltoall-stress",
        variant: "mp-int",
        procs: 256,
        set: &[],
        params: &["messages=800"],
    },
    Workload {
        name: "alltoall-256-poll",
        machine: "alewife",
        app: "alltoall-stress",
        variant: "mp-poll",
        procs: 256,
        set: &[],
        params: &["messages=800"],
    },
    Workload {
        name: "bisection-32-cross",
        machine: "alewife",
        app: "bisection-bw",
        variant: "mp-int",
        procs: 32,
        set: &["cross_traffic.rate_bytes_per_cycle=6"],
        params: &["messages=400"],
    },
    Workload {
        name: "mem-hits-32",
        machine: "alewife",
        app: "mem-refs",
        variant: "sm",
        procs: 32,
        set: &[],
        params: &["pattern=hits", "refs=400000"],
    },
    Workload {
        name: "mem-misses-32",
        machine: "alewife",
        app: "mem-refs",
        variant: "sm",
        procs: 32,
        set: &[],
        params: &["pattern=misses", "refs=20000"],
    },
    Workload {
        name: "hotspot-32",
        machine: "alewife",
        app: "am-throughput",
        variant: "mp-int",
        procs: 32,
        set: &[],
        params: &["senders=31", "messages=400", "handler_cycles=200"],
    },
    // The default EM3D run (10000 nodes, 50 iterations on 32-processor Alewife), every variant.
    Workload { name: "em3d-sm", machine: "alewife", app: "em3d", variant: "sm", procs: 32, set: &[], params: &[] },
    Workload {
        name: "em3d-sm-pf",
        machine: "alewife",
        app: "em3d",
        variant: "sm-pf",
        procs: 32,
        set: &[],
        params: &[],
    },
    Workload {
        name: "em3d-mp-int",
        machine: "alewife",
        app: "em3d",
        variant: "mp-int",
        procs: 32,
        set: &[],
        params: &[],
    },
    Workload {
        name: "em3d-mp-poll",
        machine: "alewife",
        app: "em3d",
        variant: "mp-poll",
        procs: 32,
        set: &[],
        params: &[],
    },
    Workload { name: "em3d-bulk", machine: "alewife", app: "em3d", variant: "bulk", procs: 32, set: &[], params: &[] },
    // A 3-D finite-element matrix of BCSSTK18's order (12,167 unknowns, 27 per row).
    Workload {
        name: "iccg-fe3d-sm",
        machine: "alewife",
        app: "iccg",
        variant: "sm",
        procs: 32,
        set: &[],
        params: &["fe_dim=3", "fe_elements=22"],
    },
    Workload {
        name: "iccg-fe3d-mp-int",
        machine: "alewife",
        app: "iccg",
        variant: "mp-int",
        procs: 32,
        set: &[],
        params: &["fe_dim=3", "fe_elements=22"],
    },
    // The default MOLDYN run (2048 molecules, 40 steps): locks and 3-party misses, and DMA.
    Workload { name: "moldyn-sm", machine: "alewife", app: "moldyn", variant: "sm", procs: 32, set: &[], params: &[] },
    Workload {
        name: "moldyn-bulk",
        machine: "alewife",
        app: "moldyn",
        variant: "bulk",
        procs: 32,
        set: &[],
        params: &[],
    },
    // The default UNSTRUC mesh (1964 nodes, 20 iterations): per-node locks, and fine-grain messages.
    Workload {
        name: "unstruc-sm",
        machine: "alewife",
        app: "unstruc",
        variant: "sm",
        procs: 32,
        set: &[],
        params: &[],
    },
    Workload {
        name: "unstruc-mp-int",
        machine: "alewife",
        app: "unstruc",
        variant: "mp-int",
        procs: 32,
        set: &[],
        params: &[],
    },
    // The runtime study's primitives and programs, on its machine (alewife-sim, 64 processors).
    Workload {
        name: "rti-sm",
        machine: "alewife-sim",
        app: "rti",
        variant: "sm",
        procs: 64,
        set: &[],
        params: &["rounds=2000"],
    },
    Workload {
        name: "memcpy-sm",
        machine: "alewife-sim",
        app: "memcpy",
        variant: "sm",
        procs: 64,
        set: &[],
        params: &["bytes=16384"],
    },
    Workload {
        name: "accum-sm-pf",
        machine: "alewife-sim",
        app: "accum",
        variant: "sm-pf",
        procs: 64,
        set: &[],
        params: &["words=65536"],
    },
    Workload {
        name: "grain-sm",
        machine: "alewife-sim",
        app: "grain",
        variant: "sm",
        procs: 64,
        set: &[],
        params: &["n=14", "l=100"],
    },
    Workload {
        name: "grain-mp",
        machine: "alewife-sim",
        app: "grain",
        variant: "mp",
        procs: 64,
        set: &[],
        params: &["n=14", "l=100"],
    },
    Workload { name: "aq-mp", machine: "alewife-sim", app: "aq", variant: "mp", procs: 64, set: &[], params: &[] },
    Workload {
        name: "jacobi-sm",
        machine: "alewife-sim",
        app: "jacobi",
        variant: "sm",
        procs: 64,
        set: &[],
        params: &["n=256"],
    },
];

/// What one run of a workload by the baseline binary reported.
struct BaselineRun {
    wall_seconds: f64,
    events: u64,
}

/// Run workload `name` once with the baseline binary at `path` (absolute, see
/// [`check_baseline`]). Its failures come after rows may have been printed, so they are run
/// failures (exit 1), not bad input.
fn run_baseline(path: &std::path::Path, name: &str, model: Option<&str>) -> Result<BaselineRun, Failure> {
    let mut cmd = std::process::Command::new(path);
    cmd.args(["bench", "--only", name, "--repeat", "1", "--json"]);
    if let Some(m) = model {
        cmd.args(["--model", m]);
    }
    let out = cmd.output().map_err(|e| failed(format!("--baseline `{}`: cannot run it: {e}", path.display())))?;
    if !out.status.success() {
        // Its own one-line error if it gave one, else its last line and how it ended.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = match stderr.lines().rev().find_map(|l| l.strip_prefix("commlab: ")) {
            Some(line) => line.to_string(),
            None => {
                format!("{} ({})", stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message"), out.status)
            }
        };
        return Err(failed(format!("--baseline `{}` failed on workload {name}: {why}", path.display())));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row: Option<serde_json::Value> =
        stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).find(|v: &serde_json::Value| v["workload"] == name);
    let fields = |v: &serde_json::Value| Some((v.get("wall_seconds")?.as_f64()?, v.get("events")?.as_u64()?));
    match row.as_ref().and_then(fields) {
        Some((wall_seconds, events)) => Ok(BaselineRun { wall_seconds, events }),
        None => Err(failed(format!(
            "--baseline `{}`: its `bench --json` printed no row for workload {name} with wall_seconds and events",
            path.display()
        ))),
    }
}

/// The baseline as an absolute path (a bare name would otherwise be looked up on `$PATH`),
/// refused before any row is printed when it cannot run or is not a commlab binary.
fn check_baseline(path: &std::path::Path) -> Result<std::path::PathBuf, Failure> {
    let bad = |why: String| input(format!("--baseline `{}`: {why}", path.display()));
    let abs = std::path::absolute(path).map_err(|e| bad(format!("{e}")))?;
    let out =
        std::process::Command::new(&abs).arg("--version").output().map_err(|e| bad(format!("cannot run it: {e}")))?;
    if !out.status.success() || !out.stdout.starts_with(b"commlab ") {
        return Err(bad("not a commlab binary (`--version` did not print `commlab <version>`)".into()));
    }
    Ok(abs)
}

/// The median; of an even count, the upper of the two middle values.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `commlab bench`: each workload's events and rates, the median of `repeat` runs.
pub fn run(
    repeat: usize,
    json_out: bool,
    only: Option<&str>,
    model: Option<&str>,
    baseline: Option<&std::path::Path>,
    instructions: bool,
) -> Result<(), Failure> {
    if repeat == 0 {
        return Err(input("--repeat 0: give at least 1 repetition"));
    }
    if instructions {
        crate::instructions::check_valgrind()?;
    }
    let selected: Vec<&Workload> = WORKLOADS.iter().filter(|w| only.is_none_or(|o| w.name == o)).collect();
    if selected.is_empty() {
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        return Err(input(format!("unknown workload `{}` (valid: {})", only.unwrap_or(""), names.join(", "))));
    }
    let baseline = baseline.map(check_baseline).transpose()?;
    let baseline = baseline.as_deref();
    if !json_out {
        print!(
            "{:<20} {:>10} {:>10} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}",
            "workload", "events", "wall s", "M events/s", "k msgs/s", "M refs/s", "M misses/s", "ev/miss", "ev/msg"
        );
        if baseline.is_some() {
            print!(" {:>10} {:>8} {:>7}", "base s", "new/base", "events");
        }
        if instructions {
            print!(" {:>10} {:>9}", "M instr", "instr/ev");
            if baseline.is_some() {
                print!(" {:>12} {:>9}", "base M instr", "instr n/b");
            }
        }
        println!("   (median of {repeat})");
    }
    let mut em3d_wall = (0.0, 0);
    // Ratios of medians (this build / baseline), and workloads whose events differ.
    let mut ratios: Vec<f64> = Vec::new();
    let mut differ: Vec<&str> = Vec::new();
    // Events new/base of the workloads whose events differ.
    let mut event_ratios: Vec<f64> = Vec::new();
    // Instructions new/base of each workload (`--instructions` with a baseline).
    let mut instruction_ratios: Vec<f64> = Vec::new();
    let me = if instructions {
        Some(std::env::current_exe().map_err(|e| failed(format!("--instructions: this program's path: {e}")))?)
    } else {
        None
    };
    for w in selected {
        let mut set: Vec<String> = w.set.iter().map(|s| s.to_string()).collect();
        if let Some(m) = model {
            set.push(format!("network.model={m}"));
        }
        let params: Vec<String> = w.params.iter().map(|s| s.to_string()).collect();
        let cfg = MachineConfig::preset(w.machine, &set, Some(w.procs)).map_err(|e| input(e.to_string()))?;
        let sim = Simulator::new(cfg);
        let mut walls = Vec::new();
        let mut base_runs = Vec::new();
        let mut last = None;
        for _ in 0..repeat {
            if let Some(path) = baseline {
                base_runs.push(run_baseline(path, w.name, model)?);
            }
            let r = commlab_apps::run_app(&sim, w.app, w.variant, &params, 1)
                .map_err(|e| failed(format!("bench {}: {e}", w.name)))?;
            walls.push(r.stats.wall_seconds);
            last = Some(r);
        }
        let r = last.expect("at least one repetition");
        let wall = median(walls);
        // The baseline's median wall time, the events its first run counted, and whether
        // every one of its runs counted this build's events.
        let base = (!base_runs.is_empty()).then(|| Base {
            wall: median(base_runs.iter().map(|b| b.wall_seconds).collect()),
            events: base_runs[0].events,
            same: base_runs.iter().all(|b| b.events == r.stats.events),
        });
        // A baseline wall time of 0 (a clock that did not move) gives no ratio.
        let ratio = base.and_then(|b| (b.wall > 0.0).then(|| wall / b.wall));
        ratios.extend(ratio);
        if let Some(b) = base.filter(|b| !b.same) {
            differ.push(w.name);
            event_ratios.extend(b.event_ratio(r.stats.events));
        }
        if w.app == "em3d" {
            em3d_wall = (em3d_wall.0 + wall, em3d_wall.1 + 1);
        }
        let counted = match &me {
            Some(me) => {
                let mut args = vec!["bench", "--only", w.name, "--repeat", "1", "--json"];
                if let Some(m) = model {
                    args.extend(["--model", m]);
                }
                let new = crate::instructions::count(me, &args, &format!("bench {}", w.name))?;
                let base = baseline
                    .map(|b| crate::instructions::count(b, &args, &format!("--baseline `{}` {}", b.display(), w.name)))
                    .transpose()?;
                let counted = Instructions { new, base };
                instruction_ratios.extend(counted.ratio());
                Some(counted)
            }
            None => None,
        };
        print_row(w, &r, wall, repeat, json_out, base, ratio, counted);
    }
    print_totals(json_out, repeat, em3d_wall, &ratios, &differ, &event_ratios, &instruction_ratios);
    Ok(())
}

/// A workload's baseline runs: the median wall time, the events of the first, and whether all
/// counted this build's events.
#[derive(Clone, Copy)]
struct Base {
    wall: f64,
    events: u64,
    same: bool,
}

impl Base {
    /// This build's events over the baseline's (none if the baseline counted none).
    fn event_ratio(&self, events: u64) -> Option<f64> {
        (self.events > 0).then(|| events as f64 / self.events as f64)
    }
}

/// A workload's host instructions (`--instructions`): this build's, and the baseline's.
#[derive(Clone, Copy)]
struct Instructions {
    new: u64,
    base: Option<u64>,
}

impl Instructions {
    /// This build's over the baseline's.
    fn ratio(&self) -> Option<f64> {
        self.base.filter(|&b| b > 0).map(|b| self.new as f64 / b as f64)
    }
}

/// One workload's row: its events and rates (a JSON line with --json), beside the baseline's.
#[allow(clippy::too_many_arguments)]
fn print_row(
    w: &Workload,
    r: &commlab_apps::AppResult,
    wall: f64,
    repeat: usize,
    json_out: bool,
    base: Option<Base>,
    ratio: Option<f64>,
    counted: Option<Instructions>,
) {
    let events = r.stats.events as f64;
    let msgs = r.counters.get(commlab_sim::counters::MESSAGES.name).copied().unwrap_or(0.0);
    // Shared references: hits + misses of the timed region (set-up excluded).
    let hits = r.counters.get(commlab_sim::counters::CACHE_HITS.name).copied().unwrap_or(0.0);
    let misses = r.counters.get(commlab_sim::counters::CACHE_MISSES.name).copied().unwrap_or(0.0);
    let counter = |k: &str| r.counters.get(k).copied().unwrap_or(0.0);
    let remote_misses = misses - counter(commlab_sim::counters::LOCAL_MISSES.name);
    let all_msgs = msgs
        + counter(commlab_sim::counters::PROTOCOL_MESSAGES.name)
        + counter(commlab_sim::counters::ONE_SIDED_REQUESTS.name);
    let per = |n: f64| (n > 0.0).then(|| events / n);
    let (per_miss, per_msg) = (per(remote_misses), per(all_msgs));
    let cell = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.2}"));
    if json_out {
        let mut j = json!({
            "workload": w.name, "app": w.app, "variant": w.variant, "procs": w.procs,
            "events": r.stats.events, "wall_seconds": wall, "events_per_second": events / wall,
            "messages_per_second": msgs / wall, "repeat": repeat,
            "shared_refs_per_second": (hits + misses) / wall, "misses_per_second": misses / wall,
            "remote_misses": remote_misses, "events_per_remote_miss": per_miss,
            "messages_all": all_msgs, "events_per_message": per_msg,
            "events_by_kind": r.stats.events_by_kind.iter().map(|&(k, n)| (k.to_string(), json!(n)))
                .collect::<serde_json::Map<_, _>>(),
        });
        if let Some(b) = base {
            j["baseline_wall_seconds"] = json!(b.wall);
            j["wall_ratio"] = json!(ratio);
            j["baseline_events"] = json!(b.events);
            j["events_ratio"] = json!(b.event_ratio(r.stats.events));
            j["baseline_events_same"] = json!(b.same);
        }
        if let Some(c) = counted {
            j["instructions"] = json!(c.new);
            j["instructions_per_event"] = json!(per_event(c.new, r.stats.events));
            if c.base.is_some() {
                j["baseline_instructions"] = json!(c.base);
                j["instructions_ratio"] = json!(c.ratio());
            }
        }
        println!("{j}");
    } else {
        print!(
            "{:<20} {:>10} {:>10.4} {:>12.2} {:>12.1} {:>12.1} {:>12.2} {:>8} {:>8}",
            w.name,
            r.stats.events,
            wall,
            events / wall / 1e6,
            msgs / wall / 1e3,
            (hits + misses) / wall / 1e6,
            misses / wall / 1e6,
            cell(per_miss),
            cell(per_msg)
        );
        if let Some(b) = base {
            let ratio = ratio.map_or("-".to_string(), |r| format!("{r:.3}"));
            // Events: `same`, or this build's over the baseline's.
            let events = match (b.same, b.event_ratio(r.stats.events)) {
                (true, _) => "same".to_string(),
                (false, Some(e)) => format!("x{e:.3}"),
                (false, None) => "DIFFER".to_string(),
            };
            print!(" {:>10.4} {:>8} {:>7}", b.wall, ratio, events);
        }
        if let Some(c) = counted {
            let per = per_event(c.new, r.stats.events).map_or(String::new(), |v| format!("{v:.0}"));
            print!(" {:>10.1} {:>9}", c.new as f64 / 1e6, per);
            if let Some(b) = c.base {
                let ratio = c.ratio().map_or("-".to_string(), |r| format!("{r:.4}"));
                print!(" {:>12.1} {:>9}", b as f64 / 1e6, ratio);
            }
        }
        println!();
    }
}

/// Host instructions per event (the whole run's instructions over its events; none without events).
fn per_event(instructions: u64, events: u64) -> Option<f64> {
    (events > 0).then(|| instructions as f64 / events as f64)
}

/// The totals: em3d's five variants together, and the ratio to the baseline over the workloads.
fn print_totals(
    json_out: bool,
    repeat: usize,
    em3d_wall: (f64, i32),
    ratios: &[f64],
    differ: &[&str],
    event_ratios: &[f64],
    instruction_ratios: &[f64],
) {
    let instructions_geomean = crate::characterize::geomean(instruction_ratios);
    let events_geomean = crate::characterize::geomean(event_ratios);
    if em3d_wall.1 == 5 {
        if json_out {
            println!("{}", json!({"workload": "em3d-all-variants", "wall_seconds": em3d_wall.0, "repeat": repeat}));
        } else {
            println!("em3d, all 5 variants: {:.3} s wall (sum of medians)", em3d_wall.0);
        }
    }
    if let Some(geomean) = crate::characterize::geomean(ratios) {
        if json_out {
            println!(
                "{}",
                json!({"workload": "baseline-summary", "wall_ratio_geomean": geomean, "workloads": ratios.len(),
                       "events_differ": differ, "events_ratio_geomean": events_geomean,
                       "instructions_ratio_geomean": instructions_geomean})
            );
        } else {
            let events = if differ.is_empty() {
                "every workload counted the same events".to_string()
            } else {
                let mean =
                    events_geomean.map_or(String::new(), |g| format!(" (events new/base {g:.3}, geometric mean)"));
                format!("events differ in: {}{mean}", differ.join(", "))
            };
            let instructions =
                instructions_geomean.map_or(String::new(), |g| format!("; instructions new/base {g:.4}"));
            println!(
                "against the baseline: wall time new/base {geomean:.3} (geometric mean of {} workloads){instructions}; {events}",
                ratios.len()
            );
        }
    }
}
