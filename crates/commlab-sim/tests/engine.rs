//! Engine behaviour seen through small programs: deadlock reports, run limits, program
//! errors, interrupt preemption and its accounting, polling, and network back-pressure.

use commlab_api::{Backend, Category, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use commlab_sim::machine::MachineConfig;
use commlab_sim::{SimError, Simulator};
use std::sync::Arc;

fn alewife(set: &[&str], procs: Option<usize>) -> Simulator {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Simulator::new(MachineConfig::preset("alewife", &set, procs).unwrap())
}

/// A program built from closures, for tests.
struct Prog<S> {
    handlers: Vec<Handler<S>>,
    mode: ReceiveMode,
    init: fn(ProcId) -> S,
    main: fn(&mut dyn FnMut(Op) -> Reply, ProcId),
}

/// Operations a test program performs (so `main` can be a plain fn over a dyn callback).
enum Op {
    Compute(u64),
    Send(ProcId, u32, Vec<u64>),
    Wait(&'static str, fn(&u64) -> bool),
    Poll,
    Barrier,
    Now,
    BeginTiming,
}

#[derive(Debug)]
enum Reply {
    None,
    Value(f64),
}

impl Program for Prog<u64> {
    type State = u64;
    fn handlers(&self) -> Vec<Handler<u64>> {
        self.handlers.clone()
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, id: ProcId, _: usize) -> u64 {
        (self.init)(id)
    }
    fn main<N: Node<State = u64>>(&self, node: &mut N) {
        let id = node.id();
        let mut exec = |op: Op| -> Reply {
            match op {
                Op::Compute(c) => node.compute(c),
                Op::Send(d, h, a) => node.send_am(d, HandlerId(h), &a),
                Op::Wait(what, f) => node.wait_until(what, f),
                Op::Poll => node.poll(),
                Op::Barrier => node.barrier(),
                Op::Now => return Reply::Value(node.now_cycles()),
                Op::BeginTiming => node.begin_timing(),
            }
            Reply::None
        };
        (self.main)(&mut exec, id);
    }
}

fn prog(handlers: Vec<Handler<u64>>, main: fn(&mut dyn FnMut(Op) -> Reply, ProcId)) -> Prog<u64> {
    Prog { handlers, mode: ReceiveMode::Interrupt, init: |_| 0, main }
}

fn incr(s: &mut u64, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    *s += 1;
}

#[test]
fn deadlock_reports_every_blocked_processor() {
    let p = prog(vec![incr], |x, id| {
        if id == 1 {
            x(Op::Compute(10));
            return;
        }
        x(Op::Wait("a message nobody sends", |s| *s > 0));
    });
    let err = alewife(&[], Some(4)).run(Arc::new(p)).err().expect("must deadlock");
    let SimError::Deadlock(report) = &err else { panic!("expected a deadlock, got {err}") };
    for id in [0, 2, 3] {
        assert!(
            report.contains(&format!("P{id}: waits in wait_until(\"a message nobody sends\")")),
            "P{id} missing from report:\n{report}"
        );
    }
    assert!(!report.contains("P1:"), "finished processor listed as blocked:\n{report}");
    assert!(report.contains("1 processors finished"), "{report}");
}

#[test]
fn barrier_with_a_missing_processor_is_a_deadlock_naming_the_barrier() {
    let p = prog(vec![], |x, id| {
        if id != 3 {
            x(Op::Barrier);
        }
    });
    let err = alewife(&[], Some(4)).run(Arc::new(p)).err().expect("must deadlock");
    let msg = err.to_string();
    assert!(msg.contains("waits at barrier #1"), "{msg}");
}

#[test]
fn event_and_time_limits_stop_runaway_runs() {
    let ping_forever = prog(vec![incr], |x, id| loop {
        x(Op::Send((id + 1) % 4, 0, vec![]));
    });
    let ping_forever = Arc::new(ping_forever);
    let err = alewife(&["limits.max_events=5000", "network.model=fold"], Some(4))
        .run(Arc::clone(&ping_forever))
        .err()
        .unwrap();
    assert!(matches!(err, SimError::EventLimit { events: 5000, .. }), "{err}");
    assert!(err.to_string().contains("limits.max_events"));
    // The limit counts queued events. No hop runs ahead in this run, so `fold` queues the
    // events `hop` does and stops at the event and cycle the reference stops at.
    let hop = alewife(&["limits.max_events=5000", "network.model=hop"], Some(4)).run(ping_forever).err().unwrap();
    assert_eq!(hop.to_string(), err.to_string());

    let long = prog(vec![], |x, _| {
        x(Op::Compute(10_000_000));
    });
    // 10 M cycles at 20 MHz = 500 ms of simulated time.
    let err = alewife(&["limits.max_sim_time_ms=100"], Some(2)).run(Arc::new(long)).err().unwrap();
    assert!(matches!(err, SimError::TimeLimit { .. }), "{err}");
    assert!(err.to_string().contains("limits.max_sim_time_ms"));
}

#[test]
fn program_errors_name_the_problem() {
    let too_many_args = prog(vec![incr], |x, id| {
        if id == 0 {
            x(Op::Send(1, 0, vec![0; 8])); // 16 words > 14
        }
    });
    let err = alewife(&[], Some(2)).run(Arc::new(too_many_args)).err().unwrap();
    assert!(err.to_string().contains("max_arg_words is 14"), "{err}");

    let bad_dest = prog(vec![incr], |x, _| {
        x(Op::Send(7, 0, vec![]));
    });
    let err = alewife(&[], Some(2)).run(Arc::new(bad_dest)).err().unwrap();
    assert!(err.to_string().contains("sent to processor 7"), "{err}");

    // A cost entry the machine lacks is refused before any program is built.
    let err = alewife(&[], Some(2)).cost_cycles("no_such_cost").err().unwrap();
    assert!(err.to_string().contains("costs.no_such_cost"), "{err}");
    assert!(err.to_string().contains("iccg_edge"), "lists the costs the machine has: {err}");
}

#[test]
fn work_costs_come_from_the_machine() {
    assert_eq!(alewife(&["costs.iccg_edge=99"], Some(2)).cost_cycles("iccg_edge").unwrap(), 99);
    assert_eq!(alewife(&["costs.brand_new=7"], Some(2)).cost_cycles("brand_new").unwrap(), 7);
}

fn costly(s: &mut u64, ctx: &mut dyn HandlerCtx, _: &Message<'_>) {
    *s += 1;
    ctx.compute(200);
}

#[test]
fn an_interrupt_extends_the_interrupted_computation_by_the_handler_time() {
    // P1 computes 10,000 cycles; P0 sends it one message early on. P1 finishes late by exactly
    // interrupt entry + handler body + interrupt exit, charged to message overhead.
    let p = prog(vec![costly], |x, id| {
        x(Op::BeginTiming);
        if id == 0 {
            x(Op::Send(1, 0, vec![]));
        } else {
            x(Op::Compute(10_000));
        }
    });
    let sim = alewife(&[], Some(2));
    let (m, cfg) = (&sim.config().msg, sim.config());
    let out = sim.run(Arc::new(p)).unwrap();
    assert_eq!(out.states[1], 1);
    let p1 = &out.stats.procs[1];
    let handler = cfg.ps_to_cycles(m.interrupt_entry_ps + m.interrupt_exit_ps) + 200.0;
    assert!((p1.get(Category::Compute) - 10_000.0).abs() < 1e-6, "{p1:?}");
    assert!((p1.get(Category::MessageOverhead) - handler).abs() < 1e-6, "{p1:?}");
    assert!((p1.busy - (10_000.0 + handler)).abs() < 1e-6, "{p1:?}");
}

#[test]
fn a_handler_pays_for_reading_its_arguments() {
    // As above with five u64 arguments (10 words): the handler is entry + 10 x the machine's
    // cost per word read + body + exit. Alewife's own key is 1 (one load each); 3 is set here.
    let p = prog(vec![costly], |x, id| {
        x(Op::BeginTiming);
        if id == 0 {
            x(Op::Send(1, 0, vec![1, 2, 3, 4, 5]));
        } else {
            x(Op::Compute(10_000));
        }
    });
    let p = Arc::new(p);
    for (set, read) in [(None, 10.0), (Some("messaging.receive_per_arg_word_cycles=3"), 30.0)] {
        let sim = alewife(set.as_slice(), Some(2));
        let (m, cfg) = (&sim.config().msg, sim.config());
        assert_eq!(cfg.ps_to_cycles(10 * m.receive_per_arg_word_ps), read, "{set:?}");
        let out = sim.run(Arc::clone(&p)).unwrap();
        let handler = cfg.ps_to_cycles(m.interrupt_entry_ps + m.interrupt_exit_ps) + 200.0 + read;
        let p1 = &out.stats.procs[1];
        assert!((p1.get(Category::MessageOverhead) - handler).abs() < 1e-6, "{set:?}: {p1:?}");
    }
}

#[test]
fn a_barrier_fan_in_below_two_is_refused() {
    struct Chain(usize);
    impl Program for Chain {
        type State = ();
        fn barrier_arity(&self) -> Option<usize> {
            Some(self.0)
        }
        fn init_state(&self, _: ProcId, _: usize) {}
        fn main<N: Node<State = ()>>(&self, node: &mut N) {
            node.barrier();
        }
    }
    for k in [0, 1] {
        let err = alewife(&[], Some(4)).run(Arc::new(Chain(k))).err().expect("refused");
        assert!(matches!(err, SimError::Program(_)) && err.to_string().contains("at least 2, got"), "{err}");
    }
    alewife(&[], Some(4)).run(Arc::new(Chain(usize::MAX))).expect("a flat tree");
}

#[test]
fn polled_messages_wait_for_a_poll() {
    // P1 computes, then polls; the message that arrived meanwhile runs only at the poll.
    let mut p = prog(vec![incr], |x, id| {
        x(Op::BeginTiming);
        if id == 0 {
            x(Op::Send(1, 0, vec![]));
        } else {
            x(Op::Compute(5_000));
            let Reply::Value(before) = x(Op::Now) else { panic!() };
            x(Op::Poll);
            let Reply::Value(after) = x(Op::Now) else { panic!() };
            assert!(before >= 5_000.0);
            assert!(after > before, "the poll dispatched the handler");
        }
    });
    p.mode = ReceiveMode::Polling;
    p.init = |_| 0;
    let sim = alewife(&[], Some(2));
    let m = sim.config().msg.clone();
    let out = sim.run(Arc::new(p)).unwrap();
    assert_eq!(out.states[1], 1);
    let p1 = &out.stats.procs[1];
    assert!((p1.get(Category::Compute) - 5_000.0).abs() < 1e-6);
    assert!(
        (p1.get(Category::MessageOverhead) - sim.config().ps_to_cycles(m.poll_ps + m.poll_dispatch_ps)).abs() < 1e-6,
        "{p1:?}"
    );
}

#[test]
fn a_processor_waiting_in_the_message_barrier_receives_by_polling() {
    // P1 (interrupt mode) waits in the barrier while P0 computes, then sends it a message
    // whose handler takes 200 cycles, then joins. P1 has nothing else to do, so it takes the
    // message and the barrier release at the poll-dispatch cost, not with interrupts; the
    // release's one argument (its epoch, two 32-bit words) is read at the machine's cost.
    let p = prog(vec![costly], |x, id| {
        x(Op::BeginTiming);
        if id == 0 {
            x(Op::Compute(5_000));
            x(Op::Send(1, 0, vec![]));
        }
        x(Op::Barrier);
    });
    let sim = alewife(&[], Some(2));
    let m = sim.config().msg.clone();
    let out = sim.run(Arc::new(p)).unwrap();
    assert_eq!(out.states[1], 1);
    let p1 = &out.stats.procs[1];
    let polled = sim.config().ps_to_cycles(2 * m.poll_dispatch_ps + 2 * m.receive_per_arg_word_ps) + 200.0;
    assert!((p1.get(Category::MessageOverhead) - polled).abs() < 1e-6, "{p1:?}");
}

#[test]
fn a_barrier_that_waits_with_interrupts_on_pays_entry_exit_and_its_handler_body() {
    // As above on a machine whose barrier leaves message interrupts on and whose barrier
    // handler has a body of 7 cycles: P1 takes the message and the release each at interrupt
    // entry and exit, and the release's handler costs its body on top of its argument reads.
    let p = prog(vec![costly], |x, id| {
        x(Op::BeginTiming);
        if id == 0 {
            x(Op::Compute(5_000));
            x(Op::Send(1, 0, vec![]));
        }
        x(Op::Barrier);
    });
    let sim = alewife(&["messaging.barrier_wait_interrupts=true", "messaging.barrier_handler_cycles=7"], Some(2));
    let m = sim.config().msg.clone();
    let cycles = |ps: u64| sim.config().ps_to_cycles(ps);
    assert!(m.barrier_wait_interrupts && cycles(m.barrier_handler_ps) == 7.0);
    let out = sim.run(Arc::new(p)).unwrap();
    assert_eq!(out.states[1], 1);
    let p1 = &out.stats.procs[1];
    let trap = m.interrupt_entry_ps + m.interrupt_exit_ps;
    let want = cycles(2 * trap + 2 * m.receive_per_arg_word_ps + m.barrier_handler_ps) + 200.0;
    assert!((p1.get(Category::MessageOverhead) - want).abs() < 1e-6, "{p1:?}, want {want}");
    // The root (P0) takes P1's arrival: its handler body too.
    let p0 = &out.stats.procs[0];
    assert!(p0.get(Category::MessageOverhead) >= cycles(trap) + 7.0, "{p0:?}");
}

#[test]
fn per_node_and_per_link_statistics_balance() {
    // After timing starts, P0 sends three messages to P1 and P2 one to P3: every message
    // counted once at its sender and once at its receiver, and every byte injected crosses
    // one injection link and one ejection link.
    let p = prog(vec![incr], |x, id| {
        x(Op::BeginTiming);
        if id == 0 {
            for _ in 0..3 {
                x(Op::Send(1, 0, vec![1, 2]));
            }
        }
        if id == 2 {
            x(Op::Send(3, 0, vec![]));
        }
    });
    let out = alewife(&[], Some(4)).run(Arc::new(p)).unwrap();
    let s = &out.stats;
    let sent: Vec<u64> = s.nodes.iter().map(|n| n.messages_sent).collect();
    let received: Vec<u64> = s.nodes.iter().map(|n| n.messages_received).collect();
    assert_eq!(sent, [3, 0, 1, 0]);
    assert_eq!(received, [0, 3, 0, 1]);
    let total: u64 = s.volume_bytes.iter().sum();
    let by_kind = |k: &str| s.links.iter().filter(|l| l.kind == k).map(|l| l.bytes).sum::<u64>();
    assert_eq!(by_kind("injection"), total, "every byte injected once");
    assert_eq!(by_kind("ejection"), total, "and ejected once");
    assert!(s.links.iter().all(|l| (0.0..=1.0).contains(&l.utilization)));
    let into_p1: u64 = s.links.iter().filter(|l| l.kind == "ejection" && l.to == "endpoint 1").map(|l| l.bytes).sum();
    assert_eq!(into_p1, 3 * (8 + 16), "three messages of an 8-byte header and two argument words");
}

/// A hot spot: senders left of processor 11 (row 1 of the 8x4 mesh) flood it while its handler
/// is slow; a probe from processor 10 to 12 passes through 11's router on the link the flood
/// uses. When 11 stops draining, the probe is delayed although it does not go to 11.
#[test]
fn a_backed_up_receiver_slows_unrelated_traffic_through_its_links() {
    fn probe_latency(handler_cycles: u64, flood: u64) -> f64 {
        let set = [format!("costs.hot_handler={handler_cycles}"), format!("costs.flood_messages={flood}")];
        let sim = alewife(&[&set[0], &set[1]], None);
        assert_eq!(sim.config().topology.hops(10, 12), 2);
        struct HotSpot {
            hot_cycles: u64,
            flood: u64,
        }
        /// Messages (or probe cycles) counted, and the hot handler's cost.
        type State = (u64, u64);
        fn hot(s: &mut State, ctx: &mut dyn HandlerCtx, _: &Message<'_>) {
            s.0 += 1;
            ctx.compute(s.1);
        }
        fn probe(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
            // State of processor 12 accumulates one-way probe latency in cycles.
            s.0 += (ctx.now_cycles() - f64::from_bits(m.args[0])) as u64;
        }
        impl Program for HotSpot {
            type State = State;
            fn handlers(&self) -> Vec<Handler<State>> {
                vec![hot, probe]
            }
            fn init_state(&self, _: ProcId, _: usize) -> State {
                (0, self.hot_cycles)
            }
            fn main<N: Node<State = State>>(&self, node: &mut N) {
                match node.id() {
                    8 | 9 => {
                        for _ in 0..self.flood {
                            node.send_am(11, HandlerId(0), &[]);
                        }
                    }
                    10 => {
                        node.compute(3_000); // let the hot spot back up first
                        for _ in 0..10 {
                            let t = node.now_cycles();
                            node.send_am(12, HandlerId(1), &[t.to_bits()]);
                            node.compute(500);
                        }
                    }
                    11 => {
                        let total = 2 * self.flood;
                        node.wait_until("flood", move |s| s.0 == total)
                    }
                    _ => {}
                }
            }
        }
        let hot_cycles = sim.cost_cycles("hot_handler").unwrap();
        let flood = sim.cost_cycles("flood_messages").unwrap();
        let out = sim.run(Arc::new(HotSpot { hot_cycles, flood })).unwrap();
        out.states[12].0 as f64 / 10.0
    }
    let quiet = probe_latency(0, 0);
    let slow = probe_latency(3_000, 40);
    // Uncongested: 31 send + 2 for the argument's two words + 2 NI links + 1.6 for two hops
    // + 7.1 for 16 bytes on the wire + 65 interrupt entry + 2 for the handler to read the
    // argument's two words = 110.7 (summed as whole cycles).
    assert!((quiet - 110.7).abs() < 1.0, "uncongested probe takes {quiet} cycles");
    assert!(slow > 3.0 * quiet, "probe through a backed-up router: {slow} cycles vs {quiet} uncongested");
}

#[test]
fn heavy_traffic_on_a_torus_does_not_deadlock_the_network() {
    // Dimension-order routing on a torus has cyclic channel dependencies; dateline virtual
    // channels must keep this all-to-all flood moving.
    let sim = alewife(&["network.topology=torus", "network.dims=[5,5]", "network.io_nodes=false"], None);
    let p = prog(vec![incr], |x, id| {
        for i in 0..200 {
            x(Op::Send((id * 7 + i * 3 + 1) % 25, 0, vec![1, 2, 3, 4, 5, 6, 7]));
        }
        x(Op::Barrier);
    });
    let out = sim.run(Arc::new(p)).unwrap();
    assert_eq!(out.states.iter().sum::<u64>(), 25 * 200);
}

/// A handler may answer with a bulk (DMA) message: the payload arrives intact, padded to the
/// DMA alignment, and the handler pays the send and DMA set-up costs (remote-to-local copy by
/// request and DMA reply).
#[test]
fn a_handler_can_reply_with_a_bulk_message() {
    fn request(_: &mut u64, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
        let block: Vec<u64> = (1..=5).collect();
        ctx.send_bulk(m.src, HandlerId(1), &[7], &[&block]);
    }
    fn reply(s: &mut u64, _: &mut dyn HandlerCtx, m: &Message<'_>) {
        // Alewife pads regions to 16 bytes: 5 words become 6.
        assert_eq!(m.args, [7]);
        assert_eq!(m.payload, [1, 2, 3, 4, 5, 0]);
        *s = m.payload.iter().sum();
    }
    let p = prog(vec![request, reply], |x, id| {
        if id == 0 {
            x(Op::Send(1, 0, vec![]));
            x(Op::Wait("the reply", |s| *s == 15));
        } else {
            x(Op::Compute(5000)); // the handler interrupts this
        }
    });
    let s = alewife(&[], Some(2));
    let out = s.run(Arc::new(p)).unwrap();
    assert_eq!(out.states[0], 15);
    // Processor 1's handler: interrupt entry 65 + send 31 + 2 (one argument) + DMA set-up 10
    // + one region 2 + exit 30.
    let handler = out.stats.procs[1].get(Category::MessageOverhead);
    assert_eq!(handler, 65.0 + 31.0 + 2.0 + 10.0 + 2.0 + 30.0, "replying handler's overhead");
}

/// A handler's references to its private data cost the machine's cache hit each
/// (`HandlerCtx::private_hits`), not a figure of the program's.
#[test]
fn a_handlers_private_hits_cost_the_machines_hit_time() {
    fn touch(_: &mut u64, ctx: &mut dyn HandlerCtx, _: &Message<'_>) {
        ctx.private_hits(4);
    }
    let handler_time = |hit: &str| {
        let p = prog(vec![touch], |x, id| {
            if id == 0 {
                x(Op::Send(1, 0, vec![]));
            } else {
                x(Op::Compute(5000)); // the handler interrupts this
            }
        });
        let s = alewife(&[&format!("memory.hit_cycles={hit}")], Some(2));
        s.run(Arc::new(p)).unwrap().stats.procs[1].get(Category::MessageOverhead)
    };
    // Interrupt entry 65 + exit 30, plus 4 hits.
    assert_eq!(handler_time("1"), 65.0 + 30.0 + 4.0);
    assert_eq!(handler_time("3"), 65.0 + 30.0 + 12.0);
}

#[test]
fn a_sequential_baseline_under_cross_traffic_runs_without_it() {
    // Regression: an app's one-processor baseline (with_nprocs(1)) kept the configured
    // cross-traffic, which a one-node mesh cannot carry, so every speedup above about 4.5
    // bytes/cycle failed to build its baseline. The baseline is the program alone.
    let sim = alewife(&["cross_traffic.rate_bytes_per_cycle=10"], Some(32));
    assert_eq!(sim.config().cross_traffic_bytes_per_cycle, 10.0);
    let one = sim.with_nprocs(1).expect("the baseline machine builds");
    assert_eq!(one.config().cross_traffic_bytes_per_cycle, 0.0);
    let p = prog(vec![incr], |x, _| {
        x(Op::BeginTiming);
        x(Op::Compute(100));
    });
    let out = one.run(Arc::new(p)).expect("the baseline runs");
    assert!((out.stats.procs[0].get(Category::Compute) - 100.0).abs() < 1e-6);
    // Any other size keeps the rate it was given.
    assert_eq!(sim.with_nprocs(16).unwrap().config().cross_traffic_bytes_per_cycle, 10.0);
}

#[test]
fn a_software_interrupt_look_is_charged_on_every_operation_while_receiving_by_interrupt() {
    // `messaging.interrupt_look_cycles` (only the native host's emitted machine sets it): each
    // main-thread operation in interrupt mode pays one look. 50 rounds of compute, load, store
    // and fetch_add are 200 operations in the timed region: 200 x 7 cycles more in interrupt
    // mode, nothing more when the program polls.
    struct Looks(ReceiveMode);
    impl Program for Looks {
        type State = ();
        fn receive_mode(&self) -> ReceiveMode {
            self.0
        }
        fn init_state(&self, _: ProcId, _: usize) {}
        fn main<N: Node<State = ()>>(&self, node: &mut N) {
            let a = node.alloc_shared(8, commlab_api::Placement::OnNode(0));
            node.begin_timing();
            for i in 0..50 {
                node.compute(10);
                node.load(a);
                node.store(a, i);
                node.fetch_add(a, 1);
            }
        }
    }
    for (mode, extra) in [(ReceiveMode::Interrupt, 200.0 * 7.0), (ReceiveMode::Polling, 0.0)] {
        let cycles = |set: &[&str]| alewife(set, Some(1)).run(Arc::new(Looks(mode))).unwrap().stats.cycles;
        let (plain, looked) = (cycles(&[]), cycles(&["messaging.interrupt_look_cycles=7"]));
        assert!(plain > 500.0, "{mode:?}: {plain}");
        assert!((looked - plain - extra).abs() < 1e-6, "{mode:?}: {plain} -> {looked}, expected +{extra}");
    }
}

#[test]
fn a_shared_memory_barrier_pays_one_interrupt_look_per_processor() {
    // `barrier()` is one operation: its own loads, stores and fetch_add inside pay no look of
    // their own. Two processors, 20 shared-memory barriers: the child's look (7 cycles) comes
    // before its arrival, the root's overlaps it, so the run is 20 x 7 cycles longer (a look
    // inside the barrier as well would make it 20 x 14).
    struct Barriers;
    impl Program for Barriers {
        type State = ();
        fn barrier_kind(&self) -> commlab_api::BarrierKind {
            commlab_api::BarrierKind::SharedMemory
        }
        fn init_state(&self, _: ProcId, _: usize) {}
        fn main<N: Node<State = ()>>(&self, node: &mut N) {
            node.begin_timing();
            for _ in 0..20 {
                node.barrier();
            }
        }
    }
    let cycles = |set: &[&str]| alewife(set, Some(2)).run(Arc::new(Barriers)).unwrap().stats.cycles;
    let (plain, looked) = (cycles(&[]), cycles(&["messaging.interrupt_look_cycles=7"]));
    assert!((looked - plain - 20.0 * 7.0).abs() < 1e-6, "{plain} -> {looked}, expected +140");
}
