//! `remote-bw`: one-sided transfer bandwidth. Processor 0 moves `bytes` bytes between its own
//! memory (contiguous) and the memory of a processor `hops` away (every `stride` words), by
//! gets (`fetch`) or puts (`deposit`), and waits for completion (`quiet`).
//!
//! How the transfer is programmed is the variant: `fetch`/`deposit` hand the whole transfer to
//! one get/put (the machine splits it into its largest requests, e.g. the T3E's 8-word vector
//! E-register operations); `fetch-single`/`deposit-single` issue one word per call (requests of
//! one word, still pipelined up to the machine's outstanding limit); `fetch-blocking` waits for
//! each word before asking for the next (naive remote loads). Counters: `mbytes_per_s` (bytes
//! / time at the machine's clock), `bytes_per_cycle`, `transfer_cycles`.
//!
//! The barriers are the shared-memory tree: with the message tree, the idle processors'
//! arrivals at the closing barrier interrupted processor 0 during its timed transfer (on the
//! T3E about 4 interrupts of 3600 cycles each inside a 64 KB transfer of about 57 000), which
//! the study's transfers did not suffer (the T3D and T3E have hardware barrier networks that
//! interrupt no processor); the shared-memory tree costs processor 0 nothing while it waits.

use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Addr, Backend, BarrierKind, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters remote-bw`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    TRANSFER_CYCLES = "transfer_cycles", "cycles",
        "processor 0's time from the transfer's start to its end (one-sided get or put)";
    BYTES_PER_CYCLE = "bytes_per_cycle", "bytes/cycle",
        "the transfer's bytes over `transfer_cycles`";
    MBYTES_PER_S = "mbytes_per_s", "MB/s",
        "`bytes_per_cycle` at the machine's clock";
}

pub const INFO: AppInfo = AppInfo {
    name: "remote-bw",
    summary: "one-sided get/put bandwidth between two processors (machines with [remote]); counters.mbytes_per_s",
    variants: &["fetch", "deposit", "fetch-single", "deposit-single", "fetch-blocking"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "bytes", default: "65536", doc: "bytes transferred (a multiple of 8)" },
        ParamDoc { name: "stride", default: "1", doc: "words between consecutive remote words (1: contiguous)" },
        ParamDoc { name: "hops", default: "1", doc: "network hops between the two processors" },
    ],
};

#[derive(Clone, Copy, PartialEq)]
enum How {
    Whole,
    Single,
    Blocking,
}

struct RemoteBw {
    words: usize,
    stride: usize,
    partner: ProcId,
    put: bool,
    how: How,
}

/// (start, end) of the transfer in cycles, and what processor 0 (fetch) or the partner
/// (deposit) finds in the destination afterwards.
#[derive(Default)]
pub struct State {
    span: (f64, f64),
    found: Vec<u64>,
}

fn value(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xabcd
}

impl Program for RemoteBw {
    type State = State;
    fn barrier_kind(&self) -> BarrierKind {
        // Not the message tree, whose arrivals would interrupt processor 0 mid-transfer.
        BarrierKind::SharedMemory
    }
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let id = node.id();
        let local = node.alloc_shared(self.words, Placement::OnNode(0));
        let remote = node.alloc_shared(self.words * self.stride, Placement::OnNode(self.partner));
        // The source holds the data before timing starts.
        let (src, src_stride) = if self.put { (local, 1) } else { (remote, self.stride) };
        let owner = if self.put { 0 } else { self.partner };
        if id == owner {
            for i in 0..self.words {
                node.store(src.word(i * src_stride), value(i));
            }
        }
        node.barrier();
        node.begin_timing();
        if id == 0 {
            let t0 = node.now_cycles();
            let (r, s) = (self.stride, 1);
            let one = |node: &mut N, i: usize| {
                if self.put {
                    node.put(remote.word(i * r), r, local.word(i), s, 1);
                } else {
                    node.get(local.word(i), s, remote.word(i * r), r, 1);
                }
            };
            match self.how {
                How::Whole if self.put => node.put(remote, r, local, s, self.words),
                How::Whole => node.get(local, s, remote, r, self.words),
                How::Single => (0..self.words).for_each(|i| one(node, i)),
                How::Blocking => (0..self.words).for_each(|i| {
                    one(node, i);
                    node.quiet();
                }),
            }
            node.quiet();
            let t1 = node.now_cycles();
            node.state(|s| s.span = (t0, t1));
        }
        node.barrier();
        let (dst, dst_stride) = if self.put { (remote, self.stride) } else { (local, 1) };
        let reader = if self.put { self.partner } else { 0 };
        if id == reader {
            let found: Vec<u64> =
                (0..self.words).map(|i| node.load(Addr(dst.0 + 8 * (i * dst_stride) as u64))).collect();
            node.state(|s| s.found = found);
        }
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let bytes: usize = params.get("bytes", ("a positive multiple of 8", |b: usize| b > 0 && b.is_multiple_of(8)))?;
    let stride: usize = params.get("stride", ("a whole number >= 1", |s: usize| s >= 1))?;
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    if !backend.one_sided() {
        return Err(AppError::Input(format!(
            "{} moves data by get/put, but this machine has no one-sided remote access (no [remote] section in its machine file)",
            INFO.name
        )));
    }
    let n = backend.nprocs();
    if n < 2 {
        return Err(AppError::Input(format!("{} needs at least 2 processors, the machine has {n}", INFO.name)));
    }
    let partner = (1..n)
        .find(|&p| backend.hops(0, p) == hops)
        .ok_or_else(|| AppError::Input(format!("--param hops={hops}: no processor is {hops} hops from processor 0")))?;
    let (put, how) = match variant {
        "fetch" => (false, How::Whole),
        "deposit" => (true, How::Whole),
        "fetch-single" => (false, How::Single),
        "deposit-single" => (true, How::Single),
        _ => (false, How::Blocking),
    };
    let words = bytes / 8;
    let out = backend.run(Arc::new(RemoteBw { words, stride, partner, put, how })).map_err(run_err)?;
    let reader = if put { partner } else { 0 };
    let found = &out.states[reader].found;
    let bad = (0..words).filter(|&i| found.get(i) != Some(&value(i))).count();
    let (t0, t1) = out.states[0].span;
    let cycles = t1 - t0;
    let per_cycle = bytes as f64 / cycles;
    let mut counters = BTreeMap::new();
    counters.set(&TRANSFER_CYCLES, cycles);
    counters.set(&BYTES_PER_CYCLE, per_cycle);
    counters.set(&MBYTES_PER_S, per_cycle * backend.cycles_per_us());
    let check = Check {
        ok: bad == 0,
        max_error: if bad == 0 { 0.0 } else { 1.0 },
        detail: format!("{} of {words} words arrived intact", words - bad),
    };
    Ok(result(out.stats, counters, check))
}
