//! The network overflow trap (`messaging.overflow_*`, see `src/engine/overflow.rs` and
//! `src/net/overflow.rs`), on alewife, whose preset switches it on: many senders flooding one
//! receiver that is slow to take its messages make it trap, the trap copies the waiting messages
//! into memory and every message is still handled exactly once; a ping-pong never traps; the
//! trap's time is exactly its entry, copies and exit, charged as message overhead; runs repeat
//! exactly; and with the timeout at 0 a run is the run of a machine without the keys.

use commlab_api::{
    Backend, Category, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode, RunOutput,
};
use commlab_sim::machine::{preset_text, MachineConfig};
use commlab_sim::Simulator;
use std::sync::Arc;

const PROCS: usize = 16;

fn alewife(set: &[&str]) -> Simulator {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Simulator::new(MachineConfig::preset("alewife", &set, Some(PROCS)).expect("alewife"))
}

/// alewife without any `messaging.overflow_*` line: a machine that has never heard of the trap.
fn alewife_without_the_keys() -> Simulator {
    let text: String = preset_text("alewife")
        .unwrap()
        .lines()
        .filter(|l| !l.contains("overflow_"))
        .map(|l| format!("{l}\n"))
        .collect();
    Simulator::new(MachineConfig::load(&text, "alewife-no-overflow", &[], Some(PROCS)).expect("machine"))
}

#[derive(Default)]
struct St {
    /// Receiver: handler runs per sender, and a bit per (sender, sequence number) seen.
    handled: Vec<u64>,
    seen: Vec<Vec<bool>>,
    duplicates: u64,
    bad_payloads: u64,
}

/// Every processor but 0 sends `messages` messages `[src, seq]` (with `bulk`, also a DMA
/// payload of six words `seq`) to processor 0, whose handler works `handler_cycles`. Processor 0
/// first computes `receiver_compute` cycles (polling mode: without polling), then waits for all.
struct Hotspot {
    messages: u64,
    handler_cycles: u64,
    receiver_compute: u64,
    mode: ReceiveMode,
    bulk: bool,
}

const TAKE: HandlerId = HandlerId(0);
const BULK_WORDS: usize = 6;

fn take(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    let (src, seq) = (m.args[0] as usize, m.args[1] as usize);
    s.handled[src] += 1;
    if std::mem::replace(&mut s.seen[src][seq], true) {
        s.duplicates += 1;
    }
    if !m.payload.is_empty() && (m.payload.len() != BULK_WORDS || m.payload.iter().any(|&w| w != seq as u64)) {
        s.bad_payloads += 1;
    }
    let work = m.args[2];
    ctx.compute(work);
}

impl Program for Hotspot {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![take]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: ProcId, n: usize) -> St {
        St { handled: vec![0; n], seen: vec![vec![false; self.messages as usize]; n], duplicates: 0, bad_payloads: 0 }
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        let (n, m) = (node.nprocs(), self.messages);
        if node.id() == 0 {
            node.compute(self.receiver_compute);
            node.wait_until("every message", |s| s.handled.iter().sum::<u64>() == (n as u64 - 1) * m);
        } else {
            let me = node.id() as u64;
            for seq in 0..m {
                let args = [me, seq, self.handler_cycles];
                if self.bulk {
                    let data = [seq; BULK_WORDS];
                    node.send_bulk(0, TAKE, &args, &[&data]);
                } else {
                    node.send_am(0, TAKE, &args);
                }
            }
        }
    }
}

fn counter(out: &RunOutput<St>, name: &str) -> f64 {
    *out.stats.counters.get(name).unwrap_or_else(|| panic!("no counter {name}: {:?}", out.stats.counters))
}

/// Every message sent was handled exactly once, with its own payload; the statistics agree;
/// every processor's categories sum to its busy time.
fn every_message_once(out: &RunOutput<St>, messages: u64, what: &str) {
    let r = &out.states[0];
    for src in 1..PROCS {
        assert_eq!(r.handled[src], messages, "{what}: messages from P{src} handled");
        assert!(r.seen[src].iter().all(|&b| b), "{what}: a message from P{src} was never handled");
    }
    assert_eq!(r.duplicates, 0, "{what}: messages handled twice");
    assert_eq!(r.bad_payloads, 0, "{what}: payloads changed on the way");
    let sent: u64 = out.stats.nodes.iter().map(|n| n.messages_sent).sum();
    let received: u64 = out.stats.nodes.iter().map(|n| n.messages_received).sum();
    assert_eq!(sent, received, "{what}: messages sent and handled");
    for (i, p) in out.stats.procs.iter().enumerate() {
        assert!((p.sum() - p.busy).abs() <= 1e-6 * p.busy.max(1.0), "{what}: P{i}'s categories {p:?} vs busy");
    }
}

/// The trap's time is its entry and exit per trap and its copies, and it is message overhead
/// on the receiver (the only processor that traps).
fn trap_time_is_exact(s: &Simulator, out: &RunOutput<St>, words64: u64, what: &str) {
    let o = s.config().msg.overflow.expect("alewife has the trap");
    let (traps, drained) = (counter(out, "overflow_traps"), counter(out, "overflow_messages_drained"));
    let cycles = |ps: u64| s.config().ps_to_cycles(ps);
    let want = traps * cycles(o.entry_ps + o.exit_ps) + drained * cycles(o.drain_ps(words64 as usize));
    let got = counter(out, "overflow_trap_cycles");
    assert!((got - want).abs() < 1e-6 * want.max(1.0), "{what}: trap cycles {got}, entry/copies/exit make {want}");
    let overhead = out.stats.procs[0].get(Category::MessageOverhead);
    assert!(overhead >= got, "{what}: the receiver's message overhead {overhead} holds the trap's {got} cycles");
}

#[test]
fn a_flooded_receiver_traps_and_still_handles_every_message_once() {
    let s = alewife(&[]);
    let cases = [
        (
            "interrupt, slow handler",
            Hotspot {
                messages: 40,
                handler_cycles: 300,
                receiver_compute: 0,
                mode: ReceiveMode::Interrupt,
                bulk: false,
            },
        ),
        (
            "polling, busy receiver",
            Hotspot {
                messages: 40,
                handler_cycles: 50,
                receiver_compute: 40_000,
                mode: ReceiveMode::Polling,
                bulk: false,
            },
        ),
        (
            "interrupt, bulk",
            Hotspot {
                messages: 30,
                handler_cycles: 300,
                receiver_compute: 0,
                mode: ReceiveMode::Interrupt,
                bulk: true,
            },
        ),
    ];
    for (what, prog) in cases {
        let words64 = 3 + if prog.bulk { BULK_WORDS as u64 } else { 0 };
        let messages = prog.messages;
        let prog = Arc::new(prog);
        let out = s.run(Arc::clone(&prog)).expect("run");
        eprintln!(
            "{what}: {} cycles, {} traps, {} messages copied, {} trap cycles",
            out.stats.cycles,
            counter(&out, "overflow_traps"),
            counter(&out, "overflow_messages_drained"),
            counter(&out, "overflow_trap_cycles")
        );
        assert!(counter(&out, "overflow_traps") >= 1.0, "{what}: no overflow trap: {:?}", out.stats.counters);
        assert!(counter(&out, "overflow_messages_drained") >= 1.0, "{what}: the trap copied nothing");
        every_message_once(&out, messages, what);
        trap_time_is_exact(&s, &out, words64, what);
        // The same run again: the same simulation.
        let again = s.run(prog).expect("run");
        assert_eq!(again.stats.cycles, out.stats.cycles, "{what}: cycles");
        assert_eq!(again.stats.events, out.stats.events, "{what}: events");
        assert_eq!(again.stats.counters, out.stats.counters, "{what}: counters");
        assert_eq!(again.stats.procs, out.stats.procs, "{what}: per-processor times");
    }
}

/// Two processors ping-pong: neither NI ever fills.
struct PingPong {
    rounds: u64,
    mode: ReceiveMode,
}

const BALL: HandlerId = HandlerId(0);

fn ball(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.handled[0] += 1;
    if ctx.id() == 1 {
        ctx.send_am(m.src, BALL, &[m.args[0]]);
    }
}

impl Program for PingPong {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![ball]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St { handled: vec![0], ..St::default() }
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        if node.id() == 0 {
            for r in 0..self.rounds {
                node.send_am(1, BALL, &[r]);
                node.wait_until("the ball back", |s| s.handled[0] > r);
            }
        } else if node.id() == 1 {
            node.wait_until("every round", |s| s.handled[0] == self.rounds);
        }
    }
}

#[test]
fn a_ping_pong_never_traps() {
    let s = alewife(&[]);
    for mode in [ReceiveMode::Interrupt, ReceiveMode::Polling] {
        let out = s.run(Arc::new(PingPong { rounds: 200, mode })).expect("run");
        assert_eq!(out.states[0].handled[0], 200, "{mode:?}: every ball came back");
        assert_eq!(counter(&out, "overflow_traps"), 0.0, "{mode:?}");
        assert_eq!(counter(&out, "overflow_messages_drained"), 0.0, "{mode:?}");
        assert_eq!(counter(&out, "overflow_trap_cycles"), 0.0, "{mode:?}");
    }
}

#[test]
fn a_timeout_of_zero_is_a_machine_without_the_trap() {
    let prog = Arc::new(Hotspot {
        messages: 40,
        handler_cycles: 300,
        receiver_compute: 0,
        mode: ReceiveMode::Interrupt,
        bulk: false,
    });
    let off = alewife(&["messaging.overflow_timeout_cycles=0"]);
    assert!(off.config().msg.overflow.is_none());
    let a = off.run(Arc::clone(&prog)).expect("run");
    let b = alewife_without_the_keys().run(Arc::clone(&prog)).expect("run");
    assert!(!a.stats.counters.contains_key("overflow_traps"), "no trap counters without the trap");
    assert_eq!(a.stats.cycles, b.stats.cycles);
    assert_eq!(a.stats.events, b.stats.events);
    assert_eq!(a.stats.counters, b.stats.counters);
    assert_eq!(a.stats.procs, b.stats.procs);
    assert_eq!(a.stats.volume_bytes, b.stats.volume_bytes);
    every_message_once(&a, 40, "no trap");
    // The same program with the trap on: it traps, and the network is emptied sooner.
    let on = alewife(&[]).run(prog).expect("run");
    assert!(counter(&on, "overflow_traps") >= 1.0);
    assert_ne!(on.stats.cycles, a.stats.cycles, "the trap changed nothing");
}

#[test]
fn bad_trap_and_arbitration_keys_are_named() {
    // The trap on without one of its costs.
    let text: String = preset_text("alewife")
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("overflow_dispatch_cycles"))
        .map(|l| format!("{l}\n"))
        .collect();
    let e = MachineConfig::load(&text, "alewife", &[], None).expect_err("a missing cost is refused").to_string();
    assert!(e.contains("messaging.overflow_dispatch_cycles") && e.contains("overflow_timeout_cycles"), "{e}");
    // ... but with the trap off its costs may be absent.
    assert!(MachineConfig::load(&text, "alewife", &["messaging.overflow_timeout_cycles=0".into()], None).is_ok());
    // On a machine whose preset lacks the keys, --set turns the trap on and names what it lacks.
    let e = MachineConfig::preset("cm5", &["messaging.overflow_timeout_cycles=500".into()], None)
        .expect_err("cm5 has no trap costs")
        .to_string();
    assert!(e.contains("messaging.overflow_trap_entry_cycles"), "{e}");
    let e = MachineConfig::preset("alewife", &["cross_traffic.arbitration=lottery".into()], None)
        .expect_err("an unknown arbitration is refused")
        .to_string();
    assert!(e.contains("cross_traffic.arbitration") && e.contains("fifo") && e.contains("priority"), "{e}");
}
