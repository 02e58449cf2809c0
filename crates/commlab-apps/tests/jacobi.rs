//! JACOBI on the simulated machine: both variants' answers (bit for bit against the
//! sequential solver) on the calibrated mesh, at 64 processors, on a torus, on one processor
//! and on a prime count; determinism; time accounting; every border sent once by DMA and
//! received once; parameter errors.

use commlab_apps::{app_info, run_app, AppError, AppResult};
use commlab_sim::Simulator;

use crate::common;

use common::assert_categories_sum;

fn preset(name: &str, procs: Option<usize>) -> Simulator {
    common::preset(name, &[], procs)
}

fn run(s: &Simulator, variant: &str, p: &[&str]) -> AppResult {
    common::run_seeded(s, "jacobi", variant, p, 1)
}

const ITERATIONS: usize = 3;
const SMALL: &[&str] = &["n=16", "iterations=3"];

fn variants() -> &'static [&'static str] {
    app_info("jacobi").unwrap().variants
}

/// Borders crossing between blocks per iteration on a `pr` x `pc` block grid, both ways.
fn borders(pr: usize, pc: usize) -> usize {
    2 * (pr * (pc - 1) + pc * (pr - 1))
}

#[test]
fn every_variant_is_exact_and_balanced_on_every_machine() {
    // (machine, processors, block rows x columns the most square factoring gives)
    let machines = [
        ("alewife (32, mesh)", preset("alewife", None), (8, 4)),
        ("alewife at 64", preset("alewife", Some(64)), (8, 8)),
        ("t3e (32, torus)", preset("t3e", None), (8, 4)),
        ("alewife-sim (64)", preset("alewife-sim", None), (8, 8)),
        ("alewife at 1", preset("alewife", Some(1)), (1, 1)),
        ("alewife at 7 (prime)", preset("alewife", Some(7)), (7, 1)),
    ];
    for (what, s, (pr, pc)) in &machines {
        for v in variants() {
            let r = run(s, v, SMALL);
            let what = format!("jacobi [{v}] on {what}");
            assert_eq!(r.check.max_error, 0.0, "{what}: {}", r.check.detail);
            assert!(r.stats.cycles > 0.0, "{what}: no time passed");
            assert_categories_sum(&r.stats, &what);
            let c = &r.counters;
            assert_eq!((c["proc_rows"], c["proc_cols"]), (*pr as f64, *pc as f64), "{what}: block grid");
            let expected = (borders(*pr, *pc) * ITERATIONS) as f64;
            assert_eq!(c["borders_per_iteration"] * ITERATIONS as f64, expected, "{what}");
            if *v == "mp" {
                assert_eq!(c["border_messages"], expected, "{what}: one DMA message per border per iteration");
                assert_eq!(c["border_messages_received"], expected, "{what}: every border received");
                assert_eq!(c["border_bytes"], c["border_bytes_received"], "{what}: border bytes");
                assert_eq!(
                    c["border_bytes"],
                    8.0 * c["border_words_per_iteration"] * ITERATIONS as f64,
                    "{what}: border bytes are the border words of every iteration"
                );
                let sent: u64 = r.stats.nodes.iter().map(|n| n.messages_sent).sum();
                assert!(sent as f64 >= expected, "{what}: the machine saw {sent} messages, fewer than the borders");
                assert_eq!(c["protocol_messages"], 0.0, "{what}: no shared memory in the timed region");
            } else {
                assert_eq!(c["messages"], 0.0, "{what}: shared memory sends no messages");
                assert!(!c.contains_key("border_messages"), "{what}");
                if *pr * *pc > 1 {
                    assert!(c["cache_misses"] > 0.0, "{what}: neighbours' borders are remote misses");
                }
            }
        }
    }
}

#[test]
fn border_words_are_the_block_edges() {
    // 16 x 16 on 32 processors: 8 x 4 blocks of 2 rows by 4 columns. Between block rows, 7
    // boundaries of 4 columns x 4 blocks each; between block columns, 3 of 16 rows; both ways.
    let r = run(&preset("alewife", None), "mp", SMALL);
    assert_eq!(r.counters["border_words_per_iteration"], (2 * (7 * 16 + 3 * 16)) as f64);
    assert_eq!(r.counters["border_bytes"], (8 * 2 * (7 * 16 + 3 * 16) * ITERATIONS) as f64);
    assert_eq!((r.counters["block_rows_max"], r.counters["block_cols_max"]), (2.0, 4.0));
}

#[test]
fn one_point_blocks_and_uneven_blocks_are_exact() {
    // 8 x 8 on 64 processors: every block a single point, all four of its values borders.
    // 13 x 13 on 6 processors: blocks of 4 or 5 rows and 6 or 7 columns.
    for (n, procs) in [("n=8", 64), ("n=13", 6)] {
        let s = preset("alewife", Some(procs));
        for v in variants() {
            let r = run(&s, v, &[n, "iterations=4"]);
            assert_eq!(r.check.max_error, 0.0, "{v} {n} on {procs}: {}", r.check.detail);
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
}

#[test]
fn one_processor_does_the_same_work_in_both_variants() {
    // Alone, neither variant communicates: both make the same references and the same work.
    let s = preset("alewife", Some(1));
    let (sm, mp) = (run(&s, "sm", SMALL), run(&s, "mp", SMALL));
    assert_eq!(sm.stats.cycles, mp.stats.cycles);
    assert_eq!(mp.counters["border_messages"], 0.0);
}

#[test]
fn bad_parameters_are_refused_with_their_name() {
    let s = preset("alewife", None);
    let cases: &[(&[&str], &str)] = &[
        (&["n=7"], "n=7"),
        (&["n=4097"], "n=4097"),
        (&["n=many"], "n=many"),
        (&["iterations=0"], "iterations=0"),
        (&["n=4"], "n=4"),
        (&["size=16"], "size"),
    ];
    for (p, named) in cases {
        let params: Vec<String> = p.iter().map(|x| x.to_string()).collect();
        match run_app(&s, "jacobi", "sm", &params, 1) {
            Err(AppError::Input(m)) => assert!(m.contains(named), "{p:?}: message `{m}` does not name {named}"),
            other => panic!("{p:?}: expected an input error, got {:?}", other.map(|r| r.check)),
        }
    }
    // A prime count larger than n cannot give every strip a row.
    let prime = preset("alewife", Some(11));
    match run_app(&prime, "jacobi", "mp", &["n=8".to_string()], 1) {
        Err(AppError::Input(m)) => assert!(m.contains("n=8") && m.contains("11 x 1"), "{m}"),
        other => panic!("expected an input error, got {:?}", other.map(|r| r.check)),
    }
    assert!(matches!(run_app(&s, "jacobi", "mp-int", &[], 1), Err(AppError::Input(_))));
}

#[test]
fn the_studys_exchange_fetches_every_border_by_a_request() {
    // exchange=copy (the default, §4.6: the memory-to-memory copy of §4.4): a request message
    // for every border on top of its DMA reply, and a message barrier every iteration, so at
    // least one more message per border than exchange=push, which sends each border once.
    let s = preset("alewife", None);
    let sent = |r: &AppResult| r.stats.nodes.iter().map(|n| n.messages_sent).sum::<u64>() as f64;
    let copy = run(&s, "mp", SMALL);
    let push = run(&s, "mp", &["n=16", "iterations=3", "exchange=push"]);
    for (what, r) in [("copy", &copy), ("push", &push)] {
        assert_eq!(r.check.max_error, 0.0, "exchange={what}: {}", r.check.detail);
        assert_eq!(r.counters["border_messages"], (borders(8, 4) * ITERATIONS) as f64, "exchange={what}");
    }
    let borders_sent = copy.counters["border_messages"];
    assert!(sent(&copy) >= sent(&push) + borders_sent, "copy sent {} vs push {}", sent(&copy), sent(&push));
    match run_app(&s, "jacobi", "mp", &["exchange=pull".to_string()], 1) {
        Err(AppError::Input(m)) => assert!(m.contains("exchange=pull") && m.contains("push"), "{m}"),
        other => panic!("expected an input error, got {:?}", other.map(|r| r.check)),
    }
}
