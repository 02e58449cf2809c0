//! Each processor's view of an interaction list: the pairs it computes, the molecules it
//! reads from others (ghosts) and the molecules it sends to others.
//!
//! Molecules are numbered so that processor `p` owns `first[p]..first[p + 1]` (its *local*
//! molecules `0..n`). A pair with both molecules on `p` is a *local pair* of `p`. A pair of
//! molecules on two processors (a *cross pair*) is computed by one of them, the same one for
//! every cross pair of those two processors: the processors' pairings are taken in order of
//! decreasing number of cross pairs (ties: lower processor numbers first) and each is given
//! to the one of its two processors with less pair work so far (local pairs, then the cross
//! pairs given to it; ties: the lower number). The computing processor reads the other's
//! molecules (its *ghosts*) and returns the forces on them.

use super::physics::List;
use std::collections::BTreeMap;

/// Pairs of local molecule numbers.
type Pairs = Vec<(u32, u32)>;

/// A processor's cross pairs with one peer, and the peer's molecules they read.
pub struct Group {
    pub peer: usize,
    /// Where this group's ghosts start in the processor's ghost arrays.
    pub ghost_base: usize,
    /// The peer's local numbers of the ghosts, increasing.
    pub ghosts: Vec<u32>,
    /// (own local molecule, ghost within the group), sorted.
    pub pairs: Vec<(u32, u32)>,
}

/// Molecules a processor sends to a peer that computes pairs with them (the peer's group).
pub struct Export {
    pub dest: usize,
    /// The group's `ghost_base` at `dest`.
    pub slot: usize,
    /// Local numbers of the molecules, in the group's ghost order.
    pub local: Vec<u32>,
}

/// One processor's part of one list.
pub struct ProcEpoch {
    /// Local pairs as CSR over local molecules: partners `local_dst[local_ptr[i]..local_ptr[i+1]]`
    /// (local numbers, all greater than `i`).
    pub local_ptr: Vec<u32>,
    pub local_dst: Vec<u32>,
    /// Cross pairs this processor computes, by peer in increasing order.
    pub groups: Vec<Group>,
    pub ghosts: usize,
    /// What it sends, by destination in increasing order.
    pub exports: Vec<Export>,
    /// Molecules whose forces others update (they take the lock in shared memory).
    pub contended: Vec<bool>,
    /// Rebuild work: candidate pairs the cell search tests for the local molecules.
    pub candidates: u64,
}

impl ProcEpoch {
    pub fn cross_pairs(&self) -> usize {
        self.groups.iter().map(|g| g.pairs.len()).sum()
    }
    pub fn exported(&self) -> usize {
        self.exports.iter().map(|e| e.local.len()).sum()
    }
}

/// Every processor's part of `list`, molecules owned as `first` says.
pub fn split(list: &List, first: &[usize]) -> Vec<ProcEpoch> {
    let procs = first.len() - 1;
    let owner_of = {
        let mut o = vec![0usize; first[procs]];
        for p in 0..procs {
            o[first[p]..first[p + 1]].fill(p);
        }
        o
    };
    let mut local: Vec<Vec<Vec<u32>>> = (0..procs).map(|p| vec![Vec::new(); first[p + 1] - first[p]]).collect();
    // Cross pairs by processor pairing (p < q): (local on p, local on q).
    let mut pairing: BTreeMap<(usize, usize), Pairs> = BTreeMap::new();
    let mut load = vec![0usize; procs];
    for &(i, j) in &list.pairs {
        let (i, j) = (i as usize, j as usize);
        let (p, q) = (owner_of[i], owner_of[j]);
        let (li, lj) = ((i - first[p]) as u32, (j - first[q]) as u32);
        if p == q {
            local[p][li as usize].push(lj);
            load[p] += 1;
        } else if p < q {
            pairing.entry((p, q)).or_default().push((li, lj));
        } else {
            pairing.entry((q, p)).or_default().push((lj, li));
        }
    }
    let mut order: Vec<((usize, usize), Pairs)> = pairing.into_iter().collect();
    order.sort_by_key(|((p, q), pairs)| (std::cmp::Reverse(pairs.len()), *p, *q));
    // Cross pairs by (computer, peer): (own local, peer local).
    let mut cross: Vec<BTreeMap<usize, Pairs>> = (0..procs).map(|_| BTreeMap::new()).collect();
    for ((p, q), pairs) in order {
        if load[q] < load[p] {
            load[q] += pairs.len();
            cross[q].insert(p, pairs.into_iter().map(|(a, b)| (b, a)).collect());
        } else {
            load[p] += pairs.len();
            cross[p].insert(q, pairs);
        }
    }
    let mut out: Vec<ProcEpoch> = (0..procs)
        .map(|p| {
            let mut local_ptr = vec![0u32];
            let mut local_dst = Vec::new();
            for partners in &mut local[p] {
                partners.sort_unstable();
                local_dst.extend_from_slice(partners);
                local_ptr.push(local_dst.len() as u32);
            }
            let mut ghosts = 0;
            let groups = std::mem::take(&mut cross[p])
                .into_iter()
                .map(|(peer, pairs)| {
                    let mut g: Vec<u32> = pairs.iter().map(|&(_, lj)| lj).collect();
                    g.sort_unstable();
                    g.dedup();
                    let mut pairs: Vec<(u32, u32)> =
                        pairs.iter().map(|&(li, lj)| (li, g.binary_search(&lj).expect("ghost") as u32)).collect();
                    pairs.sort_unstable();
                    let group = Group { peer, ghost_base: ghosts, ghosts: g, pairs };
                    ghosts += group.ghosts.len();
                    group
                })
                .collect();
            let n = first[p + 1] - first[p];
            let candidates = list.candidates[first[p]..first[p + 1]].iter().map(|&c| c as u64).sum();
            ProcEpoch {
                local_ptr,
                local_dst,
                groups,
                ghosts,
                exports: Vec::new(),
                contended: vec![false; n],
                candidates,
            }
        })
        .collect();
    for p in 0..procs {
        for gi in 0..out[p].groups.len() {
            let (peer, slot, ghosts) = {
                let g = &out[p].groups[gi];
                (g.peer, g.ghost_base, g.ghosts.clone())
            };
            for &l in &ghosts {
                out[peer].contended[l as usize] = true;
            }
            out[peer].exports.push(Export { dest: p, slot, local: ghosts });
        }
    }
    for e in &mut out {
        e.exports.sort_by_key(|x| x.dest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_is_computed_once_and_exports_match_groups() {
        // Molecules 0..6 on processors [0,0,1,1,2,2]; every pair listed.
        let pairs: Vec<(u32, u32)> = (0..6u32).flat_map(|i| (i + 1..6).map(move |j| (i, j))).collect();
        let list = List { candidates: vec![5; 6], pairs };
        let plan = split(&list, &[0, 2, 4, 6]);
        let local: usize = plan.iter().map(|e| e.local_dst.len()).sum();
        let cross: usize = plan.iter().map(ProcEpoch::cross_pairs).sum();
        assert_eq!(local, 3);
        assert_eq!(local + cross, 15);
        // Each processor has one local pair; the pairings (4 cross pairs each) go 0-1 to 0,
        // 0-2 to 2 (0 has more work now), 1-2 to 1.
        assert_eq!(plan[0].groups.iter().map(|g| g.peer).collect::<Vec<_>>(), [1]);
        assert_eq!(plan[1].groups.iter().map(|g| g.peer).collect::<Vec<_>>(), [2]);
        assert_eq!(plan[2].groups.iter().map(|g| g.peer).collect::<Vec<_>>(), [0]);
        for (p, e) in plan.iter().enumerate() {
            for x in &e.exports {
                let g = plan[x.dest].groups.iter().find(|g| g.peer == p).unwrap();
                assert_eq!(g.ghosts, x.local);
                assert_eq!(g.ghost_base, x.slot);
            }
        }
        assert_eq!(plan[0].candidates, 10);
    }
}
