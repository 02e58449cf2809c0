//! `barrier`: the cost of a global barrier. `sm`: a combining tree of shared counters and
//! flags (fetch-and-add, spinning in the cache); `mp`: a combining tree of active messages.
//! First, untimed check rounds: every processor writes its round into a shared slot before the
//! barrier and reads two other processors' slots after it, so a barrier that lets a processor
//! through early is caught. Then `barriers` barriers back to back are timed.

use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use crate::params::POSITIVE;
use commlab_api::{Backend, BarrierKind, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const INFO: AppInfo = AppInfo {
    name: "barrier",
    summary: "global barrier, shared-memory tree (sm) vs message tree (mp); counters.cycles_per_barrier",
    variants: &["sm", "mp"],
    params: &[ParamDoc { name: "barriers", default: "10", doc: "barriers timed" }],
};

/// Untimed rounds that check the barrier separates phases.
const CHECK_ROUNDS: u64 = 3;

struct Barrier {
    kind: BarrierKind,
    barriers: usize,
}

#[derive(Default)]
pub struct State {
    early: u64,
    elapsed: f64,
}

impl Program for Barrier {
    type State = State;
    fn barrier_kind(&self) -> BarrierKind {
        self.kind
    }
    fn init_state(&self, _: ProcId, _: usize) -> State {
        State::default()
    }
    fn main<N: Node<State = State>>(&self, node: &mut N) {
        let (id, n) = (node.id(), node.nprocs());
        let slots = node.alloc_shared(n * 8, Placement::Cyclic);
        for round in 1..=CHECK_ROUNDS {
            node.store(slots.word(id * 8), round);
            node.barrier();
            for p in [(id + 1) % n, (id + n / 2) % n] {
                if node.load(slots.word(p * 8)) < round {
                    node.state(|s| s.early += 1);
                }
            }
        }
        node.barrier();
        node.begin_timing();
        let t0 = node.now_cycles();
        for b in 0..self.barriers {
            node.progress(b as u64, self.barriers as u64);
            node.barrier();
        }
        let t1 = node.now_cycles();
        node.state(|s| s.elapsed = t1 - t0);
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let barriers: usize = params.get("barriers", POSITIVE)?;
    let kind = if variant == "sm" { BarrierKind::SharedMemory } else { BarrierKind::Messages };
    let out = backend.run(Arc::new(Barrier { kind, barriers })).map_err(run_err)?;
    let early: u64 = out.states.iter().map(|s| s.early).sum();
    let elapsed = out.states.iter().map(|s| s.elapsed).fold(0.0, f64::max);
    let mut counters = BTreeMap::new();
    counters.insert("cycles_per_barrier".into(), elapsed / barriers as f64);
    let check = Check {
        ok: early == 0,
        max_error: early as f64,
        detail: format!("{CHECK_ROUNDS} checked rounds: {early} reads saw a processor that had not arrived"),
    };
    Ok(result(out.stats, counters, check))
}
