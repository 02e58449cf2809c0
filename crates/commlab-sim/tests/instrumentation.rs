//! Blizzard-S's access-check instrumentation (`dsm.instrumentation`): the Blizzard COW study's
//! optimisation levels (§4.1, Table 1) and their per-reference costs, the presets' levels, and
//! the refusals.

use commlab_api::Backend;
use commlab_sim::machine::{Instrumentation, MachineConfig};
use commlab_sim::Simulator;

fn config(name: &str, set: &[&str]) -> Result<MachineConfig, String> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    MachineConfig::preset(name, &set, None).map_err(|e| e.to_string())
}

/// The check costs of a level on blizzard-s, in cycles (to the picosecond).
fn costs(level: &str) -> (f64, f64) {
    let cfg = config("blizzard-s", &[&format!("dsm.instrumentation={level}")]).unwrap();
    let sw = cfg.coherence.software().unwrap();
    (sw.load_check_ps as f64 / cfg.cycle_ps, sw.store_check_ps as f64 / cfg.cycle_ps)
}

#[test]
fn each_level_charges_the_studys_per_reference_cost() {
    let near = |(l, s): (f64, f64), (wl, ws): (f64, f64), level: &str| {
        assert!((l - wl).abs() < 1e-4 && (s - ws).abs() < 1e-4, "{level}: ({l}, {s}), want ({wl}, {ws})");
    };
    // Published (§4.1): the original snippet 14 cycles on the HyperSPARC; the test-and-branch
    // sequence 10 cycles; with the sentinel 3 cycles at most loads, 9 at most stores. The
    // original stays where the condition codes are live (assumed 2.5%, of the published 1-4%).
    let live = |c: f64| c + 0.025 * (14.0 - c);
    near(costs("none"), (0.0, 0.0), "none");
    near(costs("no-opt"), (14.0, 14.0), "no-opt");
    near(costs("cc-reg"), (live(10.0), live(10.0)), "cc-reg");
    // Slicing removes checks, not cycles from a check: commlab's checked references (its
    // private arrays stand for heap arrays) are the ones slicing cannot prove.
    near(costs("slice"), (live(10.0), live(10.0)), "slice");
    near(costs("sentinel"), (live(3.0), live(9.0)), "sentinel");
    // An explicit cost replaces the level's.
    let cfg = config("blizzard-s", &["dsm.load_check_cycles=5"]).unwrap();
    assert_eq!(cfg.coherence.software().unwrap().load_check_ps, (5.0 * cfg.cycle_ps).round() as u64);
}

#[test]
fn blizzard_s_runs_the_final_level_and_the_hardware_presets_none() {
    for (name, level) in [
        ("blizzard-s", Instrumentation::Sentinel),
        ("blizzard-e", Instrumentation::None),
        ("blizzard-t", Instrumentation::None),
    ] {
        let sw = config(name, &[]).unwrap().coherence.software().unwrap();
        assert_eq!(sw.instrumentation, level, "{name}");
    }
}

#[test]
fn a_sequential_baseline_is_uninstrumented() {
    let sim = Simulator::new(config("blizzard-s", &[]).unwrap());
    let one = sim.with_nprocs(1).unwrap();
    let sw = one.config().coherence.software().unwrap();
    assert_eq!((sw.instrumentation, sw.load_check_ps, sw.store_check_ps), (Instrumentation::None, 0, 0));
    let two = sim.with_nprocs(2).unwrap();
    assert_eq!(two.config().coherence.software().unwrap().instrumentation, Instrumentation::Sentinel);
}

#[test]
fn bad_levels_are_refused_naming_the_key() {
    let err = config("blizzard-s", &["dsm.instrumentation=fast"]).unwrap_err();
    assert!(err.contains("dsm.instrumentation") && err.contains("`fast`") && err.contains("sentinel"), "{err}");
    let err = config("blizzard-t", &["dsm.store_check_cycles=9"]).unwrap_err();
    assert!(err.contains("instrumentation = none inserts no checks"), "{err}");
    // A software-DSM machine must say its level.
    let text = commlab_sim::machine::preset_text("blizzard-s").unwrap();
    let without: String = text.lines().filter(|l| !l.starts_with("instrumentation")).collect::<Vec<_>>().join("\n");
    let err = commlab_sim::machine::parse_spec(&without, "test", &[])
        .and_then(MachineConfig::from_spec)
        .unwrap_err()
        .to_string();
    assert!(err.contains("dsm.instrumentation") && err.contains("required"), "{err}");
}
