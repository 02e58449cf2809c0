//! `bulk-bw`: DMA transfers of `bytes` bytes from processor 0 to a processor `hops` away, one
//! at a time (`repeat` of them, a barrier between two). Bandwidth = bytes / (handler entry at
//! the receiver - start of the send), of the fastest transfer; `first_transfer_cycles` keeps
//! the first one's time when there are several. Natively the first transfer meets cold caches
//! and the later ones warm ones, as a memcpy benchmark's best of several repetitions does.
//!
//! `stream=N` measures throughput instead (the Blizzard COW study's §6.5.3, Fig. 3): processor
//! 0's main thread sends N transfers back to back, without barriers;
//! `counters.stream_mb_per_s` is N x bytes over the time from the first send's start to the
//! last transfer's handler entry.

use super::{receive_mode, MP_VARIANTS};
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters bulk-bw`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    STREAM_CYCLES = "stream_cycles", "cycles",
        "from the first transfer's send start to the last's handler entry at the partner (only with `stream` > 0)";
    STREAM_MB_PER_S = "stream_mb_per_s", "MB/s",
        "bytes of the streamed transfers over `stream_cycles`, at the machine's clock";
    TRANSFER_CYCLES = "transfer_cycles", "cycles",
        "the fastest transfer: send start to handler entry at the partner";
    FIRST_TRANSFER_CYCLES = "first_transfer_cycles", "cycles",
        "the first transfer's send start to handler entry (only when `repeat` > 1)";
    BYTES_PER_CYCLE = "bytes_per_cycle", "bytes/cycle",
        "the transfer's bytes over `transfer_cycles`";
}

pub const INFO: AppInfo = AppInfo {
    name: "bulk-bw",
    summary: "one DMA bulk transfer; counters.bytes_per_cycle = bytes / (send start to handler entry)",
    variants: MP_VARIANTS,
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "bytes", default: "4096", doc: "bytes transferred (a multiple of 8)" },
        ParamDoc { name: "repeat", default: "1", doc: "transfers, one after another; the fastest is reported (natively the first pays for cold caches)" },
        ParamDoc { name: "stream", default: "0", doc: "0: one transfer at a time; N: a stream of N transfers sent back to back, counters.stream_mb_per_s (N x bytes / first send to last handler entry, in MB/s) and stream_cycles" },
        ParamDoc { name: "hops", default: "1", doc: "network hops between sender and receiver (by default 1, or the nearest processor where none is 1 hop away, as natively)" },
    ],
};

const BULK: HandlerId = HandlerId(0);

/// Word `i` of processor 0's data.
fn word(i: usize) -> u64 {
    (i as u64).wrapping_mul(2654435761)
}

#[derive(Default)]
pub struct State {
    data: Vec<u64>,
    /// Start of each send (processor 0).
    sent_at: Vec<f64>,
    /// Handler entry of each transfer (the partner).
    arrived_at: Vec<f64>,
    /// Whether the last transfer's payload held every word processor 0 sent ([`word`]):
    /// checked where it arrived, reading it once and writing nothing, as the host's copy
    /// floor's receiver does (a copy into fresh memory would fault 16 MB of new pages in per
    /// transfer natively and push the next transfer's buffer out of the caches).
    received_intact: bool,
    /// Words a transfer carries (the payload may be longer: DMA alignment pads it).
    words: usize,
}

struct BulkBw {
    words: usize,
    repeat: usize,
    partner: ProcId,
    mode: ReceiveMode,
    /// Transfers sent back to back (`stream`; 0: one at a time).
    stream: usize,
}

fn on_bulk(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.arrived_at.push(ctx.now_cycles());
    s.received_intact =
        m.payload.len() >= s.words && m.payload[..s.words].iter().enumerate().all(|(i, &w)| w == word(i));
}

impl Program for BulkBw {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_bulk]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    /// Processor 0 sends every transfer.
    fn largest_transfer_words(&self, id: ProcId) -> usize {
        if id == 0 {
            self.words
        } else {
            0
        }
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let data = if id == 0 { (0..self.words).map(word).collect() } else { Vec::new() };
        State { data, words: self.words, ..State::default() }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.barrier();
        node.begin_timing();
        if self.stream > 0 {
            if node.id() == 0 {
                let data = node.state(|s| std::mem::take(&mut s.data));
                for _ in 0..self.stream {
                    let t = node.now_cycles();
                    node.send_bulk(self.partner, BULK, &[], &[&data]);
                    node.state(|s| s.sent_at.push(t));
                }
                node.state(|s| s.data = data);
            } else if node.id() == self.partner {
                node.wait_until("stream", |s| s.arrived_at.len() >= self.stream);
            }
            node.barrier();
            return;
        }
        for k in 0..self.repeat {
            if k > 0 {
                node.barrier();
            }
            if node.id() == 0 {
                let data = node.state(|s| std::mem::take(&mut s.data));
                let t = node.now_cycles();
                node.send_bulk(self.partner, BULK, &[], &[&data]);
                node.state(|s| {
                    s.sent_at.push(t);
                    s.data = data;
                });
            } else if node.id() == self.partner {
                node.wait_until("bulk message", |s| s.arrived_at.len() > k);
            }
        }
        node.barrier();
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let bytes: usize = params.get("bytes", ("a positive multiple of 8", |b: usize| b > 0 && b.is_multiple_of(8)))?;
    let repeat: usize = params.get("repeat", ("a whole number >= 1", |r: usize| r >= 1))?;
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    let stream: usize = params.get("stream", ("a whole number >= 0", |_: usize| true))?;
    if stream > 0 && params.given("repeat") {
        return Err(AppError::Input(
            "--param stream and --param repeat: give one (a stream sends its transfers back to back)".into(),
        ));
    }
    let repeat = if stream > 0 { stream } else { repeat };
    let n = backend.nprocs();
    if n < 2 {
        return Err(AppError::Input(format!("{} needs at least 2 processors, the machine has {n}", INFO.name)));
    }
    let partner = params
        .at_hops(backend, hops)
        .ok_or_else(|| AppError::Input(format!("--param hops={hops}: no processor is {hops} hops from processor 0")))?;
    let prog = Arc::new(BulkBw { words: bytes / 8, repeat, partner, mode: receive_mode(variant), stream });
    let out = backend.run(prog).map_err(run_err)?;
    let (s, r) = (&out.states[0], &out.states[partner]);
    let ok = r.arrived_at.len() == repeat && s.sent_at.len() == repeat && r.received_intact;
    let clock = backend.cycles_per_us();
    let times: Vec<f64> =
        r.arrived_at.iter().zip(&s.sent_at).map(|(a, t)| crate::app::cycles_figure(a - t, clock)).collect();
    let cycles = times.iter().copied().reduce(f64::min).unwrap_or(f64::NAN);
    let mut counters = BTreeMap::new();
    if stream > 0 {
        let span = match (s.sent_at.first(), r.arrived_at.last()) {
            (Some(a), Some(b)) => crate::app::cycles_figure(b - a, clock),
            _ => f64::NAN,
        };
        counters.set(&STREAM_CYCLES, span);
        counters.set(&STREAM_MB_PER_S, (stream * bytes) as f64 / (span / clock));
    }
    counters.set(&TRANSFER_CYCLES, cycles);
    if repeat > 1 {
        counters.set(&FIRST_TRANSFER_CYCLES, times.first().copied().unwrap_or(f64::NAN));
    }
    counters.set(&BYTES_PER_CYCLE, bytes as f64 / cycles);
    let check = Check {
        ok,
        max_error: if ok { 0.0 } else { 1.0 },
        detail: if repeat == 1 {
            format!("{} of {bytes} bytes arrived intact", if ok { bytes } else { 0 })
        } else {
            format!(
                "{} of {repeat} transfers arrived, the last with {} of {bytes} bytes intact",
                r.arrived_at.len(),
                if ok { bytes } else { 0 }
            )
        },
    };
    Ok(result(out.stats, counters, check))
}
