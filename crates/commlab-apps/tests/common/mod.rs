//! Helpers the application test files share: a preset machine, a run whose answer check must
//! pass, and the time-accounting invariant.
#![allow(dead_code)] // each test file uses its own subset

use commlab_api::RunStats;
use commlab_apps::{run_app, AppResult};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;

/// A preset with `--set` overrides, resized to `procs` processors if given.
pub fn preset(name: &str, set: &[&str], procs: Option<usize>) -> Simulator {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Simulator::new(MachineConfig::preset(name, &set, procs).expect("machine"))
}

/// Run one variant with `seed`; the run must complete and its answer check pass.
pub fn run_seeded<T: AsRef<str>>(s: &Simulator, app: &str, variant: &str, params: &[T], seed: u64) -> AppResult {
    let params: Vec<String> = params.iter().map(|p| p.as_ref().to_string()).collect();
    let r = run_app(s, app, variant, &params, seed).unwrap_or_else(|e| panic!("{app} [{variant}]: {e}"));
    assert!(r.check.ok, "{app} [{variant}] answer check: {}", r.check.detail);
    r
}

/// Every processor's time categories sum to its busy time.
pub fn assert_categories_sum(stats: &RunStats, what: &str) {
    for (i, p) in stats.procs.iter().enumerate() {
        let sum = p.sum();
        assert!(
            (sum - p.busy).abs() <= 1e-6 * p.busy.max(1.0),
            "{what}: processor {i} categories sum to {sum} but busy time is {}",
            p.busy
        );
    }
}

/// Small parameters for every app and microbenchmark, so whole matrices (micro.rs, net_models.rs)
/// run quickly.
pub fn small_params(app: &str, s: &Simulator) -> Vec<String> {
    let hops = format!("hops={}", s.config().topology.hops(0, 1));
    let v = match app {
        "am-latency" => vec![hops.as_str(), "rounds=5"],
        "am-throughput" => vec!["senders=3", "messages=20", "handler_cycles=50"],
        "bulk-bw" => vec!["bytes=2048", hops.as_str()],
        "alltoall-stress" => vec!["messages=20"],
        "bisection-bw" => vec!["messages=10"],
        "miss-latency" => vec!["kind=store-3party", "rounds=2", hops.as_str()],
        "lock-latency" => vec!["kind=shared", "rounds=2", hops.as_str()],
        "barrier" => vec!["barriers=3"],
        "mem-refs" => vec!["pattern=misses", "refs=200", "words=256"],
        "remote-bw" => vec!["bytes=256", "stride=3", hops.as_str()],
        "em3d" => vec!["nodes=320", "iterations=2"],
        "iccg" => vec!["fe_elements=8"],
        "moldyn" => vec!["molecules=256", "iterations=3", "rebuild=2", "list_radius=2.6"],
        "unstruc" => vec!["nodes=300", "iterations=2"],
        "rti" => vec![hops.as_str(), "rounds=2"],
        "memcpy" => vec!["bytes=256", hops.as_str()],
        "accum" => vec!["words=128", hops.as_str()],
        "jacobi" => vec!["n=16", "iterations=2"],
        "grain" => vec!["n=5", "l=20"],
        "aq" => vec!["tolerance=1e-3"],
        "copy-transfer" => vec!["kernel=copy-sload", "stride=3", "bytes=2048"],
        "fft2d" => vec!["n=32"],
        "dsmc" => vec!["particles=256", "cells_x=8", "cells_y=4", "cells_z=2", "iterations=3"],
        "barnes" => vec!["bodies=128", "iterations=2"],
        "appbt" => vec!["nx=32", "ny=2", "nz=2", "iterations=2"],
        other => panic!("no small parameters for {other}"),
    };
    v.into_iter().map(String::from).collect()
}
