//! `commlab run APP --machine host`: the native backend from the command line.

mod common;
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
