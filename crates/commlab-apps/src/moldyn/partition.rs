//! Recursive coordinate bisection (RCB): the partition of the molecules onto processors.
//!
//! A set of molecules for processors `lo..hi` is split across the longest side of its
//! bounding box (ties: x before y before z) into a first part of
//! `round(n * p1 / (hi - lo))` molecules for the first `p1 = (hi - lo) / 2` processors and
//! the rest for the others, by coordinate (ties by molecule number), and each part is split
//! again until one processor is left. Any processor count works; with a power of two every
//! processor gets the same number of molecules, give or take one. Done once, on the initial
//! positions (the molecules move far less than a domain in a short run).

use super::physics::Vec3s;

/// The processor of every molecule.
pub fn rcb(x: &Vec3s, procs: usize) -> Vec<usize> {
    let mut owner = vec![0usize; x.len()];
    let mut ids: Vec<u32> = (0..x.len() as u32).collect();
    split(x, &mut ids, 0, procs, &mut owner);
    owner
}

fn split(x: &Vec3s, ids: &mut [u32], lo: usize, hi: usize, owner: &mut [usize]) {
    if hi - lo == 1 || ids.is_empty() {
        for &m in ids.iter() {
            owner[m as usize] = lo;
        }
        return;
    }
    let mut min = [f64::INFINITY; 3];
    let mut max = [f64::NEG_INFINITY; 3];
    for &m in ids.iter() {
        for d in 0..3 {
            min[d] = min[d].min(x[m as usize][d]);
            max[d] = max[d].max(x[m as usize][d]);
        }
    }
    let mut axis = 0;
    for d in 1..3 {
        if max[d] - min[d] > max[axis] - min[axis] {
            axis = d;
        }
    }
    ids.sort_by(|&a, &b| x[a as usize][axis].total_cmp(&x[b as usize][axis]).then(a.cmp(&b)));
    let p1 = (hi - lo) / 2;
    let cut = ((ids.len() * p1) as f64 / (hi - lo) as f64).round() as usize;
    let (first, rest) = ids.split_at_mut(cut);
    split(x, first, lo, lo + p1, owner);
    split(x, rest, lo + p1, hi, owner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_and_spatially_compact() {
        let x: Vec3s = (0..512).map(|i| [(i % 8) as f64, (i / 8 % 8) as f64, (i / 64) as f64]).collect();
        let owner = rcb(&x, 8);
        for p in 0..8 {
            let mine: Vec<usize> = (0..512).filter(|&m| owner[m] == p).collect();
            assert_eq!(mine.len(), 64);
            // Each part of a cube of 8x8x8 cut three times is a 4x4x4 block.
            for d in [0, 1, 2] {
                let lo = mine.iter().map(|&m| x[m][d]).fold(f64::INFINITY, f64::min);
                let hi = mine.iter().map(|&m| x[m][d]).fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(hi - lo, 3.0);
            }
        }
        let uneven = rcb(&x, 12);
        let counts: Vec<usize> = (0..12).map(|p| uneven.iter().filter(|&&o| o == p).count()).collect();
        assert!(counts.iter().all(|&c| (42..=43).contains(&c)), "{counts:?}");
    }
}
