//! Distributing an UNSTRUC problem: the partition of the nodes, who computes each edge and
//! face, and each processor's plan (its work in the new numbering, the remote nodes it
//! touches, and what it sends to whom).
//!
//! - Nodes are partitioned by METIS (k-way on the mesh's edges as the graph, each node weighing
//!   its degree, so that edge work rather than node count is balanced; unit edge weights) and
//!   renumbered processor by processor (in original order within a processor), so each
//!   processor owns one contiguous range of the new numbering.
//! - An edge is computed by the owner of one of its endpoints: of its only owner if both are
//!   on one processor; the cut edges between two processors, taken in the order of their new
//!   endpoints, go alternately to the lower and the higher id of the two (the first to the
//!   lower). Each processor then computes its uncut edges and about half its cut ones, which
//!   is half its nodes' degrees: the weight METIS balanced.
//! - A face is computed by the processor owning most of its nodes (ties: the lowest id).
//! - A node is *shared* when more than one processor adds to it; those updates take the
//!   node's lock in shared memory.
//! - A processor's *ghosts* are the remote nodes its edges and faces touch, in new-numbering
//!   order (so grouped by owner): it reads their old values and adds results to them, so
//!   reading from an owner and sending results back to it always go together.

use super::flux::{EdgeCoef, FaceCoef, Problem};
use super::mesh::Face;
use crate::sparse::{Partitioner, WGraph};
use std::collections::BTreeMap;

/// An edge as a processor computes it: endpoints in the new numbering.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub a: u32,
    pub b: u32,
    pub coef: EdgeCoef,
}

/// The values of its own nodes one processor sends to one reader each iteration (which are
/// also the nodes that reader sends results for).
#[derive(Clone, Debug)]
pub struct Send {
    pub dest: usize,
    /// Position of the first node in the reader's ghost list.
    pub offset: usize,
    /// The nodes, as indices into the sender's own nodes, in the reader's ghost order.
    pub local: Vec<u32>,
}

/// One processor's share.
#[derive(Clone, Debug, Default)]
pub struct ProcPlan {
    /// Own nodes: `first..first + count` in the new numbering.
    pub first: usize,
    pub count: usize,
    pub edges: Vec<Edge>,
    pub faces: Vec<Face>,
    pub face_coef: Vec<FaceCoef>,
    /// Remote nodes touched, sorted (new numbering).
    pub ghosts: Vec<u32>,
    /// Ghost values sent to each reader, by reader id.
    pub sends: Vec<Send>,
    /// Ghost-list ranges by owner: `(owner, first slot, end slot)`, in slot order.
    pub ghost_owners: Vec<(usize, usize, usize)>,
    /// Results other processors send this one each iteration, one per (edge or face, node).
    pub results_in: u64,
}

impl ProcPlan {
    /// Index of node `v` (new numbering) among this processor's own nodes then ghosts.
    pub fn slot(&self, v: u32) -> u32 {
        let v = v as usize;
        if (self.first..self.first + self.count).contains(&v) {
            (v - self.first) as u32
        } else {
            let g = self.ghosts.binary_search(&(v as u32)).expect("a touched node is a ghost");
            (self.count + g) as u32
        }
    }

    /// Nodes of other processors whose values this one receives (one per ghost), and results
    /// it receives in bulk (one per node per reader).
    pub fn bulk_results_in(&self) -> u64 {
        self.sends.iter().map(|s| s.local.len() as u64).sum()
    }
}

/// The whole distribution.
pub struct Plan {
    /// Owner of each node, new numbering.
    pub owner: Vec<u32>,
    /// Original index of each new node.
    pub old_of_new: Vec<u32>,
    pub shared: Vec<bool>,
    pub proc: Vec<ProcPlan>,
    pub cut_edges: usize,
}

impl Plan {
    pub fn new(p: &Problem, procs: usize) -> Result<Plan, String> {
        let mesh = &p.mesh;
        let n = mesh.nodes();
        let part = Partitioner::Metis.partition(&graph(mesh.nodes(), &mesh.edges), procs)?;
        let mut old_of_new: Vec<u32> = (0..n as u32).collect();
        old_of_new.sort_by_key(|&v| (part[v as usize], v));
        let mut new_of_old = vec![0u32; n];
        for (new, &old) in old_of_new.iter().enumerate() {
            new_of_old[old as usize] = new as u32;
        }
        let owner: Vec<u32> = old_of_new.iter().map(|&o| part[o as usize] as u32).collect();
        let mut proc: Vec<ProcPlan> = vec![ProcPlan::default(); procs];
        for (v, &q) in owner.iter().enumerate() {
            let pp = &mut proc[q as usize];
            if pp.count == 0 {
                pp.first = v;
            }
            pp.count += 1;
        }

        // Edges, in the order of their new endpoints.
        let mut edges: Vec<Edge> = mesh
            .edges
            .iter()
            .zip(&p.edge_coef)
            .map(|(&[a, b], &coef)| Edge { a: new_of_old[a as usize], b: new_of_old[b as usize], coef })
            .collect();
        edges.sort_by_key(|e| (e.a.min(e.b), e.a.max(e.b)));
        let mut contributors: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut cut_edges = 0;
        // Cut edges so far between each pair of processors (lower id first).
        let mut between: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for e in edges {
            let (oa, ob) = (owner[e.a as usize] as usize, owner[e.b as usize] as usize);
            let q = if oa == ob {
                oa
            } else {
                cut_edges += 1;
                let pair = (oa.min(ob), oa.max(ob));
                let k = between.entry(pair).or_insert(0);
                *k += 1;
                if *k % 2 == 1 {
                    pair.0
                } else {
                    pair.1
                }
            };
            contributors[e.a as usize].push(q as u32);
            contributors[e.b as usize].push(q as u32);
            proc[q].edges.push(e);
        }
        for (f, coef) in mesh.faces.iter().zip(&p.face_coef) {
            let f = f.map(|v| new_of_old[v as usize]);
            let mut count = vec![0usize; procs];
            for &v in f.nodes() {
                count[owner[v as usize] as usize] += 1;
            }
            let q = (0..procs).max_by_key(|&q| (count[q], std::cmp::Reverse(q))).expect("processors");
            for &v in f.nodes() {
                contributors[v as usize].push(q as u32);
            }
            proc[q].faces.push(f);
            proc[q].face_coef.push(*coef);
        }
        let shared = contributors.iter().map(|c| c.iter().any(|&q| q != c[0])).collect();

        // Ghosts and what goes with them.
        for pp in proc.iter_mut() {
            let (first, count) = (pp.first, pp.count);
            let mine = |v: u32| (first..first + count).contains(&(v as usize));
            let mut ghosts: Vec<u32> = pp.edges.iter().flat_map(|e| [e.a, e.b]).filter(|&v| !mine(v)).collect();
            ghosts.extend(pp.faces.iter().flat_map(|f| f.nodes().to_vec()).filter(|&v| !mine(v)));
            ghosts.sort_unstable();
            ghosts.dedup();
            let mut owners: Vec<(usize, usize, usize)> = Vec::new();
            for (slot, &v) in ghosts.iter().enumerate() {
                let o = owner[v as usize] as usize;
                match owners.last_mut() {
                    Some(last) if last.0 == o => last.2 = slot + 1,
                    _ => owners.push((o, slot, slot + 1)),
                }
            }
            pp.ghosts = ghosts;
            pp.ghost_owners = owners;
        }
        for q in 0..procs {
            let (first, count) = (proc[q].first, proc[q].count);
            let mut results_in = 0u64;
            for r in 0..procs {
                if r == q {
                    continue;
                }
                let mine = |v: u32| (first..first + count).contains(&(v as usize));
                results_in += proc[r].edges.iter().flat_map(|e| [e.a, e.b]).filter(|&v| mine(v)).count() as u64;
                results_in += proc[r].faces.iter().flat_map(|f| f.nodes().to_vec()).filter(|&v| mine(v)).count() as u64;
                if let Some(&(_, lo, hi)) = proc[r].ghost_owners.iter().find(|o| o.0 == q) {
                    let local = proc[r].ghosts[lo..hi].iter().map(|&v| v - first as u32).collect();
                    proc[q].sends.push(Send { dest: r, offset: lo, local });
                }
            }
            proc[q].results_in = results_in;
        }
        Ok(Plan { owner, old_of_new, shared, proc, cut_edges })
    }

    /// Ghost nodes over all processors (values each read per iteration).
    pub fn ghosts(&self) -> usize {
        self.proc.iter().map(|p| p.ghosts.len()).sum()
    }
}

/// The mesh's node graph: each node weighs its degree (at least 1), each edge 1.
fn graph(n: usize, edges: &[[u32; 2]]) -> WGraph {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &[a, b] in edges {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    let mut xadj = vec![0];
    let mut flat = Vec::with_capacity(2 * edges.len());
    for mut l in adj {
        l.sort_unstable();
        l.dedup();
        flat.extend(l);
        xadj.push(flat.len());
    }
    let vwgt = xadj.windows(2).map(|w| (w[1] - w[0]).max(1) as u64).collect();
    let ewgt = vec![1; flat.len()];
    WGraph { xadj, adj: flat, ewgt, vwgt }
}

#[cfg(test)]
mod tests {
    use super::super::mesh::generate;
    use super::*;

    #[test]
    fn every_edge_and_face_is_computed_once_by_an_owner_of_one_of_its_nodes() {
        let p = Problem::new(generate(700, 4), 4);
        let plan = Plan::new(&p, 8).unwrap();
        let edges: usize = plan.proc.iter().map(|q| q.edges.len()).sum();
        let faces: usize = plan.proc.iter().map(|q| q.faces.len()).sum();
        assert_eq!((edges, faces), (p.mesh.edges.len(), p.mesh.faces.len()));
        for (q, pp) in plan.proc.iter().enumerate() {
            for e in &pp.edges {
                assert!(plan.owner[e.a as usize] as usize == q || plan.owner[e.b as usize] as usize == q);
            }
            assert!(pp.count > 0);
        }
        let most = plan.proc.iter().map(|q| q.edges.len()).max().unwrap() as f64;
        assert!(most < 1.06 * edges as f64 / 8.0, "edge work balanced: at most {most} of {edges}");
    }

    #[test]
    fn sends_match_ghosts_and_results_balance() {
        let p = Problem::new(generate(700, 4), 4);
        let plan = Plan::new(&p, 8).unwrap();
        for (r, pp) in plan.proc.iter().enumerate() {
            // Every ghost of r is sent by its owner into the right slot.
            for (slot, &v) in pp.ghosts.iter().enumerate() {
                let o = &plan.proc[plan.owner[v as usize] as usize];
                let s = o.sends.iter().find(|s| s.dest == r).expect("owner sends to r");
                assert_eq!(o.first as u32 + s.local[slot - s.offset], v);
            }
        }
        let sent: usize = plan.proc.iter().flat_map(|q| &q.sends).map(|s| s.local.len()).sum();
        assert_eq!(sent, plan.ghosts());
        let results: u64 = plan.proc.iter().map(|q| q.results_in).sum();
        let remote_refs: usize = plan
            .proc
            .iter()
            .map(|q| {
                let mine = |v: u32| (q.first..q.first + q.count).contains(&(v as usize));
                q.edges.iter().flat_map(|e| [e.a, e.b]).filter(|&v| !mine(v)).count()
                    + q.faces.iter().flat_map(|f| f.nodes().to_vec()).filter(|&v| !mine(v)).count()
            })
            .sum();
        assert_eq!(results as usize, remote_refs);
    }
}
