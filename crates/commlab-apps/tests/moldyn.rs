//! MOLDYN on the simulated machine: every variant's answer on a mesh, a torus, software
//! shared memory and 8 and 64 processors; determinism; time accounting; traffic balance
//! (molecules and deltas sent = received, lock acquisitions = releases); parameter errors.

use commlab_api::TrafficClass;
use commlab_apps::{app_info, run_app, AppError, AppResult};
use commlab_sim::Simulator;

use crate::common;

use common::assert_categories_sum;

fn preset(name: &str, procs: Option<usize>) -> Simulator {
    common::preset(name, &[], procs)
}

fn params(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

/// Small enough for a test: 2 list epochs (rebuilds at iterations 0 and 3).
const SMALL: &[&str] = &["molecules=512", "iterations=6", "rebuild=3"];

fn run(s: &Simulator, variant: &str, p: &[&str]) -> AppResult {
    common::run_seeded(s, "moldyn", variant, p, 3)
}

fn assert_balanced(r: &AppResult, what: &str) {
    let c = &r.counters;
    assert_eq!(c["molecules_sent"], c["molecules_received"], "{what}: coordinates sent vs received");
    assert_eq!(c["deltas_sent"], c["deltas_received"], "{what}: deltas sent vs received");
    // `custom` shares coordinates (sends none) and returns the deltas by message: checked
    // against `bulk`'s ghosts in the caller.
    if r.variant != "custom" {
        assert_eq!(c["molecules_sent"], c["deltas_sent"], "{what}: every ghost's force is returned");
    }
    assert_eq!(c["lock_acquisitions"], c["lock_releases"], "{what}: lock acquisitions vs releases");
}

#[test]
fn every_variant_is_right_on_mesh_torus_software_dsm_and_8_and_64_processors() {
    let shapes = [
        ("alewife 32", preset("alewife", None)),
        ("t3e (torus)", preset("t3e", None)),
        ("blizzard-s (software DSM)", preset("blizzard-s", None)),
        ("alewife 8", preset("alewife", Some(8))),
        ("alewife 64", preset("alewife", Some(64))),
    ];
    for (shape, s) in &shapes {
        let mut ghosts = None;
        for v in app_info("moldyn").unwrap().variants {
            let r = run(s, v, SMALL);
            let what = format!("moldyn [{v}] on {shape}");
            assert_categories_sum(&r.stats, &what);
            assert_balanced(&r, &what);
            match *v {
                "bulk" => ghosts = Some(r.counters["molecules_sent"]),
                "custom" => {
                    assert_eq!(Some(r.counters["deltas_sent"]), ghosts, "{what}: every ghost's force is returned")
                }
                _ => {}
            }
            assert!(r.stats.cycles > 0.0, "{what}: no time passed");
            assert!(r.check.max_error <= 1e-12, "{what}: error {}", r.check.max_error);
            assert_eq!(r.counters["rebuilds"], 2.0, "{what}: list epochs");
            assert!(r.counters["energy_drift"].abs() < 1e-2, "{what}: energy drift {}", r.counters["energy_drift"]);
        }
    }
}

#[test]
fn two_runs_are_identical() {
    let s = preset("alewife", Some(16));
    for v in app_info("moldyn").unwrap().variants {
        let (a, b) = (run(&s, v, SMALL), run(&s, v, SMALL));
        assert_eq!(a.stats.cycles, b.stats.cycles, "{v}: cycles");
        assert_eq!(a.stats.procs, b.stats.procs, "{v}: per-processor times");
        assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{v}: traffic");
        assert_eq!(a.stats.events, b.stats.events, "{v}: events");
        assert_eq!(a.counters, b.counters, "{v}: counters");
    }
}

#[test]
fn mechanisms_show_in_the_counters() {
    let s = preset("alewife", None);
    let runs: Vec<(&str, AppResult)> =
        app_info("moldyn").unwrap().variants.iter().map(|v| (*v, run(&s, v, SMALL))).collect();
    let get = |v: &str| &runs.iter().find(|(n, _)| *n == v).unwrap().1;
    let coherence = |r: &AppResult| {
        r.stats.volume_bytes[TrafficClass::Invalidates as usize] + r.stats.volume_bytes[TrafficClass::Requests as usize]
    };
    // Every variant does the same pair work.
    let pairs = get("sm").counters["pairs_tested"];
    assert!(pairs > 0.0 && get("sm").counters["cross_pair_fraction"] > 0.0);
    for (v, r) in &runs {
        assert_eq!(r.counters["pairs_tested"], pairs, "{v}: pairs tested");
    }
    // Shared memory: locks and misses, no messages; prefetching issues prefetches.
    for v in ["sm", "sm-pf"] {
        let r = get(v);
        assert!(r.counters["lock_acquisitions"] > 0.0 && r.counters["remote_misses"] > 0.0, "{v}");
        assert_eq!(r.counters["app_messages"], 0.0, "{v}");
    }
    assert!(get("sm-pf").counters["prefetches_issued"] > 0.0 && get("sm").counters["prefetches_issued"] == 0.0);
    // Messages: no coherence traffic, no locks; the bulk variant sends far fewer, larger
    // messages carrying the same molecules.
    for v in ["mp-int", "mp-poll", "bulk"] {
        let r = get(v);
        assert_eq!(coherence(r), 0, "{v}: no coherence traffic");
        assert_eq!(r.counters["lock_acquisitions"], 0.0, "{v}");
        assert!(r.counters["messages"] >= r.counters["app_messages"], "{v}: the machine counted the app's messages");
        assert_eq!(r.counters["molecules_sent"], get("mp-int").counters["molecules_sent"], "{v}: same ghosts");
    }
    let (fine, bulk) = (get("mp-int"), get("bulk"));
    assert!(bulk.counters["app_messages"] * 2.0 < fine.counters["app_messages"]);
    assert!(bulk.counters["app_bytes_per_message"] > 2.0 * fine.counters["app_bytes_per_message"]);
    // Two molecules per fine-grain message on Alewife: 1 slot word and 6 values of 8 bytes.
    assert_eq!(fine.counters["molecules_per_message"], 2.0);
}

#[test]
fn bad_parameters_are_named() {
    let s = preset("alewife", Some(8));
    let err = |p: &[&str]| match run_app(&s, "moldyn", "sm", &params(p), 1) {
        Err(AppError::Input(m)) => m,
        other => panic!("{p:?}: expected an input error, got {:?}", other.map(|r| r.check)),
    };
    assert!(err(&["molecules=10"]).starts_with("--param molecules=10:"));
    assert!(err(&["density=0"]).starts_with("--param density=0:"));
    // Regression: a near-zero density made the rebuild's cell grid overflow ("capacity
    // overflow" panic), found by the fuzz test.
    assert!(err(&["density=1e-300"]).starts_with("--param density=1e-300:"));
    assert!(err(&["list_radius=2"]).starts_with("--param list_radius=2:"));
    assert!(err(&["molecules=64", "list_radius=3"]).contains("half the box side"));
    assert!(err(&["rebuild=0"]).starts_with("--param rebuild=0:"));
    assert!(err(&["dt=-1"]).starts_with("--param dt=-1:"));
}
