//! Greedy multicolouring, so that the unknowns of one colour can be eliminated in parallel.

use super::compress::Compression;
use super::graph::WGraph;
use super::matrix::SymMatrix;

/// Greedy multicolouring of the matrix graph (an edge joins `i != j` whenever entry `(i, j)` is
/// stored, even as an explicit zero). Nodes are visited in index order `0..n`; node `i` gets the
/// smallest colour (0-based) not already taken by one of its neighbours `j < i` (later
/// neighbours are not coloured yet). No edge joins two nodes of one colour; at most
/// `max degree + 1` colours are used; the result depends only on the pattern (no hashing, no
/// randomness). On the lexicographically numbered FE grids of [`super::fe_stiffness`] this
/// gives the classic 4 colours (2-D, 9-point) and 8 colours (3-D, 27-point).
pub fn colour(a: &SymMatrix) -> Vec<u32> {
    let mut colours = vec![0u32; a.n];
    // taken[c] == i + 1 marks colour c as used by a neighbour of node i.
    let mut taken: Vec<usize> = Vec::new();
    for i in 0..a.n {
        let (cols, _) = a.row(i);
        for &j in cols.iter().take_while(|&&j| (j as usize) < i) {
            let c = colours[j as usize] as usize;
            if c >= taken.len() {
                taken.resize(c + 1, 0);
            }
            taken[c] = i + 1;
        }
        colours[i] = (0..).find(|&c| taken.get(c).is_none_or(|&t| t != i + 1)).unwrap_or(0) as u32;
    }
    colours
}

/// Greedy colouring of a graph, as [`colour`] does a matrix graph: vertices in index order,
/// each taking the smallest colour no lower-numbered neighbour has. Weights are ignored.
pub fn colour_graph(g: &WGraph) -> Vec<u32> {
    let mut colours = vec![0u32; g.n()];
    let mut taken: Vec<usize> = Vec::new();
    for v in 0..g.n() {
        for &u in g.edges(v).0.iter().filter(|&&u| (u as usize) < v) {
            let c = colours[u as usize] as usize;
            if c >= taken.len() {
                taken.resize(c + 1, 0);
            }
            taken[c] = v + 1;
        }
        colours[v] = (0..).find(|&c| taken.get(c).is_none_or(|&t| t != v + 1)).unwrap_or(0) as u32;
    }
    colours
}

/// The colour-by-colour ordering of a colouring of the groups of a compression (the
/// BlockSolve95 numbering): colours in increasing order; within a colour, its groups in
/// increasing order of their smallest member; within a group, its members consecutively in
/// increasing order. Every unknown has its group's colour, so a colour's diagonal block is
/// block diagonal with a dense block per group (a group is a clique); with singleton groups
/// this is [`colour_ordering`].
pub fn group_colour_ordering(groups: &Compression, group_colour: &[u32]) -> ColourOrdering {
    let ncolours = group_colour.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut colour_ptr = vec![0usize; ncolours + 1];
    for (g, &c) in group_colour.iter().enumerate() {
        colour_ptr[c as usize + 1] += groups.members_of(g).len();
    }
    for c in 0..ncolours {
        colour_ptr[c + 1] += colour_ptr[c];
    }
    let mut next = colour_ptr.clone();
    let mut new_of_old = vec![0usize; groups.group_of.len()];
    for (g, &c) in group_colour.iter().enumerate() {
        for &v in groups.members_of(g) {
            new_of_old[v as usize] = next[c as usize];
            next[c as usize] += 1;
        }
    }
    ColourOrdering { new_of_old, colour_ptr }
}

/// The colour-by-colour ordering of a colouring: see [`colour_ordering`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColourOrdering {
    /// New index of old node `i`: nodes sorted by colour, ties by old index.
    pub new_of_old: Vec<usize>,
    /// Colour `c` occupies new indices `colour_ptr[c]..colour_ptr[c + 1]`.
    pub colour_ptr: Vec<usize>,
}

/// Orders nodes by colour (stable: within a colour, by old index), for
/// [`SymMatrix::permuted`]. After permuting, each colour is a contiguous block whose diagonal
/// block is diagonal, so a triangular solve proceeds one colour at a time.
pub fn colour_ordering(colours: &[u32]) -> ColourOrdering {
    let ncolours = colours.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut colour_ptr = vec![0usize; ncolours + 1];
    for &c in colours {
        colour_ptr[c as usize + 1] += 1;
    }
    for c in 0..ncolours {
        colour_ptr[c + 1] += colour_ptr[c];
    }
    let mut next = colour_ptr.clone();
    let new_of_old = colours
        .iter()
        .map(|&c| {
            let p = next[c as usize];
            next[c as usize] += 1;
            p
        })
        .collect();
    ColourOrdering { new_of_old, colour_ptr }
}

#[cfg(test)]
mod tests {
    use super::super::{fe_stiffness, invert_permutation};
    use super::*;

    fn assert_proper(a: &SymMatrix, colours: &[u32]) {
        for i in 0..a.n {
            for &j in a.row(i).0 {
                if j as usize != i {
                    assert_ne!(colours[i], colours[j as usize], "edge ({i}, {j}) joins one colour");
                }
            }
        }
    }

    #[test]
    fn fe_grids_get_classic_colour_counts() {
        for (dim, k, want) in [(2, 6, 4), (3, 4, 8)] {
            let a = fe_stiffness(dim, k).unwrap();
            let c = colour(&a);
            assert_proper(&a, &c);
            assert_eq!(c.iter().max().copied().unwrap() + 1, want);
            assert_eq!(c, colour(&a));
        }
    }

    #[test]
    fn path_and_isolated_nodes() {
        let a = SymMatrix::from_triplets(4, &[(1, 0, -1.0), (2, 1, -1.0)]).unwrap();
        assert_eq!(colour(&a), vec![0, 1, 0, 0]);
    }

    #[test]
    fn ordering_groups_colours_and_permuted_blocks_are_diagonal() {
        let a = fe_stiffness(2, 5).unwrap();
        let c = colour(&a);
        let ord = colour_ordering(&c);
        invert_permutation(&ord.new_of_old).unwrap();
        let b = a.permuted(&ord.new_of_old);
        b.check().unwrap();
        assert_eq!(*ord.colour_ptr.last().unwrap(), a.n);
        for w in ord.colour_ptr.windows(2) {
            for i in w[0]..w[1] {
                for &j in b.row(i).0 {
                    let j = j as usize;
                    assert!(j == i || j < w[0] || j >= w[1], "coupling inside a colour block");
                }
            }
        }
        let old_of_new = invert_permutation(&ord.new_of_old).unwrap();
        for w in old_of_new.windows(2) {
            let (x, y) = (w[0], w[1]);
            assert!(c[x] < c[y] || (c[x] == c[y] && x < y));
        }
    }
}
