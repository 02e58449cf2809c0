//! `barrier`: the cost of a global barrier. `sm`: a combining tree of shared counters and
//! flags (fetch-and-add, spinning in the cache); `mp`: a combining tree of active messages.
//! First, untimed check rounds: every processor writes its round into a shared slot before the
//! barrier and reads two other processors' slots after it, so a barrier that lets a processor
//! through early is caught. Then, once the last check round's messages are over, `barriers`
//! barriers back to back are timed (`counters.messages` are theirs alone).
//!
//! `--param arity` picks the combining tree's fan-in: `machine` (the machine's
//! `memory.barrier_arity` or `messaging.barrier_arity`), `study` (the shapes of the Alewife
//! runtime study: a binary shared-memory tree, six levels at 64 processors, and a message tree
//! of arity 8, two levels at 64 processors), or a number K >= 2. The tree is the engine's:
//! processor p's children are K p + 1 ..= K p + K, so it has `tree_levels` levels of arrivals
//! (the depth of processor n - 1). The shared-memory tree keeps each processor's counter and
//! release flag on their own lines homed at that processor, so every spin is on a line of the
//! spinner's own memory: a child's arrival (a fetch-and-add on the parent's counter) is a write
//! miss to the parent's node, and the parent's next look at its counter a local miss that takes
//! the line back from the child's cache; a release (a store to the child's flag) is a write miss
//! to the child's node, and the child's next look a local miss that takes it back from the
//! parent. On a pair of processors that is 4 misses and 8 protocol messages per barrier; with
//! more children per parent, a child's fetch-and-add may find the counter line in a sibling's
//! cache (a forward to a third node).

use crate::app::ParamDoc;
use crate::app::{result, run_err, AppError, AppInfo, AppResult, Check};
use crate::params::Params;
use crate::params::POSITIVE;
use commlab_api::SetCounter;
use commlab_api::{Backend, BarrierKind, Node, Placement, ProcId, Program};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Cycles after the untimed barriers: longer than any barrier's wakeups take to arrive.
const SETTLE_CYCLES: u64 = 20_000;

commlab_api::counters! {
    /// The counters this app reports beside the engine's (`commlab counters barrier`), each declared
    /// once; its code sets them through these declarations.
    pub COUNTERS;
    CYCLES_PER_BARRIER = "cycles_per_barrier", "cycles",
        "the longest processor's time for all barriers over their number";
    TREE_ARITY = "tree_arity", "count",
        "the barrier tree's arity used (the machine's, the study's or the parameter's)";
    TREE_LEVELS = "tree_levels", "count",
        "levels of a tree of that arity over the machine's processors";
}

pub const INFO: AppInfo = AppInfo {
    name: "barrier",
    summary: "global barrier, shared-memory tree (sm) vs message tree (mp); counters.cycles_per_barrier",
    variants: &["sm", "mp"],
    counters: COUNTERS,
    params: &[
        ParamDoc { name: "barriers", default: "10", doc: "barriers timed" },
        ParamDoc {
            name: "arity",
            default: "machine",
            doc: "fan-in of the combining tree: machine (the machine's memory.barrier_arity / messaging.barrier_arity), study (the Alewife runtime study's: sm 2, mp 8), or a whole number >= 2; counters.tree_arity, counters.tree_levels",
        },
    ],
};

/// Untimed rounds that check the barrier separates phases.
const CHECK_ROUNDS: u64 = 3;

struct Barrier {
    kind: BarrierKind,
    barriers: usize,
    /// The tree's fan-in if not the machine's.
    arity: Option<usize>,
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
    fn barrier_arity(&self) -> Option<usize> {
        self.arity
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
        // The last untimed barrier's wakeups are over before timing starts (they would count
        // among the timed barriers' messages otherwise).
        node.compute(SETTLE_CYCLES);
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
    let arity = match params.raw("arity") {
        "machine" => None,
        "study" => Some(study_arity(kind)),
        _ => Some(params.get("arity", ARITY)?),
    };
    let out = backend.run(Arc::new(Barrier { kind, barriers, arity })).map_err(run_err)?;
    let early: u64 = out.states.iter().map(|s| s.early).sum();
    let elapsed = out.states.iter().map(|s| s.elapsed).fold(0.0, f64::max);
    let used = arity.unwrap_or_else(|| backend.barrier_arity(kind));
    let mut counters = BTreeMap::new();
    counters.set(&CYCLES_PER_BARRIER, crate::app::cycles_figure(elapsed / barriers as f64, backend.cycles_per_us()));
    counters.set(&TREE_ARITY, used as f64);
    counters.set(&TREE_LEVELS, tree_levels(backend.nprocs(), used) as f64);
    let check = Check {
        ok: early == 0,
        max_error: early as f64,
        detail: format!("{CHECK_ROUNDS} checked rounds: {early} reads saw a processor that had not arrived"),
    };
    Ok(result(out.stats, counters, check))
}

/// `--param arity=K`: a fan-in of at least 2 (one above the processor count is a flat tree).
const ARITY: (&str, fn(usize) -> bool) = ("machine, study or a whole number >= 2", |v| v >= 2);

/// The fan-in of the Alewife runtime study's barrier of `kind`: a binary combining tree in
/// shared memory, a tree of arity 8 of messages.
fn study_arity(kind: BarrierKind) -> usize {
    match kind {
        BarrierKind::SharedMemory => 2,
        BarrierKind::Messages => 8,
    }
}

/// Levels of arrivals in the combining tree of fan-in `arity` over `n` processors numbered
/// as the engine numbers them (processor p's parent is (p - 1) / arity): the depth of the
/// deepest, last processor.
fn tree_levels(n: usize, arity: usize) -> usize {
    let (mut p, mut levels) = (n.saturating_sub(1), 0);
    while p > 0 {
        p = (p - 1) / arity;
        levels += 1;
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::tree_levels;

    #[test]
    fn tree_levels_count_arrival_stages() {
        assert_eq!(tree_levels(1, 2), 0);
        assert_eq!(tree_levels(2, 2), 1);
        assert_eq!(tree_levels(3, 2), 1);
        assert_eq!(tree_levels(4, 2), 2);
        assert_eq!(tree_levels(9, 8), 1);
        assert_eq!(tree_levels(10, 8), 2);
        assert_eq!(tree_levels(64, usize::MAX), 1);
    }
}
