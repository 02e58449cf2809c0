//! `bisection-bw`: every processor streams bulk messages to its partner across the network's
//! bisection (same row, other half), so every application byte crosses the cut once. Reports
//! the application's payload bytes crossing the bisection per processor cycle (add the
//! packet headers to compare with the bisection bandwidth minus the cross-traffic rate).

use super::{receive_mode, MP_VARIANTS};
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters bisection-bw`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    APP_PAYLOAD_BYTES_PER_CYCLE = "app_payload_bytes_per_cycle", "bytes/cycle",
        "payload bytes every processor sent to its bisection partner, over the time from the first processor's start to the last handler entry";
    BISECTION_BYTES_PER_CYCLE = "bisection_bytes_per_cycle", "bytes/cycle",
        "the network's bisection bandwidth as the backend states it (the ceiling)";
}

pub const INFO: AppInfo = AppInfo {
    name: "bisection-bw",
    summary: "all processors stream bulk messages across the bisection; app bytes crossing per cycle",
    variants: MP_VARIANTS,
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "bytes", default: "256", doc: "payload bytes per message (a multiple of 8)" },
        ParamDoc { name: "messages", default: "100", doc: "messages per processor" },
    ],
};

const DATA: HandlerId = HandlerId(0);

#[derive(Default)]
pub struct State {
    received: usize,
    bytes: u64,
    last_entry_cycles: f64,
}

struct Bisection {
    partners: Vec<ProcId>,
    words: usize,
    messages: usize,
    mode: ReceiveMode,
}

fn on_data(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.received += 1;
    s.bytes += 8 * m.payload.len() as u64;
    s.last_entry_cycles = ctx.now_cycles();
}

impl Program for Bisection {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_data]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.barrier();
        node.begin_timing();
        let data = vec![7u64; self.words];
        let to = self.partners[node.id()];
        for _ in 0..self.messages {
            node.send_bulk(to, DATA, &[], &[&data]);
            if self.mode == ReceiveMode::Polling {
                node.poll();
            }
        }
        let m = self.messages;
        node.wait_until("partner's messages", |s| s.received == m);
        node.barrier();
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let bytes: usize = params.get("bytes", ("a positive multiple of 8", |b: usize| b > 0 && b.is_multiple_of(8)))?;
    let messages: usize = params.get("messages", crate::params::COUNT)?;
    let n = backend.nprocs();
    let partners: Option<Vec<ProcId>> = (0..n).map(|p| backend.bisection_partner(p)).collect();
    let partners = partners
        .ok_or_else(|| AppError::Input("bisection-bw needs a network whose cut dimension has even size".to_string()))?;
    let prog = Arc::new(Bisection { partners, words: bytes / 8, messages, mode: receive_mode(variant) });
    let out = backend.run(prog).map_err(run_err)?;
    let start = out.stats.procs.iter().map(|p| p.start).fold(f64::INFINITY, f64::min);
    let end = out.states.iter().map(|s| s.last_entry_cycles).fold(0.0, f64::max);
    let ok = out.states.iter().all(|s| s.received == messages && s.bytes == (messages * bytes) as u64);
    let payload = (n * messages * bytes) as f64;
    let mut counters = BTreeMap::new();
    counters.set(&APP_PAYLOAD_BYTES_PER_CYCLE, payload / (end - start));
    counters.set(&BISECTION_BYTES_PER_CYCLE, backend.bisection_bytes_per_cycle());
    let check = Check {
        ok,
        max_error: if ok { 0.0 } else { 1.0 },
        detail: format!("every processor received {messages} messages of {bytes} bytes: {ok}"),
    };
    Ok(result(out.stats, counters, check))
}
