//! Regression (issue 19, defect 1): huge latencies and tiny bandwidths used to overflow or
//! saturate their conversion to picoseconds, giving the zero-cost result with exit status 0.
//! Now every time a key implies must fit the simulated-time limit: too large is refused with
//! exit 2 naming the key and the largest (or smallest) accepted value, and an accepted extreme
//! gives a correct, monotone result.

use crate::common;

use common::{bad_input, ok};
use serde_json::Value;

fn one_way(set: &[&str]) -> f64 {
    let mut args = vec!["run", "am-latency", "--variant", "mp-int", "--param", "rounds=1", "--json"];
    for s in set {
        args.extend(["--set", s]);
    }
    let out: Value = serde_json::from_str(ok(&args).trim()).unwrap();
    out["counters"]["one_way_cycles"].as_f64().unwrap()
}

#[test]
fn times_that_outlast_the_simulated_time_limit_are_refused() {
    let cases = [
        ("network.router_latency_ns=1e18", "network.router_latency_ns", "largest accepted value"),
        ("network.router_latency_ns=1e300", "network.router_latency_ns", "largest accepted value"),
        ("network.ni_latency_ns=1e20", "network.ni_latency_ns", "largest accepted value"),
        ("network.link_bytes_per_ns=1e-20", "network.link_bytes_per_ns", "smallest accepted value"),
        ("messaging.dma_bytes_per_cycle=1e-15", "messaging.dma_bytes_per_cycle", "smallest accepted value"),
        ("messaging.send_overhead_cycles=100000000000000", "messaging.send_overhead_cycles", "largest accepted value"),
        ("memory.hit_cycles=100000000000000", "memory.hit_cycles", "largest accepted value"),
        ("costs.em3d_edge=100000000000000", "costs.em3d_edge", "largest accepted value"),
        ("processor.clock_mhz=1e9", "processor.clock_mhz", "at most 1000000"),
        ("limits.max_sim_time_ms=1e300", "limits.max_sim_time_ms", "must be at most"),
    ];
    for (set, key, says) in cases {
        bad_input(&["run", "am-latency", "--set", set], &[&format!("machine key `{key}`"), says]);
    }
    // A scaled overhead is checked as scaled.
    bad_input(
        &[
            "run",
            "am-latency",
            "--set",
            "messaging.send_overhead_cycles=1000000000",
            "--set",
            "messaging.overhead_scale=10",
        ],
        &["messaging.send_overhead_cycles"],
    );
}

#[test]
fn accepted_extremes_give_monotone_results() {
    let base = one_way(&[]);
    // 1e6 ns per hop (1 ms, 20,000 cycles at 20 MHz): far slower, never the zero-cost answer.
    let slow_hop = one_way(&["network.router_latency_ns=1e6"]);
    assert!(slow_hop > base + 19_000.0, "{slow_hop} vs {base}");
    let slow_ni = one_way(&["network.ni_latency_ns=1e6"]);
    assert!(slow_ni > base + 2.0 * 19_000.0, "{slow_ni} vs {base}");
    let thin = one_way(&["network.link_bytes_per_ns=1e-6"]);
    assert!(thin > 10.0 * base, "{thin} vs {base}");
    let zero = one_way(&["network.router_latency_ns=0"]);
    assert!(zero <= base && slow_hop > zero);
}

#[test]
fn a_check_names_the_key_at_fault_and_prints_its_value_short() {
    // Regression (issue 36): a clock of 1e-300 MHz blamed messaging.dma_bytes_per_cycle; a
    // line of 1 GiB blamed memory.cache_bytes; a clock of 1e300 printed 301 digits; a machine
    // file without `name` blamed `processor`.
    let line = bad_input(
        &["run", "am-latency", "--set", "processor.clock_mhz=1e-300"],
        &["machine key `processor.clock_mhz`", "must be at least", "got 1e-300"],
    );
    assert!(!line.contains("dma_bytes"), "{line}");
    bad_input(
        &["run", "am-latency", "--set", "memory.line_bytes=1073741824"],
        &["machine key `memory.line_bytes`", "at most memory.cache_bytes / memory.associativity (65536)"],
    );
    let line = bad_input(&["run", "am-latency", "--set", "processor.clock_mhz=1e300"], &["got 1e300"]);
    assert!(line.len() < 200, "{line}");
    let d = common::TempDir::new("no-name");
    std::fs::create_dir_all(d.path()).unwrap();
    let file = d.file("m.toml");
    std::fs::write(&file, "[processor]\nclock_mhz = 40\n").unwrap();
    bad_input(
        &["run", "am-latency", "--machine", file.to_str().unwrap()],
        &["machine key `name`: missing field `name`"],
    );
}
