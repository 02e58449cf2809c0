//! A divide-and-conquer program as the lazy-task schedulers see it: tasks of a few words,
//! each expanding to a leaf value or two subtasks.

/// Words that describe one task (its arguments, as the continuation carries them).
pub(crate) const TASK_WORDS: usize = 6;
pub(crate) type Task = [u64; TASK_WORDS];

/// What expanding one task gives.
pub(crate) enum Kind {
    /// A value (and an identifier, unique among the tree's leaves).
    Leaf { value: u64, id: u64 },
    /// Two tasks whose values are combined, left then right.
    Split(Task, Task),
}

/// One call of the recursive function.
pub(crate) struct Expansion {
    /// Work of this call beyond the call itself (a leaf's delay, integrand evaluations).
    pub work_cycles: u64,
    /// Integrand evaluations made by this call (0 for `grain`).
    pub evaluations: u64,
    pub kind: Kind,
}

/// A divide-and-conquer program.
pub(crate) trait Tree: Send + Sync + 'static {
    /// Whether the program evaluates an integrand (reported as `counters.evaluations`).
    const COUNTS_EVALUATIONS: bool;
    fn root(&self) -> Task;
    fn expand(&self, t: &Task) -> Expansion;
    /// The value of a split from its two children's values (left first).
    fn combine(left: u64, right: u64) -> u64;
    /// The deepest a task can be (the root is depth 0).
    fn max_depth(&self) -> usize;
}
