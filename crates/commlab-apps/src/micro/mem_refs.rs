//! `mem-refs`: simulator speed on shared-memory references (used by `commlab bench`).
//! `pattern=hits`: every processor re-reads a block of its own that fits in its cache, so
//! after the first pass every reference hits. `pattern=misses`: every processor reads, a line
//! at a time, a region homed at the next processor that is twice its cache, so every reference
//! misses (capacity misses at a remote home). The check: the sum read equals the sum written.

use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use crate::params::POSITIVE;
use commlab_api::SetCounter;
use commlab_api::{Backend, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters mem-refs`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    REFS = "refs", "count",
        "shared-memory references made, all processors (`refs` each)";
}

pub const INFO: AppInfo = AppInfo {
    name: "mem-refs",
    summary: "streams of shared-memory references that hit (pattern=hits) or miss (pattern=misses)",
    variants: &["sm"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "pattern", default: "hits", doc: "hits (cache-resident) or misses (remote, twice the cache)" },
        ParamDoc { name: "refs", default: "100000", doc: "references per processor" },
        ParamDoc {
            name: "words",
            default: "0",
            doc: "region words per processor (0: 256 for hits, 2 caches' worth for misses)",
        },
    ],
};

struct MemRefs {
    misses: bool,
    refs: usize,
    words: usize,
    stride: usize,
}

#[derive(Default)]
pub struct State {
    sum: u64,
}

impl Program for MemRefs {
    type State = State;
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        let owners: Vec<ProcId> = (0..n * self.words).map(|w| w / self.words).collect();
        let region = node.alloc_shared(n * self.words, Placement::Owners(owners));
        // Each processor fills its own block with 1s.
        for w in 0..self.words {
            node.store(region.word(id * self.words + w), 1);
        }
        node.barrier();
        node.begin_timing();
        let target = if self.misses { (id + 1) % n } else { id };
        let base = target * self.words;
        let mut sum = 0;
        let mut w = 0;
        for _ in 0..self.refs {
            sum += node.load(region.word(base + w));
            w = (w + self.stride) % self.words;
        }
        node.state(|s| s.sum = sum);
        node.barrier();
    }
}

pub fn run<B: Backend>(backend: &B, _variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let pattern: &str = &params.resolved()["pattern"];
    let misses = match pattern {
        "hits" => false,
        "misses" => true,
        other => return Err(AppError::Input(format!("--param pattern={other}: valid patterns are hits, misses"))),
    };
    let refs: usize = params.get("refs", POSITIVE)?;
    let words: usize = params.get("words", ("a whole number >= 0", |_: usize| true))?;
    // Defaults: 2 KiB per processor for hits; for misses, 2 x 64 KiB (Alewife's cache) read a
    // 64-byte stride apart (a new line each reference for lines up to 64 bytes).
    let words = if words > 0 {
        words
    } else if misses {
        16384
    } else {
        256
    };
    let stride = if misses { 8 } else { 1 };
    let out = backend.run(Arc::new(MemRefs { misses, refs, words, stride })).map_err(run_err)?;
    let expected = refs as u64;
    let bad = out.states.iter().filter(|s| s.sum != expected).count();
    let mut counters = BTreeMap::new();
    counters.set(&REFS, (refs * backend.nprocs()) as f64);
    let check = Check {
        ok: bad == 0,
        max_error: bad as f64,
        detail: format!("{pattern}: every processor summed {expected} ones: {}", bad == 0),
    };
    Ok(result(out.stats, counters, check))
}
