//! The data each EM3D processor keeps in its own memory, laid out as the program had it, so
//! that its references cost cache space and misses as they did (see `Program::private_arrays`).
//!
//! Per kind `k` of node updated (E or H), in this order:
//! - `coef[k]`: one 8-byte coefficient per in-edge;
//! - `src[k]`: one 4-byte neighbour index per in-edge (two per 64-bit word);
//! - `count[k]`: one 4-byte edge count per node (two per word);
//!
//! and with messages also, per kind `k` of value:
//! - `vals[k]`: the processor's own values of kind `k`, then its ghost copies (8 bytes each);
//! - `sends[k]`: the 4-byte local indices of the values it sends, reader by reader.
//!
//! Values themselves stay in the program's Rust data; these arrays only place the references.

use super::graph::{ProcPlan, E, H};
use commlab_api::{Addr, Node};

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
    fn index(self) -> usize {
        match self {
            Array::Coef(k) => k,
            Array::Src(k) => 2 + k,
            Array::Count(k) => 4 + k,
            Array::Vals(k) => 6 + k,
            Array::Sends(k) => 8 + k,
        }
    }

    /// Bytes per element.
    fn element_bytes(self) -> usize {
        match self {
            Array::Coef(_) | Array::Vals(_) => 8,
            Array::Src(_) | Array::Count(_) | Array::Sends(_) => 4,
        }
    }
}

/// The sizes of one processor's private arrays, in words, in [`Array::index`] order.
#[derive(Clone, Debug)]
pub struct Layout {
    pub words: Vec<usize>,
}

impl Layout {
    /// The layout for `plan`; the value and send arrays only when the variant sends messages.
    pub fn new(plan: &ProcPlan, messages: bool) -> Layout {
        let words_of = |a: Array, n: usize| (n * a.element_bytes()).div_ceil(8);
        let mut words = Vec::new();
        for k in [E, H] {
            words.push(words_of(Array::Coef(k), plan.phase[k].coef.len()));
        }
        for k in [E, H] {
            words.push(words_of(Array::Src(k), plan.phase[k].coef.len()));
        }
        for k in [E, H] {
            words.push(words_of(Array::Count(k), plan.phase[k].count));
        }
        if messages {
            for k in [E, H] {
                words.push(words_of(Array::Vals(k), plan.phase[k].count + plan.ghosts[k]));
            }
            for k in [E, H] {
                let sent: usize = plan.sends[k].iter().map(|s| s.local.len()).sum();
                words.push(words_of(Array::Sends(k), sent));
            }
        }
        Layout { words }
    }
}

/// A processor's private arrays at run time: their base addresses.
pub struct Arrays {
    base: Vec<Addr>,
}

impl Arrays {
    /// Look up the bases of `layout`'s arrays and touch every line once, as building them in
    /// set-up would have (call before timing starts).
    pub fn set_up<N: Node>(node: &mut N, layout: &Layout, line_bytes: usize) -> Arrays {
        let base: Vec<Addr> = (0..layout.words.len()).map(|k| node.private_array(k)).collect();
        let step = (line_bytes / 8).max(1);
        for (b, &words) in base.iter().zip(&layout.words) {
            for w in (0..words).step_by(step) {
                node.private_write(b.word(w));
            }
        }
        Arrays { base }
    }

    /// The address of element `i` of `array`.
    #[inline]
    pub fn at(&self, array: Array, i: usize) -> Addr {
        Addr(self.base[array.index()].0 + (i * array.element_bytes()) as u64 / 8 * 8)
    }

    /// Read element `i` of `array`.
    #[inline]
    pub fn read<N: Node>(&self, node: &mut N, array: Array, i: usize) {
        node.private_read(self.at(array, i));
    }

    /// Write element `i` of `array`.
    #[inline]
    pub fn write<N: Node>(&self, node: &mut N, array: Array, i: usize) {
        node.private_write(self.at(array, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_byte_elements_share_words_and_eight_byte_ones_do_not() {
        let arrays = Arrays { base: (0..10).map(|k| Addr(1 << 20 | (k as u64) << 12)).collect() };
        assert_eq!(arrays.at(Array::Src(0), 0), arrays.at(Array::Src(0), 1));
        assert_ne!(arrays.at(Array::Src(0), 1), arrays.at(Array::Src(0), 2));
        assert_eq!(arrays.at(Array::Coef(1), 3).0 - arrays.at(Array::Coef(1), 0).0, 24);
        assert_eq!(arrays.at(Array::Sends(1), 5).0 - arrays.at(Array::Sends(1), 0).0, 16);
    }
}
