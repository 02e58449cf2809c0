//! The data each MOLDYN processor keeps in its own memory, laid out as the program had it (see
//! [`crate::private`]). Sizes are the largest any list epoch needs (the arrays are allocated
//! once). In this order:
//! - `VEL`: the velocities of its molecules, three 8-byte words each (every variant);
//! - `COUNT`: per molecule the number of its local partners (4 bytes);
//! - `LOCAL`: the local partners' numbers (4 bytes each);
//! - `CROSS`: the cross pairs it computes, two 4-byte numbers each (own molecule, partner:
//!   the partner's global number in shared memory, its ghost slot with messages);
//!
//! with shared memory then
//! - `ACC`: the force accumulated on its molecules from the pairs it computes (3 words each),
//!   added into the shared force records at the end of the force phase;
//!
//! and, for the Blizzard `custom` variant (shared memory with a reduction by messages), after
//! `ACC`
//! - `DELTAS`: the force deltas for the partners' molecules (3 words each, by ghost slot);
//! - `DELTA_EXPORTS`: the 4-byte numbers of its molecules each peer returns deltas for;
//!
//! and with messages instead
//! - `POS`, `FORCE`: its molecules' coordinates and forces (3 words each);
//! - `GHOST_POS`, `GHOST_FORCE`: the ghosts' coordinates and the force deltas for them;
//! - `EXPORTS`: the 4-byte numbers of the molecules it sends, destination by destination.

use super::plan::ProcEpoch;
use crate::private::Shape;

pub const VEL: usize = 0;
pub const COUNT: usize = 1;
pub const LOCAL: usize = 2;
pub const CROSS: usize = 3;
pub const ACC: usize = 4;
pub const POS: usize = 4;
pub const FORCE: usize = 5;
pub const GHOST_POS: usize = 6;
pub const GHOST_FORCE: usize = 7;
pub const EXPORTS: usize = 8;
pub const DELTAS: usize = 5;
pub const DELTA_EXPORTS: usize = 6;

/// The arrays of a processor with `molecules` molecules over its parts of every list.
/// `deltas`: the Blizzard `custom` variant's arrays (with shared memory only).
pub fn shape(molecules: usize, epochs: &[&ProcEpoch], messages: bool, deltas: bool) -> Shape {
    let most = |f: &dyn Fn(&ProcEpoch) -> usize| epochs.iter().map(|e| f(e)).max().unwrap_or(0);
    let mut s = Shape::default();
    s.push(3 * molecules, 8);
    s.push(molecules, 4);
    s.push(most(&|e| e.local_dst.len()), 4);
    s.push(2 * most(&ProcEpoch::cross_pairs), 4);
    if messages {
        s.push(3 * molecules, 8);
        s.push(3 * molecules, 8);
        s.push(3 * most(&|e| e.ghosts), 8);
        s.push(3 * most(&|e| e.ghosts), 8);
        s.push(most(&ProcEpoch::exported), 4);
    } else {
        s.push(3 * molecules, 8);
        if deltas {
            s.push(3 * most(&|e| e.ghosts), 8);
            s.push(most(&ProcEpoch::exported), 4);
        }
    }
    s
}
