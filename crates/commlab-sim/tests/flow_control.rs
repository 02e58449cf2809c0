//! Credit-based flow control (`messaging.flow_window_messages`, see `src/msg/flow.rs`): a
//! handler that sends more than the window while its node holds a window of unacknowledged
//! receipts is detected and buffered and the program still gets its answer; two-way streaming
//! with a window above the bandwidth-delay product detects nothing; a window that never binds
//! and needs no acknowledgement changes no time.

use commlab_api::{Backend, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode, RunOutput};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use std::sync::Arc;

/// blizzard-s on one-processor, interrupt-driven nodes (the preset's are SMP nodes, whose
/// protocol processor takes every message) with `set`.
fn blizzard_s(set: &[String], procs: Option<usize>) -> Result<MachineConfig, commlab_sim::machine::ConfigError> {
    let mut all = vec!["node.procs_per_node=1".to_string()];
    all.extend_from_slice(set);
    MachineConfig::preset("blizzard-s", &all, procs)
}

fn blizzard(set: &[String]) -> Simulator {
    Simulator::new(blizzard_s(set, Some(2)).unwrap())
}

#[derive(Default)]
struct St {
    sum: u64,
    replies: u64,
    requests: u64,
}

/// Processor 0 sends `requests` requests to processor 1, which is computing (polling) while
/// they arrive; each request's handler answers with `fanout` replies, alternately active and
/// bulk messages carrying `1000 k + i`.
struct FanOut {
    requests: u64,
    fanout: u64,
}

const REQUEST: HandlerId = HandlerId(0);
const REPLY: HandlerId = HandlerId(1);

fn request(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.requests += 1;
    let (k, fanout) = (m.args[0], m.args[1]);
    for i in 0..fanout {
        let v = 1000 * k + i;
        if i % 2 == 0 {
            ctx.send_am(m.src, REPLY, &[v]);
        } else {
            ctx.send_bulk(m.src, REPLY, &[], &[&[v]]);
        }
    }
}

fn reply(s: &mut St, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.sum += if m.args.is_empty() { m.payload[0] } else { m.args[0] };
    s.replies += 1;
}

impl Program for FanOut {
    type State = St;
    fn handlers(&self) -> Vec<commlab_api::Handler<St>> {
        vec![request, reply]
    }
    fn receive_mode(&self) -> ReceiveMode {
        ReceiveMode::Polling
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        let (n, f) = (self.requests, self.fanout);
        if node.id() == 0 {
            for k in 0..n {
                node.send_am(1, REQUEST, &[k, f]);
            }
            node.wait_until("replies", |s| s.replies == n * f);
        } else {
            node.compute(200_000);
            node.wait_until("requests", |s| s.requests == n);
        }
    }
}

fn count(out: &RunOutput<St>, name: &str) -> f64 {
    out.stats.counters.get(name).copied().unwrap_or_else(|| panic!("no counter {name}"))
}

fn balanced(out: &RunOutput<St>) {
    let sent: u64 = out.stats.nodes.iter().map(|n| n.messages_sent).sum();
    let received: u64 = out.stats.nodes.iter().map(|n| n.messages_received).sum();
    assert_eq!(sent, received, "every message sent is handled");
}

#[test]
fn a_handler_sending_beyond_the_window_is_detected_buffered_and_completes() {
    let (w, n, f) = (4u64, 4u64, 8u64);
    let set = vec![format!("messaging.flow_window_messages={w}"), "messaging.flow_buffer_cycles=50".to_string()];
    let run = || blizzard(&set).run(Arc::new(FanOut { requests: n, fanout: f })).unwrap();
    let out = run();
    // The answer, summed independently.
    let expected: u64 = (0..n).flat_map(|k| (0..f).map(move |i| 1000 * k + i)).sum();
    assert_eq!(out.states[0].sum, expected);
    assert_eq!(out.states[0].replies, n * f);
    // Processor 1 holds the window's worth of requests (n = w) when the first request's
    // handler runs, so its replies beyond the window are detections. Those replies carry that
    // request's credit back (piggy-backed), so the later handlers hold fewer than w and only
    // buffer (a handler cannot wait); the acknowledgements processor 0 sends queue behind the
    // requests, so every reply beyond the first window is buffered.
    assert_eq!(count(&out, "flow_deadlock_detections"), (f - w) as f64);
    assert_eq!(count(&out, "flow_buffered"), (n * f - w) as f64);
    assert!(count(&out, "flow_acks") > 0.0, "processor 0 sends nothing back: credits return in acknowledgements");
    assert!(count(&out, "flow_spurious_detections") <= count(&out, "flow_deadlock_detections"));
    balanced(&out);
    common_sums(&out);
    // Deterministic.
    let again = run();
    assert_eq!(again.stats.cycles, out.stats.cycles);
    assert_eq!(again.stats.counters, out.stats.counters);
    // Without flow control the same program sends each reply at once and has no such counters.
    let off = blizzard(&[]).run(Arc::new(FanOut { requests: n, fanout: f })).unwrap();
    assert_eq!(off.states[0].sum, expected);
    assert!(!off.stats.counters.contains_key("flow_buffered"));
    assert!(off.stats.cycles < out.stats.cycles, "buffering and acknowledgements cost time");
}

fn common_sums(out: &RunOutput<St>) {
    for p in &out.stats.procs {
        assert!((p.sum() - p.busy).abs() < 1e-6 * p.busy.max(1.0), "categories sum to busy time: {p:?}");
    }
}

/// Both processors stream `messages` active messages to each other, then wait for the
/// other's.
struct TwoWay {
    messages: u64,
    mode: ReceiveMode,
}

fn count_one(s: &mut St, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.sum += m.args[0];
    s.replies += 1;
}

impl Program for TwoWay {
    type State = St;
    fn handlers(&self) -> Vec<commlab_api::Handler<St>> {
        vec![count_one]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        let other = 1 - node.id();
        for k in 0..self.messages {
            node.send_am(other, HandlerId(0), &[k]);
        }
        let n = self.messages;
        node.wait_until("stream", |s| s.replies == n);
    }
}

fn two_way(window: u64, messages: u64, mode: ReceiveMode) -> RunOutput<St> {
    let set = [format!("messaging.flow_window_messages={window}")];
    let out = blizzard(&set).run(Arc::new(TwoWay { messages, mode })).unwrap();
    for s in &out.states {
        assert_eq!(s.sum, messages * (messages - 1) / 2);
    }
    balanced(&out);
    common_sums(&out);
    out
}

#[test]
fn two_way_streaming_with_a_window_above_the_bandwidth_delay_product_detects_nothing() {
    // Bandwidth-delay product, bounded from above from the machine's own costs: a message
    // leaves at most every send overhead; its credit is back within a round trip of two
    // sends, two interrupt entries and exits and two network crossings (10,000 cycles is far
    // more than blizzard's network takes on 2 nodes).
    let cfg = blizzard_s(&[], Some(2)).unwrap();
    let m = &cfg.msg;
    let rtt = 2 * (m.send_overhead_ps + m.interrupt_entry_ps + m.interrupt_exit_ps + cfg.cycles_to_ps(10_000.0));
    let bdp = rtt.div_ceil(m.send_overhead_ps);
    let out = two_way(2 * bdp, 300, ReceiveMode::Interrupt);
    assert_eq!(count(&out, "flow_deadlock_detections"), 0.0);
    assert_eq!(count(&out, "flow_spurious_detections"), 0.0);
    assert_eq!(count(&out, "flow_buffered"), 0.0);
    assert_eq!(count(&out, "flow_credit_waits"), 0.0);
    assert!(count(&out, "flow_piggybacked_credits") > 0.0, "credits ride on the reverse stream");
    // Received by polling, the stream does hit the condition: each side's inbox fills with
    // the other's messages while it sends, so once its window is full it holds a window of
    // unacknowledged receipts.
    let tight = two_way(4, 300, ReceiveMode::Polling);
    assert!(count(&tight, "flow_deadlock_detections") > 0.0);
    assert!(count(&tight, "flow_spurious_detections") <= count(&tight, "flow_deadlock_detections"));
}

#[test]
fn a_window_that_never_binds_changes_no_time() {
    // Piggy-backing is free and a window this large is never full nor owed a batch of
    // credits: the run is the run without flow control.
    let on = two_way(1 << 20, 100, ReceiveMode::Interrupt);
    assert_eq!(count(&on, "flow_acks"), 0.0);
    assert_eq!(count(&on, "flow_credit_waits"), 0.0);
    let off = blizzard(&[]).run(Arc::new(TwoWay { messages: 100, mode: ReceiveMode::Interrupt })).unwrap();
    assert_eq!(on.stats.cycles, off.stats.cycles);
    assert_eq!(on.stats.procs, off.stats.procs);
}

/// Every processor sends `messages` requests to pseudo-random others; each request's handler
/// answers its sender with `echoes` replies (alternately active and bulk). Every processor
/// knows from the same generator how many requests and replies it will get.
struct Mesh {
    messages: u64,
    echoes: u64,
    mode: ReceiveMode,
}

fn dest(p: usize, k: u64, n: usize) -> usize {
    let x = ((p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_mul(0x94D0_49BB_1331_11EB);
    let d = (x >> 33) as usize % (n - 1);
    if d >= p {
        d + 1
    } else {
        d
    }
}

fn mesh_request(s: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.requests += 1;
    s.sum += m.args[0];
    for i in 0..m.args[1] {
        if i % 2 == 0 {
            ctx.send_am(m.src, HandlerId(1), &[m.args[0] + i]);
        } else {
            ctx.send_bulk(m.src, HandlerId(1), &[], &[&[m.args[0] + i]]);
        }
    }
}

impl Program for Mesh {
    type State = St;
    fn handlers(&self) -> Vec<commlab_api::Handler<St>> {
        vec![mesh_request, reply]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        let (id, n) = (node.id(), node.nprocs());
        for k in 0..self.messages {
            node.send_am(dest(id, k, n), HandlerId(0), &[1000 * id as u64 + k, self.echoes]);
            node.compute(50);
        }
        let incoming = (0..n).filter(|&p| p != id).flat_map(|p| (0..self.messages).map(move |k| dest(p, k, n)));
        let requests = incoming.filter(|&d| d == id).count() as u64;
        let replies = self.messages * self.echoes;
        node.wait_until("mesh", |s| s.requests == requests && s.replies == replies);
    }
}

#[test]
fn random_traffic_with_handler_replies_completes_under_every_window() {
    let (m, e, n) = (30u64, 3u64, 6usize);
    // Independently: what each processor must have received and summed.
    let mut requests_sum = vec![0u64; n];
    let mut replies_sum = vec![0u64; n];
    for p in 0..n {
        for k in 0..m {
            let v = 1000 * p as u64 + k;
            requests_sum[dest(p, k, n)] += v;
            replies_sum[p] += (0..e).map(|i| v + i).sum::<u64>();
        }
    }
    let mut seen = [0.0; 3];
    for mode in [ReceiveMode::Interrupt, ReceiveMode::Polling] {
        for w in [1u64, 2, 3, 8] {
            let set = [format!("messaging.flow_window_messages={w}"), "messaging.flow_buffer_cycles=40".to_string()];
            let sim = Simulator::new(blizzard_s(&set, Some(n)).unwrap());
            let out = sim.run(Arc::new(Mesh { messages: m, echoes: e, mode })).unwrap();
            for (p, s) in out.states.iter().enumerate() {
                assert_eq!(s.sum, requests_sum[p] + replies_sum[p], "{mode:?} w={w} P{p}");
                assert_eq!(s.replies, m * e);
            }
            balanced(&out);
            common_sums(&out);
            assert!(count(&out, "flow_spurious_detections") <= count(&out, "flow_deadlock_detections"));
            assert!(count(&out, "flow_deadlock_detections") <= count(&out, "flow_buffered"));
            for (k, name) in ["flow_buffered", "flow_deadlock_detections", "flow_credit_waits"].iter().enumerate() {
                seen[k] += count(&out, name);
            }
            let again = sim.run(Arc::new(Mesh { messages: m, echoes: e, mode })).unwrap();
            assert_eq!((again.stats.cycles, again.stats.counters), (out.stats.cycles, out.stats.counters));
        }
    }
    // The traffic exercises every path: buffering, detections and waits for credit.
    assert!(seen.iter().all(|&c| c > 0.0), "{seen:?}");
}

/// Processor 0 sends `messages` one-word active messages to processor 1, which only counts
/// them (by interrupt).
struct OneWay {
    messages: u64,
}

impl Program for OneWay {
    type State = St;
    fn handlers(&self) -> Vec<commlab_api::Handler<St>> {
        vec![count_one]
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        node.begin_timing();
        let n = self.messages;
        if node.id() == 0 {
            for k in 0..n {
                node.send_am(1, HandlerId(0), &[k]);
            }
        } else {
            node.wait_until("stream", |s| s.replies == n);
        }
    }
}

/// Regression: an explicit acknowledgement's send overhead was left out of its handler's
/// length (the handler's time was fixed before the acknowledgement was added), so the
/// receiver got it free.
#[test]
fn an_explicit_acknowledgement_is_charged_to_the_receivers_handler() {
    let messages = 20;
    let run = |set: &[String]| blizzard(set).run(Arc::new(OneWay { messages })).unwrap();
    let on = run(&["messaging.flow_window_messages=1".to_string()]);
    let off = run(&[]);
    let acks = count(&on, "flow_acks");
    // Nothing flows back to carry the credits: every message is acknowledged explicitly.
    assert_eq!(acks, messages as f64);
    let cfg = blizzard_s(&[], Some(2)).unwrap();
    let ack_cycles = cfg.ps_to_cycles(cfg.msg.send_cost_ps(0, None));
    let overhead = |o: &RunOutput<St>| o.stats.procs[1].get(commlab_api::Category::MessageOverhead);
    let extra = overhead(&on) - overhead(&off);
    assert!(
        (extra - acks * ack_cycles).abs() < 1e-6,
        "receiver's message overhead grew by {extra} cycles for {acks} acknowledgements of {ack_cycles} cycles each"
    );
}
