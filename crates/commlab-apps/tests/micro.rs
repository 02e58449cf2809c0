//! Microbenchmarks on the simulated machine: calibration, determinism, time accounting,
//! NI back-pressure and bisection bandwidth under cross-traffic.

use commlab_api::{Backend, Category};
use commlab_apps::{run_app, unavailable, AppError, AppResult, APPS};
use commlab_sim::machine::{preset_text, MachineConfig};
use commlab_sim::Simulator;

use crate::common;

use common::{assert_categories_sum, small_params};

/// `alewife` plus a `[remote]` section (alewife has no one-sided access), so that the get/put
/// variants run on every shape; round values, no figure of them is compared here.
fn sim(set: &[&str], procs: Option<usize>) -> Simulator {
    let text = format!(
        "{}\n[remote]\nissue_cycles = 4\nmax_outstanding_words = 16\nwords_per_request = 4\nrequest_bytes = 16\n\
         service_cycles = 10\nservice_line_cycles = 3\nservice_word_cycles = 2\n",
        preset_text("alewife").expect("preset")
    );
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Simulator::new(MachineConfig::load(&text, "alewife+remote", &set, procs).expect("machine"))
}

fn run<T: AsRef<str>>(s: &Simulator, app: &str, variant: &str, params: &[T]) -> AppResult {
    common::run_seeded(s, app, variant, params, 7)
}

#[test]
fn null_message_latency_matches_alewife_calibration() {
    // DESIGN.md: null active message end to end = 102 + 0.8 x hops cycles (interrupt receive).
    let s = sim(&[], None);
    for hops in [1, 4, 8, 10] {
        let h = format!("hops={hops}");
        let r = run(&s, "am-latency", "mp-int", &[&h]);
        let got = r.counters["one_way_cycles"];
        let want = 102.0 + 0.8 * hops as f64;
        let err = (got - want).abs() / want;
        assert!(err <= 0.10, "hops {hops}: one-way {got:.2} cycles vs published {want:.2} ({:.1}% off)", err * 100.0);
    }
}

#[test]
fn latency_grows_by_router_latency_per_hop() {
    let s = sim(&[], None);
    let at = |h: usize| run(&s, "am-latency", "mp-int", &[&format!("hops={h}")]).counters["one_way_cycles"];
    let per_hop = (at(10) - at(1)) / 9.0;
    assert!((per_hop - 0.8).abs() < 1e-6, "per-hop increment {per_hop} cycles, preset says 0.8");
}

/// Variants that need one-sided remote access (`Backend::one_sided`).
const ONE_SIDED: &[(&str, &[&str])] = &[
    ("copy-transfer", &["get", "put"]),
    ("fft2d", &["fetch", "deposit", "pack-fetch", "pack-deposit"]),
    ("remote-bw", &["fetch", "deposit", "fetch-single", "deposit-single", "fetch-blocking"]),
];

/// Whether `app [v]` needs a mechanism `s` lacks (one-sided access in [`ONE_SIDED`], or
/// Tempest access control for em3d's `custom`); if so, it must be refused with an input error
/// naming it, and `commlab_apps::unavailable` (which `--variant all` uses) must say so too.
fn refused(s: &Simulator, app: &str, v: &str) -> bool {
    let needs_one_sided = ONE_SIDED.iter().any(|(a, vs)| *a == app && vs.contains(&v));
    let needs_tempest = app == "em3d" && v == "custom";
    let lacks = (needs_one_sided && !s.one_sided()) || (needs_tempest && !s.access_control());
    assert_eq!(unavailable(s, app, v).is_some(), lacks, "{app} [{v}]: unavailable() disagrees");
    if !lacks {
        return false;
    }
    match run_app(s, app, v, &small_params(app, s), 7) {
        Err(AppError::Input(m)) => assert!(
            m.contains("no one-sided remote access") || m.contains("fine-grain access control"),
            "{app} [{v}]: {m}"
        ),
        other => panic!("{app} [{v}] on a machine without its mechanism: expected an input error, got {other:?}"),
    }
    true
}

/// Machine shapes every microbenchmark runs on.
fn shapes() -> Vec<(&'static str, Simulator)> {
    vec![
        ("alewife mesh 8x4", sim(&[], None)),
        ("mesh resized to 12", sim(&[], Some(12))),
        ("torus 4x2x2", sim(&["network.topology=torus", "network.dims=[4,2,2]", "network.io_nodes=false"], None)),
        ("fat-tree 16", sim(&["network.topology=fat-tree", "network.nprocs=16"], None)),
        ("hypercube 16", sim(&["network.topology=hypercube", "network.nprocs=16"], None)),
        ("ring 8", sim(&["network.topology=ring", "network.nprocs=8"], None)),
        ("crossbar 8", sim(&["network.topology=crossbar", "network.nprocs=8"], None)),
        ("blizzard-e 16 (software DSM)", Simulator::new(MachineConfig::preset("blizzard-e", &[], None).unwrap())),
    ]
}

#[test]
fn every_microbenchmark_accounts_all_time_on_every_shape() {
    for (shape, s) in shapes() {
        for app in APPS {
            for v in app.variants {
                if refused(&s, app.name, v) {
                    continue;
                }
                let r = run(&s, app.name, v, &small_params(app.name, &s));
                let what = format!("{} [{v}] on {shape}", app.name);
                assert_categories_sum(&r.stats, &what);
                assert!(r.stats.cycles > 0.0, "{what}: no time passed");
                assert_eq!(r.stats.procs.len(), s.config().nprocs());
            }
        }
    }
}

/// Every application's deepest coroutine stack stays within `commlab_sim::STACK_USE_BYTES`
/// (what the memory estimate counts; an eighth of the stack each processor is given), on a
/// hardware-coherent and a software-DSM
/// machine (whose access-fault handlers run on the faulting processor's stack). Stack depth
/// follows call depth, not data size, so the small parameters stand for the defaults.
#[test]
fn every_application_fits_its_coroutine_stack_with_room_to_spare() {
    let machines = [
        ("alewife", sim(&[], None)),
        ("blizzard-e", Simulator::new(MachineConfig::preset("blizzard-e", &[], None).unwrap())),
    ];
    let mut deepest = (0, String::new());
    for (name, s) in machines {
        let control = std::sync::Arc::new(commlab_sim::RunControl::default());
        control.measure_stacks();
        let s = s.with_control(std::sync::Arc::clone(&control));
        for app in APPS {
            for v in app.variants {
                if refused(&s, app.name, v) {
                    continue;
                }
                run(&s, app.name, v, &small_params(app.name, &s));
                let used = control.stack_bytes() as usize;
                let what = format!("{} [{v}] on {name}", app.name);
                assert!(used > 0, "{what}: no stack use measured");
                assert!(
                    used <= commlab_sim::STACK_USE_BYTES,
                    "{what}: {used} bytes of stack, more than the {} the memory estimate counts",
                    commlab_sim::STACK_USE_BYTES
                );
                if used > deepest.0 {
                    deepest = (used, what);
                }
            }
        }
    }
    eprintln!("deepest coroutine stack: {} bytes, {}", deepest.0, deepest.1);
}

#[test]
fn same_seed_same_results() {
    let s = sim(&["cross_traffic.rate_bytes_per_cycle=4"], Some(16));
    for app in APPS {
        for v in app.variants {
            if refused(&s, app.name, v) {
                continue;
            }
            let a = run(&s, app.name, v, &small_params(app.name, &s));
            let b = run(&s, app.name, v, &small_params(app.name, &s));
            let what = format!("{} [{v}]", app.name);
            assert_eq!(a.stats.cycles, b.stats.cycles, "{what}: cycles");
            assert_eq!(a.stats.procs, b.stats.procs, "{what}: per-processor times");
            assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{what}: traffic");
            assert_eq!(a.stats.events, b.stats.events, "{what}: events");
            assert_eq!(a.counters, b.counters, "{what}: counters");
        }
    }
}

#[test]
fn expensive_handler_stalls_senders_in_memory_ni_wait() {
    // The back-pressure itself, without alewife's network overflow trap (below), which empties
    // the network instead.
    let s = sim(&["messaging.overflow_timeout_cycles=0"], None);
    let cheap = run(&s, "am-throughput", "mp-int", &["senders=8", "messages=50", "handler_cycles=0"]);
    let costly = run(&s, "am-throughput", "mp-int", &["senders=8", "messages=50", "handler_cycles=2000"]);
    let wait = |r: &AppResult| r.counters["sender_memory_ni_wait_cycles"];
    // With a 2000-cycle handler the receiver takes ~2100 cycles per message; the senders can
    // only have a few messages in the network, so they spend a large part of the run stalled
    // (the senders nearest the receiver win more arbitrations and finish first; how much the
    // others wait also depends on the barrier tree, whose root is the receiver).
    assert!(
        wait(&costly) > 0.3 * costly.stats.cycles,
        "senders waited {} of {} cycles",
        wait(&costly),
        costly.stats.cycles
    );
    assert!(
        wait(&costly) > 5.0 * wait(&cheap),
        "stall {} with a costly handler vs {} with a cheap one",
        wait(&costly),
        wait(&cheap)
    );
    let rate = costly.counters["messages_per_kcycle"];
    assert!((rate - 1000.0 / 2095.0).abs() / (1000.0 / 2095.0) < 0.05, "receiver-bound rate {rate} msgs/kcycle");
    // With the trap (alewife's default), the receiver's full NI traps: the waiting messages are
    // copied into memory, so the senders hardly stall, and the receiver takes each copied
    // message at the buffer's dispatch cost instead of interrupt entry and exit.
    let trapped = run(&sim(&[], None), "am-throughput", "mp-int", &["senders=8", "messages=50", "handler_cycles=2000"]);
    assert!(trapped.stats.counters["overflow_traps"] >= 1.0, "{:?}", trapped.stats.counters);
    assert!(
        wait(&trapped) < 0.1 * wait(&costly),
        "stall {} with the trap vs {} without",
        wait(&trapped),
        wait(&costly)
    );
    assert!(trapped.stats.cycles < costly.stats.cycles);
}

/// `bisection-bw` (every processor streams 256-byte bulk messages across the bisection) under
/// cross-traffic of `rate` bytes/cycle with `arbitration`: the bisection, the application's rate
/// on the wire (payload and headers), the cross-traffic the I/O nodes achieved, and the result.
fn bisection_share(rate: f64, arbitration: &str) -> (f64, f64, f64, AppResult) {
    let set =
        [format!("cross_traffic.rate_bytes_per_cycle={rate}"), format!("cross_traffic.arbitration={arbitration}")];
    let s = sim(&[&set[0], &set[1]], None);
    let bisection = s.config().bisection_bytes_per_cycle();
    assert!((bisection - 18.0).abs() < 1e-9, "alewife bisection is 18 bytes/cycle, got {bisection}");
    let res = run(&s, "bisection-bw", "mp-int", &["bytes=256", "messages=60"]);
    // The app reports payload; on the wire each 256-byte message also carries a header.
    let header = s.config().header_bytes as f64;
    let wire = res.counters["app_payload_bytes_per_cycle"] * (256.0 + header) / 256.0;
    let achieved = res.counters.get("cross_traffic_bytes_per_cycle").copied().unwrap_or(0.0);
    if rate == 0.0 {
        assert!(!res.counters.contains_key("cross_traffic_bytes_per_cycle"), "no cross-traffic, no rate counter");
        assert_eq!(res.stats.volume_bytes[commlab_api::TrafficClass::CrossTraffic as usize], 0);
    }
    (bisection, wire, achieved, res)
}

/// `priority`: cross-traffic goes ahead of every waiting application packet, so the I/O nodes
/// achieve their configured rate and the application gets the bisection minus that rate.
#[test]
fn priority_cross_traffic_takes_its_rate_and_the_application_the_rest() {
    for r in [4.0, 9.0, 13.5] {
        let (bisection, wire, achieved, _) = bisection_share(r, "priority");
        assert!(
            (achieved - r).abs() / r < 0.02,
            "priority: cross-traffic achieved {achieved:.3} bytes/cycle, configured {r}"
        );
        let want = bisection - r;
        assert!(
            (wire - want).abs() / want <= 0.15,
            "priority, cross-traffic {r}: app got {wire:.2} bytes/cycle, expected about {want}"
        );
    }
}

/// `fifo` (the study's I/O nodes: real packets, no priority): cross-traffic waits its turn, so
/// the I/O nodes achieve at most their configured rate, here far less, against an application
/// that saturates the bisection (each cross-traffic packet crosses eight routers, losing
/// arbitrations at each); the application gets the bisection minus what they achieved. Against
/// an application that leaves the bisection free they achieve their rate.
#[test]
fn fifo_cross_traffic_gets_at_most_its_rate_and_the_application_the_rest() {
    for r in [0.0, 4.0, 9.0, 13.5] {
        let (bisection, wire, achieved, res) = bisection_share(r, "fifo");
        // Within the timed region a source may send one message more than its interval allows
        // and empty its NI output queue (4 packets) as well: 8 sources of 64-byte messages.
        let slack = 8.0 * (1.0 + 4.0) * 64.0 / res.stats.cycles;
        assert!(achieved <= r + slack, "fifo: cross-traffic achieved {achieved:.3} bytes/cycle, more than its {r}");
        if r > 0.0 {
            assert!(achieved < 0.5 * r, "fifo against a saturating application: achieved {achieved:.3} of {r}");
        }
        let want = bisection - achieved;
        assert!((wire - want).abs() / want <= 0.05, "fifo, cross-traffic {r}: app got {wire:.2} bytes/cycle, bisection less achieved cross-traffic is {want:.2}");
    }
    let s = sim(&["cross_traffic.rate_bytes_per_cycle=9", "cross_traffic.arbitration=fifo"], None);
    let light = run(&s, "am-latency", "mp-int", &["rounds=100"]);
    let achieved = light.counters["cross_traffic_bytes_per_cycle"];
    assert!((achieved - 9.0).abs() / 9.0 < 0.03, "fifo beside a ping-pong: achieved {achieved:.3} of 9");
}

#[test]
fn alltoall_on_256_nodes_delivers_every_message_once() {
    let s = sim(&[], Some(256));
    for v in ["mp-int", "mp-poll"] {
        let r = run(&s, "alltoall-stress", v, &["messages=30"]);
        assert_categories_sum(&r.stats, "alltoall-stress 256");
        assert!(r.counters["messages"] >= 256.0 * 30.0);
    }
}

#[test]
fn bulk_bandwidth_approaches_link_bandwidth_for_large_transfers() {
    let s = sim(&[], None);
    let small = run(&s, "bulk-bw", "mp-int", &["bytes=64"]).counters["bytes_per_cycle"];
    let large = run(&s, "bulk-bw", "mp-int", &["bytes=65536"]).counters["bytes_per_cycle"];
    // One link carries 2.25 bytes/cycle; headers of 512-byte packets take 8/520 of it.
    let link = 2.25 * 512.0 / 520.0;
    assert!(large < link && large > 0.9 * link, "64 KiB transfer: {large} bytes/cycle, link limit {link}");
    assert!(small < large / 2.0, "64-byte transfer should be overhead-bound: {small}");
}

#[test]
fn repeated_bulk_transfers_report_the_fastest_and_keep_the_first() {
    let s = sim(&[], None);
    let once = run(&s, "bulk-bw", "mp-poll", &["bytes=4096"]);
    let thrice = run(&s, "bulk-bw", "mp-poll", &["bytes=4096", "repeat=3"]);
    assert!(thrice.check.ok, "{}", thrice.check.detail);
    assert!(thrice.check.detail.starts_with("3 of 3 transfers"), "{}", thrice.check.detail);
    let (first, best) = (thrice.counters["first_transfer_cycles"], thrice.counters["transfer_cycles"]);
    // The first of three transfers runs the same program prefix as a single transfer.
    assert_eq!(first, once.counters["transfer_cycles"]);
    assert!(best <= first, "fastest {best} vs first {first}");
    assert_eq!(thrice.counters["bytes_per_cycle"], 4096.0 / best);
    assert!(!once.counters.contains_key("first_transfer_cycles"));
    let bad = run_app(&s, "bulk-bw", "mp-poll", &["repeat=0".to_string()], 1);
    assert!(matches!(bad, Err(AppError::Input(ref m)) if m.contains("repeat")), "{bad:?}");
}

#[test]
fn polling_receive_avoids_interrupt_cost() {
    let s = sim(&[], None);
    let int = run(&s, "am-latency", "mp-int", &["hops=3"]).counters["one_way_cycles"];
    let poll = run(&s, "am-latency", "mp-poll", &["hops=3"]).counters["one_way_cycles"];
    let cfg = s.config();
    let saved = cfg.ps_to_cycles(cfg.msg.interrupt_entry_ps) - cfg.ps_to_cycles(cfg.msg.poll_dispatch_ps);
    assert!((int - poll - saved).abs() < 1.0, "interrupt {int} vs poll {poll}: expected a difference of {saved}");
    assert!(run(&s, "am-latency", "mp-poll", &["hops=3"]).stats.mean(Category::MessageOverhead) > 0.0);
}

#[test]
fn alewife_validates_within_ten_percent() {
    let rows = commlab_apps::validate::validate("alewife", |_: &[String]| Ok(sim(&[], None))).unwrap();
    assert_eq!(rows.len(), 20, "every shared-memory, lock and message row of the DESIGN.md table");
    for r in &rows {
        assert!(
            r.ok(),
            "{}: measured {:.2} vs published {:.2} ({:+.1}%)",
            r.name,
            r.measured,
            r.published,
            100.0 * r.error()
        );
    }
}

#[test]
fn validation_fails_when_the_machine_is_miscalibrated() {
    // Doubling the directory time must push the remote-miss rows out of tolerance.
    let rows =
        commlab_apps::validate::validate("alewife", |_: &[String]| Ok(sim(&["memory.dir_cycles=22"], None))).unwrap();
    let remote = rows.iter().find(|r| r.name == "load miss, remote home, clean").unwrap();
    assert!(!remote.ok(), "{remote:?}");
}

#[test]
fn miss_classes_are_ordered_as_the_protocol_implies() {
    let s = sim(&[], None);
    let m = |kind: &str| run(&s, "miss-latency", "sm", &[format!("kind={kind}")]).counters["miss_cycles"];
    let (local, remote, two, three, soft) =
        (m("load-local"), m("load-remote"), m("load-2party"), m("load-3party"), m("load-software"));
    assert!(local < remote && remote < two && two < three && three < soft, "{local} {remote} {two} {three} {soft}");
    assert!(m("store-local-1inv") > m("store-local"));
    assert!(m("store-6inv") > m("store-5inv") + 300.0, "the sixth sharer traps to software");
}

#[test]
fn barriers_grow_logarithmically_with_processors() {
    for v in ["sm", "mp"] {
        let at = |p: usize| run(&sim(&[], Some(p)), "barrier", v, &["barriers=4"]).counters["cycles_per_barrier"];
        let (small, big) = (at(16), at(256));
        // 16x the processors: two more tree levels (arity 4), far less than 16x the time.
        assert!(big > small && big < 4.0 * small, "{v}: {small} cycles at 16, {big} at 256");
    }
}

fn preset(name: &str, set: &[String]) -> Simulator {
    Simulator::new(MachineConfig::preset(name, set, None).expect("preset"))
}

#[test]
fn alewife_sim_validates_its_stated_message_interface() {
    let rows =
        commlab_apps::validate::validate("alewife-sim", |extra: &[String]| Ok(preset("alewife-sim", extra))).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(rows.len(), 3, "handler entry, launch, descriptor limit: {names:?}");
    for r in &rows {
        assert!(r.ok(), "{}: measured {:.2} vs published {:.2} ({})", r.name, r.measured, r.published, r.how);
    }
}

#[test]
fn alewife_sim_validation_fails_when_miscalibrated() {
    // Each stated figure moved on its own must fail its row (and only its row).
    for (set, row) in [
        ("messaging.interrupt_entry_cycles=20", "message arrival to handler entry (interrupt)"),
        ("messaging.send_overhead_cycles=4", "message launch (after the descriptor is written)"),
        ("messaging.max_arg_words=12", "message descriptor limit (header + argument words)"),
    ] {
        let rows = commlab_apps::validate::validate("alewife-sim", |extra: &[String]| {
            let all: Vec<String> = std::iter::once(set.to_string()).chain(extra.iter().cloned()).collect();
            Ok(preset("alewife-sim", &all))
        })
        .unwrap();
        for r in &rows {
            assert_eq!(
                r.ok(),
                r.name != row,
                "--set {set}: {} measured {:.2} vs {:.2}",
                r.name,
                r.measured,
                r.published
            );
        }
    }
}

/// `barrier` counters at 64 processors of alewife resized (set: overrides).
fn barrier_at_64(set: &[&str], variant: &str, arity: &str) -> AppResult {
    run(&sim(set, Some(64)), "barrier", variant, &["barriers=2", &format!("arity={arity}")])
}

#[test]
fn barrier_study_shapes_have_six_and_two_levels_at_64_processors() {
    // A machine whose own fan-in is 4 for both kinds, so the study's shapes are not its own.
    let four = ["memory.barrier_arity=4", "messaging.barrier_arity=4"];
    for (variant, arity, levels) in [("sm", 2.0, 6.0), ("mp", 8.0, 2.0)] {
        let study = barrier_at_64(&four, variant, "study");
        assert_eq!((study.counters["tree_arity"], study.counters["tree_levels"]), (arity, levels), "{variant}");
        let machine = barrier_at_64(&four, variant, "machine");
        assert_eq!((machine.counters["tree_arity"], machine.counters["tree_levels"]), (4.0, 3.0), "{variant}");
        // The program's fan-in is honoured: the study's tree takes another time than the
        // machine's, and naming the machine's fan-in is the machine's tree exactly.
        let named = barrier_at_64(&four, variant, "4");
        assert_ne!(study.counters["cycles_per_barrier"], machine.counters["cycles_per_barrier"], "{variant}");
        assert_eq!(named.counters["cycles_per_barrier"], machine.counters["cycles_per_barrier"], "{variant}");
        assert_eq!(named.stats.procs, machine.stats.procs, "{variant}");
    }
}

#[test]
fn the_message_barrier_sends_one_message_per_arrival_and_per_wakeup() {
    // §4.2's ideal, which the message tree meets: 63 arrivals and 63 wakeups a barrier at 64
    // processors, whatever the fan-in; the timed region holds its own barriers' messages only.
    for arity in ["study", "machine", "3"] {
        for set in [&[][..], &["messaging.barrier_wait_interrupts=true", "messaging.barrier_handler_cycles=7"][..]] {
            let r = barrier_at_64(set, "mp", arity);
            assert_eq!(r.counters["messages"], (2 * 2 * 63) as f64, "arity={arity} {set:?}");
        }
    }
}

#[test]
fn barrier_refuses_a_bad_arity() {
    let s = sim(&[], Some(8));
    for bad in ["1", "0", "-2", "two", "2.5", ""] {
        let params = vec!["barriers=2".to_string(), format!("arity={bad}")];
        match commlab_apps::run_app(&s, "barrier", "sm", &params, 1) {
            Err(commlab_apps::AppError::Input(m)) => assert!(m.contains("arity") && m.contains(">= 2"), "{m}"),
            other => panic!("arity={bad}: expected an input error, got {:?}", other.map(|r| r.counters)),
        }
    }
}

#[test]
fn barrier_separates_phases_with_every_arity() {
    // 12 processors: binary, ternary, uneven, one short of flat, flat and beyond flat trees.
    let s = sim(&[], Some(12));
    for v in ["sm", "mp"] {
        for arity in ["2", "3", "5", "10", "11", "1000"] {
            let r = run(&s, "barrier", v, &["barriers=2", &format!("arity={arity}")]);
            assert_categories_sum(&r.stats, &format!("barrier {v} arity={arity}"));
            // The depth of processor 11: 11 -> 5 -> 2 -> 0, 11 -> 3 -> 0, 11 -> 2 -> 0, 11 -> 1 -> 0.
            let levels = match arity {
                "2" => 3.0,
                "3" | "5" | "10" => 2.0,
                _ => 1.0,
            };
            assert_eq!(r.counters["tree_levels"], levels, "{v} arity={arity}");
        }
    }
}

#[test]
fn blizzard_presets_validate_within_ten_percent() {
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let rows = commlab_apps::validate::validate(m, |extra: &[String]| Ok(preset(m, extra))).unwrap();
        assert_eq!(rows.len(), 20, "{m}: 3 miss kinds x 4 block sizes, and Table 2's 8 round trips");
        for r in &rows {
            assert!(
                r.ok(),
                "{m} {}: measured {:.1} us vs published {:.1} ({:+.1}%)",
                r.name,
                r.measured,
                r.published,
                100.0 * r.error()
            );
        }
    }
}

#[test]
fn software_dsm_checks_every_shared_reference() {
    // Blizzard-S pays its instrumentation's check on every load even on hits (the sentinel
    // level: 3 cycles, the 14-cycle original where the condition codes are live, assumed 2.5%:
    // 3.275); Blizzard-T pays nothing.
    let hits = |m: &str| {
        let r = run(&preset(m, &[]), "mem-refs", "sm", &["pattern=hits", "refs=1000", "words=64"]);
        r.stats.mean(Category::Compute)
    };
    let (s, t) = (hits("blizzard-s"), hits("blizzard-t"));
    assert!((s - t - 3.275 * 1000.0).abs() < 1.0, "S {s} vs T {t}: 1000 loads x 3.275 check cycles");
}

#[test]
fn software_protocol_handlers_steal_the_home_processor() {
    // With handlers on the compute processor, the home spends message overhead serving misses;
    // with a protocol processor it does not.
    let overhead = |handlers: &str| {
        // (One-processor nodes: an SMP node, the preset's, runs every handler on its second.)
        let set = ["node.procs_per_node=1".to_string(), format!("dsm.handlers={handlers}")];
        let r = run(&preset("blizzard-s", &set), "miss-latency", "sm", &["kind=load-remote", "hops=0", "rounds=4"]);
        let home = r.counters["home"] as usize;
        r.stats.procs[home].get(Category::MessageOverhead)
    };
    let (compute, pp) = (overhead("compute"), overhead("protocol-processor"));
    assert!(
        compute > pp + 4.0 * 800.0,
        "home overhead {compute} on the compute processor vs {pp} with a protocol processor"
    );
}

#[test]
fn software_dsm_charges_the_home_for_its_own_protocol_steps() {
    // Blizzard's home pages are the data (issue 34): a line the home wrote is in its memory,
    // not a dirty cached copy, so serving a read of it is serving a clean line. The home's own
    // fault (its write to a line a neighbour reads: invalidate the copy, then write) runs the
    // protocol on the home, and all of it must be charged to the home processor.
    let home_overhead = |kind: &str| {
        // (On one-processor nodes, where the home's handlers take its own processor's time.)
        let r = run(
            &preset("blizzard-s", &["node.procs_per_node=1".to_string()]),
            "miss-latency",
            "sm",
            &[format!("kind={kind}"), "hops=0".into(), "rounds=4".into()],
        );
        r.stats.procs[r.counters["home"] as usize].get(Category::MessageOverhead)
    };
    let (clean, dirty) = (home_overhead("load-remote"), home_overhead("load-2party"));
    assert_eq!(dirty, clean, "home overhead: a line the home wrote vs a clean one");
    let (alone, shared) = (home_overhead("store-local"), home_overhead("store-local-1inv"));
    assert!(
        shared > alone + 4.0 * 800.0,
        "home overhead: {shared} cycles writing a line a neighbour reads vs {alone} for its own line alone"
    );
}

#[test]
fn software_dsm_invalidates_a_block_once_where_it_was_accessible() {
    // A write to a block dirty at a third node: the owner's copy becomes invalid (one ECC set on
    // blizzard-e), and the home, whose own copy was already invalid, sets nothing (issue 34: it
    // was charged a second 121 us). Each added cycle of `dsm.tag_invalidate_cycles` adds one
    // cycle to the miss.
    let miss = |x: u64| {
        // (One-processor nodes: an SMP node's polls would shift the phases by other amounts.)
        let set = ["node.procs_per_node=1".to_string(), format!("dsm.tag_invalidate_cycles={x}")];
        run(&preset("blizzard-e", &set), "miss-latency", "sm", &["kind=store-3party"]).counters["miss_cycles"]
    };
    let extra = miss(6788) - miss(5788);
    assert!((extra - 1000.0).abs() < 1e-6, "1000 more cycles per invalidation made the miss {extra} cycles longer");
}

#[test]
fn blizzard_e_changes_page_protection_where_table_3s_benchmarks_did() {
    // The study's miss benchmarks access every block of a region in turn (§8.1), here the 64
    // 128-byte blocks of two 4 KB pages. Reads make each page read-only once at each node; a
    // write takes the home's copy (bad ECC, no protection change); a read then a write of each
    // block is Table 3's "worst case for Blizzard-E, as the two misses require two page
    // protection [changes] on each node", the home's second in the same call as its bad ECC.
    let s = preset("blizzard-e", &[]);
    let blocks = 2 * 4096 / s.line_bytes();
    let counters = |kind: &str| {
        let layout = [
            format!("kind={kind}"),
            "hops=0".into(),
            format!("stride={}", s.line_bytes()),
            format!("rounds={blocks}"),
            "align=4096".into(),
        ];
        run(&s, "miss-latency", "sm", &layout).counters
    };
    let n = blocks as f64;
    let read = counters("load-remote");
    assert_eq!((read["page_protection_changes"], read["ecc_invalidations"]), (2.0 * 2.0, 0.0), "reads: {read:?}");
    let write = counters("store-remote");
    assert_eq!((write["page_protection_changes"], write["ecc_invalidations"]), (0.0, n), "writes: {write:?}");
    let both = counters("load-store");
    assert_eq!(both["page_protection_changes"], 2.0 * 2.0 * n, "read then write: {both:?}");
    assert_eq!(
        (both["page_protection_changes_with_ecc"], both["ecc_invalidations"]),
        (n, n),
        "read then write: {both:?}"
    );
    assert_eq!(both["emulated_writes"], 0.0);
}

#[test]
fn software_dsm_runs_are_deterministic() {
    // Software handlers steal processor time and replay deferred requests: same inputs, same run.
    for app in ["barrier", "lock-latency", "mem-refs"] {
        let s = preset("blizzard-e", &[]);
        let params = small_params(app, &s);
        let (a, b) = (run(&s, app, "sm", &params), run(&s, app, "sm", &params));
        assert_eq!(a.stats.cycles, b.stats.cycles, "{app}");
        assert_eq!(a.stats.procs, b.stats.procs, "{app}");
        assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes, "{app}");
        assert_eq!(a.counters, b.counters, "{app}");
    }
}

#[test]
fn remote_miss_delay_adds_to_remote_misses_only() {
    let at = |delay: u64, kind: &str| {
        let s = sim(&[&format!("memory.remote_miss_delay_cycles={delay}")], None);
        run(&s, "miss-latency", "sm", &[&format!("kind={kind}"), "rounds=2"]).counters["miss_cycles"]
    };
    let remote = at(50, "load-remote") - at(0, "load-remote");
    assert!((remote - 50.0).abs() < 1e-6, "a remote miss grows by {remote} cycles with a 50-cycle delay");
    assert_eq!(at(50, "load-local"), at(0, "load-local"), "local misses are not delayed");
}

#[test]
fn overhead_scale_multiplies_send_and_receive_overheads() {
    let one_way = |scale: &str| {
        let s = sim(&[&format!("messaging.overhead_scale={scale}")], None);
        run(&s, "am-latency", "mp-int", &["hops=1", "rounds=3"]).counters["one_way_cycles"]
    };
    let (base, double) = (one_way("1"), one_way("2"));
    // Send (31) and interrupt entry (65) double; the network part does not.
    assert!((double - base - 96.0).abs() < 1e-6, "one-way {base} -> {double} cycles at twice the overheads");
}
