//! The Blizzard study's network layer on the software-DSM presets (issue 18): small messages of
//! up to 8 (32-bit) words, large messages of up to 4 KB in one packet, and handlers that need
//! not follow request-reply. The classes are the machine's keys: `messaging.max_arg_words`
//! (8) and `network.max_packet_payload_bytes` (4096); a larger bulk message is split into
//! packets, a larger active message refused.

use commlab_api::{Backend, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use commlab_sim::machine::MachineConfig;
use commlab_sim::Simulator;
use std::sync::Arc;

fn blizzard_s(procs: usize) -> Simulator {
    Simulator::new(MachineConfig::preset("blizzard-s", &[], Some(procs)).unwrap())
}

/// What processor 0 sends; every other processor waits for the handlers to finish.
#[derive(Clone, Copy)]
enum Send {
    /// An active message to processor 1 with this many 64-bit arguments.
    Small(usize),
    /// A bulk message to processor 1 with this many payload words.
    Large(usize),
    /// A message to processor 1 whose handler forwards to 2, whose handler tells 0.
    Chain,
}

struct Prog(Send);

/// Processor state: the sum of what its handlers received, and whether it is done.
#[derive(Default, Clone, Debug)]
struct St {
    sum: u64,
    done: bool,
}

fn small(s: &mut St, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.sum = m.args.iter().sum();
    s.done = true;
}

fn large(s: &mut St, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.sum = m.payload.iter().sum();
    s.done = true;
}

/// At 1: pass the value on to 2 (not back to the sender).
fn forward(_: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.send_am(2, HandlerId(3), &[m.args[0] + 1]);
}

/// At 2: tell 0 what arrived.
fn tell(_: &mut St, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    ctx.send_am(0, HandlerId(0), &[m.args[0] + 1]);
}

impl Program for Prog {
    type State = St;
    fn handlers(&self) -> Vec<Handler<St>> {
        vec![small, large, forward, tell]
    }
    fn receive_mode(&self) -> ReceiveMode {
        ReceiveMode::Interrupt
    }
    fn init_state(&self, _: ProcId, _: usize) -> St {
        St::default()
    }
    fn main<N: Node<State = St>>(&self, node: &mut N) {
        let id = node.id();
        match (self.0, id) {
            (Send::Small(n), 0) => node.send_am(1, HandlerId(0), &(1..=n as u64).collect::<Vec<_>>()),
            (Send::Large(n), 0) => {
                let data: Vec<u64> = (1..=n as u64).collect();
                node.send_bulk(1, HandlerId(1), &[], &[&data]);
            }
            (Send::Chain, 0) => {
                node.send_am(1, HandlerId(2), &[10]);
                node.wait_until("the chain's end", |s| s.done);
            }
            (Send::Small(_) | Send::Large(_), 1) => node.wait_until("the message", |s| s.done),
            _ => {}
        }
        node.barrier();
    }
}

#[test]
fn small_messages_carry_up_to_eight_words() {
    // Four 64-bit arguments are eight 32-bit words: the largest small message.
    let out = blizzard_s(2).run(Arc::new(Prog(Send::Small(4)))).unwrap();
    assert_eq!(out.states[1].sum, 1 + 2 + 3 + 4);
    let err = blizzard_s(2).run(Arc::new(Prog(Send::Small(5)))).err().unwrap().to_string();
    assert!(err.contains("10 32-bit words") && err.contains("max_arg_words is 8"), "{err}");
}

#[test]
fn large_messages_of_up_to_4_kb_travel_as_one_packet() {
    let packets = |words: usize| {
        let out = blizzard_s(2).run(Arc::new(Prog(Send::Large(words)))).unwrap();
        let n = words as u64;
        assert_eq!(out.states[1].sum, n * (n + 1) / 2, "{words} words delivered whole");
        // Messages of the program only: the barrier's are the same in both runs.
        out.stats.counters["packets"]
    };
    let (one_block, over) = (packets(512), packets(513));
    assert_eq!(over - one_block, 1.0, "4096 bytes in one packet, 4104 in two");
}

#[test]
fn handlers_need_not_follow_request_reply() {
    let out = blizzard_s(3).run(Arc::new(Prog(Send::Chain))).unwrap();
    assert_eq!(out.states[0].sum, 12, "0 -> 1 -> 2 -> 0, each handler adding one");
    let sent: Vec<u64> = out.stats.nodes.iter().map(|n| n.messages_sent).collect();
    let received: Vec<u64> = out.stats.nodes.iter().map(|n| n.messages_received).collect();
    assert_eq!(sent.iter().sum::<u64>(), received.iter().sum::<u64>(), "traffic balances");
}
