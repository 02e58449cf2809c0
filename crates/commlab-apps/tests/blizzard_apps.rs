//! DSMC, Barnes-Hut, APPBT, and MOLDYN and EM3D's stache/custom pairs (the Blizzard study's applications)
//! on the simulated machine: both variants give the sequential program's answer (checked by
//! the apps: exactly, moldyn to its tolerance) on 1, 2 and 4 processors of blizzard-s and
//! alewife; the work done does not depend on the processor count; determinism; time
//! accounting; traffic balance; parameter errors.

use commlab_api::Category;
use commlab_apps::{app_info, run_app, AppError, AppResult};
use commlab_sim::Simulator;

use crate::common;

use common::assert_categories_sum;

const DSMC: &[&str] = &["particles=600", "cells_x=8", "cells_y=4", "cells_z=4", "iterations=6"];
const BARNES: &[&str] = &["bodies=192", "iterations=3"];
const APPBT: &[&str] = &["nx=8", "ny=3", "nz=4", "iterations=3"];
const MOLDYN: &[&str] = &["molecules=256", "iterations=3", "rebuild=2", "list_radius=2.6"];
const EM3D: &[&str] = &["nodes=600", "degree=6", "remote=0.3", "span=2", "iterations=3"];
/// The study's five applications at the sizes above.
const APPS: [(&str, &[&str]); 5] =
    [("dsmc", DSMC), ("barnes", BARNES), ("appbt", APPBT), ("moldyn", MOLDYN), ("em3d", EM3D)];

fn machines() -> Vec<(String, Simulator)> {
    let mut v = Vec::new();
    for name in ["blizzard-s", "alewife"] {
        for procs in [1, 2, 4] {
            v.push((format!("{name} {procs}"), common::preset(name, &[], Some(procs))));
        }
    }
    v
}

fn run(s: &Simulator, app: &str, variant: &str, p: &[&str]) -> AppResult {
    common::run_seeded(s, app, variant, p, 5)
}

/// Two runs of the same thing agree in every simulated figure.
fn assert_identical(a: &AppResult, b: &AppResult, what: &str) {
    assert_eq!(a.stats.cycles, b.stats.cycles, "{what}: cycles");
    assert_eq!(a.stats.procs, b.stats.procs, "{what}: per-processor times");
    assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{what}: traffic");
    assert_eq!(a.counters, b.counters, "{what}: counters");
}

#[test]
fn dsmc_matches_the_sequential_program_on_1_2_and_4_processors() {
    let mut collisions = None;
    for (shape, s) in machines() {
        for v in app_info("dsmc").unwrap().variants {
            let r = run(&s, "dsmc", v, DSMC);
            let what = format!("dsmc [{v}] on {shape}");
            let c = &r.counters;
            assert_categories_sum(&r.stats, &what);
            assert_eq!(r.check.max_error, 0.0, "{what}: {}", r.check.detail);
            assert_eq!(c["particles_sent"], c["particles_received"], "{what}: particles sent vs received");
            assert_eq!(c["lock_acquisitions"], c["lock_releases"], "{what}: locks");
            assert_eq!(c["particle_steps"], 600.0 * 6.0, "{what}: every particle moved every step");
            // The collisions are those of the app's own sequential reference, and the same for
            // every machine, variant and processor count.
            assert_eq!(c["collisions"], c["reference_collisions"], "{what}");
            assert!(c["collisions"] > 0.0, "{what}: no collisions");
            assert_eq!(*collisions.get_or_insert(c["collisions"]), c["collisions"], "{what}: collisions");
            let procs = s.config().nprocs();
            if procs == 1 {
                assert_eq!(c["particles_sent"], 0.0, "{what}: nothing migrates on one processor");
            } else {
                assert!(c["particles_sent"] > 0.0, "{what}: particles migrate");
                assert_eq!(c["particles_sent"], c["reference_migrations"], "{what}: migrations");
            }
            if *v == "custom" {
                assert_eq!(c["lock_acquisitions"], 0.0, "{what}");
                // One message per neighbour per step; on a 1-D split of 8 slabs every
                // processor but the ends has two neighbours.
                assert_eq!(c["app_messages"], (6 * 2 * (procs - 1)) as f64, "{what}: messages");
            } else {
                assert_eq!(c["app_messages"], 0.0, "{what}");
            }
            assert!(c["speedup"] > 0.0 && c["serial_cycles"] > 0.0, "{what}");
        }
    }
}

#[test]
fn barnes_matches_the_sequential_program_on_1_2_and_4_processors() {
    let mut interactions = None;
    for (shape, s) in machines() {
        for v in app_info("barnes").unwrap().variants {
            let r = run(&s, "barnes", v, BARNES);
            let what = format!("barnes [{v}] on {shape}");
            let c = &r.counters;
            assert_categories_sum(&r.stats, &what);
            assert_eq!(r.check.max_error, 0.0, "{what}: {}", r.check.detail);
            assert_eq!(c["lock_acquisitions"], c["lock_releases"], "{what}: locks");
            assert_eq!(c["bodies_sent"], c["bodies_received"], "{what}: bodies sent vs received");
            assert!(c["force_error"] > 0.0 && c["force_error"] < 0.1, "{what}: theta 1 error {}", c["force_error"]);
            // The same tree and walks everywhere: the same interactions.
            assert!(c["interactions"] > 0.0, "{what}");
            assert_eq!(*interactions.get_or_insert(c["interactions"]), c["interactions"], "{what}: interactions");
            let procs = s.config().nprocs();
            if *v == "custom" {
                assert_eq!(
                    c["bodies_sent"],
                    (3 * 192 * (procs - 1)) as f64,
                    "{what}: every body to every other processor"
                );
                assert_eq!(c["lock_acquisitions"], 0.0, "{what}");
            } else {
                assert_eq!(c["app_messages"], 0.0, "{what}");
                assert!(c["lock_acquisitions"] >= 3.0 * 192.0, "{what}: at least one lock per insertion");
                // The cells created over the run are those of 3 trees of the reference's shape.
                assert!(c["cells_created"] <= 3.0 * (c["tree_cells_max"] - 1.0), "{what}");
            }
        }
    }
}

#[test]
fn appbt_matches_the_sequential_program_on_1_2_and_4_processors() {
    let (ny, iterations, points) = (3.0, 3.0, 8.0 * 3.0 * 4.0);
    for (shape, s) in machines() {
        for v in app_info("appbt").unwrap().variants {
            let r = run(&s, "appbt", v, APPBT);
            let what = format!("appbt [{v}] on {shape}");
            let c = &r.counters;
            assert_categories_sum(&r.stats, &what);
            assert_eq!(r.check.max_error, 0.0, "{what}: {}", r.check.detail);
            // Three sweeps a iteration, every point solved in each.
            assert_eq!(c["points_solved"], 3.0 * points * iterations, "{what}: points solved");
            assert_eq!(c["handoffs_sent"], c["handoffs_received"], "{what}: hand-offs sent vs received");
            // Per iteration, each of the procs - 1 boundaries passes every group forward and back.
            let boundaries = (s.config().nprocs() - 1) as f64;
            assert_eq!(c["handoffs_sent"], 2.0 * boundaries * ny * iterations, "{what}: hand-offs");
            if *v == "custom" {
                assert_eq!(c["spin_waits"], 0.0, "{what}");
                // The hand-offs and, between iterations, both edge planes across every boundary.
                assert_eq!(c["planes_sent"], 2.0 * boundaries * (iterations - 1.0), "{what}: planes");
                assert_eq!(c["app_messages"], c["handoffs_sent"] + c["planes_sent"], "{what}: messages");
            } else {
                assert_eq!(c["app_messages"], 0.0, "{what}");
                assert_eq!(c["spin_waits"], c["handoffs_received"], "{what}: one counter wait a hand-off");
            }
            assert!(c["speedup"] > 0.0 && c["serial_cycles"] > 0.0, "{what}");
        }
    }
}

/// moldyn's Blizzard pair: `stache` is the `sm` program (the same run exactly); `custom`
/// returns every delta in one bulk message per peer group, with no locks.
#[test]
fn moldyn_stache_is_sm_and_custom_reduces_by_messages() {
    for (shape, s) in machines() {
        let sm = run(&s, "moldyn", "sm", MOLDYN);
        let stache = run(&s, "moldyn", "stache", MOLDYN);
        let custom = run(&s, "moldyn", "custom", MOLDYN);
        let what = |v: &str| format!("moldyn [{v}] on {shape}");
        assert_eq!(stache.stats.cycles, sm.stats.cycles, "{}: the sm program", what("stache"));
        assert_eq!(stache.stats.procs, sm.stats.procs, "{}", what("stache"));
        for (v, r) in [("stache", &stache), ("custom", &custom)] {
            assert_categories_sum(&r.stats, &what(v));
            assert!(r.counters["speedup"] > 0.0 && r.counters["serial_cycles"] > 0.0, "{}", what(v));
            assert_eq!(r.counters["pairs_tested"], sm.counters["pairs_tested"], "{}: the same pairs", what(v));
        }
        assert_eq!(stache.counters["serial_cycles"], custom.counters["serial_cycles"], "{shape}: one baseline");
        let c = &custom.counters;
        assert_eq!(c["lock_acquisitions"], 0.0, "{}", what("custom"));
        assert_eq!(c["coordinate_messages"], 0.0, "{}: coordinates are shared", what("custom"));
        assert_eq!(c["deltas_sent"], c["deltas_received"], "{}: deltas", what("custom"));
        if s.config().nprocs() > 1 {
            assert!(c["delta_messages"] > 0.0, "{}", what("custom"));
            assert!(sm.counters["lock_acquisitions"] > 0.0, "{}", what("sm"));
        }
    }
}

/// em3d's Blizzard pair: `stache` is the `sm` program (the same run exactly); `custom` runs the
/// update protocol, so a reader faults on a remote block once, whatever the iteration count,
/// and every later phase pushes each registered reader's blocks to it.
#[test]
fn em3d_stache_is_sm_and_custom_updates_its_readers() {
    let with_iterations = |n: usize| -> Vec<String> {
        EM3D.iter()
            .map(|p| if p.starts_with("iterations=") { format!("iterations={n}") } else { p.to_string() })
            .collect()
    };
    for (shape, s) in machines() {
        let sm = run(&s, "em3d", "sm", EM3D);
        let stache = run(&s, "em3d", "stache", EM3D);
        assert_eq!(stache.stats.cycles, sm.stats.cycles, "em3d [stache] on {shape}: the sm program");
        assert_eq!(stache.stats.procs, sm.stats.procs, "em3d [stache] on {shape}");
        assert!(stache.counters["speedup"] > 0.0, "em3d [stache] on {shape}");
        if !shape.starts_with("blizzard") {
            continue; // custom needs Tempest access control (refusal: apps.rs)
        }
        let runs: Vec<AppResult> =
            [1, 2, 3].iter().map(|&n| common::run_seeded(&s, "em3d", "custom", &with_iterations(n), 5)).collect();
        let custom = &runs[2];
        let what = format!("em3d [custom] on {shape}");
        assert_categories_sum(&custom.stats, &what);
        assert_eq!(custom.counters["serial_cycles"], stache.counters["serial_cycles"], "{what}: one baseline");
        // Everything shared is in the user region and the barrier is by messages: the default
        // protocol carries nothing (it carried the barrier's counters before that was fixed).
        assert_eq!(custom.counters["protocol_messages"], 0.0, "{what}: default-protocol traffic");
        let f: Vec<f64> = runs.iter().map(|r| r.counters.get("tempest_faults").copied().unwrap_or(0.0)).collect();
        let u: Vec<f64> = runs.iter().map(|r| r.counters["updates_pushed"]).collect();
        assert!(f.iter().all(|&x| x == f[0]), "{what}: faults by iteration count {f:?}: a reader missed twice");
        if s.config().nprocs() == 1 {
            assert_eq!((f[0], u[2]), (0.0, 0.0), "{what}: nothing is remote on one processor");
        } else {
            assert!(f[0] > 0.0, "{what}: no reader faulted");
            // From the second iteration on, every registered reader gets each block once a phase.
            assert_eq!(u[2] - u[1], f[0], "{what}: updates pushed per iteration");
            assert_eq!(u[1] - u[0], f[0], "{what}: updates pushed per iteration");
        }
    }
}

#[test]
fn two_runs_are_identical() {
    let s = common::preset("blizzard-e", &[], Some(4));
    for (app, p) in APPS {
        for v in app_info(app).unwrap().variants {
            assert_identical(&run(&s, app, v, p), &run(&s, app, v, p), &format!("{app} [{v}]"));
        }
    }
}

/// SMP nodes (`node.procs_per_node = 2`): every app in both variants on the three presets
/// gives the sequential answer (checked by the app), its compute processors' categories sum,
/// handler time moves to the protocol processors, and two runs are identical.
#[test]
fn all_five_apps_run_on_smp_nodes_of_the_three_presets() {
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let s = common::preset(m, &["node.procs_per_node=2", "node.tag_lock_cycles=20"], Some(4));
        for (app, p) in APPS {
            for v in app_info(app).unwrap().variants {
                let what = format!("{app} [{v}] on {m} with SMP nodes");
                let r = run(&s, app, v, p);
                assert_categories_sum(&r.stats, &what);
                assert!(r.counters["handler_cycles_protocol"] > 0.0, "{what}: {:?}", r.counters);
                if m == "blizzard-e" {
                    assert_identical(&r, &run(&s, app, v, p), &what);
                }
            }
        }
    }
}

/// `stache` is the default protocol at the machine's block size, `memory.line_bytes` (the
/// presets' 128 is the study's stache128): every app's `stache` gives the sequential answer at
/// the study's smallest and largest block sizes, 32 and 512 bytes, with categories summing.
#[test]
fn stache_runs_at_block_sizes_from_32_to_512_bytes() {
    for bytes in [32, 512] {
        let set = format!("memory.line_bytes={bytes}");
        let s = common::preset("blizzard-s", &[&set], Some(4));
        for (app, p) in APPS {
            let what = format!("{app} [stache] on blizzard-s with {bytes}-byte blocks");
            let r = run(&s, app, "stache", p);
            assert_categories_sum(&r.stats, &what);
            assert!(r.counters["cache_misses"] > 0.0, "{what}: {:?}", r.counters);
        }
    }
}

/// Back-edge polling instead of interrupts: every app in both variants gives the sequential
/// answer, categories sum, messages are dispatched at back-edges, two runs are identical.
#[test]
fn all_five_apps_run_with_back_edge_polling() {
    let s = common::preset(
        "blizzard-s",
        &["node.procs_per_node=1", "messaging.backedge_interval_cycles=200", "messaging.poll_cycles=10"],
        Some(4),
    );
    for (app, p) in APPS {
        for v in app_info(app).unwrap().variants {
            let what = format!("{app} [{v}] on blizzard-s polling at back-edges");
            let r = run(&s, app, v, p);
            assert_categories_sum(&r.stats, &what);
            assert!(r.counters["backedge_failed_polls"] > 0.0, "{what}: {:?}", r.counters);
            assert_identical(&r, &run(&s, app, v, p), &what);
        }
    }
}

#[test]
fn bad_parameters_are_named() {
    let s = common::preset("blizzard-s", &[], Some(4));
    let err = |app: &str, p: &[&str]| match run_app(
        &s,
        app,
        "stache",
        &p.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
        1,
    ) {
        Err(AppError::Input(m)) => m,
        other => panic!("{app} {p:?}: expected an input error, got {:?}", other.map(|r| r.check)),
    };
    assert!(err("dsmc", &["particles=0"]).starts_with("--param particles=0:"));
    assert!(err("dsmc", &["cells_x=1", "cells_y=1", "cells_z=2"]).contains("at least one cell per processor"));
    assert!(err("dsmc", &["dt=5"]).starts_with("--param dt=5:"));
    assert!(err("dsmc", &["vr_max=nan"]).starts_with("--param vr_max=nan:"));
    assert!(err("dsmc", &["particles=100000000"]).contains("particle-steps"));
    assert!(err("barnes", &["bodies=3"]).contains("at least one body per processor"));
    assert!(err("barnes", &["iterations=1"]).starts_with("--param iterations=1:"));
    assert!(err("barnes", &["theta=-1"]).starts_with("--param theta=-1:"));
    assert!(err("barnes", &["bodies=16384", "iterations=100"]).contains("body-iterations"));
    assert!(err("appbt", &["nx=3"]).contains("at least one x-plane per processor"));
    assert!(err("appbt", &["nz=0"]).starts_with("--param nz=0:"));
    assert!(err("appbt", &["iterations=0"]).starts_with("--param iterations=0:"));
    assert!(err("appbt", &["nx=128", "ny=128", "nz=128"]).contains("point-iterations"));
}

/// Blizzard-S instruments every load and store the program makes (§4.1), its private ones
/// too: the custom protocols of DSMC, APPBT and Barnes keep their data private and talk by
/// messages, so on -T (hardware tags, no checks) they run faster, by exactly the checks' cycles
/// in each processor's computation. The sequential baseline is the uninstrumented program on
/// both.
#[test]
fn custom_runs_on_blizzard_s_pay_the_instrumentation_of_their_private_references() {
    let s = common::preset("blizzard-s", &[], Some(4));
    let t = common::preset("blizzard-t", &[], Some(4));
    let sw = s.config().coherence.software().expect("software DSM");
    for (app, p) in [("dsmc", DSMC), ("appbt", APPBT), ("barnes", BARNES)] {
        let (rs, rt) = (run(&s, app, "custom", p), run(&t, app, "custom", p));
        let what = format!("{app} [custom]");
        let (loads, stores) = (rs.counters["access_checked_loads"], rs.counters["access_checked_stores"]);
        assert!(loads > 0.0 && stores > 0.0, "{what}: no checked references");
        assert!(!rt.counters.contains_key("access_checked_loads"), "{what}: blizzard-t checks nothing");
        // The same references on both (the work does not depend on the machine).
        assert_eq!(rs.counters["cache_hits"], rt.counters["cache_hits"], "{what}: references");
        let check_ps = loads * sw.load_check_ps as f64 + stores * sw.store_check_ps as f64;
        let compute = |r: &AppResult| r.stats.procs.iter().map(|p| p.get(Category::Compute)).sum::<f64>();
        let diff_ps = (compute(&rs) - compute(&rt)) * s.config().cycle_ps;
        assert!(
            (diff_ps - check_ps).abs() <= 1e-9 * check_ps + 1.0,
            "{what}: -S computed {diff_ps} ps more than -T, its checks are {check_ps} ps"
        );
        assert_eq!(
            rs.counters["serial_cycles"], rt.counters["serial_cycles"],
            "{what}: the baseline is uninstrumented"
        );
        assert!(rs.stats.cycles > rt.stats.cycles, "{what}");
    }
}
