//! The lazy-task-creation scheduler and its two programs, `grain` and `aq`: answers against
//! independent references, no task lost or run twice (complete trees counted in closed form,
//! random trees counted by an independent walk of the documented generator), determinism,
//! time accounting, message balance, speedup with parallel slack, and bad parameters.

use commlab_apps::lazy::aq;
use commlab_apps::{run_app, AppError, AppResult};
use commlab_sim::Simulator;
use proptest::prelude::*;

use crate::common;

use common::{assert_categories_sum, preset, run_seeded};

const VARIANTS: [&str; 2] = ["sm", "mp"];

/// The scheduler's own messages (steal requests and replies, joins, the end) are all handled;
/// the machine counts at least as many (its counts start at the first processor's timing and
/// include the barrier's).
fn assert_messages_balance(r: &AppResult, what: &str) {
    let sent = r.counters["scheduler_messages_sent"];
    let handled = r.counters["scheduler_messages_handled"];
    assert_eq!(sent, handled, "{what}: {sent} scheduler messages sent, {handled} handled");
    let machine_sent: u64 = r.stats.nodes.iter().map(|n| n.messages_sent).sum();
    assert!(machine_sent as f64 >= sent, "{what}: the machine saw {machine_sent} messages, the scheduler sent {sent}");
    if r.variant == "sm" {
        assert_eq!(sent, 0.0, "{what}: sm sends no scheduler messages");
    } else if r.stats.procs.len() > 1 {
        assert!(sent > 0.0, "{what}: mp sent no messages");
    }
}

/// The checks every run must pass beyond its own answer check.
fn assert_sound(r: &AppResult, s: &Simulator, what: &str) {
    assert_categories_sum(&r.stats, what);
    assert_messages_balance(r, what);
    assert_eq!(r.stats.procs.len(), s.config().nprocs(), "{what}");
    for c in
        ["speedup", "steals_attempted", "steals_succeeded", "tasks_migrated", "sequential_cycles", "parallel_cycles"]
    {
        let v = r.counters[c];
        assert!(v.is_finite() && v >= 0.0, "{what}: counters.{c} = {v}");
    }
    assert!(r.counters["steals_succeeded"] <= r.counters["steals_attempted"], "{what}");
    if s.config().nprocs() == 1 {
        assert_eq!(r.counters["steals_attempted"], 0.0, "{what}: one processor has nobody to steal from");
    }
}

fn machines() -> Vec<(&'static str, Simulator)> {
    vec![
        ("alewife 32", preset("alewife", &[], None)),
        ("alewife 64", preset("alewife", &[], Some(64))),
        ("t3e torus", preset("t3e", &[], None)),
        ("alewife-sim 64", preset("alewife-sim", &[], None)),
        ("alewife 1", preset("alewife", &[], Some(1))),
        ("alewife 2", preset("alewife", &[], Some(2))),
    ]
}

#[test]
fn every_variant_is_right_on_every_machine_size() {
    for (m, s) in machines() {
        for v in VARIANTS {
            let g = run_seeded(&s, "grain", v, &["n=8", "l=50"], 3);
            let what = format!("grain [{v}] on {m}");
            assert_sound(&g, &s, &what);
            assert_eq!(g.counters["leaves"], 256.0, "{what}: a complete tree of depth 8 has 256 leaves");
            let a = run_seeded(&s, "aq", v, &["tolerance=1e-5"], 3);
            let what = format!("aq [{v}] on {m}");
            assert_sound(&a, &s, &what);
            let want = aq::sequential_integral(1e-5).0;
            assert_eq!(a.counters["integral"].to_bits(), want.to_bits(), "{what}: not the sequential recursion's sum");
            if s.config().nprocs() > 1 {
                assert!(g.counters["steals_succeeded"] > 0.0, "grain [{v}] on {m}: no work was ever stolen");
            }
        }
    }
}

#[test]
fn runs_are_deterministic() {
    let s = preset("alewife", &[], Some(16));
    for v in VARIANTS {
        for (app, p) in [("grain", vec!["n=7", "l=30", "tree=random"]), ("aq", vec!["tolerance=1e-4"])] {
            let a = run_seeded(&s, app, v, &p, 11);
            let b = run_seeded(&s, app, v, &p, 11);
            let what = format!("{app} [{v}]");
            assert_eq!(a.stats.cycles, b.stats.cycles, "{what}: cycles");
            assert_eq!(a.stats.procs, b.stats.procs, "{what}: per-processor times");
            assert_eq!(a.stats.events, b.stats.events, "{what}: events");
            assert_eq!(a.counters, b.counters, "{what}: counters");
        }
    }
}

/// SplitMix64 of (seed, component), as `grain`'s module documentation specifies the random
/// tree (written out here so the count below does not use the application's code).
fn splitmix(seed: u64, component: u64) -> u64 {
    let mut z = seed ^ component.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Leaves and the sum of their heap numbers of `grain`'s random tree of depth `n`.
fn random_tree(seed: u64, n: u32) -> (u64, u64) {
    let (mut leaves, mut sum) = (0, 0u64);
    let mut stack = vec![(0u32, 1u64)];
    while let Some((d, id)) = stack.pop() {
        if d < n && (d == 0 || splitmix(seed, id) & 3 != 0) {
            stack.push((d + 1, 2 * id));
            stack.push((d + 1, 2 * id + 1));
        } else {
            leaves += 1;
            sum = sum.wrapping_add(id);
        }
    }
    (leaves, sum)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 16,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x1a2b_7a5c),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random trees on random machine sizes: every leaf runs exactly once (the app's check
    /// compares the leaves' numbers with the recursion's) and the count agrees with an
    /// independent walk of the generator.
    #[test]
    fn random_trees_on_random_machines_lose_and_duplicate_nothing(
        seed in any::<u64>(), n in 1u32..=8, procs in 1usize..=16, l in 0u64..200,
    ) {
        let s = preset("alewife", &[], Some(procs));
        let (leaves, _) = random_tree(seed, n);
        for v in VARIANTS {
            let params = [format!("n={n}"), format!("l={l}"), "tree=random".to_string()];
            let r = run_seeded(&s, "grain", v, &params, seed);
            let what = format!("grain [{v}] n={n} l={l} seed={seed} on {procs} processors");
            assert_sound(&r, &s, &what);
            prop_assert_eq!(r.counters["leaves"], leaves as f64, "{}", what);
        }
    }
}

#[test]
fn random_tree_count_is_independent_of_the_scheduler() {
    // The generator gives irregular trees (not complete, not a single leaf).
    let sizes: Vec<u64> = (0..8).map(|seed| random_tree(seed, 8).0).collect();
    assert!(sizes.iter().any(|&l| l != 256 && l > 2), "random trees {sizes:?} are not irregular");
    let s = preset("alewife", &[], Some(8));
    for v in VARIANTS {
        let r = run_seeded(&s, "grain", v, &["n=8", "tree=random"], 5);
        assert_eq!(r.counters["leaves"], random_tree(5, 8).0 as f64, "grain [{v}]");
    }
}

#[test]
fn speedup_exceeds_one_with_parallel_slack() {
    // 1024 leaves of 1000 cycles on 32 processors: plenty of work for everyone.
    let s = preset("alewife", &[], None);
    for v in VARIANTS {
        let r = run_seeded(&s, "grain", v, &["n=10", "l=1000"], 1);
        let sp = r.counters["speedup"];
        assert!(sp > 1.0, "grain [{v}]: speedup {sp} on 32 processors");
        let seq = r.counters["sequential_cycles"];
        // The sequential recursion charges every call and every leaf's delay.
        assert!(seq >= 1024.0 * 1000.0 + 2047.0, "sequential time {seq} below its work");
    }
}

/// A sanity property of any work-stealing scheduler: with more work per leaf (a larger grain
/// `l`) and the same tree, the speedup does not fall. Regression: the shared-memory
/// scheduler's thieves spun on the lock of the one processor with work, whose releases then
/// overflowed its LimitLESS pointers; its speedup fell from 1.85 at l = 0 to 0.87 at l = 25.
#[test]
fn speedup_does_not_fall_as_the_grain_grows() {
    let s = preset("alewife-sim", &[], Some(64));
    for v in VARIANTS {
        let mut last = (0, 0.0);
        for l in [0, 10, 25, 100, 1000] {
            let r = run_seeded(&s, "grain", v, &["n=12".to_string(), format!("l={l}")], 1);
            assert_sound(&r, &s, &format!("grain [{v}] n=12 l={l}"));
            let sp = r.counters["speedup"];
            assert!(sp >= last.1, "grain [{v}] on alewife-sim: speedup {sp} at l={l}, {} at l={}", last.1, last.0);
            last = (l, sp);
        }
    }
}

/// The exact integral: each bump is a product of two one-dimensional Gaussians, integrated
/// here by composite Simpson on 20000 intervals (error far below 1e-12).
fn true_integral() -> f64 {
    let simpson = |c: f64, s: f64| {
        let m = 20000;
        let h = 1.0 / m as f64;
        let f = |x: f64| (-(x - c) * (x - c) / s).exp();
        let mut sum = f(0.0) + f(1.0);
        for i in 1..m {
            sum += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        sum * h / 3.0
    };
    aq::TERMS.iter().map(|&(a, cx, cy, s)| a * simpson(cx, s) * simpson(cy, s)).sum()
}

#[test]
fn aq_converges_to_the_true_integral() {
    let exact = true_integral();
    let mut last = f64::INFINITY;
    for tol in [1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
        let (got, leaves) = aq::sequential_integral(tol);
        let err = (got - exact).abs();
        assert!(err <= 10.0 * tol, "tolerance {tol}: error {err:e} ({leaves} rectangles)");
        assert!(err < last || err < 1e-10, "tolerance {tol}: error {err:e} did not fall (was {last:e})");
        last = err;
    }
    let s = preset("alewife", &[], Some(16));
    for v in VARIANTS {
        let r = run_seeded(&s, "aq", v, &["tolerance=1e-6"], 1);
        let got = r.counters["integral"];
        assert!((got - exact).abs() <= 1e-5, "aq [{v}]: {got} vs exact {exact}");
        assert_eq!(got.to_bits(), aq::sequential_integral(1e-6).0.to_bits(), "aq [{v}]: not bit-identical");
        assert!(r.counters["evaluations"] > 0.0);
    }
}

#[test]
fn bad_params_are_refused() {
    let s = preset("alewife", &[], Some(4));
    let cases: &[(&str, &str, &str)] = &[
        ("grain", "n=21", "n"),
        ("grain", "n=-1", "n"),
        ("grain", "l=1000001", "l"),
        ("grain", "l=x", "l"),
        ("grain", "tree=binary", "tree"),
        ("aq", "tolerance=0", "tolerance"),
        ("aq", "tolerance=2", "tolerance"),
        ("aq", "tolerance=NaN", "tolerance"),
        ("aq", "tolerance=1e-10", "tolerance"),
    ];
    for (app, p, name) in cases {
        match run_app(&s, app, "sm", &[p.to_string()], 1) {
            Err(AppError::Input(m)) => assert!(m.contains(name), "{app} {p}: message `{m}` does not name {name}"),
            other => panic!("{app} {p}: expected an input error, got {:?}", other.map(|r| r.check)),
        }
    }
    for app in ["grain", "aq"] {
        assert!(matches!(run_app(&s, app, "mp-int", &[], 1), Err(AppError::Input(_))), "{app}: variant mp-int");
    }
}

#[test]
fn continuation_goes_by_dma_when_it_exceeds_the_argument_cap() {
    // Two 64-bit arguments: a join fits, a stolen continuation (7 words) goes by DMA.
    let s = preset("alewife", &["messaging.max_arg_words=4"], Some(8));
    let r = run_seeded(&s, "grain", "mp", &["n=7", "l=100"], 2);
    assert_sound(&r, &s, "grain [mp] with 2 argument words");
    assert!(r.counters["steals_succeeded"] > 0.0, "nothing was stolen");
    // One argument word cannot carry a join.
    let s = preset("alewife", &["messaging.max_arg_words=2"], Some(8));
    match run_app(&s, "grain", "mp", &[], 1) {
        Err(AppError::Input(m)) => assert!(m.contains("argument"), "message `{m}`"),
        other => panic!("expected an input error, got {:?}", other.map(|r| r.check)),
    }
}
