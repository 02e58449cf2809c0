//! `commlab run APP --machine host`: the application's variants on this computer's cores
//! (`commlab-native`), reported in the same records as simulated runs.
//!
//! Variants run one after another (at once they would share the cores they are measuring).
//! Machine options that only mean something on a simulated machine (`--set`, `--max-wall`,
//! `--max-memory`) are refused with a message naming them. For `am-latency` and `bulk-bw` the
//! host's references, measured in the same process on the same two cores, go beside the figure
//! (`characterize::reference`: core-to-core and two-line ping-pong, a cross-core copy and a
//! memcpy of the same size), with the native figure's ratio to each.

use crate::detail_stats;
use crate::failure::{failed, input, Failure};
use crate::output;
use crate::record::{ResultRecord, RunMeta};
use commlab_api::{Backend, SetCounter};
use commlab_apps::AppError;
use commlab_native::NativeBackend;
use std::io::Write;

commlab_api::counters! {
    /// The counters a run on the host adds: every run's CPU share (`commlab-native`), and
    /// am-latency's and bulk-bw's host references, measured on the same cores (none when the
    /// two processors share a core).
    pub HOST_COUNTERS [commlab_native::CPU_SHARE];
    ONE_WAY_NS = "one_way_ns", "ns", "am-latency: `one_way_cycles` in nanoseconds at the host's clock";
    CORE_TO_CORE_NS = "core_to_core_ns", "ns",
        "am-latency and bulk-bw: the host's core-to-core one-way latency between the two processors' cores, measured in the same process (a cache-line ping-pong, as `characterize --quick`)";
    ONE_WAY_OVER_CORE_TO_CORE = "one_way_over_core_to_core", "ratio", "am-latency: `one_way_ns` over `core_to_core_ns`";
    TWO_LINE_NS = "two_line_ns", "ns",
        "am-latency and bulk-bw: the same through two lines, one each way: the floor of a message through a polled queue";
    ONE_WAY_OVER_TWO_LINE = "one_way_over_two_line", "ratio", "am-latency: `one_way_ns` over `two_line_ns`";
    STAMP_NS = "stamp_ns", "ns",
        "am-latency: what one timestamp costs natively (`now_cycles`: lfence and the clock), as the handler's entry is stamped (median, one core)";
    SEND_NS = "send_ns", "ns",
        "am-latency: a null send natively after its start stamp: checks, the slot's header and sequence number, the published count (median, one core)";
    LOOK_NS = "look_ns", "ns",
        "am-latency: one look of a native wait finding nothing (clock read, a look at each sender's next slot, the condition); a message waits half a look on average (median, one core)";
    DISPATCH_NS = "dispatch_ns", "ns",
        "am-latency: a message found to its handler and back natively: taken from its slot, an empty handler called, the slot given back (median, one core)";
    PATH_FLOOR_NS = "path_floor_ns", "ns",
        "am-latency: `two_line_ns` plus the path's pieces on the way: `send_ns` + `look_ns`/2 + `dispatch_ns` + `stamp_ns`";
    ONE_WAY_OVER_PATH_FLOOR = "one_way_over_path_floor", "ratio",
        "am-latency: `one_way_ns` over `path_floor_ns` (near 1: the pieces and the line transfers explain the message's time)";
    COPY_FLOOR_NS = "copy_floor_ns", "ns",
        "am-latency with `bytes` > 0: the host's cross-core copy of that many bytes between the two cores, to the point a message's time ends (the sender copies into one of two buffers in turn, which the receiver read two copies before, as the native pool alternates its two, and sets a flag; copy start to the receiver seeing the flag; best of 5-30)";
    ONE_WAY_OVER_COPY_FLOOR = "one_way_over_copy_floor", "ratio", "am-latency with `bytes` > 0: `one_way_ns` over `copy_floor_ns`";
    MB_PER_S = "mb_per_s", "MB/s", "bulk-bw: `bytes_per_cycle` at the host's clock";
    COPY_FLOOR_MB_PER_S = "copy_floor_mb_per_s", "MB/s",
        "bulk-bw: the host's cross-core copy of the same size from processor 0's core to the partner's, to the point `transfer_cycles` ends: the sender copies its source into one of two buffers in turn, which the receiver read two copies before, as the native pool alternates its two, and sets a flag; bytes over copy start to the receiver seeing the flag (best of 5-30)";
    BULK_OVER_COPY_FLOOR = "bulk_over_copy_floor", "ratio", "bulk-bw: `mb_per_s` over `copy_floor_mb_per_s`";
    COPY_READ_MB_PER_S = "copy_read_mb_per_s", "MB/s",
        "bulk-bw: the receiver then reading every word of that copy (bytes over its read time, best of 5-30): what a handler pays to read the payload, outside `transfer_cycles`";
    MEMCPY_MB_PER_S = "memcpy_mb_per_s", "MB/s",
        "bulk-bw: the host's memcpy bandwidth for copies of the same size on the sending core (warm buffers, best of 5)";
    BULK_OVER_MEMCPY = "bulk_over_memcpy", "ratio", "bulk-bw: `mb_per_s` over `memcpy_mb_per_s`";
}

/// The `--machine` name of the host.
pub(crate) const MACHINE: &str = crate::machine_arg::HOST;

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
    pub sim_only: [(bool, &'static str); 4],
}

/// Why a simulator-only option means nothing natively.
fn why_not(option: &str) -> &'static str {
    match option {
        "--set" => "the host has no machine keys to set",
        "--max-wall" => "a native run cannot be stopped part-way",
        "--trace" => "the native backend records no timeline",
        _ => "there is no estimate of a native run's memory",
    }
}

pub(crate) fn run(args: Args) -> Result<(), Failure> {
    let info = commlab_apps::app_info(&args.app).map_err(|e| input(e.to_string()))?;
    crate::variant_arg::check_variant_names(info, &args.variant)?;
    commlab_apps::Params::parse(info, &args.params).map_err(|e| input(e.to_string()))?;
    if let Some((_, option)) = args.sim_only.iter().find(|(given, _)| *given) {
        return Err(input(format!("--machine host does not take {option} ({})", why_not(option))));
    }
    let detail: Vec<detail_stats::Request> =
        args.stats.iter().map(|s| detail_stats::Request::parse(s)).collect::<Result<_, _>>()?;
    if let Some(d) = detail.iter().find(|d| !d.detail.native()) {
        let kind = d.detail.name();
        return Err(input(format!(
            "--machine host does not take --stats {kind}=... (the native backend records no {}; per-node and per-link are there)",
            if kind == "latency" { "latency distributions" } else { "interval statistics" }
        )));
    }
    crate::outputs::check_run_outputs(args.out.as_deref(), &detail, &[])?;
    let host = NativeBackend::new();
    let cores = host.cores();
    let procs = args.procs.unwrap_or(cores);
    crate::memory_check::check_native(info.name, &args.params, procs, cores)?;
    let backend = host.with_nprocs(procs).map_err(|e| input(format!("--procs {procs}: {e}")))?;
    if backend.oversubscribed() {
        eprintln!("commlab: warning: {procs} processors on {cores} cores: threads share cores, so times are not those of {procs} cores");
    }
    // `all`: the variants the host has the mechanisms for (no one-sided access, no Tempest).
    let variants = crate::variant_arg::listed_variants(&backend, info, &args.variant)?;
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
        let mut r = r;
        add_references(&backend, &mut r);
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

/// The host's own reference beside a microbenchmark's native figure, measured now on the same
/// two cores (so placement and the host's load are common to both, and the comparison needs no
/// separate `commlab characterize` run). When the two processors have cores of their own:
/// - `am-latency`: `one_way_ns` (the app's `one_way_cycles` at the measured clock), the
///   core-to-core one-way latency between the two processors' cores (`core_to_core_ns`, a
///   cache-line ping-pong as `characterize` measures it) and their ratio
///   (`one_way_over_core_to_core`), and the same ping-pong on two lines, one each way
///   (`two_line_ns`: the floor of any polled queue, where each way moves a line twice) and the
///   ratio to it (`one_way_over_two_line`); with `bytes` > 0 (bulk pings) also the cross-core
///   copy of that size (`copy_floor_ns`, below) and `one_way_over_copy_floor`; and what the
///   pieces of the message's path beside the line transfers cost on one core
///   ([`NativeBackend::message_path_ns`]: `stamp_ns`, `send_ns`, `look_ns`, `dispatch_ns`),
///   the floor plus them (`path_floor_ns`) and the ratio to it (`one_way_over_path_floor`);
/// - `bulk-bw`: the transfer's `mb_per_s`, the same two line floors between processor 0 and
///   its partner (natively processor 1: every processor is 0 hops away and the nearest is
///   taken), and the cross-core copy of the same size (`copy_floor_mb_per_s`,
///   [`reference::cross_copy_secs`]: the sender copies its source into one of two buffers in
///   turn, which the receiver read two copies before (as the native pool alternates its two),
///   then sets a flag; bytes over copy start to the receiver seeing the flag, the
///   span `transfer_cycles` covers, which ends at the handler's entry) and the ratio
///   (`bulk_over_copy_floor`); the receiver's read of the copy afterwards
///   (`copy_read_mb_per_s`: what the handler pays to read the payload, outside the transfer's
///   time). Also memcpy's bandwidth for the same size on the sender's core
///   (`memcpy_mb_per_s`, warm buffers, best of 5) and `bulk_over_memcpy`, with or without a
///   core of its own. The floors are bests of repetitions, so the like-for-like bulk figure is
///   `--param repeat=5` (the fastest of five transfers); a single transfer meets cold caches.
///
/// No floor between two cores is added when the two processors share a core or threads are
/// not pinned.
fn add_references(backend: &NativeBackend, r: &mut commlab_apps::AppResult) {
    use crate::characterize::reference;
    let mhz = backend.cycles_per_us();
    let bytes = r.params.get("bytes").and_then(|b| b.parse::<usize>().ok()).unwrap_or(0);
    match r.app {
        "am-latency" => {
            let partner = r.counters.get(commlab_apps::micro::am_latency::PARTNER.name).map_or(1, |&p| p as usize);
            let (Some(a), Some(b)) = (backend.core_of(0), backend.core_of(partner)) else { return };
            let Some(&cycles) = r.counters.get(commlab_apps::micro::am_latency::ONE_WAY_CYCLES.name) else { return };
            if a == b {
                return;
            }
            let one_way = cycles * 1e3 / mhz;
            let c2c = reference::core_to_core_ns(a, b);
            let floor = reference::two_line_ns(a, b);
            r.counters.set(&ONE_WAY_NS, one_way);
            r.counters.set(&CORE_TO_CORE_NS, c2c);
            r.counters.set(&ONE_WAY_OVER_CORE_TO_CORE, one_way / c2c);
            r.counters.set(&TWO_LINE_NS, floor);
            r.counters.set(&ONE_WAY_OVER_TWO_LINE, one_way / floor);
            let path = backend.message_path_ns();
            r.counters.set(&STAMP_NS, path.stamp);
            r.counters.set(&SEND_NS, path.send);
            r.counters.set(&LOOK_NS, path.look);
            r.counters.set(&DISPATCH_NS, path.dispatch);
            r.counters.set(&PATH_FLOOR_NS, floor + path.added());
            r.counters.set(&ONE_WAY_OVER_PATH_FLOOR, one_way / (floor + path.added()));
            if bytes > 0 {
                let copy = reference::cross_copy_secs(a, b, bytes).0 * 1e9;
                r.counters.set(&COPY_FLOOR_NS, copy);
                r.counters.set(&ONE_WAY_OVER_COPY_FLOOR, one_way / copy);
            }
        }
        "bulk-bw" => {
            let Some(core) = backend.core_of(0) else { return };
            let Some(&per_cycle) = r.counters.get(commlab_apps::micro::bulk_bw::BYTES_PER_CYCLE.name) else { return };
            if bytes == 0 {
                return;
            }
            let mb = per_cycle * mhz;
            let memcpy = reference::memcpy_mb_per_s(core, bytes);
            r.counters.set(&MB_PER_S, mb);
            r.counters.set(&MEMCPY_MB_PER_S, memcpy);
            r.counters.set(&BULK_OVER_MEMCPY, mb / memcpy);
            let Some(partner) = backend.core_of(1).filter(|&b| b != core) else { return };
            r.counters.set(&CORE_TO_CORE_NS, reference::core_to_core_ns(core, partner));
            r.counters.set(&TWO_LINE_NS, reference::two_line_ns(core, partner));
            let (write, read) = reference::cross_copy_secs(core, partner, bytes);
            let floor = bytes as f64 / write / 1e6;
            r.counters.set(&COPY_FLOOR_MB_PER_S, floor);
            r.counters.set(&BULK_OVER_COPY_FLOOR, mb / floor);
            r.counters.set(&COPY_READ_MB_PER_S, bytes as f64 / read / 1e6);
        }
        _ => {}
    }
}

/// Standard output, or `--out FILE` (its missing directory created).
fn write(path: Option<&std::path::Path>, text: &str) -> Result<(), Failure> {
    let Some(p) = path else {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| failed(format!("writing standard output: {e}")));
    };
    let fail = |e: std::io::Error| input(format!("cannot write --out `{}`: {e}", p.display()));
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(p, text).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(app: &str, params: &[&str]) -> (NativeBackend, commlab_apps::AppResult) {
        let backend = NativeBackend::with_procs(2).expect("2 processors");
        let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        let mut r = commlab_apps::run_app(&backend, app, "mp-poll", &params, 1).expect("runs");
        assert!(r.check.ok, "{app}: {}", r.check.detail);
        add_references(&backend, &mut r);
        (backend, r)
    }

    #[test]
    fn am_latency_and_bulk_bw_records_carry_the_hosts_reference_beside_them() {
        let (backend, r) = run("am-latency", &["rounds=5"]);
        if backend.core_of(0) == backend.core_of(1) {
            // One core: the two processors share it, and there is no pair to compare with.
            assert!(!r.counters.contains_key("core_to_core_ns"));
            return;
        }
        let c = &r.counters;
        let ns = c["one_way_cycles"] * 1e3 / backend.cycles_per_us();
        assert!((c["one_way_ns"] - ns).abs() <= 1e-9 * ns, "{c:?}");
        assert!(c["core_to_core_ns"] > 0.0 && c["two_line_ns"] > 0.0, "{c:?}");
        assert!((c["one_way_over_core_to_core"] - ns / c["core_to_core_ns"]).abs() <= 1e-9 * ns, "{c:?}");
        assert!((c["one_way_over_two_line"] - ns / c["two_line_ns"]).abs() <= 1e-9 * ns, "{c:?}");

        let (backend, r) = run("bulk-bw", &["bytes=65536"]);
        let c = &r.counters;
        let mb = 65536.0 / c["transfer_cycles"] * backend.cycles_per_us();
        assert!((c["mb_per_s"] - mb).abs() <= 1e-9 * mb, "{c:?}");
        assert!(c["memcpy_mb_per_s"] > 0.0, "{c:?}");
        assert!((c["bulk_over_memcpy"] - mb / c["memcpy_mb_per_s"]).abs() <= 1e-9 * mb, "{c:?}");
        assert!(c["copy_floor_mb_per_s"] > 0.0 && c["copy_read_mb_per_s"] > 0.0, "{c:?}");
        assert!((c["bulk_over_copy_floor"] - mb / c["copy_floor_mb_per_s"]).abs() <= 1e-9 * mb, "{c:?}");
        assert!(c["core_to_core_ns"] > 0.0 && c["two_line_ns"] > 0.0, "{c:?}");
    }
}
