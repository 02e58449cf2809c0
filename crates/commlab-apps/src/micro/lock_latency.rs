//! `lock-latency`: one remote lock acquire + release by processor 0, on a lock word homed
//! `hops` away; the reported time is the acquire plus the release (the critical section, which
//! bumps a counter on another line to check mutual exclusion, is not counted).
//! `kind=unshared`: no other cache holds the lock's line. `kind=shared`: `waiters` other
//! processors keep reading the lock word (spinning in their caches) all through, so the acquire
//! must invalidate their copies, they read the line again, and the release invalidates them
//! once more.

use crate::app::common::HOPS;
use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use commlab_api::SetCounter;
use commlab_api::{Backend, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters lock-latency`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS [HOPS];
    LOCK_CYCLES = "lock_cycles", "cycles",
        "mean time of one remote lock acquire plus release over the rounds";
}

pub const INFO: AppInfo = AppInfo {
    name: "lock-latency",
    summary: "remote lock acquire + release (--param kind=unshared|shared), lock homed --param hops away",
    variants: &["sm"],
    counters: COUNTERS,
    params: &[
        ParamDoc {
            name: "kind",
            default: "unshared",
            doc: "unshared (no other copies) or shared (other processors spin on it)",
        },
        ParamDoc { name: "hops", default: "1", doc: "hops from processor 0 to the lock's home (by default 1, or the nearest processor where none is 1 hop away, as natively: counters.hops)" },
        ParamDoc { name: "waiters", default: "2", doc: "processors spinning on the lock (kind=shared)" },
        ParamDoc { name: "rounds", default: "8", doc: "acquire/release pairs measured (each on a fresh lock)" },
    ],
};

/// Words between locks (512 bytes: one line each on any machine; the counter sits half-way).
const STRIDE_WORDS: usize = 64;
/// The value that ends the waiters' spinning.
const DONE: u64 = u64::MAX;

struct LockLatency {
    home: ProcId,
    waiters: Vec<ProcId>,
    rounds: usize,
}

#[derive(Default)]
pub struct State {
    latencies: Vec<f64>,
    acquired: u64,
}

impl Program for LockLatency {
    type State = State;
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let id = node.id();
        let locks = node.alloc_shared(self.rounds * STRIDE_WORDS, Placement::OnNode(self.home));
        // A word beside each lock that the holder bumps (checks mutual exclusion).
        node.barrier();
        node.begin_timing();
        for r in 0..self.rounds {
            let lock = locks.word(r * STRIDE_WORDS);
            let count = locks.word(r * STRIDE_WORDS + STRIDE_WORDS / 2);
            if self.waiters.contains(&id) {
                // Keep a copy of the lock's line until processor 0 says it is done.
                node.spin_until("the end of the round", lock, |v| v == DONE);
            }
            if id == 0 {
                node.compute(2000); // the waiters are spinning in their caches by now
                let t0 = node.now_cycles();
                node.lock(lock);
                let t1 = node.now_cycles();
                let c = node.load(count);
                node.store(count, c + 1);
                let t2 = node.now_cycles();
                node.unlock(lock);
                let t3 = node.now_cycles();
                node.state(|s| {
                    s.latencies.push((t1 - t0) + (t3 - t2));
                    s.acquired += 1;
                });
                if !self.waiters.is_empty() {
                    node.store(lock, DONE);
                }
            }
            node.barrier();
        }
    }
}

pub fn run<B: Backend>(backend: &B, _variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let kind: &str = &params.resolved()["kind"];
    if kind != "unshared" && kind != "shared" {
        return Err(AppError::Input(format!("--param kind={kind}: valid kinds are unshared, shared")));
    }
    let hops: usize = params.get("hops", ("a whole number >= 0", |_: usize| true))?;
    let nwaiters: usize = params.get("waiters", crate::params::POSITIVE)?;
    if kind == "unshared" && params.given("waiters") {
        return Err(AppError::Input(format!(
            "--param waiters={nwaiters} applies to kind=shared (other caches hold the lock's line), not to kind=unshared"
        )));
    }
    let rounds: usize = params.get("rounds", crate::params::COUNT)?;
    let n = backend.nprocs();
    let home = params
        .at_hops(backend, hops)
        .ok_or_else(|| AppError::Input(format!("--param hops={hops}: no processor is {hops} hops from processor 0")))?;
    let waiters: Vec<ProcId> = if kind == "shared" {
        let mut others: Vec<ProcId> = (1..n).filter(|&p| p != home).collect();
        others.sort_by_key(|&p| (backend.hops(home, p), p));
        if others.len() < nwaiters {
            return Err(AppError::Input(format!("--param waiters={nwaiters}: only {} other processors", others.len())));
        }
        others.truncate(nwaiters);
        others
    } else {
        Vec::new()
    };
    let out = backend.run(Arc::new(LockLatency { home, waiters, rounds })).map_err(run_err)?;
    let lat = &out.states[0].latencies;
    let mean = lat.iter().sum::<f64>() / lat.len().max(1) as f64;
    let base = out.memory.len() - rounds * STRIDE_WORDS;
    let free = if kind == "shared" { DONE } else { 0 };
    let counts_ok = (0..rounds).all(|r| {
        out.memory[base + r * STRIDE_WORDS + STRIDE_WORDS / 2] == 1 && out.memory[base + r * STRIDE_WORDS] == free
    });
    let ok = lat.len() == rounds && counts_ok;
    let mut counters = BTreeMap::new();
    counters.set(&LOCK_CYCLES, crate::app::cycles_figure(mean, backend.cycles_per_us()));
    counters.set(&HOPS, backend.hops(0, home) as f64);
    let check = Check {
        ok,
        max_error: if ok { 0.0 } else { 1.0 },
        detail: format!("{kind}: {} acquire/release pairs; every lock released and its counter bumped once", lat.len()),
    };
    Ok(result(out.stats, counters, check))
}
