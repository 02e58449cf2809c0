//! UNSTRUC on the simulated machine: every variant's answer on the calibrated mesh, a torus, a
//! software-DSM machine and at 8 and 64 processors; determinism; time accounting; traffic and
//! lock balance; the mesh file path; parameter errors.

use commlab_api::Category;
use commlab_apps::unstruc::mesh;
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

fn run(s: &Simulator, variant: &str, p: &[&str]) -> AppResult {
    common::run_seeded(s, "unstruc", variant, p, 3)
}

const SMALL: &[&str] = &["nodes=600", "iterations=3"];

fn variants() -> &'static [&'static str] {
    app_info("unstruc").unwrap().variants
}

#[test]
fn every_variant_is_right_and_balanced_on_every_machine() {
    let machines = [
        ("alewife (32, mesh)", preset("alewife", None)),
        ("alewife at 8", preset("alewife", Some(8))),
        ("alewife at 64", preset("alewife", Some(64))),
        ("t3e (torus)", preset("t3e", None)),
        ("blizzard-s (software DSM)", preset("blizzard-s", None)),
    ];
    for (what, s) in &machines {
        for v in variants() {
            let r = run(s, v, SMALL);
            let what = format!("unstruc [{v}] on {what}");
            assert!(r.check.max_error <= 1e-12, "{what}: error {}", r.check.max_error);
            assert!(r.stats.cycles > 0.0, "{what}: no time passed");
            assert_categories_sum(&r.stats, &what);
            let c = &r.counters;
            assert_eq!(c["lock_acquires"], c["lock_releases"], "{what}: locks taken and released");
            assert_eq!(c["values_sent"], c["values_received"], "{what}: values sent and received");
            if v.starts_with("sm") {
                assert!(c["lock_acquires"] > 0.0, "{what}: shared nodes are updated under locks");
                assert_eq!(c["app_messages"], 0.0, "{what}");
            } else {
                assert_eq!(c["lock_acquires"], 0.0, "{what}: handlers need no locks");
                assert!(c["app_messages"] > 0.0 && c["app_messages"] <= c["messages"], "{what}");
            }
        }
    }
}

#[test]
fn two_runs_give_identical_results() {
    let s = preset("alewife", Some(16));
    for v in variants() {
        let (a, b) = (run(&s, v, SMALL), run(&s, v, SMALL));
        assert_eq!(a.stats.cycles, b.stats.cycles, "{v}: cycles");
        assert_eq!(a.stats.procs, b.stats.procs, "{v}: per-processor times");
        assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{v}: traffic");
        assert_eq!(a.stats.events, b.stats.events, "{v}: events");
        assert_eq!(a.counters, b.counters, "{v}: counters");
    }
    let other = run_app(&s, "unstruc", "sm", &params(SMALL), 4).unwrap();
    assert_ne!(other.stats.cycles, run(&s, "sm", SMALL).stats.cycles, "the seed changes the mesh");
}

#[test]
fn message_variants_move_exactly_the_planned_values() {
    let s = preset("alewife", None);
    let iterations = 3.0;
    // Bulk: every ghost node's 3 values out and its 3 results back, once per iteration, in one
    // message per (owner, reader) pair and direction.
    let bulk = run(&s, "bulk", SMALL);
    let ghosts = bulk.counters["ghost_nodes"];
    assert!(ghosts > 0.0);
    assert_eq!(bulk.counters["values_sent"], iterations * 6.0 * ghosts);
    assert!(bulk.counters["bytes_per_message"] > 100.0, "bulk messages are large");
    for v in ["mp-int", "mp-poll"] {
        let r = run(&s, v, SMALL);
        // Fine-grain: the same ghost values, plus one result per (edge or face, remote node).
        assert!(r.counters["values_sent"] > bulk.counters["values_sent"], "{v}: results are not combined");
        assert!(r.counters["app_messages"] > 3.0 * bulk.counters["app_messages"], "{v}: many small messages");
        assert_eq!(r.stats.volume_bytes[0] + r.stats.volume_bytes[1], 0, "{v}: no coherence traffic");
    }
    let sm = run(&s, "sm", SMALL);
    assert_eq!(sm.counters["messages"], 0.0);
    assert!(sm.counters["remote_misses"] > 0.0);
}

#[test]
fn sm_pf_issues_two_write_prefetches_per_edge() {
    let s = preset("alewife", None);
    let r = run(&s, "sm-pf", SMALL);
    assert_eq!(r.counters["prefetches_issued"], 2.0 * 3.0 * r.counters["mesh_edges"]);
    assert!(r.counters["prefetches"] > 0.0 && r.counters["prefetches"] <= r.counters["prefetches_issued"]);
    assert!(r.counters["prefetches_useful"] > 0.0);
    let sm = run(&s, "sm", SMALL);
    let sync = |r: &AppResult| r.stats.mean(Category::Synchronization);
    assert!(
        r.counters["lock_cycles_per_acquire"] < sm.counters["lock_cycles_per_acquire"],
        "prefetched locks are taken faster: {} vs {} cycles (sync {} vs {})",
        r.counters["lock_cycles_per_acquire"],
        sm.counters["lock_cycles_per_acquire"],
        sync(&r),
        sync(&sm)
    );
}

#[test]
fn a_mesh_file_gives_the_run_its_generated_twin_gives() {
    let m = mesh::generate(600, 3);
    let path = std::env::temp_dir().join(format!("commlab-unstruc-{}.mesh", std::process::id()));
    std::fs::write(&path, m.to_text()).unwrap();
    let s = preset("alewife", Some(8));
    let file = format!("mesh={}", path.display());
    for v in ["sm", "bulk"] {
        let a = run(&s, v, &[file.as_str(), "iterations=2"]);
        let b = run(&s, v, &["nodes=600", "iterations=2"]);
        assert_eq!(a.stats.cycles, b.stats.cycles, "{v}");
        assert_eq!(a.check.max_error, b.check.max_error, "{v}");
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn bad_parameters_are_named() {
    let s = preset("alewife", None);
    let err = |p: &[&str]| match run_app(&s, "unstruc", "sm", &params(p), 1) {
        Err(AppError::Input(m)) => m,
        other => panic!("{p:?}: expected an input error, got {:?}", other.map(|r| r.check)),
    };
    assert!(err(&["nodes=100"]).contains("--param nodes=100"));
    assert!(err(&["iterations=0"]).contains("--param iterations=0"));
    assert!(err(&["poll_every=x"]).contains("--param poll_every=x"));
    let missing = err(&["mesh=/nonexistent/unstruc.mesh"]);
    assert!(missing.contains("/nonexistent/unstruc.mesh"), "{missing}");
}

/// Regression (issue 36, item 9): mesh files could not be gzipped though matrices could.
#[test]
fn a_gzipped_mesh_file_reads_as_the_plain_one() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("commlab-mesh-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = mesh::generate(200, 5);
    let text = m.to_text();
    let plain = dir.join("m.mesh");
    std::fs::write(&plain, &text).unwrap();
    let gz = dir.join("m.mesh.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let a = commlab_apps::unstruc::meshfile::read_mesh(&plain).expect("the plain mesh reads");
    let b = commlab_apps::unstruc::meshfile::read_mesh(&gz).expect("the gzipped mesh reads");
    assert_eq!(a, b);
    assert_eq!(a.nodes(), m.nodes());
    std::fs::remove_dir_all(&dir).ok();
}
