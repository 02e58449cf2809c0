//! `am-throughput`: `senders` processors stream active messages to processor 0, whose handler
//! costs `handler_cycles`. Reports the delivered payload rate and how long the senders stalled
//! on a full NI output queue (`memory_ni_wait`): with an expensive handler the receiver's
//! input queue fills, packets back up in the network and the senders stall.

use super::{receive_mode, MP_VARIANTS};
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use crate::params::{NON_NEGATIVE, POSITIVE};
use commlab_api::SetCounter;
use commlab_api::{Backend, Category, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters am-throughput`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    DELIVERED_PAYLOAD_BYTES_PER_CYCLE = "delivered_payload_bytes_per_cycle", "bytes/cycle",
        "argument bytes of the messages delivered after the first, over the receiver's time from its first handler entry to its last";
    MESSAGES_PER_KCYCLE = "messages_per_kcycle", "messages/1000 cycles",
        "messages delivered after the first per thousand cycles of that same window";
    SENDER_MEMORY_NI_WAIT_CYCLES = "sender_memory_ni_wait_cycles", "cycles",
        "mean over the senders of their time in the memory/NI-wait category (stalls on a full network interface)";
}

pub const INFO: AppInfo = AppInfo {
    name: "am-throughput",
    summary: "K senders stream active messages to processor 0; delivered bytes/cycle and sender NI stalls",
    variants: MP_VARIANTS,
    counters: COUNTERS,
    params: &[
        ParamDoc {
            name: "senders",
            default: "8",
            doc: "number of sending processors (1..nprocs-1; by default 8, or nprocs-1 where fewer)",
        },
        ParamDoc { name: "messages", default: "200", doc: "messages per sender" },
        ParamDoc {
            name: "args",
            default: "4",
            doc: "u64 arguments per message (payload; by default 4, or as many as the machine's messages carry)",
        },
        ParamDoc { name: "handler_cycles", default: "0", doc: "work done by the receiving handler" },
    ],
};

const DATA: HandlerId = HandlerId(0);

#[derive(Default)]
pub struct State {
    received: u64,
    checksum: u64,
    first_entry_cycles: f64,
    last_entry_cycles: f64,
    handler_cycles: u64,
}

struct AmThroughput {
    senders: usize,
    messages: usize,
    args: usize,
    handler_cycles: u64,
    mode: ReceiveMode,
}

fn on_data(s: &mut State, ctx: &mut dyn HandlerCtx, m: &Message<'_>) {
    if s.received == 0 {
        s.first_entry_cycles = ctx.now_cycles();
    }
    s.last_entry_cycles = ctx.now_cycles();
    s.received += 1;
    s.checksum = s.checksum.wrapping_add(m.args.iter().sum::<u64>());
    ctx.compute(s.handler_cycles);
}

impl Program for AmThroughput {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_data]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State { handler_cycles: self.handler_cycles, ..State::default() }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.barrier();
        node.begin_timing();
        let id = node.id();
        if id == 0 {
            let total = (self.senders * self.messages) as u64;
            node.wait_until("all messages", |s| s.received == total);
        } else if id <= self.senders {
            let mut args = vec![0u64; self.args];
            for i in 0..self.messages {
                args.iter_mut().for_each(|a| *a = (id * 1_000_000 + i) as u64);
                node.send_am(0, DATA, &args);
            }
        }
        node.barrier();
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let n = backend.nprocs();
    let mut senders: usize = params.get("senders", POSITIVE)?;
    // The default on a machine of fewer processors: every processor but the receiver.
    if !params.given("senders") && n >= 2 {
        senders = senders.min(n - 1);
    }
    if senders >= n {
        return Err(AppError::Input(format!("--param senders={senders}: needs 1..={} on {n} processors", n - 1)));
    }
    let messages: usize = params.get("messages", crate::params::COUNT)?;
    let mut args: usize = params.get("args", ("a whole number 0..=64", |a| a <= 64))?;
    // As `senders`: the default is lowered to what a message carries; a value given above that
    // is refused before anything runs.
    let most = backend.max_am_args();
    if !params.given("args") {
        args = args.min(most);
    } else if args > most {
        return Err(AppError::Input(format!(
            "--param args={args}: this machine's active messages carry at most {most} u64 arguments (messaging.max_arg_words = {})",
            2 * most
        )));
    }
    let handler_cycles: u64 = params.get("handler_cycles", NON_NEGATIVE)?;
    let prog = Arc::new(AmThroughput { senders, messages, args, handler_cycles, mode: receive_mode(variant) });
    let out = backend.run(prog).map_err(run_err)?;
    let r = &out.states[0];
    let expected_sum: u64 = (1..=senders)
        .flat_map(|id| (0..messages).map(move |i| (id * 1_000_000 + i) as u64 * args as u64))
        .fold(0u64, |a, b| a.wrapping_add(b));
    let total = (senders * messages) as u64;
    let ok = r.received == total && r.checksum == expected_sum;
    // Between the first and the last handler entry at the receiver (the senders may start
    // before the receiver has left the set-up barrier, so its timed region is no window).
    let window = (r.last_entry_cycles - r.first_entry_cycles).max(1e-9);
    let delivered = total.saturating_sub(1);
    let mut counters = BTreeMap::new();
    counters.set(&DELIVERED_PAYLOAD_BYTES_PER_CYCLE, (delivered * 8 * args as u64) as f64 / window);
    counters.set(&MESSAGES_PER_KCYCLE, delivered as f64 * 1000.0 / window);
    let wait: f64 = (1..=senders).map(|p| out.stats.procs[p].get(Category::MemoryNiWait)).sum::<f64>() / senders as f64;
    counters.set(&SENDER_MEMORY_NI_WAIT_CYCLES, wait);
    let check = Check {
        ok,
        max_error: (total as f64 - r.received as f64).abs(),
        detail: format!(
            "{} of {total} messages received, checksum {}",
            r.received,
            if r.checksum == expected_sum { "ok" } else { "wrong" }
        ),
    };
    Ok(result(out.stats, counters, check))
}
