//! A sweep's grid of points, never materialized: a point is an index.

use super::axis::{Axis, Val};

/// A sweep's grid: its axes. A point is an index whose digits, first axis outermost, pick one
/// value per axis; nothing per point is kept, so points are built one at a time.
pub(super) struct Grid {
    pub(super) axes: Vec<Axis>,
    /// Points per step of each axis' index.
    stride: Vec<usize>,
    len: usize,
}

impl Grid {
    /// The grid of `axes` (their product is at most [`MAX_RUNS`], checked by the caller).
    pub(super) fn new(axes: Vec<Axis>) -> Grid {
        let mut stride = vec![1; axes.len()];
        for k in (0..axes.len().saturating_sub(1)).rev() {
            stride[k] = stride[k + 1] * axes[k + 1].values.len();
        }
        let len = axes.iter().map(|a| a.values.len()).product();
        Grid { axes, stride, len }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The value of axis `k` at point `p`.
    pub(super) fn val(&self, p: usize, k: usize) -> &Val {
        let values = &self.axes[k].values;
        &values[(p / self.stride[k]) % values.len()]
    }

    pub(super) fn describe(&self, p: usize) -> String {
        (0..self.axes.len()).map(|k| format!("{}={}", self.axes[k].key, self.val(p, k))).collect::<Vec<_>>().join(" ")
    }
}
