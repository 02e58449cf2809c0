//! The data each EM3D processor keeps in its own memory, laid out as the program had it (see
//! [`crate::private`]).
//!
//! Per kind `k` of node updated (E or H), in this order:
//! - `coef[k]`: one 8-byte coefficient per in-edge;
//! - `src[k]`: one 4-byte neighbour index per in-edge;
//! - `count[k]`: one 4-byte edge count per node;
//!
//! and with messages also, per kind `k` of value:
//! - `vals[k]`: the processor's own values of kind `k`, then its ghost copies (8 bytes each);
//! - `sends[k]`: the 4-byte local indices of the values it sends, reader by reader.

use super::graph::{ProcPlan, E, H};
use crate::private::Shape;

/// One of a processor's private arrays.
#[derive(Clone, Copy, Debug)]
pub enum Array {
    Coef(usize),
    Src(usize),
    Count(usize),
    Vals(usize),
    Sends(usize),
}

impl Array {
    /// Its number in [`shape`]'s order.
    pub fn index(self) -> usize {
        match self {
            Array::Coef(k) => k,
            Array::Src(k) => 2 + k,
            Array::Count(k) => 4 + k,
            Array::Vals(k) => 6 + k,
            Array::Sends(k) => 8 + k,
        }
    }
}

/// The private arrays of the processor with `plan`; the value and send arrays only when the
/// variant sends messages.
pub fn shape(plan: &ProcPlan, messages: bool) -> Shape {
    let mut s = Shape::default();
    for k in [E, H] {
        s.push(plan.phase[k].coef.len(), 8);
    }
    for k in [E, H] {
        s.push(plan.phase[k].coef.len(), 4);
    }
    for k in [E, H] {
        s.push(plan.phase[k].count, 4);
    }
    if messages {
        for k in [E, H] {
            s.push(plan.phase[k].count + plan.ghosts[k], 8);
        }
        for k in [E, H] {
            s.push(plan.sends[k].iter().map(|g| g.local.len()).sum(), 4);
        }
    }
    s
}
