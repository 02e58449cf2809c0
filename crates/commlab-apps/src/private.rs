//! Private arrays: the data a processor keeps in its own node's memory (graph structure,
//! coefficients, indices, its own copies of values), declared to the backend with
//! `Program::private_arrays` so that every reference to it costs what it would on the machine:
//! cache space, conflicts with shared data, local misses. The values stay in the program's
//! own Rust data; these types only place the references.

use commlab_api::{Addr, Node};

/// The arrays of one processor: (elements, bytes per element) each, in the order
/// `Program::private_arrays` declares them.
#[derive(Clone, Debug, Default)]
pub struct Shape {
    arrays: Vec<(usize, usize)>,
}

impl Shape {
    /// Add an array of `elements` of `bytes` each (4 or 8: two 4-byte elements share a word).
    pub fn push(&mut self, elements: usize, bytes: usize) {
        debug_assert!(bytes == 4 || bytes == 8);
        self.arrays.push((elements, bytes));
    }

    /// Each array's size in 64-bit words, for `Program::private_arrays`.
    pub fn words(&self) -> Vec<usize> {
        self.arrays.iter().map(|&(n, b)| (n * b).div_ceil(8)).collect()
    }
}

/// A processor's private arrays at run time.
pub struct Arrays {
    base: Vec<Addr>,
    bytes: Vec<usize>,
}

impl Arrays {
    /// Look up the arrays of `shape` and touch each of their lines once, as building them in
    /// set-up would have (call before timing starts).
    pub fn set_up<N: Node>(node: &mut N, shape: &Shape, line_bytes: usize) -> Arrays {
        let base: Vec<Addr> = (0..shape.arrays.len()).map(|k| node.private_array(k)).collect();
        let step = (line_bytes / 8).max(1);
        for (b, words) in base.iter().zip(shape.words()) {
            for w in (0..words).step_by(step) {
                node.private_write(b.word(w));
            }
        }
        Arrays { base, bytes: shape.arrays.iter().map(|&(_, b)| b).collect() }
    }

    /// The address of element `i` of array `k`.
    #[inline]
    pub fn at(&self, k: usize, i: usize) -> Addr {
        Addr(self.base[k].0 + (i * self.bytes[k]) as u64 / 8 * 8)
    }

    /// Read element `i` of array `k`.
    #[inline]
    pub fn read<N: Node>(&self, node: &mut N, k: usize, i: usize) {
        node.private_read(self.at(k, i));
    }

    /// Write element `i` of array `k`.
    #[inline]
    pub fn write<N: Node>(&self, node: &mut N, k: usize, i: usize) {
        node.private_write(self.at(k, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_byte_elements_share_words_and_eight_byte_ones_do_not() {
        let arrays = Arrays { base: vec![Addr(1 << 20), Addr(2 << 20)], bytes: vec![4, 8] };
        assert_eq!(arrays.at(0, 0), arrays.at(0, 1));
        assert_ne!(arrays.at(0, 1), arrays.at(0, 2));
        assert_eq!(arrays.at(0, 5).0 - arrays.at(0, 0).0, 16);
        assert_eq!(arrays.at(1, 3).0 - arrays.at(1, 0).0, 24);
        let mut s = Shape::default();
        s.push(5, 4);
        s.push(3, 8);
        assert_eq!(s.words(), [3, 3]);
    }
}
