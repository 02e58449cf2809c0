//! `grain`: a binary tree of depth `n` whose leaves each run a delay loop of `l` cycles and
//! return their heap number (the root is 1, the children of `k` are `2k` and `2k + 1`), summed
//! by divide and conquer under the lazy-task-creation scheduler. The sum of a complete tree
//! is known in closed form (`4^n + 2^n (2^n - 1) / 2`), and each leaf's number is recorded
//! where it ran, so a leaf lost or run twice is caught.
//!
//! `tree=random`: an irregular tree from the run's seed: below the root (which always splits
//! when `n > 0`) a node at depth `d < n` has two children unless the low two bits of its
//! random word (SplitMix64 of the seed and its heap number) are both zero (probability 1/4);
//! nodes at depth `n` are leaves.

use super::run_tree;
use super::tree::{Expansion, Kind, Task, Tree, TASK_WORDS};
use crate::app::{component_seed, cost, AppError, AppInfo, AppResult, ParamDoc};
use crate::params::Params;
use commlab_api::Backend;
use std::sync::Arc;

pub const INFO: AppInfo = AppInfo {
    name: "grain",
    summary: "lazy task creation: a binary tree of delay loops summed by divide and conquer; counters.speedup, steals",
    variants: &["sm", "mp"],
    counters: super::TREE_COUNTERS,
    params: &[
        ParamDoc { name: "n", default: "12", doc: "depth of the tree (0 to 20; a complete tree has 2^n leaves)" },
        ParamDoc { name: "l", default: "0", doc: "cycles of each leaf's delay loop (0 to 1000000)" },
        ParamDoc { name: "tree", default: "complete", doc: "complete, or random (an irregular tree from the seed)" },
    ],
};

/// The deepest tree accepted (a million leaves).
const MAX_N: usize = 20;

pub(crate) struct Grain {
    n: usize,
    leaf_cycles: u64,
    /// The random tree's seed (None: complete).
    random: Option<u64>,
}

impl Grain {
    fn splits(&self, depth: usize, id: u64) -> bool {
        match self.random {
            _ if depth >= self.n => false,
            None => true,
            Some(seed) => depth == 0 || component_seed(seed, id) & 3 != 0,
        }
    }
}

impl Tree for Grain {
    const COUNTS_EVALUATIONS: bool = false;
    fn root(&self) -> Task {
        let mut t = [0; TASK_WORDS];
        t[1] = 1;
        t
    }
    /// Task: [depth, heap number].
    fn expand(&self, t: &Task) -> Expansion {
        let (depth, id) = (t[0] as usize, t[1]);
        let kind = if self.splits(depth, id) {
            let mut l = [0; TASK_WORDS];
            let mut r = [0; TASK_WORDS];
            l[0] = depth as u64 + 1;
            r[0] = depth as u64 + 1;
            l[1] = 2 * id;
            r[1] = 2 * id + 1;
            Kind::Split(l, r)
        } else {
            Kind::Leaf { value: id, id }
        };
        let work_cycles = if matches!(kind, Kind::Leaf { .. }) { self.leaf_cycles } else { 0 };
        Expansion { work_cycles, evaluations: 0, kind }
    }
    fn combine(left: u64, right: u64) -> u64 {
        left.wrapping_add(right)
    }
    fn max_depth(&self) -> usize {
        self.n
    }
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params, seed: u64) -> Result<AppResult, AppError> {
    let n: usize = params.get("n", ("a whole number from 0 to 20", |v: usize| v <= MAX_N))?;
    let l: u64 = params.get("l", ("a whole number from 0 to 1000000", |v: u64| v <= 1_000_000))?;
    let random = match params.raw("tree") {
        "complete" => None,
        "random" => Some(seed),
        other => return Err(AppError::Input(format!("--param tree={other}: grain needs complete or random"))),
    };
    let lazy_call = cost(backend, "lazy_call")?;
    let tree = Arc::new(Grain { n, leaf_cycles: l, random });
    let mut out = run_tree(backend, variant, tree, lazy_call)?;
    if random.is_none() {
        // The closed form, independent of any tree walk.
        let leaves = 1u64 << n;
        let want = leaves * leaves + leaves * (leaves - 1) / 2;
        let check = &mut out.result.check;
        if out.value != want || out.reference.value != want {
            check.ok = false;
            check.max_error += 1.0;
            check.detail = format!(
                "sum {} (recursion {}) but a complete tree of depth {n} sums to {want}; {}",
                out.value, out.reference.value, check.detail
            );
        } else {
            check.detail = format!("sum {want} as the closed form; {}", check.detail);
        }
    }
    Ok(out.result)
}
