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
