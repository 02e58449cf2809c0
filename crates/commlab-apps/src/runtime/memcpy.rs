//! `memcpy`: a remote-to-local memory-to-memory copy of one block of `bytes` bytes. The copier
//! is processor 0; the source block is homed on the processor `hops` hops away and starts clean
//! in its home's memory (see [`super::clean_remote_block`]).
//!
//! - `sm`: a double-word load/store loop: load a word of the remote source, store it into the
//!   local destination (shared memory homed at the copier). Loads and stores are simulated
//!   (remote read misses, local write misses, hits); the loop's own instructions (index
//!   increment, compare, branch) are `costs.memcpy_word` per double word.
//! - `sm-pf`: the same loop, issuing a read prefetch of the next source line at the top of each
//!   line (one line ahead; the first line is a demand miss overlapped with the second's
//!   prefetch).
//! - `mp`: one message with DMA at both ends. The copier sends a request active message; the
//!   source's handler replies with one bulk message whose DMA engine reads the block from
//!   memory (the handler sees it through its private state, which mirrors its memory); the
//!   copier's handler takes the payload, which the receiving DMA has stored into memory.
//!
//! What the simulator charges for `mp` (engine `launch`, `start_handler`; net `on_deliver`):
//! the copier pays the request's send; the source pays interrupt entry and exit, the bulk
//! send's overhead and DMA set-up and per-region costs; the packets leave as the source's DMA
//! engine reads the block (`dma_bytes_per_cycle`) and cross the network at link speed; the
//! copier's handler starts when the last packet has arrived and pays interrupt entry and exit.
//! At the receiving side nothing is charged for the payload itself: the storeback of the
//! bytes into memory (receiving DMA), its memory bandwidth, and any invalidation of cached
//! copies of the destination are not modelled (non-final packets leave the NI input queue as
//! they arrive, as if the DMA engine drained them at once). So `mp` is a lower bound by the
//! receiving DMA's time, which on these machines overlaps the slower network arrival.
//!
//! `--param layout` places the destination against the source: `apart` (the default: source
//! line k and destination line k are an odd number of lines apart, so no source line ever
//! shares a set of a direct-mapped cache with the destination line stored next to it), or
//! `next-line`, a what-if the study does not rule out (it does not give its buffers'
//! addresses): destination line k is one line plus a multiple of 1 MB past source line k, so
//! in any direct-mapped cache of up to 1 MB it shares its set with source line k + 1, the line
//! `sm-pf` has just prefetched, and the store stream evicts each prefetched line before its
//! load. `counters.dst_src_lines` (with `next-line`): the destination's distance from the
//! source in lines.
//!
//! `counters.copy_cycles`: from the start of the copy until the copier may use the
//! destination (the last store for `sm`; the end of the reply's handler for `mp`).
//! `counters.mbytes_per_s`: bytes / copy time at the machine's clock.

use super::sched::Sched;
use super::{
    clean_remote_block, fetch_block, mbytes_per_s, on_fetch_reply, on_fetch_request, partner_param, Fetch, HasFetch,
    Reach, SETTLE_CYCLES, WORKER,
};
use crate::app::common::HOPS;
use crate::app::{barrier_kind_of, cost, result, run_err, AppError, AppInfo, AppResult, Check, ParamDoc};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Addr, Backend, BarrierKind, Handler, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters memcpy`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [HOPS];
    COPY_CYCLES = "copy_cycles", "cycles",
        "the copying processor's time for the copy";
    MBYTES_PER_S = "mbytes_per_s", "MB/s",
        "bytes copied over `copy_cycles`, at the machine's clock";
    DST_SRC_LINES = "dst_src_lines", "lines",
        "the distance from source to destination in cache lines (layout=next-line only)";
}

pub const INFO: AppInfo = AppInfo {
    name: "memcpy",
    summary: "remote-to-local block copy (--param bytes=16..16384): load/store loop (sm), with prefetch (sm-pf), one DMA message (mp); counters.mbytes_per_s",
    variants: &["sm", "sm-pf", "mp"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "bytes", default: "256", doc: "block size in bytes: 16 to 16384, a multiple of 8" },
        ParamDoc { name: "hops", default: "1", doc: "hops from the copier (processor 0) to the source's home (by default 1, or the nearest processor where none is 1 hop away, as natively: counters.hops)" },
        ParamDoc { name: "layout", default: "apart", doc: "apart (source and destination lines never share a direct-mapped cache set) or next-line (a what-if: destination line k shares its set with source line k + 1 in any direct-mapped cache of up to 1 MB; counters.dst_src_lines)" },
    ],
};

/// Bytes of address space whose multiple the `next-line` layout adds (the largest
/// direct-mapped cache it makes collide).
const COLLIDE_SPAN_BYTES: usize = 1 << 20;

struct Memcpy {
    kind: Reach,
    /// `--param layout=next-line`.
    next_line: bool,
    words: usize,
    home: ProcId,
    cleaner: ProcId,
    line_words: usize,
    memcpy_word: u64,
    /// The runtime's scheduler costs (`mp`: the copying thread waits blocked).
    sched: Sched,
}

#[derive(Default)]
pub struct State {
    /// The `mp` copy: the block at its home, the copy at the worker.
    fetch: Fetch,
    copy_cycles: f64,
    /// Where the destination block starts (the copier records it).
    dst: Option<Addr>,
    /// The destination's distance from the source in bytes (addresses need not grow on a
    /// native backend, hence a distance, not a difference).
    distance: u64,
}

/// The source block's value at word `i` (distinct, not a simple pattern).
pub(crate) fn source_value(i: usize) -> u64 {
    (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5151
}

impl HasFetch for State {
    fn fetch(&mut self) -> &mut Fetch {
        &mut self.fetch
    }
    fn fetch_ref(&self) -> &Fetch {
        &self.fetch
    }
}

impl Program for Memcpy {
    type State = State;
    fn handlers(&self) -> Vec<Handler<State>> {
        vec![on_fetch_request, on_fetch_reply]
    }
    fn barrier_kind(&self) -> BarrierKind {
        barrier_kind_of(self.kind != Reach::Dma)
    }
    fn init_state(&self, id: ProcId, _: usize) -> State {
        let source = if id == self.home { (0..self.words).map(source_value).collect() } else { Vec::new() };
        State { fetch: Fetch { source, wake_cycles: self.sched.wake, ..Fetch::default() }, ..State::default() }
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let id = node.id();
        let src = node.alloc_shared(self.words, Placement::OnNode(self.home));
        // `apart`: one line more when the source has an even number of lines, so source line k
        // and destination line k never map to the same set of a direct-mapped cache whatever
        // its size (the distance between them is an odd number of lines). `next-line`: the
        // distance is one line past a multiple of COLLIDE_SPAN_BYTES (regions are contiguous
        // and line-aligned; the distance is recorded and checked).
        let src_lines = self.words.div_ceil(self.line_words);
        let pad_words = if self.next_line {
            (COLLIDE_SPAN_BYTES / 8 + self.line_words).saturating_sub(src_lines * self.line_words)
        } else {
            self.line_words * (1 + src_lines % 2)
        };
        let _pad = node.alloc_shared(pad_words, Placement::OnNode(self.home));
        let dst = node.alloc_shared(self.words, Placement::OnNode(WORKER));
        if self.kind != Reach::Dma {
            let values: Vec<u64> = (0..self.words).map(source_value).collect();
            clean_remote_block(node, src, &values, self.home, self.cleaner, self.line_words);
        }
        node.barrier();
        node.compute(SETTLE_CYCLES); // the barrier's messages are over before anything is timed
        node.begin_timing();
        if id == WORKER {
            let t0 = node.now_cycles();
            match self.kind {
                Reach::Loop | Reach::Prefetch => {
                    for i in 0..self.words {
                        self.kind.prefetch_ahead(node, src, i, self.words, self.line_words);
                        let v = node.load(src.word(i));
                        node.store(dst.word(i), v);
                        node.compute(self.memcpy_word);
                    }
                }
                Reach::Dma => {
                    fetch_block(node, self.home, src, self.words, dst, &self.sched);
                }
            }
            let t1 = node.now_cycles();
            node.state(|s| {
                s.copy_cycles = t1 - t0;
                s.dst = Some(dst);
                s.distance = dst.0.abs_diff(src.0);
            });
        }
        // No barrier after the timed part: the others' arrivals would interrupt the copier.
    }
}

/// The block size in bytes: 16 to 16384, a multiple of 8.
pub(crate) const BYTES: (&str, fn(usize) -> bool) =
    ("a multiple of 8 from 16 to 16384", |b| (16..=16384).contains(&b) && b.is_multiple_of(8));

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let kind = Reach::of_variant(INFO.name, variant);
    let bytes: usize = params.get("bytes", BYTES)?;
    let next_line = match params.raw("layout") {
        "apart" => false,
        "next-line" => true,
        other => return Err(AppError::Input(format!("--param layout={other}: memcpy needs apart or next-line"))),
    };
    let (hops, home) = partner_param(backend, params, INFO.name)?;
    kind.check_messages(backend, INFO.name)?;
    let cleaner = kind.cleaner(backend, INFO.name, home)?;
    let words = bytes / 8;
    let line_words = (backend.line_bytes() / 8).max(1);
    let memcpy_word = cost(backend, "memcpy_word")?;
    let sched = Sched::of(backend)?;
    let prog = Arc::new(Memcpy { kind, next_line, words, home, cleaner, line_words, memcpy_word, sched });
    let out = backend.run(prog).map_err(run_err)?;

    let want: Vec<u64> = (0..words).map(source_value).collect();
    let got: Vec<u64> = match kind {
        Reach::Dma => out.states[WORKER].fetch.received.iter().copied().take(words).collect(),
        Reach::Loop | Reach::Prefetch => match out.states[WORKER].dst {
            Some(dst) => (0..words).map(|i| out.load(dst.word(i))).collect(),
            None => Vec::new(),
        },
    };
    let wrong = (0..words).filter(|&i| got.get(i) != Some(&want[i])).count();
    let line_bytes = backend.line_bytes() as u64;
    let distance = out.states[WORKER].distance;
    // The layout asked for is the one the copy ran with (a different allocator would break it).
    let laid_out = !next_line || distance % COLLIDE_SPAN_BYTES as u64 == line_bytes;
    let cycles = crate::app::cycles_figure(out.states[WORKER].copy_cycles, backend.cycles_per_us());
    let mut counters = BTreeMap::new();
    counters.set(&COPY_CYCLES, cycles);
    counters.set(&MBYTES_PER_S, mbytes_per_s(bytes, cycles, backend.cycles_per_us()));
    counters.set(&HOPS, hops as f64);
    if next_line {
        counters.set(&DST_SRC_LINES, (distance / line_bytes) as f64);
    }
    let check = Check {
        ok: wrong == 0 && cycles > 0.0 && laid_out,
        max_error: wrong as f64,
        detail: format!(
            "{} of {words} destination words hold the source's values{}",
            words - wrong,
            match (next_line, laid_out) {
                (false, _) => String::new(),
                (true, true) =>
                    format!(" (layout next-line: the destination {} lines past the source)", distance / line_bytes),
                (true, false) => format!(
                    " (layout next-line not achieved: the destination {} lines past the source)",
                    distance / line_bytes
                ),
            }
        ),
    };
    Ok(result(out.stats, counters, check))
}
