//! `alltoall-stress`: every processor sends `messages` active messages to pseudo-random
//! processors (possibly itself), drawn from a stream seeded by (seed, sender). Every receiver
//! knows how many to expect (the plan is computed once, before the run) and waits for them.
//! The check: every (sender, sequence number) arrives exactly once, at the right receiver.

use super::{receive_mode, MP_VARIANTS};
use crate::app::ParamDoc;
use crate::app::{component_seed, result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Handler, HandlerCtx, HandlerId, Message, Node, ProcId, Program, ReceiveMode};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters alltoall-stress`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    MESSAGES_PER_PROC = "messages_per_proc", "messages",
        "messages each processor sends to pseudo-random destinations (the `messages` parameter)";
}

pub const INFO: AppInfo = AppInfo {
    name: "alltoall-stress",
    summary: "every node sends M messages to pseudo-random nodes; checks each is delivered exactly once",
    variants: MP_VARIANTS,
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "messages", default: "100", doc: "messages each processor sends" },
        ParamDoc { name: "args", default: "2", doc: "u64 arguments per message (at least 2: sender, sequence)" },
    ],
};

const DATA: HandlerId = HandlerId(0);

pub struct State {
    expected: usize,
    received: Vec<(u64, u64)>,
}

struct AllToAll {
    /// dests[p][i]: receiver of processor p's i-th message.
    dests: Vec<Vec<ProcId>>,
    expected: Vec<usize>,
    args: usize,
    mode: ReceiveMode,
}

fn on_data(s: &mut State, _: &mut dyn HandlerCtx, m: &Message<'_>) {
    s.received.push((m.args[0], m.args[1]));
}

impl Program for AllToAll {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_data]
    }
    fn receive_mode(&self) -> ReceiveMode {
        self.mode
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        State { expected: self.expected[id], received: Vec::with_capacity(self.expected[id]) }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        node.barrier();
        node.begin_timing();
        let id = node.id();
        let mut args = vec![0u64; self.args];
        for (i, &d) in self.dests[id].iter().enumerate() {
            args[0] = id as u64;
            args[1] = i as u64;
            node.send_am(d, DATA, &args);
            if self.mode == ReceiveMode::Polling {
                node.poll();
            }
        }
        node.wait_until("all expected messages", |s| s.received.len() == s.expected);
        node.barrier();
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let m: usize = params.get("messages", crate::params::COUNT)?;
    let args: usize = params.get("args", ("a whole number 2..=64", |a| (2..=64).contains(&a)))?;
    let n = backend.nprocs();
    let dests: Vec<Vec<ProcId>> = (0..n)
        .map(|p| {
            let mut rng = ChaCha8Rng::seed_from_u64(component_seed(seed, p as u64));
            (0..m).map(|_| rng.random_range(0..n)).collect()
        })
        .collect();
    let mut expected = vec![0; n];
    dests.iter().flatten().for_each(|&d| expected[d] += 1);
    let prog = Arc::new(AllToAll { dests, expected, args, mode: receive_mode(variant) });
    let out = backend.run(Arc::clone(&prog)).map_err(run_err)?;
    // Exactly once: sort what each receiver got and compare with what was sent to it.
    let mut faults = 0usize;
    let mut want: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
    for (p, ds) in prog.dests.iter().enumerate() {
        for (i, &d) in ds.iter().enumerate() {
            want[d].push((p as u64, i as u64));
        }
    }
    for (d, st) in out.states.iter().enumerate() {
        let mut got = st.received.clone();
        got.sort_unstable();
        if got != want[d] {
            faults += 1;
        }
    }
    let mut counters = BTreeMap::new();
    counters.set(&MESSAGES_PER_PROC, m as f64);
    let check = Check {
        ok: faults == 0,
        max_error: faults as f64,
        detail: format!("{} messages; {faults} receivers with missing, duplicated or misdelivered messages", n * m),
    };
    Ok(result(out.stats, counters, check))
}
