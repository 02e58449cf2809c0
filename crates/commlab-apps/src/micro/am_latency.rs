//! `am-latency`: null active-message ping-pong between processor 0 and a processor `hops`
//! network hops away. The one-way time of each ping is measured directly: from the moment the
//! sender starts the send to the moment the receiver's handler is entered (send overhead,
//! network transit, interrupt entry or poll dispatch). The reply makes the pings sequential.
//!
//! The Blizzard COW study's round trips (§6.5.1-6.5.2, Table 2, Fig. 2): `from` says which
//! thread sends each ping, the compute thread (the main program, woken by the pong's handler)
//! or the protocol handler that received the pong, and `bytes` makes ping and pong bulk
//! messages of that many bytes; either given, `counters.round_trip_cycles` (and `_us`) is the
//! mean time from one ping's send to the next's.

use super::{receive_mode, MP_VARIANTS};
use crate::app::common::HOPS;
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters am-latency`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [HOPS];
    ONE_WAY_CYCLES = "one_way_cycles", "cycles",
        "mean over the measured rounds of a message's send start to its handler's entry at the partner (round 0, the warm-up, left out)";
    ONE_WAY_SPREAD_CYCLES = "one_way_spread_cycles", "cycles",
        "largest distance of one round's one-way time from their mean";
    PARTNER = "partner", "processor",
        "the processor that answers processor 0's pings";
    ROUND_TRIP_CYCLES = "round_trip_cycles", "cycles",
        "mean time from one ping's send to the next's over the measured rounds (only when round trips are asked for)";
    ROUND_TRIP_US = "round_trip_us", "microseconds",
        "`round_trip_cycles` in microseconds at the machine's clock";
}

pub const INFO: AppInfo = AppInfo {
    name: "am-latency",
    summary: "null active message ping-pong; counters.one_way_cycles = send start to handler entry",
    variants: MP_VARIANTS,
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "hops", default: "1", doc: "network hops between processor 0 and its partner (by default 1, or the nearest processor where none is 1 hop away, as natively: counters.hops)" },
        ParamDoc { name: "rounds", default: "20", doc: "ping-pong rounds measured" },
        ParamDoc { name: "from", default: "compute", doc: "who sends each ping: compute (the main thread, after the pong's handler wakes it) or protocol (the handler of the pong itself); given, counters.round_trip_cycles and round_trip_us report ping to ping" },
        ParamDoc { name: "bytes", default: "0", doc: "0: null active messages; else ping and pong are bulk (DMA) messages of this many bytes (a multiple of 8); given, counters.round_trip_cycles and round_trip_us report ping to ping" },
    ],
};

const PING: HandlerId = HandlerId(0);
const PONG: HandlerId = HandlerId(1);
const FINISHED: HandlerId = HandlerId(2);

#[derive(Default)]
pub struct State {
    sent_at: Vec<f64>,
    arrived_at: Vec<f64>,
    pongs: usize,
    finished: bool,
    /// Pings the pong handler sends itself (`from=protocol`), after the first.
    chained: usize,
    /// Bulk data of each ping and pong (`bytes`; empty: active messages).
    data: Vec<u64>,
}

struct AmLatency {
    partner: ProcId,
    rounds: usize,
    mode: ReceiveMode,
    from_protocol: bool,
    words: usize,
}

/// Send `handler`'s message: an active message, or a bulk one with `data`.
fn send(ctx: &mut dyn HandlerCtx, dest: ProcId, handler: HandlerId, data: &[u64]) {
    if data.is_empty() {
        ctx.send_am(dest, handler, &[]);
    } else {
        ctx.send_bulk(dest, handler, &[], &[data]);
    }
}

fn on_ping(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.arrived_at.push(ctx.now_cycles());
    send(ctx, m.src, PONG, &s.data);
}

fn on_pong(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.pongs += 1;
    if s.chained > 0 {
        // `from=protocol`: the handler that received the pong sends the next ping.
        s.chained -= 1;
        s.sent_at.push(ctx.now_cycles());
        send(ctx, m.src, PING, &s.data);
    }
}

fn on_finished(s: &mut State, _: &mut dyn HandlerCtx, _: &Message<'_>) {
    s.finished = true;
}

impl Program for AmLatency {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_ping, on_pong, on_finished]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    /// Pings and pongs (bulk with `bytes` > 0) go between processor 0 and its partner.
    fn largest_transfer_words(&self, id: ProcId) -> usize {
        if id == 0 || id == self.partner {
            self.words
        } else {
            0
        }
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let chained = if id == 0 && self.from_protocol { self.rounds } else { 0 };
        let data = if id == 0 || id == self.partner { (0..self.words as u64).collect() } else { Vec::new() };
        State { chained, data, ..State::default() }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.barrier();
        node.begin_timing();
        // Round 0 is a warm-up (the partner may still be handling barrier messages); it is
        // not measured.
        if node.id() == 0 {
            // With `from=protocol` the pong handler sends every ping after the first.
            let sends = if self.from_protocol { 0 } else { self.rounds };
            let data = if self.words > 0 { node.state(|s| std::mem::take(&mut s.data)) } else { Vec::new() };
            for r in 0..=sends {
                let t = node.now_cycles();
                node.state(|s| s.sent_at.push(t));
                if data.is_empty() {
                    node.send_am(self.partner, PING, &[]);
                } else {
                    node.send_bulk(self.partner, PING, &[], &[&data]);
                }
                if self.from_protocol {
                    // The pong handler sends every later ping, from its copy of the data.
                    node.state(|s| s.data.clone_from(&data));
                    node.wait_until("last pong", |s| s.pongs > self.rounds);
                } else {
                    node.wait_until("pong", |s| s.pongs > r);
                }
            }
            // Bystanders stay silent until the measurement is over (a barrier arrival at the
            // partner would interrupt it mid-measurement).
            for p in 1..node.nprocs() {
                node.send_am(p, FINISHED, &[]);
            }
        } else {
            node.wait_until("end of measurement", |s| s.finished);
        }
        node.barrier();
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    let rounds: usize = params.get("rounds", crate::params::COUNT)?;
    let from_protocol = match params.raw("from") {
        "compute" => false,
        "protocol" => true,
        other => return Err(AppError::Input(format!("--param from={other}: {} needs compute or protocol", INFO.name))),
    };
    let bytes: usize = params.get("bytes", ("0 or a positive multiple of 8", |b: usize| b.is_multiple_of(8)))?;
    let round_trip = params.given("from") || params.given("bytes");
    if round_trip && rounds < 2 {
        return Err(AppError::Input(format!(
            "--param rounds={rounds}: a round trip (from or bytes given) needs at least 2 rounds"
        )));
    }
    let n = backend.nprocs();
    if n < 2 {
        return Err(AppError::Input(format!("{} needs at least 2 processors, the machine has {n}", INFO.name)));
    }
    let partner = params.at_hops(backend, hops).ok_or_else(|| {
        let max = (1..n).map(|p| backend.hops(0, p)).max().unwrap_or(0);
        AppError::Input(format!(
            "--param hops={hops}: no processor is {hops} hops from processor 0 on this machine (1..={max})"
        ))
    })?;
    let prog = Arc::new(AmLatency { partner, rounds, mode: receive_mode(variant), from_protocol, words: bytes / 8 });
    let out = backend.run(prog).map_err(run_err)?;
    let (sent, arrived) = (&out.states[0].sent_at, &out.states[partner].arrived_at);
    let rounds_done = out.states.iter().skip(1).all(|s| s.finished);
    let ok =
        rounds_done && sent.len() == rounds + 1 && arrived.len() == rounds + 1 && out.states[0].pongs == rounds + 1;
    let clock = backend.cycles_per_us();
    let one_way: Vec<f64> =
        sent.iter().zip(arrived).skip(1).map(|(s, a)| crate::app::cycles_figure(a - s, clock)).collect();
    let mean = crate::app::cycles_figure(one_way.iter().sum::<f64>() / one_way.len().max(1) as f64, clock);
    let spread = crate::app::cycles_figure(one_way.iter().fold(0.0f64, |m, v| m.max((v - mean).abs())), clock);
    let mut counters = BTreeMap::new();
    counters.set(&ONE_WAY_CYCLES, mean);
    counters.set(&ONE_WAY_SPREAD_CYCLES, spread);
    counters.set(&HOPS, backend.hops(0, partner) as f64);
    counters.set(&PARTNER, partner as f64);
    if round_trip {
        // Ping to ping over the measured rounds (round 0, the warm-up, starts the first).
        let gaps: Vec<f64> = sent.windows(2).skip(1).map(|w| w[1] - w[0]).collect();
        let rt = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
        counters.set(&ROUND_TRIP_CYCLES, crate::app::cycles_figure(rt, clock));
        counters.set(&ROUND_TRIP_US, crate::app::cycles_figure(rt, clock) / clock);
    }
    let check = Check {
        ok,
        max_error: if ok { 0.0 } else { 1.0 },
        detail: format!(
            "{} pings sent (1 warm-up), {} arrived, {} pongs",
            sent.len(),
            arrived.len(),
            out.states[0].pongs
        ),
    };
    Ok(result(out.stats, counters, check))
}
