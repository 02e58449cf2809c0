//! Every application in every variant runs natively on 2 threads (4 where it needs them) and passes its own answer
//! check; messages sent = received; every processor's time categories sum to its busy time.

use commlab_api::{Backend, Category, Handler, HandlerId, Node, Placement, Program, RunStats};
use commlab_apps::{run_app, unavailable, AppError, APPS};
use commlab_native::{NativeBackend, NativeError};
use std::sync::Arc;

/// Small parameters for every application (the simulator's `small_params`, with `hops` left at
/// its default: natively every processor is 0 hops from another, and a defaulted `hops` then
/// takes the nearest processor).
fn small_params(app: &str) -> Vec<String> {
    let v = match app {
        "am-latency" => vec!["rounds=5"],
        "am-throughput" => vec!["senders=1", "messages=20", "handler_cycles=50"],
        "bulk-bw" => vec!["bytes=2048", "repeat=2"],
        "alltoall-stress" => vec!["messages=20"],
        "bisection-bw" => vec!["messages=10"],
        "miss-latency" => vec!["kind=store-3party", "rounds=2"],
        "lock-latency" => vec!["kind=shared", "rounds=2"],
        "barrier" => vec!["barriers=3"],
        "mem-refs" => vec!["pattern=misses", "refs=200", "words=256"],
        "remote-bw" => vec!["bytes=256", "stride=3", "hops=0"],
        "copy-transfer" => vec!["bytes=4096", "stride=3", "passes=1"],
        "em3d" => vec!["nodes=320", "iterations=2"],
        "iccg" => vec!["fe_elements=8"],
        "moldyn" => vec!["molecules=256", "iterations=3", "rebuild=2", "list_radius=2.6"],
        "unstruc" => vec!["nodes=300", "iterations=2"],
        "rti" => vec!["rounds=2"],
        "memcpy" => vec!["bytes=256"],
        "accum" => vec!["words=128"],
        "jacobi" => vec!["n=16", "iterations=2"],
        "grain" => vec!["n=5", "l=20"],
        "aq" => vec!["tolerance=1e-3"],
        "fft2d" => vec!["n=16"],
        "dsmc" => vec!["particles=256", "cells_x=8", "cells_y=4", "cells_z=2", "iterations=3"],
        "barnes" => vec!["bodies=128", "iterations=2"],
        "appbt" => vec!["nx=32", "ny=2", "nz=2", "iterations=2"],
        other => panic!("no small parameters for {other}"),
    };
    v.into_iter().map(String::from).collect()
}

/// Applications that cannot run natively, and why (checked: they must fail with that input error).
const CANNOT: &[(&str, &str)] = &[("bisection-bw", "needs a network")];

fn assert_balanced(stats: &RunStats, what: &str) {
    for (i, p) in stats.procs.iter().enumerate() {
        let sum = p.sum();
        assert!(
            (sum - p.busy).abs() <= 1e-6 * p.busy.max(1.0),
            "{what}: processor {i} categories sum to {sum} but busy time is {}",
            p.busy
        );
        assert_eq!(p.get(Category::MemoryNiWait), 0.0, "{what}: no NI waits natively");
    }
    let sent: u64 = stats.nodes.iter().map(|n| n.messages_sent).sum();
    let received: u64 = stats.nodes.iter().map(|n| n.messages_received).sum();
    assert_eq!(sent, received, "{what}: messages sent vs received");
    assert_eq!(stats.counters["messages"], sent as f64, "{what}: messages counter");
    assert_cpu_share(stats, what);
}

/// Each thread's CPU time over its own wall time in the timed region: at most about 1 (a
/// process-wide CPU time would count every thread's against each wall time: about procs),
/// reported only when the region is at least 1 ms per processor on average.
fn assert_cpu_share(stats: &RunStats, what: &str) {
    let busy: Vec<f64> = stats.procs.iter().map(|p| p.busy).collect();
    let mean_ms = busy.iter().sum::<f64>() / busy.len() as f64 / commlab_native::host_clock().mhz / 1e3;
    match stats.counters.get("cpu_share") {
        Some(&share) => {
            assert!(mean_ms > 0.99, "{what}: cpu_share {share} reported for a region of {mean_ms} ms");
            assert!(share > 0.0 && share <= 1.5, "{what}: cpu_share {share}, busy cycles {busy:?}");
        }
        None => assert!(mean_ms < 1.01, "{what}: no cpu_share for a region of {mean_ms} ms per processor"),
    }
}

/// Processors to run on: 2, or 4 (on 2 cores, oversubscribed) where the app needs more than
/// 2 (a third party for a 3-party miss, waiters for a lock, a third processor that leaves the
/// copied data clean).
fn procs(app: &str, variant: &str) -> usize {
    match (app, variant) {
        ("miss-latency" | "lock-latency", _) => 4,
        ("memcpy" | "accum", "sm" | "sm-pf") => 4,
        _ => 2,
    }
}

#[test]
fn every_app_and_variant_passes_its_check() {
    let mut failures = Vec::new();
    for app in APPS {
        for v in app.variants {
            let what = format!("{} [{v}]", app.name);
            let b = NativeBackend::with_procs(procs(app.name, v)).unwrap();
            let r = run_app(&b, app.name, v, &small_params(app.name), 7);
            let why = CANNOT.iter().find(|(a, _)| *a == app.name).map(|(_, why)| *why);
            // Tempest user regions (em3d custom) need the simulator's access control.
            let why = why.or_else(|| unavailable(&b, app.name, v).map(|_| "fine-grain access control"));
            if let Some(why) = why {
                match r {
                    Err(AppError::Input(m)) => assert!(m.contains(why), "{what}: {m}"),
                    other => panic!("{what}: expected an input error, got {other:?}"),
                }
                continue;
            }
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            if !r.check.ok {
                failures.push(format!("{what} answer check: {}", r.check.detail));
            }
            assert_eq!(r.stats.procs.len(), procs(app.name, v), "{what}");
            assert!(r.stats.cycles > 0.0, "{what}: no time passed");
            assert_balanced(&r.stats, &what);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn more_processors_than_cores_still_run() {
    let b = NativeBackend::with_procs(5).unwrap();
    for (app, v) in [("em3d", "mp-poll"), ("em3d", "sm"), ("barrier", "mp"), ("alltoall-stress", "mp-int")] {
        let r = run_app(&b, app, v, &small_params(app), 3).unwrap_or_else(|e| panic!("{app} [{v}]: {e}"));
        assert!(r.check.ok, "{app} [{v}]: {}", r.check.detail);
        assert_balanced(&r.stats, app);
    }
}

/// Waits for a message nobody sends.
struct Stuck;
impl Program for Stuck {
    type State = u64;
    fn handlers(&self) -> Vec<Handler<u64>> {
        vec![|s, _, _| *s += 1]
    }
    fn init_state(&self, _: usize, _: usize) -> u64 {
        0
    }
    fn main<N: Node<State = u64>>(&self, node: &mut N) {
        let a = node.alloc_shared(8, Placement::OnNode(0));
        match node.id() {
            0 => node.wait_until("a message nobody sends", |s| *s > 0),
            1 => {
                node.spin_until("a flag nobody sets", a, |v| v == 1);
            }
            _ => node.barrier(),
        }
    }
}

#[test]
fn a_deadlock_is_reported_with_what_each_processor_waits_for() {
    let e = NativeBackend::with_procs(3).unwrap().run(Arc::new(Stuck)).err().expect("deadlock");
    let NativeError::Deadlock(report) = e else { panic!("expected a deadlock, got {e}") };
    assert!(report.contains("P0: waits in wait_until(\"a message nobody sends\")"), "{report}");
    assert!(report.contains("P1: spins in a flag nobody sets"), "{report}");
    assert!(report.contains("P2: waits at message barrier #1"), "{report}");
}

/// A sends to a processor that does not exist.
struct BadSend;
impl Program for BadSend {
    type State = ();
    fn handlers(&self) -> Vec<Handler<()>> {
        vec![|_, _, _| {}]
    }
    fn init_state(&self, _: usize, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        if node.id() == 1 {
            node.send_am(7, HandlerId(0), &[]);
        }
        node.barrier();
    }
}

#[test]
fn program_errors_stop_the_run_with_their_reason() {
    let e = NativeBackend::with_procs(2).unwrap().run(Arc::new(BadSend)).err().expect("error");
    assert!(matches!(&e, NativeError::Program(m) if m.contains("sent to processor 7")), "{e}");
}

/// Stores and loads order as the interface promises (Dekker's test: under sequential
/// consistency both processors cannot read 0), and fetch_add loses no increment.
struct Sc {
    rounds: u64,
}
impl Program for Sc {
    type State = u64;
    fn init_state(&self, _: usize, _: usize) -> u64 {
        0
    }
    fn barrier_kind(&self) -> commlab_api::BarrierKind {
        commlab_api::BarrierKind::SharedMemory
    }
    fn main<N: Node<State = u64>>(&self, node: &mut N) {
        let flags = node.alloc_shared(16 * self.rounds as usize, Placement::Cyclic);
        let seen = node.alloc_shared(2 * self.rounds as usize, Placement::Block);
        let count = node.alloc_shared(1, Placement::OnNode(1));
        let me = node.id();
        for r in 0..self.rounds as usize {
            node.store(flags.word(16 * r + 8 * me), 1);
            let other = node.load(flags.word(16 * r + 8 * (1 - me)));
            node.store(seen.word(2 * r + me), other);
            node.fetch_add(count, 1);
        }
        node.barrier();
    }
}

#[test]
fn memory_is_sequentially_consistent_and_atomic() {
    let rounds = 2000;
    let out = NativeBackend::with_procs(2).unwrap().run(Arc::new(Sc { rounds })).unwrap();
    // Find the regions as the program laid them out: flags, then seen, then count.
    let flags_words = 16 * rounds as usize;
    let seen_base = flags_words;
    let count_base = seen_base + (2 * rounds as usize).div_ceil(8) * 8;
    for r in 0..rounds as usize {
        let (a, b) = (out.memory[seen_base + 2 * r], out.memory[seen_base + 2 * r + 1]);
        assert!(a == 1 || b == 1, "round {r}: both processors read 0 (not sequentially consistent)");
    }
    assert_eq!(out.memory[count_base], 2 * rounds, "fetch_add lost increments");
}

/// Every processor streams messages of every argument count (and some bulk payloads) to every
/// processor, itself included, many blocks' worth per channel, while the others do the same.
struct Stream {
    per_pair: u64,
}

/// Per sender: the next sequence number expected, and the messages and payload words seen.
#[derive(Default)]
struct Seen {
    next: Vec<u64>,
    out_of_order: u64,
    bad_args: u64,
    messages: u64,
    payload_sum: u64,
}

fn on_stream(s: &mut Seen, _: &mut dyn commlab_api::HandlerCtx, m: &commlab_api::Message<'_>) {
    let k = m.args.first().copied().unwrap_or(s.next[m.src]);
    if k != s.next[m.src] {
        s.out_of_order += 1;
    }
    s.next[m.src] = k + 1;
    // Argument j of message k is k * 100 + j (the count is k mod 17, 0..=16).
    if m.args.len() as u64 != k % 17 || m.args.iter().enumerate().any(|(j, &a)| j > 0 && a != k * 100 + j as u64) {
        s.bad_args += 1;
    }
    s.messages += 1;
    s.payload_sum += m.payload.iter().sum::<u64>();
}

impl Program for Stream {
    type State = Seen;
    fn handlers(&self) -> Vec<Handler<Seen>> {
        vec![on_stream]
    }
    fn receive_mode(&self) -> commlab_api::ReceiveMode {
        commlab_api::ReceiveMode::Polling
    }
    fn init_state(&self, _: usize, n: usize) -> Seen {
        Seen { next: vec![0; n], ..Seen::default() }
    }
    fn main<N: Node<State = Seen>>(&self, node: &mut N) {
        node.begin_timing();
        let n = node.nprocs();
        for k in 0..self.per_pair {
            for d in 0..n {
                // A message with no arguments carries no sequence number: the handler takes
                // the one it expects (and the order is checked by the next message).
                let args: Vec<u64> = (0..k % 17).map(|j| if j == 0 { k } else { k * 100 + j }).collect();
                if k % 50 == 7 {
                    let words: Vec<u64> = (0..k).collect();
                    node.send_bulk(d, HandlerId(0), &args, &[&words, &[k]]);
                } else {
                    node.send_am(d, HandlerId(0), &args);
                }
            }
            if k % 64 == 0 {
                node.poll();
            }
        }
        node.wait_until("every message", |s| s.messages == self.per_pair * n as u64);
        node.barrier();
    }
}

#[test]
fn channels_deliver_every_message_in_order_with_its_arguments_and_payload() {
    let per_pair = 1000;
    for procs in [2, 3] {
        let out = NativeBackend::with_procs(procs).unwrap().run(Arc::new(Stream { per_pair })).unwrap();
        // Payloads: for every k = 7 mod 50, the words 0..k and k itself.
        let payload: u64 = (0..per_pair).filter(|k| k % 50 == 7).map(|k| k * (k - 1) / 2 + k).sum();
        for (p, s) in out.states.iter().enumerate() {
            assert_eq!(s.messages, per_pair * procs as u64, "P{p} of {procs}: messages handled");
            assert_eq!((s.out_of_order, s.bad_args), (0, 0), "P{p} of {procs}: order and arguments");
            assert_eq!(s.payload_sum, payload * procs as u64, "P{p} of {procs}: payload words");
        }
        assert_balanced(&out.stats, "stream");
        let sent: u64 = out.stats.nodes.iter().map(|n| n.messages_sent).sum();
        // The stream, and the message barrier's own messages.
        assert!(sent >= per_pair * (procs * procs) as u64, "{procs} processors: {sent} messages sent");
    }
}

/// Spins on the host clock for `ms` milliseconds in the timed region.
struct Spin {
    ms: u64,
}
impl Program for Spin {
    type State = ();
    fn init_state(&self, _: usize, _: usize) {}
    fn main<N: Node<State = ()>>(&self, node: &mut N) {
        node.barrier();
        node.begin_timing();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(self.ms);
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

/// Regression: `cpu_share` was reported for regions of a few microseconds, where the thread CPU
/// clock of a virtual machine can run tens of microseconds ahead (shares of 1.5 to 4.3 failed
/// the bound above in 3 of 12 runs). A region of 5 ms gives it; one of a few microseconds does
/// not.
#[test]
fn cpu_share_is_reported_for_a_long_region_and_not_for_a_short_one() {
    let b = NativeBackend::with_procs(2).unwrap();
    let long = b.run(Arc::new(Spin { ms: 5 })).unwrap().stats;
    let share = long.counters.get("cpu_share").copied();
    assert!(share.is_some_and(|s| s > 0.0 && s <= 1.5), "5 ms spin: cpu_share {share:?}");
    assert_cpu_share(&long, "5 ms spin");
    let short = b.run(Arc::new(Spin { ms: 0 })).unwrap().stats;
    assert_eq!(short.counters.get("cpu_share"), None, "an empty region");
    assert_cpu_share(&short, "empty region");
}
