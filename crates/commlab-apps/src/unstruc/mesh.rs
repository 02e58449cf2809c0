//! The UNSTRUC mesh: nodes with positions, edges, and boundary faces of 3 or 4 nodes; and the
//! seeded generator of the default mesh.
//!
//! # Generator
//!
//! A duct with an obstacle: a body `[0, L] x [0, m] x [0, m]` (unit spacing) with a spherical
//! cavity of radius `0.3 m` centred at `(0.6 m, 0.5 m, 0.5 m)`; `m >= 2` is the smallest whole
//! number whose `[0, 2m] x [0, m] x [0, m]` lattice has at least the requested number of
//! nodes, and `L` in `m..=2m` the length whose lattice has the number of points outside the
//! cavity nearest to it (the shorter on a tie).
//! 1. Points: every lattice point `(i, j, k)` strictly outside the cavity
//!    (`|p - c| >= 0.3 m`). Each draws from its own random stream, seeded by
//!    `component_seed(seed, lattice index)` with lattice index `(k (m + 1) + j)(L + 1) + i`:
//!    first a rank (a `u64`), then its jitter, three offsets uniform in `[-0.2, 0.2)` added to
//!    its coordinates.
//! 2. Tetrahedra: each unit cube of the lattice is cut into 6 tetrahedra by the *pulling
//!    triangulation* from its lowest corner under the global order (rank, lattice index): each
//!    of the three square faces not containing that corner is split into two triangles by its
//!    diagonal through the face's own lowest corner, and each triangle is coned to the cube's
//!    lowest corner. A shared square face is split the same way from both cubes (its lowest
//!    corner is global), so the tetrahedra form a conforming mesh; the random ranks make the
//!    node degrees irregular (3 to 26 edges at a node in the default mesh, where a regular
//!    Kuhn triangulation has 14 at every interior node). A tetrahedron with a corner inside
//!    the cavity is dropped.
//! 3. Nodes are the points of the kept tetrahedra, numbered in lattice-index order; edges are
//!    the tetrahedra's edges (each pair once, sorted); faces are the boundary triangles
//!    (faces of exactly one kept tetrahedron): where both triangles of one lattice square are
//!    boundary faces they are recorded as one quadrilateral (its corners around the square),
//!    otherwise as a triangle. Faces are in the order of their sorted corner triples.
//!
//! The default 2000 requested nodes give a 17 x 11 x 11 lattice (`m = 10`, `L = 16`): 1964
//! nodes, 11626 edges (5.9 per node: the walls' nodes have fewer than the interior's 7) and
//! 1071 faces, 925 of them quadrilaterals (the walls are quadrilaterals, the cavity's surface
//! mostly triangles).

use crate::app::component_seed;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// A boundary face of 3 or 4 nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face {
    len: u8,
    nodes: [u32; 4],
}

impl Face {
    /// A face of the given nodes (3 or 4 of them).
    pub fn new(nodes: &[u32]) -> Face {
        assert!(nodes.len() == 3 || nodes.len() == 4, "a face has 3 or 4 nodes");
        let mut n = [0; 4];
        n[..nodes.len()].copy_from_slice(nodes);
        Face { len: nodes.len() as u8, nodes: n }
    }

    pub fn nodes(&self) -> &[u32] {
        &self.nodes[..self.len as usize]
    }

    /// The same face with every node renamed by `f`.
    pub fn map(&self, f: impl Fn(u32) -> u32) -> Face {
        let mut out = *self;
        for v in out.nodes[..self.len as usize].iter_mut() {
            *v = f(*v);
        }
        out
    }
}

/// An unstructured mesh: positions, edges (each pair of distinct nodes once) and faces.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub pos: Vec<[f64; 3]>,
    pub edges: Vec<[u32; 2]>,
    pub faces: Vec<Face>,
}

impl Mesh {
    pub fn nodes(&self) -> usize {
        self.pos.len()
    }

    /// Edges at each node.
    pub fn degrees(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.nodes()];
        for &[a, b] in &self.edges {
            d[a as usize] += 1;
            d[b as usize] += 1;
        }
        d
    }

    /// The mesh as the text format of [`super::meshfile`] reads.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::from("# unstruc mesh\n");
        let _ = writeln!(s, "nodes {}", self.nodes());
        for p in &self.pos {
            let _ = writeln!(s, "{:?} {:?} {:?}", p[0], p[1], p[2]);
        }
        let _ = writeln!(s, "edges {}", self.edges.len());
        for [a, b] in &self.edges {
            let _ = writeln!(s, "{a} {b}");
        }
        let _ = writeln!(s, "faces {}", self.faces.len());
        for f in &self.faces {
            let nodes: Vec<String> = f.nodes().iter().map(|v| v.to_string()).collect();
            let _ = writeln!(s, "{} {}", f.nodes().len(), nodes.join(" "));
        }
        s
    }
}

/// The lattice of the generator: `length + 1` points along x, `m + 1` along y and z.
struct Lattice {
    m: usize,
    dims: [usize; 3],
}

impl Lattice {
    fn new(m: usize, length: usize) -> Lattice {
        Lattice { m, dims: [length + 1, m + 1, m + 1] }
    }

    fn points(&self) -> usize {
        self.dims.iter().product()
    }

    fn index(&self, p: [usize; 3]) -> usize {
        (p[2] * self.dims[1] + p[1]) * self.dims[0] + p[0]
    }

    fn coords(&self, idx: usize) -> [usize; 3] {
        let [nx, ny, _] = self.dims;
        [idx % nx, (idx / nx) % ny, idx / (nx * ny)]
    }

    /// Whether lattice point `p` lies outside the cavity.
    fn outside(&self, p: [usize; 3]) -> bool {
        let m = self.m as f64;
        let c = [0.6 * m, 0.5 * m, 0.5 * m];
        let d2: f64 = (0..3).map(|a| (p[a] as f64 - c[a]).powi(2)).sum();
        d2 >= (0.3 * m).powi(2)
    }

    fn count_outside(&self) -> usize {
        (0..self.points()).filter(|&i| self.outside(self.coords(i))).count()
    }
}

/// The lattice for about `nodes` nodes (see the module documentation).
fn lattice_for(nodes: usize) -> Lattice {
    let mut m = 2;
    while Lattice::new(m, 2 * m).points() < nodes {
        m += 1;
    }
    let error = |length: usize| nodes.abs_diff(Lattice::new(m, length).count_outside());
    let length = (m..=2 * m).min_by_key(|&l| (error(l), l)).expect("lengths");
    Lattice::new(m, length)
}

/// The generator's mesh with about `nodes` nodes (see the module documentation).
pub fn generate(nodes: usize, seed: u64) -> Mesh {
    let lat = lattice_for(nodes);
    let n = lat.points();
    let alive: Vec<bool> = (0..n).map(|i| lat.outside(lat.coords(i))).collect();
    let mut rank = vec![0u64; n];
    let mut pos = vec![[0.0; 3]; n];
    for i in 0..n {
        let mut rng = ChaCha8Rng::seed_from_u64(component_seed(seed, i as u64));
        rank[i] = rng.random();
        let c = lat.coords(i);
        for a in 0..3 {
            pos[i][a] = c[a] as f64 + rng.random_range(-0.2..0.2);
        }
    }
    let tets = triangulate(&lat, &alive, &rank);
    // Nodes: points of kept tetrahedra, in lattice order.
    let mut used = vec![false; n];
    for t in &tets {
        for &x in t {
            used[x] = true;
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut node_pos = Vec::new();
    for i in 0..n {
        if used[i] {
            id[i] = node_pos.len() as u32;
            node_pos.push(pos[i]);
        }
    }

    let (edges, boundary) = edges_and_boundary(&tets, &id);
    let faces = boundary_faces(&lat, &boundary, &id);
    Mesh { pos: node_pos, edges, faces }
}

/// Pulling triangulation of every cube of the lattice: each cube's points joined to its
/// lowest-ranked corner; the tetrahedra with every point outside the hole.
fn triangulate(lat: &Lattice, alive: &[bool], rank: &[u64]) -> Vec<[usize; 4]> {
    let m = lat.m;
    let order = |i: usize| (rank[i], i);
    let lowest = |pts: &[usize]| *pts.iter().min_by_key(|&&i| order(i)).expect("points");
    let mut tets: Vec<[usize; 4]> = Vec::new();
    for k in 0..m {
        for j in 0..m {
            for i in 0..lat.dims[0] - 1 {
                let corner = |d: [usize; 3]| lat.index([i + d[0], j + d[1], k + d[2]]);
                let all: Vec<usize> = (0..8).map(|b| corner([b & 1, (b >> 1) & 1, (b >> 2) & 1])).collect();
                let v = lowest(&all);
                let vc = lat.coords(v);
                let lo = [i, j, k];
                for axis in 0..3 {
                    // The face on the far side of `v` along `axis`.
                    let side = 1 - (vc[axis] - lo[axis]);
                    let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
                    let sq = |u: usize, w: usize| {
                        let mut d = [0; 3];
                        d[axis] = side;
                        d[a1] = u;
                        d[a2] = w;
                        corner(d)
                    };
                    // Square corners in cyclic order.
                    let ring = [sq(0, 0), sq(1, 0), sq(1, 1), sq(0, 1)];
                    let f = lowest(&ring);
                    let at = ring.iter().position(|&x| x == f).expect("in ring");
                    let (p1, opp, p3) = (ring[(at + 1) % 4], ring[(at + 2) % 4], ring[(at + 3) % 4]);
                    for tri in [[f, p1, opp], [f, opp, p3]] {
                        let t = [v, tri[0], tri[1], tri[2]];
                        if t.iter().all(|&x| alive[x]) {
                            tets.push(t);
                        }
                    }
                }
            }
        }
    }
    tets
}

/// The mesh's edges (node pairs, sorted, once each) and its boundary triangles (lattice
/// points; the faces of one tetrahedron only).
fn edges_and_boundary(tets: &[[usize; 4]], id: &[u32]) -> (Vec<[u32; 2]>, Vec<[usize; 3]>) {
    let mut edges: Vec<[u32; 2]> = Vec::with_capacity(tets.len() * 6);
    let mut tris: Vec<[usize; 3]> = Vec::with_capacity(tets.len() * 4);
    for t in tets {
        for a in 0..4 {
            for b in a + 1..4 {
                let (x, y) = (id[t[a]], id[t[b]]);
                edges.push([x.min(y), x.max(y)]);
            }
            let mut tri: Vec<usize> = (0..4).filter(|&c| c != a).map(|c| t[c]).collect();
            tri.sort_unstable();
            tris.push([tri[0], tri[1], tri[2]]);
        }
    }
    edges.sort_unstable();
    edges.dedup();
    tris.sort_unstable();
    let mut boundary: Vec<[usize; 3]> = Vec::new();
    let mut s = 0;
    while s < tris.len() {
        let mut e = s + 1;
        while e < tris.len() && tris[e] == tris[s] {
            e += 1;
        }
        if e - s == 1 {
            boundary.push(tris[s]);
        }
        s = e;
    }
    (edges, boundary)
}

/// The boundary faces: boundary triangles that halve one lattice square become one
/// quadrilateral, the others stay triangles.
fn boundary_faces(lat: &Lattice, boundary: &[[usize; 3]], id: &[u32]) -> Vec<Face> {
    let square_of = |tri: &[usize; 3]| -> Option<(usize, usize, [usize; 2])> {
        let c: Vec<[usize; 3]> = tri.iter().map(|&x| lat.coords(x)).collect();
        let axis = (0..3).find(|&a| c[0][a] == c[1][a] && c[1][a] == c[2][a])?;
        let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
        let lo = [c.iter().map(|p| p[a1]).min()?, c.iter().map(|p| p[a2]).min()?];
        Some((axis, c[0][axis], lo))
    };
    let mut halves: BTreeMap<(usize, usize, [usize; 2]), usize> = BTreeMap::new();
    for tri in boundary {
        if let Some(key) = square_of(tri) {
            *halves.entry(key).or_insert(0) += 1;
        }
    }
    let mut faces = Vec::with_capacity(boundary.len());
    for tri in boundary {
        match square_of(tri) {
            Some(key) if halves[&key] == 2 => {
                // Emit the quadrilateral once, at the first of its two triangles.
                if let Some(h) = halves.get_mut(&key) {
                    *h = 0;
                    let (axis, plane, lo) = key;
                    let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
                    let at = |u: usize, w: usize| {
                        let mut p = [0; 3];
                        p[axis] = plane;
                        p[a1] = lo[0] + u;
                        p[a2] = lo[1] + w;
                        id[lat.index(p)]
                    };
                    faces.push(Face::new(&[at(0, 0), at(1, 0), at(1, 1), at(0, 1)]));
                }
            }
            Some(key) if halves[&key] == 0 => {}
            _ => faces.push(Face::new(&[id[tri[0]], id[tri[1]], id[tri[2]]])),
        }
    }
    faces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_mesh_has_about_2000_nodes_and_6_to_7_edges_per_node() {
        let mesh = generate(2000, 1);
        let n = mesh.nodes();
        assert!((1900..2100).contains(&n), "{n} nodes");
        let per_node = mesh.edges.len() as f64 / n as f64;
        assert!((5.8..7.0).contains(&per_node), "{per_node} edges per node");
        let quads = mesh.faces.iter().filter(|f| f.nodes().len() == 4).count();
        assert!(quads > 0 && quads < mesh.faces.len(), "{quads} quadrilaterals of {}", mesh.faces.len());
        let d = mesh.degrees();
        assert!(d.iter().all(|&x| x >= 3), "every node is in a tetrahedron");
        let (lo, hi) = (d.iter().min().unwrap(), d.iter().max().unwrap());
        assert!(hi - lo >= 10, "irregular degrees: {lo}..{hi}");
    }

    #[test]
    fn the_triangulation_is_conforming() {
        // Every interior triangle is shared by exactly two tetrahedra, which the boundary
        // extraction relies on: a non-conforming split would leave interior squares' halves
        // as boundary faces. So the boundary is only the walls and the cavity: its nodes lie on
        // the box's walls or next to the cavity.
        let mesh = generate(600, 7);
        let lat = lattice_for(600);
        let (m, length) = (lat.m as f64, (lat.dims[0] - 1) as f64);
        for f in &mesh.faces {
            for &v in f.nodes() {
                let p = mesh.pos[v as usize];
                let c = [0.6 * m, 0.5 * m, 0.5 * m];
                let r = (0..3).map(|a| (p[a] - c[a]).powi(2)).sum::<f64>().sqrt();
                let wall = p[0] < 0.3 || p[0] > length - 0.3 || (1..3).any(|a| p[a] < 0.3 || p[a] > m - 0.3);
                assert!(wall || r < 0.3 * m + 2.0, "face node {v} at {p:?} is neither on a wall nor at the cavity");
            }
        }
    }

    #[test]
    fn generation_is_seeded() {
        let a = generate(500, 3);
        assert_eq!(a, generate(500, 3));
        let b = generate(500, 4);
        assert_ne!(a.edges, b.edges);
    }
}
