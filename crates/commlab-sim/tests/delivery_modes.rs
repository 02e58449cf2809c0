//! Receiving without interrupts. SMP nodes (`node.procs_per_node = 2`): the second processor
//! of a node runs its dispatch loop, so message handlers never take the compute processor's
//! time, in arrival order (their Tempest side, the tag lock and faults, is tested in
//! `tempest.rs`). Back-edge polling (`messaging.backedge_interval_cycles`):
//! a computing processor takes a message at its next loop back-edge and pays a poll at every
//! back-edge that finds nothing. The keys are checked by name. `Node::handler_cycles` counts
//! the handlers that take the compute processor's time.

use commlab_api::{Backend, Category, Handler, HandlerCtx, HandlerId, Message, Node, Placement, ProcId, Program};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use std::sync::Arc;

const LOCK: u64 = 20;

/// SMP nodes whose dispatch loop takes a message as soon as it is free (no polling
/// technique's costs: those are `poll_mechanism.rs`'s), with a tag lock of `lock` cycles. The
/// first two overrides suit a machine without access tags.
fn smp(lock: u64) -> Vec<String> {
    vec![
        "node.procs_per_node=2".to_string(),
        "messaging.poll_mechanism=none".to_string(),
        format!("node.tag_lock_cycles={lock}"),
    ]
}

/// One-processor nodes, interrupt-driven (the Blizzard presets' nodes are SMP).
fn one() -> Vec<String> {
    vec!["node.procs_per_node=1".to_string()]
}

fn sim(machine: &str, set: &[String]) -> Simulator {
    Simulator::new(MachineConfig::preset(machine, set, Some(2)).unwrap())
}

#[derive(Default)]
struct St {
    received: u64,
}

fn count(s: &mut St, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.received += 1;
}

/// Processor 1 sends ten messages to processor 0, which computes meanwhile and then waits for
/// them (interrupt delivery on a one-processor node).
struct Interrupted;

const WORK: u64 = 1_000_000;
const MESSAGES: u64 = 10;

impl Program for Interrupted {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![count]
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        if node.id() == 1 {
            for i in 0..MESSAGES {
                node.send_am(0, HandlerId(0), &[i]);
            }
        } else {
            node.compute(WORK);
            node.wait_until("all ten", |s| s.received == MESSAGES);
        }
    }
}

#[test]
fn handlers_run_on_the_protocol_processor_and_never_stretch_the_compute_processor() {
    for m in ["blizzard-s", "cm5"] {
        let one = sim(m, &one());
        // (A machine without access tags has no tag lock.)
        let set = smp(LOCK);
        let two = sim(m, if m == "cm5" { &set[..2] } else { &set });
        let (a, b) = (one.run(Arc::new(Interrupted)).unwrap(), two.run(Arc::new(Interrupted)).unwrap());
        assert_eq!((a.states[0].received, b.states[0].received), (MESSAGES, MESSAGES), "{m}");
        let cfg = two.config();
        let (p0a, p0b) = (&a.stats.procs[0], &b.stats.procs[0]);
        // One processor per node: each handler interrupts the computation.
        let interrupt =
            cfg.ps_to_cycles(cfg.msg.interrupt_entry_ps + cfg.msg.interrupt_exit_ps + cfg.msg.receive_cost_ps(1));
        assert!((p0a.get(Category::MessageOverhead) - MESSAGES as f64 * interrupt).abs() < 1e-3, "{m}: {p0a:?}");
        assert!((p0a.busy - (WORK as f64 + MESSAGES as f64 * interrupt)).abs() < 1e-3, "{m}: {p0a:?}");
        // Two: the computation is all the compute processor does, and it is not delayed.
        assert_eq!(p0b.get(Category::MessageOverhead), 0.0, "{m}: {p0b:?}");
        // (Picosecond rounding of a 66 MHz cycle leaves a few millionths of a cycle.)
        assert!((p0b.get(Category::Compute) - WORK as f64).abs() < 1e-3, "{m}");
        assert!((p0b.busy - WORK as f64).abs() < 1e-3, "{m}: {p0b:?}");
        // The protocol processor's handler time: polled dispatch and reading the argument
        // (regression: not reported on machines without software DSM).
        let polled = cfg.ps_to_cycles(cfg.msg.poll_dispatch_ps + cfg.msg.receive_cost_ps(1));
        let c = &b.stats.counters;
        assert!((c["handler_cycles_protocol"] - MESSAGES as f64 * polled).abs() < 1e-3, "{m}: {c:?}");
        assert_eq!(c["handler_cycles_compute"], 0.0, "{m}: {c:?}");
        if m == "blizzard-s" {
            assert!((a.stats.counters["handler_cycles_compute"] - MESSAGES as f64 * interrupt).abs() < 1e-3);
        }
    }
}

/// As [`Interrupted`], and processor 0 reads `Node::handler_cycles` around its computation
/// and at the end: its own time (the stretch less the handlers that started in it) and its
/// handlers' time.
struct Measured;

#[derive(Default)]
struct Times {
    received: u64,
    own: f64,
    handlers: f64,
}

fn count_times(s: &mut Times, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.received += 1;
}

impl Program for Measured {
    type State = Times;
    fn handlers(&self) -> Vec<Handler<Times>> {
        vec![count_times]
    }
    fn init_state(&self, _: ProcId, _: usize) -> Times {
        Times::default()
    }
    fn main<N: Node<State = Times>>(&self, node: &mut N) {
        node.begin_timing();
        if node.id() == 1 {
            for i in 0..MESSAGES {
                node.send_am(0, HandlerId(0), &[i]);
            }
        } else {
            let (t0, h0) = (node.now_cycles(), node.handler_cycles());
            node.compute(WORK);
            let own = (node.now_cycles() - t0) - (node.handler_cycles() - h0);
            node.wait_until("all ten", |s| s.received == MESSAGES);
            let handlers = node.handler_cycles() - h0;
            node.state(|s| (s.own, s.handlers) = (own, handlers));
        }
    }
}

#[test]
fn handler_cycles_are_the_handlers_that_took_the_compute_processors_time() {
    for m in ["blizzard-s", "cm5"] {
        let (one, two) = (sim(m, &one()), sim(m, &smp(LOCK)[..if m == "cm5" { 2 } else { 3 }]));
        let (a, b) = (one.run(Arc::new(Measured)).unwrap(), two.run(Arc::new(Measured)).unwrap());
        let cfg = one.config();
        let interrupt =
            cfg.ps_to_cycles(cfg.msg.interrupt_entry_ps + cfg.msg.interrupt_exit_ps + cfg.msg.receive_cost_ps(1));
        // One processor per node: every handler interrupted the computation, which the
        // difference takes out again.
        let (s, t) = (&a.states[0], &b.states[0]);
        assert!((s.handlers - MESSAGES as f64 * interrupt).abs() < 1e-3, "{m}: {}", s.handlers);
        assert!((s.own - WORK as f64).abs() < 1e-3, "{m}: {}", s.own);
        // SMP nodes: the protocol processor ran them; the compute processor lost nothing.
        assert_eq!(t.handlers, 0.0, "{m}");
        assert!((t.own - WORK as f64).abs() < 1e-3, "{m}: {}", t.own);
        assert_eq!(a.states[1].handlers, 0.0, "{m}: the sender received nothing");
    }
}

#[derive(Default)]
struct Busy {
    handled: u64,
    /// Processor 3: when its load of a block homed at processor 0 completed.
    loaded_at: f64,
}

const LONG: u64 = 100_000;

fn long_handler(s: &mut Busy, ctx: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.handled += 1;
    ctx.compute(LONG);
}

/// Processors 1 and 2 each send processor 0 a message whose handler computes for `LONG`
/// cycles (2 sends after 1 has started); processor 3 then loads a word homed at processor 0,
/// whose default-protocol request arrives while the first handler runs and the second waits.
struct Queue;

impl Program for Queue {
    type State = Busy;
    fn handlers(&self) -> Vec<Handler<Busy>> {
        vec![long_handler]
    }
    fn init_state(&self, _: ProcId, _: usize) -> Busy {
        Busy::default()
    }
    fn main<N: Node<State = Busy>>(&self, node: &mut N) {
        let data = node.alloc_shared(16, Placement::OnNode(0));
        node.begin_timing();
        match node.id() {
            0 => node.wait_until("both", |s| s.handled == 2),
            1 => node.send_am(0, HandlerId(0), &[1]),
            2 => {
                node.compute(LONG / 10);
                node.send_am(0, HandlerId(0), &[2]);
            }
            _ => {
                node.compute(LONG / 5);
                node.load(data);
                let t = node.now_cycles();
                node.state(|s| s.loaded_at = t);
            }
        }
    }
}

/// Regression: a default-protocol message took the protocol processor as soon as it was
/// free, ahead of a program's message that had arrived before it and waited; the processor
/// takes them in arrival order.
#[test]
fn an_smp_nodes_protocol_processor_takes_messages_in_arrival_order() {
    let cfg = MachineConfig::preset("blizzard-s", &smp(LOCK), Some(4)).unwrap();
    let out = Simulator::new(cfg).run(Arc::new(Queue)).unwrap();
    assert_eq!(out.states[0].handled, 2);
    let at = out.states[3].loaded_at;
    assert!(at > 2.0 * LONG as f64, "the load was served at {at}, before the second handler had run");
}

#[test]
fn two_runs_on_smp_nodes_are_identical() {
    let cfg = MachineConfig::preset("blizzard-e", &smp(LOCK), Some(4)).unwrap();
    let s = Simulator::new(cfg);
    let (a, b) = (s.run(Arc::new(Queue)).unwrap(), s.run(Arc::new(Queue)).unwrap());
    assert_eq!(a.stats.cycles, b.stats.cycles);
    assert_eq!(a.stats.counters, b.stats.counters);
}

#[test]
fn bad_node_keys_are_refused_by_name() {
    let err = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        MachineConfig::preset("blizzard-s", &set, None).expect_err("refused").to_string()
    };
    let e = err(&["node.procs_per_node=3"]);
    assert!(e.contains("node.procs_per_node") && e.contains("got 3"), "{e}");
    // A software-DSM SMP node needs its lock's cost (the presets give it; a machine file may not).
    let bare = {
        let mut spec = MachineConfig::preset("blizzard-s", &[], None).expect("preset").spec;
        spec.node.as_mut().expect("blizzard-s has SMP nodes").tag_lock_cycles = None;
        MachineConfig::from_spec(spec).expect_err("refused").to_string()
    };
    assert!(bare.contains("node.tag_lock_cycles"), "a software-DSM SMP node needs its lock's cost: {bare}");
    for bad in ["-1", "abc"] {
        let e = err(&[&format!("node.procs_per_node={bad}")]);
        assert!(e.contains("node.procs_per_node") && e.contains("non-negative whole number"), "{e}");
    }
    // Regression: a huge lock cost was accepted and overflowed the tag costs.
    let e = err(&["node.procs_per_node=2", "node.tag_lock_cycles=9000000000000000000"]);
    assert!(e.contains("node.tag_lock_cycles"), "{e}");
    // A hardware-coherent machine has no tags to lock (regression: the key was ignored there).
    let hw = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        MachineConfig::preset("alewife", &set, None)
    };
    assert!(hw(&["node.procs_per_node=2"]).is_ok());
    let e = hw(&["node.procs_per_node=2", "node.tag_lock_cycles=20"]).expect_err("refused").to_string();
    assert!(e.contains("node.tag_lock_cycles") && e.contains("software"), "{e}");
}

// Back-edge polling (`messaging.backedge_interval_cycles`): the other way of receiving
// without interrupts, on a one-processor node.

const INTERVAL: u64 = 1000;
const POLL: u64 = 10;

fn backedges() -> Vec<String> {
    let mut set = one();
    set.extend([format!("messaging.backedge_interval_cycles={INTERVAL}"), format!("messaging.poll_cycles={POLL}")]);
    set
}

#[derive(Default)]
struct Seen {
    /// When the handler of the one message saw the clock (after its entry and argument read).
    at: f64,
}

fn note_time(s: &mut Seen, ctx: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.at = ctx.now_cycles();
}

/// Processor 1 sends one message to processor 0, which computes (`wait`: waits) meanwhile.
struct OneMessage {
    wait: bool,
}

impl Program for OneMessage {
    type State = Seen;
    fn handlers(&self) -> Vec<Handler<Seen>> {
        vec![note_time]
    }
    fn init_state(&self, _: ProcId, _: usize) -> Seen {
        Seen::default()
    }
    fn main<N: Node<State = Seen>>(&self, node: &mut N) {
        node.begin_timing();
        if node.id() == 1 {
            node.send_am(0, HandlerId(0), &[7]);
        } else if self.wait {
            node.wait_until("the message", |s| s.at > 0.0);
        } else {
            node.compute(10 * INTERVAL);
        }
    }
}

#[test]
fn a_computing_processor_takes_a_message_at_its_next_back_edge_and_pays_its_failed_polls() {
    for m in ["cm5", "blizzard-s"] {
        let interrupt = sim(m, &one());
        let polled = sim(m, &backedges());
        let cfg = interrupt.config();
        let read = cfg.ps_to_cycles(cfg.msg.receive_cost_ps(1));
        let a = interrupt.run(Arc::new(OneMessage { wait: false })).unwrap();
        let b = polled.run(Arc::new(OneMessage { wait: false })).unwrap();
        // The arrival, from the interrupted run; the back-edges are every INTERVAL cycles of
        // processor 0's computation, which starts at cycle 0.
        let arrival = a.states[0].at - (cfg.ps_to_cycles(cfg.msg.interrupt_entry_ps) + read);
        let taken = b.states[0].at - (cfg.ps_to_cycles(cfg.msg.poll_dispatch_ps) + read);
        let want = (arrival / INTERVAL as f64).ceil() * INTERVAL as f64;
        assert!(arrival > 0.0 && (taken - want).abs() < 1e-3, "{m}: arrived {arrival}, taken {taken}, want {want}");
        // Its time: the computation, the dispatched handler, and nine failed polls (ten
        // back-edges, one of which found the message).
        let handler = cfg.ps_to_cycles(cfg.msg.poll_dispatch_ps) + read;
        let p0 = &b.stats.procs[0];
        let overhead = handler + 9.0 * POLL as f64;
        assert!((p0.get(Category::MessageOverhead) - overhead).abs() < 1e-3, "{m}: {p0:?}");
        assert!((p0.busy - (10 * INTERVAL) as f64 - overhead).abs() < 1e-3, "{m}: {p0:?}");
        assert_eq!(b.stats.counters["backedge_failed_polls"], 9.0, "{m}");
        assert_eq!(b.stats.counters["backedge_dispatches"], 1.0, "{m}");
        assert!(!a.stats.counters.contains_key("backedge_failed_polls"), "{m}: interrupts have no back-edge counts");
    }
}

#[test]
fn a_waiting_processor_takes_a_message_at_once_polled() {
    let interrupt = sim("cm5", &[]);
    let polled = sim("cm5", &backedges());
    let cfg = interrupt.config();
    let a = interrupt.run(Arc::new(OneMessage { wait: true })).unwrap();
    let b = polled.run(Arc::new(OneMessage { wait: true })).unwrap();
    let arrival = a.states[0].at - cfg.ps_to_cycles(cfg.msg.interrupt_entry_ps);
    let taken = b.states[0].at - cfg.ps_to_cycles(cfg.msg.poll_dispatch_ps);
    assert!((taken - arrival).abs() < 1e-3, "arrived {arrival}, taken {taken}");
    assert_eq!(b.stats.counters["backedge_dispatches"], 0.0, "not at a back-edge");
}

#[test]
fn back_edge_polling_and_smp_nodes_exclude_each_other_by_name() {
    let mut set = backedges();
    set.push("node.procs_per_node=2".to_string());
    let e = MachineConfig::preset("cm5", &set, None).expect_err("refused").to_string();
    assert!(e.contains("messaging.backedge_interval_cycles") && e.contains("SMP"), "{e}");
}

/// The Blizzard presets are the study's measured configuration (003 §1, §8.2): SMP nodes whose
/// protocol thread polls the Typhoon-0; `node.procs_per_node=1` alone gives one-processor,
/// interrupt-driven nodes, the same machine as one written without `[node]` or a polling
/// technique (the tag lock and the technique are inert there).
#[test]
fn the_blizzard_presets_are_smp_nodes_polling_typhoon0_and_one_override_gives_interrupts() {
    use commlab_sim::machine::PollMechanism;
    for m in ["blizzard-s", "blizzard-e", "blizzard-t"] {
        let smp = MachineConfig::preset(m, &[], Some(2)).unwrap();
        assert!(smp.smp_nodes, "{m}");
        assert_eq!(smp.poll.map(|p| p.mechanism), Some(PollMechanism::Typhoon0), "{m}");
        let one = MachineConfig::preset(m, &one(), Some(2)).unwrap();
        assert!(!one.smp_nodes && one.poll.is_none(), "{m}");
        let mut spec = MachineConfig::preset(m, &[], Some(2)).unwrap().spec;
        spec.node = None;
        spec.messaging.poll_mechanism = None;
        let bare = MachineConfig::from_spec(spec).unwrap();
        // The same runs, cycle for cycle, as the machine without the SMP keys.
        let (a, b) = (
            Simulator::new(one).run(Arc::new(Interrupted)).unwrap(),
            Simulator::new(bare).run(Arc::new(Interrupted)).unwrap(),
        );
        assert_eq!(a.stats.cycles, b.stats.cycles, "{m}");
        assert_eq!(a.stats.counters, b.stats.counters, "{m}");
        // And interrupted: every handler stretched the computation.
        assert!(a.stats.procs[0].get(Category::MessageOverhead) > 0.0, "{m}");
    }
}
