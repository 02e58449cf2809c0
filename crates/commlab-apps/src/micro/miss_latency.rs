//! `miss-latency`: the time of one class of shared-memory miss, as in the Alewife calibration
//! table. Processor 0 (the requester R) accesses lines homed at a processor H that is `hops`
//! network hops away (H = R for the local classes). Before each measured access, an untimed
//! set-up puts the line in the state the class needs:
//!
//! | kind | set-up before R's access |
//! |---|---|
//! | `load-local`, `store-local` | nothing (R is the home; no cache holds the line) |
//! | `store-local-1inv` | one processor next to the home reads the line |
//! | `load-remote`, `store-remote` | nothing (clean at a remote home) |
//! | `load-2party`, `store-2party` | the home itself writes the line (dirty in the home's cache) |
//! | `load-3party`, `store-3party` | a processor next to the home writes it (dirty at a third node) |
//! | `store-5inv` | five processors nearest the home (not the home) read it: the hardware pointers are full |
//! | `store-6inv` | six processors other than the home read it: the sixth overflowed to software |
//! | `load-software` | five processors other than the home read it, so R's read is the sixth remote sharer (software) |
//! | `load-store` | nothing: R reads the clean remote line, then writes it (the two misses' sum) |
//!
//! The measured time runs from the start of the access to its completion (it includes the
//! access's own hit cycle, as an instruction's latency would).

use crate::app::common::HOPS;
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Addr, Backend, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const KINDS: &[&str] = &[
    "load-local",
    "load-remote",
    "load-2party",
    "load-3party",
    "load-software",
    "store-local",
    "store-local-1inv",
    "store-remote",
    "store-2party",
    "store-3party",
    "store-5inv",
    "store-6inv",
    "load-store",
];

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters miss-latency`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [HOPS];
    MISS_CYCLES = "miss_cycles", "cycles",
        "mean latency of the measured miss over the rounds";
    MISS_SPREAD_CYCLES = "miss_spread_cycles", "cycles",
        "largest distance of one round's latency from their mean";
    HOME = "home", "processor",
        "the processor the missed lines are homed on";
}

pub const INFO: AppInfo = AppInfo {
    name: "miss-latency",
    summary: "latency of one class of shared-memory miss (--param kind=...), home --param hops away",
    variants: &["sm"],
    counters: COUNTERS,
    params: &[
        ParamDoc {
            name: "kind",
            default: "load-remote",
            doc: "load-local|load-remote|load-2party|load-3party|load-software|store-local|store-local-1inv|store-remote|store-2party|store-3party|store-5inv|store-6inv|load-store",
        },
        ParamDoc { name: "hops", default: "1", doc: "hops from the requester (processor 0) to the home (by default 1, or the nearest processor where none is 1 hop away, as natively: counters.hops)" },
        ParamDoc { name: "rounds", default: "8", doc: "accesses measured (each on a fresh line)" },
        ParamDoc { name: "stride", default: "512", doc: "bytes between the lines of successive rounds (a multiple of 8; at least the line size, so each round has a line of its own): the Blizzard study's microbenchmark accessed every block of its region in turn (stride = the block size)" },
        ParamDoc { name: "align", default: "8", doc: "the first round's line starts at a multiple of this many bytes (a power of two; e.g. 4096 puts the rounds on whole pages)" },
    ],
};

/// Idle time before each measured access, so the barrier's own messages (which interrupt
/// processors) are over: long enough on a machine whose messages cost tens of microseconds.
const SETTLE_CYCLES: u64 = 20_000;

/// What the set-up does to a line before the measured access.
#[derive(Clone, Debug)]
struct Plan {
    home: ProcId,
    /// Processors that read the line in set-up (in order).
    readers: Vec<ProcId>,
    /// Processor that writes the line in set-up.
    writer: Option<ProcId>,
    store: bool,
    /// Time a load miss and then a store to the same line.
    load_then_store: bool,
    rounds: usize,
    /// Words between the lines of successive rounds.
    stride_words: usize,
    /// The first round's word is at a multiple of this many words.
    align_words: usize,
}

struct MissLatency {
    plan: Plan,
}

#[derive(Default)]
pub struct State {
    latencies: Vec<f64>,
    /// Processor 0: the first round's address.
    first: u64,
}

impl Program for MissLatency {
    type State = State;
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let p = &self.plan;
        let id = node.id();
        let region = node.alloc_shared(p.rounds * p.stride_words + p.align_words - 1, Placement::OnNode(p.home));
        let skip = (p.align_words - (region.0 / 8) as usize % p.align_words) % p.align_words;
        let region = region.word(skip);
        if id == 0 {
            node.state(|s| s.first = region.0);
        }
        node.barrier();
        node.begin_timing();
        for r in 0..p.rounds {
            let a: Addr = region.word(r * p.stride_words);
            for &reader in &p.readers {
                if id == reader {
                    node.load(a);
                }
                node.barrier();
            }
            if p.writer == Some(id) {
                node.store(a, r as u64 + 1);
            }
            node.barrier();
            if id == 0 {
                // Let the barrier's own messages drain before measuring.
                node.compute(SETTLE_CYCLES);
                let t0 = node.now_cycles();
                if p.load_then_store {
                    node.load(a);
                    node.store(a, 1000 + r as u64);
                } else if p.store {
                    node.store(a, 1000 + r as u64);
                } else {
                    node.load(a);
                }
                let t1 = node.now_cycles();
                node.state(|s| s.latencies.push(t1 - t0));
            }
            node.barrier();
        }
    }
}

/// Processors other than `exclude`, nearest to `home` first (ties by id).
fn nearest<B: Backend>(b: &B, home: ProcId, exclude: &[ProcId], k: usize) -> Result<Vec<ProcId>, AppError> {
    let mut others: Vec<ProcId> = (0..b.nprocs()).filter(|p| !exclude.contains(p)).collect();
    others.sort_by_key(|&p| (b.hops(home, p), p));
    if others.len() < k {
        return Err(AppError::Input(format!("this class needs {k} more processors besides the requester and home")));
    }
    others.truncate(k);
    Ok(others)
}

pub fn run<B: Backend>(backend: &B, _variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let kind: &str = &params.resolved()["kind"];
    if !KINDS.contains(&kind) {
        return Err(AppError::Input(format!("--param kind={kind}: valid kinds are {}", KINDS.join(", "))));
    }
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    let rounds: usize = params.get("rounds", crate::params::COUNT)?;
    let stride: usize = params.get(
        "stride",
        ("a multiple of 8 bytes, at least the line size, at most 1048576", |v: usize| {
            v.is_multiple_of(8) && (8..=1 << 20).contains(&v)
        }),
    )?;
    if stride < backend.line_bytes() {
        return Err(AppError::Input(format!(
            "--param stride={stride}: less than the machine's {}-byte line (each round needs a line of its own)",
            backend.line_bytes()
        )));
    }
    let align: usize = params.get(
        "align",
        ("a power of two from 8 to 1048576 bytes", |v: usize| v.is_power_of_two() && (8..=1 << 20).contains(&v)),
    )?;
    let local = kind.ends_with("-local") || kind == "store-local-1inv";
    let home = if local {
        0
    } else {
        params.at_hops(backend, hops).ok_or_else(|| {
            AppError::Input(format!("--param hops={hops}: no processor is {hops} hops from processor 0"))
        })?
    };
    let (readers, writer) = match kind {
        "store-local-1inv" => (nearest(backend, home, &[0], 1)?, None),
        "load-2party" | "store-2party" => (vec![], Some(home)),
        "load-3party" | "store-3party" => (vec![], Some(nearest(backend, home, &[0, home], 1)?[0])),
        // Remote sharers: the directory's pointers track remote copies only (the home's own
        // copy has a local bit), so these classes are about processors other than the home.
        "store-5inv" | "load-software" => (nearest(backend, home, &[0, home], 5)?, None),
        "store-6inv" => (nearest(backend, home, &[0, home], 6)?, None),
        _ => (vec![], None),
    };
    let plan = Plan {
        home,
        readers,
        writer,
        store: kind.starts_with("store") || kind == "load-store",
        load_then_store: kind == "load-store",
        rounds,
        stride_words: stride / 8,
        align_words: align / 8,
    };
    let out = backend.run(Arc::new(MissLatency { plan: plan.clone() })).map_err(run_err)?;
    let lat = &out.states[0].latencies;
    let clock = backend.cycles_per_us();
    let lat: Vec<f64> = lat.iter().map(|&v| crate::app::cycles_figure(v, clock)).collect();
    let mean = crate::app::cycles_figure(lat.iter().sum::<f64>() / lat.len().max(1) as f64, clock);
    let spread = crate::app::cycles_figure(lat.iter().fold(0.0f64, |m, v| m.max((v - mean).abs())), clock);
    let mut counters = BTreeMap::new();
    counters.set(&MISS_CYCLES, mean);
    counters.set(&MISS_SPREAD_CYCLES, spread);
    counters.set(&HOME, home as f64);
    counters.set(&HOPS, backend.hops(0, home) as f64);
    // The stores must have landed: every line holds the requester's last value (or the set-up's).
    let words_per_line = plan.stride_words;
    let base = (out.states[0].first / 8) as usize;
    let ok = lat.len() == rounds
        && (0..rounds).all(|r| {
            let v = out.memory[base + r * words_per_line];
            if plan.store {
                v == 1000 + r as u64
            } else {
                v == plan.writer.map_or(0, |_| r as u64 + 1)
            }
        });
    let check = Check {
        ok,
        max_error: if ok { 0.0 } else { 1.0 },
        detail: format!("{kind}: {} accesses timed, values as stored", lat.len()),
    };
    Ok(result(out.stats, counters, check))
}
