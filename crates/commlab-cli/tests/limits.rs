//! Regression (issue 19, defects 4 and 5): sizes beyond the host or the model used to abort
//! with "memory allocation failed" (exit 134), and runaway runs went on until killed. Now a run
//! whose estimated memory exceeds the memory available (or `--max-memory`) is refused with
//! exit 2 and the estimate, a cross-traffic rate beyond the bisection is refused naming the key
//! and the largest accepted rate, and `--max-wall` stops a run cleanly with exit 1 saying the
//! simulated cycle and events reached; a run it does not stop gives the same numbers.

use crate::common;

use common::{bad_input, commlab, ok};
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn sizes_beyond_the_host_are_refused_with_the_estimate() {
    let cases: [(&[&str], &str); 3] = [
        (&["run", "em3d", "--param", "nodes=1000000000000"], "--param nodes=1000000000000"),
        (&["run", "bulk-bw", "--param", "bytes=1099511627776"], "--param bytes=1099511627776"),
        (&["run", "am-latency", "--set", "memory.cache_bytes=1099511627776"], "memory.cache_bytes = 1099511627776"),
    ];
    for (args, names) in cases {
        bad_input(args, &["needs an estimated", "TiB of memory", "of memory available", names]);
    }
    // 100,000 processors at about 72 KiB each (stack in use, state, and Alewife's 4,096
    // direct-mapped ways of 8 bytes): about 6.7 GiB, above the limit.
    bad_input(
        &["run", "am-latency", "--procs", "100000", "--max-memory", "4G"],
        &["needs an estimated", "100000 processors", "--max-memory limit of 4.0 GiB"],
    );
}

#[test]
fn cross_traffic_beyond_what_the_links_carry_is_refused() {
    bad_input(
        &["run", "am-latency", "--set", "cross_traffic.rate_bytes_per_cycle=1e6"],
        &[
            "machine key `cross_traffic.rate_bytes_per_cycle`",
            "must be at most 18 bytes per cycle",
            "bisection bandwidth",
        ],
    );
    // The bisection itself is still accepted by the machine (what remains is the app's).
    ok(&["machine", "show", "alewife", "--set", "cross_traffic.rate_bytes_per_cycle=18"]);
}

#[test]
fn max_memory_refuses_a_default_em3d_run() {
    let line = bad_input(
        &["run", "em3d", "--max-memory", "1M"],
        &["em3d needs an estimated", "MiB of memory", "--max-memory limit of 1.0 MiB", "raise --max-memory"],
    );
    assert!(!line.contains("TiB"), "{line}");
    // The same run fits the default estimate comfortably.
    bad_input(&["run", "em3d", "--max-memory", "2X"], &["--max-memory", "is not a size"]);
}

#[test]
fn em3d_node_count_is_bounded_by_its_32_bit_indices() {
    bad_input(
        &["run", "em3d", "--max-memory", "100P", "--param", "nodes=4294967296"],
        &["--param nodes=4294967296", "2^31"],
    );
}

#[test]
fn max_wall_stops_a_runaway_run_with_what_it_reached() {
    let runaway: [&[&str]; 2] = [
        &["run", "barrier", "--param", "barriers=18446744073709551615", "--max-wall", "1"],
        &["run", "em3d", "--variant", "sm", "--param", "iterations=1000000", "--max-wall", "1"],
    ];
    for args in runaway {
        let start = Instant::now();
        let out = commlab().args(args).output().expect("run commlab");
        let took = start.elapsed();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(took < Duration::from_secs(10), "{args:?} took {took:?}");
        assert!(took >= Duration::from_millis(900), "{args:?} stopped early: {took:?}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        for needle in ["commlab: ", "stopped at --max-wall 1 s", "simulated cycle", "events"] {
            assert!(lines[0].contains(needle), "`{needle}` missing: {}", lines[0]);
        }
    }
    bad_input(&["run", "am-latency", "--max-wall", "0"], &["--max-wall", "number of seconds > 0"]);
}

/// A record without its wall-clock fields.
fn timeless(line: &str) -> Value {
    let mut r: Value = serde_json::from_str(line).unwrap();
    let sim = r["sim"].as_object_mut().unwrap();
    sim.remove("wall_seconds");
    sim.remove("events_per_second");
    r
}

#[test]
fn a_run_max_wall_does_not_stop_gives_the_same_results() {
    let base = ["run", "em3d", "--param", "nodes=2000", "--param", "iterations=5", "--json"];
    let plain = ok(&base);
    let limited = ok(&[&base[..], &["--max-wall", "600", "--max-memory", "4G"]].concat());
    let (a, b): (Vec<Value>, Vec<Value>) =
        (plain.lines().map(timeless).collect(), limited.lines().map(timeless).collect());
    assert_eq!(a.len(), 5, "one record per variant");
    assert_eq!(a, b);
}

#[test]
fn a_sweep_refuses_a_point_too_big_for_memory_before_running_any() {
    let d = common::TempDir::new("sweep-memory");
    common::bad_input(
        &["sweep", "em3d", "--vary", "nodes=1000,1000000000", "--max-memory", "1G", "--out", d.arg()],
        &["--vary at point 1 (nodes=1000000000)", "estimated", "--max-memory"],
    );
    assert!(!d.file("results.jsonl").exists(), "nothing ran");
}

/// `commlab args` under an address-space limit of `bytes` (`ulimit -v`): exit status, stderr.
#[cfg(target_os = "linux")]
fn under_address_limit(bytes: u64, args: &[&str]) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("commlab"));
    cmd.args(args);
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("commlab runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[cfg(target_os = "linux")]
fn one_line(stderr: &str, needles: &[&str]) {
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("commlab: ") && !stderr.contains("panicked"), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "`{n}` in {stderr}");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn an_address_space_limit_is_consulted_before_building() {
    // Regression (issue 36): under `ulimit -v 6000000` both started (estimate 3.4 GiB; the
    // stacks' address space was not counted) and aborted after 44 s and 27 s: exit 134, a
    // backtrace.
    let started = Instant::now();
    let limit = 6_000_000 * 1024;
    let args =
        ["run", "em3d", "--procs", "31000", "--variant", "sm", "--param", "nodes=100000", "--param", "iterations=1"];
    let (code, stderr) = under_address_limit(limit, &args);
    assert_eq!(code, Some(2), "{stderr}");
    one_line(&stderr, &["31000 processors", "of address space", "coroutine stacks", "ulimit -v"]);
    let (code, stderr) = under_address_limit(limit, &["run", "am-latency", "--machine", "host", "--procs", "1000"]);
    assert_eq!(code, Some(2), "{stderr}");
    one_line(&stderr, &["1000 host threads", "of address space", "ulimit -v"]);
    assert!(started.elapsed() < Duration::from_secs(10), "refused before building");
}

#[test]
#[cfg(target_os = "linux")]
fn an_allocation_that_fails_anyway_is_one_line_and_exit_1() {
    // Nothing estimates `plot`'s records: 100000 of them (91 MB) under a 400 MB address-space
    // limit fail to allocate. It used to abort (SIGABRT, "memory allocation of N bytes failed",
    // a backtrace).
    let d = common::TempDir::new("alloc-fails");
    std::fs::create_dir_all(d.path()).unwrap();
    let line = common::ok(&["run", "am-latency", "--variant", "mp-int", "--json"]);
    let many = d.file("results.jsonl");
    std::fs::write(&many, line.repeat(100_000)).unwrap();
    let (code, stderr) = under_address_limit(400 << 20, &["plot", "breakdown", many.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    one_line(
        &stderr,
        &["out of memory: an allocation of", "bytes failed while running `commlab plot breakdown", "ulimit -v"],
    );

    // Reading a file too big for memory stays bad input naming the file (the read's
    // allocation is allowed to fail).
    let big = d.file("big.jsonl");
    std::fs::File::create(&big).unwrap().set_len(2 << 30).unwrap();
    let (code, stderr) = under_address_limit(1 << 30, &["plot", "runtime", big.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    one_line(&stderr, &["cannot read results file", "big.jsonl", "out of memory"]);
}

/// Regression: an app's one-processor baseline (the sequential run behind `speedup`) does all
/// the processors' work on one, so it gets the machine's simulated-time limit times the
/// processors; appbt at its defaults on alewife failed on it (exit 1, "simulated time limit
/// reached") though its parallel run was far inside the limit. Here the parallel run takes
/// about 100 ms simulated and the baseline about 1.3 s, against a limit of 200 ms.
#[test]
fn a_sequential_baseline_gets_the_limit_times_the_processors() {
    let out = ok(&[
        "run",
        "appbt",
        "--machine",
        "alewife",
        "--variant",
        "stache",
        "--param",
        "ny=8",
        "--param",
        "nz=8",
        "--param",
        "iterations=1",
        "--set",
        "limits.max_sim_time_ms=200",
        "--json",
    ]);
    let r: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let (serial, parallel) = (r["counters"]["serial_cycles"].as_f64().unwrap(), r["cycles"].as_f64().unwrap());
    // 20 MHz: 200 ms is 4 M cycles.
    assert!(
        parallel < 4e6 && serial > 4e6,
        "the baseline {serial} must outlast the machine's limit, the run {parallel} not"
    );
}
