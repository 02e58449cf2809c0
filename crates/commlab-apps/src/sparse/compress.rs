//! Identical-neighbourhood compression of a matrix graph, as BlockSolve95 does before it
//! colours: unknowns whose rows have exactly the same pattern are grouped, and the quotient
//! graph of the groups is coloured and partitioned instead of the scalar graph.
//!
//! Two unknowns `i` and `j` are *identical* when their closed neighbourhoods are equal, i.e.
//! row `i` and row `j` of the matrix store exactly the same column indices (the diagonal
//! included, so `i` and `j` are adjacent). This is an equivalence relation; its classes are
//! cliques, typically the several unknowns of one finite-element node (3 or 6 in a structural
//! model). Since every member of a group has the same neighbours, two groups are either fully
//! joined (every member of one adjacent to every member of the other) or not joined at all, so
//! the quotient graph loses nothing: the scalar edges between groups `g` and `h` number
//! `|g| * |h|`, which is the quotient edge's weight, and a group's weight is its size.

use super::graph::WGraph;
use super::matrix::SymMatrix;

/// A grouping of the unknowns `0..n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compression {
    /// Group of each unknown.
    pub group_of: Vec<u32>,
    /// Members of group `g` are `members[group_ptr[g]..group_ptr[g + 1]]`, increasing. Groups
    /// are numbered in increasing order of their smallest member.
    pub group_ptr: Vec<usize>,
    pub members: Vec<u32>,
}

impl Compression {
    /// Every unknown its own group (no compression).
    pub fn singletons(n: usize) -> Compression {
        Compression {
            group_of: (0..n as u32).collect(),
            group_ptr: (0..=n).collect(),
            members: (0..n as u32).collect(),
        }
    }

    /// Groups `0..n` by the key `class[v]` (equal keys, one group), numbered by smallest member.
    fn from_classes(class: &[usize]) -> Compression {
        let n = class.len();
        // New group number of each class, in order of first appearance (= smallest member).
        let mut number = vec![u32::MAX; n];
        let mut group_of = vec![0u32; n];
        let mut size = Vec::new();
        for v in 0..n {
            let c = class[v];
            if number[c] == u32::MAX {
                number[c] = size.len() as u32;
                size.push(0usize);
            }
            group_of[v] = number[c];
            size[number[c] as usize] += 1;
        }
        let mut group_ptr = Vec::with_capacity(size.len() + 1);
        group_ptr.push(0);
        for s in &size {
            group_ptr.push(group_ptr.last().copied().unwrap_or(0) + s);
        }
        let mut next = group_ptr[..size.len()].to_vec();
        let mut members = vec![0u32; n];
        for (v, &g) in group_of.iter().enumerate() {
            members[next[g as usize]] = v as u32;
            next[g as usize] += 1;
        }
        Compression { group_of, group_ptr, members }
    }

    pub fn groups(&self) -> usize {
        self.group_ptr.len() - 1
    }

    pub fn members_of(&self, g: usize) -> &[u32] {
        &self.members[self.group_ptr[g]..self.group_ptr[g + 1]]
    }

    /// Size of the largest group.
    pub fn largest(&self) -> usize {
        (0..self.groups()).map(|g| self.group_ptr[g + 1] - self.group_ptr[g]).max().unwrap_or(0)
    }

    /// The quotient graph: a vertex per group weighing its size, an edge between two groups
    /// when any of their members are adjacent in `a`, weighing the number of scalar edges
    /// between them. Each vertex's neighbours are listed in increasing order.
    pub fn quotient(&self, a: &SymMatrix) -> WGraph {
        let ng = self.groups();
        let mut g = WGraph { xadj: vec![0], adj: Vec::new(), ewgt: Vec::new(), vwgt: Vec::with_capacity(ng) };
        // slot[h] = position of group h in the row being built, or usize::MAX.
        let mut slot = vec![usize::MAX; ng];
        for q in 0..ng {
            let row_start = g.adj.len();
            for &v in self.members_of(q) {
                for &j in a.row(v as usize).0 {
                    let h = self.group_of[j as usize] as usize;
                    if h == q {
                        continue;
                    }
                    if slot[h] == usize::MAX {
                        slot[h] = g.adj.len();
                        g.adj.push(h as u32);
                        g.ewgt.push(0);
                    }
                    g.ewgt[slot[h]] += 1;
                }
            }
            let mut row: Vec<(u32, u64)> =
                g.adj[row_start..].iter().copied().zip(g.ewgt[row_start..].iter().copied()).collect();
            row.sort_unstable();
            for (k, (h, w)) in row.into_iter().enumerate() {
                slot[h as usize] = usize::MAX;
                g.adj[row_start + k] = h;
                g.ewgt[row_start + k] = w;
            }
            g.xadj.push(g.adj.len());
            g.vwgt.push((self.group_ptr[q + 1] - self.group_ptr[q]) as u64);
        }
        g
    }
}

/// Groups the unknowns of `a` whose rows store the same column indices (identical closed
/// neighbourhoods). Deterministic: rows are bucketed by (length, a fixed hash of the columns,
/// index), and only rows whose column lists compare equal are grouped.
pub fn compress(a: &SymMatrix) -> Compression {
    let n = a.n;
    let hash = |i: usize| {
        a.row(i).0.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &j| (h ^ j as u64).wrapping_mul(0x0100_0000_01b3))
    };
    let mut keyed: Vec<(usize, u64, usize)> = (0..n).map(|i| (a.row(i).0.len(), hash(i), i)).collect();
    keyed.sort_unstable();
    // class[v] = smallest index of a row with v's pattern.
    let mut class: Vec<usize> = (0..n).collect();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && keyed[end].0 == keyed[start].0 && keyed[end].1 == keyed[start].1 {
            end += 1;
        }
        // Rows in keyed[start..end] probably share one pattern; compare each with the
        // representatives found so far in this bucket (rows in increasing index order).
        let mut reps: Vec<usize> = Vec::new();
        for &(_, _, i) in &keyed[start..end] {
            match reps.iter().find(|&&r| a.row(r).0 == a.row(i).0) {
                Some(&r) => class[i] = r,
                None => reps.push(i),
            }
        }
        start = end;
    }
    Compression::from_classes(&class)
}

#[cfg(test)]
mod tests {
    use super::super::fe_stiffness;
    use super::*;

    /// Two "FE nodes" of 3 unknowns each, fully coupled to each other, plus a lone unknown
    /// coupled to the first node only.
    fn two_nodes() -> SymMatrix {
        let mut t = Vec::new();
        let node = [[0usize, 2, 4], [1, 3, 5]];
        let all: Vec<usize> = node.concat();
        for (k, &i) in all.iter().enumerate() {
            t.push((i, i, 10.0));
            for &j in &all[..k] {
                t.push((i, j, -0.5));
            }
        }
        for &i in &node[0] {
            t.push((6, i, -0.25));
        }
        t.push((6, 6, 10.0));
        SymMatrix::from_triplets(7, &t).unwrap()
    }

    #[test]
    fn groups_identical_rows_and_builds_the_quotient() {
        let a = two_nodes();
        let c = compress(&a);
        assert_eq!(c.groups(), 3);
        assert_eq!(c.members_of(0), &[0, 2, 4]);
        assert_eq!(c.members_of(1), &[1, 3, 5]);
        assert_eq!(c.members_of(2), &[6]);
        assert_eq!(c.group_of, vec![0, 1, 0, 1, 0, 1, 2]);
        let q = c.quotient(&a);
        q.check().unwrap();
        assert_eq!(q.vwgt, vec![3, 3, 1]);
        assert_eq!(q.edges(0), (&[1u32, 2][..], &[9u64, 3][..]));
        assert_eq!(q.edges(1), (&[0u32][..], &[9u64][..]));
        // Scalar edges are conserved.
        let scalar_edges = (a.nnz() - a.n) as u64;
        assert_eq!(q.ewgt.iter().sum::<u64>(), scalar_edges - 2 * 3 * 2);
    }

    #[test]
    fn singletons_quotient_is_the_matrix_graph() {
        let a = fe_stiffness(2, 4).unwrap();
        let c = Compression::singletons(a.n);
        assert_eq!(c.quotient(&a), WGraph::of_matrix(&a));
        // A scalar FE grid with k >= 2 has no two identical rows.
        assert_eq!(compress(&a), c);
        // One element: all four nodes are coupled to each other, one group.
        let one = fe_stiffness(2, 1).unwrap();
        assert_eq!(compress(&one).groups(), 1);
    }
}
