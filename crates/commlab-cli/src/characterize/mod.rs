//! `commlab characterize`: the host's memory system in the copy-transfer model (the T3D, T3E
//! and DEC 8400 study): copy and transfer bandwidth over strides x working sets, on one core
//! and between pairs of cores, core-to-core latency, and a machine file for the simulator
//! derived from the figures.
//!
//! Flow: topology (`topology`: cores, caches, pairs) ─▶ the grid (strides, working sets,
//! pairs) checked ─▶ clock ─▶ every point measured on pinned threads (`measure`, the loops in
//! `kernels`) with a progress bar ─▶ `DIR/points.jsonl` ─▶ `DIR/summary.json` and the printed
//! table (`summary`) ─▶ heat maps, the latency matrix and the load-latency curve (`plots`) ─▶
//! with `--emit-machine`, the machine file (`machine`).

mod compare;
mod kernels;
mod machine;
mod measure;
mod ops;
mod plots;
mod summary;
mod topology;

use crate::chart::Marker;
use crate::failure::{failed, input, Failure};
use measure::{Grid, Progress, CHASE};
// What `commlab experiment copy-transfer` shares with the host's characterisation.
pub(crate) use measure::size_text;
pub(crate) use plots::bandwidth_heatmap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
pub(crate) use summary::{geomean, median};
use topology::Topology;

/// `commlab characterize --help`.
pub const LONG_ABOUT: &str = "Measure this host's memory system in the copy-transfer model (as the \
T3D/T3E/DEC 8400 studies did), draw it, and derive a machine file for the simulator from it.\n\n\
Kernels, each over strides (in 64-bit words) x working sets (bytes), every word of the working set \
touched once per pass (stride s walks offsets 0, s, 2s, ..., then 1, 1+s, ...), loops unrolled four \
ways, results consumed, the caches primed by an untimed pass, the best of several samples kept:\n  \
load-sum            strided loads, summed\n  \
copy-strided-load   strided loads, contiguous stores (a gather: packing)\n  \
copy-strided-store  contiguous loads, strided stores (a scatter: unpacking)\n  \
local-fetch         one core writes its data, then copies it (strided loads, contiguous stores)\n  \
local-deposit       one core touches a buffer, copies its data into it, then reads it back\n  \
remote-fetch        the producer core writes its data; the consumer copies it into its own buffer \
(timed: the consumer's copy)\n  \
remote-deposit      the consumer first touches its buffer; the producer copies its data into it; the \
consumer reads it (timed: the copy plus the read)\n  \
chase               dependent loads in a random cyclic order, page by page (ns per load), at every other working set\n  \
core-to-core        one-way latency: two cores bounce a counter on one cache line (half a round trip)\n\
Synchronisation between producer and consumer is outside the timed parts. MB/s is the working set's \
bytes (10^6 per MB) over the best pass time. Threads are pinned to cores; the remote kernels run on one \
pair per relation the host has (SMT siblings, sharing a cache, different caches, different sockets) \
unless --pair says which.\n\n\
Output in --out DIR: points.jsonl (one JSON object per point: kernel, stride, working_set_bytes, \
mb_per_s, ns, cores, pair, samples), summary.json, heatmap-KERNEL[-A-B].png/.svg (stride x working set, \
colour = MB/s), latency-matrix.png/.svg, load-latency.png/.svg. The summary table (printed; --json \
prints summary.json instead) gives the plateau of each cache level, the remote/local and fetch/deposit \
ratios, whether packing by a local copy before a contiguous transfer could ever beat a strided \
transfer, and the core-to-core latency.\n\n\
--emit-machine FILE.toml writes a machine for the simulator (template: the t1 preset; the network a mesh \
of the host's cores with no per-hop latency): \
clock, line, cache, local miss, bulk bandwidth measured, the NI latency calibrated so the simulated \
remote miss equals the measured core-to-core latency; the message overheads (send, argument word, poll, \
dispatch, bulk set-up and per-byte) and the runtime's reference cost measured on the native runtime's own \
steps, the null one-way latency measured (native am-latency, median of 5) and what the simulated one lacks \
added to the dispatch; em3d's work costs (an edge, a node, a ghost value, a gathered line) from a sparse \
update, a copy and a gather kernel; every other key the template's, each commented with where it came \
from. No application's native run is an input. `commlab run em3d --machine FILE.toml` then predicts \
the host, and `commlab characterize --compare FILE.toml` runs em3d natively and on it side by side.\n\n\
Times: --quick a few seconds (3 s on a 2-core host), the default longer (working sets up to twice the last-level \
cache, at most 256M; --quick at most 64M: on a host with a larger cache, give --sizes to reach memory). \
Figures on a busy or virtual host are noisy.\n\n\
Examples:\n  \
commlab characterize --quick\n  \
commlab characterize --out my-host --emit-machine my-host.toml\n  \
commlab characterize --strides 1,2,8 --sizes 4K,64K,1M,16M --pair 0,1 --json";

#[derive(clap::Args)]
pub struct Args {
    /// Output directory [default: characterize-HOSTNAME].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// A short run (a few seconds): strides 1,2,3,8,31,64, working sets in steps of 4x up to
    /// 64M, 3 samples.
    #[arg(long)]
    quick: bool,
    /// Strides in 64-bit words, comma-separated, 1 to 1024 [default: 1,2,3,4,7,8,16,31,32,64].
    #[arg(long, value_name = "LIST")]
    strides: Option<String>,
    /// Working sets, comma-separated sizes (bytes, or with K, M, G), 1K to 4G [default: 4K
    /// doubling to twice the last-level cache, at most 256M].
    #[arg(long, value_name = "LIST")]
    sizes: Option<String>,
    /// Timed samples per point, the best kept [default: 5; --quick: 3].
    #[arg(long, value_name = "N")]
    reps: Option<String>,
    /// A core pair PRODUCER,CONSUMER for the remote kernels (repeatable) [default: one pair per
    /// relation the host has].
    #[arg(long, value_name = "A,B")]
    pair: Vec<String>,
    /// Write a machine file for the simulator derived from the measurements.
    #[arg(long, value_name = "FILE.toml")]
    emit_machine: Option<PathBuf>,
    /// Print the summary as JSON (summary.json) instead of the table.
    #[arg(long)]
    json: bool,
    /// Round trips per core-to-core latency sample (tests use few).
    #[arg(long, hide = true)]
    latency_rounds: Option<u64>,
    /// Instead of measuring: run em3d natively and on this machine (a file `--emit-machine`
    /// wrote, or a preset) side by side, per variant: measured/predicted and the fastest
    /// variant (a table, or JSON with --json).
    #[arg(long, value_name = "FILE.toml")]
    compare: Option<String>,
    /// With --compare: native runs per variant (the median is compared) [default: 5].
    #[arg(long, value_name = "N")]
    runs: Option<String>,
    /// With --compare: an em3d parameter (repeatable) [defaults: nodes=6000, iterations=40].
    #[arg(long, value_name = "KEY=VALUE")]
    param: Vec<String>,
    /// With --compare: override a key of the machine (repeatable), for what-ifs.
    #[arg(long, value_name = "KEY=VALUE")]
    set: Vec<String>,
}

const DEFAULT_STRIDES: [usize; 10] = [1, 2, 3, 4, 7, 8, 16, 31, 32, 64];
const QUICK_STRIDES: [usize; 6] = [1, 2, 3, 8, 31, 64];

fn parse_strides(s: &str) -> Result<Vec<usize>, Failure> {
    let mut out = Vec::new();
    for part in s.split(',') {
        match part.trim().parse::<usize>() {
            Ok(v) if (1..=1024).contains(&v) => {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            _ => {
                return Err(input(format!(
                    "--strides: `{}` is not a stride (give whole numbers of 64-bit words from 1 to 1024, e.g. 1,2,3,8)",
                    part.trim()
                )))
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn parse_sizes(s: &str) -> Result<Vec<u64>, Failure> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let v = crate::memory_check::parse_size(part).map_err(|e| input(format!("--sizes: {e}"))).and_then(|v| {
            if (1 << 10..=4 << 30).contains(&v) {
                Ok(v / 8 * 8)
            } else {
                Err(input(format!("--sizes: `{}` is out of range (working sets from 1K to 4G)", part.trim())))
            }
        })?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn parse_pair(s: &str, cores: &[usize]) -> Result<(usize, usize), Failure> {
    let bad = |why: String| input(format!("--pair `{s}`: {why}"));
    let (a, b) = s.split_once(',').ok_or_else(|| bad("expected PRODUCER,CONSUMER core ids, e.g. 0,1".into()))?;
    let core = |t: &str| -> Result<usize, Failure> {
        let id = t.trim().parse::<usize>().map_err(|_| bad(format!("`{}` is not a core id", t.trim())))?;
        if cores.contains(&id) {
            Ok(id)
        } else {
            Err(bad(format!(
                "core {id} is not one this process may run on (cores: {})",
                cores.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
            )))
        }
    };
    let (a, b) = (core(a)?, core(b)?);
    if a == b {
        return Err(bad("the two cores must differ".into()));
    }
    Ok((a, b))
}

/// The host's name (for the default directory and titles).
fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let name = name.trim();
    if name.is_empty() {
        "host".to_string()
    } else {
        name.to_string()
    }
}

/// `commlab characterize --compare`: the options checked, the comparison printed.
fn run_compare(args: &Args, machine: &str) -> Result<(), Failure> {
    let measuring = [
        (args.out.is_some(), "--out"),
        (args.quick, "--quick"),
        (args.strides.is_some(), "--strides"),
        (args.sizes.is_some(), "--sizes"),
        (args.reps.is_some(), "--reps"),
        (!args.pair.is_empty(), "--pair"),
        (args.emit_machine.is_some(), "--emit-machine"),
        (args.latency_rounds.is_some(), "--latency-rounds"),
    ];
    if let Some((_, option)) = measuring.iter().find(|(given, _)| *given) {
        return Err(input(format!(
            "--compare takes no {option} (it measures nothing: it runs em3d natively and on the machine)"
        )));
    }
    let runs = match &args.runs {
        Some(r) => match r.trim().parse::<usize>() {
            Ok(v) if (1..=100).contains(&v) => v,
            _ => {
                return Err(input(format!("--runs: `{r}` is not a number of runs (give a whole number from 1 to 100)")))
            }
        },
        None => compare::DEFAULT_RUNS,
    };
    let c = compare::compare(machine, &args.set, &args.param, runs)?;
    let text = if args.json {
        format!("{}\n", serde_json::to_string(&c).map_err(|e| failed(format!("the comparison as JSON: {e}")))?)
    } else {
        compare::table(&c)
    };
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|e| failed(format!("cannot print the comparison: {e}")))
}

/// `commlab characterize`.
pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(machine) = args.compare.clone() {
        return run_compare(&args, &machine);
    }
    for (given, option) in
        [(args.runs.is_some(), "--runs"), (!args.param.is_empty(), "--param"), (!args.set.is_empty(), "--set")]
    {
        if given {
            return Err(input(format!("{option} goes with --compare FILE.toml")));
        }
    }
    let started = Instant::now();
    let topo = Topology::detect();
    let (grid, out) = plan(&args, &topo)?;
    let (strides, sizes, home) = (grid.strides.clone(), grid.sizes.clone(), grid.home);
    let host = hostname();
    let clock = std::thread::scope(|s| {
        s.spawn(|| {
            kernels::pin(home);
            kernels::clock_mhz()
        })
        .join()
        .expect("clock thread")
    });
    let progress = Progress::new(grid.total(), false);
    let points = measure::run(&grid, &progress);
    progress.finish();

    let jsonl = out.join("points.jsonl");
    let mut text = String::new();
    for p in &points {
        text.push_str(&serde_json::to_string(p).map_err(|e| failed(format!("a point as JSON: {e}")))?);
        text.push('\n');
    }
    write(&jsonl, &text)?;

    let mut summary = summary::summarise(&host, clock, &topo, &strides, &sizes, home, &points);
    let markers: Vec<Marker> = topo
        .caches
        .iter()
        .filter(|c| {
            sizes.first().is_some_and(|&f| c.size_bytes >= f) && sizes.last().is_some_and(|&l| c.size_bytes <= l)
        })
        .map(|c| Marker { x: c.size_bytes as f64, label: format!("L{} {}", c.level, size_text(c.size_bytes)) })
        .collect();
    let files = plots::draw(&out, &host, &strides, &sizes, &points, &markers).map_err(failed)?;

    let emitted = match &args.emit_machine {
        Some(path) => {
            let mut m = measured(&summary, &topo, clock, &points);
            m.ops = Some(ops::measure(home)?);
            Some(machine::emit(path, &host, &topo, &m, &summary)?)
        }
        None => None,
    };
    summary.wall_seconds = started.elapsed().as_secs_f64();
    let json = serde_json::to_string_pretty(&summary).map_err(|e| failed(format!("the summary as JSON: {e}")))?;
    write(&out.join("summary.json"), &format!("{json}\n"))?;

    let mut stdout = std::io::stdout().lock();
    let shown = printed(&args, &summary, &json, &emitted, &jsonl, &out, &files);
    stdout.write_all(shown.as_bytes()).map_err(|e| failed(format!("cannot print the summary: {e}")))?;
    Ok(())
}

/// The grid to measure from the options (each checked), and the output directory (created).
fn plan(args: &Args, topo: &Topology) -> Result<(Grid, PathBuf), Failure> {
    let cores = topo.core_ids();
    let strides = match &args.strides {
        Some(s) => parse_strides(s)?,
        None if args.quick => QUICK_STRIDES.to_vec(),
        None => DEFAULT_STRIDES.to_vec(),
    };
    let reps = match &args.reps {
        Some(r) => match r.trim().parse::<usize>() {
            Ok(v) if (1..=1000).contains(&v) => v,
            _ => {
                return Err(input(format!(
                    "--reps: `{r}` is not a number of samples (give a whole number from 1 to 1000)"
                )))
            }
        },
        None if args.quick => 3,
        None => 5,
    };
    let mut pairs = Vec::new();
    for p in &args.pair {
        let (a, b) = parse_pair(p, &cores)?;
        pairs.push((a, b, topo.classify(a, b)));
    }
    if args.pair.is_empty() {
        pairs = topo.representative_pairs();
    }
    let llc = topo.last_level().map(|c| c.size_bytes);
    let cap: u64 = if args.quick { 64 << 20 } else { 256 << 20 };
    let sizes = match &args.sizes {
        Some(s) => parse_sizes(s)?,
        None => {
            let top = llc.map(|l| (2 * l).next_power_of_two()).unwrap_or(256 << 20).clamp(1 << 20, cap);
            let step = if args.quick { 4 } else { 2 };
            std::iter::successors(Some(4096u64), |s| Some(s * step)).take_while(|&s| s <= top).collect()
        }
    };
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(format!("characterize-{}", hostname())));
    if out.exists() && !out.is_dir() {
        return Err(input(format!("--out `{}` exists and is not a directory", out.display())));
    }
    if let Some(m) = &args.emit_machine {
        if m.extension().and_then(|e| e.to_str()) != Some("toml") {
            return Err(input(format!("--emit-machine `{}`: give a file name ending in .toml", m.display())));
        }
    }
    std::fs::create_dir_all(&out).map_err(|e| input(format!("cannot create --out `{}`: {e}", out.display())))?;
    if let Some(m) = &args.emit_machine {
        let parent = m.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            return Err(input(format!("--emit-machine `{}`: its directory does not exist", m.display())));
        }
    }

    let home = pairs.first().map(|p| p.0).unwrap_or(cores[0]);
    // The chase at every other working set and the largest (the curve needs no more).
    let mut chase_sizes: Vec<u64> = sizes.iter().copied().step_by(2).collect();
    if sizes.last() != chase_sizes.last() {
        chase_sizes.extend(sizes.last());
    }
    let latency_pairs =
        topo.latency_pairs(16).into_iter().map(|(a, b)| (a, b, topo.classify(a, b))).collect::<Vec<_>>();
    let grid = Grid {
        strides: strides.clone(),
        sizes: sizes.clone(),
        reps,
        sample_bytes: if args.quick { 1 << 20 } else { 4 << 20 },
        big_bytes: 64 << 20,
        home,
        pairs,
        latency_pairs,
        latency_rounds: args.latency_rounds.unwrap_or(1000).max(1),
        latency_samples: if args.quick { 30 } else { 100 },
        chase_sizes,
        chase_loads: if args.quick { 200_000 } else { 1_000_000 },
    };
    Ok((grid, out))
}

/// What `characterize` prints: summary.json with --json, else the summary table and the files written.
fn printed(
    args: &Args,
    summary: &summary::Summary,
    json: &str,
    emitted: &Option<machine::Emitted>,
    jsonl: &std::path::Path,
    out: &std::path::Path,
    files: &[PathBuf],
) -> String {
    if args.json {
        format!("{json}\n")
    } else {
        let mut t = summary::table(summary);
        if let (Some(e), Some(path)) = (emitted, &args.emit_machine) {
            t.push_str(&format!("\nmachine file {} (template {}):\n", path.display(), machine::TEMPLATE));
            for (k, v) in &e.values {
                t.push_str(&format!("  {k} = {v}\n"));
            }
        }
        t.push_str(&format!("\nwrote {}\n", jsonl.display()));
        t.push_str(&format!("wrote {}\n", out.join("summary.json").display()));
        for f in files {
            t.push_str(&format!("wrote {}\n", f.display()));
        }
        t
    }
}

/// The host's own figures a native run is compared with, measured on the spot by the kernels
/// `characterize` uses (`commlab run am-latency|bulk-bw --machine host` adds them to the
/// record).
pub(crate) mod reference {
    use super::kernels;

    /// Core-to-core one-way latency in ns between OS cores `a` and `b`: as `characterize
    /// --quick` measures it (a cache-line ping-pong, 30 samples of 1000 round trips, the best
    /// sample's round trip halved).
    pub fn core_to_core_ns(a: usize, b: usize) -> f64 {
        kernels::ping_pong_ns(a, b, 1000, 30)
    }

    /// The same through two lines, one each way: the floor of a message through a polled
    /// queue ([`kernels::two_line_ping_pong_ns`]).
    pub fn two_line_ns(a: usize, b: usize) -> f64 {
        kernels::two_line_ping_pong_ns(a, b, 1000, 30)
    }

    /// A cross-core copy of `bytes` bytes from OS core `a` to OS core `b`
    /// ([`kernels::cross_copy`]): best of 5 to 30 samples (fewer for larger copies, about 32
    /// MB copied in all), as (write, read) in seconds: [`kernels::CrossCopy`]'s two halves.
    pub fn cross_copy_secs(a: usize, b: usize, bytes: usize) -> (f64, f64) {
        let samples = ((32usize << 20) / bytes.max(1)).clamp(5, 30);
        let c = kernels::cross_copy(a, b, bytes, samples);
        (c.write_secs, c.read_secs)
    }

    /// memcpy bandwidth in MB/s (10^6 bytes) for copies of `bytes` bytes on OS core `core`
    /// (warm buffers, best of 5 samples: [`kernels::memcpy_secs`]).
    pub fn memcpy_mb_per_s(core: usize, bytes: usize) -> f64 {
        std::thread::scope(|s| {
            s.spawn(|| {
                kernels::pin(core);
                bytes as f64 / kernels::memcpy_secs(bytes, 5) / 1e6
            })
            .join()
            .expect("memcpy thread")
        })
    }
}

fn write(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| failed(format!("cannot write `{}`: {e}", path.display())))
}

/// The figures the machine file takes, from the summary and the points.
fn measured(
    summary: &summary::Summary,
    topo: &Topology,
    clock: Option<f64>,
    points: &[measure::Point],
) -> machine::Measured {
    let chase: Vec<(u64, f64)> =
        points.iter().filter(|p| p.kernel == CHASE).filter_map(|p| p.working_set_bytes.map(|w| (w, p.ns))).collect();
    let private = topo.largest_private().map(|c| c.size_bytes).unwrap_or(0);
    let llc = topo.last_level().map(|c| c.size_bytes);
    // Beyond the private caches: the smallest chased working set at least 4x the largest
    // private cache (well past its edge), else the largest chased.
    let miss = chase.iter().find(|(w, _)| *w >= 4 * private).or(chase.last()).map(|&(w, ns)| (ns, w));
    let memory = llc.and_then(|l| chase.iter().rev().find(|(w, _)| *w >= 2 * l)).map(|&(w, ns)| (ns, w));
    let bulk = summary.pairs.first().and_then(|p| p.bulk_mb_per_s.zip(p.bulk_working_set_bytes));
    machine::Measured {
        clock_mhz: clock,
        cores: topo.cores.len(),
        miss_ns: miss,
        memory_ns: memory,
        core_to_core_ns: summary.core_to_core.as_ref().map(|l| l.median_ns),
        bulk_mb_per_s: bulk,
        ops: None,
    }
}

#[cfg(test)]
mod tests {
    use super::topology::PairClass;
    use super::*;

    #[test]
    fn grid_inputs_are_checked() {
        assert_eq!(parse_strides("8,1,2,8").ok(), Some(vec![1, 2, 8]));
        assert!(parse_strides("0").unwrap_err().message.contains("`0` is not a stride"));
        assert!(parse_strides("1,x").is_err());
        assert_eq!(parse_sizes("64K,4K").ok(), Some(vec![4096, 65536]));
        assert!(parse_sizes("lots").unwrap_err().message.contains("--sizes"));
        assert!(parse_sizes("16").unwrap_err().message.contains("out of range"));
        assert_eq!(parse_pair("0,1", &[0, 1]).ok(), Some((0, 1)));
        let e = parse_pair("0,9", &[0, 1]).unwrap_err();
        assert!(e.message.contains("core 9") && e.status == 2, "{}", e.message);
        assert!(parse_pair("1,1", &[0, 1]).is_err());
        assert!(parse_pair("1", &[0, 1]).is_err());
    }

    #[test]
    fn pair_classes_order_closest_first() {
        assert!(PairClass::SmtSibling < PairClass::DifferentSocket);
    }
}
