//! `aq`: adaptive quadrature of a fixed function over the unit square under the
//! lazy-task-creation scheduler.
//!
//! The integrand ([`integrand`]) is a sum of two Gaussian bumps, a narrow one and a wide one,
//! so the recursion is deep around the narrow peak and shallow elsewhere:
//!
//! ```text
//! f(x, y) = sum over TERMS (a, cx, cy, s) of  a exp(-((x - cx)^2 + (y - cy)^2) / s),   0 <= x, y <= 1
//! ```
//!
//! Each bump is a product of two one-dimensional Gaussians, so the exact integral is a sum of
//! products of error functions (the test computes it independently by fine one-dimensional
//! quadrature).
//!
//! A task is a rectangle with its coarse estimate (2x2-point Gauss-Legendre, 4 evaluations).
//! Expanding it halves the longer side and estimates both halves the same way (8 evaluations);
//! if the halves' sum differs from the coarse estimate by at most `tolerance` times the
//! rectangle's share of the square's area (and the rectangle is at least [`MIN_DEPTH`] splits
//! deep), or the rectangle is [`MAX_DEPTH`] splits deep, it
//! is a leaf whose value is that sum; otherwise the two halves are its children. The root
//! also makes its own coarse estimate. Each evaluation is charged `costs.aq_eval` (the
//! integrand and its weighted add into the estimate); the rest of a call is in
//! `costs.lazy_call`.

use super::run_tree;
use super::tree::{Expansion, Kind, Task, Tree, TASK_WORDS};
use crate::app::{cost, AppError, AppInfo, AppResult, ParamDoc};
use crate::params::Params;
use commlab_api::Backend;
use commlab_api::SetCounter;
use std::sync::Arc;

commlab_api::counters! {
    /// The counters aq reports beside the engine's (`commlab counters aq`): the tree's, and the
    /// integral.
    pub COUNTERS [super::PARALLEL_CYCLES, super::STEALS_ATTEMPTED, super::STEALS_SUCCEEDED, super::TASKS_MIGRATED, super::INLINED_TASKS, super::LEAVES, super::SCHEDULER_MESSAGES_SENT, super::SCHEDULER_MESSAGES_HANDLED, super::EVALUATIONS, crate::app::common::SEQUENTIAL_CYCLES, crate::app::common::SPEEDUP];
    INTEGRAL = "integral", "value",
        "the computed integral";
}

pub const INFO: AppInfo = AppInfo {
    name: "aq",
    summary: "lazy task creation: adaptive quadrature of two Gaussian bumps on the unit square; counters.speedup",
    variants: &["sm", "mp"],
    counters: COUNTERS,
    params: &[ParamDoc {
        name: "tolerance",
        default: "1e-8",
        doc: "absolute error allowed over the square, shared by area (1e-9 to 1)",
    }],
};

/// The bumps: amplitude, centre x, centre y, width s.
pub const TERMS: [(f64, f64, f64, f64); 2] = [(1.0, 0.3, 0.4, 0.004), (0.5, 0.7, 0.75, 0.05)];
/// The deepest rectangle (2^-15 on a side).
pub const MAX_DEPTH: usize = 30;
/// Every rectangle shallower than this splits (an 8 x 8 grid at least), so the estimates
/// cannot all miss the narrow peak and agree by accident.
pub const MIN_DEPTH: usize = 6;
/// Tasks the recursion may make before the tolerance is refused as too fine.
const MAX_TASKS: usize = 1 << 21;

/// The integrand.
pub fn integrand(x: f64, y: f64) -> f64 {
    TERMS.iter().map(|&(a, cx, cy, s)| a * (-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / s).exp()).sum()
}

/// 2x2-point Gauss-Legendre estimate of the integral over [x0, x1] x [y0, y1].
fn gauss(x0: f64, x1: f64, y0: f64, y1: f64) -> f64 {
    let g = 0.5 / 3f64.sqrt();
    let (xm, xh, ym, yh) = ((x0 + x1) / 2.0, x1 - x0, (y0 + y1) / 2.0, y1 - y0);
    let mut sum = 0.0;
    for sx in [-g, g] {
        for sy in [-g, g] {
            sum += integrand(xm + sx * xh, ym + sy * yh);
        }
    }
    sum * xh * yh / 4.0
}

pub(crate) struct Aq {
    tolerance: f64,
    eval_cycles: u64,
}

fn task(x0: f64, x1: f64, y0: f64, y1: f64, estimate: f64, depth: u64) -> Task {
    let mut t = [0; TASK_WORDS];
    for (w, v) in t.iter_mut().zip([x0, x1, y0, y1, estimate]) {
        *w = v.to_bits();
    }
    t[5] = depth;
    t
}

impl Tree for Aq {
    const COUNTS_EVALUATIONS: bool = true;
    fn root(&self) -> Task {
        task(0.0, 1.0, 0.0, 1.0, f64::NAN, 0)
    }
    /// Task: [x0, x1, y0, y1, coarse estimate (NaN: not made yet), depth].
    fn expand(&self, t: &Task) -> Expansion {
        let [x0, x1, y0, y1, est] = [0, 1, 2, 3, 4].map(|k| f64::from_bits(t[k]));
        let depth = t[5];
        let mut evaluations = 8;
        let coarse = if est.is_nan() {
            evaluations += 4;
            gauss(x0, x1, y0, y1)
        } else {
            est
        };
        let (a, b) = if x1 - x0 >= y1 - y0 {
            let xm = (x0 + x1) / 2.0;
            ((x0, xm, y0, y1), (xm, x1, y0, y1))
        } else {
            let ym = (y0 + y1) / 2.0;
            ((x0, x1, y0, ym), (x0, x1, ym, y1))
        };
        let ea = gauss(a.0, a.1, a.2, a.3);
        let eb = gauss(b.0, b.1, b.2, b.3);
        let fine = ea + eb;
        let area = (x1 - x0) * (y1 - y0);
        let depth_ok = depth as usize >= MIN_DEPTH;
        let kind = if depth as usize >= MAX_DEPTH || depth_ok && (fine - coarse).abs() <= self.tolerance * area {
            // Leaf ids: a rectangle's lower-left corner and depth identify it.
            let id = (x0 * (1u64 << 16) as f64) as u64 | ((y0 * (1u64 << 16) as f64) as u64) << 17 | depth << 34;
            Kind::Leaf { value: fine.to_bits(), id }
        } else {
            Kind::Split(task(a.0, a.1, a.2, a.3, ea, depth + 1), task(b.0, b.1, b.2, b.3, eb, depth + 1))
        };
        Expansion { work_cycles: evaluations * self.eval_cycles, evaluations, kind }
    }
    fn combine(left: u64, right: u64) -> u64 {
        (f64::from_bits(left) + f64::from_bits(right)).to_bits()
    }
    fn max_depth(&self) -> usize {
        MAX_DEPTH
    }
}

/// The integral by the sequential recursion with `tolerance` (no simulation), and its tasks.
pub fn sequential_integral(tolerance: f64) -> (f64, usize) {
    let tree = Aq { tolerance, eval_cycles: 0 };
    let r = super::reference(&tree);
    (f64::from_bits(r.value), r.leaves.len())
}

pub fn run<B: Backend>(backend: &B, variant: &str, params: &Params) -> Result<AppResult, AppError> {
    let tolerance: f64 = params.get("tolerance", ("a number from 1e-9 to 1", |t: f64| (1e-9..=1.0).contains(&t)))?;
    let lazy_call = cost(backend, "lazy_call")?;
    let eval_cycles = cost(backend, "aq_eval")?;
    let (_, leaves) = sequential_integral(tolerance);
    if 2 * leaves > MAX_TASKS {
        return Err(AppError::Input(format!(
            "--param tolerance={tolerance}: the recursion makes {} tasks, more than aq allows ({MAX_TASKS}); use a larger tolerance",
            2 * leaves - 1
        )));
    }
    let out = run_tree(backend, variant, Arc::new(Aq { tolerance, eval_cycles }), lazy_call)?;
    let mut r = out.result;
    r.counters.set(&INTEGRAL, f64::from_bits(out.value));
    Ok(r)
}
