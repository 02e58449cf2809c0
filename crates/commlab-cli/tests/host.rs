//! `commlab run APP --machine host`: the native backend from the command line.

use crate::common;
use common::*;

use serde_json::Value;

#[test]
fn em3d_runs_natively_in_every_variant_with_every_check_passing() {
    let out = ok(&[
        "run",
        "em3d",
        "--machine",
        "host",
        "--procs",
        "2",
        "--variant",
        "all",
        "--json",
        "--param",
        "nodes=320",
        "--param",
        "iterations=2",
    ]);
    let records: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let variants: Vec<&str> = records.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(variants, ["sm", "sm-pf", "mp-int", "mp-poll", "bulk"]);
    for r in &records {
        let v = r["variant"].as_str().unwrap();
        assert_eq!(r["check"]["ok"], Value::Bool(true), "{v}: {}", r["check"]["detail"]);
        assert_eq!(r["machine"], "host", "{v}");
        assert_eq!(r["procs"], 2, "{v}");
        assert!(r["cycles"].as_f64().unwrap() > 0.0, "{v}: no time measured");
    }
}

#[test]
fn simulator_only_options_are_refused_by_name() {
    bad_input(&["run", "em3d", "--machine", "host", "--set", "processor.clock_mhz=10"], &["--machine host", "--set"]);
    bad_input(&["run", "em3d", "--machine", "host", "--procs", "0"], &["--procs 0"]);
    bad_input(&["run", "bisection-bw", "--machine", "host", "--procs", "2"], &["bisection-bw"]);
}

/// The microbenchmarks run natively on 2 processors with their default parameters (a defaulted
/// `hops` takes the nearest processor, 0 hops away on the host; `am-throughput`'s default
/// senders shrink to the processors there are): every check passes, every message sent is
/// received, and the distance reported is the host's.
#[test]
fn microbenchmarks_run_natively_with_their_defaults() {
    for app in ["am-latency", "am-throughput", "bulk-bw", "barrier", "miss-latency", "lock-latency", "rti"] {
        let out = ok(&["run", app, "--machine", "host", "--procs", "2", "--variant", "all", "--json"]);
        let records: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
        assert!(!records.is_empty(), "{app}: no record");
        for r in &records {
            let v = r["variant"].as_str().unwrap();
            assert_eq!(r["check"]["ok"], Value::Bool(true), "{app} [{v}]: {}", r["check"]["detail"]);
            if let Some(h) = r["counters"].get("hops") {
                assert_eq!(h.as_f64(), Some(0.0), "{app} [{v}]: natively every processor is 0 hops away");
            }
        }
    }
    // A distance given explicitly must exist.
    bad_input(&["run", "am-latency", "--machine", "host", "--procs", "2", "--param", "hops=1"], &["hops=1"]);
}

/// `am-latency` and `bulk-bw` on the host carry the floors measured in the same process on the
/// same two cores, each positive, and the native figure's ratio to each equal to the figure
/// over the floor (recomputed here from the record's own fields, not copied from an output).
#[test]
fn native_records_carry_their_floors_and_consistent_ratios() {
    let cores = commlab_native::host_cores();
    let record = |args: &[&str]| -> Value {
        let mut all = vec!["run", "--machine", "host", "--procs", "2", "--variant", "mp-poll", "--json"];
        all.splice(1..1, args.iter().copied());
        let out = ok(&all);
        serde_json::from_str(out.lines().next().expect("a record")).expect("a JSON line")
    };
    let close = |ratio: f64, num: f64, den: f64| (ratio - num / den).abs() <= 1e-9 * (num / den).abs();
    let num = |c: &Value, k: &str| -> f64 {
        let v = c.get(k).and_then(Value::as_f64).unwrap_or_else(|| panic!("no `{k}` in {c}"));
        assert!(v.is_finite() && v > 0.0, "`{k}` = {v} in {c}");
        v
    };

    let r = record(&["bulk-bw", "--param", "bytes=1048576", "--param", "repeat=3"]);
    let c = &r["counters"];
    let mb = num(c, "mb_per_s");
    // The transfer's bandwidth is its bytes over its time: bytes_per_cycle x transfer_cycles.
    assert!((num(c, "bytes_per_cycle") * num(c, "transfer_cycles") - 1048576.0).abs() <= 1e-6 * 1048576.0, "{c}");
    assert!(close(num(c, "bulk_over_memcpy"), mb, num(c, "memcpy_mb_per_s")), "{c}");
    if cores >= 2 {
        assert!(close(num(c, "bulk_over_copy_floor"), mb, num(c, "copy_floor_mb_per_s")), "{c}");
        num(c, "copy_read_mb_per_s");
        assert!(num(c, "two_line_ns") > 0.0 && num(c, "core_to_core_ns") > 0.0, "{c}");
    }

    let r = record(&["am-latency", "--param", "bytes=4096", "--param", "rounds=20"]);
    let c = &r["counters"];
    if cores >= 2 {
        let one_way = num(c, "one_way_ns");
        assert!(close(num(c, "one_way_over_two_line"), one_way, num(c, "two_line_ns")), "{c}");
        assert!(close(num(c, "one_way_over_core_to_core"), one_way, num(c, "core_to_core_ns")), "{c}");
        assert!(close(num(c, "one_way_over_copy_floor"), one_way, num(c, "copy_floor_ns")), "{c}");
    }
    // A null message has no copy to compare with: no copy floor, the line floors only.
    let r = record(&["am-latency", "--param", "rounds=20"]);
    let c = &r["counters"];
    assert!(c.get("copy_floor_ns").is_none(), "{c}");
    if cores >= 2 {
        let one_way = num(c, "one_way_ns");
        assert!(close(num(c, "one_way_over_two_line"), one_way, num(c, "two_line_ns")), "{c}");
        // The path's pieces (each may round to 0 on a fast core, never below), and the floor
        // they make with the line transfers.
        let piece =
            |k: &str| c.get(k).and_then(Value::as_f64).filter(|v| *v >= 0.0).unwrap_or_else(|| panic!("`{k}` in {c}"));
        let path = num(c, "two_line_ns")
            + piece("send_ns")
            + piece("look_ns") / 2.0
            + piece("dispatch_ns")
            + piece("stamp_ns");
        assert!((num(c, "path_floor_ns") - path).abs() <= 1e-9 * path, "{c}");
        assert!(close(num(c, "one_way_over_path_floor"), one_way, path), "{c}");
    }
}
