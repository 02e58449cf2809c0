//! The runtime primitives (`rti`, `memcpy`, `accum`): right answers in every variant on a mesh
//! of 32 and 64 processors and a torus, determinism, time accounting, message conservation,
//! what their mechanisms imply about the figures, and refusal of bad parameters.

use commlab_api::RunStats;
use commlab_apps::{run_app, AppError, AppResult};
use commlab_sim::Simulator;

use crate::common;

use common::assert_categories_sum;

const APPS: [(&str, &[&str]); 3] =
    [("rti", &["sm", "mp"]), ("memcpy", &["sm", "sm-pf", "mp"]), ("accum", &["sm", "sm-pf", "mp"])];

fn shapes() -> Vec<(&'static str, Simulator)> {
    vec![
        ("alewife 32 (mesh)", common::preset("alewife", &[], None)),
        ("alewife 64 (mesh)", common::preset("alewife", &[], Some(64))),
        ("t3e (torus)", common::preset("t3e", &[], None)),
        ("alewife-sim 64 (the runtime study's machine)", common::preset("alewife-sim", &[], None)),
    ]
}

fn run(s: &Simulator, app: &str, variant: &str, params: &[&str]) -> AppResult {
    common::run_seeded(s, app, variant, params, 1)
}

/// Messages sent and handlers run over every processor (application and barrier messages).
fn sent_received(stats: &RunStats) -> (u64, u64) {
    stats.nodes.iter().fold((0, 0), |(s, r), n| (s + n.messages_sent, r + n.messages_received))
}

#[test]
fn every_variant_is_right_and_accounts_all_time_on_every_shape() {
    for (shape, s) in shapes() {
        for (app, variants) in APPS {
            for v in variants {
                let r = run(&s, app, v, &[]);
                let what = format!("{app} [{v}] on {shape}");
                assert_categories_sum(&r.stats, &what);
                assert!(r.stats.cycles > 0.0, "{what}: no time passed");
                if v.starts_with("mp") {
                    let (sent, received) = sent_received(&r.stats);
                    assert!(sent > 0, "{what}: no message sent");
                    assert_eq!(sent, received, "{what}: messages sent vs handlers run");
                }
            }
        }
    }
}

#[test]
fn runs_are_deterministic() {
    let s = common::preset("alewife", &[], None);
    for (app, variants) in APPS {
        for v in variants {
            let (a, b) = (run(&s, app, v, &[]), run(&s, app, v, &[]));
            let what = format!("{app} [{v}]");
            assert_eq!(a.stats.cycles, b.stats.cycles, "{what}: cycles");
            assert_eq!(a.stats.procs, b.stats.procs, "{what}: per-processor times");
            assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{what}: traffic");
            assert_eq!(a.stats.events, b.stats.events, "{what}: events");
            assert_eq!(a.counters, b.counters, "{what}: counters");
        }
    }
}

#[test]
fn an_invoked_thread_cannot_start_before_its_invoker_may_proceed() {
    // mp: the message leaves when the send is done, so the handler (and then the thread) runs
    // after it. sm: the invokee sees the new tail only by fetching the line from the invoker's
    // cache (a network round trip), while the invoker's unlock after that write is a hit on the
    // lock line it owns.
    for (shape, s) in shapes() {
        for v in ["sm", "mp"] {
            let r = run(&s, "rti", v, &["hops=2"]);
            let (inv, ee) = (r.counters["t_invoker"], r.counters["t_invokee"]);
            assert!(inv > 0.0 && ee > inv, "rti [{v}] on {shape}: t_invoker {inv}, t_invokee {ee}");
        }
    }
}

#[test]
fn the_mp_invoker_pays_exactly_one_send() {
    // In the minimal system; in the complete one, the invoke routine's call too (and the idle
    // schedulers' steal requests may interrupt it).
    for (shape, s) in shapes() {
        let send = s.config().ps_to_cycles(s.config().msg.send_cost_ps(4, None));
        let r = run(&s, "rti", "mp", &["args=3", "system=minimal"]);
        let got = r.counters["t_invoker"];
        assert!((got - send).abs() < 1e-3, "{shape}: t_invoker {got} vs the send of 4 words {send}");
        let call = s.config().cost_cycles("rti_call").unwrap() as f64;
        let full = run(&s, "rti", "mp", &["args=3"]).counters["t_invoker"];
        assert!(full >= send + call - 1e-3, "{shape}: complete t_invoker {full} vs call {call} + send {send}");
    }
}

#[test]
fn the_complete_system_delays_the_invoked_thread() {
    // The idle scheduler finds the invocation only after its current steal attempt, and
    // creates the thread; the minimal system's invokee waits on its queue alone.
    let s = common::preset("alewife-sim", &[], None);
    for v in ["sm", "mp"] {
        let full = run(&s, "rti", v, &[]);
        let min = run(&s, "rti", v, &["system=minimal"]);
        let (a, b) = (full.counters["t_invokee"], min.counters["t_invokee"]);
        let start = s.config().cost_cycles("sched_thread_start").unwrap() as f64;
        assert!(a >= b + start, "rti [{v}]: complete t_invokee {a} vs minimal {b} + thread start {start}");
        assert!(full.counters["steal_attempts"] > 0.0, "rti [{v}]: the idle schedulers looked for work");
        assert!(!min.counters.contains_key("steal_attempts"));
    }
    match run_app(&s, "rti", "sm", &["system=partial".to_string()], 1) {
        Err(AppError::Input(m)) => assert!(m.contains("system=partial") && m.contains("minimal"), "{m}"),
        other => panic!("expected an input error, got {:?}", other.map(|r| r.counters)),
    }
}

#[test]
fn rti_mp_refuses_descriptors_that_do_not_fit_one_message() {
    // CM-5 messages carry 4 words of 32 bits: two 64-bit words, so a code pointer and one argument.
    let s = common::preset("cm5", &[], None);
    let hops = format!("hops={}", s.config().topology.hops(0, 1));
    match run_app(&s, "rti", "mp", &["args=2".to_string(), hops.clone()], 1) {
        Err(AppError::Input(m)) => assert!(m.contains("args=2"), "{m}"),
        other => panic!("expected an input error, got {:?}", other.map(|r| r.counters)),
    }
    run(&s, "rti", "mp", &["args=1", &hops]);
}

#[test]
fn dma_copy_bandwidth_rises_with_block_size() {
    for (shape, s) in shapes() {
        let mbs: Vec<f64> = [16, 256, 4096, 16384]
            .iter()
            .map(|b| run(&s, "memcpy", "mp", &[&format!("bytes={b}")]).counters["mbytes_per_s"])
            .collect();
        assert!(mbs.windows(2).all(|w| w[1] > w[0]), "memcpy [mp] on {shape}: MB/s {mbs:?}");
    }
}

#[test]
fn a_large_dma_copy_runs_at_link_speed() {
    // Alewife's DMA reads 8 bytes/cycle, its links carry 2.25: beyond the fixed costs every
    // further byte costs its time on the link, header of each 512-byte packet included.
    let s = common::preset("alewife", &[], None);
    let at = |b: usize| run(&s, "memcpy", "mp", &[&format!("bytes={b}")]).counters["copy_cycles"];
    let slope = (at(16384) - at(4096)) / 12288.0;
    let cfg = s.config();
    let link_bytes_per_cycle = 2.25;
    let want = (1.0 + cfg.header_bytes as f64 / cfg.max_packet_payload_bytes as f64) / link_bytes_per_cycle;
    assert!((slope - want).abs() / want < 0.02, "cycles per byte {slope} vs link {want}");
}

#[test]
fn prefetching_one_line_ahead_is_not_slower_for_large_blocks() {
    // The prefetch of line k+1 is issued before line k's work, so line k+1's miss overlaps that
    // work; the prefetch costs one issue slot per line, less than any line's work here.
    for (shape, s) in shapes() {
        for b in ["bytes=4096", "bytes=16384"] {
            let c = |v: &str| run(&s, "memcpy", v, &[b]).counters["copy_cycles"];
            let (sm, pf) = (c("sm"), c("sm-pf"));
            assert!(pf <= sm, "memcpy {b} on {shape}: sm-pf {pf} cycles vs sm {sm}");
        }
        let c = |v: &str| run(&s, "accum", v, &["words=4096"]).counters["total_cycles"];
        let (sm, pf) = (c("sm"), c("sm-pf"));
        assert!(pf <= sm, "accum on {shape}: sm-pf {pf} cycles vs sm {sm}");
    }
}

#[test]
fn a_destination_in_the_prefetched_lines_sets_loses_every_prefetch() {
    // `--param layout=next-line`: destination line k shares its direct-mapped set with source
    // line k + 1, the line just prefetched, so each store evicts it before its load.
    let s = common::preset("alewife-sim", &[], None);
    for (b, lines) in [(256usize, 16.0), (4096, 256.0)] {
        let bytes = format!("bytes={b}");
        let c = |v: &str, layout: &str| run(&s, "memcpy", v, &[bytes.as_str(), &format!("layout={layout}")]);
        let (apart, collide) = (c("sm-pf", "apart"), c("sm-pf", "next-line"));
        assert_eq!(apart.counters["prefetches"], lines - 1.0);
        assert_eq!(apart.counters["prefetches_useful"], lines - 1.0, "{b} B apart");
        assert_eq!(collide.counters["prefetches_useful"], 0.0, "{b} B next-line");
        // One line past a multiple of 1 MB (64 K lines of 16 bytes).
        assert_eq!(collide.counters["dst_src_lines"], 65537.0);
        assert!(!apart.counters.contains_key("dst_src_lines"));
        // The loop without prefetches is not slowed by the layout; with them, it falls below it.
        let (plain, plain_collide) = (c("sm", "apart"), c("sm", "next-line"));
        assert_eq!(plain.counters["copy_cycles"], plain_collide.counters["copy_cycles"], "{b} B sm");
        assert!(
            collide.counters["copy_cycles"] > plain.counters["copy_cycles"],
            "{b} B: sm-pf next-line {} cycles vs sm {}",
            collide.counters["copy_cycles"],
            plain.counters["copy_cycles"]
        );
    }
    refused(&s, "memcpy", "sm-pf", &["layout=diagonal"], "layout=diagonal");
}

#[test]
fn accum_mp_splits_its_time_into_transfer_and_sum() {
    for (shape, s) in shapes() {
        let r = run(&s, "accum", "mp", &["words=2048"]);
        let (t, x, sum) = (r.counters["total_cycles"], r.counters["transfer_cycles"], r.counters["sum_cycles"]);
        assert!(x > 0.0 && sum > 0.0 && (x + sum - t).abs() < 1e-6, "{shape}: total {t}, transfer {x}, sum {sum}");
        // The local sum does not depend on where the array came from.
        let far = run(&s, "accum", "mp", &["words=2048", "hops=2"]);
        let far_sum = far.counters["sum_cycles"];
        assert!(
            (far_sum - sum).abs() < 1e-3,
            "{shape}: the local sum took {far_sum} cycles after a farther copy, {sum} after a near one"
        );
        assert!(
            far.counters["transfer_cycles"] > x,
            "{shape}: a farther home takes longer to copy from: {} vs {x}",
            far.counters["transfer_cycles"]
        );
    }
}

fn refused(s: &Simulator, app: &str, variant: &str, params: &[&str], names: &str) {
    let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    match run_app(s, app, variant, &params, 1) {
        Err(AppError::Input(m)) => {
            assert!(m.contains(names), "{app} {params:?}: message `{m}` does not name `{names}`")
        }
        Err(e) => panic!("{app} {params:?}: expected an input error, got a run error: {e}"),
        Ok(_) => panic!("{app} {params:?}: accepted"),
    }
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let s = common::preset("alewife", &[], None);
    for b in ["0", "8", "100", "16392", "32768", "-16", "abc"] {
        refused(&s, "memcpy", "sm", &[&format!("bytes={b}")], &format!("bytes={b}"));
    }
    for w in ["0", "262145", "x"] {
        refused(&s, "accum", "mp", &[&format!("words={w}")], &format!("words={w}"));
    }
    refused(&s, "rti", "sm", &["args=8"], "args=8");
    refused(&s, "rti", "sm", &["rounds=0"], "rounds=0");
    for app in ["rti", "memcpy", "accum"] {
        refused(&s, app, "mp", &["hops=99"], "hops=99");
    }
    // Too few processors: the shared-memory copies need a third to leave the source clean.
    let two = common::preset("alewife", &[], Some(2));
    refused(&two, "memcpy", "sm", &[], "at least 3 processors");
    refused(&two, "accum", "sm-pf", &[], "at least 3 processors");
    run(&two, "memcpy", "mp", &[]);
    run(&two, "rti", "sm", &[]);
    let one = common::preset("alewife", &[], Some(1));
    for (app, _) in APPS {
        refused(&one, app, "mp", &[], "at least 2 processors");
    }
}
