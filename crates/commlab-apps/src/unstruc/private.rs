//! The data each UNSTRUC processor keeps in its own memory, laid out as the program had it (see
//! [`crate::private`]), in this order:
//! - `EDGE_NODES`: two 4-byte endpoint indices per edge it computes (shared-array record
//!   numbers with shared memory, own-then-ghost indices with messages);
//! - `EDGE_COEF`: four single-precision (4-byte) coefficients per edge (weight and direction);
//! - `FACE_NODES`: a 4-byte node count and four 4-byte node indices per face;
//! - `FACE_COEF`: four single-precision coefficients per face (coefficient, boundary state);
//!
//! and with messages also:
//! - `VALS_0`, `VALS_1`: its own nodes' values, double-buffered (three 8-byte words a node);
//! - `ACC`: its own nodes' accumulated results (three words a node);
//! - `GHOSTS`: its copies of remote nodes' old values (three words a ghost);
//! - `SENDS`: the 4-byte indices of the values it sends, reader by reader;
//! - `OUT`: with `bulk`, the results for remote nodes accumulated before they are sent (three
//!   words a ghost; empty otherwise).
//!
//! Node values are 8-byte words in every variant (the simulator's shared memory is 64-bit);
//! the study's program kept them in single precision.

use super::plan::ProcPlan;
use crate::private::Shape;

pub const EDGE_NODES: usize = 0;
pub const EDGE_COEF: usize = 1;
pub const FACE_NODES: usize = 2;
pub const FACE_COEF: usize = 3;
pub const VALS: [usize; 2] = [4, 5];
pub const ACC: usize = 6;
pub const GHOSTS: usize = 7;
pub const SENDS: usize = 8;
pub const OUT: usize = 9;

/// The private arrays of the processor with `plan`: the value arrays only when the variant
/// sends messages, the outgoing results only with `bulk`.
pub fn shape(plan: &ProcPlan, messages: bool, bulk: bool) -> Shape {
    let mut s = Shape::default();
    s.push(2 * plan.edges.len(), 4);
    s.push(4 * plan.edges.len(), 4);
    s.push(5 * plan.faces.len(), 4);
    s.push(4 * plan.faces.len(), 4);
    if messages {
        s.push(3 * plan.count, 8);
        s.push(3 * plan.count, 8);
        s.push(3 * plan.count, 8);
        s.push(3 * plan.ghosts.len(), 8);
        s.push(plan.sends.iter().map(|x| x.local.len()).sum(), 4);
        s.push(if bulk { 3 * plan.ghosts.len() } else { 0 }, 8);
    }
    s
}
