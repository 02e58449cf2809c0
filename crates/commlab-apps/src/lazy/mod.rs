//! Lazy task creation (Mohr, Kranz & Halstead), the work-stealing scheduler of the Alewife
//! runtime study, and two divide-and-conquer programs on it: `grain` (a binary tree of delay
//! loops) and `aq` (adaptive quadrature).
//!
//! A program is a `Tree` (`tree.rs`): a task either is a leaf (a value) or splits into a left and a right
//! task whose values are combined, always `combine(left, right)` in that order, so a parallel
//! run gives bit-for-bit the answer of the sequential recursion ([`reference`]).
//!
//! # The scheduler (`scheduler.rs`)
//! The return path is kept as data so continuations can migrate. A fork writes a *frame*
//! {parent frame, which side of the parent it fills, join count, stolen flag, left and right
//! values, the right task} and pushes "run the right task, then join into this frame" on the
//! bottom of the processor's deque; the processor runs the left task at once. A leaf's value
//! returns up: if the frame's continuation is still at the bottom of the processor's own
//! deque it is popped and the right task runs (no join); if it was stolen, the value is
//! deposited in the frame and the join counted: whoever arrives second combines and goes on
//! up. An idle processor steals the *oldest* continuation (the top of a victim's deque),
//! trying victims round-robin from its own id + 1, and runs the right task there.
//!
//! - `sm`: deques (homed at their owner), frames (homed at their creator) and the done flag
//!   are simulated shared memory. The owner pushes with plain stores and pops without the
//!   lock, as lazy task creation's queue does: it lowers bottom, then reads top, and takes the
//!   lock only when a thief may be taking the same entry. A thief reads top and bottom (one line; the
//!   lock has a line of its own), and if the deque looks non-empty tries the lock once (a
//!   test-and-set): if another thief holds it, it goes on to its next victim rather than spin
//!   (spinning thieves all share the line of the one busy processor's lock, overflowing its
//!   directory pointers on every release: the speedup then fell as the grain grew). Holding the
//!   lock it raises top, re-reads bottom (giving the entry back if the owner took it) and reads the migrated continuation from the frame with shared
//!   loads. Joins are `fetch_add`s. A frame is reused by its creator: frames it completes
//!   itself go back to its private free list at once; one completed elsewhere is marked
//!   released and reclaimed when the free list runs dry.
//! - `mp` (hybrid): each processor's deque and frames are its private memory. A thief sends a
//!   steal request and waits for the reply (one outstanding request); the victim's handler
//!   takes its oldest continuation and replies with it (an active message, or a DMA message
//!   when the continuation exceeds the machine's argument cap) or refuses. A value returning
//!   to a frame on another processor is a message whose handler does the join there and, if
//!   that completes the frame, carries the combined value on up (locally, or by another
//!   message). The root's completion is broadcast.
//!
//! # What is simulated and what is charged
//! Every call of the recursive function (expanding one task, leaf or split) is charged
//! `costs.lazy_call` (a procedure call and return with its test and the add of two results),
//! plus the leaf's work: `grain`'s delay loop of `l` cycles, `aq`'s `costs.aq_eval` per
//! integrand evaluation. Everything the scheduler adds is simulated references: the frame's
//! words and the deque push (shared stores for `sm`, private writes for `mp`), the pop (a store and
//! loads, with the lock only on a conflict with a thief; or a private read), steals, joins and the free list (private reads and writes).
//! A handler cannot make timed references, so the `mp` handlers are charged a cache hit
//! (`HandlerCtx::private_hits`, the machine's `memory.hit_cycles`) per word of deque or frame
//! they touch, on top of the machine's message costs.
//! An idle processor's failed steal attempt also costs its loop's own instructions
//! (`costs.sched_idle_loop`: the runtime's idle loop, see `runtime::sched`), and a victim's
//! handler that refuses a steal request (`mp`) costs `costs.sched_refuse`.
//! When a processor's pool of frames is exhausted it runs the task it was about to split as a
//! plain recursion without forking (counted as `inlined_tasks`; the pool holds twice the
//! tree's depth plus 16 frames, so this is rare).
//!
//! # Speedup
//! `counters.speedup` divides the sequential running time of the same recursion without the
//! scheduler (`lazy_call` per task plus the leaves, on one processor of the same machine) by
//! the parallel time from the start to the root's completion.

pub mod aq;
pub mod grain;
mod scheduler;
mod tree;

use crate::app::common::{SEQUENTIAL_CYCLES, SPEEDUP};
use crate::app::{result, run_err, AppError, AppResult, Check};
use commlab_api::Backend;
use commlab_api::SetCounter;
use std::collections::BTreeMap;
use std::sync::Arc;
use tree::{Kind, Task, Tree};

commlab_api::counters! {
    /// The counters of both lazy-task-creation apps (grain and aq), beside the engine's, each
    /// declared once; `run_tree` sets them through these declarations.
    pub TREE_COUNTERS [SEQUENTIAL_CYCLES, SPEEDUP];
    PARALLEL_CYCLES = "parallel_cycles", "cycles",
        "from the first processor's start to the root's completion";
    STEALS_ATTEMPTED = "steals_attempted", "count",
        "steal attempts by idle processors, all processors";
    STEALS_SUCCEEDED = "steals_succeeded", "count",
        "steal attempts that took a task";
    TASKS_MIGRATED = "tasks_migrated", "count",
        "tasks that ran away from their creator: continuations stolen, and joins into a frame another processor made";
    INLINED_TASKS = "inlined_tasks", "count",
        "forks run inline because no frame was free";
    LEAVES = "leaves", "count",
        "leaf tasks that ran";
    SCHEDULER_MESSAGES_SENT = "scheduler_messages_sent", "messages",
        "messages the scheduler's code sent (steal requests, joins, the done broadcast), all processors";
    SCHEDULER_MESSAGES_HANDLED = "scheduler_messages_handled", "messages",
        "scheduler messages handled, all processors";
}

commlab_api::counters! {
    /// The counter of trees that count their evaluations (aq).
    pub EVALUATION_COUNTERS;
    EVALUATIONS = "evaluations", "count",
        "function evaluations the tree's tasks made, all processors (aq)";
}

/// Argument words of `mp`'s join message.
const JOIN_ARGS: usize = 2;

/// The sequential recursion on the host: the answer every run is checked against.
pub(crate) struct Reference {
    pub value: u64,
    /// Leaf identifiers, sorted.
    pub leaves: Vec<u64>,
    pub evaluations: u64,
}

pub(crate) fn reference<T: Tree>(tree: &T) -> Reference {
    fn go<T: Tree>(tree: &T, t: &Task, r: &mut Reference) -> u64 {
        let e = tree.expand(t);
        r.evaluations += e.evaluations;
        match e.kind {
            Kind::Leaf { value, id } => {
                r.leaves.push(id);
                value
            }
            Kind::Split(l, rt) => {
                let a = go(tree, &l, r);
                let b = go(tree, &rt, r);
                T::combine(a, b)
            }
        }
    }
    let mut r = Reference { value: 0, leaves: Vec::new(), evaluations: 0 };
    r.value = go(tree, &tree.root(), &mut r);
    r.leaves.sort_unstable();
    r
}

/// What a scheduled run gave, before the app adds its own check.
pub(crate) struct Outcome {
    pub value: u64,
    pub reference: Reference,
    pub result: AppResult,
}

/// Run `tree` under the scheduler in `variant` (`sm` or `mp`) and the sequential recursion on
/// one processor; check the answer, the leaves and the evaluations against [`reference`].
pub(crate) fn run_tree<B: Backend, T: Tree>(
    backend: &B,
    variant: &str,
    tree: Arc<T>,
    lazy_call: u64,
) -> Result<Outcome, AppError> {
    let mp = match variant {
        "sm" => false,
        "mp" => true,
        other => unreachable!("variant `{other}` is listed but not handled"),
    };
    // A join carries (frame, side) and a value; a stolen continuation that does not fit the
    // arguments goes by DMA.
    if mp && backend.max_am_args() < JOIN_ARGS {
        return Err(AppError::Input(format!(
            "variant mp needs active messages of at least {JOIN_ARGS} argument words; the machine allows {}",
            backend.max_am_args()
        )));
    }
    let reference = reference(&*tree);
    let seq_backend = backend.with_nprocs(1).map_err(run_err)?;
    let seq = seq_backend.run(Arc::new(scheduler::Sequential::new(Arc::clone(&tree), lazy_call))).map_err(run_err)?;
    let s0 = &seq.states[0];
    let sequential_cycles = s0.finished_at.unwrap_or(f64::NAN) - s0.start;
    let seq_value = s0.result;

    let sched = crate::runtime::sched::Sched::of(backend)?;
    let prog = scheduler::Lazy::new(Arc::clone(&tree), mp, lazy_call, backend.max_am_args(), &sched);
    let out = backend.run(Arc::new(prog)).map_err(run_err)?;
    let start = out.states.iter().map(|s| s.start).fold(f64::INFINITY, f64::min);
    let finishes: Vec<(f64, u64)> =
        out.states.iter().filter_map(|s| s.finished_at.zip(s.result).filter(|_| s.finisher)).collect();
    let mut leaves: Vec<u64> = out.states.iter().flat_map(|s| s.leaves.iter().copied()).collect();
    leaves.sort_unstable();
    let sum = |f: fn(&scheduler::State) -> u64| out.states.iter().map(f).sum::<u64>();
    let evaluations = sum(|s| s.evaluations);
    let errors = sum(|s| s.errors);
    let (parallel_cycles, value) = match finishes.as_slice() {
        [(t, v)] => (t - start, Some(*v)),
        _ => (f64::NAN, None),
    };
    let mut faults = Vec::new();
    if finishes.len() != 1 {
        faults.push(format!("{} processors completed the root (want 1)", finishes.len()));
    }
    if value != Some(reference.value) {
        faults.push(format!("answer {value:?} differs from the sequential recursion's {}", reference.value));
    }
    if seq_value != Some(reference.value) {
        faults.push(format!("the one-processor baseline gave {seq_value:?}, not {}", reference.value));
    }
    if leaves != reference.leaves {
        faults.push(format!(
            "{} leaves ran, the tree has {} (lost or duplicated tasks)",
            leaves.len(),
            reference.leaves.len()
        ));
    }
    if evaluations != reference.evaluations {
        faults.push(format!("{evaluations} evaluations, the recursion makes {}", reference.evaluations));
    }
    if errors != 0 {
        faults.push(format!("{errors} scheduler invariant violations"));
    }
    let mut counters = BTreeMap::new();
    counters.set(&SEQUENTIAL_CYCLES, sequential_cycles);
    counters.set(&PARALLEL_CYCLES, parallel_cycles);
    counters.set(&SPEEDUP, sequential_cycles / parallel_cycles);
    counters.set(&STEALS_ATTEMPTED, sum(|s| s.steals_attempted) as f64);
    counters.set(&STEALS_SUCCEEDED, sum(|s| s.steals_succeeded) as f64);
    counters.set(&TASKS_MIGRATED, sum(|s| s.migrated) as f64);
    counters.set(&INLINED_TASKS, sum(|s| s.inlined) as f64);
    counters.set(&LEAVES, leaves.len() as f64);
    counters.set(&SCHEDULER_MESSAGES_SENT, sum(|s| s.sent) as f64);
    counters.set(&SCHEDULER_MESSAGES_HANDLED, sum(|s| s.handled) as f64);
    let ok = faults.is_empty();
    let check = Check {
        ok,
        max_error: faults.len() as f64,
        detail: if ok {
            format!(
                "answer equals the sequential recursion's; each of the {} leaves ran exactly once",
                reference.leaves.len()
            )
        } else {
            faults.join("; ")
        },
    };
    let mut r = result(out.stats, counters, check);
    if T::COUNTS_EVALUATIONS {
        r.counters.set(&EVALUATIONS, evaluations as f64);
    }
    Ok(Outcome { value: value.unwrap_or(0), reference, result: r })
}
