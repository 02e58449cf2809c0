//! `accum`: processor 0 sums an array of `words` integers that lives on the processor `hops`
//! hops away (clean in its home's memory, see [`super::clean_remote_block`]).
//!
//! - `sm`: a plain loop: load each word of the remote array (simulated: a remote read miss per
//!   line, hits for the rest) and add it (`costs.accum_word`: the add and the loop's
//!   increment, compare and branch).
//! - `sm-pf`: the same loop issuing a read prefetch of the next line at the top of each line.
//! - `mp`: copy the array by DMA as `memcpy`'s `mp` does (a request active message, one bulk
//!   reply from the home's handler; see `memcpy` for what the simulator does and does not
//!   charge for the payload), then sum the local copy: each word is a simulated read of the
//!   copier's private memory (the DMA stored the array into memory, not into the cache, so
//!   each line is a local miss) plus `costs.accum_word`.
//!
//! `counters.total_cycles`: from the start to the sum being known. For `mp`,
//! `counters.transfer_cycles` is the copy (request to the end of the reply's handler) and
//! `counters.sum_cycles` the local sum, the time with the transfer excluded.

use super::sched::Sched;
use super::{
    clean_remote_block, fetch_block, on_fetch_reply, on_fetch_request, partner_param, Fetch, HasFetch, Reach,
    SETTLE_CYCLES, WORKER,
};
use crate::app::common::HOPS;
use crate::app::{barrier_kind_of, cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, BarrierKind, Handler, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters accum`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [HOPS];
    TOTAL_CYCLES = "total_cycles", "cycles",
        "from the start to the sum being known";
    TRANSFER_CYCLES = "transfer_cycles", "cycles",
        "the DMA copy: request to the end of the reply's handler (mp only)";
    SUM_CYCLES = "sum_cycles", "cycles",
        "`total_cycles` minus `transfer_cycles`: the local sum after the copy (mp only)";
}

pub const INFO: AppInfo = AppInfo {
    name: "accum",
    summary:
        "sum a remote array: load loop (sm), with prefetch (sm-pf), DMA copy then local sum (mp); counters.total_cycles",
    variants: &["sm", "sm-pf", "mp"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "words", default: "1024", doc: "integers in the array (1 to 262144)" },
        ParamDoc { name: "hops", default: "1", doc: "hops from the summing processor (0) to the array's home (by default 1, or the nearest processor where none is 1 hop away, as natively: counters.hops)" },
    ],
};

struct Accum {
    kind: Reach,
    words: usize,
    home: ProcId,
    cleaner: ProcId,
    line_words: usize,
    accum_word: u64,
    /// The runtime's scheduler costs (`mp`: the summing thread waits blocked for the copy).
    sched: Sched,
}

#[derive(Default)]
pub struct State {
    /// The `mp` copy: the block at its home, the copy at the worker.
    fetch: Fetch,
    sum: u64,
    total_cycles: f64,
    transfer_cycles: f64,
}

/// The array's integer at index `i`: 0 to 999,982, so no sum within the size limit overflows.
pub(crate) fn element(i: usize) -> u64 {
    (i as u64).wrapping_mul(2_654_435_761).wrapping_add(12_345) % 999_983
}

impl HasFetch for State {
    fn fetch(&mut self) -> &mut Fetch {
        &mut self.fetch
    }
    fn fetch_ref(&self) -> &Fetch {
        &self.fetch
    }
}

impl Program for Accum {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_fetch_request, on_fetch_reply]
    }
    fn barrier_kind(&self) -> BarrierKind {
        barrier_kind_of(self.kind != Reach::Dma)
    }
    fn private_arrays(&self, id: ProcId) -> Vec<usize> {
        if id == WORKER && self.kind == Reach::Dma {
            vec![self.words]
        } else {
            Vec::new()
        }
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let source = if id == self.home { (0..self.words).map(element).collect() } else { Vec::new() };
        State { fetch: Fetch { source, wake_cycles: self.sched.wake, ..Fetch::default() }, ..State::default() }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let id = node.id();
        let src = node.alloc_shared(self.words, Placement::OnNode(self.home));
        if self.kind != Reach::Dma {
            let values: Vec<u64> = (0..self.words).map(element).collect();
            clean_remote_block(node, src, &values, self.home, self.cleaner, self.line_words);
        }
        node.barrier();
        node.compute(SETTLE_CYCLES); // the barrier's messages are over before anything is timed
        node.begin_timing();
        if id == WORKER {
            let t0 = node.now_cycles();
            let mut sum = 0u64;
            let mut transfer = 0.0;
            match self.kind {
                Reach::Loop | Reach::Prefetch => {
                    for i in 0..self.words {
                        self.kind.prefetch_ahead(node, src, i, self.words, self.line_words);
                        sum = sum.wrapping_add(node.load(src.word(i)));
                        node.compute(self.accum_word);
                    }
                }
                Reach::Dma => {
                    let local = node.private_array(0);
                    fetch_block(node, self.home, src, self.words, local, &self.sched);
                    transfer = node.now_cycles() - t0;
                    let values = node.state(|s| std::mem::take(&mut s.fetch.received));
                    for (i, &v) in values.iter().take(self.words).enumerate() {
                        node.private_read(local.word(i));
                        sum = sum.wrapping_add(v);
                        node.compute(self.accum_word);
                    }
                }
            }
            let total = node.now_cycles() - t0;
            node.state(|s| {
                s.sum = sum;
                s.total_cycles = total;
                s.transfer_cycles = transfer;
            });
        }
        // No barrier after the timed part: the others' arrivals would interrupt the copier.
    }
}

/// Array length: 1 to 262,144 words (2 MiB), which keeps a run's set-up and memory small.
const WORDS: (&str, fn(usize) -> bool) = ("a whole number from 1 to 262144", |v| (1..=262_144).contains(&v));

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let kind = Reach::of_variant(INFO.name, variant);
    let words: usize = params.get("words", WORDS)?;
    let (hops, home) = partner_param(backend, params, INFO.name)?;
    kind.check_messages(backend, INFO.name)?;
    let cleaner = kind.cleaner(backend, INFO.name, home)?;
    let line_words = (backend.line_bytes() / 8).max(1);
    let accum_word = cost(backend, "accum_word")?;
    let sched = Sched::of(backend)?;
    let out =
        backend.run(Arc::new(Accum { kind, words, home, cleaner, line_words, accum_word, sched })).map_err(run_err)?;

    let want: u64 = (0..words).map(element).sum();
    let s = &out.states[WORKER];
    let mut counters = BTreeMap::new();
    let figure = |c: f64| crate::app::cycles_figure(c, backend.cycles_per_us());
    counters.set(&TOTAL_CYCLES, figure(s.total_cycles));
    if kind == Reach::Dma {
        counters.set(&TRANSFER_CYCLES, figure(s.transfer_cycles));
        // The difference of the two figures, so that transfer + sum = total as printed.
        counters.set(&SUM_CYCLES, figure(figure(s.total_cycles) - figure(s.transfer_cycles)));
    }
    counters.set(&HOPS, hops as f64);
    let ok = s.sum == want && s.total_cycles > 0.0;
    let check = Check {
        ok,
        max_error: if ok { 0.0 } else { 1.0 },
        detail: format!("sum of {words} integers {} vs sequential {want}", s.sum),
    };
    Ok(result(out.stats, counters, check))
}
